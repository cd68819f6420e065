//! Device memory of the emulator.
//!
//! * **Global** memory is a set of allocations addressed by 64-bit device addresses starting at
//!   [`GLOBAL_BASE`], each on a 4 GiB boundary and followed by at least 2 GiB unmapped, so
//!   running off either end of a buffer is reported instead of silently reading its neighbour.
//!   Every kernel access is alignment-checked, and bounds-checked by the launch's region table
//!   (`sanitize`: one allocation, or one argument's slice of it). The backing store is
//!   `AtomicU64` words and every kernel access goes through a relaxed atomic view of its natural size
//!   (`AtomicU8`..`AtomicU64`), so CTAs running on several OS threads never race in the Rust
//!   sense, and `atom.*` are real atomic read-modify-writes on the same bytes.
//! * **Shared** memory is a byte array per CTA (static variables first, dynamic shared memory
//!   after them); **local** memory a byte array per thread; **param** memory the kernel's
//!   parameter buffer. These are only touched by the OS thread running the CTA.
//! * **Const** and module-scope **global** variables are device allocations made (and
//!   initialized) the first time a module is launched on a [`Memory`]; `.const` addresses are
//!   their device addresses, so `ld.const` and generic loads agree.
//! * **Generic** addresses: global addresses are identity-mapped; shared, local and param
//!   addresses live in fixed 256 MiB windows ([`SHARED_WINDOW`], [`LOCAL_WINDOW`],
//!   [`PARAM_WINDOW`]) below [`GLOBAL_BASE`]; `cvta` adds or subtracts the window base.
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

use super::error::EmuError;

/// First device address handed out by [`Memory::alloc`].
pub const GLOBAL_BASE: u64 = 0x1_0000_0000;
/// Generic-address window of the shared state space (`cvta.shared` adds this).
pub const SHARED_WINDOW: u64 = 0x1000_0000;
/// Generic-address window of the local state space (`cvta.local` adds this).
pub const LOCAL_WINDOW: u64 = 0x2000_0000;
/// Generic-address window of the (kernel) param state space (`cvta.param` adds this).
pub const PARAM_WINDOW: u64 = 0x3000_0000;
/// Size of each generic window.
pub const WINDOW_SIZE: u64 = 0x1000_0000;
/// Unmapped bytes after every allocation, at least: 2 GiB, so that an access past the end of a
/// buffer (or before its start) by less than that lands in no allocation and faults, rather than
/// reading or writing the neighbour. A 256-byte gap let a kernel read 512 bytes past an 80-byte
/// buffer into the next one and exit 0 (issue 33). The address space is 64-bit and sparse: the
/// gaps cost nothing, and 2^32 allocations still fit.
const GUARD: u64 = 1 << 31;
/// Allocation alignment: every allocation starts on a 4 GiB boundary (CUDA promises 256 bytes).
const ALIGN: u64 = 1 << 32;

/// A device address (what a kernel sees in a `.u64` pointer parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevicePtr(pub u64);

impl DevicePtr {
    /// The address `bytes` further on.
    pub fn offset(self, bytes: u64) -> DevicePtr {
        DevicePtr(self.0.wrapping_add(bytes))
    }
}

pub(crate) struct Allocation {
    words: Box<[AtomicU64]>,
    size: u64,
    /// Initcheck's shadow, a bit per byte (set: written since allocated); `None` when the
    /// allocation was made with initcheck off, and then every byte counts as written.
    init: Option<Box<[AtomicU8]>>,
}

/// A zeroed boxed slice of `n` atomics, committed page by page as it is touched.
fn zeroed_atomics<T>(n: usize) -> Option<Box<[T]>> {
    let n = n.max(1);
    let layout = std::alloc::Layout::array::<T>(n).ok()?;
    // SAFETY: `layout` has a non-zero size; callers only instantiate `T` with atomic integers,
    // for which all-zero bytes are a valid value.
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` is a fresh global-allocator block with the layout of `[T; n]`, which is what
    // `Box<[T]>` frees it with.
    Some(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, n)) })
}

/// Marks bytes `off..off + len` written in an initcheck shadow (bits out of range are ignored).
#[inline]
pub(crate) fn shadow_mark(shadow: &[AtomicU8], off: u64, len: u64) {
    let (mut i, end) = (off, off.saturating_add(len));
    while i < end {
        let Some(cell) = usize::try_from(i / 8).ok().and_then(|c| shadow.get(c)) else {
            return;
        };
        let (lo, hi) = ((i % 8) as u32, (end - (i - i % 8)).min(8) as u32);
        let bits = ((1u32 << hi) - 1) as u8 & !(((1u32 << lo) - 1) as u8);
        cell.fetch_or(bits, Ordering::Relaxed);
        i = i - i % 8 + 8;
    }
}

/// True when every byte of `off..off + len` is marked written in an initcheck shadow.
#[inline]
pub(crate) fn shadow_written(shadow: &[AtomicU8], off: u64, len: u64) -> bool {
    let (mut i, end) = (off, off.saturating_add(len));
    while i < end {
        let Some(cell) = usize::try_from(i / 8).ok().and_then(|c| shadow.get(c)) else {
            return false;
        };
        let (lo, hi) = ((i % 8) as u32, (end - (i - i % 8)).min(8) as u32);
        let bits = ((1u32 << hi) - 1) as u8 & !(((1u32 << lo) - 1) as u8);
        if cell.load(Ordering::Relaxed) & bits != bits {
            return false;
        }
        i = i - i % 8 + 8;
    }
    true
}

impl Allocation {
    fn new(size: u64, initcheck: bool, pool: &mut Pool) -> Option<Allocation> {
        let n = usize::try_from(size.div_ceil(8)).ok()?;
        // Zeroed by the allocator, not by writing every word: a large zeroed allocation is fresh
        // pages from the OS, so a declared size commits no host memory until a kernel or a copy
        // touches it (a 4 GiB buffer used to commit 4.2 GB and take 14 s before anything ran).
        // Unless a freed one of the same length waits in the pool: zeroing that in place costs
        // a tenth of faulting fresh pages in.
        let words = match pool.take(n) {
            Some(words) => words,
            None => zeroed_atomics::<AtomicU64>(n)?,
        };
        let init = if initcheck {
            Some(zeroed_atomics::<AtomicU8>(n)?)
        } else {
            None
        };
        Some(Allocation { words, size, init })
    }
}

/// Host memory the pool of freed allocations may hold, in bytes.
const POOL_BYTES: usize = 256 << 20;
/// Allocations smaller than this are not pooled: the host allocator recycles them already.
const POOL_MIN_BYTES: usize = 64 << 10;
/// Nor larger than this: a big allocation may be mostly untouched (committed lazily), and
/// zeroing it in place would commit all of it.
const POOL_MAX_BYTES: usize = 64 << 20;

/// Freed allocations' word arrays, kept for the next allocation of the same length (executions
/// repeat the same sizes). A fresh zeroed allocation of a few MB is fresh pages from the OS,
/// and faulting them in (the kernel zeroes each page on first touch) was a fifth of an
/// embedding-gradient scatter's run; a pooled array is zeroed in place, in cache. Bounded by
/// [`POOL_BYTES`]; oldest first out.
#[derive(Default)]
struct Pool {
    words: std::collections::VecDeque<Box<[AtomicU64]>>,
    bytes: usize,
}

impl Pool {
    /// A zeroed array of `n` words from the pool, if one of that length is there.
    fn take(&mut self, n: usize) -> Option<Box<[AtomicU64]>> {
        let i = self.words.iter().rposition(|w| w.len() == n)?;
        let mut words = self.words.remove(i)?;
        self.bytes -= n * 8;
        // SAFETY: all-zero bytes are a valid `AtomicU64`, and `words` is uniquely owned.
        unsafe { std::ptr::write_bytes(words.as_mut_ptr(), 0, n) };
        Some(words)
    }

    /// Keeps `words` for reuse when it is large enough to be worth it, dropping the oldest
    /// arrays to stay within the bound.
    fn give(&mut self, words: Box<[AtomicU64]>) {
        let bytes = words.len() * 8;
        if !(POOL_MIN_BYTES..=POOL_MAX_BYTES).contains(&bytes) {
            return;
        }
        while self.bytes + bytes > POOL_BYTES {
            let Some(old) = self.words.pop_front() else {
                break;
            };
            self.bytes -= old.len() * 8;
        }
        self.bytes += bytes;
        self.words.push_back(words);
    }
}

/// The memory of one emulated device: global allocations plus module variables.
pub struct Memory {
    allocs: BTreeMap<u64, Allocation>,
    /// Freed allocations' storage, for reuse (host memory, not counted against `limit`).
    pool: Pool,
    next: u64,
    limit: u64,
    used: u64,
    /// Allocations made now get an initcheck shadow.
    initcheck: bool,
    /// Module uid → device addresses of its module-scope `.global`/`.const` variables.
    pub(crate) module_vars: HashMap<u64, Vec<u64>>,
}

impl Default for Memory {
    fn default() -> Self {
        Memory::new()
    }
}

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("allocations", &self.allocs.len())
            .field("used", &self.used)
            .finish()
    }
}

impl Memory {
    /// An empty device with a 64 GiB allocation limit.
    pub fn new() -> Memory {
        Memory::with_limit(64 << 30)
    }

    /// An empty device that refuses allocations beyond `limit` bytes in total.
    pub fn with_limit(limit: u64) -> Memory {
        Memory {
            allocs: BTreeMap::new(),
            pool: Pool::default(),
            next: GLOBAL_BASE,
            limit,
            used: 0,
            initcheck: false,
            module_vars: HashMap::new(),
        }
    }

    /// Changes the limit on the bytes allocated in total (allocations already made stay).
    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// The limit on the bytes allocated in total.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Turns initcheck's bookkeeping on or off for the allocations made from now on: each gets a
    /// shadow bit per byte (an eighth more host memory, committed as touched) that host writes
    /// and kernel stores set, and a launch with [`LaunchOptions::initcheck`] faults on a kernel
    /// read of a byte whose bit is clear. Allocations made while it was off count as written.
    ///
    /// [`LaunchOptions::initcheck`]: crate::emu::LaunchOptions::initcheck
    pub fn set_initcheck(&mut self, on: bool) {
        self.initcheck = on;
    }

    /// Allocates `bytes` zeroed bytes (at least one) and returns their device address. Host
    /// memory is committed lazily, page by page, as the allocation is touched.
    pub fn alloc(&mut self, bytes: u64) -> Result<DevicePtr, EmuError> {
        let size = bytes.max(1);
        if self.used.saturating_add(size) > self.limit {
            return Err(EmuError::HostMemory {
                message: format!(
                    "allocating {bytes} bytes exceeds the device limit of {} bytes ({} in use)",
                    self.limit, self.used
                ),
            });
        }
        let a = Allocation::new(size, self.initcheck, &mut self.pool).ok_or_else(|| {
            EmuError::HostMemory {
                message: format!("cannot allocate {bytes} bytes on the host"),
            }
        })?;
        let base = self.next;
        self.next = base
            .saturating_add(size)
            .saturating_add(GUARD)
            .div_ceil(ALIGN)
            .saturating_mul(ALIGN);
        self.used += size;
        self.allocs.insert(base, a);
        Ok(DevicePtr(base))
    }

    /// Frees an allocation made by [`Memory::alloc`] (its exact base address).
    pub fn free(&mut self, ptr: DevicePtr) -> Result<(), EmuError> {
        match self.allocs.remove(&ptr.0) {
            Some(a) => {
                self.used -= a.size;
                self.pool.give(a.words);
                Ok(())
            }
            None => Err(EmuError::HostMemory {
                message: format!(
                    "free of {:#x}, which is not the start of an allocation",
                    ptr.0
                ),
            }),
        }
    }

    fn range_mut(&mut self, ptr: DevicePtr, len: usize) -> Result<&mut [u8], EmuError> {
        Ok(self.range_and_shadow(ptr, len)?.0)
    }

    /// The bytes of `ptr..ptr + len` and the shadow of their allocation with their offset.
    #[allow(clippy::type_complexity)]
    fn range_and_shadow(
        &mut self,
        ptr: DevicePtr,
        len: usize,
    ) -> Result<(&mut [u8], Option<(&[AtomicU8], u64)>), EmuError> {
        let (p, shadow) = self.span(ptr, len)?;
        // SAFETY: `span` points at `len` bytes inside an allocation's words (AtomicU64 has the
        // size and alignment of u64), and `&mut self` guarantees no kernel or other reference
        // touches them while the view lives.
        Ok((unsafe { std::slice::from_raw_parts_mut(p, len) }, shadow))
    }

    /// Where the bytes of `ptr..ptr + len` are on the host (derived through the words'
    /// interior mutability, so several disjoint spans may be viewed at once), and the shadow of
    /// their allocation with their offset.
    #[allow(clippy::type_complexity)]
    fn span(
        &self,
        ptr: DevicePtr,
        len: usize,
    ) -> Result<(*mut u8, Option<(&[AtomicU8], u64)>), EmuError> {
        let addr = ptr.0;
        let bad = || EmuError::HostMemory {
            message: format!("range {addr:#x}+{len} is not inside one allocation"),
        };
        let (base, a) = self.allocs.range(..=addr).next_back().ok_or_else(bad)?;
        let off = addr - *base;
        let end = off.checked_add(len as u64).ok_or_else(bad)?;
        if end > a.size || end > a.words.len() as u64 * 8 {
            return Err(bad());
        }
        let shadow = a.init.as_deref().map(|s| (s, off));
        // In bounds (checked above); `AtomicU64::as_ptr` is the words' interior `UnsafeCell`.
        let p = a.words.as_ptr() as *mut u8;
        Ok((p.wrapping_add(off as usize), shadow))
    }

    /// Copies `data` to device memory at `ptr` (the range must lie inside one allocation); the
    /// bytes count as written for initcheck.
    pub fn write(&mut self, ptr: DevicePtr, data: &[u8]) -> Result<(), EmuError> {
        let (bytes, shadow) = self.range_and_shadow(ptr, data.len())?;
        bytes.copy_from_slice(data);
        if let Some((s, off)) = shadow {
            shadow_mark(s, off, data.len() as u64);
        }
        Ok(())
    }

    /// Fills `len` bytes at `ptr` (inside one allocation) with `value`'s little-endian bytes
    /// repeated from `ptr` on (`cuMemsetD32`'s pattern; a tail shorter than 4 bytes takes the
    /// pattern's first bytes); the bytes count as written for initcheck. In place: a memset
    /// thunk built a host buffer of the whole size and copied it (a zeroed 4 MB scatter operand
    /// cost 20 M host instructions per execution).
    pub fn fill32(&mut self, ptr: DevicePtr, len: usize, value: u32) -> Result<(), EmuError> {
        let (bytes, shadow) = self.range_and_shadow(ptr, len)?;
        let pattern = value.to_le_bytes();
        if value == 0 {
            bytes.fill(0);
        } else {
            let mut words = bytes.chunks_exact_mut(4);
            for w in &mut words {
                w.copy_from_slice(&pattern);
            }
            let tail = words.into_remainder();
            let n = tail.len();
            tail.copy_from_slice(&pattern[..n]);
        }
        if let Some((s, off)) = shadow {
            shadow_mark(s, off, len as u64);
        }
        Ok(())
    }

    /// Copies device memory at `ptr` into `out` (the range must lie inside one allocation).
    pub fn read(&mut self, ptr: DevicePtr, out: &mut [u8]) -> Result<(), EmuError> {
        out.copy_from_slice(self.range_mut(ptr, out.len())?);
        Ok(())
    }

    /// [`Memory::read`] into `out`, which must be all zeros: only the 4 KiB chunks holding a
    /// non-zero byte are copied, so the pages of a host buffer fresh from the allocator
    /// (`vec![0; n]`, mapped lazily) stay uncommitted where the device bytes are zero. A 1 GiB
    /// output that no kernel wrote was read back as 1 GiB of committed host memory.
    pub fn read_into_zeroed(&mut self, ptr: DevicePtr, out: &mut [u8]) -> Result<(), EmuError> {
        const CHUNK: usize = 4096;
        let src = self.range_mut(ptr, out.len())?;
        for (d, s) in out.chunks_mut(CHUNK).zip(src.chunks(CHUNK)) {
            if s.iter().any(|&b| b != 0) {
                d.copy_from_slice(s);
            }
        }
        Ok(())
    }

    /// Runs `f` on device memory in place: each range of `reads` as bytes and `write` as mutable
    /// bytes (its current contents), so a host-side operation (the runtime's gemm and
    /// convolution thunks) needs no host copy of its operands: copies of a few MB were fresh
    /// pages each, faulted in on every execution. Each range must lie inside one allocation
    /// (else [`EmuError::HostMemory`]); `Ok(None)` without calling `f` when `write` overlaps a
    /// read (the caller copies instead). The written range counts as written for initcheck.
    pub fn with_views<R>(
        &mut self,
        reads: &[(DevicePtr, usize)],
        write: (DevicePtr, usize),
        f: impl FnOnce(&[&[u8]], &mut [u8]) -> R,
    ) -> Result<Option<R>, EmuError> {
        let overlaps = |&(p, n): &(DevicePtr, usize)| {
            n > 0 && write.1 > 0 && p.0 < write.0 .0 + write.1 as u64 && write.0 .0 < p.0 + n as u64
        };
        let mut spans = Vec::with_capacity(reads.len());
        for &(p, n) in reads {
            spans.push((self.span(p, n)?.0, n));
        }
        let (out, shadow) = self.span(write.0, write.1)?;
        // Validated above (a range past its allocation is an error, not an overlap).
        if reads.iter().any(overlaps) {
            return Ok(None);
        }
        // SAFETY: every span lies inside an allocation's words, which `&mut self` keeps alive
        // and untouched by anything else while `f` runs; the write range is disjoint from every
        // read range (checked above), so the shared views never alias the mutable one.
        let views: Vec<&[u8]> = spans
            .iter()
            .map(|&(p, n)| unsafe { std::slice::from_raw_parts(p as *const u8, n) })
            .collect();
        // SAFETY: as above.
        let out = unsafe { std::slice::from_raw_parts_mut(out, write.1) };
        let r = f(&views, out);
        if let Some((s, off)) = shadow {
            shadow_mark(s, off, write.1 as u64);
        }
        Ok(Some(r))
    }

    /// Reads `len` bytes at `ptr` into a new vector.
    pub fn read_vec(&mut self, ptr: DevicePtr, len: usize) -> Result<Vec<u8>, EmuError> {
        let mut v = vec![0; len];
        self.read(ptr, &mut v)?;
        Ok(v)
    }

    /// The allocation holding `addr`: its (base, end).
    pub(crate) fn allocation_of(&self, addr: u64) -> Option<(u64, u64)> {
        let (base, a) = self.allocs.range(..=addr).next_back()?;
        let end = base + a.size;
        (addr < end).then_some((*base, end))
    }

    /// Every allocation as (base, size, data pointer, initcheck shadow), in address order: the
    /// launch's region table is built from these.
    pub(crate) fn allocations(
        &self,
    ) -> impl Iterator<Item = (u64, u64, *const u8, Option<&[AtomicU8]>)> + '_ {
        self.allocs
            .iter()
            .map(|(b, a)| (*b, a.size, a.words.as_ptr() as *const u8, a.init.as_deref()))
    }
}

/// Loads `size` (1, 2, 4 or 8) bytes little-endian from a naturally aligned pointer into device
/// memory.
///
/// # Safety
/// `p` must point to `size` bytes inside a live allocation's words, aligned to `size`.
#[inline(always)]
pub(crate) unsafe fn atomic_load(p: *const u8, size: u32) -> u64 {
    // SAFETY: the caller guarantees `p` points to `size` live, aligned bytes; the atomic
    // types have the size and alignment of the integers they wrap.
    unsafe {
        match size {
            1 => (*(p as *const AtomicU8)).load(Ordering::Relaxed) as u64,
            2 => (*(p as *const AtomicU16)).load(Ordering::Relaxed) as u64,
            4 => (*(p as *const AtomicU32)).load(Ordering::Relaxed) as u64,
            _ => (*(p as *const AtomicU64)).load(Ordering::Relaxed),
        }
    }
}

/// Stores the low `size` bytes of `v` to a naturally aligned pointer into device memory.
///
/// # Safety
/// As for [`atomic_load`].
#[inline(always)]
pub(crate) unsafe fn atomic_store(p: *const u8, size: u32, v: u64) {
    // SAFETY: the caller guarantees `p` points to `size` live, aligned bytes; the atomic
    // types have the size and alignment of the integers they wrap.
    unsafe {
        match size {
            1 => (*(p as *const AtomicU8)).store(v as u8, Ordering::Relaxed),
            2 => (*(p as *const AtomicU16)).store(v as u16, Ordering::Relaxed),
            4 => (*(p as *const AtomicU32)).store(v as u32, Ordering::Relaxed),
            _ => (*(p as *const AtomicU64)).store(v, Ordering::Relaxed),
        }
    }
}

/// Read-modify-write of `size` bytes as a relaxed load and a relaxed store: `f(old) -> new`;
/// returns the old value. Atomic only under the address's stripe ([`super::stripes`]), which
/// every caller holds. An unchanged value is not stored (a failed `atom.cas` writes nothing, so
/// a spinning CAS never writes back over another thread's release store).
///
/// # Safety
/// As for [`atomic_load`].
#[inline(always)]
pub(crate) unsafe fn striped_rmw(p: *const u8, size: u32, f: impl Fn(u64) -> u64) -> u64 {
    // SAFETY: the caller's guarantee, passed on.
    unsafe {
        let old = atomic_load(p, size);
        let new = f(old);
        if new != old {
            atomic_store(p, size, new);
        }
        old
    }
}

/// Little-endian load from a CTA- or thread-private byte array; `None` when out of bounds.
#[inline(always)]
pub(crate) fn bytes_load(buf: &[u8], off: u64, size: u32) -> Option<u64> {
    let o = usize::try_from(off).ok()?;
    Some(match size {
        1 => *buf.get(o)? as u64,
        2 => u16::from_le_bytes(*buf.get(o..o.checked_add(2)?)?.first_chunk::<2>()?) as u64,
        4 => u32::from_le_bytes(*buf.get(o..o.checked_add(4)?)?.first_chunk::<4>()?) as u64,
        _ => u64::from_le_bytes(*buf.get(o..o.checked_add(8)?)?.first_chunk::<8>()?),
    })
}

/// Little-endian store into a private byte array; `None` when out of bounds.
#[inline(always)]
pub(crate) fn bytes_store(buf: &mut [u8], off: u64, size: u32, v: u64) -> Option<()> {
    let o = usize::try_from(off).ok()?;
    match size {
        1 => *buf.get_mut(o)? = v as u8,
        2 => *buf.get_mut(o..o.checked_add(2)?)?.first_chunk_mut::<2>()? = (v as u16).to_le_bytes(),
        4 => *buf.get_mut(o..o.checked_add(4)?)?.first_chunk_mut::<4>()? = (v as u32).to_le_bytes(),
        _ => *buf.get_mut(o..o.checked_add(8)?)?.first_chunk_mut::<8>()? = v.to_le_bytes(),
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A freed allocation's storage comes back zeroed, whatever was written into it.
    #[test]
    fn reused_storage_is_zeroed() {
        let mut mem = Memory::new();
        let n = 1 << 20;
        let p = mem.alloc(n as u64).unwrap();
        mem.write(p, &vec![0xab; n]).unwrap();
        mem.free(p).unwrap();
        assert_eq!(mem.pool.words.len(), 1);
        let q = mem.alloc(n as u64).unwrap();
        assert!(
            mem.pool.words.is_empty(),
            "the same length is taken from the pool"
        );
        let mut out = vec![1u8; n];
        mem.read(q, &mut out).unwrap();
        assert!(out.iter().all(|&b| b == 0));
    }

    /// Small and huge allocations are not pooled; the pool never holds more than its bound.
    #[test]
    fn pool_is_bounded() {
        let mut mem = Memory::new();
        let small = mem.alloc(1024).unwrap();
        mem.free(small).unwrap();
        let huge = mem.alloc(POOL_MAX_BYTES as u64 + 8).unwrap();
        mem.free(huge).unwrap();
        assert!(mem.pool.words.is_empty());
        let ptrs: Vec<DevicePtr> = (0..6)
            .map(|_| mem.alloc(POOL_MAX_BYTES as u64).unwrap())
            .collect();
        for p in ptrs {
            mem.free(p).unwrap();
        }
        assert_eq!(mem.pool.bytes, POOL_BYTES);
        assert_eq!(mem.pool.words.len(), POOL_BYTES / POOL_MAX_BYTES);
    }

    /// In-place views: reads see the device bytes, the write lands in device memory (its old
    /// contents visible to `f`), and counts as written for initcheck.
    #[test]
    fn views_read_and_write_in_place() {
        let mut mem = Memory::new();
        mem.set_initcheck(true);
        let a = mem.alloc(64).unwrap();
        let b = mem.alloc(64).unwrap();
        mem.write(a, &[1, 2, 3, 4]).unwrap();
        mem.write(b.offset(8), &[9, 9]).unwrap();
        let got = mem
            .with_views(&[(a, 4), (b, 8)], (b.offset(8), 4), |ins, out| {
                assert_eq!(ins[0], &[1, 2, 3, 4]);
                assert_eq!(ins[1], &[0; 8]);
                assert_eq!(out, &[9, 9, 0, 0]);
                out.copy_from_slice(&[5, 6, 7, 8]);
                7
            })
            .unwrap();
        assert_eq!(got, Some(7));
        let mut out = [0u8; 12];
        mem.read(b, &mut out).unwrap();
        assert_eq!(out, [0, 0, 0, 0, 0, 0, 0, 0, 5, 6, 7, 8]);
        let a_shadow = mem
            .allocs
            .get(&b.0)
            .and_then(|x| x.init.as_deref())
            .unwrap();
        assert!(shadow_written(a_shadow, 8, 4));
        assert!(!shadow_written(a_shadow, 12, 1));
    }

    /// A write overlapping a read is refused without calling `f` (the caller copies); a range
    /// outside its allocation is an error naming it.
    #[test]
    fn views_refuse_overlap_and_bad_ranges() {
        let mut mem = Memory::new();
        let a = mem.alloc(64).unwrap();
        let r = mem.with_views(&[(a, 16)], (a.offset(15), 4), |_, _| unreachable!());
        assert_eq!(r.unwrap(), None);
        let disjoint = mem.with_views(&[(a, 16)], (a.offset(16), 4), |_, _| ());
        assert_eq!(disjoint.unwrap(), Some(()));
        let err = mem
            .with_views(&[(a, 65)], (a, 0), |_, _| ())
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not inside one allocation"), "{err}");
        let err = mem
            .with_views(&[], (a.offset(60), 8), |_, _| ())
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not inside one allocation"), "{err}");
    }
}
