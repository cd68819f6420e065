//! XLA's complex transcendentals (`exponential`, `exponential-minus-one`, `log`,
//! `log-plus-one`, `sqrt`, `rsqrt`, `sine`, `cosine`, `tan`, `tanh`, `power`), on `c128` parts.
//!
//! The formulas and their special cases are those of XLA's elemental emitter
//! (`EmitComplexUnaryOp`, `EmitComplexLog`, `EmitComplexSqrt`, `EmitComplexRsqrt`,
//! `EmitComplexPower` in `xla/service/elemental_ir_emitter.cc`), operation for operation, so
//! the infinities, NaNs and signed zeros come out as XLA:GPU's do. They are computed in `f64`
//! for `c64` and `c128` alike and rounded once to the part type, the rule the real
//! transcendentals follow in both the evaluator and the compiler's kernels: the kernels
//! (`compiler::codegen::complex_math`) emit the same sequence, with the same `f64` primitives
//! (`exp`, `log`, `sin`, ... to a few `f64` ulps), so device and evaluator agree to those ulps
//! (bit for bit after rounding `c64` parts, almost always).
//!
//! `max`/`min` propagate NaN (LLVM's `maximum`/`minimum`, which XLA uses); comparisons are
//! ordered unless noted (`FCmpO..`).
use crate::complex::C128;

fn c(re: f64, im: f64) -> C128 {
    C128 { re, im }
}

fn fmax(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.max(y)
    }
}

fn fmin(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.min(y)
    }
}

/// `EmitComplexAbsHelper`: `(min, max, 1 + (min/max)²)` of the parts' magnitudes.
fn abs_helper(z: C128) -> (f64, f64, f64) {
    let (ax, ay) = (z.re.abs(), z.im.abs());
    let (max, min) = (fmax(ax, ay), fmin(ax, ay));
    let d = min / max;
    (min, max, 1.0 + d * d)
}

/// `EmitComplexAbs`: `max·sqrt(1 + (min/max)²)`, `min` where that is NaN (0, ∞∞, NaN parts).
pub fn abs(z: C128) -> f64 {
    let (min, max, s) = abs_helper(z);
    let r = max * s.sqrt();
    if r.is_nan() {
        min
    } else {
        r
    }
}

/// Cephes' `cosm1` polynomial in `x²`, highest degree first (XLA's `EmitCosm1` constants).
pub const COSM1: [f64; 7] = [
    4.737_750_796_424_621e-14,
    -1.147_028_484_342_536e-11,
    2.087_675_428_708_152e-9,
    -2.755_731_921_499_979e-7,
    2.480_158_730_157_055e-5,
    -1.388_888_888_888_887_2e-3,
    4.166_666_666_666_666_4e-2,
];

/// `cosm1` (cephes' polynomial for `x² ≤ 0.61685`, `cos x - 1` beyond), as `EmitCosm1`.
pub fn cosm1(x: f64) -> f64 {
    let xx = x * x;
    if xx > 0.61685 {
        return x.cos() + -1.0;
    }
    let poly = COSM1[1..].iter().fold(COSM1[0], |acc, k| acc * xx + k);
    (xx * xx) * poly + -0.5 * xx
}

/// `e^(a+bi) = e^a (cos b + i sin b)`.
pub fn exp(z: C128) -> C128 {
    let e = z.re.exp();
    c(e * z.im.cos(), e * z.im.sin())
}

/// `e^z - 1 = (expm1(a)·cos b + cosm1(b)) + i·e^a sin b`, imaginary part 0 where `b == 0`.
pub fn expm1(z: C128) -> C128 {
    let (a, b) = (z.re, z.im);
    let em1 = a.exp_m1();
    let ea = em1 + 1.0;
    let cm1 = cosm1(b);
    let cb = cm1 + 1.0;
    let re = em1 * cb + cm1;
    let im = if b == 0.0 { 0.0 } else { ea * b.sin() };
    c(re, im)
}

/// `log z = ln|z| + i·atan2(b, a)`.
pub fn log(z: C128) -> C128 {
    c(abs(z).ln(), z.im.atan2(z.re))
}

/// `log(1 + z)`: real part `log1p(m - 1) + ½·log1p((min/max)²)` over `|a + 1|` and `|b|`,
/// imaginary part `atan2(b, a + 1)`.
pub fn log1p(z: C128) -> C128 {
    let (a, b) = (z.re, z.im);
    let a1 = a + 1.0;
    let (aa1, ab) = (a1.abs(), b.abs());
    let (mx, mn) = (fmax(aa1, ab), fmin(aa1, ab));
    let m1 = if a1 > ab { a } else { mx - 1.0 };
    let ratio = mn / mx;
    let r = 0.5 * (ratio * ratio).ln_1p() + m1.ln_1p();
    let re = if r.is_nan() { mn } else { r };
    c(re, b.atan2(a1))
}

/// `sin` (`cos` when `cos`) through `sinh`/`cosh` of the imaginary part built from one `exp`.
pub fn sin_cos(z: C128, cos: bool) -> C128 {
    let (x, y) = (z.re, z.im);
    let ey = y.exp();
    let (h, hn) = (0.5 * ey, 0.5 / ey);
    let (sx, cx) = (x.sin(), x.cos());
    let (sinh, cosh) = (h - hn, h + hn);
    if cos {
        c(cx * cosh, -(sx * sinh))
    } else {
        c(sx * cosh, cx * sinh)
    }
}

/// `tanh(a + bi) = (e^2a - e^-2a + 2i·sin 2b) / (e^2a + e^-2a + 2 cos 2b)` with `expm1`, and
/// XLA's corner cases; `tan(x + yi) = -i·tanh(-y + xi)` when `tan`.
pub fn tanh_tan(z: C128, tan: bool) -> C128 {
    let (a, b) = if tan { (-z.im, z.re) } else { (z.re, z.im) };
    let two_a = a + a;
    let e1 = two_a.exp_m1();
    let e2 = (-two_a).exp_m1();
    let real_num = e1 - e2;
    let (cb, sb) = (b.cos(), b.sin());
    let four_cos_sq = (cb * cb) * 4.0;
    let imag_num = 4.0 * (cb * sb);
    let exp_sum_m2 = e1 + e2;
    let denom = exp_sum_m2 + four_cos_sq;
    let mut re = if exp_sum_m2 == f64::INFINITY {
        1f64.copysign(a)
    } else {
        real_num / denom
    };
    let mut im = imag_num / denom;
    let a_inf = a.abs() == f64::INFINITY;
    let sin_nan = imag_num.is_nan();
    if sin_nan && !a_inf {
        re = f64::NAN;
    }
    if b == 0.0 || (a_inf && sin_nan) {
        im = 0.0;
    }
    if tan {
        c(im, -re)
    } else {
        c(re, im)
    }
}

/// Principal square root: `sqrt|z|·(cos(t/2) + i sin(t/2))`, `t = atan2(b, a)`,
/// `sqrt|z| = sqrt(max)·(1 + (min/max)²)^¼`, with XLA's infinities and zeros.
pub fn sqrt(z: C128) -> C128 {
    let (a, b) = (z.re, z.im);
    let (min, max, s) = abs_helper(z);
    let r = max.sqrt() * s.powf(0.25);
    let r = if r.is_nan() { min } else { r };
    let angle = b.atan2(a) * 0.5;
    let (cs, sn) = (angle.cos(), angle.sin());
    let (inf, ab) = (f64::INFINITY, b.abs());
    let re = if ab == inf || a == inf {
        inf
    } else if a == -inf && ab != inf && !ab.is_nan() {
        0.0
    } else {
        r * cs
    };
    let im = if ab == inf || a == -inf {
        inf.copysign(b)
    } else if r.is_nan() {
        f64::NAN
    } else if sn == 0.0 {
        sn
    } else {
        r * sn
    };
    if r == 0.0 {
        c(0.0, 0.0)
    } else {
        c(re, im)
    }
}

fn rsqrt_real(x: f64) -> f64 {
    1.0 / x.sqrt()
}

/// `1/sqrt(z) = rsqrt|z|·(cos(-t/2) + i sin(-t/2))`, with XLA's special cases (`1/sqrt(0)` is
/// `∞ + NaN·i`; infinite parts give signed zeros).
pub fn rsqrt(z: C128) -> C128 {
    let (a, b) = (z.re, z.im);
    let (min, max, s) = abs_helper(z);
    let r = rsqrt_real(max) * rsqrt_real(s.sqrt());
    let r = if r.is_nan() { rsqrt_real(min) } else { r };
    let angle = b.atan2(a) * -0.5;
    let (cs, sn) = (angle.cos(), angle.sin());
    let inf = f64::INFINITY;
    let zero_zero = b == 0.0 && a == 0.0;
    let signed = (b.abs() == inf && a.is_nan()) || a.abs() == inf;
    if zero_zero {
        c(inf, f64::NAN)
    } else if signed {
        c(0f64.copysign(a), -0f64.copysign(b))
    } else {
        c(r * cs, r * sn)
    }
}

/// `(a + bi)^(c + di) = |z|^c · e^(-d·arg z) · (cos q + i sin q)`, `q = c·arg z + d·ln|z|`,
/// with XLA's (Kahan's) cases for zero, one and infinite bases and zero exponents.
pub fn pow(x: C128, y: C128) -> C128 {
    let (a, b, cc, d) = (x.re, x.im, y.re, y.im);
    let ab = abs(x);
    let abs_to_c = ab.powf(cc);
    let arg = b.atan2(a);
    let coeff = abs_to_c * (-d * arg).exp();
    let q = cc * arg + d * ab.ln();
    let inf = f64::INFINITY;
    if a == inf && b == 0.0 && d == 0.0 && cc < 0.0 {
        c(0.0, 0.0)
    } else if a == inf && b == 0.0 && d == 0.0 && cc > 0.0 {
        c(inf, 0.0)
    } else if (a == 1.0 && b == 0.0) || (cc == 0.0 && d == 0.0) {
        c(1.0, 0.0)
    } else if ab == 0.0 && d == 0.0 && 0.0 <= cc {
        c(if cc == 0.0 { 1.0 } else { 0.0 }, 0.0)
    } else {
        c(coeff * q.cos(), coeff * q.sin())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(z: C128, re: f64, im: f64) -> bool {
        let ok = |x: f64, y: f64| x == y || (x - y).abs() <= 1e-14 * y.abs().max(1.0);
        ok(z.re, re) && ok(z.im, im)
    }

    #[test]
    fn ordinary_values() {
        let z = c(0.5, -1.25);
        assert!(close(
            exp(z),
            0.5f64.exp() * 1.25f64.cos(),
            -(0.5f64.exp() * 1.25f64.sin())
        ));
        let l = log(exp(z));
        assert!(close(l, 0.5, -1.25), "{l:?}");
        let s = sqrt(c(3.0, 4.0));
        assert!(close(s, 2.0, 1.0), "{s:?}");
        let r = rsqrt(c(0.0, 2.0));
        assert!(close(r, 0.5, -0.5), "{r:?}");
        let p = pow(c(0.0, 1.0), c(2.0, 0.0));
        assert!(close(p, -1.0, 0.0) || (p.re + 1.0).abs() < 1e-15, "{p:?}");
        let t = tanh_tan(c(0.0, 0.25), false);
        assert!(close(t, 0.0, 0.25f64.tan()), "{t:?}");
        let t = tanh_tan(c(0.25, 0.0), true);
        assert!(close(t, 0.25f64.tan(), 0.0), "{t:?}");
        let m = expm1(c(1e-10, 0.0));
        assert!(close(m, 1e-10f64.exp_m1(), 0.0), "{m:?}");
        let l = log1p(c(1e-12, 0.0));
        assert!(close(l, 1e-12f64.ln_1p(), 0.0), "{l:?}");
        assert!(close(sin_cos(c(1.0, 0.0), true), 1f64.cos(), -0.0));
        assert!((cosm1(1e-4) - (-5e-9 + 1e-16 / 24.0)).abs() < 1e-24);
    }

    #[test]
    fn xla_special_cases() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        let s = sqrt(c(-4.0, 0.0));
        assert!(s.re.abs() < 1e-15 && s.im == 2.0, "{s:?}");
        assert_eq!(sqrt(c(0.0, 0.0)), c(0.0, 0.0));
        assert_eq!(sqrt(c(-inf, 1.0)), c(0.0, inf));
        assert_eq!(sqrt(c(1.0, -inf)), c(inf, -inf));
        let r = rsqrt(c(0.0, 0.0));
        assert!(r.re == inf && r.im.is_nan());
        assert_eq!(rsqrt(c(inf, -2.0)), c(0.0, 0.0));
        assert_eq!(pow(c(0.0, 0.0), c(0.0, 0.0)), c(1.0, 0.0));
        assert_eq!(pow(c(inf, 0.0), c(-2.0, 0.0)), c(0.0, 0.0));
        assert_eq!(pow(c(0.0, 0.0), c(3.0, 0.0)), c(0.0, 0.0));
        assert_eq!(tanh_tan(c(inf, 1.0), false), c(1.0, 0.0));
        let t = tanh_tan(c(1.0, inf), false);
        assert!(t.re.is_nan() && t.im.is_nan());
        let t = tanh_tan(c(nan, 0.0), false);
        assert!(t.re.is_nan() && t.im == 0.0);
        assert_eq!(log(c(0.0, 0.0)).re, -inf);
        assert_eq!(abs(c(inf, inf)), inf);
        assert!(abs(c(inf, nan)).is_nan());
    }
}
