//! XLA:GPU's own kernels (`testdata/xla_ptx/`) end to end against this project's HLO evaluator:
//! each kernel runs on the emulator (both engines) with inputs from a formula, and its output
//! must match the `hlo` evaluator's result for the optimized module XLA dumped with it
//! (`CASE.hlo`, whose ROOT is the fusion the kernel implements).
//!
//! The formula's values are multiples of 1/8 below 2 in magnitude, exact in f16, bf16 and tf32,
//! so the tf32 gemm's `cvt.rna.tf32.f32` is exact and the f32 evaluator computes what the tensor
//! cores do: every product and every partial sum of the gemms, the reductions and the
//! elementwise adds is exact in any order, and those kernels must match bit for bit. The
//! kernels with transcendental functions (`ex2.approx`, `tanh`/`sin` expansions) get the corpus
//! f32 tolerance, the f16 kernel the f16 one (`hlo_eval::Tolerance::for_dtype`). The launch specs' own expectations (XLA:CPU's
//! outputs, the numpy tf32/bf16 references) are checked by the `ptx` crate's `emu_xla` test.
use std::path::PathBuf;

use hlo_eval::{array_to_json, parse_array, Tolerance};
use ptx::emu::{LaunchOptions, LoadedModule};
use ptx::LaunchSpec;
use serde_json::{json, Value};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/xla_ptx")
}

/// The tolerance each case is held to (see the module docs for why).
fn tolerance(case: &str) -> Option<Tolerance> {
    match case {
        // Exact values, exact arithmetic: IEEE adds, compares, max, data movement, and sums
        // and products of multiples of 1/8 (at most 18 significant bits, so every partial sum
        // is exact in f32 whatever the order).
        "add"
        | "clamp"
        | "compare_select"
        | "cumsum"
        | "dynamic_slice"
        | "large_reduce"
        | "matvec"
        | "matmul_tf32"
        | "bf16_matmul"
        | "bf16_matmul_pipelined"
        | "pad_reverse"
        | "reduce_max_all"
        | "reduce_sum"
        | "relu_broadcast"
        | "slice_concat" => Some(Tolerance::EXACT),
        "f16_elementwise" => Some(Tolerance::for_dtype(hlo::DType::F16)),
        // Transcendentals (`ex2.approx`, XLA's tanh/sin/cos/rsqrt expansions) and divisions.
        "softmax" | "layernorm" | "sigmoid" | "trig" | "elementwise_chain" => {
            Some(Tolerance::for_dtype(hlo::DType::F32))
        }
        _ => None,
    }
}

/// Input `p`, element `i`: a multiple of 1/8 in [-1.375, 1.375], varied in both; for an
/// integer parameter (an index), an integer in 0..5.
fn formula(p: usize, i: usize, integer: bool) -> f64 {
    if integer {
        ((i * 7 + p * 3) % 5) as f64
    } else {
        ((i * 37 + p * 11) % 23) as f64 / 8.0 - 1.375
    }
}

fn run_case(case: &str) -> Result<(), String> {
    let dir = dir();
    let read = |ext: &str| {
        std::fs::read_to_string(dir.join(format!("{case}{ext}")))
            .map_err(|e| format!("{case}{ext}: {e}"))
    };
    let module = hlo_text::parse_module(&read(".hlo")?).map_err(|e| format!("parse: {e}"))?;
    let entry = module.entry_computation();
    // Every entry parameter gets the formula's values, by parameter number.
    let mut inputs = Vec::new();
    let mut values = Vec::new();
    for (p, shape) in entry.param_shapes().into_iter().enumerate() {
        let shape = shape.as_array().ok_or("tuple parameter")?;
        let n = shape.element_count() as usize;
        let integer = shape.element_type.is_int();
        let data: Vec<Value> = (0..n)
            .map(|i| {
                let v = formula(p, i, integer);
                if integer {
                    json!(v as i64)
                } else {
                    json!(v)
                }
            })
            .collect();
        let dtype = shape.element_type.name();
        let array = parse_array(
            &json!({"dtype": dtype, "shape": shape.dims, "data": data}),
            "input",
        )
        .map_err(|e| e.to_string())?;
        inputs.push(array);
        values.push(json!({"kind": "buffer", "dtype": dtype, "data": data}));
    }
    // The kernel's buffers are the ROOT fusion's operands, in operand order (every one an
    // entry parameter here), then its output.
    let root = entry.root_instruction().ok_or("no ROOT")?;
    let mut params = Vec::new();
    for &id in &root.operands {
        let operand = entry.get(id).ok_or("dangling operand")?;
        let number = operand
            .parameter_number()
            .ok_or("a fusion operand is not a parameter")?;
        let value = usize::try_from(number)
            .ok()
            .and_then(|n| values.get(n))
            .ok_or("parameter number out of range")?;
        params.push(value.clone());
    }
    let want = hlo_eval::evaluate_flat(&module, &inputs).map_err(|e| format!("evaluate: {e}"))?;
    let [want] = want.as_slice() else {
        return Err("one output expected".into());
    };
    let want = array_to_json(want);
    let tol = tolerance(case).ok_or_else(|| format!("{case}: no tolerance listed"))?;
    // The launch (kernel, grid, block, shared memory) is XLA's, from the committed spec.
    let mut spec: Value =
        serde_json::from_str(&read(".launch.json")?).map_err(|e| e.to_string())?;
    let zeros = vec![0; want["data"].as_array().map_or(0, Vec::len)];
    params.push(json!({"kind": "buffer", "dtype": want["dtype"], "data": zeros}));
    let out = params.len() - 1;
    spec["params"] = Value::Array(params);
    spec["expected"] = json!([{"param": out, "dtype": want["dtype"], "data": want["data"],
                               "abs_tol": tol.atol, "rel_tol": tol.rtol}]);
    let spec = LaunchSpec::from_json(&spec).map_err(|e| e.to_string())?;
    let ast = ptx::parse(&read(".ptx")?).map_err(|e| format!("parse PTX: {e}"))?;
    let loaded = LoadedModule::load(&ast).map_err(|e| format!("load: {e}"))?;
    for reference_engine in [true, false] {
        let opts = LaunchOptions {
            threads: 2,
            reference_engine,
            ..LaunchOptions::default()
        };
        let outcome = ptx::run_launch_spec(&loaded, &spec, &opts, 5).map_err(|e| e.to_string())?;
        if let Some(c) = outcome.checks.iter().find(|c| c.mismatches > 0) {
            let first: Vec<String> = c
                .first
                .iter()
                .map(|m| format!("[{}] got {} want {}", m.index, m.got, m.want))
                .collect();
            return Err(format!(
                "reference engine: {reference_engine}: {} elements differ from the evaluator: {}",
                c.mismatches,
                first.join(", ")
            ));
        }
    }
    Ok(())
}

#[test]
fn every_xla_kernel_matches_the_hlo_evaluator_on_its_fusion() {
    let mut cases: Vec<String> = std::fs::read_dir(dir())
        .expect("testdata/xla_ptx")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".ptx"))
                .map(String::from)
        })
        .collect();
    cases.sort();
    assert_eq!(
        cases.len(),
        21,
        "the cases tools/xla_artifacts/xla_ptx.py writes"
    );
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| run_case(c).err().map(|e| format!("{c}: {e}")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
