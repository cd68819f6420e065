//! The compilation target: what the compiler takes from a `GpuTargetConfigProto`.
//!
//! Only CUDA targets are supported. The compute capability, launch limits and shared-memory
//! limits come from `gpu_device_info`; the executable's ABI version from its `runtime_version`,
//! `dnn_version` and `cub_version`.
//!
//! # PTX ISA version
//!
//! Kernels carry a `.version` that the target's CUDA toolkit (12.8 or newer) accepts and that
//! is new enough for the SM:
//!
//! | SM | `.version` |
//! | --- | --- |
//! | sm_50 ... sm_90, sm_90a, sm_100, sm_100a, sm_101, sm_120 | 8.7 (CUDA 12.8) |
//! | sm_103, sm_121 (and their `a` variants) | 8.8 (CUDA 12.9) |
//! | sm_110 | 9.0 (CUDA 13.0) |
//!
//! `feature_extension: ACCELERATED_FEATURES` selects the `a` target (`sm_90a`).
//! `FAMILY_COMPATIBLE_FEATURES` compiles for the plain target, which every family member runs.
use std::path::Path;

use proto::stream_executor::{
    gpu_compute_capability_proto, gpu_device_info_proto, CudaComputeCapabilityProto,
    ExecutableAbiVersionProto, GpuComputeCapabilityProto, GpuTargetConfigProto,
};

use crate::codegen::CodegenTarget;
use crate::error::CompileError;

/// A CUDA compilation target.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The config it was made from.
    pub config: GpuTargetConfigProto,
    /// Where the config came from (a file path), for messages.
    pub origin: String,
    /// The compute capability copied into executables.
    pub capability: CudaComputeCapabilityProto,
    /// What the kernel emitters need.
    pub codegen: CodegenTarget,
}

/// The PTX ISA version the compiler prints for an SM (see the module docs).
pub fn ptx_version_for_sm(sm: u32) -> (u32, u32) {
    match sm {
        103 | 121 => (8, 8),
        110 => (9, 0),
        _ => (8, 7),
    }
}

fn positive(v: i64, default: u64) -> u64 {
    u64::try_from(v).ok().filter(|&v| v > 0).unwrap_or(default)
}

impl Target {
    /// Builds a target from a parsed config; `origin` names it in errors.
    pub fn from_config(config: GpuTargetConfigProto, origin: &str) -> Result<Target, CompileError> {
        let err = |message: String| CompileError::Target {
            origin: origin.to_owned(),
            message,
        };
        if config.platform_name != "CUDA" {
            return Err(err(format!(
                "platform_name is \"{}\": only CUDA targets are supported (ROCm and SYCL configs \
                 are not)",
                config.platform_name
            )));
        }
        let info = config
            .gpu_device_info
            .as_ref()
            .ok_or_else(|| err("gpu_device_info is missing".into()))?;
        let capability = match &info.compute_capability {
            Some(gpu_device_info_proto::ComputeCapability::CudaComputeCapability(c)) => *c,
            Some(gpu_device_info_proto::ComputeCapability::RocmComputeCapability(_)) => {
                return Err(err(
                    "gpu_device_info has a ROCm compute capability: only CUDA targets are \
                     supported"
                        .into(),
                ))
            }
            Some(gpu_device_info_proto::ComputeCapability::OneapiComputeCapability(_)) => {
                return Err(err(
                    "gpu_device_info has a oneAPI compute capability: only CUDA targets are \
                     supported"
                        .into(),
                ))
            }
            None => return Err(err("gpu_device_info has no compute capability".into())),
        };
        if !(3..=20).contains(&capability.major) || !(0..=9).contains(&capability.minor) {
            return Err(err(format!(
                "cuda_compute_capability {}.{} is not a CUDA compute capability",
                capability.major, capability.minor
            )));
        }
        let sm = (capability.major * 10 + capability.minor) as u32;
        let accelerated = capability.feature_extension
            == proto::stream_executor::cuda_compute_capability_proto::FeatureExtension::AcceleratedFeatures
                as i32;
        let max_grid = [
            positive(info.block_dim_limit_x, 2_147_483_647),
            positive(info.block_dim_limit_y, 65_535),
            positive(info.block_dim_limit_z, 65_535),
        ];
        let codegen = CodegenTarget {
            sm,
            accelerated,
            ptx_version: ptx_version_for_sm(sm),
            warp_size: positive(info.threads_per_warp.into(), 32) as u32,
            max_threads_per_block: positive(info.threads_per_block_limit.into(), 1024) as u32,
            max_shared_memory_per_block: positive(info.shared_memory_per_block.into(), 49_152)
                as u32,
            max_grid,
            core_count: positive(info.core_count.into(), 1) as u32,
        };
        Ok(Target {
            origin: origin.to_owned(),
            capability,
            codegen,
            config,
        })
    }

    /// Reads a target config file (protobuf text format) and builds the target.
    pub fn load(path: &Path) -> Result<Target, CompileError> {
        let config = proto::load_target_config(path)?;
        Target::from_config(config, &path.display().to_string())
    }

    /// Parses a target config from text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Target, CompileError> {
        let config = proto::parse_target_config(text, origin)?;
        Target::from_config(config, origin)
    }

    /// The `gpu_compute_capability` of executables for this target.
    pub fn compute_capability_proto(&self) -> GpuComputeCapabilityProto {
        GpuComputeCapabilityProto {
            compute_capability: Some(
                gpu_compute_capability_proto::ComputeCapability::CudaComputeCapability(
                    self.capability,
                ),
            ),
        }
    }

    /// The `executable_abi_version` of executables for this target (see docs/artifact.md).
    pub fn abi_version(&self) -> ExecutableAbiVersionProto {
        let info = self.config.gpu_device_info.clone().unwrap_or_default();
        ExecutableAbiVersionProto {
            platform_name: self.config.platform_name.clone(),
            platform_version: Some(
                proto::stream_executor::executable_abi_version_proto::PlatformVersion::CudaPlatformVersion(
                    proto::stream_executor::executable_abi_version_proto::CudaPlatformVersionProto {
                        cuda_toolkit_version: info.runtime_version,
                        cudnn_version: info.dnn_version,
                        cub_version: info.cub_version,
                    },
                ),
            ),
        }
    }
}
