//! HLO text, XLA's human-readable module format: the lexer, the parser (which infers the shapes
//! the text leaves out through `hlo_verify`) and the printer, which round-trip
//! (`parse_module(&print_module(&m)) == m`). Parse failures are [`ParseError`]s with a line and
//! column; the StableHLO front end (`hlo_front`) reports its own through the same type.
#![forbid(unsafe_code)]

// The public face is the `pub use` list below; the modules are how the crate is kept.
mod error;
mod lexer;
mod parser;
mod printer;

pub use error::{ParseError, ParseErrorKind};
pub use parser::{parse_module, parse_shape, parse_sharding, MAX_NESTING, MAX_RANK};
pub use printer::{format_float, print_module, print_module_with, PrintOptions};
