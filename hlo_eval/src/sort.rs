//! `sort`: multi-operand, along one dimension, with a comparator callback; always stable.
//!
//! A bottom-up merge sort that never assumes the comparator is a consistent order (an
//! inconsistent comparator gives some permutation, never a panic), and stops at the first
//! comparator error.
use hlo::{next_index, strides, Array};

use super::movement::dim_index;
use super::reduce::element;
use super::{invalid, EvalError};

/// The comparator: arguments `[lhs0, rhs0, lhs1, rhs1, ...]` (scalars); true when lhs < rhs.
pub type Less<'a> = dyn FnMut(&[Array]) -> Result<bool, EvalError> + 'a;

/// Stable merge sort of `0..n` with a fallible "less than".
fn merge_sort(
    n: usize,
    less: &mut dyn FnMut(usize, usize) -> Result<bool, EvalError>,
) -> Result<Vec<usize>, EvalError> {
    let mut a: Vec<usize> = (0..n).collect();
    let mut b = vec![0usize; n];
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j, mut k) = (lo, mid, lo);
            while i < mid && j < hi {
                // Take from the right only when strictly less: keeps equal elements in order.
                if less(a[j], a[i])? {
                    b[k] = a[j];
                    j += 1;
                } else {
                    b[k] = a[i];
                    i += 1;
                }
                k += 1;
            }
            b[k..k + (mid - i)].copy_from_slice(&a[i..mid]);
            k += mid - i;
            b[k..k + (hi - j)].copy_from_slice(&a[j..hi]);
            lo = hi;
        }
        std::mem::swap(&mut a, &mut b);
        width *= 2;
    }
    Ok(a)
}

/// Sorts every operand along `dimension` by the permutation the comparator defines.
pub fn sort(
    operands: &[&Array],
    dimension: i64,
    less: &mut Less<'_>,
) -> Result<Vec<Array>, EvalError> {
    const OP: &str = "sort";
    let first = operands.first().ok_or_else(|| invalid(OP, "no operands"))?;
    if operands.iter().any(|o| o.dims() != first.dims()) {
        return Err(invalid(OP, "operands have different dimensions"));
    }
    let dims = first.dims().to_vec();
    let d = dim_index(OP, dimension, dims.len())?;
    let s = strides(&dims);
    let len = dims[d];
    let mut perm: Vec<usize> = (0..first.len()).collect();
    let mut outer_dims = dims.clone();
    outer_dims[d] = 1;
    if first.is_empty() {
        return Ok(operands.iter().map(|o| (*o).clone()).collect());
    }
    let mut idx = vec![0usize; dims.len()];
    let mut args = Vec::with_capacity(2 * operands.len());
    loop {
        let base: usize = idx.iter().zip(&s).map(|(i, s)| i * s).sum();
        let pos = |k: usize| base + k * s[d];
        let order = merge_sort(len, &mut |x, y| {
            args.clear();
            for o in operands {
                args.push(element(OP, o, pos(x))?);
                args.push(element(OP, o, pos(y))?);
            }
            less(&args)
        })?;
        for (k, src) in order.into_iter().enumerate() {
            perm[pos(k)] = pos(src);
        }
        if !next_index(&mut idx, &outer_dims) {
            break;
        }
    }
    operands
        .iter()
        .map(|o| {
            let data = o
                .data()
                .take(&perm)
                .ok_or_else(|| invalid(OP, "position out of range"))?;
            Ok(Array::new(dims.clone(), data)?)
        })
        .collect()
}

/// An element's bits mapped so that unsigned order is the type's total order (floats: XLA's
/// `TOTALORDER`, -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN; signed integers offset by
/// the sign bit).
fn total_order_key(bits: u64, dtype: hlo::DType) -> u64 {
    let w = dtype.bit_width().clamp(1, 64);
    let sign = 1u64 << (w - 1);
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let bits = bits & mask;
    if dtype.is_float() {
        if bits & sign != 0 {
            !bits & mask
        } else {
            bits | sign
        }
    } else if dtype.is_signed_int() {
        bits ^ sign
    } else {
        bits
    }
}

/// `topk(x), k=K, largest=L`: along the last dimension, the `K` largest (or smallest) elements
/// in order and their `s32` positions; equal elements keep their order (lower index first), as
/// XLA's sort-based top-k does.
pub fn top_k(x: &Array, k: usize, largest: bool) -> Result<(Array, Array), EvalError> {
    // Complex numbers have no order (and a c128 element is two bit patterns).
    if x.dtype().is_complex() {
        return Err(invalid(
            "topk",
            format!("not defined for element type {}", x.dtype()),
        ));
    }
    let dims = x.dims().to_vec();
    let Some((&n, outer)) = dims.split_last() else {
        return Err(invalid("topk", "needs an operand of rank 1 or more"));
    };
    if k > n {
        return Err(invalid(
            "topk",
            format!("k={k} exceeds the last dimension ({n})"),
        ));
    }
    if n > i32::MAX as usize {
        return Err(invalid("topk", "the last dimension exceeds s32 indices"));
    }
    let dtype = x.dtype();
    let bits = x.data().to_bits();
    let rows: usize = outer.iter().product();
    let mut vals = Vec::with_capacity(rows * k);
    let mut idxs = Vec::with_capacity(rows * k);
    let mut order: Vec<usize> = Vec::with_capacity(n);
    for r in 0..rows {
        let row = bits
            .get(r * n..(r + 1) * n)
            .ok_or_else(|| invalid("topk", "operand data is shorter than its shape"))?;
        order.clear();
        order.extend(0..n);
        // `sort_by_key` is stable: ties stay in index order.
        if largest {
            order.sort_by_key(|&i| std::cmp::Reverse(total_order_key(row[i], dtype)));
        } else {
            order.sort_by_key(|&i| total_order_key(row[i], dtype));
        }
        for &i in order.iter().take(k) {
            vals.push(row[i]);
            idxs.push(i as i32);
        }
    }
    let mut odims = outer.to_vec();
    odims.push(k);
    let values = Array::new(odims.clone(), hlo::Data::from_bits(dtype, &vals))?;
    let indices = Array::new(odims, hlo::Data::S32(idxs))?;
    Ok((values, indices))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hlo::Data;

    #[test]
    fn sort_rows_with_payload_stably() {
        let keys = Array::new(
            vec![2, 4],
            Data::F32(vec![3.0, 1.0, 2.0, 1.0, 0.0, -1.0, 5.0, -1.0]),
        )
        .unwrap();
        let vals = Array::new(vec![2, 4], Data::S32(vec![0, 1, 2, 3, 4, 5, 6, 7])).unwrap();
        let mut less = |a: &[Array]| -> Result<bool, EvalError> {
            Ok(a[0].data().get_f64(0).unwrap_or(0.0) < a[1].data().get_f64(0).unwrap_or(0.0))
        };
        let out = sort(&[&keys, &vals], 1, &mut less).unwrap();
        assert_eq!(
            out[0].data().to_f64_vec(),
            vec![1.0, 1.0, 2.0, 3.0, -1.0, -1.0, 0.0, 5.0]
        );
        assert_eq!(out[1].data(), &Data::S32(vec![1, 3, 2, 0, 5, 7, 4, 6]));
        // Along dimension 0.
        let out = sort(&[&keys], 0, &mut less).unwrap();
        assert_eq!(
            out[0].data().to_f64_vec(),
            vec![0.0, -1.0, 2.0, -1.0, 3.0, 1.0, 5.0, 1.0]
        );
    }

    #[test]
    fn inconsistent_comparator_does_not_panic() {
        let keys = Array::new(vec![9], Data::S32((0..9).collect())).unwrap();
        let mut always = |_: &[Array]| -> Result<bool, EvalError> { Ok(true) };
        let out = sort(&[&keys], 0, &mut always).unwrap();
        assert_eq!(out[0].len(), 9);
        let mut failing = |_: &[Array]| -> Result<bool, EvalError> { Err(invalid("sort", "boom")) };
        assert!(sort(&[&keys], 0, &mut failing).is_err());
    }
    #[test]
    fn top_k_keeps_ties_in_index_order_and_orders_nan_as_total_order() {
        let x = Array::new(
            vec![2, 4],
            Data::F32(vec![
                1.0,
                3.0,
                3.0,
                -0.0,
                f32::NAN,
                0.0,
                -f32::INFINITY,
                -0.0,
            ]),
        )
        .unwrap();
        let (v, i) = top_k(&x, 3, true).unwrap();
        assert_eq!(i.data(), &Data::S32(vec![1, 2, 0, 0, 1, 3]));
        assert_eq!(v.dims(), &[2, 3]);
        let (_, i) = top_k(&x, 2, false).unwrap();
        assert_eq!(i.data(), &Data::S32(vec![3, 0, 2, 3]));
    }

    #[test]
    fn top_k_of_signed_integers() {
        let x = Array::new(vec![5], Data::S32(vec![-5, 7, i32::MIN, 7, 0])).unwrap();
        let (v, i) = top_k(&x, 3, true).unwrap();
        assert_eq!(v.data(), &Data::S32(vec![7, 7, 0]));
        assert_eq!(i.data(), &Data::S32(vec![1, 3, 4]));
    }

    #[test]
    fn top_k_larger_than_the_row_is_an_error() {
        let x = Array::new(vec![2], Data::F32(vec![1.0, 2.0])).unwrap();
        assert_eq!(
            top_k(&x, 3, true).unwrap_err().to_string(),
            "topk: k=3 exceeds the last dimension (2)"
        );
    }
}
