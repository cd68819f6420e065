//! [`Thunk`] → `ThunkProto`: the inverse of decoding. A command buffer is not a schema kind: its
//! commands are inlined into the enclosing sequence, so encoding after the load-time passes gives
//! back the artifact's thunks.
//!
//! This module holds the dispatch on the kind; each kind is encoded in a module of its own,
//! named as its decoder's (`copy`, `control`, `kernel`, `gemm`, `fft`, `device_id`, `memset`,
//! `custom_call`, `collective`).
use proto::xla::buffer_assignment::BufferAllocationSliceProto;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;

use super::*;

mod collective;
mod control;
mod copy;
mod custom_call;
mod device_id;
mod fft;
mod gemm;
mod kernel;
mod memset;

/// Encodes a sequence (command buffers inlined).
pub fn encode_sequence(thunks: &[Thunk]) -> Vec<ThunkProto> {
    let mut out = Vec::with_capacity(thunks.len());
    for t in thunks {
        if let ThunkKind::CommandBuffer(cb) = &t.kind {
            out.extend(encode_sequence(&cb.commands));
        } else {
            out.push(encode(t));
        }
    }
    out
}

fn sequential(thunks: &[Thunk]) -> Impl {
    Impl::SequentialThunk(SequentialThunkProto {
        thunks: encode_sequence(thunks),
    })
}

fn seq(thunks: &[Thunk]) -> ThunkSequenceProto {
    ThunkSequenceProto {
        thunks: encode_sequence(thunks),
    }
}

fn sl(s: &Slice) -> BufferAllocationSliceProto {
    BufferAllocationSliceProto {
        offset: s.offset as i64,
        size: s.size as i64,
        buffer_allocation_index: s.allocation as i64,
    }
}

fn shaped(s: &ShapedSlice) -> ShapedSliceProto {
    ShapedSliceProto {
        slice: Some(sl(&s.slice)),
        shape: s.shape.clone(),
    }
}

/// Encodes one thunk. A command buffer encodes as a `sequential_thunk` of its commands (use
/// [`encode_sequence`] to inline it instead).
pub fn encode(t: &Thunk) -> ThunkProto {
    let imp = match &t.kind {
        ThunkKind::Sequential(v) => sequential(v),
        ThunkKind::CommandBuffer(cb) => sequential(&cb.commands),
        ThunkKind::Copy {
            source,
            destination,
            size,
        } => copy::copy(source, destination, *size),
        ThunkKind::Conditional(c) => control::conditional(c),
        ThunkKind::While(w) => control::while_loop(w),
        ThunkKind::Kernel(k) => kernel::kernel(k),
        ThunkKind::Gemm(g) => gemm::gemm(g),
        ThunkKind::Fft(f) => fft::fft(f),
        ThunkKind::ReplicaId(s) => device_id::replica_id(s),
        ThunkKind::PartitionId(s) => device_id::partition_id(s),
        ThunkKind::Memzero(s) => memset::memzero(s),
        ThunkKind::Memset32 { destination, value } => memset::memset32(destination, *value),
        ThunkKind::Memset8 { destination, value } => memset::memset8(destination, *value),
        ThunkKind::CustomCall(c) => custom_call::custom_call(c),
        ThunkKind::CustomKernel(k) => kernel::custom_kernel(k),
        ThunkKind::Collective(c) => collective::collective(c),
    };
    ThunkProto {
        thunk_info: Some(ThunkInfoProto {
            profile_annotation: t.info.profile_annotation.clone(),
            thunk_id: t.info.thunk_id,
            execution_stream_id: t.info.execution_stream_id,
            concurrent_region_id: None,
        }),
        r#impl: Some(imp),
    }
}
