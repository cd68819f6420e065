//! What the check-hlo test binaries (`aot_run`, `stablehlo_pipeline`, `models`) share: the
//! repository's paths and one `aot check-hlo` run judged as a trial.
use std::path::{Path, PathBuf};

use libtest_mimic::Failed;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A bundled target config, `testdata/target_specs/NAME.txtpb`.
pub fn spec(name: &str) -> PathBuf {
    root()
        .join("testdata/target_specs")
        .join(format!("{name}.txtpb"))
}

/// `aot check-hlo MODULE --io IO --target-config TARGET`: `Ok` when it exits 0; otherwise the
/// exit status or the error, with what the command printed.
pub fn check(module: &Path, io: &Path, target: &str) -> Result<(), Failed> {
    run_check(module, io, target, None)
}

/// `aot check-hlo`, optionally writing the computed outputs (`--write-outputs`).
fn run_check(
    module: &Path,
    io: &Path,
    target: &str,
    write_outputs: Option<PathBuf>,
) -> Result<(), Failed> {
    let args = harness::cmd::check::CheckArgs {
        module: module.to_owned(),
        io: vec![io.to_owned()],
        target_config: spec(target),
        no_command_buffers: false,
        write_outputs,
    };
    let mut out = Vec::new();
    let r = harness::cmd::check::run(&args, &mut out);
    let text = String::from_utf8_lossy(&out);
    match r {
        Ok(0) => Ok(()),
        Ok(c) => Err(format!("exit {c}:\n{text}").into()),
        Err(e) => Err(format!("error: {e:#}\n{text}").into()),
    }
}

/// `check`, then the outputs the run computed compared with the expected ones exactly (equal
/// values; NaN matches NaN): for expectations that are the correctly rounded truth, where the
/// default tolerance of a 16-bit type (a few units in the last place) would let a
/// wrongly-rounding kernel pass.
#[allow(dead_code)] // each test binary compiles this module; not all of them use every helper
pub fn check_exact(module: &Path, io: &Path, target: &str) -> Result<(), Failed> {
    let stem = module
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into());
    let written = std::env::temp_dir().join(format!(
        "aot-check-exact-{}-{target}-{stem}.io.json",
        std::process::id()
    ));
    run_check(module, io, target, Some(written.clone()))?;
    let got = hlo_eval::IoCase::read(&written);
    let _ = std::fs::remove_file(&written);
    let got = got.map_err(|e| format!("the written outputs: {e}"))?;
    let want = hlo_eval::IoCase::read(io).map_err(|e| format!("{}: {e}", io.display()))?;
    for (k, (g, w)) in got.outputs.iter().zip(&want.outputs).enumerate() {
        let c = hlo_eval::compare(g, w, hlo_eval::Tolerance::EXACT);
        if !c.ok {
            return Err(format!(
                "output {k}: {} of its elements differ from the rounded truth (first: {:?})",
                c.mismatches, c.first
            )
            .into());
        }
    }
    Ok(())
}
