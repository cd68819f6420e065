//! The golden suite: what the `cargo test` CI gate runs against `goldens/executables`.
//!
//! - `backward_compat::<target>::v<N>::<case>`: the exact bytes of an old artifact load in today's
//!   runtime and produce the recorded outputs bit for bit (and, single-replica, within tolerance of
//!   the reference evaluator). Boundary versions by default (the oldest and the second-newest);
//!   every version when `XLA_AOT_TEST_ALL_VERSIONS` is truthy.
//! - `golden_verification::<target>::<case>`: today's compiler reproduces the newest version.
//! - `forward_compat::<target>::<case>`: today's artifact is readable by the oldest schema
//!   snapshot that is at least 14 days old.
//! - `integrity::<target>::v<N>`: every version matches its manifest.
//! - `coverage::<target>`: every thunk kind and opcode today's compiler can emit appears in the
//!   newest version.
//! - `negative::*`: mutated goldens make the replay fail with a message that says what broke.
//!
//! Filters work as with any cargo test (`cargo test -p harness --test goldens -- backward_compat`);
//! `--list` shows every check. docs/goldens.md explains failures and regeneration.
use std::collections::BTreeSet;
use std::sync::Arc;

use harness::golden::replay::{self, GoldenCase, OldSchema};
use harness::golden::{all_versions_requested, select_versions, GoldenStore, ALL_VERSIONS_ENV};
use harness::goldens_cmd::GOLDEN_TARGETS;
use libtest_mimic::{Arguments, Failed, Trial};
use proto::prost::Message;
use proto::xla::gpu::{thunk_proto::Impl, GpuExecutableProto, ThunkProto};

fn fail(e: impl std::fmt::Display) -> Failed {
    Failed::from(e.to_string())
}

fn newest(store: &GoldenStore, target: &str) -> Result<u32, String> {
    store
        .versions(target)
        .map_err(|e| e.to_string())?
        .last()
        .copied()
        .ok_or_else(|| format!("no versions for {target}"))
}

fn cases_of(store: &GoldenStore, target: &str, version: u32) -> Vec<String> {
    replay::manifest(store, target, version)
        .map(|m| m.cases)
        .unwrap_or_default()
}

fn compile_today(golden: &GoldenCase) -> Result<GpuExecutableProto, Failed> {
    let text = std::fs::read_to_string(golden.dir.join(&golden.case).join("module.hlo"))?;
    let module = hlo::parse_module(&text).map_err(fail)?;
    let config = proto::parse_target_config(&golden.target_config, "target.txtpb").map_err(fail)?;
    let target = compiler::Target::from_config(config, "target.txtpb").map_err(fail)?;
    compiler::compile(&module, &target, &compiler::CompileOptions::default()).map_err(fail)
}

fn trials(store: &Arc<GoldenStore>, old_schema: &Arc<Result<OldSchema, String>>) -> Vec<Trial> {
    let all = all_versions_requested(std::env::var(ALL_VERSIONS_ENV).ok().as_deref());
    let mut out = Vec::new();
    for &target in GOLDEN_TARGETS {
        let versions = match store.versions(target) {
            Ok(v) => v,
            Err(e) => {
                let msg = e.to_string();
                out.push(Trial::test(format!("store::{target}"), move || {
                    Err(msg.into())
                }));
                continue;
            }
        };
        for &v in &versions {
            let s = store.clone();
            out.push(Trial::test(
                format!("integrity::{target}::v{v}"),
                move || replay::integrity(&s, target, v).map_err(fail),
            ));
        }
        for v in select_versions(&versions, all) {
            for case in cases_of(store, target, v) {
                let s = store.clone();
                out.push(Trial::test(
                    format!("backward_compat::{target}::v{v}::{case}"),
                    move || {
                        let golden = GoldenCase::read(&s, target, v, &case).map_err(fail)?;
                        replay::backward_compat(&golden).map_err(fail)
                    },
                ));
            }
        }
        let Some(&n) = versions.last() else { continue };
        for case in cases_of(store, target, n) {
            let s = store.clone();
            let c = case.clone();
            out.push(Trial::test(
                format!("golden_verification::{target}::{case}"),
                move || {
                    let golden = GoldenCase::read(&s, target, n, &c).map_err(fail)?;
                    replay::golden_verification(&golden).map_err(fail)
                },
            ));
            let s = store.clone();
            let schema = old_schema.clone();
            out.push(Trial::test(
                format!("forward_compat::{target}::{case}"),
                move || {
                    let golden = GoldenCase::read(&s, target, n, &case).map_err(fail)?;
                    let today = compile_today(&golden)?;
                    let old = schema.as_ref().as_ref().map_err(fail)?;
                    replay::forward_compat(&today, old).map_err(fail)
                },
            ));
        }
        let s = store.clone();
        out.push(Trial::test(format!("coverage::{target}"), move || {
            coverage(&s, target)
        }));
    }
    out.extend(negative_trials(store));
    out
}

/// Every thunk kind and HLO opcode today's compiler can emit must appear in the newest version
/// of the target: otherwise a change could break it and no golden would notice.
fn coverage(store: &GoldenStore, target: &str) -> Result<(), Failed> {
    let n = newest(store, target).map_err(fail)?;
    let manifest = replay::manifest(store, target, n).map_err(fail)?;
    let used: BTreeSet<&String> = manifest.census.values().flatten().collect();
    let mut missing = Vec::new();
    for kind in compiler::EMITTED_THUNK_KINDS {
        let construct = format!("xla.gpu.ThunkProto.{kind}");
        if !used.contains(&construct) {
            missing.push(construct);
        }
    }
    for opcode in compiler::supported_opcodes() {
        let construct = format!("opcode:{opcode}");
        if !used.contains(&construct) {
            missing.push(construct);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{target}/v{n} contains no case using {} construct(s) today's compiler can emit:\n  {}\n\
         Add a case that uses each (testdata/corpus/hlo or goldens/cases), then write a new \
         version: {}",
        missing.len(),
        missing.join("\n  "),
        replay::regen_command(target)
    )
    .into())
}

/// Mutations of the newest golden of the first target, each of which today's runtime must
/// refuse, with a message naming what broke and pointing at the compatibility guide.
fn negative_trials(store: &Arc<GoldenStore>) -> Vec<Trial> {
    type Mutate = fn(&mut GpuExecutableProto) -> bool;
    let cases: [(&str, &str, Mutate, &str); 3] = [
        (
            "unknown_thunk_kind",
            "softmax",
            |exe| match exe.thunks.first_mut() {
                Some(t) => {
                    // What a newer compiler's thunk looks like to this runtime: no known variant.
                    t.r#impl = None;
                    true
                }
                None => false,
            },
            "does not know that thunk kind",
        ),
        (
            "removed_field_data",
            "softmax",
            |exe| {
                first_kernel(&mut exe.thunks).is_some_and(|k| {
                    k.kernel_binary = None;
                    true
                })
            },
            "kernel_binary",
        ),
        (
            "renamed_custom_call_target",
            "custom_call_axpy",
            |exe| {
                let mut stack: Vec<&mut ThunkProto> = exe.thunks.iter_mut().collect();
                while let Some(t) = stack.pop() {
                    match &mut t.r#impl {
                        Some(Impl::CustomCallThunk(c)) => {
                            c.target_name = "__xla_saxpy_renamed".into();
                            return true;
                        }
                        Some(Impl::SequentialThunk(s)) => stack.extend(s.thunks.iter_mut()),
                        _ => {}
                    }
                }
                false
            },
            "__xla_saxpy_renamed",
        ),
    ];
    let Some(&target) = GOLDEN_TARGETS.first() else {
        return Vec::new();
    };
    cases
        .into_iter()
        .map(|(name, case, mutate, needle)| {
            let s = store.clone();
            Trial::test(format!("negative::{name}"), move || {
                let n = newest(&s, target).map_err(fail)?;
                let golden = GoldenCase::read(&s, target, n, case).map_err(fail)?;
                let mut exe: GpuExecutableProto =
                    proto::decode_limited(&golden.bytes, usize::MAX).map_err(fail)?;
                if !mutate(&mut exe) {
                    return Err(format!("{case} has nothing to mutate for {name}").into());
                }
                match replay::replay_bytes(&golden, &exe.encode_to_vec()) {
                    Ok(()) => Err(format!("the mutated {case} still replayed cleanly").into()),
                    Err(msg) if msg.contains(needle) && msg.contains(replay::COMPAT_GUIDE) => {
                        Ok(())
                    }
                    Err(msg) => Err(format!(
                        "the failure does not name `{needle}` and point at {}:\n{msg}",
                        replay::COMPAT_GUIDE
                    )
                    .into()),
                }
            })
        })
        .collect()
}

fn first_kernel(thunks: &mut [ThunkProto]) -> Option<&mut proto::xla::gpu::KernelThunkProto> {
    for t in thunks {
        match &mut t.r#impl {
            Some(Impl::KernelThunk(k)) => return Some(k),
            Some(Impl::SequentialThunk(s)) => {
                if let Some(k) = first_kernel(&mut s.thunks) {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

fn main() {
    let args = Arguments::from_args();
    let store = Arc::new(GoldenStore::in_repo());
    let snapshots = harness::golden::cases::repo_root().join("schema_history/snapshots");
    let old_schema = Arc::new(replay::old_schema(
        &snapshots,
        schema_history::Date::today(),
    ));
    libtest_mimic::run(&args, trials(&store, &old_schema)).exit();
}
