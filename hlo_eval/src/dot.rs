//! `dot` with general dimension numbers (batch and contracting dimensions).
//!
//! Output dimensions: batch dimensions (in `lhs_batch` order), then the free lhs dimensions, then
//! the free rhs dimensions, each in ascending order. Accumulation: `f32`/`f64` results in `f64`;
//! `f16`/`bf16` results in `f32`, rounded once at the end; integers in wrapping 64-bit arithmetic
//! truncated to the result width; `pred` as logical or-of-ands.
use hlo::{Array, DType, Data};

use super::movement::{dim_index, transpose};
use super::{invalid, EvalError};

/// Dimension numbers of a dot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DotDims {
    /// `lhs_batch_dims`
    pub lhs_batch: Vec<i64>,
    /// `rhs_batch_dims`
    pub rhs_batch: Vec<i64>,
    /// `lhs_contracting_dims`
    pub lhs_contracting: Vec<i64>,
    /// `rhs_contracting_dims`
    pub rhs_contracting: Vec<i64>,
}

/// Permutes `x` to `[batch..., free..., contracting...]` (lhs) or `[batch..., contracting...,
/// free...]` (rhs) and returns it with the sizes `(batch, free, contracting)` and free dims.
fn canonical(
    x: &Array,
    batch: &[usize],
    contracting: &[usize],
    lhs: bool,
) -> Result<(Array, usize, usize, usize, Vec<usize>), EvalError> {
    let free: Vec<usize> = (0..x.rank())
        .filter(|d| !batch.contains(d) && !contracting.contains(d))
        .collect();
    let mut perm: Vec<i64> = batch.iter().map(|d| *d as i64).collect();
    if lhs {
        perm.extend(free.iter().map(|d| *d as i64));
        perm.extend(contracting.iter().map(|d| *d as i64));
    } else {
        perm.extend(contracting.iter().map(|d| *d as i64));
        perm.extend(free.iter().map(|d| *d as i64));
    }
    let t = transpose(x, &perm)?;
    let size = |ds: &[usize]| ds.iter().map(|d| x.dims()[*d]).product::<usize>();
    let free_dims: Vec<usize> = free.iter().map(|d| x.dims()[*d]).collect();
    Ok((t, size(batch), size(&free), size(contracting), free_dims))
}

fn check_dims(which: &str, dims: &[i64], rank: usize) -> Result<Vec<usize>, EvalError> {
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let d = dim_index("dot", d, rank)?;
        if out.contains(&d) {
            return Err(invalid("dot", format!("{which} repeats dimension {d}")));
        }
        out.push(d);
    }
    Ok(out)
}

/// `dot(lhs, rhs)` producing element type `out`.
pub fn dot(lhs: &Array, rhs: &Array, dims: &DotDims, out: DType) -> Result<Array, EvalError> {
    if [lhs.dtype(), rhs.dtype(), out]
        .iter()
        .any(|t| t.is_complex())
    {
        return complex_dot(lhs, rhs, dims, out);
    }
    let lb = check_dims("lhs_batch_dims", &dims.lhs_batch, lhs.rank())?;
    let rb = check_dims("rhs_batch_dims", &dims.rhs_batch, rhs.rank())?;
    let lc = check_dims("lhs_contracting_dims", &dims.lhs_contracting, lhs.rank())?;
    let rc = check_dims("rhs_contracting_dims", &dims.rhs_contracting, rhs.rank())?;
    if lb.len() != rb.len() || lc.len() != rc.len() {
        return Err(invalid(
            "dot",
            "batch or contracting dimension counts differ",
        ));
    }
    if lb.iter().any(|d| lc.contains(d)) || rb.iter().any(|d| rc.contains(d)) {
        return Err(invalid("dot", "a dimension is both batch and contracting"));
    }
    for (a, b) in lb.iter().zip(&rb).chain(lc.iter().zip(&rc)) {
        if lhs.dims()[*a] != rhs.dims()[*b] {
            return Err(invalid(
                "dot",
                format!(
                    "lhs dimension {a} (size {}) does not match rhs dimension {b} (size {})",
                    lhs.dims()[*a],
                    rhs.dims()[*b]
                ),
            ));
        }
    }
    let (l, nb, m, k, lfree) = canonical(lhs, &lb, &lc, true)?;
    let (r, _, n, _, rfree) = canonical(rhs, &rb, &rc, false)?;
    let mut out_dims: Vec<usize> = lb.iter().map(|d| lhs.dims()[*d]).collect();
    out_dims.extend(lfree);
    out_dims.extend(rfree);
    let total = super::movement::checked_count("dot", &out_dims)?;
    let data = if out.is_float() || lhs.dtype().is_float() {
        let a = l.data().to_f64_vec();
        let b = r.data().to_f64_vec();
        let narrow = matches!(
            out,
            DType::F16 | DType::BF16 | DType::F8E4M3FN | DType::F8E5M2
        );
        let mut acc = vec![0f64; total];
        let mut row32 = vec![0f32; n];
        for bi in 0..nb {
            for i in 0..m {
                let o = (bi * m + i) * n;
                let orow = &mut acc[o..o + n];
                row32.iter_mut().for_each(|x| *x = 0.0);
                for kk in 0..k {
                    let av = a[(bi * m + i) * k + kk];
                    let brow = &b[(bi * k + kk) * n..(bi * k + kk + 1) * n];
                    if narrow {
                        let av = av as f32;
                        for (x, bv) in row32.iter_mut().zip(brow) {
                            *x += av * (*bv as f32);
                        }
                    } else {
                        for (x, bv) in orow.iter_mut().zip(brow) {
                            *x += av * bv;
                        }
                    }
                }
                if narrow {
                    for (x, v) in orow.iter_mut().zip(&row32) {
                        *x = f64::from(*v);
                    }
                }
            }
        }
        Data::from_wide_f(out, acc)
    } else if out == DType::Pred {
        let a = l.data().to_f64_vec();
        let b = r.data().to_f64_vec();
        let mut acc = vec![false; total];
        for bi in 0..nb {
            for i in 0..m {
                for j in 0..n {
                    acc[(bi * m + i) * n + j] = (0..k).any(|kk| {
                        a[(bi * m + i) * k + kk] != 0.0 && b[(bi * k + kk) * n + j] != 0.0
                    });
                }
            }
        }
        Data::Pred(acc)
    } else {
        let a: Vec<i64> = (0..l.len())
            .map(|i| l.data().get_i64(i).unwrap_or(0))
            .collect();
        let b: Vec<i64> = (0..r.len())
            .map(|i| r.data().get_i64(i).unwrap_or(0))
            .collect();
        let mut acc = vec![0i64; total];
        for bi in 0..nb {
            for i in 0..m {
                for kk in 0..k {
                    let av = a[(bi * m + i) * k + kk];
                    for j in 0..n {
                        let x = &mut acc[(bi * m + i) * n + j];
                        *x = x.wrapping_add(av.wrapping_mul(b[(bi * k + kk) * n + j]));
                    }
                }
            }
        }
        Data::from_wide_s(out, acc)
    };
    Ok(Array::new(out_dims, data)?)
}

/// A complex dot as four real ones on the parts, `(ar + i ai)(br + i bi) = (ar br - ai bi) +
/// i (ar bi + ai br)`, each rounded to the part type: what the compiler's `complex-dot` pass
/// makes of it (gemm thunks are real), so the two compute alike. Operands and result must all
/// be complex.
fn complex_dot(lhs: &Array, rhs: &Array, dims: &DotDims, out: DType) -> Result<Array, EvalError> {
    if !(lhs.dtype().is_complex() && rhs.dtype().is_complex() && out.is_complex()) {
        return Err(invalid(
            "dot",
            format!(
                "mixes complex and real element types ({}, {} -> {out})",
                lhs.dtype(),
                rhs.dtype()
            ),
        ));
    }
    use super::complex_ops::{make, part};
    let part_type = out.component();
    let (ar, ai) = (part(lhs, false)?, part(lhs, true)?);
    let (br, bi) = (part(rhs, false)?, part(rhs, true)?);
    let real = |a: &Array, b: &Array| dot(a, b, dims, part_type);
    use super::elementwise::{binary, BinaryOp};
    let re = binary(BinaryOp::Subtract, &real(&ar, &br)?, &real(&ai, &bi)?)?;
    let im = binary(BinaryOp::Add, &real(&ar, &bi)?, &real(&ai, &br)?)?;
    make(&re, &im)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batched_dot_general() {
        // lhs [b=2, k=3, m=2], rhs [n=2, b=2, k=3]: contract k, batch b.
        let lhs = Array::new(
            vec![2, 3, 2],
            Data::F32((0..12).map(|x| x as f32).collect()),
        )
        .unwrap();
        let rhs = Array::new(
            vec![2, 2, 3],
            Data::F32((0..12).map(|x| x as f32).collect()),
        )
        .unwrap();
        let dims = DotDims {
            lhs_batch: vec![0],
            rhs_batch: vec![1],
            lhs_contracting: vec![1],
            rhs_contracting: vec![2],
        };
        let out = dot(&lhs, &rhs, &dims, DType::F32).unwrap();
        assert_eq!(out.dims(), &[2, 2, 2]);
        // Reference by definition.
        let l = |b: usize, k: usize, m: usize| (b * 6 + k * 2 + m) as f64;
        let r = |n: usize, b: usize, k: usize| (n * 6 + b * 3 + k) as f64;
        let mut want = vec![];
        for b in 0..2 {
            for m in 0..2 {
                for n in 0..2 {
                    want.push((0..3).map(|k| l(b, k, m) * r(n, b, k)).sum::<f64>());
                }
            }
        }
        assert_eq!(out.data().to_f64_vec(), want);
    }

    #[test]
    fn int_dot_wraps_and_errors() {
        let a = Array::new(vec![1, 2], Data::S8(vec![100, 100])).unwrap();
        let b = Array::new(vec![2, 1], Data::S8(vec![2, 1])).unwrap();
        let dims = DotDims {
            lhs_contracting: vec![1],
            rhs_contracting: vec![0],
            ..DotDims::default()
        };
        let out = dot(&a, &b, &dims, DType::S8).unwrap();
        assert_eq!(out.data(), &Data::S8(vec![300i32 as i8]));
        let bad = DotDims {
            lhs_contracting: vec![1],
            rhs_contracting: vec![1],
            ..DotDims::default()
        };
        assert!(dot(&a, &b, &bad, DType::S8).is_err());
        let oob = DotDims {
            lhs_contracting: vec![5],
            rhs_contracting: vec![0],
            ..DotDims::default()
        };
        assert!(dot(&a, &b, &oob, DType::S8).is_err());
    }
}
