//! Control flow: opcodes whose result comes from a called computation.

use super::error::ShapeError;
use super::infer::*;
use hlo::*;
use hlo::{PrimitiveType, Shape};

/// Call, fusion, map, while and conditional.
pub(super) fn infer(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst { opcode, ops, a, .. } = *cx;
    let out = match opcode {
        Call | Fusion => {
            let id = if opcode == Call {
                a.to_apply
            } else {
                a.calls.as_ref().and_then(|c| c.first().copied())
            };
            let what = if opcode == Call { "to_apply" } else { "calls" };
            match callee(cx.callees, id, what)? {
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
                    return fail(ShapeError::MapDims);
                }
            }
            match callee(cx.callees, a.to_apply, "to_apply")? {
                Some(sig) => {
                    if sig.params.len() != ops.len() {
                        return fail(ShapeError::MapParamCount);
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
            if let Some(c) = callee(cx.callees, a.condition, "condition")? {
                check_params(&c, ops, "while condition")?;
                if !c.result.compatible(&Shape::scalar(PrimitiveType::Pred)) {
                    return fail(ShapeError::WhileCondition(c.result.clone()));
                }
            }
            if let Some(b) = callee(cx.callees, a.body, "body")? {
                check_params(&b, ops, "while body")?;
                if !b.result.compatible(init) {
                    return fail(ShapeError::WhileBody {
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
                        return fail(ShapeError::BranchIndex(p.clone()));
                    }
                    b.clone()
                }
                (None, Some(t), Some(f)) => {
                    if p.element_type != PrimitiveType::Pred || p.rank() != 0 {
                        return fail(ShapeError::ConditionalPredicate(p.clone()));
                    }
                    vec![t, f]
                }
                _ => return fail(ShapeError::ConditionalBranches),
            };
            if ops.len() != branches.len() + 1 {
                return fail(ShapeError::BranchOperands {
                    branches: branches.len(),
                    operands: ops.len().saturating_sub(1),
                });
            }
            let mut result: Option<Shape> = None;
            for (i, &b) in branches.iter().enumerate() {
                let Some(sig) = callee(cx.callees, Some(b), "branch computation")? else {
                    return Ok(None);
                };
                let arg = ops.get(i + 1).copied().into_iter().collect::<Vec<_>>();
                check_params(&sig, &arg, &format!("branch {i}"))?;
                match &result {
                    None => result = Some(sig.result.without_layout()),
                    Some(r) if !r.compatible(&sig.result) => {
                        return fail(ShapeError::BranchResult {
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
        _ => return Ok(None),
    };
    Ok(Some(out))
}
