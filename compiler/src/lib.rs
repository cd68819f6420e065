//! The ahead-of-time compiler: turns an HLO module into a serialized `xla.gpu.GpuExecutableProto`
//! for a GPU target described by a target config, on a build host that needs no GPU. It owns the
//! HLO passes, fusion, buffer assignment, thunk emission, PTX code generation and serialization.
//!
//! It must not know the runtime: the two meet only at the `proto` schema (see docs/artifact.md).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let module = hlo_text::parse_module(&std::fs::read_to_string("model.hlo")?)?;
//! let target = compiler::Target::load("h100_sxm.txtpb".as_ref())?;
//! let bytes = compiler::compile_to_bytes(&module, &target, &compiler::CompileOptions::default())?;
//! # let _ = bytes; Ok(()) }
//! ```
//!
//! The pipeline: the HLO passes ([`PIPELINE`]: inline calls, DCE, simplification, collective and
//! gemm operand layouts), fusion ([`fusion_plan`]: kernel grouping), [`lower`] (thunk operations
//! over logical buffers, kernels through [`emit_kernels`]), [`assign_buffers`] (allocations and
//! liveness-based reuse) and [`build_executable`] (the executable proto). docs/compiler.md
//! describes each step.
#![warn(missing_docs)]
#![forbid(unsafe_code)]
// The public face is the `pub use` list below; the modules are how the crate is kept.
mod buffers;
mod codegen;
mod conv_rewriter;
mod coverage;
mod cubin;
mod error;
mod fusion;
mod graph;
mod lower;
mod options;
mod partitioned;
mod passes;
mod serialize;
mod target;
mod unsupported;

// Compiling: `compile` / `compile_to_bytes` with a target and options.
pub use coverage::{
    supported_opcodes, DEFAULT_CUSTOM_CALL_API_VERSION, EMITTED_THUNK_KINDS, SUPPORTED_OPCODES,
};
pub use error::{CompileError, MalformedModule};
pub use lower::ffi_attributes::FfiAttributesError;
pub use lower::MAX_CONTROL_FLOW_DEPTH;
pub use options::CompileOptions;
pub use target::Target;
pub use unsupported::{
    Unsupported, UnsupportedCollective, UnsupportedConstant, UnsupportedControlFlow,
    UnsupportedCustomCall, UnsupportedExpansion, UnsupportedGemm, UnsupportedPermute,
    UnsupportedSharding,
};

// The pipeline stage by stage, for the tests, the examples and the harness's benches (each runs
// inside `compile`, in this order): the HLO passes (`optimize` runs them all), fusion, lowering,
// buffer assignment, serialization; kernel code generation on its own.
pub use buffers::{assign as assign_buffers, Assignment};
pub use codegen::{
    emit_kernels, CodegenError, CodegenTarget, EmittedKernel, KernelArg, KernelPlan, KernelRequest,
    LaunchDims,
};
pub use fusion::{
    class as fusion_class, plan as fusion_plan, Class as FusionClass, Group as FusionGroup,
    Unit as FusionUnit, MAX_CODE_DUPLICATION, MAX_FUSION_DEPTH,
};
pub use lower::{lower, Lowered};
pub use passes::inline_calls::run as inline_calls;
pub use passes::spmd::{
    entry_shardings, run as partition_spmd, EntryShardings, MeshesError, SpmdError,
};
pub use passes::{Pass, PIPELINE};
pub use serialize::build as build_executable;

use hlo::HloModule;
use proto::prost::Message;
use proto::xla::gpu::GpuExecutableProto;

/// The module after the HLO passes (what fusion sees); useful for tests and debugging.
pub fn optimize(module: &HloModule, options: &CompileOptions) -> Result<HloModule, CompileError> {
    // Excess precision first: it only rewrites what the input says (a widening `convert` of
    // narrow arithmetic), before simplification could move either.
    let mut m = if options.allow_excess_precision {
        hlo::allow_excess_precision(module)
    } else {
        module.clone()
    };
    if !options.emit_collective_permute {
        passes::permute::run(&mut m)?;
    }
    if !options.emit_fft_thunk {
        passes::fft::run(&mut m)?;
    }
    if options.emit_cusolver_potrf {
        passes::cholesky::to_potrf(&mut m)?;
    } else {
        passes::cholesky::run(&mut m)?;
    }
    passes::run_pipeline(&mut m, options)?;
    Ok(m)
}

/// Compiles a module for a target.
pub fn compile(
    module: &HloModule,
    target: &Target,
    options: &CompileOptions,
) -> Result<GpuExecutableProto, CompileError> {
    if module.get(module.entry).is_none() {
        return Err(CompileError::Malformed(MalformedModule::NoEntry));
    }
    // The input is verified before any pass sees it: the code generator trusts dimension
    // indices and shapes, and an unverified `dimensions={-1}` compiled into kernels the
    // emulator stopped for out-of-bounds access. Every problem is reported, with its location.
    hlo_verify::verify(module).map_err(CompileError::InvalidModule)?;
    // Every array within the element limit before a pass sizes anything by a shape (a
    // 109-byte module broadcasting to 500M elements took 3.9 GB to compile and run).
    let elements = |m: &HloModule| {
        hlo_verify::check_elements(m, options.max_array_elements)
            .map_err(|e| CompileError::TooManyElements(Box::new(e)))
    };
    elements(module)?;
    // A program for several devices becomes one device's program first: that is what the
    // executable embeds, declares as its program shape and runs on each device.
    let per_device;
    let module = if passes::spmd::partitions(module)?.is_some() {
        let mut m = module.clone();
        passes::spmd::run(&mut m)?;
        hlo_verify::verify(&m).map_err(|errors| {
            let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            CompileError::Internal(format!(
                "the partitioned module does not verify: {}",
                text.join("; ")
            ))
        })?;
        per_device = m;
        &per_device
    } else {
        module
    };
    partitioned::check_single_device(module)?;
    // What the thunks run is what the artifact embeds: with `emit_partitions` off, N partitions
    // of one replica become N replicas (runtimes older than stage 1 of
    // `proto::rollout::PARTITIONS` run one partition).
    let replicas = passes::partitions::as_replicas(module, options)?;
    // And f8 constants are f32 constants and a convert (runtimes in the forward window read no
    // f8 literal from the embedded module).
    let widened = passes::float8_constants::widened(replicas.as_ref())?;
    let module = widened.as_ref();
    let optimized = optimize(module, options)?;
    // The passes make arrays of their own (the fft's twiddle matrices, a partitioned
    // program's gathers): the same limit holds for what is lowered.
    elements(&optimized)?;
    let lowered = lower::lower(optimized, target, options)?;
    let assignment = buffers::assign(&lowered.values)?;
    let mut exe = serialize::build(module, &lowered, &assignment, target, options)?;
    if options.cubin {
        cubin::embed(&mut exe, target)?;
    }
    Ok(exe)
}

/// Compiles a module and serializes the executable (protobuf binary).
pub fn compile_to_bytes(
    module: &HloModule,
    target: &Target,
    options: &CompileOptions,
) -> Result<Vec<u8>, CompileError> {
    Ok(compile(module, target, options)?.encode_to_vec())
}
