//! `cusolver_sytrd_ffi` (reduction of a Hermitian matrix to real symmetric tridiagonal form) and
//! `cusparse_gtsv2_ffi` (tridiagonal solve).
//!
//! `sytrd` is hand-written (LAPACK's unblocked `xSYTD2`/`xHETD2`) because its outputs are LAPACK's
//! packed convention: `d` (diagonal), `e` (off-diagonal, real), `tau` and the Householder vectors
//! stored below (`lower`) or above the first off-diagonal of `a`, the other triangle keeping the
//! input. `lower = false` runs the lower algorithm on the index-reversed matrix, which performs
//! the same operations as LAPACK's upper loop (that loop is the lower one with indices reversed),
//! then reverses `d`, `e` and `tau` back. `info` is always 0 (cuSOLVER's sytrd fails only on bad
//! arguments).
//!
//! `gtsv2` solves with Gaussian elimination and partial pivoting (LAPACK's `xGTSV`; cuSPARSE's
//! `gtsv2` also pivots, with a different elimination order, so results agree to rounding). The
//! first entry of `dl` and the last of `du` are not read (cuSPARSE's convention). A singular system
//! gets infinities or NaN: the target has no `info` output.
use proto::xla::PrimitiveType;

use super::check::{cat, real_of, Checker, Operand, Res, FLOATS};
use super::qr::larfg;
use super::schema::{AttrSpec, AttrType, CallShapes, ShapeError};
use super::HandlerError;
use super::{operand, put, put_i32, split_batch, with_scalar, Real, Scalar};
use crate::registry::CallFrame;

pub(crate) const SYTRD_ATTRS: &[AttrSpec] = &[AttrSpec::required("lower", AttrType::Bool)];

/// Operand `a` (square); results `a`, `d` `[batch, n]` and `e` `[batch, n-1]` real, `tau`
/// `[batch, n-1]`, `info` int32 `[batch]`.
pub(crate) fn check_sytrd(s: &CallShapes<'_>) -> Result<(), ShapeError> {
    let c = Checker::new(s, "cusolver_sytrd_ffi");
    c.counts(1, 5)?;
    let (t, batch, rows) = c.square_in_place()?;
    let off = (rows - 1).max(0);
    for (i, ty, n, what) in [
        (1, real_of(t), rows, "batch, n"),
        (2, real_of(t), off, "batch, n - 1"),
        (3, t, off, "batch, n - 1"),
    ] {
        c.elem(Res, i, ty)?;
        c.dims(Res, i, &cat(&batch, &[n]), what)?;
        c.layout(Res, i, false)?;
    }
    c.elem(Res, 4, PrimitiveType::S32)?;
    c.dims(Res, 4, &batch, "operand 0's batch dimensions")?;
    c.layout(Res, 4, false)
}

pub(crate) fn sytrd(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let ty = super::operand_type(frame, 0)?;
    with_scalar!(ty, sytrd_t, frame)
}

fn sytrd_t<T: Scalar>(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let lower = super::schema::bool_attr(frame.attributes, "lower")?;
    let (bytes, shape) = operand(frame, 0)?;
    let (batch, n, _) = split_batch(shape)?;
    let off = n.saturating_sub(1);
    let mut a = T::read(bytes);
    let zero = <T::Real as Scalar>::ZERO;
    let (mut d, mut e) = (vec![zero; batch * n], vec![zero; batch * off]);
    let mut tau = vec![T::ZERO; batch * off];
    for b in 0..batch {
        let m = &mut a[b * n * n..(b + 1) * n * n];
        let (db, eb) = (&mut d[b * n..(b + 1) * n], &mut e[b * off..(b + 1) * off]);
        let tb = &mut tau[b * off..(b + 1) * off];
        if lower {
            sytd2_lower(m, n, db, eb, tb);
        } else {
            reverse(m);
            sytd2_lower(m, n, db, eb, tb);
            reverse(m);
            db.reverse();
            eb.reverse();
            tb.reverse();
        }
    }
    put(frame, 0, &a)?;
    put(frame, 1, &d)?;
    put(frame, 2, &e)?;
    put(frame, 3, &tau)?;
    put_i32(frame, 4, &vec![0; batch])
}

/// `a[r, c] <- a[n-1-r, n-1-c]`.
fn reverse<T: Scalar>(a: &mut [T]) {
    a.reverse(); // column-major: reversing the storage reverses both indices
}

/// `y = H v` for the Hermitian trailing block of `a` from `o` on, read from its lower triangle
/// (diagonal imaginary parts ignored, as `xHEMV`).
fn hemv_lower<T: Scalar>(a: &[T], n: usize, o: usize, v: &[T]) -> Vec<T> {
    let l = n - o;
    let at = |r: usize, c: usize| a[o + r + (o + c) * n];
    (0..l)
        .map(|r| {
            let mut s = T::ZERO;
            for (c, &vc) in v.iter().enumerate() {
                let h = match r.cmp(&c) {
                    std::cmp::Ordering::Greater => at(r, c),
                    std::cmp::Ordering::Less => at(c, r).conj(),
                    std::cmp::Ordering::Equal => T::from_re(at(r, r).re()),
                };
                s = s.add_mul(h, vc);
            }
            s
        })
        .collect()
}

/// LAPACK `xHETD2` (`xSYTD2`) lower on the `n`×`n` column-major `a`.
pub(crate) fn sytd2_lower<T: Scalar>(
    a: &mut [T],
    n: usize,
    d: &mut [T::Real],
    e: &mut [T::Real],
    tau: &mut [T],
) {
    if n == 0 {
        return;
    }
    a[0] = T::from_re(a[0].re());
    for i in 0..n - 1 {
        let alpha = a[i + 1 + i * n];
        let (beta, taui) = larfg(alpha, &mut a[i + 2 + i * n..(i + 1) * n]);
        e[i] = beta.re();
        let o = i + 1;
        if taui != T::ZERO {
            a[o + i * n] = T::ONE;
            let v: Vec<T> = a[o + i * n..(i + 1) * n].to_vec();
            let x: Vec<T> = hemv_lower(a, n, o, &v)
                .into_iter()
                .map(|y| taui * y)
                .collect();
            let mut dot = T::ZERO;
            for (xk, vk) in x.iter().zip(&v) {
                dot = dot.add_mul(xk.conj(), *vk);
            }
            let alpha2 = (taui * dot).scale(<T::Real as Real>::of(-0.5));
            let w: Vec<T> = x
                .iter()
                .zip(&v)
                .map(|(&xk, &vk)| xk.add_mul(alpha2, vk))
                .collect();
            // xHER2 lower with alpha = -1: a[r, c] += v[r] (-conj(w[c])) + w[r] (-conj(v[c])).
            for c in 0..v.len() {
                let (t1, t2) = (-w[c].conj(), -v[c].conj());
                let idx = o + c + (o + c) * n;
                let diag = (v[c] * t1).add_mul(w[c], t2);
                a[idx] = T::from_re(a[idx].re() + diag.re());
                for r in c + 1..v.len() {
                    let idx = o + r + (o + c) * n;
                    a[idx] = a[idx].add_mul(v[r], t1).add_mul(w[r], t2);
                }
            }
        } else {
            let idx = o + o * n;
            a[idx] = T::from_re(a[idx].re());
        }
        a[o + i * n] = T::from_re(e[i]);
        d[i] = a[i + i * n].re();
        tau[i] = taui;
    }
    d[n - 1] = a[n * n - 1].re();
}

/// Operands `dl`, `d`, `du` `[batch, m]`, `b` `[batch, m, nrhs]`; result like `b`.
pub(crate) fn check_gtsv2(s: &CallShapes<'_>) -> Result<(), ShapeError> {
    let c = Checker::new(s, "cusparse_gtsv2_ffi");
    c.counts(4, 1)?;
    let t = c.elem_in(Operand, 3, &FLOATS)?;
    let (batch, m, nrhs) = c.matrix(Operand, 3)?;
    c.layout(Operand, 3, true)?;
    for i in 0..3 {
        c.elem(Operand, i, t)?;
        c.dims(Operand, i, &cat(&batch, &[m]), "operand 3's batch, rows")?;
        c.layout(Operand, i, false)?;
    }
    c.elem(Res, 0, t)?;
    c.dims(Res, 0, &cat(&batch, &[m, nrhs]), "operand 3's")?;
    c.layout(Res, 0, true)
}

pub(crate) fn gtsv2(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let ty = super::operand_type(frame, 3)?;
    with_scalar!(ty, gtsv2_t, frame)
}

fn gtsv2_t<T: Scalar>(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let read = |i| operand(frame, i).map(|(b, _)| T::read(b));
    let (dl, d, du) = (read(0)?, read(1)?, read(2)?);
    let (bytes, shape) = operand(frame, 3)?;
    let (batch, m, nrhs) = split_batch(shape)?;
    let mut b = T::read(bytes);
    if dl.len() != batch * m || d.len() != batch * m || du.len() != batch * m {
        return Err(HandlerError::DiagonalSizes {
            lower: dl.len(),
            main: d.len(),
            upper: du.len(),
            batch,
            m,
        });
    }
    for k in 0..batch {
        let diag = |v: &[T]| v[k * m..(k + 1) * m].to_vec();
        let sys = Tridiagonal {
            dl: diag(&dl),
            d: diag(&d),
            du: diag(&du),
        };
        for r in 0..nrhs {
            let off = k * m * nrhs + r * m;
            sys.clone().solve(&mut b[off..off + m]);
        }
    }
    put(frame, 0, &b)
}

/// A tridiagonal system in cuSPARSE's storage (`dl[0]` and `du[m-1]` unused).
#[derive(Clone)]
pub(crate) struct Tridiagonal<T> {
    pub(crate) dl: Vec<T>,
    pub(crate) d: Vec<T>,
    pub(crate) du: Vec<T>,
}

impl<T: Scalar> Tridiagonal<T> {
    /// LAPACK `xGTSV` for one right-hand side, overwriting `b` with `x`.
    pub(crate) fn solve(self, b: &mut [T]) {
        let n = self.d.len();
        if n == 0 {
            return;
        }
        // LAPACK's DL(i) is the entry below D(i): cuSPARSE's dl[i+1].
        let mut dl: Vec<T> = self.dl[1..].to_vec();
        let (mut d, mut du) = (self.d, self.du);
        for i in 0..n - 1 {
            if d[i].abs1() >= dl[i].abs1() {
                let fact = dl[i] / d[i];
                d[i + 1] = d[i + 1] - fact * du[i];
                b[i + 1] = b[i + 1] - fact * b[i];
                dl[i] = T::ZERO;
            } else {
                let fact = d[i] / dl[i];
                d[i] = dl[i];
                let temp = d[i + 1];
                d[i + 1] = du[i] - fact * temp;
                if i + 2 < n {
                    dl[i] = du[i + 1];
                    du[i + 1] = -(fact * dl[i]);
                } else {
                    dl[i] = T::ZERO;
                }
                du[i] = temp;
                let bi = b[i];
                b[i] = b[i + 1];
                b[i + 1] = bi - fact * b[i + 1];
            }
        }
        b[n - 1] = b[n - 1] / d[n - 1];
        if n > 1 {
            b[n - 2] = (b[n - 2] - du[n - 2] * b[n - 1]) / d[n - 2];
        }
        for i in (0..n.saturating_sub(2)).rev() {
            b[i] = (b[i] - du[i] * b[i + 1] - dl[i] * b[i + 2]) / d[i];
        }
    }
}
