//! The element types an array holds host values of ([`DType`]), the subset of
//! [`PrimitiveType`] the evaluator, io files and thunks use.
use thiserror::Error;

use crate::shape::PrimitiveType;

/// The element types an array can hold values of: the subset of [`PrimitiveType`] that the
/// evaluator computes with, io files carry and the runtime's thunks read and write. Each variant
/// is the [`PrimitiveType`] of the same name ([`DType::primitive`]; [`TryFrom`] the other way),
/// so `hlo::PrimitiveType` stays the one element-type vocabulary and this type only says "has
/// host values". An enum rather than a checked `PrimitiveType`, so that a `match` on a `DType`
/// is exhaustive by itself: no arm for the types without host values, which cannot occur.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// Boolean.
    Pred,
    /// Signed 8-bit integer.
    S8,
    /// Signed 16-bit integer.
    S16,
    /// Signed 32-bit integer.
    S32,
    /// Signed 64-bit integer.
    S64,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
    /// IEEE half precision.
    F16,
    /// bfloat16.
    BF16,
    /// OCP FP8 with 4 exponent and 3 mantissa bits, no infinity (`hlo::F8E4M3FN`).
    F8E4M3FN,
    /// OCP FP8 with 5 exponent and 2 mantissa bits (`hlo::F8E5M2`).
    F8E5M2,
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
    /// Complex of two `f32` (real part, then imaginary part).
    C64,
    /// Complex of two `f64`.
    C128,
}

/// A [`PrimitiveType`] without host values (sub-byte, the fp8 formats but two, opaque) where a [`DType`]
/// was asked for.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
#[error("{} has no host values", .0.name())]
pub struct NoHostValues(pub PrimitiveType);

impl TryFrom<PrimitiveType> for DType {
    type Error = NoHostValues;
    fn try_from(t: PrimitiveType) -> Result<DType, NoHostValues> {
        ALL_DTYPES
            .iter()
            .copied()
            .find(|d| d.primitive() == t)
            .ok_or(NoHostValues(t))
    }
}

/// Every element type, in declaration order.
pub const ALL_DTYPES: [DType; 17] = [
    DType::Pred,
    DType::S8,
    DType::S16,
    DType::S32,
    DType::S64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::BF16,
    DType::F8E4M3FN,
    DType::F8E5M2,
    DType::F32,
    DType::F64,
    DType::C64,
    DType::C128,
];

impl DType {
    /// The element type this is.
    pub fn primitive(self) -> PrimitiveType {
        match self {
            DType::Pred => PrimitiveType::Pred,
            DType::S8 => PrimitiveType::S8,
            DType::S16 => PrimitiveType::S16,
            DType::S32 => PrimitiveType::S32,
            DType::S64 => PrimitiveType::S64,
            DType::U8 => PrimitiveType::U8,
            DType::U16 => PrimitiveType::U16,
            DType::U32 => PrimitiveType::U32,
            DType::U64 => PrimitiveType::U64,
            DType::F16 => PrimitiveType::F16,
            DType::BF16 => PrimitiveType::Bf16,
            DType::F8E4M3FN => PrimitiveType::F8E4M3FN,
            DType::F8E5M2 => PrimitiveType::F8E5M2,
            DType::F32 => PrimitiveType::F32,
            DType::F64 => PrimitiveType::F64,
            DType::C64 => PrimitiveType::C64,
            DType::C128 => PrimitiveType::C128,
        }
    }

    /// The `DType` of an element type; `None` for one without host values (sub-byte, the
    /// fp8 formats but `f8e4m3fn` and `f8e5m2`, opaque).
    pub fn from_primitive(t: PrimitiveType) -> Option<DType> {
        DType::try_from(t).ok()
    }

    /// The HLO spelling (`"f32"`, `"pred"`, ...): [`PrimitiveType::name`].
    pub fn name(self) -> &'static str {
        self.primitive().name()
    }

    /// Parses the HLO spelling with [`PrimitiveType::from_name`]; `None` for anything else,
    /// element types without host values included.
    pub fn from_name(name: &str) -> Option<DType> {
        PrimitiveType::from_name(name).and_then(DType::from_primitive)
    }

    /// True for `f16`, `bf16`, `f8e4m3fn`, `f8e5m2`, `f32`, `f64`.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            DType::F16 | DType::BF16 | DType::F8E4M3FN | DType::F8E5M2 | DType::F32 | DType::F64
        )
    }

    /// True for `c64` and `c128`.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// The type of one part of a complex type (`f32` for `c64`, `f64` for `c128`); any other
    /// type is its own component.
    pub fn component(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }

    /// True for `s8` .. `s64`.
    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::S8 | DType::S16 | DType::S32 | DType::S64)
    }

    /// True for `u8` .. `u64`.
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    /// True for signed and unsigned integers (not `pred`).
    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    /// Storage width in bits (`pred` counts as 8, as in XLA): [`PrimitiveType::bit_width`].
    pub fn bit_width(self) -> u32 {
        self.primitive().bit_width() as u32
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
