//! Elementwise opcodes: unary, binary, and the ones with their own type rules.

use super::error::{Needs, ShapeError};
use super::infer::*;
use hlo::*;
use hlo::{PrimitiveType, Shape};

/// Elementwise unary opcodes: the operand's shape, with the type rule of the opcode.
pub(super) fn unary(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst { opcode, ops, .. } = *cx;
    count(ops, 1, opcode)?;
    let x = arr(ops, 0)?;
    let t = x.element_type;
    let float_like = t.is_float() || t.is_complex();
    let ty = match opcode {
        IsFinite => {
            if !t.is_float() {
                return fail(ShapeError::ElementType {
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
                return fail(ShapeError::ElementType {
                    opcode,
                    needs: Needs::PredOrIntOperand,
                    found: t,
                });
            }
            t
        }
        Clz | PopulationCount => {
            if !t.is_int() {
                return fail(ShapeError::ElementType {
                    opcode,
                    needs: Needs::IntOperand,
                    found: t,
                });
            }
            t
        }
        Floor | Ceil | RoundNearestAfz | RoundNearestEven => {
            if !t.is_float() {
                return fail(ShapeError::ElementType {
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
                return fail(ShapeError::ElementType {
                    opcode,
                    needs: Needs::FloatOperand,
                    found: t,
                });
            }
            t
        }
        _ => t,
    };
    Ok(Some(array(ty, dims_of(x))))
}

/// Elementwise binary opcodes: two operands of one shape.
pub(super) fn binary(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst { opcode, ops, .. } = *cx;
    count(ops, 2, opcode)?;
    let (x, y) = (arr(ops, 0)?, arr(ops, 1)?);
    if !x.compatible(y) {
        return fail(ShapeError::OperandShapes {
            opcode,
            lhs: x.clone(),
            rhs: y.clone(),
        });
    }
    let t = x.element_type;
    if matches!(opcode, And | Or | Xor) && !(t.is_int() || t.is_pred()) {
        return fail(ShapeError::ElementType {
            opcode,
            needs: Needs::PredOrIntOperands,
            found: t,
        });
    }
    if matches!(opcode, ShiftLeft | ShiftRightArithmetic | ShiftRightLogical) && !t.is_int() {
        return fail(ShapeError::ElementType {
            opcode,
            needs: Needs::IntOperands,
            found: t,
        });
    }
    Ok(Some(array(t, dims_of(x))))
}

/// Compare, complex, select, clamp and the conversions.
pub(super) fn others(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst { opcode, ops, a, .. } = *cx;
    let out = match opcode {
        Compare => {
            count(ops, 2, opcode)?;
            let (x, y) = (arr(ops, 0)?, arr(ops, 1)?);
            if !x.compatible(y) {
                return fail(ShapeError::OperandShapes {
                    opcode,
                    lhs: x.clone(),
                    rhs: y.clone(),
                });
            }
            required(a.comparison_direction, opcode, "direction=")?;
            array(PrimitiveType::Pred, dims_of(x))
        }
        Complex => {
            count(ops, 2, opcode)?;
            let (x, y) = (arr(ops, 0)?, arr(ops, 1)?);
            if !x.compatible(y) {
                return fail(ShapeError::ComplexOperands {
                    lhs: x.clone(),
                    rhs: y.clone(),
                });
            }
            let t = match x.element_type {
                PrimitiveType::F32 => PrimitiveType::C64,
                PrimitiveType::F64 => PrimitiveType::C128,
                t => {
                    return fail(ShapeError::ElementType {
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
                return fail(ShapeError::SelectPredicateType(p.clone()));
            }
            if !t.compatible(f) {
                return fail(ShapeError::SelectBranches {
                    on_true: t.clone(),
                    on_false: f.clone(),
                });
            }
            if p.rank() != 0 && p.dims != t.dims {
                return fail(ShapeError::SelectPredicateShape {
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
                    return fail(ShapeError::ClampBound {
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
                    let Some(t) = cx.declared_ty() else {
                        return Ok(None);
                    };
                    let (from, to) = (x.element_type.bit_width(), t.bit_width());
                    let mut dims = dims_of(x);
                    let bad = || {
                        fail(ShapeError::BitcastShape {
                            operand: x.clone(),
                            to: t,
                        })
                    };
                    let odd = |p: PrimitiveType| p.is_complex() || p == PrimitiveType::Pred;
                    if from != to && (odd(x.element_type) || odd(t)) {
                        return bad();
                    }
                    // To a narrower type a new minor dimension of `from / to` parts; to a wider
                    // one the minor dimension (of `to / from` parts) goes.
                    if from > to && to > 0 && from % to == 0 {
                        dims.push((from / to) as i64);
                    } else if from < to && from > 0 && to % from == 0 {
                        if dims.last() != Some(&((to / from) as i64)) {
                            return bad();
                        }
                        dims.pop();
                    } else if from != to {
                        return bad();
                    }
                    array(t, dims)
                }
                _ => {
                    let Some(t) = cx.declared_ty() else {
                        return Ok(None);
                    };
                    array(t, dims_of(x))
                }
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}
