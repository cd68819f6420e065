//! `replica_id_thunk` and `partition_id_thunk`: the device's id written as a u32.
use proto::xla::gpu as pg;
use proto::xla::gpu::thunk_proto::Impl;

use super::ThunkBuilder;
use crate::error::CompileError;
use crate::lower::Loc;

pub(super) fn thunk(
    tb: &ThunkBuilder<'_>,
    partition: bool,
    dst: Loc,
) -> Result<Impl, CompileError> {
    let dest_buffer = Some(tb.asg.slice(dst)?);
    Ok(if partition {
        Impl::PartitionIdThunk(pg::PartitionIdThunkProto { dest_buffer })
    } else {
        Impl::ReplicaIdThunk(pg::ReplicaIdThunkProto { dest_buffer })
    })
}
