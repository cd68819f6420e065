//! The JAX CUDA custom-call handlers, called through the registry on hand-built frames: against
//! JAX's back-compat data where the call's input is visible in it, LAPACK results worked out by
//! hand (or with scipy's LAPACK, numbers recorded here), and property checks where the answer is
//! unique only up to signs.
use std::collections::BTreeMap;

use proto::xla::PrimitiveType::{self, *};
use runtime::Registry;
use runtime::{ArrayShape, CallFrame};

use crate::ffi_data::*;

/// Calls `target` with `attrs`, `operands` (shape, bytes) and result shapes (zero-filled).
fn call(
    target: &str,
    attrs: &[(&str, &str)],
    operands: Vec<(ArrayShape, Vec<u8>)>,
    results: Vec<ArrayShape>,
) -> Result<Vec<Vec<u8>>, runtime::HandlerError> {
    let registry = Registry::builtin();
    let r = registry.resolve(target).expect("registered");
    let attributes: BTreeMap<String, String> = attrs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let (shapes, bytes): (Vec<_>, Vec<_>) = operands.into_iter().unzip();
    let operand_shapes: Vec<Option<ArrayShape>> = shapes.into_iter().map(Some).collect();
    let operands: Vec<Option<Vec<u8>>> = bytes.into_iter().map(Some).collect();
    let mut res: Vec<Option<Vec<u8>>> = results
        .iter()
        .map(|s| {
            Some(vec![
                0u8;
                s.elements().unwrap() as usize * width(s.ty().unwrap())
            ])
        })
        .collect();
    let result_shapes: Vec<Option<ArrayShape>> = results.into_iter().map(Some).collect();
    let mut frame = CallFrame {
        operands: &operands,
        results: &mut res,
        opaque: &[],
        attributes: &attributes,
        operand_shapes: &operand_shapes,
        result_shapes: &result_shapes,
    };
    (r.handler)(&mut frame)?;
    Ok(res.into_iter().map(Option::unwrap).collect())
}

fn width(t: PrimitiveType) -> usize {
    match t {
        F32 | S32 | U32 => 4,
        F64 | C64 => 8,
        C128 => 16,
        _ => unreachable!(),
    }
}

/// Encodes f64 components as `t` (complex: interleaved).
fn enc(t: PrimitiveType, v: &[f64]) -> Vec<u8> {
    match t {
        F32 | C64 => v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect(),
        _ => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

fn dec(t: PrimitiveType, b: &[u8]) -> Vec<f64> {
    match t {
        F32 | C64 => b
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        _ => b
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    }
}

fn ints(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn is_complex(t: PrimitiveType) -> bool {
    matches!(t, C64 | C128)
}

/// Row-major logical `[batch, rows, cols]` (components `k` per element) to column-major storage,
/// and back.
fn transpose_batch(
    v: &[f64],
    batch: usize,
    rows: usize,
    cols: usize,
    k: usize,
    to_cm: bool,
) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    for b in 0..batch {
        for i in 0..rows {
            for j in 0..cols {
                let rm = ((b * rows + i) * cols + j) * k;
                let cm = (b * rows * cols + i + j * rows) * k;
                let (src, dst) = if to_cm { (rm, cm) } else { (cm, rm) };
                out[dst..dst + k].copy_from_slice(&v[src..src + k]);
            }
        }
    }
    out
}

fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = want.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * scale,
            "{what}[{i}]: got {g}, want {w} (all: {got:?})"
        );
    }
}

fn tol(t: PrimitiveType) -> f64 {
    if matches!(t, F32 | C64) {
        1e-5
    } else {
        1e-12
    }
}

fn real_of(t: PrimitiveType) -> PrimitiveType {
    match t {
        C64 => F32,
        C128 => F64,
        t => t,
    }
}

// potrf

fn potrf_case(t: PrimitiveType, input: &[f64], want: &[f64]) {
    let k = if is_complex(t) { 2 } else { 1 };
    let a = transpose_batch(input, 1, 4, 4, k, true);
    let out = call(
        "cusolver_potrf_ffi",
        &[("lower", "true")],
        vec![(ArrayShape::column_major(t, &[4, 4]), enc(t, &a))],
        vec![
            ArrayShape::column_major(t, &[4, 4]),
            ArrayShape::row_major(S32, &[]),
        ],
    )
    .unwrap();
    assert_eq!(ints(&out[1]), [0]);
    let got = transpose_batch(&dec(t, &out[0]), 1, 4, 4, k, false);
    // JAX keeps the lower triangle; the handler leaves the input in the upper one.
    for i in 0..4 {
        for j in 0..4 {
            for c in 0..k {
                let x = (i * 4 + j) * k + c;
                let w = if j <= i { want[x] } else { input[x] };
                assert!(
                    (got[x] - w).abs() <= tol(t) * 20.0,
                    "{t:?} ({i},{j}): got {} want {w}",
                    got[x]
                );
            }
        }
    }
}

#[test]
fn potrf_matches_jax_back_compat_data() {
    potrf_case(F32, &POTRF_F32_IN, &POTRF_F32_OUT);
    potrf_case(F64, &POTRF_F64_IN, &POTRF_F64_OUT);
    potrf_case(C64, &POTRF_C64_IN, &POTRF_C64_OUT);
    potrf_case(C128, &POTRF_C128_IN, &POTRF_C128_OUT);
}

#[test]
fn potrf_upper_and_info_for_a_matrix_that_is_not_positive_definite() {
    // Batch of 2, upper: [[4, 2], [2, 3]] = UᵀU with U = [[2, 1], [0, √2]]; [[1, 2], [2, 1]]
    // fails at the second leading minor (info = 2).
    let a = [4.0, 2.0, 2.0, 3.0, 1.0, 2.0, 2.0, 1.0];
    let out = call(
        "cusolver_potrf_ffi",
        &[("lower", "false")],
        vec![(ArrayShape::column_major(F64, &[2, 2, 2]), enc(F64, &a))],
        vec![
            ArrayShape::column_major(F64, &[2, 2, 2]),
            ArrayShape::row_major(S32, &[2]),
        ],
    )
    .unwrap();
    assert_eq!(ints(&out[1]), [0, 2]);
    let got = dec(F64, &out[0]);
    // Column-major: (0,0), (1,0) untouched lower, (0,1), (1,1).
    close(&got[..4], &[2.0, 2.0, 1.0, 2f64.sqrt()], 1e-15, "factor");
    assert_eq!(got[4], 1.0);
}

// getrf and pivots

#[test]
fn getrf_matches_jax_back_compat_data() {
    // The data's input is iota(12) reshaped to 3x4; JAX subtracts 1 from the pivots.
    for t in [F32, F64, C128] {
        let k = if is_complex(t) { 2 } else { 1 };
        let logical: Vec<f64> = (0..12)
            .flat_map(|x| [x as f64, 0.0].into_iter().take(k))
            .collect();
        let a = transpose_batch(&logical, 1, 3, 4, k, true);
        let out = call(
            "cusolver_getrf_ffi",
            &[],
            vec![(ArrayShape::column_major(t, &[3, 4]), enc(t, &a))],
            vec![
                ArrayShape::column_major(t, &[3, 4]),
                ArrayShape::row_major(S32, &[3]),
                ArrayShape::row_major(S32, &[]),
            ],
        )
        .unwrap();
        let lu = transpose_batch(&dec(t, &out[0]), 1, 3, 4, k, false);
        let lu_re: Vec<f64> = lu.iter().step_by(k).copied().collect();
        close(&lu_re, &GETRF_F64_LU, tol(t), "lu");
        let piv: Vec<i32> = GETRF_F64_PIVOTS.iter().map(|p| p + 1).collect();
        assert_eq!(ints(&out[1]), piv);
        // iota(12) as 3x4 has rank 2: U[2,2] = 0 exactly, info = 3.
        assert_eq!(ints(&out[2]), [3], "{t:?}");
    }
}

#[test]
fn getrf_of_a_zero_matrix_records_the_first_zero_pivot() {
    let out = call(
        "cusolver_getrf_ffi",
        &[],
        vec![(ArrayShape::column_major(F32, &[2, 2]), enc(F32, &[0.0; 4]))],
        vec![
            ArrayShape::column_major(F32, &[2, 2]),
            ArrayShape::row_major(S32, &[2]),
            ArrayShape::row_major(S32, &[]),
        ],
    )
    .unwrap();
    assert_eq!(ints(&out[1]), [1, 2]);
    assert_eq!(ints(&out[2]), [1]);
}

#[test]
fn lu_pivots_to_permutation_matches_jax_back_compat_data() {
    // The data's input is iota(24) reshaped to [2, 3, 4] (0-based pivots), the permutation 8 long.
    let pivots: Vec<u8> = (0..24i32).flat_map(|x| x.to_le_bytes()).collect();
    let out = call(
        "cu_lu_pivots_to_permutation",
        &[],
        vec![(ArrayShape::row_major(S32, &[2, 3, 4]), pivots)],
        vec![ArrayShape::row_major(S32, &[2, 3, 8])],
    )
    .unwrap();
    assert_eq!(ints(&out[0]), PIVOTS_PERM);
    // The getrf data's permutation from its (0-based) pivots.
    let p: Vec<u8> = GETRF_F64_PIVOTS
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let out = call(
        "cu_lu_pivots_to_permutation",
        &[],
        vec![(ArrayShape::row_major(S32, &[3]), p)],
        vec![ArrayShape::row_major(S32, &[3])],
    )
    .unwrap();
    assert_eq!(ints(&out[0]), GETRF_F64_PERM);
}

// geqrf and orgqr

fn geqrf(t: PrimitiveType, batch: usize, m: usize, n: usize, a_cm: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let k = m.min(n);
    let out = call(
        "cusolver_geqrf_ffi",
        &[],
        vec![(
            ArrayShape::column_major(t, &[batch as i64, m as i64, n as i64]),
            enc(t, a_cm),
        )],
        vec![
            ArrayShape::column_major(t, &[batch as i64, m as i64, n as i64]),
            ArrayShape::row_major(t, &[batch as i64, k as i64]),
        ],
    )
    .unwrap();
    (dec(t, &out[0]), dec(t, &out[1]))
}

#[test]
fn geqrf_follows_lapack_householder_convention() {
    // (3, 4)ᵀ: beta = -5, tau = (beta - alpha) / beta = 1.6, v = [1, 4 / (3 - beta)] = [1, 0.5].
    let (a, tau) = geqrf(F64, 1, 2, 1, &[3.0, 4.0]);
    close(&a, &[-5.0, 0.5], 1e-15, "a");
    close(&tau, &[1.6], 1e-15, "tau");
    // Nothing to annihilate: tau = 0, the column kept (R's diagonal keeps its sign).
    let (a, tau) = geqrf(F64, 1, 2, 1, &[-2.0, 0.0]);
    close(&a, &[-2.0, 0.0], 0.0, "a");
    close(&tau, &[0.0], 0.0, "tau");
}

#[test]
fn geqrf_and_orgqr_match_jax_back_compat_data() {
    // The data's input is iota(18) reshaped to [2, 3, 3]; q = orgqr(geqrf(a)), r = triu(a').
    for t in [F32, F64, C64, C128] {
        let k = if is_complex(t) { 2 } else { 1 };
        let logical: Vec<f64> = (0..18)
            .flat_map(|x| [x as f64, 0.0].into_iter().take(k))
            .collect();
        let a = transpose_batch(&logical, 2, 3, 3, k, true);
        let (r, tau) = geqrf(t, 2, 3, 3, &a);
        let out = call(
            "cusolver_orgqr_ffi",
            &[],
            vec![
                (ArrayShape::column_major(t, &[2, 3, 3]), enc(t, &r)),
                (ArrayShape::row_major(t, &[2, 3]), enc(t, &tau)),
            ],
            vec![ArrayShape::column_major(t, &[2, 3, 3])],
        )
        .unwrap();
        let q = transpose_batch(&dec(t, &out[0]), 2, 3, 3, k, false);
        let r = transpose_batch(&r, 2, 3, 3, k, false);
        let re = |v: &[f64]| -> Vec<f64> { v.iter().step_by(k).copied().collect() };
        let triu: Vec<f64> = re(&r)
            .iter()
            .enumerate()
            .map(|(x, v)| if (x % 9) / 3 <= x % 3 { *v } else { 0.0 })
            .collect();
        close(&re(&q), &QR_F64_Q, tol(t) * 10.0, "q");
        close(&triu, &QR_F64_R, tol(t) * 10.0, "r");
    }
}

// syevd, gesvd, gesvdj: property checks

/// A batch of two Hermitian 4x4 matrices (column-major, `k` components).
fn hermitian(k: usize) -> Vec<f64> {
    let mut v = vec![0.0; 2 * 16 * k];
    for b in 0..2 {
        for i in 0..4 {
            for j in 0..=i {
                let re =
                    ((i * 7 + j * 3 + b * 5) % 11) as f64 - 5.0 + if i == j { 3.0 } else { 0.0 };
                let im = if k == 2 && i != j {
                    ((i + 2 * j + b) % 5) as f64 - 2.0
                } else {
                    0.0
                };
                let set = |v: &mut Vec<f64>, r: usize, c: usize, im: f64| {
                    let x = (b * 16 + r + c * 4) * k;
                    v[x] = re;
                    if k == 2 {
                        v[x + 1] = im;
                    }
                };
                set(&mut v, i, j, im);
                set(&mut v, j, i, -im);
            }
        }
    }
    v
}

type C = (f64, f64);

fn cget(v: &[f64], x: usize, k: usize) -> C {
    (v[x * k], if k == 2 { v[x * k + 1] } else { 0.0 })
}
fn cmul(a: C, b: C) -> C {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

/// `max |A V - V diag(w)|` and `max |Vᴴ V - I|` for column-major `n`×`n` `a`, `v`.
#[allow(clippy::needless_range_loop)]
fn eig_residuals(a: &[f64], v: &[f64], w: &[f64], n: usize, k: usize) -> (f64, f64) {
    let (mut res, mut orth) = (0.0f64, 0.0f64);
    for i in 0..n {
        for j in 0..n {
            let mut av = (0.0, 0.0);
            let mut vv = (0.0, 0.0);
            for l in 0..n {
                let p = cmul(cget(a, i + l * n, k), cget(v, l + j * n, k));
                av = (av.0 + p.0, av.1 + p.1);
                let vi = cget(v, l + i * n, k);
                let q = cmul((vi.0, -vi.1), cget(v, l + j * n, k));
                vv = (vv.0 + q.0, vv.1 + q.1);
            }
            let vij = cget(v, i + j * n, k);
            res = res
                .max((av.0 - vij.0 * w[j]).abs())
                .max((av.1 - vij.1 * w[j]).abs());
            let id = if i == j { 1.0 } else { 0.0 };
            orth = orth.max((vv.0 - id).abs()).max(vv.1.abs());
        }
    }
    (res, orth)
}

#[test]
fn syevd_gives_ascending_eigenvalues_and_orthonormal_eigenvectors() {
    for t in [F32, F64, C64, C128] {
        for lower in [true, false] {
            let k = if is_complex(t) { 2 } else { 1 };
            let a = hermitian(k);
            // Garbage in the triangle not read.
            let mut input = a.clone();
            for b in 0..2 {
                for (i, j) in [(0, 3), (1, 2), (3, 0), (2, 1)] {
                    if (i > j) != lower {
                        input[(b * 16 + i + j * 4) * k] = 99.0;
                    }
                }
            }
            let out = call(
                "cusolver_syevd_ffi",
                &[
                    ("algorithm", "0 : ui8"),
                    ("lower", if lower { "true" } else { "false" }),
                ],
                vec![(ArrayShape::column_major(t, &[2, 4, 4]), enc(t, &input))],
                vec![
                    ArrayShape::column_major(t, &[2, 4, 4]),
                    ArrayShape::row_major(real_of(t), &[2, 4]),
                    ArrayShape::row_major(S32, &[2]),
                ],
            )
            .unwrap();
            assert_eq!(ints(&out[2]), [0, 0]);
            let (v, w) = (dec(t, &out[0]), dec(real_of(t), &out[1]));
            for b in 0..2 {
                let wb = &w[b * 4..b * 4 + 4];
                assert!(
                    wb.windows(2).all(|p| p[0] <= p[1]),
                    "{t:?} ascending: {wb:?}"
                );
                let (res, orth) = eig_residuals(&a[b * 16 * k..], &v[b * 16 * k..], wb, 4, k);
                assert!(
                    res < 1e3 * tol(t) && orth < 1e2 * tol(t),
                    "{t:?} lower={lower}: {res} {orth}"
                );
            }
        }
    }
}

#[test]
fn syevd_of_a_nan_matrix_reports_info() {
    let out = call(
        "cusolver_syevd_ffi",
        &[("algorithm", "0 : ui8"), ("lower", "true")],
        vec![(
            ArrayShape::column_major(F32, &[2, 2]),
            enc(F32, &[f64::NAN, 0.0, 0.0, 1.0]),
        )],
        vec![
            ArrayShape::column_major(F32, &[2, 2]),
            ArrayShape::row_major(F32, &[2]),
            ArrayShape::row_major(S32, &[]),
        ],
    )
    .unwrap();
    assert_eq!(ints(&out[2]), [1]);
    assert!(dec(F32, &out[1]).iter().all(|x| x.is_nan()));
}

/// `max |A - U diag(s) Vᴴ|` over the first `k` singular triplets; `u` is `m`×`uc`, `v` `n`×`vc`,
/// all column-major (real).
fn svd_residual(a: &[f64], u: &[f64], s: &[f64], v: &[f64], m: usize, n: usize) -> f64 {
    let mut r = 0.0f64;
    for i in 0..m {
        for j in 0..n {
            let x: f64 = (0..s.len())
                .map(|l| u[i + l * m] * s[l] * v[j + l * n])
                .sum();
            r = r.max((a[i + j * m] - x).abs());
        }
    }
    r
}

fn orthonormal_columns(q: &[f64], rows: usize, cols: usize) -> bool {
    (0..cols).all(|i| {
        (0..cols).all(|j| {
            let d: f64 = (0..rows).map(|l| q[l + i * rows] * q[l + j * rows]).sum();
            (d - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12
        })
    })
}

const WIDE: [f64; 12] = [
    1.0, -2.0, 3.0, 0.5, 4.0, 1.0, -1.0, 2.0, 0.0, 3.0, 1.5, -2.5,
];

#[test]
fn gesvd_reconstructs_tall_and_transposed_wide_matrices() {
    // Tall 4x3 column-major (the WIDE numbers read as 4x3), full_matrices: U 4x4, Vᴴ 3x3.
    let out = call(
        "cusolver_gesvd_ffi",
        &[
            ("compute_uv", "true"),
            ("full_matrices", "true"),
            ("transposed", "false"),
        ],
        vec![(ArrayShape::column_major(F64, &[4, 3]), enc(F64, &WIDE))],
        vec![
            ArrayShape::column_major(F64, &[4, 3]),
            ArrayShape::row_major(F64, &[3]),
            ArrayShape::column_major(F64, &[4, 4]),
            ArrayShape::column_major(F64, &[3, 3]),
            ArrayShape::row_major(S32, &[]),
        ],
    )
    .unwrap();
    let (s, u, vt) = (dec(F64, &out[1]), dec(F64, &out[2]), dec(F64, &out[3]));
    assert!(s.windows(2).all(|p| p[0] >= p[1]) && s[2] >= 0.0);
    assert!(orthonormal_columns(&u, 4, 4) && orthonormal_columns(&vt, 3, 3));
    let v: Vec<f64> = (0..9).map(|x| vt[x / 3 + (x % 3) * 3]).collect();
    assert!(svd_residual(&WIDE, &u, &s, &v, 4, 3) < 1e-12);
    // A wide 3x4 matrix row-major, transposed = true, thin: result 2 holds JAX's Vᴴ (3x4
    // row-major), result 3 JAX's U (3x3 row-major).
    let out = call(
        "cusolver_gesvd_ffi",
        &[
            ("compute_uv", "true"),
            ("full_matrices", "false"),
            ("transposed", "true"),
        ],
        vec![(ArrayShape::row_major(F64, &[3, 4]), enc(F64, &WIDE))],
        vec![
            ArrayShape::row_major(F64, &[3, 4]),
            ArrayShape::row_major(F64, &[3]),
            ArrayShape::row_major(F64, &[3, 4]),
            ArrayShape::row_major(F64, &[3, 3]),
            ArrayShape::row_major(S32, &[]),
        ],
    )
    .unwrap();
    let (s, vh, u) = (dec(F64, &out[1]), dec(F64, &out[2]), dec(F64, &out[3]));
    // Logical A (3x4) = U diag(s) Vᴴ, all row-major.
    for i in 0..3 {
        for j in 0..4 {
            let x: f64 = (0..3).map(|l| u[i * 3 + l] * s[l] * vh[l * 4 + j]).sum();
            assert!((x - WIDE[i * 4 + j]).abs() < 1e-12, "({i},{j})");
        }
    }
}

#[test]
fn gesvdj_writes_v_and_takes_wide_matrices() {
    for t in [F32, F64] {
        let out = call(
            "cusolver_gesvdj_ffi",
            &[("compute_uv", "true"), ("full_matrices", "true")],
            vec![(ArrayShape::column_major(t, &[3, 4]), enc(t, &WIDE))],
            vec![
                ArrayShape::column_major(t, &[3, 4]),
                ArrayShape::row_major(t, &[3]),
                ArrayShape::column_major(t, &[3, 3]),
                ArrayShape::column_major(t, &[4, 4]),
                ArrayShape::row_major(S32, &[]),
            ],
        )
        .unwrap();
        let (s, u, v) = (dec(t, &out[1]), dec(t, &out[2]), dec(t, &out[3]));
        assert!(s.windows(2).all(|p| p[0] >= p[1]));
        let a = dec(t, &enc(t, &WIDE));
        assert!(svd_residual(&a, &u, &s, &v, 3, 4) < 1e3 * tol(t), "{t:?}");
        assert_eq!(ints(&out[4]), [0]);
    }
}

// sytrd

fn sytrd_case(t: PrimitiveType, input: &[f64], want: [&[f64]; 4]) {
    let k = if is_complex(t) { 2 } else { 1 };
    let a = transpose_batch(input, 2, 4, 4, k, true);
    let out = call(
        "cusolver_sytrd_ffi",
        &[("lower", "true")],
        vec![(ArrayShape::column_major(t, &[2, 4, 4]), enc(t, &a))],
        vec![
            ArrayShape::column_major(t, &[2, 4, 4]),
            ArrayShape::row_major(real_of(t), &[2, 4]),
            ArrayShape::row_major(real_of(t), &[2, 3]),
            ArrayShape::row_major(t, &[2, 3]),
            ArrayShape::row_major(S32, &[2]),
        ],
    )
    .unwrap();
    let got_a = transpose_batch(&dec(t, &out[0]), 2, 4, 4, k, false);
    let tol = tol(t) * 100.0;
    close(&got_a, want[0], tol, "a");
    close(&dec(real_of(t), &out[1]), want[1], tol, "d");
    close(&dec(real_of(t), &out[2]), want[2], tol, "e");
    close(&dec(t, &out[3]), want[3], tol, "tau");
    assert_eq!(ints(&out[4]), [0, 0]);
}

#[test]
fn sytrd_matches_jax_back_compat_data() {
    sytrd_case(
        F32,
        &SYTRD_F32_IN,
        [&SYTRD_F32_A, &SYTRD_F32_D, &SYTRD_F32_E, &SYTRD_F32_TAU],
    );
    sytrd_case(
        F64,
        &SYTRD_F64_IN,
        [&SYTRD_F64_A, &SYTRD_F64_D, &SYTRD_F64_E, &SYTRD_F64_TAU],
    );
    sytrd_case(
        C64,
        &SYTRD_C64_IN,
        [&SYTRD_C64_A, &SYTRD_C64_D, &SYTRD_C64_E, &SYTRD_C64_TAU],
    );
    sytrd_case(
        C128,
        &SYTRD_C128_IN,
        [&SYTRD_C128_A, &SYTRD_C128_D, &SYTRD_C128_E, &SYTRD_C128_TAU],
    );
}

#[test]
fn sytrd_upper_matches_lapack() {
    let input: Vec<f64> = SYTRD_F64_IN[..16].to_vec();
    let out = call(
        "cusolver_sytrd_ffi",
        &[("lower", "false")],
        vec![(
            ArrayShape::column_major(F64, &[4, 4]),
            enc(F64, &transpose_batch(&input, 1, 4, 4, 1, true)),
        )],
        vec![
            ArrayShape::column_major(F64, &[4, 4]),
            ArrayShape::row_major(F64, &[4]),
            ArrayShape::row_major(F64, &[3]),
            ArrayShape::row_major(F64, &[3]),
            ArrayShape::row_major(S32, &[]),
        ],
    )
    .unwrap();
    let got_a = transpose_batch(&dec(F64, &out[0]), 1, 4, 4, 1, false);
    close(&got_a, &SYTRD_UPPER_A, 1e-12, "a");
    close(&dec(F64, &out[1]), &SYTRD_UPPER_D, 1e-12, "d");
    close(&dec(F64, &out[2]), &SYTRD_UPPER_E, 1e-12, "e");
    close(&dec(F64, &out[3]), &SYTRD_UPPER_TAU, 1e-12, "tau");
}

// gtsv2

#[test]
fn gtsv2_matches_jax_back_compat_data() {
    for (t, dl, d, du, b, x) in [
        (
            F32,
            &GTSV2_F32_DL[..],
            &GTSV2_F32_D[..],
            &GTSV2_F32_DU[..],
            &GTSV2_F32_B[..],
            &GTSV2_F32_X[..],
        ),
        (
            F64,
            &GTSV2_F64_DL[..],
            &GTSV2_F64_D[..],
            &GTSV2_F64_DU[..],
            &GTSV2_F64_B[..],
            &GTSV2_F64_X[..],
        ),
    ] {
        let v = |s: &[f64]| (ArrayShape::row_major(t, &[3]), enc(t, s));
        let out = call(
            "cusparse_gtsv2_ffi",
            &[],
            vec![
                v(dl),
                v(d),
                v(du),
                (ArrayShape::column_major(t, &[3, 1]), enc(t, b)),
            ],
            vec![ArrayShape::column_major(t, &[3, 1])],
        )
        .unwrap();
        close(&dec(t, &out[0]), x, tol(t) * 10.0, "x");
    }
}

#[test]
fn gtsv2_pivots_on_a_zero_diagonal() {
    // [[0, 1, 0], [1, 0, 1], [0, 1, 1]] x = [1, 2, 3]: x = [0, 1, 2] (needs a row interchange).
    let v = |s: &[f64]| (ArrayShape::row_major(F64, &[3]), enc(F64, s));
    let out = call(
        "cusparse_gtsv2_ffi",
        &[],
        vec![
            v(&[0.0, 1.0, 1.0]),
            v(&[0.0, 0.0, 1.0]),
            v(&[1.0, 1.0, 0.0]),
            (
                ArrayShape::column_major(F64, &[3, 1]),
                enc(F64, &[1.0, 2.0, 3.0]),
            ),
        ],
        vec![ArrayShape::column_major(F64, &[3, 1])],
    )
    .unwrap();
    close(&dec(F64, &out[0]), &[0.0, 1.0, 2.0], 1e-15, "x");
}

// threefry

#[test]
fn threefry_matches_the_random123_known_answers() {
    // JAX's random_test: testThreefry2x32 (Random123's known-answer vectors).
    let words = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let sh = ArrayShape::row_major(U32, &[3]);
    let out = call(
        "cu_threefry2x32_ffi",
        &[],
        vec![
            (sh.clone(), words(&[0, u32::MAX, 0x13198a2e])),
            (sh.clone(), words(&[0, u32::MAX, 0x03707344])),
            (sh.clone(), words(&[0, u32::MAX, 0x243f6a88])),
            (sh.clone(), words(&[0, u32::MAX, 0x85a308d3])),
        ],
        vec![sh.clone(), sh],
    )
    .unwrap();
    let u = |b: &[u8]| -> Vec<u32> { ints(b).into_iter().map(|x| x as u32).collect() };
    assert_eq!(u(&out[0]), [0x6b200159, 0x1cb996fc, 0xc4923a9c]);
    assert_eq!(u(&out[1]), [0x99ba4efe, 0xbb002be7, 0x483df7a0]);
}

// The compatibility surface

#[test]
fn attribute_schemas_are_published() {
    let s = runtime::attribute_schemas();
    let get = |t: &str| {
        s.iter().find(|(n, _)| n == t).map(|(_, a)| {
            a.iter()
                .map(|spec| (spec.name.to_owned(), spec.describe()))
                .collect::<Vec<_>>()
        })
    };
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    assert_eq!(get("cusolver_potrf_ffi"), Some(pairs(&[("lower", "bool")])));
    assert_eq!(
        get("cusolver_syevd_ffi"),
        Some(pairs(&[("algorithm", "ui8"), ("lower", "bool")]))
    );
    assert_eq!(
        get("cusolver_gesvd_ffi"),
        Some(pairs(&[
            ("compute_uv", "bool"),
            ("full_matrices", "bool"),
            ("transposed", "bool")
        ]))
    );
    assert_eq!(get("cu_threefry2x32_ffi"), Some(vec![]));
    assert_eq!(get("xla.runtime.axpy_f32"), None);
    assert_eq!(s.len(), 11);
    assert!(runtime::custom_call_names()
        .iter()
        .any(|(n, a)| n == "cusolver_getrf_ffi" && a.is_empty()));
}
