//! `aot inspect ARTIFACT`: the executable in protobuf text format, with each kernel's PTX shown
//! as text (the text format would escape it into one line), followed by a summary: sizes, the
//! thunk tree, the buffer allocations and the kernels. Needs no device; does not validate (use
//! `aot run` for that). Exit 0, or 2 when the file does not decode.
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
    /// Serialized executable (`GpuExecutableProto`, protobuf binary).
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
            let c = g.gemm_config.clone().unwrap_or_default();
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
        Impl::ReplicaIdThunk(_) => "replica-id".into(),
        Impl::PartitionIdThunk(_) => "partition-id".into(),
        Impl::MemzeroThunk(_) => "memzero".into(),
        Impl::Memset32bitValueThunk(m) => format!("memset32 {:#x}", m.value),
        Impl::Memset8bitValueThunk(m) => format!("memset8 {:#x}", m.value),
        Impl::CustomCallThunk(c) => format!("custom-call {}", c.target_name),
        Impl::CustomKernelThunk(k) => format!(
            "custom-kernel {}",
            k.custom_kernel.as_ref().map_or("", |c| c.name.as_str())
        ),
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

/// Replaces each kernel's PTX by a reference to the module printed below, and an embedded cubin
/// (an ELF image, unreadable as text) by its size and SM.
fn strip_ptx(thunks: &mut [ThunkProto], modules: &BTreeMap<String, usize>) {
    for k in proto::kernel_thunks_mut(thunks) {
        if let Some(b) = k.kernel_binary.as_mut() {
            if let Some(i) = modules.get(&b.ptx) {
                b.ptx = format!("<PTX module {i}, printed below>");
            }
            if !b.cubin.is_empty() {
                let what = match ptx::ptxas::cubin_sm(&b.cubin) {
                    Ok(sm) => format!("sm_{sm}"),
                    Err(e) => format!("not a cubin: {e}"),
                };
                b.cubin =
                    format!("<cubin: {} bytes, {what}; not shown>", b.cubin.len()).into_bytes();
            }
        }
    }
}

/// Prints the inspection of `bytes`.
pub fn inspect(bytes: &[u8], summary_only: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let p = GpuExecutableProto::decode(bytes).context("not a GpuExecutableProto")?;
    let mut kernels = Vec::new();
    collect_kernels(&p.thunks, &mut kernels);
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
        writeln!(out, "{}", proto::to_text_format(&shown))?;
        for (i, ptx) in ordered.iter().enumerate() {
            writeln!(out, "# ---- PTX module {i} ({} bytes) ----", ptx.len())?;
            writeln!(out, "{}", ptx.trim_end())?;
        }
        writeln!(out)?;
    }
    let hlo_bytes = p
        .hlo_module_with_config
        .as_ref()
        .map_or(0, |h| h.encoded_len());
    let ptx_bytes: usize = ordered.iter().map(|s| s.len()).sum();
    writeln!(out, "# ---- summary ----")?;
    writeln!(out, "module: {}", p.module_name)?;
    writeln!(
        out,
        "sizes: artifact {} bytes, embedded HLO {hlo_bytes}, binary (constants) {}, PTX {ptx_bytes} in {} modules",
        bytes.len(),
        p.binary.len(),
        ordered.len()
    )?;
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
    writeln!(out, "kernels: {}", kernels.len())?;
    for (name, ptx) in &kernels {
        writeln!(
            out,
            "  {name} (PTX module {})",
            modules.get(*ptx).copied().unwrap_or(0)
        )?;
    }
    writeln!(out, "thunks:")?;
    tree(&p.thunks, 0, out)?;
    Ok(())
}

/// Runs `aot inspect`.
pub fn run(args: &InspectArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let bytes = std::fs::read(&args.artifact)
        .with_context(|| format!("cannot read {}", args.artifact.display()))?;
    inspect(&bytes, args.summary, out).with_context(|| format!("{}", args.artifact.display()))?;
    Ok(0)
}
