//! A fixed phase for eigenvectors and singular vectors. Each is defined only up to a unit factor
//! (a sign for reals), and cuSOLVER promises none; JAX's checks accept any. Left to the
//! decomposition library, the factor would change with its version or its blocking, and every
//! golden recording these outputs would then fail with nothing broken. So the handlers fix one:
//! the vector's entry of largest magnitude (the first within a relative 1e-9 of it, so roundoff
//! between two equal entries cannot swap the choice) is made real and positive.
use super::{Real, Scalar};
use num_traits::Float;

/// Relative margin under the largest magnitude within which an earlier entry is chosen.
const TIE: f64 = 1e-9;

/// The unit factor that makes `col`'s leading largest entry real and positive (`None` for a
/// zero or empty vector: nothing to fix).
pub(crate) fn phase_of<T: Scalar>(col: &[T]) -> Option<T> {
    let zero = <T::Real as Scalar>::ZERO;
    let max = col.iter().map(|x| x.abs2()).fold(zero, |a, b| a.max(b));
    if max.is_nan() || max == zero {
        return None;
    }
    let x = *col
        .iter()
        .find(|x| x.abs2() >= max * <T::Real as Real>::of(1.0 - TIE))?;
    Some(x.conj().scale(<T::Real as Scalar>::ONE / x.abs2().sqrt()))
}

/// Multiplies every entry of `col` by `p`.
pub(crate) fn apply<T: Scalar>(col: &mut [T], p: T) {
    for x in col {
        *x = *x * p;
    }
}

/// Fixes the phase of each `rows`-long column of the column-major `m`, on its own.
pub(crate) fn fix_columns<T: Scalar>(m: &mut [T], rows: usize) {
    if rows == 0 {
        return;
    }
    for col in m.chunks_exact_mut(rows) {
        if let Some(p) = phase_of(col) {
            apply(col, p);
        }
    }
}

/// Fixes the phase of singular pairs: column `j < k` of `u` by its own leading entry, and column
/// `j` of `v` by the same factor (so `u_j s_j v_jᴴ` is unchanged); the columns past `k` (a full
/// `u` or `v`) each on their own.
pub(crate) fn fix_pairs<T: Scalar>(u: &mut [T], m: usize, v: &mut [T], n: usize, k: usize) {
    for j in 0..k {
        let Some(p) = u.get(j * m..(j + 1) * m).and_then(phase_of) else {
            continue;
        };
        if let Some(col) = u.get_mut(j * m..(j + 1) * m) {
            apply(col, p);
        }
        if let Some(col) = v.get_mut(j * n..(j + 1) * n) {
            apply(col, p);
        }
    }
    if let Some(rest) = u.get_mut(k * m..) {
        fix_columns(rest, m);
    }
    if let Some(rest) = v.get_mut(k * n..) {
        fix_columns(rest, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::c64;

    #[test]
    fn the_leading_largest_entry_becomes_positive() {
        let mut m = vec![0.5, -0.8, 0.1, /* */ 0.6, -0.6, 0.0];
        fix_columns(&mut m, 3);
        assert_eq!(m, vec![-0.5, 0.8, -0.1, 0.6, -0.6, 0.0]);
        // Equal magnitudes a roundoff apart: the first is chosen either way.
        let mut tie = vec![-0.6, 0.600_000_000_000_000_1];
        fix_columns(&mut tie, 2);
        assert!(tie[0] > 0.0 && tie[1] < 0.0);
    }

    #[test]
    fn a_complex_vector_gets_a_real_positive_leading_entry() {
        let mut v = vec![c64::new(0.0, 0.6), c64::new(0.0, -0.8)];
        fix_columns(&mut v, 2);
        assert_eq!(v[1], c64::new(0.8, 0.0));
        assert!((v[0] - c64::new(-0.6, 0.0)).norm() < 1e-15);
    }

    #[test]
    fn pairs_keep_their_product() {
        let mut u = vec![-1.0, 0.0, 0.0, 1.0];
        let mut v = vec![-1.0, 0.0, 0.0, -1.0];
        fix_pairs(&mut u, 2, &mut v, 2, 2);
        assert_eq!(u, vec![1.0, 0.0, 0.0, 1.0]);
        assert_eq!(v, vec![1.0, 0.0, 0.0, -1.0]);
    }
}
