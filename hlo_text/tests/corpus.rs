//! Corpus tests: every file under `testdata/corpus/{hlo,xla_hlo}` parses, prints, re-parses to
//! an equal module, prints identically the second time, and verifies clean; the JAX-exported
//! files (`hlo/`) also print back byte for byte.
//!
//! Each file is its own test (`cargo test -p hlo_text --test corpus -- attention.opt`). Failures
//! print a unified diff of the two printed texts (or of the two module dumps).

use std::path::{Path, PathBuf};

use hlo_text::{print_module, print_module_with, PrintOptions};
use libtest_mimic::{Arguments, Failed, Trial};

fn corpus_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus");
    let mut out = Vec::new();
    for dir in ["hlo", "xla_hlo"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|e| e == "hlo") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn diff(a: &str, b: &str, what: &str) -> String {
    let d = similar::TextDiff::from_lines(a, b);
    format!(
        "{what}\n{}",
        d.unified_diff().context_radius(3).header("first", "second")
    )
}

fn round_trip(path: &Path, opts: &PrintOptions) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let m1 = hlo_text::parse_module(&text).map_err(|e| format!("parse: {e}"))?;
    let p1 = print_module_with(&m1, opts);
    let m2 =
        hlo_text::parse_module(&p1).map_err(|e| format!("re-parse: {e}\n--- printed:\n{p1}"))?;
    if m1 != m2 {
        return Err(diff(
            &format!("{m1:#?}"),
            &format!("{m2:#?}"),
            "parse(print(m)) != m (module dumps differ):",
        )
        .into());
    }
    let p2 = print_module_with(&m2, opts);
    if p1 != p2 {
        return Err(diff(&p1, &p2, "print(parse(print(x))) != print(x):").into());
    }
    Ok(())
}

/// JAX-exported files print back byte for byte: `*.opt.hlo` in XLA's default style, the
/// unoptimized `*.hlo` in JAX's style.
fn identical(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let m = hlo_text::parse_module(&text).map_err(|e| format!("parse: {e}"))?;
    let opt = path.to_string_lossy().ends_with(".opt.hlo");
    let opts = if opt {
        PrintOptions::default()
    } else {
        PrintOptions::jax()
    };
    let printed = print_module_with(&m, &opts);
    if printed != text {
        return Err(diff(
            &text,
            &printed,
            "printed text differs from the file (the corpus file is the reference: fix the \
             printer, there is nothing to bless):",
        )
        .into());
    }
    Ok(())
}

fn verify(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let m = hlo_text::parse_module(&text).map_err(|e| format!("parse: {e}"))?;
    hlo_verify::verify(&m).map_err(|errs| {
        let lines: Vec<String> = errs.iter().map(ToString::to_string).collect();
        Failed::from(format!(
            "{} verifier error(s):\n{}\n--- printed:\n{}",
            errs.len(),
            lines.join("\n"),
            print_module(&m)
        ))
    })
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for p in corpus_files() {
        let dir = p
            .parent()
            .and_then(|d| d.file_name())
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = p
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = format!("{dir}/{file}");
        if dir == "hlo" {
            let d = p.clone();
            trials.push(Trial::test(format!("identical::{name}"), move || {
                identical(&d)
            }));
        }
        let (a, b, c) = (p.clone(), p.clone(), p);
        trials.push(Trial::test(format!("round_trip::{name}"), move || {
            round_trip(&a, &PrintOptions::default())
        }));
        trials.push(Trial::test(
            format!("round_trip_no_sigils::{name}"),
            move || round_trip(&b, &PrintOptions::without_sigils()),
        ));
        trials.push(Trial::test(format!("verify::{name}"), move || verify(&c)));
    }
    libtest_mimic::run(&args, trials).exit();
}
