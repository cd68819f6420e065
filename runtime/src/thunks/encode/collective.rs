//! [`ThunkKind::Collective`] → its operation's oneof case (`all_gather_start_thunk`,
//! `all_reduce_start_thunk`, `reduce_scatter_thunk`, `all_to_all_start_thunk`,
//! `collective_permute_start_thunk`).
use super::*;

fn reduction(r: ReductionKind) -> i32 {
    (match r {
        ReductionKind::Sum => ReductionKindProto::ReductionKindSum,
        ReductionKind::Product => ReductionKindProto::ReductionKindProduct,
        ReductionKind::Min => ReductionKindProto::ReductionKindMin,
        ReductionKind::Max => ReductionKindProto::ReductionKindMax,
    }) as i32
}

fn config(c: &CollectiveConfig) -> CollectiveConfigProto {
    CollectiveConfigProto {
        operand_element_type: c.element_types.iter().map(|t| t.to_proto()).collect(),
        replica_groups: c
            .replica_groups
            .iter()
            .map(|g| proto::xla::ReplicaGroup {
                replica_ids: g.clone(),
            })
            .collect(),
        // The v1 number (3), which every runtime reads; see CollectiveConfigProto.
        group_mode: c.group_mode,
        op_id: c.op_id,
        use_symmetric_buffer: c.use_symmetric_buffer,
        group_mode_xyz: None,
        op_id_xyz: None,
    }
}

pub(super) fn collective(c: &CollectiveThunk) -> Impl {
    let config = Some(config(&c.config));
    let buffers: Vec<CollectiveBufferProto> = c
        .buffers
        .iter()
        .map(|b| CollectiveBufferProto {
            element_count: b.element_count as i64,
            source_buffer: Some(sl(&b.source)),
            destination_buffer: Some(sl(&b.destination)),
            source_memory_space: b.source_memory_space,
            destination_memory_space: b.destination_memory_space,
            // The v1 numbers (2, 3), which every runtime reads; see CollectiveBufferProto.
            ..Default::default()
        })
        .collect();
    match &c.op {
        CollectiveOp::AllGather => Impl::AllGatherStartThunk(AllGatherStartThunkProto {
            collective_config: config,
            buffers,
        }),
        CollectiveOp::AllReduce(r) => Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: config,
            buffers,
            reduction_kind: reduction(*r),
        }),
        CollectiveOp::ReduceScatter(r) => Impl::ReduceScatterThunk(ReduceScatterThunkProto {
            collective_config: config,
            buffers,
            reduction_kind: reduction(*r),
        }),
        CollectiveOp::AllToAll {
            has_split_dimension,
        } => Impl::AllToAllStartThunk(AllToAllStartThunkProto {
            collective_config: config,
            buffers,
            has_split_dimension: *has_split_dimension,
        }),
        CollectiveOp::CollectivePermute {
            source_target_pairs,
        } => Impl::CollectivePermuteStartThunk(CollectivePermuteStartThunkProto {
            buffers,
            collective_config: config,
            source_target_pairs: source_target_pairs
                .iter()
                .map(|&(source, target)| proto::xla::SourceTarget { source, target })
                .collect(),
        }),
    }
}
