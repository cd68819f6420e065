//! The collective thunks: `all_reduce_start_thunk`, `all_gather_start_thunk`,
//! `reduce_scatter_thunk` and `collective_permute_start_thunk`.
use proto::xla::gpu as pg;
use proto::xla::gpu::thunk_proto::Impl;

use super::ThunkBuilder;
use crate::error::CompileError;
use crate::lower::Loc;

/// What `Op::Collective` carries besides its name.
pub(super) struct Collective<'a> {
    pub kind: hlo::Opcode,
    pub reduction: pg::ReductionKindProto,
    pub config: &'a pg::CollectiveConfigProto,
    pub buffers: &'a [(i64, Loc, Loc)],
    pub source_target_pairs: &'a [(i64, i64)],
}

pub(super) fn thunk(tb: &ThunkBuilder<'_>, c: Collective<'_>) -> Result<Impl, CompileError> {
    let asg = tb.asg;
    let buffers = c
        .buffers
        .iter()
        .map(|(count, src, dst)| {
            let (src, dst) = (asg.slice(*src)?, asg.slice(*dst)?);
            // Behind the flag the slices move to 1000/1001 and 2, 3 stay unset.
            let at_1000 = tb.collective_slices_at_1000;
            Ok(pg::CollectiveBufferProto {
                element_count: *count,
                source_buffer: (!at_1000).then_some(src),
                destination_buffer: (!at_1000).then_some(dst),
                source_memory_space: 0,
                destination_memory_space: 0,
                source_buffer_xyz: at_1000.then_some(src),
                destination_buffer_xyz: at_1000.then_some(dst),
            })
        })
        .collect::<Result<Vec<_>, CompileError>>()?;
    let mut config = c.config.clone();
    if tb.group_mode_at_1001 {
        // Behind the flag the mode moves to 1001 and 3 stays unset (UNSPECIFIED).
        config.group_mode_xyz = Some(std::mem::take(&mut config.group_mode));
    }
    if tb.op_id_at_1000 {
        // Behind the flag the channel id moves to 1000 and 4 stays unset (0).
        config.op_id_xyz = Some(std::mem::take(&mut config.op_id));
    }
    Ok(collective_impl(
        c.kind,
        c.reduction,
        Some(config),
        buffers,
        c.source_target_pairs,
    ))
}

/// The thunk of a collective: its kind's oneof case with the config, buffers and (a
/// collective-permute's) pairs.
fn collective_impl(
    kind: hlo::Opcode,
    reduction: pg::ReductionKindProto,
    collective_config: Option<pg::CollectiveConfigProto>,
    buffers: Vec<pg::CollectiveBufferProto>,
    source_target_pairs: &[(i64, i64)],
) -> Impl {
    match kind {
        hlo::Opcode::AllReduce => Impl::AllReduceStartThunk(pg::AllReduceStartThunkProto {
            collective_config,
            buffers,
            reduction_kind: reduction as i32,
        }),
        hlo::Opcode::AllGather => Impl::AllGatherStartThunk(pg::AllGatherStartThunkProto {
            collective_config,
            buffers,
        }),
        hlo::Opcode::CollectivePermute => {
            Impl::CollectivePermuteStartThunk(pg::CollectivePermuteStartThunkProto {
                buffers,
                collective_config,
                source_target_pairs: source_target_pairs
                    .iter()
                    .map(|&(source, target)| proto::xla::SourceTarget { source, target })
                    .collect(),
            })
        }
        _ => Impl::ReduceScatterThunk(pg::ReduceScatterThunkProto {
            collective_config,
            buffers,
            reduction_kind: reduction as i32,
        }),
    }
}
