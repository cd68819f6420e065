//! Host prefetches for the emulator's dense global accesses.
use super::CtaMem;

/// How far past a dense warp access [`prefetch_after`] asks the host to fetch, in warp
/// blocks, and at most how many bytes.
const PREFETCH_BLOCKS: u64 = 2;
const PREFETCH_MAX: u64 = 256;

/// Asks the host cache for the [`PREFETCH_BLOCKS`] blocks of `block` bytes after a warp's dense
/// access ending at `end` (within the cached allocation): the bytes the next warps read in the
/// usual layout, where thread `i` of the grid touches element `i`. The emulator runs a warp
/// to its end before the next, so a grid-stride loop (each step `gridDim × blockDim`
/// elements on: a new page every step) reads a new page at each step, which no hardware
/// prefetcher follows across pages, and every warp paid the cache misses of its blocks in full.
/// With this the next warp finds them cached: `aot bench`'s SAXPY (8 M floats) 55-58 → 50-51
/// ms on one worker, 31-33 → 25-27 ms on two; one block ahead gave half of that, four no more.
/// At most [`PREFETCH_MAX`] bytes (four lines): a load group's block is 512 bytes, and 1 KiB of
/// prefetches after each made logsumexp (rows read in order, which the hardware follows on its
/// own) 1-2 % slower. A prefetch never faults; nothing else depends on it.
#[inline(always)]
pub(super) fn prefetch_after(m: &CtaMem, end: u64, block: u64) {
    let stop = m
        .cache_end
        .min(end + (block * PREFETCH_BLOCKS).min(PREFETCH_MAX));
    let mut a = end;
    while a < stop {
        let p = m.cache_ptr.wrapping_add((a - m.cache_base) as usize);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is a hint: it reads nothing architecturally and never faults, and
        // `p` is inside the cached allocation anyway.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = p;
        a += 64;
    }
}
