//! `cusolver_potrf_ffi`: Cholesky factorization, cuSOLVER's `potrf` per matrix.
//!
//! Hand-written (LAPACK's unblocked `xPOTF2`) rather than faer's Cholesky because the output's
//! layout is cuSOLVER's convention: only the `lower` (or upper) triangle is written, the other
//! keeps the input's values (JAX masks it), and a matrix whose leading minor of order `k` is not
//! positive definite stops the factorization there with `info = k` (JAX then fills the factor
//! with NaN). The diagonal of a complex input is read as real.
use num_traits::Float;
use proto::xla::PrimitiveType;

use super::check::{Checker, Res};
use super::schema::{AttrSpec, AttrType, CallShapes, ShapeError};
use super::HandlerError;
use super::{operand, put, put_i32, split_batch, with_scalar, Scalar};
use crate::registry::CallFrame;

pub(crate) const ATTRS: &[AttrSpec] = &[AttrSpec::required("lower", AttrType::Bool)];

/// Operand `a` (batch of square matrices); results `out` like `a`, `info` int32 per matrix.
pub(crate) fn check(s: &CallShapes<'_>) -> Result<(), ShapeError> {
    let c = Checker::new(s, "cusolver_potrf_ffi");
    c.counts(1, 2)?;
    let (_, batch, _) = c.square_in_place()?;
    c.elem(Res, 1, PrimitiveType::S32)?;
    c.dims(Res, 1, &batch, "operand 0's batch dimensions")?;
    c.layout(Res, 1, false)
}

pub(crate) fn potrf(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let ty = super::operand_type(frame, 0)?;
    with_scalar!(ty, potrf_t, frame)
}

fn potrf_t<T: Scalar>(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let lower = super::schema::bool_attr(frame.attributes, "lower")?;
    let (bytes, shape) = operand(frame, 0)?;
    let (batch, n, _) = split_batch(shape)?;
    let mut a = T::read(bytes);
    let mut info = vec![0i32; batch];
    for (b, info) in info.iter_mut().enumerate() {
        let m = &mut a[b * n * n..(b + 1) * n * n];
        *info = if lower {
            potf2_lower(m, n)
        } else {
            potf2_upper(m, n)
        };
    }
    put(frame, 0, &a)?;
    put_i32(frame, 1, &info)
}

/// LAPACK `xPOTF2` lower: `A = L Lᴴ`, `L` into the lower triangle, in LAPACK's order (`xDOTC`
/// for the pivot, `xGEMV` for the column, `xDSCAL` by `1/ajj`), fused as a GPU's BLAS. Returns
/// `info`.
pub(crate) fn potf2_lower<T: Scalar>(a: &mut [T], n: usize) -> i32 {
    for j in 0..n {
        let mut dot = T::ZERO;
        for k in 0..j {
            let l = a[j + k * n];
            dot = dot.add_mul(l.conj(), l);
        }
        let ajj = a[j + j * n].re() - dot.re();
        if ajj.is_nan() || ajj <= <T::Real as Scalar>::ZERO {
            a[j + j * n] = T::from_re(ajj);
            return j as i32 + 1;
        }
        let ajj = ajj.sqrt();
        a[j + j * n] = T::from_re(ajj);
        for k in 0..j {
            let t = -a[j + k * n].conj();
            for i in j + 1..n {
                a[i + j * n] = a[i + j * n].add_mul(t, a[i + k * n]);
            }
        }
        let r = <T::Real as Scalar>::ONE / ajj;
        for i in j + 1..n {
            a[i + j * n] = a[i + j * n].scale(r);
        }
    }
    0
}

/// LAPACK `xPOTF2` upper: `A = Uᴴ U`, `U` into the upper triangle (`xGEMV` transposed for the
/// row). Returns `info`.
pub(crate) fn potf2_upper<T: Scalar>(a: &mut [T], n: usize) -> i32 {
    for j in 0..n {
        let mut dot = T::ZERO;
        for k in 0..j {
            let u = a[k + j * n];
            dot = dot.add_mul(u.conj(), u);
        }
        let ajj = a[j + j * n].re() - dot.re();
        if ajj.is_nan() || ajj <= <T::Real as Scalar>::ZERO {
            a[j + j * n] = T::from_re(ajj);
            return j as i32 + 1;
        }
        let ajj = ajj.sqrt();
        a[j + j * n] = T::from_re(ajj);
        let r = <T::Real as Scalar>::ONE / ajj;
        for c in j + 1..n {
            let mut t = T::ZERO;
            for k in 0..j {
                t = t.add_mul(a[k + c * n], a[k + j * n].conj());
            }
            a[j + c * n] = (a[j + c * n] - t).scale(r);
        }
    }
    0
}
