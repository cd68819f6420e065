//! `aot inspect ARTIFACT`: for a serialized JAX `Exported` (`.jax_exported`), its calling
//! convention and its module as StableHLO text; for a StableHLO portable artifact (`.mlirbc`),
//! its StableHLO text. Otherwise the executable in protobuf text format, with each kernel's PTX shown
//! as text (the text format would escape it into one line) and cubins replaced by their target and
//! size, followed by a summary: the form the bytes were in, sizes, compute capability, ABI, the
//! buffer allocations, the kernels, the thunk tree and the census of constructs used (with the
//! fields this schema does not declare). Reads all three forms: this project's artifact, a bare
//! XLA:GPU `GpuExecutableProto`, and PjRt `SerializeExecutable` bytes (see
//! [`crate::unwrap_xla_artifact`]). Needs no device; does not validate (use `aot run` for that). Exit 0,
//! or 2 when the file does not decode.
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use proto::prost::Message;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::{GpuExecutableProto, ThunkProto};

/// Arguments of `aot inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    /// Serialized executable: a `GpuExecutableProto` (this project's or XLA:GPU's) or PjRt
    /// `SerializeExecutable` bytes; or a serialized JAX `Exported` (`.jax_exported`) or a
    /// StableHLO portable artifact (`.mlirbc`).
    pub artifact: PathBuf,
    /// Print only the summary.
    #[arg(long)]
    pub summary: bool,
}

fn kernel_of(t: &ThunkProto) -> Option<(&str, &str)> {
    match &t.r#impl {
        Some(Impl::KernelThunk(k)) => Some((
            k.kernel_name.as_str(),
            k.kernel_binary.as_ref().map_or("", |b| b.ptx.as_str()),
        )),
        _ => None,
    }
}

fn children(t: &ThunkProto) -> Vec<(String, &[ThunkProto])> {
    match &t.r#impl {
        Some(Impl::SequentialThunk(s)) => vec![(String::new(), s.thunks.as_slice())],
        Some(Impl::WhileThunk(w)) => vec![
            (
                "condition".into(),
                w.condition_thunk_sequence
                    .as_ref()
                    .map_or(&[][..], |s| &s.thunks),
            ),
            (
                "body".into(),
                w.body_thunk_sequence
                    .as_ref()
                    .map_or(&[][..], |s| &s.thunks),
            ),
        ],
        Some(Impl::ConditionalThunk(c)) => c
            .branch_thunks
            .iter()
            .enumerate()
            .map(|(i, b)| (format!("branch {i}"), b.thunks.as_slice()))
            .collect(),
        _ => vec![],
    }
}

fn kind(t: &ThunkProto) -> String {
    let Some(imp) = &t.r#impl else {
        return "<unset: made by a newer compiler>".into();
    };
    match imp {
        Impl::SequentialThunk(_) => "sequential".into(),
        Impl::CopyThunk(c) => format!("copy {} bytes", c.mem_size),
        Impl::DeviceToDeviceCopyThunk(c) => {
            let c = c.copy_thunk.clone().unwrap_or_default();
            let slice = |s: Option<proto::xla::gpu::ShapedSliceProto>| {
                let s = s.and_then(|s| s.slice).unwrap_or_default();
                format!("a{}[{}+{}]", s.buffer_allocation_index, s.offset, s.size)
            };
            format!(
                "device-to-device copy {} bytes {} -> {}",
                c.mem_size,
                slice(c.source_buffer),
                slice(c.destination_buffer)
            )
        }
        Impl::ConditionalThunk(c) => format!(
            "conditional ({} branches, {} selector)",
            c.branch_thunks.len(),
            if c.branch_index_is_bool {
                "pred"
            } else {
                "s32"
            }
        ),
        Impl::WhileThunk(w) => format!(
            "while{}",
            w.trip_count
                .map(|n| format!(" (trip count {n})"))
                .unwrap_or_default()
        ),
        Impl::KernelThunk(k) => {
            let d = k.launch_dimensions.unwrap_or_default();
            let g = d.block_counts.unwrap_or_default();
            let b = d.thread_counts_per_block.unwrap_or_default();
            format!(
                "kernel {} grid {}x{}x{} block {}x{}x{} shmem {} args {}",
                k.kernel_name,
                g.x,
                g.y,
                g.z,
                b.x,
                b.y,
                b.z,
                k.shmem_bytes,
                k.args
                    .iter()
                    .map(|a| format!("a{}[{}+{}]", a.buffer_allocation_index, a.offset, a.size))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        }
        Impl::GemmThunk(g) => {
            // Either form of the config (1, or 1000 since 2026-12-01; they have the same fields).
            let c = g
                .gemm_config
                .clone()
                .or_else(|| g.gemm_config_xyz.as_ref().map(Into::into))
                .unwrap_or_default();
            let l = c.lhs_layout.unwrap_or_default();
            let r = c.rhs_layout.unwrap_or_default();
            format!(
                "gemm lhs {}x{}{} rhs {}x{}{} batch {}",
                l.num_rows,
                l.num_cols,
                if l.transpose { "ᵀ" } else { "" },
                r.num_rows,
                r.num_cols,
                if r.transpose { "ᵀ" } else { "" },
                l.batch_size
            )
        }
        Impl::ConvolutionThunk(c) => format!(
            "convolution {}",
            c.conv_descriptor
                .as_ref()
                .and_then(|d| proto::stream_executor::dnn::ConvolutionKind::try_from(d.kind).ok())
                .map_or("?", |k| k.as_str_name())
        ),
        Impl::FftThunk(f) => format!(
            "fft {} {:?}",
            proto::xla::FftType::try_from(f.fft_type)
                .map(|t| t.as_str_name().to_owned())
                .unwrap_or_else(|_| f.fft_type.to_string()),
            f.fft_length
        ),
        Impl::ReplicaIdThunk(_) => "replica-id".into(),
        Impl::PartitionIdThunk(_) => "partition-id".into(),
        Impl::MemzeroThunk(_) => "memzero".into(),
        Impl::Memset32bitValueThunk(m) => format!("memset32 {:#x}", m.value),
        Impl::Memset8bitValueThunk(m) => format!("memset8 {:#x}", m.value),
        Impl::CustomCallThunk(c) => format!("custom-call {}", c.target_name),
        Impl::CustomKernelThunk(k) => {
            let c = k.custom_kernel.clone().unwrap_or_default();
            let g = c.block_dims.and_then(|d| d.coordinates).unwrap_or_default();
            let b = c
                .thread_dims
                .and_then(|d| d.coordinates)
                .unwrap_or_default();
            format!(
                "custom-kernel {} grid {}x{}x{} block {}x{}x{} shmem {} args {}",
                c.name,
                g.x,
                g.y,
                g.z,
                b.x,
                b.y,
                b.z,
                c.shared_memory_bytes,
                k.args
                    .iter()
                    .map(|a| {
                        let s = a.slice.unwrap_or_default();
                        format!("a{}[{}+{}]", s.buffer_allocation_index, s.offset, s.size)
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        }
        Impl::AllGatherStartThunk(_) => "all-gather".into(),
        Impl::AllReduceStartThunk(a) => format!("all-reduce (reduction {})", a.reduction_kind),
        Impl::ReduceScatterThunk(a) => {
            format!("reduce-scatter (reduction {})", a.reduction_kind)
        }
        Impl::AllToAllStartThunk(_) => "all-to-all".into(),
        Impl::CollectivePermuteStartThunk(_) => "collective-permute".into(),
    }
}

fn tree(thunks: &[ThunkProto], depth: usize, out: &mut dyn Write) -> std::io::Result<()> {
    for t in thunks {
        let info = t.thunk_info.clone().unwrap_or_default();
        writeln!(
            out,
            "{:indent$}#{} {} [stream {}] {}",
            "",
            info.thunk_id,
            kind(t),
            info.execution_stream_id,
            info.profile_annotation,
            indent = 2 * depth + 2
        )?;
        for (label, seq) in children(t) {
            if !label.is_empty() {
                writeln!(out, "{:indent$}{label}:", "", indent = 2 * depth + 4)?;
            }
            tree(seq, depth + 2, out)?;
        }
    }
    Ok(())
}

fn collect_kernels<'a>(thunks: &'a [ThunkProto], acc: &mut Vec<(&'a str, &'a str)>) {
    for t in thunks {
        if let Some(k) = kernel_of(t) {
            acc.push(k);
        }
        for (_, seq) in children(t) {
            collect_kernels(seq, acc);
        }
    }
}

/// What a custom kernel carries, for the kernel list: `(name, code)`.
fn collect_custom_kernels(thunks: &[ThunkProto], acc: &mut Vec<(String, String)>) {
    use proto::stream_executor::kernel_loader_spec_proto::Payload;
    for t in thunks {
        if let Some(Impl::CustomKernelThunk(k)) = &t.r#impl {
            let c = k.custom_kernel.clone().unwrap_or_default();
            let code = match c.kernel_spec.and_then(|s| s.payload) {
                Some(Payload::Cubin(b)) => format!(
                    "cubin {} ({} bytes), no PTX",
                    crate::xla_artifact::cubin_target(&b.data)
                        .unwrap_or_else(|| "that is not a CUDA ELF".into()),
                    b.data.len()
                ),
                Some(Payload::Ptx(p)) => format!("PTX ({} bytes)", p.data.len()),
                Some(Payload::InProcessSymbol(s)) => {
                    format!("in-process symbol {}", s.persistent_name)
                }
                None => "no device code".into(),
            };
            acc.push((c.name, code));
        }
        for (_, seq) in children(t) {
            collect_custom_kernels(seq, acc);
        }
    }
}

/// Replaces each custom kernel's cubin (an ELF image, unreadable as text) by its target and size.
fn strip_cubins(thunks: &mut [ThunkProto]) {
    use proto::stream_executor::kernel_loader_spec_proto::Payload;
    for t in thunks {
        match t.r#impl.as_mut() {
            Some(Impl::CustomKernelThunk(k)) => {
                let spec = k
                    .custom_kernel
                    .as_mut()
                    .and_then(|c| c.kernel_spec.as_mut());
                if let Some(Payload::Cubin(b)) = spec.and_then(|s| s.payload.as_mut()) {
                    let what = crate::xla_artifact::cubin_target(&b.data)
                        .unwrap_or_else(|| "not a CUDA ELF".into());
                    b.data =
                        format!("<cubin: {} bytes, {what}; not shown>", b.data.len()).into_bytes();
                }
            }
            Some(Impl::SequentialThunk(s)) => strip_cubins(&mut s.thunks),
            Some(Impl::WhileThunk(w)) => {
                for s in [&mut w.condition_thunk_sequence, &mut w.body_thunk_sequence]
                    .into_iter()
                    .flatten()
                {
                    strip_cubins(&mut s.thunks);
                }
            }
            Some(Impl::ConditionalThunk(c)) => {
                for b in &mut c.branch_thunks {
                    strip_cubins(&mut b.thunks);
                }
            }
            _ => {}
        }
    }
}

/// The compute capability as `sm_XY` (with `a` for the accelerated feature set).
fn capability(p: &GpuExecutableProto) -> String {
    use proto::stream_executor::cuda_compute_capability_proto::FeatureExtension;
    use proto::stream_executor::gpu_compute_capability_proto::ComputeCapability;
    match p
        .gpu_compute_capability
        .as_ref()
        .and_then(|c| c.compute_capability.as_ref())
    {
        Some(ComputeCapability::CudaComputeCapability(c)) => format!(
            "sm_{}{}{} (CUDA {}.{})",
            c.major,
            c.minor,
            if c.feature_extension == FeatureExtension::AcceleratedFeatures as i32 {
                "a"
            } else {
                ""
            },
            c.major,
            c.minor
        ),
        Some(ComputeCapability::RocmComputeCapability(r)) => format!("ROCm {}", r.gcn_arch_name),
        Some(ComputeCapability::OneapiComputeCapability(o)) => format!("oneAPI {}", o.architecture),
        None => "not set".into(),
    }
}

/// The ABI versions the executable needs.
fn abi(p: &GpuExecutableProto) -> String {
    use proto::stream_executor::executable_abi_version_proto::PlatformVersion;
    let Some(a) = &p.executable_abi_version else {
        return "not set".into();
    };
    let shown = |v: &str| {
        if v.is_empty() {
            "-".to_owned()
        } else {
            v.to_owned()
        }
    };
    match &a.platform_version {
        Some(PlatformVersion::CudaPlatformVersion(v)) => format!(
            "platform {}, CUDA toolkit {}, cuDNN {}, CUB {}",
            a.platform_name,
            shown(&v.cuda_toolkit_version),
            shown(&v.cudnn_version),
            shown(&v.cub_version)
        ),
        _ => format!("platform {}, no CUDA versions", a.platform_name),
    }
}

/// Replaces each kernel's PTX by a reference to the module printed below, and an embedded cubin
/// (an ELF image, unreadable as text) by its size and SM.
fn strip_ptx(thunks: &mut [ThunkProto], modules: &BTreeMap<String, usize>) {
    for k in proto::kernel_thunks_mut(thunks) {
        if let Some(b) = k.kernel_binary.as_mut() {
            if let Some(i) = modules.get(&b.ptx) {
                b.ptx = format!("<PTX module {i}, printed below>");
            }
            if !b.cubin.is_empty() {
                let what = match ptx::ptxas::cubin_arch(&b.cubin) {
                    Ok(arch) => format!("sm_{}", arch.sm),
                    Err(e) => format!("not a cubin: {e}"),
                };
                b.cubin =
                    format!("<cubin: {} bytes, {what}; not shown>", b.cubin.len()).into_bytes();
            }
        }
    }
}

/// Prints the inspection of `bytes` (any of the three forms).
pub fn inspect(bytes: &[u8], summary_only: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let unwrapped = crate::xla_artifact::unwrap(bytes)?;
    let exe = unwrapped.executable.as_slice();
    let p = GpuExecutableProto::decode(exe).context("not a GpuExecutableProto")?;
    // The reflective decode tells unknown fields (allowed) from mis-typed ones (an error).
    let census = crate::golden::census::census_of_bytes(exe)
        .context("the executable does not decode with this project's schema")?;
    let mut kernels = Vec::new();
    collect_kernels(&p.thunks, &mut kernels);
    let mut custom = Vec::new();
    collect_custom_kernels(&p.thunks, &mut custom);
    let mut modules: BTreeMap<String, usize> = BTreeMap::new();
    let mut ordered: Vec<&str> = Vec::new();
    for (_, ptx) in &kernels {
        if !modules.contains_key(*ptx) {
            modules.insert((*ptx).to_owned(), ordered.len());
            ordered.push(ptx);
        }
    }
    if !summary_only {
        let mut shown = p.clone();
        strip_ptx(&mut shown.thunks, &modules);
        strip_cubins(&mut shown.thunks);
        writeln!(out, "{}", proto::to_text_format(&shown))?;
        for (i, ptx) in ordered.iter().enumerate() {
            writeln!(out, "# ---- PTX module {i} ({} bytes) ----", ptx.len())?;
            writeln!(out, "{}", ptx.trim_end())?;
        }
        writeln!(out)?;
    }
    writeln!(out, "# ---- summary ----")?;
    match &unwrapped.envelope {
        Some(e) => writeln!(
            out,
            "form: PjRt SerializeExecutable bytes (serializer {}): header {} bytes, Riegeli file {} bytes with {} records (the GpuExecutableProto is the last), CompileOptionsProto {} bytes",
            e.serializer, e.header_bytes, e.riegeli_bytes, e.records, e.compile_options_bytes
        )?,
        None if crate::xla_artifact::looks_like_xla(exe) => {
            writeln!(out, "form: bare GpuExecutableProto written by XLA:GPU")?
        }
        None => writeln!(out, "form: GpuExecutableProto (this project's artifact)")?,
    }
    let hlo_bytes = p
        .hlo_module_with_config
        .as_ref()
        .map_or(0, |h| h.encoded_len());
    let ptx_bytes: usize = ordered.iter().map(|s| s.len()).sum();
    writeln!(out, "module: {}", p.module_name)?;
    writeln!(
        out,
        "sizes: executable {} bytes, embedded HLO {hlo_bytes}, binary (constants) {}, PTX {ptx_bytes} in {} modules",
        exe.len(),
        p.binary.len(),
        ordered.len()
    )?;
    writeln!(out, "compute capability: {}", capability(&p))?;
    writeln!(out, "abi: {}", abi(&p))?;
    let allocs = p
        .buffer_allocations
        .as_ref()
        .map(|b| b.values.as_slice())
        .unwrap_or(&[]);
    let total: i64 = allocs.iter().map(|a| a.size.max(0)).sum();
    writeln!(out, "allocations: {} ({total} bytes)", allocs.len())?;
    for a in allocs {
        let role = if a.is_entry_computation_parameter {
            format!(
                "parameter {}{}",
                a.parameter_number,
                if a.parameter_shape_index.is_empty() {
                    String::new()
                } else {
                    format!(" {:?}", a.parameter_shape_index)
                }
            )
        } else if a.is_constant {
            "constant".into()
        } else {
            "temporary".into()
        };
        writeln!(
            out,
            "  a{} {} bytes {role}{}",
            a.index,
            a.size,
            if a.maybe_live_out { " live-out" } else { "" }
        )?;
    }
    writeln!(out, "outputs: {}", p.output_info_map.len())?;
    for (i, o) in p.output_info_map.iter().enumerate() {
        let info = o.output_info.clone().unwrap_or_default();
        writeln!(
            out,
            "  output {i} {:?} -> a{}{}",
            o.shape_index
                .as_ref()
                .map(|s| s.indices.clone())
                .unwrap_or_default(),
            info.allocation_index,
            if info.passthrough { " passthrough" } else { "" }
        )?;
    }
    writeln!(out, "kernels: {}", kernels.len() + custom.len())?;
    for (name, ptx) in &kernels {
        writeln!(
            out,
            "  {name} (PTX module {})",
            modules.get(*ptx).copied().unwrap_or(0)
        )?;
    }
    for (name, code) in &custom {
        writeln!(out, "  {name} (custom kernel: {code})")?;
    }
    writeln!(out, "thunks:")?;
    tree(&p.thunks, 0, out)?;
    for line in crate::support::lines(&crate::support::support(&p, &census)) {
        writeln!(out, "{line}")?;
    }
    let unknown: Vec<&String> = census
        .iter()
        .filter(|c| c.starts_with("unknown:"))
        .collect();
    writeln!(
        out,
        "census: {} constructs, {} fields this schema does not declare",
        census.len() - unknown.len(),
        unknown.len()
    )?;
    for c in &census {
        match c.strip_prefix("unknown:xla.gpu.ThunkProto.") {
            Some(n) => {
                let name = n
                    .parse()
                    .ok()
                    .and_then(crate::xla_artifact::xla_thunk_kind)
                    .map(|k| format!(" (XLA's {k})"))
                    .unwrap_or_default();
                writeln!(out, "  {c}{name}")?;
            }
            None => writeln!(out, "  {c}")?,
        }
    }
    Ok(())
}

/// Runs `aot inspect`.
pub fn run(args: &InspectArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let bytes = std::fs::read(&args.artifact)
        .with_context(|| format!("cannot read {}", args.artifact.display()))?;
    match args.artifact.extension().and_then(|e| e.to_str()) {
        Some("jax_exported") => return inspect_exported(&bytes, args.summary, out),
        Some("mlirbc") => {
            let text = hlo_front::to_stablehlo_text(&bytes)
                .with_context(|| format!("{}", args.artifact.display()))?;
            out.write_all(text.as_bytes())?;
            return Ok(0);
        }
        _ => {}
    }
    inspect(&bytes, args.summary, out).with_context(|| format!("{}", args.artifact.display()))?;
    Ok(0)
}

/// A serialized JAX `Exported`: its calling convention, then (unless `summary`) its module as
/// StableHLO text.
fn inspect_exported(bytes: &[u8], summary: bool, out: &mut dyn Write) -> anyhow::Result<u8> {
    let e = hlo_front::read_exported(bytes)?;
    out.write_all(e.describe().as_bytes())?;
    if let Some(note) = e.for_gpu_note() {
        writeln!(out, "{note}")?;
    }
    match e.check_supported() {
        Ok(()) => writeln!(out, "runs here: yes")?,
        Err(why) => writeln!(out, "runs here: no: {why}")?,
    }
    if !summary {
        let text = hlo_front::to_stablehlo_text(&e.mlir_module)?;
        writeln!(out)?;
        out.write_all(text.as_bytes())?;
    }
    Ok(0)
}

/// Arguments of `aot census`.
#[derive(Debug, clap::Args)]
pub struct CensusArgs {
    /// Serialized executables, in any of the forms `aot inspect` reads.
    #[arg(required = true)]
    pub artifacts: Vec<PathBuf>,
    /// Print `{"census": [...]}` (the golden manifests' `census` format) instead of one
    /// construct per line.
    #[arg(long)]
    pub json: bool,
    /// Instead of the census, print per artifact which of its constructs this runtime
    /// executes, executes only with their PTX supplied, or refuses (and why).
    #[arg(long)]
    pub support: bool,
}

/// The union of the censuses of `paths` (any form), sorted: what `census` in a golden manifest
/// records, plus `unknown:MESSAGE.NUMBER` for each field this schema does not declare, so the
/// bot's windows can be computed from what another compiler (XLA:GPU) really emits.
pub fn census(paths: &[PathBuf], json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut all = std::collections::BTreeSet::new();
    for p in paths {
        let raw = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
        let u = crate::xla_artifact::unwrap(&raw).with_context(|| format!("{}", p.display()))?;
        let c = crate::golden::census::census_of_bytes(&u.executable).with_context(|| {
            format!(
                "{}: the executable does not decode with this project's schema",
                p.display()
            )
        })?;
        all.extend(c);
    }
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "census": all }))?
        )?;
    } else {
        for c in &all {
            writeln!(out, "{c}")?;
        }
    }
    Ok(())
}

/// `aot census --support`: per artifact (any form), the runtime-support lines of
/// `support::lines` under its path.
pub fn support(paths: &[PathBuf], out: &mut dyn Write) -> anyhow::Result<()> {
    for p in paths {
        let raw = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
        let u = crate::xla_artifact::unwrap(&raw).with_context(|| format!("{}", p.display()))?;
        let exe = GpuExecutableProto::decode(u.executable.as_slice())
            .with_context(|| format!("{}: not a GpuExecutableProto", p.display()))?;
        let census = crate::golden::census::census_of_bytes(&u.executable).with_context(|| {
            format!(
                "{}: the executable does not decode with this project's schema",
                p.display()
            )
        })?;
        writeln!(out, "{}:", p.display())?;
        for line in crate::support::lines(&crate::support::support(&exe, &census)) {
            writeln!(out, "  {line}")?;
        }
    }
    Ok(())
}
