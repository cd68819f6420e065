//! The goldens and schema sections: the golden replay and verification wall time, and the schema
//! bot's diff next to protox's compile.
use std::time::{Duration, Instant};

use super::report::{Report, Section};
use super::stats::{best, ms, opt};
use super::Env;

pub(super) fn goldens(env: &Env, report: &mut Report) -> anyhow::Result<()> {
    use crate::golden::replay::{self, GoldenCase};
    use crate::golden::{select_versions, GoldenStore};
    let store = GoldenStore::new(env.root.join("goldens/executables"));
    let mut rows = Vec::new();
    let mut total = Duration::ZERO;
    for (mode, all) in [
        ("backward compat, boundary versions (default)", false),
        (
            "backward compat, every version (XLA_AOT_TEST_ALL_VERSIONS=1)",
            true,
        ),
    ] {
        let t = Instant::now();
        let (mut cases, mut failed) = (0, 0);
        for target in crate::cmd::goldens::GOLDEN_TARGETS {
            let versions = store.versions(target)?;
            for v in select_versions(&versions, all) {
                let names = replay::manifest(&store, target, v)
                    .map(|m| m.cases)
                    .map_err(|e| anyhow::anyhow!(e))?;
                for case in names {
                    cases += 1;
                    let ok = GoldenCase::read(&store, target, v, &case)
                        .and_then(|g| replay::backward_compat(&g));
                    if ok.is_err() {
                        failed += 1;
                    }
                }
            }
        }
        let dt = t.elapsed();
        if !all {
            total = dt;
        }
        rows.push(vec![
            mode.to_owned(),
            cases.to_string(),
            failed.to_string(),
            format!("{:.2}", dt.as_secs_f64()),
        ]);
    }
    let t = Instant::now();
    let (mut cases, mut failed) = (0, 0);
    for target in crate::cmd::goldens::GOLDEN_TARGETS {
        let versions = store.versions(target)?;
        let Some(&newest) = versions.last() else {
            continue;
        };
        let names = replay::manifest(&store, target, newest)
            .map(|m| m.cases)
            .map_err(|e| anyhow::anyhow!(e))?;
        for case in names {
            cases += 1;
            let ok = GoldenCase::read(&store, target, newest, &case)
                .and_then(|g| replay::golden_verification(&g));
            if ok.is_err() {
                failed += 1;
            }
        }
    }
    let verification = t.elapsed();
    rows.push(vec![
        "golden verification (today's compiler, newest version)".into(),
        cases.to_string(),
        failed.to_string(),
        format!("{:.2}", verification.as_secs_f64()),
    ]);
    report.sections.push(Section {
        title: "Golden suite".into(),
        note: "in this process, one case after another (cargo test runs them on every core)".into(),
        headers: ["suite", "cases", "failed", "wall s"]
            .map(String::from)
            .to_vec(),
        rows,
    });
    let secs = (total + verification).as_secs_f64();
    report.line(
        "golden suite wall time (default mode, replay + verification)",
        format!("{secs:.2} s"),
        "replays in seconds: ≤ 30 s",
        Some(secs <= 30.0),
    );
    Ok(())
}

pub(super) fn schema(env: &Env, report: &mut Report) -> anyhow::Result<()> {
    use super::emulator::process_cpu;
    use schema_history::{diff, DiffOptions, Repo, Revision, SchemaSpec};
    let reps = if env.quick { 1 } else { 5 };
    let spec = SchemaSpec::project();
    let repo = Repo::new(&env.root);
    let compile_once = || spec.compile(&repo, &Revision::WorkTree);
    let (compile, compiled) = best(reps, compile_once);
    compiled?;
    let opts = DiffOptions::project(
        &env.root,
        Revision::Git("HEAD".into()),
        Revision::WorkTree,
        schema_history::Date::today(),
    );
    let diff_once = || diff(&opts).map(|r| r.findings.len());
    let (d, result) = best(reps, diff_once);
    let findings = result?;
    // Process CPU time (every thread), per run: the diff's work is spread over threads that
    // hand results to each other, and on a loaded machine each hand-off waits for a core, so
    // its wall time grows with the load far more than the one-thread compile's. CPU time
    // counts the work. /proc's clock ticks are 10 ms, hence many runs (not in --quick).
    let cpu_per_run = |runs: usize, f: &dyn Fn() -> bool| {
        if env.quick {
            return None;
        }
        let before = process_cpu()?;
        let ok = (0..runs).all(|_| f());
        let after = process_cpu()?;
        ok.then(|| (after - before) / runs as f64)
    };
    let compile_cpu = cpu_per_run(200, &|| compile_once().is_ok());
    let diff_cpu = cpu_per_run(40, &|| diff_once().is_ok());
    let ratio = d.as_secs_f64() / compile.as_secs_f64();
    let cpu_ratio = compile_cpu
        .zip(diff_cpu)
        .filter(|(c, _)| *c > 0.0)
        .map(|(c, d)| d / c);
    let cpu_ms = |c: Option<f64>| opt(c.map(|c| c * 1e3), 2);
    report.sections.push(Section {
        title: "Schema bot".into(),
        note: format!(
            "the project's protos, HEAD against the working tree (wall: best of {reps}; CPU: process CPU time per run, all threads, over 200 compiles and 40 diffs)"
        ),
        headers: ["step", "wall ms", "CPU ms"].map(String::from).to_vec(),
        rows: vec![
            vec![
                "protox compile".into(),
                format!("{:.2}", ms(compile)),
                cpu_ms(compile_cpu),
            ],
            vec![
                format!("whole diff ({findings} findings)"),
                format!("{:.2}", ms(d)),
                cpu_ms(diff_cpu),
            ],
        ],
    });
    report.line(
        "schema diff ÷ protox compile",
        format!("{ratio:.2}×"),
        "≤ 2×",
        Some(ratio <= 2.0),
    );
    if let Some(cpu) = cpu_ratio {
        report.line(
            "schema diff ÷ protox compile, process CPU time",
            format!("{cpu:.2}×"),
            "≤ 2×",
            Some(cpu <= 2.0),
        );
    }
    Ok(())
}
