//! Reference-evaluator corpus: every `testdata/corpus/hlo/NAME.hlo` (not `*.opt.hlo`, which
//! holds CPU custom calls) evaluated on `NAME.io.json`'s inputs must match its outputs within
//! the io tolerance. One test per case, named `eval::NAME`.
use std::path::{Path, PathBuf};

use hlo_eval::evaluate_flat;
use hlo_eval::{compare, IoCase, Tolerance};
use libtest_mimic::{Arguments, Failed, Trial};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/hlo")
}

fn run_case(hlo_path: &Path, io_path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(hlo_path).map_err(|e| format!("read: {e}"))?;
    let module = hlo_text::parse_module(&text).map_err(|e| format!("parse: {e}"))?;
    let case = IoCase::read(io_path).map_err(|e| format!("io file: {e}"))?;
    let got = evaluate_flat(&module, &case.inputs).map_err(|e| format!("evaluate: {e}"))?;
    if got.len() != case.outputs.len() {
        return Err(format!(
            "{} outputs computed, io file lists {}",
            got.len(),
            case.outputs.len()
        )
        .into());
    }
    let mut problems = Vec::new();
    for (i, (g, w)) in got.iter().zip(&case.outputs).enumerate() {
        let c = compare(g, w, Tolerance::for_dtype(w.dtype()));
        if !c.ok {
            match (&c.structural, &c.first) {
                (Some(s), _) => problems.push(format!("output {i}: {s}")),
                (None, Some(m)) => problems.push(format!(
                    "output {i} {}: {} mismatches, max abs err {:e}, first at {:?}: got {} want {}",
                    w.shape_string(),
                    c.mismatches,
                    c.max_abs_err,
                    m.index,
                    m.got,
                    m.want
                )),
                (None, None) => problems.push(format!("output {i}: mismatch")),
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// Case names: every `NAME.hlo` that is not `NAME.opt.hlo`, sorted.
fn trials_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.ends_with(".hlo") && !n.ends_with(".opt.hlo"))
                .map(|n| n.trim_end_matches(".hlo").to_string())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn main() {
    let args = Arguments::from_args();
    let dir = corpus_dir();
    let names = trials_names(&dir);
    let mut trials: Vec<Trial> = names
        .into_iter()
        .map(|name| {
            let hlo_path = dir.join(format!("{name}.hlo"));
            let io_path = dir.join(format!("{name}.io.json"));
            Trial::test(format!("eval::{name}"), move || {
                run_case(&hlo_path, &io_path)
            })
        })
        .collect();
    // XLA:CPU-optimized modules (fusions, bitcasts between layouts) must evaluate the same.
    let opt: Vec<Trial> = trials_names(&dir)
        .into_iter()
        .filter(|name| dir.join(format!("{name}.opt.hlo")).exists())
        .map(|name| {
            let hlo_path = dir.join(format!("{name}.opt.hlo"));
            let io_path = dir.join(format!("{name}.io.json"));
            Trial::test(format!("eval_opt::{name}"), move || {
                run_case(&hlo_path, &io_path)
            })
        })
        .collect();
    trials.extend(opt);
    // The corpus must not silently vanish.
    let count = trials.len();
    trials.push(Trial::test("eval::corpus_is_present", move || {
        if count >= 40 {
            Ok(())
        } else {
            Err(format!(
                "only {count} corpus cases found in {}",
                corpus_dir().display()
            )
            .into())
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
