//! Data movement: opcodes that rearrange, resize or generate an array.

use super::error::ShapeError;
use super::infer::*;
use hlo::Shape;
use hlo::*;

/// Broadcast, reshape, transpose, reverse, slice, concatenate, pad and iota.
pub(super) fn infer(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst { opcode, ops, a, .. } = *cx;
    let out = match opcode {
        Broadcast => {
            count(ops, 1, opcode)?;
            let x = arr(ops, 0)?;
            let Some(d) = cx.declared_array else {
                return Ok(None);
            };
            let dims = required(a.dimensions.as_ref(), opcode, "dimensions=")?;
            if dims.len() != x.rank() {
                return fail(ShapeError::BroadcastRank {
                    dims: dims.clone(),
                    rank: x.rank(),
                });
            }
            check_unique(dims, "broadcast dimensions")?;
            for (i, &od) in dims.iter().enumerate() {
                let o = idx(od, d.rank(), "broadcast dimension")?;
                let (want, have) = (d.dims.get(o).copied(), x.dims.get(i).copied());
                if want != have && have != Some(1) {
                    return fail(ShapeError::BroadcastDim {
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
            let Some(d) = cx.declared_array else {
                return Ok(None);
            };
            if d.element_count() != x.element_count() {
                return fail(ShapeError::ReshapeCount {
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
            let perm = required(a.dimensions.as_ref(), opcode, "dimensions=")?;
            if perm.len() != x.rank() {
                return fail(ShapeError::TransposeRank {
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
            let s = required(a.slice.as_ref(), opcode, "slice=")?;
            if s.len() != x.rank() {
                return fail(ShapeError::SliceRank {
                    dims: s.len(),
                    rank: x.rank(),
                });
            }
            let mut out = Vec::new();
            for (d, (sd, &n)) in s.iter().zip(&x.dims).enumerate() {
                if sd.start < 0 || sd.start > sd.limit || sd.limit > n || sd.stride <= 0 {
                    return fail(ShapeError::SliceDim {
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
                return fail(ShapeError::NoOperands { opcode });
            }
            let first = arr(ops, 0)?;
            let dims = required(a.dimensions.as_ref(), opcode, "dimensions=")?;
            let [d] = dims.as_slice() else {
                return fail(ShapeError::ConcatenateDims(dims.clone()));
            };
            let d = idx(*d, first.rank(), "concatenate dimension")?;
            let mut out = first.dims.clone();
            for i in 1..ops.len() {
                let x = arr(ops, i)?;
                if x.element_type != first.element_type || x.rank() != first.rank() {
                    return fail(ShapeError::ConcatenateOperand {
                        index: i,
                        operand: x.clone(),
                        first: first.clone(),
                    });
                }
                for (k, (&p, &q)) in x.dims.iter().zip(&first.dims).enumerate() {
                    if k != d && p != q {
                        return fail(ShapeError::ConcatenateDim {
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
                return fail(ShapeError::PadValue {
                    ty: x.element_type,
                    value: v.clone(),
                });
            }
            let p = required(a.padding.as_ref(), opcode, "padding=")?;
            if p.len() != x.rank() {
                return fail(ShapeError::PaddingRank {
                    dims: p.len(),
                    rank: x.rank(),
                });
            }
            let mut out = Vec::new();
            for (pd, &n) in p.iter().zip(&x.dims) {
                if pd.interior < 0 {
                    return fail(ShapeError::NegativeInterior(pd.interior));
                }
                let size = pd
                    .low
                    .saturating_add(pd.high)
                    .saturating_add(n)
                    .saturating_add(n.saturating_sub(1).max(0).saturating_mul(pd.interior));
                if size < 0 {
                    return fail(ShapeError::NegativePadding {
                        padding: *pd,
                        size: n,
                    });
                }
                out.push(size);
            }
            array(x.element_type, out)
        }
        Iota => {
            count(ops, 0, opcode)?;
            let Some(d) = cx.declared_array else {
                return Ok(None);
            };
            let i = required(a.iota_dimension, opcode, "iota_dimension=")?;
            idx(i, d.rank(), "iota_dimension")?;
            array(d.element_type, dims_of(d))
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}
