//! Runtime errors: an absl-style status code plus a message that names the artifact field, the
//! bad value and the bound it violated.
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

/// A runtime failure. `Display` is `CODE: message`, e.g.
/// `FAILED_PRECONDITION: executable_abi_version.cuda_platform_version.cudnn_version: ...`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// See [`Code::InvalidArgument`].
    #[error("INVALID_ARGUMENT: {0}")]
    InvalidArgument(String),
    /// See [`Code::FailedPrecondition`].
    #[error("FAILED_PRECONDITION: {0}")]
    FailedPrecondition(String),
    /// See [`Code::NotFound`].
    #[error("NOT_FOUND: {0}")]
    NotFound(String),
    /// See [`Code::Unimplemented`].
    #[error("UNIMPLEMENTED: {0}")]
    Unimplemented(String),
    /// See [`Code::ResourceExhausted`].
    #[error("RESOURCE_EXHAUSTED: {0}")]
    ResourceExhausted(String),
    /// See [`Code::Internal`].
    #[error("INTERNAL: {0}")]
    Internal(String),
    /// See [`Code::Unavailable`].
    #[error("UNAVAILABLE: {0}")]
    Unavailable(String),
}

impl Error {
    /// The status code.
    pub fn code(&self) -> Code {
        match self {
            Error::InvalidArgument(_) => Code::InvalidArgument,
            Error::FailedPrecondition(_) => Code::FailedPrecondition,
            Error::NotFound(_) => Code::NotFound,
            Error::Unimplemented(_) => Code::Unimplemented,
            Error::ResourceExhausted(_) => Code::ResourceExhausted,
            Error::Internal(_) => Code::Internal,
            Error::Unavailable(_) => Code::Unavailable,
        }
    }

    /// The message without the code.
    pub fn message(&self) -> &str {
        match self {
            Error::InvalidArgument(m)
            | Error::FailedPrecondition(m)
            | Error::NotFound(m)
            | Error::Unimplemented(m)
            | Error::ResourceExhausted(m)
            | Error::Internal(m)
            | Error::Unavailable(m) => m,
        }
    }

    /// Builds an error of `code` with `message`.
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        let m = message.into();
        match code {
            Code::InvalidArgument => Error::InvalidArgument(m),
            Code::FailedPrecondition => Error::FailedPrecondition(m),
            Code::NotFound => Error::NotFound(m),
            Code::Unimplemented => Error::Unimplemented(m),
            Code::ResourceExhausted => Error::ResourceExhausted(m),
            Code::Internal => Error::Internal(m),
            Code::Unavailable => Error::Unavailable(m),
        }
    }

    /// The same error with `prefix: ` in front of its message.
    pub fn context(self, prefix: &str) -> Error {
        let code = self.code();
        Error::new(code, format!("{prefix}: {}", self.message()))
    }
}

/// Shorthand for runtime results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn invalid(m: impl Into<String>) -> Error {
    Error::InvalidArgument(m.into())
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
