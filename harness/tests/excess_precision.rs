//! `--xla_allow_excess_precision` (`CompileOptions::allow_excess_precision`,
//! `EvalOptions::allow_excess_precision`) against XLA:CPU in both settings, on the bf16
//! transformer block: with the flag on (the default) the evaluator gives XLA's default outputs
//! bit for bit and the compiled executable matches them on both targets; with it off both give
//! XLA's strict outputs (`testdata/precision/`, from `tools/jax_exports/strict_precision.py`),
//! and each setting's results do not match the other setting's reference, so neither test can
//! pass by accident.
use std::path::{Path, PathBuf};

use hlo::Literal;
use hlo_eval::IoCase;
use hlo_eval::{evaluate_with, EvalOptions};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn module() -> hlo::HloModule {
    hlo_front::read_module(&root().join("testdata/models/transformer_block_bf16.hlo")).unwrap()
}

fn default_io() -> PathBuf {
    root().join("testdata/models/transformer_block_bf16.io.json")
}

fn strict_io() -> PathBuf {
    root().join("testdata/precision/transformer_block_bf16.strict.io.json")
}

fn eval(allow: bool) -> Vec<hlo::Array> {
    let case = IoCase::read(&default_io()).unwrap();
    let args: Vec<Literal> = case.inputs.into_iter().map(Literal::Array).collect();
    evaluate_with(
        &module(),
        &args,
        &EvalOptions::default().excess_precision(allow),
    )
    .unwrap()
    .into_leaves()
}

#[test]
fn the_evaluator_matches_xla_bit_for_bit_in_both_settings() {
    let xla_default = IoCase::read(&default_io()).unwrap().outputs;
    let xla_strict = IoCase::read(&strict_io()).unwrap().outputs;
    assert_ne!(xla_default, xla_strict, "the two references must differ");
    assert!(EvalOptions::default().allow_excess_precision);
    assert_eq!(eval(true), xla_default);
    assert_eq!(eval(false), xla_strict);
}

/// Compiles with the flag set, runs on the emulated device and compares with `io` (the
/// corpus tolerance); true when every output matches.
fn compiled_matches(allow: bool, target: &str, io: &Path) -> bool {
    let spec = root()
        .join("testdata/target_specs")
        .join(format!("{target}.txtpb"));
    let t = compiler::Target::load(&spec).unwrap();
    let mut options = compiler::CompileOptions::default();
    options.allow_excess_precision = allow;
    let bytes = compiler::compile_to_bytes(&module(), &t, &options).unwrap();
    let mut out = Vec::new();
    harness::cmd::run::load_run_compare(
        &bytes,
        "emulated",
        &harness::cmd::run::target_description(&spec).unwrap(),
        &[io.to_owned()],
        harness::cmd::run::DeviceCounts::default(),
        &runtime::RuntimeFlags::default(),
        harness::cmd::run::RunReport::default(),
        None,
        None,
        &mut out,
    )
    .unwrap()
}

#[test]
fn compiled_executables_match_xla_in_both_settings() {
    assert!(compiler::CompileOptions::default().allow_excess_precision);
    for target in ["h100_sxm", "a100_sxm_80"] {
        assert!(
            compiled_matches(true, target, &default_io()),
            "{target}: on"
        );
        assert!(
            !compiled_matches(true, target, &strict_io()),
            "{target}: on vs strict"
        );
        assert!(
            compiled_matches(false, target, &strict_io()),
            "{target}: off"
        );
        assert!(
            !compiled_matches(false, target, &default_io()),
            "{target}: off vs default"
        );
    }
}
