//! `triangular-solve`: forward or back substitution per batch element, in `f64`, rounded once to
//! the element type.
//!
//! Only the triangle `lower=` names is read (JAX passes whole matrices whose other triangle holds
//! whatever the factorization left there), and the diagonal is not read when `unit_diagonal=`.
use hlo::ir::{Transpose, TriangularSolveOptions};
use hlo::literal::{element_count, Array, Data};

use super::{invalid, EvalError};

const OP: &str = "triangular-solve";

/// `op(a)`'s element `(i, j)` for an `n x n` matrix stored row-major in `a`, where `op` is
/// `transpose_a` (real values: `ADJOINT` is the transpose).
struct OpA<'a> {
    a: &'a [f64],
    n: usize,
    transposed: bool,
    unit: bool,
}

impl OpA<'_> {
    fn at(&self, i: usize, j: usize) -> f64 {
        if i == j && self.unit {
            return 1.0;
        }
        let (r, c) = if self.transposed { (j, i) } else { (i, j) };
        self.a[r * self.n + c]
    }
}

/// Solves `m x = rhs` in place for a triangular `m` (`lower`: nonzeros at `i >= j`), reading
/// only that triangle of `m`.
fn substitute(m: &dyn Fn(usize, usize) -> f64, n: usize, lower: bool, x: &mut [f64]) {
    let order: Vec<usize> = if lower {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    };
    for (k, &i) in order.iter().enumerate() {
        let mut s = x[i];
        for &j in &order[..k] {
            s -= m(i, j) * x[j];
        }
        x[i] = s / m(i, i);
    }
}

/// XLA's `TriangularSolve`: `op(a) x = b` (`left_side`) or `x op(a) = b`, for `a` of shape
/// `[..., n, n]` and `b` of `[..., n, k]` or `[..., k, n]`. The result has `b`'s shape and type.
pub fn triangular_solve(
    a: &Array,
    b: &Array,
    o: &TriangularSolveOptions,
) -> Result<Array, EvalError> {
    let dtype = b.dtype();
    if !dtype.is_float() || a.dtype() != dtype {
        return Err(invalid(
            OP,
            format!(
                "needs one floating-point type, got {} and {dtype}",
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
    let transposed = !matches!(o.transpose_a, Some(Transpose::NoTranspose) | None);
    let (av, mut bv) = (a.data().to_f64_vec(), b.data().to_f64_vec());
    let batches = element_count(&ad[..r - 2]);
    for batch in 0..batches {
        let op = OpA {
            a: &av[batch * n * n..(batch + 1) * n * n],
            n,
            transposed,
            unit: o.unit_diagonal,
        };
        // op(a) is lower triangular when exactly one of `lower` and the transpose holds.
        let op_lower = o.lower != transposed;
        let x = &mut bv[batch * rows * cols..(batch + 1) * rows * cols];
        solve_batch(&op, op_lower, o.left_side, rows, cols, x);
    }
    Array::new(bd.to_vec(), Data::from_wide_f(dtype, bv)).map_err(|e| invalid(OP, e.to_string()))
}

/// One batch element: `x` (`rows x cols`, row-major) holds `b` and receives the solution.
fn solve_batch(op: &OpA<'_>, op_lower: bool, left: bool, rows: usize, cols: usize, x: &mut [f64]) {
    let n = op.n;
    let mut v = vec![0.0; n];
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

#[cfg(test)]
mod tests {
    use super::*;
    use hlo::literal::DType;

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
}
