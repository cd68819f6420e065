//! `dot`s of 8-bit floats (`f8e4m3fn`, `f8e5m2`: JAX's FP8 matmuls, `lax.dot(a8, b8,
//! preferred_element_type=f32)`) as f16 dots: each f8 operand is converted to f16, which holds
//! every value of both formats exactly (their exponent ranges lie inside f16's, their mantissas
//! are shorter), so the gemm's f16 product with f32 accumulation is the FP8 product XLA:GPU's
//! cuBLASLt FP8 gemm computes (f32 accumulation too), up to summation order. A dot whose result
//! is itself f8 is computed in f32 and converted once, as XLA rounds an FP8 gemm's output.
//!
//! The gemm thunk stays what it was (no f8 data type in the artifact), so runtimes that predate
//! this pass run its output. The converts fuse into the operands' producers.
use hlo::{Attrs, HloModule, Instruction, Opcode, PrimitiveType, Shape};

use crate::error::CompileError;
use crate::passes::emit::{retyped, Emit};
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};

/// Rewrites every dot with an f8 operand or result.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::All, |_, comp| {
        let touches_f8 = |i: &Instruction| {
            i.opcode == Opcode::Dot
                && (is_f8(&i.shape) || i.operands.iter().any(|&o| is_f8(&comp[o].shape)))
        };
        if !comp.instructions.iter().any(touches_f8) {
            return Ok(None);
        }
        let new = rebuild(comp, |r, _, old| {
            if !touches_f8(old) {
                return r.keep(old).map(Some);
            }
            let operands = r.operands(old)?;
            let shapes: Vec<Shape> = operands
                .iter()
                .map(|o| r.instrs()[o.index()].shape.clone())
                .collect();
            let mut push = |i| r.push(i);
            let mut e = Emit::new(old, "f8.", &mut push);
            let widened: Vec<_> = operands
                .iter()
                .zip(&shapes)
                .map(|(&o, shape)| match is_f8(shape) {
                    true => e.op(
                        Opcode::Convert,
                        retyped(shape, PrimitiveType::F16),
                        vec![o],
                        Attrs::default(),
                    ),
                    false => o,
                })
                .collect();
            if !is_f8(&old.shape) {
                drop(e);
                return Ok(Some(r.push(Instruction {
                    operands: widened,
                    ..old.clone()
                })));
            }
            let product = e.op(
                Opcode::Dot,
                retyped(&old.shape, PrimitiveType::F32),
                widened,
                old.attrs.clone(),
            );
            e.next_name = Some(old.name.clone());
            let out = e.op(
                Opcode::Convert,
                old.shape.clone(),
                vec![product],
                Attrs::default(),
            );
            Ok(Some(out))
        })?;
        Ok(Some(new))
    })
}

fn is_f8(shape: &Shape) -> bool {
    matches!(
        shape.element_type(),
        Some(PrimitiveType::F8E4M3FN | PrimitiveType::F8E5M2)
    )
}
