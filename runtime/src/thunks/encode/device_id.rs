//! [`ThunkKind::ReplicaId`] and [`ThunkKind::PartitionId`] → `replica_id_thunk`,
//! `partition_id_thunk`.
use super::*;

pub(super) fn replica_id(s: &Slice) -> Impl {
    Impl::ReplicaIdThunk(ReplicaIdThunkProto {
        dest_buffer: Some(sl(s)),
    })
}

pub(super) fn partition_id(s: &Slice) -> Impl {
    Impl::PartitionIdThunk(PartitionIdThunkProto {
        dest_buffer: Some(sl(s)),
    })
}
