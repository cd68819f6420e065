//! While loops and conditionals: loop-carried state in fixed values, branch results every
//! branch writes.
use hlo::Computation;
use hlo::{ComputationId, Instruction, PrimitiveType};

use crate::error::CompileError;
use crate::unsupported::UnsupportedControlFlow;

use super::*;

impl Lowerer<'_> {
    pub(super) fn lower_while(
        &mut self,
        comp: &Computation,
        instr: &Instruction,
        env: &mut [Option<Vec<Loc>>],
        ops: &mut Vec<Op>,
    ) -> Result<Vec<Loc>, CompileError> {
        let bad = |why: UnsupportedControlFlow| CompileError::unsupported(&comp.name, instr, why);
        let (Some(cond), Some(body)) = (instr.attrs.condition, instr.attrs.body) else {
            return Err(bad(UnsupportedControlFlow::WhileParts));
        };
        let init_id = *instr
            .operands
            .first()
            .ok_or_else(|| bad(UnsupportedControlFlow::WhileOperand))?;
        let init = self.locs(comp, init_id, env)?;
        let shared = self
            .module
            .get(body)
            .map_or_else(Vec::new, |b| shared_state(b, &init));
        let start = self.tick();
        let mut state: Vec<Loc> = Vec::new();
        for (j, ((_, shape), src)) in leaves(&instr.shape).into_iter().zip(&init).enumerate() {
            if let Some(&w) = shared.get(j).copied().flatten().and_then(|i| state.get(i)) {
                state.push(w);
                continue;
            }
            let w = self.temp(&shape, &format!("{}.state", instr.name), start);
            self.use_loc(*src, start);
            ops.push(Op::Copy {
                name: format!("{}.init", instr.name),
                src: *src,
                dst: w,
            });
            state.push(w);
        }
        if state.len() != init.len() {
            return Err(bad(UnsupportedControlFlow::InitValue));
        }
        let is_shared = |j: usize| shared.get(j).copied().flatten().is_some();
        let state_values: Vec<usize> = state.iter().map(|l| l.value).collect();
        let cond_start = self.clock;
        let (cond_ops, cond_root) = self.lower_computation(cond, vec![state.clone()])?;
        let pred = match cond_root.as_slice() {
            [p] => *p,
            _ => return Err(bad(UnsupportedControlFlow::Condition)),
        };
        let cond_end = self.tick();
        self.use_loc(pred, cond_end);
        let _ = cond_start;
        let body_start = self.clock;
        let (mut body_ops, body_root) =
            self.lower_scheduled(body, vec![state.clone()], Schedule::StateWritersLast)?;
        if body_root.len() != state.len() {
            return Err(bad(UnsupportedControlFlow::Body));
        }
        let body_end = self.tick();
        // Results that are (part of) the old state: copy through a temporary so no copy reads a
        // state value another copy already overwrote.
        let mut pending: Vec<(usize, Loc)> = Vec::new();
        let mut via_temp: Vec<(Loc, Loc)> = Vec::new();
        let mut bound = std::collections::BTreeSet::new();
        for (i, r) in body_root.iter().enumerate() {
            // A shared element's result is its first element's, which lands there.
            if is_shared(i) {
                bound.insert(i);
                continue;
            }
            let rv = self.resolve(r.value);
            if rv == state_values[i] && r.offset == 0 {
                bound.insert(i);
                continue;
            }
            if state_values.contains(&rv) {
                let t = self.temp_sized(r.size, &format!("{}.carry", instr.name), body_end);
                self.use_loc(*r, body_end);
                via_temp.push((*r, t));
                pending.push((i, t));
                bound.insert(i);
            }
        }
        for (i, r) in body_root.iter().enumerate() {
            if bound.contains(&i) {
                continue;
            }
            if !self.try_merge(*r, state_values[i], body_start) {
                pending.push((i, *r));
            }
        }
        let copy_tick = self.tick();
        for (src, dst) in via_temp {
            body_ops.push(Op::Copy {
                name: format!("{}.carry", instr.name),
                src,
                dst,
            });
        }
        pending.sort_by_key(|(i, _)| *i);
        for (i, src) in pending {
            self.use_loc(src, copy_tick);
            body_ops.push(Op::Copy {
                name: format!("{}.update", instr.name),
                src,
                dst: state[i],
            });
        }
        let end = self.tick();
        for &v in &state_values {
            self.values[v].last_use = self.values[v].last_use.max(end);
        }
        ops.push(Op::While {
            name: instr.name.clone(),
            pred,
            cond: cond_ops,
            body: body_ops,
            trip_count: if self.options.emit_trip_count_hints {
                known_trip_count(instr)
            } else {
                None
            },
        });
        Ok(state)
    }

    pub(super) fn temp_sized(&mut self, size: u64, name: &str, at: u32) -> Loc {
        let v = self.new_value(size, Placement::Temp, name);
        self.values[v].def = at;
        self.values[v].last_use = at;
        self.whole(v)
    }

    pub(super) fn lower_conditional(
        &mut self,
        comp: &Computation,
        instr: &Instruction,
        env: &mut [Option<Vec<Loc>>],
        ops: &mut Vec<Op>,
    ) -> Result<Vec<Loc>, CompileError> {
        let bad = |why: UnsupportedControlFlow| CompileError::unsupported(&comp.name, instr, why);
        let sel_id = *instr
            .operands
            .first()
            .ok_or_else(|| bad(UnsupportedControlFlow::Selector))?;
        let sel_shape = comp[sel_id].shape.clone();
        let is_bool = sel_shape.element_type() == Some(PrimitiveType::Pred);
        let branches: Vec<ComputationId> = if let Some(b) = &instr.attrs.branch_computations {
            b.clone()
        } else {
            match (instr.attrs.true_computation, instr.attrs.false_computation) {
                (Some(t), Some(f)) => vec![t, f],
                _ => return Err(bad(UnsupportedControlFlow::Branches)),
            }
        };
        if instr.operands.len() != branches.len() + 1 {
            return Err(bad(UnsupportedControlFlow::BranchOperands));
        }
        let index = self.one_loc(comp, sel_id, env)?;
        let start = self.tick();
        self.use_loc(index, start);
        let results: Vec<Loc> = leaves(&instr.shape)
            .into_iter()
            .map(|(_, s)| self.temp(&s, &instr.name, start))
            .collect();
        let mut branch_ops = Vec::new();
        let mut operand_locs = Vec::new();
        for (b, &cid) in branches.iter().enumerate() {
            let arg = instr.operands[b + 1];
            let locs = self.locs(comp, arg, env)?;
            operand_locs.extend(locs.iter().copied());
            let branch_start = self.clock;
            let (mut bops, root) = self.lower_computation(cid, vec![locs])?;
            if root.len() != results.len() {
                return Err(bad(UnsupportedControlFlow::BranchResult));
            }
            let t = self.tick();
            for (i, r) in root.iter().enumerate() {
                if !self.try_merge(*r, results[i].value, branch_start) {
                    self.use_loc(*r, t);
                    bops.push(Op::Copy {
                        name: format!("{}.result", instr.name),
                        src: *r,
                        dst: results[i],
                    });
                }
            }
            branch_ops.push(bops);
        }
        let end = self.tick();
        for l in operand_locs {
            self.use_loc(l, end);
        }
        ops.push(Op::Conditional {
            name: instr.name.clone(),
            index,
            index_shape: sel_shape.without_layout(),
            is_bool,
            branches: branch_ops,
        });
        Ok(results)
    }
}

/// For each leaf of a while loop's state, the earlier leaf it can share a buffer with: both
/// start from the same location (`init`), and the body returns one instruction for both (what
/// the `while-repeated` pass makes of a repeated element), so by induction they hold equal
/// values whenever the state is observed. Reads of either then read the shared buffer, and the
/// in-place and copy-back rules below see every read of both, since they are one value.
/// Only a flat state (one leaf per tuple element) is considered.
fn shared_state(body: &Computation, init: &[Loc]) -> Vec<Option<usize>> {
    let Some(root) = body.get(body.root) else {
        return Vec::new();
    };
    let flat = root.opcode == Opcode::Tuple
        && root.operands.len() == init.len()
        && root
            .operands
            .iter()
            .all(|&o| body.get(o).is_some_and(|x| !x.shape.is_tuple()));
    if !flat {
        return Vec::new();
    }
    let elements: Vec<(Loc, InstrId)> = init.iter().copied().zip(root.operands.clone()).collect();
    elements
        .iter()
        .enumerate()
        .map(|(j, &(start, result))| {
            elements
                .iter()
                .take(j)
                .position(|&(s, r)| s == start && r == result)
        })
        .collect()
}

/// Sinks above which [`state_writers_last`] keeps the plan's order among them (its ordering of
/// the sinks compares every pair); they still run after the other units.
const MAX_ORDERED_SINKS: usize = 256;

/// A while body's units, reordered so that fewer results need a copy back into the loop state.
///
/// A result is computed in place, into its state slot, only when every read of the old value
/// of that slot has already happened (`try_merge`). The fusion plan runs kernels in the
/// topological order of their roots, which can put the kernel computing slot `k`'s next value
/// before another kernel that still reads slot `k` (fori_loop: `i + 1` before `x * 0.5 + i`),
/// and then the result goes to a temporary and is copied back. So the *sinks* (kernels whose
/// outputs only the root tuple reads) move after every other unit, and among themselves a
/// kernel that reads slot `k` goes before the kernel that writes slot `k` where that order
/// exists (a cycle, as in a swap, keeps the plan's order for what remains).
///
/// Any order that keeps each unit after the units it reads is as valid as the plan's: sinks
/// are pure kernels nothing but the root reads, so moving them later breaks no dependency, and
/// the other units keep their order (side effects included). Which results are computed in
/// place is still decided by `try_merge` over the real reads, so the order only changes how
/// many copies are needed, never a value.
pub(super) fn state_writers_last(comp: &Computation, units: Vec<Unit>) -> Vec<Unit> {
    use std::collections::BTreeSet;
    let (Some(root), Some(&param)) = (comp.get(comp.root), comp.params.first()) else {
        return units;
    };
    let users = crate::graph::users(comp);
    if root.opcode != Opcode::Tuple || users.get(comp.root.index()).is_none_or(|u| !u.is_empty()) {
        return units;
    }
    let Ok(order) = crate::graph::topo_order(comp) else {
        return units;
    };
    // The state slots whose buffer each instruction's value may be (part of): a parameter read,
    // or what forwards one (lowering gives these their operand's location).
    let mut slots: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); comp.instructions.len()];
    for id in order {
        let instr = &comp[id];
        let set: BTreeSet<usize> = if id == param {
            (0..root.operands.len()).collect()
        } else if instr.opcode == Opcode::GetTupleElement && instr.operands.first() == Some(&param)
        {
            instr
                .attrs
                .tuple_index
                .and_then(|k| usize::try_from(k).ok())
                .into_iter()
                .collect()
        } else if matches!(
            instr.opcode,
            Opcode::GetTupleElement
                | Opcode::Tuple
                | Opcode::Bitcast
                | Opcode::Reshape
                | Opcode::Slice
                | Opcode::Copy
                | Opcode::OptimizationBarrier
        ) {
            instr
                .operands
                .iter()
                .filter_map(|o| slots.get(o.index()))
                .flatten()
                .copied()
                .collect()
        } else {
            BTreeSet::new()
        };
        if let Some(slot) = slots.get_mut(id.index()) {
            *slot = set;
        }
    }
    let only_root = |o: &InstrId| {
        *o != comp.root
            && users
                .get(o.index())
                .is_some_and(|u| !u.is_empty() && u.iter().all(|&x| x == comp.root))
    };
    // (reads, writes) of each sink, by state slot.
    let mut sinks: Vec<(Unit, BTreeSet<usize>, BTreeSet<usize>)> = Vec::new();
    let mut rest = Vec::new();
    let mut root_unit = None;
    for unit in units {
        match &unit {
            Unit::Kernel(g) if g.outputs.iter().all(only_root) => {
                let members: BTreeSet<InstrId> = g.members.iter().copied().collect();
                let reads = g
                    .members
                    .iter()
                    .flat_map(|&m| comp[m].operands.iter())
                    .filter(|o| !members.contains(o))
                    .filter_map(|o| slots.get(o.index()))
                    .flatten()
                    .copied()
                    .collect();
                let writes = root
                    .operands
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| g.outputs.contains(o))
                    .map(|(k, _)| k)
                    .collect();
                sinks.push((unit, reads, writes));
            }
            Unit::Single(id) if *id == comp.root => root_unit = Some(unit),
            _ => rest.push(unit),
        }
    }
    let mut out = rest;
    if sinks.len() > MAX_ORDERED_SINKS {
        out.extend(sinks.into_iter().map(|(u, _, _)| u));
    } else {
        // Kahn's algorithm over "a reads a slot b writes" (a before b), the plan's order among
        // the ready ones; a cycle takes the earliest remaining sink.
        let n = sinks.len();
        let before: Vec<Vec<bool>> = (0..n)
            .map(|a| {
                (0..n)
                    .map(|b| a != b && !sinks[a].1.is_disjoint(&sinks[b].2))
                    .collect()
            })
            .collect();
        let mut waiting: Vec<usize> = (0..n)
            .map(|b| (0..n).filter(|&a| before[a][b]).count())
            .collect();
        let mut done = vec![false; n];
        let mut picked = Vec::with_capacity(n);
        while let Some(next) = (0..n)
            .find(|&b| !done[b] && waiting[b] == 0)
            .or_else(|| (0..n).find(|&b| !done[b]))
        {
            done[next] = true;
            picked.push(next);
            for (c, w) in waiting.iter_mut().enumerate() {
                if before[next][c] {
                    *w = w.saturating_sub(1);
                }
            }
        }
        let mut slots: Vec<Option<Unit>> = sinks.into_iter().map(|(u, _, _)| Some(u)).collect();
        out.extend(picked.into_iter().filter_map(|i| slots.get_mut(i)?.take()));
    }
    out.extend(root_unit);
    out
}
