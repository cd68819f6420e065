//! The StableHLO front end on the linear-algebra ops JAX exports: `stablehlo.triangular_solve`
//! in the generic form JAX prints and in the pretty form, lowered to HLO `triangular-solve`
//! with XLA's options.
use hlo::{Opcode, Transpose, TriangularSolveOptions};
use hlo_front::parse_stablehlo;

fn solve_module(op: &str) -> String {
    format!(
        "module @m {{\n  func.func public @main(%a: tensor<2x4x4xf32>, %b: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {{\n    %0 = {op} : (tensor<2x4x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>\n    return %0 : tensor<2x4x3xf32>\n  }}\n}}\n"
    )
}

fn options_of(text: &str) -> TriangularSolveOptions {
    let m = parse_stablehlo(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let c = m.entry_computation();
    let (_, i) = c
        .iter()
        .find(|(_, i)| i.opcode == Opcode::TriangularSolve)
        .expect("a triangular-solve");
    i.attrs.triangular_solve.expect("options")
}

#[test]
fn generic_form_as_jax_prints_it() {
    let op = "\"stablehlo.triangular_solve\"(%a, %b) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose ADJOINT>, unit_diagonal = true}>";
    assert_eq!(
        options_of(&solve_module(op)),
        TriangularSolveOptions {
            left_side: true,
            lower: true,
            unit_diagonal: true,
            transpose_a: Some(Transpose::Adjoint),
        }
    );
}

#[test]
fn pretty_form() {
    let op = "stablehlo.triangular_solve %a, %b, left_side = true, lower = false, unit_diagonal = false, transpose_a = TRANSPOSE";
    assert_eq!(
        options_of(&solve_module(op)),
        TriangularSolveOptions {
            left_side: true,
            lower: false,
            unit_diagonal: false,
            transpose_a: Some(Transpose::Transpose),
        }
    );
}

#[test]
fn transpose_a_is_required_and_checked() {
    let err = |op: &str| parse_stablehlo(&solve_module(op)).unwrap_err().to_string();
    assert_eq!(
        err("stablehlo.triangular_solve %a, %b, left_side = true"),
        "3:5: stablehlo.triangular_solve: triangular_solve needs transpose_a"
    );
    assert_eq!(
        err("stablehlo.triangular_solve %a, %b, left_side = true, transpose_a = SIDEWAYS"),
        "3:5: stablehlo.triangular_solve: unknown transpose_a SIDEWAYS"
    );
}
