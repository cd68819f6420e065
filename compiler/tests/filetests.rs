//! Filetests of the HLO passes (cranelift's shape): each `filetests/<pass>/<case>.hlo` is an
//! input module, a `// after:` line, and the module as the pass `<pass>` alone leaves it (the
//! default printer's text), or `// error: <message>` for the exact error the pass must give.
//! Comment lines before the module say what the case is for.
//!
//! `BLESS=1 cargo test -p compiler --test filetests` rewrites every expectation with what the
//! pass does now (read the diff before committing it).
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

/// The line between the input and the expectation.
const SEPARATOR: &str = "// after:";
/// An expected error instead of a module.
const ERROR: &str = "// error: ";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests")
}

fn blessing() -> bool {
    std::env::var("BLESS").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// What the pass makes of the input: the printed module, or `// error: ...`.
fn outcome(pass: &str, input: &str) -> Result<String, Failed> {
    let run = compiler::PIPELINE
        .iter()
        .find(|(name, _)| *name == pass)
        .map(|(_, run)| *run)
        .ok_or_else(|| format!("no pass named {pass} (the directory names the pass)"))?;
    let mut module = hlo_text::parse_module(input).map_err(|e| format!("the input: {e}"))?;
    Ok(match run(&mut module) {
        Ok(()) => hlo_text::print_module(&module),
        Err(e) => format!("{ERROR}{e}\n"),
    })
}

fn check(pass: &str, path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let Some((input, expected)) = text.split_once(&format!("\n{SEPARATOR}\n")) else {
        return Err(format!("{}: no `{SEPARATOR}` line", path.display()).into());
    };
    let got = outcome(pass, input)?;
    if got == expected {
        return Ok(());
    }
    if blessing() {
        std::fs::write(path, format!("{input}\n{SEPARATOR}\n{got}"))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok(());
    }
    let diff = similar::TextDiff::from_lines(expected, got.as_str())
        .unified_diff()
        .header("expected", "after the pass")
        .to_string();
    Err(format!(
        "{} after {pass} differs from its expectation:\n{diff}\nIf the change is intended: BLESS=1 cargo test -p compiler --test filetests",
        path.display()
    )
    .into())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let mut passes: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("compiler/tests/filetests")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    passes.sort();
    for pass_dir in passes {
        let pass = pass_dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_owned();
        let mut cases: Vec<PathBuf> = std::fs::read_dir(&pass_dir)
            .expect("a pass directory")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
            .collect();
        cases.sort();
        for path in cases {
            let case = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("?")
                .to_owned();
            let pass = pass.clone();
            trials.push(Trial::test(format!("{pass}::{case}"), move || {
                check(&pass, &path)
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
