//! Module input: the one place that decides which front end reads a module file. Every entry
//! point that takes a module (`xla_compile --module_file`, `aot eval`, `aot check-hlo`, golden
//! cases) goes through [`read_module`].
//!
//! The format comes from the extension and is checked against the content, so that HLO text
//! named `.mlir` (or StableHLO named `.hlo`, or a binary proto named `.hlo`) gets an error saying
//! which format was found and which was expected, instead of a parse error at the first
//! character:
//!
//! | extension | format | front end |
//! | --- | --- | --- |
//! | `.hlo`, `.txt` | HLO text | [`hlo_text::parse_module`] |
//! | `.mlir` | StableHLO (MLIR text) | [`crate::stablehlo::parse_module`] |
//! | `.pb` | binary `HloModuleProto` | [`hlo::from_proto`] |
//! | `.mlirbc` | StableHLO portable artifact (MLIR bytecode, VHLO) | [`crate::stablehlo::parse_bytecode`] |
//! | `.jax_exported` | serialized JAX `Exported` | [`crate::jax_export`] (its module through `parse_bytecode`'s text) |
//!
//! A `.jax_exported` module takes its inputs and gives its outputs in the calling convention's
//! order (the flattened `in_avals`, `out_avals`): inputs the module dropped come back as unused
//! parameters and a multi-platform module's platform index is fixed to `cuda`'s.

use std::fmt;
use std::path::{Path, PathBuf};

use proto::prost::Message;
use thiserror::Error;

use hlo::HloModule;
use hlo_text::ParseError;

/// Largest module file read (binary protos included): bounds what a bad path can make a tool
/// allocate.
pub const MAX_MODULE_BYTES: u64 = 1 << 30;

/// A module file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// HLO text (`HloModule name ...`), as `as_text(dialect="hlo")` prints it.
    HloText,
    /// StableHLO MLIR text (`module @name ... { func.func ... }`), as JAX prints it.
    StableHlo,
    /// A binary `xla.HloModuleProto`.
    HloProto,
    /// A StableHLO portable artifact: MLIR bytecode in the VHLO dialect.
    MlirBytecode,
    /// A serialized JAX `Exported` (`jax.export`'s `serialize()`).
    JaxExported,
}

impl Format {
    /// The format for a file extension (without the dot).
    pub fn from_extension(ext: &str) -> Option<Format> {
        match ext {
            "hlo" | "txt" => Some(Format::HloText),
            "mlir" => Some(Format::StableHlo),
            "pb" => Some(Format::HloProto),
            "mlirbc" => Some(Format::MlirBytecode),
            "jax_exported" => Some(Format::JaxExported),
            _ => None,
        }
    }

    /// The extension a file in this format should have.
    pub fn extension(self) -> &'static str {
        match self {
            Format::HloText => ".hlo",
            Format::StableHlo => ".mlir",
            Format::HloProto => ".pb",
            Format::MlirBytecode => ".mlirbc",
            Format::JaxExported => ".jax_exported",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::HloText => "HLO text",
            Format::StableHlo => "StableHLO (MLIR text)",
            Format::HloProto => "a binary HloModuleProto",
            Format::MlirBytecode => "a StableHLO portable artifact (MLIR bytecode)",
            Format::JaxExported => "a serialized JAX Exported",
        })
    }
}

/// What the content of a file looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Content {
    /// Starts like HLO text (`HloModule`, `ENTRY`, or `name {` / `%name (` computations).
    HloText,
    /// Starts like MLIR text (`module`, `func.func`, `#alias = `, `"builtin.module"`).
    Mlir,
    /// MLIR bytecode (`ML\xefR`), what `jax.export` serializes.
    MlirBytecode,
    /// Not UTF-8 text: binary data.
    Binary,
    /// Text that starts like neither (left to the parser to report).
    Unknown,
}

impl fmt::Display for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Content::HloText => "HLO text",
            Content::Mlir => "StableHLO (MLIR text)",
            Content::MlirBytecode => "MLIR bytecode",
            Content::Binary => "binary data",
            Content::Unknown => "unrecognized text",
        })
    }
}

/// Why a module file could not be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum InputError {
    /// The file could not be read.
    #[error("cannot read module file {}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error (part of the message, not a separate source, so it prints once).
        error: std::io::Error,
    },
    /// The file is larger than [`MAX_MODULE_BYTES`].
    #[error("module file {} is {size} bytes, larger than the limit of {MAX_MODULE_BYTES}", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size in bytes as the file system reports it (checked before reading).
        size: u64,
    },
    /// The extension names no module format.
    #[error("{}: unknown extension \"{ext}\" (expected .hlo or .txt for HLO text, .mlir for StableHLO, .mlirbc for a StableHLO portable artifact, .jax_exported for a serialized JAX Exported, .pb for a binary HloModuleProto)", path.display())]
    UnknownExtension {
        /// The file.
        path: PathBuf,
        /// The extension (empty when none).
        ext: String,
    },
    /// The content is not in the format the extension names.
    #[error("{}: expected {expected} (from the extension), found {found}{}", path.display(), hint(*expected, *found))]
    WrongFormat {
        /// The file.
        path: PathBuf,
        /// The format the extension names.
        expected: Format,
        /// What the content looks like.
        found: Content,
    },
    /// The text front end failed.
    #[error("{}:{error}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Which front end failed: HLO text or StableHLO (binary protos do not get here).
        format: Format,
        /// The located error (part of the message, not a separate source, so it prints once).
        error: ParseError,
    },
    /// The module uses an opcode that neither the reference evaluator nor the compiler
    /// implements ([`UNSUPPORTED_OPCODES`]): refused once, at the door, with where.
    #[error("{}:{loc}: opcode {opcode} is not supported (instruction {instruction})", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// Where the first such instruction is.
        loc: hlo::SourceLoc,
        /// Its opcode's text name.
        opcode: &'static str,
        /// Its name.
        instruction: String,
    },
    /// The portable artifact did not read.
    #[error("{}: {error}", path.display())]
    Bytecode {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: crate::stablehlo::BytecodeError,
    },
    /// The serialized `Exported` did not read, or asks for what this project cannot honour.
    #[error("{}: {error}", path.display())]
    Exported {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: crate::jax_export::ExportedError,
    },
    /// The binary proto did not decode or convert.
    #[error("{}: invalid HloModuleProto: {message}", path.display())]
    Proto {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

fn hint(expected: Format, found: Content) -> String {
    let rename = |f: Format| format!(": name the file {} to read it as {f}", f.extension());
    match (expected, found) {
        (_, Content::HloText) => rename(Format::HloText),
        (_, Content::Mlir) => rename(Format::StableHlo),
        (_, Content::MlirBytecode) => rename(Format::MlirBytecode),
        (Format::HloText | Format::StableHlo, Content::Binary) => rename(Format::HloProto),
        _ => String::new(),
    }
}

/// Skips whitespace and `//` comment lines at the start of a text.
fn significant(text: &str) -> &str {
    let mut t = text.trim_start_matches('\u{feff}');
    loop {
        t = t.trim_start();
        if let Some(rest) = t.strip_prefix("//") {
            t = rest.find('\n').map_or("", |i| &rest[i..]);
        } else {
            return t;
        }
    }
}

/// Classifies the content of a module file from its first significant characters.
pub fn sniff(bytes: &[u8]) -> Content {
    if bytes.starts_with(b"ML\xefR") {
        return Content::MlirBytecode;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Content::Binary;
    };
    let t = significant(text);
    let word: &str = {
        let end = t
            .find(|c: char| {
                !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' || c == '%')
            })
            .unwrap_or(t.len());
        &t[..end]
    };
    let after = t[word.len()..].trim_start();
    match word {
        "HloModule" | "ENTRY" => Content::HloText,
        "module" | "func.func" => Content::Mlir,
        "" if t.starts_with('#')
            || t.starts_with("\"builtin.module\"")
            || t.starts_with("\"func.func\"") =>
        {
            Content::Mlir
        }
        // An HLO computation without the module header: `name {` or `%name (params) -> ... {`.
        w if !w.is_empty()
            && (after.starts_with('{') || (w.starts_with('%') && after.starts_with('('))) =>
        {
            Content::HloText
        }
        _ if text.contains('\0') => Content::Binary,
        _ => Content::Unknown,
    }
}

/// The format a path's extension names.
pub fn format_of(path: &Path) -> Result<Format, InputError> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    Format::from_extension(ext).ok_or_else(|| InputError::UnknownExtension {
        path: path.to_owned(),
        ext: ext.to_string(),
    })
}

/// Checks `bytes` against `format` and parses them with that format's front end. `path` is for
/// messages only.
pub fn parse_as(format: Format, bytes: &[u8], path: &Path) -> Result<HloModule, InputError> {
    let found = sniff(bytes);
    let wrong = || InputError::WrongFormat {
        path: path.to_owned(),
        expected: format,
        found,
    };
    match format {
        Format::MlirBytecode => {
            if found != Content::MlirBytecode {
                return Err(wrong());
            }
            crate::stablehlo::parse_bytecode(bytes).map_err(|error| InputError::Bytecode {
                path: path.to_owned(),
                error,
            })
        }
        Format::JaxExported => {
            if matches!(
                found,
                Content::HloText | Content::Mlir | Content::MlirBytecode
            ) {
                return Err(wrong());
            }
            let err = |error| InputError::Exported {
                path: path.to_owned(),
                error,
            };
            crate::jax_export::read(bytes)
                .and_then(|e| e.module())
                .map_err(err)
        }
        Format::HloProto => {
            if matches!(
                found,
                Content::HloText | Content::Mlir | Content::MlirBytecode
            ) {
                return Err(wrong());
            }
            let module =
                proto::xla::HloModuleProto::decode(bytes).map_err(|e| InputError::Proto {
                    path: path.to_owned(),
                    message: e.to_string(),
                })?;
            let with_config = proto::xla::HloModuleProtoWithConfig {
                hlo_module: Some(module),
                config: None,
            };
            hlo::from_proto(&with_config).map_err(|e| InputError::Proto {
                path: path.to_owned(),
                message: e.to_string(),
            })
        }
        Format::HloText | Format::StableHlo => {
            let ok = match format {
                Format::HloText => matches!(found, Content::HloText | Content::Unknown),
                _ => matches!(found, Content::Mlir | Content::Unknown),
            };
            if !ok {
                return Err(wrong());
            }
            let text = std::str::from_utf8(bytes).map_err(|_| wrong())?;
            let parsed = match format {
                Format::HloText => hlo_text::parse_module(text),
                _ => crate::stablehlo::parse_module(text),
            };
            parsed.map_err(|error| InputError::Parse {
                path: path.to_owned(),
                format,
                error,
            })
        }
    }
}

/// Reads a module file in the format its extension names (checked against the content).
pub fn read_module(path: &Path) -> Result<HloModule, InputError> {
    let format = format_of(path)?;
    let bytes = read_bounded(path)?;
    let module = parse_as(format, &bytes, path)?;
    check_supported(&module, path)?;
    Ok(module)
}

pub use hlo::UNSUPPORTED_OPCODES;

/// Refuses the first instruction (in computation and text order) whose opcode is in
/// [`UNSUPPORTED_OPCODES`].
pub fn check_supported(module: &HloModule, path: &Path) -> Result<(), InputError> {
    for comp in &module.computations {
        for instr in &comp.instructions {
            if UNSUPPORTED_OPCODES.contains(&instr.opcode) {
                return Err(InputError::Unsupported {
                    path: path.to_owned(),
                    loc: instr.loc,
                    opcode: instr.opcode.name(),
                    instruction: instr.name.clone(),
                });
            }
        }
    }
    Ok(())
}

/// Reads a file of at most [`MAX_MODULE_BYTES`].
pub fn read_bounded(path: &Path) -> Result<Vec<u8>, InputError> {
    let io = |error| InputError::Io {
        path: path.to_owned(),
        error,
    };
    let size = std::fs::metadata(path).map_err(io)?.len();
    if size > MAX_MODULE_BYTES {
        return Err(InputError::TooLarge {
            path: path.to_owned(),
            size,
        });
    }
    std::fs::read(path).map_err(|error| InputError::Io {
        path: path.to_owned(),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opcode_no_back_end_implements_is_refused_with_its_location() {
        let text = "HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  r = f32[8] rng(a, b), distribution=rng_uniform\n  ROOT n = f32[8] negate(r)\n}\n";
        let m = hlo_text::parse_module(text).unwrap();
        let e = check_supported(&m, Path::new("m.hlo")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "m.hlo:6:3: opcode rng is not supported (instruction r)"
        );
    }
}
