//! HLO front end: the IR (arenas and typed handles), the text parser and printer, the StableHLO
//! (MLIR text) front end that builds the same IR, format detection for module files
//! ([`input`]), the shape verifier, the reference evaluator and conversion to and from
//! `HloModuleProto`.
//!
//! This crate knows nothing of GPUs, thunks, buffer assignment or artifacts: the compiler and the
//! runtime both use it, and neither may leak its types into the other through here.

pub mod complex;
pub mod convert;
pub mod error;
pub mod eval;
pub mod input;
pub mod io;
pub mod ir;
pub mod jax_export;
pub mod lexer;
pub mod literal;
pub mod parser;
pub mod precision;
pub mod printer;
pub mod sdy;
pub mod shape;
pub mod stablehlo;
pub mod verify;

pub use error::{ParseError, ParseErrorKind, VerifyError};
pub use ir::{Computation, ComputationId, HloModule, InstrId, Instruction, Opcode};
pub use parser::{parse_module, parse_shape, parse_sharding};
pub use printer::{print_module, print_module_with, PrintOptions};
pub use shape::{Layout, PrimitiveType, Shape, MAX_ELEMENTS};
