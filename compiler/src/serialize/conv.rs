//! The convolution thunk's proto: XLA's `GpuConvDescriptorProto` from the conv rewriter's
//! call, with XLA's default backend config (`conv_result_scale = 1`, no activation) and no
//! scratch buffer (the runtime's implicit GEMM needs none); the slices in XLA's `ShapedSliceProto`
//! form, each with its array's shape.
use hlo::{ConvDimensionNumbers, WindowDim};
use proto::xla::gpu as pg;

use super::shape_proto;
use crate::buffers::Assignment;
use crate::error::CompileError;
use crate::lower::Op;

fn window(w: &[WindowDim]) -> proto::xla::Window {
    proto::xla::Window {
        dimensions: w
            .iter()
            .map(|d| proto::xla::WindowDimension {
                size: d.size,
                stride: d.stride,
                padding_low: d.pad_low,
                padding_high: d.pad_high,
                window_dilation: d.rhs_dilation,
                base_dilation: d.lhs_dilation,
                window_reversal: d.reversal,
            })
            .collect(),
    }
}

fn dnums(d: &ConvDimensionNumbers) -> proto::xla::ConvolutionDimensionNumbers {
    proto::xla::ConvolutionDimensionNumbers {
        input_batch_dimension: d.input_batch_dimension,
        input_feature_dimension: d.input_feature_dimension,
        input_spatial_dimensions: d.input_spatial_dimensions.clone(),
        kernel_input_feature_dimension: d.kernel_input_feature_dimension,
        kernel_output_feature_dimension: d.kernel_output_feature_dimension,
        kernel_spatial_dimensions: d.kernel_spatial_dimensions.clone(),
        output_batch_dimension: d.output_batch_dimension,
        output_feature_dimension: d.output_feature_dimension,
        output_spatial_dimensions: d.output_spatial_dimensions.clone(),
    }
}

/// The thunk of an [`Op::Convolution`] (any other op is an internal error).
pub(super) fn convolution_thunk(
    asg: &Assignment,
    op: &Op,
) -> Result<pg::ConvolutionThunkProto, CompileError> {
    let Op::Convolution {
        conv,
        operands,
        result,
        ..
    } = op
    else {
        return Err(CompileError::Internal(
            "convolution_thunk called on another op".into(),
        ));
    };
    let shapes = [
        shape_proto(&operands[0].1)?,
        shape_proto(&operands[1].1)?,
        shape_proto(&result.1)?,
    ];
    // XLA's form: each slice with the shape stored in it (the descriptor's shapes again).
    let shaped = |slice, shape: &proto::xla::ShapeProto| pg::ShapedSliceProto {
        slice: Some(slice),
        shape: Some(shape.clone()),
    };
    Ok(pg::ConvolutionThunkProto {
        conv_descriptor: Some(pg::GpuConvDescriptorProto {
            kind: conv.kind as i32,
            backend_config: Some(pg::CudnnConvBackendConfig {
                conv_result_scale: 1.0,
                activation_mode: proto::stream_executor::dnn::ActivationMode::KNone as i32,
                side_input_scale: 0.0,
            }),
            operand0_shape: Some(shapes[0].clone()),
            operand1_shape: Some(shapes[1].clone()),
            result_shape: Some(shapes[2].clone()),
            scratch_size: 0,
            window: Some(window(&conv.window)),
            dnums: Some(dnums(&conv.dnums)),
            feature_group_count: conv.feature_group_count,
        }),
        operand_buffers: vec![
            shaped(asg.slice(operands[0].0)?, &shapes[0]),
            shaped(asg.slice(operands[1].0)?, &shapes[1]),
        ],
        result_buffers: vec![shaped(asg.slice(result.0)?, &shapes[2])],
        scratch_buffer: None,
    })
}
