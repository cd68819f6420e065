//! What this compiler can put into an executable: the thunk kinds it emits and the HLO opcodes it
//! accepts (and so embeds). The golden suite's coverage check requires a golden case for each, so
//! that nothing the compiler can emit goes unreplayed; a new thunk kind or opcode lands here
//! together with a case that uses it (docs/goldens.md).
use hlo::Opcode;

/// The `api_version` (an `xla.CustomCallApiVersion` value) the compiler writes for a custom call
/// whose HLO names none: the version most artifacts carry, so every registered target must be
/// replayed at it (the golden suite's behavioural coverage).
pub const DEFAULT_CUSTOM_CALL_API_VERSION: proto::xla::CustomCallApiVersion =
    proto::xla::CustomCallApiVersion::ApiVersionOriginal;

/// `xla.gpu.ThunkProto` oneof variants the compiler emits.
pub const EMITTED_THUNK_KINDS: &[&str] = &[
    "all_gather_start_thunk",
    "all_reduce_start_thunk",
    "conditional_thunk",
    "copy_thunk",
    "custom_call_thunk",
    "gemm_thunk",
    "kernel_thunk",
    "partition_id_thunk",
    "reduce_scatter_thunk",
    "replica_id_thunk",
    "while_thunk",
];

/// HLO opcodes the compiler accepts in an input module.
pub const SUPPORTED_OPCODES: &[Opcode] = &[
    Opcode::Abs,
    Opcode::Add,
    Opcode::AllGather,
    Opcode::AllReduce,
    Opcode::And,
    Opcode::BitcastConvert,
    Opcode::Broadcast,
    Opcode::Call,
    Opcode::Ceil,
    // Expanded into a column loop before fusion (passes/cholesky.rs) until
    // CompileOptions::emit_cusolver_potrf; the embedded module keeps it (with
    // `cholesky_options`), so the golden coverage asks for a case.
    Opcode::Cholesky,
    Opcode::Clamp,
    // Rewritten into an all-gather, dynamic-slices and a select before fusion
    // (passes/permute.rs) until CompileOptions::emit_collective_permute; the embedded module
    // keeps it, so the golden coverage asks for a case.
    Opcode::CollectivePermute,
    Opcode::Compare,
    Opcode::Concatenate,
    Opcode::Conditional,
    Opcode::Constant,
    Opcode::Convert,
    Opcode::Convolution,
    Opcode::Cos,
    Opcode::CustomCall,
    Opcode::Divide,
    Opcode::Dot,
    Opcode::DynamicSlice,
    Opcode::DynamicUpdateSlice,
    Opcode::Exp,
    // Rewritten into dots with twiddle matrices before fusion (passes/fft.rs) until
    // CompileOptions::emit_fft_thunk; the embedded module keeps it, so the golden coverage asks
    // for a case (the hand-written `fft_thunk`).
    Opcode::Fft,
    Opcode::Floor,
    Opcode::Gather,
    Opcode::GetTupleElement,
    Opcode::Iota,
    Opcode::IsFinite,
    Opcode::Log,
    Opcode::Maximum,
    Opcode::Minimum,
    Opcode::Multiply,
    Opcode::Negate,
    Opcode::Or,
    Opcode::Pad,
    Opcode::Parameter,
    Opcode::PartitionId,
    Opcode::Reduce,
    Opcode::ReduceScatter,
    Opcode::ReduceWindow,
    Opcode::Remainder,
    Opcode::ReplicaId,
    Opcode::Reshape,
    // Expanded into elementwise integer ops before fusion (passes/rng_bit_generator.rs); the
    // embedded module keeps it (with its algorithm), so the golden coverage asks for a case.
    Opcode::RngBitGenerator,
    Opcode::Reverse,
    Opcode::Rsqrt,
    Opcode::Scatter,
    Opcode::Select,
    Opcode::SelectAndScatter,
    Opcode::ShiftLeft,
    Opcode::ShiftRightArithmetic,
    Opcode::Sign,
    Opcode::Sin,
    Opcode::Slice,
    Opcode::Sort,
    Opcode::Sqrt,
    Opcode::Subtract,
    Opcode::Tanh,
    Opcode::TopK,
    Opcode::Transpose,
    // Expanded into a while loop before fusion (passes/triangular_solve.rs); the embedded
    // module keeps it, so the golden coverage asks for a case.
    Opcode::TriangularSolve,
    Opcode::Tuple,
    Opcode::While,
];

/// [`SUPPORTED_OPCODES`] by name.
pub fn supported_opcodes() -> Vec<&'static str> {
    SUPPORTED_OPCODES.iter().map(|o| o.name()).collect()
}
