//! `aot demo`: the whole pipeline on the bundled cases, with no arguments.
//!
//! For every bundled case (the JAX corpus and the golden cases) it compiles the module for the
//! bundled h100_sxm target, hands only the bytes to a fresh runtime (as a serving host would),
//! executes on an emulated device built from the same target config, checks the outputs against
//! the reference evaluator (or, for multi-replica cases, the hand-checked expected values), then
//! replays the golden suite in boundary mode, and prints a summary table.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use hlo_eval::IoCase;
use proto::xla::gpu::{thunk_proto::Impl, GpuExecutableProto, ThunkProto};

use crate::cmd::goldens::{target_config_path, GOLDEN_TARGETS};
use crate::golden::cases::{curated_cases, Case};
use crate::golden::regen::run_artifact;
use crate::golden::replay::{self, GoldenCase};
use crate::golden::{select_versions, GoldenStore};

/// Arguments of `aot demo` (all optional).
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Target config to compile for and emulate (default: the bundled h100_sxm).
    #[arg(long)]
    pub target_config: Option<PathBuf>,
    /// Only cases whose name contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// Skip the golden replay.
    #[arg(long)]
    pub no_goldens: bool,
}

struct Row {
    case: String,
    kernels: usize,
    thunks: usize,
    bytes: usize,
    compile_ms: f64,
    load_run_ms: f64,
    result: String,
    ok: bool,
}

fn count_thunks(thunks: &[ThunkProto], kernels: &mut usize, total: &mut usize) {
    for t in thunks {
        *total += 1;
        match &t.r#impl {
            Some(Impl::KernelThunk(_)) => *kernels += 1,
            Some(Impl::SequentialThunk(s)) => count_thunks(&s.thunks, kernels, total),
            Some(Impl::WhileThunk(w)) => {
                for seq in [&w.condition_thunk_sequence, &w.body_thunk_sequence]
                    .into_iter()
                    .flatten()
                {
                    count_thunks(&seq.thunks, kernels, total);
                }
            }
            Some(Impl::ConditionalThunk(c)) => {
                for seq in &c.branch_thunks {
                    count_thunks(&seq.thunks, kernels, total);
                }
            }
            _ => {}
        }
    }
}

fn demo_case(case: &Case, config: &Path) -> anyhow::Result<Row> {
    let module = hlo_front::read_module(&case.module)?;
    let target = compiler::Target::load(config)?;
    let t0 = Instant::now();
    let exe = compiler::compile(&module, &target, &compiler::CompileOptions::default())?;
    let bytes = proto::prost::Message::encode_to_vec(&exe);
    let compile_ms = t0.elapsed().as_secs_f64() * 1e3;
    drop(exe);
    let (mut kernels, mut thunks) = (0, 0);
    let decoded: GpuExecutableProto = proto::decode_limited(&bytes, usize::MAX)?;
    count_thunks(&decoded.thunks, &mut kernels, &mut thunks);

    let expected = case
        .io
        .iter()
        .map(|p| IoCase::read(p).with_context(|| p.display().to_string()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let description =
        runtime::DeviceDescription::from_target_config(&proto::load_target_config(config)?)?;
    let t1 = Instant::now();
    let produced = run_artifact(&bytes, &description, &expected)?;
    let load_run_ms = t1.elapsed().as_secs_f64() * 1e3;

    // The oracle: the reference evaluator for single-replica cases; the hand-checked values of
    // the io files for multi-replica and custom-call ones (no replicas, no registry there).
    let single = match expected.as_slice() {
        [one] if replay::evaluator_applies(&module) => Some(one),
        _ => None,
    };
    let oracle: Vec<Vec<hlo::Array>> = if let Some(single) = single {
        vec![hlo_eval::evaluate_flat(&module, &single.inputs)
            .map_err(|e| anyhow::anyhow!("reference evaluator: {e}"))?]
    } else {
        expected.iter().map(|c| c.outputs.clone()).collect()
    };
    let mut sink = Vec::new();
    let mut matched = 0;
    let mut total = 0;
    for (got, want) in produced.iter().zip(&oracle) {
        matched += crate::cmd::run::report(
            "",
            &got.outputs,
            want,
            crate::cmd::run::ToleranceRule::PerDtype,
            &mut sink,
        )?;
        total += want.len();
    }
    let ok = matched == total;
    let result = if ok {
        if case.replicas() > 1 {
            format!("OK ({} replicas, vs hand-checked values)", case.replicas())
        } else if single.is_none() {
            "OK (vs hand-checked values)".to_owned()
        } else {
            "OK".to_owned()
        }
    } else {
        format!("MISMATCH {matched}/{total}")
    };
    Ok(Row {
        case: case.name.clone(),
        kernels,
        thunks,
        bytes: bytes.len(),
        compile_ms,
        load_run_ms,
        result,
        ok,
    })
}

/// Runs the demo; exit code 0 when everything matched.
pub fn run(args: &DemoArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let config = args
        .target_config
        .clone()
        .unwrap_or_else(|| target_config_path("h100_sxm"));
    let cases: Vec<Case> = curated_cases()
        .map_err(anyhow::Error::msg)?
        .into_iter()
        .filter(|c| args.filter.as_deref().is_none_or(|f| c.name.contains(f)))
        .collect();
    writeln!(
        out,
        "Compiling {} bundled cases for {}, loading each artifact in a fresh runtime on an \
         emulated device, checking against the reference evaluator.\n",
        cases.len(),
        config.display()
    )?;
    writeln!(
        out,
        "{:<24} {:>7} {:>6} {:>9} {:>10} {:>11}  result",
        "case", "kernels", "thunks", "bytes", "compile ms", "load+run ms"
    )?;
    let mut failures = 0;
    for case in &cases {
        match demo_case(case, &config) {
            Ok(r) => {
                failures += usize::from(!r.ok);
                writeln!(
                    out,
                    "{:<24} {:>7} {:>6} {:>9} {:>10.1} {:>11.1}  {}",
                    r.case, r.kernels, r.thunks, r.bytes, r.compile_ms, r.load_run_ms, r.result
                )?;
            }
            Err(e) => {
                failures += 1;
                writeln!(out, "{:<24} ERROR {e:#}", case.name)?;
            }
        }
    }
    writeln!(out)?;
    let case_failures = failures;
    let mut golden_summary = String::from("golden replay skipped");
    if !args.no_goldens {
        let store = GoldenStore::in_repo();
        let (mut pass, mut fail) = (0usize, 0usize);
        let mut lines = Vec::new();
        for &target in GOLDEN_TARGETS {
            let versions = match store.versions(target) {
                Ok(v) => v,
                Err(e) => {
                    fail += 1;
                    lines.push(format!("  {e}"));
                    continue;
                }
            };
            for v in select_versions(&versions, false) {
                let names = replay::manifest(&store, target, v)
                    .map(|m| m.cases)
                    .unwrap_or_default();
                let (mut p, mut f) = (0usize, 0usize);
                for name in names {
                    let result = GoldenCase::read(&store, target, v, &name)
                        .and_then(|g| replay::backward_compat(&g));
                    match result {
                        Ok(()) => p += 1,
                        Err(e) => {
                            f += 1;
                            lines.push(format!(
                                "  {target}/v{v}/{name}: {}",
                                e.to_string().lines().next().unwrap_or("")
                            ));
                        }
                    }
                }
                lines.insert(0, format!("  {target} v{v}: {p} passed, {f} failed"));
                pass += p;
                fail += f;
            }
        }
        writeln!(out, "Golden replay (boundary versions) in today's runtime:")?;
        for l in &lines {
            writeln!(out, "{l}")?;
        }
        failures += fail;
        golden_summary = format!("golden replay {pass} passed, {fail} failed");
    }
    writeln!(
        out,
        "\n{}: {} of {} cases match; {golden_summary}",
        if failures == 0 { "OK" } else { "FAILED" },
        cases.len().saturating_sub(case_failures),
        cases.len()
    )?;
    Ok(u8::from(failures > 0))
}
