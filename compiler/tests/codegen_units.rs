//! Unit tests per emitter: hand-written fused computations run on the PTX emulator and compared
//! with the reference evaluator (or with known values).
mod codegen_util;

use codegen_util::*;
use hlo::literal::{Array, Data};

fn module(text: &str) -> hlo::HloModule {
    hlo::parse_module(text).expect("test HLO parses")
}

/// Runs `text` on `inputs` (or random inputs) against the evaluator, and through ptxas.
fn check_text(text: &str, inputs: Option<Vec<Array>>) {
    let m = module(text);
    let inputs = inputs.unwrap_or_else(|| random_inputs(&m, 12345).expect("random inputs"));
    run_and_compare(&m, &inputs, None, &h100()).expect("matches the evaluator");
    for (t, gpu) in [(h100(), "sm_90"), (a100(), "sm_80")] {
        let plan = plan_entry(&m, &t).expect("plan");
        if !ptxas_plan(&plan, gpu).expect("ptxas accepts") {
            eprintln!("ptxas not found: skipping the ptxas check");
        }
    }
}

fn f32s(dims: Vec<usize>, v: Vec<f32>) -> Array {
    Array::new(dims, Data::F32(v)).expect("array")
}

#[test]
fn row_reduction_not_multiple_of_block() {
    let text = "HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e { x = f32[3,300] parameter(0)  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={1}, to_apply=add }";
    let x = f32s(vec![3, 300], (0..900).map(|i| (i % 7) as f32).collect());
    check_text(text, Some(vec![x]));
}
