//! `ex2.approx.f32` as the emulator defines it (`numeric::fapprox`: evaluated in f64, rounded
//! to f32 once), without a libm call per lane.
//!
//! libm's `exp2` was a fifth of the host time of a softmax or logsumexp kernel: it does not
//! vectorize and costs ~20 ns a call. [`ex2_f32`] gives the *same bits* for every f32 input
//! (checked over all 2^32 of them, `exhaustive_against_libm` below), so neither engine's
//! results nor any golden output moved:
//!
//! * `2^x = 2^n · 2^f` with `n = round(x)` and `f = x - n` in `[-0.5, 0.5]` (exact: `x` is an
//!   f32 held in an f64), `2^f` by its Taylor series to degree 9 (truncation below 2^-37
//!   relative) in Horner form with fused multiply-adds, `2^n` built from its exponent bits.
//!   libm's f64 `exp2` is within 1 ulp (2^-52).
//! * Two values that close round to the same f32 unless `2^x` lies near the midpoint of two
//!   f32 values. Such lanes (the result's 29 bits below the f32 mantissa within 2^17 of the
//!   midpoint: about one input in 2^11) and lanes whose result is an f32 subnormal (a different
//!   rounding position) take libm's path. (Degree 13 with a margin of 2^8 gave the same bits
//!   with four more `fma`s per lane: the row kernel's time is its polynomial.) Everything else is selects, so a row of 32 lanes
//!   compiles to vector code where the host has FMA.
//!
//! [`ex2_f32_row`] is the fast engine's row kernel; [`ex2_f32`] the general path's scalar.

/// `ln(2)^k / k!` for k = 0..=9: the Taylor coefficients of `2^f`. Degree 9 leaves a
/// truncation error below 7e-12 relative (2^-37) on `|f| <= 1/2`, which [`MARGIN`] covers.
const C: [f64; 10] = [
    1.0,
    std::f64::consts::LN_2,
    0.240_226_506_959_100_72,
    0.055_504_108_664_821_58,
    0.009_618_129_107_628_477,
    0.001_333_355_814_642_844_3,
    0.000_154_035_303_933_816_1,
    1.525_273_380_405_984_1e-5,
    1.321_548_679_014_431e-6,
    1.017_808_600_923_97e-7,
];

/// Bits below an f32 mantissa in an f64 mantissa.
const LOW: u32 = 52 - 23;
/// How far (in f64 ulps) from an f32 midpoint a result must be for its rounding to be trusted:
/// 2^17 ulps (2^-35 relative) is above the polynomial's error (2^-37 relative, 2^15.5 ulps)
/// plus libm's (< 1 ulp). About one lane in 2^11 lands that close and asks libm.
const MARGIN: i64 = 1 << 17;

/// The f64 value of `2^x` and whether rounding it to f32 is guaranteed to give what rounding
/// libm's `exp2(x)` gives (else the caller asks libm). Branch-free.
#[inline(always)]
fn core(x: f64) -> (f64, bool) {
    // Inputs outside [-126, 128) give subnormals, 0, inf or NaN: libm's path decides them.
    let normal = (-126.0..128.0).contains(&x);
    let xc = if normal { x } else { 0.0 };
    let n = xc.round_ties_even();
    let f = xc - n;
    let mut p = C[9];
    for &c in C[..9].iter().rev() {
        p = p.mul_add(f, c);
    }
    // 2^n from n's biased exponent, without a float-to-integer conversion (`as i64` saturates,
    // so it compiles to scalar code per lane even with AVX-512): n + 1023 is an integer in
    // [897, 1151), so n + 1023 + 2^52 is exact and its low mantissa bits are n + 1023; the
    // shift moves them into the exponent field and drops the rest.
    let biased = (n + (1023.0 + 4_503_599_627_370_496.0)).to_bits();
    let scale = f64::from_bits(biased << 52);
    let r = p * scale;
    let low = (r.to_bits() & ((1u64 << LOW) - 1)) as i64;
    let near_tie = (low - (1i64 << (LOW - 1))).abs() < MARGIN;
    // A result rounding to 2^-126 or below could land on a subnormal: leave those to libm too.
    let ok = normal && !near_tie && r >= f64::from(f32::MIN_POSITIVE) * 2.0;
    (r, ok)
}

/// `(x as f64).exp2() as f32`, bit for bit (NaN included: the cast keeps libm's quiet NaN).
#[inline]
pub(crate) fn ex2_f32(x: f32) -> f32 {
    let x = f64::from(x);
    match core(x) {
        (r, true) => r as f32,
        _ => x.exp2() as f32,
    }
}

/// [`ex2_f32`] of the low 32 bits of each lane, as f32 bits zero-extended (NaN canonical, as
/// `numeric::Fmt::from_f64_rn` makes it).
#[inline(always)]
pub(crate) fn ex2_f32_row<const N: usize>(a: &[u64; N]) -> [u64; N] {
    const { assert!(N <= 64, "the lane mask is a u64") };
    let mut out = [0u64; N];
    // The lanes libm decides, as a mask: one test for the whole row in the common case.
    let mut bad = 0u64;
    for l in 0..N {
        let (r, good) = core(f64::from(f32::from_bits(a[l] as u32)));
        out[l] = u64::from((r as f32).to_bits());
        bad |= u64::from(!good) << l;
    }
    while bad != 0 {
        let l = bad.trailing_zeros() as usize;
        bad &= bad - 1;
        out[l] = u64::from(libm_lane(a[l] as u32));
    }
    out
}

/// [`ex2_f32_row`] on 32-bit lanes (a tape's slots, `exec::tape`), into `out`: the same bits.
#[inline(always)]
pub(crate) fn ex2_f32_lanes<const N: usize>(a: &[u32; N], out: &mut [u32; N]) {
    const { assert!(N <= 64, "the lane mask is a u64") };
    let mut bad = 0u64;
    for l in 0..N {
        let (r, good) = core(f64::from(f32::from_bits(a[l])));
        out[l] = (r as f32).to_bits();
        bad |= u64::from(!good) << l;
    }
    while bad != 0 {
        let l = bad.trailing_zeros() as usize;
        bad &= bad - 1;
        out[l] = libm_lane(a[l]);
    }
}

/// A lane [`core`] cannot decide: libm's `exp2`, rounded to f32 as the general path rounds.
#[cold]
fn libm_lane(bits: u32) -> u32 {
    let v = f64::from(f32::from_bits(bits)).exp2();
    super::numeric::Fmt::F32.from_f64_rn(v) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn libm(bits: u32) -> u32 {
        let v = f64::from(f32::from_bits(bits)).exp2() as f32;
        if v.is_nan() {
            0x7fff_ffff
        } else {
            v.to_bits()
        }
    }

    fn ours(bits: u32) -> u32 {
        let v = ex2_f32(f32::from_bits(bits));
        if v.is_nan() {
            0x7fff_ffff
        } else {
            v.to_bits()
        }
    }

    /// Every f32 input from which a stride of 4,099 starts (about a million, every exponent),
    /// plus the edges of each range `core` treats apart.
    #[test]
    fn same_bits_as_libm() {
        let mut edges: Vec<u32> = [
            -152.0f32, -150.0, -149.5, -127.0, -126.0, -125.999, 0.0, -0.0,
        ]
        .iter()
        .chain(&[
            1.0,
            127.0,
            127.999_99,
            128.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ])
        .map(|v| v.to_bits())
        .collect();
        edges.extend((0..u32::MAX / 4099).map(|i| i * 4099));
        for bits in edges {
            assert_eq!(
                ours(bits),
                libm(bits),
                "{bits:#x} ({})",
                f32::from_bits(bits)
            );
        }
    }

    /// The row kernel is the scalar on each lane.
    #[test]
    fn row_is_scalar_per_lane() {
        let xs: Vec<u64> = (0..32u32)
            .map(|i| u64::from((i as f32 * 7.25 - 130.0).to_bits()))
            .chain([u64::from(f32::NAN.to_bits())])
            .collect();
        let row: [u64; 32] = xs[1..33].try_into().unwrap();
        let out = ex2_f32_row(&row);
        for l in 0..32 {
            assert_eq!(out[l] as u32, ours(row[l] as u32), "lane {l}");
        }
    }

    /// All 2^32 inputs (about a minute in release: `cargo test --release -p ptx exhaustive --
    /// --ignored`).
    #[test]
    #[ignore]
    fn exhaustive_against_libm() {
        let bad = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..16u32 {
                let bad = &bad;
                s.spawn(move || {
                    let lo = (u64::from(t) << 28) as u32;
                    for bits in lo..=lo | ((1 << 28) - 1) {
                        if ours(bits) != libm(bits) {
                            bad.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            eprintln!("{bits:#x}");
                        }
                    }
                });
            }
        });
        assert_eq!(bad.into_inner(), 0);
    }
}
