//! Opaque opcodes: custom-call, rng, send/recv, the collectives and async pairs, batch-norm, ... and constants.

use super::error::ShapeError;
use super::infer::*;
use crate::ir::*;
use crate::shape::Shape;

/// Opcodes whose shape is not inferred (the declared one is trusted; constants are checked against their literal), and all-reduce, whose result is its operands'.
pub(super) fn declared(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst {
        opcode,
        ops,
        a,
        declared,
        ..
    } = *cx;
    let declared_array = declared.and_then(Shape::as_array);
    // The dispatcher (`infer::infer_shape`) is the one list of the opcodes sent here: every one
    // of them trusts its declared shape, except a constant's literal, checked against it, and
    // all-reduce, whose result is its operands'.
    let out = match opcode {
        Constant => {
            if let Some(d) = declared {
                if !literal_matches(a.literal.as_ref(), d) {
                    return fail(ShapeError::ConstantStructure(d.clone()));
                }
            }
            if let (Some(Literal::Array(l)), Some(d)) = (&a.literal, declared_array) {
                if l.values.len() as u64 != d.element_count() {
                    return fail(ShapeError::ConstantValueCount {
                        values: l.values.len(),
                        shape: d.clone(),
                        needs: d.element_count(),
                    });
                }
            }
            return Ok(None);
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
        _ => return Ok(None),
    };
    Ok(Some(out))
}
