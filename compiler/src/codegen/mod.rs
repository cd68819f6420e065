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
use hlo::InstrId;
use hlo::{ComputationId, HloModule, Opcode};
use kernels::KernelSite;

pub mod builder;
pub mod complex;
mod complex_div;
mod complex_math;
pub mod convolution;
pub mod elemental;
pub mod fill;
mod float8;
mod fold_copies;
pub mod gemm;
pub mod kernels;
pub mod math;
pub mod row;
pub mod scalar;

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
    /// SM, PTX version and launch limits the kernels are generated for.
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
    /// Outputs written by a memset before the kernels run (a scatter's constant operand, a
    /// broadcast constant): see the `fill` module.
    pub fills: Vec<fill::OutputFill>,
}

/// Why a fused computation could not be compiled to kernels.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CodegenError {
    /// An instruction or configuration the code generator does not handle.
    // Said once, with where: the fused computation is the compiler's own (named after its root),
    // so the message leads with the instruction and its line:column in the input module.
    #[error("{instruction} ({opcode}) at {loc}: {reason}")]
    Unsupported {
        /// Computation name (the fused computation the instruction was copied into).
        computation: String,
        /// Instruction name.
        instruction: String,
        /// Where the instruction is in the input module (`line:column`).
        loc: hlo::SourceLoc,
        /// The opcode as HLO text spells it (`get-tuple-element`).
        opcode: String,
        /// Why.
        reason: String,
    },
    /// The request itself is malformed (bad computation id, nested tuple root, ...).
    #[error("codegen: invalid request: {0}")]
    Invalid(String),
    /// An expression nests deeper than the emitter follows (an inlined reducer or map body
    /// whose operand chain is longer than `elemental::MAX_EXPRESSION_DEPTH`).
    #[error("{instruction} in {computation}: the expression nests deeper than {limit} operands (codegen::elemental::MAX_EXPRESSION_DEPTH)")]
    TooDeep {
        /// Computation name.
        computation: String,
        /// The instruction at which the limit was reached.
        instruction: String,
        /// `elemental::MAX_EXPRESSION_DEPTH`, the deepest operand chain followed.
        limit: usize,
    },
}

/// Leaves of one loop kernel: their dimensions and `(instruction, output leaf)` pairs.
type LoopGroup = (Vec<i64>, Vec<(InstrId, usize)>);

/// Generates the kernels of one fused computation.
///
/// A small f32 dot with its elementwise epilogue becomes one gemm kernel (`gemm`); a row
/// fusion (reductions along trailing dimensions with their elementwise consumers, see `row`)
/// becomes one row kernel. Otherwise the root decides the kernel shape: `reduce` → a
/// reduction kernel, `sort` → a sort kernel,
/// `scatter` → a scatter kernel, anything else → a loop kernel. A tuple root is split into one
/// loop kernel per group of equally-shaped non-reduction leaves plus one reduction kernel per
/// reduction leaf; kernel `k > 0` of a plan is named `{name}_{k}`.
pub fn emit_kernels(request: &KernelRequest<'_>) -> Result<KernelPlan, CodegenError> {
    let computation = request.module.get(request.computation).ok_or_else(|| {
        CodegenError::Invalid(format!("no computation {:?}", request.computation))
    })?;
    let root = computation.root_instruction().ok_or_else(|| {
        CodegenError::Invalid(format!("computation {} is empty", computation.name))
    })?;
    let rid = computation.root;
    // A small dot with its elementwise epilogue: one gemm kernel (see `gemm.rs`).
    if let Some((dot, m, k, n)) = gemm::detect(computation) {
        let site = KernelSite::new(request, computation, request.name, dot);
        return Ok(KernelPlan {
            kernels: vec![gemm::gemm_kernel(site, (m, k, n))?],
            scratch_bytes: 0,
            fills: Vec::new(),
        });
    }
    // Reductions fused with their consumers: one row kernel (see `row.rs`).
    if let Some(rows) = row::detect(computation) {
        return Ok(KernelPlan {
            kernels: vec![row::row_kernel(request, computation, request.name, &rows)?],
            scratch_bytes: 0,
            fills: Vec::new(),
        });
    }
    // A broadcast constant: a memset, no kernel. Byte-sized elements are left to
    // `CompileOptions::emit_memset8`'s rollout (a kernel while it is off).
    if let Some(word) = fill::fill_word(computation, rid) {
        if root.shape.element_type().is_some_and(|t| t.byte_size() > 1) {
            return Ok(KernelPlan {
                kernels: Vec::new(),
                scratch_bytes: 0,
                fills: vec![fill::OutputFill { output: 0, word }],
            });
        }
    }
    let mut names = (0u32..).map(|k| {
        if k == 0 {
            request.name.to_string()
        } else {
            format!("{}_{k}", request.name)
        }
    });
    let mut next = || names.next().unwrap_or_default();
    // A plan of one kernel names it with the base name (what `next` gives first).
    let root_site = KernelSite::new(request, computation, request.name, rid);
    let mut fills = Vec::new();
    let kernels = match root.opcode {
        Opcode::Sort => vec![kernels::sort_kernel(root_site)?],
        Opcode::Scatter => {
            let (kernels, f) = kernels::scatter_kernel(root_site)?;
            fills = f;
            kernels
        }
        Opcode::TopK => vec![kernels::topk_kernel(root_site)?],
        Opcode::SelectAndScatter => vec![kernels::select_and_scatter_kernel(root_site)?],
        Opcode::Reduce => {
            let n = root.operands.len() / 2;
            let outs: Vec<(usize, usize)> = (0..n).map(|k| (k, k)).collect();
            vec![kernels::reduction_kernel(root_site, &outs)?]
        }
        Opcode::Tuple => {
            let mut out = Vec::new();
            let mut groups: Vec<LoopGroup> = Vec::new();
            let mut reductions: Vec<(InstrId, Vec<(usize, usize)>)> = Vec::new();
            for (j, &leaf) in root.operands.iter().enumerate() {
                let instr = computation
                    .get(leaf)
                    .ok_or_else(|| CodegenError::Invalid(format!("bad root operand {leaf:?}")))?;
                if !instr.shape.is_array() {
                    return Err(elemental::unsupported(
                        computation,
                        instr,
                        "nested tuples in the root are not supported",
                    ));
                }
                // A reduction leaf: the reduce itself, or an element of a variadic reduce.
                let red = match instr.opcode {
                    Opcode::Reduce => Some((leaf, 0usize)),
                    Opcode::GetTupleElement => instr.operands.first().and_then(|&o| {
                        let src = computation.get(o)?;
                        (src.opcode == Opcode::Reduce)
                            .then(|| (o, instr.attrs.tuple_index.unwrap_or(0).max(0) as usize))
                    }),
                    Opcode::Sort | Opcode::Scatter | Opcode::TopK | Opcode::SelectAndScatter => {
                        return Err(elemental::unsupported(
                            computation,
                            instr,
                            "sort, scatter, topk and select-and-scatter must be the root of \
                             their fusion",
                        ))
                    }
                    _ => None,
                };
                if let Some((rid, comp_k)) = red {
                    match reductions.iter_mut().find(|(r, _)| *r == rid) {
                        Some((_, outs)) => outs.push((comp_k, j)),
                        None => reductions.push((rid, vec![(comp_k, j)])),
                    }
                    continue;
                }
                let dims = instr.shape.dims().to_vec();
                match groups.iter_mut().find(|(d, _)| *d == dims) {
                    Some((_, g)) => g.push((leaf, j)),
                    None => groups.push((dims, vec![(leaf, j)])),
                }
            }
            for (_, g) in &groups {
                out.push(kernels::loop_kernel(request, computation, &next(), g)?);
            }
            for (rid, outs) in &reductions {
                let name = next();
                let site = KernelSite::new(request, computation, &name, *rid);
                out.push(kernels::reduction_kernel(site, outs)?);
            }
            out
        }
        _ => {
            if !root.shape.is_array() {
                // Every opcode with a tuple-shaped kernel root is matched above, so the
                // instruction itself is what is not supported (not its shape).
                return Err(elemental::unsupported(
                    computation,
                    root,
                    format!(
                        "{} is not supported by the GPU code generator",
                        root.opcode.name()
                    ),
                ));
            }
            vec![kernels::loop_kernel(
                request,
                computation,
                &next(),
                &[(rid, 0)],
            )?]
        }
    };
    Ok(KernelPlan {
        kernels,
        scratch_bytes: 0,
        fills,
    })
}
