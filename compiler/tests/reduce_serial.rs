//! Reductions with one thread per result element (`kernels::reduce_serial`): which shapes take
//! it, and that they compute what the evaluator computes (with ptxas checking the PTX when it
//! is on the machine). A block per result element stays for long reductions with few results.
mod codegen_util;

use codegen_util::*;

const ADD: &str = "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }";

fn sum_module(in_dims: &str, out_dims: &str, dims: &str) -> hlo::HloModule {
    let text = format!(
        "HloModule m\n{ADD}\nENTRY e {{ x = f32[{in_dims}] parameter(0)  z = f32[] constant(0)\n  ROOT r = f32[{out_dims}] reduce(x, z), dimensions={{{dims}}}, to_apply=add }}"
    );
    hlo_text::parse_module(&text).expect("test HLO parses")
}

/// The single kernel's launch: (blocks, threads per block).
fn launch(m: &hlo::HloModule) -> (u32, u32) {
    let plan = plan_entry(m, &h100()).expect("plan");
    assert_eq!(plan.kernels.len(), 1);
    let l = &plan.kernels[0].launch;
    (l.grid[0], l.block[0])
}

/// Runs `m` on random inputs against the evaluator and, where ptxas is found, assembles it.
fn matches_evaluator(m: &hlo::HloModule) {
    let inputs = random_inputs(m, 7).expect("random inputs");
    run_and_compare(m, &inputs, None, &h100()).expect("matches the evaluator");
    let plan = plan_entry(m, &h100()).expect("plan");
    let _ = ptxas_plan(&plan, "sm_90").expect("ptxas accepts");
}

#[test]
fn a_column_reduction_with_many_columns_is_a_thread_per_column() {
    let m = sum_module("40,1000", "1000", "0");
    // 1000 results of 256-thread blocks: 4 blocks, not one per column.
    assert_eq!(launch(&m), (4, 256));
    matches_evaluator(&m);
}

#[test]
fn a_short_row_reduction_is_a_thread_per_row() {
    let m = sum_module("3000,4", "3000", "1");
    assert_eq!(launch(&m), (12, 256));
    matches_evaluator(&m);
}

#[test]
fn a_reduction_over_middle_and_major_dimensions_with_few_elements_is_serial() {
    let m = sum_module("2,3,4,50", "4,50", "0,1");
    assert_eq!(launch(&m).1, 256);
    matches_evaluator(&m);
}

#[test]
fn long_reductions_with_few_results_keep_a_block_per_result() {
    // A long row: one block per row.
    let rows = sum_module("4,5000", "4", "1");
    assert_eq!(launch(&rows).0, 4);
    matches_evaluator(&rows);
    // A long column with few columns: one block per column (4 results < 8 x 5000).
    let cols = sum_module("5000,4", "4", "0");
    assert_eq!(launch(&cols).0, 4);
    matches_evaluator(&cols);
}

#[test]
fn a_variadic_reduction_gives_each_output_its_component() {
    // argmax over 6 rows of each of 300 columns: (value, index) pairs, ties to the lower index.
    let text = "HloModule m
argmax { av = f32[] parameter(0)  ai = s32[] parameter(1)  bv = f32[] parameter(2)  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i) }
ENTRY e { x = f32[6,300] parameter(0)  ix = s32[6,300] iota(), iota_dimension=0
  ninf = f32[] constant(-inf)  zero = s32[] constant(0)
  ROOT r = (f32[300], s32[300]) reduce(x, ix, ninf, zero), dimensions={0}, to_apply=argmax }";
    let m = hlo_text::parse_module(text).expect("test HLO parses");
    assert_eq!(launch(&m), (2, 256));
    matches_evaluator(&m);
}
