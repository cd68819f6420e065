//! `cusolver_syevd_ffi`: eigen-decomposition of Hermitian matrices, through faer.
//!
//! The result is convention-free up to the sign (phase) of each eigenvector, which JAX's checks
//! allow; this runtime fixes it ([`super::phase`]: the leading largest entry real and positive)
//! so that recorded outputs do not move with faer. Eigenvalues ascending (cuSOLVER's order), the eigenvectors as the columns of `out`,
//! only the `lower` (or upper) triangle of the input read. `algorithm` (jaxlib's
//! `SyevdAlgorithm`: 0 default, 1 divide-and-conquer, 2 Jacobi, 3 QR) chooses cuSOLVER's method,
//! not the answer; here every value gives the same. A matrix faer cannot decompose (NaN or
//! infinite entries) gets `info = 1` and NaN outputs, which JAX turns into NaN as it does for
//! cuSOLVER's `info > 0`.
use faer::{Mat, Side};
use num_traits::Float;
use proto::xla::PrimitiveType;

use super::check::{cat, real_of, Checker, Res};
use super::schema::{AttrSpec, AttrType, CallShapes, ShapeError};
use super::HandlerError;
use super::{operand, put, put_i32, split_batch, with_scalar, Real, Scalar};
use crate::registry::CallFrame;

pub(crate) const ATTRS: &[AttrSpec] = &[
    AttrSpec::required(
        "algorithm",
        AttrType::Int {
            bits: 8,
            signed: false,
        },
    ),
    AttrSpec::required("lower", AttrType::Bool),
];

/// Operand `a` (square); results `out` like `a`, `w` `[batch, n]` real, `info` int32 `[batch]`.
pub(crate) fn check(s: &CallShapes<'_>) -> Result<(), ShapeError> {
    let c = Checker::new(s, "cusolver_syevd_ffi");
    c.counts(1, 3)?;
    let (t, batch, rows) = c.square_in_place()?;
    c.elem(Res, 1, real_of(t))?;
    c.dims(Res, 1, &cat(&batch, &[rows]), "batch, n")?;
    c.layout(Res, 1, false)?;
    c.elem(Res, 2, PrimitiveType::S32)?;
    c.dims(Res, 2, &batch, "operand 0's batch dimensions")?;
    c.layout(Res, 2, false)
}

pub(crate) fn syevd(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let ty = super::operand_type(frame, 0)?;
    with_scalar!(ty, syevd_t, frame)
}

fn syevd_t<T: Scalar>(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let lower = super::schema::bool_attr(frame.attributes, "lower")?;
    let (bytes, shape) = operand(frame, 0)?;
    let (batch, n, _) = split_batch(shape)?;
    let mut a = T::read(bytes);
    let mut w = vec![<T::Real as Scalar>::ZERO; batch * n];
    let mut info = vec![0i32; batch];
    for b in 0..batch {
        let m = &mut a[b * n * n..(b + 1) * n * n];
        match faer_eigh(m, n, lower) {
            Some((vals, vecs)) => {
                w[b * n..(b + 1) * n].copy_from_slice(&vals);
                m.copy_from_slice(&vecs);
            }
            None => {
                let nan = <T::Real as num_traits::Float>::nan();
                w[b * n..(b + 1) * n].fill(nan);
                m.fill(T::from_re(nan));
                info[b] = 1;
            }
        }
    }
    put(frame, 0, &a)?;
    put(frame, 1, &w)?;
    put_i32(frame, 2, &info)
}

/// faer's self-adjoint eigen-decomposition of the column-major `a` (its `lower` or upper
/// triangle), eigenvalues ascending; computed in f64 ([`Scalar::Wide`]) and rounded once to
/// `T`, with the eigenvectors' phase fixed before rounding.
pub(crate) fn faer_eigh<T: Scalar>(
    a: &[T],
    n: usize,
    lower: bool,
) -> Option<(Vec<T::Real>, Vec<T>)> {
    if a.iter()
        .any(|x| !(x.re().is_finite() && x.im().is_finite()))
    {
        return None;
    }
    if n == 0 {
        return Some((Vec::new(), Vec::new()));
    }
    let m = Mat::<T::Wide>::from_fn(n, n, |i, j| a[i + j * n].widen());
    let side = if lower { Side::Lower } else { Side::Upper };
    let e = m.self_adjoint_eigen(side).ok()?;
    let s = e.S().column_vector();
    let u = e.U();
    let mut order: Vec<usize> = (0..n).collect();
    let vals: Vec<f64> = (0..n).map(|i| s[i].re()).collect();
    order.sort_by(|&x, &y| vals[x].total_cmp(&vals[y]));
    let w = order
        .iter()
        .map(|&i| <T::Real as Real>::of(vals[i]))
        .collect();
    let mut v = Vec::with_capacity(n * n);
    for &j in &order {
        for i in 0..n {
            v.push(u[(i, j)]);
        }
    }
    super::phase::fix_columns(&mut v, n);
    Some((w, v.into_iter().map(T::narrow).collect()))
}
