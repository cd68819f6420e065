//! The XLA test modules of testdata/corpus/xla_hlo whose instructions the compiler supports
//! compile for h100_sxm; the others are listed in [`UNSUPPORTED`] with the reason and show up
//! as ignored.
mod common;

use libtest_mimic::{Arguments, Failed, Trial};

/// Modules that use instructions the compiler does not support.
const UNSUPPORTED: &[(&str, &str)] = &[("cpu", "fft (no emitter), and XLA:CPU-only custom calls")];

fn check(path: &std::path::Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let module = hlo_text::parse_module(&text).map_err(|e| format!("parse: {e}"))?;
    let target = common::target("h100_sxm");
    let exe = compiler::compile(&module, &target, &common::options())
        .map_err(|e| format!("compile: {e}"))?;
    let errs = common::check_executable(&exe);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.join("\n").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let dir = common::root().join("testdata/corpus/xla_hlo");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("xla_hlo directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        .collect();
    files.sort();
    let trials = files
        .into_iter()
        .map(|path| {
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("?")
                .to_owned();
            let known = UNSUPPORTED.iter().find(|(c, _)| *c == name);
            let p = path.clone();
            let mut t = Trial::test(format!("xla_hlo::{name}"), move || check(&p));
            if let Some((_, reason)) = known {
                t = t
                    .with_ignored_flag(true)
                    .with_kind(format!("unsupported: {reason}"));
            }
            t
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
