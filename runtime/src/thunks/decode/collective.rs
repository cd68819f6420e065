//! Collective thunks: replica groups, element types and buffer sizes.
use super::*;

pub(super) fn reduction(v: i32, path: &str) -> Result<ReductionKind> {
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

pub(super) fn collective(
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
    if operand_element_type.len() != buffers.len() {
        return Err(invalid(format!(
            "{cp}.operand_element_type has {} entries, buffers has {}; they must be parallel",
            operand_element_type.len(),
            buffers.len()
        )));
    }
    let element_types = operand_element_type
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
        .collect::<Result<Vec<_>>>()?;
    // Which field carries the mode: `group_mode_xyz` (1001) when present, else the v1 number 3.
    // Both at once would leave the mode ambiguous.
    let (group_mode, mode_field) = match *group_mode_xyz {
        Some(m) => {
            if *group_mode != 0 {
                return Err(invalid(format!(
                    "{cp} sets both group_mode (3) and group_mode_xyz (1001); an artifact sets one"
                )));
            }
            (m, "group_mode_xyz")
        }
        None => legacy_group_mode(*group_mode),
    };
    match CollectiveOpGroupModeProto::try_from(group_mode) {
        // With one partition per replica (checked at load), these modes all group replicas.
        Ok(
            CollectiveOpGroupModeProto::CollectiveOpGroupModeUnspecified
            | CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplica
            | CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplicaAndPartition
            | CollectiveOpGroupModeProto::CollectiveOpGroupModeFlattenedId,
        ) => {}
        Ok(CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossPartition) => {
            return Err(Error::unimplemented(format!(
                "{cp}.{mode_field} is {group_mode}; this runtime runs one partition per replica"
            )))
        }
        Err(_) => {
            return Err(invalid(format!(
                "{cp}.{mode_field} is {group_mode}, not a known CollectiveOpGroupModeProto"
            )))
        }
    }
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
    let n = ctx.num_replicas;
    let mut seen = vec![false; usize::try_from(n).unwrap_or(0)];
    let mut groups = Vec::with_capacity(replica_groups.len());
    let mut group_size = n;
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
                        "{cp}.replica_groups[{gi}].replica_ids[{j}] is {id}, out of range [0, {n}) (the module's replica_count)"
                    )))
                }
            }
        }
        if replica_ids.is_empty() {
            return Err(invalid(format!("{cp}.replica_groups[{gi}] is empty")));
        }
        if gi == 0 {
            group_size = replica_ids.len() as u64;
        } else if replica_ids.len() as u64 != group_size {
            return Err(invalid(format!(
                "{cp}.replica_groups[{gi}] has {} replicas, replica_groups[0] has {group_size}; groups must have equal sizes",
                replica_ids.len()
            )));
        }
        groups.push(replica_ids.clone());
    }
    if !groups.is_empty() {
        if let Some(missing) = seen.iter().position(|s| !s) {
            return Err(invalid(format!(
                "{cp}.replica_groups: replica {missing} is in no group (replica_count is {n})"
            )));
        }
    }
    let mut out = Vec::with_capacity(buffers.len());
    for (i, (b, t)) in buffers.iter().zip(&element_types).enumerate() {
        let CollectiveBufferProto {
            element_count,
            source_buffer,
            destination_buffer,
            source_memory_space,
            destination_memory_space,
            source_buffer_xyz,
            destination_buffer_xyz,
        } = b;
        let bp = format!("{path}.buffers[{i}]");
        let count = nonneg(*element_count, &format!("{bp}.element_count"))?;
        let (source, destination, names) = slice_pair(
            ctx,
            &bp,
            "2, 3",
            [source_buffer.as_ref(), destination_buffer.as_ref()],
            [source_buffer_xyz.as_ref(), destination_buffer_xyz.as_ref()],
        )?;
        let bytes = count.checked_mul(t.size());
        let (src_need, dst_need) = match &op {
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
        out.push(CollectiveBuffer {
            element_count: count,
            source,
            destination,
            source_memory_space: *source_memory_space,
            destination_memory_space: *destination_memory_space,
        });
    }
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
