//! Device memory kept between executions, by exact size: the CUDA device's allocator.
//!
//! Every execution allocates each of its buffers and frees them at the end (the executor's
//! contract with [`super::Device`]). On a GPU, `cuMemAlloc` and `cuMemFree` are synchronous
//! driver calls, and a fresh address invalidates every CUDA graph captured with the old one (a
//! command buffer bakes its addresses in), so a repeated execution would re-capture its graphs.
//! XLA keeps a BFC allocator for the same reasons. This pool is the simple case of it that
//! repeated executions need: a freed block is kept for the next request of exactly its size,
//! first freed first reused, so an executable that allocates its buffers in the same order each
//! time gets the same addresses back (and its graphs stay valid).
//!
//! The pool only does the bookkeeping (it never calls the driver), so it is tested on any
//! machine; what it keeps is bounded by `limit` bytes, beyond which freed blocks go back to the
//! driver.
use std::collections::{HashMap, VecDeque};

/// Free blocks by size, and the size of every block handed out.
#[derive(Debug)]
pub(crate) struct SizePool {
    free: HashMap<usize, VecDeque<u64>>,
    live: HashMap<u64, usize>,
    cached: usize,
    limit: usize,
}

/// What to do with a block given back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Returned {
    /// Kept for reuse: nothing to do.
    Kept,
    /// Over the pool's limit: free these bytes with the driver.
    Release(usize),
    /// Not a block of this pool (freed twice, or never allocated here).
    Unknown,
}

impl SizePool {
    /// A pool that keeps at most `limit` bytes of freed blocks.
    pub(crate) fn new(limit: usize) -> SizePool {
        SizePool {
            free: HashMap::new(),
            live: HashMap::new(),
            cached: 0,
            limit,
        }
    }

    /// A kept block of exactly `size` bytes, now live; `None` when none is kept.
    pub(crate) fn take(&mut self, size: usize) -> Option<u64> {
        let queue = self.free.get_mut(&size)?;
        let address = queue.pop_front()?;
        if queue.is_empty() {
            self.free.remove(&size);
        }
        self.cached -= size;
        self.live.insert(address, size);
        Some(address)
    }

    /// Records a block the driver just allocated.
    pub(crate) fn allocated(&mut self, address: u64, size: usize) {
        self.live.insert(address, size);
    }

    /// A live block given back: kept while the pool is within its limit.
    pub(crate) fn give_back(&mut self, address: u64) -> Returned {
        let Some(size) = self.live.remove(&address) else {
            return Returned::Unknown;
        };
        if self.cached.saturating_add(size) > self.limit {
            return Returned::Release(size);
        }
        self.cached += size;
        self.free.entry(size).or_default().push_back(address);
        Returned::Kept
    }

    /// Every kept block, emptied out of the pool (for the driver to free: before a retried
    /// allocation that ran out of memory, and when the device closes).
    pub(crate) fn drain(&mut self) -> Vec<u64> {
        self.cached = 0;
        self.free.drain().flat_map(|(_, q)| q).collect()
    }

    /// Bytes kept for reuse.
    #[cfg(test)]
    pub(crate) fn cached_bytes(&self) -> usize {
        self.cached
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_block_comes_back_for_its_size_in_freeing_order() {
        let mut p = SizePool::new(1 << 20);
        for (a, n) in [(0x1000, 256), (0x2000, 256), (0x3000, 512)] {
            p.allocated(a, n);
        }
        for a in [0x1000, 0x2000, 0x3000] {
            assert_eq!(p.give_back(a), Returned::Kept);
        }
        assert_eq!(p.cached_bytes(), 1024);
        // Same order of requests, same addresses: captured graphs stay valid.
        assert_eq!(p.take(256), Some(0x1000));
        assert_eq!(p.take(256), Some(0x2000));
        assert_eq!(p.take(256), None);
        assert_eq!(p.take(128), None);
        assert_eq!(p.take(512), Some(0x3000));
        assert_eq!(p.cached_bytes(), 0);
    }

    #[test]
    fn past_the_limit_a_block_goes_back_to_the_driver() {
        let mut p = SizePool::new(300);
        p.allocated(0x1000, 256);
        p.allocated(0x2000, 256);
        assert_eq!(p.give_back(0x1000), Returned::Kept);
        assert_eq!(p.give_back(0x2000), Returned::Release(256));
        assert_eq!(p.cached_bytes(), 256);
    }

    #[test]
    fn a_block_given_back_twice_or_never_allocated_is_unknown() {
        let mut p = SizePool::new(1 << 20);
        p.allocated(0x1000, 64);
        assert_eq!(p.give_back(0x1000), Returned::Kept);
        assert_eq!(p.give_back(0x1000), Returned::Unknown);
        assert_eq!(p.give_back(0x9000), Returned::Unknown);
    }

    #[test]
    fn drain_empties_the_pool_and_keeps_live_blocks_live() {
        let mut p = SizePool::new(1 << 20);
        p.allocated(0x1000, 64);
        p.allocated(0x2000, 64);
        p.give_back(0x1000);
        assert_eq!(p.drain(), vec![0x1000]);
        assert_eq!(p.cached_bytes(), 0);
        assert_eq!(p.take(64), None);
        assert_eq!(p.give_back(0x2000), Returned::Kept);
    }
}
