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
mod collective;
mod control;
mod conv;
pub(crate) mod ffi_attributes;
mod group;
mod single;

use hlo::{Computation, ConstantLiteral, IoAlias, LiteralValue};
use hlo::{ComputationId, HloModule, InstrId, Instruction, Opcode, PrimitiveType, Shape};
use proto::xla::gpu as pg;

use crate::codegen::EmittedKernel;
use crate::error::{CompileError, MalformedModule};
use crate::fusion::{self, Unit};
use crate::options::CompileOptions;
use crate::target::Target;
use crate::unsupported::UnsupportedConstant;

/// A byte range of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    /// Index into [`Lowered::values`]; follow `alias_of` to the value that owns the memory.
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
    /// An HLO constant, in a constant allocation of its own.
    Constant {
        /// The HLO instruction name.
        symbol: String,
        /// The literal, row-major and little-endian ([`constant_bytes`]): the contents of its
        /// constant allocation.
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
    /// Which allocation buffer assignment gives it; a `Temp` the entry returns whole becomes
    /// `Output` at the end of lowering.
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
        /// The generated PTX, its launch dimensions and parameter list.
        kernel: EmittedKernel,
        /// Arguments, parallel to `kernel.args`.
        args: Vec<Loc>,
    },
    /// A dot not fused into a kernel, lowered to a `gemm_thunk`.
    Gemm {
        /// Profile annotation.
        name: String,
        /// Row-major layouts of the three operands (a transposed operand as `transpose`),
        /// alpha 1, beta 0.
        config: pg::GemmConfigProto,
        /// Left operand, as `config.lhs_layout` describes it.
        lhs: Loc,
        /// Right operand, as `config.rhs_layout` describes it.
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
    /// A fill of a whole buffer with one repeated 32-bit word (a kernel plan's
    /// [`crate::codegen::fill::OutputFill`]): `memzero_thunk` for 0, `memset32bit_value_thunk`
    /// otherwise, as XLA writes a constant initializer. Every runtime runs both.
    Fill32 {
        /// Profile annotation.
        name: String,
        /// Destination (the whole buffer).
        dst: Loc,
        /// Its shape (a memzero's slice carries it).
        shape: Shape,
        /// The word.
        word: u32,
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
        /// The backend config's `known_trip_count`, only with
        /// `CompileOptions::emit_trip_count_hints` (a hint: the loop still runs its condition).
        trip_count: Option<i64>,
    },
    /// A conditional: exactly one of `branches` runs, chosen by `index` at run time.
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
    /// An `fft` as the FFT thunk (only with `CompileOptions::emit_fft_thunk`; otherwise the
    /// fft pass has rewritten it into dots).
    Fft {
        /// Profile annotation.
        name: String,
        /// `xla.FftType` value.
        fft_type: i32,
        /// `fft_length`.
        fft_length: Vec<i64>,
        /// Operand and its shape.
        input: (Loc, Shape),
        /// Result and its shape.
        output: (Loc, Shape),
    },
    /// A convolution as the convolution thunk (only with
    /// `CompileOptions::emit_convolution_thunk`; otherwise it is a kernel).
    Convolution {
        /// Profile annotation.
        name: String,
        /// The cuDNN call XLA's conv rewriter makes of it.
        conv: Box<crate::conv_rewriter::GpuConv>,
        /// The HLO convolution's operands and their shapes.
        operands: [(Loc, Shape); 2],
        /// Its result and shape.
        result: (Loc, Shape),
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
    /// A `custom-call`, run by the runtime's handler registered under `target`.
    CustomCall {
        /// Profile annotation.
        name: String,
        /// Target name.
        target: String,
        /// Operand leaves.
        operands: Vec<(Loc, Shape)>,
        /// Result leaves.
        results: Vec<(Loc, Shape)>,
        /// Opaque bytes (the backend config of the legacy APIs).
        opaque: Vec<u8>,
        /// The typed FFI's attributes: name -> MLIR attribute text (`0 : ui8`, `true`).
        attributes: std::collections::BTreeMap<String, String>,
        /// `CustomCallApiVersion` value of the HLO's `api_version=` (ORIGINAL when absent).
        api_version: i32,
    },
    /// all-reduce / all-gather / reduce-scatter / collective-permute.
    Collective {
        /// Profile annotation.
        name: String,
        /// Which.
        kind: Opcode,
        /// Reduction kind (all-reduce, reduce-scatter).
        reduction: pg::ReductionKindProto,
        /// Element types, replica groups and mode, channel id (`op_id`, 0 without
        /// `channel_id=`); the `_xyz` fields are left to serialization.
        config: pg::CollectiveConfigProto,
        /// (element count, source, destination) per buffer.
        buffers: Vec<(i64, Loc, Loc)>,
        /// A collective-permute's (source, target) pairs; empty for the others.
        source_target_pairs: Vec<(i64, i64)>,
    },
}

impl Op {
    /// The profile annotation of the op's thunk (its HLO name).
    pub fn name(&self) -> &str {
        match self {
            Op::Kernel { name, .. }
            | Op::Gemm { name, .. }
            | Op::Memset8 { name, .. }
            | Op::Fill32 { name, .. }
            | Op::Copy { name, .. }
            | Op::While { name, .. }
            | Op::Conditional { name, .. }
            | Op::Fft { name, .. }
            | Op::Convolution { name, .. }
            | Op::DeviceId { name, .. }
            | Op::CustomCall { name, .. }
            | Op::Collective { name, .. } => name,
        }
    }
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
    /// Every logical buffer, indexed by `Loc::value`; buffer assignment places them.
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

/// The order in which a computation's units (kernels, single instructions) are lowered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Schedule {
    /// The fusion plan's order (topological by kernel root).
    Plan,
    /// A while body: the kernels that compute the next loop state run after the kernels that
    /// still read the state they replace ([`control::state_writers_last`]).
    StateWritersLast,
}

struct Lowerer<'a> {
    module: HloModule,
    target: &'a Target,
    options: &'a CompileOptions,
    values: Vec<Value>,
    clock: u32,
    /// Names taken: the module's computations (at the start of lowering) and every kernel
    /// named so far. One set, so naming a kernel is a lookup rather than a scan of the
    /// module's computations, which grow by one per kernel (quadratic: issue 17).
    names: std::collections::HashSet<String>,
    /// Per kernel base name, the first suffix not yet known to be taken: names are only ever
    /// added, so the suffixes below it stay taken and the search resumes there.
    next_suffix: std::collections::HashMap<String, usize>,
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
        next_suffix: Default::default(),
        depth: 0,
    };
    l.names = l
        .module
        .computations
        .iter()
        .map(|c| c.name.clone())
        .collect();
    let entry_id = l.module.entry;
    let entry = l
        .module
        .get(entry_id)
        .cloned()
        .ok_or(CompileError::Malformed(MalformedModule::EntryMissing))?;
    let mut params = Vec::new();
    for (n, &p) in entry.params.iter().enumerate() {
        let instr = entry
            .get(p)
            .ok_or(CompileError::Malformed(MalformedModule::DanglingParameter))?;
        let mut locs = Vec::new();
        for (index, shape) in leaves(&instr.shape) {
            let v = l.new_value(
                leaf_bytes(&shape)?,
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
                return Err(CompileError::Malformed(MalformedModule::AliasNotALeaf {
                    number: a.param_number,
                    index: a.param_index.clone(),
                }));
            };
            if l.values[param].size != shape.byte_size() {
                return Err(CompileError::Malformed(MalformedModule::AliasSize {
                    output: index.clone(),
                    number: a.param_number,
                    index: a.param_index.clone(),
                }));
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
                let v = l.new_value(leaf_bytes(&shape)?, Placement::Output, &name);
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
        let mut n = self.next_suffix.get(&base).copied().unwrap_or(1);
        if self.names.contains(&name) {
            name = format!("{base}_{n}");
            while self.names.contains(&name) {
                n += 1;
                name = format!("{base}_{n}");
            }
            n += 1;
        }
        self.next_suffix.insert(base, n);
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
        self.lower_scheduled(cid, params, Schedule::Plan)
    }

    /// [`Self::lower_computation`] with the fusion plan's units in the order `schedule` gives.
    fn lower_scheduled(
        &mut self,
        cid: ComputationId,
        params: Vec<Vec<Loc>>,
        schedule: Schedule,
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
        let r = self.lower_computation_body(cid, params, schedule);
        self.depth -= 1;
        r
    }

    fn lower_computation_body(
        &mut self,
        cid: ComputationId,
        params: Vec<Vec<Loc>>,
        schedule: Schedule,
    ) -> Result<(Vec<Op>, Vec<Loc>), CompileError> {
        let comp = self
            .module
            .get(cid)
            .cloned()
            .ok_or(CompileError::Malformed(MalformedModule::NoComputation(cid)))?;
        if params.len() != comp.params.len() {
            return Err(CompileError::Malformed(MalformedModule::ParameterCount {
                computation: comp.name.clone(),
                takes: comp.params.len(),
                given: params.len(),
            }));
        }
        let mut env: Vec<Option<Vec<Loc>>> = vec![None; comp.instructions.len()];
        for (&p, locs) in comp.params.iter().zip(params) {
            if let Some(slot) = env.get_mut(p.index()) {
                *slot = Some(locs);
            }
        }
        let conv_thunk = |i: &hlo::Instruction| {
            self.options.emit_convolution_thunk
                && crate::conv_rewriter::classify(&comp, i).is_some()
        };
        let units = fusion::plan_with(&comp, self.options.fusion, &conv_thunk)?;
        let units = match schedule {
            Schedule::Plan => units,
            Schedule::StateWritersLast => control::state_writers_last(&comp, units),
        };
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
}

/// The bytes of an array constant: row-major, little-endian.
pub fn constant_bytes(comp: &Computation, instr: &Instruction) -> Result<Vec<u8>, CompileError> {
    let bad = |why: UnsupportedConstant| CompileError::unsupported(&comp.name, instr, why);
    let t = instr
        .shape
        .element_type()
        .ok_or_else(|| bad(UnsupportedConstant::Tuple))?;
    let values = match &instr.attrs.literal {
        Some(ConstantLiteral::Array(a)) => &a.values,
        Some(ConstantLiteral::Elided) => return Err(bad(UnsupportedConstant::Elided)),
        _ => return Err(bad(UnsupportedConstant::Tuple)),
    };
    if values.len() as u64 != instr.shape.element_count() {
        return Err(bad(UnsupportedConstant::ElementCount));
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
            P::F16 | P::Bf16 | P::F32 | P::F64 | P::F8E4M3FN | P::F8E5M2 => {
                let bits = t.float_bits(v.as_f64()).unwrap_or_default();
                out.extend(&bits.to_le_bytes()[..t.byte_size() as usize]);
            }
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
            other => return Err(bad(UnsupportedConstant::ElementType(other))),
        }
    }
    Ok(out)
}

/// The byte size of an entry parameter or output leaf, checked: the buffers the artifact
/// declares must not be sized by a wrapped or saturated product (the verifier refuses such
/// shapes first; this keeps lowering safe on a module that skipped it).
fn leaf_bytes(shape: &Shape) -> Result<u64, CompileError> {
    shape
        .checked_byte_size()
        .map_err(|e| CompileError::Malformed(MalformedModule::LeafSize(e)))
}
