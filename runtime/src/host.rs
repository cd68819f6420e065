//! Host-side conversions between `hlo` arrays (what io files hold) and the little-endian,
//! row-major bytes the executable's buffers hold.
use half::{bf16, f16};
use hlo::literal::{Array, DType, Data};

use crate::error::{invalid, Result};

/// The bytes of an array (row-major, little-endian; pred as 0/1 bytes).
pub fn array_to_bytes(a: &Array) -> Vec<u8> {
    fn le<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }
    match a.data() {
        Data::Pred(v) => v.iter().map(|&b| u8::from(b)).collect(),
        Data::S8(v) => le(v, i8::to_le_bytes),
        Data::S16(v) => le(v, i16::to_le_bytes),
        Data::S32(v) => le(v, i32::to_le_bytes),
        Data::S64(v) => le(v, i64::to_le_bytes),
        Data::U8(v) => v.clone(),
        Data::U16(v) => le(v, u16::to_le_bytes),
        Data::U32(v) => le(v, u32::to_le_bytes),
        Data::U64(v) => le(v, u64::to_le_bytes),
        Data::F16(v) => le(v, f16::to_le_bytes),
        Data::BF16(v) => le(v, bf16::to_le_bytes),
        Data::F32(v) => le(v, f32::to_le_bytes),
        Data::F64(v) => le(v, f64::to_le_bytes),
    }
}

/// An array of `element_type` (HLO name, e.g. `f32`) and `dims` from its bytes.
pub fn array_from_bytes(element_type: &str, dims: &[i64], bytes: &[u8]) -> Result<Array> {
    let dtype = DType::from_name(element_type).ok_or_else(|| {
        invalid(format!(
            "element type {element_type} has no host array form"
        ))
    })?;
    let dims: Vec<usize> = dims
        .iter()
        .map(|&d| usize::try_from(d).unwrap_or(0))
        .collect();
    fn chunks<T, const N: usize>(b: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
        b.chunks_exact(N)
            .map(|c| {
                let mut a = [0u8; N];
                a.copy_from_slice(c);
                f(a)
            })
            .collect()
    }
    let data = match dtype {
        DType::Pred => Data::Pred(bytes.iter().map(|&b| b != 0).collect()),
        DType::S8 => Data::S8(chunks(bytes, i8::from_le_bytes)),
        DType::S16 => Data::S16(chunks(bytes, i16::from_le_bytes)),
        DType::S32 => Data::S32(chunks(bytes, i32::from_le_bytes)),
        DType::S64 => Data::S64(chunks(bytes, i64::from_le_bytes)),
        DType::U8 => Data::U8(bytes.to_vec()),
        DType::U16 => Data::U16(chunks(bytes, u16::from_le_bytes)),
        DType::U32 => Data::U32(chunks(bytes, u32::from_le_bytes)),
        DType::U64 => Data::U64(chunks(bytes, u64::from_le_bytes)),
        DType::F16 => Data::F16(chunks(bytes, f16::from_le_bytes)),
        DType::BF16 => Data::BF16(chunks(bytes, bf16::from_le_bytes)),
        DType::F32 => Data::F32(chunks(bytes, f32::from_le_bytes)),
        DType::F64 => Data::F64(chunks(bytes, f64::from_le_bytes)),
    };
    Array::new(dims, data).map_err(|e| {
        invalid(format!(
            "output bytes do not form a {element_type} array: {e}"
        ))
    })
}
