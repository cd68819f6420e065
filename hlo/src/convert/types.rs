//! Element types: the table between the IR's [`PrimitiveType`] and the proto's, and the
//! custom-call API versions.

use proto::xla as px;

use crate::shape::PrimitiveType;

pub(super) const TYPE_TABLE: &[(PrimitiveType, px::PrimitiveType)] = &[
    (PrimitiveType::Pred, px::PrimitiveType::Pred),
    (PrimitiveType::S2, px::PrimitiveType::S2),
    (PrimitiveType::S4, px::PrimitiveType::S4),
    (PrimitiveType::S8, px::PrimitiveType::S8),
    (PrimitiveType::S16, px::PrimitiveType::S16),
    (PrimitiveType::S32, px::PrimitiveType::S32),
    (PrimitiveType::S64, px::PrimitiveType::S64),
    (PrimitiveType::U2, px::PrimitiveType::U2),
    (PrimitiveType::U4, px::PrimitiveType::U4),
    (PrimitiveType::U8, px::PrimitiveType::U8),
    (PrimitiveType::U16, px::PrimitiveType::U16),
    (PrimitiveType::U32, px::PrimitiveType::U32),
    (PrimitiveType::U64, px::PrimitiveType::U64),
    (PrimitiveType::F16, px::PrimitiveType::F16),
    (PrimitiveType::Bf16, px::PrimitiveType::Bf16),
    (PrimitiveType::F32, px::PrimitiveType::F32),
    (PrimitiveType::F64, px::PrimitiveType::F64),
    (PrimitiveType::C64, px::PrimitiveType::C64),
    (PrimitiveType::C128, px::PrimitiveType::C128),
    // The legacy numbers first: what `element_type_to_proto` writes until stage 2 (see
    // `WriteOptions::narrow_floats_at_xla_numbers`); XLA's numbers below are read too.
    (PrimitiveType::F4E2M1FN, px::PrimitiveType::F4e2m1fnLegacy),
    (PrimitiveType::F8E3M4, px::PrimitiveType::F8e3m4),
    (PrimitiveType::F8E4M3, px::PrimitiveType::F8e4m3),
    (PrimitiveType::F8E4M3FN, px::PrimitiveType::F8e4m3fn),
    (
        PrimitiveType::F8E4M3B11FNUZ,
        px::PrimitiveType::F8e4m3b11fnuz,
    ),
    (PrimitiveType::F8E4M3FNUZ, px::PrimitiveType::F8e4m3fnuz),
    (PrimitiveType::F8E5M2, px::PrimitiveType::F8e5m2),
    (PrimitiveType::F8E5M2FNUZ, px::PrimitiveType::F8e5m2fnuz),
    (PrimitiveType::F8E8M0FNU, px::PrimitiveType::F8e8m0fnuLegacy),
    // XLA's numbers for the two types above (issue 19, stage 1): read from any artifact, written
    // only behind `WriteOptions::narrow_floats_at_xla_numbers`. The legacy rows above go when
    // 30 and 31 are retired, 6 months after stage 2 (after 2027-06-15).
    (PrimitiveType::F4E2M1FN, px::PrimitiveType::F4e2m1fn),
    (PrimitiveType::F8E8M0FNU, px::PrimitiveType::F8e8m0fnu),
    (PrimitiveType::Opaque, px::PrimitiveType::OpaqueType),
];

/// XLA's number for an element type written at a legacy number (`F4E2M1FN` 30 → 32,
/// `F8E8M0FNU` 31 → 33); every other value as it is. What
/// `WriteOptions::narrow_floats_at_xla_numbers` writes, and what the compiler applies to every
/// `xla.PrimitiveType` its executable carries outside the module.
// Can be removed in June 2027 (6 months backward compatibility window).
pub fn element_type_at_xla_number(t: i32) -> i32 {
    const MOVED: [(px::PrimitiveType, px::PrimitiveType); 2] = [
        (
            px::PrimitiveType::F4e2m1fnLegacy,
            px::PrimitiveType::F4e2m1fn,
        ),
        (
            px::PrimitiveType::F8e8m0fnuLegacy,
            px::PrimitiveType::F8e8m0fnu,
        ),
    ];
    MOVED
        .iter()
        .find(|(legacy, _)| *legacy as i32 == t)
        .map_or(t, |(_, xla)| *xla as i32)
}

/// The proto enum value of an element type, if the proto has one (the legacy numbers of
/// `F4E2M1FN` and `F8E8M0FNU` until stage 2 of their move, see [`super::WriteOptions`]).
pub fn element_type_to_proto(t: PrimitiveType) -> Option<px::PrimitiveType> {
    TYPE_TABLE.iter().find(|(a, _)| *a == t).map(|(_, b)| *b)
}

/// The element type of a proto enum value, if it is an array element type (both numbers of
/// `F4E2M1FN` and `F8E8M0FNU`).
pub fn element_type_from_proto(t: px::PrimitiveType) -> Option<PrimitiveType> {
    TYPE_TABLE.iter().find(|(_, b)| *b == t).map(|(a, _)| *a)
}

/// Text of an IR API version as XLA prints it, and its proto enum value.
pub(super) const API_VERSIONS: &[(&str, px::CustomCallApiVersion)] = &[
    (
        "API_VERSION_ORIGINAL",
        px::CustomCallApiVersion::ApiVersionOriginal,
    ),
    (
        "API_VERSION_STATUS_RETURNING",
        px::CustomCallApiVersion::ApiVersionStatusReturning,
    ),
    (
        "API_VERSION_STATUS_RETURNING_UNIFIED",
        px::CustomCallApiVersion::ApiVersionStatusReturningUnified,
    ),
    (
        "API_VERSION_TYPED_FFI",
        px::CustomCallApiVersion::ApiVersionTypedFfi,
    ),
];
