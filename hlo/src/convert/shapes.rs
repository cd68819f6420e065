//! Shapes in both directions; from a proto every element type, dimension, layout and nesting
//! depth is checked ([`check_shape`] runs the same checks without building).

use proto::xla as px;

use crate::ir::*;
use crate::shape::{ArrayShape, Layout, PrimitiveType, Shape, Tile, TILE_COMBINE_DIM};

use super::error::{ShapeProtoError, Unrepresentable};
use super::types::{element_type_from_proto, element_type_to_proto};

/// Deepest tuple nesting accepted from a proto.
const MAX_SHAPE_DEPTH: usize = 64;

/// Converts a shape. Fails only for element types or layouts the proto cannot carry.
pub fn shape_to_proto(shape: &Shape) -> Result<px::ShapeProto, Unrepresentable> {
    Ok(match shape {
        Shape::Token => px::ShapeProto {
            element_type: px::PrimitiveType::Token as i32,
            ..Default::default()
        },
        Shape::Tuple(elems) => px::ShapeProto {
            element_type: px::PrimitiveType::Tuple as i32,
            tuple_shapes: elems.iter().map(shape_to_proto).collect::<Result<_, _>>()?,
            ..Default::default()
        },
        Shape::Array(a) => {
            let element_type = element_type_to_proto(a.element_type)
                .ok_or(Unrepresentable::ElementType(a.element_type))?;
            let layout = match &a.layout {
                None => None,
                Some(l) => {
                    if !l.other.is_empty() {
                        return Err(Unrepresentable::LayoutAttribute(l.other.clone()));
                    }
                    Some(px::LayoutProto {
                        minor_to_major: l.minor_to_major.clone(),
                        tiles: l
                            .tiles
                            .iter()
                            .map(|t| px::TileProto {
                                dimensions: t
                                    .dims
                                    .iter()
                                    .map(|&d| if d == TILE_COMBINE_DIM { -1 } else { d })
                                    .collect(),
                            })
                            .collect(),
                        element_size_in_bits: l.element_size_in_bits,
                        memory_space: l.memory_space,
                        ..Default::default()
                    })
                }
            };
            px::ShapeProto {
                element_type: element_type as i32,
                dimensions: a.dims.clone(),
                is_dynamic_dimension: a.dynamic.clone(),
                layout,
                tuple_shapes: Vec::new(),
            }
        }
    })
}

/// Converts a shape from a proto, validating element type, dimensions and nesting depth.
pub fn shape_from_proto(p: &px::ShapeProto) -> Result<Shape, ShapeProtoError> {
    shape_from_proto_at(p, 0)
}

/// Validates a shape proto exactly as [`shape_from_proto`] does (same checks, same messages)
/// without building the [`Shape`]: it allocates nothing for shapes of rank up to 64.
pub fn check_shape(p: &px::ShapeProto) -> Result<(), ShapeProtoError> {
    check_shape_at(p, 0)
}

/// What one shape node is once its own fields (not its tuple elements) are valid.
pub(super) enum ShapeNode {
    Token,
    Tuple,
    Array(PrimitiveType),
}

/// The checks of one shape node, shared by [`shape_from_proto`] and [`check_shape`].
pub(super) fn check_shape_node(
    p: &px::ShapeProto,
    depth: usize,
) -> Result<ShapeNode, ShapeProtoError> {
    if depth > MAX_SHAPE_DEPTH {
        return Err(ShapeProtoError::TooDeep(MAX_SHAPE_DEPTH));
    }
    let et = px::PrimitiveType::try_from(p.element_type)
        .map_err(|_| ShapeProtoError::UnknownElementType(p.element_type))?;
    match et {
        px::PrimitiveType::Token => Ok(ShapeNode::Token),
        px::PrimitiveType::Tuple => Ok(ShapeNode::Tuple),
        px::PrimitiveType::Invalid => Err(ShapeProtoError::ElementTypeUnset),
        other => {
            let element_type =
                element_type_from_proto(other).ok_or(ShapeProtoError::NotArrayType(other))?;
            let rank = p.dimensions.len();
            if let Some(d) = p
                .dimensions
                .iter()
                .find(|&&d| d < 0 && d != crate::shape::UNBOUNDED_DIM)
            {
                return Err(ShapeProtoError::NegativeDimension(*d));
            }
            if !p.is_dynamic_dimension.is_empty() && p.is_dynamic_dimension.len() != rank {
                return Err(ShapeProtoError::DynamicFlags {
                    entries: p.is_dynamic_dimension.len(),
                    rank,
                });
            }
            if let Some(l) = &p.layout {
                if !l.minor_to_major.is_empty() && !is_permutation(&l.minor_to_major, rank) {
                    return Err(ShapeProtoError::LayoutNotPermutation {
                        minor_to_major: l.minor_to_major.clone(),
                        rank,
                    });
                }
            }
            Ok(ShapeNode::Array(element_type))
        }
    }
}

/// Whether `v` is a permutation of `0..rank` (without allocating up to rank 64).
pub(super) fn is_permutation(v: &[i64], rank: usize) -> bool {
    if v.len() != rank {
        return false;
    }
    let index = |d: i64| usize::try_from(d).ok().filter(|&i| i < rank);
    if rank <= 64 {
        let mut seen = 0u64;
        v.iter().all(|&d| {
            index(d).is_some_and(|i| {
                let bit = 1u64 << i;
                let fresh = seen & bit == 0;
                seen |= bit;
                fresh
            })
        })
    } else {
        let mut seen = vec![false; rank];
        v.iter().all(|&d| {
            index(d)
                .and_then(|i| seen.get_mut(i))
                .is_some_and(|s| !std::mem::replace(s, true))
        })
    }
}

pub(super) fn check_shape_at(p: &px::ShapeProto, depth: usize) -> Result<(), ShapeProtoError> {
    if let ShapeNode::Tuple = check_shape_node(p, depth)? {
        for s in &p.tuple_shapes {
            check_shape_at(s, depth + 1)?;
        }
    }
    Ok(())
}

pub(super) fn shape_from_proto_at(
    p: &px::ShapeProto,
    depth: usize,
) -> Result<Shape, ShapeProtoError> {
    Ok(match check_shape_node(p, depth)? {
        ShapeNode::Token => Shape::Token,
        ShapeNode::Tuple => Shape::Tuple(
            p.tuple_shapes
                .iter()
                .map(|s| shape_from_proto_at(s, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        ShapeNode::Array(element_type) => Shape::Array(ArrayShape {
            element_type,
            dims: p.dimensions.clone(),
            dynamic: if p.is_dynamic_dimension.is_empty() {
                vec![false; p.dimensions.len()]
            } else {
                p.is_dynamic_dimension.clone()
            },
            layout: p.layout.as_ref().map(|l| Layout {
                minor_to_major: l.minor_to_major.clone(),
                tiles: l
                    .tiles
                    .iter()
                    .map(|t| Tile {
                        dims: t
                            .dimensions
                            .iter()
                            .map(|&d| if d == -1 { TILE_COMBINE_DIM } else { d })
                            .collect(),
                    })
                    .collect(),
                element_size_in_bits: l.element_size_in_bits,
                memory_space: l.memory_space,
                other: String::new(),
            }),
        }),
    })
}

/// A program shape's parameters and result through `shape` (checking or converting); the one
/// place that requires the result.
pub(super) fn program_shape_with<T>(
    p: &px::ProgramShapeProto,
    mut shape: impl FnMut(&px::ShapeProto) -> Result<T, ShapeProtoError>,
) -> Result<(Vec<T>, T), ShapeProtoError> {
    let params = p
        .parameters
        .iter()
        .map(&mut shape)
        .collect::<Result<_, _>>()?;
    let result = shape(p.result.as_ref().ok_or(ShapeProtoError::NoProgramResult)?)?;
    Ok((params, result))
}

pub(super) fn program_shape_to_proto(
    layout: &ProgramLayout,
) -> Result<px::ProgramShapeProto, Unrepresentable> {
    Ok(px::ProgramShapeProto {
        parameters: layout
            .params
            .iter()
            .map(shape_to_proto)
            .collect::<Result<_, _>>()?,
        result: Some(shape_to_proto(&layout.result)?),
        parameter_names: Vec::new(),
    })
}
