//! Fusion: groups the instructions of a computation into kernels.
//!
//! Instructions are classified as
//! - *elemental* (elementwise ops, compare, select, clamp, convert, broadcast, reshape,
//!   transpose, slice, concatenate, pad, iota, reverse, gather, dynamic-slice,
//!   dynamic-update-slice, reduce-window, ...): each output element is computed from operand
//!   elements by indexing, so any chain of them fuses into one loop kernel;
//! - *reductions* (`reduce`): fused with their elemental producers (input fusion), and along
//!   trailing dimensions with their consumers too (row-reduction fusion, [`row_dims`]);
//! - *standalone kernels* (sort, scatter, convolution, ...): one kernel each (a scatter also
//!   computes its elemental operands, [`scatter_operand`]);
//! - *non-kernel* instructions (parameters, constants, tuples, get-tuple-element, bitcasts, dot
//!   (except a small f32 dot fused with its elementwise epilogue, [`small_gemm`]),
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

use hlo::Computation;
use hlo::{InstrId, Instruction, Opcode};

use crate::error::CompileError;
use crate::graph::{topo_order, users};

mod duplication;

pub use duplication::MAX_CODE_DUPLICATION;
use duplication::{Emissions, Emitted};

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
        | CustomCall | AllReduce | AllGather | ReduceScatter | CollectivePermute | ReplicaId
        | PartitionId | AfterAll | AddDependency | OptimizationBarrier | Call | Fusion | Fft => {
            Class::NonKernel
        }
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

/// Longest operand chain inside one kernel: an instruction further from its kernel's root
/// starts a kernel of its own. Far above any real model's fusions (so it changes no golden),
/// it bounds the code generator's recursion (`codegen::elemental`) by the kernel, not by the
/// module: an elementwise chain 100,000 deep compiles into about 400 kernels.
pub const MAX_FUSION_DEPTH: usize = 256;

fn cheap(instr: &Instruction) -> bool {
    match instr.opcode {
        Opcode::Iota | Opcode::Broadcast => true,
        _ => instr.shape.element_count() <= 1 && class(instr) == Class::Elemental,
    }
}

/// True when `id` is one of the operands (not the indices or updates) of scatter `root`: it
/// fuses into the scatter's first kernel, which copies the operands into the outputs, as XLA's
/// scatter fusion computes its operand in place (`jnp.zeros(...).at[i].add(u)`: the zeros are
/// written by that kernel instead of by a kernel of their own and copied).
fn scatter_operand(root: &Instruction, id: InstrId) -> bool {
    let n = root.operands.len() / 2;
    root.opcode == Opcode::Scatter && root.operands[..n].contains(&id)
}

/// Plans the kernels of a computation. With `fuse` off, every kernel instruction is its own
/// kernel.
pub fn plan(comp: &Computation, fuse: bool) -> Result<Vec<Unit>, CompileError> {
    plan_with(comp, fuse, &|_| false)
}

/// [`plan`], with the instructions `thunk` accepts taken out of the kernels as single units
/// (the convolutions that become convolution thunks: `CompileOptions::emit_convolution_thunk`).
pub fn plan_with(
    comp: &Computation,
    fuse: bool,
    thunk: &dyn Fn(&Instruction) -> bool,
) -> Result<Vec<Unit>, CompileError> {
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
    // depth[i]: the longest operand chain from the root of i's kernel down to i. A kernel's
    // code is emitted by following operand chains recursively, so a chain of 100,000
    // elementwise instructions becomes kernels of at most MAX_FUSION_DEPTH levels each.
    let mut depth: Vec<usize> = vec![0; n];
    // How often each member's code is emitted in its kernel: a producer that would be emitted
    // more than MAX_CODE_DUPLICATION times is materialized instead (`duplication`).
    let mut emissions = Emissions::default();
    for &id in order.iter().rev() {
        let instr = &comp[id];
        let cls = if thunk(instr) {
            Class::NonKernel
        } else {
            class(instr)
        };
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
                && (matches!(class(root), Class::Elemental | Class::Reduce)
                    || scatter_operand(root, id))
        };
        let join_depth = users[id.index()]
            .iter()
            .filter(|u| !member_of[u.index()].is_empty())
            .map(|u| depth[u.index()] + 1)
            .max()
            .unwrap_or(0);
        if fuse && !consumer_groups.is_empty() && join_depth <= MAX_FUSION_DEPTH {
            depth[id.index()] = join_depth;
            // How the instruction would be emitted in each consuming kernel; a kernel where it
            // would be emitted too often does not take it.
            let emitted: Vec<(usize, Emitted)> = consumer_groups
                .iter()
                .map(|&g| (g, emissions.would_be(comp, g, id, &users[id.index()])))
                .collect();
            let bounded = emitted.iter().all(|(_, e)| e.count <= MAX_CODE_DUPLICATION);
            let all_fusible = bounded && consumer_groups.iter().all(|&g| fusible_into(g));
            if consumer_groups.len() == 1 && !external && all_fusible {
                for (g, e) in emitted {
                    groups[g].1.insert(id);
                    member_of[id.index()].push(g);
                    emissions.record(g, id, e);
                }
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
                for (g, e) in emitted {
                    groups[g].1.insert(id);
                    member_of[id.index()].push(g);
                    emissions.record(g, id, e);
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
                    // An extra output is stored at the kernel's own index, once more.
                    let mut e = emissions.would_be(comp, g, id, &users[id.index()]);
                    e.count = e.count.saturating_add(1);
                    emissions.record(g, id, e);
                    continue;
                }
            }
        }
        if is_alias(comp, instr) && member_of[id.index()].is_empty() {
            single[id.index()] = true;
            continue;
        }
        let g = groups.len();
        depth[id.index()] = 0;
        let mut members = BTreeSet::new();
        members.insert(id);
        groups.push((id, members, vec![id]));
        emissions.root(g, id);
        // A duplicated instruction that also has its own group is materialized by that group;
        // its memberships in consumer groups stay (they recompute it).
        member_of[id.index()].push(g);
    }
    if fuse {
        merge_rows(comp, &mut groups, &mut member_of, &users, &single, &pos);
        merge_dots(comp, &mut groups, &mut member_of, &users, &mut single, &pos);
        merge_siblings(comp, &mut groups, &single, &pos);
    }
    // Schedule: units ordered by the topological position of their root, except that a
    // get-tuple-element (which only names part of its operand's buffer) comes right after the
    // unit that materializes its operand, as `merge_siblings` assumes.
    let mut key: Vec<(usize, usize)> = pos.iter().map(|&p| (p, p)).collect();
    for (root, _, outputs) in groups.iter().filter(|g| !g.1.is_empty()) {
        let p = pos[root.index()];
        for o in outputs {
            key[o.index()] = (p, p);
        }
    }
    for &id in &order {
        let instr = &comp[id];
        if single[id.index()] && instr.opcode == Opcode::GetTupleElement {
            if let Some(&o) = instr.operands.first() {
                key[id.index()] = (key[o.index()].0, pos[id.index()]);
            }
        }
    }
    let mut units: Vec<((usize, usize), Unit)> = Vec::new();
    for (root, members, outputs) in groups.into_iter().filter(|g| !g.1.is_empty()) {
        let mut m: Vec<InstrId> = members.into_iter().collect();
        m.sort_by_key(|i| pos[i.index()]);
        // Extra outputs were added consumer-first; keep them in topological order.
        let mut extra: Vec<InstrId> = outputs.into_iter().filter(|&o| o != root).collect();
        extra.sort_by_key(|i| pos[i.index()]);
        let mut outs = vec![root];
        outs.extend(extra);
        units.push((
            key[root.index()],
            Unit::Kernel(Group {
                members: m,
                outputs: outs,
            }),
        ));
    }
    for &id in &order {
        if single[id.index()] {
            units.push((key[id.index()], Unit::Single(id)));
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
/// loop kernel's, and that reads one of the same buffers (or, for scalar roots, any earlier
/// scalar loop kernel), is merged into it (the buffer is then read once), provided every
/// buffer it reads is produced before the earlier kernel runs.
///
/// Of the candidates, the earliest kernel wins. Each kernel's inputs are computed once and kept
/// up to date on a merge, and the candidates are found through an index from (input, root
/// dimensions) to the kernels that read it, ordered by position: linear in the number of
/// instructions (up to a log factor), where comparing every kernel with every earlier one grew
/// as N^1.4 on chains of dot+tanh pairs (issue 17).
fn merge_siblings(comp: &Computation, groups: &mut [RawGroup], single: &[bool], pos: &[usize]) {
    use std::collections::{BTreeMap, HashMap};
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
    // A get-tuple-element only names part of its operand's buffer: it is available when the
    // operand is (a loop state's elements are available before the body runs).
    let mut by_pos: Vec<usize> = (0..n).collect();
    by_pos.sort_by_key(|&i| pos[i]);
    for i in by_pos {
        let instr = &comp.instructions[i];
        if instr.opcode == Opcode::GetTupleElement && single[i] {
            if let Some(&o) = instr.operands.first() {
                unit_pos[i] = unit_pos[i].min(unit_pos[o.index()]);
            }
        }
    }
    let inputs_of = |g: &RawGroup| -> BTreeSet<InstrId> {
        g.1.iter()
            .flat_map(|&m| comp[m].operands.iter().copied())
            .filter(|o| !g.1.contains(o))
            .collect()
    };
    // (A row kernel has an elemental root too, but only one output; a gemm-epilogue kernel
    // computes one dot's tiles, so two of them never merge: the second dot would have no code.)
    let loop_root = |g: &RawGroup| {
        let r = &comp[g.0];
        class(r) == Class::Elemental
            && r.shape.is_array()
            && !g.1.is_empty()
            && !g
                .1
                .iter()
                .any(|&m| matches!(comp[m].opcode, Opcode::Reduce | Opcode::Dot))
    };
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&g| pos[groups[g].0.index()]);
    // Inputs of the loop kernels seen so far (kept current when a kernel absorbs another).
    let mut inputs: HashMap<usize, BTreeSet<InstrId>> = HashMap::new();
    // (input, root dimensions) -> kernels reading it, by root position.
    let mut readers: HashMap<(InstrId, Vec<i64>), BTreeMap<usize, usize>> = HashMap::new();
    // Scalar loop kernels by root position: two of them merge even without a common input (the
    // traffic is the same and a launch is saved: a loop's counters, as in `fori_loop`).
    let mut scalars: BTreeMap<usize, usize> = BTreeMap::new();
    for &b in &order {
        if !loop_root(&groups[b]) {
            continue;
        }
        let b_inputs = inputs_of(&groups[b]);
        let b_dims = comp[groups[b].0].shape.dims().to_vec();
        // Every input of b must be materialized before the kernel b joins runs.
        let ready_after = b_inputs
            .iter()
            .map(|i| unit_pos[i.index()])
            .max()
            .unwrap_or(0);
        let mut best: Option<(usize, usize)> = None;
        if ready_after != usize::MAX {
            for i in b_inputs
                .iter()
                .filter(|i| comp[**i].opcode != Opcode::Constant)
            {
                let Some(list) = readers.get(&(*i, b_dims.clone())) else {
                    continue;
                };
                if let Some((&p, &a)) = list.range(ready_after.saturating_add(1)..).next() {
                    if best.is_none_or(|(bp, _)| p < bp) {
                        best = Some((p, a));
                    }
                }
            }
            if b_dims.is_empty() {
                if let Some((&p, &a)) = scalars.range(ready_after.saturating_add(1)..).next() {
                    if best.is_none_or(|(bp, _)| p < bp) {
                        best = Some((p, a));
                    }
                }
            }
        }
        match best {
            Some((a_pos, a)) => {
                let (b_members, b_outputs) = (
                    std::mem::take(&mut groups[b].1),
                    std::mem::take(&mut groups[b].2),
                );
                for o in &b_outputs {
                    unit_pos[o.index()] = a_pos;
                }
                let a_inputs = inputs.entry(a).or_default();
                for m in &b_members {
                    // b recomputes what a read from memory: no longer an input of a.
                    if a_inputs.remove(m) {
                        if let Some(list) = readers.get_mut(&(*m, b_dims.clone())) {
                            list.remove(&a_pos);
                        }
                    }
                }
                for &i in &b_inputs {
                    if !groups[a].1.contains(&i) && a_inputs.insert(i) {
                        readers
                            .entry((i, b_dims.clone()))
                            .or_default()
                            .insert(a_pos, a);
                    }
                }
                groups[a].1.extend(b_members);
                groups[a].2.extend(b_outputs);
            }
            None => {
                let b_pos = pos[groups[b].0.index()];
                for &i in &b_inputs {
                    readers
                        .entry((i, b_dims.clone()))
                        .or_default()
                        .insert(b_pos, b);
                }
                inputs.insert(b, b_inputs);
                if b_dims.is_empty() {
                    scalars.insert(b_pos, b);
                }
            }
        }
    }
}

/// Row-reduction fusion: a reduction whose result only its consumer kernel reads is merged into
/// that kernel when the two form a row kernel ([`row_dims`]), latest reduction first (so a
/// chain of them, as in softmax, folds into the last consumer); then a loop kernel whose
/// outputs only one row kernel reads is merged into it as a producer (the gather of
/// `jnp.take`, whose index feeds both the bounds check and the gather).
fn merge_rows(
    comp: &Computation,
    groups: &mut [RawGroup],
    member_of: &mut [Vec<usize>],
    users: &[Vec<InstrId>],
    single: &[bool],
    pos: &[usize],
) {
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&g| std::cmp::Reverse(pos[groups[g].0.index()]));
    // The one kernel (other than g) that reads every output of g, if there is one.
    let sole_consumer = |groups: &[RawGroup], member_of: &[Vec<usize>], g: usize| {
        let mut found: Option<usize> = None;
        for o in &groups[g].2 {
            if *o == comp.root {
                return None;
            }
            for u in &users[o.index()] {
                if single[u.index()] {
                    return None;
                }
                let mut inside = false;
                for &h in &member_of[u.index()] {
                    if h == g {
                        inside = true;
                        continue;
                    }
                    match found {
                        Some(x) if x != h => return None,
                        _ => found = Some(h),
                    }
                }
                if !inside && member_of[u.index()].is_empty() {
                    return None;
                }
            }
        }
        found
    };
    let sorted = |a: &BTreeSet<InstrId>, b: &BTreeSet<InstrId>| -> Vec<InstrId> {
        let mut v: Vec<InstrId> = a.union(b).copied().collect();
        v.sort_by_key(|i| pos[i.index()]);
        v
    };
    let merge = |groups: &mut [RawGroup], member_of: &mut [Vec<usize>], g: usize, c: usize| {
        let members = std::mem::take(&mut groups[g].1);
        groups[g].2.clear();
        for m in &members {
            let of = &mut member_of[m.index()];
            of.retain(|&h| h != g);
            if !of.contains(&c) {
                of.push(c);
            }
        }
        groups[c].1.extend(members);
    };
    let mut is_row = vec![false; groups.len()];
    for &g in &order {
        let root = &comp[groups[g].0];
        if root.opcode != Opcode::Reduce || groups[g].2.len() != 1 || groups[g].1.is_empty() {
            continue;
        }
        let Some(c) = sole_consumer(groups, member_of, g) else {
            continue;
        };
        let c_root = &comp[groups[c].0];
        if groups[c].2.len() != 1
            || !matches!(class(c_root), Class::Elemental | Class::Reduce)
            || !c_root.shape.is_array()
        {
            continue;
        }
        let cand = sorted(&groups[c].1, &groups[g].1);
        if row_dims(comp, &cand, groups[c].0).is_some() {
            merge(groups, member_of, g, c);
            is_row[c] = true;
        }
    }
    for &p in &order {
        let root = &comp[groups[p].0];
        if class(root) != Class::Elemental || groups[p].1.is_empty() || is_row[p] {
            continue;
        }
        let Some(c) = sole_consumer(groups, member_of, p) else {
            continue;
        };
        if !is_row[c] {
            continue;
        }
        let cand = sorted(&groups[c].1, &groups[p].1);
        if row_dims(comp, &cand, groups[c].0).is_some() {
            merge(groups, member_of, p, c);
        }
    }
}

/// Most instructions one row kernel holds: merging re-checks the whole group, so the cap keeps
/// planning linear, and a row's code stays a size ptxas handles quickly.
const MAX_ROW_MEMBERS: usize = 4096;

/// The row dimensions when `members` (in topological order; everything else is an input read
/// from memory) can be one *row kernel*: one block per row computing every `reduce` of the
/// group for that row in turn (each a shared-memory tree, as the reduction kernel does), then
/// the root's elements of the row. It holds when
/// - every reduce has one input, reduces a suffix of that input's dimensions, and keeps the
///   same leading dimensions (the row dimensions) as the others;
/// - every instruction that depends on a reduce of the group (is *row-dependent*) has
///   dimensions that start with the row dimensions, and maps its index to its row-dependent
///   operands keeping the row part: elementwise with equal dimensions, a reshape between two
///   such shapes (row-major keeps the row), or a broadcast whose operand's leading dimensions
///   map to the same output dimensions;
/// - no reduce's init value is row-dependent, and the root is row-dependent and an array.
///
/// Then a reduce is only ever read at the current row, where its value is known: the code
/// generator substitutes it. Instructions that do not depend on a reduce are computed at
/// whatever index they are read, as in any loop kernel.
pub fn row_dims(comp: &Computation, members: &[InstrId], root: InstrId) -> Option<Vec<i64>> {
    if members.len() > MAX_ROW_MEMBERS {
        return None;
    }
    let member: BTreeSet<InstrId> = members.iter().copied().collect();
    let mut tainted: BTreeSet<InstrId> = BTreeSet::new();
    let mut rows: Option<Vec<i64>> = None;
    let starts_with_rows =
        |dims: &[i64], rows: &[i64]| dims.len() >= rows.len() && dims[..rows.len()] == *rows;
    for &id in members {
        let instr = comp.get(id)?;
        if !instr.shape.is_array() {
            return None;
        }
        let dims = instr.shape.dims();
        if instr.opcode == Opcode::Reduce {
            let [input, init] = instr.operands.as_slice() else {
                return None;
            };
            if tainted.contains(init) {
                return None;
            }
            let in_dims = comp.get(*input)?.shape.dims();
            let reduced = instr.attrs.dimensions.as_deref().unwrap_or(&[]);
            let k = in_dims.len().checked_sub(reduced.len())?;
            if reduced
                .iter()
                .enumerate()
                .any(|(j, &d)| d != (k + j) as i64)
                || dims != &in_dims[..k]
            {
                return None;
            }
            match &rows {
                Some(r) if r.as_slice() != dims => return None,
                Some(_) => {}
                None => rows = Some(dims.to_vec()),
            }
            tainted.insert(id);
            continue;
        }
        let dependent: Vec<InstrId> = instr
            .operands
            .iter()
            .copied()
            .filter(|o| member.contains(o) && tainted.contains(o))
            .collect();
        if dependent.is_empty() {
            continue;
        }
        let r = rows.as_deref()?;
        if !starts_with_rows(dims, r) {
            return None;
        }
        let op = instr.opcode;
        let ok = if op.is_elementwise_unary()
            || op.is_elementwise_binary()
            || matches!(
                op,
                Opcode::Compare
                    | Opcode::Select
                    | Opcode::Clamp
                    | Opcode::Convert
                    | Opcode::BitcastConvert
                    | Opcode::ReducePrecision
            ) {
            dependent
                .iter()
                .all(|&o| comp.get(o).is_some_and(|o| o.shape.dims() == dims))
        } else if matches!(op, Opcode::Reshape | Opcode::Bitcast) {
            dependent.iter().all(|&o| {
                comp.get(o)
                    .is_some_and(|o| starts_with_rows(o.shape.dims(), r))
            })
        } else if op == Opcode::Broadcast {
            let map = instr.attrs.dimensions.as_deref().unwrap_or(&[]);
            dependent.iter().all(|&o| {
                comp.get(o)
                    .is_some_and(|o| starts_with_rows(o.shape.dims(), r))
            }) && map.len() >= r.len()
                && map
                    .iter()
                    .take(r.len())
                    .enumerate()
                    .all(|(j, &d)| d == j as i64)
        } else {
            false
        };
        if !ok {
            return None;
        }
        tainted.insert(id);
    }
    (member.contains(&root) && tainted.contains(&root))
        .then_some(rows)
        .flatten()
}

/// `(M, K, N)` when `dot` is a plain product of row-major f32 matrices `[M, K] x [K, N]` small
/// enough for one block's shared memory ([`crate::codegen::gemm::MAX_OPERAND_BYTES`]).
pub fn small_gemm(comp: &Computation, dot: InstrId) -> Option<(u64, u64, u64)> {
    let d = comp.get(dot)?;
    let [lhs, rhs] = d.operands.as_slice() else {
        return None;
    };
    let (l, r) = (comp.get(*lhs)?, comp.get(*rhs)?);
    let f32_ = |s: &hlo::Shape| s.element_type() == Some(hlo::PrimitiveType::F32);
    if d.opcode != Opcode::Dot || !f32_(&d.shape) || !f32_(&l.shape) || !f32_(&r.shape) {
        return None;
    }
    let dn = d.attrs.dot_dimension_numbers.as_ref()?;
    if !dn.lhs_batch_dims.is_empty()
        || !dn.rhs_batch_dims.is_empty()
        || dn.lhs_contracting_dims != [1]
        || dn.rhs_contracting_dims != [0]
    {
        return None;
    }
    let (&[m, k], &[k2, n], &[m2, n2]) = (l.shape.dims(), r.shape.dims(), d.shape.dims()) else {
        return None;
    };
    if k != k2 || m != m2 || n != n2 || [m, k, n].iter().any(|&x| x <= 0) {
        return None;
    }
    let (m, k, n) = (m as u64, k as u64, n as u64);
    let bytes = (m * k).checked_add(k * n)?.checked_mul(4)?;
    (bytes <= crate::codegen::gemm::MAX_OPERAND_BYTES).then_some((m, k, n))
}

/// True when, in `members` (topological order; the rest are inputs), everything that depends on
/// `dot` is elementwise with the dot's dimensions, up to and including `root`, and no other
/// dot or reduce is a member: the epilogue then reads the dot only at the element it computes.
pub fn epilogue_ok(comp: &Computation, members: &[InstrId], dot: InstrId, root: InstrId) -> bool {
    let Some(d) = comp.get(dot) else {
        return false;
    };
    let member: BTreeSet<InstrId> = members.iter().copied().collect();
    let mut tainted: BTreeSet<InstrId> = BTreeSet::new();
    tainted.insert(dot);
    for &id in members {
        let Some(instr) = comp.get(id) else {
            return false;
        };
        if id == dot {
            continue;
        }
        if matches!(instr.opcode, Opcode::Dot | Opcode::Reduce) {
            return false;
        }
        let dependent = instr
            .operands
            .iter()
            .any(|o| member.contains(o) && tainted.contains(o));
        if !dependent {
            continue;
        }
        let op = instr.opcode;
        let elementwise = op.is_elementwise_unary()
            || op.is_elementwise_binary()
            || matches!(
                op,
                Opcode::Compare | Opcode::Select | Opcode::Clamp | Opcode::Convert
            );
        if !elementwise || instr.shape.dims() != d.shape.dims() || !instr.shape.is_array() {
            return false;
        }
        tainted.insert(id);
    }
    root != dot && tainted.contains(&root)
}

/// Gemm epilogue fusion: a small f32 dot ([`small_gemm`]) whose only readers are one loop
/// kernel that applies elementwise operations to it (bias, activation) joins that kernel, which
/// becomes a generated gemm kernel with the epilogue (`codegen/gemm.rs`): one launch, no
/// intermediate buffer. Its operands stay inputs of the kernel.
fn merge_dots(
    comp: &Computation,
    groups: &mut [RawGroup],
    member_of: &mut [Vec<usize>],
    users: &[Vec<InstrId>],
    single: &mut [bool],
    pos: &[usize],
) {
    let dots: Vec<InstrId> = comp
        .iter()
        .filter(|(id, i)| i.opcode == Opcode::Dot && single[id.index()] && *id != comp.root)
        .map(|(id, _)| id)
        .collect();
    for dot in dots {
        if small_gemm(comp, dot).is_none() {
            continue;
        }
        let mut consumer: Option<usize> = None;
        let mut ok = !users[dot.index()].is_empty();
        for u in &users[dot.index()] {
            let of = &member_of[u.index()];
            if single[u.index()] || of.len() != 1 || consumer.is_some_and(|c| c != of[0]) {
                ok = false;
                break;
            }
            consumer = Some(of[0]);
        }
        let Some(c) = consumer.filter(|_| ok) else {
            continue;
        };
        let root = groups[c].0;
        let operands = &comp[dot].operands;
        // One gemm per kernel: the epilogue kernel computes its dot's tile once per block
        // (codegen/gemm.rs), so a second dot read by the same kernel stays a gemm thunk.
        let has_dot = groups[c].1.iter().any(|m| comp[*m].opcode == Opcode::Dot);
        if groups[c].2.len() != 1
            || has_dot
            || class(&comp[root]) != Class::Elemental
            || operands.iter().any(|o| groups[c].1.contains(o))
            || groups[c].1.len() + 1 > MAX_ROW_MEMBERS
        {
            continue;
        }
        let mut cand: Vec<InstrId> = groups[c].1.iter().copied().collect();
        cand.push(dot);
        cand.sort_by_key(|i| pos[i.index()]);
        if epilogue_ok(comp, &cand, dot, root) {
            groups[c].1.insert(dot);
            member_of[dot.index()] = vec![c];
            single[dot.index()] = false;
        }
    }
}
