//! `aot eval MODULE.hlo --io CASE.io.json`: evaluate an HLO module with the reference evaluator
//! and compare with the io file's outputs.
//!
//! Output: one verdict line per output leaf,
//! `output 0 f32[4,5]: OK max_abs_err=1.2e-7` or
//! `output 1 s32[6]: MISMATCH max_abs_err=3 mismatches=2 first=[4] got=7 want=4`,
//! then a summary line. Tolerances are [`hlo::io::Tolerance::for_dtype`].
use std::io::Write;
use std::path::Path;

use anyhow::Context;
use hlo::eval::evaluate_flat;
use hlo::io::IoCase;

/// Runs the check, printing a per-output verdict to `out`. `Ok(true)`: every output matches;
/// `Ok(false)`: at least one mismatch; `Err`: the inputs could not be evaluated at all.
pub fn run(module: &Path, io: &Path, out: &mut dyn Write) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(module)
        .with_context(|| format!("cannot read {}", module.display()))?;
    let m =
        hlo::parse_module(&text).with_context(|| format!("cannot parse {}", module.display()))?;
    let case = IoCase::read(io).with_context(|| format!("cannot load {}", io.display()))?;
    let got = evaluate_flat(&m, &case.inputs)
        .with_context(|| format!("cannot evaluate {}", module.display()))?;
    if got.len() != case.outputs.len() {
        anyhow::bail!(
            "the module produces {} outputs, {} lists {}",
            got.len(),
            io.display(),
            case.outputs.len()
        );
    }
    let matched = crate::run_cmd::report("", &got, &case.outputs, out)?;
    let all_ok = matched == got.len();
    writeln!(
        out,
        "{}: {matched} of {} outputs match",
        if all_ok { "OK" } else { "MISMATCH" },
        got.len()
    )?;
    Ok(all_ok)
}
