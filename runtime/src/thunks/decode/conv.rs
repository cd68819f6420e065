//! The convolution thunk: the descriptor's kind, backend config, shapes, dimension numbers,
//! window and group count, checked against each other and against the slices' sizes (the
//! HLO convolution's shape rule, checked here because the runtime trusts nothing in the
//! artifact). What passes is a [`ConvGeometry`] whose every index is inside its array.
use proto::stream_executor::dnn::{ActivationMode, ConvolutionKind};
use proto::xla::gpu::{ConvolutionThunkProto, GpuConvDescriptorProto};
use proto::xla::{ConvolutionDimensionNumbers, ShapeProto, WindowDimension};

use super::*;

/// An array of the descriptor: its element type and dimensions.
struct Array {
    dtype: ElemType,
    dims: Vec<u64>,
    /// The field it came from (`operand0_shape`, ...), for messages.
    field: &'static str,
}

impl Array {
    /// Row-major element stride of dimension `d` (in range: checked by the caller).
    fn stride(&self, d: usize) -> u64 {
        self.dims[d + 1..].iter().product()
    }
}

fn array(s: Option<&ShapeProto>, field: &'static str, path: &str) -> Result<Array> {
    let p = format!("{path}.{field}");
    let s = s.ok_or_else(|| invalid(format!("{p} is not set")))?;
    let dtype = match ElemType::from_proto(s.element_type) {
        Some(t @ (ElemType::F16 | ElemType::BF16 | ElemType::F32 | ElemType::F64)) => t,
        _ => {
            return Err(Error::unimplemented(format!(
                "{p}.element_type is {}; the convolution thunk runs f16, bf16, f32 and f64",
                type_name(s.element_type)
            )))
        }
    };
    let dims = s
        .dimensions
        .iter()
        .enumerate()
        .map(|(i, &v)| nonneg(v, &format!("{p}.dimensions[{i}]")))
        .collect::<Result<Vec<u64>>>()?;
    if let Some(l) = &s.layout {
        let row_major: Vec<i64> = (0..dims.len() as i64).rev().collect();
        if !l.minor_to_major.is_empty() && l.minor_to_major != row_major {
            return Err(invalid(format!(
                "{p}.layout.minor_to_major is {:?}, not the row-major {row_major:?} the convolution thunk reads (NHWC and NCHW are told by dnums)",
                l.minor_to_major
            )));
        }
    }
    Ok(Array { dtype, dims, field })
}

/// The kind, or why this runtime does not run it.
fn kind(v: i32, path: &str) -> Result<ConvKind> {
    match ConvolutionKind::try_from(v) {
        Ok(ConvolutionKind::Forward) => Ok(ConvKind::Forward),
        Ok(ConvolutionKind::BackwardData) => Ok(ConvKind::BackwardData),
        Ok(ConvolutionKind::BackwardFilter) => Ok(ConvKind::BackwardFilter),
        Ok(k @ (ConvolutionKind::ForwardBiasActivation | ConvolutionKind::ForwardGraph)) => {
            Err(Error::unimplemented(format!(
                "{path}.kind is {}: fused convolutions are not run by this runtime",
                k.as_str_name()
            )))
        }
        _ => Err(invalid(format!(
            "{path}.kind is {v}, not FORWARD, BACKWARD_DATA or BACKWARD_FILTER"
        ))),
    }
}

/// The result scale from the backend config (1 without one).
fn scale(d: &GpuConvDescriptorProto, path: &str) -> Result<f64> {
    let Some(b) = &d.backend_config else {
        return Ok(1.0);
    };
    let p = format!("{path}.backend_config");
    if b.activation_mode != ActivationMode::KNone as i32 {
        return Err(Error::unimplemented(format!(
            "{p}.activation_mode is {}: fused activations are not run by this runtime",
            ActivationMode::try_from(b.activation_mode).map_or_else(
                |_| b.activation_mode.to_string(),
                |m| m.as_str_name().to_owned()
            )
        )));
    }
    if b.side_input_scale != 0.0 {
        return Err(invalid(format!(
            "{p}.side_input_scale is {}, must be 0: the thunk has no side input",
            b.side_input_scale
        )));
    }
    if !b.conv_result_scale.is_finite() {
        return Err(invalid(format!(
            "{p}.conv_result_scale is {}, must be finite",
            b.conv_result_scale
        )));
    }
    Ok(b.conv_result_scale)
}

/// Checks that `dims` (batch, feature, spatial...) name every dimension of `a` once.
fn permutation(a: &Array, dims: &[i64], what: &str, path: &str) -> Result<Vec<usize>> {
    let rank = a.dims.len();
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        match usize::try_from(d) {
            Ok(u) if u < rank && !seen[u] => {
                seen[u] = true;
                out.push(u);
            }
            _ => {
                return Err(invalid(format!(
                    "{path}.dnums: the {what} dimensions {dims:?} are not a permutation of the {rank} dimensions of {}",
                    a.field
                )))
            }
        }
    }
    if out.len() != rank {
        return Err(invalid(format!(
            "{path}.dnums: the {what} dimensions {dims:?} are not a permutation of the {rank} dimensions of {}",
            a.field
        )));
    }
    Ok(out)
}

/// The three arrays' dimension orders: [batch/in-feature, feature/out-feature, spatial...].
fn orders(
    n: &ConvolutionDimensionNumbers,
    [x, w, y]: [&Array; 3],
    path: &str,
) -> Result<[Vec<usize>; 3]> {
    let list = |a: i64, b: i64, s: &[i64]| [vec![a, b], s.to_vec()].concat();
    Ok([
        permutation(
            x,
            &list(
                n.input_batch_dimension,
                n.input_feature_dimension,
                &n.input_spatial_dimensions,
            ),
            "input",
            path,
        )?,
        permutation(
            w,
            &list(
                n.kernel_input_feature_dimension,
                n.kernel_output_feature_dimension,
                &n.kernel_spatial_dimensions,
            ),
            "kernel",
            path,
        )?,
        permutation(
            y,
            &list(
                n.output_batch_dimension,
                n.output_feature_dimension,
                &n.output_spatial_dimensions,
            ),
            "output",
            path,
        )?,
    ])
}

/// The output size of one spatial dimension (XLA's `WindowOutputDimension`; 0 when the window
/// does not fit), or `None` on overflow.
fn window_out(input: u64, w: &WindowDimension) -> Option<u64> {
    let input = i128::from(input);
    let dilated = if input == 0 {
        0
    } else {
        (input - 1) * i128::from(w.base_dilation) + 1
    };
    let padded = dilated + i128::from(w.padding_low) + i128::from(w.padding_high);
    let window = if w.size == 0 {
        0
    } else {
        (i128::from(w.size) - 1) * i128::from(w.window_dilation) + 1
    };
    if padded < window {
        return Some(0);
    }
    u64::try_from((padded - window) / i128::from(w.stride) + 1).ok()
}

/// One spatial dimension, its window checked against the sizes of x, w and y.
fn spatial(
    i: usize,
    w: &WindowDimension,
    arrays: [&Array; 3],
    dims: [usize; 3],
    path: &str,
) -> Result<ConvSpatial> {
    let p = format!("{path}.window.dimensions[{i}]");
    if w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1 {
        return Err(invalid(format!(
            "{p}: stride ({}), base_dilation ({}) and window_dilation ({}) must be >= 1",
            w.stride, w.base_dilation, w.window_dilation
        )));
    }
    let [x, k, y] = [0, 1, 2].map(|j| arrays[j].dims[dims[j]]);
    if u64::try_from(w.size).ok() != Some(k) {
        return Err(invalid(format!(
            "{p}.size is {}, but the kernel's spatial dimension {} ({}) is {k}",
            w.size, dims[1], arrays[1].field
        )));
    }
    let want = window_out(x, w).ok_or_else(|| invalid(format!("{p}: the sizes overflow")))?;
    if want != y {
        return Err(invalid(format!(
            "{p}: the window over input size {x} gives {want} outputs, but the output's spatial dimension {} ({}) is {y}",
            dims[2], arrays[2].field
        )));
    }
    let (stride, lhs_dilation, rhs_dilation) = (
        w.stride as u64,
        w.base_dilation as u64,
        w.window_dilation as u64,
    );
    Ok(ConvSpatial {
        input: x,
        kernel: k,
        output: y,
        stride,
        pad_low: w.padding_low,
        lhs_dilation,
        rhs_dilation,
        reversed: w.window_reversal,
        strides: [0, 1, 2].map(|j| arrays[j].stride(dims[j])),
    })
}

/// The feature and batch sizes of x, w and y agree with `groups`.
fn features(
    [x, w, y]: [&Array; 3],
    [xo, wo, yo]: [&[usize]; 3],
    groups: u64,
    path: &str,
) -> Result<(u64, u64, u64)> {
    let (batch, c) = (x.dims[xo[0]], x.dims[xo[1]]);
    let (i, o) = (w.dims[wo[0]], w.dims[wo[1]]);
    if i.checked_mul(groups) != Some(c) {
        return Err(invalid(format!(
            "{path}: the input's features ({c}, {}) are not the kernel's input features ({i}, {}) x feature_group_count ({groups})",
            x.field, w.field
        )));
    }
    if o % groups != 0 {
        return Err(invalid(format!(
            "{path}: the kernel's output features ({o}, {}) are not a multiple of feature_group_count ({groups})",
            w.field
        )));
    }
    if (y.dims[yo[0]], y.dims[yo[1]]) != (batch, o) {
        return Err(invalid(format!(
            "{path}: the output ({}) has batch {} and features {}; the input gives batch {batch} and the kernel {o} features",
            y.field,
            y.dims[yo[0]],
            y.dims[yo[1]]
        )));
    }
    Ok((batch, c, o))
}

/// The descriptor's forward convolution: x, w and y in the roles the kind gives the three
/// shapes.
fn geometry(
    d: &GpuConvDescriptorProto,
    kind: ConvKind,
    path: &str,
) -> Result<(ElemType, ConvGeometry)> {
    let op0 = array(d.operand0_shape.as_ref(), "operand0_shape", path)?;
    let op1 = array(d.operand1_shape.as_ref(), "operand1_shape", path)?;
    let res = array(d.result_shape.as_ref(), "result_shape", path)?;
    if op0.dtype != op1.dtype || op0.dtype != res.dtype {
        return Err(invalid(format!(
            "{path}: the element types differ: operand0_shape {}, operand1_shape {}, result_shape {}",
            op0.dtype.name(),
            op1.dtype.name(),
            res.dtype.name()
        )));
    }
    let [x, w, y] = match kind {
        ConvKind::Forward => [&op0, &op1, &res],
        ConvKind::BackwardData => [&res, &op1, &op0],
        ConvKind::BackwardFilter => [&op0, &res, &op1],
    };
    let window = d.window.clone().unwrap_or_default().dimensions;
    let n = window.len();
    if n > 3 || [x, w, y].iter().any(|a| a.dims.len() != n + 2) {
        return Err(invalid(format!(
            "{path}: ranks {}, {} and {} of operand0_shape, operand1_shape and result_shape must all be the window's {n} spatial dimensions + 2, with at most 3 spatial dimensions",
            op0.dims.len(),
            op1.dims.len(),
            res.dims.len()
        )));
    }
    let dnums = d
        .dnums
        .as_ref()
        .ok_or_else(|| invalid(format!("{path}.dnums is not set")))?;
    let [xo, wo, yo] = orders(dnums, [x, w, y], path)?;
    let groups = u64::try_from(d.feature_group_count)
        .ok()
        .filter(|&g| g >= 1)
        .ok_or_else(|| {
            invalid(format!(
                "{path}.feature_group_count is {}, must be >= 1",
                d.feature_group_count
            ))
        })?;
    let (batch, in_features, out_features) = features([x, w, y], [&xo, &wo, &yo], groups, path)?;
    let spatial = window
        .iter()
        .enumerate()
        .map(|(i, wd)| spatial(i, wd, [x, w, y], [xo[i + 2], wo[i + 2], yo[i + 2]], path))
        .collect::<Result<Vec<_>>>()?;
    Ok((
        op0.dtype,
        ConvGeometry {
            batch,
            in_features,
            out_features,
            groups,
            x_strides: [x.stride(xo[0]), x.stride(xo[1])],
            w_strides: [w.stride(wo[0]), w.stride(wo[1])],
            y_strides: [y.stride(yo[0]), y.stride(yo[1])],
            spatial,
        },
    ))
}

/// Bytes of an array of `dims` of `t`.
fn bytes(t: ElemType, s: Option<&ShapeProto>) -> Option<u64> {
    s?.dimensions
        .iter()
        .try_fold(t.size(), |a, &d| a.checked_mul(u64::try_from(d).ok()?))
}

/// A slice's shape (XLA's form carries one) names the array the descriptor gives that slice:
/// the same element type and dimensions (layouts are the descriptor's to say).
fn same_array(
    got: Option<&ShapeProto>,
    want: Option<&ShapeProto>,
    path: &str,
    name: &str,
    field: &str,
) -> Result<()> {
    let (Some(got), Some(want)) = (got, want) else {
        return Ok(());
    };
    if (got.element_type, &got.dimensions) != (want.element_type, &want.dimensions) {
        return Err(invalid(format!(
            "{path}.{name}.shape is {} {:?}, but the descriptor's {field} is {} {:?}",
            type_name(got.element_type),
            got.dimensions,
            type_name(want.element_type),
            want.dimensions
        )));
    }
    Ok(())
}

pub(super) fn conv(
    ctx: &DecodeContext<'_>,
    c: &ConvolutionThunkProto,
    path: &str,
) -> Result<ConvThunk> {
    let d = c
        .conv_descriptor
        .as_ref()
        .ok_or_else(|| invalid(format!("{path}.conv_descriptor is not set")))?;
    let dp = format!("{path}.conv_descriptor");
    let kind = kind(d.kind, &dp)?;
    let scale = scale(d, &dp)?;
    let (dtype, geometry) = geometry(d, kind, &dp)?;
    if c.operand_buffers.len() != 2 {
        return Err(invalid(format!(
            "{path}.operand_buffers has {} slices; a convolution reads 2",
            c.operand_buffers.len()
        )));
    }
    if c.result_buffers.len() != 1 {
        return Err(invalid(format!(
            "{path}.result_buffers has {} slices; a convolution writes 1",
            c.result_buffers.len()
        )));
    }
    let op = |i: usize| {
        shaped(
            ctx,
            c.operand_buffers.get(i),
            &format!("{path}.operand_buffers[{i}]"),
        )
    };
    let [op0, op1] = [op(0)?, op(1)?];
    let res = shaped(
        ctx,
        c.result_buffers.first(),
        &format!("{path}.result_buffers[0]"),
    )?;
    for (s, want, name, field) in [
        (
            &op0,
            &d.operand0_shape,
            "operand_buffers[0]",
            "operand0_shape",
        ),
        (
            &op1,
            &d.operand1_shape,
            "operand_buffers[1]",
            "operand1_shape",
        ),
        (&res, &d.result_shape, "result_buffers[0]", "result_shape"),
    ] {
        let need = bytes(dtype, want.as_ref())
            .ok_or_else(|| invalid(format!("{dp}.{field}: the array's byte size overflows")))?;
        same_array(s.shape.as_ref(), want.as_ref(), path, name, field)?;
        if s.slice.size != need {
            return Err(invalid(format!(
                "{path}.{name}.slice.size is {}, but {field} needs {need} bytes",
                s.slice.size
            )));
        }
    }
    let (operands, result) = ([op0.slice, op1.slice], res.slice);
    let shapes = [op0.shape, op1.shape, res.shape];
    nonneg(d.scratch_size, &format!("{dp}.scratch_size"))?;
    let scratch = match &c.scratch_buffer {
        Some(s) => Some(slice(ctx, Some(s), &format!("{path}.scratch_buffer"))?),
        None => None,
    };
    Ok(ConvThunk {
        kind,
        dtype,
        geometry,
        scale,
        operands,
        result,
        shapes,
        scratch,
        descriptor: d.clone(),
    })
}
