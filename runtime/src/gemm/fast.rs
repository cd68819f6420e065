//! The fast path: per batch, `op(lhs)` is packed into `mr`-row panels and `op(rhs)` into
//! `nr`-column panels of the compute type, the micro-kernel (`kernels`) computes each `mr x nr`
//! block of the product over the whole K (no split of K: every element is one accumulator
//! summed from zero in increasing k order), row panels split over the threads, and the epilogue
//! (`alpha`, `beta`, conversion) runs element by element in the reference's order.
use std::num::Wrapping;
use std::ops::{Add, Mul};

use super::kernels::{self, Kernel};
use super::{load, load_i, store, Acc, Options};
use crate::thunks::{ElemType, ElemTypeExt, GemmConfig, MatrixLayout, Order};

/// A compute type of the fast path: how an operand element is read into it (exactly as the
/// reference loop reads it), how the accumulator is written back, and its vector kernels.
pub(super) trait Compute:
    Copy + Send + Sync + Add<Output = Self> + Mul<Output = Self> + 'static
{
    const ZERO: Self;
    /// Element `i` of `buf` (of type `t`) in this compute type, `None` for a type it cannot read
    /// (`pack` then declines before anything is written).
    fn read(buf: &[u8], t: ElemType, i: u64) -> Option<Self>;
    /// `alpha * acc (+ beta * old)` converted for the output, as the reference loop computes it.
    fn finish(cfg: &GemmConfig, acc: Self, out: &[u8], oi: u64) -> Option<Acc>;
    /// [`Compute::finish`] and `store` of a contiguous run of `vals` into `run` (its bytes) when
    /// they are one multiply: `beta == 0` and the output is of this very type (then `finish`'s
    /// `alpha * acc` is stored as is, no conversion). `false` (nothing written) otherwise.
    fn store_scaled(cfg: &GemmConfig, vals: &[Self], run: &mut [u8]) -> bool;
    /// Its hand-written AVX2 kernel, if it has one (else the portable loop built for AVX2 runs).
    const AVX2: Option<Kernel<Self>>;
    /// Its hand-written AVX-512 kernel, likewise.
    const AVX512: Option<Kernel<Self>>;
}

impl Compute for f32 {
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn read(buf: &[u8], t: ElemType, i: u64) -> Option<f32> {
        load(buf, t, i).map(|v| v as f32)
    }
    #[inline(always)]
    fn finish(cfg: &GemmConfig, acc: f32, out: &[u8], oi: u64) -> Option<Acc> {
        let mut r = cfg.alpha_real as f32 * acc;
        if cfg.beta != 0.0 {
            r += cfg.beta as f32 * (load(out, cfg.output.dtype, oi)? as f32);
        }
        Some(Acc::F(f64::from(r)))
    }
    #[inline(always)]
    fn store_scaled(cfg: &GemmConfig, vals: &[f32], run: &mut [u8]) -> bool {
        if cfg.beta != 0.0 || cfg.output.dtype != ElemType::F32 || run.len() != vals.len() * 4 {
            return false;
        }
        let alpha = cfg.alpha_real as f32;
        for (cell, &v) in run.chunks_exact_mut(4).zip(vals) {
            cell.copy_from_slice(&(alpha * v).to_le_bytes());
        }
        true
    }
    const AVX2: Option<Kernel<f32>> = Some(kernels::F32_AVX2);
    const AVX512: Option<Kernel<f32>> = Some(kernels::F32_AVX512);
}

impl Compute for f64 {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn read(buf: &[u8], t: ElemType, i: u64) -> Option<f64> {
        load(buf, t, i)
    }
    #[inline(always)]
    fn finish(cfg: &GemmConfig, acc: f64, out: &[u8], oi: u64) -> Option<Acc> {
        let mut r = cfg.alpha_real * acc;
        if cfg.beta != 0.0 {
            r += cfg.beta * load(out, cfg.output.dtype, oi)?;
        }
        Some(Acc::F(r))
    }
    #[inline(always)]
    fn store_scaled(cfg: &GemmConfig, vals: &[f64], run: &mut [u8]) -> bool {
        if cfg.beta != 0.0 || cfg.output.dtype != ElemType::F64 || run.len() != vals.len() * 8 {
            return false;
        }
        let alpha = cfg.alpha_real;
        for (cell, &v) in run.chunks_exact_mut(8).zip(vals) {
            cell.copy_from_slice(&(alpha * v).to_le_bytes());
        }
        true
    }
    const AVX2: Option<Kernel<f64>> = Some(kernels::F64_AVX2);
    const AVX512: Option<Kernel<f64>> = Some(kernels::F64_AVX512);
}

impl Compute for Wrapping<i32> {
    const ZERO: Wrapping<i32> = Wrapping(0);
    #[inline(always)]
    fn read(buf: &[u8], t: ElemType, i: u64) -> Option<Wrapping<i32>> {
        load_i(buf, t, i).map(Wrapping)
    }
    #[inline(always)]
    fn finish(cfg: &GemmConfig, acc: Wrapping<i32>, out: &[u8], oi: u64) -> Option<Acc> {
        let mut r = (cfg.alpha_real as i32).wrapping_mul(acc.0);
        if cfg.beta != 0.0 {
            let old = load_i(out, cfg.output.dtype, oi)?;
            r = r.wrapping_add((cfg.beta as i32).wrapping_mul(old));
        }
        Some(Acc::I(r))
    }
    fn store_scaled(_: &GemmConfig, _: &[Wrapping<i32>], _: &mut [u8]) -> bool {
        false
    }
    // The portable loop compiled for AVX2 vectorizes the wrapping i32 ops as they are.
    const AVX2: Option<Kernel<Wrapping<i32>>> = None;
    const AVX512: Option<Kernel<Wrapping<i32>>> = None;
}

/// Below this many multiply-adds per batch one thread does the work (spawning costs more).
pub(super) const PARALLEL_MIN: usize = 1 << 18;

/// How each batch's work is split over threads, decided from the shape alone before anything
/// runs (the results do not depend on it; the tests pin it, since they cannot see it otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    /// Threads that pack and multiply, each a run of `a_rows` rows; 1: all on the calling
    /// thread.
    pub threads: usize,
    /// Rows of A (whole `mr` panels) per thread; the padded M on one thread.
    pub a_rows: usize,
    /// Columns of B (whole `nr` panels) each packing thread packs; the padded N on one thread.
    pub b_cols: usize,
    /// Whether each thread also runs its rows' epilogue (rather than the calling thread after
    /// the product).
    pub split_epilogue: bool,
}

impl Plan {
    /// The plan for an `m x n x k` product in `mr x nr` blocks on up to `threads` threads, into
    /// an output of view `out`.
    pub(super) fn of(
        (m, n, k): (usize, usize, usize),
        (mr, nr): (usize, usize),
        out: View,
        threads: usize,
    ) -> Plan {
        let (mp, np) = (m.div_ceil(mr) * mr, n.div_ceil(nr) * nr);
        // K = 0 is no work, so it always runs on one thread (the split below packs `a_rows * k`
        // elements per thread, which needs k > 0).
        let work = m.saturating_mul(n).saturating_mul(k);
        let threads = if work < PARALLEL_MIN {
            1
        } else {
            threads.max(1)
        };
        // Whole row panels of A (so of C and of the output) per thread, whole column panels of B.
        let a_rows = (mp / mr).div_ceil(threads) * mr;
        if a_rows >= mp {
            // One thread, or one panel of rows (nothing to split).
            return Plan {
                threads: 1,
                a_rows: mp,
                b_cols: np,
                split_epilogue: false,
            };
        }
        Plan {
            threads: mp.div_ceil(a_rows),
            a_rows,
            b_cols: (np / nr).div_ceil(threads) * nr,
            // Contiguous output rows that do not overlap (row stride at least n) put the rows
            // of different threads in disjoint pieces of the buffer: each thread then also
            // runs its rows' epilogue (the order within an element is the same; elements do
            // not interact). Any other output layout gets the epilogue on the calling thread
            // afterwards, in the reference's order.
            split_epilogue: out.col == 1 && out.row >= n as u64,
        }
    }
}

/// Element `(r, c)` of `op(X)` of batch `b` is element `b * batch + r * row + c * col` of the
/// buffer (the same sum `MatrixLayout::offset` computes, with the transpose folded in).
#[derive(Clone, Copy)]
pub(super) struct View {
    batch: u64,
    row: u64,
    col: u64,
}

impl View {
    pub(super) fn of(l: &MatrixLayout) -> View {
        let (rs, cs) = match l.order {
            Order::RowMajor => (l.leading_dim_stride, 1),
            Order::ColumnMajor => (1, l.leading_dim_stride),
        };
        let (row, col) = if l.transpose { (cs, rs) } else { (rs, cs) };
        View {
            batch: l.batch_stride,
            row,
            col,
        }
    }

    /// The view of the transpose.
    fn t(self) -> View {
        View {
            row: self.col,
            col: self.row,
            ..self
        }
    }

    /// The index of element `(rows - 1, cols - 1)` of batch `batches - 1`, the largest one of a
    /// `batches x rows x cols` access (strides are unsigned), or `None` when it overflows.
    fn last(self, batches: u64, rows: usize, cols: usize) -> Option<u64> {
        let at = |n: u64, s: u64| n.saturating_sub(1).checked_mul(s);
        at(batches, self.batch)?
            .checked_add(at(rows as u64, self.row)?)?
            .checked_add(at(cols as u64, self.col)?)
    }

    fn start(self, b: u64) -> u64 {
        // Exact wherever it is used: `last` of the whole access was checked first. Only an
        // operand with K = 0, which is never read, goes unchecked (hence no overflow panic).
        b.wrapping_mul(self.batch)
    }
}

/// Whether every index of the access lies in a buffer of `len` bytes of `t`.
fn covers(v: View, batches: u64, rows: usize, cols: usize, t: ElemType, len: usize) -> bool {
    let elems = len as u64 / t.size().max(1);
    v.last(batches, rows, cols).is_some_and(|l| l < elems)
}

/// The fast path; `false` when it cannot run (the caller then runs the reference loop, which
/// reports the error if there is one). Everything that can fail (types, index ranges, packed
/// sizes) is checked before the first output write, so a `false` leaves the output untouched.
pub(super) fn run<T: Compute>(
    cfg: &GemmConfig,
    lhs: &[u8],
    rhs: &[u8],
    out: &mut [u8],
    options: Options,
    deadline: Option<super::Deadline>,
) -> crate::error::Result<bool> {
    let dims = (
        usize::try_from(cfg.m),
        usize::try_from(cfg.n),
        usize::try_from(cfg.k),
    );
    let (Ok(m), Ok(n), Ok(k)) = dims else {
        return Ok(false);
    };
    if m == 0 || n == 0 || cfg.batch == 0 {
        // Nothing to read or write, as in the reference loop.
        return Ok(true);
    }
    let kernel = kernels::select::<T>(options.isa);
    let (mr, nr) = (kernel.mr, kernel.nr);
    let (mp, np) = (m.div_ceil(mr) * mr, n.div_ceil(nr) * nr);
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
    if !bound(mp.checked_mul(k), lhs.len(), mr * k)
        || !bound(k.checked_mul(np), rhs.len(), nr * k)
        || !bound(mp.checked_mul(np), out.len(), mr * np + nr * mp)
    {
        return Ok(false);
    }
    let (av, bv, ov) = (
        View::of(&cfg.lhs),
        View::of(&cfg.rhs).t(),
        View::of(&cfg.output),
    );
    let (lt, rt, ot) = (cfg.lhs.dtype, cfg.rhs.dtype, cfg.output.dtype);
    // The operand types are checked by `pack` (before anything is written); an operand with
    // K = 0 is never read, so it needs no elements. The index ranges are checked here, whole,
    // so that no index computed below overflows.
    if !super::STORED.contains(&ot)
        || (k > 0 && !covers(av, cfg.batch, m, k, lt, lhs.len()))
        || (k > 0 && !covers(bv, cfg.batch, n, k, rt, rhs.len()))
        || !covers(ov, cfg.batch, m, n, ot, out.len())
    {
        return Ok(false);
    }
    let plan = Plan::of((m, n, k), (mr, nr), ov, options.threads);
    let (a_rows, b_cols) = (plan.a_rows, plan.b_cols);
    let osz = ot.size();
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut c = Vec::new();
    for batch in 0..cfg.batch {
        super::Deadline::check(deadline)?;
        // A in mr-row panels (`[panel][k][mr]`), B in nr-column panels (`[panel][k][nr]`), both
        // zero-padded to whole panels: the padding only feeds rows and columns never stored.
        a.clear();
        a.resize(mp * k, T::ZERO);
        b.clear();
        b.resize(k * np, T::ZERO);
        c.clear();
        c.resize(mp * np, T::ZERO);
        let (a0, b0, o0) = (av.start(batch), bv.start(batch), ov.start(batch));
        if plan.threads == 1 {
            let ok = pack::<T>(lhs, lt, av, a0, m, k, mr, &mut a)
                && pack::<T>(rhs, rt, bv, b0, n, k, nr, &mut b);
            if !ok {
                return Ok(false);
            }
            product(&kernel, &a, &b, &mut c, k, np);
            if !epilogue(cfg, &c, np, 0, m, n, ov, o0, out, 0) {
                return Ok(false);
            }
            continue;
        }
        // The packing split the same way. Every chunk starts at a panel holding a real row or
        // column (a multiple of mr below mp is below m), so the `min`s never go below one.
        let packed = std::thread::scope(|s| {
            let mut jobs = Vec::new();
            for (t, dst) in a.chunks_mut(a_rows * k).enumerate() {
                let r0 = t * a_rows;
                let rows = a_rows.min(m.saturating_sub(r0));
                let first = a0 + r0 as u64 * av.row;
                jobs.push(s.spawn(move || pack::<T>(lhs, lt, av, first, rows, k, mr, dst)));
            }
            for (t, dst) in b.chunks_mut(b_cols * k).enumerate() {
                let j0 = t * b_cols;
                let cols = b_cols.min(n.saturating_sub(j0));
                let first = b0 + j0 as u64 * bv.row;
                jobs.push(s.spawn(move || pack::<T>(rhs, rt, bv, first, cols, k, nr, dst)));
            }
            jobs.into_iter().all(|j| j.join().unwrap_or(false))
        });
        if !packed {
            return Ok(false);
        }
        // Each thread's rows of the output as its own slice when it runs their epilogue.
        let split = plan.split_epilogue;
        let mut pieces = Vec::new();
        if split {
            let mut rest = &mut *out;
            let mut at = 0u64;
            for t in 1..plan.threads {
                // Within the buffer: row t * a_rows < m starts below the checked last index.
                let cut = o0 + (t * a_rows) as u64 * ov.row;
                let Ok(len) = usize::try_from((cut - at) * osz) else {
                    return Ok(false);
                };
                let Some((head, tail)) = (len <= rest.len()).then(|| rest.split_at_mut(len)) else {
                    return Ok(false);
                };
                pieces.push((head, at));
                (rest, at) = (tail, cut);
            }
            pieces.push((rest, at));
        }
        let done = std::thread::scope(|s| {
            let mut jobs = Vec::new();
            let mut pieces = pieces.into_iter();
            let chunks = a.chunks(a_rows * k).zip(c.chunks_mut(a_rows * np));
            for (t, (a_part, c_part)) in chunks.enumerate() {
                let piece = pieces.next();
                let (b, kernel) = (&b, &kernel);
                let i0 = t * a_rows;
                let rows = a_rows.min(m.saturating_sub(i0));
                jobs.push(s.spawn(move || {
                    product(kernel, a_part, b, c_part, k, np);
                    match piece {
                        Some((piece, base)) => {
                            epilogue(cfg, c_part, np, i0, rows, n, ov, o0, piece, base)
                        }
                        None => true,
                    }
                }));
            }
            jobs.into_iter().all(|j| j.join().unwrap_or(false))
        });
        if !done || (!split && !epilogue(cfg, &c, np, 0, m, n, ov, o0, out, 0)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Packs rows `0..rows` x columns `0..cols` of the view from element `first` (element `(r, c)`
/// at `first + r * row + c * col` of `buf`, of type `t`) into `w`-row panels `[panel][c][w]`
/// of `dst`, leaving the padding rows of the last panel as they are; `false` (before anything
/// is read) for a view with no unit stride, which no layout has. The element type is
/// matched once here, so each element is one inlined decode of a fixed-size cell.
#[allow(clippy::too_many_arguments)]
fn pack<T: Compute>(
    buf: &[u8],
    t: ElemType,
    v: View,
    first: u64,
    rows: usize,
    cols: usize,
    w: usize,
    dst: &mut [T],
) -> bool {
    macro_rules! typed {
        ($($ty:ident: $sz:literal),*) => {
            match t {
                $(ElemType::$ty => pack_with::<T, $sz>(
                    |cell| T::read(cell, ElemType::$ty, 0),
                    buf,
                    v,
                    first,
                    rows,
                    cols,
                    w,
                    dst,
                ),)*
                _ => false,
            }
        };
    }
    typed!(F16: 2, BF16: 2, F32: 4, F64: 8, S8: 1, S32: 4)
}

/// The `count` cells of `SZ` bytes from element `first` on, or `None` past the end of `buf`.
#[inline(always)]
fn run_of<const SZ: usize>(buf: &[u8], first: u64, count: usize) -> Option<&[u8]> {
    let o = usize::try_from(first).ok()?.checked_mul(SZ)?;
    buf.get(o..o.checked_add(count.checked_mul(SZ)?)?)
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn pack_with<T: Copy, const SZ: usize>(
    read: impl Fn(&[u8]) -> Option<T>,
    buf: &[u8],
    v: View,
    start: u64,
    rows: usize,
    cols: usize,
    w: usize,
    dst: &mut [T],
) -> bool {
    if cols == 0 {
        return true;
    }
    // Every layout has a unit stride (its order's minor dimension), so the panel is walked along
    // it: by rows when the columns of a row are adjacent (each row one run of `cols` cells), by
    // columns when the rows are.
    let by_rows = v.col == 1;
    if !by_rows && v.row != 1 {
        return false;
    }
    for (p, panel) in dst.chunks_exact_mut(w * cols).enumerate() {
        let r0 = p * w;
        let height = w.min(rows.saturating_sub(r0));
        let first = start + r0 as u64 * v.row;
        // (run, slots): each run's cells go to every w-th slot of the panel from an offset.
        let ok = if by_rows {
            (0..height).all(|r| {
                run_of::<SZ>(buf, first + r as u64 * v.row, cols).is_some_and(|run| {
                    fill::<_, SZ>(&read, run, panel.iter_mut().skip(r).step_by(w))
                })
            })
        } else {
            panel.chunks_exact_mut(w).enumerate().all(|(c, slot)| {
                run_of::<SZ>(buf, first + c as u64 * v.col, height)
                    .is_some_and(|run| fill::<_, SZ>(&read, run, slot.iter_mut()))
            })
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Decodes the cells of `run` into `slots` in order.
#[inline(always)]
fn fill<'a, T: Copy + 'a, const SZ: usize>(
    read: &impl Fn(&[u8]) -> Option<T>,
    run: &[u8],
    slots: impl Iterator<Item = &'a mut T>,
) -> bool {
    run.chunks_exact(SZ)
        .zip(slots)
        .all(|(cell, slot)| read(cell).map(|x| *slot = x).is_some())
}

/// `c = a x b` for the row panels of `a` (`[panel][k][mr]`) and the rows of `c` (`mr` rows of
/// `np` per panel, row-major), `b` being packed `[panel][k][nr]`.
fn product<T: Compute>(kernel: &Kernel<T>, a: &[T], b: &[T], c: &mut [T], k: usize, np: usize) {
    let (mr, nr) = (kernel.mr, kernel.nr);
    if np == 0 {
        return;
    }
    if k == 0 {
        // Empty sums: zeros (as `c` already is).
        return;
    }
    for (a_panel, c_rows) in a.chunks_exact(mr * k).zip(c.chunks_exact_mut(mr * np)) {
        for (p, b_panel) in b.chunks_exact(nr * k).enumerate() {
            if let Some(tile) = c_rows.get_mut(p * nr..) {
                (kernel.block)(a_panel, b_panel, tile, np);
            }
        }
    }
}

/// The epilogue of rows `i0..i0 + rows` (`c` holds them from its first row) element by element
/// in the reference's order (rows, then columns), each old output read just before its element
/// is written (as the reference does, so even an output layout that maps two elements to one
/// address gives the reference's result). `out` is the output buffer from element `base` on;
/// `o0` is the batch's first element. The output type is matched once here.
#[allow(clippy::too_many_arguments)]
fn epilogue<T: Compute>(
    cfg: &GemmConfig,
    c: &[T],
    np: usize,
    i0: usize,
    rows: usize,
    n: usize,
    ov: View,
    o0: u64,
    out: &mut [u8],
    base: u64,
) -> bool {
    // The common case, a plain product into contiguous rows of its own type: one multiply per
    // element in a loop that vectorizes (the general path below matches the element types and
    // builds an `Acc` per element: in attention it cost twice the product's own kernel).
    if cfg.beta == 0.0 && ov.col == 1 {
        let sz = std::mem::size_of::<T>();
        let mut plain = true;
        let rows_ok = c.chunks_exact(np).take(rows).enumerate().all(|(li, row)| {
            let first = (o0 + (i0 + li) as u64 * ov.row).checked_sub(base);
            let Some(Ok(first)) = first.map(usize::try_from) else {
                return false;
            };
            let Some(run) = out.get_mut(first * sz..(first + n) * sz) else {
                return false;
            };
            plain = T::store_scaled(cfg, &row[..n], run);
            plain
        });
        if plain {
            return rows_ok;
        }
    }
    macro_rules! typed {
        ($($ty:ident: $sz:literal),*) => {
            match cfg.output.dtype {
                $(ElemType::$ty => epilogue_with::<T, $sz>(
                    c,
                    np,
                    (i0, rows),
                    n,
                    ov,
                    (o0, base),
                    out,
                    // The cell is the element: `finish` reads the old value from it, `store`
                    // writes the new one.
                    |cell, v| {
                        T::finish(cfg, v, cell, 0).and_then(|r| store(cell, ElemType::$ty, 0, r))
                    },
                ),)*
                _ => false,
            }
        };
    }
    typed!(F16: 2, BF16: 2, F32: 4, F64: 8, S8: 1, S32: 4)
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn epilogue_with<T: Compute, const SZ: usize>(
    c: &[T],
    np: usize,
    (i0, rows): (usize, usize),
    n: usize,
    ov: View,
    (o0, base): (u64, u64),
    out: &mut [u8],
    write: impl Fn(&mut [u8], T) -> Option<()>,
) -> bool {
    c.chunks_exact(np).take(rows).enumerate().all(|(li, row)| {
        let first = (o0 + (i0 + li) as u64 * ov.row).checked_sub(base);
        let Some(Ok(first)) = first.map(usize::try_from) else {
            return false;
        };
        let mut values = row.iter().take(n);
        if ov.col == 1 {
            // A contiguous output row: one slice, cells in order.
            let Some(run) = out.get_mut(first * SZ..(first + n) * SZ) else {
                return false;
            };
            return run
                .chunks_exact_mut(SZ)
                .all(|cell| values.next().is_some_and(|&v| write(cell, v).is_some()));
        }
        let Ok(stride) = usize::try_from(ov.col) else {
            return false;
        };
        values.enumerate().all(|(j, &v)| {
            let o = (first + j * stride) * SZ;
            out.get_mut(o..o + SZ)
                .is_some_and(|cell| write(cell, v).is_some())
        })
    })
}
