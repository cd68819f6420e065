//! Parse errors.

use thiserror::Error;

/// A syntax error with the 1-based line and column where it was detected.
///
/// The message says what was expected and what was found, e.g.
/// `expected ';' after instruction, found `}``.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{line}:{column}: {message}")]
#[non_exhaustive]
pub struct ParseError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in bytes).
    pub column: u32,
    /// What was expected and what was found.
    pub message: String,
}

impl ParseError {
    /// A new error at `line:column`.
    pub fn new(line: u32, column: u32, message: impl Into<String>) -> Self {
        ParseError {
            line,
            column,
            message: message.into(),
        }
    }
}
