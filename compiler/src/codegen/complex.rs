//! Complex values (`c64`, `c128`) in generated kernels.
//!
//! A complex value is two registers of its part type's carrier (`.f32` for `c64`, `.f64` for
//! `c128`): [`Val::reg`] holds the real part and [`Val::im`] the imaginary part. In memory an
//! element is the real part then the imaginary part, little-endian (XLA's layout), so `c64` is 8
//! bytes and `c128` 16.
//!
//! Each operation emits the same sequence of IEEE operations (`.rn`, no contraction) as
//! `hlo::complex` computes on the host, so the device and the reference evaluator agree bit for
//! bit on `+ - *`, division (Smith's algorithm with XLA's recovery of infinities and zeros),
//! `abs`, `sign`, `negate`, compare, select and conversions. The transcendentals and `power` are
//! XLA's formulas computed on `f64` parts ([`super::complex_math`]). What is not here (ordered
//! compares, `maximum`/`minimum`, `atan2`, the inverse trigonometric and hyperbolic functions,
//! bitcasts) is refused with a [`ScalarError`] naming the operation and the type, never
//! computed on one part.
use hlo::{ComparisonDirection, LiteralValue};
use hlo::{Opcode as H, PrimitiveType as P};
use ptx::{CmpOp, Opcode as O, StateSpace, Type};

use super::builder::{Builder, Reg, RegKind, Src, RN};
use super::scalar::{self, ScalarError, Val, R};

/// The part type of a complex type (`f32` for `c64`, `f64` for `c128`); `None` for the others.
pub fn part_type(ty: P) -> Option<P> {
    match ty {
        P::C64 => Some(P::F32),
        P::C128 => Some(P::F64),
        _ => None,
    }
}

fn part_of(ty: P) -> R<(P, Type)> {
    match ty {
        P::C64 => Ok((P::F32, Type::F32)),
        P::C128 => Ok((P::F64, Type::F64)),
        other => Err(ScalarError::ElementType(other)),
    }
}

/// The complex value of type `ty` with parts in `re` and `im`.
pub fn make(ty: P, re: Reg, im: Reg) -> Val {
    Val {
        ty,
        reg: re,
        im: Some(im),
    }
}

/// The two parts as values of the part type.
fn parts(v: Val) -> R<(Reg, Reg)> {
    match v.im {
        Some(im) => Ok((v.reg, im)),
        None => Err(ScalarError::ElementType(v.ty)),
    }
}

fn fconst(c: Type, x: f64) -> Src {
    if c == Type::F32 {
        Src::F32(x as f32)
    } else {
        Src::F64(x)
    }
}

/// The bytes of one element of a complex constant table (real part, then imaginary part);
/// `None` for a real type.
pub fn literal_bytes(ty: P, v: LiteralValue) -> Option<Vec<u8>> {
    let (re, im) = v.as_complex();
    match ty {
        P::C64 => Some([(re as f32).to_le_bytes(), (im as f32).to_le_bytes()].concat()),
        P::C128 => Some([re.to_le_bytes(), im.to_le_bytes()].concat()),
        _ => None,
    }
}

/// Fresh registers for a value of complex type `ty` (mutable accumulators, branch results).
pub fn alloc(b: &mut Builder, ty: P) -> R<Val> {
    let (_, c) = part_of(ty)?;
    let k = RegKind::of(c);
    Ok(make(ty, b.reg(k), b.reg(k)))
}

/// Moves both parts of `v` into the registers of `dst`.
pub fn assign(b: &mut Builder, dst: Val, v: Val) -> R<()> {
    let (_, c) = part_of(v.ty)?;
    let ((dr, di), (vr, vi)) = (parts(dst)?, parts(v)?);
    b.mov_to(dr, c, vr.into());
    b.mov_to(di, c, vi.into());
    Ok(())
}

/// A complex constant (a real literal value has imaginary part 0).
pub fn konst(b: &mut Builder, ty: P, v: LiteralValue) -> R<Val> {
    let (_, c) = part_of(ty)?;
    let (re, im) = v.as_complex();
    let re = b.mov(c, fconst(c, re));
    let im = b.mov(c, fconst(c, im));
    Ok(make(ty, re, im))
}

/// Loads an element: the real part at `addr`, the imaginary part right after it.
pub fn load(b: &mut Builder, space: StateSpace, ty: P, addr: Reg) -> R<Val> {
    let (pt, c) = part_of(ty)?;
    let re = scalar::load(b, space, pt, addr)?.reg;
    let next = b.bin(O::Add, &[], Type::U64, addr.into(), Src::I(size(c)));
    let im = scalar::load(b, space, pt, next)?.reg;
    Ok(make(ty, re, im))
}

/// Stores an element (real part, then imaginary part).
pub fn store(b: &mut Builder, space: StateSpace, addr: Reg, v: Val) -> R<()> {
    let (pt, c) = part_of(v.ty)?;
    let (re, im) = parts(v)?;
    scalar::store(b, space, addr, part(pt, re))?;
    let next = b.bin(O::Add, &[], Type::U64, addr.into(), Src::I(size(c)));
    scalar::store(b, space, next, part(pt, im))
}

fn size(c: Type) -> i64 {
    if c == Type::F32 {
        4
    } else {
        8
    }
}

/// The complex value of type `ty` from `f64` parts, each rounded once to the part type.
fn narrow(b: &mut Builder, ty: P, re: Reg, im: Reg) -> R<Val> {
    let (pt, _) = part_of(ty)?;
    let re = scalar::from_f64(b, pt, re).reg;
    let im = scalar::from_f64(b, pt, im).reg;
    Ok(make(ty, re, im))
}

fn part(pt: P, r: Reg) -> Val {
    Val {
        ty: pt,
        reg: r,
        im: None,
    }
}

/// `|z|` as `hlo::Complex::abs` computes it: `max·sqrt(1 + (min/max)²)`, `min` when
/// `max` is 0, ∞ when either part is infinite.
fn abs(b: &mut Builder, c: Type, re: Reg, im: Reg) -> Reg {
    let ax = b.un(O::Abs, &[], c, re.into());
    let ay = b.un(O::Abs, &[], c, im.into());
    let ge = b.setp(CmpOp::Ge, c, ax.into(), ay.into());
    let max = b.selp(c, ax.into(), ay.into(), ge);
    let min = b.selp(c, ay.into(), ax.into(), ge);
    let r = b.bin(O::Div, &[RN], c, min.into(), max.into());
    let r2 = b.bin(O::Mul, &[RN], c, r.into(), r.into());
    let s = b.bin(O::Add, &[RN], c, fconst(c, 1.0), r2.into());
    let q = b.un(O::Sqrt, &[RN], c, s.into());
    let res = b.bin(O::Mul, &[RN], c, max.into(), q.into());
    let zero = b.setp(CmpOp::Eq, c, max.into(), fconst(c, 0.0));
    let z = b.bin(O::Add, &[RN], c, fconst(c, 0.0), min.into());
    let res = b.selp(c, z.into(), res.into(), zero);
    let xi = b.setp(CmpOp::Eq, c, ax.into(), fconst(c, f64::INFINITY));
    let yi = b.setp(CmpOp::Eq, c, ay.into(), fconst(c, f64::INFINITY));
    let inf = b.por(xi, yi);
    b.selp(c, fconst(c, f64::INFINITY), res.into(), inf)
}

/// A unary operation on a complex value, or `real`/`imag` of any float value.
pub fn unary(b: &mut Builder, op: H, x: Val) -> R<Val> {
    if part_type(x.ty).is_none() {
        // `real` of a real number is itself, `imag` is 0 (XLA).
        return match op {
            H::Real if x.ty.is_float() => Ok(x),
            H::Imag if x.ty.is_float() => scalar::konst_num(b, x.ty, 0.0),
            _ => Err(ScalarError::Undefined { op, ty: x.ty }),
        };
    }
    let (pt, c) = part_of(x.ty)?;
    let (re, im) = parts(x)?;
    Ok(match op {
        H::Copy => x,
        H::Real => part(pt, re),
        H::Imag => part(pt, im),
        H::Negate => {
            let nr = b.un(O::Neg, &[], c, re.into());
            let ni = b.un(O::Neg, &[], c, im.into());
            make(x.ty, nr, ni)
        }
        H::Abs => part(pt, abs(b, c, re, im)),
        H::Sign => {
            let a = abs(b, c, re, im);
            let sr = b.bin(O::Div, &[RN], c, re.into(), a.into());
            let si = b.bin(O::Div, &[RN], c, im.into(), a.into());
            let zero = b.setp(CmpOp::Eq, c, a.into(), fconst(c, 0.0));
            let sr = b.selp(c, fconst(c, 0.0), sr.into(), zero);
            let si = b.selp(c, fconst(c, 0.0), si.into(), zero);
            make(x.ty, sr, si)
        }
        _ if super::complex_math::has_unary(op) => {
            let (wr, wi) = (
                scalar::to_f64(b, part(pt, re)),
                scalar::to_f64(b, part(pt, im)),
            );
            let (r, i) = super::complex_math::unary(b, op, wr, wi)
                .ok_or(ScalarError::Undefined { op, ty: x.ty })?;
            narrow(b, x.ty, r, i)?
        }
        H::IsFinite => {
            let fr = scalar::unary(b, H::IsFinite, part(pt, re))?;
            let fi = scalar::unary(b, H::IsFinite, part(pt, im))?;
            part(P::Pred, b.pand(fr.reg, fi.reg))
        }
        _ => return Err(ScalarError::Undefined { op, ty: x.ty }),
    })
}

/// A binary operation on two complex values, or `complex` of two float values.
pub fn binary(b: &mut Builder, op: H, x: Val, y: Val) -> R<Val> {
    if x.ty != y.ty {
        return Err(ScalarError::OperandTypes(x.ty, y.ty));
    }
    if op == H::Complex {
        let ty = match x.ty {
            P::F32 => P::C64,
            P::F64 => P::C128,
            other => return Err(ScalarError::Undefined { op, ty: other }),
        };
        return Ok(make(ty, x.reg, y.reg));
    }
    let (_, c) = part_of(x.ty)?;
    let ((ar, ai), (br, bi)) = (parts(x)?, parts(y)?);
    let f = |b: &mut Builder, o: O, p: Reg, q: Reg| b.bin(o, &[RN], c, p.into(), q.into());
    let (re, im) = match op {
        H::Add => (f(b, O::Add, ar, br), f(b, O::Add, ai, bi)),
        H::Subtract => (f(b, O::Sub, ar, br), f(b, O::Sub, ai, bi)),
        H::Multiply => {
            let (p, q) = (f(b, O::Mul, ar, br), f(b, O::Mul, ai, bi));
            let (s, t) = (f(b, O::Mul, ar, bi), f(b, O::Mul, ai, br));
            (f(b, O::Sub, p, q), f(b, O::Add, s, t))
        }
        H::Divide => super::complex_div::divide(b, c, [ar, ai, br, bi]),
        H::Power => {
            let pt = part_type(x.ty).ok_or(ScalarError::ElementType(x.ty))?;
            let w = [ar, ai, br, bi].map(|r| scalar::to_f64(b, part(pt, r)));
            let (r, i) = super::complex_math::power(b, w);
            return narrow(b, x.ty, r, i);
        }
        _ => return Err(ScalarError::Undefined { op, ty: x.ty }),
    };
    Ok(make(x.ty, re, im))
}

/// `compare` of complex values: `EQ` (both parts equal, ordered) and `NE` (either part
/// unequal or NaN), as XLA; the ordered directions are undefined on complex numbers.
pub fn compare(b: &mut Builder, dir: ComparisonDirection, x: Val, y: Val) -> R<Val> {
    let (_, c) = part_of(x.ty)?;
    let ((ar, ai), (br, bi)) = (parts(x)?, parts(y)?);
    let r = match dir {
        ComparisonDirection::Eq => {
            let e1 = b.setp(CmpOp::Eq, c, ar.into(), br.into());
            let e2 = b.setp(CmpOp::Eq, c, ai.into(), bi.into());
            b.pand(e1, e2)
        }
        ComparisonDirection::Ne => {
            let n1 = b.setp(CmpOp::Neu, c, ar.into(), br.into());
            let n2 = b.setp(CmpOp::Neu, c, ai.into(), bi.into());
            b.por(n1, n2)
        }
        _ => {
            return Err(ScalarError::Undefined {
                op: H::Compare,
                ty: x.ty,
            })
        }
    };
    Ok(part(P::Pred, r))
}

/// `select(p, x, y)` of complex values, part by part.
pub fn select(b: &mut Builder, p: Val, x: Val, y: Val) -> R<Val> {
    let (_, c) = part_of(x.ty)?;
    let ((xr, xi), (yr, yi)) = (parts(x)?, parts(y)?);
    let re = b.selp(c, xr.into(), yr.into(), p.reg);
    let im = b.selp(c, xi.into(), yi.into(), p.reg);
    Ok(make(x.ty, re, im))
}

/// `convert` where either side is complex: part by part between complex types; a real value
/// becomes the real part (imaginary part 0); a complex value converts through its real part
/// (XLA drops the imaginary part).
pub fn convert(b: &mut Builder, x: Val, to: P) -> R<Val> {
    match (part_type(x.ty), part_type(to)) {
        (Some(from_pt), Some(to_pt)) => {
            let (re, im) = parts(x)?;
            let re = scalar::convert(b, part(from_pt, re), to_pt)?.reg;
            let im = scalar::convert(b, part(from_pt, im), to_pt)?.reg;
            Ok(make(to, re, im))
        }
        (None, Some(to_pt)) => {
            let re = scalar::convert(b, x, to_pt)?.reg;
            let (_, c) = part_of(to)?;
            let im = b.mov(c, fconst(c, 0.0));
            Ok(make(to, re, im))
        }
        (Some(from_pt), None) => {
            let (re, _) = parts(x)?;
            scalar::convert(b, part(from_pt, re), to)
        }
        (None, None) => scalar::convert(b, x, to),
    }
}
