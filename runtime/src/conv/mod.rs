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
    let out = execute(thunk, &a, &b, deadline)?;
    if out.len() as u64 != buffers.result.1 {
        return Err(Error::internal(format!(
            "convolution wrote {} bytes into a result of {}",
            out.len(),
            buffers.result.1
        )));
    }
    device.write(buffers.result.0, &out)
}

/// The result bytes of `thunk` for its operands' bytes (sizes validated at load).
pub fn execute(
    thunk: &ConvThunk,
    op0: &[u8],
    op1: &[u8],
    deadline: Option<Deadline>,
) -> Result<Vec<u8>> {
    execute_chunked(thunk, op0, op1, deadline, CHUNK_ELEMENTS)
}

/// [`execute`] with chunks of at most `chunk_elements` im2col elements (at least one row).
fn execute_chunked(
    thunk: &ConvThunk,
    op0: &[u8],
    op1: &[u8],
    deadline: Option<Deadline>,
    chunk_elements: usize,
) -> Result<Vec<u8>> {
    if thunk.dtype == ElemType::F64 {
        run::<f64>(thunk, op0, op1, deadline, chunk_elements)
    } else {
        run::<f32>(thunk, op0, op1, deadline, chunk_elements)
    }
}

/// The compute type: f32, or f64 for f64 arrays.
trait Real: Copy + Default + std::ops::AddAssign + std::ops::Mul<Output = Self> {
    const TYPE: ElemType;
    fn of_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn bytes(v: &[Self]) -> Vec<u8>;
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
    fn bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
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
    fn bytes(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
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

/// `v` rounded once to `t`.
fn encode<T: Real>(t: ElemType, v: &[T]) -> Vec<u8> {
    match t {
        ElemType::F16 => v
            .iter()
            .flat_map(|x| half::f16::from_f64(x.to_f64()).to_le_bytes())
            .collect(),
        ElemType::BF16 => v
            .iter()
            .flat_map(|x| half::bf16::from_f64(x.to_f64()).to_le_bytes())
            .collect(),
        ElemType::F32 => v
            .iter()
            .flat_map(|x| (x.to_f64() as f32).to_le_bytes())
            .collect(),
        _ => v.iter().flat_map(|x| x.to_f64().to_le_bytes()).collect(),
    }
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
}

/// Row-major multi-indices over `sizes`, each mapped by `f` (index, digits).
fn walk(sizes: &[usize], mut f: impl FnMut(&[usize])) {
    let total: usize = sizes.iter().product();
    let mut digits = vec![0usize; sizes.len()];
    for _ in 0..total {
        f(&digits);
        for d in (0..sizes.len()).rev() {
            digits[d] += 1;
            if digits[d] < sizes[d] {
                break;
            }
            digits[d] = 0;
        }
    }
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
    let mut y_pos = Vec::new();
    walk(&out_sizes, |d| {
        y_pos.push(
            d.iter()
                .zip(&g.spatial)
                .map(|(&i, s)| i * s.strides[2] as usize)
                .sum(),
        )
    });
    let mut w_tap = Vec::new();
    walk(&k_sizes, |d| {
        w_tap.push(
            d.iter()
                .zip(&g.spatial)
                .map(|(&i, s)| i * s.strides[1] as usize)
                .sum(),
        )
    });
    Ok(Plan {
        positions: out_sizes.iter().product(),
        taps: k_sizes.iter().product(),
        reach,
        y_pos,
        w_tap,
    })
}

impl Plan {
    /// The x offsets (spatial part) of every tap of output position `p`, `None` where the
    /// tap falls on padding or a hole.
    fn taps_of(&self, g: &ConvGeometry, p: usize, out: &mut Vec<Option<usize>>) {
        out.clear();
        let mut digits = Vec::with_capacity(g.spatial.len());
        let mut rest = p;
        for s in g.spatial.iter().rev() {
            let o = s.output as usize;
            digits.push(rest % o.max(1));
            rest /= o.max(1);
        }
        digits.reverse();
        let k_sizes: Vec<usize> = g.spatial.iter().map(|s| s.kernel as usize).collect();
        walk(&k_sizes, |ks| {
            let mut off = Some(0usize);
            for (d, (&kd, &od)) in ks.iter().zip(&digits).enumerate() {
                off = match (off, self.reach[d][od * k_sizes[d] + kd]) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
            }
            out.push(off);
        });
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

/// `op(a) · op(b)` (+ `c` when `accumulate`) on the host gemm.
fn gemm<T: Real>(
    a: (&[T], MatrixLayout),
    b: (&[T], MatrixLayout),
    (m, n, k): (usize, usize, usize),
    c: &mut Vec<T>,
    accumulate: bool,
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
    let mut out = if accumulate {
        T::bytes(c)
    } else {
        vec![0u8; m * n * T::TYPE.size() as usize]
    };
    gemm::gemm_until(&cfg, &T::bytes(a.0), &T::bytes(b.0), &mut out, deadline)?;
    *c = T::from_bytes(&out);
    Ok(())
}

/// Offsets of y's (or x's) batch-and-feature part.
fn bf(strides: [u64; 2], b: usize, f: usize) -> usize {
    b * strides[0] as usize + f * strides[1] as usize
}

fn run<T: Real>(
    t: &ConvThunk,
    op0: &[u8],
    op1: &[u8],
    deadline: Option<Deadline>,
    chunk_elements: usize,
) -> Result<Vec<u8>> {
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
    for gi in 0..groups {
        // Group gi's filter as a k x og matrix (the filter is an operand of two kinds).
        let w = match t.kind {
            ConvKind::BackwardFilter => Vec::new(),
            _ => ctx.filter(&b, gi),
        };
        let mut dw = Vec::new();
        let mut start = 0;
        while start < rows {
            Deadline::check(deadline)?;
            let r = chunk.min(rows - start);
            let span = start..start + r;
            match t.kind {
                ConvKind::Forward => {
                    let col = ctx.im2col(&a, gi, span.clone());
                    let mut y = Vec::new();
                    let lhs = (&col[..], layout::<T>(r, k, false));
                    let rhs = (&w[..], layout::<T>(k, og, false));
                    gemm(lhs, rhs, (r, og, k), &mut y, false, deadline)?;
                    ctx.scatter_y(&mut result, &y, gi, span);
                }
                ConvKind::BackwardFilter => {
                    let col = ctx.im2col(&a, gi, span.clone());
                    let dy = ctx.gather_y(&b, gi, span);
                    let lhs = (&col[..], layout::<T>(r, k, true));
                    let rhs = (&dy[..], layout::<T>(r, og, false));
                    gemm(lhs, rhs, (k, og, r), &mut dw, start > 0, deadline)?;
                }
                ConvKind::BackwardData => {
                    let dy = ctx.gather_y(&a, gi, span.clone());
                    let mut dcol = Vec::new();
                    let lhs = (&dy[..], layout::<T>(r, og, false));
                    let rhs = (&w[..], layout::<T>(k, og, true));
                    gemm(lhs, rhs, (r, k, og), &mut dcol, false, deadline)?;
                    ctx.col2im(&mut result, &dcol, gi, span);
                }
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
    Ok(encode(t.dtype, &result))
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
    /// Rows `rows` of group `gi`'s im2col matrix of x (row-major, `k` columns).
    fn im2col<T: Real>(&self, x: &[T], gi: usize, rows: std::ops::Range<usize>) -> Vec<T> {
        let mut col = vec![T::default(); rows.len() * self.k];
        let mut taps = Vec::new();
        for (ri, row) in rows.enumerate() {
            let (n, pos) = (row / self.p.positions, row % self.p.positions);
            self.p.taps_of(self.g, pos, &mut taps);
            let line = &mut col[ri * self.k..(ri + 1) * self.k];
            for (ti, off) in taps.iter().enumerate() {
                let Some(off) = off else { continue };
                for c in 0..self.cg {
                    let i = bf(self.g.x_strides, n, gi * self.cg + c) + off;
                    line[ti * self.cg + c] = x.get(i).copied().unwrap_or_default();
                }
            }
        }
        col
    }

    /// Adds rows `rows` of group `gi`'s column matrix back into dx (the transpose of im2col).
    fn col2im<T: Real>(&self, dx: &mut [T], dcol: &[T], gi: usize, rows: std::ops::Range<usize>) {
        let mut taps = Vec::new();
        for (ri, row) in rows.enumerate() {
            let (n, pos) = (row / self.p.positions, row % self.p.positions);
            self.p.taps_of(self.g, pos, &mut taps);
            for (ti, off) in taps.iter().enumerate() {
                let Some(off) = off else { continue };
                for c in 0..self.cg {
                    let i = bf(self.g.x_strides, n, gi * self.cg + c) + off;
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

    /// Offset in y of row `row`'s output feature `o` of group `gi`.
    fn y_at(&self, row: usize, gi: usize, o: usize) -> usize {
        let (n, pos) = (row / self.p.positions, row % self.p.positions);
        bf(self.g.y_strides, n, gi * self.og + o) + self.p.y_pos[pos]
    }

    /// Rows `rows` of group `gi`'s part of y as an `r x og` matrix.
    fn gather_y<T: Real>(&self, y: &[T], gi: usize, rows: std::ops::Range<usize>) -> Vec<T> {
        let mut m = Vec::with_capacity(rows.len() * self.og);
        for row in rows {
            for o in 0..self.og {
                m.push(y.get(self.y_at(row, gi, o)).copied().unwrap_or_default());
            }
        }
        m
    }

    /// Writes an `r x og` matrix into rows `rows` of group `gi`'s part of y.
    fn scatter_y<T: Real>(&self, y: &mut [T], m: &[T], gi: usize, rows: std::ops::Range<usize>) {
        for (ri, row) in rows.enumerate() {
            for o in 0..self.og {
                let i = self.y_at(row, gi, o);
                if let (Some(d), Some(&v)) = (y.get_mut(i), m.get(ri * self.og + o)) {
                    *d = v;
                }
            }
        }
    }
}
