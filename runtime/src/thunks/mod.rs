//! In-memory thunks: what the runtime executes, decoded and validated from the artifact's
//! `ThunkProto`s (`decode`) and convertible back ([`encode`]). They hold no compiler or HLO
//! types: slices, launch parameters, parsed PTX and resolved registry handlers only.
//!
//! [`ThunkKind::CommandBuffer`] exists only in memory: the load-time pass builds it; encoding
//! inlines its commands into the enclosing sequence, so it is never serialized.
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use proto::xla::ShapeProto;

use crate::registry::Registration;

mod conv;
mod decode;
mod encode;
#[cfg(test)]
mod tests;
mod writes;

pub use conv::{ConvGeometry, ConvKind, ConvSpatial, ConvThunk};
pub use decode::{
    decode_encoded_sequence, decode_sequence, DecodeContext, KernelContract, KernelTable,
    ToolkitBound,
};
pub use encode::{encode, encode_sequence};
pub use writes::written_allocations;

/// A contiguous range of one buffer allocation (validated against the allocation's size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Slice {
    /// The allocation's index.
    pub allocation: usize,
    /// Byte offset inside the allocation.
    pub offset: u64,
    /// Byte size.
    pub size: u64,
}

impl Slice {
    /// Whether two slices share a byte.
    pub fn overlaps(&self, other: &Slice) -> bool {
        self.allocation == other.allocation
            && self.offset < other.offset.saturating_add(other.size)
            && other.offset < self.offset.saturating_add(self.size)
            && self.size > 0
            && other.size > 0
    }
}

/// A slice and the shape of the array stored in it (the shape kept as the artifact wrote it).
#[derive(Debug, Clone, PartialEq)]
pub struct ShapedSlice {
    /// Where the array's bytes are: all that execution uses (`shape` is carried, not read).
    pub slice: Slice,
    /// The array's shape, when the artifact gave one.
    pub shape: Option<ShapeProto>,
}

/// What every thunk carries besides its kind.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ThunkInfo {
    /// Name for profilers.
    pub profile_annotation: String,
    /// Unique id in the executable.
    pub thunk_id: i64,
    /// The stream it runs on (0 = main stream).
    pub execution_stream_id: i64,
}

/// One executable step.
#[derive(Debug, Clone)]
pub struct Thunk {
    /// Annotation, id and stream.
    pub info: ThunkInfo,
    /// What it does.
    pub kind: ThunkKind,
}

/// The kinds of thunk, one per `ThunkProto.impl` case plus the in-memory command buffer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ThunkKind {
    /// Runs its thunks in order.
    Sequential(Vec<Thunk>),
    /// Device-to-device copy.
    Copy {
        /// Source slice.
        source: Slice,
        /// Destination slice.
        destination: Slice,
        /// Bytes copied.
        size: u64,
    },
    /// Runs one branch chosen by a selector in device memory.
    Conditional(Box<ConditionalThunk>),
    /// A loop.
    While(WhileThunk),
    /// A PTX kernel launch.
    Kernel(KernelThunk),
    /// A matrix multiplication.
    Gemm(Box<GemmThunk>),
    /// A Fourier transform (cuFFT in XLA:GPU).
    Fft(Box<FftThunk>),
    /// A convolution (cuDNN in XLA:GPU).
    Convolution(Box<ConvThunk>),
    /// Writes the replica id (u32).
    ReplicaId(Slice),
    /// Writes the partition id (u32).
    PartitionId(Slice),
    /// Zeroes a slice.
    Memzero(ShapedSlice),
    /// Fills a slice with a u32.
    Memset32 {
        /// The bytes filled; its size is a multiple of 4 (checked at load).
        destination: Slice,
        /// Written to every 4-byte word, little-endian.
        value: u32,
    },
    /// Fills every byte of a slice (any size) with one byte.
    Memset8 {
        /// The bytes filled.
        destination: Slice,
        /// The byte.
        value: u8,
    },
    /// A call into a registered handler.
    CustomCall(Box<CustomCallThunk>),
    /// A kernel from the runtime's own library (refused at load: not emitted today).
    CustomKernel(CustomKernelThunk),
    /// A collective operation across devices (replicas and partitions).
    Collective(CollectiveThunk),
    /// In memory only: consecutive kernel / copy / memset / gemm thunks recorded once and
    /// replayed.
    CommandBuffer(CommandBufferThunk),
}

impl ThunkKind {
    /// The schema's name of the kind (`kernel_thunk`, ...; `command_buffer` for the in-memory
    /// kind).
    pub fn name(&self) -> &'static str {
        match self {
            ThunkKind::Sequential(_) => "sequential_thunk",
            ThunkKind::Copy { .. } => "copy_thunk",
            ThunkKind::Conditional(_) => "conditional_thunk",
            ThunkKind::While(_) => "while_thunk",
            ThunkKind::Kernel(_) => "kernel_thunk",
            ThunkKind::Gemm(_) => "gemm_thunk",
            ThunkKind::Fft(_) => "fft_thunk",
            ThunkKind::Convolution(_) => "convolution_thunk",
            ThunkKind::ReplicaId(_) => "replica_id_thunk",
            ThunkKind::PartitionId(_) => "partition_id_thunk",
            ThunkKind::Memzero(_) => "memzero_thunk",
            ThunkKind::Memset32 { .. } => "memset32bit_value_thunk",
            ThunkKind::Memset8 { .. } => "memset8bit_value_thunk",
            ThunkKind::CustomCall(_) => "custom_call_thunk",
            ThunkKind::CustomKernel(_) => "custom_kernel_thunk",
            ThunkKind::Collective(c) => c.op.proto_name(),
            ThunkKind::CommandBuffer(_) => "command_buffer",
        }
    }
}

/// Which transform an [`FftThunk`] computes (`xla.FftType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FftKind {
    /// Forward complex-to-complex.
    Fft,
    /// Inverse complex-to-complex, scaled by `1/N`.
    Ifft,
    /// Forward real-to-complex: `N/2+1` outputs along the last dimension.
    Rfft,
    /// Inverse complex-to-real: `N/2+1` inputs along the last dimension, `N` outputs.
    Irfft,
}

impl FftKind {
    /// The `xla.FftType` name.
    pub fn name(self) -> &'static str {
        match self {
            FftKind::Fft => "FFT",
            FftKind::Ifft => "IFFT",
            FftKind::Rfft => "RFFT",
            FftKind::Irfft => "IRFFT",
        }
    }
}

/// `fft_thunk` (docs/artifact.md "Fft"): the transform over the trailing `lengths.len()`
/// dimensions of every one of `batch` row-major arrays, validated at load against the shapes
/// and the slices' sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct FftThunk {
    /// The transform.
    pub kind: FftKind,
    /// `fft_length`: 1 to 3 positive lengths, the transformed dimensions' (logical) sizes.
    pub lengths: Vec<u64>,
    /// Product of the input's leading (untransformed) dimensions.
    pub batch: u64,
    /// c128 / f64 rather than c64 / f32.
    pub double: bool,
    /// The input's bytes.
    pub input: Slice,
    /// The output's bytes.
    pub output: Slice,
    /// The shapes as the artifact wrote them (re-encoded unchanged).
    pub input_shape: ShapeProto,
    /// See `input_shape`.
    pub output_shape: ShapeProto,
}

/// `conditional_thunk`.
#[derive(Debug, Clone)]
pub struct ConditionalThunk {
    /// Where the selector lives.
    pub selector: ShapedSlice,
    /// At least one (exactly two for a pred selector; checked at load). An s32 selector out of
    /// range runs the last branch.
    pub branches: Vec<Vec<Thunk>>,
    /// Pred selector (true runs branch 0) rather than an s32 index.
    pub selector_is_bool: bool,
}

/// `while_thunk`.
#[derive(Debug, Clone)]
pub struct WhileThunk {
    /// The pred the condition writes.
    pub condition_result: Slice,
    /// Runs before every iteration, the first included; the loop ends when it leaves 0 in
    /// `condition_result`.
    pub condition: Vec<Thunk>,
    /// Runs after each true condition; more than `RuntimeFlags::max_while_iterations`
    /// iterations fail the execution.
    pub body: Vec<Thunk>,
    /// The compiler's trip-count hint.
    pub trip_count: Option<i64>,
}

/// A parsed PTX module shared by the kernel thunks that embed the same text.
#[derive(Debug)]
pub struct KernelModule {
    /// Unique id (process-wide) under which devices cache their loaded form.
    pub id: u64,
    /// The PTX text.
    pub text: String,
    /// Its header and function signatures (the bodies are compiled by the device: the driver's
    /// JIT on CUDA, the emulator's translation at first launch).
    pub outline: ptx::Outline,
    /// The cubin `ptxas` made of the text for the device's SM, when the compiler embedded one
    /// (checked at load); the CUDA device loads it instead of JIT-compiling the PTX.
    pub cubin: Vec<u8>,
}

/// `kernel_thunk`.
#[derive(Debug, Clone)]
pub struct KernelThunk {
    /// Arguments: kernel parameter j is the device address of `args[j]`.
    pub args: Vec<Slice>,
    /// Whether the kernel writes each argument.
    pub written: Vec<bool>,
    /// The `.entry` launched.
    pub kernel_name: String,
    /// Grid (block counts).
    pub grid: [u32; 3],
    /// Block (threads per block).
    pub block: [u32; 3],
    /// Dynamic shared memory bytes.
    pub shmem_bytes: u32,
    /// Argument shapes (informational).
    pub args_shape: Vec<ShapeProto>,
    /// The PTX.
    pub module: Arc<KernelModule>,
}

/// Storage order of a gemm operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// A row's elements are adjacent; `leading_dim_stride` steps from one row to the next.
    RowMajor,
    /// A column's elements are adjacent; `leading_dim_stride` steps from one column to the next.
    ColumnMajor,
}

/// The element type a gemm or collective thunk reads and writes (validated at load): the
/// evaluator's and io files' [`hlo::DType`], so the runtime has no element-type enum of
/// its own.
pub type ElemType = hlo::DType;

/// What the runtime needs of an [`ElemType`] beyond `hlo`: its byte width and its wire value
/// (the proto mapping is `hlo::convert`'s, the one table of it).
pub trait ElemTypeExt: Sized {
    /// Bytes per element.
    fn size(self) -> u64;
    /// From the proto enum value; `None` for a value without host values or unknown.
    fn from_proto(v: i32) -> Option<Self>;
    /// To the proto enum value.
    fn to_proto(self) -> i32;
}

impl ElemTypeExt for ElemType {
    fn size(self) -> u64 {
        // The width of the PrimitiveType it is: gemm and collectives ask per element.
        u64::from(self.bit_width() / 8)
    }

    fn from_proto(v: i32) -> Option<ElemType> {
        let p = proto::xla::PrimitiveType::try_from(v).ok()?;
        ElemType::from_primitive(hlo::element_type_from_proto(p)?)
    }

    fn to_proto(self) -> i32 {
        // Every DType has a proto value: the table covers every PrimitiveType with host values.
        hlo::element_type_to_proto(self.primitive())
            .map_or(proto::xla::PrimitiveType::Invalid as i32, |p| p as i32)
    }
}

/// One gemm operand as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatrixLayout {
    /// Storage order.
    pub order: Order,
    /// Rows as stored.
    pub num_rows: u64,
    /// Columns as stored.
    pub num_cols: u64,
    /// Batches.
    pub batch_size: u64,
    /// Elements between consecutive rows (row-major) or columns (column-major).
    pub leading_dim_stride: u64,
    /// Elements between consecutive batches.
    pub batch_stride: u64,
    /// `op(X) = X^T`.
    pub transpose: bool,
    /// Element type.
    pub dtype: ElemType,
}

impl MatrixLayout {
    /// A `batch` of `rows` x `cols` matrices stored without gaps: the leading stride is one row
    /// (row-major) or column (column-major), and each batch follows the previous one.
    pub fn packed(
        order: Order,
        rows: u64,
        cols: u64,
        batch: u64,
        transpose: bool,
        dtype: ElemType,
    ) -> MatrixLayout {
        let leading_dim_stride = match order {
            Order::RowMajor => cols,
            Order::ColumnMajor => rows,
        };
        MatrixLayout {
            order,
            num_rows: rows,
            num_cols: cols,
            batch_size: batch,
            leading_dim_stride,
            batch_stride: rows * cols,
            transpose,
            dtype,
        }
    }

    /// Element offset of stored element `(r, c)` of batch `b`.
    pub fn offset(&self, b: u64, r: u64, c: u64) -> u64 {
        match self.order {
            Order::RowMajor => b * self.batch_stride + r * self.leading_dim_stride + c,
            Order::ColumnMajor => b * self.batch_stride + c * self.leading_dim_stride + r,
        }
    }

    /// Rows and columns of `op(X)`.
    pub fn op_dims(&self) -> (u64, u64) {
        if self.transpose {
            (self.num_cols, self.num_rows)
        } else {
            (self.num_rows, self.num_cols)
        }
    }
}

/// The gemm configuration (see docs/artifact.md "Gemm").
#[derive(Debug, Clone, PartialEq)]
pub struct GemmConfig {
    /// Left operand; `op(lhs)` is M x K.
    pub lhs: MatrixLayout,
    /// Right operand; `op(rhs)` is K x N.
    pub rhs: MatrixLayout,
    /// The result's layout; `op(output)` is M x N.
    pub output: MatrixLayout,
    /// Scale of the product.
    pub alpha_real: f64,
    /// Imaginary part of alpha (must be 0: no complex gemm).
    pub alpha_imag: f64,
    /// Scale of the old output.
    pub beta: f64,
    /// Accumulation type.
    pub compute_type: ElemType,
    /// Operand precisions (proto enum values, informational).
    pub operand_precisions: Vec<i32>,
    /// Rows of `op(lhs)` and of the output. M, N, K and `batch` are derived from the layouts at
    /// load, which checks that the three layouts agree on them.
    pub m: u64,
    /// Columns of `op(rhs)` and of the output.
    pub n: u64,
    /// The contracted dimension: columns of `op(lhs)`, rows of `op(rhs)`.
    pub k: u64,
    /// The output's `batch_size`, at least 1 (a `batch_size` of 0 counts as 1).
    pub batch: u64,
}

/// `gemm_thunk`.
#[derive(Debug, Clone)]
pub struct GemmThunk {
    /// Configuration.
    pub config: GemmConfig,
    /// Left operand buffer.
    pub lhs: Slice,
    /// Right operand buffer.
    pub rhs: Slice,
    /// Output buffer.
    pub output: Slice,
    /// Scratch buffer, when given.
    pub workspace: Option<Slice>,
    /// Deterministic algorithm requested.
    pub deterministic: bool,
}

/// `custom_call_thunk`.
#[derive(Debug, Clone)]
pub struct CustomCallThunk {
    /// The name as written in the artifact (possibly a legacy alias).
    pub target_name: String,
    /// Resolved at load from `target_name` (a name or a legacy alias); an unregistered target
    /// fails the load with NOT_FOUND.
    pub handler: Registration,
    /// Operands (`None` = null).
    pub operands: Vec<Option<ShapedSlice>>,
    /// Results (`None` = null).
    pub results: Vec<Option<ShapedSlice>>,
    /// Legacy opaque bytes.
    pub opaque: Vec<u8>,
    /// `CustomCallApiVersion` value.
    pub api_version: i32,
    /// FFI attributes by name, as the artifact wrote them; the handler gets them in its
    /// `CallFrame`.
    pub attributes: BTreeMap<String, String>,
    /// The HLO computation the call names, carried through encoding; no handler is given it.
    pub called_computation: Option<String>,
    /// Each operand's shape as handlers read it, decoded once at load from `operands`.
    pub operand_shapes: Vec<Option<crate::registry::ArrayShape>>,
    /// Each result's shape, likewise from `results`.
    pub result_shapes: Vec<Option<crate::registry::ArrayShape>>,
}

/// `custom_kernel_thunk`.
#[derive(Debug, Clone)]
pub struct CustomKernelThunk {
    /// Arguments, in parameter order.
    pub args: Vec<ShapedSlice>,
    /// Whether the kernel writes each argument, as the artifact gave it (not checked against
    /// `args`: custom kernels are decoded for conversion, never run).
    pub written: Vec<bool>,
    /// Library kernel name.
    pub name: String,
    /// Blocks per dimension (`custom_kernel.block_dims`), each within the device's
    /// `block_dim_limit`.
    pub grid: [u32; 3],
    /// Threads per block per dimension (`custom_kernel.thread_dims`), each within the device's
    /// `thread_dim_limit`.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, at most the device's `shared_memory_per_block_optin`.
    pub shared_memory_bytes: u32,
    /// The device code of `custom_kernel.kernel_spec`.
    pub code: KernelCode,
}

/// The device code a custom kernel carries (`stream_executor.KernelLoaderSpecProto.payload`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelCode {
    /// PTX text.
    Ptx(String),
    /// A cubin (XLA:GPU's form).
    Cubin(Vec<u8>),
    /// The name of a kernel linked into the runtime.
    Symbol(String),
    /// Nothing set.
    None,
}

impl KernelCode {
    /// One line for messages: "only an sm_90a cubin (N bytes), no PTX", "PTX (N bytes)", ...
    pub fn describe(&self) -> String {
        match self {
            KernelCode::Ptx(p) => format!("PTX ({} bytes)", p.len()),
            KernelCode::Cubin(c) => match ptx::ptxas::cubin_arch(c) {
                Ok(arch) => format!(
                    "it carries only an {arch} cubin ({} bytes), no PTX",
                    c.len()
                ),
                Err(e) => format!("its cubin ({} bytes) is not a CUDA ELF: {e}", c.len()),
            },
            KernelCode::Symbol(s) => format!("an in-process symbol `{s}`, no device code"),
            KernelCode::None => "no kernel_spec payload".into(),
        }
    }
}

/// A reduction of a collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReductionKind {
    /// Sum.
    Sum,
    /// Product.
    Product,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}

/// Which collective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollectiveOp {
    /// `all_gather_start_thunk`.
    AllGather,
    /// `all_reduce_start_thunk`.
    AllReduce(ReductionKind),
    /// `reduce_scatter_thunk`.
    ReduceScatter(ReductionKind),
    /// `all_to_all_start_thunk` (refused at load).
    AllToAll {
        /// `has_split_dimension`.
        has_split_dimension: bool,
    },
    /// `collective_permute_start_thunk`: each device receives its pair's source's buffer, or
    /// zeros when no pair targets it.
    CollectivePermute {
        /// (source, target) pairs of replica ids (cross-replica mode) or partition ids
        /// (cross-partition mode); no id is a source twice or a target twice (checked at load).
        source_target_pairs: Vec<(i64, i64)>,
    },
}

impl CollectiveOp {
    /// The schema name of the thunk kind.
    pub fn proto_name(&self) -> &'static str {
        match self {
            CollectiveOp::AllGather => "all_gather_start_thunk",
            CollectiveOp::AllReduce(_) => "all_reduce_start_thunk",
            CollectiveOp::ReduceScatter(_) => "reduce_scatter_thunk",
            CollectiveOp::AllToAll { .. } => "all_to_all_start_thunk",
            CollectiveOp::CollectivePermute { .. } => "collective_permute_start_thunk",
        }
    }
}

/// One buffer of a collective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectiveBuffer {
    /// Elements each participant contributes.
    pub element_count: u64,
    /// Source slice.
    pub source: Slice,
    /// Destination slice.
    pub destination: Slice,
    /// Memory space of the source (informational).
    pub source_memory_space: i64,
    /// Memory space of the destination (informational).
    pub destination_memory_space: i64,
}

/// `CollectiveConfigProto`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectiveConfig {
    /// Element type per buffer.
    pub element_types: Vec<ElemType>,
    /// Replica groups, in the id space of the group mode (`crate::groups`; empty = one group
    /// of every id).
    pub replica_groups: Vec<Vec<i64>>,
    /// `CollectiveOpGroupModeProto` value.
    pub group_mode: i32,
    /// The channel id (`op_id_xyz`, number 1000, when set, else the v1 `op_id`, number 4);
    /// carried through encoding, not used to execute.
    pub op_id: i64,
    /// Symmetric-buffer hint, carried through encoding, not read to execute.
    pub use_symmetric_buffer: bool,
}

/// A collective across replicas: one of the `*_start_thunk` cases or `reduce_scatter_thunk`
/// (`op` says which, [`CollectiveOp::proto_name`] its schema name).
#[derive(Debug, Clone)]
pub struct CollectiveThunk {
    /// Which operation.
    pub op: CollectiveOp,
    /// Types and groups.
    pub config: CollectiveConfig,
    /// One per operand, parallel to `config.element_types` (checked at load).
    pub buffers: Vec<CollectiveBuffer>,
}

/// In-memory only: a group of consecutive kernel / copy / memset / memzero / gemm thunks of one
/// stream, recorded into a command list on first execution and replayed afterwards.
#[derive(Debug)]
pub struct CommandBufferThunk {
    /// The grouped thunks, in order.
    pub commands: Vec<Thunk>,
    /// How many times the buffer was recorded (1 after the first execution).
    pub recordings: Mutex<u64>,
    /// How many times it was replayed.
    pub replays: Mutex<u64>,
}

impl Clone for CommandBufferThunk {
    fn clone(&self) -> Self {
        CommandBufferThunk {
            commands: self.commands.clone(),
            recordings: Mutex::new(0),
            replays: Mutex::new(0),
        }
    }
}

/// Visits every thunk of a sequence, depth first, nested sequences included.
pub fn walk<'a>(thunks: &'a [Thunk], f: &mut dyn FnMut(&'a Thunk, usize)) {
    fn go<'a>(thunks: &'a [Thunk], depth: usize, f: &mut dyn FnMut(&'a Thunk, usize)) {
        for t in thunks {
            f(t, depth);
            match &t.kind {
                ThunkKind::Sequential(v) => go(v, depth + 1, f),
                ThunkKind::Conditional(c) => {
                    for b in &c.branches {
                        go(b, depth + 1, f);
                    }
                }
                ThunkKind::While(w) => {
                    go(&w.condition, depth + 1, f);
                    go(&w.body, depth + 1, f);
                }
                ThunkKind::CommandBuffer(cb) => go(&cb.commands, depth + 1, f),
                _ => {}
            }
        }
    }
    go(thunks, 0, f)
}
