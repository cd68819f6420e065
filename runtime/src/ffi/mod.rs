//! Handlers for JAX's stable CUDA custom-call targets (`_CUSTOM_CALL_TARGETS_GUARANTEED_STABLE`
//! in `jax/_src/export/_export.py`), on host copies of the buffers, keeping cuSOLVER's,
//! cuSPARSE's and jaxlib's conventions: column-major matrices in batch-major order, 1-based int32
//! pivots, LAPACK's Householder `tau`, `info` outputs (see docs/custom_calls.md).
//!
//! Every target declares its attributes ([`schema::AttrSpec`]) and a load check of its operands
//! and results, so an artifact the handler cannot take fails to load, naming the field.
//!
//! Precision: f32 and c64 inputs are computed in f64 and rounded once when the results are
//! written; f64 and c128 are computed in f64. cuSOLVER computes f32 in f32, so results agree with
//! a GPU's to within f32 rounding of the exact answer, never worse.
use proto::xla::PrimitiveType;

use crate::registry::{Api, CallFrame, Registration};

pub(crate) mod check;
mod cholesky;
mod eigh;
mod error;
mod lu;
mod phase;
mod qr;
pub mod schema;
mod svd;
mod threefry;
mod tridiagonal;

pub use error::{HandlerError, Side};
pub use faer::c64;

/// JAX's stable CUDA targets, with their schemas and load checks.
pub(crate) fn registrations() -> Vec<Registration> {
    let r = |name, attributes, check, handler| Registration {
        name,
        aliases: &[],
        api: Api::Ffi,
        handler,
        attributes: Some(attributes),
        check: Some(check),
    };
    vec![
        r(
            "cusolver_potrf_ffi",
            cholesky::ATTRS,
            cholesky::check,
            cholesky::potrf,
        ),
        r("cusolver_getrf_ffi", &[], lu::check_getrf, lu::getrf),
        r(
            "cu_lu_pivots_to_permutation",
            &[],
            lu::check_pivots,
            lu::pivots_to_permutation,
        ),
        r("cusolver_geqrf_ffi", &[], qr::check_geqrf, qr::geqrf),
        r("cusolver_orgqr_ffi", &[], qr::check_orgqr, qr::orgqr),
        r("cusolver_syevd_ffi", eigh::ATTRS, eigh::check, eigh::syevd),
        r(
            "cusolver_gesvd_ffi",
            svd::GESVD_ATTRS,
            svd::check_gesvd,
            svd::gesvd,
        ),
        r(
            "cusolver_gesvdj_ffi",
            svd::GESVDJ_ATTRS,
            svd::check_gesvdj,
            svd::gesvdj,
        ),
        r(
            "cusolver_sytrd_ffi",
            tridiagonal::SYTRD_ATTRS,
            tridiagonal::check_sytrd,
            tridiagonal::sytrd,
        ),
        r(
            "cusparse_gtsv2_ffi",
            &[],
            tridiagonal::check_gtsv2,
            tridiagonal::gtsv2,
        ),
        r(
            "cu_threefry2x32_ffi",
            &[],
            threefry::check,
            threefry::threefry2x32,
        ),
    ]
}

/// The field a solver computes in: f64 for F32/F64, [`c64`] for C64/C128.
pub(crate) trait Scalar:
    Copy
    + std::fmt::Debug
    + PartialEq
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    /// The complex conjugate (the value itself for reals).
    fn conj(self) -> Self;
    /// The real part.
    fn re(self) -> f64;
    /// The imaginary part (0 for reals).
    fn im(self) -> f64;
    /// `re + 0i`.
    fn from_re(re: f64) -> Self;
    /// `|x|²`.
    fn abs2(self) -> f64;
    /// `|re| + |im|` (BLAS's `cabs1`, the pivot measure of `izamax`).
    fn abs1(self) -> f64 {
        self.re().abs() + self.im().abs()
    }
    /// `x * s` for a real `s`.
    fn scale(self, s: f64) -> Self {
        self * Self::from_re(s)
    }
    /// Decodes little-endian elements: F32/F64 (`wide`) reals, or C64/C128 interleaved pairs.
    fn read(bytes: &[u8], wide: bool) -> Vec<Self>;
    /// Encodes, rounding to f32 components unless `wide`.
    fn write(v: &[Self], wide: bool, out: &mut [u8]);
    /// Eigen-decomposition of the Hermitian `n`×`n` column-major `a` from its `lower` or upper
    /// triangle: eigenvalues ascending and eigenvectors as columns (`None`: no convergence).
    fn eigh(a: &[Self], n: usize, lower: bool) -> Option<(Vec<f64>, Vec<Self>)>;
    /// SVD of the `m`×`n` column-major `a`: singular values descending, `u` (`m`×`m`, or `m`×`k`
    /// when `thin`), `v` (`n`×`n` or `n`×`k`), column-major.
    fn svd(a: &[Self], m: usize, n: usize, thin: bool) -> Option<Svd<Self>>;
}

/// An SVD's factors, column-major.
pub(crate) struct Svd<T> {
    pub(crate) s: Vec<f64>,
    pub(crate) u: Vec<T>,
    pub(crate) v: Vec<T>,
}

fn read_f64s(bytes: &[u8], wide: bool) -> Vec<f64> {
    if wide {
        bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    } else {
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect()
    }
}

fn write_f64s(v: impl Iterator<Item = f64>, wide: bool, out: &mut [u8]) {
    if wide {
        for (o, x) in out.chunks_exact_mut(8).zip(v) {
            o.copy_from_slice(&x.to_le_bytes());
        }
    } else {
        for (o, x) in out.chunks_exact_mut(4).zip(v) {
            o.copy_from_slice(&(x as f32).to_le_bytes());
        }
    }
}

impl Scalar for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    fn conj(self) -> f64 {
        self
    }
    fn re(self) -> f64 {
        self
    }
    fn im(self) -> f64 {
        0.0
    }
    fn from_re(re: f64) -> f64 {
        re
    }
    fn abs2(self) -> f64 {
        self * self
    }
    fn read(bytes: &[u8], wide: bool) -> Vec<f64> {
        read_f64s(bytes, wide)
    }
    fn write(v: &[f64], wide: bool, out: &mut [u8]) {
        write_f64s(v.iter().copied(), wide, out)
    }
    fn eigh(a: &[f64], n: usize, lower: bool) -> Option<(Vec<f64>, Vec<f64>)> {
        eigh::faer_eigh(a, n, lower)
    }
    fn svd(a: &[f64], m: usize, n: usize, thin: bool) -> Option<Svd<f64>> {
        svd::faer_svd(a, m, n, thin)
    }
}

impl Scalar for c64 {
    const ZERO: c64 = c64 { re: 0.0, im: 0.0 };
    const ONE: c64 = c64 { re: 1.0, im: 0.0 };
    fn conj(self) -> c64 {
        c64::new(self.re, -self.im)
    }
    fn re(self) -> f64 {
        self.re
    }
    fn im(self) -> f64 {
        self.im
    }
    fn from_re(re: f64) -> c64 {
        c64::new(re, 0.0)
    }
    fn abs2(self) -> f64 {
        self.re * self.re + self.im * self.im
    }
    fn read(bytes: &[u8], wide: bool) -> Vec<c64> {
        let f = read_f64s(bytes, wide);
        f.chunks_exact(2).map(|p| c64::new(p[0], p[1])).collect()
    }
    fn write(v: &[c64], wide: bool, out: &mut [u8]) {
        write_f64s(v.iter().flat_map(|z| [z.re, z.im]), wide, out)
    }
    fn eigh(a: &[c64], n: usize, lower: bool) -> Option<(Vec<f64>, Vec<c64>)> {
        eigh::faer_eigh(a, n, lower)
    }
    fn svd(a: &[c64], m: usize, n: usize, thin: bool) -> Option<Svd<c64>> {
        svd::faer_svd(a, m, n, thin)
    }
}

/// Calls `$f::<T>(frame, wide)` with the scalar type of element type `$ty`.
macro_rules! with_scalar {
    ($ty:expr, $f:ident, $frame:expr) => {
        match $ty {
            proto::xla::PrimitiveType::F32 => $f::<f64>($frame, false),
            proto::xla::PrimitiveType::F64 => $f::<f64>($frame, true),
            proto::xla::PrimitiveType::C64 => $f::<$crate::ffi::c64>($frame, false),
            proto::xla::PrimitiveType::C128 => $f::<$crate::ffi::c64>($frame, true),
            t => Err($crate::ffi::HandlerError::UnsupportedElementType(
                t.as_str_name(),
            )),
        }
    };
}
pub(crate) use with_scalar;

/// Operand `i`'s bytes and shape, checking they agree in size.
pub(crate) fn operand<'f>(
    frame: &'f CallFrame<'_>,
    i: usize,
) -> Result<(&'f [u8], &'f schema::ArrayShape), HandlerError> {
    let bytes = frame
        .operands
        .get(i)
        .and_then(Option::as_ref)
        .ok_or(HandlerError::Missing {
            side: Side::Operand,
            index: i,
        })?;
    let shape =
        frame
            .operand_shapes
            .get(i)
            .and_then(Option::as_ref)
            .ok_or(HandlerError::NoShape {
                side: Side::Operand,
                index: i,
            })?;
    sized(bytes.len(), shape, Side::Operand, i)?;
    Ok((bytes, shape))
}

/// Result `i`'s shape.
pub(crate) fn result_shape<'f>(
    frame: &'f CallFrame<'_>,
    i: usize,
) -> Result<&'f schema::ArrayShape, HandlerError> {
    frame
        .result_shapes
        .get(i)
        .and_then(Option::as_ref)
        .ok_or(HandlerError::NoShape {
            side: Side::Result,
            index: i,
        })
}

/// Result `i`'s bytes, checked against its shape.
pub(crate) fn result_bytes<'f>(
    frame: &'f mut CallFrame<'_>,
    i: usize,
) -> Result<&'f mut [u8], HandlerError> {
    let shape = result_shape(frame, i)?.clone();
    let bytes = frame
        .results
        .get_mut(i)
        .and_then(Option::as_mut)
        .ok_or(HandlerError::Missing {
            side: Side::Result,
            index: i,
        })?;
    sized(bytes.len(), &shape, Side::Result, i)?;
    Ok(bytes)
}

fn sized(
    len: usize,
    shape: &schema::ArrayShape,
    side: Side,
    index: usize,
) -> Result<(), HandlerError> {
    let width = shape
        .ty()
        .and_then(check::byte_width)
        .ok_or(HandlerError::NoByteWidth { side, index })?;
    let want = shape
        .byte_size(width)
        .ok_or_else(|| HandlerError::Unsizable {
            side,
            index,
            dims: shape.dimensions.clone(),
        })?;
    if want != len as u64 {
        return Err(HandlerError::WrongSize {
            side,
            index,
            len,
            dims: shape.dimensions.clone(),
            want,
        });
    }
    Ok(())
}

/// The element type of operand `i`.
pub(crate) fn operand_type(frame: &CallFrame<'_>, i: usize) -> Result<PrimitiveType, HandlerError> {
    let (_, s) = operand(frame, i)?;
    s.ty().ok_or(HandlerError::UnknownElementType { index: i })
}

/// Writes `v` to result `i` as scalars of `T`.
pub(crate) fn put<T: Scalar>(
    frame: &mut CallFrame<'_>,
    i: usize,
    v: &[T],
    wide: bool,
) -> Result<(), HandlerError> {
    let out = result_bytes(frame, i)?;
    let width = if wide { 8 } else { 4 } * (std::mem::size_of::<T>() / 8);
    if out.len() != v.len() * width {
        return Err(HandlerError::ResultElements {
            index: i,
            len: out.len(),
            elements: v.len(),
            words: false,
        });
    }
    T::write(v, wide, out);
    Ok(())
}

/// Writes `v` to result `i` as int32.
pub(crate) fn put_i32(frame: &mut CallFrame<'_>, i: usize, v: &[i32]) -> Result<(), HandlerError> {
    let u: Vec<u32> = v.iter().map(|&x| x as u32).collect();
    put_u32(frame, i, &u)
}

/// Writes `v` to result `i` as 32-bit words.
pub(crate) fn put_u32(frame: &mut CallFrame<'_>, i: usize, v: &[u32]) -> Result<(), HandlerError> {
    let out = result_bytes(frame, i)?;
    if out.len() != v.len() * 4 {
        return Err(HandlerError::ResultElements {
            index: i,
            len: out.len(),
            elements: v.len(),
            words: true,
        });
    }
    for (o, x) in out.chunks_exact_mut(4).zip(v) {
        o.copy_from_slice(&x.to_le_bytes());
    }
    Ok(())
}

/// `(batch, rows, cols)` of a batch of matrices.
pub(crate) fn split_batch(
    shape: &schema::ArrayShape,
) -> Result<(usize, usize, usize), HandlerError> {
    let d = &shape.dimensions;
    if d.len() < 2 || d.iter().any(|&x| x < 0) {
        return Err(HandlerError::NotABatch(d.clone()));
    }
    let r = d.len();
    let too_big = || HandlerError::TooLarge(d.clone());
    let batch = d[..r - 2]
        .iter()
        .try_fold(1usize, |acc, &x| acc.checked_mul(usize::try_from(x).ok()?))
        .ok_or_else(too_big)?;
    let dim = |x: i64| usize::try_from(x).map_err(|_| too_big());
    Ok((batch, dim(d[r - 2])?, dim(d[r - 1])?))
}
