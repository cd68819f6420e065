//! Scalar code for every elementwise operation, per element type.
//!
//! Values live in registers by *carrier*: `pred` in `.pred`; `s8 s16 s32` sign-extended and
//! `u8 u16 u32` zero-extended in `.b32`; `s64 u64` in `.b64`; `f16 bf16 f8e4m3fn f8e5m2 f32` in
//! `.f32` (the narrow floats' values are exact in f32 and every result is rounded back to the
//! narrow type, with `cvt.rn` or [`super::float8`]'s rounding, so each HLO operation rounds once,
//! as the reference evaluator does); `f64` in `.f64`. Transcendentals are computed in f64 (see [`super::math`]).
//!
//! Integer corner cases follow the reference evaluator (hlo_eval/src/elementwise.rs): `x / 0`
//! is -1 (signed) or all ones (unsigned), `INT_MIN / -1` is `INT_MIN`, `x % 0` is `x`,
//! `INT_MIN % -1` is 0, shifts by a negative amount or at least the bit width give 0 (or the
//! sign fill for arithmetic right shifts); float max/min propagate NaN; float-to-integer
//! conversion truncates and saturates with NaN to 0.
use hlo::{ComparisonDirection, ComparisonType, LiteralValue};
use hlo::{Opcode as H, PrimitiveType as P};
use ptx::{CmpOp, Modifier, Opcode as O, Rounding, StateSpace, Type};

use super::builder::{Builder, Reg, RegKind, Src, RN};
use super::complex;
use super::float8;
use super::math;
use super::CodegenError;

/// A scalar value in a register, tagged with its HLO element type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Val {
    /// Element type.
    pub ty: P,
    /// Register holding the carrier value (a complex value's real part).
    pub reg: Reg,
    /// A complex value's imaginary part (`None` for every other type; see [`super::complex`]).
    pub im: Option<Reg>,
}

/// Why scalar code generation cannot emit an operation. The elementwise emitter reports it as
/// an unsupported construct of the instruction it was emitting; kernel scaffolding, which only
/// loads, stores and combines values of types it checked, as an internal error (the `From`
/// below). Either way the text is the `Display` here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScalarError {
    /// An element type without a PTX carrier (sub-byte, complex, fp8, tuple, token).
    #[error("element type {} is not supported", .0.name())]
    ElementType(P),
    /// An operation not defined for the element type (`not` of a float, `sin` of an integer).
    #[error("{} is not defined for {}", .op.name(), .ty.name())]
    Undefined {
        /// The operation.
        op: H,
        /// The element type.
        ty: P,
    },
    /// A binary operation on two different element types.
    #[error("operand types differ: {} vs {}", .0.name(), .1.name())]
    OperandTypes(P, P),
    /// `bitcast-convert` between element types of different widths.
    #[error("bitcast-convert between widths {0} and {1} is not supported")]
    BitcastWidths(u64, u64),
    /// An index value of a non-integer type.
    #[error("index of type {} is not an integer", .0.name())]
    IndexType(P),
    /// `reduce-precision` of a non-float type.
    #[error("reduce-precision is not defined for {}", .0.name())]
    ReducePrecisionType(P),
    /// `reduce-precision` with fewer than one exponent or negative mantissa bits.
    #[error("exponent_bits={0}, mantissa_bits={1}")]
    ReducePrecisionBits(i64, i64),
}

impl From<ScalarError> for CodegenError {
    fn from(e: ScalarError) -> CodegenError {
        CodegenError::Invalid(e.to_string())
    }
}

/// Result of scalar code generation.
pub type R<T> = Result<T, ScalarError>;

/// The PTX type a value of `ty` is computed in.
pub fn carrier(ty: P) -> R<Type> {
    Ok(match ty {
        P::Pred => Type::Pred,
        P::S8 | P::S16 | P::S32 => Type::S32,
        P::U8 | P::U16 | P::U32 => Type::U32,
        P::S64 => Type::S64,
        P::U64 => Type::U64,
        P::F16 | P::Bf16 | P::F8E4M3FN | P::F8E5M2 | P::F32 => Type::F32,
        P::F64 => Type::F64,
        other => return Err(ScalarError::ElementType(other)),
    })
}

/// Register class of a carrier.
pub fn kind(ty: P) -> R<RegKind> {
    Ok(RegKind::of(carrier(ty)?))
}

fn bits(ty: P) -> u32 {
    ty.bit_width() as u32
}

/// Re-extends a narrow integer held in 32 bits; rounds f16/bf16/f8 held in f32. Other types
/// pass.
pub fn fix(b: &mut Builder, ty: P, r: Reg) -> Reg {
    match ty {
        P::S8 | P::S16 => b.op(
            O::Bfe,
            vec![super::builder::t(Type::S32)],
            Type::S32,
            &[r.into(), Src::I(0), Src::I(i64::from(bits(ty)))],
        ),
        P::U8 => b.bin(O::And, &[], Type::B32, r.into(), Src::I(0xff)),
        P::U16 => b.bin(O::And, &[], Type::B32, r.into(), Src::I(0xffff)),
        P::F16 => {
            let h = b.cvt(Some(Rounding::Rn), Type::F16, Type::F32, r.into());
            b.cvt(None, Type::F32, Type::F16, h.into())
        }
        P::Bf16 => {
            let h = b.cvt(Some(Rounding::Rn), Type::Bf16, Type::F32, r.into());
            bf16_to_f32(b, h)
        }
        P::F8E4M3FN | P::F8E5M2 => match float8::format(ty) {
            Some(f) => float8::round(b, f, r),
            None => r,
        },
        _ => r,
    }
}

fn bf16_to_f32(b: &mut Builder, h: Reg) -> Reg {
    let w = b.cvt(None, Type::U32, Type::U16, h.into());
    let w = b.bin(O::Shl, &[], Type::B32, w.into(), Src::I(16));
    let f = b.reg(RegKind::F32);
    b.mov_to(f, Type::B32, w.into());
    f
}

fn val(ty: P, reg: Reg) -> Val {
    Val { ty, reg, im: None }
}

/// A constant of type `ty`.
pub fn konst(b: &mut Builder, ty: P, v: LiteralValue) -> R<Val> {
    if ty.is_complex() {
        return complex::konst(b, ty, v);
    }
    let c = carrier(ty)?;
    let reg = match c {
        Type::Pred => {
            let x = b.mov(Type::B32, Src::I(if v.as_bool() { 1 } else { 0 }));
            b.setp(CmpOp::Ne, Type::U32, x.into(), Src::I(0))
        }
        Type::F32 => {
            let x = v.as_f64();
            // The value the narrow type holds (exact in f32).
            let x = ty.round_float(x).unwrap_or(x);
            b.mov(Type::F32, Src::F32(x as f32))
        }
        Type::F64 => b.mov(Type::F64, Src::F64(v.as_f64())),
        Type::S64 | Type::U64 => b.mov(Type::B64, Src::I(v.as_i128() as i64)),
        _ => {
            // Wrap to the type's width, then extend as the carrier expects.
            let raw = v.as_i128() as i64;
            let w = bits(ty);
            let m = (raw as u64) & ((1u64 << w) - 1);
            let ext = if ty.is_signed_int() && (m >> (w - 1)) & 1 == 1 {
                (m | !((1u64 << w) - 1)) as i64 as i32
            } else {
                m as u32 as i32
            };
            b.mov(Type::B32, Src::I(i64::from(ext)))
        }
    };
    Ok(val(ty, reg))
}

/// A constant from an f64 (floats) or i64 (integers) value.
pub fn konst_num(b: &mut Builder, ty: P, x: f64) -> R<Val> {
    if ty.is_float() {
        konst(b, ty, LiteralValue::Float(x))
    } else if ty.is_pred() {
        konst(b, ty, LiteralValue::Bool(x != 0.0))
    } else {
        konst(b, ty, LiteralValue::Int(x as i128))
    }
}

/// Converts any float value to f64.
pub fn to_f64(b: &mut Builder, v: Val) -> Reg {
    if v.ty == P::F64 {
        v.reg
    } else {
        b.cvt(None, Type::F64, Type::F32, v.reg.into())
    }
}

/// Rounds an f64 to a float type.
pub fn from_f64(b: &mut Builder, ty: P, r: Reg) -> Val {
    match ty {
        P::F64 => val(ty, r),
        P::F16 => {
            let h = b.cvt(Some(Rounding::Rn), Type::F16, Type::F64, r.into());
            let f = b.cvt(None, Type::F32, Type::F16, h.into());
            val(ty, f)
        }
        P::F8E4M3FN | P::F8E5M2 => {
            // Through f32 with round-to-odd: one correct rounding, as the evaluator's.
            let f = float8::f32_round_odd(b, r);
            val(ty, fix(b, ty, f))
        }
        _ => {
            let f = b.cvt(Some(Rounding::Rn), Type::F32, Type::F64, r.into());
            val(ty, fix(b, ty, f))
        }
    }
}

/// Raw storage bits (`.b32` for types up to 32 bits, `.b64` otherwise).
pub fn to_bits(b: &mut Builder, v: Val) -> R<Reg> {
    Ok(match v.ty {
        P::Pred => b.selp(Type::U32, Src::I(1), Src::I(0), v.reg),
        P::F32 => {
            let r = b.reg(RegKind::B32);
            b.mov_to(r, Type::B32, v.reg.into());
            r
        }
        P::F64 => {
            let r = b.reg(RegKind::B64);
            b.mov_to(r, Type::B64, v.reg.into());
            r
        }
        P::F16 => {
            let h = b.cvt(Some(Rounding::Rn), Type::F16, Type::F32, v.reg.into());
            b.cvt(None, Type::U32, Type::U16, h.into())
        }
        P::Bf16 => {
            let r = b.reg(RegKind::B32);
            b.mov_to(r, Type::B32, v.reg.into());
            b.bin(O::Shr, &[], Type::U32, r.into(), Src::I(16))
        }
        P::F8E4M3FN | P::F8E5M2 => match float8::format(v.ty) {
            Some(f) => float8::encode(b, f, v.reg),
            None => return Err(ScalarError::ElementType(v.ty)),
        },
        _ => {
            carrier(v.ty)?;
            v.reg
        }
    })
}

/// A value from raw storage bits (as produced by [`to_bits`] or a zero-extending load).
pub fn from_bits(b: &mut Builder, ty: P, raw: Reg) -> R<Val> {
    let reg = match ty {
        P::Pred => b.setp(CmpOp::Ne, Type::U32, raw.into(), Src::I(0)),
        P::F32 => {
            let f = b.reg(RegKind::F32);
            b.mov_to(f, Type::B32, raw.into());
            f
        }
        P::F64 => {
            let f = b.reg(RegKind::F64);
            b.mov_to(f, Type::B64, raw.into());
            f
        }
        P::F16 => {
            let h = b.cvt(None, Type::U16, Type::U32, raw.into());
            b.cvt(None, Type::F32, Type::F16, h.into())
        }
        P::Bf16 => bf16_to_f32(b, raw),
        P::F8E4M3FN | P::F8E5M2 => match float8::format(ty) {
            Some(f) => float8::decode(b, f, raw),
            None => return Err(ScalarError::ElementType(ty)),
        },
        P::S64 | P::U64 => raw,
        _ => {
            carrier(ty)?;
            fix(b, ty, raw)
        }
    };
    Ok(val(ty, reg))
}

fn mem_type(ty: P) -> Type {
    match ty.byte_size() {
        1 => Type::U8,
        2 => Type::U16,
        8 => Type::B64,
        _ => Type::B32,
    }
}

/// Loads one element of type `ty` from `addr` in `space`.
pub fn load(b: &mut Builder, space: StateSpace, ty: P, addr: Reg) -> R<Val> {
    if ty.is_complex() {
        return complex::load(b, space, ty, addr);
    }
    carrier(ty)?;
    // An f32/f64 element straight into a float register: `ld.f32` holds the same bits as
    // `ld.b32` and a `mov.b32`, one instruction fewer per element.
    if let Some((ft, fk)) = float_reg(ty) {
        return Ok(val(ty, b.ld(space, ft, fk, addr)));
    }
    let mt = mem_type(ty);
    let k = if mt == Type::B64 {
        RegKind::B64
    } else {
        RegKind::B32
    };
    let raw = b.ld(space, mt, k, addr);
    from_bits(b, ty, raw)
}

/// Stores one element.
pub fn store(b: &mut Builder, space: StateSpace, addr: Reg, v: Val) -> R<()> {
    if v.ty.is_complex() {
        return complex::store(b, space, addr, v);
    }
    if let Some((ft, fk)) = float_reg(v.ty) {
        if v.reg.kind == fk {
            b.st(space, ft, addr, v.reg);
            return Ok(());
        }
    }
    let raw = to_bits(b, v)?;
    b.st(space, mem_type(v.ty), addr, raw);
    Ok(())
}

/// The memory type and register class of an element that a float register holds as it is in
/// memory (f32, f64).
fn float_reg(ty: P) -> Option<(Type, RegKind)> {
    match ty {
        P::F32 => Some((Type::F32, RegKind::F32)),
        P::F64 => Some((Type::F64, RegKind::F64)),
        _ => None,
    }
}

/// Fresh registers for a value of type `ty` (two for a complex type).
pub fn alloc(b: &mut Builder, ty: P) -> R<Val> {
    if ty.is_complex() {
        return complex::alloc(b, ty);
    }
    Ok(val(ty, b.reg(kind(ty)?)))
}

/// `mov` of a value into the registers of `dst` (both parts of a complex value).
pub fn assign_val(b: &mut Builder, dst: Val, v: Val) -> R<()> {
    if v.ty.is_complex() {
        return complex::assign(b, dst, v);
    }
    assign(b, dst.reg, v)
}

/// `mov` of a value into an existing register of the same class.
pub fn assign(b: &mut Builder, dst: Reg, v: Val) -> R<()> {
    let ty = match carrier(v.ty)? {
        Type::Pred => Type::Pred,
        Type::F32 => Type::F32,
        Type::F64 => Type::F64,
        Type::S64 | Type::U64 => Type::B64,
        _ => Type::B32,
    };
    b.mov_to(dst, ty, v.reg.into());
    Ok(())
}

fn is_f32_family(ty: P) -> bool {
    matches!(ty, P::F16 | P::Bf16 | P::F8E4M3FN | P::F8E5M2 | P::F32)
}

/// An elementwise unary operation. `is-finite` returns `pred`.
pub fn unary(b: &mut Builder, op: H, x: Val) -> R<Val> {
    if x.ty.is_complex() || matches!(op, H::Real | H::Imag) {
        return complex::unary(b, op, x);
    }
    let ty = x.ty;
    let c = carrier(ty)?;
    let unsupported = || Err(ScalarError::Undefined { op, ty });
    if c == Type::Pred {
        return match op {
            H::Not => Ok(val(ty, b.pnot(x.reg))),
            H::Copy | H::Abs => Ok(x),
            _ => unsupported(),
        };
    }
    if c == Type::F32 || c == Type::F64 {
        let simple = |b: &mut Builder, o: O, pre: &[ptx::Modifier]| -> Val {
            let r = b.un(o, pre, c, x.reg.into());
            val(ty, fix(b, ty, r))
        };
        let rnd = |b: &mut Builder, r: Rounding| -> Val {
            let d = b.cvt(Some(r), c, c, x.reg.into());
            val(ty, d)
        };
        return Ok(match op {
            H::Copy => x,
            H::Abs => simple(b, O::Abs, &[]),
            H::Negate => simple(b, O::Neg, &[]),
            H::Sqrt => simple(b, O::Sqrt, &[RN]),
            H::Floor => rnd(b, Rounding::Rmi),
            H::Ceil => rnd(b, Rounding::Rpi),
            H::RoundNearestEven => rnd(b, Rounding::Rni),
            H::RoundNearestAfz => {
                let tr = b.cvt(Some(Rounding::Rzi), c, c, x.reg.into());
                let d = b.bin(O::Sub, &[RN], c, x.reg.into(), tr.into());
                let d = b.un(O::Abs, &[], c, d.into());
                let half = if c == Type::F32 {
                    Src::F32(0.5)
                } else {
                    Src::F64(0.5)
                };
                let ge = b.setp(CmpOp::Ge, c, d.into(), half);
                let one = if c == Type::F32 {
                    Src::F32(1.0)
                } else {
                    Src::F64(1.0)
                };
                let one = b.mov(c, one);
                let s = b.op(
                    O::Copysign,
                    vec![super::builder::t(c)],
                    c,
                    &[x.reg.into(), one.into()],
                );
                let zero = if c == Type::F32 {
                    Src::F32(0.0)
                } else {
                    Src::F64(0.0)
                };
                let inc = b.selp(c, s.into(), zero, ge);
                let r = b.bin(O::Add, &[RN], c, tr.into(), inc.into());
                val(ty, r)
            }
            H::Sign => {
                let one = if c == Type::F32 {
                    Src::F32(1.0)
                } else {
                    Src::F64(1.0)
                };
                let one = b.mov(c, one);
                let s = b.op(
                    O::Copysign,
                    vec![super::builder::t(c)],
                    c,
                    &[x.reg.into(), one.into()],
                );
                let zero = if c == Type::F32 {
                    Src::F32(0.0)
                } else {
                    Src::F64(0.0)
                };
                let z = b.setp(CmpOp::Equ, c, x.reg.into(), zero);
                val(ty, b.selp(c, x.reg.into(), s.into(), z))
            }
            H::IsFinite => {
                let p = b.op(
                    O::Testp,
                    vec![
                        ptx::Modifier::Testp(ptx::TestpClass::Finite),
                        super::builder::t(c),
                    ],
                    Type::Pred,
                    &[x.reg.into()],
                );
                val(P::Pred, p)
            }
            H::Rsqrt => {
                let d = to_f64(b, x);
                let s = b.un(O::Sqrt, &[RN], Type::F64, d.into());
                let r = math::div(b, Src::F64(1.0), s.into());
                from_f64(b, ty, r)
            }
            // In f32, as XLA:GPU's `__nv_expf` (see `math::exp_f32` for its accuracy): the
            // softmax and logsumexp rows are mostly this.
            H::Exp if ty == P::F32 => val(ty, math::exp_f32(b, x.reg)),
            // XLA:GPU's f32 `tanh` (`math::tanh_f32`, within 4 ulp).
            H::Tanh if ty == P::F32 => val(ty, math::tanh_f32(b, x.reg)),
            H::Exp
            | H::Expm1
            | H::Log
            | H::Log1p
            | H::Tanh
            | H::Logistic
            | H::Sin
            | H::Cos
            | H::Tan
            | H::Erf
            | H::Cbrt => {
                let d = to_f64(b, x);
                let r = match op {
                    H::Exp if matches!(ty, P::F32 | P::F16 | P::Bf16) => math::exp_narrow(b, d),
                    H::Exp => math::exp(b, d),
                    H::Expm1 => math::expm1(b, d),
                    H::Log => math::log(b, d),
                    H::Log1p => math::log1p(b, d),
                    H::Tanh => math::tanh(b, d),
                    H::Logistic => math::logistic(b, d),
                    H::Sin => math::sincos(b, d).0,
                    H::Cos => math::sincos(b, d).1,
                    H::Tan => {
                        let (s, co) = math::sincos(b, d);
                        math::div(b, s.into(), co.into())
                    }
                    H::Erf => math::erf(b, d),
                    _ => math::cbrt(b, d),
                };
                from_f64(b, ty, r)
            }
            _ => return unsupported(),
        });
    }
    // Integers.
    let wide = c == Type::S64 || c == Type::U64;
    let bt = if wide { Type::B64 } else { Type::B32 };
    let w = bits(ty);
    let masked = |b: &mut Builder| -> Reg {
        if w < 32 {
            b.bin(
                O::And,
                &[],
                Type::B32,
                x.reg.into(),
                Src::I((1i64 << w) - 1),
            )
        } else {
            x.reg
        }
    };
    let r = match op {
        H::Copy => return Ok(x),
        H::Abs if ty.is_unsigned_int() => return Ok(x),
        H::Abs => b.un(O::Abs, &[], c, x.reg.into()),
        H::Negate => b.un(
            O::Neg,
            &[],
            if wide { Type::S64 } else { Type::S32 },
            x.reg.into(),
        ),
        H::Not => b.un(O::Not, &[], bt, x.reg.into()),
        H::Sign => {
            if ty.is_unsigned_int() {
                let p = b.setp(CmpOp::Ne, c, x.reg.into(), Src::I(0));
                b.selp(c, Src::I(1), Src::I(0), p)
            } else {
                let gt = b.setp(CmpOp::Gt, c, x.reg.into(), Src::I(0));
                let lt = b.setp(CmpOp::Lt, c, x.reg.into(), Src::I(0));
                let a = b.selp(c, Src::I(1), Src::I(0), gt);
                let m = b.selp(c, Src::I(1), Src::I(0), lt);
                b.bin(O::Sub, &[], c, a.into(), m.into())
            }
        }
        H::PopulationCount | H::Clz => {
            let m = masked(b);
            let o = if op == H::Clz { O::Clz } else { O::Popc };
            let n = b.op(o, vec![super::builder::t(bt)], Type::U32, &[m.into()]);
            let n = if op == H::Clz && w < 32 {
                b.bin(O::Sub, &[], Type::S32, n.into(), Src::I(i64::from(32 - w)))
            } else {
                n
            };
            if wide {
                b.cvt(None, Type::U64, Type::U32, n.into())
            } else {
                n
            }
        }
        _ => return unsupported(),
    };
    Ok(val(ty, fix(b, ty, r)))
}

/// Float max/min with NaN propagation: `max.NaN.f32` where the target has it (the same
/// value but for a NaN's payload and sign: the canonical NaN, as the hardware gives), else
/// `max` and a select of each NaN operand.
fn fminmax(b: &mut Builder, c: Type, max: bool, x: Reg, y: Reg) -> Reg {
    if c == Type::F32 && b.nan_minmax {
        return b.bin(
            if max { O::Max } else { O::Min },
            &[Modifier::NaN],
            c,
            x.into(),
            y.into(),
        );
    }
    let r = b.bin(
        if max { O::Max } else { O::Min },
        &[],
        c,
        x.into(),
        y.into(),
    );
    let xn = b.setp(CmpOp::Nan, c, x.into(), x.into());
    let r = b.selp(c, x.into(), r.into(), xn);
    let yn = b.setp(CmpOp::Nan, c, y.into(), y.into());
    b.selp(c, y.into(), r.into(), yn)
}

/// An elementwise binary operation on two values of the same type.
pub fn binary(b: &mut Builder, op: H, x: Val, y: Val) -> R<Val> {
    if x.ty.is_complex() || op == H::Complex {
        return complex::binary(b, op, x, y);
    }
    let ty = x.ty;
    if y.ty != ty {
        return Err(ScalarError::OperandTypes(ty, y.ty));
    }
    let c = carrier(ty)?;
    let unsupported = || Err(ScalarError::Undefined { op, ty });
    let (xr, yr) = (x.reg, y.reg);
    if c == Type::Pred {
        let r = match op {
            H::And | H::Minimum | H::Multiply => b.pand(xr, yr),
            H::Or | H::Maximum | H::Add => b.por(xr, yr),
            H::Xor | H::Subtract => b.bin(O::Xor, &[], Type::Pred, xr.into(), yr.into()),
            H::Power => {
                let ny = b.pnot(yr);
                b.por(xr, ny)
            }
            _ => return unsupported(),
        };
        return Ok(val(ty, r));
    }
    if c == Type::F32 || c == Type::F64 {
        let r = match op {
            H::Add => b.bin(O::Add, &[RN], c, xr.into(), yr.into()),
            H::Subtract => b.bin(O::Sub, &[RN], c, xr.into(), yr.into()),
            H::Multiply => b.bin(O::Mul, &[RN], c, xr.into(), yr.into()),
            H::Divide => b.bin(O::Div, &[RN], c, xr.into(), yr.into()),
            H::Maximum => fminmax(b, c, true, xr, yr),
            H::Minimum => fminmax(b, c, false, xr, yr),
            H::Remainder => {
                let (dx, dy) = (to_f64(b, x), to_f64(b, y));
                let q = math::div(b, dx.into(), dy.into());
                let q = b.cvt(Some(Rounding::Rzi), Type::F64, Type::F64, q.into());
                let nq = b.un(O::Neg, &[], Type::F64, q.into());
                let r = b.fma(Type::F64, nq.into(), dy.into(), dx.into());
                let ay = b.un(O::Abs, &[], Type::F64, dy.into());
                let yinf = b.setp(CmpOp::Eq, Type::F64, ay.into(), Src::F64(f64::INFINITY));
                let ax = b.un(O::Abs, &[], Type::F64, dx.into());
                let xfin = b.setp(CmpOp::Lt, Type::F64, ax.into(), Src::F64(f64::INFINITY));
                let keep = b.pand(yinf, xfin);
                let r = b.selp(Type::F64, dx.into(), r.into(), keep);
                return Ok(from_f64(b, ty, r));
            }
            H::Power | H::Atan2 => {
                let (dx, dy) = (to_f64(b, x), to_f64(b, y));
                let r = if op == H::Power {
                    math::pow(b, dx, dy)
                } else {
                    math::atan2(b, dx, dy)
                };
                return Ok(from_f64(b, ty, r));
            }
            _ => return unsupported(),
        };
        return Ok(val(ty, fix(b, ty, r)));
    }
    let wide = c == Type::S64 || c == Type::U64;
    let bt = if wide { Type::B64 } else { Type::B32 };
    let signed = ty.is_signed_int();
    let w = i64::from(bits(ty));
    let r = match op {
        H::Add => b.bin(O::Add, &[], c, xr.into(), yr.into()),
        H::Subtract => b.bin(O::Sub, &[], c, xr.into(), yr.into()),
        H::Multiply => b.mul_lo(c, xr.into(), yr.into()),
        H::Maximum => b.bin(O::Max, &[], c, xr.into(), yr.into()),
        H::Minimum => b.bin(O::Min, &[], c, xr.into(), yr.into()),
        H::And => b.bin(O::And, &[], bt, xr.into(), yr.into()),
        H::Or => b.bin(O::Or, &[], bt, xr.into(), yr.into()),
        H::Xor => b.bin(O::Xor, &[], bt, xr.into(), yr.into()),
        H::Divide | H::Remainder => {
            let zero = b.setp(CmpOp::Eq, c, yr.into(), Src::I(0));
            let m1 = if signed {
                Some(b.setp(CmpOp::Eq, c, yr.into(), Src::I(-1)))
            } else {
                None
            };
            let bad = match m1 {
                Some(m1) => b.por(zero, m1),
                None => zero,
            };
            let safe = b.selp(c, Src::I(1), yr.into(), bad);
            let o = if op == H::Divide { O::Div } else { O::Rem };
            let q = b.bin(o, &[], c, xr.into(), safe.into());
            if op == H::Divide {
                let q = match m1 {
                    Some(m1) => {
                        let st = if wide { Type::S64 } else { Type::S32 };
                        let neg = b.un(O::Neg, &[], st, xr.into());
                        b.selp(c, neg.into(), q.into(), m1)
                    }
                    None => q,
                };
                // x / 0 is all ones (-1 for signed types); u64's all ones is -1 as i64.
                let all = if signed || w >= 64 {
                    -1
                } else {
                    (1i64 << w) - 1
                };
                b.selp(c, Src::I(all), q.into(), zero)
            } else {
                let q = match m1 {
                    Some(m1) => b.selp(c, Src::I(0), q.into(), m1),
                    None => q,
                };
                b.selp(c, xr.into(), q.into(), zero)
            }
        }
        H::ShiftLeft | H::ShiftRightLogical | H::ShiftRightArithmetic => {
            // Out of range: amount < 0 or >= width (one unsigned comparison).
            let ut = if wide { Type::U64 } else { Type::U32 };
            let oor = b.setp(CmpOp::Ge, ut, yr.into(), Src::I(w));
            let amt = if wide {
                b.cvt(None, Type::U32, Type::U64, yr.into())
            } else {
                yr
            };
            let amt = b.selp(Type::U32, Src::I(0), amt.into(), oor);
            match op {
                H::ShiftLeft => {
                    let s = b.bin(O::Shl, &[], bt, xr.into(), amt.into());
                    b.selp(c, Src::I(0), s.into(), oor)
                }
                H::ShiftRightLogical => {
                    let base = if w < 32 {
                        b.bin(O::And, &[], Type::B32, xr.into(), Src::I((1i64 << w) - 1))
                    } else {
                        xr
                    };
                    let s = b.bin(O::Shr, &[], ut, base.into(), amt.into());
                    b.selp(c, Src::I(0), s.into(), oor)
                }
                _ => {
                    // Arithmetic: sign-extend from the type's width first.
                    let st = if wide { Type::S64 } else { Type::S32 };
                    let sx = if ty.is_unsigned_int() && w < 64 && !wide {
                        b.op(
                            O::Bfe,
                            vec![super::builder::t(Type::S32)],
                            Type::S32,
                            &[xr.into(), Src::I(0), Src::I(w)],
                        )
                    } else {
                        xr
                    };
                    let amt2 = b.selp(Type::U32, Src::I(w - 1), amt.into(), oor);
                    b.bin(O::Shr, &[], st, sx.into(), amt2.into())
                }
            }
        }
        H::Power => {
            // Binary exponentiation with wrapping; 1 when x == 1 or y == 0; 0 for y < 0 (signed).
            let acc = b.mov(bt, Src::I(1));
            let base = b.mov(bt, xr.into());
            let e = b.mov(bt, yr.into());
            let top = b.label();
            let end = b.label();
            b.place(&top);
            let done = b.setp(CmpOp::Le, c, e.into(), Src::I(0));
            b.bra_div(done, false, &end);
            let bit = b.bin(O::And, &[], bt, e.into(), Src::I(1));
            let odd = b.setp(CmpOp::Ne, bt, bit.into(), Src::I(0));
            let prod = b.mul_lo(c, acc.into(), base.into());
            let na = b.selp(c, prod.into(), acc.into(), odd);
            b.mov_to(acc, bt, na.into());
            let sq = b.mul_lo(c, base.into(), base.into());
            b.mov_to(base, bt, sq.into());
            let ut = if wide { Type::U64 } else { Type::U32 };
            let ne = b.bin(O::Shr, &[], ut, e.into(), Src::I(1));
            b.mov_to(e, bt, ne.into());
            b.bra(None, &top);
            b.place(&end);
            let r = if signed {
                let neg = b.setp(CmpOp::Lt, c, yr.into(), Src::I(0));
                b.selp(c, Src::I(0), acc.into(), neg)
            } else {
                acc
            };
            let one = b.setp(CmpOp::Eq, c, xr.into(), Src::I(1));
            let z = b.setp(CmpOp::Eq, c, yr.into(), Src::I(0));
            let u = b.por(one, z);
            b.selp(c, Src::I(1), r.into(), u)
        }
        _ => return unsupported(),
    };
    Ok(val(ty, fix(b, ty, r)))
}

/// `compare`, giving a `pred`. `ne` on floats is unordered (true when either is NaN), the other
/// float directions ordered; `TOTALORDER` compares sign-magnitude keys of the bits (-NaN < -inf
/// < ... < -0 < +0 < ... < +inf < +NaN); pred operands compare as 0/1.
pub fn compare(
    b: &mut Builder,
    dir: ComparisonDirection,
    ctype: Option<ComparisonType>,
    x: Val,
    y: Val,
) -> R<Val> {
    if x.ty.is_complex() {
        return complex::compare(b, dir, x, y);
    }
    let mut c = carrier(x.ty)?;
    let (mut xr, mut yr) = (x.reg, y.reg);
    if c == Type::Pred {
        xr = b.selp(Type::U32, Src::I(1), Src::I(0), xr);
        yr = b.selp(Type::U32, Src::I(1), Src::I(0), yr);
        c = Type::U32;
    }
    let float = c == Type::F32 || c == Type::F64;
    if float && ctype == Some(ComparisonType::TotalOrder) {
        let (it, bt, mx) = if c == Type::F32 {
            (Type::S32, Type::B32, i64::from(i32::MAX))
        } else {
            (Type::S64, Type::B64, i64::MAX)
        };
        let key = |b: &mut Builder, r: Reg| -> Reg {
            let k = b.reg(RegKind::of(bt));
            b.mov_to(k, bt, r.into());
            let flipped = b.bin(O::Xor, &[], bt, k.into(), Src::I(mx));
            let neg = b.setp(CmpOp::Lt, it, k.into(), Src::I(0));
            b.selp(it, flipped.into(), k.into(), neg)
        };
        xr = key(b, xr);
        yr = key(b, yr);
        c = it;
    }
    let float = c == Type::F32 || c == Type::F64;
    let cmp = match dir {
        ComparisonDirection::Eq => CmpOp::Eq,
        ComparisonDirection::Ne if float => CmpOp::Neu,
        ComparisonDirection::Ne => CmpOp::Ne,
        ComparisonDirection::Lt => CmpOp::Lt,
        ComparisonDirection::Le => CmpOp::Le,
        ComparisonDirection::Gt => CmpOp::Gt,
        ComparisonDirection::Ge => CmpOp::Ge,
    };
    Ok(val(P::Pred, b.setp(cmp, c, xr.into(), yr.into())))
}

/// `select(p, t, f)`.
pub fn select(b: &mut Builder, p: Val, x: Val, y: Val) -> R<Val> {
    if x.ty.is_complex() {
        return complex::select(b, p, x, y);
    }
    let c = carrier(x.ty)?;
    if c == Type::Pred {
        let a = b.pand(p.reg, x.reg);
        let np = b.pnot(p.reg);
        let d = b.pand(np, y.reg);
        return Ok(val(x.ty, b.por(a, d)));
    }
    Ok(val(x.ty, b.selp(c, x.reg.into(), y.reg.into(), p.reg)))
}

/// `clamp(lo, x, hi)`.
pub fn clamp(b: &mut Builder, lo: Val, x: Val, hi: Val) -> R<Val> {
    let c = carrier(x.ty)?;
    if c == Type::F32 || c == Type::F64 {
        let m = b.bin(O::Max, &[], c, x.reg.into(), lo.reg.into());
        let m = b.bin(O::Min, &[], c, hi.reg.into(), m.into());
        let hn = b.setp(CmpOp::Nan, c, hi.reg.into(), hi.reg.into());
        let m = b.selp(c, hi.reg.into(), m.into(), hn);
        let xn = b.setp(CmpOp::Nan, c, x.reg.into(), x.reg.into());
        let m = b.selp(c, x.reg.into(), m.into(), xn);
        let ln = b.setp(CmpOp::Nan, c, lo.reg.into(), lo.reg.into());
        return Ok(val(x.ty, b.selp(c, lo.reg.into(), m.into(), ln)));
    }
    let m = binary(b, H::Maximum, x, lo)?;
    binary(b, H::Minimum, m, hi)
}

/// `convert` to another element type.
pub fn convert(b: &mut Builder, x: Val, to: P) -> R<Val> {
    let from = x.ty;
    if from == to {
        return Ok(x);
    }
    if from.is_complex() || to.is_complex() {
        return complex::convert(b, x, to);
    }
    let cf = carrier(from)?;
    let ct = carrier(to)?;
    let ff = cf == Type::F32 || cf == Type::F64;
    let tf = ct == Type::F32 || ct == Type::F64;
    if to == P::Pred {
        let z = match cf {
            Type::F32 => Src::F32(0.0),
            Type::F64 => Src::F64(0.0),
            _ => Src::I(0),
        };
        let cmp = if ff { CmpOp::Neu } else { CmpOp::Ne };
        return Ok(val(to, b.setp(cmp, cf, x.reg.into(), z)));
    }
    if from == P::Pred {
        let r = match ct {
            Type::F32 => b.selp(ct, Src::F32(1.0), Src::F32(0.0), x.reg),
            Type::F64 => b.selp(ct, Src::F64(1.0), Src::F64(0.0), x.reg),
            _ => b.selp(ct, Src::I(1), Src::I(0), x.reg),
        };
        return Ok(val(to, r));
    }
    if ff && tf {
        if cf == ct {
            // Within the f32 family.
            let r = if is_f32_family(to) && to != P::F32 {
                fix(b, to, x.reg)
            } else {
                x.reg
            };
            return Ok(val(to, r));
        }
        if cf == Type::F64 {
            return Ok(from_f64(b, to, x.reg));
        }
        return Ok(val(to, b.cvt(None, Type::F64, Type::F32, x.reg.into())));
    }
    if !ff && tf {
        let r = b.cvt(Some(Rounding::Rn), ct, cf, x.reg.into());
        return Ok(val(to, fix(b, to, r)));
    }
    if ff && !tf {
        let r = b.cvt(Some(Rounding::Rzi), ct, cf, x.reg.into());
        let r = match to {
            P::S8 | P::S16 => {
                let hi = (1i64 << (bits(to) - 1)) - 1;
                let r = b.bin(O::Max, &[], Type::S32, r.into(), Src::I(-hi - 1));
                b.bin(O::Min, &[], Type::S32, r.into(), Src::I(hi))
            }
            P::U8 | P::U16 => b.bin(
                O::Min,
                &[],
                Type::U32,
                r.into(),
                Src::I((1i64 << bits(to)) - 1),
            ),
            _ => r,
        };
        return Ok(val(to, r));
    }
    // Integer to integer.
    let w64f = cf == Type::S64 || cf == Type::U64;
    let w64t = ct == Type::S64 || ct == Type::U64;
    let r = match (w64f, w64t) {
        (false, false) => fix(b, to, x.reg),
        (true, false) => {
            let r = b.cvt(None, Type::U32, Type::U64, x.reg.into());
            fix(b, to, r)
        }
        (false, true) => {
            if from.is_signed_int() {
                b.cvt(None, Type::S64, Type::S32, x.reg.into())
            } else {
                b.cvt(None, Type::U64, Type::U32, x.reg.into())
            }
        }
        (true, true) => x.reg,
    };
    Ok(val(to, r))
}

/// `bitcast-convert` between types of the same width.
pub fn bitcast(b: &mut Builder, x: Val, to: P) -> R<Val> {
    if x.ty.bit_width() != to.bit_width() {
        return Err(ScalarError::BitcastWidths(x.ty.bit_width(), to.bit_width()));
    }
    let raw = to_bits(b, x)?;
    from_bits(b, to, raw)
}

/// A value's storage bits, zero-extended into a `.b64` register.
fn storage_bits64(b: &mut Builder, v: Val) -> R<Reg> {
    let raw = to_bits(b, v)?;
    let n = bits(v.ty);
    if n == 64 {
        return Ok(raw);
    }
    let wide = b.cvt(None, Type::U64, Type::U32, raw.into());
    let mask = (1i64 << n) - 1;
    Ok(b.bin(O::And, &[], Type::B64, wide.into(), Src::I(mask)))
}

/// A value of `ty` from the low bits of a `.b64` register.
fn from_bits64(b: &mut Builder, ty: P, w: Reg) -> R<Val> {
    let n = bits(ty);
    if n == 64 {
        return from_bits(b, ty, w);
    }
    let low = b.cvt(None, Type::U32, Type::U64, w.into());
    let low = if n < 32 {
        b.bin(O::And, &[], Type::B32, low.into(), Src::I((1i64 << n) - 1))
    } else {
        low
    };
    from_bits(b, ty, low)
}

/// Part `k` (a `.u32` index, least significant part first) of a wider value's bits, as a value
/// of the narrower type `to`: `bitcast-convert` to a narrower type.
pub fn bitcast_part(b: &mut Builder, x: Val, to: P, k: Src) -> R<Val> {
    if bits(x.ty) <= bits(to) || x.ty.is_complex() || to.is_complex() {
        return Err(ScalarError::BitcastWidths(x.ty.bit_width(), to.bit_width()));
    }
    let w = storage_bits64(b, x)?;
    let shift = b.mul_lo(Type::U32, k, Src::I(i64::from(bits(to))));
    let part = b.bin(O::Shr, &[], Type::B64, w.into(), shift.into());
    from_bits64(b, to, part)
}

/// Narrower values joined into one of the wider type `to`, the first least significant:
/// `bitcast-convert` to a wider type.
pub fn bitcast_join(b: &mut Builder, parts: &[Val], to: P) -> R<Val> {
    let mut acc = b.mov(Type::B64, Src::I(0));
    for (k, &p) in parts.iter().enumerate() {
        if bits(p.ty) >= bits(to) || p.ty.is_complex() || to.is_complex() {
            return Err(ScalarError::BitcastWidths(p.ty.bit_width(), to.bit_width()));
        }
        let w = storage_bits64(b, p)?;
        let shift = Src::I(k as i64 * i64::from(bits(p.ty)));
        let w = b.bin(O::Shl, &[], Type::B64, w.into(), shift);
        acc = b.bin(O::Or, &[], Type::B64, acc.into(), w.into());
    }
    from_bits64(b, to, acc)
}

/// Loads a pred/int/float scalar as a signed 64-bit index value (`.b64`).
pub fn to_index64(b: &mut Builder, v: Val) -> R<Reg> {
    let c = carrier(v.ty)?;
    Ok(match c {
        Type::S32 => b.cvt(None, Type::S64, Type::S32, v.reg.into()),
        Type::U32 => b.cvt(None, Type::U64, Type::U32, v.reg.into()),
        Type::S64 | Type::U64 => v.reg,
        _ => return Err(ScalarError::IndexType(v.ty)),
    })
}

/// `reduce-precision` to `e` exponent and `m` mantissa bits, on the storage bits (XLA's
/// rounding: round to nearest even, overflow to infinity, underflow (denormals included) to
/// signed zero; NaN kept unless no mantissa bits remain), as the reference evaluator does.
pub fn reduce_precision(b: &mut Builder, x: Val, e: i64, m: i64) -> R<Val> {
    let (src_m, src_e): (i64, i64) = match x.ty {
        P::F16 => (10, 5),
        P::Bf16 => (7, 8),
        P::F32 => (23, 8),
        P::F64 => (52, 11),
        other => return Err(ScalarError::ReducePrecisionType(other)),
    };
    if e < 1 || m < 0 {
        return Err(ScalarError::ReducePrecisionBits(e, m));
    }
    let wide = x.ty == P::F64;
    let (bt, ut) = if wide {
        (Type::B64, Type::U64)
    } else {
        (Type::B32, Type::U32)
    };
    let mask = |n: i64| -> i64 {
        if n >= 64 {
            -1
        } else {
            ((1u64 << n) - 1) as i64
        }
    };
    let width = 1 + src_e + src_m;
    let exp_mask = mask(src_e) << src_m;
    let bits = to_bits(b, x)?;
    let ex = b.bin(O::And, &[], bt, bits.into(), Src::I(exp_mask));
    let all_ones = b.setp(CmpOp::Eq, ut, ex.into(), Src::I(exp_mask));
    let man = b.bin(O::And, &[], bt, bits.into(), Src::I(mask(src_m)));
    let nonzero = b.setp(CmpOp::Ne, ut, man.into(), Src::I(0));
    let is_nan = b.pand(all_ones, nonzero);
    let mut v = bits;
    if m < src_m {
        let sh = src_m - m;
        let last = 1i64 << sh;
        let base_bias = (last >> 1) - 1;
        let xl = b.bin(O::And, &[], bt, v.into(), Src::I(last));
        let xl = b.bin(O::Shr, &[], ut, xl.into(), Src::I(sh));
        let t = b.bin(O::Add, &[], ut, v.into(), xl.into());
        let t = b.bin(O::Add, &[], ut, t.into(), Src::I(base_bias));
        let keep = !(last - 1) & mask(width);
        v = b.bin(O::And, &[], bt, t.into(), Src::I(keep));
    }
    if e < src_e {
        let sign = b.bin(
            O::And,
            &[],
            bt,
            bits.into(),
            Src::I(!mask(width - 1) & mask(width)),
        );
        let bias = (1i64 << (src_e - 1)) - 1;
        let reduced_bias = (1i64 << (e - 1)) - 1;
        let max_exp = bias + reduced_bias;
        let min_exp = bias - reduced_bias;
        let x_exp = b.bin(O::And, &[], bt, v.into(), Src::I(exp_mask));
        let over = b.setp(CmpOp::Gt, ut, x_exp.into(), Src::I(max_exp << src_m));
        let under = b.setp(CmpOp::Le, ut, x_exp.into(), Src::I(min_exp << src_m));
        let inf = b.bin(O::Or, &[], bt, sign.into(), Src::I(exp_mask));
        let t = b.selp(bt, inf.into(), v.into(), over);
        v = b.selp(bt, sign.into(), t.into(), under);
    }
    if m > 0 {
        v = b.selp(bt, bits.into(), v.into(), is_nan);
    }
    from_bits(b, x.ty, v)
}
