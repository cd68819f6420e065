//! Host-side conversions between `hlo` arrays (what io files hold) and the little-endian,
//! row-major bytes the executable's buffers hold.
use half::{bf16, f16};
use hlo::Complex;
use hlo::PrimitiveType;
use hlo::{Array, DType, Data, F8E4M3FN, F8E5M2};

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
        Data::F8E4M3FN(v) => le(v, F8E4M3FN::to_le_bytes),
        Data::F8E5M2(v) => le(v, F8E5M2::to_le_bytes),
        Data::F32(v) => le(v, f32::to_le_bytes),
        Data::F64(v) => le(v, f64::to_le_bytes),
        // XLA's layout: real part then imaginary part, each little-endian.
        Data::C64(v) => v
            .iter()
            .flat_map(|z| [z.re.to_le_bytes(), z.im.to_le_bytes()])
            .flatten()
            .collect(),
        Data::C128(v) => v
            .iter()
            .flat_map(|z| [z.re.to_le_bytes(), z.im.to_le_bytes()])
            .flatten()
            .collect(),
    }
}

/// An array of `element_type` and `dims` from its bytes.
pub fn array_from_bytes(element_type: PrimitiveType, dims: &[i64], bytes: &[u8]) -> Result<Array> {
    let dtype = DType::from_primitive(element_type).ok_or_else(|| {
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
        DType::F8E4M3FN => Data::F8E4M3FN(chunks(bytes, F8E4M3FN::from_le_bytes)),
        DType::F8E5M2 => Data::F8E5M2(chunks(bytes, F8E5M2::from_le_bytes)),
        DType::F32 => Data::F32(chunks(bytes, f32::from_le_bytes)),
        DType::F64 => Data::F64(chunks(bytes, f64::from_le_bytes)),
        DType::C64 => Data::C64(chunks(bytes, |b: [u8; 8]| {
            let part = |i: usize| f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            Complex::new(part(0), part(4))
        })),
        DType::C128 => Data::C128(chunks(bytes, |b: [u8; 16]| {
            let part = |i: usize| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&b[i..i + 8]);
                f64::from_le_bytes(w)
            };
            Complex::new(part(0), part(8))
        })),
    };
    Array::new(dims, data).map_err(|e| {
        invalid(format!(
            "output bytes do not form a {element_type} array: {e}"
        ))
    })
}

/// Pins the byte layout of every element type in both directions (little-endian, row-major,
/// pred as 0/1 bytes) and the errors.
#[cfg(test)]
mod tests {
    use super::*;

    fn ty(name: &str) -> PrimitiveType {
        PrimitiveType::from_name(name).expect("an HLO element type name")
    }

    fn round_trip(name: &str, dims: &[i64], data: Data, bytes: &[u8]) {
        let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
        let a = Array::new(shape, data).expect("a valid array");
        assert_eq!(array_to_bytes(&a), bytes, "{name} to bytes");
        assert_eq!(
            array_from_bytes(ty(name), dims, bytes).expect("decodes"),
            a,
            "{name} from bytes"
        );
    }

    #[test]
    fn every_element_type_is_little_endian_row_major() {
        round_trip(
            "pred",
            &[3],
            Data::Pred(vec![true, false, true]),
            &[1, 0, 1],
        );
        round_trip("s8", &[2], Data::S8(vec![-1, 2]), &[0xff, 2]);
        let e4 = [1.0, -448.0].map(hlo::F8E4M3FN::from_f64).to_vec();
        round_trip("f8e4m3fn", &[2], Data::F8E4M3FN(e4), &[0x38, 0xfe]);
        let e5 = [1.0, f64::INFINITY].map(hlo::F8E5M2::from_f64).to_vec();
        round_trip("f8e5m2", &[2], Data::F8E5M2(e5), &[0x3c, 0x7c]);
        round_trip(
            "s16",
            &[2],
            Data::S16(vec![-2, 0x0102]),
            &[0xfe, 0xff, 2, 1],
        );
        round_trip("s32", &[1], Data::S32(vec![0x0102_0304]), &[4, 3, 2, 1]);
        round_trip(
            "s64",
            &[1],
            Data::S64(vec![-2]),
            &[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        );
        round_trip("u8", &[2], Data::U8(vec![7, 200]), &[7, 200]);
        round_trip("u16", &[1], Data::U16(vec![0xabcd]), &[0xcd, 0xab]);
        round_trip(
            "u32",
            &[1],
            Data::U32(vec![0xdead_beef]),
            &[0xef, 0xbe, 0xad, 0xde],
        );
        round_trip(
            "u64",
            &[1],
            Data::U64(vec![1 << 56]),
            &[0, 0, 0, 0, 0, 0, 0, 1],
        );
        // 1.0: f16 0x3c00, bf16 0x3f80, f32 0x3f800000, f64 0x3ff0000000000000.
        round_trip("f16", &[1], Data::F16(vec![f16::ONE]), &[0x00, 0x3c]);
        round_trip("bf16", &[1], Data::BF16(vec![bf16::ONE]), &[0x80, 0x3f]);
        round_trip("f32", &[1], Data::F32(vec![1.0]), &[0, 0, 0x80, 0x3f]);
        round_trip(
            "f64",
            &[1],
            Data::F64(vec![1.0]),
            &[0, 0, 0, 0, 0, 0, 0xf0, 0x3f],
        );
        // Row-major: a 2x2 s32 [[1, 2], [3, 4]].
        round_trip(
            "s32",
            &[2, 2],
            Data::S32(vec![1, 2, 3, 4]),
            &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0],
        );
    }

    #[test]
    fn complex_elements_are_real_then_imaginary_part() {
        use hlo::Complex;
        round_trip(
            "c64",
            &[1],
            Data::C64(vec![Complex::new(1.0, -2.0)]),
            &[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0],
        );
        let mut bytes = 1.5f64.to_le_bytes().to_vec();
        bytes.extend(f64::NEG_INFINITY.to_le_bytes());
        round_trip(
            "c128",
            &[1, 1],
            Data::C128(vec![Complex::new(1.5, f64::NEG_INFINITY)]),
            &bytes,
        );
    }

    #[test]
    fn any_non_zero_byte_is_a_true_pred() {
        let a = array_from_bytes(ty("pred"), &[3], &[0, 2, 255]).expect("decodes");
        assert_eq!(a.data(), &Data::Pred(vec![false, true, true]));
    }

    #[test]
    fn unknown_types_and_wrong_sizes_are_invalid_arguments() {
        assert_eq!(
            array_from_bytes(ty("s4"), &[1], &[0; 1]).map_err(|e| e.to_string()),
            Err("INVALID_ARGUMENT: element type s4 has no host array form".to_owned())
        );
        let err = array_from_bytes(ty("f32"), &[2], &[0; 4]).map_err(|e| e.to_string());
        let msg = err.expect_err("4 bytes are not two f32");
        assert!(
            msg.starts_with("INVALID_ARGUMENT: output bytes do not form a f32 array: "),
            "{msg}"
        );
        // A negative dimension counts as 0 elements.
        let a = array_from_bytes(ty("u8"), &[-1], &[]).expect("an empty array");
        assert_eq!(a.dims(), [0]);
    }
}
