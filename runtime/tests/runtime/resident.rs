//! Device-resident arguments (`Executable::execute_with`, `DeviceBuffer`): the same results as
//! host arguments, the caller's buffers untouched, and each refusal by its message.
use proto::prost::Message;
use runtime::{Argument, DeviceBuffer, RuntimeFlags};

use crate::common::*;

#[test]
fn device_buffers_give_what_host_bytes_give_and_stay_as_they_were() {
    let d = device();
    let exe = runtime::load(&vadd().encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let a = f32s(&[1.0, 2.0, 3.0, 4.0]);
    let b = f32s(&[10.0, 20.0, 30.0, 40.0]);
    let da = DeviceBuffer::upload(&d, &a).unwrap();
    let db = DeviceBuffer::upload(&d, &b).unwrap();
    for args in [
        [Argument::Device(&da), Argument::Device(&db)],
        [Argument::Host(&a), Argument::Device(&db)],
    ] {
        let r = exe.execute_with(&d, &args, &[]).unwrap();
        assert_eq!(to_f32s(&r.outputs[0]), vec![11.0, 22.0, 33.0, 44.0]);
    }
    // Reading nothing back: the outputs come back empty.
    let r = exe
        .execute_with(
            &d,
            &[Argument::Device(&da), Argument::Device(&db)],
            &[false],
        )
        .unwrap();
    assert!(r.outputs[0].is_empty());
    assert_eq!(da.read().unwrap(), a);
    assert_eq!(db.read().unwrap(), b);
}

/// The executable writes its result into parameter 0's allocation: the caller's buffer is a
/// copy source, never the parameter itself.
#[test]
fn an_executable_that_writes_its_parameter_leaves_the_buffer_alone() {
    let mut p = vadd();
    p.thunks = vec![kernel(
        1,
        "vadd",
        vec![sl(0, 0, 16), sl(1, 0, 16), sl(0, 0, 16)],
        4,
    )];
    p.output_info_map = vec![out(vec![], 0)];
    allocs(&mut p)[0].maybe_live_out = true;
    let d = device();
    let exe = runtime::load(&p.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let a = f32s(&[1.0, 2.0, 3.0, 4.0]);
    let da = DeviceBuffer::upload(&d, &a).unwrap();
    let b = f32s(&[1.0; 4]);
    for _ in 0..2 {
        let r = exe
            .execute_with(&d, &[Argument::Device(&da), Argument::Host(&b)], &[])
            .unwrap();
        assert_eq!(to_f32s(&r.outputs[0]), vec![2.0, 3.0, 4.0, 5.0]);
    }
    assert_eq!(da.read().unwrap(), a);
}

/// `vadd` with XLA's `written` flags: the kernel reads parameters 0 and 1 and writes the result.
fn vadd_written_flags() -> proto::xla::gpu::GpuExecutableProto {
    let mut p = vadd();
    if let Some(proto::xla::gpu::thunk_proto::Impl::KernelThunk(k)) = &mut p.thunks[0].r#impl {
        k.written = vec![false, false, true];
    }
    p
}

/// A parameter allocation nothing writes is bound to the device buffer itself, as XLA:GPU binds
/// parameters to argument buffers: no copy, the same results, the buffer as it was.
#[test]
fn a_parameter_nothing_writes_is_read_in_place() {
    let d = device();
    let exe = runtime::load(
        &vadd_written_flags().encode_to_vec(),
        &d,
        &RuntimeFlags::default(),
    )
    .unwrap();
    assert_eq!(exe.read_only_parameters, [true, true, false]);
    let a = f32s(&[1.0, 2.0, 3.0, 4.0]);
    let b = f32s(&[10.0, 20.0, 30.0, 40.0]);
    let da = DeviceBuffer::upload(&d, &a).unwrap();
    for _ in 0..2 {
        let r = exe
            .execute_with(&d, &[Argument::Device(&da), Argument::Host(&b)], &[])
            .unwrap();
        assert_eq!(to_f32s(&r.outputs[0]), vec![11.0, 22.0, 33.0, 44.0]);
        assert_eq!(r.stats.arguments_in_place, 1);
    }
    assert_eq!(da.read().unwrap(), a);
    // The buffer outlives the executions: the run did not free it.
    drop(exe);
    assert_eq!(da.read().unwrap(), a);
}

/// A kernel writes parameter 0's allocation as scratch (not part of the result): the
/// allocation is not read-only, so the caller's buffer is copied, not written.
#[test]
fn a_parameter_a_kernel_writes_is_copied_not_bound() {
    let mut p = vadd_written_flags();
    p.thunks = vec![
        kernel(1, "vadd", vec![sl(0, 0, 16), sl(1, 0, 16), sl(0, 0, 16)], 4),
        kernel(2, "vadd", vec![sl(0, 0, 16), sl(1, 0, 16), sl(2, 0, 16)], 4),
    ];
    for t in &mut p.thunks {
        if let Some(proto::xla::gpu::thunk_proto::Impl::KernelThunk(k)) = &mut t.r#impl {
            k.written = vec![false, false, true];
        }
    }
    let d = device();
    let exe = runtime::load(&p.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    assert_eq!(exe.read_only_parameters, [false, true, false]);
    let a = f32s(&[1.0, 2.0, 3.0, 4.0]);
    let b = f32s(&[1.0; 4]);
    let da = DeviceBuffer::upload(&d, &a).unwrap();
    let db = DeviceBuffer::upload(&d, &b).unwrap();
    let r = exe
        .execute_with(&d, &[Argument::Device(&da), Argument::Device(&db)], &[])
        .unwrap();
    assert_eq!(to_f32s(&r.outputs[0]), vec![3.0, 4.0, 5.0, 6.0]);
    assert_eq!(r.stats.arguments_in_place, 1);
    assert_eq!(da.read().unwrap(), a);
    assert_eq!(db.read().unwrap(), b);
}

/// The flags lie: the kernel writes its result into parameter 0's slice, which its `written`
/// flags call read-only, so the loader binds the caller's buffer there. The emulated device
/// refuses the store: a typed error naming the argument, and the caller's buffer intact.
#[test]
fn a_kernel_that_writes_an_argument_its_flags_call_read_only_is_refused() {
    let mut p = vadd();
    p.thunks = vec![kernel(
        1,
        "vadd",
        vec![sl(0, 0, 16), sl(1, 0, 16), sl(0, 0, 16)],
        4,
    )];
    if let Some(proto::xla::gpu::thunk_proto::Impl::KernelThunk(k)) = &mut p.thunks[0].r#impl {
        k.written = vec![false, false, false];
    }
    let d = device();
    let exe = runtime::load(&p.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    assert!(
        exe.read_only_parameters[0],
        "nothing says parameter 0 is written"
    );
    let a = f32s(&[1.0, 2.0, 3.0, 4.0]);
    let da = DeviceBuffer::upload(&d, &a).unwrap();
    let b = f32s(&[1.0; 4]);
    let e = exe
        .execute_with(&d, &[Argument::Device(&da), Argument::Host(&b)], &[])
        .unwrap_err();
    // Arguments 0 and 2 are one slice, so one region, named by its first argument.
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: emulated device: write to kernel argument 0 `a` (16 bytes at 0x100000000), which the launch does not mark written, at address 0x100000000 (kernel `vadd`, function `vadd`, pc 11 `st.global.f32 [%rd7], %f3`, ctaid (0,0,0), tid (0,0,0)) (the executable's KernelThunkProto.written flags say the kernel only reads this argument)"
    );
    assert_eq!(da.read().unwrap(), a, "the caller's buffer is intact");
}

#[test]
fn a_buffer_of_another_device_is_refused() {
    let d = device();
    let other = device();
    let exe = runtime::load(&vadd().encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let a = f32s(&[1.0; 4]);
    let theirs = DeviceBuffer::upload(&other, &a).unwrap();
    let e = exe
        .execute_with(&d, &[Argument::Host(&a), Argument::Device(&theirs)], &[])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: argument 1 is a buffer of another device"
    );
}

#[test]
fn a_buffer_of_the_wrong_size_is_refused_as_host_bytes_are() {
    let d = device();
    let exe = runtime::load(&vadd().encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let short = DeviceBuffer::upload(&d, &f32s(&[1.0])).unwrap();
    let b = f32s(&[1.0; 4]);
    let e = exe
        .execute_with(&d, &[Argument::Device(&short), Argument::Host(&b)], &[])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: argument 0 (parameter 0 [], f32[4]) is 4 bytes, expected 16"
    );
}

#[test]
fn a_multi_device_executable_is_refused() {
    let p = collective_artifact(runtime_proto_all_reduce(), 4);
    let d = device();
    let exe = runtime::load(&p.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let a = f32s(&[1.0; 4]);
    let e = exe
        .execute_with(&d, &[Argument::Host(&a)], &[])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: the executable runs on 2 devices; device-resident arguments serve one"
    );
}

fn runtime_proto_all_reduce() -> proto::xla::gpu::thunk_proto::Impl {
    use proto::xla::gpu::thunk_proto::Impl;
    use proto::xla::gpu::{AllReduceStartThunkProto, ReductionKindProto};
    Impl::AllReduceStartThunk(AllReduceStartThunkProto {
        collective_config: config(vec![]),
        buffers: cbuf(4, 4),
        reduction_kind: ReductionKindProto::ReductionKindSum as i32,
    })
}
