//! Conversion between the IR and `xla.HloModuleProto` (what artifacts embed).
//!
//! [`to_proto`] is deterministic: instruction ids are assigned in program order across the
//! module, computation ids are computation indices, so the same module always gives the same
//! bytes. [`from_proto`] treats its input as untrusted (it reads artifacts): every id, opcode,
//! element type, shape and literal is validated, and the call graph must be acyclic; each problem
//! is a [`ConvertError`] naming the computation and instruction. [`check_proto`] runs the same
//! structural checks (ids, opcodes, shapes, call graph) with the same errors but builds no IR and
//! decodes no attributes: what a runtime that never executes the HLO needs.
//!
//! What the text format carries but the proto cannot (unmodelled attributes kept verbatim by the
//! parser, unmodelled layout or metadata text, elided constants) is refused by [`to_proto`] with
//! [`ConvertError::Unrepresentable`] rather than dropped, except metadata keys the proto has no
//! field for, which are debug information only and are dropped.

use std::collections::{HashMap, HashSet};

use proto::xla as px;

use crate::ir::*;
use crate::shape::{ArrayShape, Layout, PrimitiveType, Shape, Tile, TILE_COMBINE_DIM};

/// Deepest tuple nesting accepted from a proto.
const MAX_SHAPE_DEPTH: usize = 64;

/// Why a module could not be converted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// Something in the IR has no representation in `HloModuleProto`.
    #[error("{computation}/{instruction}: {what} cannot be represented in HloModuleProto")]
    Unrepresentable {
        /// Computation name.
        computation: String,
        /// Instruction name (empty for module-level items).
        instruction: String,
        /// What cannot be represented.
        what: String,
    },
    /// The proto names an opcode this build does not know.
    #[error("{computation}/{instruction}: unknown opcode \"{opcode}\"")]
    UnknownOpcode {
        /// Computation name.
        computation: String,
        /// Instruction name.
        instruction: String,
        /// The opcode string from the proto.
        opcode: String,
    },
    /// The proto is inconsistent.
    #[error("{computation}/{instruction}: {message}")]
    Invalid {
        /// Computation name (or `<module>`).
        computation: String,
        /// Instruction name (empty for computation- or module-level problems).
        instruction: String,
        /// What is wrong, with the bad value and the bound.
        message: String,
    },
}

fn invalid(computation: &str, instruction: &str, message: impl Into<String>) -> ConvertError {
    ConvertError::Invalid {
        computation: computation.to_owned(),
        instruction: instruction.to_owned(),
        message: message.into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Element types and shapes.

const TYPE_TABLE: &[(PrimitiveType, px::PrimitiveType)] = &[
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
    (PrimitiveType::F4E2M1FN, px::PrimitiveType::F4e2m1fn),
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
    (PrimitiveType::F8E8M0FNU, px::PrimitiveType::F8e8m0fnu),
    (PrimitiveType::Opaque, px::PrimitiveType::OpaqueType),
];

/// The proto enum value of an element type, if the proto has one.
pub fn element_type_to_proto(t: PrimitiveType) -> Option<px::PrimitiveType> {
    TYPE_TABLE.iter().find(|(a, _)| *a == t).map(|(_, b)| *b)
}

/// The element type of a proto enum value, if it is an array element type.
pub fn element_type_from_proto(t: px::PrimitiveType) -> Option<PrimitiveType> {
    TYPE_TABLE.iter().find(|(_, b)| *b == t).map(|(a, _)| *a)
}

/// Converts a shape. Fails only for element types or layouts the proto cannot carry.
pub fn shape_to_proto(shape: &Shape) -> Result<px::ShapeProto, String> {
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
                .ok_or_else(|| format!("element type {}", a.element_type))?;
            let layout = match &a.layout {
                None => None,
                Some(l) => {
                    if !l.other.is_empty() {
                        return Err(format!("layout attribute `{}`", l.other));
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
pub fn shape_from_proto(p: &px::ShapeProto) -> Result<Shape, String> {
    shape_from_proto_at(p, 0)
}

/// Validates a shape proto exactly as [`shape_from_proto`] does (same checks, same messages)
/// without building the [`Shape`]: it allocates nothing for shapes of rank up to 64.
pub fn check_shape(p: &px::ShapeProto) -> Result<(), String> {
    check_shape_at(p, 0)
}

/// What one shape node is once its own fields (not its tuple elements) are valid.
enum ShapeNode {
    Token,
    Tuple,
    Array(PrimitiveType),
}

/// The checks of one shape node, shared by [`shape_from_proto`] and [`check_shape`].
fn check_shape_node(p: &px::ShapeProto, depth: usize) -> Result<ShapeNode, String> {
    if depth > MAX_SHAPE_DEPTH {
        return Err(format!("tuple shape nested deeper than {MAX_SHAPE_DEPTH}"));
    }
    let et = px::PrimitiveType::try_from(p.element_type)
        .map_err(|_| format!("unknown element type number {}", p.element_type))?;
    match et {
        px::PrimitiveType::Token => Ok(ShapeNode::Token),
        px::PrimitiveType::Tuple => Ok(ShapeNode::Tuple),
        px::PrimitiveType::Invalid => Err("element type is unset".into()),
        other => {
            let element_type = element_type_from_proto(other)
                .ok_or_else(|| format!("element type {other:?} is not an array type"))?;
            let rank = p.dimensions.len();
            if let Some(d) = p
                .dimensions
                .iter()
                .find(|&&d| d < 0 && d != crate::shape::UNBOUNDED_DIM)
            {
                return Err(format!("negative dimension size {d}"));
            }
            if !p.is_dynamic_dimension.is_empty() && p.is_dynamic_dimension.len() != rank {
                return Err(format!(
                    "is_dynamic_dimension has {} entries for rank {rank}",
                    p.is_dynamic_dimension.len()
                ));
            }
            if let Some(l) = &p.layout {
                if !l.minor_to_major.is_empty() && !is_permutation(&l.minor_to_major, rank) {
                    return Err(format!(
                        "layout minor_to_major {:?} is not a permutation of rank {rank}",
                        l.minor_to_major
                    ));
                }
            }
            Ok(ShapeNode::Array(element_type))
        }
    }
}

/// Whether `v` is a permutation of `0..rank` (without allocating up to rank 64).
fn is_permutation(v: &[i64], rank: usize) -> bool {
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

fn check_shape_at(p: &px::ShapeProto, depth: usize) -> Result<(), String> {
    if let ShapeNode::Tuple = check_shape_node(p, depth)? {
        for s in &p.tuple_shapes {
            check_shape_at(s, depth + 1)?;
        }
    }
    Ok(())
}

fn shape_from_proto_at(p: &px::ShapeProto, depth: usize) -> Result<Shape, String> {
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
fn program_shape_with<T>(
    p: &px::ProgramShapeProto,
    mut shape: impl FnMut(&px::ShapeProto) -> Result<T, String>,
) -> Result<(Vec<T>, T), String> {
    let params = p
        .parameters
        .iter()
        .map(&mut shape)
        .collect::<Result<_, _>>()?;
    let result = shape(p.result.as_ref().ok_or("program shape has no result")?)?;
    Ok((params, result))
}

fn program_shape_to_proto(layout: &ProgramLayout) -> Result<px::ProgramShapeProto, String> {
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

// ---------------------------------------------------------------------------------------------
// Literals.

fn literal_to_proto(lit: &Literal, shape: &Shape) -> Result<px::LiteralProto, String> {
    match (lit, shape) {
        (Literal::Elided, _) => Err("an elided constant (`{...}`)".into()),
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
                return Err(format!(
                    "a constant with {} values for {} elements",
                    a.values.len(),
                    count
                ));
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
                        .flat_map(|x| half::f16::from_f64(x.as_f64()).to_le_bytes())
                        .collect()
                }
                T::Bf16 => {
                    p.bf16s = v
                        .iter()
                        .flat_map(|x| half::bf16::from_f64(x.as_f64()).to_le_bytes())
                        .collect()
                }
                other => return Err(format!("a constant of element type {other}")),
            }
            Ok(p)
        }
        _ => Err("a constant whose value does not match its shape".into()),
    }
}

fn literal_from_proto(p: &px::LiteralProto, shape: &Shape) -> Result<Literal, String> {
    match shape {
        Shape::Token => Err("a token constant".into()),
        Shape::Tuple(shapes) => {
            if p.tuple_literals.len() != shapes.len() {
                return Err(format!(
                    "tuple constant has {} elements, its shape {}",
                    p.tuple_literals.len(),
                    shapes.len()
                ));
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
                other => return Err(format!("a constant of element type {other}")),
            };
            if values.len() as u64 != s.element_count() {
                return Err(format!(
                    "constant has {} values for {} elements",
                    values.len(),
                    s.element_count()
                ));
            }
            Ok(Literal::Array(ArrayLiteral { values }))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Instructions.

fn metadata_to_proto(m: &OpMetadata) -> px::OpMetadata {
    px::OpMetadata {
        op_type: m.op_type.clone().unwrap_or_default(),
        op_name: m.op_name.clone().unwrap_or_default(),
        source_file: m.source_file.clone().unwrap_or_default(),
        source_line: m.source_line.unwrap_or(0) as i32,
        source_end_line: m.source_end_line.unwrap_or(0) as i32,
        source_column: m.source_column.unwrap_or(0) as i32,
        source_end_column: m.source_end_column.unwrap_or(0) as i32,
        deduplicated_name: m.deduplicated_name.as_deref() == Some("true"),
        stack_frame_id: m.stack_frame_id.unwrap_or(0) as i32,
        scheduling_name: m.scheduling_name.clone().unwrap_or_default(),
    }
}

fn metadata_from_proto(p: &px::OpMetadata) -> Option<OpMetadata> {
    fn s(v: &str) -> Option<String> {
        (!v.is_empty()).then(|| v.to_owned())
    }
    fn n(v: i32) -> Option<i64> {
        (v != 0).then_some(i64::from(v))
    }
    let m = OpMetadata {
        op_type: s(&p.op_type),
        op_name: s(&p.op_name),
        source_file: s(&p.source_file),
        source_line: n(p.source_line),
        source_end_line: n(p.source_end_line),
        source_column: n(p.source_column),
        source_end_column: n(p.source_end_column),
        stack_frame_id: n(p.stack_frame_id),
        deduplicated_name: p.deduplicated_name.then(|| "true".to_owned()),
        scheduling_name: s(&p.scheduling_name),
        other: Vec::new(),
    };
    (m != OpMetadata::default()).then_some(m)
}

fn window_to_proto(w: &Window) -> px::Window {
    px::Window {
        dimensions: w
            .dims
            .iter()
            .map(|d| px::WindowDimension {
                size: d.size,
                stride: d.stride,
                padding_low: d.pad_low,
                padding_high: d.pad_high,
                window_dilation: d.rhs_dilation,
                base_dilation: d.lhs_dilation,
                window_reversal: d.reversal,
            })
            .collect(),
    }
}

fn window_from_proto(w: &px::Window) -> Window {
    Window {
        dims: w
            .dimensions
            .iter()
            .map(|d| WindowDim {
                size: d.size,
                stride: d.stride,
                pad_low: d.padding_low,
                pad_high: d.padding_high,
                lhs_dilation: d.base_dilation,
                rhs_dilation: d.window_dilation,
                reversal: d.window_reversal,
            })
            .collect(),
    }
}

fn precision_to_proto(p: Precision) -> px::precision_config::Precision {
    match p {
        Precision::Default => px::precision_config::Precision::Default,
        Precision::High => px::precision_config::Precision::High,
        Precision::Highest => px::precision_config::Precision::Highest,
    }
}

fn precision_from_proto(p: i32) -> Result<Precision, String> {
    match px::precision_config::Precision::try_from(p) {
        Ok(px::precision_config::Precision::Default) => Ok(Precision::Default),
        Ok(px::precision_config::Precision::High) => Ok(Precision::High),
        Ok(px::precision_config::Precision::Highest) => Ok(Precision::Highest),
        _ => Err(format!("unsupported operand precision {p}")),
    }
}

fn frontend_to_proto(attrs: &[(String, String)]) -> px::FrontendAttributes {
    px::FrontendAttributes {
        map: attrs.iter().cloned().collect(),
    }
}

fn frontend_from_proto(p: &px::FrontendAttributes) -> Vec<(String, String)> {
    p.map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Sharding forms that map onto `OpSharding` without a full sharding parser.
fn sharding_to_proto(s: &str) -> Option<px::OpSharding> {
    let inner = s.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    let ty = match inner {
        "replicated" => px::op_sharding::Type::Replicated,
        "manual" => px::op_sharding::Type::Manual,
        _ => {
            let device = inner.strip_prefix("maximal device=")?.trim().parse().ok()?;
            return Some(px::OpSharding {
                r#type: px::op_sharding::Type::Maximal as i32,
                tile_assignment_dimensions: vec![1],
                tile_assignment_devices: vec![device],
                ..Default::default()
            });
        }
    };
    Some(px::OpSharding {
        r#type: ty as i32,
        ..Default::default()
    })
}

fn sharding_from_proto(p: &px::OpSharding) -> Result<String, String> {
    match px::op_sharding::Type::try_from(p.r#type) {
        Ok(px::op_sharding::Type::Replicated) => Ok("{replicated}".into()),
        Ok(px::op_sharding::Type::Manual) => Ok("{manual}".into()),
        Ok(px::op_sharding::Type::Maximal) => match p.tile_assignment_devices.as_slice() {
            [d] => Ok(format!("{{maximal device={d}}}")),
            other => Err(format!("maximal sharding with devices {other:?}")),
        },
        _ => Err(format!("sharding type {}", p.r#type)),
    }
}

fn replica_groups_to_proto(g: &ReplicaGroups) -> Result<Vec<px::ReplicaGroup>, String> {
    match g {
        ReplicaGroups::List(groups) => Ok(groups
            .iter()
            .map(|ids| px::ReplicaGroup {
                replica_ids: ids.clone(),
            })
            .collect()),
        ReplicaGroups::Iota(text) => Err(format!("iota replica groups `{text}`")),
    }
}

/// Text of an IR API version as XLA prints it, and its proto enum value.
const API_VERSIONS: &[(&str, px::CustomCallApiVersion)] = &[
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

struct ModuleIds {
    /// Per computation, the global id of each instruction.
    instr: Vec<Vec<i64>>,
}

fn instruction_to_proto(
    module: &HloModule,
    comp: &Computation,
    comp_index: usize,
    ids: &ModuleIds,
    id: InstrId,
    instr: &Instruction,
) -> Result<px::HloInstructionProto, ConvertError> {
    let bad = |what: String| ConvertError::Unrepresentable {
        computation: comp.name.clone(),
        instruction: instr.name.clone(),
        what,
    };
    let a = &instr.attrs;
    if let Some((key, value)) = a.raw.first() {
        return Err(bad(format!("attribute `{key}={value}`")));
    }
    let global = |c: usize, i: InstrId| -> i64 {
        ids.instr
            .get(c)
            .and_then(|v| v.get(i.index()))
            .copied()
            .unwrap_or(-1)
    };
    let mut p = px::HloInstructionProto {
        name: instr.name.clone(),
        opcode: instr.opcode.name().to_owned(),
        shape: Some(shape_to_proto(&instr.shape).map_err(bad)?),
        id: global(comp_index, id),
        operand_ids: instr
            .operands
            .iter()
            .map(|&o| global(comp_index, o))
            .collect(),
        called_computation_ids: instr
            .called_computations()
            .iter()
            .map(|c| i64::from(c.0))
            .collect(),
        metadata: instr.metadata.as_ref().map(metadata_to_proto),
        ..Default::default()
    };
    if let Some(n) = a.parameter_number {
        p.parameter_number = n;
    }
    if let Some(lit) = &a.literal {
        p.literal = Some(literal_to_proto(lit, &instr.shape).map_err(bad)?);
    }
    if let Some(d) = &a.dimensions {
        p.dimensions = d.clone();
    }
    if let Some(d) = a.iota_dimension {
        p.dimensions = vec![d];
    }
    if let Some(s) = &a.slice {
        p.slice_dimensions = s
            .iter()
            .map(|d| px::hlo_instruction_proto::SliceDimensions {
                start: d.start,
                limit: d.limit,
                stride: d.stride,
            })
            .collect();
    }
    if let Some(pad) = &a.padding {
        p.padding_config = Some(px::PaddingConfig {
            dimensions: pad
                .iter()
                .map(|d| px::padding_config::PaddingConfigDimension {
                    edge_padding_low: d.low,
                    edge_padding_high: d.high,
                    interior_padding: d.interior,
                })
                .collect(),
        });
    }
    if let Some(w) = &a.window {
        p.window = Some(window_to_proto(w));
    }
    if let Some(d) = &a.dot_dimension_numbers {
        p.dot_dimension_numbers = Some(px::DotDimensionNumbers {
            lhs_contracting_dimensions: d.lhs_contracting_dims.clone(),
            rhs_contracting_dimensions: d.rhs_contracting_dims.clone(),
            lhs_batch_dimensions: d.lhs_batch_dims.clone(),
            rhs_batch_dimensions: d.rhs_batch_dims.clone(),
        });
    }
    if let Some(d) = &a.conv_dimension_numbers {
        p.convolution_dimension_numbers = Some(px::ConvolutionDimensionNumbers {
            input_batch_dimension: d.input_batch_dimension,
            input_feature_dimension: d.input_feature_dimension,
            input_spatial_dimensions: d.input_spatial_dimensions.clone(),
            kernel_input_feature_dimension: d.kernel_input_feature_dimension,
            kernel_output_feature_dimension: d.kernel_output_feature_dimension,
            kernel_spatial_dimensions: d.kernel_spatial_dimensions.clone(),
            output_batch_dimension: d.output_batch_dimension,
            output_feature_dimension: d.output_feature_dimension,
            output_spatial_dimensions: d.output_spatial_dimensions.clone(),
        });
    }
    p.feature_group_count = a.feature_group_count.unwrap_or(0);
    p.batch_group_count = a.batch_group_count.unwrap_or(0);
    if let Some(ps) = &a.operand_precision {
        p.precision_config = Some(px::PrecisionConfig {
            operand_precision: ps.iter().map(|&x| precision_to_proto(x) as i32).collect(),
        });
    }
    if let Some(d) = a.comparison_direction {
        p.comparison_direction = d.name().to_owned();
    }
    if let Some(t) = a.comparison_type {
        p.comparison_type = t.name().to_owned();
    }
    if let Some(k) = a.fusion_kind {
        p.fusion_kind = k.name().to_owned();
    }
    if let Some(i) = a.tuple_index {
        p.tuple_index = i;
    }
    if let Some(g) = &a.gather_dimension_numbers {
        p.gather_dimension_numbers = Some(px::GatherDimensionNumbers {
            offset_dims: g.offset_dims.clone(),
            collapsed_slice_dims: g.collapsed_slice_dims.clone(),
            start_index_map: g.start_index_map.clone(),
            index_vector_dim: g.index_vector_dim,
            operand_batching_dims: g.operand_batching_dims.clone(),
            start_indices_batching_dims: g.start_indices_batching_dims.clone(),
        });
    }
    if let Some(s) = &a.gather_slice_sizes {
        p.gather_slice_sizes = s.clone();
    }
    if let Some(s) = &a.scatter_dimension_numbers {
        p.scatter_dimension_numbers = Some(px::ScatterDimensionNumbers {
            update_window_dims: s.update_window_dims.clone(),
            inserted_window_dims: s.inserted_window_dims.clone(),
            scatter_dims_to_operand_dims: s.scatter_dims_to_operand_dims.clone(),
            index_vector_dim: s.index_vector_dim,
            input_batching_dims: s.input_batching_dims.clone(),
            scatter_indices_batching_dims: s.scatter_indices_batching_dims.clone(),
        });
    }
    p.indices_are_sorted = a.indices_are_sorted.unwrap_or(false);
    p.unique_indices = a.unique_indices.unwrap_or(false);
    if let Some(s) = &a.dynamic_slice_sizes {
        p.dynamic_slice_sizes = s.clone();
    }
    p.is_stable = a.is_stable.unwrap_or(false);
    p.k = a.k.unwrap_or(0);
    p.largest = a.largest.unwrap_or(false);
    if let Some(t) = &a.custom_call_target {
        p.custom_call_target = t.clone();
    }
    if let Some(v) = &a.api_version {
        let (_, e) = API_VERSIONS
            .iter()
            .find(|(name, _)| name == v)
            .ok_or_else(|| bad(format!("custom-call api_version `{v}`")))?;
        p.custom_call_api_version = *e as i32;
    }
    p.custom_call_has_side_effect = a.custom_call_has_side_effect.unwrap_or(false);
    if let Some(b) = &a.backend_config {
        p.backend_config = b.clone().into_bytes();
    }
    if let Some(f) = &a.frontend_attributes {
        p.frontend_attributes = Some(frontend_to_proto(f));
    }
    if let Some(s) = &a.sharding {
        p.sharding = Some(sharding_to_proto(s).ok_or_else(|| bad(format!("sharding `{s}`")))?);
    }
    if let Some(g) = &a.replica_groups {
        p.replica_groups = replica_groups_to_proto(g).map_err(bad)?;
    }
    p.channel_id = a.channel_id.unwrap_or(0);
    p.use_global_device_ids = a.use_global_device_ids.unwrap_or(false);
    if let Some(t) = a.fft_type {
        p.fft_type = match t {
            FftType::Fft => px::FftType::Fft,
            FftType::Ifft => px::FftType::Ifft,
            FftType::Rfft => px::FftType::Rfft,
            FftType::Irfft => px::FftType::Irfft,
        } as i32;
    }
    if let Some(l) = &a.fft_length {
        p.fft_length = l.clone();
    }
    if let Some(d) = a.distribution {
        p.distribution = match d {
            RandomDistribution::Uniform => px::RandomDistribution::RngUniform,
            RandomDistribution::Normal => px::RandomDistribution::RngNormal,
        } as i32;
    }
    p.exponent_bits = a.exponent_bits.unwrap_or(0) as i32;
    p.mantissa_bits = a.mantissa_bits.unwrap_or(0) as i32;
    p.delta = a.delta.unwrap_or(0);
    if let Some(e) = a.epsilon {
        p.epsilon = e.as_f64() as f32;
    }
    p.feature_index = a.feature_index.unwrap_or(0);
    let _ = module;
    Ok(p)
}

/// Which IR attributes an instruction's called computations go to (XLA's text format names them
/// per opcode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CalledRoles {
    /// No called computations.
    None,
    /// `while`: condition, body.
    ConditionBody,
    /// A pred `conditional`: true, false.
    TrueFalse,
    /// An index `conditional`: the branches.
    Branches,
    /// `select-and-scatter`: select, scatter.
    SelectScatter,
    /// `fusion`, `async-start`: `calls`.
    Calls,
    /// A single `to_apply`.
    ToApply,
    /// A `custom-call` with other than one called computation.
    CalledComputations,
}

/// The arity and role rules of called computations: how `called` of them map to attributes of
/// `opcode`, or why they cannot.
fn called_roles(
    opcode: Opcode,
    called: usize,
    operand0_is_pred: bool,
) -> Result<CalledRoles, String> {
    use Opcode::*;
    Ok(match opcode {
        _ if called == 0 => CalledRoles::None,
        While if called == 2 => CalledRoles::ConditionBody,
        While => return Err(format!("while takes 2 called computations, got {called}")),
        Conditional if !operand0_is_pred => CalledRoles::Branches,
        Conditional if called == 2 => CalledRoles::TrueFalse,
        Conditional => return Err(format!("a pred conditional takes 2 branches, got {called}")),
        SelectAndScatter if called == 2 => CalledRoles::SelectScatter,
        SelectAndScatter => {
            return Err(format!(
                "select-and-scatter takes 2 called computations, got {called}"
            ))
        }
        Fusion | AsyncStart => CalledRoles::Calls,
        CustomCall if called != 1 => CalledRoles::CalledComputations,
        _ if called == 1 => CalledRoles::ToApply,
        _ => {
            return Err(format!(
                "{} takes one called computation, got {called}",
                opcode.name()
            ))
        }
    })
}

/// Assigns the called computations of a proto instruction back to the IR attribute XLA's text
/// format uses for its opcode; `roles` comes from [`called_roles`] for the same list.
fn assign_called(attrs: &mut Attrs, roles: CalledRoles, called: Vec<ComputationId>) {
    match (roles, called.as_slice()) {
        (CalledRoles::ConditionBody, &[c, b]) => {
            attrs.condition = Some(c);
            attrs.body = Some(b);
        }
        (CalledRoles::TrueFalse, &[t, f]) => {
            attrs.true_computation = Some(t);
            attrs.false_computation = Some(f);
        }
        (CalledRoles::SelectScatter, &[s, c]) => {
            attrs.select = Some(s);
            attrs.scatter = Some(c);
        }
        (CalledRoles::ToApply, &[c]) => attrs.to_apply = Some(c),
        (CalledRoles::Branches, _) => attrs.branch_computations = Some(called),
        (CalledRoles::Calls, _) => attrs.calls = Some(called),
        (CalledRoles::CalledComputations, _) => attrs.called_computations = Some(called),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Modules.

/// Converts a module to `HloModuleProtoWithConfig`.
pub fn to_proto(module: &HloModule) -> Result<px::HloModuleProtoWithConfig, ConvertError> {
    let module_bad = |what: String| ConvertError::Unrepresentable {
        computation: "<module>".into(),
        instruction: String::new(),
        what,
    };
    if let Some((k, v)) = module.config.raw.first() {
        return Err(module_bad(format!("module attribute `{k}={v}`")));
    }
    let mut next = 0i64;
    let ids = ModuleIds {
        instr: module
            .computations
            .iter()
            .map(|c| {
                c.instructions
                    .iter()
                    .map(|_| {
                        next += 1;
                        next
                    })
                    .collect()
            })
            .collect(),
    };
    let mut computations = Vec::with_capacity(module.computations.len());
    for (ci, comp) in module.computations.iter().enumerate() {
        // Operands before their users, as XLA writes a module and as a runtime checks it: the
        // text parser accepts operands defined later in the text, and writing the text order
        // made artifacts the runtime refuses ("operand id 3 is not an earlier instruction").
        // For text already in that order (everything XLA and JAX print) the order is the same.
        let instructions = comp
            .post_order()
            .into_iter()
            .filter_map(|id| comp.get(id).map(|instr| (id, instr)))
            .map(|(id, instr)| instruction_to_proto(module, comp, ci, &ids, id, instr))
            .collect::<Result<Vec<_>, _>>()?;
        let root_id = ids
            .instr
            .get(ci)
            .and_then(|v| v.get(comp.root.index()))
            .copied()
            .ok_or_else(|| module_bad(format!("computation {} has no root", comp.name)))?;
        let program_shape = {
            let params = comp
                .param_shapes()
                .into_iter()
                .map(shape_to_proto)
                .collect::<Result<Vec<_>, _>>()
                .map_err(module_bad)?;
            let result = comp
                .root_instruction()
                .map(|r| shape_to_proto(&r.shape))
                .transpose()
                .map_err(module_bad)?;
            px::ProgramShapeProto {
                parameters: params,
                result,
                parameter_names: comp
                    .params
                    .iter()
                    .filter_map(|&p| comp.get(p).map(|i| i.name.clone()))
                    .collect(),
            }
        };
        computations.push(px::HloComputationProto {
            name: comp.name.clone(),
            instructions,
            program_shape: Some(program_shape),
            id: ci as i64,
            root_id,
            is_fusion_computation: false,
            execution_thread: comp.execution_thread.clone().unwrap_or_default(),
        });
    }
    let cfg = &module.config;
    let entry_layout = cfg
        .entry_computation_layout
        .as_ref()
        .map(program_shape_to_proto)
        .transpose()
        .map_err(module_bad)?;
    let schedule = (cfg.is_scheduled == Some(true)).then(|| px::HloScheduleProto {
        sequences: computations
            .iter()
            .map(|c| {
                (
                    c.id,
                    px::hlo_schedule_proto::InstructionSequence {
                        instruction_ids: c.instructions.iter().map(|i| i.id).collect(),
                    },
                )
            })
            .collect(),
    });
    let input_output_alias = cfg
        .input_output_alias
        .as_ref()
        .map(|aliases| {
            aliases
                .iter()
                .map(|a| {
                    let kind = match a.kind.as_deref() {
                        None => px::Kind::UndefinedAlias,
                        Some("may-alias") => px::Kind::MayAlias,
                        Some("must-alias") => px::Kind::MustAlias,
                        Some(other) => return Err(module_bad(format!("alias kind `{other}`"))),
                    };
                    Ok(px::hlo_input_output_alias_proto::AliasEntryProto {
                        output_shape_index: a.output_index.clone(),
                        parameter_number: a.param_number,
                        parameter_shape_index: a.param_index.clone(),
                        kind: kind as i32,
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|entries| px::HloInputOutputAliasProto { entries })
        })
        .transpose()?;
    let sf = &module.stack_frames;
    let stack_frame_index = if sf.is_empty() {
        None
    } else {
        fn dense<T: Clone>(v: &[(i64, T)], what: &str) -> Result<Vec<T>, String> {
            v.iter()
                .enumerate()
                .map(|(i, (id, x))| {
                    if *id == i as i64 + 1 {
                        Ok(x.clone())
                    } else {
                        Err(format!(
                            "{what} id {id} at position {} (ids must be 1, 2, ...)",
                            i + 1
                        ))
                    }
                })
                .collect()
        }
        Some(px::StackFrameIndexProto {
            file_names: dense(&sf.file_names, "file name").map_err(module_bad)?,
            function_names: dense(&sf.function_names, "function name").map_err(module_bad)?,
            file_locations: dense(&sf.file_locations, "file location")
                .map_err(module_bad)?
                .into_iter()
                .map(|l| px::stack_frame_index_proto::FileLocation {
                    file_name_id: l.file_name_id as i32,
                    function_name_id: l.function_name_id as i32,
                    line: l.line as i32,
                    end_line: l.end_line as i32,
                    column: l.column as i32,
                    end_column: l.end_column as i32,
                })
                .collect(),
            stack_frames: dense(&sf.stack_frames, "stack frame")
                .map_err(module_bad)?
                .into_iter()
                .map(|f| px::stack_frame_index_proto::StackFrame {
                    file_location_id: f.file_location_id as i32,
                    parent_frame_id: f.parent_frame_id as i32,
                })
                .collect(),
        })
    };
    let entry = module
        .get(module.entry)
        .ok_or_else(|| module_bad("entry computation is missing".into()))?;
    let hlo_module = px::HloModuleProto {
        name: module.name.clone(),
        entry_computation_name: entry.name.clone(),
        entry_computation_id: i64::from(module.entry.0),
        host_program_shape: computations
            .get(module.entry.index())
            .and_then(|c| c.program_shape.clone()),
        computations,
        id: 0,
        schedule,
        input_output_alias,
        is_dynamic: false,
        stack_frame_index,
        frontend_attributes: cfg.frontend_attributes.as_deref().map(frontend_to_proto),
    };
    let config = px::HloModuleConfigProto {
        entry_computation_layout: entry_layout,
        replica_count: cfg.replica_count.unwrap_or(0),
        num_partitions: cfg.num_partitions.unwrap_or(0),
        allow_spmd_sharding_propagation_to_parameters: cfg
            .allow_spmd_sharding_propagation_to_parameters
            .clone()
            .unwrap_or_default(),
        allow_spmd_sharding_propagation_to_output: cfg
            .allow_spmd_sharding_propagation_to_output
            .clone()
            .unwrap_or_default(),
        ..Default::default()
    };
    Ok(px::HloModuleProtoWithConfig {
        hlo_module: Some(hlo_module),
        config: Some(config),
    })
}

/// What [`check_proto`] learns about a structurally valid module: the module-level facts a
/// runtime needs, without the IR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProtoSummary {
    /// `config.replica_count` as in the proto (0: unset).
    pub replica_count: i64,
    /// `config.num_partitions` as in the proto (0: unset).
    pub num_partitions: i64,
    /// Index of the entry computation in `hlo_module.computations`.
    pub entry: usize,
    /// Number of computations.
    pub computations: usize,
    /// Number of instructions over all computations.
    pub instructions: usize,
}

/// Checks the structure of an `HloModuleProtoWithConfig` (from an artifact: untrusted) without
/// building any IR, with exactly the errors [`from_proto`] gives for the same problems (one
/// implementation: `from_proto` runs the same walk and only adds to it).
///
/// Checked here, in this order (the first problem is the error):
/// - `hlo_module` is set; computation ids are unique;
/// - per computation, per instruction in order: its name is not a duplicate; its opcode is known
///   ([`ConvertError::UnknownOpcode`]); its shape is set and valid ([`check_shape`]); operand ids
///   name earlier instructions of the computation; called computation ids exist, and their
///   number fits the opcode (`while` 2, pred `conditional` 2, `select-and-scatter` 2, most others
///   1); parameter numbers are not reused; the instruction id is unique;
/// - per computation: parameter numbers are exactly `0..n`; the root id is an instruction;
/// - the call graph is acyclic (the error names the cycle);
/// - the entry computation exists (and has `entry_computation_name`, when set);
/// - `config.entry_computation_layout`, when set, has valid shapes and a result.
///
/// Only [`from_proto`] decodes instruction attributes (`fill_attrs`): literals of constants
/// (value counts against the shape), comparison directions and types, fusion kinds, precision,
/// custom-call API versions, backend config UTF-8, FFT types, RNG distributions, required
/// attributes (`constant` without a literal, `compare` without a direction, `iota` without one
/// dimension). It also converts metadata and stack frames. A runtime needs none of that: it
/// executes the artifact's thunks, never the HLO; the embedded module is checked so that an
/// opcode unknown to this build, or a corrupt module, fails the load. A proto with both an
/// attribute problem and a later structural one gives `from_proto` the attribute error (it
/// comes first in program order) and `check_proto` the structural one.
pub fn check_proto(p: &px::HloModuleProtoWithConfig) -> Result<ProtoSummary, ConvertError> {
    walk_proto(&decoded(p)?, &mut CheckOnly).map(|w| w.summary)
}

/// [`check_proto`] on the encoding of an `HloModuleProtoWithConfig`, without decoding it whole:
/// one computation header and one instruction at a time, so memory stays near the size of the
/// largest instruction however large the module (prost's struct for one instruction is about
/// 2.5 KB; a whole decoded module is many times its encoding). Same checks, same errors, and
/// protobuf's semantics (a repeated singular field: the last wins; a repeated message field:
/// merged), plus an error naming the part that is not valid protobuf.
pub fn check_proto_bytes(bytes: &[u8]) -> Result<ProtoSummary, ConvertError> {
    use proto::wire::decode_except;
    let split = decode_except::<px::HloModuleProtoWithConfig>(bytes, usize::MAX, &[1, 2])
        .map_err(|e| malformed("hlo_module_with_config", e))?;
    let module = split
        .payload(1)
        .ok_or_else(|| invalid("<module>", "", "hlo_module is not set"))?;
    let config = split
        .payload(2)
        .map(|c| <px::HloModuleConfigProto as proto::prost::Message>::decode(c.as_ref()))
        .transpose()
        .map_err(|e| malformed("config", e))?;
    walk_proto(&Wire::new(&module, config)?, &mut CheckOnly).map(|w| w.summary)
}

/// The decoded source of a module proto (`hlo_module` must be set).
fn decoded(p: &px::HloModuleProtoWithConfig) -> Result<Decoded<'_>, ConvertError> {
    let module = p
        .hlo_module
        .as_ref()
        .ok_or_else(|| invalid("<module>", "", "hlo_module is not set"))?;
    Ok(Decoded {
        module,
        config: p.config.as_ref(),
    })
}

/// An instruction that passed its structural checks (all but the parameter-number and id
/// checks, which follow the attribute checks as they always have), as the walk hands it on.
struct Checked<'a> {
    proto: &'a px::HloInstructionProto,
    opcode: Opcode,
    roles: CalledRoles,
    /// Operands, as indices into the computation's instructions.
    operands: &'a [u32],
    /// Called computations, as indices into the module's computations.
    called: &'a [usize],
}

/// What [`walk_proto`] does with what it has checked: nothing ([`check_proto`]) or build the IR
/// ([`from_proto`]).
trait Sink {
    type Shape;
    /// Checks (and, building, converts) a shape.
    fn shape(&mut self, p: &px::ShapeProto) -> Result<Self::Shape, String>;
    /// An instruction whose structure is valid; an error is the instruction's.
    fn instruction(&mut self, i: Checked<'_>, shape: Self::Shape) -> Result<(), String>;
    /// The end of a valid computation; `root` indexes its instructions.
    fn computation(&mut self, head: &CompHead<'_>, root: u32);
}

struct CheckOnly;

impl Sink for CheckOnly {
    type Shape = ();
    fn shape(&mut self, p: &px::ShapeProto) -> Result<(), String> {
        check_shape(p)
    }
    fn instruction(&mut self, _: Checked<'_>, _: ()) -> Result<(), String> {
        Ok(())
    }
    fn computation(&mut self, _: &CompHead<'_>, _: u32) {}
}

/// The entry computation layout's parameter and result shapes, as the sink made them.
type EntryLayout<T> = Option<(Vec<T>, T)>;

/// What a successful [`walk_proto`] returns.
struct Walked<T> {
    summary: ProtoSummary,
    entry_layout: EntryLayout<T>,
}

/// A computation as the walk needs it besides its instructions.
struct CompHead<'p> {
    id: i64,
    name: &'p str,
    root_id: i64,
    execution_thread: &'p str,
}

/// Calls back with each instruction of one computation: its name and its proto.
type Visit<'v, 'p> = dyn FnMut(&'p str, &px::HloInstructionProto) -> Result<(), ConvertError> + 'v;

/// Where [`walk_proto`] reads a module from: decoded structs ([`Decoded`]) or its wire bytes,
/// one instruction decoded at a time ([`Wire`]).
trait Source<'p> {
    /// Every computation's header, in order.
    fn heads(&self) -> Result<Vec<CompHead<'p>>, ConvertError>;
    /// Visits the instructions of computation `index` in order.
    fn instructions(&self, index: usize, visit: &mut Visit<'_, 'p>) -> Result<(), ConvertError>;
    /// `entry_computation_id` and `entry_computation_name`.
    fn entry(&self) -> (i64, &str);
    /// The module config, when set.
    fn config(&self) -> Option<&px::HloModuleConfigProto>;
}

/// A decoded `HloModuleProtoWithConfig` (whose `hlo_module` is set).
struct Decoded<'p> {
    module: &'p px::HloModuleProto,
    config: Option<&'p px::HloModuleConfigProto>,
}

impl<'p> Source<'p> for Decoded<'p> {
    fn heads(&self) -> Result<Vec<CompHead<'p>>, ConvertError> {
        Ok(self
            .module
            .computations
            .iter()
            .map(|c| CompHead {
                id: c.id,
                name: &c.name,
                root_id: c.root_id,
                execution_thread: &c.execution_thread,
            })
            .collect())
    }
    fn instructions(&self, index: usize, visit: &mut Visit<'_, 'p>) -> Result<(), ConvertError> {
        for ip in self
            .module
            .computations
            .get(index)
            .map_or(&[][..], |c| &c.instructions)
        {
            visit(&ip.name, ip)?;
        }
        Ok(())
    }
    fn entry(&self) -> (i64, &str) {
        (
            self.module.entry_computation_id,
            &self.module.entry_computation_name,
        )
    }
    fn config(&self) -> Option<&px::HloModuleConfigProto> {
        self.config
    }
}

/// Field numbers read from the wire by [`Wire`].
const MODULE_COMPUTATIONS: u32 = 3;
const COMPUTATION_INSTRUCTIONS: u32 = 2;
const INSTRUCTION_NAME: u32 = 1;

/// An `HloModuleProtoWithConfig` in wire form: the config and the module without its
/// computations are decoded; each computation's header, then each instruction, is decoded as
/// the walk reaches it. Every byte is decoded by prost at some point, so what prost would reject
/// is rejected.
struct Wire<'p> {
    entry_id: i64,
    entry_name: String,
    config: Option<px::HloModuleConfigProto>,
    /// Each computation: `id`, `root_id` and its encoding.
    computations: Vec<(i64, i64, &'p [u8])>,
}

fn malformed(what: &str, e: impl std::fmt::Display) -> ConvertError {
    invalid("<module>", "", format!("{what} is not valid protobuf: {e}"))
}

impl<'p> Wire<'p> {
    /// `module` is the encoding of an `HloModuleProto` (every occurrence concatenated).
    fn new(
        module: &'p [u8],
        config: Option<px::HloModuleConfigProto>,
    ) -> Result<Self, ConvertError> {
        use proto::wire::decode_except;
        // Everything but the computations is decoded (so the bytes are checked as prost would),
        // and dropped once the entry's id and name are read.
        let split = decode_except::<px::HloModuleProto>(module, usize::MAX, &[MODULE_COMPUTATIONS])
            .map_err(|e| malformed("hlo_module", e))?;
        let mut computations = Vec::new();
        for bytes in split.occurrences(MODULE_COMPUTATIONS) {
            let head = decode_except::<px::HloComputationProto>(
                bytes,
                usize::MAX,
                &[COMPUTATION_INSTRUCTIONS],
            )
            .map_err(|e| malformed("hlo_module.computations", e))?;
            computations.push((head.message.id, head.message.root_id, bytes));
        }
        Ok(Wire {
            entry_id: split.message.entry_computation_id,
            entry_name: split.message.entry_computation_name,
            config,
            computations,
        })
    }
}

impl<'p> Source<'p> for Wire<'p> {
    fn heads(&self) -> Result<Vec<CompHead<'p>>, ConvertError> {
        // Names borrow from the wire bytes (the decoded copies do not live long enough).
        self.computations
            .iter()
            .map(|&(id, root_id, bytes)| {
                Ok(CompHead {
                    id,
                    name: last_string(bytes, 1)?,
                    root_id,
                    execution_thread: last_string(bytes, 8)?,
                })
            })
            .collect()
    }
    fn instructions(&self, index: usize, visit: &mut Visit<'_, 'p>) -> Result<(), ConvertError> {
        use proto::prost::Message;
        let Some(&(_, _, bytes)) = self.computations.get(index) else {
            return Ok(());
        };
        for field in proto::wire::Fields::new(bytes) {
            let field = field.map_err(|()| malformed("hlo_module.computations", "bad field"))?;
            let (COMPUTATION_INSTRUCTIONS, proto::wire::Value::Bytes(ib)) =
                (field.number, field.value)
            else {
                continue;
            };
            let ip = px::HloInstructionProto::decode(ib)
                .map_err(|e| malformed("hlo_module.computations.instructions", e))?;
            visit(last_string(ib, INSTRUCTION_NAME)?, &ip)?;
        }
        Ok(())
    }
    fn entry(&self) -> (i64, &str) {
        (self.entry_id, &self.entry_name)
    }
    fn config(&self) -> Option<&px::HloModuleConfigProto> {
        self.config.as_ref()
    }
}

/// The last occurrence of string field `number` in a message's encoding ("" when absent), as
/// protobuf reads a repeated singular field.
fn last_string(bytes: &[u8], number: u32) -> Result<&str, ConvertError> {
    let mut last: &[u8] = &[];
    for f in proto::wire::Fields::new(bytes) {
        let f = f.map_err(|()| malformed("hlo_module", "bad field"))?;
        if let (true, proto::wire::Value::Bytes(b)) = (f.number == number, f.value) {
            last = b;
        }
    }
    std::str::from_utf8(last).map_err(|e| malformed("hlo_module", e))
}

/// The structural checks of [`check_proto`], reading the module from `src` and feeding `sink`
/// as it goes. Allocates a handful of maps, reused across computations, and nothing per
/// instruction on the success path.
fn walk_proto<'p, S: Sink>(
    src: &impl Source<'p>,
    sink: &mut S,
) -> Result<Walked<S::Shape>, ConvertError> {
    const M: &str = "<module>";
    let heads = src.heads()?;
    let mut comp_index: HashMap<i64, usize> = HashMap::with_capacity(heads.len());
    for (i, c) in heads.iter().enumerate() {
        if comp_index.insert(c.id, i).is_some() {
            return Err(invalid(M, "", "computation ids are not unique"));
        }
    }
    // Per computation, cleared and reused: names, id -> index, parameter numbers, operands,
    // whether each instruction is a pred.
    let mut names: HashSet<&'p str> = HashSet::new();
    let mut local: HashMap<i64, u32> = HashMap::new();
    let mut params: HashSet<i64> = HashSet::new();
    let mut operands: Vec<u32> = Vec::new();
    let mut is_pred: Vec<bool> = Vec::new();
    // The call graph: computation i calls callees[ends[i - 1]..ends[i]].
    let mut callees: Vec<usize> = Vec::new();
    let mut ends: Vec<usize> = Vec::with_capacity(heads.len());
    let mut instructions = 0;
    for (ci, head) in heads.iter().enumerate() {
        let cname = head.name;
        names.clear();
        local.clear();
        params.clear();
        is_pred.clear();
        src.instructions(ci, &mut |iname: &'p str, ip: &px::HloInstructionProto| {
            let index = is_pred.len();
            let err = |m: String| invalid(cname, iname, m);
            if !names.insert(iname) {
                return Err(err(format!("duplicate instruction name \"{iname}\"")));
            }
            let opcode =
                Opcode::from_name(&ip.opcode).ok_or_else(|| ConvertError::UnknownOpcode {
                    computation: cname.to_owned(),
                    instruction: iname.to_owned(),
                    opcode: ip.opcode.clone(),
                })?;
            let shape_proto = ip
                .shape
                .as_ref()
                .ok_or_else(|| err("shape is not set".into()))?;
            let shape = sink
                .shape(shape_proto)
                .map_err(|m| err(format!("shape: {m}")))?;
            operands.clear();
            for o in &ip.operand_ids {
                operands.push(local.get(o).copied().ok_or_else(|| {
                    err(format!(
                        "operand id {o} is not an earlier instruction of this computation"
                    ))
                })?);
            }
            let first_called = callees.len();
            for c in &ip.called_computation_ids {
                callees.push(
                    comp_index
                        .get(c)
                        .copied()
                        .ok_or_else(|| err(format!("called computation id {c} does not exist")))?,
                );
            }
            let called = callees.get(first_called..).unwrap_or_default();
            let operand0_is_pred = operands
                .first()
                .and_then(|&o| is_pred.get(o as usize))
                .copied()
                .unwrap_or(false);
            let roles = called_roles(opcode, called.len(), operand0_is_pred).map_err(err)?;
            let checked = Checked {
                proto: ip,
                opcode,
                roles,
                operands: &operands,
                called,
            };
            sink.instruction(checked, shape).map_err(err)?;
            if opcode == Opcode::Parameter && !params.insert(ip.parameter_number) {
                return Err(err(format!(
                    "parameter number {} used twice",
                    ip.parameter_number
                )));
            }
            if local.insert(ip.id, index as u32).is_some() {
                return Err(err(format!("instruction id {} is not unique", ip.id)));
            }
            is_pred.push(shape_proto.element_type == px::PrimitiveType::Pred as i32);
            Ok(())
        })?;
        check_parameter_numbers(&params).map_err(|m| invalid(cname, "", m))?;
        let root = local.get(&head.root_id).copied().ok_or_else(|| {
            invalid(
                cname,
                "",
                format!("root id {} is not an instruction", head.root_id),
            )
        })?;
        sink.computation(head, root);
        ends.push(callees.len());
        instructions += is_pred.len();
    }
    let names: Vec<&str> = heads.iter().map(|h| h.name).collect();
    check_acyclic(&names, &callees, &ends)?;
    let (entry_id, entry_name) = src.entry();
    let entry = comp_index
        .get(&entry_id)
        .copied()
        .filter(|&i| entry_name.is_empty() || names.get(i).is_some_and(|&n| n == entry_name))
        .ok_or_else(|| {
            invalid(
                M,
                "",
                format!("entry computation id {entry_id} (\"{entry_name}\") does not exist"),
            )
        })?;
    let config = src.config();
    let entry_layout = config
        .and_then(|c| c.entry_computation_layout.as_ref())
        .map(|l| program_shape_with(l, |s| sink.shape(s)))
        .transpose()
        .map_err(|m| invalid(M, "", format!("entry_computation_layout: {m}")))?;
    let summary = ProtoSummary {
        replica_count: config.map_or(0, |c| c.replica_count),
        num_partitions: config.map_or(0, |c| c.num_partitions),
        entry,
        computations: heads.len(),
        instructions,
    };
    Ok(Walked {
        summary,
        entry_layout,
    })
}

/// Parameter numbers, already unique, must be exactly `0..n`. Allocates only to name the error.
fn check_parameter_numbers(params: &HashSet<i64>) -> Result<(), String> {
    let n = params.len();
    if params
        .iter()
        .all(|&x| usize::try_from(x).is_ok_and(|x| x < n))
    {
        return Ok(());
    }
    let mut sorted: Vec<i64> = params.iter().copied().collect();
    sorted.sort_unstable();
    let found = sorted
        .iter()
        .zip(0..)
        .find(|&(&x, expected)| x != expected)
        .map_or(0, |(&x, _)| x);
    Err(format!("parameter numbers must be 0..{n}, found {found}"))
}

/// Builds the IR of [`from_proto`] from what the walk has checked.
#[derive(Default)]
struct Builder {
    instructions: Vec<Instruction>,
    /// (parameter number, instruction) of the current computation.
    params: Vec<(i64, InstrId)>,
    computations: Vec<Computation>,
}

impl Sink for Builder {
    type Shape = Shape;
    fn shape(&mut self, p: &px::ShapeProto) -> Result<Shape, String> {
        shape_from_proto(p)
    }
    fn instruction(&mut self, i: Checked<'_>, shape: Shape) -> Result<(), String> {
        let mut attrs = Attrs::default();
        assign_called(
            &mut attrs,
            i.roles,
            i.called.iter().map(|&c| ComputationId(c as u32)).collect(),
        );
        fill_attrs(&mut attrs, i.opcode, i.proto, &shape)?;
        let id = InstrId(self.instructions.len() as u32);
        if i.opcode == Opcode::Parameter {
            self.params.push((i.proto.parameter_number, id));
        }
        self.instructions.push(Instruction {
            name: i.proto.name.clone(),
            opcode: i.opcode,
            shape,
            operands: i.operands.iter().map(|&o| InstrId(o)).collect(),
            attrs,
            metadata: i.proto.metadata.as_ref().and_then(metadata_from_proto),
            loc: SourceLoc::default(),
        });
        Ok(())
    }
    fn computation(&mut self, p: &CompHead<'_>, root: u32) {
        self.params.sort_unstable_by_key(|&(number, _)| number);
        self.computations.push(Computation {
            name: p.name.to_owned(),
            instructions: std::mem::take(&mut self.instructions),
            params: self.params.drain(..).map(|(_, id)| id).collect(),
            root: InstrId(root),
            execution_thread: (!p.execution_thread.is_empty())
                .then(|| p.execution_thread.to_owned()),
            loc: SourceLoc::default(),
        });
    }
}

/// Converts an `HloModuleProtoWithConfig` (from an artifact: untrusted) to the IR: the checks of
/// [`check_proto`] (the same walk), plus decoding and checking every instruction's attributes.
pub fn from_proto(p: &px::HloModuleProtoWithConfig) -> Result<HloModule, ConvertError> {
    let mut builder = Builder::default();
    let src = decoded(p)?;
    let hm = src.module;
    let Walked {
        summary,
        entry_layout,
    } = walk_proto(&src, &mut builder)?;
    let default_config = px::HloModuleConfigProto::default();
    let cfg = p.config.as_ref().unwrap_or(&default_config);
    let config = ModuleConfig {
        is_scheduled: hm.schedule.as_ref().map(|_| true),
        entry_computation_layout: entry_layout
            .map(|(params, result)| ProgramLayout { params, result }),
        input_output_alias: hm.input_output_alias.as_ref().map(|a| {
            a.entries
                .iter()
                .map(|e| IoAlias {
                    output_index: e.output_shape_index.clone(),
                    param_number: e.parameter_number,
                    param_index: e.parameter_shape_index.clone(),
                    kind: match px::Kind::try_from(e.kind) {
                        Ok(px::Kind::MayAlias) => Some("may-alias".into()),
                        Ok(px::Kind::MustAlias) => Some("must-alias".into()),
                        _ => None,
                    },
                })
                .collect()
        }),
        allow_spmd_sharding_propagation_to_parameters: (!cfg
            .allow_spmd_sharding_propagation_to_parameters
            .is_empty())
        .then(|| cfg.allow_spmd_sharding_propagation_to_parameters.clone()),
        allow_spmd_sharding_propagation_to_output: (!cfg
            .allow_spmd_sharding_propagation_to_output
            .is_empty())
        .then(|| cfg.allow_spmd_sharding_propagation_to_output.clone()),
        replica_count: (summary.replica_count != 0).then_some(summary.replica_count),
        num_partitions: (summary.num_partitions != 0).then_some(summary.num_partitions),
        frontend_attributes: hm.frontend_attributes.as_ref().map(frontend_from_proto),
        raw: Vec::new(),
    };
    let stack_frames = hm
        .stack_frame_index
        .as_ref()
        .map(|s| {
            fn ids<T>(v: impl IntoIterator<Item = T>) -> Vec<(i64, T)> {
                v.into_iter()
                    .enumerate()
                    .map(|(i, x)| (i as i64 + 1, x))
                    .collect()
            }
            StackFrameIndex {
                file_names: ids(s.file_names.iter().cloned()),
                function_names: ids(s.function_names.iter().cloned()),
                file_locations: ids(s.file_locations.iter().map(|l| FileLocation {
                    file_name_id: i64::from(l.file_name_id),
                    function_name_id: i64::from(l.function_name_id),
                    line: i64::from(l.line),
                    end_line: i64::from(l.end_line),
                    column: i64::from(l.column),
                    end_column: i64::from(l.end_column),
                })),
                stack_frames: ids(s.stack_frames.iter().map(|f| StackFrame {
                    file_location_id: i64::from(f.file_location_id),
                    parent_frame_id: i64::from(f.parent_frame_id),
                })),
            }
        })
        .unwrap_or_default();
    Ok(HloModule {
        name: hm.name.clone(),
        computations: builder.computations,
        entry: ComputationId(summary.entry as u32),
        config,
        stack_frames,
    })
}

fn fill_attrs(
    a: &mut Attrs,
    opcode: Opcode,
    p: &px::HloInstructionProto,
    shape: &Shape,
) -> Result<(), String> {
    use Opcode::*;
    if opcode == Parameter {
        a.parameter_number = Some(p.parameter_number);
    }
    if let Some(l) = &p.literal {
        a.literal = Some(literal_from_proto(l, shape).map_err(|m| format!("literal: {m}"))?);
    } else if opcode == Constant {
        return Err("constant has no literal".into());
    }
    if opcode == Iota {
        match p.dimensions.as_slice() {
            [d] => a.iota_dimension = Some(*d),
            other => return Err(format!("iota needs one dimension, got {other:?}")),
        }
    } else if !p.dimensions.is_empty()
        || matches!(
            opcode,
            Broadcast | Transpose | Reduce | Reverse | Concatenate
        )
    {
        a.dimensions = Some(p.dimensions.clone());
    }
    if !p.slice_dimensions.is_empty() {
        a.slice = Some(
            p.slice_dimensions
                .iter()
                .map(|d| SliceDim {
                    start: d.start,
                    limit: d.limit,
                    stride: d.stride,
                })
                .collect(),
        );
    }
    if let Some(pc) = &p.padding_config {
        a.padding = Some(
            pc.dimensions
                .iter()
                .map(|d| PadDim {
                    low: d.edge_padding_low,
                    high: d.edge_padding_high,
                    interior: d.interior_padding,
                })
                .collect(),
        );
    }
    a.window = p.window.as_ref().map(window_from_proto);
    a.dot_dimension_numbers = p
        .dot_dimension_numbers
        .as_ref()
        .map(|d| DotDimensionNumbers {
            lhs_batch_dims: d.lhs_batch_dimensions.clone(),
            lhs_contracting_dims: d.lhs_contracting_dimensions.clone(),
            rhs_batch_dims: d.rhs_batch_dimensions.clone(),
            rhs_contracting_dims: d.rhs_contracting_dimensions.clone(),
        });
    a.conv_dimension_numbers =
        p.convolution_dimension_numbers
            .as_ref()
            .map(|d| ConvDimensionNumbers {
                input_batch_dimension: d.input_batch_dimension,
                input_feature_dimension: d.input_feature_dimension,
                input_spatial_dimensions: d.input_spatial_dimensions.clone(),
                kernel_input_feature_dimension: d.kernel_input_feature_dimension,
                kernel_output_feature_dimension: d.kernel_output_feature_dimension,
                kernel_spatial_dimensions: d.kernel_spatial_dimensions.clone(),
                output_batch_dimension: d.output_batch_dimension,
                output_feature_dimension: d.output_feature_dimension,
                output_spatial_dimensions: d.output_spatial_dimensions.clone(),
            });
    a.feature_group_count = (p.feature_group_count != 0).then_some(p.feature_group_count);
    a.batch_group_count = (p.batch_group_count != 0).then_some(p.batch_group_count);
    if let Some(pc) = &p.precision_config {
        a.operand_precision = Some(
            pc.operand_precision
                .iter()
                .map(|&x| precision_from_proto(x))
                .collect::<Result<_, _>>()?,
        );
    }
    if !p.comparison_direction.is_empty() {
        a.comparison_direction = Some(
            ComparisonDirection::from_name(&p.comparison_direction)
                .ok_or_else(|| format!("comparison direction \"{}\"", p.comparison_direction))?,
        );
    } else if opcode == Compare {
        return Err("compare has no comparison_direction".into());
    }
    if !p.comparison_type.is_empty() {
        a.comparison_type = Some(
            ComparisonType::from_name(&p.comparison_type)
                .ok_or_else(|| format!("comparison type \"{}\"", p.comparison_type))?,
        );
    }
    if !p.fusion_kind.is_empty() {
        a.fusion_kind = Some(
            FusionKind::from_name(&p.fusion_kind)
                .ok_or_else(|| format!("fusion kind \"{}\"", p.fusion_kind))?,
        );
    }
    if opcode == GetTupleElement {
        a.tuple_index = Some(p.tuple_index);
    }
    a.gather_dimension_numbers =
        p.gather_dimension_numbers
            .as_ref()
            .map(|g| GatherDimensionNumbers {
                offset_dims: g.offset_dims.clone(),
                collapsed_slice_dims: g.collapsed_slice_dims.clone(),
                start_index_map: g.start_index_map.clone(),
                index_vector_dim: g.index_vector_dim,
                operand_batching_dims: g.operand_batching_dims.clone(),
                start_indices_batching_dims: g.start_indices_batching_dims.clone(),
            });
    if !p.gather_slice_sizes.is_empty() || opcode == Gather {
        a.gather_slice_sizes = Some(p.gather_slice_sizes.clone());
    }
    a.scatter_dimension_numbers =
        p.scatter_dimension_numbers
            .as_ref()
            .map(|s| ScatterDimensionNumbers {
                update_window_dims: s.update_window_dims.clone(),
                inserted_window_dims: s.inserted_window_dims.clone(),
                scatter_dims_to_operand_dims: s.scatter_dims_to_operand_dims.clone(),
                index_vector_dim: s.index_vector_dim,
                input_batching_dims: s.input_batching_dims.clone(),
                scatter_indices_batching_dims: s.scatter_indices_batching_dims.clone(),
            });
    a.indices_are_sorted = p.indices_are_sorted.then_some(true);
    a.unique_indices = p.unique_indices.then_some(true);
    if !p.dynamic_slice_sizes.is_empty() || opcode == DynamicSlice {
        a.dynamic_slice_sizes = Some(p.dynamic_slice_sizes.clone());
    }
    a.is_stable = p.is_stable.then_some(true);
    a.k = (p.k != 0).then_some(p.k);
    a.largest = p.largest.then_some(true);
    if !p.custom_call_target.is_empty() || opcode == CustomCall {
        a.custom_call_target = Some(p.custom_call_target.clone());
    }
    if p.custom_call_api_version != 0 {
        let v = API_VERSIONS
            .iter()
            .find(|(_, e)| *e as i32 == p.custom_call_api_version)
            .map(|(name, _)| (*name).to_owned())
            .ok_or_else(|| format!("custom-call api version {}", p.custom_call_api_version))?;
        a.api_version = Some(v);
    }
    a.custom_call_has_side_effect = p.custom_call_has_side_effect.then_some(true);
    if !p.backend_config.is_empty() {
        a.backend_config = Some(
            String::from_utf8(p.backend_config.clone())
                .map_err(|_| "backend_config is not UTF-8".to_owned())?,
        );
    }
    a.frontend_attributes = p.frontend_attributes.as_ref().map(frontend_from_proto);
    a.sharding = p.sharding.as_ref().map(sharding_from_proto).transpose()?;
    if !p.replica_groups.is_empty() {
        a.replica_groups = Some(ReplicaGroups::List(
            p.replica_groups
                .iter()
                .map(|g| g.replica_ids.clone())
                .collect(),
        ));
    }
    a.channel_id = (p.channel_id != 0).then_some(p.channel_id);
    a.use_global_device_ids = p.use_global_device_ids.then_some(true);
    if opcode == Fft {
        a.fft_type = Some(match px::FftType::try_from(p.fft_type) {
            Ok(px::FftType::Fft) => FftType::Fft,
            Ok(px::FftType::Ifft) => FftType::Ifft,
            Ok(px::FftType::Rfft) => FftType::Rfft,
            Ok(px::FftType::Irfft) => FftType::Irfft,
            Err(_) => return Err(format!("fft type {}", p.fft_type)),
        });
        a.fft_length = Some(p.fft_length.clone());
    }
    if opcode == Rng {
        a.distribution = Some(match px::RandomDistribution::try_from(p.distribution) {
            Ok(px::RandomDistribution::RngUniform) => RandomDistribution::Uniform,
            Ok(px::RandomDistribution::RngNormal) => RandomDistribution::Normal,
            _ => return Err(format!("rng distribution {}", p.distribution)),
        });
    }
    a.exponent_bits = (p.exponent_bits != 0).then_some(i64::from(p.exponent_bits));
    a.mantissa_bits = (p.mantissa_bits != 0).then_some(i64::from(p.mantissa_bits));
    a.delta = (p.delta != 0).then_some(p.delta);
    a.epsilon = (p.epsilon != 0.0).then_some(LiteralValue::Float(f64::from(p.epsilon)));
    a.feature_index = (p.feature_index != 0).then_some(p.feature_index);
    Ok(())
}

/// Refuses call graphs with cycles (a computation calling itself, directly or not): evaluating
/// or compiling them would never end.
fn check_acyclic(comps: &[&str], callees: &[usize], ends: &[usize]) -> Result<(), ConvertError> {
    // Computation i calls callees[ends[i - 1]..ends[i]].
    let callee = |node: usize, pos: usize| {
        let first = node
            .checked_sub(1)
            .map_or(Some(0), |i| ends.get(i).copied())?;
        let end = ends.get(node).copied()?;
        callees.get(first..end)?.get(pos).copied()
    };
    // 0 = unvisited, 1 = on the stack, 2 = done.
    let mut state = vec![0u8; ends.len()];
    let mut stack = Vec::new();
    for start in 0..ends.len() {
        if state.get(start) != Some(&0) {
            continue;
        }
        stack.clear();
        stack.push((start, 0usize));
        if let Some(s) = state.get_mut(start) {
            *s = 1;
        }
        while let Some(&mut (node, ref mut pos)) = stack.last_mut() {
            let next = callee(node, *pos);
            *pos += 1;
            match next {
                None => {
                    if let Some(s) = state.get_mut(node) {
                        *s = 2;
                    }
                    stack.pop();
                }
                Some(n) => match state.get(n) {
                    Some(0) => {
                        if let Some(s) = state.get_mut(n) {
                            *s = 1;
                        }
                        stack.push((n, 0));
                    }
                    Some(1) => {
                        let name = |i: usize| comps.get(i).copied().unwrap_or("?");
                        let from = stack.iter().position(|&(s, _)| s == n).unwrap_or(0);
                        let mut path: Vec<&str> =
                            stack.iter().skip(from).map(|&(s, _)| name(s)).collect();
                        path.push(name(n));
                        return Err(invalid(
                            name(n),
                            "",
                            format!("the call graph has a cycle: {}", path.join(" -> ")),
                        ));
                    }
                    _ => {}
                },
            }
        }
    }
    Ok(())
}
