//! Collectives: all-reduce, all-gather and reduce-scatter (the leading dimension, over replica
//! groups), and collective-permute (its source-target pairs; only with
//! `CompileOptions::emit_collective_permute`, else the permute pass has rewritten it).
use hlo::{Computation, ReplicaGroups};
use hlo::{Instruction, Opcode};
use proto::xla::gpu as pg;

use crate::error::CompileError;
use crate::unsupported::UnsupportedCollective;

use super::*;

/// A collective-permute's own group mode (none for other collectives) and its pairs.
type PermuteMode = (Option<pg::CollectiveOpGroupModeProto>, Vec<(i64, i64)>);

impl Lowerer<'_> {
    pub(super) fn lower_collective(
        &mut self,
        comp: &Computation,
        instr: &Instruction,
        env: &mut [Option<Vec<Loc>>],
        ops: &mut Vec<Op>,
    ) -> Result<Vec<Loc>, CompileError> {
        let bad = |why: UnsupportedCollective| CompileError::unsupported(&comp.name, instr, why);
        let reduction = if matches!(instr.opcode, Opcode::AllGather | Opcode::CollectivePermute) {
            pg::ReductionKindProto::ReductionKindUnspecified
        } else {
            let apply = instr
                .attrs
                .to_apply
                .and_then(|c| self.module.get(c))
                .ok_or_else(|| bad(UnsupportedCollective::NoReduction))?;
            match apply.root_instruction().map(|r| r.opcode) {
                Some(Opcode::Add) => pg::ReductionKindProto::ReductionKindSum,
                Some(Opcode::Multiply) => pg::ReductionKindProto::ReductionKindProduct,
                Some(Opcode::Minimum) => pg::ReductionKindProto::ReductionKindMin,
                Some(Opcode::Maximum) => pg::ReductionKindProto::ReductionKindMax,
                other => return Err(bad(UnsupportedCollective::Reduction(other))),
            }
        };
        if matches!(instr.opcode, Opcode::AllGather | Opcode::ReduceScatter) {
            let dim_ok = match instr.attrs.dimensions.as_deref() {
                Some([d]) => instr
                    .shape
                    .dims()
                    .iter()
                    .take(usize::try_from(*d).unwrap_or(0))
                    .all(|&n| n == 1),
                _ => false,
            };
            if !dim_ok {
                return Err(bad(UnsupportedCollective::Dimension));
            }
        }
        let groups = match &instr.attrs.replica_groups {
            None => Vec::new(),
            Some(ReplicaGroups::List(l)) => l
                .iter()
                .map(|g| proto::xla::ReplicaGroup {
                    replica_ids: g.clone(),
                })
                .collect(),
            Some(ReplicaGroups::Iota(s)) => {
                return Err(bad(UnsupportedCollective::IotaReplicaGroups(s.clone())))
            }
        };
        let mut srcs = Vec::new();
        let mut types = Vec::new();
        for &o in &instr.operands {
            for (loc, (_, shape)) in self
                .locs(comp, o, env)?
                .into_iter()
                .zip(leaves(&comp[o].shape))
            {
                let t = shape
                    .element_type()
                    .and_then(hlo::element_type_to_proto)
                    .ok_or_else(|| bad(UnsupportedCollective::ElementType))?;
                types.push(t as i32);
                srcs.push((loc, shape.element_count() as i64));
            }
        }
        let out_leaves = leaves(&instr.shape);
        if out_leaves.len() != srcs.len() {
            return Err(bad(UnsupportedCollective::Leaves));
        }
        let t = self.tick();
        let mut buffers = Vec::new();
        let mut locs = Vec::new();
        for ((src, count), (_, shape)) in srcs.into_iter().zip(out_leaves) {
            self.use_loc(src, t);
            let dst = self.temp(&shape, &instr.name, t);
            locs.push(dst);
            buffers.push((count, src, dst));
        }
        let (group_mode, source_target_pairs) = self.permute_mode(comp, instr)?;
        let group_mode = if let Some(mode) = group_mode {
            mode
        } else if instr.attrs.channel_id.is_some() {
            if instr.attrs.use_global_device_ids == Some(true) {
                pg::CollectiveOpGroupModeProto::CollectiveOpGroupModeFlattenedId
            } else {
                pg::CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplicaAndPartition
            }
        } else {
            pg::CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplica
        };
        ops.push(Op::Collective {
            name: instr.name.clone(),
            kind: instr.opcode,
            reduction,
            config: pg::CollectiveConfigProto {
                operand_element_type: types,
                replica_groups: groups,
                group_mode: group_mode as i32,
                op_id: instr.attrs.channel_id.unwrap_or(0),
                use_symmetric_buffer: false,
                // Set by serialization behind CompileOptions::emit_group_mode_at_1001.
                group_mode_xyz: None,
                op_id_xyz: None,
            },
            buffers,
            source_target_pairs,
        });
        Ok(locs)
    }

    /// A collective-permute's group mode and pairs: with a channel id its pairs name partitions
    /// (cross-partition), without one replicas (cross-replica), as in XLA. Other collectives:
    /// no mode of their own here, no pairs.
    fn permute_mode(
        &self,
        comp: &Computation,
        instr: &Instruction,
    ) -> Result<PermuteMode, CompileError> {
        if instr.opcode != Opcode::CollectivePermute {
            return Ok((None, Vec::new()));
        }
        let config = &self.module.config;
        let (mode, n) = if instr.attrs.channel_id.is_some() {
            (
                pg::CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossPartition,
                config.num_partitions,
            )
        } else {
            (
                pg::CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplica,
                config.replica_count,
            )
        };
        let n = n.unwrap_or(1).max(1);
        let pairs = crate::passes::permute::pairs(&comp.name, instr, n, n)?;
        Ok((Some(mode), pairs))
    }
}
