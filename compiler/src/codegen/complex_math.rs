//! XLA's complex transcendentals in generated kernels: `exponential`, `exponential-minus-one`,
//! `log`, `log-plus-one`, `sqrt`, `rsqrt`, `sine`, `cosine`, `tan`, `tanh` and `power`.
//!
//! Each function emits, operation for operation, the formula of `hlo::complex_math` (which is
//! XLA's elemental emitter's, special cases included), branch-free with `selp`, on `f64`
//! registers: `c64` parts are widened first and the results rounded once, as the real
//! transcendentals do (`math`). The `f64` primitives (`exp`, `log`, `sin`, `cos`, `atan2`,
//! `expm1`, `log1p`, `pow`) are [`super::math`]'s, a few ulps from the host's, so the kernels
//! and the reference evaluator agree to those ulps.
use ptx::{CmpOp, Opcode as O, Type};

use super::builder::{Builder, Reg, Src, RN};
use super::math;

const F: Type = Type::F64;

fn k(x: f64) -> Src {
    Src::F64(x)
}

fn add(b: &mut Builder, x: Reg, y: Reg) -> Reg {
    math::add(b, x.into(), y.into())
}

fn sub(b: &mut Builder, x: Reg, y: Reg) -> Reg {
    math::sub(b, x.into(), y.into())
}

fn mul(b: &mut Builder, x: Reg, y: Reg) -> Reg {
    math::mul(b, x.into(), y.into())
}

fn mulk(b: &mut Builder, c: f64, x: Reg) -> Reg {
    math::mul(b, k(c), x.into())
}

fn div(b: &mut Builder, x: Reg, y: Reg) -> Reg {
    math::div(b, x.into(), y.into())
}

fn abs(b: &mut Builder, x: Reg) -> Reg {
    b.un(O::Abs, &[], F, x.into())
}

fn is(b: &mut Builder, cmp: CmpOp, x: Reg, c: f64) -> Reg {
    b.setp(cmp, F, x.into(), k(c))
}

fn is_nan(b: &mut Builder, x: Reg) -> Reg {
    b.setp(CmpOp::Nan, F, x.into(), x.into())
}

fn sel(b: &mut Builder, p: Reg, x: Src, y: Src) -> Reg {
    b.selp(F, x, y, p)
}

/// `|mag|` with the sign of `sign`.
fn copysign(b: &mut Builder, mag: Src, sign: Reg) -> Reg {
    let m = b.mov(F, mag);
    b.op(
        O::Copysign,
        vec![super::builder::t(F)],
        F,
        &[sign.into(), m.into()],
    )
}

/// `max`/`min` that propagate NaN (LLVM's `maximum`/`minimum`, as XLA's `EmitFloatMax`).
fn minmax(b: &mut Builder, max: bool, x: Reg, y: Reg) -> Reg {
    let o = if max { O::Max } else { O::Min };
    let r = b.bin(o, &[], F, x.into(), y.into());
    let xn = is_nan(b, x);
    let yn = is_nan(b, y);
    let any = b.por(xn, yn);
    sel(b, any, k(f64::NAN), r.into())
}

fn sqrt(b: &mut Builder, x: Reg) -> Reg {
    b.un(O::Sqrt, &[RN], F, x.into())
}

fn rsqrt(b: &mut Builder, x: Reg) -> Reg {
    let s = sqrt(b, x);
    math::div(b, k(1.0), s.into())
}

/// `(min, max, 1 + (min/max)²)` of the parts' magnitudes (`EmitComplexAbsHelper`).
fn abs_helper(b: &mut Builder, re: Reg, im: Reg) -> (Reg, Reg, Reg) {
    let (ax, ay) = (abs(b, re), abs(b, im));
    let max = minmax(b, true, ax, ay);
    let min = minmax(b, false, ax, ay);
    let d = div(b, min, max);
    let d2 = mul(b, d, d);
    let s = math::add(b, k(1.0), d2.into());
    (min, max, s)
}

/// `isnan(r) ? alt : r`.
fn nan_to(b: &mut Builder, r: Reg, alt: Reg) -> Reg {
    let n = is_nan(b, r);
    sel(b, n, alt.into(), r.into())
}

/// `|z|` as XLA's `EmitComplexAbs`.
fn xabs(b: &mut Builder, re: Reg, im: Reg) -> Reg {
    let (min, max, s) = abs_helper(b, re, im);
    let q = sqrt(b, s);
    let r = mul(b, max, q);
    nan_to(b, r, min)
}

fn sin(b: &mut Builder, x: Reg) -> Reg {
    math::sincos(b, x).0
}

fn cos(b: &mut Builder, x: Reg) -> Reg {
    math::sincos(b, x).1
}

/// `cosm1(x)`: cephes' polynomial for `x² ≤ 0.61685`, `cos x - 1` beyond.
fn cosm1(b: &mut Builder, x: Reg) -> Reg {
    const K: [f64; 7] = hlo::complex_math::COSM1;
    let c = cos(b, x);
    let large = math::add(b, c.into(), k(-1.0));
    let xx = mul(b, x, x);
    let mut poly = b.mov(F, k(K[0]));
    for &kc in &K[1..] {
        let p = mul(b, poly, xx);
        poly = math::add(b, p.into(), k(kc));
    }
    let x4 = mul(b, xx, xx);
    let hi = mul(b, x4, poly);
    let lo = mulk(b, -0.5, xx);
    let small = add(b, hi, lo);
    let big = is(b, CmpOp::Gt, xx, 0.61685);
    sel(b, big, large.into(), small.into())
}

/// `e^z`.
fn exp(b: &mut Builder, a: Reg, bi: Reg) -> (Reg, Reg) {
    let e = math::exp(b, a);
    let (s, c) = math::sincos(b, bi);
    (mul(b, e, c), mul(b, e, s))
}

/// `e^z - 1`.
fn expm1(b: &mut Builder, a: Reg, bi: Reg) -> (Reg, Reg) {
    let em1 = math::expm1(b, a);
    let ea = math::add(b, em1.into(), k(1.0));
    let cm1 = cosm1(b, bi);
    let cb = math::add(b, cm1.into(), k(1.0));
    let t = mul(b, em1, cb);
    let re = add(b, t, cm1);
    let s = sin(b, bi);
    let im = mul(b, ea, s);
    let z = is(b, CmpOp::Eq, bi, 0.0);
    (re, sel(b, z, k(0.0), im.into()))
}

/// `log z`.
fn log(b: &mut Builder, a: Reg, bi: Reg) -> (Reg, Reg) {
    let r = xabs(b, a, bi);
    (math::log(b, r), math::atan2(b, bi, a))
}

/// `log(1 + z)`.
fn log1p(b: &mut Builder, a: Reg, bi: Reg) -> (Reg, Reg) {
    let a1 = math::add(b, a.into(), k(1.0));
    let (aa1, ab) = (abs(b, a1), abs(b, bi));
    let mx = minmax(b, true, aa1, ab);
    let mn = minmax(b, false, aa1, ab);
    let gt = b.setp(CmpOp::Gt, F, a1.into(), ab.into());
    let mxm1 = math::add(b, mx.into(), k(-1.0));
    let m1 = sel(b, gt, a.into(), mxm1.into());
    let ratio = div(b, mn, mx);
    let r2 = mul(b, ratio, ratio);
    let l2 = math::log1p(b, r2);
    let l1 = math::log1p(b, m1);
    let h = mulk(b, 0.5, l2);
    let r = add(b, h, l1);
    (nan_to(b, r, mn), math::atan2(b, bi, a1))
}

/// `sin z`, or `cos z` when `is_cos`.
fn sin_cos(b: &mut Builder, x: Reg, y: Reg, is_cos: bool) -> (Reg, Reg) {
    let ey = math::exp(b, y);
    let h = mulk(b, 0.5, ey);
    let hn = math::div(b, k(0.5), ey.into());
    let (sx, cx) = math::sincos(b, x);
    let sinh = sub(b, h, hn);
    let cosh = add(b, h, hn);
    if is_cos {
        let re = mul(b, cx, cosh);
        let t = mul(b, sx, sinh);
        (re, b.un(O::Neg, &[], F, t.into()))
    } else {
        (mul(b, sx, cosh), mul(b, cx, sinh))
    }
}

/// `tanh z`, or `tan z = -i·tanh(-y + xi)` when `is_tan`.
fn tanh_tan(b: &mut Builder, x: Reg, y: Reg, is_tan: bool) -> (Reg, Reg) {
    let (a, bi) = if is_tan {
        (mulk(b, -1.0, y), x)
    } else {
        (x, y)
    };
    let two_a = add(b, a, a);
    let neg_2a = mulk(b, -1.0, two_a);
    let e1 = math::expm1(b, two_a);
    let e2 = math::expm1(b, neg_2a);
    let real_num = sub(b, e1, e2);
    let (sb, cb) = math::sincos(b, bi);
    let cb2 = mul(b, cb, cb);
    let four_cos_sq = math::mul(b, cb2.into(), k(4.0));
    let cs = mul(b, cb, sb);
    let imag_num = mulk(b, 4.0, cs);
    let exp_sum_m2 = add(b, e1, e2);
    let denom = add(b, exp_sum_m2, four_cos_sq);
    let inf = is(b, CmpOp::Eq, exp_sum_m2, f64::INFINITY);
    let limit = copysign(b, k(1.0), a);
    let q = div(b, real_num, denom);
    let re = sel(b, inf, limit.into(), q.into());
    let im = div(b, imag_num, denom);
    let aa = abs(b, a);
    let a_inf = is(b, CmpOp::Eq, aa, f64::INFINITY);
    let b_zero = is(b, CmpOp::Eq, bi, 0.0);
    let sin_nan = is_nan(b, imag_num);
    let a_fin = b.pnot(a_inf);
    let re_nan = b.pand(sin_nan, a_fin);
    let both = b.pand(a_inf, sin_nan);
    let im_zero = b.por(b_zero, both);
    let re = sel(b, re_nan, k(f64::NAN), re.into());
    let im = sel(b, im_zero, k(0.0), im.into());
    if is_tan {
        (im, mulk(b, -1.0, re))
    } else {
        (re, im)
    }
}

/// The principal square root.
fn csqrt(b: &mut Builder, a: Reg, bi: Reg) -> (Reg, Reg) {
    let (min, max, s) = abs_helper(b, a, bi);
    let sm = sqrt(b, max);
    let quarter = b.mov(F, k(0.25));
    let p = math::pow(b, s, quarter);
    let r = mul(b, sm, p);
    let r = nan_to(b, r, min);
    let t = math::atan2(b, bi, a);
    let angle = math::mul(b, t.into(), k(0.5));
    let (sn, cs) = math::sincos(b, angle);
    let ab = abs(b, bi);
    let b_inf = is(b, CmpOp::Eq, ab, f64::INFINITY);
    let a_pinf = is(b, CmpOp::Eq, a, f64::INFINITY);
    let a_ninf = is(b, CmpOp::Eq, a, f64::NEG_INFINITY);
    let b_fin = is(b, CmpOp::Ne, ab, f64::INFINITY);
    let inf_re = b.por(b_inf, a_pinf);
    let zero_re = b.pand(a_ninf, b_fin);
    let rc = mul(b, r, cs);
    let re = sel(b, zero_re, k(0.0), rc.into());
    let re = sel(b, inf_re, k(f64::INFINITY), re.into());
    let inf_im = b.por(b_inf, a_ninf);
    let signed_inf = copysign(b, k(f64::INFINITY), bi);
    let rs = mul(b, r, sn);
    let sn_zero = is(b, CmpOp::Eq, sn, 0.0);
    let im = sel(b, sn_zero, sn.into(), rs.into());
    let r_nan = is_nan(b, r);
    let im = sel(b, r_nan, k(f64::NAN), im.into());
    let im = sel(b, inf_im, signed_inf.into(), im.into());
    let r_zero = is(b, CmpOp::Eq, r, 0.0);
    (
        sel(b, r_zero, k(0.0), re.into()),
        sel(b, r_zero, k(0.0), im.into()),
    )
}

/// `1 / sqrt z`.
fn crsqrt(b: &mut Builder, a: Reg, bi: Reg) -> (Reg, Reg) {
    let (min, max, s) = abs_helper(b, a, bi);
    let rm = rsqrt(b, max);
    let ss = sqrt(b, s);
    let rs = rsqrt(b, ss);
    let r = mul(b, rm, rs);
    let rmin = rsqrt(b, min);
    let r = nan_to(b, r, rmin);
    let t = math::atan2(b, bi, a);
    let angle = math::mul(b, t.into(), k(-0.5));
    let (sn, cs) = math::sincos(b, angle);
    let re = mul(b, r, cs);
    let im = mul(b, r, sn);
    let az = copysign(b, k(0.0), a);
    let bz = copysign(b, k(0.0), bi);
    let nbz = mulk(b, -1.0, bz);
    let (aa, ab) = (abs(b, a), abs(b, bi));
    let a0 = is(b, CmpOp::Eq, a, 0.0);
    let b0 = is(b, CmpOp::Eq, bi, 0.0);
    let zero_zero = b.pand(b0, a0);
    let b_inf = is(b, CmpOp::Eq, ab, f64::INFINITY);
    let a_nan = is_nan(b, a);
    let a_inf = is(b, CmpOp::Eq, aa, f64::INFINITY);
    let t1 = b.pand(b_inf, a_nan);
    let signed = b.por(t1, a_inf);
    let re = sel(b, signed, az.into(), re.into());
    let im = sel(b, signed, nbz.into(), im.into());
    (
        sel(b, zero_zero, k(f64::INFINITY), re.into()),
        sel(b, zero_zero, k(f64::NAN), im.into()),
    )
}

/// `(a + bi)^(c + di)` with XLA's cases for zero, one and infinite bases and zero exponents.
fn pow(b: &mut Builder, [a, bi, c, d]: [Reg; 4]) -> (Reg, Reg) {
    let ab = xabs(b, a, bi);
    let abs_to_c = math::pow(b, ab, c);
    let arg = math::atan2(b, bi, a);
    let nd = b.un(O::Neg, &[], F, d.into());
    let nda = mul(b, nd, arg);
    let e = math::exp(b, nda);
    let coeff = mul(b, abs_to_c, e);
    let ln_abs = math::log(b, ab);
    let carg = mul(b, c, arg);
    let dln = mul(b, d, ln_abs);
    let q = add(b, carg, dln);
    let (sq, cq) = math::sincos(b, q);
    let mut re = mul(b, coeff, cq);
    let mut im = mul(b, coeff, sq);
    let abs0 = is(b, CmpOp::Eq, ab, 0.0);
    let d0 = is(b, CmpOp::Eq, d, 0.0);
    let c_ge0 = is(b, CmpOp::Ge, c, 0.0);
    let c0 = is(b, CmpOp::Eq, c, 0.0);
    let t = b.pand(abs0, d0);
    let case0 = b.pand(t, c_ge0);
    let one_or_zero = sel(b, c0, k(1.0), k(0.0));
    re = sel(b, case0, one_or_zero.into(), re.into());
    im = sel(b, case0, k(0.0), im.into());
    // x^0 = 1, 1^w = 1.
    let case1 = b.pand(c0, d0);
    let a1 = is(b, CmpOp::Eq, a, 1.0);
    let b0 = is(b, CmpOp::Eq, bi, 0.0);
    let case2 = b.pand(a1, b0);
    let one = b.por(case1, case2);
    re = sel(b, one, k(1.0), re.into());
    im = sel(b, one, k(0.0), im.into());
    // ∞^c for real c: ∞ when c > 0, 0 when c < 0.
    let a_inf = is(b, CmpOp::Eq, a, f64::INFINITY);
    let t = b.pand(a_inf, b0);
    let real_inf = b.pand(t, d0);
    let c_pos = is(b, CmpOp::Gt, c, 0.0);
    let c_neg = is(b, CmpOp::Lt, c, 0.0);
    let case3 = b.pand(real_inf, c_pos);
    let case4 = b.pand(real_inf, c_neg);
    re = sel(b, case3, k(f64::INFINITY), re.into());
    im = sel(b, case3, k(0.0), im.into());
    re = sel(b, case4, k(0.0), re.into());
    im = sel(b, case4, k(0.0), im.into());
    (re, im)
}

/// Whether [`unary`] computes `op` on complex values.
pub fn has_unary(op: hlo::Opcode) -> bool {
    use hlo::Opcode as H;
    matches!(
        op,
        H::Exp
            | H::Expm1
            | H::Log
            | H::Log1p
            | H::Sqrt
            | H::Rsqrt
            | H::Sin
            | H::Cos
            | H::Tan
            | H::Tanh
    )
}

/// A transcendental of `z = re + im·i` (both `f64` registers); `None` for an `op` that
/// [`has_unary`] does not name.
pub fn unary(b: &mut Builder, op: hlo::Opcode, re: Reg, im: Reg) -> Option<(Reg, Reg)> {
    use hlo::Opcode as H;
    Some(match op {
        H::Exp => exp(b, re, im),
        H::Expm1 => expm1(b, re, im),
        H::Log => log(b, re, im),
        H::Log1p => log1p(b, re, im),
        H::Sqrt => csqrt(b, re, im),
        H::Rsqrt => crsqrt(b, re, im),
        H::Sin => sin_cos(b, re, im, false),
        H::Cos => sin_cos(b, re, im, true),
        H::Tan => tanh_tan(b, re, im, true),
        H::Tanh => tanh_tan(b, re, im, false),
        _ => return None,
    })
}

/// `power` of two complex values given as `f64` parts `[a, b, c, d]`.
pub fn power(b: &mut Builder, parts: [Reg; 4]) -> (Reg, Reg) {
    pow(b, parts)
}
