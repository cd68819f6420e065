//! Complex `exponential` as XLA's StableHLO import expands it, before XLA's own lowering:
//! StableHLO's complex math expander (`StablehloComplexMathExpanderPatterns.td`,
//! openxla/stablehlo) turns it into real arithmetic on the parts. Its result is not XLA's
//! elemental formula (`hlo::complex_math`, what an HLO `exponential` computes) at two kinds of
//! points:
//! - `exp(inf + 0i)` is `inf + 0i` (an imaginary part of 0 stays 0; the formula gives
//!   `inf * sin(0)`, NaN);
//! - where `exp(re)` overflows but `exp(re) * cos(im)` does not, the product is taken as
//!   `exp(re/2) * cos(im) * exp(re/2)`.
//!
//! JAX's `.hlo` of a module is that import's output (`testdata/complex_ops/
//! op_exponential_c64.hlo` shows the sequence below, op for op), so `.mlir` now gives what
//! `.hlo` gives. Complex `chlo.sinh` and `chlo.cosh` decompose as StableHLO's CHLO legalization
//! writes them, `exp(z + log(1/2)) ± exp(log(1/2) - z)`, over this exponential
//! (`testdata/complex_ops/jnp_sinh_c64.hlo`).
use super::chlo::{Math, V};
use super::*;

impl Front<'_> {
    /// `stablehlo.exponential` of a complex operand, expanded; `None` for other operand types
    /// (they lower to the HLO opcode).
    pub(super) fn lower_complex_exp(&mut self, op: &Op) -> Result<Option<Lowered>> {
        self.count(op, 1)?;
        let z = self.operand_at(op, 0)?;
        let shape = self.shape_of(z).clone();
        let Some(t) = shape.element_type().filter(|t| t.is_complex()) else {
            return Ok(None);
        };
        let mut m = Math {
            f: self,
            loc: op.loc,
            dims: shape.dims().to_vec(),
            ty: t.complex_component(),
        };
        Ok(Some(Lowered::One(exp(&mut m, z))))
    }
}

/// The complex type whose parts are `m.ty`, in `m`'s shape.
fn complex_shape(m: &Math<'_, '_>) -> Shape {
    let t = if m.ty == PrimitiveType::F64 {
        PrimitiveType::C128
    } else {
        PrimitiveType::C64
    };
    m.shape_of(t)
}

/// `exp(z)` for `z` complex with parts of type `m.ty`, in the expander's order of operations.
pub(super) fn exp(m: &mut Math<'_, '_>, z: V) -> V {
    let re = m.un(Opcode::Real, z);
    let e = m.un(Opcode::Exp, re);
    let inf = m.c(f64::INFINITY);
    let overflows = m.cmp(e, inf, ComparisonDirection::Eq);
    let half = m.c(0.5);
    let re_half = m.mul(re, half);
    let e_half = m.un(Opcode::Exp, re_half);
    let im = m.un(Opcode::Imag, z);
    // Each part: exp(re/2) * f(im) * exp(re/2) where exp(re) overflows, else exp(re) * f(im).
    let part = |m: &mut Math<'_, '_>, f: Opcode| {
        let trig = m.un(f, im);
        let halves = m.mul(e_half, trig);
        let halves = m.mul(halves, e_half);
        let whole = m.mul(e, trig);
        m.sel(overflows, halves, whole)
    };
    let real = part(m, Opcode::Cos);
    let zero = m.c(0.0);
    let im_is_zero = m.cmp(im, zero, ComparisonDirection::Eq);
    let imag = part(m, Opcode::Sin);
    let imag = m.sel(im_is_zero, zero, imag);
    let shape = complex_shape(m);
    m.raw(Opcode::Complex, shape, vec![real, imag], Attrs::default())
}

/// Complex `sinh` (`sinh` true: the difference) or `cosh` (the sum) of `z`:
/// `exp(z + log(1/2)) ± exp(log(1/2) - z)`.
pub(super) fn exp_pair(m: &mut Math<'_, '_>, z: V, sinh: bool) -> V {
    let cshape = complex_shape(m);
    let complex_ty = cshape.element_type().unwrap_or(PrimitiveType::C64);
    let half = m.constant(complex_ty, LiteralValue::Complex(0.5, 0.0));
    // log(1/2 + 0i) = ln(1/2) + 0i exactly (to the part type), by either formula.
    let log_half = m.raw(Opcode::Log, cshape.clone(), vec![half], Attrs::default());
    let a = m.raw(
        Opcode::Add,
        cshape.clone(),
        vec![z, log_half],
        Attrs::default(),
    );
    let ea = exp(m, a);
    let b = m.raw(
        Opcode::Subtract,
        cshape.clone(),
        vec![log_half, z],
        Attrs::default(),
    );
    let eb = exp(m, b);
    let opcode = if sinh { Opcode::Subtract } else { Opcode::Add };
    m.raw(opcode, cshape, vec![ea, eb], Attrs::default())
}
