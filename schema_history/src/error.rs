//! Errors of the schema history crate.
use std::path::PathBuf;

/// Why a surface could not be built, a snapshot read or written, or a diff run.
///
/// These are usage or internal errors (exit status 2 of `aot schema`), never findings.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A date is not `YYYY-MM-DD`.
    #[error("bad date {0:?}: expected YYYY-MM-DD")]
    BadDate(String),
    /// A `git` command failed or could not be started.
    #[error("git {args}: {message}")]
    Git {
        /// The arguments given to git.
        args: String,
        /// What git said (its stderr) or why it could not run.
        message: String,
    },
    /// protox could not compile the schema.
    #[error("compiling the protos of {side}: {message}")]
    Compile {
        /// Which side (a git revision or "working tree").
        side: String,
        /// protox's diagnostic.
        message: String,
    },
    /// No `.proto` file was found to compile.
    #[error("no .proto files under {dirs} in {side}")]
    NoProtoFiles {
        /// Which side (a git revision or "working tree").
        side: String,
        /// The proto directories searched.
        dirs: String,
    },
    /// The root message is not in the compiled schema.
    #[error("root message {root} is not defined in {side}")]
    NoRoot {
        /// The requested root.
        root: String,
        /// Which side (a git revision or "working tree"; "the schema" where the caller
        /// compiled no revision).
        side: String,
    },
    /// A descriptor set does not decode.
    #[error("descriptor set of {what} does not decode: {message}")]
    Descriptors {
        /// Where the set came from.
        what: String,
        /// The decoder's message.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A repository file was refused before being read (a link, not a regular file, too
    /// large): see [`crate::read_file`].
    #[error("{}: {refusal}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why it was refused.
        refusal: crate::bounded_read::Refusal,
    },
    /// The policy file is malformed.
    #[error("{path}:{line}: {key}: {message}")]
    Policy {
        /// The policy file as shown to the user.
        path: String,
        /// 1-based line of the offending key or value.
        line: u32,
        /// The dotted key (`breaking.rules.renamed`).
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A JSON or TOML file does not have the expected shape.
    #[error("{path}: {message}")]
    Format {
        /// The file (or git object) that is malformed.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn format(path: impl std::fmt::Display, message: impl std::fmt::Display) -> Error {
        Error::Format {
            path: path.to_string(),
            message: message.to_string(),
        }
    }
}
