//! A counting global allocator for the binaries that fuzz (`aot`, `harness/tests/fuzz.rs`): it
//! keeps the live heap size and its peak, and refuses any allocation that would take the live
//! size over a limit, printing the case being run (target and seed) first, so that an input that
//! makes the code under test allocate without bound is reported with what reproduces it instead
//! of exhausting the host.
//!
//! Hand-written: the crates that count allocations (`stats_alloc`, `cap`) do not print a finding
//! before refusing, which is the point here; the wrapper is a dozen lines.
use std::alloc::{GlobalAlloc, Layout};
use std::io::Write;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// No limit until a fuzz run sets one.
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
/// The case running now, for the message printed at a refusal (`u64::MAX`: none).
static CASE_SEED: AtomicU64 = AtomicU64::new(u64::MAX);
static CASE_TARGET: AtomicUsize = AtomicUsize::new(0);

/// Wraps an allocator (`std::alloc::System`, mimalloc) with the counters.
pub struct CountingAlloc<A>(pub A);

// SAFETY: every call is forwarded to the wrapped allocator with the same layout; the counters
// are plain atomics and a refusal returns null, which `GlobalAlloc` allows.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAlloc<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !admit(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded unchanged.
        let p = unsafe { self.0.alloc(layout) };
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !admit(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded unchanged.
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { self.0.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !admit(new_size - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded unchanged.
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if p.is_null() {
            if new_size > old {
                LIVE.fetch_sub(new_size - old, Relaxed);
            }
        } else if new_size < old {
            LIVE.fetch_sub(old - new_size, Relaxed);
        }
        p
    }
}

/// Counts `size` more live bytes unless that passes the limit (then reports and refuses).
fn admit(size: usize) -> bool {
    let live = LIVE.fetch_add(size, Relaxed).wrapping_add(size);
    let limit = LIMIT.load(Relaxed);
    if live > limit {
        LIVE.fetch_sub(size, Relaxed);
        report_refusal(size, limit);
        return false;
    }
    PEAK.fetch_max(live, Relaxed);
    true
}

/// Writes the finding without allocating (this runs inside the allocator): the numbers are
/// formatted into a stack buffer.
fn report_refusal(size: usize, limit: usize) {
    let mut buf = [0u8; 256];
    let mut w = &mut buf[..];
    let seed = CASE_SEED.load(Relaxed);
    let target = super::Target::ALL
        .get(CASE_TARGET.load(Relaxed))
        .map_or("?", |t| t.name());
    let _ = writeln!(
        w,
        "fuzz finding: allocation of {size} bytes refused, over the limit of {limit} live bytes; target {target}, case seed {seed}"
    );
    let left = w.len();
    let used = buf.len() - left;
    let _ = std::io::stderr().write_all(buf.get(..used).unwrap_or(&[]));
}

/// Sets the most live heap bytes allowed (`usize::MAX`: no limit).
pub fn set_limit(bytes: usize) {
    LIMIT.store(bytes, Relaxed);
}

/// Live heap bytes now.
pub fn live() -> usize {
    LIVE.load(Relaxed)
}

/// Restarts the peak from the live size; returns the live size.
pub fn reset_peak() -> usize {
    let live = LIVE.load(Relaxed);
    PEAK.store(live, Relaxed);
    live
}

/// The highest live size since [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Relaxed)
}

/// Whether this process's global allocator is a [`CountingAlloc`] (a fuzz run refuses to start
/// without it: its memory property would go unchecked).
pub fn installed() -> bool {
    let before = PEAK.load(Relaxed).max(LIVE.load(Relaxed));
    let probe: Vec<u8> = Vec::with_capacity(1 << 16);
    let counted = LIVE.load(Relaxed) >= probe.capacity() || PEAK.load(Relaxed) > before;
    drop(std::hint::black_box(probe));
    counted
}

/// Records the case being run, for [`report_refusal`] and the watchdog.
pub(crate) fn set_case(target: super::Target, seed: u64) {
    CASE_TARGET.store(target as usize, Relaxed);
    CASE_SEED.store(seed, Relaxed);
}
