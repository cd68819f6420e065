//! Complex numbers (`c64`, `c128`) in generated kernels: HLO modules run on the PTX emulator
//! and compared with the reference evaluator (bit for bit where both compute the same IEEE
//! sequence: arithmetic, division with its special cases, abs, conversions), and the precise
//! refusals of what the code generator does not do on complex values.
mod codegen_util;

use codegen_util::*;
use hlo::Complex;
use hlo::{Array, Data};

fn module(text: &str) -> hlo::HloModule {
    hlo_text::parse_module(text).unwrap_or_else(|e| panic!("test HLO parses: {e}"))
}

/// Device outputs of `text` on `inputs`, and the evaluator's.
fn run_both(text: &str, inputs: &[Array]) -> (Vec<Array>, Vec<Array>) {
    let m = module(text);
    let plan = plan_entry(&m, &h100()).unwrap_or_else(|e| panic!("compiles: {e:#}"));
    let root = &m.entry_computation()[m.entry_computation().root].shape;
    let got = run_plan(&plan, inputs, &leaves(root).unwrap()).unwrap();
    let want = hlo_eval::evaluate_flat(&m, inputs).unwrap();
    (got, want)
}

/// Bit-identical results (NaN payloads aside: any NaN matches any NaN).
fn assert_same_bits(got: &[Array], want: &[Array]) {
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let c = hlo_eval::compare(g, w, hlo_eval::Tolerance::EXACT);
        assert!(c.ok, "output {k}: {c:?}\n got {g:?}\nwant {w:?}");
        // EXACT still equates -0 and +0: compare the signs of zeros too.
        let (gb, wb) = (g.data().to_bits(), w.data().to_bits());
        for (i, (x, y)) in gb.iter().zip(&wb).enumerate() {
            let nan = |v: u64| {
                let (f32_nan, f64_nan) = (
                    f32::from_bits(v as u32).is_nan(),
                    f64::from_bits(v).is_nan(),
                );
                f32_nan || f64_nan
            };
            assert!(
                x == y || nan(*x) || nan(*y),
                "output {k} word {i}: {x:#x} vs {y:#x}"
            );
        }
    }
}

fn c64(v: &[(f32, f32)]) -> Array {
    let data = v.iter().map(|(a, b)| Complex::new(*a, *b)).collect();
    Array::new(vec![v.len()], Data::C64(data)).unwrap()
}

fn c128(v: &[(f64, f64)]) -> Array {
    let data = v.iter().map(|(a, b)| Complex::new(*a, *b)).collect();
    Array::new(vec![v.len()], Data::C128(data)).unwrap()
}

fn elementwise(ty: &str, part: &str, n: usize) -> String {
    format!(
        "HloModule m\n\nENTRY e {{\n  x = {ty}[{n}] parameter(0)\n  y = {ty}[{n}] parameter(1)\n  \
         a = {ty}[{n}] add(x, y)\n  s = {ty}[{n}] subtract(x, y)\n  m = {ty}[{n}] multiply(x, y)\n  \
         d = {ty}[{n}] divide(x, y)\n  g = {ty}[{n}] negate(x)\n  b = {part}[{n}] abs(y)\n  \
         sg = {ty}[{n}] sign(y)\n  r = {part}[{n}] real(d)\n  i = {part}[{n}] imag(d)\n  \
         c = {ty}[{n}] complex(i, r)\n  eq = pred[{n}] compare(x, y), direction=EQ\n  \
         ne = pred[{n}] compare(x, y), direction=NE\n  fin = pred[{n}] is-finite(x)\n  \
         sel = {ty}[{n}] select(ne, m, c)\n  \
         ROOT t = ({ty}[{n}], {ty}[{n}], {ty}[{n}], {ty}[{n}], {ty}[{n}], {part}[{n}], {ty}[{n}], \
         {ty}[{n}], pred[{n}], pred[{n}], pred[{n}], {ty}[{n}]) \
         tuple(a, s, m, d, g, b, sg, c, eq, ne, fin, sel)\n}}\n"
    )
}

/// Dividends and divisors around the edges: tiny and huge magnitudes (where |b|² under- or
/// overflows), zeros, infinities, NaN, and ordinary values.
fn division_cases() -> Vec<((f64, f64), (f64, f64))> {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    vec![
        ((1.0, 2.0), (3.0, -4.0)),
        ((5.0, 5.0), (1.0, 2.0)),
        ((1e-30, 2e-30), (3e-30, 1e-30)),
        ((1e30, -1e30), (1e30, 1e30)),
        ((1e-40, 1.0), (1e-38, 1e-39)),
        ((1.0, -2.0), (0.0, 0.0)),
        ((1.0, 0.0), (-0.0, 0.0)),
        ((0.0, 0.0), (0.0, 0.0)),
        ((inf, 0.0), (1.0, 1.0)),
        ((inf, -inf), (2.0, 0.0)),
        ((1.0, 1.0), (inf, 0.0)),
        ((-3.0, 4.0), (inf, -inf)),
        ((nan, 0.0), (1.0, 0.0)),
        ((1.0, 0.0), (nan, nan)),
        ((inf, inf), (inf, inf)),
        ((0.0, -0.0), (2.0, 3.0)),
        ((3.0, 3.0), (3.0, 3.0)),
        ((-7.0, 0.5), (0.0, -0.25)),
    ]
}

#[test]
fn c64_elementwise_matches_the_evaluator_bit_for_bit() {
    let cases = division_cases();
    let n = cases.len();
    let x = c64(&cases
        .iter()
        .map(|(a, _)| (a.0 as f32, a.1 as f32))
        .collect::<Vec<_>>());
    let y = c64(&cases
        .iter()
        .map(|(_, b)| (b.0 as f32, b.1 as f32))
        .collect::<Vec<_>>());
    let (got, want) = run_both(&elementwise("c64", "f32", n), &[x, y]);
    assert_same_bits(&got, &want);
}

#[test]
fn c128_elementwise_matches_the_evaluator_bit_for_bit() {
    let mut cases = division_cases();
    cases.push(((1e300, 1e-300), (1e-300, 1e300)));
    cases.push(((1e-310, 0.0), (1e-300, 1e-308)));
    let n = cases.len();
    let x = c128(&cases.iter().map(|(a, _)| *a).collect::<Vec<_>>());
    let y = c128(&cases.iter().map(|(_, b)| *b).collect::<Vec<_>>());
    let (got, want) = run_both(&elementwise("c128", "f64", n), &[x, y]);
    assert_same_bits(&got, &want);
}

#[test]
fn conversions_constants_and_iota() {
    let text = "HloModule m\n\nENTRY e {\n  x = c64[4] parameter(0)\n  f = f32[4] parameter(1)\n  \
                s = s32[4] parameter(2)\n  w = c128[4] convert(x)\n  n = c64[4] convert(w)\n  \
                r = f64[4] convert(x)\n  cf = c64[4] convert(f)\n  cs = c128[4] convert(s)\n  \
                k = c64[4] constant({(1, -1), (0.5, 2), (-0, 0), (inf, nan)})\n  \
                io = c128[4] iota(), iota_dimension=0\n  p = c64[4] add(n, k)\n  \
                ROOT t = (c128[4], c64[4], f64[4], c64[4], c128[4], c64[4], c128[4]) \
                tuple(w, n, r, cf, cs, p, io)\n}\n";
    let x = c64(&[
        (1.5, -2.0),
        (0.1, 3e38),
        (-0.0, f32::NAN),
        (f32::INFINITY, 1.0),
    ]);
    let f = Array::new(vec![4], Data::F32(vec![1.0, -0.0, f32::NAN, 2.5])).unwrap();
    let s = Array::new(vec![4], Data::S32(vec![-3, 0, 7, i32::MAX])).unwrap();
    let (got, want) = run_both(text, &[x, f, s]);
    assert_same_bits(&got, &want);
}

#[test]
fn data_movement_on_complex() {
    let text = "HloModule m\n\nENTRY e {\n  x = c128[2,3] parameter(0)\n  \
                i = s32[] parameter(1)\n  t = c128[3,2] transpose(x), dimensions={1,0}\n  \
                b = c128[2,3,2] broadcast(t), dimensions={1,2}\n  r = c128[6] reshape(x)\n  \
                sl = c128[2] slice(r), slice={[1:5:2]}\n  z = c128[] constant((0, 0))\n  \
                p = c128[4,5] pad(x, z), padding=1_1x1_1\n  c = c128[8] concatenate(r, sl), dimensions={0}\n  \
                rv = c128[2,3] reverse(x), dimensions={1}\n  \
                ds = c128[1,2] dynamic-slice(x, i, i), dynamic_slice_sizes={1,2}\n  \
                ROOT o = (c128[2,3,2], c128[4,5], c128[8], c128[2,3], c128[1,2]) \
                tuple(b, p, c, rv, ds)\n}\n";
    let m = module(text);
    let mut inputs = random_inputs(&m, 7).unwrap();
    inputs[1] = Array::new(vec![], Data::S32(vec![1])).unwrap();
    run_and_compare(&m, &inputs, None, &h100()).unwrap_or_else(|e| panic!("{e:#}"));
}

const ADD_C64: &str = "add {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  \
                       ROOT s = c64[] add(a, b)\n}\n";

#[test]
fn c64_reductions_match_the_evaluator() {
    // Rows short and long (warp shuffles and the shared-memory tree), and a column reduction.
    for (dims, red, out) in [("4,7", "1", "4"), ("3,300", "1", "3"), ("40,5", "0", "5")] {
        let text = format!(
            "HloModule m\n\n{ADD_C64}\nENTRY e {{\n  x = c64[{dims}] parameter(0)\n  \
             z = c64[] constant((0, 0))\n  \
             ROOT r = c64[{out}] reduce(x, z), dimensions={{{red}}}, to_apply=add\n}}\n"
        );
        let m = module(&text);
        let inputs = random_inputs(&m, 3).unwrap();
        run_and_compare(&m, &inputs, None, &h100()).unwrap_or_else(|e| panic!("{dims}: {e:#}"));
    }
}

const ADD_C128: &str = "add {\n  a = c128[] parameter(0)\n  b = c128[] parameter(1)\n  \
                        ROOT s = c128[] add(a, b)\n}\n";

/// `c128` elements take two 8-byte shared-memory regions of the tree (real parts, imaginary
/// parts): rows short (shuffles only) and long (the tree), a column reduction, a reduction
/// to a scalar, and a variadic reduce of a `c128` and an `f32` component.
#[test]
fn c128_reductions_match_the_evaluator() {
    for (dims, red, out) in [
        ("4,7", "1", "4"),
        ("3,300", "1", "3"),
        ("40,5", "0", "5"),
        ("2,1000", "0,1", ""),
    ] {
        let text = format!(
            "HloModule m\n\n{ADD_C128}\nENTRY e {{\n  x = c128[{dims}] parameter(0)\n  \
             z = c128[] constant((0, 0))\n  \
             ROOT r = c128[{out}] reduce(x, z), dimensions={{{red}}}, to_apply=add\n}}\n"
        );
        let m = module(&text);
        let inputs = random_inputs(&m, 5).unwrap();
        run_and_compare(&m, &inputs, None, &h100()).unwrap_or_else(|e| panic!("{dims}: {e:#}"));
    }
    let text = "HloModule m\n\npair {\n  a = c128[] parameter(0)\n  b = f32[] parameter(1)\n  \
                c = c128[] parameter(2)\n  d = f32[] parameter(3)\n  m = c128[] multiply(a, c)\n  \
                x = f32[] maximum(b, d)\n  ROOT t = (c128[], f32[]) tuple(m, x)\n}\n\n\
                ENTRY e {\n  x = c128[3,200] parameter(0)\n  y = f32[3,200] parameter(1)\n  \
                one = c128[] constant((1, 0))\n  lo = f32[] constant(-inf)\n  \
                ROOT r = (c128[3], f32[3]) reduce(x, y, one, lo), dimensions={1}, to_apply=pair\n}\n";
    let m = module(text);
    let mut inputs = random_inputs(&m, 8).unwrap();
    // Factors of modulus near 1 keep the product of 200 of them finite.
    if let Data::C128(v) = inputs[0].data() {
        let near_one = v
            .iter()
            .map(|z| Complex::new(1.0 + z.re * 0.01, z.im * 0.01))
            .collect();
        inputs[0] = Array::new(vec![3, 200], Data::C128(near_one)).unwrap();
    }
    run_and_compare(&m, &inputs, None, &h100()).unwrap_or_else(|e| panic!("variadic: {e:#}"));
}

#[test]
fn random_c64_fusion_matches_under_tolerance() {
    let text =
        "HloModule m\n\nENTRY e {\n  x = c64[64] parameter(0)\n  y = c64[64] parameter(1)\n  \
                m = c64[64] multiply(x, y)\n  d = c64[64] divide(m, y)\n  a = f32[64] abs(d)\n  \
                ROOT t = (c64[64], f32[64]) tuple(d, a)\n}\n";
    let m = module(text);
    let inputs = random_inputs(&m, 99).unwrap();
    run_and_compare(&m, &inputs, None, &h100()).unwrap_or_else(|e| panic!("{e:#}"));
}

/// Operations the code generator does not do on complex values are refused naming the op and
/// the type, never computed on one part.
#[test]
fn unsupported_complex_operations_are_precise_errors() {
    let refused = |op: &str, ty: &str| {
        let text = format!(
            "HloModule m\n\nENTRY e {{\n  x = {ty}[4] parameter(0)\n  ROOT r = {ty}[4] {op}(x)\n}}\n"
        );
        match plan_entry(&module(&text), &h100()) {
            Ok(_) => panic!("{op} of {ty} compiled"),
            Err(e) => format!("{e:#}"),
        }
    };
    for (op, ty) in [("cbrt", "c64"), ("logistic", "c128"), ("erf", "c64")] {
        let e = refused(op, ty);
        assert!(e.contains(&format!("{op} is not defined for {ty}")), "{e}");
    }
    for (op, ty) in [("maximum", "c64"), ("minimum", "c128"), ("atan2", "c64")] {
        let text = format!(
            "HloModule m\n\nENTRY e {{\n  x = {ty}[4] parameter(0)\n  \
             ROOT r = {ty}[4] {op}(x, x)\n}}\n"
        );
        let e = format!("{:#}", plan_entry(&module(&text), &h100()).unwrap_err());
        assert!(e.contains(&format!("{op} is not defined for {ty}")), "{e}");
    }
    let text = "HloModule m\n\nENTRY e {\n  x = c64[4] parameter(0)\n  \
                ROOT r = pred[4] compare(x, x), direction=LT\n}\n";
    let e = format!("{:#}", plan_entry(&module(text), &h100()).unwrap_err());
    assert!(e.contains("compare is not defined for c64"), "{e}");
    let text = "HloModule m\n\nENTRY e {\n  x = c64[4] parameter(0)\n  \
                ROOT r = f64[4] bitcast-convert(x)\n}\n";
    let e = format!("{:#}", plan_entry(&module(text), &h100()).unwrap_err());
    assert!(e.contains("element type c64 is not supported"), "{e}");
}

/// The transcendentals of XLA on complex values, and `power(x, y)`.
fn transcendentals(ty: &str, n: usize) -> String {
    let ops = [
        "exponential",
        "exponential-minus-one",
        "log",
        "log-plus-one",
        "sqrt",
        "rsqrt",
        "sine",
        "cosine",
        "tan",
        "tanh",
    ];
    let mut body = String::new();
    let mut names = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        body.push_str(&format!("  u{i} = {ty}[{n}] {op}(x)\n"));
        names.push(format!("u{i}"));
    }
    body.push_str(&format!("  p = {ty}[{n}] power(x, y)\n"));
    names.push("p".into());
    let shapes = vec![format!("{ty}[{n}]"); names.len()].join(", ");
    format!(
        "HloModule m\n\nENTRY e {{\n  x = {ty}[{n}] parameter(0)\n  y = {ty}[{n}] parameter(1)\n\
         {body}  ROOT t = ({shapes}) tuple({})\n}}\n",
        names.join(", ")
    )
}

/// Arguments around XLA's special cases: zeros of both signs, infinities, NaN parts, tiny and
/// huge magnitudes (within the kernels' sine/cosine reduction range, |x| < 1e6: `math` has no
/// Payne-Hanek reduction), the branch cut, the
/// unit circle; the second element is the exponent of `power`.
fn transcendental_cases() -> Vec<((f64, f64), (f64, f64))> {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    vec![
        ((0.5, -1.25), (2.0, 0.5)),
        ((-3.0, 4.0), (0.5, 0.0)),
        ((-4.0, 0.0), (0.5, 0.0)),
        ((-4.0, -0.0), (-1.5, 2.0)),
        ((0.0, 0.0), (0.0, 0.0)),
        ((-0.0, 0.0), (2.0, 0.0)),
        ((0.0, -0.0), (-1.0, 0.0)),
        ((1.0, 0.0), (7.0, -3.0)),
        ((inf, 0.0), (2.0, 0.0)),
        ((inf, 0.0), (-2.0, 0.0)),
        ((-inf, 1.0), (1.0, 1.0)),
        ((1.0, inf), (0.5, 0.0)),
        ((2.0, -inf), (0.0, 1.0)),
        ((inf, inf), (1.0, 0.0)),
        ((nan, 0.0), (1.0, 0.0)),
        ((1.0, nan), (nan, 0.0)),
        ((inf, nan), (1.0, 1.0)),
        ((1e-20, 3e-21), (3.0, 0.0)),
        ((1e-7, -2e-8), (0.25, 0.25)),
        ((30.0, 1.0), (1.0, 0.0)),
        ((-30.0, 2.0), (0.5, -0.5)),
        ((100.0, -0.5), (1.0, 1.0)),
        ((2.0, 1000.0), (0.0, 0.0)),
        ((3e5, -3e5), (0.5, 0.0)),
        ((-0.5, 0.75), (-0.5, 3.0)),
        ((0.6, 0.8), (10.0, 0.0)),
    ]
}

/// Worst relative difference per part between two complex arrays of the same shape (0 where
/// both are equal or both NaN; 1 where exactly one is NaN or the infinities differ), with
/// differences below `floor` in absolute value counted as 0.
fn worst_rel(got: &Array, want: &Array, floor: f64) -> (f64, usize) {
    let parts = |a: &Array| {
        hlo::parts_of(a)
            .expect("complex output")
            .data()
            .to_f64_vec()
    };
    let (g, w) = (parts(got), parts(want));
    let mut worst = (0.0, 0);
    for (i, (x, y)) in g.iter().zip(&w).enumerate() {
        let e = if x == y || (x.is_nan() && y.is_nan()) {
            0.0
        } else if x.is_nan() || y.is_nan() || x.is_infinite() || y.is_infinite() {
            1.0
        } else if (x - y).abs() <= floor {
            0.0
        } else {
            (x - y).abs() / y.abs().max(f64::MIN_POSITIVE)
        };
        if e > worst.0 {
            worst = (e, i);
        }
    }
    worst
}

fn check_transcendentals(ty: &str, inputs: [Array; 2], rtol: f64, floor: f64) {
    let n = inputs[0].dims()[0];
    let (got, want) = run_both(&transcendentals(ty, n), &inputs);
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        let (e, i) = worst_rel(g, w, floor);
        assert!(
            e <= rtol,
            "{ty} output {k}, word {i}: relative difference {e:e}\n got {g:?}\nwant {w:?}"
        );
    }
}

#[test]
fn c64_transcendentals_match_the_evaluator() {
    let cases = transcendental_cases();
    let f = |v: (f64, f64)| (v.0 as f32, v.1 as f32);
    let x = c64(&cases.iter().map(|(a, _)| f(*a)).collect::<Vec<_>>());
    let y = c64(&cases.iter().map(|(_, b)| f(*b)).collect::<Vec<_>>());
    // Both compute in f64 and round once: at most one f32 ulp apart.
    check_transcendentals("c64", [x, y], 2.0 * f64::from(f32::EPSILON), 1e-30);
}

#[test]
fn c128_transcendentals_match_the_evaluator() {
    let mut cases = transcendental_cases();
    cases.push(((700.0, 1e-300), (0.5, 0.0)));
    cases.push(((1e-310, 0.0), (2.0, 0.0)));
    let x = c128(&cases.iter().map(|(a, _)| *a).collect::<Vec<_>>());
    let y = c128(&cases.iter().map(|(_, b)| *b).collect::<Vec<_>>());
    // The f64 primitives are a few ulps from the host's; cancellations (sqrt's real part on
    // the negative axis is 2·cos(π/2)) leave absolute differences of about 1e-16.
    check_transcendentals("c128", [x, y], 1e-13, 1e-15);
}
