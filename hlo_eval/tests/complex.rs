//! Complex numbers (`c64`, `c128`) through the front ends and the reference evaluator: literals
//! in HLO text, StableHLO (pairs, hex parts, hex strings) and HloModuleProto; `complex`, `real`,
//! `imag`; arithmetic with XLA's formulas; exact messages for malformed complex literals.
use hlo::Complex;
use hlo::HloModule;
use hlo::{from_proto, to_proto};
use hlo::{Array, Data};
use hlo_eval::evaluate_flat;

fn c64(v: &[(f32, f32)]) -> Data {
    Data::C64(v.iter().map(|(a, b)| Complex::new(*a, *b)).collect())
}

fn c128(v: &[(f64, f64)]) -> Data {
    Data::C128(v.iter().map(|(a, b)| Complex::new(*a, *b)).collect())
}

fn eval(m: &HloModule, args: &[Array]) -> Vec<Array> {
    evaluate_flat(m, args).unwrap_or_else(|e| panic!("{e}"))
}

const HLO: &str = r#"HloModule m

ENTRY main {
  p = c64[2]{0} parameter(0)
  k = c64[2]{0} constant({(1, 2), (-0.5, inf)})
  q = c64[2]{0} divide(p, k)
  r = f32[2]{0} real(q)
  i = f32[2]{0} imag(q)
  z = c128[] constant((0.25, -1e+300))
  a = f32[2]{0} abs(k)
  ROOT t = (c64[2]{0}, f32[2]{0}, f32[2]{0}, c128[], f32[2]{0}) tuple(q, r, i, z, a)
}
"#;

#[test]
fn hlo_text_constants_print_parse_and_proto_round_trip() {
    let m = hlo_text::parse_module(HLO).unwrap();
    let printed = hlo_text::print_module(&m);
    assert!(
        printed.contains("constant({(1, 2), (-0.5, inf)})"),
        "{printed}"
    );
    assert!(printed.contains("constant((0.25, -1e+300))"), "{printed}");
    let again = hlo_text::parse_module(&printed).unwrap();
    assert_eq!(hlo_text::print_module(&again), printed);
    // HloModuleProto: LiteralProto.c64s / c128s, real and imaginary parts interleaved.
    let proto = to_proto(&m).unwrap();
    let consts: Vec<_> = proto
        .hlo_module
        .as_ref()
        .unwrap()
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .filter_map(|i| i.literal.as_ref())
        .collect();
    assert_eq!(consts[0].c64s, vec![1.0, 2.0, -0.5, f32::INFINITY]);
    assert_eq!(consts[1].c128s, vec![0.25, -1e300]);
    let back = from_proto(&proto).unwrap();
    assert_eq!(hlo_text::print_module(&back), printed);
}

#[test]
fn hlo_text_evaluates_with_xla_division() {
    let m = hlo_text::parse_module(HLO).unwrap();
    let p = Array::new(vec![2], c64(&[(5.0, 0.0), (1.0, 1.0)])).unwrap();
    let out = eval(&m, &[p]);
    // 5 / (1+2i) = 1-2i; (1+i) / (-0.5+∞i): a finite dividend over an infinite divisor is 0.
    assert_eq!(out[0].data(), &c64(&[(1.0, -2.0), (0.0, -0.0)]));
    assert_eq!(out[1].data(), &Data::F32(vec![1.0, 0.0]));
    assert_eq!(out[2].data(), &Data::F32(vec![-2.0, -0.0]));
    assert_eq!(out[3].data(), &c128(&[(0.25, -1e300)]));
    assert_eq!(out[4].data(), &Data::F32(vec![5f32.sqrt(), f32::INFINITY]));
}

/// A StableHLO module returning `body`'s `%0` of type `ty`.
fn shlo(body: &str, ty: &str) -> String {
    format!("module @m {{\n  func.func public @main() -> {ty} {{\n{body}\n    return %0 : {ty}\n  }}\n}}\n")
}

fn shlo_value(body: &str, ty: &str) -> Data {
    let m = hlo_front::parse_stablehlo(&shlo(body, ty)).unwrap_or_else(|e| panic!("{e}"));
    eval(&m, &[]).remove(0).into_parts().1
}

#[test]
fn stablehlo_complex_literals() {
    let splat = shlo_value(
        "    %0 = stablehlo.constant dense<(1.000000e+00,-2.500000e-01)> : tensor<2xcomplex<f32>>",
        "tensor<2xcomplex<f32>>",
    );
    assert_eq!(splat, c64(&[(1.0, -0.25), (1.0, -0.25)]));
    let array = shlo_value(
        "    %0 = stablehlo.constant dense<[[(1.0,2.0)], [(3,-4)]]> : tensor<2x1xcomplex<f64>>",
        "tensor<2x1xcomplex<f64>>",
    );
    assert_eq!(array, c128(&[(1.0, 2.0), (3.0, -4.0)]));
    // MLIR prints NaN parts as bit patterns of the part type, as JAX's modules carry them.
    let hex_parts = shlo_value(
        "    %0 = stablehlo.constant dense<(0x7FC00000,0x3F800000)> : tensor<complex<f32>>",
        "tensor<complex<f32>>",
    );
    let Data::C64(v) = &hex_parts else {
        panic!("{hex_parts:?}")
    };
    assert!(v[0].re.is_nan() && v[0].im == 1.0, "{v:?}");
    let hex_parts = shlo_value(
        "    %0 = stablehlo.constant dense<(1.5,0xFFF0000000000000)> : tensor<complex<f64>>",
        "tensor<complex<f64>>",
    );
    assert_eq!(hex_parts, c128(&[(1.5, f64::NEG_INFINITY)]));
    // The hex-string form: each element its real then imaginary part, little-endian.
    let hex = shlo_value(
        "    %0 = stablehlo.constant dense<\"0x0000803F000000C0\"> : tensor<complex<f32>>",
        "tensor<complex<f32>>",
    );
    assert_eq!(hex, c64(&[(1.0, -2.0)]));
}

#[test]
fn stablehlo_complex_real_imag_lower_to_hlo() {
    let text = "module @m {\n  func.func public @main(%a: tensor<2xf64>, %b: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xcomplex<f64>>) {\n    %0 = stablehlo.complex %a, %b : tensor<2xcomplex<f64>>\n    %1 = stablehlo.real %0 : (tensor<2xcomplex<f64>>) -> tensor<2xf64>\n    %2 = stablehlo.imag %0 : (tensor<2xcomplex<f64>>) -> tensor<2xf64>\n    %3 = stablehlo.negate %0 : tensor<2xcomplex<f64>>\n    return %1, %2, %3 : tensor<2xf64>, tensor<2xf64>, tensor<2xcomplex<f64>>\n  }\n}\n";
    let m = hlo_front::parse_stablehlo(text).unwrap_or_else(|e| panic!("{e}"));
    let printed = hlo_text::print_module(&m);
    for op in [" complex(", " real(", " imag(", " negate("] {
        assert!(printed.contains(op), "{op} in {printed}");
    }
    let a = Array::new(vec![2], Data::F64(vec![1.0, -3.0])).unwrap();
    let b = Array::new(vec![2], Data::F64(vec![0.5, 0.0])).unwrap();
    let out = eval(&m, &[a.clone(), b.clone()]);
    assert_eq!((&out[0], &out[1]), (&a, &b));
    assert_eq!(out[2].data(), &c128(&[(-1.0, -0.5), (3.0, -0.0)]));
}

fn shlo_err(body: &str, ty: &str) -> String {
    match hlo_front::parse_stablehlo(&shlo(body, ty)) {
        Ok(m) => panic!("accepted:\n{}", hlo_text::print_module(&m)),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_complex_literals_are_refused_exactly() {
    let ty = "tensor<complex<f32>>";
    let one = |v: &str| {
        shlo_err(
            &format!("    %0 = stablehlo.constant dense<{v}> : {ty}"),
            ty,
        )
    };
    assert_eq!(
        one("(1.0)"),
        "3:39: stablehlo.constant: expected ',', found ')'"
    );
    assert_eq!(
        one("(1.0,)"),
        "3:40: stablehlo.constant: expected a number or a hex bit pattern (complex part), found ')'"
    );
    assert_eq!(
        one("(0x1FFFFFFFF,0.0)"),
        "3:5: stablehlo.constant: complex part 0x1FFFFFFFF is wider than the f32 parts of c64"
    );
    assert_eq!(
        one("\"0x0000803F\""),
        "3:5: stablehlo.constant: hex dense literal has 4 bytes; 1 of c64 needs 8"
    );
    let hlo_err = |v: &str| {
        let text = format!("HloModule m\n\nENTRY e {{\n  ROOT k = c64[] constant({v})\n}}\n");
        hlo_text::parse_module(&text).unwrap_err().to_string()
    };
    assert_eq!(
        // The constant's own ')' closes the value; the constant then misses its ')'.
        hlo_err("(1, 2"),
        "5:1: expected ')' closing the constant, found '}'"
    );
    assert_eq!(
        hlo_err("1"),
        "4:27: expected '(' starting a complex value, found '1'"
    );
    assert_eq!(hlo_err("(1, x)"), "4:27: invalid c64 literal value x");
}

/// A complex dot is four real dots on the parts (as the compiler's `complex-dot` pass makes it),
/// never the real parts alone: `(1 + i)(1 + i)` summed over 2 is `4i`.
#[test]
fn complex_dots_multiply_both_parts() {
    let text = "HloModule m\n\nENTRY e {\n  a = c64[2,2] parameter(0)\n  \
                ROOT d = c64[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let m = hlo_text::parse_module(text).unwrap();
    let a = Array::new(vec![2, 2], c64(&[(1.0, 1.0); 4])).unwrap();
    let d = evaluate_flat(&m, &[a]).unwrap();
    assert_eq!(d[0], Array::new(vec![2, 2], c64(&[(0.0, 4.0); 4])).unwrap());
}
