//! Native gemm, following docs/artifact.md "Gemm" exactly: products accumulated in the compute
//! type (F32 for f16/bf16/f32, F64 for f64, S32 for s8/s32) in increasing k order, then
//! `alpha * acc + beta * old` in the compute type, converted to the output type with round to
//! nearest even. `beta == 0` never reads the old output.
//!
//! Two implementations with the same results bit for bit:
//! - [`gemm`], the fast one: per batch, `op(lhs)` and `op(rhs)` are converted once into packed
//!   row-major matrices of the compute type, then blocks of 4 output rows x up to 256 columns are
//!   accumulated in registers/L1 (the inner loop runs over contiguous columns, so it vectorizes;
//!   an AVX2 copy is chosen at run time where the CPU has it), rows split over the machine's cores.
//!   Every output element is still `acc = 0; for k in 0..K { acc = acc + a[i][k] * b[k][j] }` with a
//!   separate multiply and add (Rust never contracts them into an FMA): the reduction order per
//!   element is fixed, independent of the blocking, the thread count and the CPU, so results are
//!   identical across runs, machines and thread counts and to the reference loop.
//! - `gemm_reference`, the element-at-a-time loop the semantics are written in. [`gemm`] falls back
//!   to it whenever packing is not possible (an operand access out of bounds, an element type with
//!   no arithmetic, operands whose packed copies would be much larger than their buffers, as with a
//!   zero stride): the errors and their messages are then the reference's own.
//!
//! Hand-written rather than the `gemm` or `matrixmultiply` crates: both split K into cache blocks
//! whose partial sums are added to the output (and use FMA where the CPU has it), which changes the
//! rounding of every artifact's gemm outputs, and the goldens pin them bit for bit ("increasing k
//! order" is part of the thunk's execution semantics); neither covers bf16 or s32 either.
use std::num::Wrapping;
use std::ops::{Add, Mul};

use half::{bf16, f16};

use crate::error::{Error, Result};
use crate::thunks::{ElemType, ElemTypeExt, GemmConfig, MatrixLayout};

fn load(buf: &[u8], t: ElemType, i: u64) -> Option<f64> {
    let sz = t.size() as usize;
    let o = usize::try_from(i).ok()?.checked_mul(sz)?;
    let b = buf.get(o..o.checked_add(sz)?)?;
    Some(match t {
        ElemType::F16 => f16::from_le_bytes([b[0], b[1]]).to_f64(),
        ElemType::BF16 => bf16::from_le_bytes([b[0], b[1]]).to_f64(),
        ElemType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]).into(),
        ElemType::F64 => f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        ElemType::S8 => (b[0] as i8).into(),
        ElemType::S32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]).into(),
        _ => return None,
    })
}

fn load_i(buf: &[u8], t: ElemType, i: u64) -> Option<i32> {
    let sz = t.size() as usize;
    let o = usize::try_from(i).ok()?.checked_mul(sz)?;
    let b = buf.get(o..o.checked_add(sz)?)?;
    Some(match t {
        ElemType::S8 => (b[0] as i8).into(),
        ElemType::S32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        _ => return None,
    })
}

/// The compute-type value written back to the output element type.
enum Acc {
    F(f64),
    I(i32),
}

fn store(buf: &mut [u8], t: ElemType, i: u64, v: Acc) -> Option<()> {
    let sz = t.size() as usize;
    let o = usize::try_from(i).ok()?.checked_mul(sz)?;
    let b = buf.get_mut(o..o.checked_add(sz)?)?;
    match (t, v) {
        (ElemType::F16, Acc::F(v)) => b.copy_from_slice(&f16::from_f64(v).to_le_bytes()),
        (ElemType::BF16, Acc::F(v)) => b.copy_from_slice(&bf16::from_f64(v).to_le_bytes()),
        (ElemType::F32, Acc::F(v)) => b.copy_from_slice(&(v as f32).to_le_bytes()),
        (ElemType::F64, Acc::F(v)) => b.copy_from_slice(&v.to_le_bytes()),
        (ElemType::S32, Acc::I(v)) => b.copy_from_slice(&v.to_le_bytes()),
        (ElemType::S8, Acc::I(v)) => b.copy_from_slice(&[v as i8 as u8]),
        (ElemType::S32, Acc::F(v)) => b.copy_from_slice(&(v as i32).to_le_bytes()),
        (ElemType::S8, Acc::F(v)) => b.copy_from_slice(&[v as i8 as u8]),
        (_, Acc::I(v)) => return store(buf, t, i, Acc::F(f64::from(v))),
        _ => return None,
    }
    Some(())
}

/// Element `(r, c)` of `op(X)` for batch `b`: the stored element index.
fn op_index(l: &MatrixLayout, b: u64, r: u64, c: u64) -> u64 {
    if l.transpose {
        l.offset(b, c, r)
    } else {
        l.offset(b, r, c)
    }
}

/// Runs the gemm on host buffers (sizes were validated at load; a short buffer is an INTERNAL
/// error, never a panic).
pub fn gemm(cfg: &GemmConfig, lhs: &[u8], rhs: &[u8], out: &mut [u8]) -> Result<()> {
    let done = match cfg.compute_type {
        ElemType::S32 => fast::<Wrapping<i32>>(cfg, lhs, rhs, out),
        ElemType::F64 => fast::<f64>(cfg, lhs, rhs, out),
        _ => fast::<f32>(cfg, lhs, rhs, out),
    };
    if done {
        Ok(())
    } else {
        gemm_reference(cfg, lhs, rhs, out)
    }
}

/// A compute type of the fast path: how an operand element is read into it (exactly as the
/// reference loop reads it) and how the accumulator is written back.
trait Compute: Copy + Send + Sync + Add<Output = Self> + Mul<Output = Self> + 'static {
    const ZERO: Self;
    fn read(buf: &[u8], t: ElemType, i: u64) -> Option<Self>;
    /// `alpha * acc (+ beta * old)` converted for the output, as the reference loop computes it.
    fn finish(cfg: &GemmConfig, acc: Self, out: &[u8], oi: u64) -> Option<Acc>;
}

impl Compute for f32 {
    const ZERO: f32 = 0.0;
    fn read(buf: &[u8], t: ElemType, i: u64) -> Option<f32> {
        load(buf, t, i).map(|v| v as f32)
    }
    fn finish(cfg: &GemmConfig, acc: f32, out: &[u8], oi: u64) -> Option<Acc> {
        let mut r = cfg.alpha_real as f32 * acc;
        if cfg.beta != 0.0 {
            r += cfg.beta as f32 * (load(out, cfg.output.dtype, oi)? as f32);
        }
        Some(Acc::F(f64::from(r)))
    }
}

impl Compute for f64 {
    const ZERO: f64 = 0.0;
    fn read(buf: &[u8], t: ElemType, i: u64) -> Option<f64> {
        load(buf, t, i)
    }
    fn finish(cfg: &GemmConfig, acc: f64, out: &[u8], oi: u64) -> Option<Acc> {
        let mut r = cfg.alpha_real * acc;
        if cfg.beta != 0.0 {
            r += cfg.beta * load(out, cfg.output.dtype, oi)?;
        }
        Some(Acc::F(r))
    }
}

impl Compute for Wrapping<i32> {
    const ZERO: Wrapping<i32> = Wrapping(0);
    fn read(buf: &[u8], t: ElemType, i: u64) -> Option<Wrapping<i32>> {
        load_i(buf, t, i).map(Wrapping)
    }
    fn finish(cfg: &GemmConfig, acc: Wrapping<i32>, out: &[u8], oi: u64) -> Option<Acc> {
        let mut r = (cfg.alpha_real as i32).wrapping_mul(acc.0);
        if cfg.beta != 0.0 {
            let old = load_i(out, cfg.output.dtype, oi)?;
            r = r.wrapping_add((cfg.beta as i32).wrapping_mul(old));
        }
        Some(Acc::I(r))
    }
}

/// Rows x columns of the register block of the fast path (4 x 16 f32 accumulators are eight
/// AVX2 registers).
const MR: usize = 4;
const NR: usize = 16;
/// Below this many multiply-adds per batch one thread does the work (spawning costs more).
const PARALLEL_MIN: usize = 1 << 18;

/// The fast path; `false` when it cannot run (the caller then runs the reference loop, which
/// reports the error if there is one). A batch's operands are read completely before any of its
/// outputs is written, so a `false` after a write only comes with an access the reference fails
/// on too.
fn fast<T: Compute>(cfg: &GemmConfig, lhs: &[u8], rhs: &[u8], out: &mut [u8]) -> bool {
    let dims = (
        usize::try_from(cfg.m),
        usize::try_from(cfg.n),
        usize::try_from(cfg.k),
    );
    let (Ok(m), Ok(n), Ok(k)) = dims else {
        return false;
    };
    if m == 0 || n == 0 {
        // Nothing to read or write, as in the reference loop.
        return true;
    }
    let (mp, np) = (m.div_ceil(MR) * MR, n.div_ceil(NR) * NR);
    // The packed copies are bounded by the operands they copy (a few times their size for
    // narrow types, plus the padding to whole blocks), never by dimensions alone: a stride-0
    // (broadcast) operand of a huge M x K stays on the reference loop rather than allocating it.
    let size = std::mem::size_of::<T>();
    let bound = |elems: Option<usize>, buf: usize, pad: usize| {
        elems.and_then(|e| e.checked_mul(size)).is_some_and(|b| {
            b <= buf
                .saturating_mul(4)
                .saturating_add(pad.saturating_mul(size))
        })
    };
    if !bound(mp.checked_mul(k), lhs.len(), MR * k)
        || !bound(k.checked_mul(np), rhs.len(), NR * k)
        || !bound(mp.checked_mul(np), out.len(), MR * np + NR * mp)
    {
        return false;
    }
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut c = Vec::new();
    for batch in 0..cfg.batch {
        // A in MR-row panels (`[panel][k][MR]`), B in NR-column panels (`[panel][k][NR]`), both
        // zero-padded to whole panels: the padding only feeds rows and columns never stored.
        a.clear();
        a.resize(mp * k, T::ZERO);
        for i in 0..m {
            let (panel, r) = (i / MR, i % MR);
            for kk in 0..k {
                let v = T::read(
                    lhs,
                    cfg.lhs.dtype,
                    op_index(&cfg.lhs, batch, i as u64, kk as u64),
                );
                match (v, a.get_mut((panel * k + kk) * MR + r)) {
                    (Some(v), Some(slot)) => *slot = v,
                    _ => return false,
                }
            }
        }
        b.clear();
        b.resize(k * np, T::ZERO);
        for kk in 0..k {
            for j in 0..n {
                let (panel, col) = (j / NR, j % NR);
                let v = T::read(
                    rhs,
                    cfg.rhs.dtype,
                    op_index(&cfg.rhs, batch, kk as u64, j as u64),
                );
                match (v, b.get_mut((panel * k + kk) * NR + col)) {
                    (Some(v), Some(slot)) => *slot = v,
                    _ => return false,
                }
            }
        }
        c.clear();
        c.resize(mp * np, T::ZERO);
        let work = m.saturating_mul(n).saturating_mul(k);
        let threads = if work < PARALLEL_MIN { 1 } else { threads };
        // Whole row panels per thread; each thread owns disjoint output rows.
        let panels = (mp / MR).div_ceil(threads).max(1);
        if threads <= 1 || panels * MR >= mp {
            product(&a, &b, &mut c, k, np);
        } else {
            std::thread::scope(|s| {
                let (a_chunk, c_chunk) = (panels * MR * k, panels * MR * np);
                for (a_rows, c_rows) in a.chunks(a_chunk).zip(c.chunks_mut(c_chunk)) {
                    let b = &b;
                    s.spawn(move || product(a_rows, b, c_rows, k, np));
                }
            });
        }
        // The epilogue element by element in the reference's order, each old output read just
        // before its element is written (as the reference does, so even an output layout that
        // maps two elements to one address gives the reference's result).
        for (i, row) in c.chunks_exact(np).take(m).enumerate() {
            for (j, &v) in row.iter().take(n).enumerate() {
                let oi = op_index(&cfg.output, batch, i as u64, j as u64);
                let stored =
                    T::finish(cfg, v, out, oi).and_then(|r| store(out, cfg.output.dtype, oi, r));
                if stored.is_none() {
                    return false;
                }
            }
        }
    }
    true
}

/// `c = a x b` for the row panels of `a` (`[panel][k][MR]`) and the rows of `c` (`MR` rows of
/// `np` per panel, row-major), `b` being packed `[panel][k][NR]`; each element is its products
/// summed from zero in increasing k order.
fn product<T: Compute>(a: &[T], b: &[T], c: &mut [T], k: usize, np: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), all the target feature requires.
        unsafe { product_avx2(a, b, c, k, np) };
        return;
    }
    product_body(a, b, c, k, np);
}

/// The same loop compiled with AVX2 (8 f32 lanes instead of SSE2's 4); the arithmetic, and so the
/// result, is the same.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn product_avx2<T: Compute>(a: &[T], b: &[T], c: &mut [T], k: usize, np: usize) {
    product_body(a, b, c, k, np);
}

#[inline(always)]
fn product_body<T: Compute>(a: &[T], b: &[T], c: &mut [T], k: usize, np: usize) {
    if k == 0 || np == 0 {
        return;
    }
    for (a_panel, c_rows) in a.chunks_exact(MR * k).zip(c.chunks_exact_mut(MR * np)) {
        for (p, b_panel) in b.chunks_exact(NR * k).enumerate() {
            let mut acc = [[T::ZERO; NR]; MR];
            for (av, bv) in a_panel.chunks_exact(MR).zip(b_panel.chunks_exact(NR)) {
                for (acc_r, &x) in acc.iter_mut().zip(av) {
                    for (s, &y) in acc_r.iter_mut().zip(bv) {
                        *s = *s + x * y;
                    }
                }
            }
            for (row, acc_r) in c_rows.chunks_exact_mut(np).zip(&acc) {
                if let Some(dst) = row.get_mut(p * NR..(p + 1) * NR) {
                    dst.copy_from_slice(acc_r);
                }
            }
        }
    }
}

/// The reference loop: one output element at a time, exactly as docs/artifact.md words it.
fn gemm_reference(cfg: &GemmConfig, lhs: &[u8], rhs: &[u8], out: &mut [u8]) -> Result<()> {
    let oob = || Error::internal("gemm operand access out of bounds");
    for b in 0..cfg.batch {
        for i in 0..cfg.m {
            for j in 0..cfg.n {
                let oi = op_index(&cfg.output, b, i, j);
                let v = match cfg.compute_type {
                    ElemType::S32 => {
                        let mut acc: i32 = 0;
                        for k in 0..cfg.k {
                            let x = load_i(lhs, cfg.lhs.dtype, op_index(&cfg.lhs, b, i, k))
                                .ok_or_else(oob)?;
                            let y = load_i(rhs, cfg.rhs.dtype, op_index(&cfg.rhs, b, k, j))
                                .ok_or_else(oob)?;
                            acc = acc.wrapping_add(x.wrapping_mul(y));
                        }
                        let mut r = (cfg.alpha_real as i32).wrapping_mul(acc);
                        if cfg.beta != 0.0 {
                            let old = load_i(out, cfg.output.dtype, oi).ok_or_else(oob)?;
                            r = r.wrapping_add((cfg.beta as i32).wrapping_mul(old));
                        }
                        Acc::I(r)
                    }
                    ElemType::F64 => {
                        let mut acc = 0f64;
                        for k in 0..cfg.k {
                            let x = load(lhs, cfg.lhs.dtype, op_index(&cfg.lhs, b, i, k))
                                .ok_or_else(oob)?;
                            let y = load(rhs, cfg.rhs.dtype, op_index(&cfg.rhs, b, k, j))
                                .ok_or_else(oob)?;
                            acc += x * y;
                        }
                        let mut r = cfg.alpha_real * acc;
                        if cfg.beta != 0.0 {
                            r += cfg.beta * load(out, cfg.output.dtype, oi).ok_or_else(oob)?;
                        }
                        Acc::F(r)
                    }
                    _ => {
                        let mut acc = 0f32;
                        for k in 0..cfg.k {
                            let x = load(lhs, cfg.lhs.dtype, op_index(&cfg.lhs, b, i, k))
                                .ok_or_else(oob)? as f32;
                            let y = load(rhs, cfg.rhs.dtype, op_index(&cfg.rhs, b, k, j))
                                .ok_or_else(oob)? as f32;
                            acc += x * y;
                        }
                        let mut r = cfg.alpha_real as f32 * acc;
                        if cfg.beta != 0.0 {
                            let old = load(out, cfg.output.dtype, oi).ok_or_else(oob)? as f32;
                            r += cfg.beta as f32 * old;
                        }
                        Acc::F(f64::from(r))
                    }
                };
                store(out, cfg.output.dtype, oi, v).ok_or_else(oob)?;
            }
        }
    }
    Ok(())
}

/// Pins the gemm's semantics with hand-computed values: every operand order and transpose
/// combination, batches with strides, each element type and accumulation rule, alpha and beta,
/// and the out-of-bounds errors (issue 11: a `*` turned into `+` in the inner loop went unnoticed).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::thunks::Order;

    /// A = [[1, 2, 3], [4, 5, 6]] (2x3), B = [[7, 8], [9, 10], [11, 12]] (3x2).
    /// A.B = [[58, 64], [139, 154]] (by hand: 1*7+2*9+3*11 = 58, 1*8+2*10+3*12 = 64,
    /// 4*7+5*9+6*11 = 139, 4*8+5*10+6*12 = 154).
    const A: [[f64; 3]; 2] = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    const B: [[f64; 2]; 3] = [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]];
    const AB: [[f64; 2]; 2] = [[58.0, 64.0], [139.0, 154.0]];

    fn layout(
        order: Order,
        rows: u64,
        cols: u64,
        transpose: bool,
        dtype: ElemType,
    ) -> MatrixLayout {
        let ld = match order {
            Order::RowMajor => cols,
            Order::ColumnMajor => rows,
        };
        MatrixLayout {
            order,
            num_rows: rows,
            num_cols: cols,
            batch_size: 1,
            leading_dim_stride: ld,
            batch_stride: rows * cols,
            transpose,
            dtype,
        }
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

    /// Buffer big enough for every element `layout` addresses over `batch` batches, filled with
    /// pseudo-random values of its type (sums of them round differently in each order).
    fn random_buffer(l: &MatrixLayout, batch: u64, seed: &mut u64) -> Vec<u8> {
        let mut last = 0;
        for b in 0..batch {
            for r in 0..l.num_rows {
                for c in 0..l.num_cols {
                    last = last.max(l.offset(b, r, c) + 1);
                }
            }
        }
        let mut buf = vec![0u8; (last * l.dtype.size()) as usize];
        for i in 0..last {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = ((*seed >> 33) % 2001) as f64 / 1000.0 - 1.0;
            let v = match l.dtype {
                ElemType::S8 | ElemType::S32 => (x * 100.0).round(),
                _ => x * 3.7,
            };
            put(&mut buf, l.dtype, i, v);
        }
        buf
    }

    /// The fast path against the reference loop, bit for bit: every order and transpose of each
    /// operand and of the output, sizes on both sides of the 4 x 16 register blocks, batches with
    /// padded strides, every compute type with its operand types, alpha and beta, and one size big
    /// enough to split rows over threads.
    #[test]
    fn the_fast_path_matches_the_reference_loop_bit_for_bit() {
        let mut seed = 17u64;
        let sizes: [(u64, u64, u64); 7] = [
            (1, 1, 1),
            (3, 5, 2),
            (4, 16, 7),
            (5, 17, 1),
            (9, 33, 13),
            (2, 3, 0),
            (70, 75, 64),
        ];
        let types = [
            (ElemType::F32, ElemType::F32, ElemType::F32),
            (ElemType::F16, ElemType::F16, ElemType::F32),
            (ElemType::BF16, ElemType::BF16, ElemType::BF16),
            (ElemType::F64, ElemType::F64, ElemType::F64),
            (ElemType::S8, ElemType::S32, ElemType::S32),
            (ElemType::S32, ElemType::F32, ElemType::S32),
        ];
        let mut cases = 0;
        for (ti, &(operand, output, compute)) in types.iter().enumerate() {
            for (si, &(m, n, k)) in sizes.iter().enumerate() {
                let variant = ti + si;
                let orders = [Order::RowMajor, Order::ColumnMajor];
                let lo = orders[variant % 2];
                let ro = orders[(variant / 2) % 2];
                let oo = orders[(variant / 4) % 2];
                let (lt, rt, ot) = (variant % 3 == 0, variant % 5 == 1, variant % 7 == 2);
                let batch = 1 + (variant % 3) as u64;
                let (lr, lc) = if lt { (k, m) } else { (m, k) };
                let (rr, rc) = if rt { (n, k) } else { (k, n) };
                let (or, oc) = if ot { (n, m) } else { (m, n) };
                let mut l = layout(lo, lr, lc, lt, operand);
                let mut r = layout(ro, rr, rc, rt, operand);
                let mut o = layout(oo, or, oc, ot, output);
                for x in [&mut l, &mut r, &mut o] {
                    x.batch_size = batch;
                    x.leading_dim_stride += 1;
                    x.batch_stride = (x.leading_dim_stride + 1) * x.num_rows.max(x.num_cols) + 3;
                }
                let mut cfg = config(l, r, o, compute);
                cfg.alpha_real = if compute == ElemType::S32 { 3.0 } else { 0.75 };
                cfg.beta = [0.0, 1.0, -0.5][variant % 3];
                if compute == ElemType::S32 && output == ElemType::F32 {
                    // An s32 accumulator reads an old output only as an integer (an error for
                    // f32 outputs, pinned by the test above).
                    cfg.beta = 0.0;
                }
                let lhs = random_buffer(&l, batch, &mut seed);
                let rhs = random_buffer(&r, batch, &mut seed);
                let out0 = random_buffer(&o, batch, &mut seed);
                let (mut fast_out, mut ref_out) = (out0.clone(), out0);
                assert_eq!(gemm(&cfg, &lhs, &rhs, &mut fast_out), Ok(()));
                assert_eq!(gemm_reference(&cfg, &lhs, &rhs, &mut ref_out), Ok(()));
                assert!(
                    fast_out == ref_out,
                    "fast path differs from the reference for {cfg:?}"
                );
                cases += 1;
            }
        }
        assert_eq!(cases, types.len() * sizes.len());
    }

    /// Operands whose packed copies would dwarf their buffers (stride 0: every row the same
    /// memory) take the reference loop, with the same result and no M x K allocation.
    #[test]
    fn a_broadcast_operand_takes_the_reference_loop() {
        let mut l = layout(Order::RowMajor, 4096, 2, false, ElemType::F32);
        l.leading_dim_stride = 0;
        let r = layout(Order::RowMajor, 2, 1, false, ElemType::F32);
        let o = layout(Order::RowMajor, 4096, 1, false, ElemType::F32);
        let cfg = config(l, r, o, ElemType::F32);
        let lhs: Vec<u8> = [1.5f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let rhs: Vec<u8> = [4.0f32, 0.25]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert!(!fast::<f32>(&cfg, &lhs, &rhs, &mut vec![0u8; 4096 * 4]));
        let mut out = vec![0u8; 4096 * 4];
        assert_eq!(gemm(&cfg, &lhs, &rhs, &mut out), Ok(()));
        assert!((0..4096).all(|i| get(&out, ElemType::F32, i) == 6.5));
    }
}
