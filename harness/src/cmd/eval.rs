//! `aot eval MODULE.{hlo,mlir,pb} --io CASE.io.json`: evaluate a module (any format `hlo_front::read_module` reads) with the reference evaluator
//! and compare with the io file's outputs.
//!
//! Output: one verdict line per output leaf,
//! `output 0 f32[4,5]: OK max_abs_err=1.2e-7` or
//! `output 1 s32[6]: MISMATCH max_abs_err=3 mismatches=2 first=[4] got=7 want=4`,
//! then a summary line. Tolerances are [`hlo_eval::Tolerance::for_dtype`].
use std::io::Write;
use std::path::Path;

use anyhow::Context;
use hlo::Literal;
use hlo_eval::{evaluate_with, EvalOptions};

/// Iterations any one `while` loop may run before evaluation fails: a module whose loop never
/// ends is reported (exit 2), not waited on. Far above any loop the corpus runs (the largest runs
/// tens of iterations); the interpreter needs seconds for this many.
pub const MAX_WHILE_ITERATIONS: u64 = 10_000_000;

/// Runs the check, printing a per-output verdict to `out`. `Ok(true)`: every output matches;
/// `Ok(false)`: at least one mismatch; `Err`: the inputs could not be evaluated at all.
pub fn run(module: &Path, io: &Path, out: &mut dyn Write) -> anyhow::Result<bool> {
    run_with_while_limit(module, io, MAX_WHILE_ITERATIONS, out)
}

/// [`run`], also writing the evaluated outputs (with the inputs) to `write_outputs` as an io
/// file, match or not (`aot eval --write-outputs FILE`).
pub fn run_writing(
    module: &Path,
    io: &Path,
    write_outputs: Option<&Path>,
    out: &mut dyn Write,
) -> anyhow::Result<bool> {
    evaluate_and_compare(module, io, MAX_WHILE_ITERATIONS, write_outputs, out)
}

/// [`run`] with another bound on `while` iterations.
pub fn run_with_while_limit(
    module: &Path,
    io: &Path,
    max_while_iterations: u64,
    out: &mut dyn Write,
) -> anyhow::Result<bool> {
    evaluate_and_compare(module, io, max_while_iterations, None, out)
}

fn evaluate_and_compare(
    module: &Path,
    io: &Path,
    max_while_iterations: u64,
    write_outputs: Option<&Path>,
    out: &mut dyn Write,
) -> anyhow::Result<bool> {
    let m = hlo_front::read_module(module)?;
    let expected = hlo_eval::Expected::for_module(&m);
    let case = crate::npz::read_case(io, &expected)
        .with_context(|| format!("cannot load {}", io.display()))?;
    let args: Vec<Literal> = case.inputs.iter().cloned().map(Literal::Array).collect();
    let options = EvalOptions::with_while_limit(max_while_iterations);
    let got = evaluate_with(&m, &args, &options)
        .map(Literal::into_leaves)
        .with_context(|| format!("cannot evaluate {}", module.display()))?;
    if let Some(path) = write_outputs {
        crate::cmd::run::write_outputs(path, &case.inputs, &got)?;
    }
    if got.len() != case.outputs.len() {
        anyhow::bail!(
            "the module produces {} outputs, {} lists {}",
            got.len(),
            io.display(),
            case.outputs.len()
        );
    }
    let matched = crate::cmd::run::report(
        "",
        &got,
        &case.outputs,
        crate::cmd::run::ToleranceRule::PerDtype,
        out,
    )?;
    let all_ok = matched == got.len();
    writeln!(
        out,
        "{}: {matched} of {} outputs match",
        if all_ok { "OK" } else { "MISMATCH" },
        got.len()
    )?;
    Ok(all_ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_that_never_ends_is_an_error_not_a_hang() {
        let dir = std::env::temp_dir().join(format!("aot-eval-loop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let module = dir.join("forever.hlo");
        std::fs::write(
            &module,
            "HloModule forever\n\
             cond {\n  p = s32[] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n\
             body {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT n = s32[] add(p, one)\n}\n\
             ENTRY main {\n  x = s32[] parameter(0)\n  ROOT w = s32[] while(x), condition=cond, body=body\n}\n",
        )
        .unwrap();
        let io = dir.join("forever.io.json");
        std::fs::write(
            &io,
            r#"{"inputs": [{"dtype": "s32", "shape": [], "data": [0]}], "outputs": [{"dtype": "s32", "shape": [], "data": [0]}]}"#,
        )
        .unwrap();
        let err = run_with_while_limit(&module, &io, 1000, &mut Vec::new()).unwrap_err();
        assert!(format!("{err:#}").contains("while"), "{err:#}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
