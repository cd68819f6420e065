//! Opaque opcodes: custom-call, rng, send/recv, the collectives and async pairs, batch-norm, ... and constants.

use super::error::ShapeError;
use super::infer::*;
use hlo::Shape;
use hlo::*;

/// Opcodes whose shape is not inferred (the declared one is trusted; constants are checked against their literal), and all-reduce, whose result is its operands'.
pub(super) fn declared(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst { opcode, ops, a, .. } = *cx;
    // The dispatcher (`infer::infer_shape`) is the one list of the opcodes sent here: every one
    // of them trusts its declared shape, except a constant's literal, checked against it, and
    // all-reduce, whose result is its operands'.
    let out = match opcode {
        Constant => {
            if let Some(d) = cx.declared {
                if !literal_matches(a.literal.as_ref(), d) {
                    return fail(ShapeError::ConstantStructure(d.clone()));
                }
            }
            if let (Some(ConstantLiteral::Array(l)), Some(d)) = (&a.literal, cx.declared_array) {
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
        AllReduce => mirror_operands(ops),
        _ => return Ok(None),
    };
    Ok(Some(out))
}
