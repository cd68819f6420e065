//! While loops and conditionals: loop-carried state in fixed values, branch results every
//! branch writes.
use hlo::ir::Computation;
use hlo::{ComputationId, Instruction, PrimitiveType};

use crate::error::CompileError;

use super::*;

impl Lowerer<'_> {
    pub(super) fn lower_while(
        &mut self,
        comp: &Computation,
        instr: &Instruction,
        env: &mut [Option<Vec<Loc>>],
        ops: &mut Vec<Op>,
    ) -> Result<Vec<Loc>, CompileError> {
        let bad = |why: &str| CompileError::unsupported(&comp.name, instr, why.to_owned());
        let (Some(cond), Some(body)) = (instr.attrs.condition, instr.attrs.body) else {
            return Err(bad("while without condition or body"));
        };
        let init_id = *instr
            .operands
            .first()
            .ok_or_else(|| bad("while without operand"))?;
        let init = self.locs(comp, init_id, env)?;
        let start = self.tick();
        let mut state = Vec::new();
        for ((_, shape), src) in leaves(&instr.shape).into_iter().zip(&init) {
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
            return Err(bad("the init value does not match the loop state"));
        }
        let state_values: Vec<usize> = state.iter().map(|l| l.value).collect();
        let cond_start = self.clock;
        let (cond_ops, cond_root) = self.lower_computation(cond, vec![state.clone()])?;
        let pred = match cond_root.as_slice() {
            [p] => *p,
            _ => return Err(bad("the condition does not return a pred")),
        };
        let cond_end = self.tick();
        self.use_loc(pred, cond_end);
        let _ = cond_start;
        let body_start = self.clock;
        let (mut body_ops, body_root) = self.lower_computation(body, vec![state.clone()])?;
        if body_root.len() != state.len() {
            return Err(bad("the body does not return the loop state"));
        }
        let body_end = self.tick();
        // Results that are (part of) the old state: copy through a temporary so no copy reads a
        // state value another copy already overwrote.
        let mut pending: Vec<(usize, Loc)> = Vec::new();
        let mut via_temp: Vec<(Loc, Loc)> = Vec::new();
        let mut bound = std::collections::BTreeSet::new();
        for (i, r) in body_root.iter().enumerate() {
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
        let bad = |why: &str| CompileError::unsupported(&comp.name, instr, why.to_owned());
        let sel_id = *instr
            .operands
            .first()
            .ok_or_else(|| bad("conditional without selector"))?;
        let sel_shape = comp[sel_id].shape.clone();
        let is_bool = sel_shape.element_type() == Some(PrimitiveType::Pred);
        let branches: Vec<ComputationId> = if let Some(b) = &instr.attrs.branch_computations {
            b.clone()
        } else {
            match (instr.attrs.true_computation, instr.attrs.false_computation) {
                (Some(t), Some(f)) => vec![t, f],
                _ => return Err(bad("conditional without branches")),
            }
        };
        if instr.operands.len() != branches.len() + 1 {
            return Err(bad("operand count does not match the branches"));
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
                return Err(bad(
                    "a branch result does not match the conditional's shape",
                ));
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
