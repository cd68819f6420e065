//! PTX toolkit: a typed model of NVIDIA's PTX ISA, a parser and printer that round-trip it, and a
//! SIMT emulator that executes kernels on CPU-only machines the way an NVIDIA GPU does.
//!
//! This crate depends on nothing else of the project: it knows no HLO, no thunks, no artifacts.
//!
//! - [`ast`]: the typed model ([`Module`], [`Function`], [`Statement`], [`Instruction`], ...).
//! - [`parser`]: text to model ([`parse`], [`parse_instruction`]), or the same grammar checked
//!   without building the model ([`check`], which returns an [`Outline`]); errors are [`ParseError`].
//! - [`printer`]: model to text ([`print()`], and `Display` on every node).
//! - [`compat`]: the CUDA toolkit a `.version` needs, the compute capabilities a `.target` runs on.
//! - [`ptxas`]: find and run NVIDIA's `ptxas` to validate PTX text.
//! - [`launch_spec`]: launch specs (`NAME.launch.json`) read, run on the emulator and compared.
#![warn(missing_docs)]

pub mod ast;
pub mod compat;
pub mod emu;
pub mod error;
pub mod launch_spec;
pub mod lexer;
pub mod parser;
pub mod printer;
pub mod ptxas;

pub use ast::*;
pub use error::ParseError;
pub use parser::{check, outline, parse, parse_instruction};
pub use printer::print;
