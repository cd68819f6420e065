//! Execution semantics without the runtime: every corpus case is compiled for h100_sxm and run
//! by the test thunk interpreter (tests/common/interp.rs) on the `ptx` emulator; the outputs
//! must match the case's io file within the corpus tolerances. Then `triangular-solve` (which the
//! compiler expands into a loop) in every option combination, batched, in f32, f64, c64 and c128
//! (ADJOINT conjugates), against the reference evaluator.
mod common;

use hlo::Complex;
use hlo::{Array, DType, Data, Literal};
use hlo_eval::{compare, IoCase, Tolerance};
use libtest_mimic::{Arguments, Failed, Trial};

/// Cases that do not run correctly yet, with the reason.
const KNOWN_FAILING: &[(&str, &str)] = &[];

fn check(case: &str) -> Result<(), Failed> {
    let dir = common::root().join("testdata/corpus/hlo");
    let text =
        std::fs::read_to_string(dir.join(format!("{case}.hlo"))).map_err(|e| e.to_string())?;
    let io = IoCase::read(&dir.join(format!("{case}.io.json"))).map_err(|e| e.to_string())?;
    let module = hlo_text::parse_module(&text).map_err(|e| e.to_string())?;
    run_and_compare(&module, &io.inputs, &io.outputs)
}

/// Compiles `module` for h100_sxm, runs it on `inputs` and compares with `outputs`.
fn run_and_compare(
    module: &hlo::HloModule,
    inputs: &[Array],
    outputs: &[Array],
) -> Result<(), Failed> {
    let exe = compiler::compile(module, &common::target("h100_sxm"), &common::options())
        .map_err(|e| e.to_string())?;
    let args: Vec<Vec<u8>> = inputs.iter().map(common::interp::to_bytes).collect();
    let sizes: Vec<usize> = outputs
        .iter()
        .map(|a| a.len() * (a.dtype().bit_width() / 8) as usize)
        .collect();
    let (outs, _) = common::interp::run(&exe, &args, &sizes)?;
    let mut errs = Vec::new();
    for (i, (bytes, want)) in outs.iter().zip(outputs).enumerate() {
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

/// One triangular-solve option combination: `(left_side, lower, unit_diagonal, transpose_a)`.
type Combo = (bool, bool, bool, &'static str);

fn combos() -> Vec<Combo> {
    let mut out = Vec::new();
    for left in [true, false] {
        for lower in [true, false] {
            for unit in [true, false] {
                for t in ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"] {
                    out.push((left, lower, unit, t));
                }
            }
        }
    }
    out
}

/// `a` of `[2, n, n]` with a dominant diagonal; the triangle not read and (with
/// `unit_diagonal`) the diagonal hold NaN, so reading them would poison the result.
fn trsm_a(dtype: DType, n: usize, lower: bool, unit: bool) -> Array {
    let mut v = Vec::new();
    for k in 0..2 * n * n {
        let (i, j) = ((k / n) % n, k % n);
        let read = if lower { i >= j } else { i <= j };
        v.push(if !read || (unit && i == j) {
            f64::NAN
        } else if i == j {
            4.0 + (k % 3) as f64
        } else {
            ((k * 7) % 11) as f64 / 11.0 - 0.5
        });
    }
    if dtype.is_complex() {
        // Complex values: an imaginary part beside each read element (NaN beside NaN).
        let z = v
            .iter()
            .enumerate()
            .map(|(k, &re)| Complex::new(re, re * 0.0 + ((k * 5) % 7) as f64 / 7.0 - 0.4))
            .collect();
        return Array::new(vec![2, n, n], Data::from_complex(dtype, z)).expect("a");
    }
    Array::new(vec![2, n, n], Data::from_wide_f(dtype, v)).expect("a")
}

fn trsm_case(dtype: DType, (left, lower, unit, t): Combo) -> Result<(), Failed> {
    let (n, k) = (4, 3);
    let ty = dtype.to_string();
    let bdims = if left { [2, n, k] } else { [2, k, n] };
    let text = format!(
        "HloModule trsm\n\nENTRY e {{\n  a = {ty}[2,{n},{n}] parameter(0)\n  b = {ty}[{}] parameter(1)\n  ROOT x = {ty}[{}] triangular-solve(a, b), left_side={left}, lower={lower}, unit_diagonal={unit}, transpose_a={t}\n}}\n",
        bdims.map(|d| d.to_string()).join(","),
        bdims.map(|d| d.to_string()).join(",")
    );
    let module = hlo_text::parse_module(&text).map_err(|e| e.to_string())?;
    let b: Vec<f64> = (0..2 * n * k)
        .map(|i| (i as f64 * 0.37).sin() * 3.0)
        .collect();
    let b = if dtype.is_complex() {
        let z = b
            .iter()
            .enumerate()
            .map(|(i, &re)| Complex::new(re, (i as f64 * 0.91).cos()))
            .collect();
        Data::from_complex(dtype, z)
    } else {
        Data::from_wide_f(dtype, b)
    };
    let inputs = vec![
        trsm_a(dtype, n, lower, unit),
        Array::new(bdims.to_vec(), b).map_err(|e| e.to_string())?,
    ];
    let args: Vec<Literal> = inputs.iter().cloned().map(Literal::Array).collect();
    let want = hlo_eval::evaluate(&module, &args).map_err(|e| e.to_string())?;
    run_and_compare(&module, &inputs, &want.into_leaves())
}

fn trsm_trials() -> Vec<Trial> {
    let mut out = Vec::new();
    for dtype in [DType::F32, DType::F64, DType::C64, DType::C128] {
        for c in combos() {
            let (left, lower, unit, t) = c;
            let name = format!(
                "execute::triangular_solve::{dtype:?}_left_{left}_lower_{lower}_unit_{unit}_{t}"
            )
            .to_lowercase();
            out.push(Trial::test(name, move || trsm_case(dtype, c)));
        }
    }
    out
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
        .chain(trsm_trials())
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
