//! Verifier tests: each bad module reports the offending instruction with its location; several
//! problems are all reported.

use hlo_text::parse_module;
use hlo_verify::{verify, VerifyError};

fn errors(text: &str) -> Vec<VerifyError> {
    let m = parse_module(text).unwrap_or_else(|e| panic!("parse: {e}\n{text}"));
    match verify(&m) {
        Ok(()) => panic!("expected verifier errors for:\n{text}"),
        Err(e) => e,
    }
}

fn module(body: &str) -> String {
    format!(
        "HloModule m\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}}\n\nENTRY main {{\n{body}\n}}\n"
    )
}

#[track_caller]
fn expect_one(body: &str, instr: &str, needle: &str) {
    let text = module(body);
    let errs = errors(&text);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    let e = &errs[0];
    assert_eq!(e.instruction, instr, "{e}");
    assert!(e.kind.to_string().contains(needle), "{e} lacks {needle:?}");
    assert!(e.loc.line > 9, "{e}");
    assert!(e.to_string().contains(&format!("{}:", e.loc.line)), "{e}");
}

#[test]
fn good_module_verifies() {
    let text = module(
        "  p = f32[2,3]{1,0} parameter(0)\n  z = f32[] constant(0)\n  r = f32[2] reduce(p, z), dimensions={1}, to_apply=add\n  t = f32[3,2] transpose(p), dimensions={1,0}\n  d = f32[2,2] dot(p, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  ROOT o = (f32[2], f32[2,2]) tuple(r, d)",
    );
    verify(&parse_module(&text).unwrap()).unwrap();
}

#[test]
fn elementwise_mismatch() {
    expect_one(
        "  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n  ROOT a = f32[2] add(p, q)",
        "a",
        "same shape",
    );
}

#[test]
fn declared_shape_wrong() {
    expect_one(
        "  p = f32[2] parameter(0)\n  ROOT a = f32[3] negate(p)",
        "a",
        "declares shape f32[3]",
    );
}

#[test]
fn compare_must_be_pred() {
    expect_one(
        "  p = f32[2] parameter(0)\n  ROOT c = f32[2] compare(p, p), direction=LT",
        "c",
        "pred[2]",
    );
}

#[test]
fn reshape_element_count() {
    expect_one(
        "  p = f32[2,3] parameter(0)\n  ROOT r = f32[5] reshape(p)",
        "r",
        "element count",
    );
}

#[test]
fn broadcast_dims() {
    expect_one(
        "  p = f32[3] parameter(0)\n  ROOT b = f32[2,4] broadcast(p), dimensions={1}",
        "b",
        "does not match",
    );
}

#[test]
fn slice_out_of_bounds() {
    expect_one(
        "  p = f32[4] parameter(0)\n  ROOT s = f32[2] slice(p), slice={[3:5]}",
        "s",
        "invalid",
    );
}

#[test]
fn dot_contracting_mismatch() {
    expect_one(
        "  p = f32[2,3] parameter(0)\n  q = f32[4,2] parameter(1)\n  ROOT d = f32[2,2] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
        "d",
        "contracting",
    );
}

#[test]
fn reduce_reducer_arity() {
    expect_one(
        "  p = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[2] reduce(p, z, z), dimensions={1}, to_apply=add",
        "r",
        "2n",
    );
}

#[test]
fn while_body_mismatch() {
    let text = "HloModule m\n\nc {\n  p = s32[] parameter(0)\n  ROOT x = pred[] constant(true)\n}\n\nb {\n  p = s32[] parameter(0)\n  ROOT x = f32[] constant(1)\n}\n\nENTRY main {\n  i = s32[] constant(0)\n  ROOT w = s32[] while(i), condition=c, body=b\n}\n";
    let errs = errors(text);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].instruction, "w");
    assert_eq!(errs[0].loc.line, 15);
    assert!(
        errs[0].kind.to_string().contains("body returns"),
        "{}",
        errs[0]
    );
}

#[test]
fn call_argument_mismatch() {
    expect_one(
        "  p = f32[2] parameter(0)\n  ROOT c = f32[] call(p, p), to_apply=add",
        "c",
        "parameter 0",
    );
}

#[test]
fn get_tuple_element_index() {
    expect_one(
        "  p = (f32[], s32[]) parameter(0)\n  ROOT g = f32[] get-tuple-element(p), index=2",
        "g",
        "out of range",
    );
}

#[test]
fn every_error_is_reported() {
    let text = module(
        "  p = f32[2] parameter(0)\n  a = f32[3] negate(p)\n  b = s32[2] abs(p)\n  ROOT c = f32[2] exponential(p)",
    );
    let errs = errors(&text);
    let names: Vec<&str> = errs.iter().map(|e| e.instruction.as_str()).collect();
    assert_eq!(names, ["a", "b"], "{errs:#?}");
    assert_eq!(errs[0].loc.line, 11);
    assert_eq!(errs[1].loc.line, 12);
}

#[test]
fn entry_layout_mismatch() {
    let text = "HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n";
    let errs = errors(text);
    assert!(
        errs[0]
            .kind
            .to_string()
            .contains("entry_computation_layout"),
        "{errs:#?}"
    );
}

#[test]
fn missing_shape_is_inferred() {
    let m =
        parse_module("HloModule m\nENTRY e {\n p = f64[3] parameter(0)\n ROOT o = add(p, p)\n}\n")
            .unwrap();
    let e = m.entry_computation();
    assert_eq!(e[e.root].shape.to_string(), "f64[3]");
    verify(&m).unwrap();
}

#[test]
fn a_shape_whose_size_overflows_64_bits_is_refused_with_its_shape() {
    // 3 x 6148914691236517212 elements is 2^64 + 20: a wrapping product would see 20.
    let errs = errors(&module(
        "  p = f32[] parameter(0)\n  bc = f32[3,6148914691236517212] broadcast(p), dimensions={}\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(bc, z), dimensions={0,1}, to_apply=add",
    ));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].instruction, "bc");
    assert_eq!(
        errs[0].kind.to_string(),
        "shape f32[3,6148914691236517212] is larger than 2^63-1 bytes (its element count times its element size overflows a 64-bit size)"
    );
    assert!(matches!(errs[0].kind, hlo_verify::VerifyErrorKind::Size(_)));
    // The count fits 64 bits, the bytes (2^62 x 4) do not.
    expect_one(
        "  ROOT p = f32[4611686018427387904] parameter(0)",
        "p",
        "shape f32[4611686018427387904] is larger than 2^63-1 bytes",
    );
    // 2^63 - 1 one-byte elements fit; a tuple is checked element by element.
    let ok = module("  ROOT p = s8[9223372036854775807] parameter(0)");
    verify(&parse_module(&ok).unwrap()).unwrap();
    expect_one(
        "  ROOT p = (f32[2], s8[9223372036854775807,2]) parameter(0)",
        "p",
        "shape s8[9223372036854775807,2] is larger",
    );
}

#[test]
fn each_too_large_shape_is_reported_where_it_is_declared() {
    // Each too-large declaration is reported at itself, and no user is inferred from one (the
    // inference would multiply the same dimensions): three reports, all of the size.
    let errs = errors(&module(
        "  p = f32[4611686018427387904,4] parameter(0)\n  r = f32[4,4611686018427387904] reshape(p)\n  ROOT n = f32[4,4611686018427387904] negate(r)",
    ));
    let at: Vec<&str> = errs.iter().map(|e| e.instruction.as_str()).collect();
    assert_eq!(at, ["p", "r", "n"], "{errs:#?}");
    assert!(
        errs.iter()
            .all(|e| e.kind.to_string().contains("is larger than 2^63-1 bytes")),
        "{errs:#?}"
    );
}

const TRSM_OPTIONS: &str = "left_side=true, lower=true, transpose_a=NO_TRANSPOSE";

#[track_caller]
fn trsm_error(a: &str, b: &str, options: &str) -> String {
    let body = format!(
        "  a = {a} parameter(0)\n  b = {b} parameter(1)\n  ROOT t = {b} triangular-solve(a, b), {options}"
    );
    let errs = errors(&module(&body));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].instruction, "t");
    errs[0].kind.to_string()
}

#[test]
fn triangular_solve_verifies_both_sides_with_batch() {
    for (b, side) in [("f64[2,4,3]", "true"), ("f64[2,3,4]", "false")] {
        let text = module(&format!(
            "  a = f64[2,4,4] parameter(0)\n  b = {b} parameter(1)\n  ROOT t = {b} triangular-solve(a, b), left_side={side}, transpose_a=ADJOINT"
        ));
        verify(&parse_module(&text).unwrap()).unwrap();
    }
}

#[test]
fn triangular_solve_errors_are_exact() {
    assert_eq!(
        trsm_error("f32[4,4]", "f32[4,2]", "lower=true"),
        "triangular-solve: triangular-solve needs transpose_a="
    );
    assert_eq!(
        trsm_error("f32[4,3]", "f32[4,2]", TRSM_OPTIONS),
        "triangular-solve: a must be [..., n, n], found f32[4,3]"
    );
    assert_eq!(
        trsm_error("f32[4,4]", "f32[2,4]", TRSM_OPTIONS),
        "triangular-solve: b f32[2,4] does not fit a f32[4,4]: left_side=true needs b [..., n, m]"
    );
    assert_eq!(
        trsm_error("f32[2,4,4]", "f32[3,4,2]", "transpose_a=TRANSPOSE"),
        "triangular-solve: b f32[3,4,2] does not fit a f32[2,4,4]: left_side=false needs b [..., m, n]"
    );
    assert_eq!(
        trsm_error("s32[4,4]", "s32[4,2]", TRSM_OPTIONS),
        "triangular-solve: needs floating-point or complex operands of one type, found s32 and s32"
    );
    assert_eq!(
        trsm_error("f32[4,4]", "f64[4,2]", TRSM_OPTIONS),
        "triangular-solve: needs floating-point or complex operands of one type, found f32 and f64"
    );
}

#[test]
fn cholesky_errors_are_exact() {
    let error = |a: &str| {
        let errs = errors(&module(&format!(
            "  a = {a} parameter(0)\n  ROOT c = {a} cholesky(a), lower=true"
        )));
        assert_eq!(errs.len(), 1, "{errs:#?}");
        assert_eq!(errs[0].instruction, "c");
        errs[0].kind.to_string()
    };
    assert_eq!(
        error("f32[4,3]"),
        "cholesky: a must be [..., n, n], found f32[4,3]"
    );
    assert_eq!(
        error("f32[4]"),
        "cholesky: a must be [..., n, n], found f32[4]"
    );
    assert_eq!(
        error("s32[4,4]"),
        "cholesky: needs a floating-point or complex operand, found s32"
    );
    let ok = module("  a = c128[2,3,3] parameter(0)\n  ROOT c = c128[2,3,3] cholesky(a)");
    verify(&parse_module(&ok).unwrap()).unwrap();
}

fn bitcast_error(from: &str, to: &str) -> String {
    let body = format!("  x = {from} parameter(0)\n  ROOT b = {to} bitcast-convert(x)");
    let errs = errors(&module(&body));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    errs[0].kind.to_string()
}

#[test]
fn bitcast_convert_changes_width_by_a_minor_dimension() {
    for (from, to) in [
        ("f32[3]", "u8[3,4]"),
        ("u8[3,4]", "f32[3]"),
        ("f64[2]", "s16[2,4]"),
        ("f32[2]", "s32[2]"),
    ] {
        let text = module(&format!(
            "  x = {from} parameter(0)\n  ROOT b = {to} bitcast-convert(x)"
        ));
        verify(&parse_module(&text).unwrap()).unwrap();
    }
    let why = "the widths must divide each other (no pred or complex), and to a wider type the minor dimension must be the ratio";
    assert_eq!(
        bitcast_error("u8[3,2]", "f32[3]"),
        format!("bitcast-convert: u8[3,2] to f32: {why}")
    );
    assert_eq!(
        bitcast_error("c64[2]", "f32[2,2]"),
        format!("bitcast-convert: c64[2] to f32: {why}")
    );
}

/// One exact message per verifier check (the text after `LOC: COMPUTATION/INSTRUCTION: `).
/// Checks that text cannot reach (dangling handles, a cycle, a misnumbered parameter list) are
/// reached through `HloModuleProto` conversion and front ends that build the IR directly.
#[test]
fn each_verify_error_kind_has_its_message() {
    use hlo_verify::{ShapeError, VerifyErrorKind::*};
    let shape = |s: &str| hlo_text::parse_shape(s).expect("a shape");
    let add = hlo::Opcode::Add;
    let cases = [
        (NoEntry(7), "entry computation 7 does not exist"),
        (
            DuplicateComputation("add".into()),
            "computation name 'add' is used twice",
        ),
        (NoRoot, "the root is not an instruction of the computation"),
        (ParamSlot(1), "params[1] is not parameter(1)"),
        (
            ParamCount {
                instructions: 2,
                registered: 1,
            },
            "2 parameter instructions but 1 registered",
        ),
        (Cycle, "the instructions' operands form a cycle"),
        (
            DuplicateInstruction("x".into()),
            "instruction name 'x' is used twice",
        ),
        (
            MissingCallee(3),
            "calls computation #3 which does not exist",
        ),
        (MissingOperand(4), "operand #4 does not exist"),
        (
            DeclaredShape {
                opcode: add,
                declared: Box::new(shape("f32[2]")),
                inferred: Box::new(shape("f32[3]")),
            },
            "add declares shape f32[2] but its operands give f32[3]",
        ),
        (
            Shape {
                opcode: add,
                error: Box::new(ShapeError::MissingOperand { index: 1 }),
            },
            "add: missing operand 1",
        ),
        (
            EntryLayout,
            "entry_computation_layout does not match the entry computation's signature",
        ),
    ];
    for (kind, want) in cases {
        assert_eq!(kind.to_string(), want, "{kind:?}");
    }
}
