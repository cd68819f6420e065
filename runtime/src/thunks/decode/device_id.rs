//! `replica_id_thunk` and `partition_id_thunk`: a u32 id written to one slice.
use super::*;

pub(super) fn replica_id(
    ctx: &DecodeContext<'_>,
    t: &ReplicaIdThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let ReplicaIdThunkProto { dest_buffer } = t;
    Ok(ThunkKind::ReplicaId(id_dest(
        ctx,
        dest_buffer.as_ref(),
        &format!("{path}.replica_id_thunk.dest_buffer"),
    )?))
}

pub(super) fn partition_id(
    ctx: &DecodeContext<'_>,
    t: &PartitionIdThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let PartitionIdThunkProto { dest_buffer } = t;
    Ok(ThunkKind::PartitionId(id_dest(
        ctx,
        dest_buffer.as_ref(),
        &format!("{path}.partition_id_thunk.dest_buffer"),
    )?))
}

fn id_dest(
    ctx: &DecodeContext<'_>,
    p: Option<&BufferAllocationSliceProto>,
    path: &str,
) -> Result<Slice> {
    let s = slice(ctx, p, path)?;
    if s.size < 4 {
        return Err(invalid(format!(
            "{path}.size is {}, smaller than the 4 bytes of a u32 id",
            s.size
        )));
    }
    Ok(s)
}
