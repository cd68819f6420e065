//! Row-major element storage, one variant per element type ([`Data`]), its widened view
//! ([`Wide`]), and the element conversions XLA's `convert` does (see the parent module).
use half::{bf16, f16};

use crate::float8::{F8E4M3FN, F8E5M2};

use super::DType;
use crate::complex::{Complex, C128, C64};

/// Row-major element storage, one variant per element type.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// `pred`
    Pred(Vec<bool>),
    /// `s8`
    S8(Vec<i8>),
    /// `s16`
    S16(Vec<i16>),
    /// `s32`
    S32(Vec<i32>),
    /// `s64`
    S64(Vec<i64>),
    /// `u8`
    U8(Vec<u8>),
    /// `u16`
    U16(Vec<u16>),
    /// `u32`
    U32(Vec<u32>),
    /// `u64`
    U64(Vec<u64>),
    /// `f16`
    F16(Vec<f16>),
    /// `bf16`
    BF16(Vec<bf16>),
    /// `f8e4m3fn`
    F8E4M3FN(Vec<F8E4M3FN>),
    /// `f8e5m2`
    F8E5M2(Vec<F8E5M2>),
    /// `f32`
    F32(Vec<f32>),
    /// `f64`
    F64(Vec<f64>),
    /// `c64`
    C64(Vec<C64>),
    /// `c128`
    C128(Vec<C128>),
}

/// Applies `$body` to the vector inside any [`Data`] variant, binding it to `$v`.
macro_rules! with_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            Data::Pred($v) => $body,
            Data::S8($v) => $body,
            Data::S16($v) => $body,
            Data::S32($v) => $body,
            Data::S64($v) => $body,
            Data::U8($v) => $body,
            Data::U16($v) => $body,
            Data::U32($v) => $body,
            Data::U64($v) => $body,
            Data::F16($v) => $body,
            Data::BF16($v) => $body,
            Data::F8E4M3FN($v) => $body,
            Data::F8E5M2($v) => $body,
            Data::F32($v) => $body,
            Data::F64($v) => $body,
            Data::C64($v) => $body,
            Data::C128($v) => $body,
        }
    };
}

/// Like [`with_data!`] but rebuilds the same variant from the expression's `Vec` result.
macro_rules! map_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            Data::Pred($v) => Data::Pred($body),
            Data::S8($v) => Data::S8($body),
            Data::S16($v) => Data::S16($body),
            Data::S32($v) => Data::S32($body),
            Data::S64($v) => Data::S64($body),
            Data::U8($v) => Data::U8($body),
            Data::U16($v) => Data::U16($body),
            Data::U32($v) => Data::U32($body),
            Data::U64($v) => Data::U64($body),
            Data::F16($v) => Data::F16($body),
            Data::BF16($v) => Data::BF16($body),
            Data::F8E4M3FN($v) => Data::F8E4M3FN($body),
            Data::F8E5M2($v) => Data::F8E5M2($body),
            Data::F32($v) => Data::F32($body),
            Data::F64($v) => Data::F64($body),
            Data::C64($v) => Data::C64($body),
            Data::C128($v) => Data::C128($body),
        }
    };
}

/// Pairs two [`Data`] of the same variant; `$mismatch` when the variants differ.
macro_rules! zip_data {
    ($a:expr, $b:expr, ($x:ident, $y:ident) => $body:expr, $mismatch:expr) => {
        match ($a, $b) {
            (Data::Pred($x), Data::Pred($y)) => $body,
            (Data::S8($x), Data::S8($y)) => $body,
            (Data::S16($x), Data::S16($y)) => $body,
            (Data::S32($x), Data::S32($y)) => $body,
            (Data::S64($x), Data::S64($y)) => $body,
            (Data::U8($x), Data::U8($y)) => $body,
            (Data::U16($x), Data::U16($y)) => $body,
            (Data::U32($x), Data::U32($y)) => $body,
            (Data::U64($x), Data::U64($y)) => $body,
            (Data::F16($x), Data::F16($y)) => $body,
            (Data::BF16($x), Data::BF16($y)) => $body,
            (Data::F8E4M3FN($x), Data::F8E4M3FN($y)) => $body,
            (Data::F8E5M2($x), Data::F8E5M2($y)) => $body,
            (Data::F32($x), Data::F32($y)) => $body,
            (Data::F64($x), Data::F64($y)) => $body,
            (Data::C64($x), Data::C64($y)) => $body,
            (Data::C128($x), Data::C128($y)) => $body,
            _ => $mismatch,
        }
    };
}

/// Pairs two [`Data`] of the same variant and rebuilds that variant from the body's `Vec`.
macro_rules! zip_map_data {
    ($a:expr, $b:expr, ($x:ident, $y:ident) => $body:expr, $mismatch:expr) => {
        match ($a, $b) {
            (Data::Pred($x), Data::Pred($y)) => Data::Pred($body),
            (Data::S8($x), Data::S8($y)) => Data::S8($body),
            (Data::S16($x), Data::S16($y)) => Data::S16($body),
            (Data::S32($x), Data::S32($y)) => Data::S32($body),
            (Data::S64($x), Data::S64($y)) => Data::S64($body),
            (Data::U8($x), Data::U8($y)) => Data::U8($body),
            (Data::U16($x), Data::U16($y)) => Data::U16($body),
            (Data::U32($x), Data::U32($y)) => Data::U32($body),
            (Data::U64($x), Data::U64($y)) => Data::U64($body),
            (Data::F16($x), Data::F16($y)) => Data::F16($body),
            (Data::BF16($x), Data::BF16($y)) => Data::BF16($body),
            (Data::F8E4M3FN($x), Data::F8E4M3FN($y)) => Data::F8E4M3FN($body),
            (Data::F8E5M2($x), Data::F8E5M2($y)) => Data::F8E5M2($body),
            (Data::F32($x), Data::F32($y)) => Data::F32($body),
            (Data::F64($x), Data::F64($y)) => Data::F64($body),
            (Data::C64($x), Data::C64($y)) => Data::C64($body),
            (Data::C128($x), Data::C128($y)) => Data::C128($body),
            _ => $mismatch,
        }
    };
}

/// Element values widened to one of five carrier types, the form elementwise kernels compute in.
///
/// Floats widen exactly to `f64`, signed integers to `i64`, unsigned integers to `u64`, complex
/// numbers to two `f64`.
#[derive(Clone, Debug, PartialEq)]
pub enum Wide {
    /// Any float type.
    F(Vec<f64>),
    /// Any signed integer type.
    S(Vec<i64>),
    /// Any unsigned integer type.
    U(Vec<u64>),
    /// `pred`.
    P(Vec<bool>),
    /// Either complex type, parts widened to `f64`.
    C(Vec<C128>),
}

/// Converts an `f64` to any element type (XLA `convert` semantics, see the module docs).
trait FromF64 {
    fn from_f64(x: f64) -> Self;
}

impl Data {
    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            Data::Pred(_) => DType::Pred,
            Data::S8(_) => DType::S8,
            Data::S16(_) => DType::S16,
            Data::S32(_) => DType::S32,
            Data::S64(_) => DType::S64,
            Data::U8(_) => DType::U8,
            Data::U16(_) => DType::U16,
            Data::U32(_) => DType::U32,
            Data::U64(_) => DType::U64,
            Data::F16(_) => DType::F16,
            Data::BF16(_) => DType::BF16,
            Data::F8E4M3FN(_) => DType::F8E4M3FN,
            Data::F8E5M2(_) => DType::F8E5M2,
            Data::F32(_) => DType::F32,
            Data::F64(_) => DType::F64,
            Data::C64(_) => DType::C64,
            Data::C128(_) => DType::C128,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        with_data!(self, v => v.len())
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `n` zeros (false for `pred`) of type `dtype`.
    pub fn zeros(dtype: DType, n: usize) -> Data {
        Data::from_wide_s(dtype, vec![0; n])
    }

    /// Element `i` as `f64` (ints and pred converted, complex numbers' real part; `None` out of
    /// bounds).
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        Some(match self {
            Data::Pred(v) => f64::from(u8::from(*v.get(i)?)),
            Data::S8(v) => f64::from(*v.get(i)?),
            Data::S16(v) => f64::from(*v.get(i)?),
            Data::S32(v) => f64::from(*v.get(i)?),
            Data::S64(v) => *v.get(i)? as f64,
            Data::U8(v) => f64::from(*v.get(i)?),
            Data::U16(v) => f64::from(*v.get(i)?),
            Data::U32(v) => f64::from(*v.get(i)?),
            Data::U64(v) => *v.get(i)? as f64,
            Data::F16(v) => v.get(i)?.to_f64(),
            Data::BF16(v) => v.get(i)?.to_f64(),
            Data::F8E4M3FN(v) => v.get(i)?.to_f64(),
            Data::F8E5M2(v) => v.get(i)?.to_f64(),
            Data::F32(v) => f64::from(*v.get(i)?),
            Data::F64(v) => *v.get(i)?,
            Data::C64(v) => f64::from(v.get(i)?.re),
            Data::C128(v) => v.get(i)?.re,
        })
    }

    /// Element `i` as `i64` (floats truncated with saturation; `None` out of bounds).
    pub fn get_i64(&self, i: usize) -> Option<i64> {
        Some(match self {
            Data::Pred(v) => i64::from(*v.get(i)?),
            Data::S8(v) => i64::from(*v.get(i)?),
            Data::S16(v) => i64::from(*v.get(i)?),
            Data::S32(v) => i64::from(*v.get(i)?),
            Data::S64(v) => *v.get(i)?,
            Data::U8(v) => i64::from(*v.get(i)?),
            Data::U16(v) => i64::from(*v.get(i)?),
            Data::U32(v) => i64::from(*v.get(i)?),
            Data::U64(v) => *v.get(i)? as i64,
            Data::F16(v) => v.get(i)?.to_f64() as i64,
            Data::BF16(v) => v.get(i)?.to_f64() as i64,
            Data::F8E4M3FN(v) => v.get(i)?.to_f64() as i64,
            Data::F8E5M2(v) => v.get(i)?.to_f64() as i64,
            Data::F32(v) => *v.get(i)? as i64,
            Data::F64(v) => *v.get(i)? as i64,
            Data::C64(v) => v.get(i)?.re as i64,
            Data::C128(v) => v.get(i)?.re as i64,
        })
    }

    /// Element `i` as an index: like [`Data::get_i64`], but `u64` values above `i64::MAX`
    /// saturate instead of wrapping negative (so they clamp high, as XLA's unsigned indices do).
    pub fn get_index(&self, i: usize) -> Option<i64> {
        match self {
            Data::U64(v) => v.get(i).map(|x| i64::try_from(*x).unwrap_or(i64::MAX)),
            d => d.get_i64(i),
        }
    }

    /// Element `i` as a bool (`x != 0`; `None` out of bounds).
    pub fn get_bool(&self, i: usize) -> Option<bool> {
        match self {
            Data::Pred(v) => v.get(i).copied(),
            Data::U64(v) => v.get(i).map(|x| *x != 0),
            Data::C64(v) => v.get(i).map(|z| z.re != 0.0 || z.im != 0.0),
            Data::C128(v) => v.get(i).map(|z| z.re != 0.0 || z.im != 0.0),
            d if d.dtype().is_float() => d.get_f64(i).map(|x| x != 0.0),
            d => d.get_i64(i).map(|x| x != 0),
        }
    }

    /// Widens every element to its carrier type (exact).
    pub fn to_wide(&self) -> Wide {
        match self {
            Data::Pred(v) => Wide::P(v.clone()),
            Data::S8(v) => Wide::S(v.iter().map(|x| i64::from(*x)).collect()),
            Data::S16(v) => Wide::S(v.iter().map(|x| i64::from(*x)).collect()),
            Data::S32(v) => Wide::S(v.iter().map(|x| i64::from(*x)).collect()),
            Data::S64(v) => Wide::S(v.clone()),
            Data::U8(v) => Wide::U(v.iter().map(|x| u64::from(*x)).collect()),
            Data::U16(v) => Wide::U(v.iter().map(|x| u64::from(*x)).collect()),
            Data::U32(v) => Wide::U(v.iter().map(|x| u64::from(*x)).collect()),
            Data::U64(v) => Wide::U(v.clone()),
            Data::F16(v) => Wide::F(v.iter().map(|x| x.to_f64()).collect()),
            Data::BF16(v) => Wide::F(v.iter().map(|x| x.to_f64()).collect()),
            Data::F8E4M3FN(v) => Wide::F(v.iter().map(|x| x.to_f64()).collect()),
            Data::F8E5M2(v) => Wide::F(v.iter().map(|x| x.to_f64()).collect()),
            Data::F32(v) => Wide::F(v.iter().map(|x| f64::from(*x)).collect()),
            Data::F64(v) => Wide::F(v.clone()),
            Data::C64(v) => Wide::C(v.iter().map(|z| z.to_c128()).collect()),
            Data::C128(v) => Wide::C(v.clone()),
        }
    }

    /// All elements as `f64` (exact for floats and for integers up to 2^53; the real part of a
    /// complex number).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        match self.to_wide() {
            Wide::F(v) => v,
            Wide::S(v) => v.into_iter().map(|x| x as f64).collect(),
            Wide::U(v) => v.into_iter().map(|x| x as f64).collect(),
            Wide::P(v) => v.into_iter().map(|x| f64::from(u8::from(x))).collect(),
            Wide::C(v) => v.into_iter().map(|z| z.re).collect(),
        }
    }

    /// Builds `dtype` data from `f64` values (XLA `convert` semantics).
    pub fn from_wide_f(dtype: DType, v: Vec<f64>) -> Data {
        fn conv<T: FromF64>(v: &[f64]) -> Vec<T> {
            v.iter().map(|x| T::from_f64(*x)).collect()
        }
        match dtype {
            DType::F64 => Data::F64(v),
            DType::C64 | DType::C128 => {
                Data::from_complex(dtype, v.into_iter().map(Complex::from_real).collect())
            }
            DType::F32 => Data::F32(conv(&v)),
            DType::F16 => Data::F16(conv(&v)),
            DType::BF16 => Data::BF16(conv(&v)),
            DType::F8E4M3FN => Data::F8E4M3FN(conv(&v)),
            DType::F8E5M2 => Data::F8E5M2(conv(&v)),
            DType::Pred => Data::Pred(conv(&v)),
            DType::S8 => Data::S8(conv(&v)),
            DType::S16 => Data::S16(conv(&v)),
            DType::S32 => Data::S32(conv(&v)),
            DType::S64 => Data::S64(conv(&v)),
            DType::U8 => Data::U8(conv(&v)),
            DType::U16 => Data::U16(conv(&v)),
            DType::U32 => Data::U32(conv(&v)),
            DType::U64 => Data::U64(conv(&v)),
        }
    }

    /// Builds `dtype` data from `i64` values (wrapping for ints, rounding for floats).
    pub fn from_wide_s(dtype: DType, v: Vec<i64>) -> Data {
        match dtype {
            DType::Pred => Data::Pred(v.iter().map(|x| *x != 0).collect()),
            DType::S8 => Data::S8(v.iter().map(|x| *x as i8).collect()),
            DType::S16 => Data::S16(v.iter().map(|x| *x as i16).collect()),
            DType::S32 => Data::S32(v.iter().map(|x| *x as i32).collect()),
            DType::S64 => Data::S64(v),
            DType::U8 => Data::U8(v.iter().map(|x| *x as u8).collect()),
            DType::U16 => Data::U16(v.iter().map(|x| *x as u16).collect()),
            DType::U32 => Data::U32(v.iter().map(|x| *x as u32).collect()),
            DType::U64 => Data::U64(v.iter().map(|x| *x as u64).collect()),
            DType::F16 => Data::F16(v.iter().map(|x| f16_from_f64(*x as f64)).collect()),
            DType::BF16 => Data::BF16(v.iter().map(|x| bf16_from_f64(*x as f64)).collect()),
            DType::F8E4M3FN => {
                Data::F8E4M3FN(v.iter().map(|x| F8E4M3FN::from_f64(*x as f64)).collect())
            }
            DType::F8E5M2 => Data::F8E5M2(v.iter().map(|x| F8E5M2::from_f64(*x as f64)).collect()),
            DType::F32 => Data::F32(v.iter().map(|x| *x as f32).collect()),
            DType::F64 => Data::F64(v.iter().map(|x| *x as f64).collect()),
            // Rounded once, straight to the part type (as `cvt` does on the device).
            DType::C64 => Data::C64(v.iter().map(|x| Complex::from_real(*x as f32)).collect()),
            DType::C128 => Data::C128(v.iter().map(|x| Complex::from_real(*x as f64)).collect()),
        }
    }

    /// Builds `dtype` data from `u64` values (wrapping for ints, rounding for floats).
    pub fn from_wide_u(dtype: DType, v: Vec<u64>) -> Data {
        match dtype {
            DType::U64 => Data::U64(v),
            DType::F16 => Data::F16(v.iter().map(|x| f16_from_f64(*x as f64)).collect()),
            DType::BF16 => Data::BF16(v.iter().map(|x| bf16_from_f64(*x as f64)).collect()),
            DType::F8E4M3FN => {
                Data::F8E4M3FN(v.iter().map(|x| F8E4M3FN::from_f64(*x as f64)).collect())
            }
            DType::F8E5M2 => Data::F8E5M2(v.iter().map(|x| F8E5M2::from_f64(*x as f64)).collect()),
            DType::F32 => Data::F32(v.iter().map(|x| *x as f32).collect()),
            DType::F64 => Data::F64(v.iter().map(|x| *x as f64).collect()),
            // Rounded once, straight to the part type (as `cvt` does on the device).
            DType::C64 => Data::C64(v.iter().map(|x| Complex::from_real(*x as f32)).collect()),
            DType::C128 => Data::C128(v.iter().map(|x| Complex::from_real(*x as f64)).collect()),
            d => Data::from_wide_s(d, v.into_iter().map(|x| x as i64).collect()),
        }
    }

    /// Builds `dtype` data from bools (0 / 1).
    pub fn from_wide_p(dtype: DType, v: Vec<bool>) -> Data {
        match dtype {
            DType::Pred => Data::Pred(v),
            d => Data::from_wide_s(d, v.into_iter().map(i64::from).collect()),
        }
    }

    /// Builds `dtype` data from any carrier (XLA `convert` semantics: a real number becomes a
    /// complex one with imaginary part 0; a complex number converts to a real type through its
    /// real part, as XLA does, the imaginary part dropped).
    pub fn from_wide(dtype: DType, w: Wide) -> Data {
        match w {
            Wide::C(v) if dtype.is_complex() => Data::from_complex(dtype, v),
            Wide::C(v) => Data::from_wide_f(dtype, v.into_iter().map(|z| z.re).collect()),
            Wide::F(v) => Data::from_wide_f(dtype, v),
            Wide::S(v) => Data::from_wide_s(dtype, v),
            Wide::U(v) => Data::from_wide_u(dtype, v),
            Wide::P(v) => Data::from_wide_p(dtype, v),
        }
    }

    /// `c64` or `c128` data from values with `f64` parts (each part rounded to `f32` for `c64`);
    /// any other `dtype` gets the real parts.
    pub fn from_complex(dtype: DType, v: Vec<C128>) -> Data {
        match dtype {
            DType::C128 => Data::C128(v),
            DType::C64 => Data::C64(v.into_iter().map(Complex::from_c128).collect()),
            d => Data::from_wide(d, Wide::C(v)),
        }
    }

    /// Converts to another element type (XLA `convert`).
    pub fn convert(&self, to: DType) -> Data {
        if self.dtype() == to {
            return self.clone();
        }
        Data::from_wide(to, self.to_wide())
    }

    /// Raw bit patterns of every element, zero-extended to `u64`; a `c64` element is one `u64`
    /// (real part in the low half, as in memory), a `c128` element two (real, imaginary).
    pub fn to_bits(&self) -> Vec<u64> {
        match self {
            Data::Pred(v) => v.iter().map(|x| u64::from(*x)).collect(),
            Data::S8(v) => v.iter().map(|x| u64::from(*x as u8)).collect(),
            Data::S16(v) => v.iter().map(|x| u64::from(*x as u16)).collect(),
            Data::S32(v) => v.iter().map(|x| u64::from(*x as u32)).collect(),
            Data::S64(v) => v.iter().map(|x| *x as u64).collect(),
            Data::U8(v) => v.iter().map(|x| u64::from(*x)).collect(),
            Data::U16(v) => v.iter().map(|x| u64::from(*x)).collect(),
            Data::U32(v) => v.iter().map(|x| u64::from(*x)).collect(),
            Data::U64(v) => v.clone(),
            Data::F16(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
            Data::BF16(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
            Data::F8E4M3FN(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
            Data::F8E5M2(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
            Data::F32(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
            Data::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
            Data::C64(v) => v
                .iter()
                .map(|z| u64::from(z.re.to_bits()) | (u64::from(z.im.to_bits()) << 32))
                .collect(),
            Data::C128(v) => v
                .iter()
                .flat_map(|z| [z.re.to_bits(), z.im.to_bits()])
                .collect(),
        }
    }

    /// Rebuilds elements of `dtype` from bit patterns (truncated to the type's width), the
    /// inverse of [`Data::to_bits`] (two patterns per `c128` element).
    pub fn from_bits(dtype: DType, v: &[u64]) -> Data {
        match dtype {
            DType::Pred => Data::Pred(v.iter().map(|x| *x as u8 != 0).collect()),
            DType::S8 => Data::S8(v.iter().map(|x| *x as u8 as i8).collect()),
            DType::S16 => Data::S16(v.iter().map(|x| *x as u16 as i16).collect()),
            DType::S32 => Data::S32(v.iter().map(|x| *x as u32 as i32).collect()),
            DType::S64 => Data::S64(v.iter().map(|x| *x as i64).collect()),
            DType::U8 => Data::U8(v.iter().map(|x| *x as u8).collect()),
            DType::U16 => Data::U16(v.iter().map(|x| *x as u16).collect()),
            DType::U32 => Data::U32(v.iter().map(|x| *x as u32).collect()),
            DType::U64 => Data::U64(v.to_vec()),
            DType::F16 => Data::F16(v.iter().map(|x| f16::from_bits(*x as u16)).collect()),
            DType::BF16 => Data::BF16(v.iter().map(|x| bf16::from_bits(*x as u16)).collect()),
            DType::F8E4M3FN => {
                Data::F8E4M3FN(v.iter().map(|x| F8E4M3FN::from_bits(*x as u8)).collect())
            }
            DType::F8E5M2 => Data::F8E5M2(v.iter().map(|x| F8E5M2::from_bits(*x as u8)).collect()),
            DType::F32 => Data::F32(v.iter().map(|x| f32::from_bits(*x as u32)).collect()),
            DType::F64 => Data::F64(v.iter().map(|x| f64::from_bits(*x)).collect()),
            DType::C64 => Data::C64(
                v.iter()
                    .map(|x| {
                        let part = |b: u64| f32::from_bits(b as u32);
                        Complex::new(part(*x), part(*x >> 32))
                    })
                    .collect(),
            ),
            DType::C128 => Data::C128(
                v.chunks_exact(2)
                    .map(|p| Complex::new(f64::from_bits(p[0]), f64::from_bits(p[1])))
                    .collect(),
            ),
        }
    }

    /// The elements at `indices`, in that order; `None` if an index is out of bounds.
    pub fn take(&self, indices: &[usize]) -> Option<Data> {
        Some(map_data!(self, v => {
            let mut out = Vec::with_capacity(indices.len());
            for &i in indices {
                out.push(*v.get(i)?);
            }
            out
        }))
    }

    /// Like [`Data::take`], with `None` entries filled by element 0 of `fill` (same type).
    pub fn take_or(&self, indices: &[Option<usize>], fill: &Data) -> Option<Data> {
        Some(zip_map_data!(self, fill, (v, f) => {
            let fill = *f.first()?;
            let mut out = Vec::with_capacity(indices.len());
            for i in indices {
                out.push(match i {
                    Some(i) => *v.get(*i)?,
                    None => fill,
                });
            }
            out
        }, return None))
    }

    /// `n` copies of element `i`.
    pub fn splat(&self, i: usize, n: usize) -> Option<Data> {
        Some(map_data!(self, v => vec![*v.get(i)?; n]))
    }

    /// Concatenation of several data of the same type (`None` on a type mismatch or no parts).
    pub fn concat(parts: &[&Data]) -> Option<Data> {
        let first = parts.first()?;
        let mut out = Data::zeros(first.dtype(), 0);
        for p in parts {
            zip_data!(&mut out, p, (o, s) => o.extend_from_slice(s), return None);
        }
        Some(out)
    }

    /// Writes `src[k]` to `self[positions[k]]` for every `k` (same type; `None` when out of bounds).
    pub fn put(&mut self, positions: &[usize], src: &Data) -> Option<()> {
        zip_data!(self, src, (d, s) => {
            for (k, &p) in positions.iter().enumerate() {
                *d.get_mut(p)? = *s.get(k)?;
            }
        }, return None);
        Some(())
    }
}

macro_rules! from_f64_int {
    ($($t:ty),*) => {$(
        impl FromF64 for $t {
            fn from_f64(x: f64) -> Self {
                x as $t
            }
        }
    )*};
}
from_f64_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl FromF64 for bool {
    fn from_f64(x: f64) -> Self {
        x != 0.0
    }
}
impl FromF64 for f32 {
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}
/// `x` rounded to `f32` with round-to-odd: truncate toward zero, then set the last bit when
/// inexact. Rounding that result to a type with at least two fewer significand bits
/// (`f16`, `bf16`) with ties-to-even gives the correctly rounded result of `x` — unlike rounding
/// to nearest twice, which can mis-round ties.
fn f64_to_f32_round_odd(x: f64) -> f32 {
    let y = x as f32;
    if x.is_nan() || f64::from(y) == x {
        return y;
    }
    let mut bits = y.to_bits();
    if f64::from(y).abs() > x.abs() {
        bits -= 1; // one step toward zero in magnitude (sign-magnitude encoding)
    }
    f32::from_bits(bits | 1)
}

impl FromF64 for f16 {
    fn from_f64(x: f64) -> Self {
        f16::from_f32(f64_to_f32_round_odd(x))
    }
}
impl FromF64 for F8E4M3FN {
    fn from_f64(x: f64) -> Self {
        F8E4M3FN::from_f64(x)
    }
}
impl FromF64 for F8E5M2 {
    fn from_f64(x: f64) -> Self {
        F8E5M2::from_f64(x)
    }
}
impl FromF64 for bf16 {
    fn from_f64(x: f64) -> Self {
        bf16::from_f32(f64_to_f32_round_odd(x))
    }
}

/// `x` correctly rounded (ties to even) to `f16`.
pub fn f16_from_f64(x: f64) -> f16 {
    <f16 as FromF64>::from_f64(x)
}

/// `x` correctly rounded (ties to even) to `bf16`.
pub fn bf16_from_f64(x: f64) -> bf16 {
    <bf16 as FromF64>::from_f64(x)
}
