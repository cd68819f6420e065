//! The CHLO ops besides the math functions of [`super::chlo`]: those XLA maps to an HLO opcode
//! (`erf`, `tan`, `top_k`), and the small patterns of StableHLO's CHLO legalization
//! (`stablehlo/transforms/ChloDecompositionPatterns.td`, openxla/stablehlo): `square`, `conj`,
//! `is_inf` / `is_pos_inf` / `is_neg_inf` and `mulhi`.
use super::chlo::{Math, V};
use super::*;

/// CHLO ops that are decomposed (or mapped to their HLO opcode), besides the math functions
/// of [`chlo::MATH_OPS`].
pub(super) const CHLO_DIRECT: &[&str] = &[
    "conj",
    "erf",
    "is_inf",
    "is_neg_inf",
    "is_pos_inf",
    "mulhi",
    "square",
    "tan",
    "top_k",
];

impl Front<'_> {
    pub(super) fn lower_chlo(&mut self, s: &str, op: &Op) -> Result<Lowered> {
        match s {
            "square" | "conj" => {
                self.count(op, 1)?;
                let x = self.operand_at(op, 0)?;
                if let Some(mut m) = Math::complex_parts(self, op, x) {
                    let r = if s == "square" {
                        super::complex::square(&mut m, x)
                    } else {
                        super::complex::conj(&mut m, x)
                    };
                    return Ok(Lowered::One(r));
                }
                // Real operands: `x * x`, and `conj(x) = x`.
                Ok(match s {
                    "square" => self.emit(op, Opcode::Multiply, vec![x, x], Attrs::default()),
                    _ => Lowered::One(x),
                })
            }
            "mulhi" => self.lower_mulhi(op),
            "erf" => Ok(self.emit(op, Opcode::Erf, op.operands.clone(), Attrs::default())),
            "tan" => Ok(self.emit(op, Opcode::Tan, op.operands.clone(), Attrs::default())),
            "top_k" => {
                self.count(op, 1)?;
                let a = Attrs {
                    k: Some(self.req_int(op, &["k"])?),
                    largest: Some(true),
                    ..Attrs::default()
                };
                Ok(self.emit(op, Opcode::TopK, op.operands.clone(), a))
            }
            "is_inf" | "is_pos_inf" | "is_neg_inf" => self.lower_is_inf(s, op),
            other => match self.lower_chlo_math(other, op)? {
                Some(lowered) => Ok(lowered),
                None => Err(self.err_at(
                    op.loc,
                    ParseErrorKind::UnknownOpcode,
                    format!(
                        "chlo.{other} is not supported: only {} are decomposed; legalize CHLO to StableHLO first (stablehlo-opt --chlo-legalize-to-stablehlo)",
                        chlo_supported()
                            .iter()
                            .map(|c| format!("chlo.{c}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
            },
        }
    }

    /// `is_pos_inf(x) = x == inf`, `is_neg_inf(x) = x == -inf`, `is_inf(x)` either.
    fn lower_is_inf(&mut self, s: &str, op: &Op) -> Result<Lowered> {
        self.count(op, 1)?;
        let x = self.operand_at(op, 0)?;
        let xs = self.shape_of(x).clone();
        let Some(ty) = xs.element_type().filter(|t| t.is_float()) else {
            return Err(self.bad(op, "operand must be floating point"));
        };
        let mut m = Math {
            f: self,
            loc: op.loc,
            dims: xs.dims().to_vec(),
            ty,
        };
        let eq = |m: &mut Math<'_, '_>, v: f64| {
            let c = m.c(v);
            m.cmp(x, c, ComparisonDirection::Eq)
        };
        let id = match s {
            "is_pos_inf" => eq(&mut m, f64::INFINITY),
            "is_neg_inf" => eq(&mut m, f64::NEG_INFINITY),
            _ => {
                let p = eq(&mut m, f64::INFINITY);
                let n = eq(&mut m, f64::NEG_INFINITY);
                m.pred(Opcode::Or, p, n)
            }
        };
        Ok(Lowered::One(id))
    }

    /// `chlo.mulhi`: the high half of the double-width product, as the legalization's four
    /// patterns compute it. Below 64 bits: the product in the double-width type, shifted right
    /// (arithmetic for signed types) and converted back. `u64`: four 32-bit partial products
    /// with their carries. `s64`: the `u64` result of the operands' bits, less `y` where `x < 0`
    /// and `x` where `y < 0` (two's complement sign correction).
    fn lower_mulhi(&mut self, op: &Op) -> Result<Lowered> {
        self.count(op, 2)?;
        let x = self.operand_at(op, 0)?;
        let y = self.operand_at(op, 1)?;
        let xs = self.shape_of(x).clone();
        if self.shape_of(y) != &xs {
            return Err(self.bad(op, "operands differ in shape or type"));
        }
        let ty = xs.element_type().unwrap_or(PrimitiveType::Pred);
        // 64-bit operands multiply in halves (`mulhi_u64`), not in a wider type.
        let wide = match (ty, ty.double_width_int()) {
            (PrimitiveType::S64 | PrimitiveType::U64, _) => ty,
            (_, Some(wide)) => wide,
            _ => {
                return Err(self.bad(
                    op,
                    format!("operands must be 8-, 16-, 32- or 64-bit integers, not {ty}"),
                ))
            }
        };
        let mut m = Math {
            f: self,
            loc: op.loc,
            dims: xs.dims().to_vec(),
            ty: wide,
        };
        let r = match ty {
            PrimitiveType::U64 => mulhi_u64(&mut m, x, y),
            PrimitiveType::S64 => mulhi_s64(&mut m, x, y),
            _ => {
                let wx = m.un(Opcode::Convert, x);
                let wy = m.un(Opcode::Convert, y);
                let p = m.mul(wx, wy);
                let n = m.int(ty.bit_width() as i128);
                let shift = if ty.is_signed_int() {
                    Opcode::ShiftRightArithmetic
                } else {
                    Opcode::ShiftRightLogical
                };
                let hi = m.op(shift, vec![p, n]);
                m.raw(Opcode::Convert, xs, vec![hi], Attrs::default())
            }
        };
        Ok(Lowered::One(r))
    }
}

impl Math<'_, '_> {
    /// An integer constant of the type, broadcast to the shape.
    fn int(&mut self, v: i128) -> V {
        self.constant(self.ty, LiteralValue::Int(v))
    }
}

/// The `u64` pattern: `p3 + (mid1 >> 32) + (mid2 >> 32)` with `mid1 = p1 + (p0 >> 32)` and
/// `mid2 = p2 + (mid1 & 0xFFFFFFFF)`, over the 32-bit halves' products.
fn mulhi_u64(m: &mut Math<'_, '_>, x: V, y: V) -> V {
    let srl = |m: &mut Math<'_, '_>, v: V| {
        let k = m.int(32);
        m.op(Opcode::ShiftRightLogical, vec![v, k])
    };
    let low = |m: &mut Math<'_, '_>, v: V| {
        let k = m.int(0xFFFF_FFFF);
        m.op(Opcode::And, vec![v, k])
    };
    let a_hi = srl(m, x);
    let b_hi = srl(m, y);
    let p3 = m.mul(a_hi, b_hi);
    let a_lo = low(m, x);
    let p1 = m.mul(a_lo, b_hi);
    let b_lo = low(m, y);
    let p0 = m.mul(a_lo, b_lo);
    let carry_p0 = srl(m, p0);
    let mid1 = m.add(p1, carry_p0);
    let carry_mid1 = srl(m, mid1);
    let sum = m.add(p3, carry_mid1);
    let p2 = m.mul(a_hi, b_lo);
    let mid1_lo = low(m, mid1);
    let mid2 = m.add(p2, mid1_lo);
    let carry_mid2 = srl(m, mid2);
    m.add(sum, carry_mid2)
}

/// The `s64` pattern: `mulhi_u64(x, y) - (x < 0 ? y : 0) - (y < 0 ? x : 0)` on the operands'
/// bits as `u64` (the legalization's `ConvertToUnsigned`, a convert), converted back.
fn mulhi_s64(m: &mut Math<'_, '_>, x: V, y: V) -> V {
    let signed = m.shape();
    m.ty = PrimitiveType::U64;
    let ux = m.un(Opcode::Convert, x);
    let uy = m.un(Opcode::Convert, y);
    let hi = mulhi_u64(m, ux, uy);
    let zero = m.int(0);
    m.ty = PrimitiveType::S64;
    let szero = m.int(0);
    let x_neg = m.cmp(x, szero, ComparisonDirection::Lt);
    let y_neg = m.cmp(y, szero, ComparisonDirection::Lt);
    m.ty = PrimitiveType::U64;
    let fix_x = m.sel(x_neg, uy, zero);
    let hi = m.sub(hi, fix_x);
    let fix_y = m.sel(y_neg, ux, zero);
    let hi = m.sub(hi, fix_y);
    m.raw(Opcode::Convert, signed, vec![hi], Attrs::default())
}
