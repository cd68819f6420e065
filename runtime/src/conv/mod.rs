//! The convolution thunk on host copies of the buffers, as an implicit GEMM on the runtime's
//! host gemm ([`crate::gemm`], bounded by the same deadline as a kernel launch): the emulated
//! device's implementation and, until cuDNN is wired, the CUDA device's (docs/runtime.md
//! "Convolution").
//!
//! The thunk's descriptor describes the forward convolution `y = x * w` (input x, filter w,
//! output y). For feature group `g`, rows are (batch, output position) pairs and the `K` columns
//! of the im2col matrix are (filter tap, input feature of the group) pairs:
//! - FORWARD: `Y_g = im2col(x)_g · W_g`;
//! - BACKWARD_FILTER: `dW_g = im2col(x)_g^T · dY_g`;
//! - BACKWARD_DATA: `dX = col2im(dY_g · W_g^T)` (each column entry added back to the input
//!   element it was read from).
//!
//! Rows are processed in chunks of at most [`CHUNK_ELEMENTS`] im2col elements (at least one
//! row), so the host memory is bounded by the arrays' sizes, not by the product of window and
//! output sizes. Products accumulate in f32 (f64 for f64 arrays) in the gemm's fixed order;
//! padding and dilation holes contribute zero and are never read. The result is multiplied by
//! `conv_result_scale` and rounded once to the element type.
use crate::device::{host_len, Device};
use crate::error::{Error, Result};
use crate::gemm::{self, Deadline};
use crate::thunks::{
    ConvGeometry, ConvKind, ConvThunk, ElemType, ElemTypeExt, GemmConfig, MatrixLayout, Order,
};

#[cfg(test)]
mod tests;

/// The device addresses and sizes of a convolution thunk's operands and result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvBuffers {
    /// `operand_buffers[0]` and `[1]`: (address, bytes).
    pub operands: [(u64, u64); 2],
    /// `result_buffers[0]`.
    pub result: (u64, u64),
}

/// The most im2col elements one chunk of rows holds (16 MiB of f32).
pub const CHUNK_ELEMENTS: usize = 1 << 22;

/// Runs `thunk` on host copies of its buffers on `device`.
pub fn host_convolution<D: Device + ?Sized>(
    device: &D,
    thunk: &ConvThunk,
    buffers: ConvBuffers,
    deadline: Option<Deadline>,
) -> Result<()> {
    let read = |(addr, size): (u64, u64)| -> Result<Vec<u8>> {
        let mut v = vec![0u8; host_len(size, "convolution operand")?];
        device.read(addr, &mut v)?;
        Ok(v)
    };
    let a = read(buffers.operands[0])?;
    let b = read(buffers.operands[1])?;
    let mut out = vec![0u8; host_len(buffers.result.1, "convolution result")?];
    execute_into(thunk, &a, &b, &mut out, deadline)?;
    device.write(buffers.result.0, &out)
}

/// The result of `thunk` for its operands' bytes (sizes validated at load) into `out`, which
/// must be the result's size (every byte is written): the emulated device passes its own
/// memory, so the result needs no host buffer.
pub fn execute_into(
    thunk: &ConvThunk,
    op0: &[u8],
    op1: &[u8],
    out: &mut [u8],
    deadline: Option<Deadline>,
) -> Result<()> {
    execute_chunked(
        thunk,
        op0,
        op1,
        out,
        deadline,
        (CHUNK_ELEMENTS, gemm::host_cores()),
    )
}

/// [`execute_into`] with chunks of at most `split.0` im2col elements (at least one row) and the
/// forward product's rows over at most `split.1` threads (neither changes the bytes).
fn execute_chunked(
    thunk: &ConvThunk,
    op0: &[u8],
    op1: &[u8],
    out: &mut [u8],
    deadline: Option<Deadline>,
    split: (usize, usize),
) -> Result<()> {
    if thunk.dtype == ElemType::F64 {
        let v = run::<f64>(thunk, op0, op1, deadline, split)?;
        encode_into(thunk.dtype, &v, out)
    } else {
        let v = run::<f32>(thunk, op0, op1, deadline, split)?;
        encode_into(thunk.dtype, &v, out)
    }
}

/// The compute type: f32, or f64 for f64 arrays.
trait Real:
    bytemuck::Pod + Default + Send + Sync + std::ops::AddAssign + std::ops::Mul<Output = Self>
{
    const TYPE: ElemType;
    fn of_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn from_bytes(b: &[u8]) -> Vec<Self>;
}

impl Real for f32 {
    const TYPE: ElemType = ElemType::F32;
    fn of_f64(v: f64) -> f32 {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_bytes(b: &[u8]) -> Vec<f32> {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
}

impl Real for f64 {
    const TYPE: ElemType = ElemType::F64;
    fn of_f64(v: f64) -> f64 {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_bytes(b: &[u8]) -> Vec<f64> {
        b.chunks_exact(8)
            .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect()
    }
}

/// The elements of an array of `t` in the compute type.
fn decode<T: Real>(t: ElemType, b: &[u8]) -> Vec<T> {
    match t {
        ElemType::F16 => b
            .chunks_exact(2)
            .map(|c| T::of_f64(half::f16::from_le_bytes([c[0], c[1]]).to_f64()))
            .collect(),
        ElemType::BF16 => b
            .chunks_exact(2)
            .map(|c| T::of_f64(half::bf16::from_le_bytes([c[0], c[1]]).to_f64()))
            .collect(),
        ElemType::F32 => f32::from_bytes(b)
            .into_iter()
            .map(|v| T::of_f64(f64::from(v)))
            .collect(),
        _ => f64::from_bytes(b).into_iter().map(T::of_f64).collect(),
    }
}

/// `v` rounded once to `t`, into `out` (exactly `v`'s length in `t`).
fn encode_into<T: Real>(t: ElemType, v: &[T], out: &mut [u8]) -> Result<()> {
    let size = t.size() as usize;
    if out.len() != v.len() * size {
        return Err(Error::internal(format!(
            "convolution computed {} elements for a result of {} bytes",
            v.len(),
            out.len()
        )));
    }
    let chunks = out.chunks_exact_mut(size).zip(v);
    match t {
        ElemType::F16 => chunks
            .for_each(|(o, x)| o.copy_from_slice(&half::f16::from_f64(x.to_f64()).to_le_bytes())),
        ElemType::BF16 => chunks
            .for_each(|(o, x)| o.copy_from_slice(&half::bf16::from_f64(x.to_f64()).to_le_bytes())),
        ElemType::F32 => {
            chunks.for_each(|(o, x)| o.copy_from_slice(&(x.to_f64() as f32).to_le_bytes()))
        }
        _ => chunks.for_each(|(o, x)| o.copy_from_slice(&x.to_f64().to_le_bytes())),
    }
    Ok(())
}

/// Where the rows and columns of the im2col matrix are in x, w and y.
struct Plan {
    /// Output positions per batch entry (product of the output's spatial sizes).
    positions: usize,
    /// Filter taps (product of the window sizes).
    taps: usize,
    /// For each spatial dimension, for each (output index, tap index): the input element
    /// offset along it, or `None` for padding or a dilation hole.
    reach: Vec<Vec<Option<usize>>>,
    /// Spatial part of y's offset per output position.
    y_pos: Vec<usize>,
    /// Spatial part of w's offset per tap.
    w_tap: Vec<usize>,
    /// The window's size along each spatial dimension.
    k_sizes: Vec<usize>,
    /// The output's size along each spatial dimension.
    out_sizes: Vec<usize>,
}

fn plan(g: &ConvGeometry) -> Result<Plan> {
    let n = |v: u64| host_len(v, "convolution size");
    let mut out_sizes = Vec::new();
    let mut k_sizes = Vec::new();
    let mut reach = Vec::new();
    for s in &g.spatial {
        let (o, k) = (n(s.output)?, n(s.kernel)?);
        let mut table = Vec::with_capacity(o.saturating_mul(k));
        for oi in 0..o {
            for kw in 0..k {
                // The filter element kw meets window offset k (reversed: from the far end).
                let k_off = if s.reversed { k - 1 - kw } else { kw } as i128;
                let u = oi as i128 * i128::from(s.stride) - i128::from(s.pad_low)
                    + k_off * i128::from(s.rhs_dilation);
                let d = i128::from(s.lhs_dilation);
                let hit = (u >= 0 && u % d == 0 && u / d < i128::from(s.input))
                    .then(|| (u / d) as usize * s.strides[0] as usize);
                table.push(hit);
            }
        }
        out_sizes.push(o);
        k_sizes.push(k);
        reach.push(table);
    }
    let spatial_offset = |d: &[usize], which: usize| -> usize {
        d.iter()
            .zip(&g.spatial)
            .map(|(&i, s)| i * s.strides[which] as usize)
            .sum()
    };
    let mut y_pos = Vec::new();
    walk_into(&out_sizes, &mut y_pos, |d| spatial_offset(d, 2));
    let mut w_tap = Vec::new();
    walk_into(&k_sizes, &mut w_tap, |d| spatial_offset(d, 1));
    Ok(Plan {
        positions: out_sizes.iter().product(),
        taps: k_sizes.iter().product(),
        reach,
        y_pos,
        w_tap,
        k_sizes,
        out_sizes,
    })
}

impl Plan {
    /// The x offsets (spatial part) of every tap of output position `p`, `None` where the
    /// tap falls on padding or a hole; `digits` is scratch (no allocation per row).
    fn taps_of(&self, p: usize, digits: &mut Vec<usize>, out: &mut Vec<Option<usize>>) {
        out.clear();
        digits.clear();
        let mut rest = p;
        for &o in self.out_sizes.iter().rev() {
            digits.push(rest % o.max(1));
            rest /= o.max(1);
        }
        digits.reverse();
        walk_into(&self.k_sizes, out, |ks| {
            let mut off = Some(0usize);
            for (d, (&kd, &od)) in ks.iter().zip(digits.iter()).enumerate() {
                off = match (off, self.reach[d][od * self.k_sizes[d] + kd]) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
            }
            off
        });
    }
}

/// `f` of every row-major multi-index over `sizes`, pushed onto `out` in order (the index
/// lives on the stack for up to 8 dimensions).
fn walk_into<T>(sizes: &[usize], out: &mut Vec<T>, mut f: impl FnMut(&[usize]) -> T) {
    let mut small = [0usize; 8];
    let mut big = Vec::new();
    let digits: &mut [usize] = if sizes.len() <= small.len() {
        &mut small[..sizes.len()]
    } else {
        big.resize(sizes.len(), 0);
        &mut big
    };
    let total: usize = sizes.iter().product();
    for _ in 0..total {
        out.push(f(digits));
        for d in (0..sizes.len()).rev() {
            digits[d] += 1;
            if digits[d] < sizes[d] {
                break;
            }
            digits[d] = 0;
        }
    }
}

/// A row-major `rows x cols` gemm operand of the compute type.
fn layout<T: Real>(rows: usize, cols: usize, transpose: bool) -> MatrixLayout {
    MatrixLayout::packed(
        Order::RowMajor,
        rows as u64,
        cols as u64,
        1,
        transpose,
        T::TYPE,
    )
}

/// `op(a) · op(b)` into `c` (`m x n` elements; added to them when `accumulate`) on the host
/// gemm, on the operands' own bytes, with `threads` threads (0: the machine's).
fn gemm<T: Real>(
    a: (&[T], MatrixLayout),
    b: (&[T], MatrixLayout),
    (m, n, k): (usize, usize, usize),
    c: &mut [T],
    accumulate: bool,
    threads: usize,
    deadline: Option<Deadline>,
) -> Result<()> {
    let cfg = GemmConfig {
        lhs: a.1,
        rhs: b.1,
        output: layout::<T>(m, n, false),
        alpha_real: 1.0,
        alpha_imag: 0.0,
        beta: if accumulate { 1.0 } else { 0.0 },
        compute_type: T::TYPE,
        operand_precisions: Vec::new(),
        m: m as u64,
        n: n as u64,
        k: k as u64,
        batch: 1,
    };
    let mut options = gemm::Options::machine();
    if threads > 0 {
        options.threads = threads;
    }
    gemm::gemm_options_until(
        &cfg,
        bytemuck::cast_slice(a.0),
        bytemuck::cast_slice(b.0),
        bytemuck::cast_slice_mut(c),
        options,
        deadline,
    )
}

/// Output rows below which the forward convolution runs on the calling thread (a thread costs
/// tens of microseconds to start).
const PARALLEL_MIN_ROWS: usize = 512;

/// Offsets of y's (or x's) batch-and-feature part.
fn bf(strides: [u64; 2], b: usize, f: usize) -> usize {
    b * strides[0] as usize + f * strides[1] as usize
}

fn run<T: Real>(
    t: &ConvThunk,
    op0: &[u8],
    op1: &[u8],
    deadline: Option<Deadline>,
    (chunk_elements, threads): (usize, usize),
) -> Result<Vec<T>> {
    let g = &t.geometry;
    let p = plan(g)?;
    let (cg, og, groups) = (
        host_len(g.in_per_group(), "convolution features")?,
        host_len(g.out_per_group(), "convolution features")?,
        host_len(g.groups, "convolution groups")?,
    );
    let batch = host_len(g.batch, "convolution batch")?;
    let k = p.taps * cg;
    let rows = batch * p.positions;
    let chunk = (chunk_elements / k.max(1)).max(1);
    let a = decode::<T>(t.dtype, op0);
    let b = decode::<T>(t.dtype, op1);
    let ctx = Ctx {
        g,
        p: &p,
        cg,
        og,
        k,
    };
    let (w_len, x_len, y_len) = (
        g.out_features as usize * cg * p.taps,
        batch
            * g.in_features as usize
            * g.spatial
                .iter()
                .map(|s| s.input as usize)
                .product::<usize>(),
        batch * g.out_features as usize * p.positions,
    );
    let mut result = match t.kind {
        ConvKind::Forward => vec![T::default(); y_len],
        ConvKind::BackwardData => vec![T::default(); x_len],
        ConvKind::BackwardFilter => vec![T::default(); w_len],
    };
    // Scratch reused across chunks and groups: one allocation each per execution.
    let mut s = Scratch::default();
    for gi in 0..groups {
        // Group gi's filter as a k x og matrix (the filter is an operand of two kinds).
        let w = match t.kind {
            ConvKind::BackwardFilter => Vec::new(),
            _ => ctx.filter(&b, gi),
        };
        if t.kind == ConvKind::Forward {
            let y = ctx.forward(&a, &w, gi, (rows, chunk, threads), deadline)?;
            ctx.scatter_y(&mut result, &y, gi, 0..rows);
            continue;
        }
        let mut dw = vec![
            T::default();
            if t.kind == ConvKind::BackwardFilter {
                k * og
            } else {
                0
            }
        ];
        let mut start = 0;
        while start < rows {
            Deadline::check(deadline)?;
            let r = chunk.min(rows - start);
            let span = start..start + r;
            if t.kind == ConvKind::BackwardFilter {
                ctx.im2col(&a, gi, span.clone(), &mut s);
                ctx.gather_y(&b, gi, span, &mut s.prod);
                let lhs = (&s.col[..], layout::<T>(r, k, true));
                let rhs = (&s.prod[..], layout::<T>(r, og, false));
                gemm(lhs, rhs, (k, og, r), &mut dw, start > 0, 1, deadline)?;
            } else {
                ctx.gather_y(&a, gi, span.clone(), &mut s.prod);
                s.col.clear();
                s.col.resize(r * k, T::default());
                let lhs = (&s.prod[..], layout::<T>(r, og, false));
                let rhs = (&w[..], layout::<T>(k, og, true));
                gemm(lhs, rhs, (r, k, og), &mut s.col, false, 0, deadline)?;
                ctx.col2im(&mut result, &s.col, gi, span, &mut s.taps);
            }
            start += r;
        }
        if t.kind == ConvKind::BackwardFilter {
            ctx.scatter_w(&mut result, &dw, gi);
        }
    }
    if t.scale != 1.0 {
        let s = T::of_f64(t.scale);
        result.iter_mut().for_each(|v| *v = *v * s);
    }
    Ok(result)
}

/// Buffers a convolution reuses from chunk to chunk.
#[derive(Default)]
struct Scratch<T> {
    /// A chunk's im2col (or column-gradient) matrix.
    col: Vec<T>,
    /// A chunk's product (or gathered output gradient).
    prod: Vec<T>,
    /// A row's taps.
    taps: Taps,
}

/// A row's tap offsets and its position's digits (`Plan::taps_of`), kept from row to row.
#[derive(Default)]
struct Taps {
    offsets: Vec<Option<usize>>,
    digits: Vec<usize>,
}

/// What the im2col and scatter steps of one convolution share.
struct Ctx<'a> {
    g: &'a ConvGeometry,
    p: &'a Plan,
    /// Input and output features per group.
    cg: usize,
    og: usize,
    /// im2col columns: taps x input features per group.
    k: usize,
}

impl Ctx<'_> {
    /// Group `gi`'s forward product `im2col(x)_g · W_g` (`rows x og`, row-major): the rows
    /// split into one contiguous range per thread (at most `threads`, each at least
    /// [`PARALLEL_MIN_ROWS`]), each range in chunks of `chunk` rows on its own thread with its
    /// own scratch and a one-thread gemm. Every output element is one dot
    /// product over the whole of K in the gemm's fixed order, so the bytes do not depend on the
    /// split.
    fn forward<T: Real>(
        &self,
        x: &[T],
        w: &[T],
        gi: usize,
        (rows, chunk, threads): (usize, usize, usize),
        deadline: Option<Deadline>,
    ) -> Result<Vec<T>> {
        let (k, og) = (self.k, self.og);
        let mut y = vec![T::default(); rows * og];
        let per = rows.div_ceil(threads.max(1)).max(PARALLEL_MIN_ROWS);
        let range = |first: usize, y: &mut [T]| -> Result<()> {
            let mut s = Scratch::default();
            let end = first + y.len() / og.max(1);
            let mut start = first;
            while start < end {
                Deadline::check(deadline)?;
                let r = chunk.min(end - start);
                self.im2col(x, gi, start..start + r, &mut s);
                let lhs = (&s.col[..], layout::<T>(r, k, false));
                let rhs = (w, layout::<T>(k, og, false));
                let out = &mut y[(start - first) * og..(start - first + r) * og];
                gemm(lhs, rhs, (r, og, k), out, false, 1, deadline)?;
                start += r;
            }
            Ok(())
        };
        if per >= rows || og == 0 {
            range(0, &mut y)?;
            return Ok(y);
        }
        std::thread::scope(|sc| {
            let jobs: Vec<_> = y
                .chunks_mut(per * og)
                .enumerate()
                .map(|(i, part)| sc.spawn(move || range(i * per, part)))
                .collect();
            jobs.into_iter().try_for_each(|j| {
                j.join()
                    .map_err(|_| Error::internal("convolution worker thread panicked"))?
            })
        })?;
        Ok(y)
    }

    /// Rows `rows` of group `gi`'s im2col matrix of x (row-major, `k` columns) into `s.col`.
    fn im2col<T: Real>(
        &self,
        x: &[T],
        gi: usize,
        rows: std::ops::Range<usize>,
        s: &mut Scratch<T>,
    ) {
        s.col.clear();
        s.col.resize(rows.len() * self.k, T::default());
        let fs = self.g.x_strides[1] as usize;
        let t = &mut s.taps;
        for (ri, row) in rows.enumerate() {
            let (n, pos) = (row / self.p.positions, row % self.p.positions);
            self.p.taps_of(pos, &mut t.digits, &mut t.offsets);
            let line = &mut s.col[ri * self.k..(ri + 1) * self.k];
            let base = bf(self.g.x_strides, n, gi * self.cg);
            for (ti, off) in t.offsets.iter().enumerate() {
                let Some(off) = off else { continue };
                let dst = &mut line[ti * self.cg..(ti + 1) * self.cg];
                let at = base + off;
                // Features contiguous (NHWC): one copy per tap.
                if fs == 1 {
                    if let Some(src) = x.get(at..at + self.cg) {
                        dst.copy_from_slice(src);
                        continue;
                    }
                }
                for (c, d) in dst.iter_mut().enumerate() {
                    *d = x.get(at + c * fs).copied().unwrap_or_default();
                }
            }
        }
    }

    /// Adds rows `rows` of group `gi`'s column matrix back into dx (the transpose of im2col).
    fn col2im<T: Real>(
        &self,
        dx: &mut [T],
        dcol: &[T],
        gi: usize,
        rows: std::ops::Range<usize>,
        t: &mut Taps,
    ) {
        let fs = self.g.x_strides[1] as usize;
        for (ri, row) in rows.enumerate() {
            let (n, pos) = (row / self.p.positions, row % self.p.positions);
            self.p.taps_of(pos, &mut t.digits, &mut t.offsets);
            let base = bf(self.g.x_strides, n, gi * self.cg);
            for (ti, off) in t.offsets.iter().enumerate() {
                let Some(off) = off else { continue };
                for c in 0..self.cg {
                    let i = base + off + c * fs;
                    if let (Some(d), Some(&v)) =
                        (dx.get_mut(i), dcol.get(ri * self.k + ti * self.cg + c))
                    {
                        *d += v;
                    }
                }
            }
        }
    }

    /// Group `gi`'s filter as a `k x og` matrix (rows: tap, input feature).
    fn filter<T: Real>(&self, w: &[T], gi: usize) -> Vec<T> {
        let mut m = vec![T::default(); self.k * self.og];
        for (ti, &tap) in self.p.w_tap.iter().enumerate() {
            for c in 0..self.cg {
                for o in 0..self.og {
                    let i = bf(self.g.w_strides, c, gi * self.og + o) + tap;
                    m[(ti * self.cg + c) * self.og + o] = w.get(i).copied().unwrap_or_default();
                }
            }
        }
        m
    }

    /// Writes group `gi`'s filter gradient (`k x og`) into dw.
    fn scatter_w<T: Real>(&self, dw: &mut [T], m: &[T], gi: usize) {
        for (ti, &tap) in self.p.w_tap.iter().enumerate() {
            for c in 0..self.cg {
                for o in 0..self.og {
                    let i = bf(self.g.w_strides, c, gi * self.og + o) + tap;
                    if let (Some(d), Some(&v)) =
                        (dw.get_mut(i), m.get((ti * self.cg + c) * self.og + o))
                    {
                        *d = v;
                    }
                }
            }
        }
    }

    /// Offset in y of row `row`'s first output feature of group `gi`.
    fn y_base(&self, row: usize, gi: usize) -> usize {
        let (n, pos) = (row / self.p.positions, row % self.p.positions);
        bf(self.g.y_strides, n, gi * self.og) + self.p.y_pos[pos]
    }

    /// Rows `rows` of group `gi`'s part of y as an `r x og` matrix, into `m`.
    fn gather_y<T: Real>(&self, y: &[T], gi: usize, rows: std::ops::Range<usize>, m: &mut Vec<T>) {
        m.clear();
        let fs = self.g.y_strides[1] as usize;
        for row in rows {
            let base = self.y_base(row, gi);
            m.extend((0..self.og).map(|o| y.get(base + o * fs).copied().unwrap_or_default()));
        }
    }

    /// Writes an `r x og` matrix into rows `rows` of group `gi`'s part of y.
    fn scatter_y<T: Real>(&self, y: &mut [T], m: &[T], gi: usize, rows: std::ops::Range<usize>) {
        let fs = self.g.y_strides[1] as usize;
        for (ri, row) in rows.enumerate() {
            let base = self.y_base(row, gi);
            let Some(src) = m.get(ri * self.og..(ri + 1) * self.og) else {
                return;
            };
            // Features contiguous (NHWC): one copy per row.
            if fs == 1 {
                if let Some(dst) = y.get_mut(base..base + self.og) {
                    dst.copy_from_slice(src);
                    continue;
                }
            }
            for (o, &v) in src.iter().enumerate() {
                if let Some(d) = y.get_mut(base + o * fs) {
                    *d = v;
                }
            }
        }
    }
}
