//! Device code: every kernel's PTX assembled into a cubin by NVIDIA's `ptxas` and embedded next
//! to the PTX ([`crate::CompileOptions::cubin`]), as XLA's GPU compiler does. Texts shared by
//! several kernel thunks are assembled once; the result depends only on the PTX, the target and
//! the `ptxas` version, so it is deterministic for a given toolchain.
use std::collections::HashMap;

use proto::xla::gpu::{GpuExecutableProto, KernelThunkProto};

use crate::error::CompileError;
use crate::target::Target;

/// Fills `kernel_binary.cubin` of every kernel thunk of `exe` (nested sequences included).
pub fn embed(exe: &mut GpuExecutableProto, target: &Target) -> Result<(), CompileError> {
    let gpu = target.codegen.target_name();
    let kernels = proto::kernel_thunks_mut(&mut exe.thunks);
    if kernels.is_empty() {
        return Ok(());
    }
    let fail = |kernel: &KernelThunkProto, message: String| CompileError::Ptxas {
        kernel: kernel.kernel_name.clone(),
        gpu: gpu.clone(),
        message,
    };
    // Found once per process: finding it may start `python3` to locate the pip wheel.
    static PTXAS: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    let ptxas = PTXAS.get_or_init(ptx::ptxas::find).clone().ok_or_else(|| {
        fail(
            kernels[0],
            "ptxas not found (set PTXAS, put it on PATH, or pip install nvidia-cuda-nvcc-cu12)"
                .into(),
        )
    })?;
    let mut done: HashMap<String, Vec<u8>> = HashMap::new();
    for k in kernels {
        let Some(bin) = k.kernel_binary.as_ref() else {
            continue;
        };
        let cubin = match done.get(&bin.ptx) {
            Some(c) => c.clone(),
            None => {
                let c = ptx::ptxas::cubin_with(&ptxas, &bin.ptx, &gpu, &[])
                    .map_err(|e| fail(k, e.to_string()))?;
                done.insert(bin.ptx.clone(), c.clone());
                c
            }
        };
        if let Some(bin) = k.kernel_binary.as_mut() {
            bin.cubin = cubin;
        }
    }
    Ok(())
}
