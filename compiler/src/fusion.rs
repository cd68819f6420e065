//! Fusion: groups the instructions of a computation into kernels.
//!
//! Instructions are classified as
//! - *elemental* (elementwise ops, compare, select, clamp, convert, broadcast, reshape,
//!   transpose, slice, concatenate, pad, iota, reverse, gather, dynamic-slice,
//!   dynamic-update-slice, reduce-window, ...): each output element is computed from operand
//!   elements by indexing, so any chain of them fuses into one loop kernel;
//! - *reductions* (`reduce`): fused with their elemental producers (input fusion);
//! - *standalone kernels* (sort, scatter, convolution, ...): one kernel each;
//! - *non-kernel* instructions (parameters, constants, tuples, get-tuple-element, bitcasts, dot,
//!   while, conditional, custom-call, collectives): become thunks or cost nothing.
//!
//! The planner walks the computation from the root to the parameters (consumers before
//! producers). An instruction joins its consumers' kernel when all its users are in that one
//! kernel and the kernel accepts it. Cheap instructions (iota, broadcasts, scalar constants'
//! conversions) are duplicated into every consuming kernel instead of being materialized. An
//! instruction whose other users are outside the kernel joins it as an extra output
//! (multi-output loop fusion) when that does not create a cycle. A reshape/bitcast, or a slice
//! of a contiguous range, that no kernel absorbs costs no kernel: it aliases its operand's
//! buffer. Kernels run in the topological order of their roots, which is always a valid order
//! because members only ever join from producer to consumer.
use std::collections::BTreeSet;

use hlo::ir::Computation;
use hlo::{InstrId, Instruction, Opcode};

use crate::error::CompileError;
use crate::graph::{topo_order, users};

/// How an instruction is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Computed per output element by indexing; fuses freely.
    Elemental,
    /// A reduction: fuses with elemental producers.
    Reduce,
    /// A kernel of its own.
    Standalone,
    /// Not a kernel: a thunk, an alias or nothing.
    NonKernel,
}

/// The class of an instruction.
pub fn class(instr: &Instruction) -> Class {
    use Opcode::*;
    let op = instr.opcode;
    if op.is_elementwise_unary() || op.is_elementwise_binary() {
        return Class::Elemental;
    }
    match op {
        Compare | Select | Clamp | Convert | BitcastConvert | Broadcast | Reshape | Transpose
        | Slice | Concatenate | Pad | Iota | Reverse | ReducePrecision | Gather | DynamicSlice
        | DynamicUpdateSlice | ReduceWindow => Class::Elemental,
        Reduce => Class::Reduce,
        Parameter | Constant | Tuple | GetTupleElement | Bitcast | Dot | While | Conditional
        | CustomCall | AllReduce | AllGather | ReduceScatter | ReplicaId | PartitionId
        | AfterAll | AddDependency | OptimizationBarrier | Call | Fusion => Class::NonKernel,
        _ => Class::Standalone,
    }
}

/// A fused kernel: its members in topological order and the members whose values leave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Members, in topological order (duplicated instructions may be in several groups).
    pub members: Vec<InstrId>,
    /// Outputs: the root first, then extra outputs of a multi-output fusion.
    pub outputs: Vec<InstrId>,
}

/// One step of a computation's schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unit {
    /// A fused kernel.
    Kernel(Group),
    /// A non-kernel instruction (or one that aliases its operand).
    Single(InstrId),
}

/// True when a slice reads one contiguous byte range of its (row-major) operand.
pub fn contiguous_slice(instr: &Instruction, operand: &Instruction) -> bool {
    let Some(slice) = &instr.attrs.slice else {
        return false;
    };
    let dims = operand.shape.dims();
    if slice.len() != dims.len() || slice.iter().any(|d| d.stride != 1) {
        return false;
    }
    // Dimensions before the first non-trivial one take one index; after it, everything.
    let mut seen_partial = false;
    for (d, &n) in slice.iter().zip(dims) {
        let len = d.limit - d.start;
        if seen_partial {
            if d.start != 0 || d.limit != n {
                return false;
            }
        } else if len != 1 {
            seen_partial = true;
        }
    }
    true
}

/// Byte offset of a contiguous slice's first element in its operand.
pub fn slice_offset(instr: &Instruction, operand: &Instruction) -> u64 {
    let dims = operand.shape.dims();
    let Some(slice) = &instr.attrs.slice else {
        return 0;
    };
    let mut linear: i64 = 0;
    for (d, &n) in slice.iter().zip(dims) {
        linear = linear * n + d.start;
    }
    let bits = operand.shape.element_type().map_or(8, |t| t.bit_width());
    (u64::try_from(linear).unwrap_or(0) * bits) / 8
}

/// True when an instruction costs nothing standing alone: it aliases its operand's buffer.
pub fn is_alias(comp: &Computation, instr: &Instruction) -> bool {
    match instr.opcode {
        Opcode::Reshape | Opcode::Bitcast => instr.shape.is_array(),
        Opcode::Slice => instr
            .operands
            .first()
            .and_then(|&o| comp.get(o))
            .is_some_and(|o| contiguous_slice(instr, o)),
        _ => false,
    }
}

/// An elementwise producer with at most one non-trivial operand is recomputed in up to this
/// many consumer kernels rather than materialized (reading its operand again is cheaper than
/// writing it once and reading it back in every consumer).
const MAX_DUPLICATION: usize = 3;

fn cheap(instr: &Instruction) -> bool {
    match instr.opcode {
        Opcode::Iota | Opcode::Broadcast => true,
        _ => instr.shape.element_count() <= 1 && class(instr) == Class::Elemental,
    }
}

/// Plans the kernels of a computation. With `fuse` off, every kernel instruction is its own
/// kernel.
pub fn plan(comp: &Computation, fuse: bool) -> Result<Vec<Unit>, CompileError> {
    let order = topo_order(comp)?;
    let n = comp.instructions.len();
    let mut pos = vec![0usize; n];
    for (p, id) in order.iter().enumerate() {
        pos[id.index()] = p;
    }
    let users = users(comp);
    // groups[g] = (root, members, outputs); membership per instruction.
    let mut groups: Vec<(InstrId, BTreeSet<InstrId>, Vec<InstrId>)> = Vec::new();
    let mut member_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut single: Vec<bool> = vec![false; n];
    for &id in order.iter().rev() {
        let instr = &comp[id];
        let cls = class(instr);
        if cls == Class::NonKernel {
            single[id.index()] = true;
            continue;
        }
        let mut consumer_groups: BTreeSet<usize> = BTreeSet::new();
        let mut external = id == comp.root;
        for u in &users[id.index()] {
            if single[u.index()] {
                external = true;
            }
            consumer_groups.extend(member_of[u.index()].iter().copied());
        }
        let fusible_into = |g: usize| -> bool {
            let root = &comp[groups[g].0];
            cls == Class::Elemental
                && instr.shape.is_array()
                && matches!(class(root), Class::Elemental | Class::Reduce)
        };
        if fuse && !consumer_groups.is_empty() {
            let all_fusible = consumer_groups.iter().all(|&g| fusible_into(g));
            if consumer_groups.len() == 1 && !external && all_fusible {
                let g = *consumer_groups.iter().next().unwrap_or(&0);
                groups[g].1.insert(id);
                member_of[id.index()].push(g);
                continue;
            }
            let duplicable = cheap(instr)
                || (!external
                    && consumer_groups.len() <= MAX_DUPLICATION
                    && !matches!(
                        instr.opcode,
                        Opcode::Gather
                            | Opcode::DynamicSlice
                            | Opcode::DynamicUpdateSlice
                            | Opcode::ReduceWindow
                            | Opcode::Concatenate
                            | Opcode::Pad
                    )
                    && instr
                        .operands
                        .iter()
                        .filter(|&&o| {
                            comp.get(o)
                                .is_some_and(|o| !cheap(o) && o.opcode != Opcode::Constant)
                        })
                        .count()
                        <= 1);
            if duplicable && all_fusible {
                for &g in &consumer_groups {
                    groups[g].1.insert(id);
                    member_of[id.index()].push(g);
                }
                if !external {
                    continue;
                }
            } else if consumer_groups.len() == 1 && external && all_fusible {
                let g = *consumer_groups.iter().next().unwrap_or(&0);
                let root = &comp[groups[g].0];
                let same_dims = class(root) == Class::Elemental
                    && root.shape.is_array()
                    && root.shape.dims() == instr.shape.dims();
                if same_dims
                    && !external_reaches_group(comp, &users, id, &groups[g].1, &single, &pos)
                {
                    groups[g].1.insert(id);
                    groups[g].2.push(id);
                    member_of[id.index()].push(g);
                    continue;
                }
            }
        }
        if is_alias(comp, instr) && member_of[id.index()].is_empty() {
            single[id.index()] = true;
            continue;
        }
        let g = groups.len();
        let mut members = BTreeSet::new();
        members.insert(id);
        groups.push((id, members, vec![id]));
        // A duplicated instruction that also has its own group is materialized by that group;
        // its memberships in consumer groups stay (they recompute it).
        member_of[id.index()].push(g);
    }
    if fuse {
        merge_siblings(comp, &mut groups, &single, &pos);
    }
    // Schedule: units ordered by the topological position of their root.
    let mut units: Vec<(usize, Unit)> = Vec::new();
    for (root, members, outputs) in groups.into_iter().filter(|g| !g.1.is_empty()) {
        let mut m: Vec<InstrId> = members.into_iter().collect();
        m.sort_by_key(|i| pos[i.index()]);
        // Extra outputs were added consumer-first; keep them in topological order.
        let mut extra: Vec<InstrId> = outputs.into_iter().filter(|&o| o != root).collect();
        extra.sort_by_key(|i| pos[i.index()]);
        let mut outs = vec![root];
        outs.extend(extra);
        units.push((
            pos[root.index()],
            Unit::Kernel(Group {
                members: m,
                outputs: outs,
            }),
        ));
    }
    for &id in &order {
        if single[id.index()] {
            units.push((pos[id.index()], Unit::Single(id)));
        }
    }
    units.sort_by_key(|(p, _)| *p);
    Ok(units.into_iter().map(|(_, u)| u).collect())
}

/// True when some user of `id` outside the group is an ancestor of a group member, i.e. making
/// `id` an extra output of the group would create a cycle.
fn external_reaches_group(
    comp: &Computation,
    users: &[Vec<InstrId>],
    id: InstrId,
    members: &BTreeSet<InstrId>,
    _single: &[bool],
    pos: &[usize],
) -> bool {
    let max_pos = members.iter().map(|m| pos[m.index()]).max().unwrap_or(0);
    let mut stack: Vec<InstrId> = users[id.index()]
        .iter()
        .copied()
        .filter(|u| !members.contains(u))
        .collect();
    let mut seen = vec![false; comp.instructions.len()];
    while let Some(x) = stack.pop() {
        if seen[x.index()] || pos[x.index()] > max_pos {
            continue;
        }
        seen[x.index()] = true;
        if members.contains(&x) {
            return true;
        }
        stack.extend(users[x.index()].iter().copied());
    }
    false
}

type RawGroup = (InstrId, BTreeSet<InstrId>, Vec<InstrId>);

/// Sibling multi-output fusion: a loop kernel whose root has the same dimensions as an earlier
/// loop kernel's, and that reads one of the same buffers, is merged into it (the buffer is then
/// read once), provided every buffer it reads is produced before the earlier kernel runs.
fn merge_siblings(comp: &Computation, groups: &mut [RawGroup], single: &[bool], pos: &[usize]) {
    let n = comp.instructions.len();
    // Position of the unit that materializes each instruction.
    // Parameters and constants are available before anything runs.
    let mut unit_pos: Vec<usize> = (0..n)
        .map(|i| match comp.instructions[i].opcode {
            Opcode::Parameter | Opcode::Constant => 0,
            _ if single[i] => pos[i],
            _ => usize::MAX,
        })
        .collect();
    for (root, _, outputs) in groups.iter() {
        for o in outputs {
            unit_pos[o.index()] = unit_pos[o.index()].min(pos[root.index()]);
        }
    }
    let inputs_of = |g: &RawGroup| -> BTreeSet<InstrId> {
        g.1.iter()
            .flat_map(|&m| comp[m].operands.iter().copied())
            .filter(|o| !g.1.contains(o))
            .collect()
    };
    let loop_root = |g: &RawGroup| {
        let r = &comp[g.0];
        class(r) == Class::Elemental && r.shape.is_array() && !g.1.is_empty()
    };
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&g| pos[groups[g].0.index()]);
    for (bi, &b) in order.iter().enumerate() {
        if !loop_root(&groups[b]) {
            continue;
        }
        let b_inputs = inputs_of(&groups[b]);
        let b_dims = comp[groups[b].0].shape.dims().to_vec();
        for &a in &order[..bi] {
            if !loop_root(&groups[a]) || comp[groups[a].0].shape.dims() != b_dims.as_slice() {
                continue;
            }
            let a_pos = pos[groups[a].0.index()];
            let a_inputs = inputs_of(&groups[a]);
            let shares = b_inputs
                .iter()
                .any(|i| a_inputs.contains(i) && comp[*i].opcode != Opcode::Constant);
            let ready = b_inputs.iter().all(|i| unit_pos[i.index()] < a_pos);
            if !shares || !ready {
                continue;
            }
            let (b_members, b_outputs) = (
                std::mem::take(&mut groups[b].1),
                std::mem::take(&mut groups[b].2),
            );
            for o in &b_outputs {
                unit_pos[o.index()] = a_pos;
            }
            groups[a].1.extend(b_members);
            groups[a].2.extend(b_outputs);
            break;
        }
    }
}
