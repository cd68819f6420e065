//! `cusolver_geqrf_ffi` (Householder QR) and `cusolver_orgqr_ffi` (forming `Q`).
//!
//! Hand-written (LAPACK's unblocked `xGEQR2`/`xLARFG` and `xORG2R`/`xUNG2R`) because the outputs
//! are LAPACK's packed convention, which `orgqr` and JAX's later steps read back: `R` in the upper
//! triangle, the Householder vectors `v` (with `v[0] = 1` implied) below the diagonal, and
//! `tau` with `H = I - tau v vᴴ`, `beta = -sign(Re alpha) ‖(alpha, x)‖` (so `R`'s diagonal may be
//! negative), `tau = 0` when there is nothing to annihilate.
use super::check::{cat, Checker, Operand, Res, FLOATS};
use super::schema::{CallShapes, ShapeError};
use super::HandlerError;
use super::{operand, put, split_batch, with_scalar, Real, Scalar};
use crate::registry::CallFrame;
use num_traits::Float;

/// Operand `a`; results `out` like `a`, `tau` `[batch, min(m, n)]` of `a`'s type.
pub(crate) fn check_geqrf(s: &CallShapes<'_>) -> Result<(), ShapeError> {
    let c = Checker::new(s, "cusolver_geqrf_ffi");
    c.counts(1, 2)?;
    let t = c.elem_in(Operand, 0, &FLOATS)?;
    let (batch, rows, cols) = c.matrix(Operand, 0)?;
    c.layout(Operand, 0, true)?;
    c.elem(Res, 0, t)?;
    c.dims(Res, 0, &cat(&batch, &[rows, cols]), "operand 0's")?;
    c.layout(Res, 0, true)?;
    c.elem(Res, 1, t)?;
    c.dims(
        Res,
        1,
        &cat(&batch, &[rows.min(cols)]),
        "batch, min(rows, cols)",
    )?;
    c.layout(Res, 1, false)
}

/// Operands `a` `[batch, m, n]` with `m >= n`, `tau` `[batch, k]` with `k <= n`; result like `a`.
pub(crate) fn check_orgqr(s: &CallShapes<'_>) -> Result<(), ShapeError> {
    let c = Checker::new(s, "cusolver_orgqr_ffi");
    c.counts(2, 1)?;
    let t = c.elem_in(Operand, 0, &FLOATS)?;
    let (batch, rows, cols) = c.matrix(Operand, 0)?;
    if cols > rows {
        return Err(c.refuse_dims(
            Operand,
            0,
            format!("needs rows >= columns (orgqr forms the m x n Q), operand 0 is {rows}x{cols}"),
        ));
    }
    c.layout(Operand, 0, true)?;
    c.elem(Operand, 1, t)?;
    let tau = &c.shape(Operand, 1)?.dimensions;
    let k = tau.last().copied().unwrap_or(-1);
    if tau.len() != batch.len() + 1 || tau[..batch.len()] != batch[..] || k > cols {
        return Err(c.refuse_dims(
            Operand,
            1,
            format!(
                "needs operand 1 of dimensions {batch:?} + [k] with k <= {cols} (operand 0's batch, at most one reflector per column), the artifact has {tau:?}"
            ),
        ));
    }
    c.layout(Operand, 1, false)?;
    c.elem(Res, 0, t)?;
    c.dims(Res, 0, &cat(&batch, &[rows, cols]), "operand 0's")?;
    c.layout(Res, 0, true)
}

pub(crate) fn geqrf(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let ty = super::operand_type(frame, 0)?;
    with_scalar!(ty, geqrf_t, frame)
}

fn geqrf_t<T: Scalar>(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let (bytes, shape) = operand(frame, 0)?;
    let (batch, m, n) = split_batch(shape)?;
    let k = m.min(n);
    let mut a = T::read(bytes);
    let mut tau = vec![T::ZERO; batch * k];
    for b in 0..batch {
        geqr2(
            &mut a[b * m * n..(b + 1) * m * n],
            m,
            n,
            &mut tau[b * k..(b + 1) * k],
        );
    }
    put(frame, 0, &a)?;
    put(frame, 1, &tau)
}

/// BLAS `xNRM2` in the range where it sums squares unscaled (LAPACK 3.10's, Blue's algorithm:
/// every input here is far from under- and overflow), the squares fused into the sum.
pub(crate) fn nrm2<T: Scalar>(x: &[T]) -> T::Real {
    let mut s = <T::Real as Scalar>::ZERO;
    for v in x {
        s = v.re().mul_add(v.re(), s);
        s = v.im().mul_add(v.im(), s);
    }
    s.sqrt()
}

/// LAPACK `xLAPY3`: `sqrt(x² + y² + z²)` without undue overflow (`xLAPY2` when `y` is 0, as the
/// real `xLARFG` calls it).
fn lapy<R: Real>(x: R, y: R, z: R) -> R {
    let (x, y, z) = (x.abs(), y.abs(), z.abs());
    if y == R::ZERO {
        let (w, m) = (x.max(z), x.min(z));
        if m == R::ZERO {
            return w;
        }
        let q = m / w;
        return w * (R::ONE + q * q).sqrt();
    }
    let w = x.max(y).max(z);
    if w == R::ZERO {
        return x + y + z;
    }
    let (a, b, c) = (x / w, y / w, z / w);
    w * (a * a + b * b + c * c).sqrt()
}

/// `1 / z` by Smith's algorithm (LAPACK's `xLADIV` avoids the overflow of the textbook formula
/// the same way; exactly `1/re` for a real `z`).
fn reciprocal<T: Scalar>(z: T) -> T {
    let (c, d) = (z.re(), z.im());
    let one = <T::Real as Scalar>::ONE;
    if d == <T::Real as Scalar>::ZERO {
        return T::from_re(one / c);
    }
    let (re, im) = if d.abs() <= c.abs() {
        let r = d / c;
        let den = c + d * r;
        (one / den, -r / den)
    } else {
        let r = c / d;
        let den = c * r + d;
        (r / den, -one / den)
    };
    T::from_parts(re, im)
}

/// LAPACK `xLARFG` on `(alpha, x)`: returns `(beta, tau)` and scales `x` into `v[1..]`.
pub(crate) fn larfg<T: Scalar>(alpha: T, x: &mut [T]) -> (T, T) {
    let zero = <T::Real as Scalar>::ZERO;
    let xnorm = nrm2(x);
    let (alphr, alphi) = (alpha.re(), alpha.im());
    if xnorm == zero && alphi == zero {
        return (alpha, T::ZERO);
    }
    let norm = lapy(alphr, alphi, xnorm);
    let beta = if alphr >= zero { -norm } else { norm };
    let tau = T::from_parts((beta - alphr) / beta, -alphi / beta);
    let scale = reciprocal(alpha - T::from_re(beta));
    for v in x.iter_mut() {
        *v = *v * scale;
    }
    (T::from_re(beta), tau)
}

/// LAPACK `xLARF` from the left: applies `H = I - tau v vᴴ` to the `rows`×`cols` block of the
/// column-major `a` (leading dimension `ld`) at `(r0, c0)`, as `w = Cᴴ v` (`xGEMV`) then
/// `C -= tau v wᴴ` (`xGERC`); `v` has `rows` entries.
pub(crate) fn apply_left<T: Scalar>(
    a: &mut [T],
    ld: usize,
    r0: usize,
    c0: usize,
    cols: usize,
    v: &[T],
    tau: T,
) {
    for c in c0..c0 + cols {
        let col = &mut a[c * ld + r0..c * ld + r0 + v.len()];
        let mut w = T::ZERO;
        for (vi, ai) in v.iter().zip(col.iter()) {
            w = w.add_mul(ai.conj(), *vi);
        }
        let t = -(tau * w.conj());
        for (vi, ai) in v.iter().zip(col.iter_mut()) {
            *ai = ai.add_mul(*vi, t);
        }
    }
}

/// LAPACK `xGEQR2` on the `m`×`n` column-major `a`.
pub(crate) fn geqr2<T: Scalar>(a: &mut [T], m: usize, n: usize, tau: &mut [T]) {
    for j in 0..m.min(n) {
        let alpha = a[j + j * m];
        let (beta, t) = larfg(alpha, &mut a[j + 1 + j * m..(j + 1) * m]);
        tau[j] = t;
        if j + 1 < n {
            let mut v = Vec::with_capacity(m - j);
            v.push(T::ONE);
            v.extend_from_slice(&a[j + 1 + j * m..(j + 1) * m]);
            // xGEQR2 applies H(j)ᴴ: tau conjugated.
            apply_left(a, m, j, j + 1, n - j - 1, &v, t.conj());
        }
        a[j + j * m] = beta;
    }
}

pub(crate) fn orgqr(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let ty = super::operand_type(frame, 0)?;
    with_scalar!(ty, orgqr_t, frame)
}

fn orgqr_t<T: Scalar>(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let (bytes, shape) = operand(frame, 0)?;
    let (batch, m, n) = split_batch(shape)?;
    let mut a = T::read(bytes);
    let (tau_bytes, tau_shape) = operand(frame, 1)?;
    let tau = T::read(tau_bytes);
    let k = *tau_shape.dimensions.last().ok_or(HandlerError::RankZero {
        side: super::Side::Operand,
        index: 1,
    })? as usize;
    if tau.len() != batch * k || k > n || n > m {
        return Err(HandlerError::TauSize {
            len: tau.len(),
            batch,
            m,
            n,
        });
    }
    for b in 0..batch {
        org2r(
            &mut a[b * m * n..(b + 1) * m * n],
            m,
            n,
            &tau[b * k..(b + 1) * k],
        );
    }
    put(frame, 0, &a)
}

/// LAPACK `xORG2R`/`xUNG2R`: overwrites the `m`×`n` `a` (reflectors in its first `k` columns)
/// with the first `n` columns of `Q = H(0) H(1) ... H(k-1)`.
pub(crate) fn org2r<T: Scalar>(a: &mut [T], m: usize, n: usize, tau: &[T]) {
    let k = tau.len();
    for j in k..n {
        for i in 0..m {
            a[i + j * m] = T::ZERO;
        }
        a[j + j * m] = T::ONE;
    }
    for i in (0..k).rev() {
        if i + 1 < n {
            a[i + i * m] = T::ONE;
            let v: Vec<T> = a[i + i * m..(i + 1) * m].to_vec();
            apply_left(a, m, i, i + 1, n - i - 1, &v, tau[i]);
        }
        for r in i + 1..m {
            a[r + i * m] = -(tau[i] * a[r + i * m]);
        }
        a[i + i * m] = T::ONE - tau[i];
        for r in 0..i {
            a[r + i * m] = T::ZERO;
        }
    }
}
