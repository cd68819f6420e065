//! PTX code generation: one kernel (or a short sequence of kernels) per fused computation, built
//! through the `ptx` crate's typed model and printed to text.
//!
//! # Interface with the pipeline
//!
//! The pipeline outlines every fusion into its own computation of the module: the computation's
//! parameters are the kernel's inputs (in parameter-number order) and its root is the output (an
//! array, or a tuple of arrays for multi-output fusions; never nested tuples). [`emit_kernels`]
//! turns that computation into kernels. Each kernel parameter is a `.param .u64` device pointer,
//! listed in [`EmittedKernel::args`]: an input, an output leaf, or a slice of a scratch buffer the
//! pipeline allocates ([`KernelPlan::scratch_bytes`]). Buffers are dense row-major (see
//! docs/artifact.md). The kernels of a plan run in order, each after the previous one finished.
use hlo::{ComputationId, HloModule};

/// What code generation needs to know about the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodegenTarget {
    /// SM version, e.g. 90 for sm_90.
    pub sm: u32,
    /// `sm_90a`-style architecture-specific features (`feature_extension: ACCELERATED_FEATURES`).
    pub accelerated: bool,
    /// PTX ISA version to print in `.version` (major, minor).
    pub ptx_version: (u32, u32),
    /// Threads per warp.
    pub warp_size: u32,
    /// Maximum threads per block.
    pub max_threads_per_block: u32,
    /// Shared memory a block may use without opting in, in bytes.
    pub max_shared_memory_per_block: u32,
    /// Maximum grid dimensions (x, y, z).
    pub max_grid: [u64; 3],
    /// Number of SMs (for choosing grid sizes).
    pub core_count: u32,
}

impl CodegenTarget {
    /// The `.target` name: `sm_90`, or `sm_90a` with accelerated features.
    pub fn target_name(&self) -> String {
        format!("sm_{}{}", self.sm, if self.accelerated { "a" } else { "" })
    }
}

/// A request to generate the kernels of one fused computation.
#[derive(Debug, Clone, Copy)]
pub struct KernelRequest<'a> {
    /// The module that holds the fused computation (and any computations it calls, such as
    /// reducers and sort comparators).
    pub module: &'a HloModule,
    /// The fused computation.
    pub computation: ComputationId,
    /// Base name for the kernels; unique in the executable, a valid PTX identifier.
    pub name: &'a str,
    /// The target.
    pub target: &'a CodegenTarget,
}

/// Grid and block dimensions of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    /// Blocks per grid (x, y, z).
    pub grid: [u32; 3],
    /// Threads per block (x, y, z).
    pub block: [u32; 3],
}

/// What a kernel parameter points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelArg {
    /// Input `i`: parameter number `i` of the fused computation.
    Input(usize),
    /// Output leaf `j` of the fused computation's root (0 for an array root).
    Output(usize),
    /// The scratch buffer, from byte `offset` on.
    Scratch {
        /// Byte offset into the scratch buffer.
        offset: u64,
    },
}

/// One generated kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct EmittedKernel {
    /// The `.entry` name (unique in the executable).
    pub name: String,
    /// A complete PTX module (`.version`, `.target`, `.address_size 64`) holding the kernel.
    pub ptx: String,
    /// Launch dimensions, within the target's limits.
    pub launch: LaunchDims,
    /// Dynamic shared memory, in bytes.
    pub dynamic_shared_bytes: u32,
    /// Kernel parameters, in order.
    pub args: Vec<KernelArg>,
    /// Per parameter (parallel to `args`): whether the kernel writes through it.
    pub written: Vec<bool>,
}

/// The kernels of one fused computation, run in order.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelPlan {
    /// Kernels, launched in order.
    pub kernels: Vec<EmittedKernel>,
    /// Bytes of scratch memory the kernels need (0 for none).
    pub scratch_bytes: u64,
}

/// Why a fused computation could not be compiled to kernels.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CodegenError {
    /// An instruction or configuration the code generator does not handle.
    #[error("codegen: {instruction} ({opcode}) in {computation}: {reason}")]
    Unsupported {
        /// Computation name.
        computation: String,
        /// Instruction name.
        instruction: String,
        /// Opcode name.
        opcode: String,
        /// Why.
        reason: String,
    },
    /// The request itself is malformed (bad computation id, nested tuple root, ...).
    #[error("codegen: invalid request: {0}")]
    Invalid(String),
}

/// Generates the kernels of one fused computation.
pub fn emit_kernels(request: &KernelRequest<'_>) -> Result<KernelPlan, CodegenError> {
    let computation = request
        .module
        .get(request.computation)
        .ok_or_else(|| CodegenError::Invalid(format!("no computation {:?}", request.computation)))?;
    Err(CodegenError::Unsupported {
        computation: computation.name.clone(),
        instruction: String::new(),
        opcode: String::new(),
        reason: "no kernel emitter is implemented yet".into(),
    })
}
