//! StableHLO portable artifacts: MLIR bytecode (`ML\xefR`) holding the VHLO dialect, what
//! `jax.export` serializes and StableHLO promises to read for five years.
//!
//! One lowering: the bytecode is read into a generic op tree (`container`), its VHLO ops are
//! converted to StableHLO (`vhlo`) and printed as StableHLO MLIR text ([`print`]), which the
//! text front end ([`super::parse_module`]) reads like any `.mlir` file. Nothing after the text
//! knows the module came from bytecode.
//!
//! # What is read
//!
//! - MLIR bytecode versions 0 to [`MAX_BYTECODE_VERSION`] (every version a StableHLO 0.9.0 or
//!   later portable artifact uses); the VHLO version is the producer string
//!   (`StableHLO_v1.10.4`) and may be up to [`MAX_VHLO_VERSION`]. A newer version of either is
//!   refused naming both versions.
//! - Every VHLO op of `stablehlo/dialect/VhloOps.td` up to VHLO 1.20 ([`vhlo_ops`]), each to
//!   its StableHLO op; what the text front end then accepts is its own list
//!   ([`super::supported_ops`]).
//! - Ops of other dialects that portable artifacts carry since VHLO 1.11 (a one-device
//!   `sdy.mesh`) pass through as text.
//!
//! # Errors
//!
//! A [`BytecodeError`]: malformed bytes name the byte offset; every count and length read from
//! the bytes is checked against what remains before anything is allocated, nesting is bounded
//! ([`MAX_NESTING`], [`attrs::MAX_ATTR_DEPTH`]), and so is the printed text.

mod attrs;
mod container;
mod encoding;
mod print;
mod sdy;
mod vhlo;
mod vhlo_ops;

use thiserror::Error;

use hlo::HloModule;
use hlo_text::ParseError;

pub use attrs::MAX_ATTR_DEPTH;
pub use container::MAX_BYTECODE_VERSION;

/// Deepest nesting of regions read.
pub const MAX_NESTING: usize = 64;

/// The newest VHLO version (major, minor) read; patch releases do not change the op set.
pub const MAX_VHLO_VERSION: (u64, u64) = (1, 20);

/// Why a portable artifact could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BytecodeError {
    /// The bytes do not start with `ML\xefR`.
    #[error("not MLIR bytecode: the data does not start with ML\\xefR")]
    NotBytecode,
    /// The MLIR bytecode version is newer than this reader knows.
    #[error("MLIR bytecode version {found} is newer than the newest this reader knows ({known})")]
    NewerBytecode {
        /// The file's version.
        found: u64,
        /// The newest version read.
        known: u64,
    },
    /// The StableHLO (VHLO) version of the producer is newer than this reader knows.
    #[error("StableHLO portable artifact of VHLO version {found} is newer than the newest this reader knows ({known})")]
    NewerVhlo {
        /// The producer's version (`1.21.0`).
        found: String,
        /// The newest version read (`1.20`).
        known: String,
    },
    /// The producer is not a StableHLO portable artifact writer.
    #[error("not a StableHLO portable artifact: the producer is {0:?}, not StableHLO_vX.Y.Z")]
    NotPortableArtifact(String),
    /// The bytes break the format.
    #[error("malformed MLIR bytecode at byte {offset}: {message}")]
    Malformed {
        /// Byte offset in the file.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// Well-formed, but using something this reader does not convert.
    #[error("{0}")]
    Unsupported(String),
    /// The converted StableHLO text did not parse or lower.
    #[error("{error} (in the StableHLO text converted from the bytecode)")]
    Text {
        /// The text front end's error (its line and column are in the converted text, which
        /// [`to_stablehlo_text`] returns).
        error: ParseError,
    },
}

/// The `(major, minor, patch)` of a `StableHLO_vX.Y.Z` producer.
fn vhlo_version(producer: &str) -> Result<(u64, u64, u64), BytecodeError> {
    let bad = || BytecodeError::NotPortableArtifact(producer.to_string());
    let v = producer.strip_prefix("StableHLO_v").ok_or_else(bad)?;
    let parts: Vec<u64> = v
        .split('.')
        .map(|p| p.parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    match parts.as_slice() {
        [a, b, c] => Ok((*a, *b, *c)),
        _ => Err(bad()),
    }
}

/// How a serialized `Exported`'s calling convention reshapes `main` (see
/// [`crate::jax_export::Exported::main_adapter`]): the platform-index argument of a
/// multi-platform module becomes a constant, and the inputs the module dropped come back as
/// unused arguments, so that `main` takes every input in the calling convention's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MainAdapter {
    /// The platform index to fix, when `main` takes one as its first argument.
    pub platform_index: Option<i32>,
    /// Per input in calling-convention order: its position among the module's arguments
    /// (after the platform index), or `None` when the module dropped it; and its MLIR type.
    pub inputs: Vec<(Option<usize>, String)>,
}

/// The portable artifact `bytes` as StableHLO MLIR text (what [`parse_bytecode`] hands to the
/// text front end).
pub fn to_stablehlo_text(bytes: &[u8]) -> Result<String, BytecodeError> {
    to_stablehlo_text_adapted(bytes, None)
}

/// [`to_stablehlo_text`], with `main` reshaped by `adapter`.
pub fn to_stablehlo_text_adapted(
    bytes: &[u8],
    adapter: Option<&MainAdapter>,
) -> Result<String, BytecodeError> {
    let bc = container::Bytecode::parse(bytes)?;
    let (major, minor, patch) = vhlo_version(&bc.producer)?;
    if (major, minor) > MAX_VHLO_VERSION {
        return Err(BytecodeError::NewerVhlo {
            found: format!("{major}.{minor}.{patch}"),
            known: format!("{}.{}", MAX_VHLO_VERSION.0, MAX_VHLO_VERSION.1),
        });
    }
    let table = attrs::Table::new(&bc);
    // Shared attributes can print many times; bound the text by the input's size.
    let limit = bytes.len().saturating_mul(64).saturating_add(1 << 24);
    let mut p = print::Printer::new(&table, limit);
    p.adapter = adapter;
    p.module(&bc.top)?;
    if let Some(a) = adapter {
        if !p.adapted {
            return Err(BytecodeError::Unsupported(format!(
                "the module has no public function main to take the {} inputs",
                a.inputs.len()
            )));
        }
    }
    Ok(p.out)
}

/// Reads a StableHLO portable artifact into an HLO module (verified, as
/// [`super::parse_module`] does).
pub fn parse_bytecode(bytes: &[u8]) -> Result<HloModule, BytecodeError> {
    let text = to_stablehlo_text(bytes)?;
    super::parse_module(&text).map_err(|error| BytecodeError::Text { error })
}

/// Each function's name and its module text, or why it does not convert.
pub type FunctionTexts = Vec<(String, Result<String, BytecodeError>)>;

/// Each function of the portable artifact `bytes` as a module of its own (StableHLO text), or
/// why it does not convert: a survey of a module of independent functions (StableHLO's own
/// per-version test artifacts are such modules).
pub fn functions_as_text(bytes: &[u8]) -> Result<FunctionTexts, BytecodeError> {
    let bc = container::Bytecode::parse(bytes)?;
    vhlo_version(&bc.producer)?;
    let table = attrs::Table::new(&bc);
    let limit = bytes.len().saturating_mul(64).saturating_add(1 << 24);
    print::Printer::new(&table, limit).functions(&bc.top)
}

/// The VHLO op mnemonics read (`abs_v1`, `add_v1`, ...).
pub fn vhlo_ops() -> Vec<&'static str> {
    vhlo_ops::VHLO_OPS.iter().map(|o| o.0).collect()
}
