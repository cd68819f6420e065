//! Which constructs of an executable this runtime executes, which it executes only with the
//! kernels' PTX supplied (XLA:GPU's cubin-only kernels), and which it refuses, with the reason:
//! what `aot inspect` and `aot census --support` print. Read from the decoded proto and its
//! census without loading, so it needs no target config and lists every construct, not only
//! the first the loader would stop at.
use std::collections::BTreeMap;

use proto::stream_executor::kernel_loader_spec_proto::Payload;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::{GpuExecutableProto, ThunkProto};

/// What the runtime does with a construct.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Executed as loaded.
    Runs,
    /// Executed when its kernels' PTX is supplied (`aot run --kernel-ptx`,
    /// `runtime::load_with_kernel_ptx`): the emulated device runs PTX, not cubins.
    NeedsPtx,
    /// Refused at load, for the reason given.
    Refused(String),
}

impl Verdict {
    fn label(&self) -> &'static str {
        match self {
            Verdict::Runs => "runs",
            Verdict::NeedsPtx => "runs with its PTX supplied (aot run --kernel-ptx)",
            Verdict::Refused(_) => "refused",
        }
    }
}

/// Every construct of `p` (by name) with how often it occurs and its verdict. `census` is the
/// executable's census (it names the thunk kinds this schema does not declare).
pub fn support(
    p: &GpuExecutableProto,
    census: &std::collections::BTreeSet<String>,
) -> BTreeMap<String, (usize, Verdict)> {
    let mut out = BTreeMap::new();
    let registry = runtime::Registry::builtin();
    walk(&p.thunks, &registry, &mut out);
    for c in census {
        if let Some(n) = c.strip_prefix("unknown:xla.gpu.ThunkProto.") {
            let name = n
                .parse()
                .ok()
                .and_then(crate::xla_artifact::xla_thunk_kind)
                .map(|k| format!(" (XLA's {k})"))
                .unwrap_or_default();
            out.insert(
                format!("ThunkProto oneof field {n}{name}"),
                (
                    1,
                    Verdict::Refused("a thunk kind this runtime's schema does not declare".into()),
                ),
            );
        }
    }
    let allocs = p
        .buffer_allocations
        .as_ref()
        .map(|b| b.values.as_slice())
        .unwrap_or(&[]);
    let mut add = |name: &str, verdict: Verdict| {
        out.entry(name.to_owned()).or_insert((0, verdict)).0 += 1;
    };
    for a in allocs {
        if a.is_tuple {
            add("tuple-holding allocation (is_tuple)", Verdict::Runs);
        }
        if a.is_constant {
            add("constant allocation", Verdict::Runs);
        }
        if a.is_entry_computation_parameter {
            add("parameter allocation", Verdict::Runs);
        }
    }
    let tuples = p
        .output_info_map
        .iter()
        .filter(|e| e.output_info.is_some())
        .count()
        .saturating_sub(
            p.program_shape
                .as_ref()
                .and_then(|s| s.result.as_ref())
                .and_then(|r| hlo::shape_from_proto(r).ok())
                .map_or(0, |s| s.leaves().len()),
        );
    for _ in 0..tuples {
        add("result tuple index table (output_info_map)", Verdict::Runs);
    }
    out
}

fn walk(
    thunks: &[ThunkProto],
    registry: &runtime::Registry,
    out: &mut BTreeMap<String, (usize, Verdict)>,
) {
    for t in thunks {
        let (name, verdict) = classify(t, registry);
        out.entry(name).or_insert((0, verdict)).0 += 1;
        match &t.r#impl {
            Some(Impl::SequentialThunk(s)) => walk(&s.thunks, registry, out),
            Some(Impl::WhileThunk(w)) => {
                for s in [&w.condition_thunk_sequence, &w.body_thunk_sequence]
                    .into_iter()
                    .flatten()
                {
                    walk(&s.thunks, registry, out);
                }
            }
            Some(Impl::ConditionalThunk(c)) => {
                for b in &c.branch_thunks {
                    walk(&b.thunks, registry, out);
                }
            }
            _ => {}
        }
    }
}

fn classify(t: &ThunkProto, registry: &runtime::Registry) -> (String, Verdict) {
    let Some(imp) = &t.r#impl else {
        return (
            "thunk with no kind set".into(),
            Verdict::Refused("made by a newer compiler (the kind is named below when the census knows its number)".into()),
        );
    };
    let name = |s: &str| s.to_owned();
    match imp {
        Impl::CustomKernelThunk(k) => {
            let payload = k
                .custom_kernel
                .as_ref()
                .and_then(|c| c.kernel_spec.as_ref())
                .and_then(|s| s.payload.as_ref());
            match payload {
                Some(Payload::Cubin(_)) => {
                    (name("custom_kernel_thunk (cubin only)"), Verdict::NeedsPtx)
                }
                _ => (
                    name("custom_kernel_thunk (PTX, symbol or no code)"),
                    Verdict::Refused(
                        "custom kernels run only as launches of PTX supplied for their cubin"
                            .into(),
                    ),
                ),
            }
        }
        Impl::CustomCallThunk(c) => {
            let n = format!("custom_call_thunk {}", c.target_name);
            if registry.resolve(&c.target_name).is_some() {
                (n, Verdict::Runs)
            } else {
                (
                    n,
                    Verdict::Refused("no handler is registered for that target".into()),
                )
            }
        }
        Impl::AllToAllStartThunk(_) => (
            name("all_to_all_start_thunk"),
            Verdict::Refused("not executed by this runtime".into()),
        ),
        Impl::CollectivePermuteStartThunk(_) => (
            name("collective_permute_start_thunk"),
            Verdict::Refused("not executed by this runtime".into()),
        ),
        other => (kind_name(other).to_owned(), Verdict::Runs),
    }
}

/// The schema name of a thunk kind the runtime executes.
fn kind_name(imp: &Impl) -> &'static str {
    match imp {
        Impl::SequentialThunk(_) => "sequential_thunk",
        Impl::CopyThunk(_) => "copy_thunk",
        Impl::DeviceToDeviceCopyThunk(_) => "device_to_device_copy_thunk",
        Impl::ConditionalThunk(_) => "conditional_thunk",
        Impl::WhileThunk(_) => "while_thunk",
        Impl::KernelThunk(_) => "kernel_thunk (PTX)",
        Impl::GemmThunk(_) => "gemm_thunk",
        Impl::FftThunk(_) => "fft_thunk",
        Impl::ConvolutionThunk(_) => "convolution_thunk",
        Impl::ReplicaIdThunk(_) => "replica_id_thunk",
        Impl::PartitionIdThunk(_) => "partition_id_thunk",
        Impl::MemzeroThunk(_) => "memzero_thunk",
        Impl::Memset32bitValueThunk(_) => "memset32bit_value_thunk",
        Impl::Memset8bitValueThunk(_) => "memset8bit_value_thunk",
        Impl::AllGatherStartThunk(_) => "all_gather_start_thunk",
        Impl::AllReduceStartThunk(_) => "all_reduce_start_thunk",
        Impl::ReduceScatterThunk(_) => "reduce_scatter_thunk",
        Impl::CustomCallThunk(_) => "custom_call_thunk",
        Impl::CustomKernelThunk(_) => "custom_kernel_thunk",
        Impl::AllToAllStartThunk(_) => "all_to_all_start_thunk",
        Impl::CollectivePermuteStartThunk(_) => "collective_permute_start_thunk",
    }
}

/// The support lines `aot inspect` and `aot census --support` print: a count line, then one
/// line per construct (`  VERDICT  CONSTRUCT xN[: reason]`).
pub fn lines(support: &BTreeMap<String, (usize, Verdict)>) -> Vec<String> {
    let count = |f: fn(&Verdict) -> bool| support.values().filter(|(_, v)| f(v)).count();
    let mut out = vec![format!(
        "runtime support: {} constructs run, {} run with their PTX supplied, {} refused",
        count(|v| *v == Verdict::Runs),
        count(|v| *v == Verdict::NeedsPtx),
        count(|v| matches!(v, Verdict::Refused(_)))
    )];
    let mut rows: Vec<(&String, &(usize, Verdict))> = support.iter().collect();
    rows.sort_by(|a, b| (&a.1 .1, a.0).cmp(&(&b.1 .1, b.0)));
    for (name, (n, v)) in rows {
        let reason = match v {
            Verdict::Refused(r) => format!(": {r}"),
            _ => String::new(),
        };
        out.push(format!("  {}: {name} x{n}{reason}", v.label()));
    }
    out
}
