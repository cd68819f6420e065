//! `cusolver_gesvd_ffi` and `cusolver_gesvdj_ffi`: singular value decomposition, through faer.
//!
//! Convention-free up to the signs (phases) of paired singular vectors, which JAX's checks allow;
//! this runtime fixes them ([`super::phase`]: `u`'s column's leading largest entry real and
//! positive, `v`'s column by the same factor). The layout is cuSOLVER's. `gesvd` takes `m >= n` only: JAX passes a wide matrix row-major with
//! `transposed = true`, which the handler reads, as cuSOLVER does, as the column-major `n`×`m`
//! transpose, so its `u` result holds the transpose's `U` (JAX's `Vᴴ`) and `vt` its `Vᴴ` (JAX's
//! `U`). It writes `Vᴴ`; `gesvdj` writes `V` (JAX transposes it) and takes any `m`, `n`.
//! Singular values are descending; `full_matrices = false` gives `m`×`k` and `n`×`k` factors
//! (`gesvdj`) or an `m`×`n` `u` (`gesvd`). With `compute_uv = false` the `u`/`v` results are left
//! as they are. `out` receives a copy of `a` (cuSOLVER leaves it destroyed; JAX ignores it). An
//! input faer cannot decompose (NaN or infinite entries) gets `info = 1` and NaN outputs.
use faer::Mat;
use num_traits::Float;
use proto::xla::PrimitiveType;

use super::check::{cat, real_of, Checker, Operand, Res, FLOATS};
use super::schema::{decoded_bool, AttrSpec, AttrType, CallShapes, ShapeError};
use super::HandlerError;
use super::{operand, put, put_i32, split_batch, with_scalar, Real, Scalar};
use crate::registry::CallFrame;

pub(crate) const GESVD_ATTRS: &[AttrSpec] = &[
    AttrSpec::required("compute_uv", AttrType::Bool),
    AttrSpec::required("full_matrices", AttrType::Bool),
    AttrSpec::required("transposed", AttrType::Bool),
];

pub(crate) const GESVDJ_ATTRS: &[AttrSpec] = &[
    AttrSpec::required("compute_uv", AttrType::Bool),
    AttrSpec::required("full_matrices", AttrType::Bool),
];

/// The common part: `a`, `out`, `s`, `info`. Returns `(type, batch, rows, cols)`.
fn check_common(
    c: &Checker<'_>,
    column_major: bool,
    k: impl Fn(i64, i64) -> i64,
) -> Result<(PrimitiveType, Vec<i64>, i64, i64), ShapeError> {
    c.counts(1, 5)?;
    let t = c.elem_in(Operand, 0, &FLOATS)?;
    let (batch, rows, cols) = c.matrix(Operand, 0)?;
    c.layout(Operand, 0, column_major)?;
    c.elem(Res, 0, t)?;
    c.dims(Res, 0, &cat(&batch, &[rows, cols]), "operand 0's")?;
    c.layout(Res, 0, column_major)?;
    c.elem(Res, 1, real_of(t))?;
    c.dims(
        Res,
        1,
        &cat(&batch, &[k(rows, cols)]),
        "batch, number of singular values",
    )?;
    c.layout(Res, 1, false)?;
    c.elem(Res, 4, PrimitiveType::S32)?;
    c.dims(Res, 4, &batch, "operand 0's batch dimensions")?;
    c.layout(Res, 4, false)?;
    Ok((t, batch, rows, cols))
}

/// `gesvd`: `u` `[batch, m, m]` (full), `[batch, m, n]` (`[batch, n, m]` transposed), `vt`
/// `[batch, n, n]`, where `m`, `n` are the rows and columns as cuSOLVER reads them.
pub(crate) fn check_gesvd(s: &CallShapes<'_>) -> Result<(), ShapeError> {
    let c = Checker::new(s, "cusolver_gesvd_ffi");
    let transposed = decoded_bool(s.attributes, "transposed");
    let (t, batch, rows, cols) =
        check_common(&c, !transposed, |r, c| if transposed { r } else { c })?;
    let (m, n) = if transposed {
        (cols, rows)
    } else {
        (rows, cols)
    };
    if n > m {
        return Err(c.refuse_dims(
            Operand,
            0,
            format!("needs m >= n (a wide matrix is passed transposed), operand 0 is {m}x{n} as read with transposed = {transposed}"),
        ));
    }
    if decoded_bool(s.attributes, "compute_uv") {
        let u = match (decoded_bool(s.attributes, "full_matrices"), transposed) {
            (true, _) => [m, m],
            (false, false) => [m, n],
            (false, true) => [n, m],
        };
        c.elem(Res, 2, t)?;
        c.dims(Res, 2, &cat(&batch, &u), "u")?;
        c.layout(Res, 2, !transposed)?;
        c.elem(Res, 3, t)?;
        c.dims(Res, 3, &cat(&batch, &[n, n]), "vt")?;
        c.layout(Res, 3, !transposed)?;
    }
    Ok(())
}

/// `gesvdj`: `u` `[batch, m, m]` or `[batch, m, k]`, `v` `[batch, n, n]` or `[batch, n, k]`.
pub(crate) fn check_gesvdj(s: &CallShapes<'_>) -> Result<(), ShapeError> {
    let c = Checker::new(s, "cusolver_gesvdj_ffi");
    let (t, batch, m, n) = check_common(&c, true, |r, c| r.min(c))?;
    let full = decoded_bool(s.attributes, "full_matrices");
    let k = m.min(n);
    c.elem(Res, 2, t)?;
    c.dims(Res, 2, &cat(&batch, &[m, if full { m } else { k }]), "u")?;
    c.layout(Res, 2, true)?;
    c.elem(Res, 3, t)?;
    c.dims(Res, 3, &cat(&batch, &[n, if full { n } else { k }]), "v")?;
    c.layout(Res, 3, true)
}

pub(crate) fn gesvd(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let ty = super::operand_type(frame, 0)?;
    with_scalar!(ty, gesvd_t, frame)
}

pub(crate) fn gesvdj(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let ty = super::operand_type(frame, 0)?;
    with_scalar!(ty, gesvdj_t, frame)
}

fn gesvd_t<T: Scalar>(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let transposed = super::schema::bool_attr(frame.attributes, "transposed")?;
    run::<T>(frame, transposed, true)
}

fn gesvdj_t<T: Scalar>(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    run::<T>(frame, false, false)
}

/// Both targets: `vt` writes `Vᴴ` (gesvd) rather than `V` (gesvdj).
fn run<T: Scalar>(
    frame: &mut CallFrame<'_>,
    transposed: bool,
    vt: bool,
) -> Result<(), HandlerError> {
    let compute_uv = super::schema::bool_attr(frame.attributes, "compute_uv")?;
    let full = super::schema::bool_attr(frame.attributes, "full_matrices")?;
    let (bytes, shape) = operand(frame, 0)?;
    let (batch, rows, cols) = split_batch(shape)?;
    let (m, n) = if transposed {
        (cols, rows)
    } else {
        (rows, cols)
    };
    let k = m.min(n);
    let (ucols, vcols) = if full {
        (m, n)
    } else {
        (k, if vt { n } else { k })
    };
    let a = T::read(bytes);
    let (mut s, mut u, mut v) = (Vec::new(), Vec::new(), Vec::new());
    let mut info = vec![0i32; batch];
    for (b, info) in info.iter_mut().enumerate() {
        let mat = &a[b * m * n..(b + 1) * m * n];
        match faer_svd(mat, m, n, !full) {
            Some(r) => {
                s.extend_from_slice(&r.s[..k]);
                u.extend_from_slice(&r.u[..m * ucols]);
                if vt {
                    // Vᴴ: n x n, column-major.
                    v.extend((0..n * n).map(|x| r.v[x / n + (x % n) * n].conj()));
                } else {
                    v.extend_from_slice(&r.v[..n * vcols]);
                }
            }
            None => {
                *info = 1;
                let nan = <T::Real as num_traits::Float>::nan();
                s.extend(std::iter::repeat_n(nan, k));
                u.extend(std::iter::repeat_n(T::from_re(nan), m * ucols));
                v.extend(std::iter::repeat_n(T::from_re(nan), n * vcols));
            }
        }
    }
    put(frame, 0, &a)?;
    put(frame, 1, &s)?;
    if compute_uv {
        put(frame, 2, &u)?;
        put(frame, 3, &v)?;
    }
    put_i32(frame, 4, &info)
}

/// An SVD's factors, column-major.
pub(crate) struct Svd<T: Scalar> {
    pub(crate) s: Vec<T::Real>,
    pub(crate) u: Vec<T>,
    pub(crate) v: Vec<T>,
}

/// faer's SVD of the column-major `m`×`n` `a` (thin: `k` columns of `u` and `v`); computed in
/// f64 ([`Scalar::Wide`]) and rounded once to `T`, with the pairs' phase fixed before rounding.
pub(crate) fn faer_svd<T: Scalar>(a: &[T], m: usize, n: usize, thin: bool) -> Option<Svd<T>> {
    if a.iter()
        .any(|x| !(x.re().is_finite() && x.im().is_finite()))
    {
        return None;
    }
    let k = m.min(n);
    let (uc, vc) = if thin { (k, k) } else { (m, n) };
    if k == 0 {
        let eye = |r: usize, c: usize| {
            (0..r * c)
                .map(|x| if x % r == x / r { T::ONE } else { T::ZERO })
                .collect()
        };
        return Some(Svd {
            s: Vec::new(),
            u: eye(m, uc),
            v: eye(n, vc),
        });
    }
    let mat = Mat::<T::Wide>::from_fn(m, n, |i, j| a[i + j * m].widen());
    let d = if thin { mat.thin_svd() } else { mat.svd() }.ok()?;
    let (su, sv, ss) = (d.U(), d.V(), d.S().column_vector());
    let col_major = |x: faer::MatRef<'_, T::Wide>, rows: usize, cols: usize| {
        let mut out = Vec::with_capacity(rows * cols);
        for j in 0..cols {
            for i in 0..rows {
                out.push(x[(i, j)]);
            }
        }
        out
    };
    let (mut u, mut v) = (col_major(su, m, uc), col_major(sv, n, vc));
    super::phase::fix_pairs(&mut u, m, &mut v, n, k);
    Some(Svd {
        s: (0..k).map(|i| <T::Real as Real>::of(ss[i].re())).collect(),
        u: u.into_iter().map(T::narrow).collect(),
        v: v.into_iter().map(T::narrow).collect(),
    })
}
