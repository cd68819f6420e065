//! Structure-aware mutation testing at CI size (`harness::fuzz`): for each entry point that
//! reads untrusted input, thousands of mutated seeds must each give a typed error or a result,
//! never a panic, a hang (the watchdog ends the process and prints the case seed) or an
//! allocation over the limit (the counting allocator below refuses it and prints the case seed).
//!
//! `XLA_AOT_FUZZ_CASES=N` runs N cases per target instead of the CI sizes; `aot fuzz` runs the
//! same engine for long runs.
use std::process::ExitCode;

use harness::fuzz::{self, alloc::CountingAlloc, Limits, Seeds, Target};
use libtest_mimic::{Arguments, Failed, Trial};

#[global_allocator]
static GLOBAL: CountingAlloc<std::alloc::System> = CountingAlloc(std::alloc::System);

/// Cases per target in CI, sized so that the whole suite takes well under a minute on one core
/// of a debug build (the loader's cases load and often execute a whole artifact, hence fewer).
fn ci_cases(target: Target) -> u64 {
    match target {
        Target::Loader => 2_000,
        Target::Hlo | Target::Ptx => 8_000,
        Target::Stablehlo => 10_000,
        Target::Config => 4_000,
        Target::Mlirbc | Target::JaxExported => 4_000,
        // Loads and runs whole artifacts, as the loader's cases do.
        Target::Artifact | Target::KernelPtx => 500,
        // protox compiles each file twice (a debug build: up to a second for 400 fields).
        Target::Proto => 150,
        // A store copied, tampered with and verified per case: file system work.
        Target::Store => 200,
    }
}

fn fuzz_target(target: Target) -> Result<(), Failed> {
    if !fuzz::alloc::installed() {
        return Err("the counting allocator is not this binary's global allocator".into());
    }
    let cases = match std::env::var("XLA_AOT_FUZZ_CASES") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("XLA_AOT_FUZZ_CASES={v:?} is not a number"))?,
        Err(_) => ci_cases(target),
    };
    let seeds = Seeds::load(target, &fuzz::repo_root()).map_err(|e| format!("{e:#}"))?;
    // A fixed seed per target: CI runs the same cases every time, so a failure reproduces.
    let seed = 0x5eed_0000 + target as u64 * 1_000_000_007;
    let report = fuzz::run(&seeds, cases, seed, &Limits::default(), |_| {});
    let text = report.render(target);
    println!("{text}");
    if !report.findings.is_empty() {
        return Err(format!("{} panics:\n{text}", report.findings.len()).into());
    }
    // A mutator that only ever produced rejected (or only accepted) inputs would test nothing
    // past the first check: both must occur, and more than one kind of error.
    let ok = report.outcomes.get("ok").copied().unwrap_or(0);
    let errors = report.cases - ok;
    let error_classes = report.outcomes.keys().filter(|k| *k != "ok").count();
    if ok == 0 || errors == 0 || error_classes < 2 {
        return Err(format!(
            "the mutations did not exercise {}: {ok} accepted, {errors} refused in {error_classes} classes\n{text}",
            target.name()
        )
        .into());
    }
    Ok(())
}

/// Every loader seed (each golden artifact), unmutated, loads and runs to the end under the
/// engine's default limits: limits so tight that a seed fails would leave its mutations testing
/// only the limit. (The text targets have no limits to outgrow, and some of their seeds are
/// refused by design: non-CUDA target configs, StableHLO with collectives.)
fn seeds_pass(target: Target) -> Result<(), Failed> {
    let seeds = Seeds::load(target, &fuzz::repo_root()).map_err(|e| format!("{e:#}"))?;
    let limits = Limits::default();
    let mut failed = Vec::new();
    for i in 0..seeds.len() {
        match seeds.run_seed(i, &limits) {
            Some(fuzz::Outcome::Ok) => {}
            other => failed.push(format!("{}: {other:?}", seeds.name(i).unwrap_or("?"))),
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {} {} seeds are not accepted under {}:\n{}",
            failed.len(),
            seeds.len(),
            target.name(),
            limits.describe(),
            failed.join("\n")
        )
        .into())
    }
}

fn main() -> ExitCode {
    let mut args = Arguments::from_args();
    // One case at a time: the allocator's peak and the watchdog's clock are per process.
    args.test_threads = Some(1);
    let trials = Target::ALL
        .iter()
        .map(|&t| Trial::test(format!("fuzz::{}", t.name()), move || fuzz_target(t)))
        .chain(std::iter::once(Trial::test("seeds::loader", || {
            seeds_pass(Target::Loader)
        })))
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}
