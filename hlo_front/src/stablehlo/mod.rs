//! StableHLO front end: MLIR text (what `jax.jit(f).lower(...).as_text()` prints, and the generic
//! op form) turned into the same [`HloModule`] the HLO text parser builds. Nothing downstream
//! knows which front end ran.
//!
//! # What is accepted
//!
//! - `module @name attributes {mhlo.num_replicas = R, mhlo.num_partitions = P} { ... }` (the
//!   module wrapper may be left out); other module attributes are ignored, as XLA ignores them.
//! - `func.func public @main` is the entry (or the only public function); private functions are
//!   called computations (`func.call` / `call`); argument and result attributes
//!   (`jax.result_info`, shardings) are ignored.
//! - Every op in the generic form (`"stablehlo.add"(%a, %b) : (...) -> ...`, with `<{...}>`
//!   properties, `({...})` regions and `{...}` attributes) and in the pretty forms JAX prints.
//!   The ops and what they become are listed by [`supported_ops`]; CHLO ops other than
//!   [`chlo_ops`] and every other op are refused by name.
//! - `loc(...)` locations and `#loc` aliases are skipped; unknown attributes are ignored unless
//!   they change what an op computes (dot `algorithm`, custom-call layouts, ... are refused).
//!
//! # How it lowers (as XLA's MLIR-to-HLO translation does)
//!
//! Multi-result ops produce a tuple read with `get-tuple-element`; `while` carries one tuple
//! (its values, then the values its regions use from outside); `if`/`case` branches take the
//! values they use from outside as their operand; `broadcast_in_dim` that stretches size-1
//! dimensions is a `reshape` then a `broadcast`; `chlo.square` is `x * x`, `chlo.is_inf` a
//! comparison with ±inf. Instructions are named `opcode.N`, parameters `Arg_I.N`, regions
//! `region_N`, functions by their symbol.
//!
//! # Errors
//!
//! Every failure is a [`ParseError`] with the line and column and, inside an op, the op's name
//! (`12:5: stablehlo.pad: low, high and interior padding differ in length`). Nesting is bounded
//! ([`MAX_NESTING`]), splat constants are bounded ([`MAX_CONSTANT_ELEMENTS`]); no input panics.

pub mod bytecode;
mod lower;
mod parse;
mod scan;

pub use bytecode::{parse_bytecode, BytecodeError};
pub use lower::MAX_CONSTANT_ELEMENTS;
pub use scan::{MAX_NESTING, MAX_RANK};

use hlo::{HloModule, SourceLoc};
use hlo_text::{ParseError, ParseErrorKind};

/// Parses StableHLO MLIR text into an HLO module and verifies it (shapes against the MLIR types);
/// a verifier problem is reported at the op it comes from.
pub fn parse_module(text: &str) -> Result<HloModule, ParseError> {
    let module = parse_module_unverified(text)?;
    if let Err(errs) = hlo_verify::verify(&module) {
        let first = errs.first();
        let loc = first.map_or(SourceLoc::default(), |e| e.loc);
        let msg = first.map_or_else(String::new, |e| {
            format!("{}/{}: {}", e.computation, e.instruction, e.kind)
        });
        let more = if errs.len() > 1 {
            format!(" (and {} more problems)", errs.len() - 1)
        } else {
            String::new()
        };
        return Err(ParseError::new(
            loc,
            ParseErrorKind::Invalid,
            format!("the converted module is invalid: {msg}{more}"),
        ));
    }
    Ok(module)
}

/// Parses StableHLO MLIR text into an HLO module without running the verifier.
pub fn parse_module_unverified(text: &str) -> Result<HloModule, ParseError> {
    parse::Front::new(text).module()
}

/// The StableHLO op names (without `stablehlo.`) this front end converts.
pub fn supported_ops() -> Vec<&'static str> {
    let mut v: Vec<&str> = lower::ELEMENTWISE
        .iter()
        .map(|(n, _)| *n)
        .chain(lower::STRUCTURED.iter().copied())
        .collect();
    v.sort_unstable();
    v
}

/// The CHLO op names (without `chlo.`) that are decomposed, sorted.
pub fn chlo_ops() -> Vec<&'static str> {
    lower::chlo_supported()
}
