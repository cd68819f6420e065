//! Why an entry point refused a case, as the class the report counts it under: the variant is
//! the kind of refusal, its [`Display`](std::fmt::Display) the class's name in the report
//! (`load INVALID_ARGUMENT`, `parse Syntax`, `head limit nesting`).
use runtime::Code;

/// An entry point's refusal of one case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The input of a text target is not UTF-8.
    #[error("utf8")]
    Utf8,
    /// The `store` target's seed store could not be made.
    #[error("setup")]
    Setup,
    /// The loader refused the artifact.
    #[error("load {0}")]
    Load(Code),
    /// The artifact loaded and was deliberately not run (why).
    #[error("load ok, not run ({0})")]
    NotRun(&'static str),
    /// The execution failed.
    #[error("run {0}")]
    Run(Code),
    /// The HLO text or StableHLO text parser refused the text.
    #[error("parse {0:?}")]
    Parse(hlo_text::ParseErrorKind),
    /// The HLO verifier refused the module.
    #[error("verify")]
    Verify,
    /// The MLIR bytecode reader refused the bytes.
    #[error("{0}")]
    Bytecode(BytecodeClass),
    /// The `jax.export` reader refused the bytes.
    #[error("{0}")]
    Exported(ExportedClass),
    /// The PTX parser refused the text.
    #[error("parse")]
    PtxParse,
    /// The target config parser refused the text.
    #[error("{0}")]
    Config(ConfigClass),
    /// The target config parsed but describes no device.
    #[error("device {0}")]
    Device(Code),
    /// The `proto` target's base file was refused.
    #[error("{0}")]
    Schema(SchemaClass),
    /// The `proto` target's head file was refused.
    #[error("head {0}")]
    Head(SchemaClass),
    /// The `store` target's case directory could not be made.
    #[error("setup {0}")]
    StoreSetup(String),
    /// A line of the `store` target's script did not apply.
    #[error("tamper not applied")]
    TamperNotApplied,
    /// `aot goldens verify` found integrity problems (the expected outcome).
    #[error("verify found problems")]
    VerifyFoundProblems,
    /// `aot goldens verify` or `list` failed.
    #[error("verify error")]
    VerifyError,
}

/// How the MLIR bytecode reader refused (its error's kind, without the details).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BytecodeClass {
    /// Not MLIR bytecode.
    #[error("not bytecode")]
    NotBytecode,
    /// A bytecode version newer than the reader's.
    #[error("newer bytecode")]
    NewerBytecode,
    /// A VHLO version newer than the reader's.
    #[error("newer vhlo")]
    NewerVhlo,
    /// Bytecode that is not a portable artifact.
    #[error("not a portable artifact")]
    NotPortableArtifact,
    /// Malformed bytecode.
    #[error("malformed")]
    Malformed,
    /// A construct the reader does not support.
    #[error("unsupported")]
    Unsupported,
    /// The module's text form does not parse.
    #[error("text parse {0:?}")]
    Text(hlo_text::ParseErrorKind),
    /// Anything else.
    #[error("other")]
    Other,
}

impl From<&hlo_front::BytecodeError> for BytecodeClass {
    fn from(e: &hlo_front::BytecodeError) -> BytecodeClass {
        use hlo_front::BytecodeError as E;
        match e {
            E::NotBytecode => BytecodeClass::NotBytecode,
            E::NewerBytecode { .. } => BytecodeClass::NewerBytecode,
            E::NewerVhlo { .. } => BytecodeClass::NewerVhlo,
            E::NotPortableArtifact(_) => BytecodeClass::NotPortableArtifact,
            E::Malformed { .. } => BytecodeClass::Malformed,
            E::Unsupported(_) => BytecodeClass::Unsupported,
            E::Text { error } => BytecodeClass::Text(error.kind),
            _ => BytecodeClass::Other,
        }
    }
}

/// How the `jax.export` reader refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExportedClass {
    /// Malformed flatbuffer.
    #[error("malformed")]
    Malformed,
    /// An unsupported field, without its index (`in_avals[3]` and `in_avals[4]` are one
    /// class).
    #[error("unsupported {0}")]
    Unsupported(String),
    /// The embedded module's bytecode.
    #[error("module {0}")]
    Module(BytecodeClass),
    /// Anything else.
    #[error("other")]
    Other,
}

impl From<&hlo_front::ExportedError> for ExportedClass {
    fn from(e: &hlo_front::ExportedError) -> ExportedClass {
        use hlo_front::ExportedError as E;
        match e {
            E::Malformed(_) => ExportedClass::Malformed,
            E::Unsupported { field, .. } => {
                ExportedClass::Unsupported(field.split('[').next().unwrap_or(field).to_owned())
            }
            E::Module(b) => ExportedClass::Module(BytecodeClass::from(b)),
            _ => ExportedClass::Other,
        }
    }
}

/// How the target config parser refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigClass {
    /// Not text format.
    #[error("parse")]
    Parse,
    /// A required field is missing.
    #[error("incomplete")]
    Incomplete,
    /// Anything else.
    #[error("other")]
    Other,
}

impl From<&proto::TargetConfigError> for ConfigClass {
    fn from(e: &proto::TargetConfigError) -> ConfigClass {
        match e {
            proto::TargetConfigError::Parse { .. } => ConfigClass::Parse,
            proto::TargetConfigError::Incomplete { .. } => ConfigClass::Incomplete,
            _ => ConfigClass::Other,
        }
    }
}

/// How the schema bot refused one `.proto` file of the `proto` target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaClass {
    /// Nesting deeper than `schema_history::MAX_NESTING`, refused before compiling.
    #[error("limit nesting")]
    LimitNesting,
    /// A name longer than `schema_history::MAX_NAME_BYTES`, refused before compiling.
    #[error("limit name")]
    LimitName,
    /// Any other compile error (the statement and import bounds included).
    #[error("compile")]
    Compile,
    /// The compiled file gives no model.
    #[error("model compile")]
    Model,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_read_as_the_report_names_them() {
        assert_eq!(
            Refusal::Load(Code::InvalidArgument).to_string(),
            "load INVALID_ARGUMENT"
        );
        assert_eq!(
            Refusal::NotRun("replicas").to_string(),
            "load ok, not run (replicas)"
        );
        assert_eq!(
            Refusal::Head(SchemaClass::Model).to_string(),
            "head model compile"
        );
        assert_eq!(
            Refusal::Exported(ExportedClass::Module(BytecodeClass::Text(
                hlo_text::ParseErrorKind::Syntax
            )))
            .to_string(),
            "module text parse Syntax"
        );
        assert_eq!(
            Refusal::StoreSetup("disk full".into()).to_string(),
            "setup disk full"
        );
    }
}
