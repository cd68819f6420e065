//! Lowering: turns the optimized module into a program of thunk operations over logical
//! buffers ("values"), which buffer assignment then places in allocations.
//!
//! Every array leaf an instruction produces is a [`Loc`]: a byte range of a value. Parameters,
//! tuples, get-tuple-element, bitcasts, reshapes and contiguous slices only forward locations.
//! Kernels, gemms, collectives and custom calls define new temporary values. Time is a clock
//! that ticks once per operation (nested sequences of while and conditional tick inside their
//! parent's range), and every value records the tick that defines it and the last tick that
//! reads it: buffer assignment shares memory between values whose ranges do not overlap.
//!
//! Loop-carried state lives in fixed values for the whole while loop: the initial state is
//! copied in, the body's results are either computed in place (when every read of the old state
//! happens before the producer runs) or copied back at the end of the body. Conditional results
//! are fixed values every branch writes. Entry outputs that alias a parameter
//! (`input_output_alias`) are computed into the parameter's allocation the same way.
use hlo::ir::{Computation, IoAlias, Literal, LiteralValue, ReplicaGroups};
use hlo::{ComputationId, HloModule, InstrId, Instruction, Opcode, PrimitiveType, Shape};
use proto::xla::gpu as pg;

use crate::codegen::{self, EmittedKernel, KernelArg, KernelRequest};
use crate::error::CompileError;
use crate::fusion::{self, Group, Unit};
use crate::options::CompileOptions;
use crate::passes::gemm_operands;
use crate::target::Target;

/// A byte range of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    /// The value.
    pub value: usize,
    /// Offset in bytes.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
}

/// Where a value lives.
#[derive(Debug, Clone, PartialEq)]
pub enum Placement {
    /// An entry parameter leaf.
    Param {
        /// Parameter number.
        number: i64,
        /// Leaf index inside a tuple parameter (empty for arrays).
        index: Vec<i64>,
    },
    /// A constant.
    Constant {
        /// The HLO instruction name.
        symbol: String,
        /// Its bytes.
        bytes: Vec<u8>,
    },
    /// A temporary in the shared temp allocation.
    Temp,
    /// An entry output in an allocation of its own.
    Output,
}

/// A logical buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// Size in bytes.
    pub size: u64,
    /// Placement.
    pub placement: Placement,
    /// Tick that defines it.
    pub def: u32,
    /// Last tick that reads it.
    pub last_use: u32,
    /// When set, this value lives in another value's memory (same size, offset 0).
    pub alias_of: Option<usize>,
    /// A name for messages.
    pub name: String,
    /// Written by a single elementwise kernel that reads every input element only at the
    /// index it writes: the value may take the memory of one of that kernel's inputs.
    pub in_place_ok: bool,
}

/// One operation of a thunk sequence, before buffer assignment.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A kernel launch.
    Kernel {
        /// Profile annotation (HLO name).
        name: String,
        /// The kernel.
        kernel: EmittedKernel,
        /// Arguments, parallel to `kernel.args`.
        args: Vec<Loc>,
    },
    /// A gemm.
    Gemm {
        /// Profile annotation.
        name: String,
        /// Config.
        config: pg::GemmConfigProto,
        /// Lhs.
        lhs: Loc,
        /// Rhs.
        rhs: Loc,
        /// Output.
        out: Loc,
    },
    /// A byte fill of a whole buffer (`memset8bit_value_thunk`, behind
    /// `CompileOptions::emit_memset8`).
    Memset8 {
        /// Profile annotation.
        name: String,
        /// Destination.
        dst: Loc,
        /// The byte.
        value: u8,
    },
    /// A device-to-device copy.
    Copy {
        /// Profile annotation.
        name: String,
        /// Source.
        src: Loc,
        /// Destination.
        dst: Loc,
    },
    /// A while loop.
    While {
        /// Profile annotation.
        name: String,
        /// The condition's pred.
        pred: Loc,
        /// Condition sequence.
        cond: Vec<Op>,
        /// Body sequence.
        body: Vec<Op>,
        /// Known trip count.
        trip_count: Option<i64>,
    },
    /// A conditional.
    Conditional {
        /// Profile annotation.
        name: String,
        /// Branch selector.
        index: Loc,
        /// Selector element type.
        index_shape: Shape,
        /// Pred selector.
        is_bool: bool,
        /// Branch sequences.
        branches: Vec<Vec<Op>>,
    },
    /// replica-id / partition-id.
    DeviceId {
        /// Profile annotation.
        name: String,
        /// Partition (rather than replica) id.
        partition: bool,
        /// Destination (4 bytes).
        dst: Loc,
    },
    /// A custom call.
    CustomCall {
        /// Profile annotation.
        name: String,
        /// Target name.
        target: String,
        /// Operand leaves.
        operands: Vec<(Loc, Shape)>,
        /// Result leaves.
        results: Vec<(Loc, Shape)>,
        /// Opaque bytes (backend config).
        opaque: Vec<u8>,
        /// API version.
        api_version: i32,
    },
    /// all-reduce / all-gather / reduce-scatter.
    Collective {
        /// Profile annotation.
        name: String,
        /// Which.
        kind: Opcode,
        /// Reduction kind (all-reduce, reduce-scatter).
        reduction: pg::ReductionKindProto,
        /// Config.
        config: pg::CollectiveConfigProto,
        /// (element count, source, destination) per buffer.
        buffers: Vec<(i64, Loc, Loc)>,
    },
}

/// An output leaf of the entry computation.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputLeaf {
    /// Shape index in the result.
    pub index: Vec<i64>,
    /// Where it is.
    pub loc: Loc,
    /// An entry parameter returned unchanged.
    pub passthrough: bool,
    /// The io alias it honours.
    pub alias: Option<IoAlias>,
}

/// The lowered program.
#[derive(Debug)]
pub struct Lowered {
    /// The working module (optimized, with the fused computations appended).
    pub module: HloModule,
    /// All values.
    pub values: Vec<Value>,
    /// The entry sequence.
    pub ops: Vec<Op>,
    /// Entry output leaves, in leaf order.
    pub outputs: Vec<OutputLeaf>,
}

/// Array leaves of a shape with their indices, depth-first, without layouts.
pub fn leaves(shape: &Shape) -> Vec<(Vec<i64>, Shape)> {
    shape
        .leaves()
        .into_iter()
        .map(|(index, leaf)| (index, leaf.without_layout()))
        .collect()
}

fn leaf_count(shape: &Shape) -> usize {
    leaves(shape).len()
}

struct Lowerer<'a> {
    module: HloModule,
    target: &'a Target,
    options: &'a CompileOptions,
    values: Vec<Value>,
    clock: u32,
    names: std::collections::BTreeSet<String>,
    /// How many while/conditional bodies enclose the computation being lowered.
    depth: usize,
}

/// Deepest nesting of while/conditional bodies the compiler lowers; deeper modules fail with
/// [`CompileError::NestingTooDeep`]. Each level becomes a thunk sequence inside a thunk, and the
/// runtime refuses artifacts nested deeper than its `RuntimeFlags::max_thunk_depth` (default
/// 32) or than the protobuf decoder's recursion limit of 100 messages (three per level:
/// `ThunkProto`, the while/conditional message, `ThunkSequenceProto`, plus the innermost
/// kernel's own messages): refusing here keeps the compiler from writing an artifact its own
/// runtime rejects, and bounds the lowering's recursion.
pub const MAX_CONTROL_FLOW_DEPTH: usize = 30;

/// Lowers an optimized module.
pub fn lower(
    module: HloModule,
    target: &Target,
    options: &CompileOptions,
) -> Result<Lowered, CompileError> {
    let mut l = Lowerer {
        module,
        target,
        options,
        values: Vec::new(),
        clock: 1,
        names: Default::default(),
        depth: 0,
    };
    let entry_id = l.module.entry;
    let entry = l
        .module
        .get(entry_id)
        .cloned()
        .ok_or_else(|| CompileError::InvalidModule("no entry computation".into()))?;
    let mut params = Vec::new();
    for (n, &p) in entry.params.iter().enumerate() {
        let instr = entry
            .get(p)
            .ok_or_else(|| CompileError::InvalidModule("dangling parameter".into()))?;
        let mut locs = Vec::new();
        for (index, shape) in leaves(&instr.shape) {
            let v = l.new_value(
                shape.byte_size(),
                Placement::Param {
                    number: n as i64,
                    index,
                },
                &instr.name,
            );
            l.values[v].def = 0;
            locs.push(l.whole(v));
        }
        params.push(locs);
    }
    let (mut ops, root_locs) = l.lower_computation(entry_id, params)?;
    let root_shape = entry
        .root_instruction()
        .map(|r| r.shape.clone())
        .unwrap_or(Shape::Tuple(Vec::new()));
    let out_leaves = leaves(&root_shape);
    if out_leaves.len() != root_locs.len() {
        return Err(CompileError::Internal(
            "root leaves do not match the result shape".into(),
        ));
    }
    let aliases = l
        .module
        .config
        .input_output_alias
        .clone()
        .unwrap_or_default();
    let end = l.tick();
    let mut outputs = Vec::new();
    let mut used_values = std::collections::BTreeSet::new();
    for ((index, shape), loc) in out_leaves.into_iter().zip(root_locs) {
        let alias = aliases.iter().find(|a| a.output_index == index).cloned();
        let name = format!("output{index:?}");
        l.use_loc(loc, end);
        if let Some(a) = &alias {
            let param = l.values.iter().position(|v| {
                matches!(&v.placement, Placement::Param { number, index } if *number == a.param_number && *index == a.param_index)
            });
            let Some(param) = param else {
                return Err(CompileError::InvalidModule(format!(
                    "input_output_alias names parameter {} {:?}, which is not an array leaf",
                    a.param_number, a.param_index
                )));
            };
            if l.values[param].size != shape.byte_size() {
                return Err(CompileError::InvalidModule(format!(
                    "input_output_alias: output {index:?} and parameter {} {:?} differ in size",
                    a.param_number, a.param_index
                )));
            }
            let dst = l.whole(param);
            let passthrough = l.resolve(loc.value) == param && loc.offset == 0;
            if !passthrough && !l.try_merge(loc, param, 0) {
                let t = l.tick();
                l.use_loc(loc, t);
                ops.push(Op::Copy {
                    name: name.clone(),
                    src: loc,
                    dst,
                });
            }
            used_values.insert(param);
            outputs.push(OutputLeaf {
                index,
                loc: dst,
                passthrough,
                alias,
            });
            continue;
        }
        let r = l.resolve(loc.value);
        let whole = loc.offset == 0 && loc.size == l.values[r].size;
        let fresh = !used_values.contains(&r);
        match l.values[r].placement {
            Placement::Param { .. } if whole && fresh => {
                used_values.insert(r);
                outputs.push(OutputLeaf {
                    index,
                    loc,
                    passthrough: true,
                    alias: None,
                });
            }
            Placement::Temp if whole && fresh => {
                l.values[r].placement = Placement::Output;
                used_values.insert(r);
                outputs.push(OutputLeaf {
                    index,
                    loc,
                    passthrough: false,
                    alias: None,
                });
            }
            _ => {
                let v = l.new_value(shape.byte_size(), Placement::Output, &name);
                let t = l.tick();
                l.values[v].def = t;
                l.use_loc(loc, t);
                let dst = l.whole(v);
                ops.push(Op::Copy {
                    name,
                    src: loc,
                    dst,
                });
                used_values.insert(v);
                outputs.push(OutputLeaf {
                    index,
                    loc: dst,
                    passthrough: false,
                    alias: None,
                });
            }
        }
    }
    Ok(Lowered {
        module: l.module,
        values: l.values,
        ops,
        outputs,
    })
}

/// Parses `known_trip_count` out of a while's backend config.
fn known_trip_count(instr: &Instruction) -> Option<i64> {
    let cfg = instr.attrs.backend_config.as_deref()?;
    let at = cfg.find("known_trip_count")?;
    let rest = &cfg[at..];
    let n_at = rest.find("\"n\"")?;
    let digits: String = rest[n_at + 3..]
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'k');
    }
    s
}

impl Lowerer<'_> {
    fn tick(&mut self) -> u32 {
        self.clock += 1;
        self.clock
    }

    fn new_value(&mut self, size: u64, placement: Placement, name: &str) -> usize {
        self.values.push(Value {
            size,
            placement,
            def: self.clock,
            last_use: self.clock,
            alias_of: None,
            name: name.to_owned(),
            in_place_ok: false,
        });
        self.values.len() - 1
    }

    fn whole(&self, v: usize) -> Loc {
        Loc {
            value: v,
            offset: 0,
            size: self.values.get(v).map_or(0, |x| x.size),
        }
    }

    fn temp(&mut self, shape: &Shape, name: &str, at: u32) -> Loc {
        let v = self.new_value(shape.byte_size(), Placement::Temp, name);
        self.values[v].def = at;
        self.values[v].last_use = at;
        self.whole(v)
    }

    fn use_loc(&mut self, loc: Loc, at: u32) {
        if let Some(v) = self.values.get_mut(loc.value) {
            v.last_use = v.last_use.max(at);
        }
    }

    fn resolve(&self, mut v: usize) -> usize {
        while let Some(Some(next)) = self.values.get(v).map(|x| x.alias_of) {
            v = next;
        }
        v
    }

    fn effective_last_use(&self, root: usize) -> u32 {
        self.values
            .iter()
            .enumerate()
            .filter(|(i, _)| self.resolve(*i) == root)
            .map(|(_, v)| v.last_use)
            .max()
            .unwrap_or(0)
    }

    /// Makes the value at `src` live in `dst`'s memory when that is safe: `src` is a whole
    /// temporary defined at or after `since`, and every read of `dst` happens before it is
    /// defined.
    fn try_merge(&mut self, src: Loc, dst: usize, since: u32) -> bool {
        let r = self.resolve(src.value);
        let dst = self.resolve(dst);
        if r == dst || src.offset != 0 {
            return false;
        }
        let (size, placement, def) = match self.values.get(r) {
            Some(v) => (v.size, v.placement.clone(), v.def),
            None => return false,
        };
        if size != self.values[dst].size || placement != Placement::Temp || def < since {
            return false;
        }
        let last = self.effective_last_use(dst);
        if last > def || (last == def && !self.values[r].in_place_ok) {
            return false;
        }
        self.values[r].alias_of = Some(dst);
        let lu = self.values[r].last_use;
        self.values[dst].last_use = self.values[dst].last_use.max(lu);
        self.values[dst].def = self.values[dst].def.min(def);
        true
    }

    fn kernel_name(&mut self, base: &str) -> String {
        let base = format!("fusion_{}", sanitize(base));
        let mut name = base.clone();
        let mut n = 1;
        while self.names.contains(&name) || self.module.find(&name).is_some() {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.names.insert(name.clone());
        name
    }

    fn locs(
        &mut self,
        comp: &Computation,
        id: InstrId,
        env: &mut [Option<Vec<Loc>>],
    ) -> Result<Vec<Loc>, CompileError> {
        if let Some(Some(l)) = env.get(id.index()) {
            return Ok(l.clone());
        }
        let instr = comp.get(id).ok_or_else(|| {
            CompileError::Internal(format!("no instruction {id:?} in {}", comp.name))
        })?;
        if instr.opcode != Opcode::Constant {
            return Err(CompileError::Internal(format!(
                "{} in {} is used before it is computed",
                instr.name, comp.name
            )));
        }
        let bytes = constant_bytes(comp, instr)?;
        let v = self.new_value(
            bytes.len() as u64,
            Placement::Constant {
                symbol: instr.name.clone(),
                bytes,
            },
            &instr.name,
        );
        self.values[v].def = 0;
        let locs = vec![self.whole(v)];
        if let Some(slot) = env.get_mut(id.index()) {
            *slot = Some(locs.clone());
        }
        Ok(locs)
    }

    fn one_loc(
        &mut self,
        comp: &Computation,
        id: InstrId,
        env: &mut [Option<Vec<Loc>>],
    ) -> Result<Loc, CompileError> {
        let l = self.locs(comp, id, env)?;
        match l.as_slice() {
            [one] => Ok(*one),
            _ => Err(CompileError::Internal(format!(
                "{} in {} is not an array",
                comp.get(id).map_or("?", |i| i.name.as_str()),
                comp.name
            ))),
        }
    }

    /// Lowers a computation whose parameters live at `params` (leaf locations per parameter);
    /// returns its operations and the locations of its root's leaves.
    fn lower_computation(
        &mut self,
        cid: ComputationId,
        params: Vec<Vec<Loc>>,
    ) -> Result<(Vec<Op>, Vec<Loc>), CompileError> {
        // The entry is at depth 0; every while/conditional body lowered from here is one deeper.
        if self.depth > MAX_CONTROL_FLOW_DEPTH {
            return Err(CompileError::NestingTooDeep {
                computation: self
                    .module
                    .get(cid)
                    .map_or_else(|| format!("{cid:?}"), |c| c.name.clone()),
                limit: MAX_CONTROL_FLOW_DEPTH,
            });
        }
        self.depth += 1;
        let r = self.lower_computation_body(cid, params);
        self.depth -= 1;
        r
    }

    fn lower_computation_body(
        &mut self,
        cid: ComputationId,
        params: Vec<Vec<Loc>>,
    ) -> Result<(Vec<Op>, Vec<Loc>), CompileError> {
        let comp = self
            .module
            .get(cid)
            .cloned()
            .ok_or_else(|| CompileError::InvalidModule(format!("no computation {cid:?}")))?;
        if params.len() != comp.params.len() {
            return Err(CompileError::InvalidModule(format!(
                "{} takes {} parameters, given {}",
                comp.name,
                comp.params.len(),
                params.len()
            )));
        }
        let mut env: Vec<Option<Vec<Loc>>> = vec![None; comp.instructions.len()];
        for (&p, locs) in comp.params.iter().zip(params) {
            if let Some(slot) = env.get_mut(p.index()) {
                *slot = Some(locs);
            }
        }
        let units = fusion::plan(&comp, self.options.fusion)?;
        let mut ops = Vec::new();
        for unit in units {
            match unit {
                Unit::Kernel(g) => self.lower_group(&comp, &g, &mut env, &mut ops)?,
                Unit::Single(id) => self.lower_single(&comp, id, &mut env, &mut ops)?,
            }
        }
        let root = self.locs(&comp, comp.root, &mut env)?;
        Ok((ops, root))
    }

    fn lower_group(
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
    fn memset8_fill(&self, comp: &Computation, g: &Group) -> Option<(InstrId, u8)> {
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

    fn emit_group(
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
                attrs: hlo::ir::Attrs {
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
                        CompileError::Internal(format!(
                            "fusion operand of {} not mapped",
                            instr.name
                        ))
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
        let mut input_locs = Vec::new();
        for &inp in &inputs {
            input_locs.push(self.one_loc(comp, inp, env)?);
        }
        let t = self.tick();
        for l in &input_locs {
            self.use_loc(*l, t);
        }
        let mut out_locs = Vec::new();
        for &o in &g.outputs {
            let instr = &comp[o];
            let mut locs = Vec::new();
            for (_, shape) in leaves(&instr.shape) {
                locs.push(self.temp(&shape, &instr.name, t));
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

    fn lower_single(
        &mut self,
        comp: &Computation,
        id: InstrId,
        env: &mut [Option<Vec<Loc>>],
        ops: &mut Vec<Op>,
    ) -> Result<(), CompileError> {
        let instr = comp[id].clone();
        let set = |env: &mut [Option<Vec<Loc>>], locs: Vec<Loc>| {
            if let Some(slot) = env.get_mut(id.index()) {
                *slot = Some(locs);
            }
        };
        let operand = |i: usize| -> Result<InstrId, CompileError> {
            instr.operands.get(i).copied().ok_or_else(|| {
                CompileError::unsupported(&comp.name, &instr, format!("missing operand {i}"))
            })
        };
        match instr.opcode {
            Opcode::Parameter => {
                if env.get(id.index()).is_none_or(Option::is_none) {
                    return Err(CompileError::InvalidModule(format!(
                        "parameter {} of {} is not in its parameter list",
                        instr.name, comp.name
                    )));
                }
            }
            Opcode::Constant => {}
            Opcode::AfterAll => set(env, Vec::new()),
            Opcode::Tuple => {
                let mut all = Vec::new();
                for &o in &instr.operands {
                    all.extend(self.locs(comp, o, env)?);
                }
                set(env, all);
            }
            Opcode::GetTupleElement => {
                let src = operand(0)?;
                let locs = self.locs(comp, src, env)?;
                let shape = &comp[src].shape;
                let idx = instr
                    .attrs
                    .tuple_index
                    .and_then(|i| usize::try_from(i).ok());
                let elems = shape.tuple_shapes().unwrap_or(&[]);
                let Some(idx) = idx.filter(|&i| i < elems.len()) else {
                    return Err(CompileError::unsupported(
                        &comp.name,
                        &instr,
                        "tuple index out of range",
                    ));
                };
                let start: usize = elems[..idx].iter().map(leaf_count).sum();
                let n = leaf_count(&elems[idx]);
                let sub = locs
                    .get(start..start + n)
                    .map(<[Loc]>::to_vec)
                    .ok_or_else(|| {
                        CompileError::Internal(format!("{}: tuple leaves out of range", instr.name))
                    })?;
                set(env, sub);
            }
            Opcode::Bitcast | Opcode::Reshape => {
                let src = self.one_loc(comp, operand(0)?, env)?;
                let size = instr.shape.byte_size();
                if size > src.size {
                    return Err(CompileError::unsupported(
                        &comp.name,
                        &instr,
                        "bitcast to a larger shape",
                    ));
                }
                set(env, vec![Loc { size, ..src }]);
            }
            Opcode::Slice => {
                let o = operand(0)?;
                let src = self.one_loc(comp, o, env)?;
                let off = fusion::slice_offset(&instr, &comp[o]);
                set(
                    env,
                    vec![Loc {
                        value: src.value,
                        offset: src.offset + off,
                        size: instr.shape.byte_size(),
                    }],
                );
            }
            Opcode::OptimizationBarrier | Opcode::AddDependency => {
                let l = self.locs(comp, operand(0)?, env)?;
                set(env, l);
            }
            Opcode::Dot => {
                let op = self.lower_dot(comp, &instr, env)?;
                let out = match &op {
                    Op::Gemm { out, .. } => *out,
                    _ => return Err(CompileError::Internal("dot did not lower to a gemm".into())),
                };
                ops.push(op);
                set(env, vec![out]);
            }
            Opcode::While => {
                let locs = self.lower_while(comp, &instr, env, ops)?;
                set(env, locs);
            }
            Opcode::Conditional => {
                let locs = self.lower_conditional(comp, &instr, env, ops)?;
                set(env, locs);
            }
            Opcode::ReplicaId | Opcode::PartitionId => {
                let t = self.tick();
                let dst = self.temp(&instr.shape, &instr.name, t);
                ops.push(Op::DeviceId {
                    name: instr.name.clone(),
                    partition: instr.opcode == Opcode::PartitionId,
                    dst,
                });
                set(env, vec![dst]);
            }
            Opcode::CustomCall => {
                let mut operands = Vec::new();
                for &o in &instr.operands {
                    let locs = self.locs(comp, o, env)?;
                    for (loc, (_, shape)) in locs.into_iter().zip(leaves(&comp[o].shape)) {
                        operands.push((loc, shape));
                    }
                }
                let t = self.tick();
                for (l, _) in &operands {
                    self.use_loc(*l, t);
                }
                let mut results = Vec::new();
                let mut locs = Vec::new();
                for (_, shape) in leaves(&instr.shape) {
                    let l = self.temp(&shape, &instr.name, t);
                    locs.push(l);
                    results.push((l, shape));
                }
                let api_version = match instr.attrs.api_version.as_deref() {
                    None | Some("API_VERSION_ORIGINAL") => {
                        proto::xla::CustomCallApiVersion::ApiVersionOriginal
                    }
                    Some("API_VERSION_STATUS_RETURNING") => {
                        proto::xla::CustomCallApiVersion::ApiVersionStatusReturning
                    }
                    Some("API_VERSION_STATUS_RETURNING_UNIFIED") => {
                        proto::xla::CustomCallApiVersion::ApiVersionStatusReturningUnified
                    }
                    Some("API_VERSION_TYPED_FFI") => {
                        proto::xla::CustomCallApiVersion::ApiVersionTypedFfi
                    }
                    Some(other) => {
                        return Err(CompileError::unsupported(
                            &comp.name,
                            &instr,
                            format!("api_version {other}"),
                        ))
                    }
                } as i32;
                ops.push(Op::CustomCall {
                    name: instr.name.clone(),
                    target: instr.attrs.custom_call_target.clone().unwrap_or_default(),
                    operands,
                    results,
                    opaque: instr
                        .attrs
                        .backend_config
                        .clone()
                        .unwrap_or_default()
                        .into_bytes(),
                    api_version,
                });
                set(env, locs);
            }
            Opcode::AllReduce | Opcode::AllGather | Opcode::ReduceScatter => {
                let locs = self.lower_collective(comp, &instr, env, ops)?;
                set(env, locs);
            }
            _ => {
                return Err(CompileError::unsupported(
                    &comp.name,
                    &instr,
                    "no lowering for this instruction",
                ))
            }
        }
        Ok(())
    }

    fn lower_dot(
        &mut self,
        comp: &Computation,
        instr: &Instruction,
        env: &mut [Option<Vec<Loc>>],
    ) -> Result<Op, CompileError> {
        let bad = |why: &str| CompileError::unsupported(&comp.name, instr, why.to_owned());
        let (ll, rl) = gemm_operands::dot_layouts(comp, instr)
            .ok_or_else(|| bad("bad dot dimension numbers"))?;
        let lt =
            gemm_operands::in_place(&ll, true).ok_or_else(|| bad("lhs is not in a gemm layout"))?;
        let rt = gemm_operands::in_place(&rl, false)
            .ok_or_else(|| bad("rhs is not in a gemm layout"))?;
        let (&l_id, &r_id) = match instr.operands.as_slice() {
            [l, r] => (l, r),
            _ => return Err(bad("dot needs two operands")),
        };
        let (ls, rs) = (&comp[l_id].shape, &comp[r_id].shape);
        let prod = |s: &Shape, dims: &[usize]| -> i64 {
            dims.iter()
                .map(|&d| s.dims().get(d).copied().unwrap_or(1))
                .product()
        };
        let batch = prod(ls, &ll.batch);
        if batch != prod(rs, &rl.batch) {
            return Err(bad("batch sizes differ"));
        }
        let m = prod(ls, &ll.free);
        let k = prod(ls, &ll.contracting);
        if k != prod(rs, &rl.contracting) {
            return Err(bad("contracting sizes differ"));
        }
        let n = prod(rs, &rl.free);
        let ty = |s: &Shape| -> Result<(PrimitiveType, i32), CompileError> {
            let t = s
                .element_type()
                .ok_or_else(|| bad("operand is not an array"))?;
            let p = hlo::convert::element_type_to_proto(t).ok_or_else(|| bad("element type"))?;
            Ok((t, p as i32))
        };
        let (lty, lp) = ty(ls)?;
        let (rty, rp) = ty(rs)?;
        let (_, op) = ty(&instr.shape)?;
        use PrimitiveType as P;
        let compute = match (lty, rty) {
            (P::F32 | P::F16 | P::Bf16, P::F32 | P::F16 | P::Bf16) => {
                proto::xla::PrimitiveType::F32
            }
            (P::F64, P::F64) => proto::xla::PrimitiveType::F64,
            (P::S8 | P::S32, P::S8 | P::S32) => proto::xla::PrimitiveType::S32,
            _ => return Err(bad(&format!("no gemm for {lty} x {rty}"))),
        } as i32;
        let layout = |rows: i64, cols: i64, transpose: bool, dtype: i32| pg::MatrixLayoutProto {
            order: pg::matrix_layout_proto::Order::RowMajor as i32,
            num_rows: rows,
            num_cols: cols,
            batch_size: batch,
            leading_dim_stride: cols,
            batch_stride: rows * cols,
            transpose,
            dtype,
        };
        let lhs_layout = if lt {
            layout(k, m, true, lp)
        } else {
            layout(m, k, false, lp)
        };
        let rhs_layout = if rt {
            layout(n, k, true, rp)
        } else {
            layout(k, n, false, rp)
        };
        let precision = instr
            .attrs
            .operand_precision
            .iter()
            .flatten()
            .map(|p| match p {
                hlo::ir::Precision::Default => {
                    proto::xla::precision_config::Precision::Default as i32
                }
                hlo::ir::Precision::High => proto::xla::precision_config::Precision::High as i32,
                hlo::ir::Precision::Highest => {
                    proto::xla::precision_config::Precision::Highest as i32
                }
            })
            .collect();
        let config = pg::GemmConfigProto {
            lhs_layout: Some(lhs_layout),
            rhs_layout: Some(rhs_layout),
            output_layout: Some(layout(m, n, false, op)),
            alpha_real: 1.0,
            alpha_imag: 0.0,
            beta: 0.0,
            compute_type: compute,
            operand_precisions: precision,
        };
        let lhs = self.one_loc(comp, l_id, env)?;
        let rhs = self.one_loc(comp, r_id, env)?;
        let t = self.tick();
        self.use_loc(lhs, t);
        self.use_loc(rhs, t);
        let out = self.temp(&instr.shape, &instr.name, t);
        Ok(Op::Gemm {
            name: instr.name.clone(),
            config,
            lhs,
            rhs,
            out,
        })
    }

    fn lower_while(
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

    fn temp_sized(&mut self, size: u64, name: &str, at: u32) -> Loc {
        let v = self.new_value(size, Placement::Temp, name);
        self.values[v].def = at;
        self.values[v].last_use = at;
        self.whole(v)
    }

    fn lower_conditional(
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

    fn lower_collective(
        &mut self,
        comp: &Computation,
        instr: &Instruction,
        env: &mut [Option<Vec<Loc>>],
        ops: &mut Vec<Op>,
    ) -> Result<Vec<Loc>, CompileError> {
        let bad = |why: String| CompileError::unsupported(&comp.name, instr, why);
        let reduction = if instr.opcode == Opcode::AllGather {
            pg::ReductionKindProto::ReductionKindUnspecified
        } else {
            let apply = instr
                .attrs
                .to_apply
                .and_then(|c| self.module.get(c))
                .ok_or_else(|| bad("no reduction computation".into()))?;
            match apply.root_instruction().map(|r| r.opcode) {
                Some(Opcode::Add) => pg::ReductionKindProto::ReductionKindSum,
                Some(Opcode::Multiply) => pg::ReductionKindProto::ReductionKindProduct,
                Some(Opcode::Minimum) => pg::ReductionKindProto::ReductionKindMin,
                Some(Opcode::Maximum) => pg::ReductionKindProto::ReductionKindMax,
                other => {
                    return Err(bad(format!(
                        "reduction {other:?} is not sum/product/min/max"
                    )))
                }
            }
        };
        if instr.opcode != Opcode::AllReduce {
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
                return Err(bad(
                    "only leading-dimension gathers/scatters are supported".into()
                ));
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
            Some(ReplicaGroups::Iota(s)) => return Err(bad(format!("iota replica groups {s}"))),
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
                    .and_then(hlo::convert::element_type_to_proto)
                    .ok_or_else(|| bad("element type".into()))?;
                types.push(t as i32);
                srcs.push((loc, shape.element_count() as i64));
            }
        }
        let out_leaves = leaves(&instr.shape);
        if out_leaves.len() != srcs.len() {
            return Err(bad("operands and results differ in number".into()));
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
        let group_mode = if instr.attrs.channel_id.is_some() {
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
            },
            buffers,
        });
        Ok(locs)
    }
}

/// The bytes of an array constant: row-major, little-endian.
pub fn constant_bytes(comp: &Computation, instr: &Instruction) -> Result<Vec<u8>, CompileError> {
    let bad = |why: &str| CompileError::unsupported(&comp.name, instr, why.to_owned());
    let t = instr
        .shape
        .element_type()
        .ok_or_else(|| bad("tuple constants are not supported"))?;
    let values = match &instr.attrs.literal {
        Some(Literal::Array(a)) => &a.values,
        Some(Literal::Elided) => return Err(bad("the constant's values were elided")),
        _ => return Err(bad("tuple constants are not supported")),
    };
    if values.len() as u64 != instr.shape.element_count() {
        return Err(bad("the literal's element count does not match its shape"));
    }
    let mut out = Vec::with_capacity(instr.shape.byte_size() as usize);
    use PrimitiveType as P;
    for &v in values {
        match t {
            P::Pred => out.push(u8::from(v.as_bool())),
            P::S8 | P::U8 => out.push(v.as_i128() as u8),
            P::S16 | P::U16 => out.extend((v.as_i128() as u16).to_le_bytes()),
            P::S32 | P::U32 => out.extend((v.as_i128() as u32).to_le_bytes()),
            P::S64 | P::U64 => out.extend((v.as_i128() as u64).to_le_bytes()),
            P::F16 => out.extend(half::f16::from_f64(v.as_f64()).to_le_bytes()),
            P::Bf16 => out.extend(half::bf16::from_f64(v.as_f64()).to_le_bytes()),
            P::F32 => out.extend((v.as_f64() as f32).to_le_bytes()),
            P::F64 => out.extend(v.as_f64().to_le_bytes()),
            P::C64 | P::C128 => {
                let (re, im) = match v {
                    LiteralValue::Complex(r, i) => (r, i),
                    other => (other.as_f64(), 0.0),
                };
                if t == P::C64 {
                    out.extend((re as f32).to_le_bytes());
                    out.extend((im as f32).to_le_bytes());
                } else {
                    out.extend(re.to_le_bytes());
                    out.extend(im.to_le_bytes());
                }
            }
            other => return Err(bad(&format!("constants of type {other} are not supported"))),
        }
    }
    Ok(out)
}
