//! A fusion group: its kernel (or the memset a constant fill becomes) and its operands.
use hlo::Computation;
use hlo::{ComputationId, InstrId, Instruction, Opcode, PrimitiveType, Shape};

use crate::codegen::{self, KernelArg, KernelRequest};
use crate::error::CompileError;
use crate::fusion::{self, Group};

use super::*;

impl Lowerer<'_> {
    pub(super) fn lower_group(
        &mut self,
        comp: &Computation,
        g: &Group,
        env: &mut [Option<Vec<Loc>>],
        ops: &mut Vec<Op>,
    ) -> Result<(), CompileError> {
        match self.emit_group(comp, g, env, ops) {
            Err(CompileError::Codegen { .. }) if g.members.len() > 1 => {
                // Fallback: one kernel per instruction.
                for &m in &g.members {
                    if env.get(m.index()).is_some_and(Option::is_some) {
                        continue;
                    }
                    let instr = &comp[m];
                    if fusion::is_alias(comp, instr) {
                        self.lower_single(comp, m, env, ops)?;
                        continue;
                    }
                    let single = Group {
                        members: vec![m],
                        outputs: vec![m],
                    };
                    self.emit_group(comp, &single, env, ops)?;
                }
                Ok(())
            }
            other => other,
        }
    }

    /// The byte a group fills its output with, when the group is only a broadcast of an 8-bit
    /// scalar constant and `emit_memset8` is on.
    pub(super) fn memset8_fill(&self, comp: &Computation, g: &Group) -> Option<(InstrId, u8)> {
        if !self.options.emit_memset8 {
            return None;
        }
        let [out] = g.outputs.as_slice() else {
            return None;
        };
        let b = comp.instructions.get(out.index())?;
        let &c = match (b.opcode, b.operands.as_slice()) {
            (Opcode::Broadcast, [c]) => c,
            _ => return None,
        };
        if !g.members.iter().all(|m| *m == *out || *m == c) {
            return None;
        }
        let constant = comp.instructions.get(c.index())?;
        if constant.opcode != Opcode::Constant || constant.shape.rank() != 0 {
            return None;
        }
        if !matches!(
            constant.shape.element_type(),
            Some(PrimitiveType::Pred | PrimitiveType::S8 | PrimitiveType::U8)
        ) {
            return None;
        }
        // The same bytes a constant buffer of this type would hold.
        match constant_bytes(comp, constant).ok()?.as_slice() {
            [value] => Some((*out, *value)),
            _ => None,
        }
    }

    pub(super) fn emit_group(
        &mut self,
        comp: &Computation,
        g: &Group,
        env: &mut [Option<Vec<Loc>>],
        ops: &mut Vec<Op>,
    ) -> Result<(), CompileError> {
        if let Some((out, value)) = self.memset8_fill(comp, g) {
            let instr = &comp[out];
            let t = self.tick();
            let dst = self.temp(&instr.shape, &instr.name, t);
            if let Some(slot) = env.get_mut(out.index()) {
                *slot = Some(vec![dst]);
            }
            ops.push(Op::Memset8 {
                name: instr.name.clone(),
                dst,
                value,
            });
            return Ok(());
        }
        let (mut fused, inputs) = outline(comp, g)?;
        let root_instr = &comp[g.outputs[0]];
        let name = self.kernel_name(&root_instr.name);
        fused.name = name.clone();
        self.module.computations.push(fused);
        let cid = ComputationId((self.module.computations.len() - 1) as u32);
        let request = KernelRequest {
            module: &self.module,
            computation: cid,
            name: &name,
            target: &self.target.codegen,
        };
        let plan = match codegen::emit_kernels(&request) {
            Ok(p) => p,
            Err(source) => {
                self.module.computations.pop();
                return Err(CompileError::Codegen {
                    fusion: name,
                    error: Box::new(source),
                });
            }
        };
        // A plan of several kernels names them after the fusion (`_1`, `_init`): later
        // fusions must not take those names.
        for k in &plan.kernels {
            self.names.insert(k.name.clone());
        }
        let mut input_locs = Vec::new();
        for &inp in &inputs {
            input_locs.push(self.one_loc(comp, inp, env)?);
        }
        let t = self.tick();
        for l in &input_locs {
            self.use_loc(*l, t);
        }
        let mut out_locs = Vec::new();
        let mut out_shapes = Vec::new();
        for &o in &g.outputs {
            let instr = &comp[o];
            let mut locs = Vec::new();
            for (_, shape) in leaves(&instr.shape) {
                locs.push(self.temp(&shape, &instr.name, t));
                out_shapes.push(shape);
            }
            out_locs.extend(locs.iter().copied());
            if let Some(slot) = env.get_mut(o.index()) {
                *slot = Some(locs);
            }
        }
        let elementwise = plan.kernels.len() == 1
            && g.members.iter().all(|&m| {
                let i = &comp[m];
                let op = i.opcode;
                op.is_elementwise_unary()
                    || op.is_elementwise_binary()
                    || matches!(
                        op,
                        Opcode::Compare | Opcode::Select | Opcode::Clamp | Opcode::Convert
                    )
                    || (op == Opcode::Broadcast
                        && i.operands
                            .first()
                            .is_some_and(|&o| comp[o].shape.element_count() <= 1))
            });
        let whole_inputs = input_locs
            .iter()
            .all(|l| l.offset == 0 && self.values.get(l.value).is_some_and(|v| v.size == l.size));
        if elementwise && whole_inputs {
            for l in &out_locs {
                self.values[l.value].in_place_ok = true;
            }
        }
        let scratch = if plan.scratch_bytes > 0 {
            let v = self.new_value(
                plan.scratch_bytes,
                Placement::Temp,
                &format!("{name}.scratch"),
            );
            self.values[v].def = t;
            Some(v)
        } else {
            None
        };
        for fill in &plan.fills {
            let (Some(&dst), Some(shape)) =
                (out_locs.get(fill.output), out_shapes.get(fill.output))
            else {
                return Err(CompileError::Internal(format!(
                    "fusion {name} fills output {} of {}",
                    fill.output,
                    out_locs.len()
                )));
            };
            ops.push(Op::Fill32 {
                name: root_instr.name.clone(),
                dst,
                shape: shape.clone(),
                word: fill.word,
            });
        }
        for kernel in plan.kernels {
            let mut args = Vec::new();
            for a in &kernel.args {
                let loc = match *a {
                    KernelArg::Input(i) => input_locs.get(i).copied(),
                    KernelArg::Output(j) => out_locs.get(j).copied(),
                    KernelArg::Scratch { offset } => scratch.map(|v| Loc {
                        value: v,
                        offset,
                        size: plan.scratch_bytes.saturating_sub(offset),
                    }),
                };
                let loc = loc.ok_or_else(|| {
                    CompileError::Internal(format!(
                        "kernel {} has an argument {a:?} out of range",
                        kernel.name
                    ))
                })?;
                args.push(loc);
            }
            if kernel.written.len() != args.len() {
                return Err(CompileError::Internal(format!(
                    "kernel {}: {} written flags for {} arguments",
                    kernel.name,
                    kernel.written.len(),
                    args.len()
                )));
            }
            ops.push(Op::Kernel {
                name: root_instr.name.clone(),
                kernel,
                args,
            });
        }
        Ok(())
    }
}

/// The group as a computation of its own: a parameter per input (an operand from outside the
/// group, in first-use order), scalar constants inlined, the members in order, and a tuple root
/// when there are several outputs. Returns it with the inputs.
fn outline(comp: &Computation, g: &Group) -> Result<(Computation, Vec<InstrId>), CompileError> {
    let members: std::collections::BTreeSet<InstrId> = g.members.iter().copied().collect();
    let mut inputs: Vec<InstrId> = Vec::new();
    let mut fused = Computation {
        name: String::new(),
        instructions: Vec::new(),
        params: Vec::new(),
        root: InstrId(0),
        execution_thread: None,
        loc: Default::default(),
    };
    let mut map: std::collections::BTreeMap<InstrId, InstrId> = Default::default();
    let mut inline_constants: Vec<InstrId> = Vec::new();
    // Operands already taken as inputs or inlined constants (a set: a kernel may have
    // thousands of inputs, and scanning the lists made outlining quadratic).
    let mut seen: std::collections::BTreeSet<InstrId> = Default::default();
    for &m in &g.members {
        for &o in &comp[m].operands {
            if members.contains(&o) || !seen.insert(o) {
                continue;
            }
            let op = &comp[o];
            if op.opcode == Opcode::Constant && op.shape.rank() == 0 {
                inline_constants.push(o);
            } else {
                inputs.push(o);
            }
        }
    }
    for (i, &inp) in inputs.iter().enumerate() {
        let src = &comp[inp];
        fused.instructions.push(Instruction {
            name: format!("{}.param{i}", src.name),
            opcode: Opcode::Parameter,
            shape: src.shape.clone(),
            operands: Vec::new(),
            attrs: hlo::Attrs {
                parameter_number: Some(i as i64),
                ..Default::default()
            },
            metadata: None,
            loc: src.loc,
        });
        let id = InstrId((fused.instructions.len() - 1) as u32);
        fused.params.push(id);
        map.insert(inp, id);
    }
    for &c in &inline_constants {
        fused.instructions.push(comp[c].clone());
        map.insert(c, InstrId((fused.instructions.len() - 1) as u32));
    }
    for &m in &g.members {
        let mut instr = comp[m].clone();
        instr.operands = instr
            .operands
            .iter()
            .map(|o| {
                map.get(o).copied().ok_or_else(|| {
                    CompileError::Internal(format!("fusion operand of {} not mapped", instr.name))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        fused.instructions.push(instr);
        map.insert(m, InstrId((fused.instructions.len() - 1) as u32));
    }
    let out_ids: Vec<InstrId> = g
        .outputs
        .iter()
        .map(|o| {
            map.get(o)
                .copied()
                .ok_or_else(|| CompileError::Internal("fusion output not mapped".into()))
        })
        .collect::<Result<_, _>>()?;
    fused.root = match out_ids.as_slice() {
        [one] => *one,
        _ => {
            let shapes = g.outputs.iter().map(|&o| comp[o].shape.clone()).collect();
            fused.instructions.push(Instruction {
                name: format!("{}.tuple", comp[g.outputs[0]].name),
                opcode: Opcode::Tuple,
                shape: Shape::Tuple(shapes),
                operands: out_ids.clone(),
                attrs: Default::default(),
                metadata: None,
                loc: Default::default(),
            });
            InstrId((fused.instructions.len() - 1) as u32)
        }
    };
    Ok((fused, inputs))
}
