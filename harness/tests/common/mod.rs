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
    let args = harness::check_cmd::CheckArgs {
        module: module.to_owned(),
        io: vec![io.to_owned()],
        target_config: spec(target),
        no_command_buffers: false,
        write_outputs: None,
    };
    let mut out = Vec::new();
    let r = harness::check_cmd::run(&args, &mut out);
    let text = String::from_utf8_lossy(&out);
    match r {
        Ok(0) => Ok(()),
        Ok(c) => Err(format!("exit {c}:\n{text}").into()),
        Err(e) => Err(format!("error: {e:#}\n{text}").into()),
    }
}
