//! Code generation over the corpus (libtest-mimic, one named test per case and instruction).
//!
//! - `whole::<case>`: the case's entry computation treated as one fused computation, run on the
//!   PTX emulator with the io file's inputs and compared with its outputs.
//! - `op::<case>::<instr>`: every instruction of the entry computation alone (operands turned
//!   into parameters), run on random inputs and compared with the reference evaluator.
//! - `ptxas::<case>`: every kernel of the above assembles with ptxas for sm_90 (h100) and sm_80
//!   (a100); ignored when ptxas is not found (set `PTXAS`).
//! - `determinism::<case>`: the same request twice gives identical PTX.
//!
//! Cases the code generator does not support (dot, while, conditional, ...) are listed as
//! ignored, with the reason as the test kind.
mod codegen_util;

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use codegen_util::*;
use hlo::{HloModule, Opcode};
use libtest_mimic::{Arguments, Failed, Trial};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/hlo")
}

/// The case with its calls inlined (the pipeline inlines calls before fusion).
fn load(case: &str) -> Result<HloModule> {
    let text = std::fs::read_to_string(corpus_dir().join(format!("{case}.hlo")))?;
    inline_calls(&hlo_text::parse_module(&text)?)
}

fn skip_op(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Parameter | Opcode::Constant | Opcode::Tuple | Opcode::GetTupleElement
    )
}

fn fail(e: anyhow::Error) -> Failed {
    format!("{e:#}").into()
}

fn whole(case: &str) -> Result<()> {
    let m = load(case)?;
    let io = hlo_eval::IoCase::read(&corpus_dir().join(format!("{case}.io.json")))?;
    run_and_compare(&m, &io.inputs, Some(&io.outputs), &h100())
}

fn single(case: &str, index: u32) -> Result<()> {
    let m = load(case)?;
    let s = single_op_module(&m, m.entry, hlo::InstrId(index))?;
    let inputs = random_inputs(&s, 0x9e37_79b9_7f4a_7c15 ^ u64::from(index))?;
    run_and_compare(&s, &inputs, None, &h100())
}

fn modules_of(case: &str) -> Result<Vec<HloModule>> {
    let m = load(case)?;
    let mut out = vec![m.clone()];
    for (id, i) in m.entry_computation().iter() {
        if !skip_op(i.opcode) {
            out.push(single_op_module(&m, m.entry, id)?);
        }
    }
    Ok(out)
}

fn ptxas_case(case: &str) -> Result<()> {
    let mut n = 0;
    for m in modules_of(case)? {
        for (target, gpu) in [(h100(), "sm_90"), (a100(), "sm_80")] {
            if let Ok(plan) = plan_entry(&m, &target) {
                if !ptxas_plan(&plan, gpu)? {
                    return Err(anyhow!("ptxas not found"));
                }
                n += 1;
            }
        }
    }
    if n == 0 {
        eprintln!("{case}: no supported computation to assemble");
    }
    Ok(())
}

fn determinism(case: &str) -> Result<()> {
    for m in modules_of(case)? {
        if let Ok(a) = plan_entry(&m, &h100()) {
            let b = plan_entry(&m, &h100())?;
            if a != b {
                return Err(anyhow!("two plans of the same request differ"));
            }
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let args = Arguments::from_args();
    let mut cases: Vec<String> = std::fs::read_dir(corpus_dir())?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".hlo") && !n.ends_with(".opt.hlo"))
        .map(|n| n.trim_end_matches(".hlo").to_string())
        .collect();
    cases.sort();
    let have_ptxas = ptx::ptxas::find().is_some();
    let mut trials = Vec::new();
    for case in &cases {
        let m = load(case)?;
        // Whole entry computation.
        let c = case.clone();
        let t = Trial::test(format!("whole::{case}"), move || whole(&c).map_err(fail));
        trials.push(match plan_entry(&m, &h100()) {
            Ok(_) => t,
            Err(e) => t.with_ignored_flag(true).with_kind(short(&e)),
        });
        // Single instructions.
        for (id, i) in m.entry_computation().iter() {
            if skip_op(i.opcode) {
                continue;
            }
            let c = case.clone();
            let idx = id.0;
            let t = Trial::test(format!("op::{case}::{}", i.name), move || {
                single(&c, idx).map_err(fail)
            });
            let s = single_op_module(&m, m.entry, id)?;
            trials.push(match plan_entry(&s, &h100()) {
                Ok(_) => t,
                Err(e) => t.with_ignored_flag(true).with_kind(short(&e)),
            });
        }
        let c = case.clone();
        let t = Trial::test(format!("ptxas::{case}"), move || {
            ptxas_case(&c).map_err(fail)
        });
        trials.push(if have_ptxas {
            t
        } else {
            t.with_ignored_flag(true).with_kind("ptxas not found")
        });
        let c = case.clone();
        trials.push(Trial::test(format!("determinism::{case}"), move || {
            determinism(&c).map_err(fail)
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}

fn short(e: &anyhow::Error) -> String {
    let s = format!("{e}");
    let s = s.rsplit(": ").next().unwrap_or(&s).to_string();
    s.chars().take(60).collect()
}
