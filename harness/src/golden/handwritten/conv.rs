//! The hand-written convolution case (issue 32): XLA's `convolution_thunk` in its three kinds,
//! which the runtime executes since 2026-12-04 and no compiler emits by default yet
//! (`emit_convolution_thunk`).
//!
//! One forward convolution `y = x * w` (NHWC x: 1x3x3x1, HWIO w: 2x2x1x1, a 2x2 window without
//! padding, y: 1x2x2x1) and its two gradients for an output gradient dy, each thunk's descriptor
//! describing that forward convolution:
//! - FORWARD (x, w -> y): with x = 1..9 row by row and w = [1, 2, 3, 4],
//!   `y[i][j] = x[i][j] + 2 x[i][j+1] + 3 x[i+1][j] + 4 x[i+1][j+1]` = [37, 47, 67, 77];
//! - BACKWARD_DATA (dy, w -> dx) with the window reversed (cuDNN's convolution mode, as the
//!   compiler emits it for a reversed filter operand), so its forward filter is w read from the
//!   far end, `f[p][q] = w[1-p][1-q]` = [4, 3, 2, 1]: `dx[i][j] = sum dy[i-p][j-q] f[p][q]`; dy =
//!   [1, 0, 0, 1] places f at (0, 0) and at (1, 1): dx = [4, 3, 0, 2, 5, 3, 0, 2, 1];
//! - BACKWARD_FILTER (x, dy -> dw): `dw[p][q] = sum x[i+p][j+q] dy[i][j]` = x[p][q] + x[p+1][q+1]
//!   = [6, 8, 12, 14].
//!
//! Every value is a small integer, exact in f32. The embedded module computes the same with HLO
//! convolutions (the input gradient as a padded convolution with f reversed, which is w itself;
//! the filter gradient with batch and features swapped), so the reference evaluator agrees.
use proto::stream_executor::dnn::{ActivationMode, ConvolutionKind};
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::{
    ConvolutionThunkProto, CudnnConvBackendConfig, GpuConvDescriptorProto, GpuExecutableProto,
    ShapedSliceProto,
};
use proto::xla::{ConvolutionDimensionNumbers, PrimitiveType, ShapeProto, Window, WindowDimension};

use super::{output_leaf, set_allocations, slice, thunk, HandCase};

const CONV_MODULE: &str = "HloModule convolution_thunk, entry_computation_layout={(f32[1,3,3,1]{3,2,1,0}, f32[2,2,1,1]{3,2,1,0}, f32[1,2,2,1]{3,2,1,0})->(f32[1,2,2,1]{3,2,1,0}, f32[1,3,3,1]{3,2,1,0}, f32[2,2,1,1]{3,2,1,0})}

ENTRY main {
  x = f32[1,3,3,1]{3,2,1,0} parameter(0)
  w = f32[2,2,1,1]{3,2,1,0} parameter(1)
  dy = f32[1,2,2,1]{3,2,1,0} parameter(2)
  y = f32[1,2,2,1]{3,2,1,0} convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f
  dx = f32[1,3,3,1]{3,2,1,0} convolution(dy, w), window={size=2x2 pad=1_1x1_1}, dim_labels=b01f_01oi->b01f
  dw = f32[2,2,1,1]{3,2,1,0} convolution(x, dy), window={size=2x2}, dim_labels=f01b_i01o->01bf
  ROOT out = (f32[1,2,2,1]{3,2,1,0}, f32[1,3,3,1]{3,2,1,0}, f32[2,2,1,1]{3,2,1,0}) tuple(y, dx, dw)
}
";

const CONV_IO: &str = r#"{"inputs": [{"dtype": "f32", "shape": [1, 3, 3, 1], "data": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]}, {"dtype": "f32", "shape": [2, 2, 1, 1], "data": [1.0, 2.0, 3.0, 4.0]}, {"dtype": "f32", "shape": [1, 2, 2, 1], "data": [1.0, 0.0, 0.0, 1.0]}], "outputs": [{"dtype": "f32", "shape": [1, 2, 2, 1], "data": [37.0, 47.0, 67.0, 77.0]}, {"dtype": "f32", "shape": [1, 3, 3, 1], "data": [4.0, 3.0, 0.0, 2.0, 5.0, 3.0, 0.0, 2.0, 1.0]}, {"dtype": "f32", "shape": [2, 2, 1, 1], "data": [6.0, 8.0, 12.0, 14.0]}]}
"#;

/// The shapes of x, w and y (f32, row-major).
const X: [i64; 4] = [1, 3, 3, 1];
const W: [i64; 4] = [2, 2, 1, 1];
const Y: [i64; 4] = [1, 2, 2, 1];

fn f32_shape(dims: [i64; 4]) -> ShapeProto {
    ShapeProto {
        element_type: PrimitiveType::F32 as i32,
        dimensions: dims.to_vec(),
        ..Default::default()
    }
}

/// The forward convolution's descriptor with `kind`'s operand and result shapes, the window
/// reversed in both dimensions for `reversed`.
fn descriptor(
    kind: ConvolutionKind,
    shapes: [[i64; 4]; 3],
    reversed: bool,
) -> GpuConvDescriptorProto {
    let d = WindowDimension {
        size: 2,
        stride: 1,
        padding_low: 0,
        padding_high: 0,
        window_dilation: 1,
        base_dilation: 1,
        window_reversal: reversed,
    };
    GpuConvDescriptorProto {
        kind: kind as i32,
        backend_config: Some(CudnnConvBackendConfig {
            conv_result_scale: 1.0,
            activation_mode: ActivationMode::KNone as i32,
            side_input_scale: 0.0,
        }),
        operand0_shape: Some(f32_shape(shapes[0])),
        operand1_shape: Some(f32_shape(shapes[1])),
        result_shape: Some(f32_shape(shapes[2])),
        scratch_size: 0,
        window: Some(Window {
            dimensions: vec![d, d],
        }),
        dnums: Some(ConvolutionDimensionNumbers {
            input_batch_dimension: 0,
            input_feature_dimension: 3,
            input_spatial_dimensions: vec![1, 2],
            kernel_input_feature_dimension: 2,
            kernel_output_feature_dimension: 3,
            kernel_spatial_dimensions: vec![0, 1],
            output_batch_dimension: 0,
            output_feature_dimension: 3,
            output_spatial_dimensions: vec![1, 2],
        }),
        feature_group_count: 1,
    }
}

fn build_conv(p: &mut GpuExecutableProto) {
    let bytes = |d: [i64; 4]| d.iter().product::<i64>() * 4;
    // x, w, dy (parameters), then y, dx, dw (the result tuple's leaves).
    set_allocations(
        p,
        &[
            (bytes(X), Some(0), false),
            (bytes(W), Some(1), false),
            (bytes(Y), Some(2), false),
            (bytes(Y), None, true),
            (bytes(X), None, true),
            (bytes(W), None, true),
        ],
    );
    p.output_info_map = vec![
        output_leaf(&[0], 3, false),
        output_leaf(&[1], 4, false),
        output_leaf(&[2], 5, false),
    ];
    // XLA's form (since hand-written v10): each slice with its array's shape. v9 has bare
    // slices, this schema's form until the fix of 2026-12-04; the runtime reads both.
    let shaped = |(allocation, dims): (i64, [i64; 4])| ShapedSliceProto {
        slice: Some(slice(allocation, 0, bytes(dims))),
        shape: Some(f32_shape(dims)),
    };
    let conv = |id: i64, kind: ConvolutionKind, args: [(i64, [i64; 4]); 3]| {
        thunk(
            id,
            Impl::ConvolutionThunk(ConvolutionThunkProto {
                conv_descriptor: Some(descriptor(
                    kind,
                    args.map(|a| a.1),
                    kind == ConvolutionKind::BackwardData,
                )),
                operand_buffers: vec![shaped(args[0]), shaped(args[1])],
                result_buffers: vec![shaped(args[2])],
                scratch_buffer: None,
            }),
        )
    };
    p.thunks = vec![
        conv(1, ConvolutionKind::Forward, [(0, X), (1, W), (3, Y)]),
        conv(2, ConvolutionKind::BackwardData, [(2, Y), (1, W), (4, X)]),
        conv(3, ConvolutionKind::BackwardFilter, [(0, X), (2, Y), (5, W)]),
    ];
}

/// The convolution case.
pub const CASES: &[HandCase] = &[HandCase {
    name: "convolution_thunk",
    module: CONV_MODULE,
    io_json: CONV_IO,
    build: build_conv,
}];
