//! Pins the gemm's semantics with hand-computed values: every operand order and transpose
//! combination, batches with strides, each element type and accumulation rule, alpha and beta,
//! and the out-of-bounds errors (issue 11: a `*` turned into `+` in the inner loop went unnoticed).
use super::*;
use crate::thunks::Order;

/// A = [[1, 2, 3], [4, 5, 6]] (2x3), B = [[7, 8], [9, 10], [11, 12]] (3x2).
/// A.B = [[58, 64], [139, 154]] (by hand: 1*7+2*9+3*11 = 58, 1*8+2*10+3*12 = 64,
/// 4*7+5*9+6*11 = 139, 4*8+5*10+6*12 = 154).
const A: [[f64; 3]; 2] = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
const B: [[f64; 2]; 3] = [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]];
const AB: [[f64; 2]; 2] = [[58.0, 64.0], [139.0, 154.0]];

fn layout(order: Order, rows: u64, cols: u64, transpose: bool, dtype: ElemType) -> MatrixLayout {
    MatrixLayout::packed(order, rows, cols, 1, transpose, dtype)
}

fn config(
    lhs: MatrixLayout,
    rhs: MatrixLayout,
    output: MatrixLayout,
    compute: ElemType,
) -> GemmConfig {
    let (m, k) = lhs.op_dims();
    let (_, n) = rhs.op_dims();
    GemmConfig {
        batch: lhs.batch_size,
        lhs,
        rhs,
        output,
        alpha_real: 1.0,
        alpha_imag: 0.0,
        beta: 0.0,
        compute_type: compute,
        operand_precisions: Vec::new(),
        m,
        n,
        k,
    }
}

fn put(buf: &mut [u8], t: ElemType, i: u64, v: f64) {
    let sz = t.size() as usize;
    let o = i as usize * sz;
    let b = &mut buf[o..o + sz];
    match t {
        ElemType::F16 => b.copy_from_slice(&f16::from_f64(v).to_le_bytes()),
        ElemType::BF16 => b.copy_from_slice(&bf16::from_f64(v).to_le_bytes()),
        ElemType::F32 => b.copy_from_slice(&(v as f32).to_le_bytes()),
        ElemType::F64 => b.copy_from_slice(&v.to_le_bytes()),
        ElemType::S8 => b.copy_from_slice(&[v as i8 as u8]),
        ElemType::S32 => b.copy_from_slice(&(v as i32).to_le_bytes()),
        other => panic!("no test encoding for {other:?}"),
    }
}

fn get(buf: &[u8], t: ElemType, i: u64) -> f64 {
    let sz = t.size() as usize;
    let o = i as usize * sz;
    let b = &buf[o..o + sz];
    match t {
        ElemType::F16 => f16::from_le_bytes([b[0], b[1]]).to_f64(),
        ElemType::BF16 => bf16::from_le_bytes([b[0], b[1]]).to_f64(),
        ElemType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]).into(),
        ElemType::F64 => f64::from_le_bytes(b.try_into().expect("8 bytes")),
        ElemType::S8 => (b[0] as i8).into(),
        ElemType::S32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]).into(),
        other => panic!("no test decoding for {other:?}"),
    }
}

/// Stores the logical matrix `op(X) = m` (per batch) in layout `l`: X = m, or m^T when
/// `l.transpose`, placed by the layout's own order and strides (written out here, not
/// through `MatrixLayout::offset`, so the test checks it).
fn store_logical(l: &MatrixLayout, batches: &[Vec<Vec<f64>>]) -> Vec<u8> {
    let len = l.batch_stride * (batches.len() as u64 - 1)
        + (l.num_rows.max(1) - 1)
            * if l.order == Order::RowMajor {
                l.leading_dim_stride
            } else {
                1
            }
        + (l.num_cols.max(1) - 1)
            * if l.order == Order::RowMajor {
                1
            } else {
                l.leading_dim_stride
            }
        + 1;
    let mut buf = vec![0u8; (len * l.dtype.size()) as usize];
    for (b, m) in batches.iter().enumerate() {
        for (i, row) in m.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                // stored (r, c) of op(X)(i, j)
                let (r, c) = if l.transpose { (j, i) } else { (i, j) };
                let at = b as u64 * l.batch_stride
                    + match l.order {
                        Order::RowMajor => r as u64 * l.leading_dim_stride + c as u64,
                        Order::ColumnMajor => c as u64 * l.leading_dim_stride + r as u64,
                    };
                put(&mut buf, l.dtype, at, v);
            }
        }
    }
    buf
}

fn read_logical(l: &MatrixLayout, buf: &[u8], batch: u64) -> Vec<Vec<f64>> {
    let (rows, cols) = l.op_dims();
    (0..rows)
        .map(|i| {
            (0..cols)
                .map(|j| {
                    let (r, c) = if l.transpose { (j, i) } else { (i, j) };
                    let at = batch * l.batch_stride
                        + match l.order {
                            Order::RowMajor => r * l.leading_dim_stride + c,
                            Order::ColumnMajor => c * l.leading_dim_stride + r,
                        };
                    get(buf, l.dtype, at)
                })
                .collect()
        })
        .collect()
}

fn rows<const C: usize>(m: &[[f64; C]]) -> Vec<Vec<f64>> {
    m.iter().map(|r| r.to_vec()).collect()
}

fn transposed<const C: usize>(m: &[[f64; C]]) -> Vec<Vec<f64>> {
    (0..C).map(|j| m.iter().map(|r| r[j]).collect()).collect()
}

const ORDERS: [Order; 2] = [Order::RowMajor, Order::ColumnMajor];

#[test]
fn every_order_and_transpose_combination_gives_the_hand_computed_product() {
    for lo in ORDERS {
        for lt in [false, true] {
            for ro in ORDERS {
                for rt in [false, true] {
                    for oo in ORDERS {
                        // Stored shapes: op(X) is A (2x3) and B (3x2) in every case.
                        let l = if lt {
                            layout(lo, 3, 2, true, ElemType::F32)
                        } else {
                            layout(lo, 2, 3, false, ElemType::F32)
                        };
                        let r = if rt {
                            layout(ro, 2, 3, true, ElemType::F32)
                        } else {
                            layout(ro, 3, 2, false, ElemType::F32)
                        };
                        let o = layout(oo, 2, 2, false, ElemType::F32);
                        let lhs = store_logical(&l, &[rows(&A)]);
                        let rhs = store_logical(&r, &[rows(&B)]);
                        let cfg = config(l, r, o, ElemType::F32);
                        let mut out = vec![0u8; 16];
                        gemm(&cfg, &lhs, &rhs, &mut out).expect("gemm runs");
                        assert_eq!(
                            read_logical(&o, &out, 0),
                            rows(&AB),
                            "lhs {lo:?} transpose {lt}, rhs {ro:?} transpose {rt}, out {oo:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_transposed_output_layout_writes_the_transpose() {
    // The output with `transpose` set stores (A.B)^T: stored (c, r) holds element (r, c).
    let l = layout(Order::RowMajor, 2, 3, false, ElemType::F32);
    let r = layout(Order::RowMajor, 3, 2, false, ElemType::F32);
    let o = layout(Order::RowMajor, 2, 2, true, ElemType::F32);
    let cfg = config(l, r, o, ElemType::F32);
    let mut out = vec![0u8; 16];
    gemm(
        &cfg,
        &store_logical(&l, &[rows(&A)]),
        &store_logical(&r, &[rows(&B)]),
        &mut out,
    )
    .expect("gemm runs");
    let stored: Vec<f64> = (0..4).map(|i| get(&out, ElemType::F32, i)).collect();
    assert_eq!(stored, [58.0, 139.0, 64.0, 154.0]);
    assert_eq!(transposed(&AB), [[58.0, 139.0], [64.0, 154.0]]);
}

#[test]
fn batches_use_each_operands_batch_stride() {
    // Batch 1 is batch 0 scaled: A1 = 2A, B1 = B + 1 (elementwise).
    // 2A.(B+1) = 2(A.B + A.1) = 2([[58+6, 64+6], [139+15, 154+15]]) = [[128, 140], [308, 338]].
    let a1: Vec<Vec<f64>> = A
        .iter()
        .map(|r| r.iter().map(|v| 2.0 * v).collect())
        .collect();
    let b1: Vec<Vec<f64>> = B
        .iter()
        .map(|r| r.iter().map(|v| v + 1.0).collect())
        .collect();
    let mut l = layout(Order::RowMajor, 2, 3, false, ElemType::F32);
    let mut r = layout(Order::ColumnMajor, 3, 2, false, ElemType::F32);
    let mut o = layout(Order::RowMajor, 2, 2, false, ElemType::F32);
    // Padded strides: batches do not start where the previous one ends.
    (l.batch_size, l.batch_stride) = (2, 8);
    (r.batch_size, r.batch_stride) = (2, 7);
    (o.batch_size, o.batch_stride) = (2, 5);
    let lhs = store_logical(&l, &[rows(&A), a1]);
    let rhs = store_logical(&r, &[rows(&B), b1]);
    let cfg = config(l, r, o, ElemType::F32);
    assert_eq!(cfg.batch, 2);
    let mut out = vec![0u8; 9 * 4];
    gemm(&cfg, &lhs, &rhs, &mut out).expect("gemm runs");
    assert_eq!(read_logical(&o, &out, 0), rows(&AB));
    assert_eq!(read_logical(&o, &out, 1), [[128.0, 140.0], [308.0, 338.0]]);
    // The gap between the output batches is untouched.
    assert_eq!(get(&out, ElemType::F32, 4), 0.0);
}

// One row of two times one column of two, with every knob the cases vary spelled out.
#[allow(clippy::too_many_arguments)]
fn run_1x2x1(
    dtype: ElemType,
    compute: ElemType,
    out_t: ElemType,
    a: [f64; 2],
    b: [f64; 2],
    alpha: f64,
    beta: f64,
    old: f64,
) -> f64 {
    let l = layout(Order::RowMajor, 1, 2, false, dtype);
    let r = layout(Order::RowMajor, 2, 1, false, dtype);
    let o = layout(Order::RowMajor, 1, 1, false, out_t);
    let lhs = store_logical(&l, &[vec![a.to_vec()]]);
    let rhs = store_logical(&r, &[vec![vec![b[0]], vec![b[1]]]]);
    let mut cfg = config(l, r, o, compute);
    cfg.alpha_real = alpha;
    cfg.beta = beta;
    let mut out = vec![0u8; out_t.size() as usize];
    put(&mut out, out_t, 0, old);
    gemm(&cfg, &lhs, &rhs, &mut out).expect("gemm runs");
    get(&out, out_t, 0)
}

#[test]
fn alpha_scales_the_product_and_beta_the_old_output() {
    // 2 * (3*5 + 4*6) + 0.5 * 10 = 2 * 39 + 5 = 83, in each compute type.
    for (t, c) in [
        (ElemType::F32, ElemType::F32),
        (ElemType::F64, ElemType::F64),
        (ElemType::F16, ElemType::F32),
        (ElemType::BF16, ElemType::F32),
    ] {
        assert_eq!(
            run_1x2x1(t, c, t, [3.0, 4.0], [5.0, 6.0], 2.0, 0.5, 10.0),
            83.0,
            "{t:?}"
        );
    }
    // Integer: 3 * (3*5 + 4*6) + 2 * 10 = 117 + 20 = 137.
    {
        let t = ElemType::S32;
        assert_eq!(
            run_1x2x1(t, ElemType::S32, t, [3.0, 4.0], [5.0, 6.0], 3.0, 2.0, 10.0),
            137.0
        );
    }
    // s8 operands, s32 accumulation and output: -3*5 + 4*-6 = -39; 2 * -39 - 1 * 7 = -85.
    assert_eq!(
        run_1x2x1(
            ElemType::S8,
            ElemType::S32,
            ElemType::S32,
            [-3.0, 4.0],
            [5.0, -6.0],
            2.0,
            -1.0,
            7.0
        ),
        -85.0
    );
}

#[test]
fn integer_operands_with_a_float_compute_type() {
    // -3*5 + 4*-6 = -39 read through the float path (s8 and s32 operands).
    for (t, c) in [
        (ElemType::S8, ElemType::F32),
        (ElemType::S32, ElemType::F32),
        (ElemType::S8, ElemType::F64),
        (ElemType::S32, ElemType::F64),
    ] {
        assert_eq!(
            run_1x2x1(t, c, ElemType::F32, [-3.0, 4.0], [5.0, -6.0], 1.0, 0.0, 0.0),
            -39.0,
            "{t:?} {c:?}"
        );
    }
    // An s32 output read back as the old value for beta: -39 + 1 * 5 = -34.
    assert_eq!(
        run_1x2x1(
            ElemType::S32,
            ElemType::F32,
            ElemType::S32,
            [-3.0, 4.0],
            [5.0, -6.0],
            1.0,
            1.0,
            5.0
        ),
        -34.0
    );
    assert_eq!(
        run_1x2x1(
            ElemType::S32,
            ElemType::F64,
            ElemType::S32,
            [-3.0, 4.0],
            [5.0, -6.0],
            1.0,
            1.0,
            5.0
        ),
        -34.0
    );
}

#[test]
fn beta_zero_never_reads_the_old_output() {
    // A NaN in the output does not propagate (docs/artifact.md "Gemm").
    for (t, c) in [
        (ElemType::F32, ElemType::F32),
        (ElemType::F64, ElemType::F64),
    ] {
        assert_eq!(
            run_1x2x1(t, c, t, [1.0, 2.0], [3.0, 4.0], 1.0, 0.0, f64::NAN),
            11.0
        );
    }
    assert_eq!(
        run_1x2x1(
            ElemType::S32,
            ElemType::S32,
            ElemType::S32,
            [1.0, 2.0],
            [3.0, 4.0],
            1.0,
            0.0,
            99.0
        ),
        11.0
    );
}

#[test]
fn f32_accumulation_rounds_in_f32_in_increasing_k_order() {
    // k order: (1e8 + 1) rounds to 1e8 in f32, minus 1e8 gives 0 (f64 would give 1;
    // reverse order would give 1 too).
    let l = layout(Order::RowMajor, 1, 3, false, ElemType::F32);
    let r = layout(Order::RowMajor, 3, 1, false, ElemType::F32);
    let o = layout(Order::RowMajor, 1, 1, false, ElemType::F32);
    let lhs = store_logical(&l, &[vec![vec![1e8, 1.0, -1e8]]]);
    let rhs = store_logical(&r, &[vec![vec![1.0], vec![1.0], vec![1.0]]]);
    let mut out = vec![0u8; 4];
    gemm(&config(l, r, o, ElemType::F32), &lhs, &rhs, &mut out).expect("gemm runs");
    assert_eq!(get(&out, ElemType::F32, 0), 0.0);
    // f64 accumulation keeps the 1.
    let l = layout(Order::RowMajor, 1, 3, false, ElemType::F64);
    let r = layout(Order::RowMajor, 3, 1, false, ElemType::F64);
    let o = layout(Order::RowMajor, 1, 1, false, ElemType::F64);
    let lhs = store_logical(&l, &[vec![vec![1e17, 1.0, -1e17]]]);
    let rhs = store_logical(&r, &[vec![vec![1.0], vec![1.0], vec![1.0]]]);
    let mut out = vec![0u8; 8];
    gemm(&config(l, r, o, ElemType::F64), &lhs, &rhs, &mut out).expect("gemm runs");
    // 1e17 + 1 rounds to 1e17 in f64 as well: the same k-order rule at f64 precision.
    assert_eq!(get(&out, ElemType::F64, 0), 0.0);
}

#[test]
fn f64_compute_keeps_f64_precision() {
    // 0.1 * 3 in f64 is 0.30000000000000004; an f32 accumulation would give 0.3f32.
    let v = run_1x2x1(
        ElemType::F64,
        ElemType::F64,
        ElemType::F64,
        [0.1, 0.0],
        [3.0, 0.0],
        1.0,
        0.0,
        0.0,
    );
    assert_eq!(v, 0.1f64 * 3.0);
    assert_ne!(v, f64::from(0.1f32 * 3.0));
}

#[test]
fn half_outputs_round_to_nearest_even() {
    // 1 + 2^-11 is halfway between two f16 values (1 and 1 + 2^-10): ties go to even (1.0).
    let half = 2f64.powi(-11);
    assert_eq!(
        run_1x2x1(
            ElemType::F16,
            ElemType::F32,
            ElemType::F16,
            [1.0, half],
            [1.0, 1.0],
            1.0,
            0.0,
            0.0
        ),
        1.0
    );
    // bf16: 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0); 1 + 3*2^-8 goes up.
    let h = 2f64.powi(-8);
    assert_eq!(
        run_1x2x1(
            ElemType::BF16,
            ElemType::F32,
            ElemType::BF16,
            [1.0, h],
            [1.0, 1.0],
            1.0,
            0.0,
            0.0
        ),
        1.0
    );
    assert_eq!(
        run_1x2x1(
            ElemType::BF16,
            ElemType::F32,
            ElemType::BF16,
            [1.0, 3.0 * h],
            [1.0, 1.0],
            1.0,
            0.0,
            0.0
        ),
        1.0 + 4.0 * h
    );
}

#[test]
fn integer_accumulation_wraps() {
    // s32: 2^30 * 4 = 2^32 wraps to 0; plus 1*5 = 5.
    let big = f64::from(1 << 30);
    assert_eq!(
        run_1x2x1(
            ElemType::S32,
            ElemType::S32,
            ElemType::S32,
            [big, 1.0],
            [4.0, 5.0],
            1.0,
            0.0,
            0.0
        ),
        5.0
    );
    // s8 output keeps the low byte: 100 * 3 = 300 = 0x12c -> 0x2c = 44.
    assert_eq!(
        run_1x2x1(
            ElemType::S8,
            ElemType::S32,
            ElemType::S8,
            [100.0, 0.0],
            [3.0, 0.0],
            1.0,
            0.0,
            0.0
        ),
        44.0
    );
}

#[test]
fn integer_results_convert_to_float_outputs_and_float_results_to_integer_outputs() {
    // s32 compute into an f32 output: 3*5 + 4*6 = 39.
    assert_eq!(
        run_1x2x1(
            ElemType::S8,
            ElemType::S32,
            ElemType::F32,
            [3.0, 4.0],
            [5.0, 6.0],
            1.0,
            0.0,
            0.0
        ),
        39.0
    );
    // f32 compute into s32 and s8 outputs truncate toward zero: 1.5 * 2.5 = 3.75 -> 3.
    for out_t in [ElemType::S32, ElemType::S8] {
        let l = layout(Order::RowMajor, 1, 1, false, ElemType::F32);
        let r = layout(Order::RowMajor, 1, 1, false, ElemType::F32);
        let o = layout(Order::RowMajor, 1, 1, false, out_t);
        let lhs = store_logical(&l, &[vec![vec![1.5]]]);
        let rhs = store_logical(&r, &[vec![vec![-2.5]]]);
        let mut out = vec![0u8; out_t.size() as usize];
        gemm(&config(l, r, o, ElemType::F32), &lhs, &rhs, &mut out).expect("gemm runs");
        assert_eq!(get(&out, out_t, 0), -3.0, "{out_t:?}");
    }
}

#[test]
fn short_buffers_and_unsupported_types_are_internal_errors() {
    let err = Error::internal("gemm operand access out of bounds");
    let l = layout(Order::RowMajor, 2, 3, false, ElemType::F32);
    let r = layout(Order::RowMajor, 3, 2, false, ElemType::F32);
    let o = layout(Order::RowMajor, 2, 2, false, ElemType::F32);
    let lhs = store_logical(&l, &[rows(&A)]);
    let rhs = store_logical(&r, &[rows(&B)]);
    for compute in [ElemType::F32, ElemType::F64] {
        let cfg = config(l, r, o, compute);
        let mut out = vec![0u8; 16];
        assert_eq!(gemm(&cfg, &lhs[..20], &rhs, &mut out), Err(err.clone()));
        assert_eq!(gemm(&cfg, &lhs, &rhs[..20], &mut out), Err(err.clone()));
        assert_eq!(gemm(&cfg, &lhs, &rhs, &mut out[..12]), Err(err.clone()));
        // Reading the old output with beta != 0 is bounds-checked too.
        let mut cfg = cfg;
        cfg.beta = 1.0;
        cfg.m = 3;
        let mut out = vec![0u8; 16];
        assert_eq!(gemm(&cfg, &lhs, &rhs, &mut out), Err(err.clone()));
    }
    // s32: every operand and the old output.
    let li = layout(Order::RowMajor, 1, 2, false, ElemType::S32);
    let ri = layout(Order::RowMajor, 2, 1, false, ElemType::S32);
    let oi = layout(Order::RowMajor, 1, 1, false, ElemType::S32);
    let mut cfg = config(li, ri, oi, ElemType::S32);
    let mut out = vec![0u8; 4];
    assert_eq!(gemm(&cfg, &[0; 4], &[0; 8], &mut out), Err(err.clone()));
    assert_eq!(gemm(&cfg, &[0; 8], &[0; 4], &mut out), Err(err.clone()));
    cfg.beta = 1.0;
    assert_eq!(
        gemm(&cfg, &[0; 8], &[0; 8], &mut out[..0]),
        Err(err.clone())
    );
    // Element types the gemm has no arithmetic for (u8 operands, a pred output).
    let mut cfg = config(
        layout(Order::RowMajor, 1, 1, false, ElemType::U8),
        layout(Order::RowMajor, 1, 1, false, ElemType::U8),
        layout(Order::RowMajor, 1, 1, false, ElemType::F32),
        ElemType::F32,
    );
    assert_eq!(gemm(&cfg, &[1], &[1], &mut [0; 4]), Err(err.clone()));
    cfg.compute_type = ElemType::S32;
    assert_eq!(gemm(&cfg, &[1], &[1], &mut [0; 4]), Err(err.clone()));
    let cfg = config(
        layout(Order::RowMajor, 1, 1, false, ElemType::F32),
        layout(Order::RowMajor, 1, 1, false, ElemType::F32),
        layout(Order::RowMajor, 1, 1, false, ElemType::Pred),
        ElemType::F32,
    );
    assert_eq!(gemm(&cfg, &[0; 4], &[0; 4], &mut [0; 1]), Err(err));
}

mod fast_path;

/// A batch of 10^9 with stride 0 (every batch reads the same 2x2 bytes) is unbounded work from
/// a 16-byte artifact; the deadline stops it on the fast path and on the reference loop (a
/// stride-0 K of 10^12 stays there), with the flag named.
#[test]
fn a_stride_zero_gemm_stops_at_its_deadline() {
    let mut l = layout(Order::RowMajor, 2, 2, false, ElemType::F32);
    l.batch_size = 1_000_000_000;
    l.batch_stride = 0;
    let mut cfg = config(l, l, l, ElemType::F32);
    let expired = Deadline {
        at: std::time::Instant::now(),
        limit_secs: 2,
    };
    std::thread::sleep(std::time::Duration::from_millis(2));
    let (a, b, mut c) = (vec![0u8; 16], vec![0u8; 16], vec![0u8; 16]);
    let want = Err(Error::resource_exhausted(
        "gemm: ran longer than the wall-time limit of 2 s (RuntimeFlags::max_execution_secs, aot run --max-execution-secs)",
    ));
    assert_eq!(gemm_until(&cfg, &a, &b, &mut c, Some(expired)), want);
    // K of 10^12 read through stride-0 views: one output element, the reference loop.
    cfg.batch = 1;
    cfg.k = 1_000_000_000_000;
    cfg.lhs.order = Order::ColumnMajor; // k walks the leading dimension of both
    cfg.lhs.leading_dim_stride = 0;
    cfg.rhs.leading_dim_stride = 0;
    assert_eq!(gemm_reference(&cfg, &a, &b, &mut c, Some(expired)), want);
}
