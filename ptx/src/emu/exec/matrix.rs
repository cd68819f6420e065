//! The warp-level matrix instructions: `ldmatrix`, `stmatrix`, `mma.sync`, `cp.async`, and the tf32
//! rounding of `cvt.rna.tf32.f32`.
//!
//! Both engines run these through this one path (they are rare next to the arithmetic they
//! feed, so a fast form would buy nothing).
//!
//! * `ldmatrix`, `stmatrix` and `mma.sync` are `.sync.aligned`: the whole warp executes them together. A
//!   launch where some lanes of the warp are absent (exited, diverged, or a partial last warp)
//!   gets a trap, not a guess.
//! * `mma` gathers A (16×K), B (K×8) and C (16×8) from the 32 lanes' fragments by the ISA's
//!   fragment layouts ("Matrix Fragments for mma.m16n8k16 / m16n8k8"), computes every element of
//!   D = A·B + C with exact products and an f64 sum in k order, rounded once to f32 (nearest
//!   even). The ISA leaves the accumulation order and internal precision open; the f64 sum of at
//!   most 16 products of 11-bit (f16, tf32) or 8-bit (bf16) mantissas and an f32 is exact or
//!   within an f64 ulp, so the result is the correctly rounded D up to that ulp. A NaN result is
//!   the canonical NaN. tf32 operands use only the top 19 bits of their register (the ISA
//!   leaves the low 13 bits out of the operation), so they are masked off.
//! * `cp.async` is completed when it is issued, and `cp.async.commit_group` / `wait_group` /
//!   `wait_all` are no-ops (decode/matrix.rs). That is one legal execution: the PTX memory
//!   model makes the destination's contents undefined to the issuing thread until a wait
//!   covering its group returns (and to other threads until a barrier after that), so a
//!   program that reads the shared destination, or writes the global source, before then has a
//!   data race and no defined result; every race-free program sees the same bytes as on a GPU.
use super::super::decode::{MatrixOp, MmaInput, NONE};
use super::super::error::Space;
use super::super::numeric::Fmt;
use super::float::f32_canon;
use super::mem::lane_address;
use super::regs::{rd1, wr1};
use super::{CtaMem, Fault, FaultKind, LaunchCtx, Warp, FULL};

/// `cvt.rna.tf32.f32`: round an f32 to tf32 (keep 10 mantissa bits; nearest, ties away from
/// zero, as the ISA's `.rna` says), result in f32 format with the low 13 bits zero. A value
/// that rounds past the largest finite tf32 becomes infinity (sm_80 has no `.satfinite` form);
/// a NaN becomes the canonical NaN with the low 13 bits cleared.
pub(super) fn tf32_rna(a: u64) -> u64 {
    let x = a as u32;
    if f32::from_bits(x).is_nan() {
        return 0x7fff_e000;
    }
    if x & 0x7f80_0000 == 0x7f80_0000 {
        return x as u64; // infinity stays
    }
    // Adding half of the dropped range rounds ties away from zero (sign-magnitude format); a
    // carry out of the mantissa bumps the exponent, as rounding must.
    (x.wrapping_add(0x1000) & 0xffff_e000) as u64
}

/// (row, col) in A of element `h` (0 low, 1 high half; tf32: 0) of register `r` of `lane`.
fn a_coord(input: MmaInput, lane: usize, r: usize, h: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane & 3);
    match input {
        MmaInput::F16 { k16: true } | MmaInput::Bf16 { k16: true } => {
            let i = 2 * r + h;
            let row = if i < 2 || (4..6).contains(&i) {
                g
            } else {
                g + 8
            };
            let col = t * 2 + (i & 1) + if i >= 4 { 8 } else { 0 };
            (row, col)
        }
        MmaInput::F16 { k16: false } | MmaInput::Bf16 { k16: false } => {
            let i = 2 * r + h;
            (if i < 2 { g } else { g + 8 }, t * 2 + (i & 1))
        }
        MmaInput::Tf32 => (
            if r == 0 || r == 2 { g } else { g + 8 },
            if r < 2 { t } else { t + 4 },
        ),
    }
}

/// (row, col) in B of element `h` of register `r` of `lane`.
fn b_coord(input: MmaInput, lane: usize, r: usize, h: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane & 3);
    match input {
        MmaInput::F16 { k16: true } | MmaInput::Bf16 { k16: true } => {
            let i = 2 * r + h;
            (t * 2 + (i & 1) + if i >= 2 { 8 } else { 0 }, g)
        }
        MmaInput::F16 { k16: false } | MmaInput::Bf16 { k16: false } => (t * 2 + h, g),
        MmaInput::Tf32 => (if r == 0 { t } else { t + 4 }, g),
    }
}

/// (row, col) in C and D of register `r` (f32, one element each) of `lane`.
fn c_coord(lane: usize, r: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane & 3);
    (if r < 2 { g } else { g + 8 }, t * 2 + (r & 1))
}

/// Elements per register (2 packed 16-bit values, or one tf32) and their value.
fn elements(input: MmaInput, reg: u64) -> ([f64; 2], usize) {
    let half = |f: Fmt, v: u64| f.to_f64(v & 0xffff);
    match input {
        MmaInput::F16 { .. } => ([half(Fmt::F16, reg), half(Fmt::F16, reg >> 16)], 2),
        MmaInput::Bf16 { .. } => ([half(Fmt::Bf16, reg), half(Fmt::Bf16, reg >> 16)], 2),
        MmaInput::Tf32 => ([f32::from_bits(reg as u32 & 0xffff_e000) as f64, 0.0], 1),
    }
}

fn whole_warp(pc: u32, mask: u32, what: &str) -> Result<(), (u32, Fault)> {
    if mask == FULL {
        return Ok(());
    }
    let lane = (!mask).trailing_zeros();
    let message = format!(
        "{what} is .sync.aligned: all 32 lanes of the warp must execute it, {} did (lane {lane} did not)",
        mask.count_ones()
    );
    Err((
        pc,
        Fault::new(FaultKind::Trap(message), Space::Global, 0, 0, lane),
    ))
}

impl<'a> LaunchCtx<'a> {
    /// Executes one matrix instruction for the lanes in `mask`.
    pub(super) fn matrix(
        &self,
        m: &mut CtaMem,
        w: &mut Warp,
        pc: u32,
        mask: u32,
        op: &MatrixOp,
    ) -> Result<(), (u32, Fault)> {
        match op {
            MatrixOp::Ldmatrix {
                n,
                trans,
                space,
                ds,
                addr,
            } => {
                whole_warp(pc, mask, "ldmatrix")?;
                let n = *n as usize;
                // rows[j][r]: row r of matrix j, 8 b16 elements, from the address lane 8j+r holds.
                let mut rows = [[[0u16; 8]; 8]; 4];
                for (j, matrix) in rows.iter_mut().enumerate().take(n) {
                    for (r, row) in matrix.iter_mut().enumerate() {
                        let lane = (8 * j + r) as u32;
                        let addr = lane_address(&w.regs, *addr, lane);
                        let tid = w.index * 32 + lane;
                        // Each row is 16 bytes, 16-byte aligned (the ISA's requirement).
                        for half in 0..2u64 {
                            let align = if half == 0 { 16 } else { 8 };
                            let v = self
                                .load(m, *space, addr.wrapping_add(8 * half), 8, align, tid, lane)
                                .map_err(|f| (pc, f))?;
                            for e in 0..4 {
                                if let Some(slot) = row.get_mut(half as usize * 4 + e) {
                                    *slot = (v >> (16 * e)) as u16;
                                }
                            }
                        }
                    }
                }
                for lane in 0..32usize {
                    let (g, t) = (lane >> 2, lane & 3);
                    for (j, &d) in ds.iter().enumerate().take(n) {
                        let mx = &rows[j];
                        let (lo, hi) = if *trans {
                            (mx[2 * t][g], mx[2 * t + 1][g])
                        } else {
                            (mx[g][2 * t], mx[g][2 * t + 1])
                        };
                        wr1(&mut w.regs, d, lane as u32, (hi as u64) << 16 | lo as u64);
                    }
                }
            }
            MatrixOp::Stmatrix {
                n,
                trans,
                space,
                srcs,
                addr,
            } => {
                whole_warp(pc, mask, "stmatrix")?;
                let n = *n as usize;
                // The fragments gathered into matrices by ldmatrix's layout (lane 4g+t holds
                // row g, columns 2t and 2t+1; transposed with .trans), then row r of matrix j
                // stored to the address lane 8j+r holds.
                let mut rows = [[[0u16; 8]; 8]; 4];
                for lane in 0..32usize {
                    let (g, t) = (lane >> 2, lane & 3);
                    for (j, &s) in srcs.iter().enumerate().take(n) {
                        let v = rd1(&w.regs, s, lane as u32);
                        let (lo, hi) = (v as u16, (v >> 16) as u16);
                        let mx = &mut rows[j];
                        if *trans {
                            mx[2 * t][g] = lo;
                            mx[2 * t + 1][g] = hi;
                        } else {
                            mx[g][2 * t] = lo;
                            mx[g][2 * t + 1] = hi;
                        }
                    }
                }
                for (j, matrix) in rows.iter().enumerate().take(n) {
                    for (r, row) in matrix.iter().enumerate() {
                        let lane = (8 * j + r) as u32;
                        let addr = lane_address(&w.regs, *addr, lane);
                        let tid = w.index * 32 + lane;
                        for half in 0..2usize {
                            let v = row[4 * half..4 * half + 4]
                                .iter()
                                .rev()
                                .fold(0u64, |acc, &e| acc << 16 | e as u64);
                            let align = if half == 0 { 16 } else { 8 };
                            self.store(
                                m,
                                *space,
                                addr.wrapping_add(8 * half as u64),
                                8,
                                align,
                                tid,
                                lane,
                                v,
                            )
                            .map_err(|f| (pc, f))?;
                        }
                    }
                }
            }
            MatrixOp::Mma { input, d, a, b, c } => {
                whole_warp(pc, mask, "mma")?;
                let input = *input;
                let k = match input {
                    MmaInput::F16 { k16: true } | MmaInput::Bf16 { k16: true } => 16,
                    _ => 8,
                };
                let (na, nb) = input.registers();
                let mut am = [[0f64; 16]; 16];
                let mut bm = [[0f64; 8]; 16];
                let mut cm = [[0f64; 8]; 16];
                for lane in 0..32usize {
                    let l = lane as u32;
                    for (r, &reg) in a.iter().enumerate().take(na) {
                        let (vals, per) = elements(input, rd1(&w.regs, reg, l));
                        for (h, v) in vals.iter().enumerate().take(per) {
                            let (row, col) = a_coord(input, lane, r, h);
                            am[row][col] = *v;
                        }
                    }
                    for (r, &reg) in b.iter().enumerate().take(nb) {
                        let (vals, per) = elements(input, rd1(&w.regs, reg, l));
                        for (h, v) in vals.iter().enumerate().take(per) {
                            let (row, col) = b_coord(input, lane, r, h);
                            bm[row][col] = *v;
                        }
                    }
                    for (r, &reg) in c.iter().enumerate() {
                        let (row, col) = c_coord(lane, r);
                        cm[row][col] = f32::from_bits(rd1(&w.regs, reg, l) as u32) as f64;
                    }
                }
                for lane in 0..32usize {
                    for (r, &reg) in d.iter().enumerate() {
                        if reg == NONE {
                            continue;
                        }
                        let (row, col) = c_coord(lane, r);
                        let mut s = cm[row][col];
                        for kk in 0..k {
                            s += am[row][kk] * bm[kk][col];
                        }
                        wr1(&mut w.regs, reg, lane as u32, f32_canon(s as f32));
                    }
                }
            }
            MatrixOp::CpAsync {
                size,
                src_size,
                dst,
                src,
            } => {
                let size = *size as u32;
                let mut mm = mask;
                while mm != 0 {
                    let l = mm.trailing_zeros();
                    mm &= mm - 1;
                    let tid = w.index * 32 + l;
                    let daddr = lane_address(&w.regs, *dst, l);
                    let saddr = lane_address(&w.regs, *src, l);
                    let n = if *src_size == NONE {
                        size
                    } else {
                        rd1(&w.regs, *src_size, l) as u32
                    };
                    if n > size {
                        let message =
                            format!("cp.async src-size {n} is larger than its cp-size {size}");
                        let f = Fault::new(FaultKind::Trap(message), Space::Global, saddr, size, l);
                        return Err((pc, f));
                    }
                    // Bytes from the source (none when src-size is 0: Triton masks lanes that
                    // way, and their source address need not be valid), then zeros.
                    let mut bytes = [0u8; 16];
                    if n == size {
                        let chunk = size.min(8);
                        for at in (0..size).step_by(chunk as usize) {
                            let align = if at == 0 { size } else { chunk };
                            let v = self
                                .load(m, Space::Global, saddr + at as u64, chunk, align, tid, l)
                                .map_err(|f| (pc, f))?;
                            for e in 0..chunk {
                                if let Some(b) = bytes.get_mut((at + e) as usize) {
                                    *b = (v >> (8 * e)) as u8;
                                }
                            }
                        }
                    } else if n > 0 {
                        if saddr % size as u64 != 0 {
                            let f =
                                Fault::new(FaultKind::Misaligned, Space::Global, saddr, size, l);
                            return Err((pc, f));
                        }
                        for at in 0..n {
                            let v = self
                                .load(m, Space::Global, saddr + at as u64, 1, 1, tid, l)
                                .map_err(|f| (pc, f))?;
                            if let Some(b) = bytes.get_mut(at as usize) {
                                *b = v as u8;
                            }
                        }
                    }
                    let chunk = size.min(8);
                    for at in (0..size).step_by(chunk as usize) {
                        let mut v = 0u64;
                        for e in 0..chunk {
                            v |= (bytes.get((at + e) as usize).copied().unwrap_or(0) as u64)
                                << (8 * e);
                        }
                        let align = if at == 0 { size } else { chunk };
                        self.store(m, Space::Shared, daddr + at as u64, chunk, align, tid, l, v)
                            .map_err(|f| (pc, f))?;
                    }
                }
            }
        }
        Ok(())
    }
}
