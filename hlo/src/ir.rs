//! The HLO intermediate representation: a module of computations of instructions, held in
//! vectors and addressed by typed handles ([`ComputationId`], [`InstrId`]).
//!
//! # Walking a module
//!
//! ```
//! # use hlo::*;
//! fn walk(module: &HloModule) {
//!     let entry: &Computation = module.entry_computation();
//!     // Instructions are stored in program (text) order; operands are handles into the same
//!     // computation. Text order defines operands before users for everything XLA and JAX
//!     // print; `post_order()` guarantees it for any input the parser accepts.
//!     for id in entry.post_order() {
//!         let instr = &entry[id];
//!         let _: InstrId = id;
//!         for &op in &instr.operands {
//!             let _operand: &Instruction = &entry[op];
//!         }
//!         // Computations this instruction calls (to_apply, calls, condition, body, branches...).
//!         for callee in instr.called_computations() {
//!             let _callee: &Computation = &module[callee];
//!         }
//!         // Typed attributes, no string parsing needed:
//!         if let Some(dims) = &instr.attrs.dimensions { let _ = dims; }
//!         if let Some(ConstantLiteral::Array(a)) = &instr.attrs.literal { let _ = &a.values; }
//!     }
//!     let _params: &[InstrId] = &entry.params; // indexed by parameter number
//!     let _root: &Instruction = &entry[entry.root];
//! }
//! ```
//!
//! Every [`Instruction`] carries its [`Opcode`], its declared [`Shape`], its operands, typed
//! attributes in [`Attrs`] (anything not modelled is kept verbatim in [`Attrs::raw`] so the
//! printer round-trips), its [`OpMetadata`] and the [`SourceLoc`] it was parsed from. Source
//! locations never take part in equality, so `parse(print(m)) == m`.

use std::fmt;
use std::ops::Index;

use crate::shape::Shape;

mod attrs;
mod sharding;
mod unsupported;

pub use attrs::*;
pub use sharding::*;
pub use unsupported::UNSUPPORTED_OPCODES;

/// Handle of a computation in [`HloModule::computations`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComputationId(pub u32);

impl ComputationId {
    /// The index into [`HloModule::computations`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Handle of an instruction in its computation's [`Computation::instructions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstrId(pub u32);

impl InstrId {
    /// The index into [`Computation::instructions`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A 1-based line and column in the parsed text. Always compares equal, so it never affects
/// module equality. `line == 0` means "not from text".
#[derive(Debug, Clone, Copy, Default)]
pub struct SourceLoc {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub column: u32,
}

impl PartialEq for SourceLoc {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for SourceLoc {}

impl std::hash::Hash for SourceLoc {
    /// Consistent with `PartialEq`: all locations hash alike.
    fn hash<H: std::hash::Hasher>(&self, _state: &mut H) {}
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

macro_rules! opcodes {
    ($($variant:ident => $name:literal,)*) => {
        /// Every XLA HLO opcode. An opcode that is not listed here is a parse error.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Opcode {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        impl Opcode {
            /// All opcodes, in declaration order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant,)*];

            /// The opcode's text name (`"get-tuple-element"`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Opcode::$variant => $name,)*
                }
            }

            /// Looks an opcode up by text name.
            pub fn from_name(name: &str) -> Option<Opcode> {
                match name {
                    $($name => Some(Opcode::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

opcodes! {
    Abs => "abs",
    Add => "add",
    AddDependency => "add-dependency",
    AfterAll => "after-all",
    AllGather => "all-gather",
    AllGatherDone => "all-gather-done",
    AllGatherStart => "all-gather-start",
    AllReduce => "all-reduce",
    AllReduceDone => "all-reduce-done",
    AllReduceStart => "all-reduce-start",
    AllToAll => "all-to-all",
    And => "and",
    AsyncDone => "async-done",
    AsyncStart => "async-start",
    AsyncUpdate => "async-update",
    Atan2 => "atan2",
    BatchNormGrad => "batch-norm-grad",
    BatchNormInference => "batch-norm-inference",
    BatchNormTraining => "batch-norm-training",
    Bitcast => "bitcast",
    BitcastConvert => "bitcast-convert",
    Broadcast => "broadcast",
    Call => "call",
    Cbrt => "cbrt",
    Ceil => "ceil",
    Cholesky => "cholesky",
    Clamp => "clamp",
    Clz => "count-leading-zeros",
    CollectiveBroadcast => "collective-broadcast",
    CollectivePermute => "collective-permute",
    CollectivePermuteDone => "collective-permute-done",
    CollectivePermuteStart => "collective-permute-start",
    Compare => "compare",
    Complex => "complex",
    Concatenate => "concatenate",
    Conditional => "conditional",
    Constant => "constant",
    Convert => "convert",
    Convolution => "convolution",
    Copy => "copy",
    CopyDone => "copy-done",
    CopyStart => "copy-start",
    Cos => "cosine",
    CustomCall => "custom-call",
    Divide => "divide",
    Domain => "domain",
    Dot => "dot",
    DynamicReshape => "dynamic-reshape",
    DynamicSlice => "dynamic-slice",
    DynamicUpdateSlice => "dynamic-update-slice",
    Erf => "erf",
    Exp => "exponential",
    Expm1 => "exponential-minus-one",
    Fft => "fft",
    Floor => "floor",
    Fusion => "fusion",
    Gather => "gather",
    GetDimensionSize => "get-dimension-size",
    GetTupleElement => "get-tuple-element",
    Imag => "imag",
    Infeed => "infeed",
    Iota => "iota",
    IsFinite => "is-finite",
    Log => "log",
    Log1p => "log-plus-one",
    Logistic => "logistic",
    Map => "map",
    Maximum => "maximum",
    Minimum => "minimum",
    Multiply => "multiply",
    Negate => "negate",
    Not => "not",
    OptimizationBarrier => "opt-barrier",
    Or => "or",
    Outfeed => "outfeed",
    Pad => "pad",
    Parameter => "parameter",
    PartitionId => "partition-id",
    PopulationCount => "popcnt",
    Power => "power",
    RaggedAllToAll => "ragged-all-to-all",
    RaggedDot => "ragged-dot",
    Real => "real",
    Recv => "recv",
    RecvDone => "recv-done",
    Reduce => "reduce",
    ReducePrecision => "reduce-precision",
    ReduceScatter => "reduce-scatter",
    ReduceWindow => "reduce-window",
    Remainder => "remainder",
    ReplicaId => "replica-id",
    Reshape => "reshape",
    Reverse => "reverse",
    Rng => "rng",
    RngBitGenerator => "rng-bit-generator",
    RngGetAndUpdateState => "rng-get-and-update-state",
    RoundNearestAfz => "round-nearest-afz",
    RoundNearestEven => "round-nearest-even",
    Rsqrt => "rsqrt",
    ScaledDot => "scaled-dot",
    Scatter => "scatter",
    Select => "select",
    SelectAndScatter => "select-and-scatter",
    Send => "send",
    SendDone => "send-done",
    SetDimensionSize => "set-dimension-size",
    ShiftLeft => "shift-left",
    ShiftRightArithmetic => "shift-right-arithmetic",
    ShiftRightLogical => "shift-right-logical",
    Sign => "sign",
    Sin => "sine",
    Slice => "slice",
    Sort => "sort",
    Sqrt => "sqrt",
    StochasticConvert => "stochastic-convert",
    Subtract => "subtract",
    Tan => "tan",
    Tanh => "tanh",
    TopK => "topk",
    Transpose => "transpose",
    TriangularSolve => "triangular-solve",
    Tuple => "tuple",
    While => "while",
    Xor => "xor",
}

impl Opcode {
    /// Elementwise operations with one operand (result shape = operand shape, except
    /// `is-finite` (pred), `real`/`imag`/`abs` on complex (component type)).
    pub fn is_elementwise_unary(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            Abs | Cbrt
                | Ceil
                | Clz
                | Copy
                | Cos
                | Erf
                | Exp
                | Expm1
                | Floor
                | Imag
                | IsFinite
                | Log
                | Log1p
                | Logistic
                | Negate
                | Not
                | PopulationCount
                | Real
                | RoundNearestAfz
                | RoundNearestEven
                | Rsqrt
                | Sign
                | Sin
                | Sqrt
                | Tan
                | Tanh
        )
    }

    /// Elementwise operations with two operands of the same shape (excluding `compare`,
    /// which produces `pred`, and `complex`).
    pub fn is_elementwise_binary(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            Add | And
                | Atan2
                | Divide
                | Maximum
                | Minimum
                | Multiply
                | Or
                | Power
                | Remainder
                | ShiftLeft
                | ShiftRightArithmetic
                | ShiftRightLogical
                | Subtract
                | Xor
        )
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One entry of `output_to_operand_aliasing`: the output at `output_index` (a tuple index path,
/// empty for a non-tuple result) may share the buffer of operand `operand` at `operand_index`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OutputOperandAlias {
    /// Tuple index path into the instruction's result.
    pub output_index: Vec<i64>,
    /// Operand number.
    pub operand: i64,
    /// Tuple index path into that operand.
    pub operand_index: Vec<i64>,
}

/// Typed attributes of an instruction. Each field is `Some` exactly when the attribute was
/// written; attributes not modelled here are kept verbatim in [`Attrs::raw`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Attrs {
    /// `parameter(N)`: the parameter number.
    pub parameter_number: Option<i64>,
    /// `constant(...)`: the literal.
    pub literal: Option<Literal>,
    /// `dimensions={...}` (broadcast, transpose, reduce, reverse, sort, concatenate (one entry),
    /// map, ...).
    pub dimensions: Option<Vec<i64>>,
    /// `slice={[0:4:1], ...}`.
    pub slice: Option<Vec<SliceDim>>,
    /// `padding=0_0x1_2_0` (pad).
    pub padding: Option<Vec<PadDim>>,
    /// `window={...}`.
    pub window: Option<Window>,
    /// Dot dimension numbers (any of the four `*_dims` attributes).
    pub dot_dimension_numbers: Option<DotDimensionNumbers>,
    /// `dim_labels=` of convolution.
    pub conv_dimension_numbers: Option<ConvDimensionNumbers>,
    /// `feature_group_count=`
    pub feature_group_count: Option<i64>,
    /// `batch_group_count=`
    pub batch_group_count: Option<i64>,
    /// `operand_precision={...}`
    pub operand_precision: Option<Vec<Precision>>,
    /// `algorithm=dot_...` of dot.
    pub dot_algorithm: Option<DotAlgorithm>,
    /// `direction=` of compare.
    pub comparison_direction: Option<ComparisonDirection>,
    /// `type=` of compare.
    pub comparison_type: Option<ComparisonType>,
    /// `to_apply=` (reduce, map, sort, call, all-reduce, scatter, reduce-window, ...).
    pub to_apply: Option<ComputationId>,
    /// `calls=` (fusion, async-start); a list when several are written.
    pub calls: Option<Vec<ComputationId>>,
    /// `condition=` of while.
    pub condition: Option<ComputationId>,
    /// `body=` of while.
    pub body: Option<ComputationId>,
    /// `true_computation=` of conditional.
    pub true_computation: Option<ComputationId>,
    /// `false_computation=` of conditional.
    pub false_computation: Option<ComputationId>,
    /// `branch_computations={...}` of conditional.
    pub branch_computations: Option<Vec<ComputationId>>,
    /// `called_computations={...}` of custom-call.
    pub called_computations: Option<Vec<ComputationId>>,
    /// `select=` of select-and-scatter.
    pub select: Option<ComputationId>,
    /// `scatter=` of select-and-scatter.
    pub scatter: Option<ComputationId>,
    /// `kind=` of fusion.
    pub fusion_kind: Option<FusionKind>,
    /// `iota_dimension=`
    pub iota_dimension: Option<i64>,
    /// `index=` of get-tuple-element.
    pub tuple_index: Option<i64>,
    /// Gather dimension numbers (any of the gather `*_dims` attributes).
    pub gather_dimension_numbers: Option<GatherDimensionNumbers>,
    /// `slice_sizes={...}` of gather.
    pub gather_slice_sizes: Option<Vec<i64>>,
    /// Scatter dimension numbers (any of the scatter `*_dims` attributes, or
    /// `index_vector_dim=` on a scatter); `None` when none is written.
    pub scatter_dimension_numbers: Option<ScatterDimensionNumbers>,
    /// `indices_are_sorted=`
    pub indices_are_sorted: Option<bool>,
    /// `unique_indices=`
    pub unique_indices: Option<bool>,
    /// `dynamic_slice_sizes={...}`
    pub dynamic_slice_sizes: Option<Vec<i64>>,
    /// `is_stable=` of sort.
    pub is_stable: Option<bool>,
    /// `k=` of topk.
    pub k: Option<i64>,
    /// `largest=` of topk.
    pub largest: Option<bool>,
    /// `custom_call_target="..."`
    pub custom_call_target: Option<String>,
    /// `api_version=API_VERSION_...`
    pub api_version: Option<String>,
    /// `custom_call_has_side_effect=`
    pub custom_call_has_side_effect: Option<bool>,
    /// `backend_config=`: the configuration text (unescaped when it was a quoted string; the
    /// braces included when it was written as a bare `{...}`).
    pub backend_config: Option<String>,
    /// `operand_layout_constraints={f32[4,4]{0,1}, ...}` (custom-call): each operand's shape with
    /// the layout its target reads (LAPACK-style handlers take column-major matrices). A custom
    /// call with constraints has a layout on every array leaf of its own shape too.
    pub operand_layout_constraints: Option<Vec<Shape>>,
    /// `output_to_operand_aliasing={{0}: (0, {}), ...}` (custom-call): outputs that may share
    /// the buffer of an operand.
    pub output_to_operand_aliasing: Option<Vec<OutputOperandAlias>>,
    /// `frontend_attributes={k="v", ...}` in order.
    pub frontend_attributes: Option<Vec<(String, String)>>,
    /// `sharding={...}`.
    pub sharding: Option<HloSharding>,
    /// `replica_groups=`
    pub replica_groups: Option<ReplicaGroups>,
    /// `channel_id=`
    pub channel_id: Option<i64>,
    /// `use_global_device_ids=`
    pub use_global_device_ids: Option<bool>,
    /// `fft_type=`
    pub fft_type: Option<FftType>,
    /// `fft_length={...}`
    pub fft_length: Option<Vec<i64>>,
    /// `left_side=`, `lower=`, `unit_diagonal=`, `transpose_a=` of triangular-solve (any one
    /// written makes this `Some`).
    pub triangular_solve: Option<TriangularSolveOptions>,
    /// `lower=` of cholesky; `None` (nothing written) reads as XLA's default, `lower=false`.
    pub cholesky: Option<CholeskyOptions>,
    /// `distribution=` of rng.
    pub distribution: Option<RandomDistribution>,
    /// `algorithm=` of rng-bit-generator.
    pub rng_algorithm: Option<RandomAlgorithm>,
    /// `exponent_bits=` of reduce-precision.
    pub exponent_bits: Option<i64>,
    /// `mantissa_bits=` of reduce-precision.
    pub mantissa_bits: Option<i64>,
    /// `delta=` of rng-get-and-update-state.
    pub delta: Option<i64>,
    /// `epsilon=` of batch-norm ops (always [`LiteralValue::Float`]).
    pub epsilon: Option<LiteralValue>,
    /// `feature_index=` of batch-norm ops.
    pub feature_index: Option<i64>,
    /// Other attributes, `(name, value text verbatim)`, in the order written.
    pub raw: Vec<(String, String)>,
}

impl Attrs {
    /// The text of an unmodelled attribute, when written.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.raw
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One HLO instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// Name without the `%` sigil.
    pub name: String,
    /// What the instruction computes; it decides which `attrs` apply.
    pub opcode: Opcode,
    /// Declared result shape.
    pub shape: Shape,
    /// Operands, in order, as handles into the same computation.
    pub operands: Vec<InstrId>,
    /// Typed attributes.
    pub attrs: Attrs,
    /// `metadata={...}`, when written.
    pub metadata: Option<OpMetadata>,
    /// Where the instruction's name starts in the source (never part of equality).
    pub loc: SourceLoc,
}

impl Instruction {
    /// Every computation this instruction calls, in attribute order (to_apply, calls,
    /// condition, body, true/false computations, branches, called_computations, select,
    /// scatter).
    pub fn called_computations(&self) -> Vec<ComputationId> {
        let a = &self.attrs;
        let mut out = Vec::new();
        out.extend(a.to_apply);
        out.extend(a.calls.iter().flatten().copied());
        out.extend(a.condition);
        out.extend(a.body);
        out.extend(a.true_computation);
        out.extend(a.false_computation);
        out.extend(a.branch_computations.iter().flatten().copied());
        out.extend(a.called_computations.iter().flatten().copied());
        out.extend(a.select);
        out.extend(a.scatter);
        out
    }

    /// The parameter number of a `parameter` instruction.
    pub fn parameter_number(&self) -> Option<i64> {
        self.attrs.parameter_number
    }
}

/// A computation: a named list of instructions in program order with a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Computation {
    /// Name without the `%` sigil.
    pub name: String,
    /// Instructions in program (text) order; [`InstrId`] indexes this vector.
    pub instructions: Vec<Instruction>,
    /// Parameter instructions, indexed by parameter number.
    pub params: Vec<InstrId>,
    /// The root (`ROOT`, or the last instruction when none is marked).
    pub root: InstrId,
    /// `execution_thread="..."` written after the computation, when present.
    pub execution_thread: Option<String>,
    /// Where the computation's name starts in the source (never part of equality).
    pub loc: SourceLoc,
}

impl Computation {
    /// The instruction for a handle, `None` when out of range.
    pub fn get(&self, id: InstrId) -> Option<&Instruction> {
        self.instructions.get(id.index())
    }

    /// Iterates `(handle, instruction)` in program order.
    pub fn iter(&self) -> impl Iterator<Item = (InstrId, &Instruction)> + '_ {
        self.instructions
            .iter()
            .enumerate()
            .map(|(i, instr)| (InstrId(i as u32), instr))
    }

    /// The root instruction, `None` only for a malformed (empty) computation.
    pub fn root_instruction(&self) -> Option<&Instruction> {
        self.get(self.root)
    }

    /// The parameter instruction with the given number.
    pub fn param(&self, number: usize) -> Option<&Instruction> {
        self.params.get(number).and_then(|&id| self.get(id))
    }

    /// Shapes of the parameters by number.
    pub fn param_shapes(&self) -> Vec<&Shape> {
        self.params
            .iter()
            .filter_map(|&id| self.get(id))
            .map(|i| &i.shape)
            .collect()
    }

    /// Every instruction in an order where operands come before their users (text order is
    /// kept where it already has that property, which holds for everything XLA and JAX print;
    /// the parser also accepts operands defined later in the text). Instructions in a cycle
    /// (rejected by the verifier) are appended in text order.
    pub fn post_order(&self) -> Vec<InstrId> {
        self.operand_walk().0
    }

    /// The depth-first walk over operand edges behind [`Computation::post_order`] and the
    /// verifier's cycle check: the post-order, and whether the walk met an edge back to an
    /// instruction still on its stack (a cycle). One walk so that the order the passes use and
    /// the cycle the verifier rejects are the same graph read the same way.
    pub fn operand_walk(&self) -> (Vec<InstrId>, bool) {
        let n = self.instructions.len();
        let mut state = vec![0u8; n];
        let mut out = Vec::with_capacity(n);
        let mut cyclic = false;
        for start in 0..n {
            if state.get(start) != Some(&0) {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            if let Some(s) = state.get_mut(start) {
                *s = 1;
            }
            while let Some((node, pos)) = stack.last_mut() {
                let next = self
                    .instructions
                    .get(*node)
                    .and_then(|i| i.operands.get(*pos))
                    .map(|o| o.index());
                match next {
                    Some(op) => {
                        *pos += 1;
                        match state.get(op) {
                            Some(0) => {
                                if let Some(s) = state.get_mut(op) {
                                    *s = 1;
                                }
                                stack.push((op, 0));
                            }
                            Some(1) => cyclic = true,
                            _ => {}
                        }
                    }
                    None => {
                        if let Some(s) = state.get_mut(*node) {
                            *s = 2;
                        }
                        out.push(InstrId(*node as u32));
                        stack.pop();
                    }
                }
            }
        }
        (out, cyclic)
    }

    /// For each instruction (indexed like [`Computation::instructions`]), the instructions that
    /// use it as an operand, in text order, once per use.
    pub fn users(&self) -> Vec<Vec<InstrId>> {
        let mut users = vec![Vec::new(); self.instructions.len()];
        for (id, instr) in self.iter() {
            for op in &instr.operands {
                if let Some(u) = users.get_mut(op.index()) {
                    u.push(id);
                }
            }
        }
        users
    }

    /// Finds an instruction by name.
    pub fn find(&self, name: &str) -> Option<InstrId> {
        self.instructions
            .iter()
            .position(|i| i.name == name)
            .map(|p| InstrId(p as u32))
    }
}

impl Index<InstrId> for Computation {
    type Output = Instruction;

    /// Panics when the handle is out of range; handles produced by the parser never are.
    fn index(&self, id: InstrId) -> &Instruction {
        &self.instructions[id.index()]
    }
}

/// `entry_computation_layout={(p0, p1, ...)->result}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramLayout {
    /// Parameter shapes with layouts.
    pub params: Vec<Shape>,
    /// Result shape with layout.
    pub result: Shape,
}

/// One entry of `input_output_alias={ {out_index}: (param, {param_index}, kind), ... }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoAlias {
    /// Tuple index of the aliased output.
    pub output_index: Vec<i64>,
    /// Parameter number.
    pub param_number: i64,
    /// Tuple index within the parameter.
    pub param_index: Vec<i64>,
    /// `may-alias` / `must-alias`, when written.
    pub kind: Option<String>,
}

/// Module header attributes (`HloModule name, key=value, ...`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModuleConfig {
    /// `is_scheduled=`
    pub is_scheduled: Option<bool>,
    /// `entry_computation_layout=`
    pub entry_computation_layout: Option<ProgramLayout>,
    /// `input_output_alias=`
    pub input_output_alias: Option<Vec<IoAlias>>,
    /// `allow_spmd_sharding_propagation_to_parameters={...}`
    pub allow_spmd_sharding_propagation_to_parameters: Option<Vec<bool>>,
    /// `allow_spmd_sharding_propagation_to_output={...}`
    pub allow_spmd_sharding_propagation_to_output: Option<Vec<bool>>,
    /// `replica_count=`
    pub replica_count: Option<i64>,
    /// `num_partitions=`
    pub num_partitions: Option<i64>,
    /// `frontend_attributes={...}`
    pub frontend_attributes: Option<Vec<(String, String)>>,
    /// Other header attributes, value text verbatim, in order.
    pub raw: Vec<(String, String)>,
}

/// A `FileLocations` entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileLocation {
    /// `file_name_id`
    pub file_name_id: i64,
    /// `function_name_id`
    pub function_name_id: i64,
    /// `line`
    pub line: i64,
    /// `end_line`
    pub end_line: i64,
    /// `column`
    pub column: i64,
    /// `end_column`
    pub end_column: i64,
}

/// A `StackFrames` entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StackFrame {
    /// `file_location_id`
    pub file_location_id: i64,
    /// `parent_frame_id` (0 = none)
    pub parent_frame_id: i64,
}

/// The stack-frame tables printed after the module header (ids are 1-based, kept as written).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StackFrameIndex {
    /// `FileNames`: `(id, name)`.
    pub file_names: Vec<(i64, String)>,
    /// `FunctionNames`: `(id, name)`.
    pub function_names: Vec<(i64, String)>,
    /// `FileLocations`: `(id, location)`.
    pub file_locations: Vec<(i64, FileLocation)>,
    /// `StackFrames`: `(id, frame)`.
    pub stack_frames: Vec<(i64, StackFrame)>,
}

impl StackFrameIndex {
    /// True when all four tables are empty.
    pub fn is_empty(&self) -> bool {
        self.file_names.is_empty()
            && self.function_names.is_empty()
            && self.file_locations.is_empty()
            && self.stack_frames.is_empty()
    }
}

/// An HLO module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HloModule {
    /// Module name (`_` when the text had no `HloModule` header).
    pub name: String,
    /// Computations in text order; [`ComputationId`] indexes this vector. Callees may appear
    /// before or after their callers.
    pub computations: Vec<Computation>,
    /// The entry computation (`ENTRY`, or the last computation when none is marked).
    pub entry: ComputationId,
    /// Header attributes.
    pub config: ModuleConfig,
    /// The stack-frame tables after the header (empty when the text has none); instruction
    /// metadata's `stack_frame_id` refers into them.
    pub stack_frames: StackFrameIndex,
}

impl HloModule {
    /// The entry computation. Panics only if `entry` is out of range, which parsed modules
    /// never are.
    pub fn entry_computation(&self) -> &Computation {
        &self[self.entry]
    }

    /// The computation for a handle, `None` when out of range.
    pub fn get(&self, id: ComputationId) -> Option<&Computation> {
        self.computations.get(id.index())
    }

    /// Iterates `(handle, computation)` in text order.
    pub fn iter(&self) -> impl Iterator<Item = (ComputationId, &Computation)> + '_ {
        self.computations
            .iter()
            .enumerate()
            .map(|(i, c)| (ComputationId(i as u32), c))
    }

    /// Finds a computation by name.
    pub fn find(&self, name: &str) -> Option<ComputationId> {
        self.computations
            .iter()
            .position(|c| c.name == name)
            .map(|p| ComputationId(p as u32))
    }

    /// Computations in post order: every callee before its callers, the entry last.
    /// Unreachable computations are not included.
    pub fn post_order(&self) -> Vec<ComputationId> {
        let mut state = vec![0u8; self.computations.len()];
        let mut out = Vec::new();
        // Iterative DFS: (computation, next callee index).
        let mut stack: Vec<(ComputationId, Vec<ComputationId>, usize)> = Vec::new();
        let callees = |c: ComputationId| -> Vec<ComputationId> {
            self.get(c)
                .map(|c| {
                    c.instructions
                        .iter()
                        .flat_map(|i| i.called_computations())
                        .collect()
                })
                .unwrap_or_default()
        };
        if self.entry.index() < state.len() {
            state[self.entry.index()] = 1;
            stack.push((self.entry, callees(self.entry), 0));
        }
        while let Some((c, list, pos)) = stack.last_mut() {
            if let Some(&next) = list.get(*pos) {
                *pos += 1;
                if state.get(next.index()) == Some(&0) {
                    state[next.index()] = 1;
                    let l = callees(next);
                    stack.push((next, l, 0));
                }
            } else {
                out.push(*c);
                stack.pop();
            }
        }
        out
    }
}

impl Index<ComputationId> for HloModule {
    type Output = Computation;

    /// Panics when the handle is out of range; handles produced by the parser never are.
    fn index(&self, id: ComputationId) -> &Computation {
        &self.computations[id.index()]
    }
}
