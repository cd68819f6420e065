//! `gather` and `scatter` with XLA's general dimension numbers, including batching dimensions.
//!
//! Gather start indices are clamped so the whole slice fits in the operand (XLA semantics).
//! Scatter skips an update window that does not fit entirely in the operand (XLA semantics).
use hlo::{next_index, strides, Array};

use super::movement::{checked_count, dim_index, sizes};
use super::reduce::{fold, Reducer};
use super::{invalid, EvalError};

/// Gather dimension numbers: the IR's attribute, read as it is.
pub type GatherDims = hlo::GatherDimensionNumbers;

/// Scatter dimension numbers: the IR's attribute, read as it is.
pub type ScatterDims = hlo::ScatterDimensionNumbers;

/// Validates a list of distinct dimension numbers of a rank-`rank` array.
fn dims_of(op: &str, ds: &[i64], rank: usize) -> Result<Vec<usize>, EvalError> {
    let mut out = Vec::with_capacity(ds.len());
    for &d in ds {
        let d = dim_index(op, d, rank)?;
        if out.contains(&d) {
            return Err(invalid(op, format!("dimension {d} listed twice")));
        }
        out.push(d);
    }
    Ok(out)
}

/// Reads index vectors out of `indices`: `batch` coordinates fill the non-vector dimensions in
/// order; returns the vector's values and the full indices multi-index (vector slot = 0).
struct IndexReader<'a> {
    indices: &'a Array,
    /// The index vector dimension, or `None` when it is the implicit trailing one.
    ivd: Option<usize>,
    istr: Vec<usize>,
}

impl<'a> IndexReader<'a> {
    fn new(op: &str, indices: &'a Array, index_vector_dim: i64) -> Result<Self, EvalError> {
        if !indices.dtype().is_int() {
            return Err(invalid(op, "indices must be integers"));
        }
        let r = indices.rank();
        let ivd = usize::try_from(index_vector_dim)
            .ok()
            .filter(|d| *d <= r)
            .ok_or_else(|| {
                invalid(
                    op,
                    format!("index_vector_dim {index_vector_dim} out of range"),
                )
            })?;
        Ok(IndexReader {
            indices,
            ivd: (ivd < r).then_some(ivd),
            istr: strides(indices.dims()),
        })
    }

    /// Dimensions of the indices that are batch (non-vector) dimensions, in order.
    fn batch_dims(&self) -> Vec<usize> {
        (0..self.indices.rank())
            .filter(|d| Some(*d) != self.ivd)
            .collect()
    }

    /// Length of an index vector.
    fn vector_len(&self) -> usize {
        self.ivd.map(|d| self.indices.dims()[d]).unwrap_or(1)
    }

    /// The full indices coordinate (vector slot 0) for batch coordinates `batch`.
    fn coords(&self, batch: &[usize]) -> Vec<usize> {
        let mut c = vec![0usize; self.indices.rank()];
        for (d, b) in self.batch_dims().into_iter().zip(batch) {
            c[d] = *b;
        }
        c
    }

    /// Element `k` of the index vector at `coords`.
    fn value(&self, coords: &[usize], k: usize) -> i64 {
        let mut lin: usize = coords.iter().zip(&self.istr).map(|(c, s)| c * s).sum();
        if let Some(d) = self.ivd {
            lin += k * self.istr[d];
        }
        self.indices.data().get_index(lin).unwrap_or(0)
    }
}

/// `gather(operand, start_indices)` with `slice_sizes`.
pub fn gather(
    operand: &Array,
    indices: &Array,
    dn: &GatherDims,
    slice_sizes: &[i64],
) -> Result<Array, EvalError> {
    const OP: &str = "gather";
    let rank = operand.rank();
    let slice = sizes(OP, slice_sizes)?;
    if slice.len() != rank {
        return Err(invalid(OP, "slice_sizes length differs from operand rank"));
    }
    for (d, (s, n)) in slice.iter().zip(operand.dims()).enumerate() {
        if s > n {
            return Err(invalid(
                OP,
                format!("slice size {s} exceeds dimension {d} ({n})"),
            ));
        }
    }
    let collapsed = dims_of(OP, &dn.collapsed_slice_dims, rank)?;
    let op_batch = dims_of(OP, &dn.operand_batching_dims, rank)?;
    let start_map = dims_of(OP, &dn.start_index_map, rank)?;
    let reader = IndexReader::new(OP, indices, dn.index_vector_dim)?;
    let idx_batch = dims_of(OP, &dn.start_indices_batching_dims, indices.rank())?;
    if reader.vector_len() != start_map.len() {
        return Err(invalid(
            OP,
            format!(
                "index vectors have {} elements, start_index_map has {}",
                reader.vector_len(),
                start_map.len()
            ),
        ));
    }
    if op_batch.len() != idx_batch.len() {
        return Err(invalid(OP, "batching dimension counts differ"));
    }
    let offset_operand: Vec<usize> = (0..rank)
        .filter(|d| !collapsed.contains(d) && !op_batch.contains(d))
        .collect();
    let batch_idx_dims = reader.batch_dims();
    let out_rank = batch_idx_dims.len() + offset_operand.len();
    let offset_dims = dims_of(OP, &dn.offset_dims, out_rank)?;
    if offset_dims.len() != offset_operand.len() {
        return Err(invalid(OP, "offset_dims count does not match the slice"));
    }
    let mut out_dims = Vec::with_capacity(out_rank);
    let (mut bi, mut oi) = (0, 0);
    for d in 0..out_rank {
        if offset_dims.contains(&d) {
            out_dims.push(slice[offset_operand[oi]]);
            oi += 1;
        } else {
            out_dims.push(indices.dims()[batch_idx_dims[bi]]);
            bi += 1;
        }
    }
    let ostr = strides(operand.dims());
    let n = checked_count(OP, &out_dims)?;
    let mut positions = Vec::with_capacity(n);
    if n > 0 {
        let mut out = vec![0usize; out_rank];
        let mut batch = Vec::with_capacity(batch_idx_dims.len());
        loop {
            batch.clear();
            batch.extend(
                (0..out_rank)
                    .filter(|d| !offset_dims.contains(d))
                    .map(|d| out[d]),
            );
            let coords = reader.coords(&batch);
            let mut start = vec![0i64; rank];
            for (k, &d) in start_map.iter().enumerate() {
                let max = (operand.dims()[d] - slice[d]) as i64;
                start[d] = reader.value(&coords, k).clamp(0, max);
            }
            for (&od, &id) in op_batch.iter().zip(&idx_batch) {
                start[od] = coords[id] as i64;
            }
            let mut lin = 0usize;
            for d in 0..rank {
                let off = offset_operand
                    .iter()
                    .position(|x| *x == d)
                    .map(|j| out[offset_dims[j]])
                    .unwrap_or(0);
                let p = start[d] as usize + off;
                if p >= operand.dims()[d] {
                    return Err(invalid(OP, "gathered position out of range"));
                }
                lin += p * ostr[d];
            }
            positions.push(lin);
            if !next_index(&mut out, &out_dims) {
                break;
            }
        }
    }
    let data = operand
        .data()
        .take(&positions)
        .ok_or_else(|| invalid(OP, "position out of range"))?;
    Ok(Array::new(out_dims, data)?)
}

/// `scatter(operands..., scatter_indices, updates...)` combining with `combiner`.
pub fn scatter(
    operands: &[&Array],
    indices: &Array,
    updates: &[&Array],
    dn: &ScatterDims,
    combiner: Reducer<'_>,
) -> Result<Vec<Array>, EvalError> {
    const OP: &str = "scatter";
    let first = operands.first().ok_or_else(|| invalid(OP, "no operands"))?;
    let upd = updates.first().ok_or_else(|| invalid(OP, "no updates"))?;
    if operands.len() != updates.len()
        || operands.iter().any(|o| o.dims() != first.dims())
        || updates.iter().any(|u| u.dims() != upd.dims())
    {
        return Err(invalid(OP, "operands and updates do not pair up"));
    }
    let rank = first.rank();
    let inserted = dims_of(OP, &dn.inserted_window_dims, rank)?;
    let in_batch = dims_of(OP, &dn.input_batching_dims, rank)?;
    let to_operand = dims_of(OP, &dn.scatter_dims_to_operand_dims, rank)?;
    let reader = IndexReader::new(OP, indices, dn.index_vector_dim)?;
    let idx_batch = dims_of(OP, &dn.scatter_indices_batching_dims, indices.rank())?;
    let window_dims = dims_of(OP, &dn.update_window_dims, upd.rank())?;
    if reader.vector_len() != to_operand.len() || in_batch.len() != idx_batch.len() {
        return Err(invalid(
            OP,
            "index vector length or batching dimensions mismatch",
        ));
    }
    let window_operand: Vec<usize> = (0..rank)
        .filter(|d| !inserted.contains(d) && !in_batch.contains(d))
        .collect();
    if window_operand.len() != window_dims.len() {
        return Err(invalid(
            OP,
            "update_window_dims count does not match the operand",
        ));
    }
    let mut wsize = vec![1usize; rank];
    for (j, &d) in window_operand.iter().enumerate() {
        wsize[d] = upd.dims()[window_dims[j]];
    }
    let scatter_dims: Vec<usize> = (0..upd.rank())
        .filter(|d| !window_dims.contains(d))
        .collect();
    let idx_batch_sizes: Vec<usize> = reader
        .batch_dims()
        .iter()
        .map(|d| indices.dims()[*d])
        .collect();
    let upd_batch_sizes: Vec<usize> = scatter_dims.iter().map(|d| upd.dims()[*d]).collect();
    if idx_batch_sizes != upd_batch_sizes {
        return Err(invalid(
            OP,
            format!(
                "update scatter dimensions {upd_batch_sizes:?} differ from the index batch \
                 dimensions {idx_batch_sizes:?}"
            ),
        ));
    }
    let ostr = strides(first.dims());
    let mut pairs = Vec::with_capacity(upd.len());
    if !upd.is_empty() {
        let mut u = vec![0usize; upd.rank()];
        let mut lin_u = 0usize;
        let mut batch = Vec::with_capacity(scatter_dims.len());
        loop {
            batch.clear();
            batch.extend(scatter_dims.iter().map(|d| u[*d]));
            let coords = reader.coords(&batch);
            let mut start = vec![0i64; rank];
            for (k, &d) in to_operand.iter().enumerate() {
                start[d] = reader.value(&coords, k);
            }
            for (&od, &id) in in_batch.iter().zip(&idx_batch) {
                start[od] = coords[id] as i64;
            }
            let fits =
                (0..rank).all(|d| start[d] >= 0 && start[d] as usize + wsize[d] <= first.dims()[d]);
            if fits {
                let mut lin = 0usize;
                for d in 0..rank {
                    let off = window_operand
                        .iter()
                        .position(|x| *x == d)
                        .map(|j| u[window_dims[j]])
                        .unwrap_or(0);
                    lin += (start[d] as usize + off) * ostr[d];
                }
                pairs.push((lin, lin_u));
            }
            lin_u += 1;
            if !next_index(&mut u, upd.dims()) {
                break;
            }
        }
    }
    let start: Vec<Array> = operands.iter().map(|o| (*o).clone()).collect();
    fold(OP, start, updates, &pairs, combiner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elementwise::BinaryOp;
    use hlo::{element_count, Data};

    fn arange(dims: Vec<usize>) -> Array {
        let n = element_count(&dims) as i32;
        Array::new(dims, Data::S32((0..n).collect())).unwrap()
    }

    #[test]
    fn gather_as_jax_take() {
        // x[idx] for x: [5, 3], idx: [4] reshaped to [4, 1] (as JAX emits for jnp.take).
        let x = arange(vec![5, 3]);
        let idx = Array::new(vec![4, 1], Data::S32(vec![4, 0, 9, -2])).unwrap();
        let dn = GatherDims {
            offset_dims: vec![1],
            collapsed_slice_dims: vec![0],
            start_index_map: vec![0],
            index_vector_dim: 1,
            ..GatherDims::default()
        };
        let g = gather(&x, &idx, &dn, &[1, 3]).unwrap();
        assert_eq!(g.dims(), &[4, 3]);
        // Out-of-range starts clamp: 9 -> 4, -2 -> 0.
        assert_eq!(
            g.data(),
            &Data::S32(vec![12, 13, 14, 0, 1, 2, 12, 13, 14, 0, 1, 2])
        );
    }

    #[test]
    fn gather_with_batching_dims() {
        // Per-batch take: operand [2, 4], indices [2, 1]: out[b] = operand[b, idx[b]].
        let x = arange(vec![2, 4]);
        let idx = Array::new(vec![2, 1], Data::S32(vec![3, 1])).unwrap();
        let dn = GatherDims {
            offset_dims: vec![],
            collapsed_slice_dims: vec![1],
            start_index_map: vec![1],
            index_vector_dim: 1,
            operand_batching_dims: vec![0],
            start_indices_batching_dims: vec![0],
        };
        let g = gather(&x, &idx, &dn, &[1, 1]).unwrap();
        assert_eq!(g.data(), &Data::S32(vec![3, 5]));
    }

    #[test]
    fn scatter_add_and_skip() {
        let x = Array::new(vec![4], Data::S32(vec![0; 4])).unwrap();
        let idx = Array::new(vec![3, 1], Data::S32(vec![1, 1, 7])).unwrap();
        let upd = Array::new(vec![3], Data::S32(vec![5, 6, 100])).unwrap();
        let dn = ScatterDims {
            update_window_dims: vec![],
            inserted_window_dims: vec![0],
            scatter_dims_to_operand_dims: vec![0],
            index_vector_dim: 1,
            ..ScatterDims::default()
        };
        let r = scatter(&[&x], &idx, &[&upd], &dn, Reducer::Builtin(BinaryOp::Add)).unwrap();
        assert_eq!(r[0].data(), &Data::S32(vec![0, 11, 0, 0]));
        let r = scatter(&[&x], &idx, &[&upd], &dn, Reducer::Replace).unwrap();
        assert_eq!(r[0].data(), &Data::S32(vec![0, 6, 0, 0]));
    }
}
