//! Reductions (and sort): opcodes that apply a called computation across elements.

use std::collections::HashSet;

use super::error::ShapeError;
use super::infer::*;
use hlo::ir::*;
use hlo::shape::{PrimitiveType, Shape};

/// Reduce, reduce-window, select-and-scatter and sort.
pub(super) fn infer(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst { opcode, ops, a, .. } = *cx;
    let out = match opcode {
        Reduce => {
            if ops.is_empty() || ops.len() % 2 != 0 {
                return fail(ShapeError::ReduceOperands(ops.len()));
            }
            let n = ops.len() / 2;
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
                    return fail(ShapeError::ReduceInit {
                        index: i,
                        init: init.clone(),
                    });
                }
                inits.push(init.element_type);
            }
            if let Some(sig) = callee(cx.callees, a.to_apply, "to_apply")? {
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
                return fail(ShapeError::ReduceWindowOperands(ops.len()));
            }
            let n = ops.len() / 2;
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
                    return fail(ShapeError::ReduceWindowInit {
                        index: i,
                        init: init.clone(),
                    });
                }
                inits.push(init.element_type);
            }
            if let Some(sig) = callee(cx.callees, a.to_apply, "to_apply")? {
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
