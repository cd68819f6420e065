//! The verifier: structural checks and per-opcode shape inference.
//!
//! [`verify`] reports every problem it finds (not just the first), each with the computation,
//! the instruction and its source location. Shape inference ([`infer_shape`]) covers the
//! elementwise, data-movement, reduction, control-flow and indexing opcodes; opcodes it cannot
//! infer (custom-call, collectives, rng, bitcast, ...) are accepted with their declared shape.

mod error;

pub use error::{LayoutError, Needs, ShapeError};

use std::collections::HashSet;

use crate::error::VerifyError;
use crate::ir::*;
use crate::shape::{ArrayShape, Layout, PrimitiveType, Shape};

/// The signature of a called computation: parameter shapes by number and the root shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// Parameter shapes, by parameter number.
    pub params: Vec<Shape>,
    /// Root shape.
    pub result: Shape,
}

impl Signature {
    /// The signature of a computation.
    pub fn of(c: &Computation) -> Signature {
        Signature {
            params: c.param_shapes().into_iter().cloned().collect(),
            result: c
                .root_instruction()
                .map_or(Shape::Tuple(Vec::new()), |r| r.shape.clone()),
        }
    }
}

/// Looks up the signature of a called computation.
pub type CalleeLookup<'a> = &'a dyn Fn(ComputationId) -> Option<Signature>;

type R<T> = Result<T, ShapeError>;

fn arr<'a>(ops: &[&'a Shape], i: usize) -> R<&'a ArrayShape> {
    match ops.get(i) {
        Some(Shape::Array(a)) => Ok(a),
        Some(s) => Err(ShapeError::NotArray {
            index: i,
            found: (*s).clone(),
        }),
        None => Err(ShapeError::MissingOperand { index: i }),
    }
}

fn count(ops: &[&Shape], n: usize, opcode: Opcode) -> R<()> {
    if ops.len() != n {
        return Err(ShapeError::OperandCount {
            opcode,
            expected: n,
            found: ops.len(),
        });
    }
    Ok(())
}

fn dims_of(s: &ArrayShape) -> Vec<i64> {
    s.dims.clone()
}

fn array(ty: PrimitiveType, dims: Vec<i64>) -> Shape {
    Shape::array(ty, dims)
}

fn idx(d: i64, rank: usize, what: &str) -> R<usize> {
    usize::try_from(d)
        .ok()
        .filter(|&u| u < rank)
        .ok_or_else(|| ShapeError::OutOfRange {
            what: what.to_owned(),
            value: d,
            rank,
        })
}

fn check_unique(v: &[i64], what: &'static str) -> R<()> {
    let mut seen = HashSet::new();
    for d in v {
        if !seen.insert(d) {
            return Err(ShapeError::Repeated {
                what,
                dims: v.to_vec(),
                repeated: *d,
            });
        }
    }
    Ok(())
}

fn window_out(d: i64, w: &WindowDim) -> R<i64> {
    if w.stride <= 0 || w.lhs_dilation <= 0 || w.rhs_dilation <= 0 || w.size < 0 {
        return Err(ShapeError::InvalidWindow(*w));
    }
    let dilated_base = if d == 0 {
        0
    } else {
        d.saturating_sub(1)
            .saturating_mul(w.lhs_dilation)
            .saturating_add(1)
    };
    let padded = dilated_base
        .saturating_add(w.pad_low)
        .saturating_add(w.pad_high);
    let dilated_window = if w.size == 0 {
        0
    } else {
        (w.size - 1)
            .saturating_mul(w.rhs_dilation)
            .saturating_add(1)
    };
    if padded < dilated_window {
        return Ok(0);
    }
    Ok(padded.saturating_sub(dilated_window) / w.stride + 1)
}

fn callee(
    lookup: Option<CalleeLookup<'_>>,
    id: Option<ComputationId>,
    what: &'static str,
) -> R<Option<Signature>> {
    let Some(id) = id else {
        return Err(ShapeError::MissingCallee { what });
    };
    Ok(match lookup {
        Some(f) => Some(f(id).ok_or(ShapeError::UnknownCallee { what })?),
        None => None,
    })
}

fn check_params(sig: &Signature, args: &[&Shape], what: &str) -> R<()> {
    if sig.params.len() != args.len() {
        return Err(ShapeError::ParamCount {
            what: what.to_owned(),
            params: sig.params.len(),
            args: args.len(),
        });
    }
    for (i, (p, a)) in sig.params.iter().zip(args).enumerate() {
        if !p.compatible(a) {
            return Err(ShapeError::ParamShape {
                what: what.to_owned(),
                index: i,
                param: p.clone(),
                arg: (*a).clone(),
            });
        }
    }
    Ok(())
}

/// Checks a reducer-like computation (reduce, reduce-window, sort comparator excluded): `2n`
/// scalar parameters and a result of `n` scalars matching the init values.
fn check_reducer(sig: &Signature, inits: &[PrimitiveType], what: &'static str) -> R<()> {
    let n = inits.len();
    if sig.params.len() != 2 * n {
        return Err(ShapeError::ReducerParamCount {
            what,
            found: sig.params.len(),
            expected: 2 * n,
        });
    }
    let results: Vec<&Shape> = match (&sig.result, n) {
        (Shape::Tuple(t), n) if n > 1 || t.len() == 1 => t.iter().collect(),
        (s, 1) => vec![s],
        (s, _) => {
            return Err(ShapeError::ReducerNotTuple {
                what,
                n,
                result: s.clone(),
            })
        }
    };
    if results.len() != n {
        return Err(ShapeError::ReducerResultCount {
            what,
            found: results.len(),
            expected: n,
        });
    }
    for (i, (r, t)) in results.iter().zip(inits).enumerate() {
        if !r.compatible(&Shape::scalar(*t)) {
            return Err(ShapeError::ReducerResultType {
                what,
                index: i,
                found: (*r).clone(),
                expected: *t,
            });
        }
    }
    Ok(())
}

/// Infers the result shape (without layout) of an instruction from its operands' shapes and
/// attributes.
///
/// `declared` is the instruction's declared shape, when known: opcodes whose result type or
/// dimensions are not determined by their operands (convert, broadcast, reshape, iota, ...)
/// take those from it and only check consistency. `callees` looks up called computations;
/// without it, call-like opcodes are not checked against their callees.
///
/// Returns `Ok(None)` when the shape cannot be inferred (the declared shape is then trusted),
/// and `Err` with a description when the operands and attributes are inconsistent.
pub fn infer_shape(
    opcode: Opcode,
    ops: &[&Shape],
    a: &Attrs,
    declared: Option<&Shape>,
    callees: Option<CalleeLookup<'_>>,
) -> R<Option<Shape>> {
    use Opcode::*;
    let declared_array = declared.and_then(Shape::as_array);
    let declared_ty = declared_array.map(|d| d.element_type);
    if opcode.is_elementwise_unary() {
        count(ops, 1, opcode)?;
        let x = arr(ops, 0)?;
        let t = x.element_type;
        let float_like = t.is_float() || t.is_complex();
        let ty = match opcode {
            IsFinite => {
                if !t.is_float() {
                    return Err(ShapeError::ElementType {
                        opcode,
                        needs: Needs::FloatOperand,
                        found: t,
                    });
                }
                PrimitiveType::Pred
            }
            Real | Imag => t.complex_component(),
            Abs => t.complex_component(),
            Not => {
                if !(t.is_int() || t.is_pred()) {
                    return Err(ShapeError::ElementType {
                        opcode,
                        needs: Needs::PredOrIntOperand,
                        found: t,
                    });
                }
                t
            }
            Clz | PopulationCount => {
                if !t.is_int() {
                    return Err(ShapeError::ElementType {
                        opcode,
                        needs: Needs::IntOperand,
                        found: t,
                    });
                }
                t
            }
            Floor | Ceil | RoundNearestAfz | RoundNearestEven => {
                if !t.is_float() {
                    return Err(ShapeError::ElementType {
                        opcode,
                        needs: Needs::FloatOperand,
                        found: t,
                    });
                }
                t
            }
            Exp | Expm1 | Log | Log1p | Logistic | Sqrt | Rsqrt | Cbrt | Sin | Cos | Tan | Tanh
            | Erf => {
                if !float_like {
                    return Err(ShapeError::ElementType {
                        opcode,
                        needs: Needs::FloatOperand,
                        found: t,
                    });
                }
                t
            }
            _ => t,
        };
        return Ok(Some(array(ty, dims_of(x))));
    }
    if opcode.is_elementwise_binary() {
        count(ops, 2, opcode)?;
        let (x, y) = (arr(ops, 0)?, arr(ops, 1)?);
        if !x.compatible(y) {
            return Err(ShapeError::OperandShapes {
                opcode,
                lhs: x.clone(),
                rhs: y.clone(),
            });
        }
        let t = x.element_type;
        if matches!(opcode, And | Or | Xor) && !(t.is_int() || t.is_pred()) {
            return Err(ShapeError::ElementType {
                opcode,
                needs: Needs::PredOrIntOperands,
                found: t,
            });
        }
        if matches!(opcode, ShiftLeft | ShiftRightArithmetic | ShiftRightLogical) && !t.is_int() {
            return Err(ShapeError::ElementType {
                opcode,
                needs: Needs::IntOperands,
                found: t,
            });
        }
        return Ok(Some(array(t, dims_of(x))));
    }
    let out = match opcode {
        Parameter
        | Constant
        | Rng
        | RngBitGenerator
        | RngGetAndUpdateState
        | CustomCall
        | Bitcast
        | Infeed
        | Outfeed
        | Send
        | SendDone
        | Recv
        | RecvDone
        | AllGather
        | AllGatherStart
        | AllGatherDone
        | AllReduceStart
        | AllReduceDone
        | AllToAll
        | RaggedAllToAll
        | ReduceScatter
        | CollectiveBroadcast
        | CollectivePermute
        | CollectivePermuteStart
        | CollectivePermuteDone
        | AsyncStart
        | AsyncUpdate
        | AsyncDone
        | CopyStart
        | CopyDone
        | Domain
        | DynamicReshape
        | SetDimensionSize
        | BatchNormGrad
        | BatchNormInference
        | BatchNormTraining
        | StochasticConvert
        | RaggedDot
        | ScaledDot => {
            if opcode == Constant {
                if let Some(d) = declared {
                    if !literal_matches(a.literal.as_ref(), d) {
                        return Err(ShapeError::ConstantStructure(d.clone()));
                    }
                }
                if let (Some(Literal::Array(l)), Some(d)) = (&a.literal, declared_array) {
                    if l.values.len() as u64 != d.element_count() {
                        return Err(ShapeError::ConstantValueCount {
                            values: l.values.len(),
                            shape: d.clone(),
                            needs: d.element_count(),
                        });
                    }
                }
            }
            return Ok(None);
        }
        Compare => {
            count(ops, 2, opcode)?;
            let (x, y) = (arr(ops, 0)?, arr(ops, 1)?);
            if !x.compatible(y) {
                return Err(ShapeError::OperandShapes {
                    opcode,
                    lhs: x.clone(),
                    rhs: y.clone(),
                });
            }
            if a.comparison_direction.is_none() {
                return Err(ShapeError::MissingAttribute {
                    opcode,
                    attr: "direction=",
                });
            }
            array(PrimitiveType::Pred, dims_of(x))
        }
        Complex => {
            count(ops, 2, opcode)?;
            let (x, y) = (arr(ops, 0)?, arr(ops, 1)?);
            if !x.compatible(y) {
                return Err(ShapeError::ComplexOperands {
                    lhs: x.clone(),
                    rhs: y.clone(),
                });
            }
            let t = match x.element_type {
                PrimitiveType::F32 => PrimitiveType::C64,
                PrimitiveType::F64 => PrimitiveType::C128,
                t => {
                    return Err(ShapeError::ElementType {
                        opcode,
                        needs: Needs::F32OrF64Operands,
                        found: t,
                    })
                }
            };
            array(t, dims_of(x))
        }
        Select => {
            count(ops, 3, opcode)?;
            let (p, t, f) = (arr(ops, 0)?, arr(ops, 1)?, arr(ops, 2)?);
            if p.element_type != PrimitiveType::Pred {
                return Err(ShapeError::SelectPredicateType(p.clone()));
            }
            if !t.compatible(f) {
                return Err(ShapeError::SelectBranches {
                    on_true: t.clone(),
                    on_false: f.clone(),
                });
            }
            if p.rank() != 0 && p.dims != t.dims {
                return Err(ShapeError::SelectPredicateShape {
                    pred: p.clone(),
                    on_true: t.clone(),
                });
            }
            array(t.element_type, dims_of(t))
        }
        Clamp => {
            count(ops, 3, opcode)?;
            let (lo, x, hi) = (arr(ops, 0)?, arr(ops, 1)?, arr(ops, 2)?);
            for b in [lo, hi] {
                if b.element_type != x.element_type || (b.rank() != 0 && b.dims != x.dims) {
                    return Err(ShapeError::ClampBound {
                        bound: b.clone(),
                        operand: x.clone(),
                    });
                }
            }
            array(x.element_type, dims_of(x))
        }
        Convert | BitcastConvert | ReducePrecision | Copy => {
            count(ops, 1, opcode)?;
            let x = arr(ops, 0)?;
            match opcode {
                ReducePrecision | Copy => array(x.element_type, dims_of(x)),
                BitcastConvert => {
                    let Some(t) = declared_ty else {
                        return Ok(None);
                    };
                    if t.bit_width() != x.element_type.bit_width() {
                        return Ok(None);
                    }
                    array(t, dims_of(x))
                }
                _ => {
                    let Some(t) = declared_ty else {
                        return Ok(None);
                    };
                    array(t, dims_of(x))
                }
            }
        }
        Broadcast => {
            count(ops, 1, opcode)?;
            let x = arr(ops, 0)?;
            let Some(d) = declared_array else {
                return Ok(None);
            };
            let dims = a.dimensions.as_ref().ok_or(ShapeError::MissingAttribute {
                opcode,
                attr: "dimensions=",
            })?;
            if dims.len() != x.rank() {
                return Err(ShapeError::BroadcastRank {
                    dims: dims.clone(),
                    rank: x.rank(),
                });
            }
            check_unique(dims, "broadcast dimensions")?;
            for (i, &od) in dims.iter().enumerate() {
                let o = idx(od, d.rank(), "broadcast dimension")?;
                let (want, have) = (d.dims.get(o).copied(), x.dims.get(i).copied());
                if want != have && have != Some(1) {
                    return Err(ShapeError::BroadcastDim {
                        operand_dim: i,
                        size: have.unwrap_or(-1),
                        result_dim: o,
                        result_size: want.unwrap_or(-1),
                    });
                }
            }
            array(x.element_type, dims_of(d))
        }
        Reshape => {
            count(ops, 1, opcode)?;
            let x = arr(ops, 0)?;
            let Some(d) = declared_array else {
                return Ok(None);
            };
            if d.element_count() != x.element_count() {
                return Err(ShapeError::ReshapeCount {
                    operand: x.clone(),
                    operand_count: x.element_count(),
                    result: d.clone(),
                    result_count: d.element_count(),
                });
            }
            array(x.element_type, dims_of(d))
        }
        Transpose => {
            count(ops, 1, opcode)?;
            let x = arr(ops, 0)?;
            let perm = a.dimensions.as_ref().ok_or(ShapeError::MissingAttribute {
                opcode,
                attr: "dimensions=",
            })?;
            if perm.len() != x.rank() {
                return Err(ShapeError::TransposeRank {
                    perm: perm.clone(),
                    rank: x.rank(),
                });
            }
            check_unique(perm, "transpose dimensions")?;
            let mut out = Vec::with_capacity(perm.len());
            for &p in perm {
                let i = idx(p, x.rank(), "transpose dimension")?;
                out.push(x.dims.get(i).copied().unwrap_or(0));
            }
            array(x.element_type, out)
        }
        Reverse => {
            count(ops, 1, opcode)?;
            let x = arr(ops, 0)?;
            for &d in a.dimensions.as_deref().unwrap_or(&[]) {
                idx(d, x.rank(), "reverse dimension")?;
            }
            array(x.element_type, dims_of(x))
        }
        Slice => {
            count(ops, 1, opcode)?;
            let x = arr(ops, 0)?;
            let s = a.slice.as_ref().ok_or(ShapeError::MissingAttribute {
                opcode,
                attr: "slice=",
            })?;
            if s.len() != x.rank() {
                return Err(ShapeError::SliceRank {
                    dims: s.len(),
                    rank: x.rank(),
                });
            }
            let mut out = Vec::new();
            for (d, (sd, &n)) in s.iter().zip(&x.dims).enumerate() {
                if sd.start < 0 || sd.start > sd.limit || sd.limit > n || sd.stride <= 0 {
                    return Err(ShapeError::SliceDim {
                        dim: d,
                        start: sd.start,
                        limit: sd.limit,
                        stride: sd.stride,
                        size: n,
                    });
                }
                out.push((sd.limit - sd.start).div_ceil_nonneg(sd.stride));
            }
            array(x.element_type, out)
        }
        Concatenate => {
            if ops.is_empty() {
                return Err(ShapeError::NoOperands { opcode });
            }
            let first = arr(ops, 0)?;
            let dims = a.dimensions.as_ref().ok_or(ShapeError::MissingAttribute {
                opcode,
                attr: "dimensions=",
            })?;
            let [d] = dims.as_slice() else {
                return Err(ShapeError::ConcatenateDims(dims.clone()));
            };
            let d = idx(*d, first.rank(), "concatenate dimension")?;
            let mut out = first.dims.clone();
            for i in 1..ops.len() {
                let x = arr(ops, i)?;
                if x.element_type != first.element_type || x.rank() != first.rank() {
                    return Err(ShapeError::ConcatenateOperand {
                        index: i,
                        operand: x.clone(),
                        first: first.clone(),
                    });
                }
                for (k, (&p, &q)) in x.dims.iter().zip(&first.dims).enumerate() {
                    if k != d && p != q {
                        return Err(ShapeError::ConcatenateDim {
                            index: i,
                            operand: x.clone(),
                            first: first.clone(),
                            dim: k,
                        });
                    }
                }
                if let (Some(o), Some(v)) = (out.get_mut(d), x.dims.get(d)) {
                    *o = o.saturating_add(*v);
                }
            }
            array(first.element_type, out)
        }
        Pad => {
            count(ops, 2, opcode)?;
            let (x, v) = (arr(ops, 0)?, arr(ops, 1)?);
            if v.rank() != 0 || v.element_type != x.element_type {
                return Err(ShapeError::PadValue {
                    ty: x.element_type,
                    value: v.clone(),
                });
            }
            let p = a.padding.as_ref().ok_or(ShapeError::MissingAttribute {
                opcode,
                attr: "padding=",
            })?;
            if p.len() != x.rank() {
                return Err(ShapeError::PaddingRank {
                    dims: p.len(),
                    rank: x.rank(),
                });
            }
            let mut out = Vec::new();
            for (pd, &n) in p.iter().zip(&x.dims) {
                if pd.interior < 0 {
                    return Err(ShapeError::NegativeInterior(pd.interior));
                }
                let size = pd
                    .low
                    .saturating_add(pd.high)
                    .saturating_add(n)
                    .saturating_add(n.saturating_sub(1).max(0).saturating_mul(pd.interior));
                if size < 0 {
                    return Err(ShapeError::NegativePadding {
                        padding: *pd,
                        size: n,
                    });
                }
                out.push(size);
            }
            array(x.element_type, out)
        }
        Dot => {
            count(ops, 2, opcode)?;
            let (l, r) = (arr(ops, 0)?, arr(ops, 1)?);
            let default = DotDimensionNumbers::default();
            let dn = a.dot_dimension_numbers.as_ref().unwrap_or(&default);
            if dn.lhs_batch_dims.len() != dn.rhs_batch_dims.len()
                || dn.lhs_contracting_dims.len() != dn.rhs_contracting_dims.len()
            {
                return Err(ShapeError::DotDimsLength);
            }
            let mut used_l = HashSet::new();
            let mut used_r = HashSet::new();
            for (pairs, what) in [
                ((&dn.lhs_batch_dims, &dn.rhs_batch_dims), "batch"),
                (
                    (&dn.lhs_contracting_dims, &dn.rhs_contracting_dims),
                    "contracting",
                ),
            ] {
                for (&ld, &rd) in pairs.0.iter().zip(pairs.1) {
                    let li = idx(ld, l.rank(), &format!("lhs {what} dimension"))?;
                    let ri = idx(rd, r.rank(), &format!("rhs {what} dimension"))?;
                    if !used_l.insert(li) || !used_r.insert(ri) {
                        return Err(ShapeError::DotDimTwice {
                            what,
                            lhs: ld,
                            rhs: rd,
                        });
                    }
                    if l.dims.get(li) != r.dims.get(ri) {
                        return Err(ShapeError::DotDimSize {
                            what,
                            lhs_dim: ld,
                            lhs: l.clone(),
                            rhs_dim: rd,
                            rhs: r.clone(),
                        });
                    }
                }
            }
            let mut out: Vec<i64> = dn
                .lhs_batch_dims
                .iter()
                .filter_map(|&d| usize::try_from(d).ok().and_then(|d| l.dims.get(d)).copied())
                .collect();
            out.extend(
                l.dims
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !used_l.contains(i))
                    .map(|(_, &d)| d),
            );
            out.extend(
                r.dims
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !used_r.contains(i))
                    .map(|(_, &d)| d),
            );
            array(declared_ty.unwrap_or(l.element_type), out)
        }
        Convolution => {
            count(ops, 2, opcode)?;
            let (l, k) = (arr(ops, 0)?, arr(ops, 1)?);
            let Some(c) = &a.conv_dimension_numbers else {
                return Err(ShapeError::MissingAttribute {
                    opcode,
                    attr: "dim_labels=",
                });
            };
            let fgc = a.feature_group_count.unwrap_or(1).max(1);
            let bgc = a.batch_group_count.unwrap_or(1).max(1);
            let get = |s: &ArrayShape, d: i64, what: &str| -> R<i64> {
                let i = idx(d, s.rank(), what)?;
                Ok(s.dims.get(i).copied().unwrap_or(0))
            };
            if l.rank() != k.rank() || c.input_spatial_dimensions.len() + 2 != l.rank() {
                return Err(ShapeError::ConvolutionRanks {
                    lhs: l.clone(),
                    kernel: k.clone(),
                });
            }
            let in_f = get(l, c.input_feature_dimension, "input feature dimension")?;
            let k_in = get(k, c.kernel_input_feature_dimension, "kernel input feature")?;
            if in_f != k_in.saturating_mul(fgc) {
                return Err(ShapeError::ConvolutionFeatures {
                    input: in_f,
                    kernel: k_in,
                    groups: fgc,
                });
            }
            let default_window = Window {
                dims: c
                    .kernel_spatial_dimensions
                    .iter()
                    .map(|&d| WindowDim {
                        size: get(k, d, "kernel spatial").unwrap_or(1),
                        ..WindowDim::default()
                    })
                    .collect(),
            };
            let w = a.window.as_ref().unwrap_or(&default_window);
            if w.dims.len() != c.input_spatial_dimensions.len() {
                return Err(ShapeError::ConvolutionWindowRank {
                    window: w.dims.len(),
                    spatial: c.input_spatial_dimensions.len(),
                });
            }
            let mut out = vec![0i64; l.rank()];
            let mut put = |d: i64, v: i64| -> R<()> {
                let i = idx(d, out.len(), "output dimension")?;
                if let Some(s) = out.get_mut(i) {
                    *s = v;
                }
                Ok(())
            };
            put(
                c.output_batch_dimension,
                get(l, c.input_batch_dimension, "input batch")? / bgc,
            )?;
            put(
                c.output_feature_dimension,
                get(
                    k,
                    c.kernel_output_feature_dimension,
                    "kernel output feature",
                )?,
            )?;
            for (i, wd) in w.dims.iter().enumerate() {
                let isd = c.input_spatial_dimensions.get(i).copied().unwrap_or(0);
                let ksd = c.kernel_spatial_dimensions.get(i).copied().unwrap_or(0);
                let osd = c.output_spatial_dimensions.get(i).copied().unwrap_or(0);
                if get(k, ksd, "kernel spatial")? != wd.size {
                    return Err(ShapeError::ConvolutionWindowSize {
                        size: wd.size,
                        dim: ksd,
                        kernel: k.clone(),
                    });
                }
                put(osd, window_out(get(l, isd, "input spatial")?, wd)?)?;
            }
            array(declared_ty.unwrap_or(l.element_type), out)
        }
        Reduce => {
            if ops.is_empty() || ops.len() % 2 != 0 {
                return Err(ShapeError::ReduceOperands(ops.len()));
            }
            let n = ops.len() / 2;
            let first = arr(ops, 0)?;
            let dims = a.dimensions.as_ref().ok_or(ShapeError::MissingAttribute {
                opcode,
                attr: "dimensions=",
            })?;
            check_unique(dims, "reduce dimensions")?;
            let mut reduced = HashSet::new();
            for &d in dims {
                reduced.insert(idx(d, first.rank(), "reduce dimension")?);
            }
            let out_dims: Vec<i64> = first
                .dims
                .iter()
                .enumerate()
                .filter(|(i, _)| !reduced.contains(i))
                .map(|(_, &d)| d)
                .collect();
            let mut inits = Vec::new();
            for i in 0..n {
                let x = arr(ops, i)?;
                if x.dims != first.dims {
                    return Err(ShapeError::ReduceInput {
                        opcode,
                        index: i,
                        input: x.clone(),
                        first: first.clone(),
                    });
                }
                let init = arr(ops, n + i)?;
                if init.rank() != 0 {
                    return Err(ShapeError::ReduceInit {
                        index: i,
                        init: init.clone(),
                    });
                }
                inits.push(init.element_type);
            }
            if let Some(sig) = callee(callees, a.to_apply, "to_apply")? {
                check_reducer(&sig, &inits, "reduce to_apply")?;
            }
            let shapes: Vec<Shape> = inits.iter().map(|&t| array(t, out_dims.clone())).collect();
            if n == 1 {
                shapes
                    .into_iter()
                    .next()
                    .unwrap_or(Shape::Tuple(Vec::new()))
            } else {
                Shape::Tuple(shapes)
            }
        }
        ReduceWindow => {
            if ops.is_empty() || ops.len() % 2 != 0 {
                return Err(ShapeError::ReduceWindowOperands(ops.len()));
            }
            let n = ops.len() / 2;
            let first = arr(ops, 0)?;
            let default_window = Window {
                dims: vec![WindowDim::default(); first.rank()],
            };
            let w = a.window.as_ref().unwrap_or(&default_window);
            if w.dims.len() != first.rank() {
                return Err(ShapeError::WindowRank {
                    window: w.dims.len(),
                    rank: first.rank(),
                });
            }
            let mut out_dims = Vec::new();
            for (&d, wd) in first.dims.iter().zip(&w.dims) {
                out_dims.push(window_out(d, wd)?);
            }
            let mut inits = Vec::new();
            for i in 0..n {
                let x = arr(ops, i)?;
                if x.dims != first.dims {
                    return Err(ShapeError::ReduceInput {
                        opcode,
                        index: i,
                        input: x.clone(),
                        first: first.clone(),
                    });
                }
                let init = arr(ops, n + i)?;
                if init.rank() != 0 {
                    return Err(ShapeError::ReduceWindowInit {
                        index: i,
                        init: init.clone(),
                    });
                }
                inits.push(init.element_type);
            }
            if let Some(sig) = callee(callees, a.to_apply, "to_apply")? {
                check_reducer(&sig, &inits, "reduce-window to_apply")?;
            }
            let shapes: Vec<Shape> = inits.iter().map(|&t| array(t, out_dims.clone())).collect();
            if n == 1 {
                shapes
                    .into_iter()
                    .next()
                    .unwrap_or(Shape::Tuple(Vec::new()))
            } else {
                Shape::Tuple(shapes)
            }
        }
        SelectAndScatter => {
            count(ops, 3, opcode)?;
            let x = arr(ops, 0)?;
            array(x.element_type, dims_of(x))
        }
        Iota => {
            count(ops, 0, opcode)?;
            let Some(d) = declared_array else {
                return Ok(None);
            };
            let i = a.iota_dimension.ok_or(ShapeError::MissingAttribute {
                opcode,
                attr: "iota_dimension=",
            })?;
            idx(i, d.rank(), "iota_dimension")?;
            array(d.element_type, dims_of(d))
        }
        GetTupleElement => {
            count(ops, 1, opcode)?;
            let t = ops
                .first()
                .and_then(|s| s.tuple_shapes())
                .ok_or(ShapeError::TupleOperand)?;
            let i = a.tuple_index.ok_or(ShapeError::MissingAttribute {
                opcode,
                attr: "index=",
            })?;
            let i = idx(i, t.len(), "tuple index")?;
            t.get(i)
                .map(Shape::without_layout)
                .ok_or(ShapeError::TupleIndex)?
        }
        Tuple => Shape::Tuple(ops.iter().map(|s| s.without_layout()).collect()),
        Call | Fusion => {
            let id = if opcode == Call {
                a.to_apply
            } else {
                a.calls.as_ref().and_then(|c| c.first().copied())
            };
            let what = if opcode == Call { "to_apply" } else { "calls" };
            match callee(callees, id, what)? {
                Some(sig) => {
                    check_params(&sig, ops, what)?;
                    sig.result.without_layout()
                }
                None => return Ok(None),
            }
        }
        Map => {
            let first = arr(ops, 0)?;
            for i in 1..ops.len() {
                if arr(ops, i)?.dims != first.dims {
                    return Err(ShapeError::MapDims);
                }
            }
            match callee(callees, a.to_apply, "to_apply")? {
                Some(sig) => {
                    if sig.params.len() != ops.len() {
                        return Err(ShapeError::MapParamCount);
                    }
                    let t = sig.result.element_type().ok_or(ShapeError::MapResult)?;
                    array(t, dims_of(first))
                }
                None => return Ok(None),
            }
        }
        While => {
            count(ops, 1, opcode)?;
            let init = ops.first().copied().ok_or(ShapeError::WhileOperand)?;
            if let Some(c) = callee(callees, a.condition, "condition")? {
                check_params(&c, ops, "while condition")?;
                if !c.result.compatible(&Shape::scalar(PrimitiveType::Pred)) {
                    return Err(ShapeError::WhileCondition(c.result.clone()));
                }
            }
            if let Some(b) = callee(callees, a.body, "body")? {
                check_params(&b, ops, "while body")?;
                if !b.result.compatible(init) {
                    return Err(ShapeError::WhileBody {
                        body: b.result.clone(),
                        state: init.clone(),
                    });
                }
            }
            init.without_layout()
        }
        Conditional => {
            let p = arr(ops, 0)?;
            let branches: Vec<ComputationId> = match (
                &a.branch_computations,
                a.true_computation,
                a.false_computation,
            ) {
                (Some(b), _, _) => {
                    if p.element_type != PrimitiveType::S32 || p.rank() != 0 {
                        return Err(ShapeError::BranchIndex(p.clone()));
                    }
                    b.clone()
                }
                (None, Some(t), Some(f)) => {
                    if p.element_type != PrimitiveType::Pred || p.rank() != 0 {
                        return Err(ShapeError::ConditionalPredicate(p.clone()));
                    }
                    vec![t, f]
                }
                _ => return Err(ShapeError::ConditionalBranches),
            };
            if ops.len() != branches.len() + 1 {
                return Err(ShapeError::BranchOperands {
                    branches: branches.len(),
                    operands: ops.len().saturating_sub(1),
                });
            }
            let mut result: Option<Shape> = None;
            for (i, &b) in branches.iter().enumerate() {
                let Some(sig) = callee(callees, Some(b), "branch computation")? else {
                    return Ok(None);
                };
                let arg = ops.get(i + 1).copied().into_iter().collect::<Vec<_>>();
                check_params(&sig, &arg, &format!("branch {i}"))?;
                match &result {
                    None => result = Some(sig.result.without_layout()),
                    Some(r) if !r.compatible(&sig.result) => {
                        return Err(ShapeError::BranchResult {
                            index: i,
                            result: sig.result.clone(),
                            first: r.clone(),
                        })
                    }
                    _ => {}
                }
            }
            match result {
                Some(r) => r,
                None => return Ok(None),
            }
        }
        Sort => {
            if ops.is_empty() {
                return Err(ShapeError::NoOperands { opcode });
            }
            let first = arr(ops, 0)?;
            for i in 1..ops.len() {
                if arr(ops, i)?.dims != first.dims {
                    return Err(ShapeError::SortDims);
                }
            }
            if let Some(d) = a.dimensions.as_ref().and_then(|d| d.first()) {
                idx(*d, first.rank(), "sort dimension")?;
            }
            if let Some(sig) = callee(callees, a.to_apply, "to_apply")? {
                if sig.params.len() != 2 * ops.len() {
                    return Err(ShapeError::ComparatorParams {
                        found: sig.params.len(),
                        expected: 2 * ops.len(),
                    });
                }
                if !sig.result.compatible(&Shape::scalar(PrimitiveType::Pred)) {
                    return Err(ShapeError::ComparatorResult(sig.result.clone()));
                }
            }
            if ops.len() == 1 {
                ops.first()
                    .map(|s| s.without_layout())
                    .unwrap_or(Shape::Token)
            } else {
                Shape::Tuple(ops.iter().map(|s| s.without_layout()).collect())
            }
        }
        DynamicSlice => {
            let x = arr(ops, 0)?;
            check_indices(ops, 1, x.rank(), opcode)?;
            let sizes = a
                .dynamic_slice_sizes
                .as_ref()
                .ok_or(ShapeError::MissingAttribute {
                    opcode,
                    attr: "dynamic_slice_sizes=",
                })?;
            if sizes.len() != x.rank() {
                return Err(ShapeError::DynamicSliceRank {
                    sizes: sizes.clone(),
                    rank: x.rank(),
                });
            }
            for (&s, &n) in sizes.iter().zip(&x.dims) {
                if s < 0 || s > n {
                    return Err(ShapeError::DynamicSliceSize { size: s, dim: n });
                }
            }
            array(x.element_type, sizes.clone())
        }
        DynamicUpdateSlice => {
            let (x, u) = (arr(ops, 0)?, arr(ops, 1)?);
            check_indices(ops, 2, x.rank(), opcode)?;
            if u.rank() != x.rank() || u.element_type != x.element_type {
                return Err(ShapeError::UpdateMismatch {
                    update: u.clone(),
                    operand: x.clone(),
                });
            }
            if u.dims.iter().zip(&x.dims).any(|(a, b)| a > b) {
                return Err(ShapeError::UpdateTooLarge {
                    update: u.clone(),
                    operand: x.clone(),
                });
            }
            array(x.element_type, dims_of(x))
        }
        Gather => {
            count(ops, 2, opcode)?;
            let (x, ind) = (arr(ops, 0)?, arr(ops, 1)?);
            let g = a
                .gather_dimension_numbers
                .as_ref()
                .ok_or(ShapeError::GatherDimensionNumbers)?;
            let sizes = a
                .gather_slice_sizes
                .as_ref()
                .ok_or(ShapeError::MissingAttribute {
                    opcode,
                    attr: "slice_sizes=",
                })?;
            if sizes.len() != x.rank() {
                return Err(ShapeError::GatherSliceRank {
                    sizes: sizes.clone(),
                    rank: x.rank(),
                });
            }
            let ivd = usize::try_from(g.index_vector_dim)
                .ok()
                .filter(|&d| d <= ind.rank())
                .ok_or(ShapeError::IndexVectorDim(g.index_vector_dim))?;
            let index_len = if ivd == ind.rank() {
                1
            } else {
                ind.dims.get(ivd).copied().unwrap_or(0)
            };
            if g.start_index_map.len() as i64 != index_len {
                return Err(ShapeError::StartIndexMap {
                    map: g.start_index_map.clone(),
                    index_len,
                });
            }
            let batch: Vec<i64> = ind
                .dims
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != ivd)
                .map(|(_, &d)| d)
                .collect();
            let skip: HashSet<i64> = g
                .collapsed_slice_dims
                .iter()
                .chain(&g.operand_batching_dims)
                .copied()
                .collect();
            let offsets: Vec<i64> = sizes
                .iter()
                .enumerate()
                .filter(|(i, _)| !skip.contains(&(*i as i64)))
                .map(|(_, &s)| s)
                .collect();
            if offsets.len() != g.offset_dims.len() {
                return Err(ShapeError::OffsetDims {
                    dims: g.offset_dims.clone(),
                    expected: offsets.len(),
                });
            }
            let rank = batch.len() + offsets.len();
            let offset_set: HashSet<i64> = g.offset_dims.iter().copied().collect();
            let (mut bi, mut oi) = (batch.iter(), offsets.iter());
            let mut out = Vec::with_capacity(rank);
            for i in 0..rank {
                let v = if offset_set.contains(&(i as i64)) {
                    oi.next()
                } else {
                    bi.next()
                };
                out.push(*v.ok_or(ShapeError::OffsetDimsRange)?);
            }
            array(x.element_type, out)
        }
        Scatter => {
            if ops.len() < 3 || ops.len() % 2 == 0 {
                return Err(ShapeError::ScatterOperands(ops.len()));
            }
            let n = (ops.len() - 1) / 2;
            if n == 1 {
                ops.first()
                    .map(|s| s.without_layout())
                    .unwrap_or(Shape::Token)
            } else {
                Shape::Tuple(ops.iter().take(n).map(|s| s.without_layout()).collect())
            }
        }
        AllReduce => {
            if ops.len() == 1 {
                ops.first()
                    .map(|s| s.without_layout())
                    .unwrap_or(Shape::Token)
            } else {
                Shape::Tuple(ops.iter().map(|s| s.without_layout()).collect())
            }
        }
        Fft => {
            count(ops, 1, opcode)?;
            let x = arr(ops, 0)?;
            let len = a.fft_length.as_ref().ok_or(ShapeError::MissingAttribute {
                opcode,
                attr: "fft_length=",
            })?;
            let mut dims = x.dims.clone();
            let last = dims.len().checked_sub(1);
            match a.fft_type.ok_or(ShapeError::MissingAttribute {
                opcode,
                attr: "fft_type=",
            })? {
                FftType::Fft | FftType::Ifft => array(x.element_type, dims),
                FftType::Rfft => {
                    let t = match x.element_type {
                        PrimitiveType::F32 => PrimitiveType::C64,
                        PrimitiveType::F64 => PrimitiveType::C128,
                        t => return Err(ShapeError::RfftElementType(t)),
                    };
                    if let (Some(l), Some(&n)) = (last, len.last()) {
                        if let Some(d) = dims.get_mut(l) {
                            *d = n / 2 + 1;
                        }
                    }
                    array(t, dims)
                }
                FftType::Irfft => {
                    if let (Some(l), Some(&n)) = (last, len.last()) {
                        if let Some(d) = dims.get_mut(l) {
                            *d = n;
                        }
                    }
                    array(x.element_type.complex_component(), dims)
                }
            }
        }
        AfterAll => Shape::Token,
        AddDependency => {
            count(ops, 2, opcode)?;
            ops.first()
                .map(|s| s.without_layout())
                .unwrap_or(Shape::Token)
        }
        OptimizationBarrier => {
            count(ops, 1, opcode)?;
            ops.first()
                .map(|s| s.without_layout())
                .unwrap_or(Shape::Token)
        }
        PartitionId | ReplicaId => {
            count(ops, 0, opcode)?;
            Shape::scalar(PrimitiveType::U32)
        }
        GetDimensionSize => {
            count(ops, 1, opcode)?;
            Shape::scalar(PrimitiveType::S32)
        }
        Cholesky => {
            count(ops, 1, opcode)?;
            ops.first()
                .map(|s| s.without_layout())
                .unwrap_or(Shape::Token)
        }
        TriangularSolve => {
            count(ops, 2, opcode)?;
            ops.get(1)
                .map(|s| s.without_layout())
                .unwrap_or(Shape::Token)
        }
        TopK => {
            count(ops, 1, opcode)?;
            let x = arr(ops, 0)?;
            let k =
                a.k.ok_or(ShapeError::MissingAttribute { opcode, attr: "k=" })?;
            let mut dims = x.dims.clone();
            if let Some(l) = dims.last_mut() {
                if k > *l {
                    return Err(ShapeError::TopK { k, dim: *l });
                }
                *l = k;
            }
            Shape::Tuple(vec![
                array(x.element_type, dims.clone()),
                array(PrimitiveType::S32, dims),
            ])
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}

/// Ceiling division for a non-negative numerator and positive divisor.
trait DivCeilNonneg {
    fn div_ceil_nonneg(self, d: i64) -> i64;
}

impl DivCeilNonneg for i64 {
    fn div_ceil_nonneg(self, d: i64) -> i64 {
        self / d + i64::from(self % d != 0)
    }
}

/// True when a constant's literal has the tuple / array structure of its shape (element counts
/// are checked separately).
fn literal_matches(l: Option<&Literal>, s: &Shape) -> bool {
    match (l, s) {
        (None, _) => false,
        (Some(Literal::Elided), _) => true,
        (Some(Literal::Array(_)), Shape::Array(_)) => true,
        (Some(Literal::Tuple(t)), Shape::Token) => t.is_empty(),
        (Some(Literal::Tuple(t)), Shape::Tuple(ss)) => {
            t.len() == ss.len() && t.iter().zip(ss).all(|(l, s)| literal_matches(Some(l), s))
        }
        _ => false,
    }
}

fn check_indices(ops: &[&Shape], from: usize, rank: usize, opcode: Opcode) -> R<()> {
    let n = ops.len().saturating_sub(from);
    if n != rank {
        return Err(ShapeError::StartIndexCount {
            opcode,
            rank,
            found: n,
        });
    }
    for i in from..ops.len() {
        let s = arr(ops, i)?;
        if s.rank() != 0 || !s.element_type.is_int() {
            return Err(ShapeError::StartIndexType {
                opcode,
                index: i - from,
                found: s.clone(),
            });
        }
    }
    Ok(())
}

fn check_layout(shape: &Shape) -> Result<(), LayoutError> {
    match shape {
        Shape::Array(a) => {
            if let Some(Layout { minor_to_major, .. }) = &a.layout {
                if minor_to_major.is_empty() && a.rank() > 0 {
                    return Ok(());
                }
                let mut seen = vec![false; a.rank()];
                let ok = minor_to_major.len() == a.rank()
                    && minor_to_major.iter().all(|&d| {
                        usize::try_from(d)
                            .ok()
                            .and_then(|d| seen.get_mut(d))
                            .is_some_and(|s| !std::mem::replace(s, true))
                    });
                if !ok {
                    return Err(LayoutError::NotPermutation(a.clone()));
                }
            }
            if a.dims.len() != a.dynamic.len() {
                return Err(LayoutError::DynamicFlags(a.clone()));
            }
            Ok(())
        }
        Shape::Tuple(t) => t.iter().try_for_each(check_layout),
        Shape::Token => Ok(()),
    }
}

/// Verifies a module; returns every problem found.
pub fn verify(module: &HloModule) -> Result<(), Vec<VerifyError>> {
    let mut errs = Vec::new();
    let lookup = |id: ComputationId| module.get(id).map(Signature::of);
    if module.get(module.entry).is_none() {
        errs.push(VerifyError {
            computation: String::new(),
            instruction: String::new(),
            loc: SourceLoc::default(),
            message: format!("entry computation {} does not exist", module.entry.0),
        });
        return Err(errs);
    }
    let mut comp_names = HashSet::new();
    for (_, c) in module.iter() {
        let cerr = |errs: &mut Vec<VerifyError>, m: String| {
            errs.push(VerifyError {
                computation: c.name.clone(),
                instruction: String::new(),
                loc: c.loc,
                message: m,
            })
        };
        if !comp_names.insert(c.name.as_str()) {
            cerr(
                &mut errs,
                format!("computation name '{}' is used twice", c.name),
            );
        }
        if c.get(c.root).is_none() {
            cerr(
                &mut errs,
                "the root is not an instruction of the computation".into(),
            );
        }
        for (n, &p) in c.params.iter().enumerate() {
            match c.get(p) {
                Some(i)
                    if i.opcode == Opcode::Parameter
                        && i.attrs.parameter_number == Some(n as i64) => {}
                _ => cerr(&mut errs, format!("params[{n}] is not parameter({n})")),
            }
        }
        let nparams = c
            .instructions
            .iter()
            .filter(|i| i.opcode == Opcode::Parameter)
            .count();
        if nparams != c.params.len() {
            cerr(
                &mut errs,
                format!(
                    "{nparams} parameter instructions but {} registered",
                    c.params.len()
                ),
            );
        }
        if has_cycle(c) {
            cerr(&mut errs, "the instructions' operands form a cycle".into());
        }
        let mut names = HashSet::new();
        for (_, instr) in c.iter() {
            let mut ierr = |m: String| {
                errs.push(VerifyError {
                    computation: c.name.clone(),
                    instruction: instr.name.clone(),
                    loc: instr.loc,
                    message: m,
                })
            };
            if !names.insert(instr.name.as_str()) {
                ierr(format!("instruction name '{}' is used twice", instr.name));
            }
            if let Err(m) = check_layout(&instr.shape) {
                ierr(m.to_string());
            }
            let mut bad_callee = false;
            for callee in instr.called_computations() {
                if module.get(callee).is_none() {
                    ierr(format!(
                        "calls computation #{} which does not exist",
                        callee.0
                    ));
                    bad_callee = true;
                }
            }
            let mut ops = Vec::with_capacity(instr.operands.len());
            for &o in &instr.operands {
                match c.get(o) {
                    Some(op) => ops.push(&op.shape),
                    None => {
                        ierr(format!("operand #{} does not exist", o.0));
                    }
                }
            }
            if ops.len() != instr.operands.len() || bad_callee {
                continue;
            }
            match infer_shape(
                instr.opcode,
                &ops,
                &instr.attrs,
                Some(&instr.shape),
                Some(&lookup),
            ) {
                Ok(Some(s)) => {
                    if !s.compatible(&instr.shape) {
                        ierr(format!(
                            "{} declares shape {} but its operands give {s}",
                            instr.opcode, instr.shape
                        ));
                    }
                }
                Ok(None) => {}
                Err(m) => ierr(format!("{}: {m}", instr.opcode)),
            }
        }
    }
    // The entry layout must match the entry computation's signature.
    let entry = module.entry_computation();
    if let Some(l) = &module.config.entry_computation_layout {
        let sig = Signature::of(entry);
        let ok = l.params.len() == sig.params.len()
            && l.params
                .iter()
                .zip(&sig.params)
                .all(|(a, b)| a.compatible(b))
            && l.result.compatible(&sig.result);
        if !ok {
            errs.push(VerifyError {
                computation: entry.name.clone(),
                instruction: String::new(),
                loc: entry.loc,
                message:
                    "entry_computation_layout does not match the entry computation's signature"
                        .into(),
            });
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs)
    }
}

/// True when the operand graph of `c` has a cycle (iterative DFS).
fn has_cycle(c: &Computation) -> bool {
    let n = c.instructions.len();
    let mut state = vec![0u8; n];
    for start in 0..n {
        if state.get(start) != Some(&0) {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        if let Some(s) = state.get_mut(start) {
            *s = 1;
        }
        while let Some((node, pos)) = stack.last_mut() {
            let ops = c.instructions.get(*node).map(|i| &i.operands);
            match ops.and_then(|o| o.get(*pos)) {
                Some(op) => {
                    *pos += 1;
                    match state.get(op.index()) {
                        Some(1) => return true,
                        Some(0) => {
                            if let Some(s) = state.get_mut(op.index()) {
                                *s = 1;
                            }
                            stack.push((op.index(), 0));
                        }
                        _ => {}
                    }
                }
                None => {
                    if let Some(s) = state.get_mut(*node) {
                        *s = 2;
                    }
                    stack.pop();
                }
            }
        }
    }
    false
}
