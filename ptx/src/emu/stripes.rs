//! Global atomics without a locked instruction per lane.
//!
//! x86 has no floating-point atomic add, so an `atom.global.add.f32` was a compare-and-swap loop
//! per lane: a `lock cmpxchg` each, about 20 cycles that do not overlap, half of a scatter-add
//! kernel's time (524,288 of them per embedding-gradient execution). Instead every global
//! read-modify-write holds the *stripe* of its address, one of [`STRIPES`] spin locks chosen by
//! the address's 512-byte block, and does a plain (relaxed) load and store under it. A warp's
//! atomic instruction takes the stripes its active lanes touch, in ascending order (so two warps
//! never deadlock), once for all 32 lanes: two or three locked instructions instead of 32.
//!
//! Atomicity holds because every global read-modify-write, on either path of either engine,
//! goes through a stripe: two on one address hold the same lock. Ordinary loads and stores stay
//! relaxed atomic accesses, so one racing with a read-modify-write sees the old or the new value,
//! never a torn one, as on the GPU.
use std::sync::atomic::{AtomicBool, Ordering};

/// Spin locks per launch.
pub(crate) const STRIPES: usize = 64;
/// Bytes per stripe block: a 128-float row of a scatter is one or two blocks.
const BLOCK_SHIFT: u32 = 9;
/// Spins before a waiting thread yields (a holder preempted on a busy machine).
const SPINS: u32 = 64;

/// One lock on a cache line pair of its own: 64 flags in one line made every lock operation of
/// one worker take the line from the other (adjacent lines are prefetched together, hence 128).
#[repr(align(128))]
#[derive(Default)]
struct Lock(AtomicBool);

/// The stripe locks of one launch.
pub(crate) struct Stripes {
    locks: Box<[Lock; STRIPES]>,
}

impl Default for Stripes {
    fn default() -> Stripes {
        Stripes {
            locks: Box::new(std::array::from_fn(|_| Lock::default())),
        }
    }
}

impl Stripes {
    /// The stripe of `addr` as a bit of a stripe set.
    #[inline(always)]
    pub(crate) fn bit(addr: u64) -> u64 {
        // Blocks of one allocation spread over the stripes; the 4 GiB allocation alignment puts
        // every allocation's first block on stripe 0, so mix in the bits above it.
        let block = (addr >> BLOCK_SHIFT) ^ (addr >> 32);
        1 << (block % STRIPES as u64)
    }

    /// Takes every stripe of `set` in ascending order; they are released when the guard is
    /// dropped (a guard, not a closure: the caller's loop stays in the warp loop's code).
    #[inline(always)]
    pub(crate) fn hold(&self, set: u64) -> Held<'_> {
        let mut m = set;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            self.lock(i);
        }
        Held { stripes: self, set }
    }

    #[inline(always)]
    fn lock(&self, i: usize) {
        let Some(Lock(l)) = self.locks.get(i) else {
            return;
        };
        let mut spins = 0;
        while l
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins < SPINS {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Holds a stripe set; releases it when dropped.
pub(crate) struct Held<'a> {
    stripes: &'a Stripes,
    set: u64,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut m = self.set;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            if let Some(Lock(l)) = self.stripes.locks.get(i) {
                l.store(false, Ordering::Release);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds from several threads under the stripes, as plain loads and stores, lose nothing.
    #[test]
    fn read_modify_writes_under_stripes_are_atomic() {
        let stripes = Stripes::default();
        let cells: Vec<std::sync::atomic::AtomicU64> = (0..8)
            .map(|_| std::sync::atomic::AtomicU64::new(0))
            .collect();
        let addrs: Vec<u64> = (0..8u64).map(|i| 0x1_0000_0000 + i * 200).collect();
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (stripes, cells, addrs) = (&stripes, &cells, &addrs);
                s.spawn(move || {
                    for k in 0..20_000u64 {
                        let i = ((k + t) % 8) as usize;
                        let j = ((k * 3 + t) % 8) as usize;
                        let set = Stripes::bit(addrs[i]) | Stripes::bit(addrs[j]);
                        let _held = stripes.hold(set);
                        for c in [i, j] {
                            let v = cells[c].load(Ordering::Relaxed);
                            cells[c].store(v + 1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        let total: u64 = cells.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        assert_eq!(total, 4 * 20_000 * 2);
    }

    /// A block's stripe is the same for every address in it; the first blocks of two
    /// allocations (4 GiB apart) land on different stripes.
    #[test]
    fn stripes_follow_blocks_and_allocations() {
        let a = 0x1_0000_0000u64;
        assert_eq!(Stripes::bit(a), Stripes::bit(a + 511));
        assert_ne!(Stripes::bit(a), Stripes::bit(a + 512));
        assert_ne!(Stripes::bit(a), Stripes::bit(a + (1 << 32)));
    }
}
