//! PTX toolkit: a typed model of NVIDIA's PTX ISA, a parser and printer that round-trip it, and a
//! SIMT emulator that executes kernels on CPU-only machines the way an NVIDIA GPU does.
//!
//! This crate depends on nothing else of the project: it knows no HLO, no thunks, no artifacts.
//!
//! - [`ast`]: the typed model ([`Module`], [`Function`], [`Statement`], [`Instruction`], ...).
#![warn(missing_docs)]

pub mod ast;

pub use ast::*;
