//! Algebraic simplification: forwards instructions that do nothing (reshape/bitcast to the same
//! shape, convert to the same type, identity broadcast/transpose/slice/pad/reverse, one-operand
//! concatenate, copy, opt-barrier), forwards `get-tuple-element(tuple(...))` and
//! `tuple(get-tuple-element(x, 0..n))`, collapses `reshape(reshape(x))`, and folds small scalar
//! constant arithmetic (convert, add, subtract, multiply, maximum, minimum).
//!
//! Layouts are ignored throughout: every buffer the runtime sees is row-major
//! (docs/artifact.md), so copies that only change a layout are no-ops.
use hlo::{ArrayLiteral, Attrs, Computation, ConstantLiteral, LiteralValue};
use hlo::{HloModule, InstrId, Instruction, Opcode, PrimitiveType, Shape};

use crate::error::CompileError;
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};

/// Runs the pass on every reachable computation.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::Reachable, |_, comp| simplify(comp).map(Some))
}

enum Action {
    Keep,
    Forward(InstrId),
    Replace(Box<Instruction>),
}

fn is_identity(perm: &[i64]) -> bool {
    perm.iter().enumerate().all(|(i, &d)| d == i as i64)
}

/// Simplifies one computation.
pub fn simplify(comp: &Computation) -> Result<Computation, CompileError> {
    rebuild(comp, |r, _, old| {
        let instr = r.remapped(old)?;
        Ok(Some(match rule(r.instrs(), &instr) {
            Action::Keep => r.push(instr),
            Action::Forward(to) => to,
            Action::Replace(new) => r.push(*new),
        }))
    })
}

fn rule(instrs: &[Instruction], instr: &Instruction) -> Action {
    let op = |i: usize| -> Option<(InstrId, &Instruction)> {
        let id = *instr.operands.get(i)?;
        instrs.get(id.index()).map(|x| (id, x))
    };
    let same_shape = |other: &Instruction| other.shape.compatible(&instr.shape);
    let Some((op0_id, op0)) = op(0) else {
        return Action::Keep;
    };
    let forward_if = |cond: bool| {
        if cond {
            Action::Forward(op0_id)
        } else {
            Action::Keep
        }
    };
    match instr.opcode {
        Opcode::Reshape | Opcode::Bitcast => {
            if same_shape(op0) {
                return Action::Forward(op0_id);
            }
            if instr.opcode == Opcode::Reshape && op0.opcode == Opcode::Reshape {
                if let Some(&inner) = op0.operands.first() {
                    let mut r = instr.clone();
                    r.operands = vec![inner];
                    return Action::Replace(Box::new(r));
                }
            }
            Action::Keep
        }
        Opcode::Convert => {
            if same_shape(op0) {
                return Action::Forward(op0_id);
            }
            fold_convert(op0, instr).map_or(Action::Keep, |r| Action::Replace(Box::new(r)))
        }
        Opcode::Broadcast => forward_if(
            same_shape(op0) && instr.attrs.dimensions.as_deref().is_some_and(is_identity),
        ),
        Opcode::Transpose => forward_if(
            same_shape(op0) && instr.attrs.dimensions.as_deref().is_some_and(is_identity),
        ),
        Opcode::Slice => forward_if(
            same_shape(op0)
                && instr.attrs.slice.as_ref().is_some_and(|s| {
                    s.iter()
                        .zip(op0.shape.dims())
                        .all(|(d, &n)| d.start == 0 && d.limit == n && d.stride == 1)
                }),
        ),
        Opcode::Pad => forward_if(
            same_shape(op0)
                && instr.attrs.padding.as_ref().is_some_and(|p| {
                    p.iter()
                        .all(|d| d.low == 0 && d.high == 0 && d.interior == 0)
                }),
        ),
        Opcode::Reverse => forward_if(instr.attrs.dimensions.as_ref().is_some_and(|dims| {
            dims.iter().all(|&d| {
                usize::try_from(d)
                    .ok()
                    .and_then(|d| op0.shape.dims().get(d))
                    .is_some_and(|&n| n <= 1)
            })
        })),
        Opcode::Concatenate => forward_if(instr.operands.len() == 1 && same_shape(op0)),
        Opcode::Copy | Opcode::OptimizationBarrier => forward_if(same_shape(op0)),
        Opcode::GetTupleElement => {
            if op0.opcode == Opcode::Tuple {
                if let Some(&e) = instr
                    .attrs
                    .tuple_index
                    .and_then(|i| usize::try_from(i).ok())
                    .and_then(|i| op0.operands.get(i))
                {
                    return Action::Forward(e);
                }
            }
            Action::Keep
        }
        Opcode::Tuple => {
            let src = op0.operands.first().copied();
            let all = instr.operands.iter().enumerate().all(|(i, &o)| {
                instrs.get(o.index()).is_some_and(|x| {
                    x.opcode == Opcode::GetTupleElement
                        && x.attrs.tuple_index == Some(i as i64)
                        && x.operands.first().copied() == src
                })
            });
            match src.and_then(|s| instrs.get(s.index()).map(|x| (s, x))) {
                Some((s, x))
                    if all
                        && op0.opcode == Opcode::GetTupleElement
                        && x.shape.tuple_shapes().map(<[Shape]>::len)
                            == Some(instr.operands.len()) =>
                {
                    Action::Forward(s)
                }
                _ => Action::Keep,
            }
        }
        Opcode::Add | Opcode::Subtract | Opcode::Multiply | Opcode::Maximum | Opcode::Minimum => {
            op(1)
                .and_then(|(_, op1)| fold_binary(instr, op0, op1))
                .map_or(Action::Keep, |r| Action::Replace(Box::new(r)))
        }
        _ => Action::Keep,
    }
}

fn scalar_constant(instr: &Instruction) -> Option<(PrimitiveType, LiteralValue)> {
    if instr.opcode != Opcode::Constant || instr.shape.rank() != 0 {
        return None;
    }
    let t = instr.shape.element_type()?;
    match &instr.attrs.literal {
        Some(ConstantLiteral::Array(ArrayLiteral { values })) if values.len() == 1 => {
            Some((t, values[0]))
        }
        _ => None,
    }
}

fn foldable_type(t: PrimitiveType) -> bool {
    use PrimitiveType::*;
    matches!(
        t,
        Pred | S8 | S16 | S32 | S64 | U8 | U16 | U32 | U64 | F16 | Bf16 | F32 | F64
    )
}

/// Rounds a value to what the type can hold; `None` when an integer does not fit.
fn represent(t: PrimitiveType, v: f64, i: Option<i128>) -> Option<LiteralValue> {
    use PrimitiveType::*;
    Some(match t {
        Pred => LiteralValue::Bool(i.map_or(v != 0.0, |i| i != 0)),
        F64 | F32 | F16 | Bf16 => LiteralValue::Float(t.round_float(v)?),
        _ => {
            let i = i?;
            let bits = t.bit_width();
            let (lo, hi) = if t.is_signed_int() {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            if i < lo || i > hi {
                return None;
            }
            LiteralValue::Int(i)
        }
    })
}

fn constant_like(instr: &Instruction, value: LiteralValue) -> Instruction {
    Instruction {
        name: instr.name.clone(),
        opcode: Opcode::Constant,
        shape: instr.shape.clone(),
        operands: Vec::new(),
        attrs: Attrs {
            literal: Some(ConstantLiteral::Array(ArrayLiteral {
                values: vec![value],
            })),
            ..Attrs::default()
        },
        metadata: instr.metadata.clone(),
        loc: instr.loc,
    }
}

fn fold_convert(op: &Instruction, instr: &Instruction) -> Option<Instruction> {
    let (from, v) = scalar_constant(op)?;
    let to = instr.shape.element_type()?;
    if !foldable_type(from) || !foldable_type(to) || instr.shape.rank() != 0 {
        return None;
    }
    let value = match v {
        LiteralValue::Float(f) if !to.is_float() => {
            if !f.is_finite() {
                return None;
            }
            represent(to, f, Some(f.trunc() as i128))?
        }
        LiteralValue::Float(f) => represent(to, f, None)?,
        LiteralValue::Int(i) => represent(to, i as f64, Some(i))?,
        LiteralValue::Bool(b) => represent(to, f64::from(u8::from(b)), Some(i128::from(b)))?,
        LiteralValue::Complex(..) => return None,
    };
    Some(constant_like(instr, value))
}

fn fold_binary(instr: &Instruction, a: &Instruction, b: &Instruction) -> Option<Instruction> {
    let (ta, va) = scalar_constant(a)?;
    let (tb, vb) = scalar_constant(b)?;
    let t = instr.shape.element_type()?;
    if ta != t || tb != t || !foldable_type(t) || t == PrimitiveType::Pred {
        return None;
    }
    let value = match (va, vb) {
        (LiteralValue::Float(x), LiteralValue::Float(y)) => {
            let r = match instr.opcode {
                Opcode::Add => x + y,
                Opcode::Subtract => x - y,
                Opcode::Multiply => x * y,
                // NaN semantics of max/min differ between conventions: do not fold NaNs.
                Opcode::Maximum if !x.is_nan() && !y.is_nan() => x.max(y),
                Opcode::Minimum if !x.is_nan() && !y.is_nan() => x.min(y),
                _ => return None,
            };
            represent(t, r, None)?
        }
        (LiteralValue::Int(x), LiteralValue::Int(y)) => {
            let r = match instr.opcode {
                Opcode::Add => x.checked_add(y)?,
                Opcode::Subtract => x.checked_sub(y)?,
                Opcode::Multiply => x.checked_mul(y)?,
                Opcode::Maximum => x.max(y),
                Opcode::Minimum => x.min(y),
                _ => return None,
            };
            represent(t, r as f64, Some(r))?
        }
        _ => return None,
    };
    Some(constant_like(instr, value))
}
