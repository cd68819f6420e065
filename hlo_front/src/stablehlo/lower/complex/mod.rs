//! Complex math as XLA's StableHLO import computes it: real arithmetic on the parts, op for op.
//!
//! - [`exp`], [`expander`]: StableHLO's complex math expander
//!   (`stablehlo/transforms/StablehloComplexMathExpanderPatterns.td`, openxla/stablehlo), which
//!   XLA runs on import, rewrites complex `exponential`, `log`, `log_plus_one` and `sqrt`. Its
//!   results are not XLA's elemental formulas (`hlo::complex_math`, what an HLO `exponential`
//!   ... computes) at special values: `exp(inf + 0i)` is `inf + 0i`, `log1p(-1 + 0i)` is `-inf`,
//!   `sqrt(-4 - 0i)` is `+2i`, and where `exp(re)` overflows but `exp(re) * cos(im)` does not,
//!   the product is taken as `exp(re/2) * cos(im) * exp(re/2)`.
//! - [`inverse`]: the CHLO legalization's complex `asin`, `acos`, `asinh`, `acosh`, `atan` and
//!   `atanh` (the functional-algorithms kernels of
//!   `stablehlo/transforms/ChloDecompositionPatternsMath.td`), complex `square` and `conj`
//!   (`ChloDecompositionPatterns.td`); complex `sinh` and `cosh` are [`exp_pair`].
//!
//! JAX's `.hlo` of a module is that import's output (`testdata/complex_ops/*.hlo` show the
//! sequences op for op), so `.mlir` gives what `.hlo` gives. Constants that the import folds
//! (`sqrt(largest) / 8`, `log(2)`, the Veltkamp splitter) are folded here too, in the part
//! type ([`Math::fold`]).
use super::chlo::{Math, V};
use super::*;

mod expander;
mod inverse;

pub(super) use inverse::{conj, square};

impl Front<'_> {
    /// `stablehlo.exponential`, `log`, `log_plus_one` or `sqrt` (`s`) of a complex operand,
    /// expanded; `None` for other ops and operand types (they lower to the HLO opcode).
    pub(super) fn lower_complex_elementwise(
        &mut self,
        s: &str,
        op: &Op,
    ) -> Result<Option<Lowered>> {
        if !matches!(s, "exponential" | "log" | "log_plus_one" | "sqrt") {
            return Ok(None);
        }
        self.count(op, 1)?;
        let z = self.operand_at(op, 0)?;
        let Some(mut m) = Math::complex_parts(self, op, z) else {
            return Ok(None);
        };
        let r = match s {
            "exponential" => exp(&mut m, z),
            "log" => expander::log(&mut m, z),
            "log_plus_one" => expander::log1p(&mut m, z),
            _ => expander::sqrt(&mut m, z),
        };
        Ok(Some(Lowered::One(r)))
    }
}

/// Decomposes complex `chlo.NAME` of `z`; `None` for the CHLO math ops the legalization has no
/// complex pattern for.
pub(super) fn lower_chlo(m: &mut Math<'_, '_>, name: &str, z: V) -> Option<V> {
    Some(match name {
        "acos" => inverse::acos(m, z),
        "acosh" => inverse::acosh(m, z),
        "asin" => inverse::asin(m, z),
        "asinh" => inverse::asinh(m, z),
        "atan" => inverse::atan(m, z),
        "atanh" => inverse::atanh(m, z),
        "cosh" => exp_pair(m, z, false),
        "sinh" => exp_pair(m, z, true),
        _ => return None,
    })
}

impl<'f, 'a> Math<'f, 'a> {
    /// The parts' type and the shape of `z` when `z` is complex; `None` otherwise.
    pub(super) fn complex_parts(f: &'f mut Front<'a>, op: &Op, z: V) -> Option<Self> {
        let shape = f.shape_of(z).clone();
        let t = shape.element_type().filter(|t| t.is_complex())?;
        Some(Math {
            f,
            loc: op.loc,
            dims: shape.dims().to_vec(),
            ty: t.complex_component(),
        })
    }
}

impl Math<'_, '_> {
    /// `v` rounded to the part type: what the import's constant folding computes in it.
    pub(super) fn fold(&self, v: f64) -> f64 {
        if self.ty == PrimitiveType::F64 {
            v
        } else {
            f64::from(v as f32)
        }
    }

    /// The smallest positive normal value of the part type.
    pub(super) fn smallest_normal(&self) -> f64 {
        if self.ty == PrimitiveType::F64 {
            f64::MIN_POSITIVE
        } else {
            f64::from(f32::MIN_POSITIVE)
        }
    }

    /// `sqrt(largest finite)`, folded.
    pub(super) fn sqrt_largest(&self) -> f64 {
        self.fold(self.fold(self.max_finite()).sqrt())
    }

    pub(super) fn re(&mut self, z: V) -> V {
        self.un(Opcode::Real, z)
    }

    pub(super) fn im(&mut self, z: V) -> V {
        self.un(Opcode::Imag, z)
    }

    pub(super) fn abs(&mut self, x: V) -> V {
        self.un(Opcode::Abs, x)
    }

    pub(super) fn neg(&mut self, x: V) -> V {
        self.un(Opcode::Negate, x)
    }

    pub(super) fn sqrt(&mut self, x: V) -> V {
        self.un(Opcode::Sqrt, x)
    }

    pub(super) fn max(&mut self, x: V, y: V) -> V {
        self.op(Opcode::Maximum, vec![x, y])
    }

    pub(super) fn min(&mut self, x: V, y: V) -> V {
        self.op(Opcode::Minimum, vec![x, y])
    }

    pub(super) fn atan2(&mut self, y: V, x: V) -> V {
        self.op(Opcode::Atan2, vec![y, x])
    }

    pub(super) fn and(&mut self, p: V, q: V) -> V {
        self.pred(Opcode::And, p, q)
    }

    pub(super) fn or(&mut self, p: V, q: V) -> V {
        self.pred(Opcode::Or, p, q)
    }

    pub(super) fn not(&mut self, p: V) -> V {
        let shape = self.shape_of(PrimitiveType::Pred);
        self.raw(Opcode::Not, shape, vec![p], Attrs::default())
    }

    /// `complex(re, im)` with parts of the part type.
    pub(super) fn complex(&mut self, re: V, im: V) -> V {
        let shape = complex_shape(self);
        self.raw(Opcode::Complex, shape, vec![re, im], Attrs::default())
    }

    /// `hypot(mx, mn)` for `mx = max(|a|, |b|)`, `mn = min(|a|, |b|)`, as the functional-algorithms
    /// kernels write it (the `$r` / `$s` of the asin-acos kernel, the `$mx` select of sqrt):
    /// `sqrt(2) * mx` when equal, else `mx * sqrt(1 + (mn/mx)^2)`, or `mx + mx * r / 2` where that
    /// square root rounds to 1 but `r = (mn/mx)^2` is not 0.
    pub(super) fn hypot(&mut self, mx: V, mn: V) -> V {
        let eq = self.cmp(mx, mn, ComparisonDirection::Eq);
        let sqrt_two = self.c(std::f64::consts::SQRT_2);
        let equal = self.mul(sqrt_two, mx);
        let q = self.div(mn, mx);
        let r = self.mul(q, q);
        let one = self.c(1.0);
        let sum = self.add(one, r);
        let sqa = self.sqrt(sum);
        let sqa_is_one = self.cmp(sqa, one, ComparisonDirection::Eq);
        let zero = self.c(0.0);
        let r_positive = self.cmp(r, zero, ComparisonDirection::Gt);
        let tiny = self.and(sqa_is_one, r_positive);
        let mxr = self.mul(mx, r);
        let two = self.c(2.0);
        let half_mxr = self.div(mxr, two);
        let first_order = self.add(mx, half_mxr);
        let general = self.mul(mx, sqa);
        let unequal = self.sel(tiny, first_order, general);
        self.sel(eq, equal, unequal)
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
    m.complex(real, imag)
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
