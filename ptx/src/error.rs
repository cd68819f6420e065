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

    /// A new error at byte `offset` of `src` (line and column computed from it).
    pub fn at(src: &str, offset: usize, message: impl Into<String>) -> Self {
        let before = src.as_bytes().get(..offset).unwrap_or(src.as_bytes());
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        ParseError::new(line as u32, (before.len() - line_start + 1) as u32, message)
    }
}
