//! Whole-row lane kernels of the fast engine: the common f64/f32 forms the compiler's math
//! library (`compiler/src/codegen/math.rs`, every transcendental is an f64 polynomial) spends its
//! instructions on, written so that each is the *same computation* as the general path in
//! [`super::numeric`] with its format, rounding and flags fixed (each function says which
//! general call it equals), and so that a loop over 32 lanes has no calls and no branches the
//! compiler cannot turn into selects: with AVX2/FMA enabled (`exec`'s multiversioned warp loop)
//! LLVM vectorizes them; `mul_add`, `trunc` and `round_ties_even` become single instructions
//! instead of libm calls.
//!
//! Every function computes all 32 lanes (inactive lanes compute on stale values and are
//! discarded by the masked write-back): none of them can fault or has side effects.
use super::numeric::{Cmp, IRnd, IntTy};

/// PTX's canonical f64 NaN (what [`super::numeric::Fmt::nan`] returns for f64).
const F64_NAN: u64 = 0x7fff_ffff_ffff_ffff;
/// PTX's canonical f32 NaN.
const F32_NAN: u64 = 0x7fff_ffff;

pub(crate) type Row = [u64; 32];

#[inline(always)]
fn f64_canon(v: f64) -> u64 {
    if v.is_nan() {
        F64_NAN
    } else {
        v.to_bits()
    }
}

#[inline(always)]
fn f32_canon(v: f32) -> u64 {
    if v.is_nan() {
        F32_NAN
    } else {
        v.to_bits() as u64
    }
}

#[inline(always)]
pub(crate) fn map2<const N: usize>(
    a: &[u64; N],
    b: &[u64; N],
    f: impl Fn(u64, u64) -> u64,
) -> [u64; N] {
    let mut out = [0u64; N];
    for l in 0..N {
        out[l] = f(a[l], b[l]);
    }
    out
}

#[inline(always)]
fn map1<const N: usize>(a: &[u64; N], f: impl Fn(u64) -> u64) -> [u64; N] {
    let mut out = [0u64; N];
    for l in 0..N {
        out[l] = f(a[l]);
    }
    out
}

/// `numeric::fbin(op, Fmt::F64, Rnd::Rn, false, ..)`: the native operation, NaN canonical.
#[inline(always)]
pub(crate) fn f64_bin<const N: usize>(
    op: super::numeric::FOp,
    a: &[u64; N],
    b: &[u64; N],
) -> [u64; N] {
    use super::numeric::FOp;
    let v =
        |x: u64, y: u64, f: fn(f64, f64) -> f64| f64_canon(f(f64::from_bits(x), f64::from_bits(y)));
    match op {
        FOp::Add => map2(a, b, |x, y| v(x, y, |p, q| p + q)),
        FOp::Sub => map2(a, b, |x, y| v(x, y, |p, q| p - q)),
        FOp::Mul => map2(a, b, |x, y| v(x, y, |p, q| p * q)),
        FOp::Div => map2(a, b, |x, y| v(x, y, |p, q| p / q)),
    }
}

/// `numeric::fbin(op, Fmt::F32, Rnd::Rn, false, ..)`: the native operation, NaN canonical.
#[inline(always)]
pub(crate) fn f32_bin<const N: usize>(
    op: super::numeric::FOp,
    a: &[u64; N],
    b: &[u64; N],
) -> [u64; N] {
    use super::numeric::FOp;
    let v = |x: u64, y: u64, f: fn(f32, f32) -> f32| {
        f32_canon(f(f32::from_bits(x as u32), f32::from_bits(y as u32)))
    };
    match op {
        FOp::Add => map2(a, b, |x, y| v(x, y, |p, q| p + q)),
        FOp::Sub => map2(a, b, |x, y| v(x, y, |p, q| p - q)),
        FOp::Mul => map2(a, b, |x, y| v(x, y, |p, q| p * q)),
        FOp::Div => map2(a, b, |x, y| v(x, y, |p, q| p / q)),
    }
}

/// `numeric::f32_add_ftz` on every lane (`atom.add.f32`'s sum).
#[inline(always)]
pub(crate) fn f32_add_ftz<const N: usize>(a: &[u64; N], b: &[u64; N]) -> [u64; N] {
    map2(a, b, super::numeric::f32_add_ftz)
}

/// `numeric::fapprox(Approx::Ex2, Fmt::F32, false, ..)`: the same bits, vectorized
/// ([`super::exp2`]).
#[inline(always)]
pub(crate) fn f32_ex2<const N: usize>(a: &[u64; N]) -> [u64; N] {
    super::exp2::ex2_f32_row(a)
}

/// `numeric::f2f(Fmt::F32, .., Fmt::F32, _, None, false, true)`, which is
/// `numeric::saturate(Fmt::F32, ..)`: +0 for NaN and for values at or below 0 (-0 included), 1
/// at or above 1, the value itself between.
#[inline(always)]
pub(crate) fn f32_sat<const N: usize>(a: &[u64; N]) -> [u64; N] {
    map1(a, |x| {
        let v = f32::from_bits(x as u32);
        // NaN compares false both times: +0.
        let inside = pick(v < 1.0, x & 0xffff_ffff, u64::from(1f32.to_bits()));
        pick(v > 0.0, inside, 0)
    })
}

/// `numeric::ffma(Fmt::F64, Rnd::Rn, false, ..)`: one fused multiply-add, NaN canonical.
#[inline(always)]
pub(crate) fn f64_fma<const N: usize>(a: &[u64; N], b: &[u64; N], c: &[u64; N]) -> [u64; N] {
    let mut out = [0u64; N];
    for l in 0..N {
        out[l] =
            f64_canon(f64::from_bits(a[l]).mul_add(f64::from_bits(b[l]), f64::from_bits(c[l])));
    }
    out
}

/// `numeric::ffma(Fmt::F32, Rnd::Rn, false, ..)`.
#[inline(always)]
pub(crate) fn f32_fma<const N: usize>(a: &[u64; N], b: &[u64; N], c: &[u64; N]) -> [u64; N] {
    let mut out = [0u64; N];
    for l in 0..N {
        let (x, y, z) = (
            f32::from_bits(a[l] as u32),
            f32::from_bits(b[l] as u32),
            f32::from_bits(c[l] as u32),
        );
        out[l] = f32_canon(x.mul_add(y, z));
    }
    out
}

/// `x` where `c`, else `y`: a blend through an all-ones mask, never a branch (LLVM keeps a
/// `bool`-chosen `if` as a branch when both sides are cheap loads, which stops the lane loop
/// from vectorizing).
#[inline(always)]
fn pick(c: bool, x: u64, y: u64) -> u64 {
    let m = 0u64.wrapping_sub(c as u64);
    (x & m) | (y & !m)
}

/// `numeric::fminmax(Fmt::F64, max, false, nan, ..)`: a NaN operand yields the other one (both
/// NaN, or any NaN with `.NaN`: canonical NaN); equal values (only zeros can be equal with
/// different bits) pick by the sign of `a`. `max` and `nan` are chosen once per row, and each
/// lane is a handful of compares and blends (the per-lane branches of the general path's
/// early returns were a twentieth of the elementwise kernel).
#[inline(always)]
pub(crate) fn f64_minmax<const N: usize>(
    max: bool,
    nan: bool,
    a: &[u64; N],
    b: &[u64; N],
) -> [u64; N] {
    match (max, nan) {
        (false, false) => minmax::<false, false, true, N>(a, b),
        (false, true) => minmax::<false, true, true, N>(a, b),
        (true, false) => minmax::<true, false, true, N>(a, b),
        (true, true) => minmax::<true, true, true, N>(a, b),
    }
}

/// The same for f32 (`numeric::fminmax(Fmt::F32, max, false, nan, ..)`): comparing the f32
/// values equals comparing their exact f64 images.
#[inline(always)]
pub(crate) fn f32_minmax<const N: usize>(
    max: bool,
    nan: bool,
    a: &[u64; N],
    b: &[u64; N],
) -> [u64; N] {
    match (max, nan) {
        (false, false) => minmax::<false, false, false, N>(a, b),
        (false, true) => minmax::<false, true, false, N>(a, b),
        (true, false) => minmax::<true, false, false, N>(a, b),
        (true, true) => minmax::<true, true, false, N>(a, b),
    }
}

/// The branch-free lane of [`f64_minmax`] / [`f32_minmax`] (`F64` picks the format). Every
/// comparison with a NaN is false, so with a NaN operand `pick_a` is false and the blends
/// give: `b` NaN only → `a`; `a` NaN only → `b`; both (or any, with `.NaN`) → canonical NaN,
/// the general path's early returns in that order.
#[inline(always)]
fn minmax<const MAX: bool, const NAN: bool, const F64: bool, const N: usize>(
    a: &[u64; N],
    b: &[u64; N],
) -> [u64; N] {
    let mut out = [0u64; N];
    for l in 0..N {
        let (x, y) = (a[l], b[l]);
        let (eq, ordered, an, bn, a_neg) = if F64 {
            let (p, q) = (f64::from_bits(x), f64::from_bits(y));
            let ordered = if MAX { p > q } else { p < q };
            (p == q, ordered, p.is_nan(), q.is_nan(), x >> 63 != 0)
        } else {
            let (p, q) = (f32::from_bits(x as u32), f32::from_bits(y as u32));
            let ordered = if MAX { p > q } else { p < q };
            (p == q, ordered, p.is_nan(), q.is_nan(), (x >> 31) & 1 != 0)
        };
        let pick_a = (eq & (a_neg != MAX)) | ordered;
        let r = pick(pick_a | (bn & !an), x, y);
        let canon = if NAN { an | bn } else { an & bn };
        out[l] = pick(canon, if F64 { F64_NAN } else { F32_NAN }, r);
    }
    out
}

/// `neg`/`abs` on f64 (`sign_bit` 63) or f32 (31) without `.ftz`: the general path's
/// `x ^ sign` and `x & !sign & trunc(MAX, bits)`.
#[inline(always)]
pub(crate) fn sign<const N: usize>(abs: bool, sign_bit: u32, a: &[u64; N]) -> [u64; N] {
    if abs {
        let keep = (1u64 << sign_bit) - 1;
        map1(a, |x| x & keep)
    } else {
        let flip = 1u64 << sign_bit;
        map1(a, |x| x ^ flip)
    }
}

/// `numeric::fcmp(cmp, Fmt::F64 or F32, false, ..)` over a row, as a lane mask. Comparing the
/// native values equals comparing the exact f64 images the general path compares.
#[inline(always)]
pub(crate) fn fcmp_mask(cmp: Cmp, f64s: bool, a: &Row, b: &Row) -> u32 {
    macro_rules! mask {
        (|$x:ident, $y:ident| $e:expr) => {{
            let mut v = 0u32;
            if f64s {
                for l in 0..32 {
                    let ($x, $y) = (f64::from_bits(a[l]), f64::from_bits(b[l]));
                    v |= ($e as u32) << l;
                }
            } else {
                for l in 0..32 {
                    let ($x, $y) = (f32::from_bits(a[l] as u32), f32::from_bits(b[l] as u32));
                    v |= ($e as u32) << l;
                }
            }
            v
        }};
    }
    match cmp {
        Cmp::Eq => mask!(|x, y| x == y),
        Cmp::Ne => mask!(|x, y| !x.is_nan() && !y.is_nan() && x != y),
        Cmp::Lt | Cmp::Lo => mask!(|x, y| x < y),
        Cmp::Le | Cmp::Ls => mask!(|x, y| x <= y),
        Cmp::Gt | Cmp::Hi => mask!(|x, y| x > y),
        Cmp::Ge | Cmp::Hs => mask!(|x, y| x >= y),
        Cmp::Equ => mask!(|x, y| x.is_nan() || y.is_nan() || x == y),
        Cmp::Neu => mask!(|x, y| x != y),
        Cmp::Ltu => mask!(|x, y| x.is_nan() || y.is_nan() || x < y),
        Cmp::Leu => mask!(|x, y| x.is_nan() || y.is_nan() || x <= y),
        Cmp::Gtu => mask!(|x, y| x.is_nan() || y.is_nan() || x > y),
        Cmp::Geu => mask!(|x, y| x.is_nan() || y.is_nan() || x >= y),
        Cmp::Num => mask!(|x, y| !x.is_nan() && !y.is_nan()),
        Cmp::Nan => mask!(|x, y| x.is_nan() || y.is_nan()),
    }
}

/// `numeric::f2f(F64, a, F64, _, Some(ir), false, false)`: `cvt.rXi.f64.f64` (the rounding
/// is exact, so `round_pair` returns it unchanged; NaN canonical).
#[inline(always)]
pub(crate) fn f64_round_int<const N: usize>(ir: IRnd, a: &[u64; N]) -> [u64; N] {
    let g = |f: fn(f64) -> f64| map1(a, move |x| f64_canon(f(f64::from_bits(x))));
    match ir {
        IRnd::Rni => g(f64::round_ties_even),
        IRnd::Rzi => g(f64::trunc),
        IRnd::Rmi => g(f64::floor),
        IRnd::Rpi => g(f64::ceil),
    }
}

/// `numeric::f2f(F32, a, F64, _, None, false, false)`: exact widening, NaN canonical.
#[inline(always)]
pub(crate) fn f32_to_f64<const N: usize>(a: &[u64; N]) -> [u64; N] {
    map1(a, |x| f64_canon(f32::from_bits(x as u32) as f64))
}

/// `numeric::f2f(F64, a, F32, Rn, None, false, false)`: `round_pair(x, 0.0, F32, Rn)` is the
/// nearest-even f32 (an exact f64 lo of zero never breaks a tie), NaN canonical.
#[inline(always)]
pub(crate) fn f64_to_f32_rn<const N: usize>(a: &[u64; N]) -> [u64; N] {
    map1(a, |x| f32_canon(f64::from_bits(x) as f32))
}

/// `numeric::i2f(from, a, F64, Rn)` for a 64- or 32-bit integer: Rust's integer → float casts
/// round to nearest even, the value `round_pair(hi, lo, F64, Rn)` keeps.
#[inline(always)]
pub(crate) fn int_to_f64<const N: usize>(signed: bool, bits: u32, a: &[u64; N]) -> [u64; N] {
    match (signed, bits) {
        (true, 64) => map1(a, |x| (x as i64 as f64).to_bits()),
        (false, 64) => map1(a, |x| (x as f64).to_bits()),
        (true, _) => map1(a, |x| (x as u32 as i32 as f64).to_bits()),
        (false, _) => map1(a, |x| (x as u32 as f64).to_bits()),
    }
}

/// `numeric::f2i(F64 or F32, false, a, ir, to)` for a 32- or 64-bit integer `to`: the f32
/// operand widens exactly, rounds to an integral f64, and Rust's saturating float → integer
/// cast is the general path's clamp (at or below the type's minimum: the minimum; at or above
/// the maximum as f64: the maximum; NaN: 0), so the value is the same; truncation to `to`'s
/// width follows.
#[inline(always)]
pub(crate) fn float_to_int<const N: usize>(
    f64s: bool,
    ir: IRnd,
    to: IntTy,
    a: &[u64; N],
) -> [u64; N] {
    #[inline(always)]
    fn go<const N: usize>(
        a: &[u64; N],
        f64s: bool,
        round: impl Fn(f64) -> f64,
        cast: impl Fn(f64) -> u64,
    ) -> [u64; N] {
        if f64s {
            map1(a, |x| cast(round(f64::from_bits(x))))
        } else {
            map1(a, |x| cast(round(f32::from_bits(x as u32) as f64)))
        }
    }
    macro_rules! cast {
        ($round:expr) => {
            match (to.signed, to.bits) {
                (true, 64) => go(a, f64s, $round, |v| v as i64 as u64),
                (false, 64) => go(a, f64s, $round, |v| v as u64),
                (true, _) => go(a, f64s, $round, |v| v as i32 as u32 as u64),
                (false, _) => go(a, f64s, $round, |v| v as u32 as u64),
            }
        };
    }
    match ir {
        IRnd::Rni => cast!(f64::round_ties_even),
        IRnd::Rzi => cast!(f64::trunc),
        IRnd::Rmi => cast!(f64::floor),
        IRnd::Rpi => cast!(f64::ceil),
    }
}

/// `numeric::icmp(cmp, bits, signed, ..)` over a row for 32- and 64-bit integers, as a lane
/// mask: the general path compares the sign-extended (signed) or truncated values, which for
/// these widths are the native `i32`/`u32`/`i64`/`u64` values; `lo ls hi hs` are unsigned
/// whatever the type, `num` is always true and `nan` always false.
#[inline(always)]
pub(crate) fn icmp_mask(cmp: Cmp, bits: u32, signed: bool, a: &Row, b: &Row) -> u32 {
    macro_rules! mask {
        ($t:ty, |$x:ident, $y:ident| $e:expr) => {{
            let mut v = 0u32;
            for l in 0..32 {
                let ($x, $y) = (a[l] as $t, b[l] as $t);
                v |= ($e as u32) << l;
            }
            v
        }};
    }
    macro_rules! by_type {
        (|$x:ident, $y:ident| $e:expr) => {
            match (bits, signed) {
                (64, true) => mask!(i64, |$x, $y| $e),
                (64, false) => mask!(u64, |$x, $y| $e),
                (_, true) => mask!(i32, |$x, $y| $e),
                (_, false) => mask!(u32, |$x, $y| $e),
            }
        };
    }
    macro_rules! unsigned {
        (|$x:ident, $y:ident| $e:expr) => {
            if bits == 64 {
                mask!(u64, |$x, $y| $e)
            } else {
                mask!(u32, |$x, $y| $e)
            }
        };
    }
    match cmp {
        Cmp::Eq | Cmp::Equ => by_type!(|x, y| x == y),
        Cmp::Ne | Cmp::Neu => by_type!(|x, y| x != y),
        Cmp::Lt | Cmp::Ltu => by_type!(|x, y| x < y),
        Cmp::Le | Cmp::Leu => by_type!(|x, y| x <= y),
        Cmp::Gt | Cmp::Gtu => by_type!(|x, y| x > y),
        Cmp::Ge | Cmp::Geu => by_type!(|x, y| x >= y),
        Cmp::Lo => unsigned!(|x, y| x < y),
        Cmp::Ls => unsigned!(|x, y| x <= y),
        Cmp::Hi => unsigned!(|x, y| x > y),
        Cmp::Hs => unsigned!(|x, y| x >= y),
        Cmp::Num => u32::MAX,
        Cmp::Nan => 0,
    }
}
