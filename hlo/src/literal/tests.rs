//! Unit tests of `literal`.
/// A `DType` is made only from the 17 host-valued element types; every other one is refused
/// with a message naming it; `Debug` keeps the names the enum's variants had.
#[test]
fn only_host_valued_element_types_are_dtypes() {
    for t in ALL_DTYPES {
        assert_eq!(DType::try_from(t.primitive()), Ok(t));
    }
    assert_eq!(
        DType::try_from(PrimitiveType::S4).map_err(|e| e.to_string()),
        Err("s4 has no host values".to_string())
    );
    assert_eq!(DType::from_name("s4"), None);
    assert_eq!(format!("{:?} {:?}", DType::BF16, DType::Pred), "BF16 Pred");
}

#[test]
fn every_dtype_is_one_primitive_type_with_its_name() {
    for d in ALL_DTYPES {
        assert_eq!(DType::from_primitive(d.primitive()), Some(d), "{d:?}");
        assert_eq!(d.name(), d.primitive().name(), "{d:?}");
        assert_eq!(DType::from_name(d.name()), Some(d), "{d:?}");
    }
    for name in ["s4", "f8e4m3fnuz", "token", "F32", ""] {
        assert_eq!(DType::from_name(name), None, "{name}");
    }
}
use half::{bf16, f16};

use super::*;
use crate::shape::PrimitiveType;

#[test]
fn strides_and_index() {
    let a = Array::new(vec![2, 3, 4], Data::S32((0..24).collect())).unwrap();
    assert_eq!(strides(a.dims()), vec![12, 4, 1]);
    assert_eq!(a.get_i64(&[1, 2, 3]).unwrap(), 23);
    assert_eq!(a.get_i64(&[0, 1, 0]).unwrap(), 4);
    assert!(a.get_i64(&[0, 3, 0]).is_err());
    assert!(a.get_i64(&[0, 0]).is_err());
    assert!(Array::new(vec![2, 2], Data::F32(vec![1.0])).is_err());
}

#[test]
fn convert_float_to_int_saturates() {
    let d = Data::F32(vec![1.9, -1.9, f32::NAN, 1e20, -1e20, -0.5]);
    assert_eq!(
        d.convert(DType::S32),
        Data::S32(vec![1, -1, 0, i32::MAX, i32::MIN, 0])
    );
    assert_eq!(d.convert(DType::U8), Data::U8(vec![1, 0, 0, 255, 0, 0]));
    assert_eq!(
        d.convert(DType::Pred),
        Data::Pred(vec![true, true, true, true, true, true])
    );
}

#[test]
fn convert_rounds_to_nearest_even() {
    // 1 + 2^-8 is exactly between two bf16 values (1 and 1 + 2^-7): ties to even gives 1.
    let tie = 1.0f32 + 2f32.powi(-8);
    let above = 1.0f32 + 2f32.powi(-8) + 2f32.powi(-20);
    let d = Data::F32(vec![tie, above]).convert(DType::BF16);
    assert_eq!(
        d,
        Data::BF16(vec![
            bf16::from_f32(1.0),
            bf16::from_f32(1.0 + 2f32.powi(-7))
        ])
    );
    // f16: 2049 is between 2048 and 2050 -> even mantissa 2048; 2051 -> 2052.
    let h = Data::F32(vec![2049.0, 2051.0, 70000.0]).convert(DType::F16);
    assert_eq!(
        h,
        Data::F16(vec![
            f16::from_f32(2048.0),
            f16::from_f32(2052.0),
            f16::INFINITY
        ])
    );
    // Integer wrap-around.
    assert_eq!(
        Data::S32(vec![300, -1]).convert(DType::U8),
        Data::U8(vec![44, 255])
    );
    assert_eq!(
        Data::U32(vec![u32::MAX]).convert(DType::S32),
        Data::S32(vec![-1])
    );
}

#[test]
fn narrowing_from_f64_rounds_once() {
    // Just above a bf16 tie by less than f32 can hold: rounding to f32 first would land on
    // the tie and round to even (down); correct rounding goes up.
    let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
    assert_eq!(bf16_from_f64(x), bf16::from_f32(1.0 + 2f32.powi(-7)));
    assert_eq!(bf16_from_f64(-x), bf16::from_f32(-(1.0 + 2f32.powi(-7))));
    let y = 2049.0 + 2f64.powi(-30);
    assert_eq!(f16_from_f64(y), f16::from_f32(2050.0));
    // Exact ties still go to even; specials pass through.
    assert_eq!(bf16_from_f64(1.0 + 2f64.powi(-8)), bf16::from_f32(1.0));
    assert_eq!(f16_from_f64(2049.0), f16::from_f32(2048.0));
    assert!(f16_from_f64(f64::NAN).is_nan());
    assert_eq!(f16_from_f64(1e300), f16::INFINITY);
    assert_eq!(bf16_from_f64(-1e300), bf16::NEG_INFINITY);
    assert_eq!(f16_from_f64(1e-30), f16::from_f32(0.0));
    assert_eq!(f16_from_f64(2f64.powi(-24) * 0.75), f16::from_bits(1));
}

#[test]
fn bitcast() {
    let a = Array::new(vec![2], Data::F32(vec![1.0, -0.0])).unwrap();
    let b = a.bitcast_convert(DType::U32).unwrap();
    assert_eq!(b.data(), &Data::U32(vec![0x3f80_0000, 0x8000_0000]));
    assert_eq!(b.bitcast_convert(DType::F32).unwrap(), a);
    // To a narrower type each element becomes its parts, least significant first; back again
    // the minor dimension is joined.
    let h = a.bitcast_convert(DType::F16).unwrap();
    assert_eq!(h.dims(), &[2, 2]);
    assert_eq!(h.bitcast_convert(DType::U32).unwrap(), b);
    assert_eq!(
        a.bitcast_convert(DType::U8).unwrap().data(),
        &Data::U8(vec![0, 0, 0x80, 0x3f, 0, 0, 0, 0x80])
    );
    // A wider type needs the minor dimension to be the ratio; pred and complex never resize.
    let odd = Array::new(vec![3], Data::U32(vec![1, 2, 3])).unwrap();
    assert!(odd.bitcast_convert(DType::F64).is_err());
    assert_eq!(
        b.bitcast_convert(DType::F64).unwrap().dims(),
        &[] as &[usize]
    );
    assert!(a.bitcast_convert(DType::Pred).is_err());
}

#[test]
fn take_put_concat() {
    let d = Data::S32(vec![10, 11, 12]);
    assert_eq!(d.take(&[2, 0]).unwrap(), Data::S32(vec![12, 10]));
    assert!(d.take(&[3]).is_none());
    assert_eq!(
        d.take_or(&[Some(1), None], &Data::S32(vec![-1])).unwrap(),
        Data::S32(vec![11, -1])
    );
    let mut e = d.clone();
    e.put(&[1], &Data::S32(vec![7])).unwrap();
    assert_eq!(e, Data::S32(vec![10, 7, 12]));
    assert_eq!(
        Data::concat(&[&d, &Data::S32(vec![1])]).unwrap(),
        Data::S32(vec![10, 11, 12, 1])
    );
    assert!(Data::concat(&[&d, &Data::F32(vec![1.0])]).is_none());
}
