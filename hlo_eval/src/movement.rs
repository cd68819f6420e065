//! Data-movement kernels: broadcast, reshape, transpose, slice, concatenate, pad, reverse, iota,
//! dynamic-slice and dynamic-update-slice.
//!
//! Most of them are affine maps from output to operand positions, evaluated by one helper
//! (`affine_take`).
use hlo::{element_count, next_index, strides, Array, DType, Data};

use super::{invalid, EvalError};

/// Checks that `d` is a dimension number of a rank-`rank` array and returns it as `usize`.
pub(crate) fn dim_index(op: &str, d: i64, rank: usize) -> Result<usize, EvalError> {
    usize::try_from(d)
        .ok()
        .filter(|d| *d < rank)
        .ok_or_else(|| invalid(op, format!("dimension {d} out of range for rank {rank}")))
}

/// The largest array the evaluator will materialise, in elements: the pipeline's one limit,
/// [`hlo::MAX_ELEMENTS`].
pub const MAX_ELEMENTS: usize = hlo::MAX_ELEMENTS as usize;

/// Converts signed sizes to `usize`, rejecting negatives and arrays over [`MAX_ELEMENTS`].
pub(crate) fn sizes(op: &str, dims: &[i64]) -> Result<Vec<usize>, EvalError> {
    let out = dims
        .iter()
        .map(|d| {
            usize::try_from(*d).map_err(|_| invalid(op, format!("negative dimension size {d}")))
        })
        .collect::<Result<Vec<usize>, EvalError>>()?;
    checked_count(op, &out)?;
    Ok(out)
}

/// The element count of `dims`, or an error when it exceeds [`MAX_ELEMENTS`].
pub(crate) fn checked_count(op: &str, dims: &[usize]) -> Result<usize, EvalError> {
    let n = element_count(dims);
    if n > MAX_ELEMENTS {
        return Err(invalid(
            op,
            format!("{dims:?} has more than {MAX_ELEMENTS} elements"),
        ));
    }
    Ok(n)
}

/// Output element `o` (multi-index `idx`) takes operand element `base + Σ idx[d] * coef[d]`.
pub(crate) fn affine_take(
    op: &str,
    x: &Array,
    out_dims: Vec<usize>,
    base: i64,
    coef: &[i64],
) -> Result<Array, EvalError> {
    let n = element_count(&out_dims);
    let mut positions = Vec::with_capacity(n);
    if n > 0 {
        let mut idx = vec![0usize; out_dims.len()];
        loop {
            let mut p = base;
            for (i, c) in idx.iter().zip(coef) {
                p += *i as i64 * c;
            }
            positions.push(
                usize::try_from(p).map_err(|_| invalid(op, "operand position out of range"))?,
            );
            if !next_index(&mut idx, &out_dims) {
                break;
            }
        }
    }
    let data = x
        .data()
        .take(&positions)
        .ok_or_else(|| invalid(op, "operand position out of range"))?;
    Ok(Array::new(out_dims, data)?)
}

fn istrides(dims: &[usize]) -> Vec<i64> {
    strides(dims).into_iter().map(|s| s as i64).collect()
}

/// `broadcast`: operand dimension `i` becomes output dimension `dimensions[i]`.
pub fn broadcast(x: &Array, out_dims: &[i64], dimensions: &[i64]) -> Result<Array, EvalError> {
    let out = sizes("broadcast", out_dims)?;
    if dimensions.len() != x.rank() {
        return Err(invalid(
            "broadcast",
            format!(
                "{} dimensions for an operand of rank {}",
                dimensions.len(),
                x.rank()
            ),
        ));
    }
    let src = istrides(x.dims());
    let mut coef = vec![0i64; out.len()];
    for (i, &d) in dimensions.iter().enumerate() {
        let d = dim_index("broadcast", d, out.len())?;
        let size = x.dims().get(i).copied().unwrap_or(0);
        if out[d] != size {
            return Err(invalid(
                "broadcast",
                format!(
                    "operand dimension {i} has size {size}, output dimension {d} has {}",
                    out[d]
                ),
            ));
        }
        coef[d] = src[i];
    }
    affine_take("broadcast", x, out, 0, &coef)
}

/// `reshape` (row-major, no data movement).
pub fn reshape(x: &Array, out_dims: &[i64]) -> Result<Array, EvalError> {
    let out = sizes("reshape", out_dims)?;
    if element_count(&out) != x.len() {
        return Err(invalid(
            "reshape",
            format!("{} to {out:?} changes the element count", x.shape_string()),
        ));
    }
    Ok(x.reshape(out)?)
}

/// `transpose`: output dimension `i` is operand dimension `permutation[i]`.
pub fn transpose(x: &Array, permutation: &[i64]) -> Result<Array, EvalError> {
    let rank = x.rank();
    if permutation.len() != rank {
        return Err(invalid("transpose", "permutation length differs from rank"));
    }
    let mut seen = vec![false; rank];
    let src = istrides(x.dims());
    let mut out = Vec::with_capacity(rank);
    let mut coef = Vec::with_capacity(rank);
    for &p in permutation {
        let p = dim_index("transpose", p, rank)?;
        if std::mem::replace(&mut seen[p], true) {
            return Err(invalid("transpose", "permutation repeats a dimension"));
        }
        out.push(x.dims()[p]);
        coef.push(src[p]);
    }
    affine_take("transpose", x, out, 0, &coef)
}

/// `slice` with `(start, limit, stride)` per dimension.
pub fn slice(x: &Array, spec: &[(i64, i64, i64)]) -> Result<Array, EvalError> {
    if spec.len() != x.rank() {
        return Err(invalid("slice", "slice rank differs from operand rank"));
    }
    let src = istrides(x.dims());
    let mut out = Vec::with_capacity(spec.len());
    let mut coef = Vec::with_capacity(spec.len());
    let mut base = 0i64;
    for (d, &(start, limit, stride)) in spec.iter().enumerate() {
        let size = x.dims()[d] as i64;
        if start < 0 || limit < start || limit > size || stride < 1 {
            return Err(invalid(
                "slice",
                format!("[{start}:{limit}:{stride}] invalid for dimension {d} of size {size}"),
            ));
        }
        out.push(((limit - start + stride - 1) / stride) as usize);
        coef.push(stride * src[d]);
        base += start * src[d];
    }
    affine_take("slice", x, out, base, &coef)
}

/// `reverse` along `dimensions`.
pub fn reverse(x: &Array, dimensions: &[i64]) -> Result<Array, EvalError> {
    let mut coef = istrides(x.dims());
    let mut base = 0i64;
    let mut seen = vec![false; x.rank()];
    for &d in dimensions {
        let d = dim_index("reverse", d, x.rank())?;
        if std::mem::replace(&mut seen[d], true) {
            continue;
        }
        base += (x.dims()[d] as i64 - 1).max(0) * coef[d];
        coef[d] = -coef[d];
    }
    affine_take("reverse", x, x.dims().to_vec(), base, &coef)
}

/// `concatenate` along `dimension`.
pub fn concatenate(parts: &[&Array], dimension: i64) -> Result<Array, EvalError> {
    let first = parts
        .first()
        .ok_or_else(|| invalid("concatenate", "no operands"))?;
    let d = dim_index("concatenate", dimension, first.rank())?;
    let mut out = first.dims().to_vec();
    out[d] = 0;
    for p in parts {
        let same = p.rank() == first.rank()
            && p.dtype() == first.dtype()
            && p.dims()
                .iter()
                .zip(first.dims())
                .enumerate()
                .all(|(i, (a, b))| i == d || a == b);
        if !same {
            return Err(invalid(
                "concatenate",
                format!("{} does not fit {}", p.shape_string(), first.shape_string()),
            ));
        }
        out[d] += p.dims()[d];
    }
    let outer: usize = first.dims()[..d].iter().product();
    let inner: usize = first.dims()[d + 1..].iter().product();
    // Positions into the concatenation of all operand data.
    let mut offsets = Vec::with_capacity(parts.len());
    let mut off = 0;
    for p in parts {
        offsets.push(off);
        off += p.len();
    }
    let mut positions = Vec::with_capacity(element_count(&out));
    for o in 0..outer {
        for (p, start) in parts.iter().zip(&offsets) {
            let chunk = p.dims()[d] * inner;
            positions.extend((0..chunk).map(|k| start + o * chunk + k));
        }
    }
    let all: Vec<&Data> = parts.iter().map(|p| p.data()).collect();
    let joined =
        Data::concat(&all).ok_or_else(|| invalid("concatenate", "operand types differ"))?;
    let data = joined
        .take(&positions)
        .ok_or_else(|| invalid("concatenate", "position out of range"))?;
    Ok(Array::new(out, data)?)
}

/// `pad` with `(low, high, interior)` per dimension; low/high may be negative.
pub fn pad(x: &Array, value: &Array, config: &[(i64, i64, i64)]) -> Result<Array, EvalError> {
    if config.len() != x.rank() {
        return Err(invalid("pad", "padding rank differs from operand rank"));
    }
    if value.rank() != 0 || value.dtype() != x.dtype() {
        return Err(invalid(
            "pad",
            format!("padding value must be a {} scalar", x.dtype()),
        ));
    }
    let mut out = Vec::with_capacity(x.rank());
    for (d, &(lo, hi, interior)) in config.iter().enumerate() {
        let n = x.dims()[d] as i64;
        if interior < 0 {
            return Err(invalid("pad", "negative interior padding"));
        }
        let size = (n - 1)
            .max(0)
            .checked_mul(interior)
            .and_then(|x| x.checked_add(n))
            .and_then(|x| x.checked_add(lo))
            .and_then(|x| x.checked_add(hi))
            .ok_or_else(|| invalid("pad", "padding overflows"))?;
        if size < 0 {
            return Err(invalid(
                "pad",
                format!("dimension {d} would have negative size {size}"),
            ));
        }
        out.push(size as usize);
    }
    checked_count("pad", &out)?;
    let src = strides(x.dims());
    let n = element_count(&out);
    let mut positions = Vec::with_capacity(n);
    if n > 0 {
        let mut idx = vec![0usize; out.len()];
        loop {
            let mut p = Some(0usize);
            for (d, &o) in idx.iter().enumerate() {
                let (lo, _, interior) = config[d];
                let q = o as i64 - lo;
                let step = interior + 1;
                if q < 0 || q % step != 0 || q / step >= x.dims()[d] as i64 {
                    p = None;
                    break;
                }
                p = p.map(|p| p + (q / step) as usize * src[d]);
            }
            positions.push(p);
            if !next_index(&mut idx, &out) {
                break;
            }
        }
    }
    let data = x
        .data()
        .take_or(&positions, value.data())
        .ok_or_else(|| invalid("pad", "position out of range"))?;
    Ok(Array::new(out, data)?)
}

/// `iota`: values count along `dimension`.
pub fn iota(dtype: DType, dims: &[i64], dimension: i64) -> Result<Array, EvalError> {
    let out = sizes("iota", dims)?;
    let d = dim_index("iota", dimension, out.len())?;
    let n = element_count(&out);
    let s = strides(&out);
    let values: Vec<i64> = (0..n).map(|i| ((i / s[d]) % out[d]) as i64).collect();
    Ok(Array::new(out, Data::from_wide_s(dtype, values))?)
}

/// Reads scalar start indices and clamps each to `[0, dim - size]`, as XLA does.
fn clamped_starts(
    op: &str,
    x: &Array,
    starts: &[&Array],
    sizes: &[usize],
) -> Result<Vec<usize>, EvalError> {
    if starts.len() != x.rank() || sizes.len() != x.rank() {
        return Err(invalid(
            op,
            format!(
                "{} start indices for an operand of rank {}",
                starts.len(),
                x.rank()
            ),
        ));
    }
    let mut out = Vec::with_capacity(starts.len());
    for (d, s) in starts.iter().enumerate() {
        if s.rank() != 0 || !s.dtype().is_int() {
            return Err(invalid(op, "start indices must be integer scalars"));
        }
        let v = s.data().get_index(0).unwrap_or(0);
        let dim = x.dims()[d];
        if sizes[d] > dim {
            return Err(invalid(
                op,
                format!("size {} exceeds dimension {d} of size {dim}", sizes[d]),
            ));
        }
        let max = (dim - sizes[d]) as i64;
        out.push(v.clamp(0, max) as usize);
    }
    Ok(out)
}

/// `dynamic-slice` with scalar start indices (clamped so the slice fits).
pub fn dynamic_slice(
    x: &Array,
    starts: &[&Array],
    slice_sizes: &[i64],
) -> Result<Array, EvalError> {
    let size = sizes("dynamic-slice", slice_sizes)?;
    let st = clamped_starts("dynamic-slice", x, starts, &size)?;
    let spec: Vec<(i64, i64, i64)> = st
        .iter()
        .zip(&size)
        .map(|(s, n)| (*s as i64, (*s + *n) as i64, 1))
        .collect();
    slice(x, &spec)
}

/// `dynamic-update-slice` with scalar start indices (clamped so the update fits).
pub fn dynamic_update_slice(
    x: &Array,
    update: &Array,
    starts: &[&Array],
) -> Result<Array, EvalError> {
    if update.dtype() != x.dtype() || update.rank() != x.rank() {
        return Err(invalid(
            "dynamic-update-slice",
            format!(
                "update {} does not fit {}",
                update.shape_string(),
                x.shape_string()
            ),
        ));
    }
    let st = clamped_starts("dynamic-update-slice", x, starts, update.dims())?;
    let s = strides(x.dims());
    let mut positions = Vec::with_capacity(update.len());
    if !update.is_empty() {
        let mut idx = vec![0usize; update.rank()];
        loop {
            positions.push(
                idx.iter()
                    .zip(&st)
                    .zip(&s)
                    .map(|((i, o), s)| (i + o) * s)
                    .sum(),
            );
            if !next_index(&mut idx, update.dims()) {
                break;
            }
        }
    }
    let (dims, mut data) = x.clone().into_parts();
    data.put(&positions, update.data())
        .ok_or_else(|| invalid("dynamic-update-slice", "position out of range"))?;
    Ok(Array::new(dims, data)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arange(dims: Vec<usize>) -> Array {
        let n = element_count(&dims) as i32;
        Array::new(dims, Data::S32((0..n).collect())).unwrap()
    }

    fn s32(a: &Array) -> Vec<i32> {
        match a.data() {
            Data::S32(v) => v.clone(),
            _ => panic!("not s32"),
        }
    }

    #[test]
    fn broadcast_transpose_slice_reverse() {
        let x = arange(vec![3]);
        let b = broadcast(&x, &[2, 3], &[1]).unwrap();
        assert_eq!(s32(&b), vec![0, 1, 2, 0, 1, 2]);
        let t = transpose(&arange(vec![2, 3]), &[1, 0]).unwrap();
        assert_eq!(t.dims(), &[3, 2]);
        assert_eq!(s32(&t), vec![0, 3, 1, 4, 2, 5]);
        let s = slice(&arange(vec![4, 4]), &[(1, 4, 2), (0, 4, 3)]).unwrap();
        assert_eq!(s32(&s), vec![4, 7, 12, 15]);
        let r = reverse(&arange(vec![2, 3]), &[1]).unwrap();
        assert_eq!(s32(&r), vec![2, 1, 0, 5, 4, 3]);
        assert!(broadcast(&x, &[2, 4], &[1]).is_err());
        assert!(transpose(&t, &[0, 0]).is_err());
    }

    #[test]
    fn concatenate_dims() {
        let a = arange(vec![2, 2]);
        let b = arange(vec![2, 1]);
        let c = concatenate(&[&a, &b], 1).unwrap();
        assert_eq!(c.dims(), &[2, 3]);
        assert_eq!(s32(&c), vec![0, 1, 0, 2, 3, 1]);
        assert!(concatenate(&[&a, &b], 0).is_err());
    }

    #[test]
    fn pad_interior_and_negative() {
        let x = arange(vec![3]);
        let v = Array::new(vec![], Data::S32(vec![-1])).unwrap();
        let p = pad(&x, &v, &[(1, 2, 1)]).unwrap();
        assert_eq!(s32(&p), vec![-1, 0, -1, 1, -1, 2, -1, -1]);
        // Negative low padding removes elements (after interior padding).
        let p = pad(&x, &v, &[(-2, 0, 1)]).unwrap();
        assert_eq!(s32(&p), vec![1, -1, 2]);
        let p = pad(&arange(vec![2, 2]), &v, &[(0, -1, 0), (1, 0, 0)]).unwrap();
        assert_eq!(s32(&p), vec![-1, 0, 1]);
        assert!(pad(&x, &v, &[(-5, 0, 0)]).is_err());
    }

    #[test]
    fn dynamic_slice_clamps() {
        let x = arange(vec![5, 2]);
        let i = |v: i32| Array::new(vec![], Data::S32(vec![v])).unwrap();
        let (big, neg, zero) = (i(4), i(-3), i(0));
        let s = dynamic_slice(&x, &[&big, &zero], &[2, 2]).unwrap();
        assert_eq!(s32(&s), vec![6, 7, 8, 9]);
        let s = dynamic_slice(&x, &[&neg, &zero], &[2, 1]).unwrap();
        assert_eq!(s32(&s), vec![0, 2]);
        let u = Array::new(vec![1, 2], Data::S32(vec![-1, -2])).unwrap();
        let y = dynamic_update_slice(&x, &u, &[&big, &big]).unwrap();
        assert_eq!(s32(&y), vec![0, 1, 2, 3, 4, 5, 6, 7, -1, -2]);
        assert!(dynamic_slice(&x, &[&big], &[2]).is_err());
        // A huge unsigned start clamps high, not low.
        let huge = Array::new(vec![], Data::U64(vec![u64::MAX])).unwrap();
        let s = dynamic_slice(&x, &[&huge, &zero], &[1, 2]).unwrap();
        assert_eq!(s32(&s), vec![8, 9]);
    }

    #[test]
    fn iota_along_dim() {
        let a = iota(DType::F32, &[2, 3], 0).unwrap();
        assert_eq!(a.data().to_f64_vec(), vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    }
}
