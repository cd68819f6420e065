//! Transcendental functions in PTX, computed in f64 for every floating-point element type, but
//! for f32 `exp` and `tanh`, which are computed in f32 as XLA:GPU does ([`exp_f32`], within 2
//! ulp: the softmax, logsumexp and attention rows are mostly `exp`, and the f64 path took ~29
//! instructions per element against 9; [`tanh_f32`], within 4 ulp, 19 against ~75).
//!
//! # Accuracy
//!
//! Each function is range-reduced and evaluated with a polynomial in double precision, so its
//! relative error is a few f64 ulps (about 1e-15) over the reduced range; f16, bf16 and f32
//! results are then rounded once to their type, which makes them correctly rounded in almost all
//! cases (the same "compute wide, round once" rule as the reference evaluator). Details:
//!
//! - `exp`: Cody-Waite reduction by ln 2 (two-part constant), Taylor polynomial of degree 13 on
//!   |r| <= ln2/2, scaling by two exact powers of two (covers gradual underflow). For an f16
//!   or bf16 element (`exp_narrow`) the argument is clamped to [-200, 200] and one power of
//!   two scales: the same bits, 8 instructions fewer. f32: [`exp_f32`].
//! - `log`: exponent/mantissa split (subnormals pre-scaled), mantissa in [sqrt(1/2), sqrt(2)),
//!   `2 atanh(s)` series with s = f/(2+f) up to s^23.
//! - `expm1`: Taylor series of degree 17 for |x| < 0.5, `exp(x) - 1` elsewhere.
//! - `log1p`: `log(u) * x / (u - 1)` with u = 1 + x (Goldberg's correction), x when u == 1.
//! - `tanh`: `e / (e + 2)` with e = expm1(2|x|), |x| clamped at 20, sign restored. f32:
//!   [`tanh_f32`], XLA:GPU's rational approximation in f32.
//! - `sin`/`cos`/`tan`: Cody-Waite reduction by pi/2 in three parts (accurate for |x| < ~1e6;
//!   larger arguments lose accuracy gradually: no Payne-Hanek reduction), Taylor polynomials of
//!   degree 17/18 on |r| <= pi/4.
//! - `atan2`: min/max ratio in [0, 1], three argument halvings `z / (1 + sqrt(1 + z^2))`, odd
//!   Taylor series to z^19, quadrant fix-up; IEEE special cases for zeros and infinities.
//! - `power`: `exp(y log|x|)` with libm's special cases (y == 0, x == 1, negative bases with
//!   integral exponents, zeros, infinities).
//! - `erf`: the reference evaluator's own formula (Numerical Recipes' erfc fit, |error| < 1.2e-7).
//! - `cbrt`: `exp(log|x| / 3)` plus one Newton step.
//!
//! f64 results use the same code, so they carry the same few-ulp error.
use ptx::{CmpOp, Modifier, Opcode, Rounding, Type};

use super::builder::{t as t32, Builder, Reg, RegKind, Src, RN};

const F: Type = Type::F64;

fn c(x: f64) -> Src {
    Src::F64(x)
}

/// `a + b`.
pub fn add(b: &mut Builder, x: Src, y: Src) -> Reg {
    b.bin(Opcode::Add, &[RN], F, x, y)
}

/// `a - b`.
pub fn sub(b: &mut Builder, x: Src, y: Src) -> Reg {
    b.bin(Opcode::Sub, &[RN], F, x, y)
}

/// `a * b`.
pub fn mul(b: &mut Builder, x: Src, y: Src) -> Reg {
    b.bin(Opcode::Mul, &[RN], F, x, y)
}

/// `a / b` (IEEE).
pub fn div(b: &mut Builder, x: Src, y: Src) -> Reg {
    b.bin(Opcode::Div, &[RN], F, x, y)
}

fn fma(b: &mut Builder, x: Src, y: Src, z: Src) -> Reg {
    b.fma(F, x, y, z)
}

fn sel(b: &mut Builder, p: Reg, x: Src, y: Src) -> Reg {
    b.selp(F, x, y, p)
}

fn setp(b: &mut Builder, cmp: CmpOp, x: Src, y: Src) -> Reg {
    b.setp(cmp, F, x, y)
}

fn abs(b: &mut Builder, x: Reg) -> Reg {
    b.un(Opcode::Abs, &[], F, x.into())
}

fn round(b: &mut Builder, r: Rounding, x: Reg) -> Reg {
    b.cvt(Some(r), F, F, x.into())
}

/// Horner evaluation, coefficients from the highest degree down.
fn horner(b: &mut Builder, x: Reg, coeffs: &[f64]) -> Reg {
    let (first, rest) = match coeffs {
        [a, k, rest @ ..] => (fma(b, x.into(), c(*a), c(*k)), rest),
        [a] => return b.mov(F, c(*a)),
        [] => return b.mov(F, c(0.0)),
    };
    // `x * a + k` is `a * x + k`, rounded once: the same bits as a move of `a` and `fma(a, x,
    // k)`, one instruction fewer.
    let mut acc = first;
    for &k in rest {
        acc = fma(b, acc.into(), x.into(), c(k));
    }
    acc
}

fn factorial(n: u32) -> f64 {
    (1..=n).fold(1.0, |a, k| a * f64::from(k))
}

/// NaN passes through: `isnan(x) ? x : r`.
fn nan_through(b: &mut Builder, x: Reg, r: Reg) -> Reg {
    let p = setp(b, CmpOp::Nan, x.into(), x.into());
    sel(b, p, x.into(), r.into())
}

/// 2^k for an integer-valued f64 `k` in [-1022, 1023].
fn pow2(b: &mut Builder, k: Reg) -> Reg {
    let ki = b.cvt(Some(Rounding::Rni), Type::S64, F, k.into());
    let e = b.bin(Opcode::Add, &[], Type::S64, ki.into(), Src::I(1023));
    let bits = b.bin(Opcode::Shl, &[], Type::B64, e.into(), Src::I(52));
    let d = b.reg(RegKind::F64);
    b.mov_to(d, Type::B64, bits.into());
    d
}

/// e^x.
pub fn exp(b: &mut Builder, x: Reg) -> Reg {
    exp_clamped(b, x, Range::F64)
}

/// e^x for an `x` widened from f32, f16 or bf16, whose result is rounded back to that type:
/// `exp`'s value, bit for bit, in 8 instructions fewer. Every such `e^x` is 0 below -200 and
/// overflows above 200 (f32's range ends at e^±104), so `x` is clamped there, and `2^k` for
/// `k` in [-289, 289] is one normal power of two (the f64 path splits it in two, for
/// gradual underflow). The product with the polynomial is exact either way.
pub fn exp_narrow(b: &mut Builder, x: Reg) -> Reg {
    exp_clamped(b, x, Range::Narrow)
}

/// e^x of an f32 `x`, in f32 as XLA:GPU computes it (libdevice's `__nv_expf`, CUDA's `expf`):
/// `2^k * 2^(x log2(e) - k)` with an integer `k` in [-126, 126], so that `2^k` is one normal
/// f32, and the rest one `ex2.approx`. 9 instructions instead of the f64 path's ~29; the
/// result is within 2 ulp (CUDA's documented bound for `expf`, and what a simulation of these
/// steps with a correctly rounded `ex2`, as the emulator's, gives over [-104, 89]), not
/// correctly rounded: the corpus tolerances and XLA:CPU's own `exp` (a polynomial of similar
/// accuracy) allow it.
///
/// - `t = clamp(x log2(e) / 252 + 1/2, 0, 1)` (`cvt.sat.f32.f32`: a NaN clamps to 0);
/// - `j = 1.5 * 2^23 + 1 + m` for `m = round(252 t)` in [0, 252] (the f32 ulp is 1 there),
///   about `x log2(e) + 126` rounded; `k = m - 126`;
/// - `2^k` is `(m + 1) << 23` as bits (the exponent field `m + 1` is `k + 127`);
/// - `r = x log2(e) - k` with log2(e) in two parts (so `r` is accurate to f32 rounding), and
///   the result `ex2(r) * 2^k`. Large `|x|` saturate `k` at ±126 and `ex2(r)` carries the rest
///   into overflow (+inf) or gradual underflow (subnormals, then 0); NaN stays NaN through `r`.
///
/// Every step is a plain `.rn`/`.approx` f32 instruction without `.ftz` or a directed rounding,
/// or the clamp `cvt.sat.f32.f32`, or the shift: 9 instructions, each a form the emulator
/// runs as a whole-warp row operation (they make one straight run).
pub fn exp_f32(b: &mut Builder, x: Reg) -> Reg {
    const F32: Type = Type::F32;
    let f = Src::F32;
    let t = b.fma(F32, x.into(), f(std::f32::consts::LOG2_E / 252.0), f(0.5));
    let t = b.op(
        Opcode::Cvt,
        vec![Modifier::Sat, t32(F32), t32(F32)],
        F32,
        &[t.into()],
    );
    let j = b.fma(F32, t.into(), f(252.0), f(12_582_913.0));
    // -k = (1.5 * 2^23 + 127) - j, exact.
    let nk = b.bin(Opcode::Sub, &[RN], F32, f(12_583_039.0), j.into());
    let r = b.fma(F32, x.into(), f(std::f32::consts::LOG2_E), nk.into());
    // log2(e) - f32(log2(e)).
    let r = b.fma(F32, x.into(), f(1.925_963e-8), r.into());
    // A bit-size instruction takes registers of any type of its size: the shift reads and
    // writes the float registers, as libdevice's `__nv_expf` does, without two `mov.b32`.
    let s = b.reg(RegKind::F32);
    b.op_to(
        s,
        Opcode::Shl,
        vec![t32(Type::B32)],
        &[j.into(), Src::I(23)],
    );
    let e = b.un(Opcode::Ex2, &[Modifier::Approx], F32, r.into());
    b.bin(Opcode::Mul, &[RN], F32, e.into(), s.into())
}

/// f32 `tanh` as XLA:GPU emits it (`GpuElementalIrEmitter::EmitTanh` → `EmitFastTanh`,
/// Eigen's rational approximation with FMA): `x` clamped to ±7.99881172 (where the quotient is
/// exactly ±1), `x p(x²) / q(x²)` with an odd numerator of degree 13 and an even denominator of
/// degree 6, `x` itself for `|x| < 0.0004`. Within 4 ulp of the f64 `tanh` rounded to f32 (at
/// every 0.0007 of [-12, 12]); 19 f32 instructions instead of ~75 in f64 (a GELU MLP's
/// activation is mostly this). XLA's clamp sends NaN to ±1 (`max`/`min` drop a NaN operand);
/// here NaN passes through, as every other function of this module does.
pub fn tanh_f32(b: &mut Builder, x: Reg) -> Reg {
    const F32: Type = Type::F32;
    #[allow(clippy::excessive_precision)]
    const CLAMP: f32 = 7.99881172180175781;
    // XLA's coefficients as its source writes them (rounded to f32 there as here).
    #[allow(clippy::excessive_precision)]
    const NUM: [f32; 7] = [
        -2.76076847742355e-16,
        2.00018790482477e-13,
        -8.60467152213735e-11,
        5.12229709037114e-08,
        1.48572235717979e-05,
        6.37261928875436e-04,
        4.89352455891786e-03,
    ];
    #[allow(clippy::excessive_precision)]
    const DEN: [f32; 4] = [
        1.19825839466702e-06,
        1.18534705686654e-04,
        2.26843463243900e-03,
        4.89352518554385e-03,
    ];
    let f = Src::F32;
    let xc = b.bin(Opcode::Max, &[], F32, x.into(), f(-CLAMP));
    let xc = b.bin(Opcode::Min, &[], F32, xc.into(), f(CLAMP));
    let x2 = b.bin(Opcode::Mul, &[RN], F32, xc.into(), xc.into());
    let horner32 = |b: &mut Builder, cs: &[f32]| {
        let mut acc = f(cs[0]);
        for &k in &cs[1..] {
            acc = b.fma(F32, x2.into(), acc, f(k)).into();
        }
        acc
    };
    let p = horner32(b, &NUM);
    let p = b.bin(Opcode::Mul, &[RN], F32, xc.into(), p);
    let q = horner32(b, &DEN);
    let r = b.bin(Opcode::Div, &[RN], F32, p.into(), q);
    let ax = b.un(Opcode::Abs, &[], F32, x.into());
    let small = b.setp(CmpOp::Lt, F32, ax.into(), f(0.0004));
    let r = b.selp(F32, x.into(), r.into(), small);
    let nan = b.setp(CmpOp::Nan, F32, x.into(), x.into());
    b.selp(F32, x.into(), r.into(), nan)
}

/// The clamp of `exp`'s argument, and so how many powers of two scale its result.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Range {
    /// [-760, 720]: `k` in [-1097, 1039], two powers of two.
    F64,
    /// [-200, 200]: `k` in [-289, 289], one.
    Narrow,
}

fn exp_clamped(b: &mut Builder, x: Reg, range: Range) -> Reg {
    let (min, max) = match range {
        Range::F64 => (-760.0, 720.0),
        Range::Narrow => (-200.0, 200.0),
    };
    let lo = b.bin(Opcode::Max, &[], F, x.into(), c(min));
    let xc = b.bin(Opcode::Min, &[], F, lo.into(), c(max));
    let t = mul(b, xc.into(), c(std::f64::consts::LOG2_E));
    let k = round(b, Rounding::Rni, t);
    let nk = b.un(Opcode::Neg, &[], F, k.into());
    let r = fma(b, nk.into(), c(6.931_471_803_691_238e-1), xc.into());
    let r = fma(b, nk.into(), c(1.908_214_929_270_587_7e-10), r.into());
    let coeffs: Vec<f64> = (0..=13).rev().map(|n| 1.0 / factorial(n)).collect();
    let p = horner(b, r, &coeffs);
    if range == Range::Narrow {
        let s = pow2(b, k);
        let y = mul(b, p.into(), s.into());
        return nan_through(b, x, y);
    }
    // k in [-1097, 1039]: split into two halves, each a normal power of two.
    let h = mul(b, k.into(), c(0.5));
    let k1 = round(b, Rounding::Rzi, h);
    let k2 = sub(b, k.into(), k1.into());
    let s1 = pow2(b, k1);
    let s2 = pow2(b, k2);
    let y = mul(b, p.into(), s1.into());
    let y = mul(b, y.into(), s2.into());
    nan_through(b, x, y)
}

/// ln x.
pub fn log(b: &mut Builder, x: Reg) -> Reg {
    // Pre-scale subnormals.
    let tiny = setp(b, CmpOp::Lt, x.into(), c(f64::MIN_POSITIVE));
    let scaled = mul(b, x.into(), c(18_014_398_509_481_984.0)); // 2^54
    let xs = sel(b, tiny, scaled.into(), x.into());
    let eadj = sel(b, tiny, c(-54.0), c(0.0));
    let bits = b.reg(RegKind::B64);
    b.mov_to(bits, Type::B64, xs.into());
    let eb = b.bin(Opcode::Shr, &[], Type::U64, bits.into(), Src::I(52));
    let eb = b.bin(Opcode::And, &[], Type::B64, eb.into(), Src::I(0x7ff));
    let eb = b.bin(Opcode::Sub, &[], Type::S64, eb.into(), Src::I(1023));
    let e = b.cvt(Some(Rounding::Rn), F, Type::S64, eb.into());
    let mb = b.bin(
        Opcode::And,
        &[],
        Type::B64,
        bits.into(),
        Src::I(0x000f_ffff_ffff_ffff),
    );
    let mb = b.bin(
        Opcode::Or,
        &[],
        Type::B64,
        mb.into(),
        Src::I(0x3ff0_0000_0000_0000),
    );
    let m = b.reg(RegKind::F64);
    b.mov_to(m, Type::B64, mb.into());
    let big = setp(b, CmpOp::Gt, m.into(), c(std::f64::consts::SQRT_2));
    let mh = mul(b, m.into(), c(0.5));
    let m = sel(b, big, mh.into(), m.into());
    let e1 = add(b, e.into(), c(1.0));
    let e = sel(b, big, e1.into(), e.into());
    let e = add(b, e.into(), eadj.into());
    let f = sub(b, m.into(), c(1.0));
    let den = add(b, f.into(), c(2.0));
    let s = div(b, f.into(), den.into());
    let z = mul(b, s.into(), s.into());
    let coeffs: Vec<f64> = (0..=11).rev().map(|n| 1.0 / f64::from(2 * n + 1)).collect();
    let p = horner(b, z, &coeffs);
    let s2 = mul(b, s.into(), c(2.0));
    let lm = mul(b, s2.into(), p.into());
    let hi = mul(b, e.into(), c(6.931_471_803_691_238e-1));
    let lo = fma(b, e.into(), c(1.908_214_929_270_587_7e-10), lm.into());
    let y = add(b, hi.into(), lo.into());
    // Special cases.
    let neg = setp(b, CmpOp::Lt, x.into(), c(0.0));
    let y = sel(b, neg, c(f64::NAN), y.into());
    let zero = setp(b, CmpOp::Eq, x.into(), c(0.0));
    let y = sel(b, zero, c(f64::NEG_INFINITY), y.into());
    let inf = setp(b, CmpOp::Eq, x.into(), c(f64::INFINITY));
    let y = sel(b, inf, c(f64::INFINITY), y.into());
    nan_through(b, x, y)
}

/// e^x - 1.
pub fn expm1(b: &mut Builder, x: Reg) -> Reg {
    let coeffs: Vec<f64> = (1..=17).rev().map(|n| 1.0 / factorial(n)).collect();
    let p = horner(b, x, &coeffs);
    let small = mul(b, p.into(), x.into());
    let e = exp(b, x);
    let big = sub(b, e.into(), c(1.0));
    let ax = abs(b, x);
    let is_small = setp(b, CmpOp::Lt, ax.into(), c(0.5));
    sel(b, is_small, small.into(), big.into())
}

/// ln(1 + x).
pub fn log1p(b: &mut Builder, x: Reg) -> Reg {
    let u = add(b, x.into(), c(1.0));
    let lu = log(b, u);
    let um1 = sub(b, u.into(), c(1.0));
    let q = div(b, x.into(), um1.into());
    let y = mul(b, lu.into(), q.into());
    let one = setp(b, CmpOp::Eq, u.into(), c(1.0));
    let y = sel(b, one, x.into(), y.into());
    let inf = setp(b, CmpOp::Eq, u.into(), c(f64::INFINITY));
    let y = sel(b, inf, u.into(), y.into());
    let m1 = setp(b, CmpOp::Eq, u.into(), c(0.0));
    let y = sel(b, m1, c(f64::NEG_INFINITY), y.into());
    nan_through(b, x, y)
}

fn copysign(b: &mut Builder, mag: Reg, sign: Reg) -> Reg {
    // copysign.f64 d, sign_source, magnitude_source
    b.op(
        Opcode::Copysign,
        vec![super::builder::t(F)],
        F,
        &[sign.into(), mag.into()],
    )
}

/// tanh x.
pub fn tanh(b: &mut Builder, x: Reg) -> Reg {
    let a = abs(b, x);
    let a = b.bin(Opcode::Min, &[], F, a.into(), c(20.0));
    let a2 = mul(b, a.into(), c(2.0));
    let e = expm1(b, a2);
    let den = add(b, e.into(), c(2.0));
    let r = div(b, e.into(), den.into());
    let r = copysign(b, r, x);
    nan_through(b, x, r)
}

/// 1 / (1 + e^-x), as the reference evaluator defines `logistic`.
pub fn logistic(b: &mut Builder, x: Reg) -> Reg {
    let nx = b.un(Opcode::Neg, &[], F, x.into());
    let e = exp(b, nx);
    let den = add(b, e.into(), c(1.0));
    div(b, c(1.0), den.into())
}

/// (sin x, cos x).
pub fn sincos(b: &mut Builder, x: Reg) -> (Reg, Reg) {
    let t = mul(b, x.into(), c(std::f64::consts::FRAC_2_PI));
    let k = round(b, Rounding::Rni, t);
    let nk = b.un(Opcode::Neg, &[], F, k.into());
    let r = fma(b, nk.into(), c(1.570_796_326_734_125_6), x.into());
    let r = fma(b, nk.into(), c(6.077_100_506_303_966e-11), r.into());
    let r = fma(b, nk.into(), c(2.022_266_248_711_166_5e-21), r.into());
    let z = mul(b, r.into(), r.into());
    // sin r = r * P(z), cos r = Q(z).
    let sc: Vec<f64> = (0..=8)
        .rev()
        .map(|n| {
            let s = if n % 2 == 0 { 1.0 } else { -1.0 };
            s / factorial(2 * n + 1)
        })
        .collect();
    let cc: Vec<f64> = (0..=9)
        .rev()
        .map(|n| {
            let s = if n % 2 == 0 { 1.0 } else { -1.0 };
            s / factorial(2 * n)
        })
        .collect();
    let ps = horner(b, z, &sc);
    let s = mul(b, r.into(), ps.into());
    let co = horner(b, z, &cc);
    // Quadrant q = k mod 4 (k may be NaN/inf: the results are NaN anyway).
    let ki = b.cvt(Some(Rounding::Rni), Type::S64, F, k.into());
    let q = b.bin(Opcode::And, &[], Type::B64, ki.into(), Src::I(3));
    let ns = b.un(Opcode::Neg, &[], F, s.into());
    let nc = b.un(Opcode::Neg, &[], F, co.into());
    let q0 = b.setp(CmpOp::Eq, Type::S64, q.into(), Src::I(0));
    let q1 = b.setp(CmpOp::Eq, Type::S64, q.into(), Src::I(1));
    let q2 = b.setp(CmpOp::Eq, Type::S64, q.into(), Src::I(2));
    // sin: q0 s, q1 c, q2 -s, q3 -c
    let sin = sel(b, q2, ns.into(), nc.into());
    let sin = sel(b, q1, co.into(), sin.into());
    let sin = sel(b, q0, s.into(), sin.into());
    // cos: q0 c, q1 -s, q2 -c, q3 s
    let cos = sel(b, q2, nc.into(), s.into());
    let cos = sel(b, q1, ns.into(), cos.into());
    let cos = sel(b, q0, co.into(), cos.into());
    (sin, cos)
}

/// atan2(y, x).
pub fn atan2(b: &mut Builder, y: Reg, x: Reg) -> Reg {
    let ay = abs(b, y);
    let ax = abs(b, x);
    let mx = b.bin(Opcode::Max, &[], F, ax.into(), ay.into());
    let mn = b.bin(Opcode::Min, &[], F, ax.into(), ay.into());
    let a = div(b, mn.into(), mx.into());
    let zero = setp(b, CmpOp::Eq, mx.into(), c(0.0));
    let a = sel(b, zero, c(0.0), a.into());
    let both_inf = setp(b, CmpOp::Eq, mn.into(), c(f64::INFINITY));
    let a = sel(b, both_inf, c(1.0), a.into());
    let mut z = a;
    for _ in 0..3 {
        let z2 = fma(b, z.into(), z.into(), c(1.0));
        let s = b.un(Opcode::Sqrt, &[RN], F, z2.into());
        let d = add(b, s.into(), c(1.0));
        z = div(b, z.into(), d.into());
    }
    let w = mul(b, z.into(), z.into());
    let coeffs: Vec<f64> = (0..=9)
        .rev()
        .map(|n| {
            let s = if n % 2 == 0 { 1.0 } else { -1.0 };
            s / f64::from(2 * n + 1)
        })
        .collect();
    let p = horner(b, w, &coeffs);
    let t = mul(b, z.into(), p.into());
    let t = mul(b, t.into(), c(8.0));
    let swap = setp(b, CmpOp::Gt, ay.into(), ax.into());
    let t2 = sub(b, c(std::f64::consts::FRAC_PI_2), t.into());
    let t = sel(b, swap, t2.into(), t.into());
    let xbits = b.reg(RegKind::B64);
    b.mov_to(xbits, Type::B64, x.into());
    let xneg = b.setp(CmpOp::Lt, Type::S64, xbits.into(), Src::I(0));
    let t3 = sub(b, c(std::f64::consts::PI), t.into());
    let t = sel(b, xneg, t3.into(), t.into());
    let r = copysign(b, t, y);
    let r = nan_through(b, x, r);
    nan_through(b, y, r)
}

/// x^y.
pub fn pow(b: &mut Builder, x: Reg, y: Reg) -> Reg {
    let ax = abs(b, x);
    let l = log(b, ax);
    let p = mul(b, y.into(), l.into());
    let r = exp(b, p);
    // y integral / odd.
    let yr = round(b, Rounding::Rni, y);
    let yint = setp(b, CmpOp::Eq, yr.into(), y.into());
    let h = mul(b, y.into(), c(0.5));
    let hr = round(b, Rounding::Rni, h);
    let yodd = setp(b, CmpOp::Ne, hr.into(), h.into());
    let yodd = b.pand(yodd, yint);
    let xbits = b.reg(RegKind::B64);
    b.mov_to(xbits, Type::B64, x.into());
    let xsign = b.setp(CmpOp::Lt, Type::S64, xbits.into(), Src::I(0));
    let flip = b.pand(xsign, yodd);
    let nr = b.un(Opcode::Neg, &[], F, r.into());
    let r = sel(b, flip, nr.into(), r.into());
    // Negative finite base with a non-integral exponent: NaN.
    let xneg = setp(b, CmpOp::Lt, x.into(), c(0.0));
    let xfin = setp(b, CmpOp::Lt, ax.into(), c(f64::INFINITY));
    let bad = b.pand(xneg, xfin);
    let nint = b.pnot(yint);
    let bad = b.pand(bad, nint);
    let r = sel(b, bad, c(f64::NAN), r.into());
    // |x| == 1 and y infinite: 1.
    let ax1 = setp(b, CmpOp::Eq, ax.into(), c(1.0));
    let ay = abs(b, y);
    let yinf = setp(b, CmpOp::Eq, ay.into(), c(f64::INFINITY));
    let one = b.pand(ax1, yinf);
    let r = sel(b, one, c(1.0), r.into());
    let r = nan_through(b, x, r);
    let r = nan_through(b, y, r);
    let x1 = setp(b, CmpOp::Eq, x.into(), c(1.0));
    let y0 = setp(b, CmpOp::Eq, y.into(), c(0.0));
    let unit = b.por(x1, y0);
    sel(b, unit, c(1.0), r.into())
}

/// erf x, with the reference evaluator's formula.
pub fn erf(b: &mut Builder, x: Reg) -> Reg {
    let z = abs(b, x);
    let zh = mul(b, z.into(), c(0.5));
    let d = add(b, zh.into(), c(1.0));
    let t = div(b, c(1.0), d.into());
    let coeffs = [
        0.170_872_77,
        -0.822_152_23,
        1.488_515_87,
        -1.135_203_98,
        0.278_868_07,
        -0.186_288_06,
        0.096_784_18,
        0.374_091_96,
        1.000_023_68,
    ];
    let p = horner(b, t, &coeffs);
    let p = fma(b, t.into(), p.into(), c(-1.265_512_23));
    let z2 = mul(b, z.into(), z.into());
    let p = sub(b, p.into(), z2.into());
    let e = exp(b, p);
    let erfc = mul(b, t.into(), e.into());
    let pos = sub(b, c(1.0), erfc.into());
    let neg = sub(b, erfc.into(), c(1.0));
    let ge = setp(b, CmpOp::Ge, x.into(), c(0.0));
    let r = sel(b, ge, pos.into(), neg.into());
    nan_through(b, x, r)
}

/// Cube root.
pub fn cbrt(b: &mut Builder, x: Reg) -> Reg {
    let ax = abs(b, x);
    let l = log(b, ax);
    let l3 = mul(b, l.into(), c(1.0 / 3.0));
    let y = exp(b, l3);
    // Newton: y - (y^3 - a) / (3 y^2)
    let y2 = mul(b, y.into(), y.into());
    let y3 = mul(b, y2.into(), y.into());
    let num = sub(b, y3.into(), ax.into());
    let den = mul(b, y2.into(), c(3.0));
    let q = div(b, num.into(), den.into());
    let y = sub(b, y.into(), q.into());
    let r = copysign(b, y, x);
    let z = setp(b, CmpOp::Eq, ax.into(), c(0.0));
    let i = setp(b, CmpOp::Eq, ax.into(), c(f64::INFINITY));
    let zi = b.por(z, i);
    let r = sel(b, zi, x.into(), r.into());
    nan_through(b, x, r)
}
