//! A per-device program of one replica and N partitions, emitted as N replicas of one partition
//! while `CompileOptions::emit_partitions` is off (runtimes older than stage 1 of
//! [`proto::rollout::PARTITIONS`] refuse `num_partitions > 1`; docs/compiler.md, "Partitions").
//!
//! The two programs compute the same thing. With one replica, device `d` is partition `d`
//! (XLA's logical device id is `replica * num_partitions + partition`), and it becomes replica
//! `d`; so `partition-id` becomes `replica-id`, `replica-id` (always 0) the constant 0, and each
//! collective's groups are rewritten from its mode's id space into replica ids, the collective
//! then being cross-replica (no `channel_id`):
//!
//! | mode (XLA's, from `channel_id` / `use_global_device_ids`) | groups | as replicas |
//! | --- | --- | --- |
//! | cross-replica (no channel id) | replica ids: only 0 | each device alone: `{{0},{1},...}` |
//! | cross-replica-and-partition (channel id) | replica ids: only 0 | every device: `{{0,...,N-1}}` |
//! | flattened-id (channel id, global ids) | device ids = partition ids | the same groups |
//! | collective-permute, cross-partition (channel id) | pairs of partition ids | the same pairs |
//! | collective-permute, cross-replica (no channel id) | pairs of replica ids: only (0,0) | `(d,d)` for every d, or none |
//!
//! A module with several replicas and several partitions has no such form: it is a compile
//! error naming the option.
use std::borrow::Cow;

use hlo::{ArrayLiteral, ConstantLiteral, LiteralValue, ReplicaGroups};
use hlo::{HloModule, Instruction, Opcode};

use crate::error::CompileError;
use crate::options::CompileOptions;
use crate::unsupported::UnsupportedCollective;

/// The module as the options allow it to be emitted: unchanged with one partition or with
/// `emit_partitions`, else (one replica) its N partitions as N replicas.
pub fn as_replicas<'a>(
    module: &'a HloModule,
    options: &CompileOptions,
) -> Result<Cow<'a, HloModule>, CompileError> {
    let partitions = module.config.num_partitions.unwrap_or(1).max(1);
    let replicas = module.config.replica_count.unwrap_or(1).max(1);
    if partitions == 1 || options.emit_partitions {
        return Ok(Cow::Borrowed(module));
    }
    if replicas > 1 {
        return Err(CompileError::PartitionsNotEmitted {
            replicas,
            partitions,
        });
    }
    let mut m = module.clone();
    m.config.replica_count = Some(partitions);
    m.config.num_partitions = None;
    for comp in &mut m.computations {
        let name = comp.name.clone();
        for instr in &mut comp.instructions {
            translate(&name, instr, partitions)?;
        }
    }
    Ok(Cow::Owned(m))
}

/// One instruction of the one-replica program as the same instruction of the replica program.
fn translate(comp: &str, instr: &mut Instruction, n: i64) -> Result<(), CompileError> {
    match instr.opcode {
        Opcode::PartitionId => instr.opcode = Opcode::ReplicaId,
        Opcode::ReplicaId => {
            // Replica 0 of one replica, on every device.
            instr.opcode = Opcode::Constant;
            instr.attrs.literal = Some(ConstantLiteral::Array(ArrayLiteral {
                values: vec![LiteralValue::Int(0)],
            }));
        }
        Opcode::AllReduce | Opcode::AllGather | Opcode::ReduceScatter | Opcode::AllToAll => {
            let groups = groups_as_replicas(comp, instr, n)?;
            instr.attrs.replica_groups = Some(ReplicaGroups::List(groups));
            instr.attrs.channel_id = None;
            instr.attrs.use_global_device_ids = None;
        }
        Opcode::CollectivePermute => {
            let ids = if instr.attrs.channel_id.is_some() {
                n
            } else {
                1
            };
            let pairs = super::permute::pairs(comp, instr, ids, ids)?;
            let pairs: Vec<(i64, i64)> = if instr.attrs.channel_id.is_some() {
                pairs
            } else if pairs.contains(&(0, 0)) {
                (0..n).map(|d| (d, d)).collect()
            } else {
                Vec::new()
            };
            super::permute::set_pairs(instr, &pairs);
            instr.attrs.channel_id = None;
        }
        _ => {}
    }
    Ok(())
}

/// A collective's groups, from its mode's id space, as groups of replica ids (= device ids).
fn groups_as_replicas(
    comp: &str,
    instr: &Instruction,
    n: i64,
) -> Result<Vec<Vec<i64>>, CompileError> {
    let listed = match &instr.attrs.replica_groups {
        None => Vec::new(),
        Some(ReplicaGroups::List(l)) => l.clone(),
        Some(ReplicaGroups::Iota(s)) => {
            return Err(CompileError::unsupported(
                comp,
                instr,
                UnsupportedCollective::IotaReplicaGroups(s.clone()),
            ))
        }
    };
    let every: Vec<i64> = (0..n).collect();
    Ok(
        match (instr.attrs.channel_id, instr.attrs.use_global_device_ids) {
            // Cross-replica over one replica: each device reduces with itself.
            (None, _) => (0..n).map(|d| vec![d]).collect(),
            // Flattened ids are device ids, which are the replica ids now.
            (Some(_), Some(true)) if !listed.is_empty() => listed,
            // Cross-replica-and-partition over replica 0 (the only one), or flattened over all.
            (Some(_), _) => vec![every],
        },
    )
}
