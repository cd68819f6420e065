//! The emulated device as a sanitizer, in the manner of compute-sanitizer's tools:
//!
//! * **memcheck** (always on): every global access must lie inside one *region* of the launch,
//!   every shared access inside one shared variable or the dynamic shared memory, every local
//!   access inside one local variable. Global regions are the buffer slices the launch was given
//!   ([`ArgSlice`], what the runtime passes) plus the module's variables, or, for a launch given
//!   no slices, every device allocation. A miss is [`EmuError::OutOfBounds`] naming the nearest
//!   region and by how many bytes it was missed.
//! * **initcheck** ([`LaunchOptions::initcheck`]): a read of a byte nothing wrote since it was
//!   allocated (device memory made with [`Memory::set_initcheck`]) or since the CTA began
//!   (shared, local) is [`EmuError::UninitializedRead`].
//! * **racecheck** ([`LaunchOptions::racecheck`]): two threads of different warps touching the
//!   same shared byte between two barrier releases, at least one writing, is
//!   [`EmuError::SharedRace`].
//!
//! The regions are a sorted table built once per launch; the engine keeps the last region hit
//! per worker, so the common access costs the same two compares as the old per-allocation
//! check. Initcheck and racecheck send accesses down the per-lane path (off by default).
//!
//! What address-based checks cannot see: an access through one argument's pointer that lands
//! inside *another* region of the launch (compute-sanitizer's memcheck has the same limit), and
//! one that lands inside another shared or local variable further than the redzone away.
//!
//! [`EmuError::OutOfBounds`]: super::EmuError::OutOfBounds
//! [`EmuError::UninitializedRead`]: super::EmuError::UninitializedRead
//! [`EmuError::SharedRace`]: super::EmuError::SharedRace
//! [`LaunchOptions::initcheck`]: super::LaunchOptions::initcheck
//! [`LaunchOptions::racecheck`]: super::LaunchOptions::racecheck
//! [`Memory::set_initcheck`]: super::Memory::set_initcheck
use std::sync::atomic::AtomicU8;

use super::decode::{ParamSlot, VarRegion};
use super::memory::{DevicePtr, Memory};

/// A kernel argument's buffer: the `size` bytes at `address` that parameter `param` points to.
/// The runtime passes one per pointer argument, so that an access past the end of a slice is a
/// fault even where the allocation the slice is carved from goes on, and a store into a slice
/// not `written` is one too (the executable says the kernel only reads it, and the runtime
/// relies on that: it hands the caller's own buffer to such an argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgSlice {
    /// Parameter index.
    pub param: usize,
    /// First byte.
    pub address: DevicePtr,
    /// Bytes.
    pub size: u64,
    /// The kernel may write the slice.
    pub written: bool,
}

/// Who a global region belongs to, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// A device allocation (launches given no slices).
    Allocation,
    /// The slice of a kernel argument.
    Argument(usize),
    /// A module-scope `.global` / `.const` variable.
    ModuleVar(usize),
}

/// `lo..hi` of global memory, with the host pointer of byte `lo` and the initcheck shadow of
/// its allocation (bit `lo - alloc_base` is byte `lo`'s).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Region {
    pub lo: u64,
    pub hi: u64,
    pub ptr: *const u8,
    pub shadow: *const AtomicU8,
    pub shadow_len: usize,
    pub alloc_base: u64,
    /// Stores may land here (false: a kernel argument the launch says is only read).
    pub writable: bool,
    owner: Owner,
}

/// The global regions of one launch, sorted and disjoint.
pub(crate) struct GlobalMap {
    regions: Vec<Region>,
}

// SAFETY: the pointers point into allocations of the `Memory` the launch borrows (shared) for
// its whole duration, so they stay valid while any worker holds the map; every access through
// them is an atomic of the allocation's words or shadow, so sharing them between worker
// threads is as race-free as sharing `&Memory`.
unsafe impl Sync for GlobalMap {}
// SAFETY: as above.
unsafe impl Send for GlobalMap {}

impl GlobalMap {
    /// The regions of a launch: each slice (clipped to nothing if it is not inside one
    /// allocation; the runtime validated them at load) plus the module variables at
    /// `var_addrs`, or every allocation when `slices` is empty. Overlapping slices (an argument
    /// passed twice, in-place operands) merge into one region.
    pub(crate) fn new(mem: &Memory, slices: &[ArgSlice], var_addrs: &[u64]) -> GlobalMap {
        let allocs: Vec<_> = mem.allocations().collect();
        let find = |addr: u64| {
            let i = allocs.partition_point(|a| a.0 <= addr).checked_sub(1)?;
            allocs.get(i).filter(|a| addr < a.0 + a.1)
        };
        let make = |lo: u64, size: u64, owner: Owner, writable: bool| -> Option<Region> {
            let &(base, asize, ptr, shadow) = find(lo)?;
            let hi = lo.checked_add(size)?;
            if hi > base + asize || size == 0 {
                return None;
            }
            Some(Region {
                lo,
                hi,
                // SAFETY: `lo - base` is inside the allocation's bytes.
                ptr: unsafe { ptr.add((lo - base) as usize) },
                shadow: shadow.map_or(std::ptr::null(), |s| s.as_ptr()),
                shadow_len: shadow.map_or(0, |s| s.len()),
                alloc_base: base,
                writable,
                owner,
            })
        };
        let mut regions: Vec<Region> = if slices.is_empty() {
            allocs
                .iter()
                .filter_map(|&(b, size, _, _)| make(b, size, Owner::Allocation, true))
                .collect()
        } else {
            let args = slices
                .iter()
                .filter_map(|s| make(s.address.0, s.size, Owner::Argument(s.param), s.written));
            let vars = var_addrs.iter().enumerate().filter_map(|(i, &a)| {
                let &(b, size, _, _) = find(a)?;
                make(b, size, Owner::ModuleVar(i), true)
            });
            args.chain(vars).collect()
        };
        regions.sort_by_key(|r| (r.lo, std::cmp::Reverse(r.hi)));
        let mut merged: Vec<Region> = Vec::with_capacity(regions.len());
        for r in regions {
            match merged.last_mut() {
                // Overlapping slices (one buffer passed twice, in place) are one region,
                // writable when either is.
                Some(last) if r.lo < last.hi => {
                    last.hi = last.hi.max(r.hi);
                    last.writable |= r.writable;
                }
                _ => merged.push(r),
            }
        }
        GlobalMap { regions: merged }
    }

    /// The region holding `addr`.
    #[inline]
    pub(crate) fn find(&self, addr: u64) -> Option<&Region> {
        self.index_of(addr).and_then(|i| self.regions.get(i))
    }

    /// The index of the region holding `addr` (for [`GlobalMap::get`]).
    #[inline]
    pub(crate) fn index_of(&self, addr: u64) -> Option<usize> {
        let i = self
            .regions
            .partition_point(|r| r.lo <= addr)
            .checked_sub(1)?;
        self.regions.get(i).filter(|r| addr < r.hi).map(|_| i)
    }

    /// The region at index `i`, if there is one.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<&Region> {
        self.regions.get(i)
    }

    fn describe(&self, r: &Region, params: &[ParamSlot], var_names: &[String]) -> String {
        let size = r.hi - r.lo;
        match r.owner {
            Owner::Allocation => format!("the allocation of {size} bytes at {:#x}", r.lo),
            Owner::Argument(i) => format!(
                "kernel argument {i} `{}` ({size} bytes at {:#x})",
                params.get(i).map_or("?", |p| p.name.as_str()),
                r.lo
            ),
            Owner::ModuleVar(i) => format!(
                "module variable `{}` ({size} bytes at {:#x})",
                var_names.get(i).map_or("?", |n| n.as_str()),
                r.lo
            ),
        }
    }

    /// The region holding `addr`, described.
    pub(crate) fn name_of(&self, addr: u64, params: &[ParamSlot], var_names: &[String]) -> String {
        match self.find(addr) {
            Some(r) => self.describe(r, params, var_names),
            None => "global memory".to_string(),
        }
    }

    /// What an access of `size` bytes at `addr` missed: the nearest region and by how much.
    pub(crate) fn missed(
        &self,
        mem: &Memory,
        addr: u64,
        size: u32,
        params: &[ParamSlot],
        var_names: &[String],
    ) -> String {
        let regions: Vec<(u64, u64, String)> = self
            .regions
            .iter()
            .map(|r| (r.lo, r.hi, self.describe(r, params, var_names)))
            .collect();
        let mut s = nearest(&regions, addr, size as u64, "no buffer of this launch");
        if let Some((b, e)) = mem.allocation_of(addr) {
            if self.find(addr).is_none() {
                s.push_str(&format!(
                    "; the address is inside the device allocation {b:#x}..{e:#x}, outside every buffer this launch was given"
                ));
            }
        }
        s
    }
}

/// The shared or local variables of a launch, sorted by offset (sizes 0 kept: they hold no
/// byte, so every access to them misses).
pub(crate) struct VarMap {
    vars: Vec<(u64, u64, String)>,
    space: &'static str,
}

impl VarMap {
    /// `vars` plus, for shared memory, the dynamic shared memory at `dynamic`.
    pub(crate) fn new(
        vars: &[VarRegion],
        dynamic: Option<(u64, u64)>,
        space: &'static str,
    ) -> VarMap {
        let mut v: Vec<(u64, u64, String)> = vars
            .iter()
            .map(|r| {
                (
                    r.off,
                    r.off.saturating_add(r.size),
                    format!("{space} variable `{}`", r.name),
                )
            })
            .collect();
        if let Some((lo, size)) = dynamic.filter(|d| d.1 > 0) {
            v.push((lo, lo + size, "the dynamic shared memory".to_string()));
        }
        v.sort_by_key(|r| r.0);
        VarMap { vars: v, space }
    }

    /// The variable holding `off..off + size` entirely: its bounds.
    #[inline]
    pub(crate) fn find(&self, off: u64, size: u64) -> Option<(u64, u64)> {
        let i = self.vars.partition_point(|r| r.0 <= off).checked_sub(1)?;
        let &(lo, hi, _) = self.vars.get(i)?;
        (off < hi && off.saturating_add(size) <= hi).then_some((lo, hi))
    }

    /// The name of the variable holding `off`.
    pub(crate) fn name_of(&self, off: u64) -> String {
        let i = self.vars.partition_point(|r| r.0 <= off).checked_sub(1);
        match i.and_then(|i| self.vars.get(i)).filter(|r| off < r.1) {
            Some((lo, hi, name)) => format!(
                "{name} ({} bytes at {} offset {lo:#x})",
                hi - lo,
                self.space
            ),
            None => format!("{} memory", self.space),
        }
    }

    /// What an access missed, as for global memory.
    pub(crate) fn missed(&self, off: u64, size: u32) -> String {
        let regions: Vec<(u64, u64, String)> = self
            .vars
            .iter()
            .map(|(lo, hi, n)| {
                (
                    *lo,
                    *hi,
                    format!("{n} ({} bytes at {} offset {lo:#x})", hi - lo, self.space),
                )
            })
            .collect();
        // Shared and local addresses are 32-bit: one past 2^31 is a negative offset (`[p+-8]`),
        // before the first variable rather than far past the last.
        if (1 << 31..1 << 32).contains(&off) {
            if let Some((lo, _, name)) = regions.first() {
                return format!(
                    "{} bytes before the start of {name}",
                    (1u64 << 32) - off + lo
                );
            }
        }
        let none = format!("no {} variable", self.space);
        nearest(&regions, off, size as u64, &none)
    }
}

/// "N bytes past the end of X" / "N bytes before the start of X" for the region nearest to an
/// access of `size` bytes at `addr` (`regions` sorted by start); `none` when there is none.
fn nearest(regions: &[(u64, u64, String)], addr: u64, size: u64, none: &str) -> String {
    let i = regions.partition_point(|r| r.0 <= addr);
    let prev = i.checked_sub(1).and_then(|j| regions.get(j));
    let next = regions.get(i);
    let end = addr.saturating_add(size);
    if let Some((_, hi, name)) = prev.filter(|p| addr < p.1) {
        return format!(
            "its last {} bytes are past the end of {name}",
            end.saturating_sub(*hi)
        );
    }
    let past = prev.map(|(_, hi, name)| (addr - hi, name));
    let before = next.map(|(lo, _, name)| (lo - addr, name));
    match (past, before) {
        (Some((p, pn)), Some((b, _))) if p <= b => format!("{p} bytes past the end of {pn}"),
        (_, Some((b, bn))) => format!("{b} bytes before the start of {bn}"),
        (Some((p, pn)), None) => format!("{p} bytes past the end of {pn}"),
        (None, None) => format!("{none} is mapped"),
    }
}

/// Racecheck's record of one shared byte since the last barrier release (epoch).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RaceCell {
    /// Epoch of the last write and the writing thread.
    w_epoch: u32,
    writer: u32,
    /// The last write changed the byte (else a read sees the same byte in either order).
    w_changed: bool,
    /// Epoch of the reads, the first reading thread and the first from another warp than it
    /// (`NOBODY` when none): a later write conflicts with one of the two unless every read was
    /// by its own warp.
    r_epoch: u32,
    reader: u32,
    reader_other: u32,
}

const NOBODY: u32 = u32::MAX;

/// Records an access by thread `tid` in `epoch`; returns the conflicting earlier thread and the
/// hazard when a thread of another warp touched the byte in the same epoch, one of them writing.
/// Threads of one warp run in lockstep in the emulator and are not compared. A write that
/// leaves the byte as it was (`changes` false) conflicts with nothing: whichever order the
/// threads ran in, every one of them sees the same byte (Triton's epilogues store replicated
/// accumulators from several warps, the same bytes each).
#[inline]
pub(crate) fn race_access(
    cell: &mut RaceCell,
    epoch: u32,
    tid: u32,
    write: bool,
    changes: bool,
) -> Option<(u32, &'static str)> {
    let other_warp = |t: u32| t != NOBODY && t / 32 != tid / 32;
    if write && !changes {
        cell.w_epoch = epoch;
        cell.writer = tid;
        cell.w_changed = false;
        return None;
    }
    if cell.w_epoch == epoch && other_warp(cell.writer) && (write || cell.w_changed) {
        let hazard = if write {
            "write-after-write"
        } else {
            "read-after-write"
        };
        return Some((cell.writer, hazard));
    }
    if write {
        if cell.r_epoch == epoch {
            if let Some(&t) = [cell.reader, cell.reader_other]
                .iter()
                .find(|&&t| other_warp(t))
            {
                return Some((t, "write-after-read"));
            }
        }
        cell.w_epoch = epoch;
        cell.writer = tid;
        cell.w_changed = true;
    } else if cell.r_epoch != epoch {
        cell.r_epoch = epoch;
        cell.reader = tid;
        cell.reader_other = NOBODY;
    } else if cell.reader_other == NOBODY && other_warp(cell.reader) {
        cell.reader_other = tid;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_the_closest_region_and_the_distance() {
        let r = vec![(100, 180, "a".to_string()), (2000, 2080, "b".to_string())];
        assert_eq!(nearest(&r, 692, 4, "x"), "512 bytes past the end of a");
        assert_eq!(nearest(&r, 1996, 4, "x"), "4 bytes before the start of b");
        assert_eq!(nearest(&r, 96, 4, "x"), "4 bytes before the start of a");
        assert_eq!(
            nearest(&r, 178, 4, "x"),
            "its last 2 bytes are past the end of a"
        );
        assert_eq!(nearest(&r, 5000, 4, "x"), "2920 bytes past the end of b");
        assert_eq!(nearest(&[], 5, 4, "nothing"), "nothing is mapped");
    }

    #[test]
    fn racecheck_flags_other_warps_only_within_an_epoch() {
        let mut c = RaceCell::default();
        let r = |c: &mut RaceCell, e, t, w, ch| race_access(c, e, t, w, ch);
        assert_eq!(r(&mut c, 1, 0, true, true), None);
        assert_eq!(r(&mut c, 1, 5, false, false), None, "same warp");
        assert_eq!(
            r(&mut c, 1, 40, false, false),
            Some((0, "read-after-write"))
        );
        let mut c = RaceCell::default();
        assert_eq!(r(&mut c, 1, 40, false, false), None);
        assert_eq!(r(&mut c, 1, 0, true, false), None, "the byte unchanged");
        assert_eq!(
            r(&mut c, 1, 70, false, false),
            None,
            "it reads the same either way"
        );
        assert_eq!(r(&mut c, 1, 0, true, true), Some((40, "write-after-read")));
        assert_eq!(r(&mut c, 2, 0, true, true), None, "a barrier between");
        assert_eq!(r(&mut c, 2, 64, true, true), Some((0, "write-after-write")));
    }
}
