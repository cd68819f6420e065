//! HLO text, XLA's human-readable module format: the lexer, the parser (which infers the shapes
//! the text leaves out through `hlo_verify`) and the printer, which round-trip
//! (`parse_module(&print_module(&m)) == m`). Parse failures are [`ParseError`]s with a line and
//! column; the StableHLO front end (`hlo_front`) reports its own through the same type.
#![forbid(unsafe_code)]

pub mod error;
pub mod lexer;
pub mod parser;
pub mod printer;

pub use error::{ParseError, ParseErrorKind};
pub use parser::{parse_module, parse_shape, parse_sharding};
pub use printer::{print_module, print_module_with, PrintOptions};
