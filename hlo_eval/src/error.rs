//! The evaluator's error: what went wrong, and where (an [`EvalError::At`] chain of the
//! instructions being evaluated, elided in the middle when deep).

use thiserror::Error;

use hlo::LiteralError;

/// Errors of the evaluator and its kernels.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum EvalError {
    /// The opcode has no evaluator support.
    #[error("unimplemented opcode `{opcode}`")]
    Unimplemented {
        /// The opcode's text name.
        opcode: String,
    },
    /// An element type the evaluator does not model (complex, f8, sub-byte ints, tokens...).
    #[error("unsupported type {dtype}")]
    UnsupportedType {
        /// The type's text name.
        dtype: String,
    },
    /// An operation got operands or attributes it cannot accept.
    #[error("{op}: {reason}")]
    Invalid {
        /// The operation.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// The number of arguments differs from the entry computation's parameters.
    #[error("the entry computation takes {expected} arguments, got {got}")]
    ArgumentCount {
        /// Entry parameters.
        expected: usize,
        /// Arguments given.
        got: usize,
    },
    /// An argument's type or shape differs from its parameter's.
    #[error("argument {index} (parameter `{name}`): expected {expected}, got {got}")]
    Argument {
        /// Parameter number.
        index: usize,
        /// Parameter instruction name.
        name: String,
        /// Declared shape.
        expected: String,
        /// Shape of the argument.
        got: String,
    },
    /// A literal could not be built or accessed.
    #[error(transparent)]
    Literal(#[from] LiteralError),
    /// The module is malformed (dangling handles, cycles, missing attributes...).
    #[error("malformed module: {0}")]
    Malformed(String),
    /// An instruction's shape has more elements than [`hlo::MAX_ELEMENTS`], the limit the
    /// compiler and the runtime share: refused before anything is evaluated.
    #[error("{computation}/{instruction}: {error} (hlo::MAX_ELEMENTS)")]
    TooManyElements {
        /// Computation name.
        computation: String,
        /// Instruction name.
        instruction: String,
        /// The shape and the limit.
        error: hlo::SizeError,
    },
    /// Calls nest deeper than the limit (likely a recursive module).
    #[error("computations nest deeper than {limit} calls")]
    TooDeep {
        /// [`MAX_DEPTH`](super::MAX_DEPTH), the deepest call nesting evaluated.
        limit: usize,
    },
    /// A `while` loop ran more iterations than [`EvalOptions::max_while_iterations`](super::EvalOptions::max_while_iterations).
    #[error("while loop exceeded {limit} iterations")]
    WhileLimit {
        /// The `max_while_iterations` that was set: iterations of the body that ran.
        limit: u64,
    },
    /// An error while evaluating an instruction. The inner error is part of the message and
    /// deliberately not a `#[source]`, so chain printers (anyhow's `{:#}`) say it once.
    // Said once per frame, and a deep chain elided in the middle (a call chain 256 deep once
    // printed every frame); printed without recursing into the inner frames.
    #[error("{}", at_message(.loc, .computation, .instruction, .error))]
    At {
        /// Computation name.
        computation: String,
        /// Instruction name.
        instruction: String,
        /// Where the instruction is in the input module (`line:column`).
        loc: hlo::SourceLoc,
        /// The underlying error.
        error: Box<EvalError>,
    },
}

/// Frames of an [`EvalError::At`] chain printed at each end; the ones between are counted.
const SHOWN_FRAMES: usize = 4;

/// The message of an [`EvalError::At`] chain: its frames outermost first (the middle of a long
/// chain elided as `… (N more frames)`), then the innermost error.
fn at_message(
    loc: &hlo::SourceLoc,
    computation: &str,
    instruction: &str,
    error: &EvalError,
) -> String {
    let mut frames = vec![format!("{loc}: {computation}/{instruction}")];
    let mut inner = error;
    while let EvalError::At {
        loc,
        computation,
        instruction,
        error,
    } = inner
    {
        frames.push(format!("{loc}: {computation}/{instruction}"));
        inner = error;
    }
    let mut out = String::new();
    let n = frames.len();
    for (k, frame) in frames.iter().enumerate() {
        if n > 2 * SHOWN_FRAMES && k == SHOWN_FRAMES {
            out.push_str(&format!("… ({} more frames): ", n - 2 * SHOWN_FRAMES));
        }
        if n > 2 * SHOWN_FRAMES && (SHOWN_FRAMES..n - SHOWN_FRAMES).contains(&k) {
            continue;
        }
        out.push_str(frame);
        out.push_str(": ");
    }
    out.push_str(&inner.to_string());
    out
}

impl EvalError {
    /// The innermost error, past any [`EvalError::At`] context.
    pub fn root_cause(&self) -> &EvalError {
        match self {
            EvalError::At { error, .. } => error.root_cause(),
            e => e,
        }
    }
}

/// Shorthand for [`EvalError::Invalid`].
pub(crate) fn invalid(op: &str, reason: impl Into<String>) -> EvalError {
    EvalError::Invalid {
        op: op.to_string(),
        reason: reason.into(),
    }
}
