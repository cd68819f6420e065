//! `convolution_thunk` in memory (docs/artifact.md "Convolution"): XLA's cuDNN convolution, as
//! validated by `decode::conv` and run by [`crate::conv`].
use proto::xla::gpu::GpuConvDescriptorProto;
use proto::xla::ShapeProto;

use super::{ElemType, Slice};

/// Which of the forward convolution's arrays the thunk computes (`stream_executor.dnn.ConvolutionKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConvKind {
    /// `y = conv(x, w)`: operands x and w, result y.
    Forward,
    /// The gradient of the input: operands dy and w, result dx.
    BackwardData,
    /// The gradient of the filter: operands x and dy, result dw.
    BackwardFilter,
}

impl ConvKind {
    /// The `ConvolutionKind` name.
    pub fn name(self) -> &'static str {
        match self {
            ConvKind::Forward => "FORWARD",
            ConvKind::BackwardData => "BACKWARD_DATA",
            ConvKind::BackwardFilter => "BACKWARD_FILTER",
        }
    }
}

/// One spatial dimension of the forward convolution, with the element strides of the three
/// arrays along it (every array row-major in its own dimension order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvSpatial {
    /// Size in x.
    pub input: u64,
    /// Size in w (the window size).
    pub kernel: u64,
    /// Size in y.
    pub output: u64,
    /// Window stride (>= 1).
    pub stride: u64,
    /// Low padding (may be negative: cropping).
    pub pad_low: i64,
    /// Base (lhs) dilation (>= 1).
    pub lhs_dilation: u64,
    /// Window (rhs) dilation (>= 1).
    pub rhs_dilation: u64,
    /// The filter is read from the far end along this dimension (cuDNN's convolution mode).
    pub reversed: bool,
    /// Element strides along this dimension in x, w and y.
    pub strides: [u64; 3],
}

/// The forward convolution `x * w -> y` of a thunk, checked against its shapes: every index
/// the implicit GEMM forms from it is inside its array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Batch size of x and y.
    pub batch: u64,
    /// Feature size of x (`groups` x the filter's input features).
    pub in_features: u64,
    /// Output features: of the filter and of y.
    pub out_features: u64,
    /// `feature_group_count`.
    pub groups: u64,
    /// Element strides of x's batch and feature dimensions.
    pub x_strides: [u64; 2],
    /// Element strides of w's input- and output-feature dimensions.
    pub w_strides: [u64; 2],
    /// Element strides of y's batch and feature dimensions.
    pub y_strides: [u64; 2],
    /// The spatial dimensions, in the dimension numbers' order.
    pub spatial: Vec<ConvSpatial>,
}

impl ConvGeometry {
    /// Input features per group (the filter's input-feature size).
    pub fn in_per_group(&self) -> u64 {
        self.in_features / self.groups.max(1)
    }
    /// Output features per group.
    pub fn out_per_group(&self) -> u64 {
        self.out_features / self.groups.max(1)
    }
}

/// `convolution_thunk`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvThunk {
    /// What it computes.
    pub kind: ConvKind,
    /// The element type of all three arrays (f16, bf16, f32 or f64).
    pub dtype: ElemType,
    /// The forward convolution.
    pub geometry: ConvGeometry,
    /// `backend_config.conv_result_scale` (1 without a backend config).
    pub scale: f64,
    /// `operand_buffers` (two).
    pub operands: [Slice; 2],
    /// `result_buffers[0]`.
    pub result: Slice,
    /// The shapes the three slices carry (operand 0, operand 1, result), where the artifact gave
    /// them (XLA's current form does; the old bare-slice form cannot): checked against the
    /// descriptor at load, re-encoded, never read by execution.
    pub shapes: [Option<ShapeProto>; 3],
    /// `scratch_buffer`, when set (the host implementation uses none).
    pub scratch: Option<Slice>,
    /// The descriptor as the artifact wrote it (re-encoded unchanged).
    pub descriptor: GpuConvDescriptorProto,
}
