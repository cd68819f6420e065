//! The verifier: per-opcode shape inference and structural checks.

use crate::ir::{Attrs, Opcode};
use crate::shape::Shape;

/// Signatures of the computations an instruction calls, for inference of call-like opcodes:
/// `(parameter shapes, root shape)` per called computation, in attribute order.
pub type CalleeSignatures<'a> = [(Vec<&'a Shape>, &'a Shape)];

/// Infers the result shape of an instruction from its operands' shapes and attributes.
///
/// The returned shape has no layout. `callees` gives the called computations' signatures when
/// known. Errors say what is inconsistent.
pub fn infer_shape(
    opcode: Opcode,
    operands: &[&Shape],
    attrs: &Attrs,
    callees: Option<&CalleeSignatures<'_>>,
) -> Result<Shape, String> {
    let _ = (attrs, callees);
    if opcode.is_elementwise_binary() {
        if let [a, b] = operands {
            if !a.compatible(b) {
                return Err(format!("operand shapes {a} and {b} differ"));
            }
            return Ok(a.without_layout());
        }
    }
    Err(format!("cannot infer the shape of {opcode}"))
}

/// Verifies a module; returns every problem found.
pub fn verify(module: &crate::ir::HloModule) -> Result<(), Vec<crate::error::VerifyError>> {
    let _ = module;
    Ok(())
}
