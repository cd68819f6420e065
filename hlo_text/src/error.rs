//! Errors of the text parser, each with a source location.

use thiserror::Error;

use hlo::SourceLoc;

/// What kind of problem a [`ParseError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A character that starts no token, or an unterminated string / comment.
    Lex,
    /// The text does not follow the grammar: `message` says what was expected and found.
    Syntax,
    /// An opcode name that is not an XLA opcode.
    UnknownOpcode,
    /// An element type, dimension or layout that is not valid.
    BadShape,
    /// A constant literal that does not match its shape.
    BadLiteral,
    /// An attribute with a malformed or out-of-range value, or written twice.
    BadAttribute,
    /// An operand name not defined in the computation.
    UndefinedOperand,
    /// A computation name that is referenced but never defined.
    UndefinedComputation,
    /// Two instructions (in one computation) or two computations with the same name.
    DuplicateName,
    /// Nesting deeper than the parser allows.
    TooDeep,
    /// A structural problem: no computations, two ROOTs, two ENTRY computations, bad parameter
    /// numbering, a missing shape that cannot be inferred.
    Structure,
    /// A module a front end built that fails verification (the StableHLO front end reports
    /// it at the op it came from).
    Invalid,
}

/// A parse failure at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{line}:{column}: {message}")]
#[non_exhaustive]
pub struct ParseError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The kind of problem, for callers that branch on it (tests, the fuzzer's classes);
    /// `message` is for people.
    pub kind: ParseErrorKind,
    /// Human-readable description: what was expected and what was found.
    pub message: String,
}

impl ParseError {
    /// A new error at `loc`.
    pub fn new(loc: SourceLoc, kind: ParseErrorKind, message: impl Into<String>) -> ParseError {
        ParseError {
            line: loc.line,
            column: loc.column,
            kind,
            message: message.into(),
        }
    }

    /// The location as a [`SourceLoc`].
    pub fn loc(&self) -> SourceLoc {
        SourceLoc {
            line: self.line,
            column: self.column,
        }
    }
}
