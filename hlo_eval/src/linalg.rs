//! `triangular-solve` and `cholesky`, per batch element, in `f64` (complex in `f64` pairs),
//! rounded once to the element type.
//!
//! triangular-solve: forward or back substitution. Only the triangle `lower=` names is read (JAX
//! passes whole matrices whose other triangle holds whatever the factorization left there), and
//! the diagonal is not read when `unit_diagonal=`.
//!
//! cholesky: XLA:GPU's meaning (cuSOLVER `potrf` in place, then XLA's NaN fill): the named
//! triangle is read and receives the factor, the other triangle keeps the operand's values (XLA
//! calls them implementation-defined; XLA:CPU's expander writes zeros there), and a matrix whose
//! leading minor of some order is not positive definite (a pivot `<= 0` or NaN) becomes all NaN.
use hlo::Complex;
use hlo::{element_count, Array, DType, Data};
use hlo::{CholeskyOptions, Transpose, TriangularSolveOptions};

use super::{invalid, EvalError};

const OP: &str = "triangular-solve";

/// The element arithmetic of the substitution: `f64` for real types, `Complex<f64>` for complex.
trait Field:
    Copy + std::ops::Sub<Output = Self> + std::ops::Mul<Output = Self> + std::ops::Div<Output = Self>
{
    const ONE: Self;
    /// Complex conjugate (the identity on reals).
    fn conj(self) -> Self;
}

impl Field for f64 {
    const ONE: f64 = 1.0;
    fn conj(self) -> f64 {
        self
    }
}

impl Field for Complex<f64> {
    const ONE: Complex<f64> = Complex { re: 1.0, im: 0.0 };
    fn conj(self) -> Complex<f64> {
        Complex::new(self.re, -self.im)
    }
}

/// `op(a)`'s element `(i, j)` for an `n x n` matrix stored row-major in `a`, where `op` is
/// `transpose_a`: `ADJOINT` also conjugates (the transpose for real values).
struct OpA<'a, T> {
    a: &'a [T],
    n: usize,
    transposed: bool,
    conjugate: bool,
    unit: bool,
}

impl<T: Field> OpA<'_, T> {
    fn at(&self, i: usize, j: usize) -> T {
        if i == j && self.unit {
            return T::ONE;
        }
        let (r, c) = if self.transposed { (j, i) } else { (i, j) };
        let v = self.a[r * self.n + c];
        if self.conjugate {
            v.conj()
        } else {
            v
        }
    }
}

/// Solves `m x = rhs` in place for a triangular `m` (`lower`: nonzeros at `i >= j`), reading
/// only that triangle of `m`.
fn substitute<T: Field>(m: &dyn Fn(usize, usize) -> T, n: usize, lower: bool, x: &mut [T]) {
    let order: Vec<usize> = if lower {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    };
    for (k, &i) in order.iter().enumerate() {
        let mut s = x[i];
        for &j in &order[..k] {
            s = s - m(i, j) * x[j];
        }
        x[i] = s / m(i, i);
    }
}

/// XLA's `TriangularSolve`: `op(a) x = b` (`left_side`) or `x op(a) = b`, for `a` of shape
/// `[..., n, n]` and `b` of `[..., n, k]` or `[..., k, n]`. The result has `b`'s shape and type.
/// Complex values solve in `f64` pairs; `ADJOINT` conjugates `a`'s elements.
pub fn triangular_solve(
    a: &Array,
    b: &Array,
    o: &TriangularSolveOptions,
) -> Result<Array, EvalError> {
    let dtype = b.dtype();
    if !(dtype.is_float() || dtype.is_complex()) || a.dtype() != dtype {
        return Err(invalid(
            OP,
            format!(
                "needs one floating-point or complex type, got {} and {dtype}",
                a.dtype()
            ),
        ));
    }
    let (ad, bd) = (a.dims(), b.dims());
    let r = ad.len();
    let shape_error = || invalid(OP, format!("a {ad:?} and b {bd:?} do not fit"));
    if r < 2 || bd.len() != r || ad[r - 1] != ad[r - 2] || ad[..r - 2] != bd[..r - 2] {
        return Err(shape_error());
    }
    let n = ad[r - 1];
    let (rows, cols) = (bd[r - 2], bd[r - 1]);
    if (o.left_side && rows != n) || (!o.left_side && cols != n) {
        return Err(shape_error());
    }
    let data = if dtype.is_complex() {
        let (av, mut bv) = (complex_values(a), complex_values(b));
        solve_all(&av, &mut bv, o, &ad[..r - 2], rows, cols);
        Data::from_complex(dtype, bv)
    } else {
        let (av, mut bv) = (a.data().to_f64_vec(), b.data().to_f64_vec());
        solve_all(&av, &mut bv, o, &ad[..r - 2], rows, cols);
        Data::from_wide_f(dtype, bv)
    };
    Array::new(bd.to_vec(), data).map_err(|e| invalid(OP, e.to_string()))
}

/// A complex array's elements widened to `f64` parts.
fn complex_values(a: &Array) -> Vec<Complex<f64>> {
    match a.data() {
        Data::C64(v) => v.iter().map(|z| z.to_c128()).collect(),
        Data::C128(v) => v.clone(),
        d => d.to_f64_vec().into_iter().map(Complex::from_real).collect(),
    }
}

/// Every batch element of `b` (`bv`, solved in place) against its `a`.
fn solve_all<T: Field>(
    av: &[T],
    bv: &mut [T],
    o: &TriangularSolveOptions,
    batch: &[usize],
    rows: usize,
    cols: usize,
) {
    let transposed = !matches!(o.transpose_a, Some(Transpose::NoTranspose) | None);
    let n = if o.left_side { rows } else { cols };
    for k in 0..element_count(batch) {
        let op = OpA {
            a: &av[k * n * n..(k + 1) * n * n],
            n,
            transposed,
            conjugate: o.transpose_a == Some(Transpose::Adjoint),
            unit: o.unit_diagonal,
        };
        // op(a) is lower triangular when exactly one of `lower` and the transpose holds.
        let op_lower = o.lower != transposed;
        let x = &mut bv[k * rows * cols..(k + 1) * rows * cols];
        solve_batch(&op, op_lower, o.left_side, rows, cols, x);
    }
}

/// One batch element: `x` (`rows x cols`, row-major) holds `b` and receives the solution.
fn solve_batch<T: Field>(
    op: &OpA<'_, T>,
    op_lower: bool,
    left: bool,
    rows: usize,
    cols: usize,
    x: &mut [T],
) {
    let n = op.n;
    let mut v = vec![T::ONE; n];
    if left {
        // Each column of x solves op(a) x_c = b_c.
        for c in 0..cols {
            (0..n).for_each(|i| v[i] = x[i * cols + c]);
            substitute(&|i, j| op.at(i, j), n, op_lower, &mut v);
            (0..n).for_each(|i| x[i * cols + c] = v[i]);
        }
    } else {
        // Each row of x solves x_r op(a) = b_r, that is op(a)^T x_r^T = b_r^T.
        for row in x.chunks_mut(cols).take(rows) {
            v.copy_from_slice(row);
            substitute(&|i, j| op.at(j, i), n, !op_lower, &mut v);
            row.copy_from_slice(&v);
        }
    }
}

/// XLA's `Cholesky` of `a` (`[..., n, n]`, floating or complex); see the module doc.
pub fn cholesky(a: &Array, o: &CholeskyOptions) -> Result<Array, EvalError> {
    const OP: &str = "cholesky";
    let dims = a.dims();
    let r = dims.len();
    if r < 2 || dims[r - 1] != dims[r - 2] {
        return Err(invalid(
            OP,
            format!("a must be [..., n, n], found {dims:?}"),
        ));
    }
    let n = dims[r - 1];
    let dtype = a.dtype();
    let mut z: Vec<Complex<f64>> = match a.data() {
        Data::C64(v) => v
            .iter()
            .map(|z| Complex::new(f64::from(z.re), f64::from(z.im)))
            .collect(),
        Data::C128(v) => v.clone(),
        d if dtype.is_float() => d.to_f64_vec().into_iter().map(Complex::from_real).collect(),
        _ => {
            return Err(invalid(
                OP,
                format!("needs a floating-point or complex operand, got {dtype}"),
            ))
        }
    };
    if n > 0 {
        for m in z.chunks_exact_mut(n * n) {
            if !potrf(m, n, o.lower) {
                m.fill(Complex::new(f64::NAN, f64::NAN));
            }
        }
    }
    let data = match dtype {
        DType::C64 => Data::C64(
            z.iter()
                .map(|z| Complex::new(z.re as f32, z.im as f32))
                .collect(),
        ),
        DType::C128 => Data::C128(z),
        _ => Data::from_wide_f(dtype, z.iter().map(|z| z.re).collect()),
    };
    Array::new(dims.to_vec(), data).map_err(|e| invalid(OP, e.to_string()))
}

/// LAPACK's unblocked `xPOTF2` on one row-major `n x n` matrix, in place: with `lower`, `A = L Lᴴ`
/// from the lower triangle (`m[i][k]`, `i >= k`); otherwise `A = Uᴴ U` from the upper triangle,
/// which is the lower algorithm on the conjugate transpose. The diagonal is read as real. False
/// when a pivot is not positive (or NaN): the factorization stops there.
fn potrf(m: &mut [Complex<f64>], n: usize, lower: bool) -> bool {
    // (i, k) of the lower-triangular view.
    let at = |i: usize, k: usize| if lower { i * n + k } else { k * n + i };
    let get = |m: &[Complex<f64>], i: usize, k: usize| {
        let v = m[at(i, k)];
        if lower {
            v
        } else {
            Complex::new(v.re, -v.im)
        }
    };
    for j in 0..n {
        let mut ajj = m[at(j, j)].re;
        for k in 0..j {
            let l = get(m, j, k);
            ajj -= l.re * l.re + l.im * l.im;
        }
        if ajj.is_nan() || ajj <= 0.0 {
            return false;
        }
        let d = ajj.sqrt();
        m[at(j, j)] = Complex::from_real(d);
        for i in j + 1..n {
            let mut s = get(m, i, j);
            for k in 0..j {
                let (x, y) = (get(m, i, k), get(m, j, k));
                // s -= x * conj(y)
                s.re -= x.re * y.re + x.im * y.im;
                s.im -= x.im * y.re - x.re * y.im;
            }
            let v = Complex::new(s.re / d, s.im / d);
            m[at(i, j)] = if lower { v } else { Complex::new(v.re, -v.im) };
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use hlo::DType;

    fn arr(dims: &[usize], v: &[f64]) -> Array {
        Array::new(dims.to_vec(), Data::from_wide_f(DType::F64, v.to_vec())).unwrap()
    }

    fn opts(left_side: bool, lower: bool, unit: bool, t: Transpose) -> TriangularSolveOptions {
        TriangularSolveOptions {
            left_side,
            lower,
            unit_diagonal: unit,
            transpose_a: Some(t),
        }
    }

    /// The unread triangle and (for unit diagonals) the diagonal hold NaN: reading them would
    /// poison the result.
    fn poisoned(full: &[[f64; 3]; 3], lower: bool, unit: bool) -> Vec<f64> {
        let mut v = Vec::new();
        for (i, row) in full.iter().enumerate() {
            for (j, &x) in row.iter().enumerate() {
                let read = if lower { i >= j } else { i <= j };
                v.push(if !read || (unit && i == j) {
                    f64::NAN
                } else {
                    x
                });
            }
        }
        v
    }

    #[test]
    fn every_option_combination_solves_and_reads_only_its_triangle() {
        // A triangle with diagonal 2, 3, 4 and ones elsewhere; b is 3x2 (left) or 2x3 (right).
        let full = [[2.0, 1.0, 1.0], [1.0, 3.0, 1.0], [1.0, 1.0, 4.0]];
        let bvals = [1.0, -2.0, 0.5, 3.0, 4.0, -1.0];
        for left in [true, false] {
            for lower in [true, false] {
                for unit in [true, false] {
                    for t in [
                        Transpose::NoTranspose,
                        Transpose::Transpose,
                        Transpose::Adjoint,
                    ] {
                        let o = opts(left, lower, unit, t);
                        let a = arr(&[3, 3], &poisoned(&full, lower, unit));
                        let bd = if left { [3, 2] } else { [2, 3] };
                        let x = triangular_solve(&a, &arr(&bd, &bvals), &o).unwrap();
                        check(&full, &o, &bd, &bvals, &x.data().to_f64_vec());
                    }
                }
            }
        }
    }

    /// Multiplies back: op(a) x (or x op(a)) must give b.
    fn check(
        full: &[[f64; 3]; 3],
        o: &TriangularSolveOptions,
        bd: &[usize; 2],
        b: &[f64],
        x: &[f64],
    ) {
        let t = o.transpose_a != Some(Transpose::NoTranspose);
        let m = |i: usize, j: usize| {
            let (r, c) = if t { (j, i) } else { (i, j) };
            let read = if o.lower { r >= c } else { r <= c };
            match (read, r == c && o.unit_diagonal) {
                (_, true) => 1.0,
                (true, false) => full[r][c],
                (false, false) => 0.0,
            }
        };
        let (rows, cols) = (bd[0], bd[1]);
        for i in 0..rows {
            for j in 0..cols {
                let got: f64 = if o.left_side {
                    (0..3).map(|k| m(i, k) * x[k * cols + j]).sum()
                } else {
                    (0..3).map(|k| x[i * cols + k] * m(k, j)).sum()
                };
                assert!(
                    (got - b[i * cols + j]).abs() < 1e-12,
                    "{o:?}: {got} vs {}",
                    b[i * cols + j]
                );
            }
        }
    }

    #[test]
    fn batches_are_solved_independently() {
        let a = arr(&[2, 1, 1], &[2.0, 4.0]);
        let b = arr(&[2, 1, 2], &[2.0, 4.0, 8.0, 4.0]);
        let x = triangular_solve(&a, &b, &opts(true, true, false, Transpose::NoTranspose)).unwrap();
        assert_eq!(x.data().to_f64_vec(), vec![1.0, 2.0, 2.0, 1.0]);
    }

    #[test]
    fn mismatched_operands_are_refused() {
        let a = arr(&[2, 2], &[1.0; 4]);
        let b = arr(&[3, 1], &[1.0; 3]);
        let e = triangular_solve(&a, &b, &opts(true, true, false, Transpose::NoTranspose));
        assert_eq!(
            e.unwrap_err().to_string(),
            "triangular-solve: a [2, 2] and b [3, 1] do not fit"
        );
    }

    #[test]
    fn cholesky_writes_its_triangle_and_keeps_the_other() {
        // [[4, 2], [2, 5]] = L Lᵀ with L = [[2, 0], [1, 2]]; 9 stands where the factor is not.
        let lower = CholeskyOptions { lower: true };
        let a = arr(&[2, 2], &[4.0, 9.0, 2.0, 5.0]);
        let l = cholesky(&a, &lower).unwrap();
        assert_eq!(l.data().to_f64_vec(), vec![2.0, 9.0, 1.0, 2.0]);
        let a = arr(&[2, 2], &[4.0, 2.0, 9.0, 5.0]);
        let u = cholesky(&a, &CholeskyOptions { lower: false }).unwrap();
        assert_eq!(u.data().to_f64_vec(), vec![2.0, 1.0, 9.0, 2.0]);
        // A batch: the second matrix's second pivot is 1 - 4 < 0, so it is all NaN.
        let a = arr(&[2, 2, 2], &[4.0, 0.0, 2.0, 5.0, 1.0, 0.0, 2.0, 1.0]);
        let v = cholesky(&a, &lower).unwrap().data().to_f64_vec();
        assert_eq!(v[..4], [2.0, 0.0, 1.0, 2.0]);
        assert!(v[4..].iter().all(|x| x.is_nan()));
    }

    #[test]
    fn complex_cholesky_fails_to_nan_in_both_parts() {
        let z = |re, im| Complex::new(re, im);
        let a = Array::new(
            vec![2, 2],
            Data::C128(vec![z(1.0, 0.0), z(0.0, 0.0), z(0.0, 2.0), z(1.0, 0.0)]),
        )
        .unwrap();
        let Data::C128(v) = cholesky(&a, &CholeskyOptions { lower: true })
            .unwrap()
            .data()
            .clone()
        else {
            panic!("not c128")
        };
        assert!(v.iter().all(|z| z.re.is_nan() && z.im.is_nan()), "{v:?}");
        let e = cholesky(&arr(&[2, 3], &[1.0; 6]), &CholeskyOptions::default());
        assert_eq!(
            e.unwrap_err().to_string(),
            "cholesky: a must be [..., n, n], found [2, 3]"
        );
    }
}
