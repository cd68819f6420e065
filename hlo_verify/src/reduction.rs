//! Reductions (and sort): opcodes that apply a called computation across elements.

use std::collections::HashSet;

use super::error::ShapeError;
use super::infer::*;
use hlo::*;
use hlo::{ArrayShape, PrimitiveType, Shape};

/// Reduce, reduce-window, select-and-scatter and sort.
pub(super) fn infer(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst { opcode, ops, a, .. } = *cx;
    let out = match opcode {
        Reduce => {
            if ops.is_empty() || ops.len() % 2 != 0 {
                return fail(ShapeError::ReduceOperands(ops.len()));
            }
            let first = arr(ops, 0)?;
            let dims = required(a.dimensions.as_ref(), opcode, "dimensions=")?;
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
            let init = |index, init| ShapeError::ReduceInit { index, init };
            reduced_shape(cx, first, out_dims, init, "reduce to_apply")?
        }
        ReduceWindow => {
            if ops.is_empty() || ops.len() % 2 != 0 {
                return fail(ShapeError::ReduceWindowOperands(ops.len()));
            }
            let first = arr(ops, 0)?;
            let default_window = Window {
                dims: vec![WindowDim::default(); first.rank()],
            };
            let w = a.window.as_ref().unwrap_or(&default_window);
            if w.dims.len() != first.rank() {
                return fail(ShapeError::WindowRank {
                    window: w.dims.len(),
                    rank: first.rank(),
                });
            }
            let mut out_dims = Vec::new();
            for (&d, wd) in first.dims.iter().zip(&w.dims) {
                out_dims.push(window_out(d, wd)?);
            }
            let init = |index, init| ShapeError::ReduceWindowInit { index, init };
            reduced_shape(cx, first, out_dims, init, "reduce-window to_apply")?
        }
        SelectAndScatter => {
            count(ops, 3, opcode)?;
            let x = arr(ops, 0)?;
            array(x.element_type, dims_of(x))
        }
        Sort => {
            if ops.is_empty() {
                return fail(ShapeError::NoOperands { opcode });
            }
            let first = arr(ops, 0)?;
            for i in 1..ops.len() {
                if arr(ops, i)?.dims != first.dims {
                    return fail(ShapeError::SortDims);
                }
            }
            if let Some(d) = a.dimensions.as_ref().and_then(|d| d.first()) {
                idx(*d, first.rank(), "sort dimension")?;
            }
            if let Some(sig) = callee(cx.callees, a.to_apply, "to_apply")? {
                if sig.params.len() != 2 * ops.len() {
                    return fail(ShapeError::ComparatorParams {
                        found: sig.params.len(),
                        expected: 2 * ops.len(),
                    });
                }
                if !sig.result.compatible(&Shape::scalar(PrimitiveType::Pred)) {
                    return fail(ShapeError::ComparatorResult(sig.result.clone()));
                }
            }
            mirror_operands(ops)
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}

/// The result of a reduce or reduce-window whose operands are `n` inputs then `n` inits (`n`
/// from the operand count, checked by the caller): every input has `first`'s dimensions, every
/// init is a scalar (else `init_error`), the reducer takes and returns the inits' types, and the
/// result is one array of `out_dims` per input (a tuple when there are several).
fn reduced_shape(
    cx: &Inst<'_>,
    first: &ArrayShape,
    out_dims: Vec<i64>,
    init_error: impl Fn(usize, ArrayShape) -> ShapeError,
    reducer: &'static str,
) -> R<Shape> {
    let Inst { opcode, ops, a, .. } = *cx;
    let n = ops.len() / 2;
    let mut inits = Vec::new();
    for i in 0..n {
        let x = arr(ops, i)?;
        if x.dims != first.dims {
            return fail(ShapeError::ReduceInput {
                opcode,
                index: i,
                input: x.clone(),
                first: first.clone(),
            });
        }
        let init = arr(ops, n + i)?;
        if init.rank() != 0 {
            return fail(init_error(i, init.clone()));
        }
        inits.push(init.element_type);
    }
    if let Some(sig) = callee(cx.callees, a.to_apply, "to_apply")? {
        check_reducer(&sig, &inits, reducer)?;
    }
    let mut shapes: Vec<Shape> = inits.iter().map(|&t| array(t, out_dims.clone())).collect();
    Ok(if shapes.len() == 1 {
        shapes.remove(0)
    } else {
        Shape::Tuple(shapes)
    })
}
