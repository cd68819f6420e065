//! XLA:GPU's own kernels (`testdata/xla_ptx/`, written by `tools/xla_artifacts/xla_ptx.py`) on
//! the emulator: which the parser or the emulator refuses today, exactly and with which typed
//! error, and that every kernel it accepts runs and matches its launch spec on both engines.
//!
//! The refusal list is the coverage report of XLA's PTX: an instruction added to the emulator
//! shrinks it, and this test then names the kernel that newly runs (and must match).
mod emu_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ptx::emu::LaunchOptions;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/xla_ptx")
}

/// Every case of the directory (a `CASE.ptx` file), sorted.
fn cases() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .expect("testdata/xla_ptx")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".ptx"))
                .map(String::from)
        })
        .collect();
    names.sort();
    names
}

/// Why a case is refused (`parse: ...` or `load: ...`, the typed error's message), or `None`
/// when the emulator accepts it.
fn refusal(dir: &Path, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(format!("{name}.ptx"))).expect("read PTX");
    let ast = match ptx::parse(&text) {
        Ok(ast) => ast,
        Err(e) => return Some(format!("parse: {e}")),
    };
    match ptx::emu::LoadedModule::load(&ast) {
        Ok(_) => None,
        Err(e) => Some(format!("load: {e}")),
    }
}

/// What the parser or the emulator refuses in XLA's kernels today, exactly: nothing since the
/// matrix instructions (`ldmatrix`, `mma.sync`, `cp.async`, `cvt.rna.tf32.f32`) were added. A
/// kernel added to `testdata/xla_ptx/` that uses something new shows up here (each entry is the
/// first refusal of its kernel: decoding stops there).
const REFUSED: &[(&str, &str)] = &[];

#[test]
fn the_refused_xla_kernels_are_exactly_todays() {
    let dir = dir();
    let got: BTreeMap<String, String> = cases()
        .iter()
        .filter_map(|n| refusal(&dir, n).map(|why| (n.clone(), why)))
        .collect();
    let want: BTreeMap<String, String> = REFUSED
        .iter()
        .map(|(n, why)| (n.to_string(), why.to_string()))
        .collect();
    assert_eq!(got, want, "refused XLA kernels (case -> error)");
    assert_eq!(cases().len(), 21, "the cases xla_ptx.py writes");
}

#[test]
fn every_accepted_xla_kernel_matches_on_both_engines() {
    let dir = dir();
    let mut failures = Vec::new();
    let mut ran = 0;
    for name in cases() {
        if refusal(&dir, &name).is_some() {
            continue;
        }
        let text = std::fs::read_to_string(dir.join(format!("{name}.ptx"))).expect("read PTX");
        let spec: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.launch.json"))).expect("read spec"),
        )
        .expect("launch spec JSON");
        let ast = ptx::parse(&text).expect("parsed above");
        for (reference, threads) in [(true, 1), (false, 4)] {
            let budget = LaunchOptions::default().instruction_budget;
            match emu_common::run_spec_engine(&ast, &spec, threads, budget, reference) {
                Ok((bad, stats)) if bad.is_empty() && stats.lane_instructions > 0 => ran += 1,
                Ok((bad, _)) => failures.push(format!(
                    "{name} (reference engine: {reference}): {} mismatches:\n{}",
                    bad.len(),
                    bad.join("\n")
                )),
                Err(e) => failures.push(format!("{name} (reference engine: {reference}): {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        ran,
        2 * (cases().len() - REFUSED.len()),
        "every accepted kernel ran on both engines"
    );
}
