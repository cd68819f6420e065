//! XLA's `mulhi` opcode, which the parser expands into the ops StableHLO's CHLO legalization
//! lowers `chlo.mulhi` to (the values are checked against XLA:CPU by the harness's `chlo`
//! model suite: `testdata/chlo/mulhi_*.hlo` and the Philox PRNGs).

use hlo::Opcode;
use hlo_text::{parse_module, print_module, ParseErrorKind};

fn module(ty: &str, rest: &str) -> String {
    format!(
        "HloModule m\nENTRY e {{\n  x = {ty}[3]{{0}} parameter(0)\n  y = {ty}[3]{{0}} parameter(1)\n  ROOT hi = {ty}[3]{{0}} mulhi(x, y){rest}\n}}\n"
    )
}

fn opcodes(text: &str) -> Vec<Opcode> {
    let m = parse_module(text).unwrap_or_else(|e| panic!("{e}"));
    let e = m.entry_computation();
    e.instructions.iter().map(|i| i.opcode).collect()
}

#[test]
fn narrow_types_widen_multiply_and_shift() {
    use Opcode::*;
    let signed = opcodes(&module("s16", ""));
    assert_eq!(
        signed,
        [
            Parameter,
            Parameter,
            Convert,
            Convert,
            Multiply,
            Constant,
            Broadcast,
            ShiftRightArithmetic,
            Convert
        ]
    );
    let unsigned = opcodes(&module("u32", ""));
    assert_eq!(unsigned[7], ShiftRightLogical);
}

#[test]
fn the_last_instruction_keeps_the_written_name_root_and_metadata() {
    let text = module("u8", ", metadata={op_name=\"jit(f)/mul_hi\"}");
    let m = parse_module(&text).unwrap();
    let e = m.entry_computation();
    let root = &e[e.root];
    assert_eq!(root.name, "hi");
    assert_eq!(root.opcode, Opcode::Convert);
    assert_eq!(root.shape.to_string(), "u8[3]{0}");
    assert_eq!(
        root.metadata.as_ref().and_then(|md| md.op_name.as_deref()),
        Some("jit(f)/mul_hi")
    );
    assert_eq!(e.instructions[2].name, "hi.mulhi.0");
    // The expansion prints as ordinary HLO and reads back the same.
    let again = parse_module(&print_module(&m)).unwrap();
    assert_eq!(print_module(&again), print_module(&m));
}

#[test]
fn sixty_four_bits_use_partial_products() {
    let unsigned = opcodes(&module("u64", ""));
    let muls = unsigned.iter().filter(|o| **o == Opcode::Multiply).count();
    assert_eq!(muls, 4, "{unsigned:?}");
    let signed = opcodes(&module("s64", ""));
    assert_eq!(signed.last(), Some(&Opcode::Convert));
    assert_eq!(signed.iter().filter(|o| **o == Opcode::Select).count(), 2);
}

#[track_caller]
fn refused(text: &str, kind: ParseErrorKind, message: &str) {
    let Err(e) = parse_module(text) else {
        panic!("expected an error");
    };
    assert_eq!(e.kind, kind);
    assert_eq!(e.message, message);
}

#[test]
fn a_mulhi_without_its_shape_is_refused() {
    refused(
        "HloModule m\nENTRY e {\n  x = u32[3]{0} parameter(0)\n  ROOT hi = mulhi(x, x)\n}\n",
        ParseErrorKind::Structure,
        "'hi': mulhi needs its shape written (its operands' shape)",
    );
}

#[test]
fn a_mulhi_with_one_operand_is_refused() {
    refused(
        "HloModule m\nENTRY e {\n  x = u32[3]{0} parameter(0)\n  ROOT hi = u32[3]{0} mulhi(x)\n}\n",
        ParseErrorKind::Structure,
        "'hi': mulhi takes 2 operands, not 1",
    );
}

#[test]
fn a_float_mulhi_is_refused() {
    refused(
        &module("f32", ""),
        ParseErrorKind::Structure,
        "'hi': mulhi's operands must be 8-, 16-, 32- or 64-bit integers, not f32",
    );
}

#[test]
fn an_attribute_other_than_metadata_is_refused() {
    refused(
        &module("u32", ", sharding={replicated}"),
        ParseErrorKind::BadAttribute,
        "attribute 'sharding' on mulhi (it takes metadata only, once)",
    );
}
