//! Register rows: one `u64` per lane, row `r` at `regs[r]` (an array of rows, so that a row
//! access is one bounds check, not a range check plus a length check on a flat slice: those
//! were a sixth of a row kernel's host instructions); predicates as lane masks. Out-of-range
//! rows read as zero and ignore writes (decoding never produces them).
use super::super::decode::R;
use super::super::lanes::Row;
use super::FULL;

/// Lane masks of four lanes: entry `n` has all ones in lane `j` where bit `j` of `n` is set.
static NIBBLE: [[u64; 4]; 16] = {
    let mut t = [[0u64; 4]; 16];
    let mut n = 0;
    while n < 16 {
        let mut j = 0;
        while j < 4 {
            if n >> j & 1 != 0 {
                t[n][j] = u64::MAX;
            }
            j += 1;
        }
        n += 1;
    }
    t
};

/// Reads as zero: the row an out-of-range index reads.
static ZERO_ROW: Row = [0; 32];

/// Row `r`, borrowed: operands are read in place, not copied (a copy of 256 bytes per operand,
/// zeroed first, was a tenth of the fast engine's host instructions).
#[inline(always)]
pub(super) fn rd(regs: &[Row], r: R) -> &Row {
    regs.get(r as usize).unwrap_or(&ZERO_ROW)
}

#[inline(always)]
pub(super) fn wr(regs: &mut [Row], r: R, vals: &Row, mask: u32) {
    if let Some(dst) = regs.get_mut(r as usize) {
        if mask == FULL {
            dst.copy_from_slice(vals);
        } else {
            // Four lanes at a time through a table of lane masks: blends, no branch per lane.
            for q in 0..8 {
                let sel = &NIBBLE[(mask >> (4 * q) & 0xf) as usize];
                for j in 0..4 {
                    let l = 4 * q + j;
                    dst[l] = (dst[l] & !sel[j]) | (vals[l] & sel[j]);
                }
            }
        }
    }
}

#[inline(always)]
pub(super) fn wr1(regs: &mut [Row], r: R, lane: u32, v: u64) {
    if let Some(x) = regs
        .get_mut(r as usize)
        .and_then(|row| row.get_mut(lane as usize))
    {
        *x = v;
    }
}

#[inline(always)]
pub(super) fn rd1(regs: &[Row], r: R, lane: u32) -> u64 {
    regs.get(r as usize)
        .and_then(|row| row.get(lane as usize))
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
