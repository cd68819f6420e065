//! Errors of the compiler.
use crate::codegen::CodegenError;
use crate::unsupported::Unsupported;

/// Why a module could not be compiled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// The target config could not be read or parsed. Its error already names the file (and
    /// the line), so nothing is added: saying the file twice was issue 16's repeated context.
    #[error(transparent)]
    TargetConfig(#[from] proto::TargetConfigError),
    /// The target config is unusable (wrong platform, missing capability).
    #[error("target config {origin}: {message}")]
    Target {
        /// The file (or other origin) of the config.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// An instruction (or configuration of one) that the compiler does not support.
    #[error("unsupported: {instruction} ({opcode}) in {computation}: {reason}")]
    Unsupported {
        /// Computation name.
        computation: String,
        /// Instruction name.
        instruction: String,
        /// The opcode as HLO text spells it (`get-tuple-element`).
        opcode: String,
        /// What is unsupported, typed ([`Unsupported`] and its families; boxed: every
        /// `Result<_, CompileError>` would otherwise carry its size).
        reason: Box<Unsupported>,
    },
    /// An instruction of the entry that the SPMD partitioner cannot partition.
    #[error("unsupported: {instruction} ({opcode}) in {computation}: SPMD partitioning: {error}")]
    Partitioning {
        /// Computation name.
        computation: String,
        /// Instruction name.
        instruction: String,
        /// The opcode as HLO text spells it.
        opcode: String,
        /// What the partitioner cannot do with it (boxed: every `Result<_, CompileError>`
        /// would otherwise carry its size).
        error: Box<crate::passes::spmd::SpmdError>,
    },
    /// The module fails the HLO verifier: every problem it found, each with its computation,
    /// instruction, location and kind ([`hlo_verify::VerifyError`]).
    #[error("invalid module: {}", join(.0))]
    InvalidModule(Vec<hlo_verify::VerifyError>),
    /// The module is malformed in a way found after verification, while lowering it (a
    /// dangling handle, a call that recurses, an inlining limit).
    #[error("invalid module: {0}")]
    Malformed(MalformedModule),
    /// The module's Shardy meshes (`xla.sdy.meshes`) do not parse.
    #[error("invalid module: {0}")]
    SdyMeshes(#[from] crate::passes::spmd::MeshesError),
    /// The module is written for several devices (an SPMD program) but the SPMD partitioner
    /// found no partition count in it; compiling it for one device would compute something
    /// else.
    #[error("the module is partitioned for several devices ({evidence}) but names no partition count (num_partitions, a Shardy mesh or a tiled sharding): export it with its mesh, or give the per-device program")]
    Partitioned {
        /// What says so: the mesh, the sharding or the call, with where it is.
        evidence: String,
    },
    /// A module with several replicas and several partitions while
    /// `CompileOptions::emit_partitions` is off: runtimes older than stage 1 of
    /// [`proto::rollout::PARTITIONS`] run one partition, and only a one-replica program can be
    /// emitted as replicas instead. The date in the message is that row's stage 2.
    #[error("the module runs on {replicas} replicas x {partitions} partitions; until CompileOptions::emit_partitions is on ({} at the earliest) a program of several partitions is emitted as replicas, which needs replica_count 1", proto::rollout::PARTITIONS.stage2)]
    PartitionsNotEmitted {
        /// `replica_count`.
        replicas: i64,
        /// `num_partitions`.
        partitions: i64,
    },
    /// Kernel generation failed for a fusion.
    // The code generator's error is part of this message and deliberately not a `#[source]`:
    // printers that walk the chain (anyhow's `{:#}`) would otherwise say it twice.
    #[error("code generation for fusion {fusion}: {error}")]
    Codegen {
        /// The fused computation's name.
        fusion: String,
        /// What the code generator said (boxed: it names the instruction and its location,
        /// and every `Result<_, CompileError>` would otherwise carry its size).
        error: Box<CodegenError>,
    },
    /// While/conditional bodies nest deeper than [`crate::lower::MAX_CONTROL_FLOW_DEPTH`]:
    /// the runtime would refuse the artifact.
    #[error("control flow nests deeper than {limit} levels at computation {computation} (compiler::MAX_CONTROL_FLOW_DEPTH): the runtime refuses thunks nested deeper")]
    NestingTooDeep {
        /// The computation that would be nested one level too deep.
        computation: String,
        /// [`crate::lower::MAX_CONTROL_FLOW_DEPTH`], the deepest nesting lowered.
        limit: usize,
    },
    /// An instruction's shape has more elements than
    /// [`crate::CompileOptions::max_array_elements`] (by default [`hlo::MAX_ELEMENTS`], the
    /// limit the runtime and the evaluator share): refused before any pass sizes anything.
    #[error("{0} (CompileOptions::max_array_elements, xla_compile --max_array_elements)")]
    TooManyElements(Box<hlo_verify::VerifyError>),
    /// The module could not be converted for embedding in the executable.
    #[error("cannot embed the HLO module: {0}")]
    Embed(String),
    /// Assembling a kernel's PTX into a cubin failed (only with [`crate::CompileOptions::cubin`]).
    #[error("ptxas, assembling {kernel} for {gpu}: {message}")]
    Ptxas {
        /// The kernel (the first `.entry` of the module).
        kernel: String,
        /// The `--gpu-name` given to ptxas.
        gpu: String,
        /// What went wrong (ptxas not found, or its diagnostics).
        message: String,
    },
    /// A kernel's PTX header contradicts what the executable declares: its `.version` needs a
    /// newer CUDA toolkit than `executable_abi_version` names, or its `.target` does not run on
    /// `gpu_compute_capability`. The runtime refuses such an artifact at load, so it is not
    /// written.
    #[error("kernel {kernel}: {message}")]
    KernelHeader {
        /// The kernel's `.entry` name.
        kernel: String,
        /// What contradicts what.
        message: String,
    },
    /// An internal invariant was broken (a compiler bug).
    #[error("internal compiler error: {0}")]
    Internal(String),
}

/// What is malformed about a module that passed (or skipped) the verifier
/// ([`CompileError::Malformed`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MalformedModule {
    /// The module's entry handle names no computation (checked before anything else).
    #[error("the module has no entry computation")]
    NoEntry,
    /// The entry handle names no computation (found while lowering).
    #[error("no entry computation")]
    EntryMissing,
    /// The entry computation has no instructions.
    #[error("the entry computation is empty")]
    EmptyEntry,
    /// An entry parameter handle names no instruction.
    #[error("dangling parameter")]
    DanglingParameter,
    /// A `parameter` instruction missing from its computation's parameter list.
    #[error("parameter {parameter} of {computation} is not in its parameter list")]
    ParameterNotListed {
        /// The instruction.
        parameter: String,
        /// Its computation.
        computation: String,
    },
    /// A computation handle that names no computation.
    #[error("no computation {0:?}")]
    NoComputation(hlo::ComputationId),
    /// A computation lowered with another number of arguments than it has parameters.
    #[error("{computation} takes {takes} parameters, given {given}")]
    ParameterCount {
        /// The computation.
        computation: String,
        /// Its parameters.
        takes: usize,
        /// The arguments given.
        given: usize,
    },
    /// An instruction with an operand handle that names no instruction.
    #[error("{instruction} in {computation} has a dangling operand")]
    DanglingOperand {
        /// The instruction.
        instruction: String,
        /// Its computation.
        computation: String,
    },
    /// An instruction that is its own (indirect) operand.
    #[error("{instruction} in {computation} is part of a cycle")]
    Cycle {
        /// The instruction.
        instruction: String,
        /// Its computation.
        computation: String,
    },
    /// A handle to an instruction that does not exist, reached from the root or a side effect.
    #[error("dangling instruction in {0}")]
    DanglingInstruction(String),
    /// A computation without a root (found by the SPMD partitioner).
    #[error("{0}: no root")]
    NoRoot(String),
    /// A call of a computation that does not exist.
    #[error("{0} calls a computation that does not exist")]
    NoCallee(String),
    /// A call with another number of operands than the callee has parameters.
    #[error("{site} passes {operands} operands to {callee}, which has {parameters} parameters")]
    CallArity {
        /// The calling instruction.
        site: String,
        /// Its operands.
        operands: usize,
        /// The callee.
        callee: String,
        /// The callee's parameters.
        parameters: usize,
    },
    /// A call of a computation that is already being called.
    #[error("{site} calls {callee}, which is already being called: calls may not recurse")]
    Recursion {
        /// The calling instruction.
        site: String,
        /// The callee.
        callee: String,
    },
    /// Inlining a computation's calls would pass the inliner's limit
    /// (`passes::inline_calls::MAX_INLINED_INSTRUCTIONS`).
    #[error(
        "inlining the calls of {computation} would make {total} instructions, more than {limit}"
    )]
    InlineLimit {
        /// The computation.
        computation: String,
        /// Its instruction count once inlined.
        total: u64,
        /// The limit.
        limit: usize,
    },
    /// An `input_output_alias` entry whose parameter leaf is not an array.
    #[error("input_output_alias names parameter {number} {index:?}, which is not an array leaf")]
    AliasNotALeaf {
        /// The parameter number.
        number: i64,
        /// The leaf index within it.
        index: Vec<i64>,
    },
    /// An `input_output_alias` entry whose output and parameter differ in size.
    #[error(
        "input_output_alias: output {output:?} and parameter {number} {index:?} differ in size"
    )]
    AliasSize {
        /// The output leaf index.
        output: Vec<i64>,
        /// The parameter number.
        number: i64,
        /// The leaf index within it.
        index: Vec<i64>,
    },
    /// An entry parameter or output leaf whose byte size does not fit.
    #[error("{0}")]
    LeafSize(hlo::SizeError),
}

/// The verifier's problems as one line, `; `-separated.
fn join(errors: &[hlo_verify::VerifyError]) -> String {
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    text.join("; ")
}

impl CompileError {
    /// A [`CompileError::Partitioning`] for an instruction.
    pub(crate) fn partitioning(
        computation: &str,
        instr: &hlo::Instruction,
        error: crate::passes::spmd::SpmdError,
    ) -> CompileError {
        CompileError::Partitioning {
            computation: computation.to_owned(),
            instruction: instr.name.clone(),
            opcode: instr.opcode.name().to_owned(),
            error: Box::new(error),
        }
    }

    /// An [`CompileError::Unsupported`] for an instruction.
    pub(crate) fn unsupported(
        computation: &str,
        instr: &hlo::Instruction,
        reason: impl Into<Unsupported>,
    ) -> CompileError {
        CompileError::Unsupported {
            computation: computation.to_owned(),
            instruction: instr.name.clone(),
            opcode: instr.opcode.name().to_owned(),
            reason: Box::new(reason.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CompileError, MalformedModule};

    #[test]
    fn malformed_modules_say_what_once() {
        let text = |m: MalformedModule| CompileError::Malformed(m).to_string();
        assert_eq!(
            text(MalformedModule::NoEntry),
            "invalid module: the module has no entry computation"
        );
        assert_eq!(
            text(MalformedModule::Recursion {
                site: "c".into(),
                callee: "f".into(),
            }),
            "invalid module: c calls f, which is already being called: calls may not recurse"
        );
        assert_eq!(
            text(MalformedModule::AliasSize {
                output: vec![0],
                number: 1,
                index: vec![],
            }),
            "invalid module: input_output_alias: output [0] and parameter 1 [] differ in size"
        );
        assert_eq!(
            text(MalformedModule::InlineLimit {
                computation: "e".into(),
                total: 5,
                limit: 4,
            }),
            "invalid module: inlining the calls of e would make 5 instructions, more than 4"
        );
        assert_eq!(
            text(MalformedModule::NoComputation(hlo::ComputationId(7))),
            "invalid module: no computation ComputationId(7)"
        );
        assert_eq!(
            text(MalformedModule::NoRoot("e".into())),
            "invalid module: e: no root"
        );
    }
}
