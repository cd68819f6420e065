//! Native gemm, following docs/artifact.md "Gemm" exactly: products accumulated in the compute
//! type (F32 for f16/bf16/f32, F64 for f64, S32 for s8/s32) in increasing k order, then
//! `alpha * acc + beta * old` in the compute type, converted to the output type with round to
//! nearest even. `beta == 0` never reads the old output.
//!
//! Two implementations with the same results bit for bit:
//! - [`gemm`], the fast one (`fast`): per batch, `op(lhs)` and `op(rhs)` are converted once into
//!   panels of the compute type, then a register-blocked micro-kernel (`kernels`: 8 x 32 f32 /
//!   8 x 16 f64 with AVX-512, 6 x 16 f32 / 6 x 8 f64 with AVX2, 4 x 16 portable, chosen at run time
//!   by what the CPU has) computes each block of output elements, row panels split over the
//!   machine's cores. SIMD lanes are different output elements; every element is still
//!   `acc = 0; for k in 0..K { acc = acc + a[i][k] * b[k][j] }` in one accumulator with a separate
//!   multiply and add (no FMA, no split of K): the reduction order per element is fixed,
//!   independent of the blocking, the thread count and the CPU, so results are identical across
//!   runs, machines, thread counts and kernels, and to the reference loop.
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

use half::{bf16, f16};

use crate::error::{Error, Result};
use crate::thunks::{ElemType, ElemTypeExt, GemmConfig, MatrixLayout};

mod fast;
mod kernels;

/// The vector instructions a micro-kernel may use. Every choice gives the same bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// Plain Rust, built for the baseline target (SSE2 on x86-64).
    Portable,
    /// 256-bit AVX2 kernels.
    Avx2,
    /// 512-bit AVX-512F kernels (with a Rust older than 1.89, which cannot build them, the AVX2
    /// ones).
    Avx512,
}

impl Isa {
    /// Every choice, in the order of preference from last to first.
    pub const ALL: [Isa; 3] = [Isa::Portable, Isa::Avx2, Isa::Avx512];

    /// Whether this CPU can run the kernels of `self`.
    pub fn supported(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => std::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => false,
        }
    }

    /// The widest one this CPU supports.
    pub fn best() -> Isa {
        Isa::ALL
            .into_iter()
            .rev()
            .find(|i| i.supported())
            .unwrap_or(Isa::Portable)
    }
}

/// How [`gemm_with`] runs: neither knob changes the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Threads the row panels of a batch are split over (at least one is used; a product of
    /// fewer than 2^18 multiply-adds runs on one).
    pub threads: usize,
    /// The micro-kernel's instructions; one this CPU lacks runs the portable kernel.
    pub isa: Isa,
}

impl Options {
    /// All of the machine's cores and its widest kernel, what [`gemm`] uses.
    pub fn machine() -> Options {
        Options {
            threads: host_cores(),
            isa: Isa::best(),
        }
    }
}

/// The host's available parallelism, asked once per process: `available_parallelism` reads the
/// cgroup's CPU quota from `/proc` and `/sys` on every call, and every gemm and convolution
/// thunk asked it on every execution.
pub(crate) fn host_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The output element types `store` writes.
const STORED: [ElemType; 6] = [
    ElemType::F16,
    ElemType::BF16,
    ElemType::F32,
    ElemType::F64,
    ElemType::S8,
    ElemType::S32,
];

#[inline(always)]
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

#[inline(always)]
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

#[inline(always)]
fn store(buf: &mut [u8], t: ElemType, i: u64, v: Acc) -> Option<()> {
    let sz = t.size() as usize;
    let o = usize::try_from(i).ok()?.checked_mul(sz)?;
    let b = buf.get_mut(o..o.checked_add(sz)?)?;
    // An integer result for a float output is converted exactly to f64 first.
    let v = match (t, v) {
        (ElemType::S32 | ElemType::S8, v) => v,
        (_, Acc::I(v)) => Acc::F(f64::from(v)),
        (_, v) => v,
    };
    match (t, v) {
        (ElemType::F16, Acc::F(v)) => b.copy_from_slice(&f16::from_f64(v).to_le_bytes()),
        (ElemType::BF16, Acc::F(v)) => b.copy_from_slice(&bf16::from_f64(v).to_le_bytes()),
        (ElemType::F32, Acc::F(v)) => b.copy_from_slice(&(v as f32).to_le_bytes()),
        (ElemType::F64, Acc::F(v)) => b.copy_from_slice(&v.to_le_bytes()),
        (ElemType::S32, Acc::I(v)) => b.copy_from_slice(&v.to_le_bytes()),
        (ElemType::S8, Acc::I(v)) => b.copy_from_slice(&[v as i8 as u8]),
        (ElemType::S32, Acc::F(v)) => b.copy_from_slice(&(v as i32).to_le_bytes()),
        (ElemType::S8, Acc::F(v)) => b.copy_from_slice(&[v as i8 as u8]),
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

/// When a gemm must stop: the emulated device bounds each gemm as it bounds each launch, by
/// `RuntimeFlags::max_execution_secs`. A stride-0 operand makes a batch of 10^9 (or a K of
/// 10^12) from buffers of a few bytes, so the work is not bounded by the artifact's size.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    /// The instant after which the gemm fails.
    pub at: std::time::Instant,
    /// The limit it came from, in seconds (for the message).
    pub limit_secs: u64,
}

impl Deadline {
    /// `limit` from now, the message rounding it up to whole seconds (a launch limit of 200 ms,
    /// as `aot fuzz` sets, truncated to 0 s failed every gemm at once).
    pub fn after(limit: std::time::Duration) -> Option<Deadline> {
        let at = std::time::Instant::now().checked_add(limit)?;
        let limit_secs = limit.as_secs() + u64::from(limit.subsec_nanos() > 0);
        Some(Deadline { at, limit_secs })
    }

    /// RESOURCE_EXHAUSTED once `deadline` has passed.
    pub(crate) fn check(deadline: Option<Deadline>) -> Result<()> {
        match deadline {
            Some(d) if std::time::Instant::now() > d.at => Err(Error::resource_exhausted(format!(
                "gemm: ran longer than the wall-time limit of {} s (RuntimeFlags::max_execution_secs, aot run --max-execution-secs)",
                d.limit_secs
            ))),
            _ => Ok(()),
        }
    }
}

/// Runs the gemm on host buffers (sizes were validated at load; a short buffer is an INTERNAL
/// error, never a panic), with the machine's cores and its best micro-kernel.
pub fn gemm(cfg: &GemmConfig, lhs: &[u8], rhs: &[u8], out: &mut [u8]) -> Result<()> {
    gemm_with(cfg, lhs, rhs, out, Options::machine())
}

/// [`gemm`] that fails with RESOURCE_EXHAUSTED once `deadline` passes (checked per batch on
/// the fast path, every 4,096 multiply-adds on the reference loop).
pub fn gemm_until(
    cfg: &GemmConfig,
    lhs: &[u8],
    rhs: &[u8],
    out: &mut [u8],
    deadline: Option<Deadline>,
) -> Result<()> {
    run_gemm(cfg, lhs, rhs, out, Options::machine(), deadline)
}

/// [`gemm`] with the thread count and micro-kernel given: the results are the same bytes for
/// every `options` (the tests and `runtime/examples/gemm_bench.rs` hold it to that), only the
/// time differs.
pub fn gemm_with(
    cfg: &GemmConfig,
    lhs: &[u8],
    rhs: &[u8],
    out: &mut [u8],
    options: Options,
) -> Result<()> {
    gemm_options_until(cfg, lhs, rhs, out, options, None)
}

/// [`gemm_with`] that fails once `deadline` passes, as [`gemm_until`] does (the convolution
/// thunk's per-thread gemms: one thread each).
pub(crate) fn gemm_options_until(
    cfg: &GemmConfig,
    lhs: &[u8],
    rhs: &[u8],
    out: &mut [u8],
    options: Options,
    deadline: Option<Deadline>,
) -> Result<()> {
    run_gemm(cfg, lhs, rhs, out, options, deadline)
}

fn run_gemm(
    cfg: &GemmConfig,
    lhs: &[u8],
    rhs: &[u8],
    out: &mut [u8],
    options: Options,
    deadline: Option<Deadline>,
) -> Result<()> {
    let done = match cfg.compute_type {
        ElemType::S32 => fast::run::<Wrapping<i32>>(cfg, lhs, rhs, out, options, deadline)?,
        ElemType::F64 => fast::run::<f64>(cfg, lhs, rhs, out, options, deadline)?,
        _ => fast::run::<f32>(cfg, lhs, rhs, out, options, deadline)?,
    };
    if done {
        Ok(())
    } else {
        gemm_reference(cfg, lhs, rhs, out, deadline)
    }
}

/// The name of the micro-kernel [`gemm_with`] runs for `compute_type` with `isa` on this CPU,
/// e.g. `"f32 8x32 avx512"` (`runtime/examples/gemm_bench.rs` prints it). Every kernel gives the
/// same bytes, so the name is the only way to tell which one runs.
pub fn kernel_name(compute_type: ElemType, isa: Isa) -> &'static str {
    match compute_type {
        ElemType::S32 => kernels::select::<Wrapping<i32>>(isa).name,
        ElemType::F64 => kernels::select::<f64>(isa).name,
        _ => kernels::select::<f32>(isa).name,
    }
}

/// The reference loop: one output element at a time, exactly as docs/artifact.md words it.
fn gemm_reference(
    cfg: &GemmConfig,
    lhs: &[u8],
    rhs: &[u8],
    out: &mut [u8],
    deadline: Option<Deadline>,
) -> Result<()> {
    let oob = || Error::internal("gemm operand access out of bounds");
    // Multiply-adds since the clock was last read: reading it every 4,096 costs nothing.
    let mut ticks = 0u32;
    let mut tick = || -> Result<()> {
        ticks += 1;
        if ticks >= 4096 {
            ticks = 0;
            Deadline::check(deadline)?;
        }
        Ok(())
    };
    for b in 0..cfg.batch {
        for i in 0..cfg.m {
            for j in 0..cfg.n {
                tick()?;
                let oi = op_index(&cfg.output, b, i, j);
                let v = match cfg.compute_type {
                    ElemType::S32 => {
                        let mut acc: i32 = 0;
                        for k in 0..cfg.k {
                            tick()?;
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
                            tick()?;
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
                            tick()?;
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

#[cfg(test)]
mod tests;
