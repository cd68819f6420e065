//! StableHLO corpus: every `testdata/corpus/hlo/NAME.mlir` (JAX's StableHLO export of the same
//! function as `NAME.hlo`) is converted by the StableHLO front end and evaluated on
//! `NAME.io.json`'s inputs; it must match the io file's outputs within the io tolerance
//! (`mlir::NAME`) and what the `.hlo` twin computes on the same inputs (`twin::NAME`).
use std::path::{Path, PathBuf};

use hlo::eval::evaluate_flat;
use hlo::io::{compare, IoCase, Tolerance};
use hlo::literal::Array;
use libtest_mimic::{Arguments, Failed, Trial};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/hlo")
}

fn eval_mlir(name: &str) -> Result<(Vec<Array>, IoCase), Failed> {
    let dir = corpus_dir();
    let text = std::fs::read_to_string(dir.join(format!("{name}.mlir"))).map_err(|e| format!("read: {e}"))?;
    let module = hlo::stablehlo::parse_module(&text).map_err(|e| format!("{name}.mlir:{e}"))?;
    let case = IoCase::read(&dir.join(format!("{name}.io.json"))).map_err(|e| format!("io file: {e}"))?;
    let got = evaluate_flat(&module, &case.inputs).map_err(|e| format!("evaluate: {e}"))?;
    Ok((got, case))
}

fn check(got: &[Array], want: &[Array], what: &str) -> Result<(), Failed> {
    if got.len() != want.len() {
        return Err(format!("{} outputs computed, {what} has {}", got.len(), want.len()).into());
    }
    let mut problems = Vec::new();
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let c = compare(g, w, Tolerance::for_dtype(w.dtype()));
        if !c.ok {
            match (&c.structural, &c.first) {
                (Some(s), _) => problems.push(format!("output {i}: {s}")),
                (None, Some(m)) => problems.push(format!(
                    "output {i} {} vs {what}: {} mismatches, max abs err {:e}, first at {:?}: got {} want {}",
                    w.shape_string(),
                    c.mismatches,
                    c.max_abs_err,
                    m.index,
                    m.got,
                    m.want
                )),
                (None, None) => problems.push(format!("output {i}: mismatch with {what}")),
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn against_io(name: &str) -> Result<(), Failed> {
    let (got, case) = eval_mlir(name)?;
    check(&got, &case.outputs, "the io file")
}

fn against_twin(name: &str) -> Result<(), Failed> {
    let (got, case) = eval_mlir(name)?;
    let text = std::fs::read_to_string(corpus_dir().join(format!("{name}.hlo"))).map_err(|e| format!("read: {e}"))?;
    let twin = hlo::parse_module(&text).map_err(|e| format!("{name}.hlo:{e}"))?;
    let want = evaluate_flat(&twin, &case.inputs).map_err(|e| format!("evaluate {name}.hlo: {e}"))?;
    check(&got, &want, "the .hlo twin")
}

fn names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus_dir())
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter_map(|n| n.strip_suffix(".mlir").map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn main() {
    let args = Arguments::from_args();
    let names = names();
    let mut trials: Vec<Trial> = Vec::new();
    for name in &names {
        let n = name.clone();
        trials.push(Trial::test(format!("mlir::{name}"), move || against_io(&n)));
        let n = name.clone();
        trials.push(Trial::test(format!("twin::{name}"), move || against_twin(&n)));
    }
    let count = names.len();
    trials.push(Trial::test("mlir::corpus_is_present", move || {
        if count >= 43 {
            Ok(())
        } else {
            Err(format!("only {count} .mlir cases found in {}", corpus_dir().display()).into())
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
