//! Handlers for JAX's stable CUDA custom-call targets (`_CUSTOM_CALL_TARGETS_GUARANTEED_STABLE`
//! in `jax/_src/export/_export.py`), on host copies of the buffers, keeping cuSOLVER's,
//! cuSPARSE's and jaxlib's conventions: column-major matrices in batch-major order, 1-based int32
//! pivots, LAPACK's Householder `tau`, `info` outputs (see docs/custom_calls.md).
//!
//! Every target declares its attributes ([`schema::AttrSpec`]) and a load check of its operands
//! and results, so an artifact the handler cannot take fails to load, naming the field.
//!
//! Precision (docs/jax_backcompat.md, "Precision"): each handler computes in its operand's own
//! precision, as cuSOLVER does (f32 and c64 in f32, f64 and c128 in f64), and the hand-written
//! LAPACK ports keep LAPACK's unblocked order with fused multiply-adds where a GPU contracts them
//! (`Scalar::add_mul`), so their roundoff is a GPU's. The faer-backed decompositions (`syevd`,
//! `gesvd`, `gesvdj`) are the exception: faer's algorithms are not cuSOLVER's, so f32 and c64
//! operands go through faer in f64 and are rounded once; only their results' type follows the
//! operand.
use num_traits::Float;
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
pub use faer::{c32, c64};

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

/// The real type a handler computes in: the operand's own precision (`f32` for F32 and C64,
/// `f64` for F64 and C128), as cuSOLVER does.
pub(crate) trait Real: Scalar<Real = Self> + num_traits::Float {
    /// `x` rounded to this type.
    fn of(x: f64) -> Self;
    /// `self` widened exactly.
    fn wide(self) -> f64;
}

impl Real for f32 {
    fn of(x: f64) -> f32 {
        x as f32
    }
    fn wide(self) -> f64 {
        f64::from(self)
    }
}

impl Real for f64 {
    fn of(x: f64) -> f64 {
        x
    }
    fn wide(self) -> f64 {
        self
    }
}

/// The field a solver computes in: [`Real`] types for F32/F64, [`c32`]/[`c64`] for C64/C128.
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
    /// The type of the parts.
    type Real: Real;
    const ZERO: Self;
    const ONE: Self;
    /// The complex conjugate (the value itself for reals).
    fn conj(self) -> Self;
    /// The real part.
    fn re(self) -> Self::Real;
    /// The imaginary part (0 for reals).
    fn im(self) -> Self::Real;
    /// `re + 0i`.
    fn from_re(re: Self::Real) -> Self;
    /// `re + im i` (`re` for reals, whose callers pass an `im` of 0).
    fn from_parts(re: Self::Real, im: Self::Real) -> Self;
    /// `|x|²`, fused as a GPU contracts it (`fma(im, im, re²)`).
    fn abs2(self) -> Self::Real {
        let (re, im) = (self.re(), self.im());
        im.mul_add(im, re * re)
    }
    /// `|re| + |im|` (BLAS's `cabs1`, the pivot measure of `izamax`).
    fn abs1(self) -> Self::Real {
        self.re().abs() + self.im().abs()
    }
    /// `x * s` for a real `s`.
    fn scale(self, s: Self::Real) -> Self {
        self * Self::from_re(s)
    }
    /// `self + a b` with fused multiply-adds where a GPU contracts them: one `fma` for reals,
    /// CUDA's `cuCfma` order for complex (`re = fma(-a.im, b.im, fma(a.re, b.re, c.re))`,
    /// `im = fma(a.im, b.re, fma(a.re, b.im, c.im))`).
    fn add_mul(self, a: Self, b: Self) -> Self;
    /// Decodes little-endian elements of this type (complex: interleaved pairs).
    fn read(bytes: &[u8]) -> Vec<Self>;
    /// Encodes little-endian elements of this type.
    fn write(v: &[Self], out: &mut [u8]);
    /// The f64-based type faer computes this type's decompositions in.
    type Wide: Scalar<Real = f64> + faer::traits::ComplexField;
    /// `self` widened exactly.
    fn widen(self) -> Self::Wide;
    /// `w` rounded to this type.
    fn narrow(w: Self::Wide) -> Self;
}

macro_rules! real_scalar {
    ($t:ty, $bytes:literal) => {
        impl Scalar for $t {
            type Real = $t;
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            fn conj(self) -> $t {
                self
            }
            fn re(self) -> $t {
                self
            }
            fn im(self) -> $t {
                0.0
            }
            fn from_re(re: $t) -> $t {
                re
            }
            fn from_parts(re: $t, _im: $t) -> $t {
                re
            }
            fn abs2(self) -> $t {
                self * self
            }
            fn add_mul(self, a: $t, b: $t) -> $t {
                a.mul_add(b, self)
            }
            fn read(bytes: &[u8]) -> Vec<$t> {
                bytes
                    .chunks_exact($bytes)
                    .map(|c| <$t>::from_le_bytes(c.try_into().unwrap_or([0; $bytes])))
                    .collect()
            }
            fn write(v: &[$t], out: &mut [u8]) {
                for (o, x) in out.chunks_exact_mut($bytes).zip(v) {
                    o.copy_from_slice(&x.to_le_bytes());
                }
            }
            type Wide = f64;
            fn widen(self) -> f64 {
                Real::wide(self)
            }
            fn narrow(w: f64) -> $t {
                <$t as Real>::of(w)
            }
        }
    };
}
real_scalar!(f32, 4);
real_scalar!(f64, 8);

macro_rules! complex_scalar {
    ($t:ident, $r:ty) => {
        impl Scalar for $t {
            type Real = $r;
            const ZERO: $t = $t { re: 0.0, im: 0.0 };
            const ONE: $t = $t { re: 1.0, im: 0.0 };
            fn conj(self) -> $t {
                $t::new(self.re, -self.im)
            }
            fn re(self) -> $r {
                self.re
            }
            fn im(self) -> $r {
                self.im
            }
            fn from_re(re: $r) -> $t {
                $t::new(re, 0.0)
            }
            fn from_parts(re: $r, im: $r) -> $t {
                $t::new(re, im)
            }
            fn add_mul(self, a: $t, b: $t) -> $t {
                let re = (-a.im).mul_add(b.im, a.re.mul_add(b.re, self.re));
                let im = a.im.mul_add(b.re, a.re.mul_add(b.im, self.im));
                $t::new(re, im)
            }
            fn read(bytes: &[u8]) -> Vec<$t> {
                let parts = <$r as Scalar>::read(bytes);
                parts.chunks_exact(2).map(|p| $t::new(p[0], p[1])).collect()
            }
            fn write(v: &[$t], out: &mut [u8]) {
                let parts: Vec<$r> = v.iter().flat_map(|z| [z.re, z.im]).collect();
                <$r as Scalar>::write(&parts, out)
            }
            type Wide = c64;
            fn widen(self) -> c64 {
                c64::new(Real::wide(self.re), Real::wide(self.im))
            }
            fn narrow(w: c64) -> $t {
                $t::new(<$r as Real>::of(w.re), <$r as Real>::of(w.im))
            }
        }
    };
}
complex_scalar!(c32, f32);
complex_scalar!(c64, f64);

/// Calls `$f::<T>(frame)` with the scalar type of element type `$ty`.
macro_rules! with_scalar {
    ($ty:expr, $f:ident, $frame:expr) => {
        match $ty {
            proto::xla::PrimitiveType::F32 => $f::<f32>($frame),
            proto::xla::PrimitiveType::F64 => $f::<f64>($frame),
            proto::xla::PrimitiveType::C64 => $f::<$crate::ffi::c32>($frame),
            proto::xla::PrimitiveType::C128 => $f::<$crate::ffi::c64>($frame),
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
) -> Result<(), HandlerError> {
    let out = result_bytes(frame, i)?;
    if out.len() != std::mem::size_of_val(v) {
        return Err(HandlerError::ResultElements {
            index: i,
            len: out.len(),
            elements: v.len(),
            words: false,
        });
    }
    T::write(v, out);
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
