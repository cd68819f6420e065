//! `fft` (FFT, IFFT, RFFT, IRFFT) as XLA defines it: a discrete Fourier transform over the
//! last `fft_length.len()` dimensions, IFFT scaled by `1/N`, RFFT keeping the `N/2+1`
//! non-negative frequencies of the last dimension, IRFFT taking those and giving `N` reals.
//!
//! The evaluator is the oracle, so this is the plain DFT in `f64` whatever the element type:
//! each twiddle factor is `exp(±2πi·m/N)` with `m = j·k mod N` reduced exactly in integers,
//! so the only rounding is the `f64` sums, `O(N·eps64)`, far below what a `c64` result can
//! show. Cost is `N` multiply-adds per output element.
use hlo::Complex;
use hlo::FftType;
use hlo::{Array, Data};

use super::{invalid, EvalError};

type C = (f64, f64);

/// Most multiply-adds one evaluation may take (a DFT is quadratic in the length).
const MAX_WORK: u128 = 1 << 34;

/// `fft` of `x` with XLA's semantics; `len` is `fft_length`.
pub fn fft(x: &Array, t: FftType, len: &[i64]) -> Result<Array, EvalError> {
    let bad = |m: String| invalid("fft", m);
    let rank = x.dims().len();
    if len.is_empty() || len.len() > 3 || len.len() > rank {
        return Err(bad(format!("fft_length {len:?} for a rank-{rank} operand")));
    }
    let lens: Vec<usize> = len
        .iter()
        .map(|&n| usize::try_from(n).ok().filter(|&n| n > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| bad(format!("fft_length {len:?} must be positive")))?;
    let first = rank - lens.len();
    let last = rank - 1;
    let n_last = lens[lens.len() - 1];
    let (mut v, wide): (Vec<C>, bool) = match (t, x.data()) {
        (FftType::Rfft, Data::F32(d)) => (d.iter().map(|&r| (f64::from(r), 0.0)).collect(), false),
        (FftType::Rfft, Data::F64(d)) => (d.iter().map(|&r| (r, 0.0)).collect(), true),
        (FftType::Rfft, d) => {
            return Err(bad(format!("rfft needs f32 or f64, found {}", d.dtype())))
        }
        (_, Data::C64(d)) => (
            d.iter()
                .map(|z| (f64::from(z.re), f64::from(z.im)))
                .collect(),
            false,
        ),
        (_, Data::C128(d)) => (d.iter().map(|z| (z.re, z.im)).collect(), true),
        (_, d) => {
            return Err(bad(format!(
                "{} needs c64 or c128, found {}",
                t.name(),
                d.dtype()
            )))
        }
    };
    let mut dims = x.dims().to_vec();
    for (k, &n) in lens.iter().enumerate() {
        let want = if k + 1 == lens.len() && t == FftType::Irfft {
            n / 2 + 1
        } else {
            n
        };
        if dims[first + k] != want {
            return Err(bad(format!(
                "{} of {}: dimension {} must be {want} for fft_length {len:?}",
                t.name(),
                x.shape_string(),
                first + k
            )));
        }
    }
    let total: usize = dims.iter().product();
    let work = lens
        .iter()
        .fold(0u128, |w, &n| w + total as u128 * (n as u128 + 1));
    if work > MAX_WORK {
        return Err(bad(format!(
            "{work} multiply-adds exceed the evaluator's {MAX_WORK}"
        )));
    }
    match t {
        FftType::Fft | FftType::Ifft => {
            let inverse = t == FftType::Ifft;
            for axis in first..rank {
                let n = dims[axis];
                v = along(&v, &dims, axis, n, |line| dft(line, n, inverse, n));
            }
        }
        FftType::Rfft => {
            // The last dimension first, keeping n/2+1 outputs; the others are then plain FFTs.
            let keep = n_last / 2 + 1;
            v = along(&v, &dims, last, keep, |line| dft(line, n_last, false, keep));
            dims[last] = keep;
            for axis in first..last {
                let n = dims[axis];
                v = along(&v, &dims, axis, n, |line| dft(line, n, false, n));
            }
        }
        FftType::Irfft => {
            for axis in first..last {
                let n = dims[axis];
                v = along(&v, &dims, axis, n, |line| dft(line, n, true, n));
            }
            v = along(&v, &dims, last, n_last, |line| c2r(line, n_last));
            dims[last] = n_last;
        }
    }
    let data = match (t, wide) {
        (FftType::Irfft, false) => Data::F32(v.iter().map(|z| z.0 as f32).collect()),
        (FftType::Irfft, true) => Data::F64(v.iter().map(|z| z.0).collect()),
        (_, false) => Data::C64(
            v.iter()
                .map(|z| Complex::new(z.0 as f32, z.1 as f32))
                .collect(),
        ),
        (_, true) => Data::C128(v.iter().map(|z| Complex::new(z.0, z.1)).collect()),
    };
    Ok(Array::new(dims, data)?)
}

/// `exp(sign·2πi·m/n)` for `m` in `0..n`.
fn twiddles(n: usize, inverse: bool) -> Vec<C> {
    let sign = if inverse { 1.0 } else { -1.0 };
    (0..n)
        .map(|m| {
            let (s, c) = (sign * std::f64::consts::TAU * m as f64 / n as f64).sin_cos();
            (c, s)
        })
        .collect()
}

/// The `out` first outputs of the length-`n` DFT of `line` (IFFT scaled by `1/n`).
fn dft(line: &[C], n: usize, inverse: bool, out: usize) -> Vec<C> {
    let w = twiddles(n, inverse);
    let scale = if inverse { 1.0 / n as f64 } else { 1.0 };
    (0..out)
        .map(|k| {
            let (mut re, mut im) = (0.0, 0.0);
            for (j, x) in line.iter().enumerate() {
                let t = w[(j * k) % n];
                re += x.0 * t.0 - x.1 * t.1;
                im += x.0 * t.1 + x.1 * t.0;
            }
            (re * scale, im * scale)
        })
        .collect()
}

/// The length-`n` real inverse DFT of the `n/2+1` half spectrum `line`: the spectrum is
/// extended by Hermitian symmetry, so the imaginary parts of the DC (and, `n` even, Nyquist)
/// terms do not count, as in cuFFT and numpy.
fn c2r(line: &[C], n: usize) -> Vec<C> {
    let w = twiddles(n, true);
    (0..n)
        .map(|j| {
            let mut re = 0.0;
            for (k, x) in line.iter().enumerate() {
                let t = w[(j * k) % n];
                let weight = if k == 0 || 2 * k == n { 1.0 } else { 2.0 };
                re += weight * (x.0 * t.0 - x.1 * t.1);
            }
            (re / n as f64, 0.0)
        })
        .collect()
}

/// Applies `f` to every line of `v` (row-major, `dims`) along `axis`; each line becomes
/// `out` long.
fn along(v: &[C], dims: &[usize], axis: usize, out: usize, f: impl Fn(&[C]) -> Vec<C>) -> Vec<C> {
    let n = dims[axis];
    let inner: usize = dims[axis + 1..].iter().product();
    let outer: usize = dims[..axis].iter().product();
    let mut res = vec![(0.0, 0.0); outer * out * inner];
    let mut line = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            line.clear();
            line.extend((0..n).map(|j| v[(o * n + j) * inner + i]));
            for (k, z) in f(&line).into_iter().enumerate() {
                res[(o * out + k) * inner + i] = z;
            }
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c128(dims: Vec<usize>, v: &[(f64, f64)]) -> Array {
        let d = v.iter().map(|&(a, b)| Complex::new(a, b)).collect();
        Array::new(dims, Data::C128(d)).unwrap()
    }

    fn close(a: &Array, b: &[(f64, f64)]) {
        let Data::C128(v) = a.data() else {
            panic!("{a:?}")
        };
        for (z, w) in v.iter().zip(b) {
            assert!(
                (z.re - w.0).abs() < 1e-12 && (z.im - w.1).abs() < 1e-12,
                "{v:?} vs {b:?}"
            );
        }
        assert_eq!(v.len(), b.len());
    }

    #[test]
    fn fft_ifft_round_trip_and_known_values() {
        let x = c128(vec![4], &[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)]);
        let y = fft(&x, FftType::Fft, &[4]).unwrap();
        close(&y, &[(10.0, 0.0), (-2.0, 2.0), (-2.0, 0.0), (-2.0, -2.0)]);
        let back = fft(&y, FftType::Ifft, &[4]).unwrap();
        close(&back, &[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)]);
    }

    #[test]
    fn rfft_irfft_odd_and_two_dimensional() {
        let r = Array::new(vec![2, 3], Data::F64(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])).unwrap();
        let y = fft(&r, FftType::Rfft, &[2, 3]).unwrap();
        assert_eq!(y.dims(), &[2, 2]);
        let s3 = 3f64.sqrt();
        close(&y, &[(21.0, 0.0), (-3.0, s3), (-9.0, 0.0), (0.0, 0.0)]);
        let back = fft(&y, FftType::Irfft, &[2, 3]).unwrap();
        let Data::F64(v) = back.data() else {
            panic!("{back:?}")
        };
        for (a, b) in v.iter().zip([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]) {
            assert!((a - b).abs() < 1e-12, "{v:?}");
        }
    }

    #[test]
    fn refuses_mismatched_lengths() {
        let x = c128(vec![4], &[(0.0, 0.0); 4]);
        let e = fft(&x, FftType::Fft, &[8]).unwrap_err().to_string();
        assert!(
            e.contains("dimension 0 must be 8 for fft_length [8]"),
            "{e}"
        );
    }
}
