//! `algorithm=` of `dot` (XLA's `PrecisionConfig.Algorithm`, what StableHLO's `algorithm =
//! <...>` and JAX's `DotAlgorithmPreset`s become): the operands' precision and the accumulator
//! of the product, as XLA:GPU reads them for the storage types it accepts
//! (`algorithm_util::IsSupportedDotAlgorithmOnGpu`).
//!
//! The gemm already accumulates f16, bf16 and f32 products in f32 and f64 ones in f64, so most
//! algorithms ask for what it does; two round their f32 operands first, which this pass makes
//! explicit with a `reduce-precision` (8 exponent bits) on each operand:
//! `dot_bf16_bf16_f32` to bf16's 7 mantissa bits, `dot_tf32_tf32_f32` to TF32's 10. The
//! multi-pass algorithms (`_x3`, `_x6`, `_x9`), which split each f32 into narrower parts to
//! approach an f32 product on tensor cores, are computed as the f32 product they approach, and
//! the 8-bit float ones (`dot_any_f8_any_f8_f32`, `_fast_accum`) as the FP8 product with f32
//! accumulation that the `float8-dot` pass computes for every f8 dot. A combination XLA:GPU
//! refuses (`dot_f16_f16_f16`, an algorithm on the wrong storage types, e5m2 x e5m2) is refused
//! naming the dot.
//!
//! The dot keeps its `algorithm=`: the rounding is idempotent, and the module says what was
//! asked.
use hlo::{Attrs, HloModule, Instruction, Opcode, PrimitiveType, Shape};

use crate::error::CompileError;
use crate::passes::emit::Emit;
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};
use crate::unsupported::UnsupportedGemm;

/// Checks every dot with an algorithm and rounds the operands of those that round them.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::All, |_, comp| {
        if !comp.instructions.iter().any(has_algorithm) {
            return Ok(None);
        }
        let new = rebuild(comp, |r, _, old| {
            let Some(algorithm) = old.attrs.dot_algorithm.filter(|_| has_algorithm(old)) else {
                return r.keep(old).map(Some);
            };
            let operands = r.operands(old)?;
            let shapes: Vec<Option<Shape>> = operands
                .iter()
                .map(|o| r.instrs().get(o.index()).map(|i| i.shape.clone()))
                .collect();
            let types: Vec<Option<PrimitiveType>> = shapes
                .iter()
                .map(|s| s.as_ref().and_then(Shape::element_type))
                .collect();
            let (Some(&Some(lhs)), Some(&Some(rhs)), Some(out)) =
                (types.first(), types.get(1), old.shape.element_type())
            else {
                return Err(CompileError::unsupported(
                    &comp.name,
                    old,
                    UnsupportedGemm::NotAnArray,
                ));
            };
            if operands.len() != 2 {
                return Err(CompileError::unsupported(
                    &comp.name,
                    old,
                    UnsupportedGemm::Operands,
                ));
            }
            if !algorithm.supports(lhs, rhs, out) {
                let why = UnsupportedGemm::Algorithm {
                    algorithm,
                    lhs,
                    rhs,
                    out,
                };
                return Err(CompileError::unsupported(&comp.name, old, why));
            }
            let mut rounded = Vec::with_capacity(2);
            let mut push = |i| r.push(i);
            let mut e = Emit::new(old, "alg.", &mut push);
            for ((&o, ty), shape) in operands.iter().zip([lhs, rhs]).zip(shapes) {
                rounded.push(match (algorithm.operand_rounding(ty), shape) {
                    (Some((exponent, mantissa)), Some(shape)) => {
                        let attrs = Attrs {
                            exponent_bits: Some(exponent),
                            mantissa_bits: Some(mantissa),
                            ..Attrs::default()
                        };
                        e.op(Opcode::ReducePrecision, shape, vec![o], attrs)
                    }
                    _ => o,
                });
            }
            drop(e);
            Ok(Some(r.push(Instruction {
                operands: rounded,
                ..old.clone()
            })))
        })?;
        Ok(Some(new))
    })
}

fn has_algorithm(i: &Instruction) -> bool {
    i.opcode == Opcode::Dot && i.attrs.dot_algorithm.is_some()
}
