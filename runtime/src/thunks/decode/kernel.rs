//! Kernel launches: kernel thunks (PTX checked against the device and its `.entry`) and custom
//! kernels; launch dimensions and shared memory against the device's limits.
use super::*;

const AXES: [&str; 3] = ["x", "y", "z"];

/// What each kernel's PTX header is held to (step 6): the toolkit its `.version` may need and
/// the compute capability its `.target` must run on. The default checks nothing (the decode
/// tests that have no artifact around their thunks); the loader fills it from the artifact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelContract {
    /// The newest toolkit a `.version` may need.
    pub toolkit: Option<ToolkitBound>,
    /// The executable's `gpu_compute_capability`, which every `.target` must run on.
    pub capability: Option<ptx::Arch>,
}

/// Where the toolkit bound of a [`KernelContract`] comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolkitBound {
    /// `executable_abi_version.cuda_platform_version.cuda_toolkit_version`, as written: a kernel
    /// that needs more makes the artifact contradict itself (INVALID_ARGUMENT).
    Declared(ptx::Toolkit, String),
    /// The artifact declares none (empty or 0.0.0): the device runtime's toolkit, as written; a
    /// kernel that needs more cannot run here (FAILED_PRECONDITION).
    Device(ptx::Toolkit, String),
}

/// Step 6, each kernel's PTX header: its `.version` against the toolkit the contract allows and
/// its `.target` against the executable's compute capability.
fn check_header(
    contract: &KernelContract,
    outline: &ptx::Outline,
    kernel_name: &str,
    location: &str,
) -> Result<()> {
    let at = format!(
        "{location}: kernel \"{}\"",
        elide(&kernel_name.escape_debug().to_string())
    );
    let v = outline.version;
    let need = ptx::min_toolkit(v);
    match &contract.toolkit {
        Some(ToolkitBound::Declared(have, written)) if !need.met_by(*have) => {
            return Err(invalid(format!(
                "{at} has .version {}.{} (PTX ISA {}.{}), which needs {need}, but executable_abi_version.cuda_platform_version.cuda_toolkit_version declares CUDA toolkit {}; a runtime of that toolkit cannot JIT-compile the kernel, so the artifact contradicts itself",
                v.major,
                v.minor,
                v.major,
                v.minor,
                written.escape_debug()
            )));
        }
        Some(ToolkitBound::Device(have, written)) if !need.met_by(*have) => {
            return Err(Error::failed_precondition(format!(
                "{at} has .version {}.{} (PTX ISA {}.{}), which needs {need}; the executable declares no CUDA toolkit version and the device's runtime has CUDA toolkit {}",
                v.major,
                v.minor,
                v.major,
                v.minor,
                written.escape_debug()
            )));
        }
        _ => {}
    }
    if let Some(cc) = &contract.capability {
        let arch = &outline.target.arch;
        let target = ptx::Arch::parse(arch).ok_or_else(|| {
            invalid(format!(
                "{at} has .target {}, not an sm_XY, sm_XYa or sm_XYf architecture",
                elide(&arch.escape_debug().to_string())
            ))
        })?;
        if let Err(m) = target.runs_on(cc) {
            return Err(invalid(format!(
                "{at} has .target {target}, but gpu_compute_capability is {cc} ({}.{}); {}",
                cc.major,
                cc.minor,
                target.rule(m)
            )));
        }
    }
    Ok(())
}

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
    let at_1000 = p.block_counts_xyz.is_some() || p.thread_counts_per_block_xyz.is_some();
    let (block_counts, thread_counts, names) = if at_1000 {
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
/// stage-2 date of the move to 1000/1001 ([`proto::rollout::LAUNCH_DIMS`]); artifacts written
/// before then carry only these.
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

pub(super) fn kernel(
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
        match ptx::ptxas::cubin_arch(&bin.cubin).map(|a| a.sm) {
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
    check_header(
        &ctx.contract,
        &module.outline,
        kernel_name,
        &format!("{path}.kernel_binary.ptx"),
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

/// A `custom_kernel_thunk`. One that carries only a cubin runs when PTX supplied beside the
/// artifact ([`DecodeContext::kernel_ptx`]) defines its entry: it becomes a kernel launch of that
/// PTX, checked as an embedded kernel's would be. Otherwise it is refused unless the context
/// accepts unimplemented kinds (conversion tests), then checked like a kernel launch.
pub(super) fn custom_kernel(
    ctx: &mut DecodeContext<'_>,
    k: &CustomKernelThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let CustomKernelThunkProto {
        args: arg_protos,
        written,
        custom_kernel,
    } = k;
    let p2 = format!("{path}.custom_kernel_thunk");
    let CustomKernelProto {
        name,
        kernel_spec,
        block_dims,
        thread_dims,
        cluster_dim,
        shared_memory_bytes,
    } = custom_kernel.clone().unwrap_or_default();
    let code = kernel_code(kernel_spec.as_ref());
    let supplied = match (&code, ctx.kernel_ptx) {
        (KernelCode::Cubin(_), Some(k)) => Some(k),
        _ => None,
    };
    if supplied.is_none() && !ctx.allow_unimplemented {
        // Say what the kernel carries, so a refused XLA:GPU artifact names the reason
        // (the emulated device runs PTX; XLA's kernels carry only a cubin) and the way out.
        let hint = if matches!(code, KernelCode::Cubin(_)) {
            "; supply its PTX (aot run --kernel-ptx, runtime::load_with_kernel_ptx)"
        } else {
            ""
        };
        return Err(Error::unimplemented(format!(
            "{p2}: this runtime does not execute custom-kernel thunks (kernel `{}`: {}); the emulated device runs PTX{hint}",
            name,
            code.describe()
        )));
    }
    let args = arg_protos
        .iter()
        .enumerate()
        .map(|(i, a)| shaped(ctx, Some(a), &format!("{p2}.args[{i}]")))
        .collect::<Result<Vec<_>>>()?;
    let cd = format!("{p2}.custom_kernel");
    let grid = dims(
        block_dims.as_ref().and_then(|d| d.coordinates.as_ref()),
        &format!("{cd}.block_dims.coordinates"),
        ctx.device.block_dim_limit,
        "block_dim_limit",
    )?;
    let block = dims(
        thread_dims.as_ref().and_then(|d| d.coordinates.as_ref()),
        &format!("{cd}.thread_dims.coordinates"),
        ctx.device.thread_dim_limit,
        "thread_dim_limit",
    )?;
    let shared_memory_bytes = shmem(
        ctx,
        shared_memory_bytes,
        &format!("{cd}.shared_memory_bytes"),
    )?;
    let Some(supplied) = supplied else {
        return Ok(ThunkKind::CustomKernel(CustomKernelThunk {
            args,
            written: written.clone(),
            name,
            grid,
            block,
            shared_memory_bytes,
            code,
        }));
    };
    // A thread-block cluster of more than one block needs distributed shared memory and cluster
    // barriers, which the emulator does not model; a 1x1x1 cluster is a plain launch.
    if let Some(c) = cluster_dim.as_ref().and_then(|c| c.coordinates.as_ref()) {
        if [c.x, c.y, c.z].iter().any(|&v| v > 1) {
            return Err(Error::unimplemented(format!(
                "{cd}.cluster_dim is {}x{}x{}; the emulated device launches no thread-block clusters",
                c.x, c.y, c.z
            )));
        }
    }
    let symbol = kernel_spec
        .as_ref()
        .map(|s| s.kernel_name.clone())
        .filter(|s| !s.is_empty())
        .unwrap_or(name);
    let Some(found) = supplied.kernel(&symbol) else {
        let entries: Vec<&str> = supplied.entry_names().collect();
        return Err(Error::not_found(format!(
            "{cd}: kernel `{}` {}, and none of the {} supplied PTX files defines .entry {} (entries: {})",
            elide(&symbol.escape_debug().to_string()),
            code.describe().trim_start_matches("it "),
            supplied.file_count(),
            elide(&symbol.escape_debug().to_string()),
            elide(&entries.join(", "))
        )));
    };
    let label = found.label.to_owned();
    let module = ctx
        .kernels
        .intern(found.text.to_owned(), Vec::new(), ctx.flags.ptx_check, &cd)?;
    // The `.target` is held to the artifact's compute capability, as an embedded kernel's is;
    // the `.version` is not held to the artifact's declared toolkit, which describes the cubins
    // it carries (the supplied PTX is the compile's dump, whose ISA version is LLVM's, not the
    // artifact's contract). A CUDA device's JIT still refuses an ISA its driver lacks.
    let contract = KernelContract {
        toolkit: None,
        capability: ctx.contract.capability,
    };
    check_header(
        &contract,
        &module.outline,
        &symbol,
        &format!("{cd}: supplied PTX {label}"),
    )?;
    let params = module
        .outline
        .kernel(&symbol)
        .map(|e| e.params().to_vec())
        .unwrap_or_default();
    if params.len() != args.len() {
        return Err(invalid(format!(
            "{p2}.args has {} entries, .entry {symbol} of the supplied PTX {label} takes {} parameters",
            args.len(),
            params.len()
        )));
    }
    for (j, prm) in params.iter().enumerate() {
        let bytes =
            prm.ty.size_bytes() as u64 * prm.array.iter().map(|d| d.unwrap_or(1)).product::<u64>();
        if bytes != 8 {
            return Err(invalid(format!(
                "{p2}.args[{j}]: parameter {j} ({}) of .entry {symbol} in the supplied PTX {label} is {bytes} bytes; XLA passes every kernel argument as a 64-bit device address",
                prm.name
            )));
        }
    }
    let args_shape = args.iter().filter_map(|a| a.shape.clone()).collect();
    Ok(ThunkKind::Kernel(KernelThunk {
        args: args.into_iter().map(|a| a.slice).collect(),
        written: written.clone(),
        kernel_name: symbol,
        grid,
        block,
        shmem_bytes: shared_memory_bytes,
        args_shape,
        module,
    }))
}
