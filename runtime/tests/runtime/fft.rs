//! The FFT thunk (issue 31): execution on the emulated device, and one exact-message load error
//! per check of its decoding.
use proto::prost::Message;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use runtime::RuntimeFlags;

use crate::common::*;

const FFT_HLO: &str = "HloModule f\n\nENTRY e {\n  x = c64[2,4] parameter(0)\n  ROOT f = c64[2,4] fft(x), fft_type=FFT, fft_length={4}\n}\n";

/// x: c64[2,4] in allocation 0, the FFT of each row into allocation 1.
fn fft_artifact() -> GpuExecutableProto {
    let mut p = artifact(FFT_HLO, &["c64[2,4]"], "c64[2,4]");
    *allocs(&mut p) = vec![alloc(0, 64, Some(0), false), alloc(1, 64, None, true)];
    p.output_info_map = vec![out(vec![], 1)];
    p.thunks = vec![thunk(
        1,
        Impl::FftThunk(FftThunkProto {
            fft_type: proto::xla::FftType::Fft as i32,
            fft_length: vec![4],
            input_buffer: Some(sl(0, 0, 64)),
            output_buffer: Some(sl(1, 0, 64)),
            input_shape: Some(shape("c64[2,4]")),
            output_shape: Some(shape("c64[2,4]")),
        }),
    )];
    p
}

fn fft_mut(p: &mut GpuExecutableProto) -> &mut FftThunkProto {
    match p.thunks[0].r#impl.as_mut() {
        Some(Impl::FftThunk(f)) => f,
        _ => panic!("not an fft thunk"),
    }
}

/// Rows [1, 2, 3, 4] and [i, 0, 0, 0]: spectra [10, -2+2i, -2, -2-2i] and [i, i, i, i].
#[test]
fn fft_thunk_transforms_each_row() {
    let x = f32s(&[
        1., 0., 2., 0., 3., 0., 4., 0., 0., 1., 0., 0., 0., 0., 0., 0.,
    ]);
    let r = run(&fft_artifact(), &RuntimeFlags::default(), &[&x]);
    assert_eq!(
        to_f32s(&r.outputs[0]),
        vec![10., 0., -2., 2., -2., 0., -2., -2., 0., 1., 0., 1., 0., 1., 0., 1.]
    );
}

#[test]
fn unknown_fft_type_is_invalid_argument() {
    let mut p = fft_artifact();
    fft_mut(&mut p).fft_type = 9;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].fft_thunk.fft_type is 9, not a known xla.FftType"
    );
}

#[test]
fn fft_length_needs_one_to_three_positive_entries() {
    let mut p = fft_artifact();
    fft_mut(&mut p).fft_length = vec![];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].fft_thunk.fft_length has 0 entries; an FFT transforms 1 to 3 dimensions"
    );
    fft_mut(&mut p).fft_length = vec![0];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].fft_thunk.fft_length[0] is 0, must be > 0"
    );
}

#[test]
fn fft_length_must_match_the_shapes() {
    let mut p = fft_artifact();
    fft_mut(&mut p).fft_length = vec![8];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].fft_thunk: dimension 1 is 4 in input_shape and 4 in output_shape; fft_length [8] needs 8 and 8"
    );
    let mut p = fft_artifact();
    fft_mut(&mut p).fft_length = vec![2, 4, 4];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].fft_thunk: input_shape has rank 2, output_shape rank 2; both must be the same and at least the 3 of fft_length"
    );
}

#[test]
fn element_types_must_fit_the_transform() {
    let mut p = fft_artifact();
    fft_mut(&mut p).fft_type = proto::xla::FftType::Rfft as i32;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].fft_thunk: an RFFT takes F32 to C64 or F64 to C128, not C64 to C64"
    );
}

#[test]
fn buffer_sizes_must_hold_the_shapes() {
    let mut p = fft_artifact();
    fft_mut(&mut p).input_buffer = Some(sl(0, 0, 32));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].fft_thunk.input_buffer.size is 32, but input_shape needs 64 bytes"
    );
    let mut p = fft_artifact();
    fft_mut(&mut p).output_buffer = Some(sl(1, 8, 64));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].fft_thunk.output_buffer: offset 8 + size 64 exceeds the size 64 of buffer_allocations[1]"
    );
    let mut p = fft_artifact();
    fft_mut(&mut p).output_shape = None;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].fft_thunk.output_shape is not set"
    );
}

/// Decoding and encoding give back the artifact's thunk.
#[test]
fn fft_thunk_round_trips() {
    let p = fft_artifact();
    let exe = runtime::load(&p.encode_to_vec(), &device(), &RuntimeFlags::default()).unwrap();
    assert_eq!(exe.thunk_protos(), p.thunks);
}
