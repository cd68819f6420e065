//! PTX toolkit: a typed model of NVIDIA's PTX ISA, a parser and printer that round-trip it, and a
//! SIMT emulator that executes kernels on CPU-only machines the way an NVIDIA GPU does.
//!
//! This crate depends on nothing else of the project: it knows no HLO, no thunks, no artifacts.
//!
//! # The face
//!
//! The model, the parser, the printer, the toolkit tables and the launch specs live in private
//! modules; what other crates use is re-exported here:
//! - the typed model ([`Module`], [`Function`], [`Statement`], [`Instruction`], [`Opcode`],
//!   [`Type`], ...), every node `Display`s as PTX text;
//! - text to model ([`parse`], [`parse_instruction`]), or the same grammar checked without
//!   building the model ([`check`], which returns an [`Outline`]); errors are [`ParseError`];
//!   model to text: [`print()`]; the tokens alone: [`lex`];
//! - the CUDA toolkit a `.version` needs ([`min_toolkit`], [`Toolkit`]) and the compute
//!   capabilities a `.target` runs on ([`Arch`], [`Features`], [`TargetMismatch`]);
//! - launch specs (`NAME.launch.json`) read, run on the emulator and compared ([`LaunchSpec`],
//!   [`run_launch_spec`], [`Outcome`]).
//!
//! Two subsystems keep a module of their own, each with its own curated face:
//! - [`emu`]: the emulator ([`emu::LoadedModule`], [`emu::launch`], [`emu::EmuError`]); its
//!   verbs (`load`, `launch`) only read right under its name;
//! - [`ptxas`]: find and run NVIDIA's `ptxas` ([`ptxas::find`], [`ptxas::assemble`]) and read a
//!   cubin's header ([`ptxas::cubin_arch`]); the functions are named after the tool's verbs.
#![warn(missing_docs)]

mod ast;
mod compat;
pub mod emu;
mod error;
mod launch_spec;
mod lexer;
mod parser;
mod printer;
pub mod ptxas;

// The typed model: every node of the AST, as its own module re-exports them.
pub use ast::*;
pub use compat::{
    min_toolkit, Arch, Features, Mismatch as TargetMismatch, Toolkit, ToolkitNeed, TOOLKIT_FOR_ISA,
};
pub use error::ParseError;
pub use launch_spec::{
    run as run_launch_spec, run_limited as run_launch_spec_limited, Check, Dtype, Expected,
    LaunchSpec, Mismatch as ElementMismatch, Outcome, SpecError, SpecParam, ValueError,
};
pub use lexer::{lex, TokKind, Token};
pub use parser::{check, outline, parse, parse_instruction};
pub use printer::print;
