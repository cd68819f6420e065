//! Runtime errors: an absl-style status code plus a message that names the artifact field, the
//! bad value and the bound it violated. One error type with the kind as data (prost-reflect's
//! shape), so code that only reports an error never matches on its kind, and code that decides on
//! it asks [`Error::code`], or [`Error::cause`] where a caller needs a fact the message only
//! spells out (nothing decides on a message's text).
use std::fmt;

/// The absl status codes the runtime reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// The artifact (or an argument) is malformed: a field is out of range or inconsistent.
    InvalidArgument,
    /// The artifact is well formed but cannot run here (ABI, compute capability).
    FailedPrecondition,
    /// A named thing (kernel entry, custom-call target) does not exist.
    NotFound,
    /// The artifact uses something this runtime does not implement.
    Unimplemented,
    /// A size or iteration bound was exceeded.
    ResourceExhausted,
    /// A bug or an unexpected device failure.
    Internal,
    /// The device (driver, library) is not available.
    Unavailable,
}

impl Code {
    /// The absl spelling (`INVALID_ARGUMENT`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::NotFound => "NOT_FOUND",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::Internal => "INTERNAL",
            Code::Unavailable => "UNAVAILABLE",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The structured fact behind an error, for the callers that act on it; the message says the
/// same in words. Most errors have none: their code is all a caller decides on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cause {
    /// A thunk's `impl` oneof is unset: the thunk is of a kind a newer compiler emits.
    UnknownThunkKind {
        /// The `ThunkProto` field numbers the thunk's encoding carries that this runtime's
        /// schema does not declare, ascending; empty when the thunk was given decoded (its
        /// unknown fields already dropped).
        fields: Vec<u32>,
    },
    /// A collective was abandoned because another replica (or partition) failed; that
    /// replica's own error is the root cause.
    PeerFailed,
}

/// A runtime failure. `Display` is `CODE: message`, e.g.
/// `FAILED_PRECONDITION: executable_abi_version.cuda_platform_version.cudnn_version: ...`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Error {
    code: Code,
    message: String,
    cause: Option<Cause>,
}

impl Error {
    /// Builds an error of `code` with `message`.
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
            cause: None,
        }
    }

    /// The same error carrying `cause`.
    pub fn with_cause(self, cause: Cause) -> Error {
        Error {
            cause: Some(cause),
            ..self
        }
    }

    /// The status code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The structured fact behind the error, when it has one.
    pub fn cause(&self) -> Option<&Cause> {
        self.cause.as_ref()
    }

    /// The message without the code.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message, owned.
    pub fn into_message(self) -> String {
        self.message
    }

    /// The same error (code and cause) with `prefix: ` in front of its message.
    pub fn context(self, prefix: &str) -> Error {
        Error {
            message: format!("{prefix}: {}", self.message),
            ..self
        }
    }

    /// [`Code::InvalidArgument`].
    pub fn invalid_argument(message: impl Into<String>) -> Error {
        Error::new(Code::InvalidArgument, message)
    }

    /// [`Code::FailedPrecondition`].
    pub fn failed_precondition(message: impl Into<String>) -> Error {
        Error::new(Code::FailedPrecondition, message)
    }

    /// [`Code::NotFound`].
    pub fn not_found(message: impl Into<String>) -> Error {
        Error::new(Code::NotFound, message)
    }

    /// [`Code::Unimplemented`].
    pub fn unimplemented(message: impl Into<String>) -> Error {
        Error::new(Code::Unimplemented, message)
    }

    /// [`Code::ResourceExhausted`].
    pub fn resource_exhausted(message: impl Into<String>) -> Error {
        Error::new(Code::ResourceExhausted, message)
    }

    /// [`Code::Internal`].
    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(Code::Internal, message)
    }

    /// [`Code::Unavailable`].
    pub fn unavailable(message: impl Into<String>) -> Error {
        Error::new(Code::Unavailable, message)
    }
}

/// Shorthand for runtime results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn invalid(m: impl Into<String>) -> Error {
    Error::invalid_argument(m)
}

/// The one range check for an index the artifact gives (an allocation, a parameter number):
/// `value` must be in `[0, n)`. The message is `{field} is {value}, out of range [0, {n})`, then
/// ` ({what})` naming what `n` counts when `what` is not empty.
///
/// `field` is formatted only on failure: the check runs for every slice of every thunk.
pub(crate) fn check_index(
    field: fmt::Arguments<'_>,
    value: i64,
    n: usize,
    what: &str,
) -> Result<usize> {
    match usize::try_from(value) {
        Ok(i) if i < n => Ok(i),
        _ if what.is_empty() => Err(invalid(format!(
            "{field} is {value}, out of range [0, {n})"
        ))),
        _ => Err(invalid(format!(
            "{field} is {value}, out of range [0, {n}) ({what})"
        ))),
    }
}
