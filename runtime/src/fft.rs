//! The FFT thunk on host copies of the buffers, with `rustfft` (scalar code paths only, so a
//! result does not depend on the host's SIMD): the emulated device's implementation and the
//! CUDA device's (docs/runtime.md "FFT"). XLA's semantics: the transform over the trailing
//! `lengths.len()` dimensions of each of `batch` row-major arrays; IFFT and IRFFT scaled by
//! `1/N` (N the product of the lengths); RFFT keeps the `N/2+1` non-negative frequencies of the
//! last dimension, IRFFT extends its `N/2+1` inputs by Hermitian symmetry (so the imaginary
//! parts of the DC and, N even, Nyquist terms do not count, as in cuFFT).
//!
//! Single precision computes in `f32` (as cuFFT does for c64), double in `f64`.
use num_complex::Complex;
use rustfft::{FftDirection, FftNum, FftPlanner};

use crate::error::Result;
use crate::thunks::{FftKind, FftThunk};

/// The element of the host computation.
trait Real: FftNum + Copy {
    const BYTES: usize;
    fn read(b: &[u8]) -> Self;
    fn write(self, out: &mut Vec<u8>);
    fn of_usize(n: usize) -> Self;
}

impl Real for f32 {
    const BYTES: usize = 4;
    fn read(b: &[u8]) -> Self {
        let mut a = [0u8; 4];
        a.copy_from_slice(b);
        f32::from_le_bytes(a)
    }
    fn write(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes())
    }
    fn of_usize(n: usize) -> Self {
        n as f32
    }
}

impl Real for f64 {
    const BYTES: usize = 8;
    fn read(b: &[u8]) -> Self {
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        f64::from_le_bytes(a)
    }
    fn write(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes())
    }
    fn of_usize(n: usize) -> Self {
        n as f64
    }
}

/// The output bytes of `thunk` for the input bytes `input` (sizes validated at load).
pub fn execute(thunk: &FftThunk, input: &[u8]) -> Result<Vec<u8>> {
    if thunk.double {
        run::<f64>(thunk, input)
    } else {
        run::<f32>(thunk, input)
    }
}

fn run<T: Real>(t: &FftThunk, input: &[u8]) -> Result<Vec<u8>> {
    let lens: Vec<usize> = t
        .lengths
        .iter()
        .map(|&l| crate::device::host_len(l, "fft length"))
        .collect::<Result<_>>()?;
    let batch = crate::device::host_len(t.batch, "fft batch")?;
    let n_last = *lens.last().unwrap_or(&1);
    let half = n_last / 2 + 1;
    // The per-array dimensions of the complex working array: the input's, except that a real
    // input (RFFT) is read as complex and an IRFFT input keeps its n/2+1 until the last step.
    let mut dims = lens.clone();
    let mut v: Vec<Complex<T>> = match t.kind {
        FftKind::Rfft => input
            .chunks_exact(T::BYTES)
            .map(|b| Complex::new(T::read(b), T::zero()))
            .collect(),
        _ => input
            .chunks_exact(2 * T::BYTES)
            .map(|b| Complex::new(T::read(&b[..T::BYTES]), T::read(&b[T::BYTES..])))
            .collect(),
    };
    let last = dims.len() - 1;
    if t.kind == FftKind::Irfft {
        dims[last] = half;
    }
    let mut planner = FftPlanner::<T>::new();
    let direction = match t.kind {
        FftKind::Fft | FftKind::Rfft => FftDirection::Forward,
        FftKind::Ifft | FftKind::Irfft => FftDirection::Inverse,
    };
    // Every dimension but (for the real transforms) the last is a plain complex transform;
    // RFFT does the last one first and keeps n/2+1, IRFFT does it last from n/2+1.
    if t.kind == FftKind::Rfft {
        v = along(&v, batch, &dims, last, |line| {
            let mut l = line.to_vec();
            planner.plan_fft(n_last, direction).process(&mut l);
            l.truncate(half);
            l
        });
        dims[last] = half;
    }
    let complex_axes = match t.kind {
        FftKind::Fft | FftKind::Ifft => 0..dims.len(),
        FftKind::Rfft | FftKind::Irfft => 0..last,
    };
    for axis in complex_axes {
        let n = dims[axis];
        let plan = planner.plan_fft(n, direction);
        v = along(&v, batch, &dims, axis, |line| {
            let mut l = line.to_vec();
            plan.process(&mut l);
            l
        });
    }
    if t.kind == FftKind::Irfft {
        let plan = planner.plan_fft(n_last, direction);
        v = along(&v, batch, &dims, last, |line| {
            // Hermitian extension: X[n-k] = conj(X[k]); the DC (and Nyquist) imaginary parts
            // are dropped, since a real signal has none.
            let mut l = vec![Complex::new(T::zero(), T::zero()); n_last];
            for (k, z) in line.iter().enumerate().take(n_last) {
                l[k] = *z;
                if k > 0 && k < n_last {
                    l[n_last - k] = z.conj();
                }
            }
            l[0].im = T::zero();
            if n_last % 2 == 0 {
                l[n_last / 2].im = T::zero();
            }
            plan.process(&mut l);
            l
        });
        dims[last] = n_last;
    }
    let scale = match t.kind {
        FftKind::Ifft | FftKind::Irfft => {
            Some(T::one() / T::of_usize(lens.iter().product::<usize>()))
        }
        _ => None,
    };
    let width = if t.kind == FftKind::Irfft { 1 } else { 2 };
    let mut out = Vec::with_capacity(v.len() * width * T::BYTES);
    for z in v {
        let z = scale.map_or(z, |s| z * s);
        z.re.write(&mut out);
        if width == 2 {
            z.im.write(&mut out);
        }
    }
    Ok(out)
}

/// Applies `f` to every line along `axis` of each of `batch` arrays of `dims` (row-major); the
/// line keeps its length unless `f` changes it, which only the last axis does.
fn along<T: Real>(
    v: &[Complex<T>],
    batch: usize,
    dims: &[usize],
    axis: usize,
    mut f: impl FnMut(&[Complex<T>]) -> Vec<Complex<T>>,
) -> Vec<Complex<T>> {
    let n = dims[axis];
    let inner: usize = dims[axis + 1..].iter().product();
    let outer = batch * dims[..axis].iter().product::<usize>();
    let mut res = Vec::new();
    let mut out_n = n;
    let mut line = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            line.clear();
            line.extend((0..n).map(|j| v[(o * n + j) * inner + i]));
            let r = f(&line);
            if res.is_empty() {
                out_n = r.len();
                res = vec![Complex::new(T::zero(), T::zero()); outer * out_n * inner];
            }
            for (k, z) in r.into_iter().enumerate().take(out_n) {
                res[(o * out_n + k) * inner + i] = z;
            }
        }
    }
    res
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::thunks::Slice;
    use proto::xla::ShapeProto;

    /// A c128 transform over zero-sized slices (for tests of the shape alone).
    pub(crate) fn thunk(kind: FftKind, lengths: Vec<u64>, batch: u64) -> FftThunk {
        let s = Slice {
            allocation: 0,
            offset: 0,
            size: 0,
        };
        FftThunk {
            kind,
            lengths,
            batch,
            double: true,
            input: s,
            output: s,
            input_shape: ShapeProto::default(),
            output_shape: ShapeProto::default(),
        }
    }

    fn c128(v: &[(f64, f64)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (a, b) in v {
            a.write(&mut out);
            b.write(&mut out);
        }
        out
    }

    fn f64s(b: &[u8]) -> Vec<f64> {
        b.chunks_exact(8).map(f64::read).collect()
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-12, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn batched_fft_and_inverse() {
        let x = c128(&[
            (1.0, 0.0),
            (2.0, 0.0),
            (3.0, 0.0),
            (4.0, 0.0),
            (0.0, 1.0),
            (0.0, 0.0),
            (0.0, 0.0),
            (0.0, 0.0),
        ]);
        let y = execute(&thunk(FftKind::Fft, vec![4], 2), &x).unwrap();
        close(
            &f64s(&y),
            &[
                10.0, 0.0, -2.0, 2.0, -2.0, 0.0, -2.0, -2.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0,
            ],
        );
        let back = execute(&thunk(FftKind::Ifft, vec![4], 2), &y).unwrap();
        close(&f64s(&back), &f64s(&x));
    }

    #[test]
    fn rfft_irfft_two_dimensional_odd() {
        let mut x = Vec::new();
        for v in [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0] {
            v.write(&mut x);
        }
        let y = execute(&thunk(FftKind::Rfft, vec![2, 3], 1), &x).unwrap();
        let s3 = 3f64.sqrt();
        close(&f64s(&y), &[21.0, 0.0, -3.0, s3, -9.0, 0.0, 0.0, 0.0]);
        let back = execute(&thunk(FftKind::Irfft, vec![2, 3], 1), &y).unwrap();
        close(&f64s(&back), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }
}
