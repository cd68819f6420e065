//! The HLO passes that run before fusion, in order:
//!
//! 0. [`spmd`]: a program for several devices becomes one device's program (docs/sharding.md);
//!    nothing else changes.
//! 1. [`inline_calls`]: inline `call` (and pre-existing `fusion`) instructions.
//! 2. [`annotations`]: custom calls that only annotate a value (shardings, memory placement)
//!    become their operand, on one partition. [`dot_algorithm`]: a dot's `algorithm=` checked,
//!    and the operand rounding it asks made explicit. [`float8_dot`]: dots of 8-bit floats as
//!    f16 dots (exact operand converts).
//! 3. [`triangular_solve`]: every `triangular-solve` becomes a `while` of forward
//!    substitution over masked rows (the ops it uses are compiled like any other).
//!    [`rng_bit_generator`]: every `rng-bit-generator` becomes XLA's ThreeFry or Philox as
//!    elementwise integer ops.
//! 4. [`custom_call_layouts`]: operands and results of custom calls that take non-default
//!    layouts (column-major LAPACK matrices) are laid out with transposes.
//! 5. [`float_normalization`]: bf16/f16 `reduce` and `reduce-window` compute in f32 and round
//!    once (XLA:GPU's `FloatNormalization`).
//!    [`complex_dot`]: a complex `dot` (or `convolution`) becomes four real ones on the parts.
//! 6. [`cond_select`]: conditionals with cheap, side-effect-free branches become selects.
//! 7. [`dce`]: drop instructions whose values nobody uses.
//! 8. [`simplify`]: algebraic simplification (no-op reshapes/converts/broadcasts/transposes/
//!    slices/copies, tuple/get-tuple-element forwarding, small constant folding).
//! 9. [`while_repeated`]: while-loop state elements that provably hold equal values (JAX's
//!    `fori_loop` counter, carried twice) are read and updated as one.
//! 10. [`cse`]: common subexpression elimination.
//! 11. [`collectives`]: all-gather / reduce-scatter along a non-leading dimension become
//!     transposes around a leading-dimension collective.
//! 12. [`gemm_operands`]: transposes in front of `dot` operands the gemm thunk cannot read in
//!     place.
//! 13. [`dce`] again.
//!
//! Fusion ([`crate::fusion`]) and lowering to thunks follow.
//!
//! Two rewrites run outside the pipeline, as the staged rollout of issue 30 asks:
//! [`partitions`] (in `compile`, before anything else, so the embedded module is the one the
//! thunks run: N partitions of one replica as N replicas while `emit_partitions` is off) and
//! [`permute`] (in `optimize`, first: `collective-permute` as an all-gather, dynamic-slices and
//! a select while `emit_collective_permute` is off). [`fft`] follows it (issue 31): `fft` as
//! dots with twiddle-factor matrices while `emit_fft_thunk` is off. [`cholesky`] follows
//! (issue 27): `cholesky` as a column loop, or with `emit_cusolver_potrf` as a
//! `cusolver_potrf_ffi` custom call. [`float8_constants`] runs in `compile` after
//! [`partitions`]: f8 constants as f32 constants and a convert, in the module the artifact
//! embeds (runtimes in the forward window read no f8 literal).
//!
//! Each pass is one file holding its rule over one computation; the loop over the module and
//! the rebuild of a computation (topological order, operands remapped) are shared, in
//! [`rebuild`]. Each pass is tested alone by the filetests in `compiler/tests/filetests/<pass>/`
//! (input HLO, the pass, the expected HLO after it; `BLESS=1` rewrites the expectations).
use hlo::HloModule;

use crate::error::CompileError;
use crate::options::CompileOptions;

pub mod annotations;
pub mod cholesky;
pub mod collectives;
pub mod complex_dot;
pub mod cond_select;
pub mod cse;
pub mod custom_call_layouts;
pub mod dce;
pub mod dot_algorithm;
mod emit;
pub mod fft;
pub mod float8_constants;
pub mod float8_dot;
pub mod float_normalization;
pub mod gemm_operands;
pub mod inline_calls;
pub mod partitions;
pub mod permute;
pub mod rebuild;
pub mod rng_bit_generator;
pub mod simplify;
pub mod spmd;
pub mod triangular_solve;
pub mod while_repeated;

/// A pass over a module.
pub type Pass = fn(&mut HloModule) -> Result<(), CompileError>;

/// The passes in pipeline order, with their names.
pub const PIPELINE: &[(&str, Pass)] = &[
    ("spmd-partitioner", spmd::run),
    ("inline-calls", inline_calls::run),
    ("annotations", annotations::run),
    ("dot-algorithm", dot_algorithm::run),
    ("float8-dot", float8_dot::run),
    ("triangular-solve", triangular_solve::run),
    ("rng-bit-generator", rng_bit_generator::run),
    ("custom-call-layouts", custom_call_layouts::run),
    ("float-normalization", float_normalization::run),
    ("complex-dot", complex_dot::run),
    ("cond-select", cond_select::run),
    ("dce", dce::run),
    ("simplify", simplify::run),
    ("while-repeated", while_repeated::run),
    ("cse", cse::run),
    ("collectives", collectives::run),
    ("gemm-operands", gemm_operands::run),
    ("dce", dce::run),
];

/// Runs the pass pipeline; with `options.verify_between_passes`, the HLO verifier runs after
/// each pass and a failure names the pass.
pub fn run_pipeline(module: &mut HloModule, options: &CompileOptions) -> Result<(), CompileError> {
    for (name, pass) in PIPELINE {
        pass(module)?;
        if options.verify_between_passes {
            hlo_verify::verify(module).map_err(|errors| {
                let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
                CompileError::Internal(format!(
                    "the module does not verify after pass {name}: {}",
                    text.join("; ")
                ))
            })?;
        }
    }
    Ok(())
}
