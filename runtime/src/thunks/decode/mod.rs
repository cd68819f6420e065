//! `ThunkProto` → [`Thunk`], validating every field against the executable's allocations, the
//! device's limits, the registry and the flags. Each error names the field path
//! (`thunks[2].kernel_thunk.args[1].buffer_allocation_index`), the bad value and the bound.
//!
//! This module holds the context, the per-thunk checks common to every kind (depth, stream id,
//! thunk id) and the dispatch table on the kind; each kind is decoded in a module of its own
//! (`copy`, `control`, `kernel`, `gemm`, `fft`, `device_id`, `memset`, `custom_call`,
//! `collective`), so one kind's checks can be read in one place.
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use proto::xla::buffer_assignment::BufferAllocationSliceProto;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::ReductionKindProto;
use proto::xla::gpu::{
    matrix_layout_proto, AllGatherStartThunkProto, AllReduceStartThunkProto,
    AllToAllStartThunkProto, CollectiveBufferProto, CollectiveConfigProto,
    CollectivePermuteStartThunkProto, ConditionalThunkProto, CopyThunkProto, CustomCallThunkProto,
    CustomKernelProto, CustomKernelThunkProto, Dim3DProto, FftThunkProto, GemmConfigProto,
    GemmThunkProto, KernelThunkProto, LaunchDimensionsProto, MatrixLayoutProto,
    Memset32BitValueThunkProto, Memset8BitValueThunkProto, MemzeroThunkProto,
    PartitionIdThunkProto, ReduceScatterThunkProto, ReplicaIdThunkProto, SequentialThunkProto,
    ShapedSliceProto, ThunkInfoProto, ThunkProto, ThunkSequenceProto, WhileThunkProto,
};
use proto::xla::gpu::{DeviceToDeviceCopyThunkProto, ShapedCopyThunkProto};
use proto::xla::ReplicaGroup;

use super::*;
use crate::device::DeviceDescription;
use crate::error::{check_index, invalid, Cause, Error, Result};
use crate::flags::{PtxCheck, RuntimeFlags};
use crate::registry::Registry;
use std::hash::BuildHasher;

mod collective;
mod control;
mod conv;
mod copy;
mod custom_call;
mod device_id;
mod fft;
mod gemm;
mod kernel;
mod memset;

use gemm::gemm;
use kernel::kernel;
pub use kernel::{KernelContract, ToolkitBound};

static NEXT_KERNEL_MODULE: AtomicU64 = AtomicU64::new(1);

/// The PTX modules of an executable, de-duplicated by text.
#[derive(Debug, Default)]
pub struct KernelTable {
    /// Indices into `modules`, by text length and hash (equal keys are then compared in full).
    by_key: HashMap<(usize, u64), Vec<usize>>,
    /// Every distinct module, in first-use order.
    pub modules: Vec<Arc<KernelModule>>,
}

impl KernelTable {
    /// The module for this PTX text: the one already seen with the same text, else the text
    /// parsed as `check` says (its outline, or the whole grammar) and added.
    fn intern(
        &mut self,
        text: String,
        cubin: Vec<u8>,
        check: PtxCheck,
        path: &str,
    ) -> Result<Arc<KernelModule>> {
        // Keyed by length and a hash of the whole text: lengths alone are equal across many
        // distinct kernels (generated names of the same digit count), and comparing each new
        // text with every earlier one of its length made load quadratic in the kernel count.
        // foldhash with a fixed seed: fast (several GB/s, under the outline parse's cost) and
        // the same in every process.
        let hash = foldhash::fast::FixedState::with_seed(0).hash_one(text.as_bytes());
        let key = (text.len(), hash);
        let same = self
            .by_key
            .get(&key)
            .and_then(|v| v.iter().map(|&i| &self.modules[i]).find(|m| m.text == text));
        if let Some(m) = same {
            if m.cubin != cubin {
                return Err(invalid(format!(
                    "{path}.kernel_binary.cubin differs from the one of an earlier kernel thunk with the same PTX"
                )));
            }
            return Ok(m.clone());
        }
        let outline = match check {
            PtxCheck::Signatures => ptx::outline(&text),
            PtxCheck::Full => ptx::check(&text),
        }
        .map_err(|e| {
            invalid(format!(
                "{path}.kernel_binary.ptx does not parse: line {}:{}: {}",
                e.line, e.column, e.message
            ))
        })?;
        let m = Arc::new(KernelModule {
            id: NEXT_KERNEL_MODULE.fetch_add(1, Ordering::Relaxed),
            text,
            outline,
            cubin,
        });
        self.by_key.entry(key).or_default().push(self.modules.len());
        self.modules.push(m.clone());
        Ok(m)
    }
}

/// What thunks are validated against.
#[derive(Debug)]
pub struct DecodeContext<'a> {
    /// Size of each buffer allocation.
    pub allocation_sizes: &'a [u64],
    /// The device's limits.
    pub device: &'a DeviceDescription,
    /// Bounds (streams, nesting).
    pub flags: &'a RuntimeFlags,
    /// Custom-call targets.
    pub registry: &'a Registry,
    /// Replicas of the executable (bounds replica-group ids).
    pub num_replicas: u64,
    /// Partitions of the executable (bounds partition ids and flattened device ids); 1 unless
    /// the loader sets it.
    pub num_partitions: u64,
    /// Accept the kinds this runtime cannot execute (all-to-all, custom
    /// kernels) instead of refusing them with UNIMPLEMENTED; for conversion tests only.
    pub allow_unimplemented: bool,
    /// The PTX modules seen so far.
    pub kernels: KernelTable,
    /// What each kernel's `.version` and `.target` are held to (none unless set).
    pub contract: KernelContract,
    /// PTX supplied beside the artifact for kernels that carry only a cubin (XLA:GPU's).
    pub kernel_ptx: Option<&'a crate::kernel_ptx::KernelPtx>,
    seen_ids: HashMap<i64, String>,
}

impl<'a> DecodeContext<'a> {
    /// A context with no thunks decoded yet.
    pub fn new(
        allocation_sizes: &'a [u64],
        device: &'a DeviceDescription,
        flags: &'a RuntimeFlags,
        registry: &'a Registry,
        num_replicas: u64,
    ) -> DecodeContext<'a> {
        DecodeContext {
            allocation_sizes,
            device,
            flags,
            registry,
            num_replicas,
            num_partitions: 1,
            allow_unimplemented: false,
            kernels: KernelTable::default(),
            contract: KernelContract::default(),
            kernel_ptx: None,
            seen_ids: HashMap::new(),
        }
    }
}

/// Decodes and validates a sequence; `path` names the repeated field (`thunks`).
/// Large payloads (kernel PTX text) are moved out of `thunks` rather than copied.
pub fn decode_sequence(
    ctx: &mut DecodeContext<'_>,
    thunks: &mut [ThunkProto],
    path: &str,
) -> Result<Vec<Thunk>> {
    seq(ctx, thunks, path, 1)
}

fn seq(
    ctx: &mut DecodeContext<'_>,
    thunks: &mut [ThunkProto],
    path: &str,
    depth: usize,
) -> Result<Vec<Thunk>> {
    let mut out = Vec::with_capacity(thunks.len());
    for (i, t) in thunks.iter_mut().enumerate() {
        out.push(thunk(ctx, t, &format!("{path}[{i}]"), depth)?);
    }
    Ok(out)
}

/// [`decode_sequence`] over the encodings of the sequence's thunks (`thunks[i]` is the `i`-th
/// occurrence of the repeated field): each is decoded, converted and dropped before the next,
/// so only one `ThunkProto` is alive at a time.
pub fn decode_encoded_sequence(
    ctx: &mut DecodeContext<'_>,
    thunks: &[&[u8]],
    path: &str,
) -> Result<Vec<Thunk>> {
    use proto::prost::Message;
    let mut out = Vec::with_capacity(thunks.len());
    for (i, bytes) in thunks.iter().enumerate() {
        let path = format!("{path}[{i}]");
        let mut p = ThunkProto::decode(*bytes).map_err(|e| {
            invalid(format!(
                "the artifact is not a valid GpuExecutableProto: {path}: {}",
                proto::describe_decode_error(&e)
            ))
        })?;
        out.push(thunk(ctx, &mut p, &path, 1).map_err(|e| with_undeclared_kinds(e, bytes))?);
    }
    Ok(out)
}

/// An unknown-kind error with the undeclared `ThunkProto` fields of `bytes` (the encoding of the
/// top-level thunk that failed) filled in: prost dropped them in the decode, and the walk over
/// this one thunk's wire form names them without decoding anything (a caller that reported them
/// decoded the whole artifact again with reflection, many times its size).
#[cold]
fn with_undeclared_kinds(e: Error, bytes: &[u8]) -> Error {
    if !matches!(e.cause(), Some(Cause::UnknownThunkKind { .. })) {
        return e;
    }
    let fields = proto::undeclared_fields(
        bytes,
        &proto::message_descriptor::<ThunkProto>(),
        "xla.gpu.ThunkProto",
    );
    e.with_cause(Cause::UnknownThunkKind { fields })
}

/// Longest value an error message echoes whole, in characters.
const ECHO_LIMIT: usize = 120;

/// `s` as an error message echoes it: whole when short, else its first characters and its
/// length (`… (10000 characters)`), so a hostile 10,000-character name cannot flood a log.
pub(crate) fn elide(s: &str) -> String {
    let n = s.chars().count();
    if n <= ECHO_LIMIT {
        return s.to_owned();
    }
    let head: String = s.chars().take(ECHO_LIMIT / 2).collect();
    format!("{head}… ({n} characters)")
}

fn opt_seq(
    ctx: &mut DecodeContext<'_>,
    s: Option<&mut ThunkSequenceProto>,
    path: &str,
    depth: usize,
) -> Result<Vec<Thunk>> {
    match s {
        Some(s) => seq(ctx, &mut s.thunks, &format!("{path}.thunks"), depth),
        None => Ok(Vec::new()),
    }
}

fn thunk(
    ctx: &mut DecodeContext<'_>,
    p: &mut ThunkProto,
    path: &str,
    depth: usize,
) -> Result<Thunk> {
    if depth > ctx.flags.max_thunk_depth {
        return Err(invalid(format!(
            "{path}: thunk nesting depth {depth} exceeds the limit of {} (RuntimeFlags::max_thunk_depth)",
            ctx.flags.max_thunk_depth
        )));
    }
    // Destructured without `..`: a field added to the schema is a compile error here until the
    // loader decides what it means.
    let ThunkProto { thunk_info, r#impl } = p;
    let ThunkInfoProto {
        profile_annotation,
        thunk_id,
        execution_stream_id,
        concurrent_region_id: _,
    } = thunk_info.clone().unwrap_or_default();
    if execution_stream_id < 0 || execution_stream_id >= ctx.flags.num_streams {
        return Err(invalid(format!(
            "{path}.thunk_info.execution_stream_id is {execution_stream_id}, out of range [0, {}) (RuntimeFlags::num_streams)",
            ctx.flags.num_streams
        )));
    }
    if thunk_id != 0 {
        if let Some(first) = ctx.seen_ids.get(&thunk_id) {
            return Err(invalid(format!(
                "{path}.thunk_info.thunk_id is {thunk_id}, already used by {first}; thunk ids must be unique"
            )));
        }
        ctx.seen_ids.insert(thunk_id, path.to_owned());
    }
    // `concurrent_region_id` (XLA's field 4) is a scheduling hint: thunks of one region may run
    // concurrently, and running them in order on their stream is a correct schedule, so it is
    // not read. (Runtimes before 2026-12-01 read field 4 as the stream id.)
    let info = ThunkInfo {
        profile_annotation,
        thunk_id,
        execution_stream_id,
    };
    let Some(imp) = r#impl else {
        return Err(Error::unimplemented(format!(
            "{path}.impl is not set: the thunk was made by a newer compiler; this runtime does not know that thunk kind"
        ))
        .with_cause(Cause::UnknownThunkKind { fields: Vec::new() }));
    };
    // The dispatch table: one row per `ThunkProto.impl` case, each kind decoded in its module.
    let kind = match imp {
        Impl::SequentialThunk(t) => sequential(ctx, t, path, depth)?,
        Impl::CopyThunk(c) => copy::copy(ctx, c, path)?,
        Impl::DeviceToDeviceCopyThunk(c) => copy::device_to_device(ctx, c, path)?,
        Impl::ConditionalThunk(c) => control::conditional(ctx, c, path, depth)?,
        Impl::WhileThunk(w) => control::while_loop(ctx, w, path, depth)?,
        Impl::KernelThunk(k) => ThunkKind::Kernel(kernel(ctx, k, &format!("{path}.kernel_thunk"))?),
        Impl::CustomKernelThunk(k) => kernel::custom_kernel(ctx, k, path)?,
        Impl::GemmThunk(g) => {
            ThunkKind::Gemm(Box::new(gemm(ctx, g, &format!("{path}.gemm_thunk"))?))
        }
        Impl::ConvolutionThunk(c) => ThunkKind::Convolution(Box::new(conv::conv(
            ctx,
            c,
            &format!("{path}.convolution_thunk"),
        )?)),
        Impl::FftThunk(f) => {
            ThunkKind::Fft(Box::new(fft::fft(ctx, f, &format!("{path}.fft_thunk"))?))
        }
        Impl::ReplicaIdThunk(t) => device_id::replica_id(ctx, t, path)?,
        Impl::PartitionIdThunk(t) => device_id::partition_id(ctx, t, path)?,
        Impl::MemzeroThunk(t) => memset::memzero(ctx, t, path)?,
        Impl::Memset32bitValueThunk(t) => memset::memset32(ctx, t, path)?,
        Impl::Memset8bitValueThunk(t) => memset::memset8(ctx, t, path)?,
        Impl::CustomCallThunk(c) => custom_call::custom_call(ctx, c, path)?,
        Impl::AllGatherStartThunk(t) => collective::all_gather(ctx, t, path)?,
        Impl::AllReduceStartThunk(t) => collective::all_reduce(ctx, t, path)?,
        Impl::ReduceScatterThunk(t) => collective::reduce_scatter(ctx, t, path)?,
        Impl::AllToAllStartThunk(t) => collective::all_to_all(ctx, t, path)?,
        Impl::CollectivePermuteStartThunk(t) => collective::collective_permute(ctx, t, path)?,
    };
    Ok(Thunk { info, kind })
}

fn sequential(
    ctx: &mut DecodeContext<'_>,
    t: &mut SequentialThunkProto,
    path: &str,
    depth: usize,
) -> Result<ThunkKind> {
    let SequentialThunkProto { thunks } = t;
    Ok(ThunkKind::Sequential(seq(
        ctx,
        thunks,
        &format!("{path}.sequential_thunk.thunks"),
        depth + 1,
    )?))
}

/// Refuses a kind this runtime decodes but does not execute (`what`, its oneof case), unless
/// the context accepts such kinds for conversion tests.
fn refuse_unimplemented(ctx: &DecodeContext<'_>, path: &str, what: &str) -> Result<()> {
    if ctx.allow_unimplemented {
        Ok(())
    } else {
        Err(Error::unimplemented(format!(
            "{path}.{what}: this runtime does not execute {what} (not emitted by today's compiler)"
        )))
    }
}

/// A source/destination pair of slice fields and their names (for error paths).
type SlicePair<'a> = (
    Option<&'a BufferAllocationSliceProto>,
    Option<&'a BufferAllocationSliceProto>,
    [&'static str; 2],
);

/// The source and destination slices of a copy thunk or a collective buffer at `path`, validated,
/// and the names of the fields they came from (see [`slice_fields`]).
fn slice_pair(
    ctx: &DecodeContext<'_>,
    path: &str,
    v1_numbers: &str,
    v1: [Option<&BufferAllocationSliceProto>; 2],
    at_1000: [Option<&BufferAllocationSliceProto>; 2],
) -> Result<(Slice, Slice, [&'static str; 2])> {
    let (source, destination, names) = slice_fields(path, v1_numbers, v1, at_1000)?;
    let source = slice(ctx, source, &format!("{path}.{}", names[0]))?;
    let destination = slice(ctx, destination, &format!("{path}.{}", names[1]))?;
    Ok((source, destination, names))
}

/// Which pair of fields carries the source and destination slices of a copy thunk or a
/// collective buffer, both mid-move from their v1 numbers (`v1_numbers`, as the error names
/// them) to 1000/1001: the project pair when either of it is set, else the v1 pair. Both at once
/// would leave the slices ambiguous.
fn slice_fields<'a>(
    path: &str,
    v1_numbers: &str,
    [source_buffer, destination_buffer]: [Option<&'a BufferAllocationSliceProto>; 2],
    [source_at_1000, destination_at_1001]: [Option<&'a BufferAllocationSliceProto>; 2],
) -> Result<SlicePair<'a>> {
    if source_at_1000.is_none() && destination_at_1001.is_none() {
        return Ok(legacy_slice_pair(source_buffer, destination_buffer));
    }
    if source_buffer.is_some() || destination_buffer.is_some() {
        return Err(invalid(format!(
            "{path} sets both source_buffer/destination_buffer ({v1_numbers}) and source_buffer_xyz/destination_buffer_xyz (1000, 1001); an artifact sets one pair"
        )));
    }
    Ok((
        source_at_1000,
        destination_at_1001,
        ["source_buffer_xyz", "destination_buffer_xyz"],
    ))
}

/// Slices at the v1 numbers (a copy's 1 and 2, a collective buffer's 2 and 3), which the
/// compiler writes by default until the stage-2 date of both moves to 1000/1001
/// ([`proto::rollout::COPY_SLICES`], [`proto::rollout::COLLECTIVE_SLICES`]); artifacts written
/// before then carry only these.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_slice_pair<'a>(
    source_buffer: Option<&'a BufferAllocationSliceProto>,
    destination_buffer: Option<&'a BufferAllocationSliceProto>,
) -> SlicePair<'a> {
    (
        source_buffer,
        destination_buffer,
        ["source_buffer", "destination_buffer"],
    )
}

fn nonneg(v: i64, path: &str) -> Result<u64> {
    u64::try_from(v).map_err(|_| invalid(format!("{path} is {v}, must be >= 0")))
}

/// Validates a slice against the allocations.
fn slice(
    ctx: &DecodeContext<'_>,
    p: Option<&BufferAllocationSliceProto>,
    path: &str,
) -> Result<Slice> {
    let p = p.ok_or_else(|| invalid(format!("{path} is not set")))?;
    let allocation = check_index(
        format_args!("{path}.buffer_allocation_index"),
        p.buffer_allocation_index,
        ctx.allocation_sizes.len(),
        "",
    )?;
    let offset = nonneg(p.offset, &format!("{path}.offset"))?;
    let size = nonneg(p.size, &format!("{path}.size"))?;
    let alloc_size = ctx.allocation_sizes.get(allocation).copied().unwrap_or(0);
    match offset.checked_add(size) {
        Some(end) if end <= alloc_size => Ok(Slice { allocation, offset, size }),
        _ => Err(invalid(format!(
            "{path}: offset {offset} + size {size} exceeds the size {alloc_size} of buffer_allocations[{allocation}]"
        ))),
    }
}

fn shaped(
    ctx: &DecodeContext<'_>,
    p: Option<&ShapedSliceProto>,
    path: &str,
) -> Result<ShapedSlice> {
    let p = p.ok_or_else(|| invalid(format!("{path} is not set")))?;
    Ok(ShapedSlice {
        slice: slice(ctx, p.slice.as_ref(), &format!("{path}.slice"))?,
        shape: p.shape.clone(),
    })
}

pub(crate) fn type_name(v: i32) -> String {
    proto::xla::PrimitiveType::try_from(v)
        .map(|t| t.as_str_name().to_owned())
        .unwrap_or_else(|_| v.to_string())
}

#[cfg(test)]
mod kernel_table_tests {
    use super::*;

    fn ptx(name: &str) -> String {
        format!(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry {name}()\n{{\n  ret;\n}}\n")
    }

    /// The same text gives the same module; texts of equal length (names of the same digit
    /// count) stay distinct modules; a cubin that differs for the same text is refused.
    #[test]
    fn equal_texts_share_a_module_and_equal_lengths_do_not() -> Result<()> {
        let mut t = KernelTable::default();
        let a = t.intern(ptx("k_101"), Vec::new(), PtxCheck::Signatures, "a")?;
        let b = t.intern(ptx("k_102"), Vec::new(), PtxCheck::Signatures, "b")?;
        let a2 = t.intern(ptx("k_101"), Vec::new(), PtxCheck::Signatures, "c")?;
        assert!(Arc::ptr_eq(&a, &a2));
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(t.modules.len(), 2);
        let err = t.intern(ptx("k_102"), vec![1], PtxCheck::Signatures, "d");
        assert_eq!(
            err.err().map(|e| e.to_string()),
            Some(
                invalid("d.kernel_binary.cubin differs from the one of an earlier kernel thunk with the same PTX")
                    .to_string()
            )
        );
        Ok(())
    }
}
