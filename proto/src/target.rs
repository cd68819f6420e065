//! Reading GPU target config files (`stream_executor.GpuTargetConfigProto` in protobuf text
//! format, as in XLA's `xla/backends/gpu/target_config/specs/*.txtpb`).
//!
//! Only reading and decoding live here; what a consumer accepts (a CUDA platform, a compute
//! capability it can target) is the consumer's decision.
use std::path::{Path, PathBuf};

use crate::stream_executor::GpuTargetConfigProto;
use crate::text::{parse_text_format, TextFormatError};

/// Why a target config could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetConfigError {
    /// The file could not be read.
    #[error("cannot read target config {path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error. Said in the message and not also exposed as the error's source, so
        /// a printer of the whole chain (`{:#}`) says it once.
        error: std::io::Error,
    },
    /// The file is not a valid text-format `GpuTargetConfigProto`.
    #[error("target config {origin}:{error}")]
    Parse {
        /// The file (or other origin) of the text.
        origin: String,
        /// Where and what; in the message only, as `Io`'s error is.
        error: TextFormatError,
    },
    /// The config parsed but lacks something every consumer needs.
    #[error("target config {origin}: {message}")]
    Incomplete {
        /// The file (or other origin) of the text.
        origin: String,
        /// What is missing.
        message: String,
    },
}

/// Parses a target config from text; `origin` names it in errors (usually the file path).
pub fn parse_target_config(
    text: &str,
    origin: &str,
) -> Result<GpuTargetConfigProto, TargetConfigError> {
    let config: GpuTargetConfigProto =
        parse_text_format(text).map_err(|error| TargetConfigError::Parse {
            origin: origin.to_owned(),
            error,
        })?;
    let incomplete = |message: &str| TargetConfigError::Incomplete {
        origin: origin.to_owned(),
        message: message.to_owned(),
    };
    let info = config
        .gpu_device_info
        .as_ref()
        .ok_or_else(|| incomplete("gpu_device_info is missing"))?;
    if info.compute_capability.is_none() {
        return Err(incomplete("gpu_device_info has no compute capability"));
    }
    if config.platform_name.is_empty() {
        return Err(incomplete("platform_name is missing"));
    }
    Ok(config)
}

/// Reads and parses a target config file.
pub fn load_target_config(path: &Path) -> Result<GpuTargetConfigProto, TargetConfigError> {
    let text = std::fs::read_to_string(path).map_err(|error| TargetConfigError::Io {
        path: path.to_owned(),
        error,
    })?;
    parse_target_config(&text, &path.display().to_string())
}
