//! Unit tests per emitter: hand-written fused computations run on the PTX emulator and compared
//! with the reference evaluator (or with known values).
mod codegen_util;

use codegen_util::*;
use hlo::{Array, Data};

fn module(text: &str) -> hlo::HloModule {
    hlo_text::parse_module(text).expect("test HLO parses")
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

fn s32s(dims: Vec<usize>, v: Vec<i32>) -> Array {
    Array::new(dims, Data::S32(v)).expect("array")
}

const ADD_F32: &str =
    "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n";

/// One multi-output fusion applying every listed op to parameters `x` (and `y`).
fn all_ops_module(ty: &str, n: usize, binary: &[&str], unary: &[&str], out_ty: &str) -> String {
    let mut body = format!(" x = {ty}[{n}] parameter(0)\n y = {ty}[{n}] parameter(1)\n");
    let mut names = Vec::new();
    let mut shapes = Vec::new();
    for (k, op) in binary.iter().enumerate() {
        body.push_str(&format!(" b{k} = {ty}[{n}] {op}(x, y)\n"));
        names.push(format!("b{k}"));
        shapes.push(format!("{ty}[{n}]"));
    }
    for (k, op) in unary.iter().enumerate() {
        body.push_str(&format!(" u{k} = {out_ty}[{n}] {op}(x)\n"));
        names.push(format!("u{k}"));
        shapes.push(format!("{out_ty}[{n}]"));
    }
    format!(
        "HloModule m\nENTRY e {{\n{body} ROOT t = ({}) tuple({})\n}}\n",
        shapes.join(", "),
        names.join(", ")
    )
}

#[test]
fn elementwise_every_dtype() {
    for ty in ["s8", "s32", "s64", "u8", "u32"] {
        let text = all_ops_module(
            ty,
            37,
            &[
                "add",
                "subtract",
                "multiply",
                "divide",
                "remainder",
                "maximum",
                "minimum",
                "and",
                "or",
                "xor",
                "shift-left",
                "shift-right-logical",
                "shift-right-arithmetic",
                "power",
            ],
            &[
                "negate",
                "abs",
                "sign",
                "not",
                "popcnt",
                "count-leading-zeros",
            ],
            ty,
        );
        check_text(&text, None);
    }
    for ty in ["f16", "bf16", "f32", "f64"] {
        let text = all_ops_module(
            ty,
            40,
            &[
                "add",
                "subtract",
                "multiply",
                "divide",
                "maximum",
                "minimum",
                "power",
                "atan2",
                "remainder",
            ],
            &[
                "negate",
                "abs",
                "sign",
                "exponential",
                "exponential-minus-one",
                "log",
                "log-plus-one",
                "sqrt",
                "rsqrt",
                "cbrt",
                "tanh",
                "logistic",
                "sine",
                "cosine",
                "tan",
                "floor",
                "ceil",
                "round-nearest-afz",
                "round-nearest-even",
                "erf",
            ],
            ty,
        );
        check_text(&text, None);
        check_text(&all_ops_module(ty, 40, &[], &["is-finite"], "pred"), None);
    }
    check_text(
        &all_ops_module("pred", 9, &["and", "or", "xor"], &["not"], "pred"),
        None,
    );
}

#[test]
fn integer_division_corner_cases() {
    let text = "HloModule m\nENTRY e {\n x = s32[6] parameter(0)\n y = s32[6] parameter(1)\n d = s32[6] divide(x, y)\n r = s32[6] remainder(x, y)\n ROOT t = (s32[6], s32[6]) tuple(d, r)\n}\n";
    let x = s32s(vec![6], vec![7, -7, 7, i32::MIN, 5, -8]);
    let y = s32s(vec![6], vec![2, 2, 0, -1, -3, 3]);
    check_text(text, Some(vec![x, y]));
}

#[test]
fn transcendental_accuracy_sweep() {
    // Dense sweeps, including large and tiny magnitudes, against the f64 reference.
    let mut v = Vec::new();
    for i in 0..4000 {
        let t = (i as f32 - 2000.0) / 2000.0;
        v.push(t * 90.0);
        v.push(t * 1e-3);
        v.push(t.powi(3) * 1e4);
    }
    let n = v.len();
    for op in [
        "exponential",
        "log",
        "log-plus-one",
        "exponential-minus-one",
        "tanh",
        "logistic",
        "sine",
        "cosine",
        "erf",
        "sqrt",
        "rsqrt",
        "cbrt",
    ] {
        let text = format!(
            "HloModule m\nENTRY e {{\n x = f32[{n}] parameter(0)\n ROOT r = f32[{n}] {op}(x)\n}}\n"
        );
        let m = module(&text);
        run_and_compare(&m, &[f32s(vec![n], v.clone())], None, &h100())
            .unwrap_or_else(|e| panic!("{op}: {e}"));
    }
    let y: Vec<f32> = v.iter().map(|x| x * 0.37 - 1.0).collect();
    for op in ["power", "atan2"] {
        let text = format!("HloModule m\nENTRY e {{\n x = f32[{n}] parameter(0)\n y = f32[{n}] parameter(1)\n ROOT r = f32[{n}] {op}(x, y)\n}}\n");
        let m = module(&text);
        let xs: Vec<f32> = v.iter().map(|x| x.abs().min(50.0)).collect();
        run_and_compare(
            &m,
            &[f32s(vec![n], xs), f32s(vec![n], y.clone())],
            None,
            &h100(),
        )
        .unwrap_or_else(|e| panic!("{op}: {e}"));
    }
}

#[test]
fn conversions_between_dtypes() {
    let tys = [
        "pred", "s8", "s32", "s64", "u8", "u32", "f16", "bf16", "f32", "f64",
    ];
    for from in tys {
        let mut body = format!(" x = {from}[21] parameter(0)\n");
        for to in tys {
            body.push_str(&format!(" c_{to} = {to}[21] convert(x)\n"));
        }
        let shapes: Vec<String> = tys.iter().map(|t| format!("{t}[21]")).collect();
        let names: Vec<String> = tys.iter().map(|t| format!("c_{t}")).collect();
        let text = format!(
            "HloModule m\nENTRY e {{\n{body} ROOT t = ({}) tuple({})\n}}\n",
            shapes.join(", "),
            names.join(", ")
        );
        check_text(&text, None);
    }
}

#[test]
fn broadcast_transpose_reshape_slice_concat_pad_reverse_iota() {
    check_text(
        "HloModule m\nENTRY e {\n x = f32[3,4,5] parameter(0)\n t = f32[5,3,4] transpose(x), dimensions={2,0,1}\n r = f32[15,4] reshape(t)\n s = f32[7,2] slice(r), slice={[1:15:2], [1:4:2]}\n ROOT v = f32[7,2] reverse(s), dimensions={0,1}\n}\n",
        None,
    );
    check_text(
        "HloModule m\nENTRY e {\n x = f32[3] parameter(0)\n b = f32[2,3,4] broadcast(x), dimensions={1}\n i = f32[2,3,4] iota(), iota_dimension=2\n ROOT a = f32[2,3,4] add(b, i)\n}\n",
        None,
    );
    check_text(
        "HloModule m\nENTRY e {\n x = s32[2,3] parameter(0)\n y = s32[2,1] parameter(1)\n z = s32[2,2] parameter(2)\n ROOT c = s32[2,6] concatenate(x, y, z), dimensions={1}\n}\n",
        None,
    );
    check_text(
        "HloModule m\nENTRY e {\n x = f32[3,4] parameter(0)\n v = f32[] parameter(1)\n ROOT p = f32[6,11] pad(x, v), padding=1_2x-1_2_2\n}\n",
        None,
    );
}

#[test]
fn reductions_row_column_full_and_variadic() {
    let row = format!("HloModule m\n{ADD_F32}ENTRY e {{\n x = f32[7,1000] parameter(0)\n z = f32[] parameter(1)\n ROOT r = f32[7] reduce(x, z), dimensions={{1}}, to_apply=add\n}}\n");
    check_text(&row, None);
    let col = format!("HloModule m\n{ADD_F32}ENTRY e {{\n x = f32[333,5] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[5] reduce(x, z), dimensions={{0}}, to_apply=add\n}}\n");
    check_text(&col, None);
    let full = format!("HloModule m\n{ADD_F32}ENTRY e {{\n x = f32[3,77,9] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[] reduce(x, z), dimensions={{0,1,2}}, to_apply=add\n}}\n");
    check_text(&full, None);
    let mid = format!("HloModule m\n{ADD_F32}ENTRY e {{\n x = f32[4,33,6] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[4,6] reduce(x, z), dimensions={{1}}, to_apply=add\n}}\n");
    check_text(&mid, None);
    // Fewer elements than a warp (shuffles only), and exactly one.
    let small = format!("HloModule m\n{ADD_F32}ENTRY e {{\n x = f32[6,20] parameter(0)\n z = f32[] parameter(1)\n ROOT r = f32[6] reduce(x, z), dimensions={{1}}, to_apply=add\n}}\n");
    check_text(&small, None);
    let one = format!("HloModule m\n{ADD_F32}ENTRY e {{\n x = f32[6,1] parameter(0)\n z = f32[] parameter(1)\n ROOT r = f32[6] reduce(x, z), dimensions={{1}}, to_apply=add\n}}\n");
    check_text(&one, None);
    let f64s = "HloModule m\nadd {\n a = f64[] parameter(0)\n b = f64[] parameter(1)\n ROOT s = f64[] add(a, b)\n}\nENTRY e {\n x = f64[3,45] parameter(0)\n z = f64[] constant(0)\n ROOT r = f64[3] reduce(x, z), dimensions={1}, to_apply=add\n}\n";
    check_text(f64s, None);
    let any = "HloModule m\nor {\n a = pred[] parameter(0)\n b = pred[] parameter(1)\n ROOT s = pred[] or(a, b)\n}\nENTRY e {\n x = pred[3,45] parameter(0)\n z = pred[] constant(false)\n ROOT r = pred[3] reduce(x, z), dimensions={1}, to_apply=or\n}\n";
    check_text(any, None);
    let s64 = "HloModule m\nadd {\n a = s64[] parameter(0)\n b = s64[] parameter(1)\n ROOT s = s64[] add(a, b)\n}\nENTRY e {\n x = s64[2,500] parameter(0)\n z = s64[] constant(0)\n ROOT r = s64[2] reduce(x, z), dimensions={1}, to_apply=add\n}\n";
    check_text(s64, None);
    // Integer max and a multi-output fusion with a reduction and an elementwise leaf.
    let imax = "HloModule m\nmx {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] maximum(a, b)\n}\nENTRY e {\n x = s32[5,40] parameter(0)\n z = s32[] constant(-2147483648)\n r = s32[5] reduce(x, z), dimensions={1}, to_apply=mx\n n = s32[5,40] negate(x)\n ROOT t = (s32[5], s32[5,40]) tuple(r, n)\n}\n";
    check_text(imax, None);
}

const ARGMAX: &str = "HloModule m
argmax {
 av = f32[] parameter(0)
 ai = s32[] parameter(1)
 bv = f32[] parameter(2)
 bi = s32[] parameter(3)
 gt = pred[] compare(av, bv), direction=GT
 eq = pred[] compare(av, bv), direction=EQ
 lt = pred[] compare(ai, bi), direction=LT
 tie = pred[] and(eq, lt)
 take = pred[] or(gt, tie)
 v = f32[] select(take, av, bv)
 i = s32[] select(take, ai, bi)
 ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
 x = f32[4,70] parameter(0)
 io = s32[4,70] iota(), iota_dimension=1
 ninf = f32[] constant(-inf)
 zero = s32[] constant(0)
 ROOT r = (f32[4], s32[4]) reduce(x, io, ninf, zero), dimensions={1}, to_apply=argmax
}
";

#[test]
fn argmax_with_ties_picks_the_first() {
    let mut v = vec![0f32; 280];
    for (row, cols) in [
        (0usize, [3usize, 50]),
        (1, [0, 69]),
        (2, [10, 11]),
        (3, [64, 65]),
    ] {
        for c in cols {
            v[row * 70 + c] = 5.0;
        }
    }
    let m = module(ARGMAX);
    let x = f32s(vec![4, 70], v);
    let plan = plan_entry(&m, &h100()).expect("plan");
    let got = run_plan(
        &plan,
        std::slice::from_ref(&x),
        &[(hlo::DType::F32, vec![4]), (hlo::DType::S32, vec![4])],
    )
    .expect("runs");
    assert_eq!(got[1].data(), &Data::S32(vec![3, 0, 10, 64]));
    check_text(ARGMAX, Some(vec![x]));
}

const SORT_KEYS: &str = "HloModule m
cmp {
 a = f32[] parameter(0)
 b = f32[] parameter(1)
 c = s32[] parameter(2)
 d = s32[] parameter(3)
 ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
 k = f32[3,37] parameter(0)
 v = s32[3,37] iota(), iota_dimension=1
 ROOT s = (f32[3,37], s32[3,37]) sort(k, v), dimensions={1}, is_stable=true, to_apply=cmp
}
";

#[test]
fn sort_is_stable_and_multi_operand() {
    // Many equal keys: the payload (original position) must stay in order among equals.
    let keys: Vec<f32> = (0..111).map(|i| ((i * 7) % 4) as f32).collect();
    check_text(SORT_KEYS, Some(vec![f32s(vec![3, 37], keys)]));
    // A row too long for shared memory is sorted in the output buffers.
    let long = SORT_KEYS.replace("3,37", "1,2060");
    let keys: Vec<f32> = (0..2060).map(|i| ((i * 13) % 17) as f32).collect();
    check_text(&long, Some(vec![f32s(vec![1, 2060], keys)]));
    // Sorting along dimension 0 (a column sort).
    let col = "HloModule m\ncmp {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT gt = pred[] compare(a, b), direction=GT\n}\nENTRY e {\n k = s32[19,3] parameter(0)\n ROOT s = s32[19,3] sort(k), dimensions={0}, to_apply=cmp\n}\n";
    check_text(col, None);
}

#[test]
fn gather_as_jax_take() {
    let text = "HloModule m\nENTRY e {\n x = f32[5,3] parameter(0)\n i = s32[4,1] parameter(1)\n ROOT g = f32[4,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n}\n";
    let x = f32s(vec![5, 3], (0..15).map(|v| v as f32).collect());
    let i = s32s(vec![4, 1], vec![4, 0, 9, -2]);
    check_text(text, Some(vec![x, i]));
}

#[test]
fn scatter_add_with_duplicate_indices() {
    let text = format!("HloModule m\n{ADD_F32}ENTRY e {{\n x = f32[6,2] parameter(0)\n i = s32[5,1] parameter(1)\n u = f32[5,2] parameter(2)\n ROOT s = f32[6,2] scatter(x, i, u), update_window_dims={{1}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add\n}}\n");
    let x = f32s(vec![6, 2], vec![0.0; 12]);
    let i = s32s(vec![5, 1], vec![1, 1, 7, 5, 1]);
    let u = f32s(vec![5, 2], (0..10).map(|v| v as f32 + 1.0).collect());
    check_text(&text, Some(vec![x, i, u]));
}

#[test]
fn dynamic_slice_and_update_clamp_starts() {
    let ds = "HloModule m\nENTRY e {\n x = s32[5,4] parameter(0)\n a = s32[] parameter(1)\n b = s32[] parameter(2)\n ROOT d = s32[2,3] dynamic-slice(x, a, b), dynamic_slice_sizes={2,3}\n}\n";
    let x = s32s(vec![5, 4], (0..20).collect());
    for (a, b) in [(4, 9), (-3, 1), (1, -1), (2, 1)] {
        check_text(
            ds,
            Some(vec![
                x.clone(),
                s32s(vec![], vec![a]),
                s32s(vec![], vec![b]),
            ]),
        );
    }
    let dus = "HloModule m\nENTRY e {\n x = s32[5,4] parameter(0)\n u = s32[2,3] parameter(1)\n a = s32[] parameter(2)\n b = s32[] parameter(3)\n ROOT d = s32[5,4] dynamic-update-slice(x, u, a, b)\n}\n";
    let u = s32s(vec![2, 3], vec![-1, -2, -3, -4, -5, -6]);
    for (a, b) in [(4, 9), (-3, 1), (1, -1), (2, 1)] {
        check_text(
            dus,
            Some(vec![
                x.clone(),
                u.clone(),
                s32s(vec![], vec![a]),
                s32s(vec![], vec![b]),
            ]),
        );
    }
}

#[test]
fn reduce_window_cumsum_and_max_pool() {
    let cumsum = format!("HloModule m\n{ADD_F32}ENTRY e {{\n x = f32[3,50] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[3,50] reduce-window(x, z), window={{size=1x50 pad=0_0x49_0}}, to_apply=add\n}}\n");
    check_text(&cumsum, None);
    let pool = "HloModule m\nmx {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b)\n}\nENTRY e {\n x = f32[9,8] parameter(0)\n z = f32[] constant(-inf)\n ROOT r = f32[5,4] reduce-window(x, z), window={size=3x2 stride=2x2 pad=1_1x0_0}, to_apply=mx\n}\n";
    check_text(pool, None);
}

#[test]
fn same_request_twice_gives_identical_ptx() {
    let m = module(ARGMAX);
    let a = plan_entry(&m, &h100()).expect("plan");
    let b = plan_entry(&m, &h100()).expect("plan");
    assert_eq!(a, b);
    for k in &a.kernels {
        assert!(k.launch.block[0] <= 1024 && k.launch.grid[0] >= 1);
        assert!(k.ptx.contains(".target sm_90"));
    }
}

#[test]
fn unsupported_instruction_names_it() {
    let m = module("HloModule m\nENTRY e {\n x = f32[2,2] parameter(0)\n ROOT d = f32[2,2] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
    let e = plan_entry(&m, &h100()).expect_err("dot is not a kernel");
    let s = format!("{e}");
    assert!(s.contains("dot") && s.contains("d"), "{s}");
}

#[test]
fn ptxas_accepts_accelerated_sm_90a() {
    let target = compiler::CodegenTarget {
        accelerated: true,
        ..h100()
    };
    for text in [ARGMAX, SORT_KEYS] {
        let m = module(text);
        let plan = plan_entry(&m, &target).expect("plan");
        assert!(plan
            .kernels
            .iter()
            .all(|k| k.ptx.contains(".target sm_90a")));
        if !ptxas_plan(&plan, "sm_90a").expect("ptxas accepts") {
            eprintln!("ptxas not found: skipping the ptxas check");
        }
    }
}

#[test]
fn reduce_precision_matches_the_evaluator() {
    for (ty, e, m) in [
        ("f32", 8, 7),
        ("f32", 5, 10),
        ("f32", 4, 3),
        ("f32", 8, 0),
        ("f16", 4, 3),
        ("bf16", 5, 2),
        ("f64", 8, 23),
        ("f64", 5, 10),
    ] {
        let text = format!(
            "HloModule m\nENTRY e {{\n x = {ty}[64] parameter(0)\n s = {ty}[64] multiply(x, x)\n p = {ty}[64] power(s, x)\n ROOT r = {ty}[64] reduce-precision(p), exponent_bits={e}, mantissa_bits={m}\n}}\n"
        );
        check_text(&text, None);
    }
}

/// XLA's row tiling: 16 elements of a row per thread, so the block is the power of two
/// covering `ceil(n / 16)` threads, 32 to 256 (a softmax row of 512 is one warp).
#[test]
fn a_row_reduction_block_covers_16_elements_per_thread() {
    for (n, block) in [
        (100u32, 32u32),
        (512, 32),
        (513, 64),
        (1024, 64),
        (4096, 256),
        (32000, 256),
    ] {
        let text = format!(
            "HloModule m\nadd {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }}\n\
             ENTRY e {{ x = f32[3,{n}] parameter(0)  z = f32[] constant(0)\n  ROOT r = f32[3] reduce(x, z), dimensions={{1}}, to_apply=add }}"
        );
        let m = module(&text);
        let plan = plan_entry(&m, &h100()).expect("plan");
        assert_eq!(plan.kernels[0].launch.block, [block, 1, 1], "row of {n}");
        let x = f32s(
            vec![3, n as usize],
            (0..3 * n).map(|i| (i % 11) as f32 - 5.0).collect(),
        );
        check_text(&text, Some(vec![x]));
    }
}

/// A broadcast element's index is never used: the dead-code pass leaves no division or
/// remainder in the kernel.
#[test]
fn a_broadcast_kernel_keeps_no_unused_index_arithmetic() {
    let text = "HloModule m\nENTRY e { z = f32[] parameter(0)\n  ROOT b = f32[60,100] broadcast(z), dimensions={} }";
    let plan = plan_entry(&module(text), &h100()).expect("plan");
    let ptx = &plan.kernels[0].ptx;
    assert!(
        !ptx.contains("div.u32") && !ptx.contains("rem.u32"),
        "{ptx}"
    );
    check_text(text, None);
}

/// A broadcast constant is a memset, no kernel: the repeated word of its element (a 16-bit
/// element twice), zero for any type; a byte element stays a kernel (`emit_memset8`'s rollout).
#[test]
fn a_broadcast_constant_is_a_fill() {
    for (ty, c, word) in [
        ("f32", "2", Some(0x4000_0000u32)),
        ("s32", "-1", Some(u32::MAX)),
        ("f16", "1", Some(0x3c00_3c00)),
        ("f64", "0", Some(0)),
        ("f64", "1", None),
        ("u8", "3", None),
    ] {
        let text = format!("HloModule m\nENTRY e {{ z = {ty}[] constant({c})\n  ROOT b = {ty}[6,10] broadcast(z), dimensions={{}} }}");
        let plan = plan_entry(&module(&text), &h100()).expect("plan");
        let fills: Vec<u32> = plan.fills.iter().map(|f| f.word).collect();
        assert_eq!(fills, word.into_iter().collect::<Vec<_>>(), "{ty} {c}");
        assert_eq!(plan.kernels.len(), usize::from(word.is_none()), "{ty} {c}");
        check_text(&text, Some(vec![]));
    }
}

/// Power-of-two dimensions split an index with a mask and a shift (what ptxas makes of the
/// division), others with `rem`/`div`.
#[test]
fn power_of_two_dimensions_split_indices_with_shifts() {
    for (dims, flipped, shifts) in [("64,128", "128,64", true), ("60,100", "100,60", false)] {
        let text = format!("HloModule m\nENTRY e {{ x = f32[{dims}] parameter(0)\n  ROOT t = f32[{flipped}] transpose(x), dimensions={{1,0}} }}");
        let plan = plan_entry(&module(&text), &h100()).expect("plan");
        let ptx = &plan.kernels[0].ptx;
        assert_eq!(ptx.contains("rem.u32"), !shifts, "{dims}: {ptx}");
        check_text(&text, None);
    }
}

/// `tanh` of f32 is XLA:GPU's rational approximation in f32 (`math::tanh_f32`): within 4 ulp
/// of the f64 `tanh` rounded to f32 on [-12, 12] and beyond (exactly ±1 there), the input
/// itself below 0.0004 in magnitude (zeros keep their sign), NaN passing through.
#[test]
fn f32_tanh_is_within_four_ulp_of_the_f64_tanh() {
    let mut xs: Vec<f32> = (-1200..=1200).map(|k| k as f32 * 0.01).collect();
    xs.extend([
        -1e30,
        -20.0,
        8.0,
        9.5,
        1e30,
        3e-4,
        -1e-7,
        1e-40,
        f32::NAN,
        -0.0,
    ]);
    xs.extend([f32::INFINITY, f32::NEG_INFINITY]);
    let n = xs.len();
    let text = format!(
        "HloModule m\nENTRY e {{ x = f32[{n}] parameter(0)\n  a = f32[{n}] tanh(x)\n  \
         w = f64[{n}] convert(x)\n  tw = f64[{n}] tanh(w)\n  b = f32[{n}] convert(tw)\n  \
         ROOT t = (f32[{n}], f32[{n}]) tuple(a, b) }}"
    );
    let inputs = vec![f32s(vec![n], xs.clone())];
    let plan = plan_entry(&module(&text), &h100()).expect("plan");
    assert!(
        !plan.kernels[0].ptx.contains("tanh.approx"),
        "rational, not the approx unit"
    );
    let out = [(hlo::DType::F32, vec![n]), (hlo::DType::F32, vec![n])];
    let (got, _) = run_plan_counted(&plan, &inputs, &out).expect("runs");
    let vals = |a: &Array| match a.data() {
        Data::F32(v) => v.clone(),
        _ => panic!("f32 output"),
    };
    let (narrow, wide) = (vals(&got[0]), vals(&got[1]));
    for (k, x) in xs.iter().enumerate() {
        let (a, b) = (narrow[k], wide[k]);
        if x.is_nan() {
            assert!(a.is_nan(), "tanh(NaN) = {a}");
        } else if x.abs() < 4e-4 {
            assert_eq!(a.to_bits(), x.to_bits(), "tanh({x}) is {x}");
        } else if x.abs() >= 8.0 {
            assert_eq!(a, x.signum(), "tanh({x})");
        } else {
            // Same sign: the bits of the magnitudes are ordered as the values.
            assert_eq!(a.is_sign_negative(), b.is_sign_negative(), "tanh({x})");
            let ulps = a.abs().to_bits().abs_diff(b.abs().to_bits());
            assert!(ulps <= 4, "tanh({x}) = {a}, f64: {b}: {ulps} ulp");
        }
    }
    check_text(&text, Some(inputs));
}

/// `exp` of f32 is computed in f32 as XLA:GPU's `__nv_expf` (`math::exp_f32`): within 2 ulp
/// of the f64 `exp` rounded to f32, over the whole range where f32 `exp` is finite and
/// non-zero (subnormal results included) and past both ends (exactly 0 and inf), with NaN
/// passing through and `exp(0) = 1` exactly.
#[test]
fn f32_exp_is_within_two_ulp_of_the_f64_exp() {
    let mut xs: Vec<f32> = (-1100..=1100).map(|k| k as f32 * 0.1).collect();
    xs.extend([
        -1e30,
        -800.0,
        -200.5,
        -103.97,
        88.72,
        200.5,
        1e30,
        f32::NAN,
        0.0,
        -0.0,
    ]);
    let n = xs.len();
    let text = format!(
        "HloModule m\nENTRY e {{ x = f32[{n}] parameter(0)\n  a = f32[{n}] exponential(x)\n  \
         w = f64[{n}] convert(x)\n  ew = f64[{n}] exponential(w)\n  b = f32[{n}] convert(ew)\n  \
         ROOT t = (f32[{n}], f32[{n}]) tuple(a, b) }}"
    );
    let inputs = vec![f32s(vec![n], xs.clone())];
    let plan = plan_entry(&module(&text), &h100()).expect("plan");
    let out = [(hlo::DType::F32, vec![n]), (hlo::DType::F32, vec![n])];
    let (got, _) = run_plan_counted(&plan, &inputs, &out).expect("runs");
    let bits = |a: &Array| match a.data() {
        Data::F32(v) => v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>(),
        _ => panic!("f32 output"),
    };
    let (narrow, wide) = (bits(&got[0]), bits(&got[1]));
    for (k, x) in xs.iter().enumerate() {
        // Results are non-negative (or NaN): their bits are ordered as their values.
        // Exact: NaN, exp(0) = 1, and 0 or inf well past the ends of the range.
        let exact = x.is_nan() || *x == 0.0 || x.abs() >= 110.0;
        let ulps = narrow[k].abs_diff(wide[k]);
        if exact {
            assert_eq!(narrow[k], wide[k], "exp({x})");
        } else {
            assert!(ulps <= 2, "exp({x}): {ulps} ulp");
        }
    }
    check_text(&text, Some(inputs));
}
