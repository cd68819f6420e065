//! Register rows: one `u64` per lane, row `r` at `regs[32 r..32 r + 32]`; predicates as lane
//! masks. Out-of-range rows read as zero and ignore writes (decoding never produces them).
use super::super::decode::R;
use super::FULL;

/// Reads as zero: the row an out-of-range index reads.
static ZERO_ROW: [u64; 32] = [0; 32];

/// Row `r`, borrowed: operands are read in place, not copied (a copy of 256 bytes per operand,
/// zeroed first, was a tenth of the fast engine's host instructions).
#[inline(always)]
pub(super) fn rd(regs: &[u64], r: R) -> &[u64; 32] {
    let s = r as usize * 32;
    regs.get(s..s + 32)
        .and_then(|src| src.first_chunk::<32>())
        .unwrap_or(&ZERO_ROW)
}

#[inline(always)]
pub(super) fn wr(regs: &mut [u64], r: R, vals: &[u64; 32], mask: u32) {
    let s = r as usize * 32;
    if let Some(dst) = regs
        .get_mut(s..s + 32)
        .and_then(|d| d.first_chunk_mut::<32>())
    {
        if mask == FULL {
            dst.copy_from_slice(vals);
        } else {
            // A select per lane rather than a branch: LLVM turns it into masked blends.
            for l in 0..32 {
                let keep = mask >> l & 1 == 0;
                dst[l] = if keep { dst[l] } else { vals[l] };
            }
        }
    }
}

#[inline(always)]
pub(super) fn wr1(regs: &mut [u64], r: R, lane: u32, v: u64) {
    if let Some(x) = regs.get_mut(r as usize * 32 + lane as usize) {
        *x = v;
    }
}

#[inline(always)]
pub(super) fn rd1(regs: &[u64], r: R, lane: u32) -> u64 {
    regs.get(r as usize * 32 + lane as usize)
        .copied()
        .unwrap_or(0)
}

#[inline(always)]
pub(super) fn pget(preds: &[u32], p: u32) -> u32 {
    preds.get(p as usize).copied().unwrap_or(0)
}

#[inline(always)]
pub(super) fn pset(preds: &mut [u32], p: u32, v: u32, mask: u32) {
    if let Some(x) = preds.get_mut(p as usize) {
        *x = (*x & !mask) | (v & mask);
    }
}
