//! `ThunkProto` → [`Thunk`], validating every field against the executable's allocations, the
//! device's limits, the registry and the flags. Each error names the field path
//! (`thunks[2].kernel_thunk.args[1].buffer_allocation_index`), the bad value and the bound.
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use proto::xla::buffer_assignment::BufferAllocationSliceProto;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::{
    matrix_layout_proto, CollectiveBufferProto, CollectiveConfigProto, CopyThunkProto, Dim3DProto,
    KernelThunkProto, LaunchDimensionsProto, MatrixLayoutProto, ShapedSliceProto, ThunkInfoProto,
    ThunkProto, ThunkSequenceProto, WhileThunkProto,
};
use proto::xla::gpu::{CollectiveOpGroupModeProto, ReductionKindProto};

use super::*;
use crate::device::DeviceDescription;
use crate::error::{check_index, invalid, Error, Result};
use crate::flags::{PtxCheck, RuntimeFlags};
use crate::registry::Registry;
use std::hash::BuildHasher;

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
    /// Accept the kinds this runtime cannot execute (all-to-all, collective-permute, custom
    /// kernels) instead of refusing them with UNIMPLEMENTED; for conversion tests only.
    pub allow_unimplemented: bool,
    /// The PTX modules seen so far.
    pub kernels: KernelTable,
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
            allow_unimplemented: false,
            kernels: KernelTable::default(),
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
        out.push(thunk(ctx, &mut p, &path, 1)?);
    }
    Ok(out)
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
        )));
    };
    let unimpl = |ctx: &DecodeContext<'_>, what: &str| -> Result<()> {
        if ctx.allow_unimplemented {
            Ok(())
        } else {
            Err(Error::unimplemented(format!(
                "{path}.{what}: this runtime does not execute {what} (not emitted by today's compiler)"
            )))
        }
    };
    let kind = match imp {
        Impl::SequentialThunk(s) => ThunkKind::Sequential(seq(
            ctx,
            &mut s.thunks,
            &format!("{path}.sequential_thunk.thunks"),
            depth + 1,
        )?),
        Impl::CopyThunk(CopyThunkProto {
            source_buffer,
            destination_buffer,
            mem_size,
            source_buffer_xyz,
            destination_buffer_xyz,
        }) => {
            let p2 = format!("{path}.copy_thunk");
            // Which pair carries the slices: the project numbers (1000, 1001) when either is
            // set, else the v1 numbers (1, 2). Both at once would leave the copy ambiguous.
            let xyz = source_buffer_xyz.is_some() || destination_buffer_xyz.is_some();
            let (source, destination, names) = if xyz {
                if source_buffer.is_some() || destination_buffer.is_some() {
                    return Err(invalid(format!(
                        "{p2} sets both source_buffer/destination_buffer (1, 2) and source_buffer_xyz/destination_buffer_xyz (1000, 1001); an artifact sets one pair"
                    )));
                }
                (
                    source_buffer_xyz.as_ref(),
                    destination_buffer_xyz.as_ref(),
                    ["source_buffer_xyz", "destination_buffer_xyz"],
                )
            } else {
                legacy_copy_slices(source_buffer.as_ref(), destination_buffer.as_ref())
            };
            let source = slice(ctx, source, &format!("{p2}.{}", names[0]))?;
            let destination = slice(ctx, destination, &format!("{p2}.{}", names[1]))?;
            let size = nonneg(*mem_size, &format!("{p2}.mem_size"))?;
            for (s, name) in [(&source, names[0]), (&destination, names[1])] {
                if size > s.size {
                    return Err(invalid(format!(
                        "{p2}.mem_size is {size}, larger than {name}.size {}",
                        s.size
                    )));
                }
            }
            let a = Slice { size, ..source };
            let b = Slice {
                size,
                ..destination
            };
            if a.overlaps(&b) {
                return Err(invalid(format!(
                    "{p2}: source_buffer and destination_buffer overlap in allocation {}",
                    a.allocation
                )));
            }
            ThunkKind::Copy {
                source,
                destination,
                size,
            }
        }
        Impl::ConditionalThunk(c) => {
            let p2 = format!("{path}.conditional_thunk");
            let selector = shaped(
                ctx,
                c.branch_index_buffer.as_ref(),
                &format!("{p2}.branch_index_buffer"),
            )?;
            let need = if c.branch_index_is_bool { 1 } else { 4 };
            if selector.slice.size < need {
                return Err(invalid(format!(
                    "{p2}.branch_index_buffer.slice.size is {}, smaller than the {need} bytes of the {}",
                    selector.slice.size,
                    if c.branch_index_is_bool { "pred selector" } else { "s32 selector" }
                )));
            }
            if c.branch_thunks.is_empty() {
                return Err(invalid(format!(
                    "{p2}.branch_thunks is empty; a conditional needs at least one branch"
                )));
            }
            if c.branch_index_is_bool && c.branch_thunks.len() != 2 {
                return Err(invalid(format!(
                    "{p2}.branch_thunks has {} branches; a pred selector needs exactly 2",
                    c.branch_thunks.len()
                )));
            }
            let mut branches = Vec::with_capacity(c.branch_thunks.len());
            for (i, b) in c.branch_thunks.iter_mut().enumerate() {
                branches.push(seq(
                    ctx,
                    &mut b.thunks,
                    &format!("{p2}.branch_thunks[{i}].thunks"),
                    depth + 1,
                )?);
            }
            ThunkKind::Conditional(Box::new(ConditionalThunk {
                selector,
                branches,
                selector_is_bool: c.branch_index_is_bool,
            }))
        }
        Impl::WhileThunk(WhileThunkProto {
            condition_result_buffer_index,
            condition_thunk_sequence,
            body_thunk_sequence,
            trip_count,
        }) => {
            let p2 = format!("{path}.while_thunk");
            let condition_result = slice(
                ctx,
                condition_result_buffer_index.as_ref(),
                &format!("{p2}.condition_result_buffer_index"),
            )?;
            if condition_result.size < 1 {
                return Err(invalid(format!(
                    "{p2}.condition_result_buffer_index.size is 0, smaller than the 1 byte of a pred"
                )));
            }
            let condition = opt_seq(
                ctx,
                condition_thunk_sequence.as_mut(),
                &format!("{p2}.condition_thunk_sequence"),
                depth + 1,
            )?;
            let body = opt_seq(
                ctx,
                body_thunk_sequence.as_mut(),
                &format!("{p2}.body_thunk_sequence"),
                depth + 1,
            )?;
            ThunkKind::While(WhileThunk {
                condition_result,
                condition,
                body,
                trip_count: *trip_count,
            })
        }
        Impl::KernelThunk(k) => ThunkKind::Kernel(kernel(ctx, k, &format!("{path}.kernel_thunk"))?),
        Impl::GemmThunk(g) => {
            ThunkKind::Gemm(Box::new(gemm(ctx, g, &format!("{path}.gemm_thunk"))?))
        }
        Impl::ReplicaIdThunk(r) => ThunkKind::ReplicaId(id_dest(
            ctx,
            r.dest_buffer.as_ref(),
            &format!("{path}.replica_id_thunk.dest_buffer"),
        )?),
        Impl::PartitionIdThunk(r) => ThunkKind::PartitionId(id_dest(
            ctx,
            r.dest_buffer.as_ref(),
            &format!("{path}.partition_id_thunk.dest_buffer"),
        )?),
        Impl::MemzeroThunk(m) => ThunkKind::Memzero(shaped(
            ctx,
            m.dest_buffer.as_ref(),
            &format!("{path}.memzero_thunk.dest_buffer"),
        )?),
        Impl::Memset32bitValueThunk(m) => {
            let p2 = format!("{path}.memset32bit_value_thunk.dest_buffer");
            let destination = slice(ctx, m.dest_buffer.as_ref(), &p2)?;
            if destination.size % 4 != 0 {
                return Err(invalid(format!(
                    "{p2}.size is {}, not a multiple of 4",
                    destination.size
                )));
            }
            ThunkKind::Memset32 {
                destination,
                value: m.value,
            }
        }
        Impl::Memset8bitValueThunk(m) => {
            let p2 = format!("{path}.memset8bit_value_thunk");
            let destination = slice(ctx, m.dest_buffer.as_ref(), &format!("{p2}.dest_buffer"))?;
            // The wire type is uint32 (as memset32's); only one byte is meaningful, and a larger
            // value would be silently truncated by a device memset: refuse it.
            let value = u8::try_from(m.value)
                .map_err(|_| invalid(format!("{p2}.value is {}, larger than 255", m.value)))?;
            ThunkKind::Memset8 { destination, value }
        }
        Impl::CustomCallThunk(c) => {
            let p2 = format!("{path}.custom_call_thunk");
            let handler = ctx.registry.resolve(&c.target_name).cloned().ok_or_else(|| {
                Error::not_found(format!(
                    "{p2}.target_name \"{}\" is not registered (no custom-call target or FFI handler has that name or legacy alias)",
                    elide(&c.target_name.escape_debug().to_string())
                ))
            })?;
            let nullable = |list: &[proto::xla::gpu::NullableShapedSliceProto],
                            field: &str|
             -> Result<Vec<Option<ShapedSlice>>> {
                list.iter()
                    .enumerate()
                    .map(|(i, n)| match &n.shaped_slice {
                        None => Ok(None),
                        Some(s) => shaped(ctx, Some(s), &format!("{p2}.{field}[{i}].shaped_slice"))
                            .map(Some),
                    })
                    .collect()
            };
            let operands = nullable(&c.operands, "operands")?;
            let results = nullable(&c.results, "results")?;
            ThunkKind::CustomCall(Box::new(CustomCallThunk {
                target_name: c.target_name.clone(),
                handler,
                operands,
                results,
                opaque: c.opaque.clone(),
                api_version: c.api_version,
                attributes: c.attributes.clone(),
                called_computation: c.called_computation.clone(),
            }))
        }
        Impl::CustomKernelThunk(k) => {
            let p2 = format!("{path}.custom_kernel_thunk");
            let ck = k.custom_kernel.clone().unwrap_or_default();
            let code = kernel_code(ck.kernel_spec.as_ref());
            if !ctx.allow_unimplemented {
                // Say what the kernel carries, so a refused XLA:GPU artifact names the reason
                // (the emulated device runs PTX; XLA's kernels carry only a cubin).
                return Err(Error::unimplemented(format!(
                    "{p2}: this runtime does not execute custom-kernel thunks (kernel `{}`: {}); the emulated device runs PTX",
                    ck.name,
                    code.describe()
                )));
            }
            let args = k
                .args
                .iter()
                .enumerate()
                .map(|(i, a)| shaped(ctx, Some(a), &format!("{p2}.args[{i}]")))
                .collect::<Result<Vec<_>>>()?;
            let cd = format!("{p2}.custom_kernel");
            let grid = dims(
                ck.block_dims.as_ref().and_then(|d| d.coordinates.as_ref()),
                &format!("{cd}.block_dims.coordinates"),
                ctx.device.block_dim_limit,
                "block_dim_limit",
            )?;
            let block = dims(
                ck.thread_dims.as_ref().and_then(|d| d.coordinates.as_ref()),
                &format!("{cd}.thread_dims.coordinates"),
                ctx.device.thread_dim_limit,
                "thread_dim_limit",
            )?;
            let shared_memory_bytes = shmem(
                ctx,
                ck.shared_memory_bytes,
                &format!("{cd}.shared_memory_bytes"),
            )?;
            ThunkKind::CustomKernel(CustomKernelThunk {
                args,
                written: k.written.clone(),
                name: ck.name,
                grid,
                block,
                shared_memory_bytes,
                code,
            })
        }
        Impl::AllGatherStartThunk(c) => collective(
            ctx,
            CollectiveOp::AllGather,
            c.collective_config.as_ref(),
            &c.buffers,
            &format!("{path}.all_gather_start_thunk"),
        )?,
        Impl::AllReduceStartThunk(c) => {
            let p2 = format!("{path}.all_reduce_start_thunk");
            let r = reduction(c.reduction_kind, &p2)?;
            collective(
                ctx,
                CollectiveOp::AllReduce(r),
                c.collective_config.as_ref(),
                &c.buffers,
                &p2,
            )?
        }
        Impl::ReduceScatterThunk(c) => {
            let p2 = format!("{path}.reduce_scatter_thunk");
            let r = reduction(c.reduction_kind, &p2)?;
            collective(
                ctx,
                CollectiveOp::ReduceScatter(r),
                c.collective_config.as_ref(),
                &c.buffers,
                &p2,
            )?
        }
        Impl::AllToAllStartThunk(c) => {
            unimpl(ctx, "all_to_all_start_thunk")?;
            collective(
                ctx,
                CollectiveOp::AllToAll {
                    has_split_dimension: c.has_split_dimension,
                },
                c.collective_config.as_ref(),
                &c.buffers,
                &format!("{path}.all_to_all_start_thunk"),
            )?
        }
        Impl::CollectivePermuteStartThunk(c) => {
            unimpl(ctx, "collective_permute_start_thunk")?;
            collective(
                ctx,
                CollectiveOp::CollectivePermute {
                    source_target_pairs: c
                        .source_target_pairs
                        .iter()
                        .map(|p| (p.source, p.target))
                        .collect(),
                },
                c.collective_config.as_ref(),
                &c.buffers,
                &format!("{path}.collective_permute_start_thunk"),
            )?
        }
    };
    Ok(Thunk { info, kind })
}

/// A copy's slices at the v1 numbers 1 and 2, which the compiler writes by default until the
/// stage-2 date of the move to 1000/1001 (2026-12-15); artifacts written before then carry only
/// these.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_copy_slices<'a>(
    source_buffer: Option<&'a BufferAllocationSliceProto>,
    destination_buffer: Option<&'a BufferAllocationSliceProto>,
) -> (
    Option<&'a BufferAllocationSliceProto>,
    Option<&'a BufferAllocationSliceProto>,
    [&'static str; 2],
) {
    (
        source_buffer,
        destination_buffer,
        ["source_buffer", "destination_buffer"],
    )
}

/// A collective's group mode at the v1 number 3, which the compiler writes by default until the
/// stage-2 date of the move to 1001 (2026-12-15); artifacts written before then carry only it.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_group_mode(c: &CollectiveConfigProto) -> (i32, &'static str) {
    (c.group_mode, "group_mode")
}

/// A collective's channel id at the v1 number 4, which the compiler writes by default until the
/// stage-2 date of the move to 1000 (2026-12-15); artifacts written before then carry only it.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_op_id(c: &CollectiveConfigProto) -> i64 {
    c.op_id
}

/// A collective buffer's slices at the v1 numbers 2 and 3, which the compiler writes by default
/// until the stage-2 date of the move to 1000/1001 (2026-12-15); artifacts written before then
/// carry only these.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_collective_slices(
    b: &CollectiveBufferProto,
) -> (
    Option<&BufferAllocationSliceProto>,
    Option<&BufferAllocationSliceProto>,
    [&'static str; 2],
) {
    (
        b.source_buffer.as_ref(),
        b.destination_buffer.as_ref(),
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

fn id_dest(
    ctx: &DecodeContext<'_>,
    p: Option<&BufferAllocationSliceProto>,
    path: &str,
) -> Result<Slice> {
    let s = slice(ctx, p, path)?;
    if s.size < 4 {
        return Err(invalid(format!(
            "{path}.size is {}, smaller than the 4 bytes of a u32 id",
            s.size
        )));
    }
    Ok(s)
}

const AXES: [&str; 3] = ["x", "y", "z"];

fn dims(d: Option<&impl Xyz>, path: &str, limits: [u64; 3], limit_name: &str) -> Result<[u32; 3]> {
    let d = d.ok_or_else(|| invalid(format!("{path} is not set")))?;
    let mut out = [0u32; 3];
    for (i, (v, axis)) in d.xyz().into_iter().zip(AXES).enumerate() {
        let limit = limits.get(i).copied().unwrap_or(0).min(u64::from(u32::MAX));
        let ok = u64::try_from(v).ok().filter(|&v| v >= 1 && v <= limit);
        let Some(v) = ok else {
            return Err(invalid(format!(
                "{path}.{axis} is {v}, out of range [1, {limit}] (the device's {limit_name}_{axis})"
            )));
        };
        if let Some(o) = out.get_mut(i) {
            *o = v as u32;
        }
    }
    Ok(out)
}

/// The three coordinates of either `Dim3DProto`: this project's (`xla.gpu`, in kernel thunks) and
/// XLA's (`stream_executor`, in custom kernels), which are wire-identical.
trait Xyz {
    fn xyz(&self) -> [i64; 3];
}

impl Xyz for Dim3DProto {
    fn xyz(&self) -> [i64; 3] {
        [self.x, self.y, self.z]
    }
}

impl Xyz for proto::stream_executor::Dim3DProto {
    fn xyz(&self) -> [i64; 3] {
        [self.x, self.y, self.z]
    }
}

/// What a custom kernel's `kernel_spec` carries.
fn kernel_code(spec: Option<&proto::stream_executor::KernelLoaderSpecProto>) -> KernelCode {
    use proto::stream_executor::kernel_loader_spec_proto::Payload;
    let Some(spec) = spec else {
        return KernelCode::None;
    };
    match &spec.payload {
        Some(Payload::Ptx(p)) => KernelCode::Ptx(p.data.clone()),
        Some(Payload::Cubin(c)) => KernelCode::Cubin(c.data.clone()),
        Some(Payload::InProcessSymbol(s)) => KernelCode::Symbol(s.persistent_name.clone()),
        None => KernelCode::None,
    }
}

fn launch_dims(
    ctx: &DecodeContext<'_>,
    p: Option<&LaunchDimensionsProto>,
    path: &str,
) -> Result<([u32; 3], [u32; 3])> {
    let p = p.ok_or_else(|| invalid(format!("{path} is not set")))?;
    let dev = ctx.device;
    // Which pair of fields carries the counts: the project numbers (1000, 1001) when either is
    // set, else the v1 numbers (1, 2). Both at once would leave the launch ambiguous.
    let xyz = p.block_counts_xyz.is_some() || p.thread_counts_per_block_xyz.is_some();
    let (block_counts, thread_counts, names) = if xyz {
        if p.block_counts.is_some() || p.thread_counts_per_block.is_some() {
            return Err(invalid(format!(
                "{path} sets both block_counts/thread_counts_per_block (1, 2) and block_counts_xyz/thread_counts_per_block_xyz (1000, 1001); an artifact sets one pair"
            )));
        }
        (
            p.block_counts_xyz.as_ref(),
            p.thread_counts_per_block_xyz.as_ref(),
            ["block_counts_xyz", "thread_counts_per_block_xyz"],
        )
    } else {
        legacy_launch_dims(p)
    };
    let grid = dims(
        block_counts,
        &format!("{path}.{}", names[0]),
        dev.block_dim_limit,
        "block_dim_limit",
    )?;
    let block = dims(
        thread_counts,
        &format!("{path}.{}", names[1]),
        dev.thread_dim_limit,
        "thread_dim_limit",
    )?;
    let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
    if threads > dev.threads_per_block_limit {
        return Err(invalid(format!(
            "{path}.{} is {}x{}x{} = {threads} threads, over the device's threads_per_block_limit of {}",
            names[1], block[0], block[1], block[2], dev.threads_per_block_limit
        )));
    }
    Ok((grid, block))
}

/// The launch counts at the v1 numbers 1 and 2, which the compiler writes by default until the
/// stage-2 date of the move to 1000/1001 (2026-12-15); artifacts written before then carry only
/// these.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_launch_dims(
    p: &LaunchDimensionsProto,
) -> (Option<&Dim3DProto>, Option<&Dim3DProto>, [&'static str; 2]) {
    (
        p.block_counts.as_ref(),
        p.thread_counts_per_block.as_ref(),
        ["block_counts", "thread_counts_per_block"],
    )
}

fn shmem(ctx: &DecodeContext<'_>, v: i64, path: &str) -> Result<u32> {
    let limit = ctx.device.shared_memory_per_block_optin;
    u64::try_from(v)
        .ok()
        .filter(|&v| v <= limit)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| {
            invalid(format!(
                "{path} is {v}, out of range [0, {limit}] (the device's shared_memory_per_block_optin)"
            ))
        })
}

fn kernel(
    ctx: &mut DecodeContext<'_>,
    k: &mut KernelThunkProto,
    path: &str,
) -> Result<KernelThunk> {
    let KernelThunkProto {
        args: arg_protos,
        written,
        kernel_name,
        launch_dimensions,
        shmem_bytes,
        args_shape,
        kernel_binary,
    } = k;
    let args = arg_protos
        .iter()
        .enumerate()
        .map(|(i, a)| slice(ctx, Some(a), &format!("{path}.args[{i}]")))
        .collect::<Result<Vec<_>>>()?;
    if !written.is_empty() && written.len() != args.len() {
        return Err(invalid(format!(
            "{path}.written has {} entries, args has {}; they must be parallel",
            written.len(),
            args.len()
        )));
    }
    let (grid, block) = launch_dims(
        ctx,
        launch_dimensions.as_ref(),
        &format!("{path}.launch_dimensions"),
    )?;
    let shmem_bytes = shmem(ctx, *shmem_bytes, &format!("{path}.shmem_bytes"))?;
    let bin = kernel_binary
        .as_mut()
        .ok_or_else(|| invalid(format!("{path}.kernel_binary is not set")))?;
    if !bin.cubin.is_empty() {
        let (major, minor) = ctx.device.compute_capability;
        let want = i64::from(major) * 10 + i64::from(minor);
        match ptx::ptxas::cubin_sm(&bin.cubin) {
            Err(e) => {
                return Err(invalid(format!(
                    "{path}.kernel_binary.cubin is not a cubin: {e}"
                )))
            }
            Ok(sm) if i64::from(sm) != want => {
                return Err(Error::failed_precondition(format!(
                    "{path}.kernel_binary.cubin is for sm_{sm}, the device is sm_{want}"
                )))
            }
            Ok(_) => {}
        }
    }
    let module = ctx.kernels.intern(
        std::mem::take(&mut bin.ptx),
        std::mem::take(&mut bin.cubin),
        ctx.flags.ptx_check,
        path,
    )?;
    let Some(entry) = module.outline.kernel(kernel_name) else {
        let entries: Vec<String> = module.outline.entries().map(|f| elide(&f.name)).collect();
        return Err(Error::not_found(format!(
            "{path}.kernel_name \"{}\" is not an .entry of its kernel_binary.ptx (entries: {})",
            elide(&kernel_name.escape_debug().to_string()),
            elide(&entries.join(", "))
        )));
    };
    let params = entry.params();
    if params.len() != args.len() {
        return Err(invalid(format!(
            "{path}.args has {} entries, .entry {} takes {} parameters",
            args.len(),
            kernel_name,
            params.len()
        )));
    }
    for (j, prm) in params.iter().enumerate() {
        let bytes =
            prm.ty.size_bytes() as u64 * prm.array.iter().map(|d| d.unwrap_or(1)).product::<u64>();
        if bytes != 8 {
            return Err(invalid(format!(
                "{path}: parameter {j} ({}) of .entry {} is {bytes} bytes; every kernel_thunk parameter must be a 64-bit device address",
                prm.name, kernel_name
            )));
        }
    }
    Ok(KernelThunk {
        args,
        written: written.clone(),
        kernel_name: kernel_name.clone(),
        grid,
        block,
        shmem_bytes,
        args_shape: args_shape.clone(),
        module,
    })
}

const GEMM_TYPES: &str = "f16, bf16, f32, f64, s8, s32";

/// `layout_type` names the layout's message in errors (the two forms of the gemm config have
/// one each, with the same fields).
fn layout(p: Option<&MatrixLayoutProto>, path: &str, layout_type: &str) -> Result<MatrixLayout> {
    let p = p.ok_or_else(|| invalid(format!("{path} is not set")))?;
    let order = match matrix_layout_proto::Order::try_from(p.order) {
        Ok(matrix_layout_proto::Order::RowMajor) => Order::RowMajor,
        Ok(matrix_layout_proto::Order::ColumnMajor) => Order::ColumnMajor,
        Err(_) => {
            return Err(invalid(format!(
                "{path}.order is {}, not a known {layout_type}.Order",
                p.order
            )))
        }
    };
    let dtype = ElemType::from_proto(p.dtype)
        .filter(|t| {
            matches!(
                t,
                ElemType::F16
                    | ElemType::BF16
                    | ElemType::F32
                    | ElemType::F64
                    | ElemType::S8
                    | ElemType::S32
            )
        })
        .ok_or_else(|| {
            Error::unimplemented(format!(
                "{path}.dtype is {}; this runtime's gemm supports {GEMM_TYPES}",
                type_name(p.dtype)
            ))
        })?;
    Ok(MatrixLayout {
        order,
        num_rows: nonneg(p.num_rows, &format!("{path}.num_rows"))?,
        num_cols: nonneg(p.num_cols, &format!("{path}.num_cols"))?,
        batch_size: nonneg(p.batch_size, &format!("{path}.batch_size"))?,
        leading_dim_stride: nonneg(p.leading_dim_stride, &format!("{path}.leading_dim_stride"))?,
        batch_stride: nonneg(p.batch_stride, &format!("{path}.batch_stride"))?,
        transpose: p.transpose,
        dtype,
    })
}

pub(crate) fn type_name(v: i32) -> String {
    proto::xla::PrimitiveType::try_from(v)
        .map(|t| t.as_str_name().to_owned())
        .unwrap_or_else(|_| v.to_string())
}

/// Bytes spanned by a layout's elements (0 when empty), or `None` on overflow.
fn span(l: &MatrixLayout, batch: u64) -> Option<u64> {
    if l.num_rows == 0 || l.num_cols == 0 || batch == 0 {
        return Some(0);
    }
    let (r, c) = (l.num_rows - 1, l.num_cols - 1);
    let b = batch - 1;
    let last = match l.order {
        Order::RowMajor => b
            .checked_mul(l.batch_stride)?
            .checked_add(r.checked_mul(l.leading_dim_stride)?)?
            .checked_add(c)?,
        Order::ColumnMajor => b
            .checked_mul(l.batch_stride)?
            .checked_add(c.checked_mul(l.leading_dim_stride)?)?
            .checked_add(r)?,
    };
    last.checked_add(1)?.checked_mul(l.dtype.size())
}

fn gemm(
    ctx: &DecodeContext<'_>,
    g: &proto::xla::gpu::GemmThunkProto,
    path: &str,
) -> Result<GemmThunk> {
    // Which field carries the config: `gemm_config_xyz` (1000) when set, else the v1 number 1.
    // Both at once would leave the product ambiguous. The two forms have the same fields, so the
    // project form is read through the v1 type.
    let (c, field, layout_type) = match &g.gemm_config_xyz {
        Some(x) => {
            if g.gemm_config.is_some() {
                return Err(invalid(format!(
                    "{path} sets both gemm_config (1) and gemm_config_xyz (1000); an artifact sets one"
                )));
            }
            (
                std::borrow::Cow::Owned(proto::xla::gpu::GemmConfigProto::from(x)),
                "gemm_config_xyz",
                "MatrixLayoutXyzProto",
            )
        }
        None => legacy_gemm_config(g, path)?,
    };
    let cp = format!("{path}.{field}");
    let lhs_l = layout(
        c.lhs_layout.as_ref(),
        &format!("{cp}.lhs_layout"),
        layout_type,
    )?;
    let rhs_l = layout(
        c.rhs_layout.as_ref(),
        &format!("{cp}.rhs_layout"),
        layout_type,
    )?;
    let out_l = layout(
        c.output_layout.as_ref(),
        &format!("{cp}.output_layout"),
        layout_type,
    )?;
    let (m, k) = lhs_l.op_dims();
    let (k2, n) = rhs_l.op_dims();
    let (m2, n2) = out_l.op_dims();
    if k != k2 || m != m2 || n != n2 {
        return Err(invalid(format!(
            "{cp}: op(lhs) is {m}x{k}, op(rhs) is {k2}x{n}, output is {m2}x{n2}; need MxK, KxN and MxN"
        )));
    }
    let batch = out_l.batch_size.max(1);
    for (l, name) in [(&lhs_l, "lhs_layout"), (&rhs_l, "rhs_layout")] {
        if l.batch_size.max(1) != batch {
            return Err(invalid(format!(
                "{cp}.{name}.batch_size is {}, output_layout.batch_size is {}; they must be equal",
                l.batch_size, out_l.batch_size
            )));
        }
    }
    let compute_type = ElemType::from_proto(c.compute_type)
        .filter(|t| matches!(t, ElemType::F32 | ElemType::F64 | ElemType::S32))
        .ok_or_else(|| {
            Error::unimplemented(format!(
                "{cp}.compute_type is {}; this runtime's gemm accumulates in F32, F64 or S32",
                type_name(c.compute_type)
            ))
        })?;
    if c.alpha_imag != 0.0 {
        return Err(Error::unimplemented(format!(
            "{cp}.alpha_imag is {}; this runtime has no complex gemm",
            c.alpha_imag
        )));
    }
    let lhs = slice(ctx, g.lhs_buffer.as_ref(), &format!("{path}.lhs_buffer"))?;
    let rhs = slice(ctx, g.rhs_buffer.as_ref(), &format!("{path}.rhs_buffer"))?;
    let output = slice(
        ctx,
        g.output_buffer.as_ref(),
        &format!("{path}.output_buffer"),
    )?;
    for (l, s, lname, sname) in [
        (&lhs_l, &lhs, "lhs_layout", "lhs_buffer"),
        (&rhs_l, &rhs, "rhs_layout", "rhs_buffer"),
        (&out_l, &output, "output_layout", "output_buffer"),
    ] {
        match span(l, batch) {
            Some(need) if need <= s.size => {}
            need => return Err(invalid(format!(
                "{path}.{sname}.size is {}, smaller than the {} bytes {field}.{lname} addresses",
                s.size,
                need.map_or_else(|| "overflowing".to_owned(), |n| n.to_string())
            ))),
        }
    }
    let workspace = match &g.workspace {
        Some(w) => Some(slice(ctx, Some(w), &format!("{path}.workspace"))?),
        None => None,
    };
    Ok(GemmThunk {
        config: GemmConfig {
            lhs: lhs_l,
            rhs: rhs_l,
            output: out_l,
            alpha_real: c.alpha_real,
            alpha_imag: c.alpha_imag,
            beta: c.beta,
            compute_type,
            operand_precisions: c.operand_precisions.clone(),
            m,
            n,
            k,
            batch,
        },
        lhs,
        rhs,
        output,
        workspace,
        deterministic: g.deterministic,
    })
}

/// A gemm's config at the v1 number 1, which the compiler writes by default until the stage-2
/// date of the move to 1000 (2026-12-15); artifacts written before then carry only it.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_gemm_config<'a>(
    g: &'a proto::xla::gpu::GemmThunkProto,
    path: &str,
) -> Result<(
    std::borrow::Cow<'a, proto::xla::gpu::GemmConfigProto>,
    &'static str,
    &'static str,
)> {
    let c = g
        .gemm_config
        .as_ref()
        .ok_or_else(|| invalid(format!("{path}.gemm_config is not set")))?;
    Ok((
        std::borrow::Cow::Borrowed(c),
        "gemm_config",
        "MatrixLayoutProto",
    ))
}

fn reduction(v: i32, path: &str) -> Result<ReductionKind> {
    match ReductionKindProto::try_from(v) {
        Ok(ReductionKindProto::ReductionKindSum) => Ok(ReductionKind::Sum),
        Ok(ReductionKindProto::ReductionKindProduct) => Ok(ReductionKind::Product),
        Ok(ReductionKindProto::ReductionKindMin) => Ok(ReductionKind::Min),
        Ok(ReductionKindProto::ReductionKindMax) => Ok(ReductionKind::Max),
        _ => Err(invalid(format!(
            "{path}.reduction_kind is {v}; expected SUM, PRODUCT, MIN or MAX"
        ))),
    }
}

fn collective(
    ctx: &DecodeContext<'_>,
    op: CollectiveOp,
    config: Option<&CollectiveConfigProto>,
    buffers: &[CollectiveBufferProto],
    path: &str,
) -> Result<ThunkKind> {
    let cp = format!("{path}.collective_config");
    let c = config.ok_or_else(|| invalid(format!("{cp} is not set")))?;
    if c.operand_element_type.len() != buffers.len() {
        return Err(invalid(format!(
            "{cp}.operand_element_type has {} entries, buffers has {}; they must be parallel",
            c.operand_element_type.len(),
            buffers.len()
        )));
    }
    let element_types = c
        .operand_element_type
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            ElemType::from_proto(t).ok_or_else(|| {
                Error::unimplemented(format!(
                    "{cp}.operand_element_type[{i}] is {}; collectives support pred, s8-s64, u8-u64, f16, bf16, f32, f64",
                    type_name(t)
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    // Which field carries the mode: `group_mode_xyz` (1001) when present, else the v1 number 3.
    // Both at once would leave the mode ambiguous.
    let (group_mode, mode_field) = match c.group_mode_xyz {
        Some(m) => {
            if c.group_mode != 0 {
                return Err(invalid(format!(
                    "{cp} sets both group_mode (3) and group_mode_xyz (1001); an artifact sets one"
                )));
            }
            (m, "group_mode_xyz")
        }
        None => legacy_group_mode(c),
    };
    match CollectiveOpGroupModeProto::try_from(group_mode) {
        // With one partition per replica (checked at load), these modes all group replicas.
        Ok(
            CollectiveOpGroupModeProto::CollectiveOpGroupModeUnspecified
            | CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplica
            | CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplicaAndPartition
            | CollectiveOpGroupModeProto::CollectiveOpGroupModeFlattenedId,
        ) => {}
        Ok(CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossPartition) => {
            return Err(Error::unimplemented(format!(
                "{cp}.{mode_field} is {group_mode}; this runtime runs one partition per replica"
            )))
        }
        Err(_) => {
            return Err(invalid(format!(
                "{cp}.{mode_field} is {group_mode}, not a known CollectiveOpGroupModeProto"
            )))
        }
    }
    // Which field carries the channel id: `op_id_xyz` (1000) when present, else the v1 number 4.
    let op_id = match c.op_id_xyz {
        Some(id) => {
            if c.op_id != 0 {
                return Err(invalid(format!(
                    "{cp} sets both op_id (4) and op_id_xyz (1000); an artifact sets one"
                )));
            }
            id
        }
        None => legacy_op_id(c),
    };
    let n = ctx.num_replicas;
    let mut seen = vec![false; usize::try_from(n).unwrap_or(0)];
    let mut groups = Vec::with_capacity(c.replica_groups.len());
    let mut group_size = n;
    for (gi, g) in c.replica_groups.iter().enumerate() {
        for (j, &id) in g.replica_ids.iter().enumerate() {
            let slot = usize::try_from(id).ok().and_then(|i| seen.get_mut(i));
            match slot {
                Some(s) if !*s => *s = true,
                Some(_) => {
                    return Err(invalid(format!(
                        "{cp}.replica_groups[{gi}].replica_ids[{j}] is {id}, which already appears in an earlier group"
                    )))
                }
                None => {
                    return Err(invalid(format!(
                        "{cp}.replica_groups[{gi}].replica_ids[{j}] is {id}, out of range [0, {n}) (the module's replica_count)"
                    )))
                }
            }
        }
        if g.replica_ids.is_empty() {
            return Err(invalid(format!("{cp}.replica_groups[{gi}] is empty")));
        }
        if gi == 0 {
            group_size = g.replica_ids.len() as u64;
        } else if g.replica_ids.len() as u64 != group_size {
            return Err(invalid(format!(
                "{cp}.replica_groups[{gi}] has {} replicas, replica_groups[0] has {group_size}; groups must have equal sizes",
                g.replica_ids.len()
            )));
        }
        groups.push(g.replica_ids.clone());
    }
    if !groups.is_empty() {
        if let Some(missing) = seen.iter().position(|s| !s) {
            return Err(invalid(format!(
                "{cp}.replica_groups: replica {missing} is in no group (replica_count is {n})"
            )));
        }
    }
    let mut out = Vec::with_capacity(buffers.len());
    for (i, (b, t)) in buffers.iter().zip(&element_types).enumerate() {
        let bp = format!("{path}.buffers[{i}]");
        let count = nonneg(b.element_count, &format!("{bp}.element_count"))?;
        // Which pair carries the slices: the project numbers (1000, 1001) when either is set,
        // else the v1 numbers (2, 3). Both at once would leave the buffer ambiguous.
        let (source, destination, names) = if b.source_buffer_xyz.is_some()
            || b.destination_buffer_xyz.is_some()
        {
            if b.source_buffer.is_some() || b.destination_buffer.is_some() {
                return Err(invalid(format!(
                        "{bp} sets both source_buffer/destination_buffer (2, 3) and source_buffer_xyz/destination_buffer_xyz (1000, 1001); an artifact sets one pair"
                    )));
            }
            (
                b.source_buffer_xyz.as_ref(),
                b.destination_buffer_xyz.as_ref(),
                ["source_buffer_xyz", "destination_buffer_xyz"],
            )
        } else {
            legacy_collective_slices(b)
        };
        let source = slice(ctx, source, &format!("{bp}.{}", names[0]))?;
        let destination = slice(ctx, destination, &format!("{bp}.{}", names[1]))?;
        let bytes = count.checked_mul(t.size());
        let (src_need, dst_need) = match &op {
            CollectiveOp::AllGather => (bytes, bytes.and_then(|b| b.checked_mul(group_size))),
            CollectiveOp::ReduceScatter(_) => {
                if group_size == 0 || count % group_size != 0 {
                    return Err(invalid(format!(
                        "{bp}.element_count is {count}, not a multiple of the group size {group_size}"
                    )));
                }
                (bytes, bytes.map(|b| b / group_size))
            }
            _ => (bytes, bytes),
        };
        for (need, s, name) in [
            (src_need, &source, names[0]),
            (dst_need, &destination, names[1]),
        ] {
            match need {
                Some(need) if need <= s.size => {}
                need => {
                    return Err(invalid(format!(
                        "{bp}.{name}.size is {}, smaller than the {} bytes element_count {count} of {} needs",
                        s.size,
                        need.map_or_else(|| "overflowing".to_owned(), |n| n.to_string()),
                        type_name(t.to_proto())
                    )))
                }
            }
        }
        out.push(CollectiveBuffer {
            element_count: count,
            source,
            destination,
            source_memory_space: b.source_memory_space,
            destination_memory_space: b.destination_memory_space,
        });
    }
    Ok(ThunkKind::Collective(CollectiveThunk {
        op,
        config: CollectiveConfig {
            element_types,
            replica_groups: groups,
            group_mode,
            op_id,
            use_symmetric_buffer: c.use_symmetric_buffer,
        },
        buffers: out,
    }))
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
