//! `cusolver_getrf_ffi` (LU with partial pivoting) and `cu_lu_pivots_to_permutation`.
//!
//! `getrf` is hand-written (LAPACK's unblocked `xGETF2`): its outputs are a LAPACK convention that
//! no convention-free library reproduces — `L` (unit diagonal, not stored) and `U` packed into one
//! matrix, and `ipiv`, the 1-based int32 sequence of row interchanges (row `i` was swapped with
//! row `ipiv[i]`), with `info = k` for the first zero pivot `U[k-1, k-1]` (the factorization is
//! still completed, as LAPACK does).
//!
//! `cu_lu_pivots_to_permutation` is jaxlib's kernel: JAX subtracts 1 from `getrf`'s pivots
//! before calling it, so its pivots are 0-based; it applies the swaps in order to the identity
//! permutation of the result's last dimension (which may exceed the pivots'), and skips a pivot
//! outside `[0, permutation_size)`.
use proto::xla::PrimitiveType;

use super::check::{cat, Checker, Operand, Res, FLOATS};
use super::schema::{CallShapes, ShapeError};
use super::HandlerError;
use super::{operand, put, put_i32, result_shape, split_batch, with_scalar, Scalar};
use crate::registry::CallFrame;

/// Operand `a`; results `out` like `a`, `ipiv` int32 `[batch, min(m, n)]`, `info` int32 `[batch]`.
pub(crate) fn check_getrf(s: &CallShapes<'_>) -> Result<(), ShapeError> {
    let c = Checker::new(s, "cusolver_getrf_ffi");
    c.counts(1, 3)?;
    let t = c.elem_in(Operand, 0, &FLOATS)?;
    let (batch, rows, cols) = c.matrix(Operand, 0)?;
    c.layout(Operand, 0, true)?;
    c.elem(Res, 0, t)?;
    c.dims(Res, 0, &cat(&batch, &[rows, cols]), "operand 0's")?;
    c.layout(Res, 0, true)?;
    c.elem(Res, 1, PrimitiveType::S32)?;
    c.dims(
        Res,
        1,
        &cat(&batch, &[rows.min(cols)]),
        "batch, min(rows, cols)",
    )?;
    c.layout(Res, 1, false)?;
    c.elem(Res, 2, PrimitiveType::S32)?;
    c.dims(Res, 2, &batch, "operand 0's batch dimensions")?;
    c.layout(Res, 2, false)
}

pub(crate) fn getrf(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let ty = super::operand_type(frame, 0)?;
    with_scalar!(ty, getrf_t, frame)
}

fn getrf_t<T: Scalar>(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let (bytes, shape) = operand(frame, 0)?;
    let (batch, m, n) = split_batch(shape)?;
    let k = m.min(n);
    let mut a = T::read(bytes);
    let mut ipiv = vec![0i32; batch * k];
    let mut info = vec![0i32; batch];
    for b in 0..batch {
        info[b] = getf2(
            &mut a[b * m * n..(b + 1) * m * n],
            m,
            n,
            &mut ipiv[b * k..(b + 1) * k],
        );
    }
    put(frame, 0, &a)?;
    put_i32(frame, 1, &ipiv)?;
    put_i32(frame, 2, &info)
}

/// LAPACK `xGETF2` on the `m`×`n` column-major `a`: returns `info`.
pub(crate) fn getf2<T: Scalar>(a: &mut [T], m: usize, n: usize, ipiv: &mut [i32]) -> i32 {
    let mut info = 0;
    for j in 0..m.min(n) {
        // The first row of largest |re|+|im| (izamax; a NaN is never larger).
        let mut p = j;
        for i in j + 1..m {
            if a[i + j * m].abs1() > a[p + j * m].abs1() {
                p = i;
            }
        }
        ipiv[j] = p as i32 + 1;
        let pivot = a[p + j * m];
        if pivot != T::ZERO {
            if p != j {
                for c in 0..n {
                    a.swap(j + c * m, p + c * m);
                }
            }
            for i in j + 1..m {
                a[i + j * m] = a[i + j * m] / pivot;
            }
        } else if info == 0 {
            info = j as i32 + 1;
        }
        // xGER: a[i, c] += a[i, j] * (-a[j, c]), fused.
        for c in j + 1..n {
            let t = -a[j + c * m];
            for i in j + 1..m {
                a[i + c * m] = a[i + c * m].add_mul(a[i + j * m], t);
            }
        }
    }
    info
}

/// Operand `pivots` int32 `[batch, k]`; result int32 `[batch, p]` with `p >= k`, row-major.
pub(crate) fn check_pivots(s: &CallShapes<'_>) -> Result<(), ShapeError> {
    let c = Checker::new(s, "cu_lu_pivots_to_permutation");
    c.counts(1, 1)?;
    c.elem(Operand, 0, PrimitiveType::S32)?;
    c.elem(Res, 0, PrimitiveType::S32)?;
    let d = &c.shape(Operand, 0)?.dimensions;
    let r = &c.shape(Res, 0)?.dimensions;
    if d.is_empty() {
        return Err(c.refuse_dims(
            Operand,
            0,
            "needs operand 0 of rank 1 or more (a batch of pivot vectors), the artifact has []"
                .to_owned(),
        ));
    }
    let batch = &d[..d.len() - 1];
    let (k, p) = (d[d.len() - 1], r.last().copied().unwrap_or(-1));
    if r.len() != d.len() || &r[..r.len() - 1] != batch || p < k {
        return Err(c.refuse_dims(
            Res,
            0,
            format!(
                "needs result 0 of dimensions {:?} + [p] with p >= {k} (operand 0's batch, a permutation of at least its pivots), the artifact has {r:?}",
                batch
            ),
        ));
    }
    c.layout(Operand, 0, false)?;
    c.layout(Res, 0, false)
}

pub(crate) fn pivots_to_permutation(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let (bytes, shape) = operand(frame, 0)?;
    let k = *shape.dimensions.last().ok_or(HandlerError::RankZero {
        side: super::Side::Operand,
        index: 0,
    })? as usize;
    let p = *result_shape(frame, 0)?
        .dimensions
        .last()
        .ok_or(HandlerError::RankZero {
            side: super::Side::Result,
            index: 0,
        })? as usize;
    let pivots: Vec<i32> = bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let batch = pivots.len().checked_div(k).unwrap_or(0);
    let out_elements = result_shape(frame, 0)?
        .elements()
        .ok_or(HandlerError::Uncountable { index: 0 })?;
    let out_batch = usize::try_from(out_elements / p.max(1) as u64).unwrap_or(usize::MAX);
    let mut perm = Vec::with_capacity(out_batch.saturating_mul(p));
    for b in 0..out_batch {
        let start = perm.len();
        perm.extend(0..p as i32);
        let row = &mut perm[start..];
        let piv = if b < batch {
            &pivots[b * k..(b + 1) * k]
        } else {
            &[][..]
        };
        for (i, &q) in piv.iter().enumerate() {
            if q >= 0 && (q as usize) < p && i < p {
                row.swap(i, q as usize);
            }
        }
    }
    put_i32(frame, 0, &perm)
}
