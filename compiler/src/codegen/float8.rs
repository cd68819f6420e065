//! `f8e4m3fn` and `f8e5m2` in PTX: values live in `.f32` carriers like f16 and bf16 (every f8
//! value is exact in f32), and these three routines round a carrier to the format, encode it to
//! the stored byte and decode a byte back.
//!
//! The rounding is `hlo::Float8Format::encode`'s rule (XLA's, checked against XLA:CPU on every
//! f16 value): round to nearest even at the format's quantum, as if the exponent were unbounded
//! above, then NaN (`f8e4m3fn`) or infinity (`f8e5m2`) past the largest finite value. It is
//! written with integer and exact float operations, no `cvt` to an f8 type: PTX's
//! `cvt.rn.satfinite.e4m3x2.f32` needs sm_89 and saturates where XLA's rule gives NaN, and the
//! integer form runs on every target and on the emulated device alike.
use hlo::{Float8Format, PrimitiveType as P};
use ptx::{CmpOp, Opcode as O, Rounding, Type};

use super::builder::{Builder, Reg, RegKind, Src};

/// The format of an 8-bit float type this back end computes with; `None` for other types.
pub fn format(ty: P) -> Option<Float8Format> {
    match ty {
        P::F8E4M3FN => Some(Float8Format::E4M3FN),
        P::F8E5M2 => Some(Float8Format::E5M2),
        _ => None,
    }
}

/// The f32 register holding the bits `bits`.
fn f32_of_bits(b: &mut Builder, bits: Src) -> Reg {
    let f = b.reg(RegKind::F32);
    b.mov_to(f, Type::B32, bits);
    f
}

/// The bits of an f32 register.
fn bits_of(b: &mut Builder, x: Reg) -> Reg {
    let r = b.reg(RegKind::B32);
    b.mov_to(r, Type::B32, x.into());
    r
}

/// `2^e` as an f32 register, for `e` in f32's normal range (a register holding `e + 127`
/// shifted into the exponent field).
fn pow2(b: &mut Builder, e: Reg) -> Reg {
    let biased = b.bin(O::Add, &[], Type::S32, e.into(), Src::I(127));
    let field = b.bin(O::Shl, &[], Type::B32, biased.into(), Src::I(23));
    f32_of_bits(b, field.into())
}

/// `x` (an f32 carrier) rounded to the format, as an f32 carrier: NaN stays NaN, overflow is
/// NaN or infinity, the sign is kept (zero's too).
pub fn round(b: &mut Builder, f: Float8Format, x: Reg) -> Reg {
    let m = i64::from(f.mantissa_bits);
    let bits = bits_of(b, x);
    let magnitude = b.bin(O::And, &[], Type::B32, bits.into(), Src::I(0x7fff_ffff));
    let sign = b.bin(O::And, &[], Type::B32, bits.into(), Src::I(0x8000_0000));
    // The quantum at |x|: 2^(e - m), e the exponent of |x| but never below the subnormals'.
    // Scaling by a power of two is exact, and so is the product of the rounded integer and it.
    let field = b.bin(O::Shr, &[], Type::U32, magnitude.into(), Src::I(23));
    let e = b.bin(O::Sub, &[], Type::S32, field.into(), Src::I(127));
    let e = b.bin(
        O::Max,
        &[],
        Type::S32,
        e.into(),
        Src::I(i64::from(f.min_exponent())),
    );
    let k = b.bin(O::Sub, &[], Type::S32, e.into(), Src::I(m));
    let minus_k = b.bin(O::Sub, &[], Type::S32, Src::I(0), k.into());
    let (quantum, inverse) = (pow2(b, k), pow2(b, minus_k));
    let a = f32_of_bits(b, magnitude.into());
    let scaled = b.bin(O::Mul, &[], Type::F32, a.into(), inverse.into());
    let n = b.cvt(Some(Rounding::Rni), Type::F32, Type::F32, scaled.into());
    let r = b.bin(O::Mul, &[], Type::F32, n.into(), quantum.into());
    // Past the largest finite value (infinity included): the overflow value. NaN compares
    // false and stays the NaN it is.
    let over = b.setp(
        CmpOp::Gt,
        Type::F32,
        r.into(),
        Src::F32(f.max_finite() as f32),
    );
    let overflow = if f.has_infinity {
        0x7f80_0000
    } else {
        0x7fc0_0000
    };
    let rb = bits_of(b, r);
    let rb = b.selp(Type::B32, Src::I(overflow), rb.into(), over);
    let signed = b.bin(O::Or, &[], Type::B32, rb.into(), sign.into());
    f32_of_bits(b, signed.into())
}

/// The stored byte of `x` (an f32 carrier, rounded here first), zero-extended in a `.b32`.
pub fn encode(b: &mut Builder, f: Float8Format, x: Reg) -> Reg {
    let m = i64::from(f.mantissa_bits);
    let r = round(b, f, x);
    let bits = bits_of(b, r);
    let magnitude = b.bin(O::And, &[], Type::B32, bits.into(), Src::I(0x7fff_ffff));
    let sign = b.bin(O::Shr, &[], Type::U32, bits.into(), Src::I(24));
    let sign = b.bin(O::And, &[], Type::B32, sign.into(), Src::I(0x80));
    // A normal value: f32's exponent and top mantissa bits, shifted down and re-biased.
    let top = b.bin(O::Shr, &[], Type::U32, magnitude.into(), Src::I(23 - m));
    let normal = b.bin(
        O::Sub,
        &[],
        Type::S32,
        top.into(),
        Src::I((127 - i64::from(f.bias)) << m),
    );
    // A subnormal (or zero): the number of quanta, an exact integer below 2^m.
    let a = f32_of_bits(b, magnitude.into());
    let quanta = b.bin(
        O::Mul,
        &[],
        Type::F32,
        a.into(),
        Src::F32(2f32.powi(m as i32 - f.min_exponent())),
    );
    let quanta = b.cvt(Some(Rounding::Rzi), Type::U32, Type::F32, quanta.into());
    let smallest_normal = (127 + i64::from(f.min_exponent())) << 23;
    let is_normal = b.setp(
        CmpOp::Ge,
        Type::U32,
        magnitude.into(),
        Src::I(smallest_normal),
    );
    let byte = b.selp(Type::B32, normal.into(), quanta.into(), is_normal);
    // Infinity (after rounding only f8e5m2 has it) and NaN have their own patterns.
    let is_inf = b.setp(CmpOp::Eq, Type::U32, magnitude.into(), Src::I(0x7f80_0000));
    let byte = b.selp(
        Type::B32,
        Src::I(i64::from(f.infinity_bits())),
        byte.into(),
        is_inf,
    );
    let is_nan = b.setp(CmpOp::Gt, Type::U32, magnitude.into(), Src::I(0x7f80_0000));
    let byte = b.selp(
        Type::B32,
        Src::I(i64::from(f.nan_bits())),
        byte.into(),
        is_nan,
    );
    b.bin(O::Or, &[], Type::B32, byte.into(), sign.into())
}

/// The f32 carrier of a stored byte (zero-extended in a `.b32`; exact).
pub fn decode(b: &mut Builder, f: Float8Format, raw: Reg) -> Reg {
    let m = i64::from(f.mantissa_bits);
    let byte = b.bin(O::And, &[], Type::B32, raw.into(), Src::I(0xff));
    let magnitude = b.bin(O::And, &[], Type::B32, byte.into(), Src::I(0x7f));
    let sign = b.bin(O::And, &[], Type::B32, byte.into(), Src::I(0x80));
    let sign = b.bin(O::Shl, &[], Type::B32, sign.into(), Src::I(24));
    // A normal value: the fields shifted into f32's places and re-biased.
    let shifted = b.bin(O::Shl, &[], Type::B32, magnitude.into(), Src::I(23 - m));
    let normal = b.bin(
        O::Add,
        &[],
        Type::U32,
        shifted.into(),
        Src::I((127 - i64::from(f.bias)) << 23),
    );
    // A subnormal (or zero): the mantissa counts quanta of 2^(emin - m).
    let count = b.cvt(Some(Rounding::Rn), Type::F32, Type::U32, magnitude.into());
    let sub = b.bin(
        O::Mul,
        &[],
        Type::F32,
        count.into(),
        Src::F32(2f32.powi(f.min_exponent() - m as i32)),
    );
    let sub = bits_of(b, sub);
    let is_normal = b.setp(CmpOp::Ge, Type::U32, magnitude.into(), Src::I(1 << m));
    let value = b.selp(Type::B32, normal.into(), sub.into(), is_normal);
    let value = if f.has_infinity {
        // The all-ones exponent: infinity with a zero mantissa, NaN otherwise.
        let inf = i64::from(f.infinity_bits());
        let is_inf = b.setp(CmpOp::Eq, Type::U32, magnitude.into(), Src::I(inf));
        let value = b.selp(Type::B32, Src::I(0x7f80_0000), value.into(), is_inf);
        let is_nan = b.setp(CmpOp::Gt, Type::U32, magnitude.into(), Src::I(inf));
        b.selp(Type::B32, Src::I(0x7fc0_0000), value.into(), is_nan)
    } else {
        let is_nan = b.setp(CmpOp::Eq, Type::U32, magnitude.into(), Src::I(0x7f));
        b.selp(Type::B32, Src::I(0x7fc0_0000), value.into(), is_nan)
    };
    let signed = b.bin(O::Or, &[], Type::B32, value.into(), sign.into());
    f32_of_bits(b, signed.into())
}

/// An f64 rounded to f32 with round-to-odd (toward zero, then the last bit set when inexact):
/// rounding that to an 8-bit format to nearest even is the f64's correct rounding, where two
/// roundings to nearest could round a tie the first one made.
pub fn f32_round_odd(b: &mut Builder, x: Reg) -> Reg {
    let t = b.cvt(Some(Rounding::Rz), Type::F32, Type::F64, x.into());
    let back = b.cvt(None, Type::F64, Type::F32, t.into());
    let inexact = b.setp(CmpOp::Ne, Type::F64, back.into(), x.into());
    let bits = bits_of(b, t);
    let odd = b.bin(O::Or, &[], Type::B32, bits.into(), Src::I(1));
    let bits = b.selp(Type::B32, odd.into(), bits.into(), inexact);
    f32_of_bits(b, bits.into())
}
