//! Memory instructions and address resolution: every access is bounds- and alignment-checked,
//! a whole warp at once when all its lanes land in one global allocation or in shared memory.
use super::super::decode::IOp;
use super::super::decode::{AKind, AOp, Addr, Op, NONE};
use super::super::error::Space;
use super::super::memory::{
    atomic_load, atomic_rmw, atomic_store, bytes_load, bytes_store, LOCAL_WINDOW, PARAM_WINDOW,
    SHARED_WINDOW, WINDOW_SIZE,
};
use super::super::numeric::{self as num, Fmt, Rnd};
use super::alu::ibin;
use super::float::packed2;
use super::regs::{rd, rd1, wr, wr1};
use super::{CtaMem, Fault, FaultKind, LaunchCtx, Warp};

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
pub(super) fn lane_address(regs: &[u64], addr: Addr, lane: u32) -> u64 {
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
pub(super) fn lane_addrs(regs: &[u64], addr: Addr) -> [u64; 32] {
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
                if addr >= m.cache_base && end <= m.cache_end {
                    // SAFETY: inside the cached allocation's bytes.
                    return Ok(Target::Global(unsafe {
                        m.cache_ptr.add((addr - m.cache_base) as usize)
                    }));
                }
                match self.mem.lookup(addr) {
                    Some((base, aend, ptr)) if end <= aend => {
                        m.cache_base = base;
                        m.cache_end = aend;
                        m.cache_ptr = ptr;
                        // SAFETY: addr..end lies inside the allocation.
                        Ok(Target::Global(unsafe { ptr.add((addr - base) as usize) }))
                    }
                    _ => Err(Fault::new(FaultKind::Oob, space, addr, size, lane)),
                }
            }
        }
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
        let (mut lo, mut hi, mut or) = (u64::MAX, 0u64, 0u64);
        let mut mm = mask;
        while mm != 0 {
            let l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            let a = addrs[l];
            lo = lo.min(a);
            hi = hi.max(a);
            or |= a;
        }
        if mask == 0 || or & (size as u64 - 1) != 0 {
            return None;
        }
        let end = hi.checked_add(size as u64)?;
        match space {
            Space::Global | Space::Const | Space::Generic => {
                if !(lo >= m.cache_base && end <= m.cache_end) {
                    // Global allocations never overlap the generic windows, so a hit is global.
                    let (b, e, p) = self.mem.lookup(lo)?;
                    m.cache_base = b;
                    m.cache_end = e;
                    m.cache_ptr = p;
                    if end > e {
                        return None;
                    }
                }
                Some(Fast::Global)
            }
            Space::Shared if end <= m.shared.len() as u64 => Some(Fast::Shared),
            // Every kernel reads its parameters with `ld.param`, every warp of every CTA: the
            // per-lane path for them was a few percent of a short kernel.
            Space::Param if end <= self.params.len() as u64 => Some(Fast::Param),
            _ => None,
        }
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
        let t = self.resolve(m, space, addr, size, align, lane, false)?;
        let oob = |sp: Space| Fault::new(FaultKind::Oob, sp, addr, size, lane);
        match t {
            Target::Global(p) => {
                m.counters.global_bytes_read += size as u64;
                // SAFETY: resolve checked bounds and alignment.
                Ok(unsafe { atomic_load(p, size) })
            }
            Target::Shared(o) => bytes_load(&m.shared, o, size).ok_or_else(|| oob(Space::Shared)),
            Target::Local(o) => {
                if o + size as u64 > m.local_size as u64 {
                    return Err(oob(Space::Local));
                }
                bytes_load(&m.local, tid as u64 * m.local_size as u64 + o, size)
                    .ok_or_else(|| oob(Space::Local))
            }
            Target::Param(o) => bytes_load(self.params, o, size).ok_or_else(|| oob(Space::Param)),
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
        let t = self.resolve(m, space, addr, size, align, lane, true)?;
        let oob = |sp: Space| Fault::new(FaultKind::Oob, sp, addr, size, lane);
        match t {
            Target::Global(p) => {
                m.counters.global_bytes_written += size as u64;
                // SAFETY: resolve checked bounds and alignment.
                unsafe { atomic_store(p, size, v) };
                Ok(())
            }
            Target::Shared(o) => {
                bytes_store(&mut m.shared, o, size, v).ok_or_else(|| oob(Space::Shared))
            }
            Target::Local(o) => {
                if o + size as u64 > m.local_size as u64 {
                    return Err(oob(Space::Local));
                }
                let ls = m.local_size as u64;
                bytes_store(&mut m.local, tid as u64 * ls + o, size, v)
                    .ok_or_else(|| oob(Space::Local))
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
        let t = self.resolve(m, space, addr, size, size, lane, true)?;
        let oob = |sp: Space| Fault::new(FaultKind::Oob, sp, addr, size, lane);
        match t {
            Target::Global(p) => {
                m.counters.global_bytes_read += size as u64;
                m.counters.global_bytes_written += size as u64;
                // SAFETY: resolve checked bounds and alignment.
                Ok(unsafe { atomic_rmw(p, size, f) })
            }
            Target::Shared(o) => {
                let old = bytes_load(&m.shared, o, size).ok_or_else(|| oob(Space::Shared))?;
                bytes_store(&mut m.shared, o, size, f(old)).ok_or_else(|| oob(Space::Shared))?;
                Ok(old)
            }
            Target::Local(o) => {
                if o + size as u64 > m.local_size as u64 {
                    return Err(oob(Space::Local));
                }
                let at = tid as u64 * m.local_size as u64 + o;
                let old = bytes_load(&m.local, at, size).ok_or_else(|| oob(Space::Local))?;
                bytes_store(&mut m.local, at, size, f(old)).ok_or_else(|| oob(Space::Local))?;
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
                                while mm != 0 {
                                    let l = mm.trailing_zeros() as usize;
                                    mm &= mm - 1;
                                    // SAFETY: fast_target checked bounds and alignment of
                                    // every active lane against the cached allocation.
                                    out[l] = unsafe {
                                        atomic_load(ptr.add((addrs[l] - cb) as usize), size)
                                    };
                                }
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
                            for v in out.iter_mut() {
                                *v = num::sext(*v, size * 8) as u64;
                            }
                        }
                        wr(&mut w.regs, ds[0], &out, mask);
                        return Ok(());
                    }
                }
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
            } => {
                let (size, n) = (*size as u32, *n as u32);
                if n == 1 {
                    let addrs = lane_addrs(&w.regs, *addr);
                    if let Some(fast) = self.fast_target(m, *space, &addrs, mask, size) {
                        let vals = rd(&w.regs, ss[0]);
                        let mut mm = mask;
                        match fast {
                            Fast::Global => {
                                let (ptr, cb) = (m.cache_ptr, m.cache_base);
                                m.counters.global_bytes_written +=
                                    (size * mask.count_ones()) as u64;
                                while mm != 0 {
                                    let l = mm.trailing_zeros() as usize;
                                    mm &= mm - 1;
                                    // SAFETY: as for the fast load.
                                    unsafe {
                                        atomic_store(
                                            ptr.add((addrs[l] - cb) as usize),
                                            size,
                                            vals[l],
                                        )
                                    };
                                }
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
                let mut mm = mask;
                while mm != 0 {
                    let l = mm.trailing_zeros();
                    mm &= mm - 1;
                    let addr = lane_address(&w.regs, *addr, l);
                    let tid = w.index * 32 + l;
                    for k in 0..n {
                        let align = if k == 0 { size * n } else { size };
                        let v = rd1(&w.regs, ss[k as usize], l);
                        self.store(
                            m,
                            *space,
                            addr.wrapping_add((k * size) as u64),
                            size,
                            align,
                            tid,
                            l,
                            v,
                        )
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
