//! XLA's `mulhi` opcode, expanded where it is read.
//!
//! jaxlib's StableHLO import keeps `chlo.mulhi` as an HLO opcode of its own (JAX's Philox PRNGs
//! and `lax.mul_hi` emit it), which this IR does not have. A new opcode would enter every
//! artifact's embedded module, which a runtime older than the opcode refuses, so it would need
//! the staged rollout. Instead the parser writes the instruction as the ops StableHLO's CHLO
//! legalization lowers `chlo.mulhi` to, the same sequence the `.mlir` front end builds
//! (`hlo_front`'s `chlo_ops.rs`): below 64 bits the product in the double-width type, shifted
//! right and converted back; `u64` from four 32-bit partial products with their carries; `s64`
//! as `u64` of the operands' bits less the two's complement sign corrections.
//!
//! The last instruction of the expansion keeps the written name, `ROOT` marker and metadata;
//! the others are named `NAME.mulhi.N`.

use super::PendingInstr;
use crate::error::{ParseError, ParseErrorKind};
use hlo::{Attrs, ComparisonDirection, ConstantLiteral, LiteralValue, OpMetadata, Opcode};
use hlo::{PrimitiveType, Shape};

/// The written `mulhi` instruction, before expansion.
pub(super) struct MulHi {
    pub name: String,
    pub loc: hlo::SourceLoc,
    pub is_root: bool,
    pub shape: Option<Shape>,
    pub operands: Vec<(String, hlo::SourceLoc)>,
    pub metadata: Option<OpMetadata>,
}

/// The instructions `mulhi` stands for, the last one named as written.
pub(super) fn expand(m: MulHi) -> Result<Vec<PendingInstr>, ParseError> {
    let bad = |msg: String| ParseError::new(m.loc, ParseErrorKind::Structure, msg);
    let Some(shape) = m.shape.clone() else {
        return Err(bad(format!(
            "'{}': mulhi needs its shape written (its operands' shape)",
            m.name
        )));
    };
    let [x, y] = <[_; 2]>::try_from(m.operands.clone()).map_err(|ops: Vec<_>| {
        bad(format!(
            "'{}': mulhi takes 2 operands, not {}",
            m.name,
            ops.len()
        ))
    })?;
    let ty = shape.element_type().unwrap_or(PrimitiveType::Pred);
    // 64-bit operands multiply in halves (`mulhi_u64`), not in a wider type.
    let wide = match (ty, ty.double_width_int()) {
        (PrimitiveType::S64 | PrimitiveType::U64, _) => ty,
        (_, Some(wide)) => wide,
        _ => {
            return Err(bad(format!(
                "'{}': mulhi's operands must be 8-, 16-, 32- or 64-bit integers, not {}",
                m.name,
                shape_text(&shape)
            )))
        }
    };
    let mut b = Builder {
        out: Vec::new(),
        written: m,
        shape,
    };
    let (x, y) = (x.0, y.0);
    let result = match ty {
        PrimitiveType::U64 => b.mulhi_u64(x, y),
        PrimitiveType::S64 => b.mulhi_s64(x, y),
        _ => {
            let wx = b.convert(wide, x);
            let wy = b.convert(wide, y);
            let p = b.op(wide, Opcode::Multiply, vec![wx, wy]);
            let n = b.int(wide, ty.bit_width() as i128);
            let shift = if ty.is_signed_int() {
                Opcode::ShiftRightArithmetic
            } else {
                Opcode::ShiftRightLogical
            };
            let hi = b.op(wide, shift, vec![p, n]);
            b.convert(ty, hi)
        }
    };
    Ok(b.finish(result))
}

fn shape_text(shape: &Shape) -> String {
    shape
        .element_type()
        .map_or_else(|| "a tuple or token".to_string(), |t| t.name().to_string())
}

/// Appends the expansion's instructions; each helper returns the new instruction's name.
struct Builder {
    out: Vec<PendingInstr>,
    written: MulHi,
    /// The written result shape (the operands' shape).
    shape: Shape,
}

impl Builder {
    /// The written shape with element type `ty` (same dimensions and layout).
    fn shape_of(&self, ty: PrimitiveType) -> Shape {
        let mut s = self.shape.clone();
        if let Some(a) = s.as_array_mut() {
            a.element_type = ty;
        }
        s
    }

    fn push(
        &mut self,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<String>,
        attrs: Attrs,
    ) -> String {
        let name = format!("{}.mulhi.{}", self.written.name, self.out.len());
        let loc = self.written.loc;
        self.out.push(PendingInstr {
            name: name.clone(),
            loc,
            is_root: false,
            opcode,
            shape: Some(shape),
            operands: operands.into_iter().map(|o| (o, loc)).collect(),
            attrs,
            metadata: None,
        });
        name
    }

    fn op(&mut self, ty: PrimitiveType, opcode: Opcode, operands: Vec<String>) -> String {
        let shape = self.shape_of(ty);
        self.push(opcode, shape, operands, Attrs::default())
    }

    fn convert(&mut self, ty: PrimitiveType, x: String) -> String {
        self.op(ty, Opcode::Convert, vec![x])
    }

    /// An integer constant of type `ty`, broadcast to the shape.
    fn int(&mut self, ty: PrimitiveType, v: i128) -> String {
        let literal = ConstantLiteral::Array(hlo::ArrayLiteral {
            values: vec![LiteralValue::Int(v)],
        });
        let attrs = Attrs {
            literal: Some(literal),
            ..Attrs::default()
        };
        let c = self.push(Opcode::Constant, Shape::scalar(ty), vec![], attrs);
        let attrs = Attrs {
            dimensions: Some(vec![]),
            ..Attrs::default()
        };
        let shape = self.shape_of(ty);
        self.push(Opcode::Broadcast, shape, vec![c], attrs)
    }

    /// The `u64` pattern: `p3 + (mid1 >> 32) + (mid2 >> 32)` with `mid1 = p1 + (p0 >> 32)` and
    /// `mid2 = p2 + (mid1 & 0xFFFFFFFF)`, over the 32-bit halves' products.
    fn mulhi_u64(&mut self, x: String, y: String) -> String {
        const U: PrimitiveType = PrimitiveType::U64;
        let srl = |b: &mut Builder, v: String| {
            let k = b.int(U, 32);
            b.op(U, Opcode::ShiftRightLogical, vec![v, k])
        };
        let low = |b: &mut Builder, v: String| {
            let k = b.int(U, 0xFFFF_FFFF);
            b.op(U, Opcode::And, vec![v, k])
        };
        let mul = |b: &mut Builder, p: &String, q: &String| {
            b.op(U, Opcode::Multiply, vec![p.clone(), q.clone()])
        };
        let add = |b: &mut Builder, p: String, q: String| b.op(U, Opcode::Add, vec![p, q]);
        let a_hi = srl(self, x.clone());
        let b_hi = srl(self, y.clone());
        let p3 = mul(self, &a_hi, &b_hi);
        let a_lo = low(self, x);
        let p1 = mul(self, &a_lo, &b_hi);
        let b_lo = low(self, y);
        let p0 = mul(self, &a_lo, &b_lo);
        let carry_p0 = srl(self, p0);
        let mid1 = add(self, p1, carry_p0);
        let carry_mid1 = srl(self, mid1.clone());
        let sum = add(self, p3, carry_mid1);
        let p2 = mul(self, &a_hi, &b_lo);
        let mid1_lo = low(self, mid1);
        let mid2 = add(self, p2, mid1_lo);
        let carry_mid2 = srl(self, mid2);
        add(self, sum, carry_mid2)
    }

    /// The `s64` pattern: `mulhi_u64(x, y) - (x < 0 ? y : 0) - (y < 0 ? x : 0)` on the operands'
    /// bits as `u64`, converted back.
    fn mulhi_s64(&mut self, x: String, y: String) -> String {
        const U: PrimitiveType = PrimitiveType::U64;
        const S: PrimitiveType = PrimitiveType::S64;
        let ux = self.convert(U, x.clone());
        let uy = self.convert(U, y.clone());
        let hi = self.mulhi_u64(ux.clone(), uy.clone());
        let zero = self.int(U, 0);
        let szero = self.int(S, 0);
        let x_neg = self.less_than(x, szero.clone());
        let y_neg = self.less_than(y, szero);
        let fix_x = self.op(U, Opcode::Select, vec![x_neg, uy, zero.clone()]);
        let hi = self.op(U, Opcode::Subtract, vec![hi, fix_x]);
        let fix_y = self.op(U, Opcode::Select, vec![y_neg, ux, zero]);
        let hi = self.op(U, Opcode::Subtract, vec![hi, fix_y]);
        self.convert(S, hi)
    }

    fn less_than(&mut self, p: String, q: String) -> String {
        let attrs = Attrs {
            comparison_direction: Some(ComparisonDirection::Lt),
            ..Attrs::default()
        };
        let shape = self.shape_of(PrimitiveType::Pred);
        self.push(Opcode::Compare, shape, vec![p, q], attrs)
    }

    /// The instructions, the last renamed to the written name and given its `ROOT` marker and
    /// metadata (`result` is always the last one pushed).
    fn finish(mut self, result: String) -> Vec<PendingInstr> {
        debug_assert_eq!(self.out.last().map(|p| &p.name), Some(&result));
        if let Some(last) = self.out.last_mut() {
            last.name = self.written.name;
            last.is_root = self.written.is_root;
            last.metadata = self.written.metadata;
        }
        self.out
    }
}
