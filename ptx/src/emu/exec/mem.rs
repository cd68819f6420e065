//! Memory instructions and address resolution: every access is bounds- and alignment-checked,
//! a whole warp at once when all its lanes land in one global allocation or in shared memory.
use super::super::decode::IOp;
use super::super::decode::{AKind, AOp, Addr, Inst, Op, NONE, R};
use super::super::error::{Access, Space};
use super::super::lanes;
use super::super::memory::{
    atomic_load, atomic_store, bytes_load, bytes_store, shadow_mark, shadow_written, striped_rmw,
    LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE,
};
use super::super::numeric::{self as num, Fmt, Rnd};
use super::super::sanitize::{race_access, Region};
use super::alu::ibin;
use super::float::packed2;
use super::local::LocalFault;
use super::prefetch::prefetch_after;
use super::regs::{rd, rd1, wr, wr1};
use super::{CtaMem, Fault, FaultKind, LaunchCtx, Warp, FULL};

pub(super) fn atom_new(op: AOp, kind: AKind, old: u64, b: u64, c: u64) -> u64 {
    match kind {
        AKind::Int(ty) => {
            let bits = ty.bits;
            let t = |v: u64| num::trunc(v, bits);
            match op {
                AOp::Add => t(old.wrapping_add(b)),
                AOp::Min => ibin(IOp::Min, ty, old, b),
                AOp::Max => ibin(IOp::Max, ty, old, b),
                AOp::Inc => {
                    if t(old) >= t(b) {
                        0
                    } else {
                        t(old + 1)
                    }
                }
                AOp::Dec => {
                    if t(old) == 0 || t(old) > t(b) {
                        t(b)
                    } else {
                        t(old - 1)
                    }
                }
                AOp::And => t(old & b),
                AOp::Or => t(old | b),
                AOp::Xor => t(old ^ b),
                AOp::Exch => t(b),
                AOp::Cas => {
                    if t(old) == t(b) {
                        t(c)
                    } else {
                        t(old)
                    }
                }
            }
        }
        AKind::Float(fmt) => match op {
            AOp::Add => num::fbin(num::FOp::Add, fmt, Rnd::Rn, fmt == Fmt::F32, old, b),
            AOp::Min => num::fminmax(fmt, false, false, false, old, b),
            AOp::Max => num::fminmax(fmt, true, false, false, old, b),
            AOp::Exch => b,
            AOp::Cas => {
                if old == b {
                    c
                } else {
                    old
                }
            }
            _ => old,
        },
        AKind::Packed(fmt) => match op {
            AOp::Add => packed2(old, b, |x, y| {
                num::fbin(num::FOp::Add, fmt, Rnd::Rn, false, x, y)
            }),
            AOp::Min => packed2(old, b, |x, y| num::fminmax(fmt, false, false, false, x, y)),
            AOp::Max => packed2(old, b, |x, y| num::fminmax(fmt, true, false, false, x, y)),
            AOp::Exch => b,
            _ => old,
        },
    }
}

pub(super) fn atom_size(kind: AKind) -> u32 {
    match kind {
        AKind::Int(t) => t.bits / 8,
        AKind::Float(f) => f.bits() / 8,
        AKind::Packed(_) => 4,
    }
}

/// The address lane `lane` of a memory instruction accesses.
#[inline(always)]
pub(super) fn lane_address(regs: &[[u64; 32]], addr: Addr, lane: u32) -> u64 {
    let Addr { base, base32, off } = addr;
    let b = if base == NONE {
        0
    } else {
        rd1(regs, base, lane)
    };
    let b = if base32 { b & 0xffff_ffff } else { b };
    b.wrapping_add(off as u64)
}

/// Per-lane addresses `base + off` of a memory instruction.
#[inline(always)]
pub(super) fn lane_addrs(regs: &[[u64; 32]], addr: Addr) -> [u64; 32] {
    let Addr { base, base32, off } = addr;
    let bv = if base == NONE {
        [0u64; 32]
    } else {
        *rd(regs, base)
    };
    let mut a = [0u64; 32];
    for l in 0..32 {
        let b = if base32 { bv[l] & 0xffff_ffff } else { bv[l] };
        a[l] = b.wrapping_add(off as u64);
    }
    a
}

/// Calls `f(lane, size)` for each active lane in ascending order. For a whole warp of 4- or
/// 8-byte accesses the lanes are a plain loop and `size` a constant, so the size `match` of
/// `atomic_load`/`atomic_store` folds away; otherwise the bit walk.
#[inline(always)]
fn each_lane(mask: u32, size: u32, mut f: impl FnMut(usize, u32)) {
    match (mask, size) {
        (FULL, 4) => {
            for l in 0..32 {
                f(l, 4);
            }
        }
        (FULL, 8) => {
            for l in 0..32 {
                f(l, 8);
            }
        }
        _ => {
            let mut mm = mask;
            while mm != 0 {
                let l = mm.trailing_zeros() as usize;
                mm &= mm - 1;
                f(l, size);
            }
        }
    }
}

/// Loads the active lanes' `size`-byte values at `addrs` (device addresses, `cb` the cached
/// allocation's base, `ptr` its host storage) into `out`.
///
/// # Safety
/// Every active lane's address must lie, aligned to `size`, inside the allocation at `cb`.
#[inline(always)]
unsafe fn gather(
    ptr: *const u8,
    cb: u64,
    addrs: &[u64; 32],
    mask: u32,
    size: u32,
    out: &mut [u64; 32],
) {
    each_lane(mask, size, |l, size| {
        // SAFETY: lane `l` is active, and the caller vouches for active lanes.
        out[l] = unsafe { atomic_load(ptr.add((addrs[l] - cb) as usize), size) };
    });
}

/// Whether the active lanes' addresses are pairwise distinct, shown cheaply: in lane order
/// they fall into at most four strictly ascending runs whose spans do not overlap (a
/// scatter-add's warp is two runs: two update rows of 16 lanes, each lane 8 floats on). More
/// runs, or spans that overlap, answer no, and the caller takes the lane-by-lane path.
#[inline(always)]
fn distinct(addrs: &[u64; 32], mask: u32) -> bool {
    let mut runs = [(0u64, 0u64); 4];
    let (mut n, mut mm) = (0usize, mask);
    while mm != 0 {
        let l = mm.trailing_zeros() as usize;
        mm &= mm - 1;
        let a = addrs[l];
        match runs.get_mut(n.wrapping_sub(1)) {
            Some(run) if a > run.1 => run.1 = a,
            _ => match runs.get_mut(n) {
                Some(run) => {
                    *run = (a, a);
                    n += 1;
                }
                None => return false,
            },
        }
    }
    let runs = &runs[..n];
    runs.iter()
        .enumerate()
        .all(|(i, x)| runs[i + 1..].iter().all(|y| x.1 < y.0 || y.1 < x.0))
}

/// Sign-extends every lane of `row` from its low `size` bytes (a signed load's values).
#[inline(always)]
fn sext_row(row: &mut [u64; 32], size: u32) {
    for v in row.iter_mut() {
        *v = num::sext(*v, size * 8) as u64;
    }
}

/// Stores the active lanes' low `size` bytes of `vals` at `addrs`, lane by lane in ascending
/// order (two lanes on one address: the higher lane's value stays, as on the per-lane path).
///
/// # Safety
/// As for [`gather`].
#[inline(always)]
unsafe fn scatter(
    ptr: *const u8,
    cb: u64,
    addrs: &[u64; 32],
    mask: u32,
    size: u32,
    vals: &[u64; 32],
) {
    each_lane(mask, size, |l, size| {
        // SAFETY: lane `l` is active, and the caller vouches for active lanes.
        unsafe { atomic_store(ptr.add((addrs[l] - cb) as usize), size, vals[l]) };
    });
}

/// Where a whole warp's access lands when the fast path applies.
#[derive(Clone, Copy)]
pub(super) enum Fast {
    /// Every active lane inside the cached global allocation.
    Global,
    /// Every active lane inside the CTA's shared memory.
    Shared,
    /// Every active lane inside the kernel's parameter buffer (read-only: a store faults).
    Param,
}

/// Where an address lands after resolving generic addressing.
pub(super) enum Target {
    Global(*const u8),
    Shared(u64),
    Local(u64),
    Param(u64),
}

impl<'a> LaunchCtx<'a> {
    /// Resolves `addr` in `space` for an access of `size` bytes (alignment `align`) by `lane`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn resolve(
        &self,
        m: &mut CtaMem,
        space: Space,
        addr: u64,
        size: u32,
        align: u32,
        lane: u32,
        write: bool,
    ) -> Result<Target, Fault> {
        if addr & (align as u64 - 1) != 0 {
            return Err(Fault::new(FaultKind::Misaligned, space, addr, size, lane));
        }
        let space = if space == Space::Generic {
            if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) {
                return Ok(Target::Shared(addr - SHARED_WINDOW));
            } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) {
                return Ok(Target::Local(addr - LOCAL_WINDOW));
            } else if (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&addr) {
                if write {
                    return Err(Fault::new(
                        FaultKind::ReadOnly,
                        Space::Param,
                        addr,
                        size,
                        lane,
                    ));
                }
                return Ok(Target::Param(addr - PARAM_WINDOW));
            }
            Space::Global
        } else {
            space
        };
        match space {
            Space::Shared => Ok(Target::Shared(addr & 0xffff_ffff)),
            Space::Local => Ok(Target::Local(addr & 0xffff_ffff)),
            Space::Param => {
                if write {
                    return Err(Fault::new(
                        FaultKind::ReadOnly,
                        Space::Param,
                        addr,
                        size,
                        lane,
                    ));
                }
                Ok(Target::Param(addr))
            }
            _ => {
                let end = addr.saturating_add(size as u64);
                if !(addr >= m.cache_base && end <= m.cache_end) {
                    match self.recache(m, addr) {
                        Some(r) if end <= r.hi => {}
                        _ => return Err(Fault::new(FaultKind::Oob, space, addr, size, lane)),
                    }
                }
                if write && !m.cache_writable {
                    return Err(Fault::new(FaultKind::NotWritten, space, addr, size, lane));
                }
                // SAFETY: addr..end lies inside the cached region, inside its allocation.
                Ok(Target::Global(unsafe {
                    m.cache_ptr.add((addr - m.cache_base) as usize)
                }))
            }
        }
    }

    /// The global region holding `addr`, made the cached one. The region cached before the
    /// current one is tried before the search: a kernel that alternates between two buffers
    /// (a scatter's update loads and its table's atomics, eight pairs per thread) otherwise
    /// searched the map on every access (`GlobalMap::find` was 6 % of the scatter-add).
    #[inline(always)]
    fn recache(&self, m: &mut CtaMem, addr: u64) -> Option<&Region> {
        let i = match self.globals.get(m.cache_prev) {
            Some(r) if r.lo <= addr && addr < r.hi => m.cache_prev,
            _ => self.globals.index_of(addr)?,
        };
        let r = self.globals.get(i)?;
        m.cache_prev = std::mem::replace(&mut m.cache_idx, i);
        m.cache_region(r);
        Some(r)
    }

    /// True when `o..o + size` lies inside one shared variable or the dynamic shared memory
    /// (which becomes the cached one).
    #[inline(always)]
    fn shared_in(&self, m: &mut CtaMem, o: u64, size: u64) -> bool {
        let end = o.saturating_add(size);
        if o >= m.sh_lo && end <= m.sh_hi {
            return true;
        }
        match self.shared_map.find(o, size) {
            Some((lo, hi)) => {
                m.sh_lo = lo;
                m.sh_hi = hi;
                true
            }
            None => false,
        }
    }

    /// Initcheck and racecheck of a resolved access of `size` bytes by thread `tid` (`addr` is
    /// what a fault reports); stores and atomics mark the bytes written. `value` is what a
    /// store writes: a byte written with the value it already holds is no race (Triton's
    /// epilogues store replicated accumulators from several warps, the same bytes each).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn check_init_race(
        &self,
        m: &mut CtaMem,
        t: &Target,
        addr: u64,
        size: u32,
        tid: u32,
        lane: u32,
        access: Access,
        value: u64,
    ) -> Result<(), Fault> {
        let reads = access != Access::Write;
        let uninit = |sp: Space| Fault::new(FaultKind::Uninit, sp, addr, size, lane).with(access);
        match *t {
            Target::Global(_) if self.initcheck && !m.cache_shadow.is_null() => {
                // SAFETY: the cached region's shadow pointer and length come from a live
                // allocation's shadow slice (see `GlobalMap`).
                let shadow =
                    unsafe { std::slice::from_raw_parts(m.cache_shadow, m.cache_shadow_len) };
                let off = addr.wrapping_sub(m.cache_alloc);
                if reads && !shadow_written(shadow, off, size as u64) {
                    return Err(uninit(Space::Global));
                }
                if access != Access::Read {
                    shadow_mark(shadow, off, size as u64);
                }
            }
            Target::Shared(o) => {
                if self.racecheck && access != Access::Atomic {
                    for b in o..o + size as u64 {
                        let new = (value >> (8 * (b - o))) as u8;
                        let changes = m.shared.get(b as usize) != Some(&new);
                        if let Some(cell) = m.race.get_mut(b as usize) {
                            let write = access == Access::Write;
                            if let Some((other, hazard)) =
                                race_access(cell, m.epoch, tid, write, changes)
                            {
                                let kind = FaultKind::Race(hazard, other);
                                return Err(Fault::new(kind, Space::Shared, o, size, lane));
                            }
                        }
                    }
                }
                if self.initcheck {
                    mark_private(&mut m.shared_init, o, size, reads, access)
                        .map_err(|()| uninit(Space::Shared))?;
                }
            }
            Target::Local(o) if self.initcheck => {
                let writes = access != Access::Read;
                let written = m
                    .local
                    .mark_init(tid, o, size, reads, writes, self.local)
                    .map_err(|f| local_fault(f, o, size, lane, access))?;
                if !written {
                    return Err(uninit(Space::Local));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Checks a whole warp's scalar access at once: all active lanes aligned and inside one
    /// global allocation (which becomes the cached one), inside shared memory, or inside the
    /// parameter buffer. `None` sends the instruction down the per-lane path, which
    /// also produces the precise error.
    #[inline(always)]
    pub(super) fn fast_target(
        &self,
        m: &mut CtaMem,
        space: Space,
        addrs: &[u64; 32],
        mask: u32,
        size: u32,
    ) -> Option<Fast> {
        self.fast_extent(m, space, addrs, mask, size, u64::from(size))
    }

    /// [`Self::fast_target`] for a store or read-modify-write: a global region must also be
    /// writable (else the per-lane path reports the first lane's fault).
    #[inline(always)]
    fn fast_store_target(
        &self,
        m: &mut CtaMem,
        space: Space,
        addrs: &[u64; 32],
        mask: u32,
        size: u32,
    ) -> Option<Fast> {
        match self.fast_target(m, space, addrs, mask, size) {
            Some(Fast::Global) if !m.cache_writable => None,
            fast => fast,
        }
    }

    /// [`Self::fast_target`] for accesses aligned to `size` that cover `span` bytes from each
    /// active lane's address (a load group's members, each `size` bytes, `span` from the first
    /// address of the lowest to the end of the highest).
    #[inline(always)]
    fn fast_extent(
        &self,
        m: &mut CtaMem,
        space: Space,
        addrs: &[u64; 32],
        mask: u32,
        size: u32,
        span: u64,
    ) -> Option<Fast> {
        let (mut lo, mut hi, mut or) = (u64::MAX, 0u64, 0u64);
        if mask == FULL {
            // The common case: every lane, a loop without the bit walk.
            for &a in addrs {
                lo = lo.min(a);
                hi = hi.max(a);
                or |= a;
            }
        } else {
            let mut mm = mask;
            while mm != 0 {
                let l = mm.trailing_zeros() as usize;
                mm &= mm - 1;
                let a = addrs[l];
                lo = lo.min(a);
                hi = hi.max(a);
                or |= a;
            }
        }
        if mask == 0 || or & (size as u64 - 1) != 0 {
            return None;
        }
        let end = hi.checked_add(span)?;
        match space {
            Space::Global | Space::Const | Space::Generic if !self.initcheck => {
                if !(lo >= m.cache_base && end <= m.cache_end) {
                    // Global allocations never overlap the generic windows, so a hit is global.
                    let r = self.recache(m, lo)?;
                    if end > r.hi {
                        return None;
                    }
                }
                if end - lo <= 32 * span {
                    prefetch_after(m, end, end - lo);
                }
                Some(Fast::Global)
            }
            Space::Shared
                if !self.initcheck
                    && !self.racecheck
                    && end <= m.shared.len() as u64
                    && self.shared_in(m, lo, end - lo) =>
            {
                Some(Fast::Shared)
            }
            // Every kernel reads its parameters with `ld.param`, every warp of every CTA: the
            // per-lane path for them was a few percent of a short kernel.
            Space::Param if end <= self.params.len() as u64 => Some(Fast::Param),
            _ => None,
        }
    }

    /// A whole warp's `ld.global.v2/.v4` at once when every active lane's vector is aligned and
    /// inside the cached allocation (`fast_target` on the vector's bytes): component by
    /// component, each a [`gather`] into its register. Loads in any order read the same bytes,
    /// so this equals the per-lane path; `false` leaves the instruction to it (other spaces,
    /// sanitizers, or an access the per-lane path must fault on). Vector loads were a lane at a
    /// time, which made them cost more than the scalar loads they replace (a logsumexp with
    /// `ld.global.v4`: 17.0 ms lane by lane, 10.5 ms so). Never inlined: inlined into the warp
    /// loop, the two vector paths doubled the time of a kernel with no vector access at all
    /// (logsumexp with scalar loads, 8.6 -> 17.7 ms: the hot loop's code got worse around them).
    #[inline(never)]
    fn load_vector(
        &self,
        m: &mut CtaMem,
        w: &mut Warp,
        (space, addr): (Space, Addr),
        mask: u32,
        (size, n): (u32, u32),
        (ds, sext): (&[R; 4], bool),
    ) -> bool {
        if self.initcheck || self.racecheck {
            return false;
        }
        let addrs = lane_addrs(&w.regs, addr);
        let Some(Fast::Global) = self.fast_target(m, space, &addrs, mask, size * n) else {
            return false;
        };
        let (ptr, cb) = (m.cache_ptr, m.cache_base);
        m.counters.global_bytes_read += u64::from(size * n * mask.count_ones());
        for (k, &d) in ds.iter().enumerate().take(n as usize) {
            if d == NONE {
                continue;
            }
            let at = addrs.map(|a| a.wrapping_add(u64::from(k as u32 * size)));
            let mut out = [0u64; 32];
            // SAFETY: fast_target checked every active lane's whole vector against the cached
            // allocation, and its alignment to the vector (so to each component).
            unsafe { gather(ptr, cb, &at, mask, size, &mut out) };
            if sext {
                sext_row(&mut out, size);
            }
            wr(&mut w.regs, d, &out, mask);
        }
        true
    }

    /// A load group ([`super::fast::load_group_len`]: `loads`, each an unguarded scalar load
    /// of one size from one base register that none of them writes) for the whole warp at
    /// once, when every active lane's extent (its lowest member's address to the end of its
    /// highest) lies in one global allocation: one address row, one bounds check, then each
    /// member's [`gather`] in order. The members read what they would one by one (none writes
    /// the base, and loads in any order read the same bytes), so this equals the loop's path;
    /// `false` (other spaces, sanitizers, an extent the per-load path must check or fault on)
    /// leaves every member to it, nothing done. The caller counts the instructions.
    #[inline(never)]
    pub(super) fn load_group(&self, m: &mut CtaMem, w: &mut Warp, loads: &[Inst]) -> bool {
        let Some(&Inst {
            op:
                Op::Ld {
                    space,
                    size,
                    addr: first,
                    ..
                },
            ..
        }) = loads.first()
        else {
            return false;
        };
        if self.initcheck || self.racecheck {
            return false;
        }
        let size = u32::from(size);
        let (mut lo, mut hi) = (first.off, first.off);
        for i in loads {
            if let Op::Ld { addr, .. } = i.op {
                (lo, hi) = (lo.min(addr.off), hi.max(addr.off));
            }
        }
        let mask = w.gmask;
        let addrs = lane_addrs(&w.regs, Addr { off: lo, ..first });
        let span = hi.abs_diff(lo) + u64::from(size);
        let Some(Fast::Global) = self.fast_extent(m, space, &addrs, mask, size, span) else {
            return false;
        };
        let ptr = m.cache_ptr;
        m.counters.global_bytes_read += u64::from(size * mask.count_ones()) * loads.len() as u64;
        for i in loads {
            let Op::Ld { sext, ds, addr, .. } = i.op else {
                continue;
            };
            // Member addresses are `addrs + (off - lo)`: gathered from a base moved down by
            // as much, with no address row of their own (the base, a global region's start, is
            // at least `GLOBAL_BASE`, far above any delta).
            let cb = m.cache_base.wrapping_sub(addr.off.abs_diff(lo));
            if sext {
                let mut out = [0u64; 32];
                // SAFETY: fast_extent checked every active lane's extent, which holds this
                // member's `size` bytes, against the cached allocation, and its alignment (the
                // members' offsets differ from the lowest by multiples of `size`).
                unsafe { gather(ptr, cb, &addrs, mask, size, &mut out) };
                sext_row(&mut out, size);
                wr(&mut w.regs, ds[0], &out, mask);
            } else if let Some(row) = w.regs.get_mut(ds[0] as usize) {
                // Straight into the register: `gather` writes the active lanes only, which is
                // the masked write.
                // SAFETY: as above.
                unsafe { gather(ptr, cb, &addrs, mask, size, row) };
            }
        }
        true
    }

    /// A whole warp's `st.global.v2/.v4` at once, as [`Self::load_vector`]: component by
    /// component, lanes in ascending order within each. Two aligned vectors that overlap start
    /// at the same address, so the higher lane's vector stays, as on the per-lane path (lane by
    /// lane, each its whole vector).
    #[inline(never)]
    fn store_vector(
        &self,
        m: &mut CtaMem,
        w: &mut Warp,
        (space, addr): (Space, Addr),
        mask: u32,
        (size, n): (u32, u32),
        ss: &[R; 4],
    ) -> bool {
        if self.initcheck || self.racecheck {
            return false;
        }
        let addrs = lane_addrs(&w.regs, addr);
        let Some(Fast::Global) = self.fast_store_target(m, space, &addrs, mask, size * n) else {
            return false;
        };
        let (ptr, cb) = (m.cache_ptr, m.cache_base);
        m.counters.global_bytes_written += u64::from(size * n * mask.count_ones());
        for (k, &src) in ss.iter().enumerate().take(n as usize) {
            let at = addrs.map(|a| a.wrapping_add(u64::from(k as u32 * size)));
            let vals = rd(&w.regs, src);
            // SAFETY: as in `load_vector`.
            unsafe { scatter(ptr, cb, &at, mask, size, vals) };
        }
        true
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn load(
        &self,
        m: &mut CtaMem,
        space: Space,
        addr: u64,
        size: u32,
        align: u32,
        tid: u32,
        lane: u32,
    ) -> Result<u64, Fault> {
        let t = self
            .resolve(m, space, addr, size, align, lane, false)
            .map_err(|f| f.with(Access::Read))?;
        self.check_private(m, &t, size, lane, Access::Read)?;
        if self.initcheck || self.racecheck {
            self.check_init_race(m, &t, addr, size, tid, lane, Access::Read, 0)?;
        }
        let oob = |sp: Space, o: u64| Fault::new(FaultKind::Oob, sp, o, size, lane);
        match t {
            Target::Global(p) => {
                m.counters.global_bytes_read += size as u64;
                // SAFETY: resolve checked bounds and alignment.
                Ok(unsafe { atomic_load(p, size) })
            }
            Target::Shared(o) => {
                bytes_load(&m.shared, o, size).ok_or_else(|| oob(Space::Shared, o))
            }
            Target::Local(o) => m
                .local
                .load(tid, o, size)
                .map_err(|f| local_fault(f, o, size, lane, Access::Read)),
            Target::Param(o) => {
                bytes_load(self.params, o, size).ok_or_else(|| oob(Space::Param, o))
            }
        }
    }

    /// Memcheck of a shared or local access: inside one variable (or the dynamic shared
    /// memory). The fault reports the space-relative offset.
    #[inline(always)]
    fn check_private(
        &self,
        m: &mut CtaMem,
        t: &Target,
        size: u32,
        lane: u32,
        access: Access,
    ) -> Result<(), Fault> {
        let (sp, o, ok) = match *t {
            Target::Shared(o) => (Space::Shared, o, self.shared_in(m, o, size as u64)),
            Target::Local(o) => (
                Space::Local,
                o,
                self.local_map.find(o, size as u64).is_some(),
            ),
            _ => return Ok(()),
        };
        if ok {
            Ok(())
        } else {
            Err(Fault::new(FaultKind::Oob, sp, o, size, lane).with(access))
        }
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn store(
        &self,
        m: &mut CtaMem,
        space: Space,
        addr: u64,
        size: u32,
        align: u32,
        tid: u32,
        lane: u32,
        v: u64,
    ) -> Result<(), Fault> {
        let t = self
            .resolve(m, space, addr, size, align, lane, true)
            .map_err(|f| f.with(Access::Write))?;
        self.check_private(m, &t, size, lane, Access::Write)?;
        if self.initcheck || self.racecheck {
            self.check_init_race(m, &t, addr, size, tid, lane, Access::Write, v)?;
        }
        let oob =
            |sp: Space, o: u64| Fault::new(FaultKind::Oob, sp, o, size, lane).with(Access::Write);
        match t {
            Target::Global(p) => {
                m.counters.global_bytes_written += size as u64;
                // SAFETY: resolve checked bounds and alignment.
                unsafe { atomic_store(p, size, v) };
                Ok(())
            }
            Target::Shared(o) => {
                bytes_store(&mut m.shared, o, size, v).ok_or_else(|| oob(Space::Shared, o))
            }
            Target::Local(o) => m
                .local
                .store(tid, o, size, v, self.local)
                .map_err(|f| local_fault(f, o, size, lane, Access::Write)),
            Target::Param(_) => Err(Fault::new(
                FaultKind::ReadOnly,
                Space::Param,
                addr,
                size,
                lane,
            )),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn atomic(
        &self,
        m: &mut CtaMem,
        space: Space,
        addr: u64,
        size: u32,
        tid: u32,
        lane: u32,
        f: impl Fn(u64) -> u64,
    ) -> Result<u64, Fault> {
        let t = self
            .resolve(m, space, addr, size, size, lane, true)
            .map_err(|f| f.with(Access::Atomic))?;
        self.check_private(m, &t, size, lane, Access::Atomic)?;
        if self.initcheck || self.racecheck {
            self.check_init_race(m, &t, addr, size, tid, lane, Access::Atomic, 0)?;
        }
        let oob =
            |sp: Space, o: u64| Fault::new(FaultKind::Oob, sp, o, size, lane).with(Access::Atomic);
        match t {
            Target::Global(p) => {
                m.counters.global_bytes_read += size as u64;
                m.counters.global_bytes_written += size as u64;
                // The stripe makes the read-modify-write atomic.
                let _held = self.stripes.hold(super::super::stripes::Stripes::bit(addr));
                // SAFETY: resolve checked bounds and alignment.
                Ok(unsafe { striped_rmw(p, size, f) })
            }
            Target::Shared(o) => {
                let sh = Space::Shared;
                let old = bytes_load(&m.shared, o, size).ok_or_else(|| oob(sh, o))?;
                bytes_store(&mut m.shared, o, size, f(old)).ok_or_else(|| oob(sh, o))?;
                Ok(old)
            }
            Target::Local(o) => {
                let fault = |e| local_fault(e, o, size, lane, Access::Atomic);
                let old = m.local.load(tid, o, size).map_err(fault)?;
                m.local
                    .store(tid, o, size, f(old), self.local)
                    .map_err(fault)?;
                Ok(old)
            }
            Target::Param(_) => Err(Fault::new(
                FaultKind::ReadOnly,
                Space::Param,
                addr,
                size,
                lane,
            )),
        }
    }

    /// `ld`, `st` and `atom`/`red`: the whole-warp fast path for scalar accesses that all land
    /// in one global allocation or in shared memory, else lane by lane with the precise fault.
    #[inline(always)]
    pub(super) fn memory(
        &self,
        m: &mut CtaMem,
        w: &mut Warp,
        pc: u32,
        mask: u32,
        op: &Op,
    ) -> Result<(), (u32, Fault)> {
        // The instruction, for the lane-by-lane path (its fields shadow the name below).
        let whole = op;
        match op {
            Op::Ld {
                space,
                size,
                n,
                sext,
                ds,
                addr,
            } => {
                let (size, n) = (*size as u32, *n as u32);
                if n == 1 {
                    let addrs = lane_addrs(&w.regs, *addr);
                    if let Some(fast) = self.fast_target(m, *space, &addrs, mask, size) {
                        let mut out = [0u64; 32];
                        let mut mm = mask;
                        match fast {
                            Fast::Global => {
                                let (ptr, cb) = (m.cache_ptr, m.cache_base);
                                m.counters.global_bytes_read += (size * mask.count_ones()) as u64;
                                if !*sext {
                                    // Straight into the register, as a load group does (the
                                    // addresses are already read): `gather` writes the active
                                    // lanes only, which is the masked write.
                                    if let Some(row) = w.regs.get_mut(ds[0] as usize) {
                                        // SAFETY: fast_target checked bounds and alignment of
                                        // every active lane against the cached allocation.
                                        unsafe { gather(ptr, cb, &addrs, mask, size, row) };
                                    }
                                    return Ok(());
                                }
                                // SAFETY: as above.
                                unsafe { gather(ptr, cb, &addrs, mask, size, &mut out) };
                            }
                            Fast::Shared => {
                                while mm != 0 {
                                    let l = mm.trailing_zeros() as usize;
                                    mm &= mm - 1;
                                    out[l] = bytes_load(&m.shared, addrs[l], size).unwrap_or(0);
                                }
                            }
                            Fast::Param => {
                                while mm != 0 {
                                    let l = mm.trailing_zeros() as usize;
                                    mm &= mm - 1;
                                    out[l] = bytes_load(self.params, addrs[l], size).unwrap_or(0);
                                }
                            }
                        }
                        if *sext {
                            sext_row(&mut out, size);
                        }
                        wr(&mut w.regs, ds[0], &out, mask);
                        return Ok(());
                    }
                }
                if n > 1 && self.load_vector(m, w, (*space, *addr), mask, (size, n), (ds, *sext)) {
                    return Ok(());
                }
                self.memory_lanes(m, w, pc, mask, whole)?;
            }
            Op::St {
                space,
                size,
                n,
                ss,
                addr,
                strong,
            } => {
                let (size, n) = (*size as u32, *n as u32);
                if n == 1 && !*strong {
                    let addrs = lane_addrs(&w.regs, *addr);
                    if let Some(fast) = self.fast_store_target(m, *space, &addrs, mask, size) {
                        let vals = rd(&w.regs, ss[0]);
                        let mut mm = mask;
                        match fast {
                            Fast::Global => {
                                let (ptr, cb) = (m.cache_ptr, m.cache_base);
                                m.counters.global_bytes_written +=
                                    (size * mask.count_ones()) as u64;
                                // SAFETY: as for the fast load.
                                unsafe { scatter(ptr, cb, &addrs, mask, size, vals) };
                            }
                            Fast::Shared => {
                                while mm != 0 {
                                    let l = mm.trailing_zeros() as usize;
                                    mm &= mm - 1;
                                    let _ = bytes_store(&mut m.shared, addrs[l], size, vals[l]);
                                }
                            }
                            Fast::Param => {
                                // The per-lane path's fault: the first active lane's store.
                                let l = mask.trailing_zeros();
                                let addr = addrs.get(l as usize).copied().unwrap_or(0);
                                let f =
                                    Fault::new(FaultKind::ReadOnly, Space::Param, addr, size, l);
                                return Err((pc, f));
                            }
                        }
                        return Ok(());
                    }
                }
                if n > 1
                    && !*strong
                    && self.store_vector(m, w, (*space, *addr), mask, (size, n), ss)
                {
                    return Ok(());
                }
                self.memory_lanes(m, w, pc, mask, whole)?;
            }
            Op::Atom {
                space,
                op,
                kind,
                d,
                addr,
                b,
                c,
            } => {
                let (op, kind) = (*op, *kind);
                let size = atom_size(kind);
                // The whole warp in one global allocation (no sanitizer but memcheck): each
                // lane's read-modify-write in lane order, as below, without resolving every
                // lane's address on its own (a scatter-add's atomics were a fifth of its time).
                if !self.initcheck && !self.racecheck {
                    let addrs = lane_addrs(&w.regs, *addr);
                    if let Some(Fast::Global) =
                        self.fast_store_target(m, *space, &addrs, mask, size)
                    {
                        let (bv, cv) = (rd(&w.regs, *b), (*c != NONE).then(|| rd(&w.regs, *c)));
                        let (ptr, cb) = (m.cache_ptr, m.cache_base);
                        let bytes = (size * mask.count_ones()) as u64;
                        m.counters.global_bytes_read += bytes;
                        m.counters.global_bytes_written += bytes;
                        // A float add (a scatter-add's) in native f32 (`num::f32_add_ftz`).
                        let f32_add = (op, kind) == (AOp::Add, AKind::Float(Fmt::F32));
                        // The stripes of every active lane, taken once for the warp.
                        let mut set = 0u64;
                        let mut mm = mask;
                        while mm != 0 {
                            let l = mm.trailing_zeros() as usize;
                            mm &= mm - 1;
                            set |= super::super::stripes::Stripes::bit(addrs[l]);
                        }
                        let mut out = [0u64; 32];
                        let held = self.stripes.hold(set);
                        if f32_add && distinct(&addrs, mask) {
                            // No two lanes share an address, so no lane reads another's sum:
                            // the lanes' read-modify-writes in lane order are one gather, the
                            // sums and one scatter.
                            // SAFETY: as below.
                            unsafe { gather(ptr, cb, &addrs, mask, 4, &mut out) };
                            let sum = lanes::f32_add_ftz(&out, bv);
                            // SAFETY: as below.
                            unsafe { scatter(ptr, cb, &addrs, mask, 4, &sum) };
                            drop(held);
                            wr(&mut w.regs, *d, &out, mask);
                            return Ok(());
                        }
                        let mut mm = mask;
                        while mm != 0 {
                            let l = mm.trailing_zeros() as usize;
                            mm &= mm - 1;
                            let cl = cv.map_or(0, |c| c[l]);
                            // SAFETY: fast_target checked bounds and alignment of every active
                            // lane against the cached allocation; the stripes are held.
                            out[l] = unsafe {
                                striped_rmw(ptr.add((addrs[l] - cb) as usize), size, |o| {
                                    if f32_add {
                                        num::f32_add_ftz(o, bv[l])
                                    } else {
                                        atom_new(op, kind, o, bv[l], cl)
                                    }
                                })
                            };
                        }
                        drop(held);
                        wr(&mut w.regs, *d, &out, mask);
                        return Ok(());
                    }
                }
                self.memory_lanes(m, w, pc, mask, whole)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The lane-by-lane path of loads, stores and atomics (each lane's address resolved and
    /// checked on its own: the sanitizers, other spaces, faults). Never inlined: it is the cold
    /// side of [`Self::memory`], and the warp loop's hot code is better without it.
    #[inline(never)]
    fn memory_lanes(
        &self,
        m: &mut CtaMem,
        w: &mut Warp,
        pc: u32,
        mask: u32,
        op: &Op,
    ) -> Result<(), (u32, Fault)> {
        match op {
            Op::Ld {
                space,
                size,
                n,
                sext,
                ds,
                addr,
            } => {
                let (size, n) = (u32::from(*size), u32::from(*n));
                let mut mm = mask;
                while mm != 0 {
                    let l = mm.trailing_zeros();
                    mm &= mm - 1;
                    let addr = lane_address(&w.regs, *addr, l);
                    let tid = w.index * 32 + l;
                    for k in 0..n {
                        let align = if k == 0 { size * n } else { size };
                        let v = self
                            .load(
                                m,
                                *space,
                                addr.wrapping_add((k * size) as u64),
                                size,
                                align,
                                tid,
                                l,
                            )
                            .map_err(|f| (pc, f))?;
                        let v = if *sext {
                            num::sext(v, size * 8) as u64
                        } else {
                            v
                        };
                        let dr = ds[k as usize];
                        if dr != NONE {
                            wr1(&mut w.regs, dr, l, v);
                        }
                    }
                }
            }
            Op::St {
                space,
                size,
                n,
                ss,
                addr,
                strong,
            } => {
                let (size, n) = (u32::from(*size), u32::from(*n));
                let mut mm = mask;
                while mm != 0 {
                    let l = mm.trailing_zeros();
                    mm &= mm - 1;
                    let addr = lane_address(&w.regs, *addr, l);
                    let tid = w.index * 32 + l;
                    for k in 0..n {
                        let align = if k == 0 { size * n } else { size };
                        let v = rd1(&w.regs, ss[k as usize], l);
                        // A strong store holds its stripe: no read-modify-write overwrites it.
                        let at = addr.wrapping_add((k * size) as u64);
                        let _held = strong
                            .then(|| self.stripes.hold(super::super::stripes::Stripes::bit(at)));
                        self.store(m, *space, at, size, align, tid, l, v)
                            .map_err(|f| (pc, f))?;
                    }
                }
            }
            Op::Atom {
                space,
                op,
                kind,
                d,
                addr,
                b,
                c,
            } => {
                let (op, kind) = (*op, *kind);
                let size = atom_size(kind);
                let mut mm = mask;
                while mm != 0 {
                    let l = mm.trailing_zeros();
                    mm &= mm - 1;
                    let addr = lane_address(&w.regs, *addr, l);
                    let bv = rd1(&w.regs, *b, l);
                    let cv = if *c == NONE { 0 } else { rd1(&w.regs, *c, l) };
                    let tid = w.index * 32 + l;
                    let old = self
                        .atomic(m, *space, addr, size, tid, l, |o| {
                            atom_new(op, kind, o, bv, cv)
                        })
                        .map_err(|f| (pc, f))?;
                    wr1(&mut w.regs, *d, l, old);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Initcheck of a CTA- or thread-private byte range (a byte per byte, 1 = written): a read of
/// an unwritten byte is `Err`; stores and atomics mark the range.
#[inline(always)]
/// A local access's failure as a fault: outside the thread's memory (memcheck), or the
/// launch's local memory limit reached.
fn local_fault(f: LocalFault, o: u64, size: u32, lane: u32, access: Access) -> Fault {
    let kind = match f {
        LocalFault::OutOfRange => FaultKind::Oob,
        LocalFault::Exhausted => FaultKind::LocalMemory,
    };
    Fault::new(kind, Space::Local, o, size, lane).with(access)
}

fn mark_private(
    shadow: &mut [u8],
    at: u64,
    size: u32,
    reads: bool,
    access: Access,
) -> Result<(), ()> {
    let Some(bytes) = usize::try_from(at)
        .ok()
        .and_then(|a| shadow.get_mut(a..a.checked_add(size as usize)?))
    else {
        return Ok(());
    };
    if reads && bytes.contains(&0) {
        return Err(());
    }
    if access != Access::Read {
        bytes.fill(1);
    }
    Ok(())
}
