//! The collective thunks (`all_gather_start_thunk`, `all_reduce_start_thunk`,
//! `reduce_scatter_thunk`, `all_to_all_start_thunk`, `collective_permute_start_thunk`): replica
//! groups, element types and buffer sizes.
use std::collections::BTreeMap;

use super::*;
use crate::groups::{Grid, GroupMode};

fn reduction(v: i32, path: &str) -> Result<ReductionKind> {
    match ReductionKindProto::try_from(v) {
        Ok(ReductionKindProto::ReductionKindSum) => Ok(ReductionKind::Sum),
        Ok(ReductionKindProto::ReductionKindProduct) => Ok(ReductionKind::Product),
        Ok(ReductionKindProto::ReductionKindMin) => Ok(ReductionKind::Min),
        Ok(ReductionKindProto::ReductionKindMax) => Ok(ReductionKind::Max),
        _ => Err(invalid(format!(
            "{path}.reduction_kind is {v}; expected SUM, PRODUCT, MIN or MAX"
        ))),
    }
}

pub(super) fn all_gather(
    ctx: &DecodeContext<'_>,
    t: &AllGatherStartThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let AllGatherStartThunkProto {
        collective_config,
        buffers,
    } = t;
    collective(
        ctx,
        CollectiveOp::AllGather,
        collective_config.as_ref(),
        buffers,
        &format!("{path}.all_gather_start_thunk"),
    )
}

pub(super) fn all_reduce(
    ctx: &DecodeContext<'_>,
    t: &AllReduceStartThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let AllReduceStartThunkProto {
        collective_config,
        buffers,
        reduction_kind,
    } = t;
    let p2 = format!("{path}.all_reduce_start_thunk");
    let r = reduction(*reduction_kind, &p2)?;
    collective(
        ctx,
        CollectiveOp::AllReduce(r),
        collective_config.as_ref(),
        buffers,
        &p2,
    )
}

pub(super) fn reduce_scatter(
    ctx: &DecodeContext<'_>,
    t: &ReduceScatterThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let ReduceScatterThunkProto {
        collective_config,
        buffers,
        reduction_kind,
    } = t;
    let p2 = format!("{path}.reduce_scatter_thunk");
    let r = reduction(*reduction_kind, &p2)?;
    collective(
        ctx,
        CollectiveOp::ReduceScatter(r),
        collective_config.as_ref(),
        buffers,
        &p2,
    )
}

/// Decoded only for conversion tests: this runtime does not execute it.
pub(super) fn all_to_all(
    ctx: &DecodeContext<'_>,
    t: &AllToAllStartThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let AllToAllStartThunkProto {
        collective_config,
        buffers,
        has_split_dimension,
    } = t;
    refuse_unimplemented(ctx, path, "all_to_all_start_thunk")?;
    collective(
        ctx,
        CollectiveOp::AllToAll {
            has_split_dimension: *has_split_dimension,
        },
        collective_config.as_ref(),
        buffers,
        &format!("{path}.all_to_all_start_thunk"),
    )
}

pub(super) fn collective_permute(
    ctx: &DecodeContext<'_>,
    t: &CollectivePermuteStartThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let CollectivePermuteStartThunkProto {
        buffers,
        collective_config,
        source_target_pairs,
    } = t;
    collective(
        ctx,
        CollectiveOp::CollectivePermute {
            source_target_pairs: source_target_pairs
                .iter()
                .map(|p| (p.source, p.target))
                .collect(),
        },
        collective_config.as_ref(),
        buffers,
        &format!("{path}.collective_permute_start_thunk"),
    )
}

/// The checks every collective shares: its config against the replicas and partitions, and
/// each buffer against the allocations.
fn collective(
    ctx: &DecodeContext<'_>,
    op: CollectiveOp,
    config: Option<&CollectiveConfigProto>,
    buffers: &[CollectiveBufferProto],
    path: &str,
) -> Result<ThunkKind> {
    let cp = format!("{path}.collective_config");
    let CollectiveConfigProto {
        operand_element_type,
        replica_groups,
        group_mode,
        op_id,
        use_symmetric_buffer,
        group_mode_xyz,
        op_id_xyz,
    } = config.ok_or_else(|| invalid(format!("{cp} is not set")))?;
    let element_types = element_types(&cp, operand_element_type, buffers.len())?;
    let (group_mode, mode, mode_field) = decode_mode(&cp, *group_mode, *group_mode_xyz)?;
    // Which field carries the channel id: `op_id_xyz` (1000) when present, else the v1 number 4.
    let op_id = match *op_id_xyz {
        Some(id) => {
            if *op_id != 0 {
                return Err(invalid(format!(
                    "{cp} sets both op_id (4) and op_id_xyz (1000); an artifact sets one"
                )));
            }
            id
        }
        None => legacy_op_id(*op_id),
    };
    let grid = Grid {
        replicas: ctx.num_replicas,
        partitions: ctx.num_partitions,
    };
    let (groups, listed) = check_groups(&cp, mode, grid, replica_groups)?;
    let group_size = mode.participants_per_group(grid, listed);
    if let CollectiveOp::CollectivePermute {
        source_target_pairs,
    } = &op
    {
        check_permute(
            path,
            (&cp, mode_field, group_mode),
            mode,
            grid,
            &groups,
            source_target_pairs,
        )?;
    }
    let out = buffers
        .iter()
        .zip(&element_types)
        .enumerate()
        .map(|(i, (b, t))| {
            collective_buffer(ctx, &op, b, *t, group_size, &format!("{path}.buffers[{i}]"))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ThunkKind::Collective(CollectiveThunk {
        op,
        config: CollectiveConfig {
            element_types,
            replica_groups: groups,
            group_mode,
            op_id,
            use_symmetric_buffer: *use_symmetric_buffer,
        },
        buffers: out,
    }))
}

/// `operand_element_type`, parallel to the buffers, each a type collectives move.
fn element_types(cp: &str, types: &[i32], buffers: usize) -> Result<Vec<ElemType>> {
    if types.len() != buffers {
        return Err(invalid(format!(
            "{cp}.operand_element_type has {} entries, buffers has {buffers}; they must be parallel",
            types.len(),
        )));
    }
    types
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            ElemType::from_proto(t).ok_or_else(|| {
                Error::unimplemented(format!(
                    "{cp}.operand_element_type[{i}] is {}; collectives support pred, s8-s64, u8-u64, f16, bf16, f32, f64",
                    type_name(t)
                ))
            })
        })
        .collect()
}

/// The group mode: its wire value, its meaning and the field that carried it. Which field:
/// `group_mode_xyz` (1001) when present, else the v1 number 3; both at once would leave the mode
/// ambiguous.
fn decode_mode(
    cp: &str,
    group_mode: i32,
    group_mode_xyz: Option<i32>,
) -> Result<(i32, GroupMode, &'static str)> {
    let (group_mode, mode_field) = match group_mode_xyz {
        Some(m) => {
            if group_mode != 0 {
                return Err(invalid(format!(
                    "{cp} sets both group_mode (3) and group_mode_xyz (1001); an artifact sets one"
                )));
            }
            (m, "group_mode_xyz")
        }
        None => legacy_group_mode(group_mode),
    };
    let mode = GroupMode::from_proto(group_mode).ok_or_else(|| {
        invalid(format!(
            "{cp}.{mode_field} is {group_mode}, not a known CollectiveOpGroupModeProto"
        ))
    })?;
    Ok((group_mode, mode, mode_field))
}

/// `replica_groups` in the mode's id space: every id in range, in one group only, groups of one
/// size, and (when any is listed) every id in some group. Returns the groups and their size.
fn check_groups(
    cp: &str,
    mode: GroupMode,
    grid: Grid,
    replica_groups: &[ReplicaGroup],
) -> Result<(Vec<Vec<i64>>, Option<u64>)> {
    let n = mode.id_space(grid);
    let mut seen = vec![false; usize::try_from(n).unwrap_or(0)];
    let mut groups = Vec::with_capacity(replica_groups.len());
    let mut group_size = None;
    for (gi, g) in replica_groups.iter().enumerate() {
        let ReplicaGroup { replica_ids } = g;
        for (j, &id) in replica_ids.iter().enumerate() {
            let slot = usize::try_from(id).ok().and_then(|i| seen.get_mut(i));
            match slot {
                Some(s) if !*s => *s = true,
                Some(_) => {
                    return Err(invalid(format!(
                        "{cp}.replica_groups[{gi}].replica_ids[{j}] is {id}, which already appears in an earlier group"
                    )))
                }
                None => {
                    return Err(invalid(format!(
                        "{cp}.replica_groups[{gi}].replica_ids[{j}] is {id}, out of range [0, {n}) (the module's {})",
                        mode.bound_name()
                    )))
                }
            }
        }
        if replica_ids.is_empty() {
            return Err(invalid(format!("{cp}.replica_groups[{gi}] is empty")));
        }
        let len = replica_ids.len() as u64;
        match group_size {
            None => group_size = Some(len),
            Some(size) if size != len => {
                return Err(invalid(format!(
                    "{cp}.replica_groups[{gi}] has {len} {}s, replica_groups[0] has {size}; groups must have equal sizes",
                    mode.id_name()
                )));
            }
            Some(_) => {}
        }
        groups.push(replica_ids.clone());
    }
    if !groups.is_empty() {
        if let Some(missing) = seen.iter().position(|s| !s) {
            return Err(invalid(format!(
                "{cp}.replica_groups: {} {missing} is in no group ({} is {n})",
                mode.id_name(),
                mode.bound_name()
            )));
        }
    }
    Ok((groups, group_size))
}

/// A collective permute's mode, groups and pairs: the pairs name replicas (cross-replica) or
/// partitions (cross-partition), as XLA's do without and with a channel id; no replica groups
/// (the pairs say who sends); every source and target in range, none twice.
fn check_permute(
    path: &str,
    (cp, mode_field, mode_value): (&str, &str, i32),
    mode: GroupMode,
    grid: Grid,
    groups: &[Vec<i64>],
    pairs: &[(i64, i64)],
) -> Result<()> {
    if !matches!(mode, GroupMode::CrossReplica | GroupMode::CrossPartition) {
        return Err(invalid(format!(
            "{cp}.{mode_field} is {mode_value} ({mode:?}); a collective permute's source_target_pairs name replicas (CROSS_REPLICA) or partitions (CROSS_PARTITION)"
        )));
    }
    if !groups.is_empty() {
        return Err(invalid(format!(
            "{cp}.replica_groups has {} groups; a collective permute has none (its source_target_pairs say who sends to whom)",
            groups.len()
        )));
    }
    let n = mode.id_space(grid);
    let mut sources = BTreeMap::new();
    let mut targets = BTreeMap::new();
    for (i, &(source, target)) in pairs.iter().enumerate() {
        for (end, id, seen) in [
            ("source", source, &mut sources),
            ("target", target, &mut targets),
        ] {
            if id < 0 || id as u64 >= n {
                return Err(invalid(format!(
                    "{path}.source_target_pairs[{i}].{end} is {id}, out of range [0, {n}) (the module's {})",
                    mode.bound_name()
                )));
            }
            if let Some(j) = seen.insert(id, i) {
                return Err(invalid(format!(
                    "{path}.source_target_pairs[{i}].{end} is {id}, as is source_target_pairs[{j}].{end}; each {} is a {end} once",
                    mode.id_name()
                )));
            }
        }
    }
    Ok(())
}

/// One buffer: slices in bounds and large enough for what the operation reads and writes.
fn collective_buffer(
    ctx: &DecodeContext<'_>,
    op: &CollectiveOp,
    b: &CollectiveBufferProto,
    t: ElemType,
    group_size: u64,
    bp: &str,
) -> Result<CollectiveBuffer> {
    let CollectiveBufferProto {
        element_count,
        source_buffer,
        destination_buffer,
        source_memory_space,
        destination_memory_space,
        source_buffer_xyz,
        destination_buffer_xyz,
    } = b;
    let count = nonneg(*element_count, &format!("{bp}.element_count"))?;
    let (source, destination, names) = slice_pair(
        ctx,
        bp,
        "2, 3",
        [source_buffer.as_ref(), destination_buffer.as_ref()],
        [source_buffer_xyz.as_ref(), destination_buffer_xyz.as_ref()],
    )?;
    let bytes = count.checked_mul(t.size());
    let (src_need, dst_need) = match op {
        CollectiveOp::AllGather => (bytes, bytes.and_then(|b| b.checked_mul(group_size))),
        CollectiveOp::ReduceScatter(_) => {
            if group_size == 0 || count % group_size != 0 {
                return Err(invalid(format!(
                    "{bp}.element_count is {count}, not a multiple of the group size {group_size}"
                )));
            }
            (bytes, bytes.map(|b| b / group_size))
        }
        _ => (bytes, bytes),
    };
    for (need, s, name) in [
        (src_need, &source, names[0]),
        (dst_need, &destination, names[1]),
    ] {
        match need {
            Some(need) if need <= s.size => {}
            need => {
                return Err(invalid(format!(
                    "{bp}.{name}.size is {}, smaller than the {} bytes element_count {count} of {} needs",
                    s.size,
                    need.map_or_else(|| "overflowing".to_owned(), |n| n.to_string()),
                    type_name(t.to_proto())
                )))
            }
        }
    }
    Ok(CollectiveBuffer {
        element_count: count,
        source,
        destination,
        source_memory_space: *source_memory_space,
        destination_memory_space: *destination_memory_space,
    })
}

/// A collective's group mode at the v1 number 3, which the compiler writes by default until the
/// stage-2 date of the move to 1001 (2026-12-15); artifacts written before then carry only it.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_group_mode(group_mode: i32) -> (i32, &'static str) {
    (group_mode, "group_mode")
}

/// A collective's channel id at the v1 number 4, which the compiler writes by default until the
/// stage-2 date of the move to 1000 (2026-12-15); artifacts written before then carry only it.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_op_id(op_id: i64) -> i64 {
    op_id
}
