//! Constant literals in both directions, checked against their shape.

use proto::xla as px;

use crate::ir::*;
use crate::shape::{PrimitiveType, Shape};

use super::error::{ProtoError, Unrepresentable};
use super::shapes::shape_to_proto;

pub(super) fn literal_to_proto(
    lit: &Literal,
    shape: &Shape,
) -> Result<px::LiteralProto, Unrepresentable> {
    match (lit, shape) {
        (Literal::Elided, _) => Err(Unrepresentable::ElidedConstant),
        (Literal::Tuple(elems), Shape::Tuple(shapes)) if elems.len() == shapes.len() => {
            Ok(px::LiteralProto {
                shape: Some(shape_to_proto(shape)?),
                tuple_literals: elems
                    .iter()
                    .zip(shapes)
                    .map(|(l, s)| literal_to_proto(l, s))
                    .collect::<Result<_, _>>()?,
                ..Default::default()
            })
        }
        (Literal::Array(a), Shape::Array(s)) => {
            let count = s.element_count();
            if a.values.len() as u64 != count {
                return Err(Unrepresentable::ConstantValueCount {
                    values: a.values.len(),
                    elements: count,
                });
            }
            let mut p = px::LiteralProto {
                shape: Some(shape_to_proto(shape)?),
                ..Default::default()
            };
            let v = &a.values;
            use PrimitiveType as T;
            match s.element_type {
                T::Pred => p.preds = v.iter().map(|x| x.as_bool()).collect(),
                T::S8 => p.s8s = v.iter().map(|x| x.as_i128() as i8 as u8).collect(),
                T::U8 => p.u8s = v.iter().map(|x| x.as_i128() as u8).collect(),
                T::S16 => {
                    p.s16s = v
                        .iter()
                        .flat_map(|x| (x.as_i128() as i16).to_le_bytes())
                        .collect()
                }
                T::U16 => {
                    p.u16s = v
                        .iter()
                        .flat_map(|x| (x.as_i128() as u16).to_le_bytes())
                        .collect()
                }
                T::S32 => p.s32s = v.iter().map(|x| x.as_i128() as i32).collect(),
                T::S64 => p.s64s = v.iter().map(|x| x.as_i128() as i64).collect(),
                T::U32 => p.u32s = v.iter().map(|x| x.as_i128() as u32).collect(),
                T::U64 => p.u64s = v.iter().map(|x| x.as_i128() as u64).collect(),
                T::F32 => p.f32s = v.iter().map(|x| x.as_f64() as f32).collect(),
                T::F64 => p.f64s = v.iter().map(|x| x.as_f64()).collect(),
                T::F16 => {
                    p.f16s = v
                        .iter()
                        .flat_map(|x| crate::f16_from_f64(x.as_f64()).to_le_bytes())
                        .collect()
                }
                T::Bf16 => {
                    p.bf16s = v
                        .iter()
                        .flat_map(|x| crate::bf16_from_f64(x.as_f64()).to_le_bytes())
                        .collect()
                }
                T::F8E4M3FN => {
                    p.f8e4m3fns = v
                        .iter()
                        .map(|x| crate::F8E4M3FN::from_f64(x.as_f64()).to_bits())
                        .collect()
                }
                T::F8E5M2 => {
                    p.f8e5m2s = v
                        .iter()
                        .map(|x| crate::F8E5M2::from_f64(x.as_f64()).to_bits())
                        .collect()
                }
                // XLA's LiteralProto: interleaved real and imaginary parts.
                T::C64 => {
                    p.c64s = v
                        .iter()
                        .flat_map(|x| {
                            let (re, im) = x.as_complex();
                            [re as f32, im as f32]
                        })
                        .collect()
                }
                T::C128 => {
                    p.c128s = v
                        .iter()
                        .flat_map(|x| {
                            let (re, im) = x.as_complex();
                            [re, im]
                        })
                        .collect()
                }
                other => return Err(Unrepresentable::ConstantElementType(other)),
            }
            Ok(p)
        }
        _ => Err(Unrepresentable::ConstantMismatch),
    }
}

pub(super) fn literal_from_proto(
    p: &px::LiteralProto,
    shape: &Shape,
) -> Result<Literal, ProtoError> {
    match shape {
        Shape::Token => Err(ProtoError::TokenConstant),
        Shape::Tuple(shapes) => {
            if p.tuple_literals.len() != shapes.len() {
                return Err(ProtoError::TupleConstant {
                    elements: p.tuple_literals.len(),
                    shape: shapes.len(),
                });
            }
            Ok(Literal::Tuple(
                p.tuple_literals
                    .iter()
                    .zip(shapes)
                    .map(|(l, s)| literal_from_proto(l, s))
                    .collect::<Result<_, _>>()?,
            ))
        }
        Shape::Array(s) => {
            use LiteralValue as V;
            use PrimitiveType as T;
            fn pairs(b: &[u8]) -> impl Iterator<Item = [u8; 2]> + '_ {
                b.chunks_exact(2).map(|c| [c[0], c[1]])
            }
            let values: Vec<LiteralValue> = match s.element_type {
                T::Pred => p.preds.iter().map(|&b| V::Bool(b)).collect(),
                T::S8 => p.s8s.iter().map(|&b| V::Int(i128::from(b as i8))).collect(),
                T::U8 => p.u8s.iter().map(|&b| V::Int(i128::from(b))).collect(),
                T::S16 => pairs(&p.s16s)
                    .map(|c| V::Int(i128::from(i16::from_le_bytes(c))))
                    .collect(),
                T::U16 => pairs(&p.u16s)
                    .map(|c| V::Int(i128::from(u16::from_le_bytes(c))))
                    .collect(),
                T::S32 => p.s32s.iter().map(|&x| V::Int(i128::from(x))).collect(),
                T::S64 => p.s64s.iter().map(|&x| V::Int(i128::from(x))).collect(),
                T::U32 => p.u32s.iter().map(|&x| V::Int(i128::from(x))).collect(),
                T::U64 => p.u64s.iter().map(|&x| V::Int(i128::from(x))).collect(),
                T::F32 => p.f32s.iter().map(|&x| V::Float(f64::from(x))).collect(),
                T::F64 => p.f64s.iter().map(|&x| V::Float(x)).collect(),
                T::F16 => pairs(&p.f16s)
                    .map(|c| V::Float(half::f16::from_le_bytes(c).to_f64()))
                    .collect(),
                T::Bf16 => pairs(&p.bf16s)
                    .map(|c| V::Float(half::bf16::from_le_bytes(c).to_f64()))
                    .collect(),
                T::F8E4M3FN => p
                    .f8e4m3fns
                    .iter()
                    .map(|&b| V::Float(crate::F8E4M3FN::from_bits(b).to_f64()))
                    .collect(),
                T::F8E5M2 => p
                    .f8e5m2s
                    .iter()
                    .map(|&b| V::Float(crate::F8E5M2::from_bits(b).to_f64()))
                    .collect(),
                // An odd count leaves a part over; `chunks_exact` drops it and the count
                // check below reports the shortfall.
                T::C64 => p
                    .c64s
                    .chunks_exact(2)
                    .map(|c| V::Complex(f64::from(c[0]), f64::from(c[1])))
                    .collect(),
                T::C128 => p
                    .c128s
                    .chunks_exact(2)
                    .map(|c| V::Complex(c[0], c[1]))
                    .collect(),
                other => return Err(ProtoError::ConstantElementType(other)),
            };
            if values.len() as u64 != s.element_count() {
                return Err(ProtoError::ConstantValueCount {
                    values: values.len(),
                    elements: s.element_count(),
                });
            }
            Ok(Literal::Array(ArrayLiteral { values }))
        }
    }
}
