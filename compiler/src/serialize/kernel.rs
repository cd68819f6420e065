//! `kernel_thunk`: a PTX kernel launch with its binary, launch dimensions and argument slices.
use proto::xla::gpu as pg;
use proto::xla::gpu::thunk_proto::Impl;

use super::ThunkBuilder;
use crate::codegen::EmittedKernel;
use crate::error::CompileError;
use crate::lower::Loc;

pub(super) fn thunk(
    tb: &ThunkBuilder<'_>,
    kernel: &EmittedKernel,
    args: &[Loc],
) -> Result<Impl, CompileError> {
    tb.target.check_kernel_ptx(&kernel.name, &kernel.ptx)?;
    let l = kernel.launch;
    let dim = |v: [u32; 3]| pg::Dim3DProto {
        x: v[0].into(),
        y: v[1].into(),
        z: v[2].into(),
    };
    Ok(Impl::KernelThunk(pg::KernelThunkProto {
        args: args
            .iter()
            .map(|&a| tb.asg.slice(a))
            .collect::<Result<_, _>>()?,
        written: kernel.written.clone(),
        kernel_name: kernel.name.clone(),
        launch_dimensions: Some(if tb.launch_dims_at_1000 {
            pg::LaunchDimensionsProto {
                block_counts_xyz: Some(dim(l.grid)),
                thread_counts_per_block_xyz: Some(dim(l.block)),
                ..Default::default()
            }
        } else {
            pg::LaunchDimensionsProto {
                block_counts: Some(dim(l.grid)),
                thread_counts_per_block: Some(dim(l.block)),
                ..Default::default()
            }
        }),
        shmem_bytes: kernel.dynamic_shared_bytes.into(),
        args_shape: Vec::new(),
        kernel_binary: Some(pg::KernelBinaryProto {
            ptx: kernel.ptx.clone(),
            cubin: Vec::new(),
        }),
    }))
}
