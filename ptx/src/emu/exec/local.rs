//! `.local` memory of the CTA a worker runs: per resident thread, made page by page on the
//! first store (a read of a page never written is zero, as the memory starts, and makes
//! nothing), each page counted against the launch's byte limit before it is made.
//!
//! A kernel declaring 1 MiB of `.local` per thread used to have its whole block's share
//! (`local_size × threads`, 1 GiB) allocated and zeroed per worker before its first
//! instruction, 16 GiB on a 16-core host, whatever it touched. Now what is committed is what
//! the threads wrote, at most [`LaunchOptions::local_memory_bytes`](super::super::LaunchOptions)
//! across the launch's workers.
use std::sync::atomic::{AtomicU64, Ordering};

use super::super::memory::{bytes_load, bytes_store};

/// Bytes per page: a multiple of every access size, so an aligned access stays in one page.
pub(super) const PAGE: usize = 4096;

type Page = Box<[u8; PAGE]>;

/// The launch-wide count of committed local bytes and its limit, shared by the workers.
#[derive(Clone, Copy)]
pub(crate) struct LocalBudget<'a> {
    pub used: &'a AtomicU64,
    pub limit: u64,
}

impl LocalBudget<'_> {
    /// Reserves one page, or `Err` when it would take the launch past its limit.
    fn reserve(&self) -> Result<(), LocalExhausted> {
        let before = self.used.fetch_add(PAGE as u64, Ordering::Relaxed);
        if before.saturating_add(PAGE as u64) > self.limit {
            self.used.fetch_sub(PAGE as u64, Ordering::Relaxed);
            return Err(LocalExhausted);
        }
        Ok(())
    }
}

/// Making a page would take the launch's committed local memory past its limit.
#[derive(Debug)]
pub(super) struct LocalExhausted;

/// Why a local access failed: outside the thread's local memory, or no page could be made.
#[derive(Debug)]
pub(super) enum LocalFault {
    OutOfRange,
    Exhausted,
}

impl From<LocalExhausted> for LocalFault {
    fn from(_: LocalExhausted) -> LocalFault {
        LocalFault::Exhausted
    }
}

/// Pages of one byte array per thread (the data, or initcheck's shadow), each made on demand.
#[derive(Default)]
struct Pages {
    /// `thread * pages_per_thread + page` → the page, once made.
    table: Vec<Option<Page>>,
    /// Indices of the made pages, to clear for the next CTA.
    made: Vec<usize>,
}

impl Pages {
    fn new(slots: usize) -> Pages {
        let mut table = Vec::new();
        table.resize_with(slots, || None);
        Pages {
            table,
            made: Vec::new(),
        }
    }

    fn get(&self, slot: usize) -> Option<&[u8; PAGE]> {
        self.table.get(slot)?.as_deref()
    }

    fn get_or_make(
        &mut self,
        slot: usize,
        budget: LocalBudget<'_>,
    ) -> Result<&mut [u8; PAGE], LocalFault> {
        let entry = self.table.get_mut(slot).ok_or(LocalFault::OutOfRange)?;
        if entry.is_none() {
            budget.reserve()?;
            *entry = Some(Box::new([0u8; PAGE]));
            self.made.push(slot);
        }
        entry.as_deref_mut().ok_or(LocalFault::OutOfRange)
    }

    /// Zeroes every made page (they stay made: the next CTA likely touches the same ones).
    fn clear(&mut self) {
        for &slot in &self.made {
            if let Some(Some(p)) = self.table.get_mut(slot) {
                p.fill(0);
            }
        }
    }
}

/// The local memory of every thread of one CTA (and initcheck's shadow of it).
pub(super) struct LocalMem {
    per_thread: u64,
    pages_per_thread: u64,
    data: Pages,
    /// A byte per byte, 1 once written; no slots when initcheck is off.
    init: Pages,
}

impl LocalMem {
    /// Local memory of `threads` threads of `per_thread` bytes each; nothing is made yet.
    pub(super) fn new(per_thread: u64, threads: u32, initcheck: bool) -> LocalMem {
        let pages_per_thread = per_thread.div_ceil(PAGE as u64);
        let slots = (pages_per_thread * threads as u64) as usize;
        LocalMem {
            per_thread,
            pages_per_thread,
            data: Pages::new(slots),
            init: Pages::new(if initcheck { slots } else { 0 }),
        }
    }

    /// For the next CTA: every byte zero again, and unwritten for initcheck.
    pub(super) fn clear(&mut self) {
        self.data.clear();
        self.init.clear();
    }

    /// The page slot and in-page offset of byte `o` of thread `tid`.
    fn at(&self, tid: u32, o: u64) -> Result<(usize, usize), LocalFault> {
        if o >= self.per_thread {
            return Err(LocalFault::OutOfRange);
        }
        let slot = tid as u64 * self.pages_per_thread + o / PAGE as u64;
        Ok((slot as usize, (o % PAGE as u64) as usize))
    }

    /// The `size`-byte little-endian value at `o` of thread `tid` (zero where never written).
    pub(super) fn load(&self, tid: u32, o: u64, size: u32) -> Result<u64, LocalFault> {
        let (slot, off) = self.at(tid, o)?;
        if off + size as usize <= PAGE && o + size as u64 <= self.per_thread {
            return Ok(match self.data.get(slot) {
                Some(p) => bytes_load(&p[..], off as u64, size).ok_or(LocalFault::OutOfRange)?,
                None => 0,
            });
        }
        let mut v = 0u64;
        for i in 0..size as u64 {
            let (slot, off) = self.at(tid, o + i)?;
            let b = self.data.get(slot).map_or(0, |p| p[off]);
            v |= (b as u64) << (8 * i);
        }
        Ok(v)
    }

    /// Stores the low `size` bytes of `v` at `o` of thread `tid`, making pages as needed.
    pub(super) fn store(
        &mut self,
        tid: u32,
        o: u64,
        size: u32,
        v: u64,
        budget: LocalBudget<'_>,
    ) -> Result<(), LocalFault> {
        let (slot, off) = self.at(tid, o)?;
        if off + size as usize <= PAGE && o + size as u64 <= self.per_thread {
            let page = self.data.get_or_make(slot, budget)?;
            return bytes_store(&mut page[..], off as u64, size, v).ok_or(LocalFault::OutOfRange);
        }
        for i in 0..size as u64 {
            let (slot, off) = self.at(tid, o + i)?;
            self.data.get_or_make(slot, budget)?[off] = (v >> (8 * i)) as u8;
        }
        Ok(())
    }

    /// Initcheck: `Ok(false)` when a read (`reads`) finds a byte unwritten; a write (`writes`)
    /// marks the bytes written.
    pub(super) fn mark_init(
        &mut self,
        tid: u32,
        o: u64,
        size: u32,
        reads: bool,
        writes: bool,
        budget: LocalBudget<'_>,
    ) -> Result<bool, LocalFault> {
        for i in 0..size as u64 {
            let (slot, off) = self.at(tid, o + i)?;
            if reads && self.init.get(slot).is_none_or(|p| p[off] == 0) {
                return Ok(false);
            }
        }
        if writes {
            for i in 0..size as u64 {
                let (slot, off) = self.at(tid, o + i)?;
                self.init.get_or_make(slot, budget)?[off] = 1;
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_made_by_stores_only_and_counted_against_the_limit() {
        let used = AtomicU64::new(0);
        let budget = LocalBudget {
            used: &used,
            limit: 2 * PAGE as u64,
        };
        let mut m = LocalMem::new(1 << 20, 1024, false);
        assert_eq!(m.load(1023, (1 << 20) - 8, 8).ok(), Some(0));
        assert_eq!(used.load(Ordering::Relaxed), 0);
        m.store(5, 100, 4, 0xdead_beef, budget).expect("first page");
        m.store(5, 104, 4, 0x1234_5678, budget).expect("same page");
        assert_eq!(m.load(5, 100, 8).ok(), Some(0x1234_5678_dead_beef));
        // Another thread's bytes are its own.
        assert_eq!(m.load(4, 100, 4).ok(), Some(0));
        m.store(6, 0, 1, 7, budget).expect("second page");
        assert_eq!(used.load(Ordering::Relaxed), 2 * PAGE as u64);
        assert!(matches!(
            m.store(7, 0, 1, 7, budget),
            Err(LocalFault::Exhausted)
        ));
        assert_eq!(used.load(Ordering::Relaxed), 2 * PAGE as u64);
        assert!(matches!(m.load(5, 1 << 20, 1), Err(LocalFault::OutOfRange)));
        // The next CTA sees zeros in the pages it keeps.
        m.clear();
        assert_eq!(m.load(5, 100, 8).ok(), Some(0));
    }

    #[test]
    fn an_access_across_a_page_boundary_keeps_its_bytes_in_order() {
        let used = AtomicU64::new(0);
        let budget = LocalBudget {
            used: &used,
            limit: u64::MAX,
        };
        let mut m = LocalMem::new(2 * PAGE as u64, 2, true);
        let o = PAGE as u64 - 4;
        assert_eq!(m.mark_init(1, o, 8, true, false, budget).ok(), Some(false));
        m.store(1, o, 8, 0x0102_0304_0506_0708, budget)
            .expect("store");
        assert_eq!(m.mark_init(1, o, 8, false, true, budget).ok(), Some(true));
        assert_eq!(m.load(1, o, 8).ok(), Some(0x0102_0304_0506_0708));
        assert_eq!(m.mark_init(1, o, 8, true, false, budget).ok(), Some(true));
        m.clear();
        assert_eq!(m.mark_init(1, o, 1, true, false, budget).ok(), Some(false));
    }
}
