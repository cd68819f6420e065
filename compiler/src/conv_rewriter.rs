//! Which convolutions become a `convolution_thunk`, and as which cuDNN call: a port of XLA's
//! conv rewriter (xla/service/gpu/transforms/conv_rewriter.cc). Tried in XLA's order:
//! backward input (a filter reversed in all spatial dimensions, or a base-dilated convolution
//! with a 1x1 or constant filter), backward filter (a convolution that does not look like a
//! forward one: batch and output features swapped, large "kernel"), else forward.
//!
//! The thunk's descriptor always describes the forward convolution `x * w -> y`; the kind says
//! which arrays are the operands. The operands stay the HLO convolution's, in order: for
//! BACKWARD_DATA the filter operand is the HLO's (reversed) filter, so the descriptor's window
//! is reversed in every spatial dimension, which reads it back in the forward order (XLA
//! subsumes the `reverse` instead; the arithmetic is the same).
//!
//! Beyond XLA, a convolution stays a kernel (`codegen/convolution.rs`) when the thunk could not
//! run it exactly: element types other than f16/bf16/f32/f64 or mixed, attributes the
//! evaluator's geometry refuses, or a batch-grouped convolution that is no backward filter (XLA
//! reshapes its input into feature groups first). XLA's padding legalization is not ported: a
//! forward descriptor may keep base dilation and uneven or negative padding, which the
//! runtime's implicit GEMM runs as written (docs/artifact.md "Convolution").
use hlo::{Computation, ConvDimensionNumbers, Instruction, WindowDim};
use hlo::{Opcode, PrimitiveType as P};
use hlo_eval::ConvGeometry;
use proto::stream_executor::dnn::ConvolutionKind;

/// A convolution as the thunk runs it: XLA's `CreateGpuConv` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuConv {
    /// Forward, backward data or backward filter.
    pub kind: ConvolutionKind,
    /// The forward convolution's window, one entry per spatial dimension.
    pub window: Vec<WindowDim>,
    /// The forward convolution's dimension numbers (x: input, w: kernel, y: output).
    pub dnums: ConvDimensionNumbers,
    /// The forward convolution's feature groups.
    pub feature_group_count: i64,
}

/// The operand, kernel and result dimensions of `conv`.
struct Dims {
    lhs: Vec<i64>,
    rhs: Vec<i64>,
    out: Vec<i64>,
}

fn at(d: &[i64], i: i64) -> i64 {
    usize::try_from(i)
        .ok()
        .and_then(|i| d.get(i).copied())
        .unwrap_or(0)
}

/// `conv` as a thunk convolution, or `None` where it stays a kernel.
pub fn classify(comp: &Computation, conv: &Instruction) -> Option<GpuConv> {
    if conv.opcode != Opcode::Convolution || conv.operands.len() != 2 {
        return None;
    }
    let [lhs, rhs] = [&comp[conv.operands[0]], &comp[conv.operands[1]]];
    let t = conv.shape.element_type()?;
    let thunk_type = matches!(t, P::F16 | P::Bf16 | P::F32 | P::F64);
    if !thunk_type || [lhs, rhs].iter().any(|o| o.shape.element_type() != Some(t)) {
        return None;
    }
    let dnums = conv.attrs.conv_dimension_numbers.clone()?;
    let d = Dims {
        lhs: lhs.shape.dims().to_vec(),
        rhs: rhs.shape.dims().to_vec(),
        out: conv.shape.dims().to_vec(),
    };
    let window: Vec<WindowDim> = match &conv.attrs.window {
        Some(w) => w.dims.clone(),
        None => dnums
            .kernel_spatial_dimensions
            .iter()
            .map(|&k| WindowDim {
                size: at(&d.rhs, k),
                ..WindowDim::default()
            })
            .collect(),
    };
    let fgc = conv.attrs.feature_group_count.unwrap_or(1);
    let bgc = conv.attrs.batch_group_count.unwrap_or(1);
    let usize_dims = |v: &[i64]| {
        v.iter()
            .map(|&x| usize::try_from(x).ok())
            .collect::<Option<Vec<_>>>()
    };
    let (l, r, o) = (
        usize_dims(&d.lhs)?,
        usize_dims(&d.rhs)?,
        usize_dims(&d.out)?,
    );
    ConvGeometry::new(&l, &r, &o, &dnums, Some(&window), fgc, bgc).ok()?;
    if window.len() > 3 {
        return None;
    }
    if let Some(m) = match_backward_input(comp, conv, &d, &window, &dnums, fgc) {
        return Some(m);
    }
    if let Some(m) = match_backward_filter(comp, conv, &d, &window, &dnums, fgc, bgc) {
        return Some(m);
    }
    let zero = |v: &[i64]| v.contains(&0);
    let reversed = window.iter().filter(|w| w.reversal).count();
    let reversal_ok = if window.len() == 2 {
        reversed == 0 || reversed == 2
    } else {
        reversed == 0
    };
    (bgc == 1 && !zero(&d.lhs) && !zero(&d.rhs) && reversal_ok).then_some(GpuConv {
        kind: ConvolutionKind::Forward,
        window,
        dnums,
        feature_group_count: fgc,
    })
}

/// XLA's `MaybeConv1dToConv2d`: a 2-D convolution whose filter is a reshape inserting one
/// size-1 spatial dimension into a 1-D filter.
fn maybe_conv1d_to_conv2d(comp: &Computation, conv: &Instruction, window: &[WindowDim]) -> bool {
    let filter = &comp[conv.operands[1]];
    if window.len() != 2 || filter.opcode != Opcode::Reshape {
        return false;
    }
    let Some(&src) = filter.operands.first() else {
        return false;
    };
    let Some(inserted) = only_inserted_one(comp[src].shape.dims(), filter.shape.dims()) else {
        return false;
    };
    conv.attrs
        .conv_dimension_numbers
        .as_ref()
        .is_some_and(|dn| dn.kernel_spatial_dimensions.contains(&inserted))
}

/// The dimension of `to` that a reshape from `from` inserts, when it inserts exactly one
/// size-1 dimension and deletes none (XLA's `ReshapeMerelyInsertsOrDeletes1SizedDimensions`).
fn only_inserted_one(from: &[i64], to: &[i64]) -> Option<i64> {
    let (mut i, mut j) = (0, 0);
    let mut inserted = Vec::new();
    while i < from.len() || j < to.len() {
        if i < from.len() && j < to.len() && from[i] == to[j] {
            i += 1;
            j += 1;
        } else if j < to.len() && to[j] == 1 {
            inserted.push(j as i64);
            j += 1;
        } else {
            return None;
        }
    }
    (inserted.len() == 1).then(|| inserted[0])
}

/// XLA's `LooksLikeForwardConvolution`: batch and output features as a forward convolution
/// has them, and no kernel spatial size above the output's.
fn looks_like_forward(d: &Dims, dn: &ConvDimensionNumbers) -> bool {
    at(&d.lhs, dn.input_batch_dimension) == at(&d.out, dn.output_batch_dimension)
        && at(&d.rhs, dn.kernel_output_feature_dimension) == at(&d.out, dn.output_feature_dimension)
        && dn
            .kernel_spatial_dimensions
            .iter()
            .zip(&dn.output_spatial_dimensions)
            .all(|(&k, &o)| at(&d.rhs, k) <= at(&d.out, o))
}

/// The high padding XLA picks: `low` if it is in `[min, min + stride - 1]` (cuDNN prefers even
/// padding), else the nearer end. Every value in that range gives the same output size.
fn padding_high(low: i64, min: i64, stride: i64) -> i64 {
    let max = min + stride - 1;
    if (min..=max).contains(&low) {
        low
    } else if low < min {
        min
    } else {
        max
    }
}

/// XLA's `MatchBackwardFilter`.
fn match_backward_filter(
    comp: &Computation,
    conv: &Instruction,
    d: &Dims,
    window: &[WindowDim],
    dn: &ConvDimensionNumbers,
    fgc: i64,
    bgc: i64,
) -> Option<GpuConv> {
    if fgc > 1 || looks_like_forward(d, dn) {
        return None;
    }
    let plain =
        |w: &WindowDim| w.stride == 1 && w.lhs_dilation == 1 && w.pad_low >= 0 && !w.reversal;
    if !window.iter().all(plain) {
        return None;
    }
    let small = dn
        .kernel_spatial_dimensions
        .iter()
        .zip(&dn.output_spatial_dimensions)
        .filter(|(&k, &o)| at(&d.rhs, k) <= at(&d.out, o))
        .count();
    let conv1d = maybe_conv1d_to_conv2d(comp, conv, window);
    let window_dilation = window.iter().any(|w| w.rhs_dilation != 1);
    if (dn.kernel_spatial_dimensions.is_empty() || small > 1 || (!conv1d && small == 1))
        && !window_dilation
    {
        return None;
    }
    let mut bw = Vec::with_capacity(window.len());
    for (i, w) in window.iter().enumerate() {
        let size = at(&d.out, dn.output_spatial_dimensions[i]);
        let stride = w.rhs_dilation;
        let input = at(&d.lhs, dn.input_spatial_dimensions[i]);
        let padded = size + (w.size - 1) * stride;
        let high = padding_high(w.pad_low, padded - input - w.pad_low, stride);
        if high < 0 {
            return None;
        }
        bw.push(WindowDim {
            size,
            stride,
            pad_low: w.pad_low,
            pad_high: high,
            lhs_dilation: 1,
            rhs_dilation: 1,
            reversal: false,
        });
    }
    Some(GpuConv {
        kind: ConvolutionKind::BackwardFilter,
        window: bw,
        dnums: ConvDimensionNumbers {
            input_batch_dimension: dn.input_feature_dimension,
            input_feature_dimension: dn.input_batch_dimension,
            input_spatial_dimensions: dn.input_spatial_dimensions.clone(),
            output_batch_dimension: dn.kernel_input_feature_dimension,
            output_feature_dimension: dn.kernel_output_feature_dimension,
            output_spatial_dimensions: dn.kernel_spatial_dimensions.clone(),
            kernel_input_feature_dimension: dn.output_batch_dimension,
            kernel_output_feature_dimension: dn.output_feature_dimension,
            kernel_spatial_dimensions: dn.output_spatial_dimensions.clone(),
        },
        feature_group_count: bgc,
    })
}

/// XLA's `MatchBackwardInput` (grouped convolutions excluded, as XLA does today).
fn match_backward_input(
    comp: &Computation,
    conv: &Instruction,
    d: &Dims,
    window: &[WindowDim],
    dn: &ConvDimensionNumbers,
    fgc: i64,
) -> Option<GpuConv> {
    if fgc > 1 {
        return None;
    }
    let filter = &comp[conv.operands[1]];
    let reversed = filter.opcode == Opcode::Reverse && {
        let mut a = filter.attrs.dimensions.clone().unwrap_or_default();
        let mut b = dn.kernel_spatial_dimensions.clone();
        a.sort_unstable();
        b.sort_unstable();
        a == b
    };
    let reversed_1d = maybe_conv1d_to_conv2d(comp, conv, window)
        && filter
            .operands
            .first()
            .is_some_and(|&o| comp[o].opcode == Opcode::Reverse);
    let one_by_one = window.iter().all(|w| w.size == 1);
    let base_dilated = window.iter().any(|w| w.lhs_dilation != 1);
    if !reversed
        && !reversed_1d
        && !(base_dilated && (filter.opcode == Opcode::Constant || one_by_one))
    {
        return None;
    }
    if !window
        .iter()
        .all(|w| w.stride == 1 && w.rhs_dilation == 1 && !w.reversal)
    {
        return None;
    }
    let mut bw = Vec::with_capacity(window.len());
    for (i, w) in window.iter().enumerate() {
        let stride = w.lhs_dilation;
        let low = w.size - 1 - w.pad_low;
        if low < 0 {
            return None;
        }
        let unpadded = at(&d.out, dn.output_spatial_dimensions[i]);
        let outputs = at(&d.lhs, dn.input_spatial_dimensions[i]);
        let padded = w.size + stride * (outputs - 1);
        let high = padding_high(low, padded - unpadded - low, stride);
        if high < 0 {
            return None;
        }
        // The filter operand is the HLO's, reversed: reading it reversed gives the forward
        // filter (XLA drops the `reverse` instruction instead).
        bw.push(WindowDim {
            size: w.size,
            stride,
            pad_low: low,
            pad_high: high,
            lhs_dilation: 1,
            rhs_dilation: 1,
            reversal: true,
        });
    }
    Some(GpuConv {
        kind: ConvolutionKind::BackwardData,
        window: bw,
        dnums: ConvDimensionNumbers {
            input_batch_dimension: dn.output_batch_dimension,
            input_feature_dimension: dn.output_feature_dimension,
            input_spatial_dimensions: dn.output_spatial_dimensions.clone(),
            kernel_input_feature_dimension: dn.kernel_output_feature_dimension,
            kernel_output_feature_dimension: dn.kernel_input_feature_dimension,
            kernel_spatial_dimensions: dn.kernel_spatial_dimensions.clone(),
            output_batch_dimension: dn.input_batch_dimension,
            output_feature_dimension: dn.input_feature_dimension,
            output_spatial_dimensions: dn.input_spatial_dimensions.clone(),
        },
        feature_group_count: fgc,
    })
}
