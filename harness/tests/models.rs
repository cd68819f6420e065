//! Model pieces exported from JAX for the constructs real models use (`testdata/models/`, made
//! by `tools/jax_exports/models.py`): every `NAME.hlo` and `NAME.mlir` goes through `aot check-hlo`
//! on h100_sxm and a100_sxm_80 (compile, serialize, load in a fresh runtime, run on the emulated
//! device, compare with XLA:CPU's outputs in `NAME.io.json`), with default flags.
//!
//! `EXPECTED_TO_FAIL` names the cases not supported yet, each with the reason. Those trials still
//! run and must fail: a case that starts passing fails its trial until its entry is removed, so
//! the list never hides progress or a regression.
//!
//! `AOT_RUN_FILTER=substring` limits the trials (libtest-mimic's own filter works too).
use std::path::PathBuf;

mod common;
use common::{check, root};

use libtest_mimic::{Arguments, Failed, Trial};

/// Cases that do not match yet, with why. Remove an entry when its case passes.
const EXPECTED_TO_FAIL: &[(&str, &str)] = &[(
    "rng_bit_generator_algorithms",
    "rng-bit-generator is refused when read (no back end implements it)",
)];

fn models() -> PathBuf {
    root().join("testdata/models")
}

fn trial(name: &str, ext: &str, target: &str) -> Trial {
    let module = models().join(format!("{name}.{ext}"));
    let io = models().join(format!("{name}.io.json"));
    let expected_failure = EXPECTED_TO_FAIL
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, why)| *why);
    let t = target.to_owned();
    Trial::test(format!("{ext}::{target}::{name}"), move || {
        match (check(&module, &io, &t), expected_failure) {
            (Ok(()), None) => Ok(()),
            (Err(e), None) => Err(e),
            (Err(_), Some(_)) => Ok(()),
            (Ok(()), Some(why)) => Err(Failed::from(format!(
                "passes now: remove it from EXPECTED_TO_FAIL (listed as: {why})"
            ))),
        }
    })
}

fn main() {
    let args = Arguments::from_args();
    let filter = std::env::var("AOT_RUN_FILTER").unwrap_or_default();
    let mut names: Vec<String> = std::fs::read_dir(models())
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter_map(|n| n.strip_suffix(".io.json").map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let count = names.len();
    let mut trials = vec![Trial::test("models::present", move || {
        if count >= 23 {
            Ok(())
        } else {
            Err(format!("only {count} cases in testdata/models").into())
        }
    })];
    let unknown: Vec<&str> = EXPECTED_TO_FAIL
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !names.iter().any(|m| m == n))
        .collect();
    let unknown = unknown.join(", ");
    trials.push(Trial::test("models::expected_failures_exist", move || {
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(format!("EXPECTED_TO_FAIL names cases that do not exist: {unknown}").into())
        }
    }));
    for name in names.iter().filter(|n| n.contains(filter.as_str())) {
        for ext in ["hlo", "mlir"] {
            for target in ["h100_sxm", "a100_sxm_80"] {
                trials.push(trial(name, ext, target));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
