//! The scatter kernels: a copy of the operand, then one thread per update element combining
//! with atomics (add/min/max), a compare-and-swap loop, a plain store (overwrite) or a plain
//! read-modify-write (unique indices); the gather kernel for what no per-element combine does.
//! Every case runs on the PTX emulator against the reference evaluator, and through ptxas
//! (sm_90 and sm_80) when it is installed.
mod codegen_util;

use codegen_util::*;
use hlo::{Array, Data};

/// The scatter of `u` rows into `x` along dimension 0 with index vector `i` (`ty` elements,
/// combiner body `body` over `a` (old) and `b` (update); `attrs` appended to the scatter).
fn row_scatter(ty: &str, rows: usize, n: usize, body: &str, attrs: &str) -> String {
    format!(
        "HloModule m\ncomb {{\n a = {ty}[] parameter(0)\n b = {ty}[] parameter(1)\n ROOT r = {ty}[] {body}\n}}\n\
         ENTRY e {{\n x = {ty}[{rows},3] parameter(0)\n i = s32[{n},1] parameter(1)\n u = {ty}[{n},3] parameter(2)\n \
         ROOT s = {ty}[{rows},3] scatter(x, i, u), update_window_dims={{1}}, inserted_window_dims={{0}}, \
         scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=comb{attrs}\n}}\n"
    )
}

/// Indices with duplicates and out-of-bounds entries (negative, one past the end, far past).
const DUP_OOB: [i32; 9] = [1, 1, 7, 5, 1, -1, 6, 0, 1];

fn indices(v: &[i32]) -> Array {
    Array::new(vec![v.len(), 1], Data::S32(v.to_vec())).expect("array")
}

/// Runs `text` with random operand and updates and the given indices against the evaluator,
/// assembles it with ptxas where present, and returns the plan's PTX (every kernel).
fn check(text: &str, idx: &[i32]) -> (usize, String) {
    let m = hlo_text::parse_module(text).expect("test HLO parses");
    let mut inputs = random_inputs(&m, 7).expect("random inputs");
    inputs[1] = indices(idx);
    run_and_compare(&m, &inputs, None, &h100()).expect("matches the evaluator");
    for (t, gpu) in [(h100(), "sm_90"), (a100(), "sm_80")] {
        let plan = plan_entry(&m, &t).expect("plan");
        if !ptxas_plan(&plan, gpu).expect("ptxas accepts") {
            eprintln!("ptxas not found: skipping the ptxas check");
        }
    }
    let plan = plan_entry(&m, &h100()).expect("plan");
    let ptx = plan.kernels.iter().map(|k| k.ptx.as_str()).collect();
    (plan.kernels.len(), ptx)
}

#[test]
fn atomic_add_with_duplicates_and_out_of_bounds_indices() {
    for ty in ["f32", "f64", "s32", "u32", "s64", "u64"] {
        let (n, ptx) = check(&row_scatter(ty, 6, 9, "add(a, b)", ""), &DUP_OOB);
        assert_eq!(n, 2, "{ty}: copy and update kernels");
        let want = match ty {
            "s64" | "u64" => "atom.global.add.u64".to_string(),
            _ => format!("atom.global.add.{ty}"),
        };
        assert!(ptx.contains(&want), "{ty}: {want} missing");
        assert!(
            !ptx.contains("atom.global.cas"),
            "{ty}: no CAS loop for add"
        );
    }
}

#[test]
fn atomic_integer_min_and_max() {
    for (ty, op) in [
        ("s32", "maximum"),
        ("u32", "minimum"),
        ("s64", "minimum"),
        ("u64", "maximum"),
    ] {
        let (_, ptx) = check(&row_scatter(ty, 6, 9, &format!("{op}(b, a)"), ""), &DUP_OOB);
        let want = format!("atom.global.{}.{ty}", &op[..3]);
        assert!(ptx.contains(&want), "{ty} {op}: {want} missing");
    }
}

#[test]
fn cas_loop_for_other_combiners() {
    // Float max/min and multiplication have no atomic instruction: a CAS loop on the bits.
    for (ty, body, bits) in [
        ("f32", "maximum(a, b)", "b32"),
        ("f32", "multiply(a, b)", "b32"),
        ("f64", "minimum(a, b)", "b64"),
        ("s32", "multiply(a, b)", "b32"),
        ("s64", "subtract(a, b)", "b64"),
    ] {
        let (n, ptx) = check(&row_scatter(ty, 6, 9, body, ""), &DUP_OOB);
        assert_eq!(n, 2);
        assert!(
            ptx.contains(&format!("atom.global.cas.{bits}")),
            "{ty} {body}: no CAS loop"
        );
    }
}

#[test]
fn overwrite_is_a_plain_store() {
    // Unique in-bounds targets plus skipped out-of-bounds ones: the result is determined.
    let text = row_scatter("f32", 6, 5, "copy(b)", "");
    let text = text.replace("ROOT r = f32[] copy(b)", "ROOT r = f32[] parameter(1)");
    let text = text.replace(" b = f32[] parameter(1)\n", "");
    let (n, ptx) = check(&text, &[4, -2, 0, 6, 2]);
    assert_eq!(n, 2);
    assert!(!ptx.contains("atom."), "overwrite stores");
    // Duplicates: the last writer wins, which is one of the updates for that row.
    let m = hlo_text::parse_module(&text).expect("parses");
    let mut inputs = random_inputs(&m, 3).expect("inputs");
    inputs[1] = indices(&[2, 2, 2, 2, 2]);
    let plan = plan_entry(&m, &h100()).expect("plan");
    let got = run_plan(&plan, &inputs, &[(hlo::DType::F32, vec![6, 3])]).expect("runs");
    let (Data::F32(out), Data::F32(ups)) = (got[0].data(), inputs[2].data()) else {
        panic!("f32 arrays");
    };
    let row = &out[6..9];
    assert!(
        ups.chunks(3).any(|u| u == row),
        "row 2 {row:?} is one of the updates"
    );
}

#[test]
fn unique_indices_read_modify_write() {
    let text = row_scatter("f32", 6, 4, "multiply(a, b)", ", unique_indices=true");
    let (n, ptx) = check(&text, &[3, 0, 9, 5]);
    assert_eq!(n, 2);
    assert!(!ptx.contains("atom."), "unique indices need no atomics");
}

#[test]
fn gather_kernel_where_no_atomic_applies() {
    // 16-bit elements and variadic scatters keep the one-kernel gather form.
    let (n, _) = check(&row_scatter("f16", 6, 9, "add(a, b)", ""), &DUP_OOB);
    assert_eq!(n, 1);
    let variadic = "HloModule m\ncomb {\n a = f32[] parameter(0)\n b = s32[] parameter(1)\n c = f32[] parameter(2)\n d = s32[] parameter(3)\n x = f32[] add(a, c)\n y = s32[] maximum(b, d)\n ROOT t = (f32[], s32[]) tuple(x, y)\n}\n\
        ENTRY e {\n x = f32[6,3] parameter(0)\n y = s32[6,3] parameter(1)\n i = s32[9,1] parameter(2)\n u = f32[9,3] parameter(3)\n v = s32[9,3] parameter(4)\n \
        ROOT s = (f32[6,3], s32[6,3]) scatter(x, y, i, u, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb\n}\n";
    let m = hlo_text::parse_module(variadic).expect("parses");
    let mut inputs = random_inputs(&m, 5).expect("inputs");
    inputs[2] = indices(&DUP_OOB);
    run_and_compare(&m, &inputs, None, &h100()).expect("matches the evaluator");
    assert_eq!(plan_entry(&m, &h100()).expect("plan").kernels.len(), 1);
}

#[test]
fn window_out_of_bounds_skips_the_whole_update() {
    // A 2-row window: a start of 5 in 6 rows would leave the operand, so it is skipped whole.
    let text = "HloModule m\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(a, b)\n}\n\
        ENTRY e {\n x = f32[6,4] parameter(0)\n i = s32[5,2] parameter(1)\n u = f32[5,2,3] parameter(2)\n \
        ROOT s = f32[6,4] scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add\n}\n";
    let m = hlo_text::parse_module(text).expect("parses");
    let mut inputs = random_inputs(&m, 9).expect("inputs");
    inputs[1] = Array::new(vec![5, 2], Data::S32(vec![0, 0, 4, 1, 5, 0, 1, 2, 1, 2])).expect("i");
    run_and_compare(&m, &inputs, None, &h100()).expect("matches the evaluator");
}

/// The embedding-gradient scatter-add of issue 32: 4,096 rows of 128 into 8,192 rows. The
/// gather form needed more than 2^36 lane instructions (every output element scanned every
/// update); one thread per run of update elements needs a few per element.
#[test]
fn embedding_gradient_scatter_add_is_linear() {
    let text = "HloModule m\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(a, b)\n}\n\
        ENTRY e {\n z = f32[] constant(0)\n x = f32[8192,128] broadcast(z), dimensions={}\n i = s32[4096,1] parameter(0)\n u = f32[4096,128] parameter(1)\n \
        ROOT s = f32[8192,128] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n";
    let m = hlo_text::parse_module(text).expect("parses");
    let idx: Vec<i32> = (0..4096).map(|k| (k * 37 % 8192) / 2).collect();
    let ups = Array::new(
        vec![4096, 128],
        Data::F32((0..4096 * 128).map(|k| (k % 5) as f32).collect()),
    )
    .expect("u");
    let inputs = vec![
        Array::new(vec![4096, 1], Data::S32(idx.clone())).expect("i"),
        ups,
    ];
    let plan = plan_entry(&m, &h100()).expect("plan");
    let out = [(hlo::DType::F32, vec![8192, 128])];
    let (got, lanes) = run_plan_counted(&plan, &inputs, &out).expect("runs");
    // The zeros are a memzero (no kernel), and each thread adds a run of 8 consecutive
    // elements of a row: 512K updates in under 8 lane instructions each.
    eprintln!("embedding-gradient scatter-add: {lanes} lane instructions");
    assert_eq!(plan.fills.len(), 1, "the zero operand is a fill");
    assert_eq!((plan.fills[0].output, plan.fills[0].word), (0, 0));
    assert_eq!(plan.kernels.len(), 1, "no init kernel");
    assert!(
        plan.kernels[0].ptx.contains("+28], "),
        "runs of 8 f32 elements"
    );
    assert!(lanes < 1 << 22, "{lanes} lane instructions");
    let want = hlo_eval::evaluate_flat(&m, &inputs).expect("evaluates");
    check_outputs(&got, &want);
}

fn check_outputs(got: &[Array], want: &[Array]) {
    codegen_util::check(got, want).expect("matches the evaluator");
}

/// Runs of update elements (8, 4, 2 or 1 per thread, by the window row's length) with a
/// constant operand (a fill) and with a parameter operand (an init kernel), duplicates and
/// out-of-bounds indices included, match the evaluator.
#[test]
fn runs_of_update_elements_with_fills_and_copies() {
    for (cols, run) in [(16, 8), (12, 4), (6, 2), (5, 1)] {
        for (operand, kernels) in [("broadcast(z), dimensions={}", 1), ("parameter(2)", 2)] {
            let text = format!(
                "HloModule m\nadd {{\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(a, b)\n}}\n\
                 ENTRY e {{\n z = f32[] constant(1.5)\n x = f32[8,{cols}] {operand}\n i = s32[9,1] parameter(0)\n u = f32[9,{cols}] parameter(1)\n \
                 ROOT s = f32[8,{cols}] scatter(x, i, u), update_window_dims={{1}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add\n}}\n"
            );
            let m = hlo_text::parse_module(&text).expect("parses");
            let mut inputs = random_inputs(&m, 3).expect("inputs");
            inputs[0] = indices(&DUP_OOB);
            run_and_compare(&m, &inputs, None, &h100()).expect("matches the evaluator");
            let plan = plan_entry(&m, &h100()).expect("plan");
            assert_eq!(plan.kernels.len(), kernels, "{cols} {operand}");
            let ptx = &plan.kernels[kernels - 1].ptx;
            let last = format!("+{}], ", 4 * (run - 1));
            assert!(run == 1 || ptx.contains(&last), "{cols}: run of {run}");
        }
    }
}
