//! Complex element values (`c64`, `c128`) and XLA's arithmetic on them.
//!
//! A [`Complex`] is the pair XLA stores: real part then imaginary part, each an `f32` (`c64`) or
//! an `f64` (`c128`), little-endian in memory. The functions here compute in the element's own
//! precision (not widened to `f64`): the reference evaluator and the generated kernels must
//! agree on overflow and NaN, and a wider intermediate would hide an overflow the device sees.
//!
//! The formulas are the ones XLA's elemental emitter uses, so that the compiler's kernels (which
//! emit the same sequence of operations, see `compiler/src/codegen/complex.rs`) and the evaluator give
//! the same bits for `+ - *` and division:
//! - `(a + bi)(c + di) = (ac - bd) + (ad + bc)i`, no special cases (as XLA);
//! - division is Smith's algorithm with C99 Annex G's recovery of infinities and zeros when both
//!   parts of the quotient come out NaN (`Complex::div`).
use crate::literal::{Array, Data};

/// A complex number: real and imaginary parts of one float type.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Complex<T> {
    /// Real part.
    pub re: T,
    /// Imaginary part.
    pub im: T,
}

/// `c64`'s element: two `f32`.
pub type C64 = Complex<f32>;
/// `c128`'s element: two `f64`.
pub type C128 = Complex<f64>;

/// The float operations complex arithmetic needs, for `f32` and `f64`.
pub trait Real:
    Copy
    + PartialOrd
    + std::fmt::Debug
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// +∞.
    const INF: Self;
    /// `|a|`.
    fn abs(self) -> Self;
    /// `|a|` with the sign of `s`.
    fn copysign(self, s: Self) -> Self;
    /// NaN test.
    fn is_nan(self) -> bool;
    /// ±∞ test.
    fn is_infinite(self) -> bool;
    /// Square root.
    fn sqrt(self) -> Self;
    /// `e^a`.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// `atan2(self, x)`.
    fn atan2(self, x: Self) -> Self;
    /// Widened to `f64` (exact).
    fn to_f64(self) -> f64;
    /// Rounded from `f64`.
    fn from_f64(x: f64) -> Self;
}

macro_rules! impl_real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const INF: Self = <$t>::INFINITY;
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn copysign(self, s: Self) -> Self {
                <$t>::copysign(self, s)
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            fn atan2(self, x: Self) -> Self {
                <$t>::atan2(self, x)
            }
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
            #[allow(clippy::cast_possible_truncation)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
        }
    };
}
impl_real!(f32);
impl_real!(f64);

impl<T: Real> std::ops::Add for Complex<T> {
    type Output = Self;
    /// Component-wise sum.
    fn add(self, b: Self) -> Self {
        Complex::new(self.re + b.re, self.im + b.im)
    }
}

impl<T: Real> std::ops::Sub for Complex<T> {
    type Output = Self;
    /// Component-wise difference.
    fn sub(self, b: Self) -> Self {
        Complex::new(self.re - b.re, self.im - b.im)
    }
}

impl<T: Real> std::ops::Mul for Complex<T> {
    type Output = Self;
    /// `(ac - bd) + (ad + bc)i`, XLA's product (no infinity recovery).
    fn mul(self, b: Self) -> Self {
        let (a_r, a_i, b_r, b_i) = (self.re, self.im, b.re, b.im);
        Complex::new(a_r * b_r - a_i * b_i, a_r * b_i + a_i * b_r)
    }
}

impl<T: Real> std::ops::Neg for Complex<T> {
    type Output = Self;
    /// Negation of both parts.
    fn neg(self) -> Self {
        Complex::new(-self.re, -self.im)
    }
}

impl<T: Real> std::ops::Div for Complex<T> {
    type Output = Self;
    /// Smith's division with XLA's (C99 Annex G) recovery when both parts come out NaN:
    /// a zero divisor gives `copysign(∞, c)·a`, an infinite dividend over a finite divisor
    /// gives infinities, a finite dividend over an infinite divisor gives (signed) zeros.
    fn div(self, b: Self) -> Self {
        let (a_r, a_i, b_r, b_i) = (self.re, self.im, b.re, b.im);
        let (b_r_abs, b_i_abs) = (b_r.abs(), b_i.abs());
        // Smith: divide through by the larger part of the divisor, so that the ratio is ≤ 1.
        let (c_r, c_i) = if b_r_abs >= b_i_abs {
            let t = b_i / b_r;
            let d = b_r + b_i * t;
            ((a_r + a_i * t) / d, (a_i - a_r * t) / d)
        } else {
            let t = b_r / b_i;
            let d = b_i + b_r * t;
            ((a_r * t + a_i) / d, (a_i * t - a_r) / d)
        };
        if !(c_r.is_nan() && c_i.is_nan()) {
            return Complex::new(c_r, c_i);
        }
        let zero = T::ZERO;
        let finite = |x: T| !x.is_nan() && !x.is_infinite();
        if b_r_abs == zero && b_i_abs == zero && (!a_r.is_nan() || !a_i.is_nan()) {
            let inf = T::INF.copysign(b_r);
            return Complex::new(inf * a_r, inf * a_i);
        }
        let unit = |x: T| {
            if x.is_infinite() {
                T::ONE.copysign(x)
            } else {
                zero.copysign(x)
            }
        };
        if (a_r.is_infinite() || a_i.is_infinite()) && finite(b_r) && finite(b_i) {
            let (u_r, u_i) = (unit(a_r), unit(a_i));
            return Complex::new(
                T::INF * (u_r * b_r + u_i * b_i),
                T::INF * (u_i * b_r - u_r * b_i),
            );
        }
        if (b_r.is_infinite() || b_i.is_infinite()) && finite(a_r) && finite(a_i) {
            let (u_r, u_i) = (unit(b_r), unit(b_i));
            return Complex::new(
                zero * (a_r * u_r + a_i * u_i),
                zero * (a_i * u_r - a_r * u_i),
            );
        }
        Complex::new(c_r, c_i)
    }
}

impl<T: Real> Complex<T> {
    /// `re + im·i`.
    pub fn new(re: T, im: T) -> Self {
        Complex { re, im }
    }

    /// A real number as a complex one (imaginary part +0), as `convert` and `iota` make them.
    pub fn from_real(re: T) -> Self {
        Complex { re, im: T::ZERO }
    }

    /// `|z|` without intermediate overflow: `max·sqrt(1 + (min/max)²)`; ∞ when either part is
    /// infinite (even with a NaN in the other), 0 for 0.
    pub fn abs(self) -> T {
        let (x, y) = (self.re.abs(), self.im.abs());
        if x.is_infinite() || y.is_infinite() {
            return T::INF;
        }
        let (max, min) = if x >= y { (x, y) } else { (y, x) };
        if max == T::ZERO {
            return T::ZERO + min;
        }
        let r = min / max;
        max * (T::ONE + r * r).sqrt()
    }

    /// `z / |z|`, and 0 for 0 (XLA's `sign`).
    pub fn sign(self) -> Self {
        let a = self.abs();
        if a == T::ZERO {
            return Complex::new(T::ZERO, T::ZERO);
        }
        Complex::new(self.re / a, self.im / a)
    }

    /// A transcendental `f` of [`crate::complex_math`] (XLA's formulas, computed on `f64`
    /// parts and rounded once to this type's parts).
    pub fn map_c128(self, f: impl Fn(C128) -> C128) -> Self {
        Self::from_c128(f(self.to_c128()))
    }

    /// `e^z` ([`crate::complex_math::exp`]).
    pub fn exp(self) -> Self {
        self.map_c128(crate::complex_math::exp)
    }

    /// Principal logarithm ([`crate::complex_math::log`]).
    pub fn ln(self) -> Self {
        self.map_c128(crate::complex_math::log)
    }

    /// Principal square root ([`crate::complex_math::sqrt`]).
    pub fn sqrt(self) -> Self {
        self.map_c128(crate::complex_math::sqrt)
    }

    /// Widened to `c128` parts (exact).
    pub fn to_c128(self) -> C128 {
        Complex::new(self.re.to_f64(), self.im.to_f64())
    }

    /// Rounded from `c128` parts, each part separately.
    pub fn from_c128(z: C128) -> Self {
        Complex::new(T::from_f64(z.re), T::from_f64(z.im))
    }
}

impl<T: std::fmt::Display> std::fmt::Display for Complex<T> {
    /// XLA's HLO text form, `(re, im)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.re, self.im)
    }
}

/// A complex array as its parts: `f32[dims..., 2]` for `c64`, `f64[dims..., 2]` for `c128`
/// (real then imaginary part, the same row-major bytes); `None` for a real array.
pub fn parts_of(a: &Array) -> Option<Array> {
    let data = match a.data() {
        Data::C64(v) => Data::F32(v.iter().flat_map(|z| [z.re, z.im]).collect()),
        Data::C128(v) => Data::F64(v.iter().flat_map(|z| [z.re, z.im]).collect()),
        _ => return None,
    };
    let mut dims = a.dims().to_vec();
    dims.push(2);
    Array::new(dims, data).ok()
}

/// The complex array whose parts are `parts` (the inverse of [`parts_of`]): `f32[..., 2]` makes
/// `c64`, `f64[..., 2]` `c128`; `None` for anything else.
pub fn from_parts(parts: &Array) -> Option<Array> {
    let (2, dims) = parts.dims().split_last()? else {
        return None;
    };
    let data = match parts.data() {
        Data::F32(v) => Data::C64(
            v.chunks_exact(2)
                .map(|p| Complex::new(p[0], p[1]))
                .collect(),
        ),
        Data::F64(v) => Data::C128(
            v.chunks_exact(2)
                .map(|p| Complex::new(p[0], p[1]))
                .collect(),
        ),
        _ => return None,
    };
    Array::new(dims.to_vec(), data).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(re: f64, im: f64) -> C128 {
        Complex::new(re, im)
    }

    #[test]
    fn products_and_quotients() {
        assert_eq!(c(1.0, 2.0) * c(3.0, -1.0), c(5.0, 5.0));
        assert_eq!(c(5.0, 5.0) / c(1.0, 2.0), c(3.0, -1.0));
        assert_eq!(c(5.0, 5.0) / c(4.0, 0.0), c(1.25, 1.25));
        // Smith keeps huge and tiny divisors in range where |b|² would over/underflow.
        let q = c(1e300, 1e300) / c(1e300, 1e300);
        assert_eq!(q, c(1.0, 0.0));
        let q = c(1e-300, 0.0) / c(0.0, 1e-300);
        assert_eq!(q, c(0.0, -1.0));
        // |b|² = 2e60 overflows f32; Smith's ratio does not.
        let q = Complex::<f32>::new(1e30, 0.0) / Complex::new(1e30, 1e30);
        assert_eq!(q, Complex::new(0.5, -0.5));
        // Smith's own limit, kept as XLA has it: b_r + b_i·t overflows to ∞, the quotient is 0.
        let q = Complex::<f32>::new(3e38, 0.0) / Complex::new(3e38, 3e38);
        assert_eq!((q.re, q.im), (0.0, 0.0));
    }

    #[test]
    fn division_recovers_infinities_and_zeros() {
        let inf = f64::INFINITY;
        assert_eq!(c(1.0, -2.0) / c(0.0, 0.0), c(inf, -inf));
        // ∞·0 in the other part stays NaN, as in XLA.
        let z = c(1.0, 0.0) / c(-0.0, 0.0);
        assert!(z.re == -inf && z.im.is_nan(), "{z:?}");
        assert_eq!(c(inf, 0.0) / c(1.0, 1.0), c(inf, -inf));
        let z = c(1.0, 1.0) / c(inf, 0.0);
        assert_eq!((z.re, z.im), (0.0, 0.0));
        let n = c(f64::NAN, 0.0) / c(0.0, 0.0);
        assert!(n.re.is_nan() && n.im.is_nan());
    }

    #[test]
    fn abs_sign_exp_log_sqrt() {
        assert_eq!(c(3.0, -4.0).abs(), 5.0);
        assert_eq!(c(1e300, 1e300).abs(), 1e300 * 2f64.sqrt());
        assert_eq!(c(f64::NAN, f64::INFINITY).abs(), f64::INFINITY);
        assert_eq!(c(0.0, 0.0).sign(), c(0.0, 0.0));
        assert_eq!(c(0.0, -2.0).sign(), c(0.0, -1.0));
        let e = c(0.0, std::f64::consts::PI).exp();
        assert!((e.re + 1.0).abs() < 1e-15 && e.im.abs() < 1e-15);
        assert_eq!(c(1.0, 0.0).ln(), c(0.0, 0.0));
        // XLA's sqrt goes through atan2 and cos/sin of half the angle: on the negative real
        // axis the real part is 2·cos(π/2), about 1.2e-16, not 0.
        let near =
            |z: C128, re: f64, im: f64| (z.re - re).abs() < 1e-15 && (z.im - im).abs() < 1e-15;
        assert!(near(c(-4.0, 0.0).sqrt(), 0.0, 2.0));
        assert!(near(c(-4.0, -0.0).sqrt(), 0.0, -2.0));
        assert!(near(c(3.0, 4.0).sqrt(), 2.0, 1.0));
        let z = Complex::new(-4f32, 0.0).sqrt();
        assert!(z.re.abs() < 1e-15 && z.im == 2.0, "{z:?}");
        assert_eq!(format!("{}", c(1.0, -0.5)), "(1, -0.5)");
    }
}
