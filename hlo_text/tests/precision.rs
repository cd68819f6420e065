//! `hlo::allow_excess_precision` on modules written as HLO text (here, not in the IR
//! crate, because the IR crate cannot depend on the text parser).

use hlo::allow_excess_precision;
use hlo::{Opcode, PrimitiveType};
use hlo_text::parse_module;

const TEXT: &str = "HloModule m\n\nENTRY e {\n  a = bf16[2] parameter(0)\n  b = bf16[2] parameter(1)\n  m = bf16[2] multiply(a, b)\n  w = f32[2] convert(m)\n  n = bf16[2] negate(m)\n  ROOT t = (f32[2], bf16[2]) tuple(w, n)\n}\n";

#[test]
fn widening_convert_of_narrow_arithmetic_reads_it_in_f32() {
    let m = parse_module(TEXT).unwrap();
    let r = allow_excess_precision(&m);
    let e = r.entry_computation();
    let w = &e.instructions[e.find("w").unwrap().index()];
    assert_eq!(w.opcode, Opcode::Multiply);
    assert_eq!(w.shape.element_type(), Some(PrimitiveType::F32));
    for o in &w.operands {
        let oi = &e.instructions[o.index()];
        assert_eq!(oi.opcode, Opcode::Convert);
        assert_eq!(oi.shape.element_type(), Some(PrimitiveType::F32));
    }
    // The narrow result and its other user are unchanged.
    let n = &e.instructions[e.find("n").unwrap().index()];
    assert_eq!(e.instructions[n.operands[0].index()].name, "m");
    assert!(hlo_verify::verify(&r).is_ok());
}

#[test]
fn other_converts_and_strict_modules_are_unchanged() {
    let text = "HloModule m\n\nENTRY e {\n  a = bf16[2] parameter(0)\n  r = bf16[2] reshape(a)\n  ROOT w = f32[2] convert(r)\n}\n";
    let m = parse_module(text).unwrap();
    assert_eq!(allow_excess_precision(&m), m);
}
