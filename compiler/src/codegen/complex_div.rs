//! Complex division in kernels: the operation sequence of `hlo::Complex::div`
//! (Smith's algorithm, then XLA's recovery of infinities and zeros when both parts of the
//! quotient are NaN), branch-free with `selp`, so the device and the evaluator agree bit for bit.
use ptx::{CmpOp, Opcode as O, Type};

use super::builder::{Builder, Reg, RegKind, Src, RN};

fn fconst(c: Type, x: f64) -> Src {
    if c == Type::F32 {
        Src::F32(x as f32)
    } else {
        Src::F64(x)
    }
}

/// Predicate: the sign bit of `x` is set (also for -0 and NaNs with the bit set).
fn sign_bit(b: &mut Builder, c: Type, x: Reg) -> Reg {
    let (bt, st) = if c == Type::F32 {
        (Type::B32, Type::S32)
    } else {
        (Type::B64, Type::S64)
    };
    let k = b.reg(RegKind::of(bt));
    b.mov_to(k, bt, x.into());
    b.setp(CmpOp::Lt, st, k.into(), Src::I(0))
}

/// `copysign(mag, x)` for a non-negative constant `mag`.
fn with_sign(b: &mut Builder, c: Type, mag: f64, x: Reg) -> Reg {
    let s = sign_bit(b, c, x);
    b.selp(c, fconst(c, -mag), fconst(c, mag), s)
}

/// `(a_r + a_i·i) / (b_r + b_i·i)` on parts of carrier `c` (`.f32` or `.f64`): `(re, im)`.
pub fn divide(b: &mut Builder, c: Type, [ar, ai, br, bi]: [Reg; 4]) -> (Reg, Reg) {
    let f = |b: &mut Builder, o: O, p: Src, q: Src| b.bin(o, &[RN], c, p, q);
    let abr = b.un(O::Abs, &[], c, br.into());
    let abi = b.un(O::Abs, &[], c, bi.into());
    // Smith: t = smaller/larger part of the divisor.
    let ge = b.setp(CmpOp::Ge, c, abr.into(), abi.into());
    let p = b.selp(c, br.into(), bi.into(), ge);
    let q = b.selp(c, bi.into(), br.into(), ge);
    let t = f(b, O::Div, q.into(), p.into());
    let qt = f(b, O::Mul, q.into(), t.into());
    let d = f(b, O::Add, p.into(), qt.into());
    let m_r = f(b, O::Mul, ar.into(), t.into());
    let m_i = f(b, O::Mul, ai.into(), t.into());
    // |b_r| ≥ |b_i|: ((a_r + a_i·t), (a_i - a_r·t)); else ((a_r·t + a_i), (a_i·t - a_r)).
    let n_r1 = f(b, O::Add, ar.into(), m_i.into());
    let n_r2 = f(b, O::Add, m_r.into(), ai.into());
    let n_i1 = f(b, O::Sub, ai.into(), m_r.into());
    let n_i2 = f(b, O::Sub, m_i.into(), ar.into());
    let n_r = b.selp(c, n_r1.into(), n_r2.into(), ge);
    let n_i = b.selp(c, n_i1.into(), n_i2.into(), ge);
    let c_r = f(b, O::Div, n_r.into(), d.into());
    let c_i = f(b, O::Div, n_i.into(), d.into());
    // Recovery, only where both parts came out NaN.
    let nan = |b: &mut Builder, x: Reg| b.setp(CmpOp::Nan, c, x.into(), x.into());
    let inf = |b: &mut Builder, x: Reg| {
        let a = b.un(O::Abs, &[], c, x.into());
        b.setp(CmpOp::Eq, c, a.into(), fconst(c, f64::INFINITY))
    };
    let fin = |b: &mut Builder, x: Reg| {
        let a = b.un(O::Abs, &[], c, x.into());
        b.setp(CmpOp::Lt, c, a.into(), fconst(c, f64::INFINITY))
    };
    let (nr, ni) = (nan(b, c_r), nan(b, c_i));
    let both_nan = b.pand(nr, ni);
    // Zero divisor, dividend not NaN+NaN: copysign(∞, b_r)·a.
    let zr = b.setp(CmpOp::Eq, c, abr.into(), fconst(c, 0.0));
    let zi = b.setp(CmpOp::Eq, c, abi.into(), fconst(c, 0.0));
    let zero_den = b.pand(zr, zi);
    let (anr, ani) = (nan(b, ar), nan(b, ai));
    let a_both_nan = b.pand(anr, ani);
    let a_some = b.pnot(a_both_nan);
    let zero_den = b.pand(zero_den, a_some);
    let inf_b = with_sign(b, c, f64::INFINITY, br);
    let z_r = f(b, O::Mul, inf_b.into(), ar.into());
    let z_i = f(b, O::Mul, inf_b.into(), ai.into());
    // unit(x): ±1 for an infinite part, ±0 otherwise (sign of x).
    let unit = |b: &mut Builder, x: Reg| {
        let one = with_sign(b, c, 1.0, x);
        let zero = with_sign(b, c, 0.0, x);
        let i = inf(b, x);
        b.selp(c, one.into(), zero.into(), i)
    };
    let (iar, iai) = (inf(b, ar), inf(b, ai));
    let a_inf = b.por(iar, iai);
    let (fbr, fbi) = (fin(b, br), fin(b, bi));
    let b_fin = b.pand(fbr, fbi);
    let inf_num = b.pand(a_inf, b_fin);
    let (ur, ui) = (unit(b, ar), unit(b, ai));
    let (x1, x2) = (
        f(b, O::Mul, ur.into(), br.into()),
        f(b, O::Mul, ui.into(), bi.into()),
    );
    let s = f(b, O::Add, x1.into(), x2.into());
    let i_r = f(b, O::Mul, fconst(c, f64::INFINITY), s.into());
    let (x1, x2) = (
        f(b, O::Mul, ui.into(), br.into()),
        f(b, O::Mul, ur.into(), bi.into()),
    );
    let s = f(b, O::Sub, x1.into(), x2.into());
    let i_i = f(b, O::Mul, fconst(c, f64::INFINITY), s.into());
    let (ibr, ibi) = (inf(b, br), inf(b, bi));
    let b_inf = b.por(ibr, ibi);
    let (far, fai) = (fin(b, ar), fin(b, ai));
    let a_fin = b.pand(far, fai);
    let fin_num = b.pand(b_inf, a_fin);
    let (vr, vi) = (unit(b, br), unit(b, bi));
    let (x1, x2) = (
        f(b, O::Mul, ar.into(), vr.into()),
        f(b, O::Mul, ai.into(), vi.into()),
    );
    let s = f(b, O::Add, x1.into(), x2.into());
    let f_r = f(b, O::Mul, fconst(c, 0.0), s.into());
    let (x1, x2) = (
        f(b, O::Mul, ai.into(), vr.into()),
        f(b, O::Mul, ar.into(), vi.into()),
    );
    let s = f(b, O::Sub, x1.into(), x2.into());
    let f_i = f(b, O::Mul, fconst(c, 0.0), s.into());
    // The first matching case wins: apply them in reverse priority.
    let mut re = c_r;
    let mut im = c_i;
    for (cond, (xr, xi)) in [
        (fin_num, (f_r, f_i)),
        (inf_num, (i_r, i_i)),
        (zero_den, (z_r, z_i)),
    ] {
        let take = b.pand(both_nan, cond);
        re = b.selp(c, xr.into(), re.into(), take);
        im = b.selp(c, xi.into(), im.into(), take);
    }
    (re, im)
}
