//! The FFT thunk on a CUDA device through cuFFT (`cufftPlanMany` and `cufftExec*`, loaded
//! dynamically like cuBLAS), as XLA:GPU's `FftThunk` runs it: one plan per transform shape,
//! created at first use and kept until the device closes; IFFT and IRFFT scaled by `1/N`
//! afterwards (cuFFT's inverse is unnormalized), as XLA does with a BLAS `scal`.
//!
//! Layout: the thunk's buffers are dense row-major arrays whose minor dimensions are the
//! transformed ones, which is cuFFT's basic data layout (`inembed` / `onembed` null): batch
//! distance `N` for complex and real data, `N/n_last*(n_last/2+1)` for the half spectrum.
//!
//! cuFFT may overwrite the input of an out-of-place transform (always for complex-to-real, and
//! for some multi-dimensional shapes), while an FFT thunk's input is an ordinary buffer other
//! thunks may read later: the caller transforms a scratch copy of it.
use std::collections::HashMap;
use std::ffi::c_int;

use cudarc::cufft::{result, sys};

use crate::error::{Error, Result};
use crate::thunks::{FftKind, FftThunk};

/// Whether libcufft can be loaded on this machine.
pub(super) fn present() -> bool {
    // SAFETY: only tries to open the shared library.
    unsafe { sys::is_culib_present() }
}

/// What identifies a plan: the transform, its precision, its lengths and its batch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PlanKey {
    kind: FftKind,
    double: bool,
    lengths: Vec<c_int>,
    batch: c_int,
}

/// cuFFT plans by shape; each is destroyed when the device drops (before its context).
#[derive(Default)]
pub(super) struct Plans {
    plans: HashMap<PlanKey, sys::cufftHandle>,
}

// SAFETY: a plan handle is an integer naming driver-side state; every use (exec, destroy)
// happens with the owning device's `fft` mutex held, which serializes them as cuFFT asks.
unsafe impl Send for Plans {}

impl Drop for Plans {
    fn drop(&mut self) {
        for (_, plan) in self.plans.drain() {
            // SAFETY: each plan was created here and is destroyed once.
            let _ = unsafe { result::destroy(plan) };
        }
    }
}

/// The transform's shape in cuFFT's `int`s; `None` when a length or the batch does not fit
/// (the caller then runs the host FFT, as for a gemm past `i32`).
fn key(t: &FftThunk) -> Option<PlanKey> {
    let lengths = t
        .lengths
        .iter()
        .map(|&l| c_int::try_from(l).ok())
        .collect::<Option<Vec<_>>>()?;
    Some(PlanKey {
        kind: t.kind,
        double: t.double,
        lengths,
        batch: c_int::try_from(t.batch).ok()?,
    })
}

fn cufft_type(k: &PlanKey) -> sys::cufftType {
    use sys::cufftType::*;
    match (k.kind, k.double) {
        (FftKind::Fft | FftKind::Ifft, false) => CUFFT_C2C,
        (FftKind::Fft | FftKind::Ifft, true) => CUFFT_Z2Z,
        (FftKind::Rfft, false) => CUFFT_R2C,
        (FftKind::Rfft, true) => CUFFT_D2Z,
        (FftKind::Irfft, false) => CUFFT_C2R,
        (FftKind::Irfft, true) => CUFFT_Z2D,
    }
}

fn err(what: &str, e: result::CufftError) -> Error {
    Error::internal(format!("cuFFT {what}: {e:?}"))
}

impl Plans {
    /// Runs the transform from `input` (a scratch copy cuFFT may overwrite) into `output` on
    /// the null stream, unscaled. `Ok(false)`: the shape does not fit cuFFT's `int`s, nothing
    /// was issued.
    pub(super) fn execute(&mut self, t: &FftThunk, input: u64, output: u64) -> Result<bool> {
        let Some(k) = key(t) else {
            return Ok(false);
        };
        let plan = match self.plans.get(&k) {
            Some(&p) => p,
            None => {
                let mut n = k.lengths.clone();
                // SAFETY: `n` holds `rank` lengths; null embeds select the basic layout, which
                // ignores the strides and distances.
                let p = unsafe {
                    result::plan_many(
                        n.len() as c_int,
                        n.as_mut_ptr(),
                        std::ptr::null_mut(),
                        1,
                        0,
                        std::ptr::null_mut(),
                        1,
                        0,
                        cufft_type(&k),
                        k.batch,
                    )
                }
                .map_err(|e| err("cufftPlanMany", e))?;
                self.plans.insert(k.clone(), p);
                p
            }
        };
        let (i, o) = (input as *mut u8, output as *mut u8);
        const FORWARD: c_int = -1;
        const INVERSE: c_int = 1;
        // SAFETY: `input` and `output` are device allocations of this context holding the
        // plan's input and output (the thunk's slices, sized at load), and the plan matches the
        // transform.
        unsafe {
            match (k.kind, k.double) {
                (FftKind::Fft, false) => result::exec_c2c(plan, i.cast(), o.cast(), FORWARD),
                (FftKind::Ifft, false) => result::exec_c2c(plan, i.cast(), o.cast(), INVERSE),
                (FftKind::Fft, true) => result::exec_z2z(plan, i.cast(), o.cast(), FORWARD),
                (FftKind::Ifft, true) => result::exec_z2z(plan, i.cast(), o.cast(), INVERSE),
                (FftKind::Rfft, false) => result::exec_r2c(plan, i.cast(), o.cast()),
                (FftKind::Rfft, true) => result::exec_d2z(plan, i.cast(), o.cast()),
                (FftKind::Irfft, false) => result::exec_c2r(plan, i.cast(), o.cast()),
                (FftKind::Irfft, true) => result::exec_z2d(plan, i.cast(), o.cast()),
            }
        }
        .map_err(|e| err("exec", e))?;
        Ok(true)
    }
}

/// `1/N` for an inverse transform (N the product of the lengths), `None` for a forward one.
pub(super) fn inverse_scale(t: &FftThunk) -> Option<f64> {
    match t.kind {
        FftKind::Ifft | FftKind::Irfft => {
            Some(1.0 / t.lengths.iter().map(|&l| l as f64).product::<f64>())
        }
        FftKind::Fft | FftKind::Rfft => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fft::tests::thunk;

    #[test]
    fn shapes_past_cuffts_ints_fall_back() {
        assert!(key(&thunk(FftKind::Fft, vec![8, 4], 3)).is_some());
        assert!(key(&thunk(FftKind::Fft, vec![1 << 31], 1)).is_none());
        assert!(key(&thunk(FftKind::Fft, vec![8], 1 << 31)).is_none());
    }

    #[test]
    fn inverse_transforms_are_scaled_by_one_over_n() {
        assert_eq!(
            inverse_scale(&thunk(FftKind::Ifft, vec![8, 4], 3)),
            Some(1.0 / 32.0)
        );
        assert_eq!(
            inverse_scale(&thunk(FftKind::Irfft, vec![6], 1)),
            Some(1.0 / 6.0)
        );
        assert_eq!(inverse_scale(&thunk(FftKind::Fft, vec![8], 1)), None);
        assert_eq!(inverse_scale(&thunk(FftKind::Rfft, vec![8], 1)), None);
    }
}
