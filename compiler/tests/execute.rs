//! Execution semantics without the runtime: every corpus case is compiled for h100_sxm and run
//! by the test thunk interpreter (tests/common/interp.rs) on the `ptx` emulator; the outputs
//! must match the case's io file within the corpus tolerances.
mod common;

use hlo::io::{compare, IoCase, Tolerance};
use libtest_mimic::{Arguments, Failed, Trial};

/// Cases that do not run correctly yet, with the reason.
const KNOWN_FAILING: &[(&str, &str)] = &[];

fn check(case: &str) -> Result<(), Failed> {
    let dir = common::root().join("testdata/corpus/hlo");
    let text =
        std::fs::read_to_string(dir.join(format!("{case}.hlo"))).map_err(|e| e.to_string())?;
    let io = IoCase::read(&dir.join(format!("{case}.io.json"))).map_err(|e| e.to_string())?;
    let module = hlo::parse_module(&text).map_err(|e| e.to_string())?;
    let exe = compiler::compile(&module, &common::target("h100_sxm"), &common::options())
        .map_err(|e| e.to_string())?;
    let args: Vec<Vec<u8>> = io.inputs.iter().map(common::interp::to_bytes).collect();
    let sizes: Vec<usize> = io
        .outputs
        .iter()
        .map(|a| a.len() * (a.dtype().bit_width() / 8) as usize)
        .collect();
    let (outs, _) = common::interp::run(&exe, &args, &sizes)?;
    let mut errs = Vec::new();
    for (i, (bytes, want)) in outs.iter().zip(&io.outputs).enumerate() {
        let got = common::interp::from_bytes(want.dtype(), want.dims(), bytes);
        let c = compare(&got, want, Tolerance::for_dtype(want.dtype()));
        if !c.ok {
            errs.push(format!(
                "output {i}: {} mismatches, first {:?}, max abs err {}",
                c.mismatches, c.first, c.max_abs_err
            ));
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.join("\n").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let dir = common::root().join("testdata/corpus/hlo");
    let mut cases: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".io.json"))
                .map(str::to_owned)
        })
        .collect();
    cases.sort();
    let trials = cases
        .into_iter()
        .map(|case| {
            let known = KNOWN_FAILING.iter().find(|(c, _)| *c == case);
            let c = case.clone();
            let mut t = Trial::test(format!("execute::{case}"), move || check(&c));
            if let Some((_, why)) = known {
                t = t.with_ignored_flag(true).with_kind(format!("known: {why}"));
            }
            t
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
