//! The convolution thunk (issue 32): execution of the three kinds on the emulated device, and
//! one exact-message load error per check of its decoding.
use proto::prost::Message;
use proto::stream_executor::dnn::{ActivationMode, ConvolutionKind};
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use proto::xla::{ConvolutionDimensionNumbers, Window, WindowDimension};
use runtime::RuntimeFlags;

use crate::common::*;

const CONV_HLO: &str = "HloModule c\n\nENTRY e {\n  x = f32[1,3,3,1] parameter(0)\n  w = f32[2,2,1,1] parameter(1)\n  ROOT y = f32[1,2,2,1] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f\n}\n";

/// NHWC input, HWIO filter, NHWC output.
fn nhwc() -> ConvolutionDimensionNumbers {
    ConvolutionDimensionNumbers {
        input_batch_dimension: 0,
        input_feature_dimension: 3,
        input_spatial_dimensions: vec![1, 2],
        kernel_input_feature_dimension: 2,
        kernel_output_feature_dimension: 3,
        kernel_spatial_dimensions: vec![0, 1],
        output_batch_dimension: 0,
        output_feature_dimension: 3,
        output_spatial_dimensions: vec![1, 2],
    }
}

fn window2(size: i64) -> Window {
    let d = WindowDimension {
        size,
        stride: 1,
        padding_low: 0,
        padding_high: 0,
        window_dilation: 1,
        base_dilation: 1,
        window_reversal: false,
    };
    Window {
        dimensions: vec![d, d],
    }
}

/// `kind` over x: f32[1,3,3,1], w: f32[2,2,1,1], y: f32[1,2,2,1] (a 2x2 window, no padding),
/// the operands in allocations 0 and 1 and the result in 2.
fn conv_artifact(kind: ConvolutionKind) -> GpuExecutableProto {
    let (x, w, y) = ("f32[1,3,3,1]", "f32[2,2,1,1]", "f32[1,2,2,1]");
    let [a, b, r] = match kind {
        ConvolutionKind::BackwardData => [y, w, x],
        ConvolutionKind::BackwardFilter => [x, y, w],
        _ => [x, w, y],
    };
    let size = |s: &str| shape(s).dimensions.iter().product::<i64>() * 4;
    let mut p = artifact(CONV_HLO, &[a, b], r);
    *allocs(&mut p) = vec![
        alloc(0, size(a), Some(0), false),
        alloc(1, size(b), Some(1), false),
        alloc(2, size(r), None, true),
    ];
    p.output_info_map = vec![out(vec![], 2)];
    p.thunks = vec![thunk(
        1,
        Impl::ConvolutionThunk(ConvolutionThunkProto {
            conv_descriptor: Some(GpuConvDescriptorProto {
                kind: kind as i32,
                backend_config: Some(CudnnConvBackendConfig {
                    conv_result_scale: 1.0,
                    activation_mode: ActivationMode::KNone as i32,
                    side_input_scale: 0.0,
                }),
                operand0_shape: Some(shape(a)),
                operand1_shape: Some(shape(b)),
                result_shape: Some(shape(r)),
                scratch_size: 0,
                window: Some(window2(2)),
                dnums: Some(nhwc()),
                feature_group_count: 1,
            }),
            operand_buffers: vec![
                with_shape(sl(0, 0, size(a)), a),
                with_shape(sl(1, 0, size(b)), b),
            ],
            result_buffers: vec![with_shape(sl(2, 0, size(r)), r)],
            scratch_buffer: None,
        }),
    )];
    p
}

/// XLA's form of a slice: with the shape of the array stored in it.
fn with_shape(
    slice: proto::xla::buffer_assignment::BufferAllocationSliceProto,
    s: &str,
) -> ShapedSliceProto {
    ShapedSliceProto {
        slice: Some(slice),
        shape: Some(shape(s)),
    }
}

fn conv_mut(p: &mut GpuExecutableProto) -> &mut ConvolutionThunkProto {
    match p.thunks[0].r#impl.as_mut() {
        Some(Impl::ConvolutionThunk(c)) => c,
        _ => panic!("not a convolution thunk"),
    }
}

fn desc_mut(p: &mut GpuExecutableProto) -> &mut GpuConvDescriptorProto {
    conv_mut(p).conv_descriptor.as_mut().unwrap()
}

fn cfg(p: &mut GpuExecutableProto) -> &mut CudnnConvBackendConfig {
    desc_mut(p).backend_config.as_mut().unwrap()
}

fn dim0(p: &mut GpuExecutableProto) -> &mut WindowDimension {
    &mut desc_mut(p).window.as_mut().unwrap().dimensions[0]
}

/// The load error of the forward artifact after `edit`.
fn err(edit: impl FnOnce(&mut GpuExecutableProto)) -> String {
    let mut p = conv_artifact(ConvolutionKind::Forward);
    edit(&mut p);
    load_err(&p)
}

const PATH: &str = "thunks[0].convolution_thunk";

/// x = 1..9 (3x3), w = [1, 2, 3, 4]: y[i][j] = x[i][j] + 2 x[i][j+1] + 3 x[i+1][j] + 4 x[i+1][j+1].
#[test]
fn forward_sums_each_window() {
    let x = f32s(&[1., 2., 3., 4., 5., 6., 7., 8., 9.]);
    let w = f32s(&[1., 2., 3., 4.]);
    let r = run(
        &conv_artifact(ConvolutionKind::Forward),
        &RuntimeFlags::default(),
        &[&x, &w],
    );
    assert_eq!(to_f32s(&r.outputs[0]), vec![37., 47., 67., 77.]);
}

/// Slices without shapes (what an element in the old bare-slice form decodes to, see
/// `proto/src/conv_thunk.rs`) run the same, and encode back without shapes.
#[test]
fn slices_without_shapes_run_the_same() {
    let mut p = conv_artifact(ConvolutionKind::Forward);
    let c = conv_mut(&mut p);
    for s in c.operand_buffers.iter_mut().chain(&mut c.result_buffers) {
        s.shape = None;
    }
    let x = f32s(&[1., 2., 3., 4., 5., 6., 7., 8., 9.]);
    let w = f32s(&[1., 2., 3., 4.]);
    let r = run(&p, &RuntimeFlags::default(), &[&x, &w]);
    assert_eq!(to_f32s(&r.outputs[0]), vec![37., 47., 67., 77.]);
    let exe = runtime::load(&p.encode_to_vec(), &device(), &RuntimeFlags::default()).unwrap();
    assert_eq!(exe.thunk_protos(), p.thunks);
}

/// dy = [1, 0, 0, 0] spreads w over the top-left window; dy = 1 everywhere sums the windows
/// that cover each input element.
#[test]
fn backward_data_spreads_the_filter() {
    let w = f32s(&[1., 2., 3., 4.]);
    let p = conv_artifact(ConvolutionKind::BackwardData);
    let r = run(
        &p,
        &RuntimeFlags::default(),
        &[&f32s(&[1., 0., 0., 0.]), &w],
    );
    assert_eq!(
        to_f32s(&r.outputs[0]),
        vec![1., 2., 0., 3., 4., 0., 0., 0., 0.]
    );
    let r = run(
        &p,
        &RuntimeFlags::default(),
        &[&f32s(&[1., 1., 1., 1.]), &w],
    );
    assert_eq!(
        to_f32s(&r.outputs[0]),
        vec![1., 3., 2., 4., 10., 6., 3., 7., 4.]
    );
}

/// dy = 1 everywhere: dw[a][b] is the sum of the 2x2 block of x starting at (a, b).
#[test]
fn backward_filter_correlates_input_and_gradient() {
    let x = f32s(&[1., 2., 3., 4., 5., 6., 7., 8., 9.]);
    let r = run(
        &conv_artifact(ConvolutionKind::BackwardFilter),
        &RuntimeFlags::default(),
        &[&x, &f32s(&[1., 1., 1., 1.])],
    );
    assert_eq!(to_f32s(&r.outputs[0]), vec![12., 16., 24., 28.]);
}

#[test]
fn result_scale_multiplies() {
    let mut p = conv_artifact(ConvolutionKind::Forward);
    desc_mut(&mut p)
        .backend_config
        .as_mut()
        .unwrap()
        .conv_result_scale = 0.5;
    let x = f32s(&[1., 2., 3., 4., 5., 6., 7., 8., 9.]);
    let r = run(
        &p,
        &RuntimeFlags::default(),
        &[&x, &f32s(&[1., 2., 3., 4.])],
    );
    assert_eq!(to_f32s(&r.outputs[0]), vec![18.5, 23.5, 33.5, 38.5]);
}

#[test]
fn descriptor_and_kind_are_checked() {
    assert_eq!(
        err(|p| conv_mut(p).conv_descriptor = None),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor is not set")
    );
    assert_eq!(
        err(|p| desc_mut(p).kind = 0),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.kind is 0, not FORWARD, BACKWARD_DATA or BACKWARD_FILTER")
    );
    assert_eq!(
        err(|p| desc_mut(p).kind = ConvolutionKind::ForwardBiasActivation as i32),
        format!("UNIMPLEMENTED: {PATH}.conv_descriptor.kind is FORWARD_BIAS_ACTIVATION: fused convolutions are not run by this runtime")
    );
}

#[test]
fn backend_config_is_checked() {
    assert_eq!(
        err(|p| cfg(p).activation_mode = ActivationMode::KRelu as i32),
        format!("UNIMPLEMENTED: {PATH}.conv_descriptor.backend_config.activation_mode is kRelu: fused activations are not run by this runtime")
    );
    assert_eq!(
        err(|p| cfg(p).side_input_scale = 1.0),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.backend_config.side_input_scale is 1, must be 0: the thunk has no side input")
    );
    assert_eq!(
        err(|p| cfg(p).conv_result_scale = f64::NAN),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.backend_config.conv_result_scale is NaN, must be finite")
    );
}

#[test]
fn shapes_are_checked() {
    assert_eq!(
        err(|p| desc_mut(p).operand1_shape = None),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.operand1_shape is not set")
    );
    assert_eq!(
        err(|p| desc_mut(p).result_shape = Some(shape("s32[1,2,2,1]"))),
        format!("UNIMPLEMENTED: {PATH}.conv_descriptor.result_shape.element_type is S32; the convolution thunk runs f16, bf16, f32 and f64")
    );
    assert_eq!(
        err(|p| desc_mut(p).result_shape = Some(shape("f64[1,2,2,1]"))),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor: the element types differ: operand0_shape f32, operand1_shape f32, result_shape f64")
    );
    assert_eq!(
        err(|p| desc_mut(p).operand0_shape.as_mut().unwrap().dimensions[1] = -3),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.operand0_shape.dimensions[1] is -3, must be >= 0")
    );
    assert_eq!(
        err(|p| {
            desc_mut(p).operand0_shape.as_mut().unwrap().layout = Some(proto::xla::LayoutProto {
                minor_to_major: vec![0, 1, 2, 3],
                ..Default::default()
            })
        }),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.operand0_shape.layout.minor_to_major is [0, 1, 2, 3], not the row-major [3, 2, 1, 0] the convolution thunk reads (NHWC and NCHW are told by dnums)")
    );
    assert_eq!(
        err(|p| desc_mut(p).result_shape = Some(shape("f32[1,2,2]"))),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor: ranks 4, 4 and 3 of operand0_shape, operand1_shape and result_shape must all be the window's 2 spatial dimensions + 2, with at most 3 spatial dimensions")
    );
}

#[test]
fn dimension_numbers_and_groups_are_checked() {
    assert_eq!(
        err(|p| desc_mut(p).dnums = None),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.dnums is not set")
    );
    assert_eq!(
        err(|p| desc_mut(p).dnums.as_mut().unwrap().kernel_spatial_dimensions = vec![0, 0]),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.dnums: the kernel dimensions [2, 3, 0, 0] are not a permutation of the 4 dimensions of operand1_shape")
    );
    assert_eq!(
        err(|p| desc_mut(p).feature_group_count = 0),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.feature_group_count is 0, must be >= 1")
    );
    assert_eq!(
        err(|p| desc_mut(p).feature_group_count = 2),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor: the input's features (1, operand0_shape) are not the kernel's input features (1, operand1_shape) x feature_group_count (2)")
    );
    assert_eq!(
        err(|p| {
            let d = desc_mut(p);
            d.operand0_shape = Some(shape("f32[1,3,3,2]"));
            d.operand1_shape = Some(shape("f32[2,2,1,3]"));
            d.feature_group_count = 2;
        }),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor: the kernel's output features (3, operand1_shape) are not a multiple of feature_group_count (2)")
    );
    assert_eq!(
        err(|p| desc_mut(p).result_shape = Some(shape("f32[2,2,2,1]"))),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor: the output (result_shape) has batch 2 and features 1; the input gives batch 1 and the kernel 1 features")
    );
}

#[test]
fn window_is_checked() {
    assert_eq!(
        err(|p| dim0(p).stride = 0),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.window.dimensions[0]: stride (0), base_dilation (1) and window_dilation (1) must be >= 1")
    );
    assert_eq!(
        err(|p| dim0(p).size = 3),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.window.dimensions[0].size is 3, but the kernel's spatial dimension 0 (operand1_shape) is 2")
    );
    assert_eq!(
        err(|p| dim0(p).padding_high = 1),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.window.dimensions[0]: the window over input size 3 gives 3 outputs, but the output's spatial dimension 1 (result_shape) is 2")
    );
    assert_eq!(
        err(|p| {
            dim0(p).base_dilation = i64::MAX;
            dim0(p).padding_high = i64::MAX;
        }),
        format!(
            "INVALID_ARGUMENT: {PATH}.conv_descriptor.window.dimensions[0]: the sizes overflow"
        )
    );
}

#[test]
fn buffers_are_checked() {
    assert_eq!(
        err(|p| {
            conv_mut(p).operand_buffers.pop();
        }),
        format!("INVALID_ARGUMENT: {PATH}.operand_buffers has 1 slices; a convolution reads 2")
    );
    assert_eq!(
        err(|p| conv_mut(p).result_buffers.clear()),
        format!("INVALID_ARGUMENT: {PATH}.result_buffers has 0 slices; a convolution writes 1")
    );
    assert_eq!(
        err(|p| conv_mut(p).result_buffers[0].slice = Some(sl(2, 0, 12))),
        format!("INVALID_ARGUMENT: {PATH}.result_buffers[0].slice.size is 12, but result_shape needs 16 bytes")
    );
    assert_eq!(
        err(|p| conv_mut(p).operand_buffers[1].slice = Some(sl(1, 4, 16))),
        format!("INVALID_ARGUMENT: {PATH}.operand_buffers[1].slice: offset 4 + size 16 exceeds the size 16 of buffer_allocations[1]")
    );
    assert_eq!(
        err(|p| conv_mut(p).operand_buffers[0].slice = None),
        format!("INVALID_ARGUMENT: {PATH}.operand_buffers[0].slice is not set")
    );
    // XLA's form names each slice's array: it must be the descriptor's.
    assert_eq!(
        err(|p| conv_mut(p).operand_buffers[1].shape = Some(shape("f32[1,2,2,1]"))),
        format!("INVALID_ARGUMENT: {PATH}.operand_buffers[1].shape is F32 [1, 2, 2, 1], but the descriptor's operand1_shape is F32 [2, 2, 1, 1]")
    );
    assert_eq!(
        err(|p| conv_mut(p).result_buffers[0].shape = Some(shape("f16[1,2,2,1]"))),
        format!("INVALID_ARGUMENT: {PATH}.result_buffers[0].shape is F16 [1, 2, 2, 1], but the descriptor's result_shape is F32 [1, 2, 2, 1]")
    );
    assert_eq!(
        err(|p| desc_mut(p).scratch_size = -1),
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.scratch_size is -1, must be >= 0")
    );
}

/// Shapes whose byte size overflows u64 (rank 2: no spatial dimensions, so the window does not
/// bound them).
#[test]
fn byte_size_overflow_is_checked() {
    let big = 1i64 << 40;
    let e = err(|p| {
        let d = desc_mut(p);
        let s = |dims: Vec<i64>| proto::xla::ShapeProto {
            dimensions: dims,
            ..shape("f32[1,1]")
        };
        d.operand0_shape = Some(s(vec![big, big]));
        d.operand1_shape = Some(s(vec![big, 1]));
        d.result_shape = Some(s(vec![big, 1]));
        d.window = None;
        d.dnums = Some(ConvolutionDimensionNumbers {
            input_batch_dimension: 0,
            input_feature_dimension: 1,
            kernel_input_feature_dimension: 0,
            kernel_output_feature_dimension: 1,
            output_batch_dimension: 0,
            output_feature_dimension: 1,
            ..Default::default()
        });
    });
    assert_eq!(
        e,
        format!("INVALID_ARGUMENT: {PATH}.conv_descriptor.operand0_shape: the array's byte size overflows")
    );
}

/// Decoding and encoding give back the artifact's thunk.
#[test]
fn convolution_thunk_round_trips() {
    let p = conv_artifact(ConvolutionKind::BackwardFilter);
    let exe = runtime::load(&p.encode_to_vec(), &device(), &RuntimeFlags::default()).unwrap();
    assert_eq!(exe.thunk_protos(), p.thunks);
}
