//! [`ThunkKind::Kernel`] and [`ThunkKind::CustomKernel`] → `kernel_thunk`, `custom_kernel_thunk`.
use super::*;

fn dim(d: [u32; 3]) -> Dim3DProto {
    Dim3DProto {
        x: d[0].into(),
        y: d[1].into(),
        z: d[2].into(),
    }
}

fn launch(grid: [u32; 3], block: [u32; 3]) -> LaunchDimensionsProto {
    // The v1 numbers (1, 2), which every runtime reads; see LaunchDimensionsProto.
    LaunchDimensionsProto {
        block_counts: Some(dim(grid)),
        thread_counts_per_block: Some(dim(block)),
        ..Default::default()
    }
}

pub(super) fn kernel(k: &KernelThunk) -> Impl {
    Impl::KernelThunk(KernelThunkProto {
        args: k.args.iter().map(sl).collect(),
        written: k.written.clone(),
        kernel_name: k.kernel_name.clone(),
        launch_dimensions: Some(launch(k.grid, k.block)),
        shmem_bytes: k.shmem_bytes.into(),
        args_shape: k.args_shape.clone(),
        kernel_binary: Some(KernelBinaryProto {
            ptx: k.module.text.clone(),
            cubin: k.module.cubin.clone(),
        }),
    })
}

pub(super) fn custom_kernel(k: &CustomKernelThunk) -> Impl {
    use proto::stream_executor::{
        kernel_loader_spec_proto::Payload, BlockDimProto, CudaCubinProto, CudaPtxProto,
        Dim3DProto as SeDim3, InProcessSymbolProto, KernelLoaderSpecProto, ThreadDimProto,
    };
    let d = |v: [u32; 3]| {
        Some(SeDim3 {
            x: v[0].into(),
            y: v[1].into(),
            z: v[2].into(),
        })
    };
    let payload = match &k.code {
        KernelCode::Ptx(p) => Some(Payload::Ptx(CudaPtxProto { data: p.clone() })),
        KernelCode::Cubin(c) => Some(Payload::Cubin(CudaCubinProto { data: c.clone() })),
        KernelCode::Symbol(s) => Some(Payload::InProcessSymbol(InProcessSymbolProto {
            persistent_name: s.clone(),
        })),
        KernelCode::None => None,
    };
    Impl::CustomKernelThunk(CustomKernelThunkProto {
        args: k.args.iter().map(shaped).collect(),
        written: k.written.clone(),
        custom_kernel: Some(CustomKernelProto {
            name: k.name.clone(),
            kernel_spec: Some(KernelLoaderSpecProto {
                payload,
                arity: 0,
                kernel_name: k.name.clone(),
            }),
            block_dims: Some(BlockDimProto {
                coordinates: d(k.grid),
            }),
            thread_dims: Some(ThreadDimProto {
                coordinates: d(k.block),
            }),
            cluster_dim: None,
            shared_memory_bytes: k.shared_memory_bytes.into(),
        }),
    })
}
