//! A `dot` (or `convolution`) of complex operands becomes four real dots (convolutions) on the
//! parts, as
//! `(ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br)`: the gemm thunk is real (its
//! `alpha_imag` is 0 and no runtime in the forward window has a complex gemm), so complex
//! matrices go through it as real ones. XLA:GPU calls cuBLAS's complex gemm (`cgemm`), which
//! computes the same products with one rounding per part instead of per real product: the
//! difference is at the last bit of `f32`/`f64`. The reference evaluator decomposes the same
//! way (`hlo_eval::dot`), so `aot check-hlo` compares like with like.
//!
//! Convolutions: XLA:GPU refuses complex ones (its conv rewriter takes floating-point and
//! integral types only) and JAX expands them itself before XLA sees them (Gauss's three-product
//! form); a complex convolution that reaches this compiler is split like a dot, so the kernel
//! path and the cuDNN-style convolution thunk (`emit_convolution_thunk`) only see real ones.
//!
//! A dot or convolution that mixes complex and real operands is refused (HLO gives both one
//! element type).
use hlo::Attrs;
use hlo::{InstrId, Instruction, Opcode, Shape};

use crate::error::CompileError;
use crate::passes::emit::Emit;
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};
use crate::unsupported::UnsupportedExpansion;

/// Rewrites every complex dot of every computation.
pub fn run(module: &mut hlo::HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::All, |_, comp| {
        if !comp.instructions.iter().any(is_complex_dot) {
            return Ok(None);
        }
        let new = rebuild(comp, |r, _, old| {
            if !is_complex_dot(old) {
                return r.keep(old).map(Some);
            }
            let operands = r.operands(old)?;
            let shapes: Vec<Shape> = operands
                .iter()
                .map(|o| r.instrs().get(o.index()).map(|i| i.shape.clone()))
                .collect::<Option<_>>()
                .ok_or_else(|| CompileError::Internal(format!("{}: operands missing", old.name)))?;
            let refuse =
                |why: UnsupportedExpansion| CompileError::unsupported(&comp.name, old, why);
            let ([lhs, rhs], [ls, rs]) = (operands.as_slice(), shapes.as_slice()) else {
                return Err(refuse(UnsupportedExpansion::ComplexOperands(old.opcode)));
            };
            let complex = |s: &Shape| s.element_type().is_some_and(|t| t.is_complex());
            if !(complex(ls) && complex(rs)) {
                return Err(refuse(UnsupportedExpansion::ComplexMixed(old.opcode)));
            }
            let mut push = |i| r.push(i);
            Ok(Some(expand(old, [*lhs, *rhs], [ls, rs], &mut push)))
        })?;
        Ok(Some(new))
    })
}

fn is_complex_dot(i: &Instruction) -> bool {
    matches!(i.opcode, Opcode::Dot | Opcode::Convolution)
        && i.shape.element_type().is_some_and(|t| t.is_complex())
}

fn expand(
    old: &Instruction,
    [lhs, rhs]: [InstrId; 2],
    [ls, rs]: [&Shape; 2],
    push: &mut dyn FnMut(Instruction) -> InstrId,
) -> InstrId {
    let mut e = Emit::new(old, "cdot", push);
    let mut emit = |opcode, shape: Shape, operands: Vec<InstrId>, attrs: Attrs| {
        e.op(opcode, shape, operands, attrs)
    };
    let real_of = |s: &Shape| {
        let mut s = s.clone();
        if let Some(a) = s.as_array_mut() {
            a.element_type = a.element_type.complex_component();
        }
        s
    };
    let (lp, rp, out) = (real_of(ls), real_of(rs), real_of(&old.shape));
    let ar = emit(Opcode::Real, lp.clone(), vec![lhs], Attrs::default());
    let ai = emit(Opcode::Imag, lp, vec![lhs], Attrs::default());
    let br = emit(Opcode::Real, rp.clone(), vec![rhs], Attrs::default());
    let bi = emit(Opcode::Imag, rp, vec![rhs], Attrs::default());
    let mut dot = |a, b| emit(old.opcode, out.clone(), vec![a, b], old.attrs.clone());
    let (rr, ii, ri, ir) = (dot(ar, br), dot(ai, bi), dot(ar, bi), dot(ai, br));
    let re = emit(
        Opcode::Subtract,
        out.clone(),
        vec![rr, ii],
        Attrs::default(),
    );
    let im = emit(Opcode::Add, out, vec![ri, ir], Attrs::default());
    emit(
        Opcode::Complex,
        old.shape.clone(),
        vec![re, im],
        Attrs::default(),
    )
}
