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
        proto::check_compute_capability(capability.major, capability.minor)
            .map_err(|e| err(e.to_string()))?;
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

    /// The CUDA toolkit executables for this target declare (the config's `runtime_version`),
    /// as written and as major.minor; `None` when it declares none (empty or 0.0.0).
    pub fn declared_toolkit(&self) -> Option<(&str, ptx::Toolkit)> {
        let written = self
            .config
            .gpu_device_info
            .as_ref()?
            .runtime_version
            .as_str();
        // Read as the runtime reads it (`proto::Version`): a version it would refuse
        // bounds nothing here either.
        let v = proto::Version::parse(written).filter(|v| !v.is_zero())?;
        let toolkit = ptx::Toolkit {
            major: u32::try_from(v.major).ok()?,
            minor: u32::try_from(v.minor).ok()?,
        };
        Some((written, toolkit))
    }

    /// The compute capability executables for this target declare, as a `.target` architecture
    /// with its feature set.
    pub fn arch(&self) -> ptx::Arch {
        use proto::stream_executor::cuda_compute_capability_proto::FeatureExtension;
        let features = match FeatureExtension::try_from(self.capability.feature_extension) {
            Ok(FeatureExtension::AcceleratedFeatures) => ptx::Features::Accelerated,
            Ok(FeatureExtension::FamilyCompatibleFeatures) => ptx::Features::Family,
            _ => ptx::Features::Baseline,
        };
        ptx::Arch {
            major: self.capability.major.unsigned_abs(),
            minor: self.capability.minor.unsigned_abs(),
            features,
        }
    }

    /// Refuses a kernel whose PTX the runtime would refuse in this target's executables: a
    /// `.version` that needs a newer CUDA toolkit than [`Target::declared_toolkit`], or a
    /// `.target` that does not run on [`Target::arch`] (the loader's step 6 checks the same).
    pub fn check_kernel_ptx(&self, kernel: &str, ptx_text: &str) -> Result<(), CompileError> {
        let err = |message: String| CompileError::KernelHeader {
            kernel: kernel.to_owned(),
            message,
        };
        let outline = ptx::outline(ptx_text).map_err(|e| {
            err(format!(
                "the emitted PTX does not parse: line {}:{}: {}",
                e.line, e.column, e.message
            ))
        })?;
        let v = outline.version;
        let need = ptx::min_toolkit(v);
        if let Some((written, have)) = self.declared_toolkit() {
            if !need.met_by(have) {
                return Err(err(format!(
                    "its PTX has .version {}.{} (PTX ISA {}.{}), which needs {need}, but the executable declares CUDA toolkit {written} (the target config's runtime_version, {}); the runtime refuses such an artifact",
                    v.major, v.minor, v.major, v.minor, self.origin
                )));
            }
        }
        let cc = self.arch();
        let arch = &outline.target.arch;
        let target = ptx::Arch::parse(arch).ok_or_else(|| {
            err(format!(
                "its PTX has .target {arch}, not an sm_XY, sm_XYa or sm_XYf architecture"
            ))
        })?;
        target.runs_on(&cc).map_err(|m| {
            err(format!(
                "its PTX has .target {target}, but the executable's gpu_compute_capability is {cc} ({}.{}); {}",
                cc.major,
                cc.minor,
                target.rule(m)
            ))
        })
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

#[cfg(test)]
mod kernel_header_tests {
    use super::*;

    fn target(spec: &str) -> Target {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/target_specs")
            .join(format!("{spec}.txtpb"));
        Target::load(&path).unwrap()
    }

    fn ptx(version: &str, arch: &str) -> String {
        format!(".version {version}\n.target {arch}\n.address_size 64\n.visible .entry k()\n{{\n  ret;\n}}\n")
    }

    fn message(t: &Target, version: &str, arch: &str) -> String {
        let origin = &t.origin;
        t.check_kernel_ptx("k", &ptx(version, arch))
            .unwrap_err()
            .to_string()
            .replace(origin.as_str(), "SPEC")
    }

    #[test]
    fn what_the_compiler_emits_passes() {
        for spec in ["h100_sxm", "a100_sxm_80", "b200", "v100", "rtx6000pro"] {
            let t = target(spec);
            let (v, arch) = (t.codegen.ptx_version, t.codegen.target_name());
            t.check_kernel_ptx("k", &ptx(&format!("{}.{}", v.0, v.1), &arch))
                .unwrap();
        }
    }

    #[test]
    fn a_ptx_isa_newer_than_the_declared_toolkit_is_refused() {
        let h100 = target("h100_sxm");
        assert_eq!(
            message(&h100, "9.0", "sm_90a"),
            "kernel k: its PTX has .version 9.0 (PTX ISA 9.0), which needs CUDA toolkit 13.0 or newer, but the executable declares CUDA toolkit 12.8.0 (the target config's runtime_version, SPEC); the runtime refuses such an artifact"
        );
        // a100_sxm_80 declares no toolkit: the runtime compares with its own.
        target("a100_sxm_80")
            .check_kernel_ptx("k", &ptx("9.0", "sm_80"))
            .unwrap();
    }

    /// XLA's b300 and gb300 configs declare CUDA 12.8.0, but sm_103 needs PTX ISA 8.8 (CUDA 12.9):
    /// the compiler refuses rather than write an artifact whose kernels a 12.8 runtime cannot JIT.
    #[test]
    fn sm_103_kernels_need_a_newer_toolkit_than_xla_s_gb300_config_declares() {
        let gb300 = target("gb300");
        let (v, arch) = (gb300.codegen.ptx_version, gb300.codegen.target_name());
        assert_eq!(
            message(&gb300, &format!("{}.{}", v.0, v.1), &arch),
            "kernel k: its PTX has .version 8.8 (PTX ISA 8.8), which needs CUDA toolkit 12.9 or newer, but the executable declares CUDA toolkit 12.8.0 (the target config's runtime_version, SPEC); the runtime refuses such an artifact"
        );
    }

    #[test]
    fn a_target_that_does_not_run_on_the_capability_is_refused() {
        let h100 = target("h100_sxm");
        assert_eq!(
            message(&h100, "8.7", "sm_100a"),
            "kernel k: its PTX has .target sm_100a, but the executable's gpu_compute_capability is sm_90a (9.0); PTX for sm_100a runs only on compute capability 10.0 with accelerated features"
        );
        assert_eq!(
            message(&target("a100_sxm_80"), "8.7", "sm_80a"),
            "kernel k: its PTX has .target sm_80a, but the executable's gpu_compute_capability is sm_80 (8.0); PTX for sm_80a runs only on compute capability 8.0 with accelerated features"
        );
        assert_eq!(
            message(&h100, "8.7", "compute_90"),
            "kernel k: its PTX has .target compute_90, not an sm_XY, sm_XYa or sm_XYf architecture"
        );
        h100.check_kernel_ptx("k", &ptx("8.7", "sm_80")).unwrap();
    }
}
