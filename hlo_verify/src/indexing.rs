//! Indexing: tuple access, dynamic slices, gather and scatter.

use std::collections::HashSet;

use super::error::ShapeError;
use super::infer::*;
use hlo::Shape;
use hlo::*;

/// Tuples and get-tuple-element, dynamic slices, gather and scatter.
pub(super) fn infer(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst { opcode, ops, a, .. } = *cx;
    let out = match opcode {
        GetTupleElement => {
            count(ops, 1, opcode)?;
            let t = ops
                .first()
                .and_then(|s| s.tuple_shapes())
                .ok_or(ShapeError::TupleOperand)?;
            let i = required(a.tuple_index, opcode, "index=")?;
            let i = idx(i, t.len(), "tuple index")?;
            t.get(i)
                .map(Shape::without_layout)
                .ok_or(ShapeError::TupleIndex)?
        }
        Tuple => Shape::Tuple(ops.iter().map(|s| s.without_layout()).collect()),
        DynamicSlice => {
            let x = arr(ops, 0)?;
            check_indices(ops, 1, x.rank(), opcode)?;
            let sizes = required(
                a.dynamic_slice_sizes.as_ref(),
                opcode,
                "dynamic_slice_sizes=",
            )?;
            if sizes.len() != x.rank() {
                return fail(ShapeError::DynamicSliceRank {
                    sizes: sizes.clone(),
                    rank: x.rank(),
                });
            }
            for (&s, &n) in sizes.iter().zip(&x.dims) {
                if s < 0 || s > n {
                    return fail(ShapeError::DynamicSliceSize { size: s, dim: n });
                }
            }
            array(x.element_type, sizes.clone())
        }
        DynamicUpdateSlice => {
            let (x, u) = (arr(ops, 0)?, arr(ops, 1)?);
            check_indices(ops, 2, x.rank(), opcode)?;
            if u.rank() != x.rank() || u.element_type != x.element_type {
                return fail(ShapeError::UpdateMismatch {
                    update: u.clone(),
                    operand: x.clone(),
                });
            }
            if u.dims.iter().zip(&x.dims).any(|(a, b)| a > b) {
                return fail(ShapeError::UpdateTooLarge {
                    update: u.clone(),
                    operand: x.clone(),
                });
            }
            array(x.element_type, dims_of(x))
        }
        Gather => {
            count(ops, 2, opcode)?;
            let (x, ind) = (arr(ops, 0)?, arr(ops, 1)?);
            let g = a
                .gather_dimension_numbers
                .as_ref()
                .ok_or(ShapeError::GatherDimensionNumbers)?;
            let sizes = required(a.gather_slice_sizes.as_ref(), opcode, "slice_sizes=")?;
            if sizes.len() != x.rank() {
                return fail(ShapeError::GatherSliceRank {
                    sizes: sizes.clone(),
                    rank: x.rank(),
                });
            }
            let ivd = usize::try_from(g.index_vector_dim)
                .ok()
                .filter(|&d| d <= ind.rank())
                .ok_or(ShapeError::IndexVectorDim(g.index_vector_dim))?;
            let index_len = if ivd == ind.rank() {
                1
            } else {
                ind.dims.get(ivd).copied().unwrap_or(0)
            };
            if g.start_index_map.len() as i64 != index_len {
                return fail(ShapeError::StartIndexMap {
                    map: g.start_index_map.clone(),
                    index_len,
                });
            }
            let batch: Vec<i64> = ind
                .dims
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != ivd)
                .map(|(_, &d)| d)
                .collect();
            let skip: HashSet<i64> = g
                .collapsed_slice_dims
                .iter()
                .chain(&g.operand_batching_dims)
                .copied()
                .collect();
            let offsets: Vec<i64> = sizes
                .iter()
                .enumerate()
                .filter(|(i, _)| !skip.contains(&(*i as i64)))
                .map(|(_, &s)| s)
                .collect();
            if offsets.len() != g.offset_dims.len() {
                return fail(ShapeError::OffsetDims {
                    dims: g.offset_dims.clone(),
                    expected: offsets.len(),
                });
            }
            let rank = batch.len() + offsets.len();
            let offset_set: HashSet<i64> = g.offset_dims.iter().copied().collect();
            let (mut bi, mut oi) = (batch.iter(), offsets.iter());
            let mut out = Vec::with_capacity(rank);
            for i in 0..rank {
                let v = if offset_set.contains(&(i as i64)) {
                    oi.next()
                } else {
                    bi.next()
                };
                out.push(*v.ok_or(ShapeError::OffsetDimsRange)?);
            }
            array(x.element_type, out)
        }
        Scatter => {
            if ops.len() < 3 || ops.len() % 2 == 0 {
                return fail(ShapeError::ScatterOperands(ops.len()));
            }
            let n = (ops.len() - 1) / 2;
            if n == 1 {
                ops.first()
                    .map(|s| s.without_layout())
                    .unwrap_or(Shape::Token)
            } else {
                Shape::Tuple(ops.iter().take(n).map(|s| s.without_layout()).collect())
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}
