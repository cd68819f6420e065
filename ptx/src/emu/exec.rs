//! The SIMT execution engine: warps of 32 lanes in lockstep, CTAs on a pool of OS threads.
//!
//! # Divergence and reconvergence: minimum-pc scheduling
//!
//! Each lane has its own pc. A warp executes one *group* at a time: the lanes whose pc is the
//! smallest among the warp's runnable lanes, in lockstep with that set as the active mask. A
//! branch that splits the group stores each lane's new pc and re-selects; when the running group
//! reaches the pc where other lanes wait, they merge. For the reducible control flow compilers
//! emit (forward branches to join points, backward branches closing loops) the minimum-pc rule
//! reconverges exactly at the immediate post-dominator: lanes that left a loop wait at the exit
//! block until the lanes still iterating (at smaller pcs) arrive; the two sides of an if/else
//! both run before the join. No stack, no decode-time analysis, and a warp-synchronous
//! instruction (`shfl`, `vote`, `bar`) sees every lane that reaches it together.
//!
//! # Barriers
//!
//! `bar.sync`/`barrier.sync` are per thread (sm_70+ semantics): arriving lanes block, the rest of
//! the warp continues. A CTA runs its warps round-robin, each until all of its lanes have exited
//! or blocked or its time slice (16Ki warp-instructions, so that a warp spinning on a flag set by
//! another warp of the CTA makes progress) ends, and releases every barrier whose arrival count
//! reached its expected count (the whole CTA, or the `b` operand). If no warp can run and some
//! lanes still wait, that is a barrier deadlock (for example threads that exited before a
//! `bar.sync` the others wait at), reported as an error. CTAs are not time-sliced against each
//! other: a kernel in which one CTA spins on a flag another CTA sets needs at least as many
//! worker threads as CTAs that must run at once, else it runs into the instruction budget.
//!
//! # Memory ordering
//!
//! `membar`/`fence` are no-ops: inside a CTA execution is sequentially consistent (one OS thread
//! runs a CTA), and across CTAs every global access is an atomic access of its own size.

// Lane loops index several 32-element arrays by lane: clearer than zipped iterators.
#![allow(clippy::needless_range_loop)]
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::ast::{ShflMode, SpecialReg, VoteMode};

use super::decode::{
    AKind, AOp, CmpKind, ConstSrc, Conv, FUn, Func, IOp, IUn, Op, PBool, ReduxOp, Sp, NONE, R,
};
use super::error::{EmuError, Location, Space};
use super::lanes;
use super::memory::{
    atomic_load, atomic_rmw, atomic_store, bytes_load, bytes_store, Memory, LOCAL_WINDOW,
    PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE,
};
use super::numeric::{self as num, Fmt, IntTy, Rnd};

const FULL: u32 = u32::MAX;
/// Warp-instructions a warp runs before yielding to the other warps of its CTA.
const SLICE: u32 = 1 << 14;

/// Per-launch, read-only context shared by all worker threads.
pub(crate) struct LaunchCtx<'a> {
    pub kernel: &'a str,
    pub func: &'a Func,
    pub mem: &'a Memory,
    pub params: &'a [u8],
    pub var_addrs: &'a [u64],
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dyn_shared: u32,
    pub budget: u64,
    pub used: &'a AtomicU64,
    pub stop: &'a AtomicBool,
    /// When the launch's wall time runs out (checked with the budget).
    pub deadline: Option<std::time::Instant>,
    /// The wall-time limit, for the error message.
    pub wall_time_limit: std::time::Duration,
    /// Which warp loop runs.
    pub engine: Engine,
}

/// The warp loop a launch runs: the reference (the general path of every instruction), or the
/// fast one (the reference plus whole-row kernels for common forms, compiled for the host's
/// vector units where it has them). Both give bit-identical results, faults and counts; the
/// reference stays callable (`LaunchOptions::reference_engine`) so tests can check that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    Reference,
    Fast,
    #[cfg(target_arch = "x86_64")]
    FastX86,
}

impl Engine {
    /// The fast engine for this CPU, or the reference when `reference`.
    pub(crate) fn choose(reference: bool) -> Engine {
        if reference {
            return Engine::Reference;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
                && std::arch::is_x86_feature_detected!("sse4.1")
                && std::arch::is_x86_feature_detected!("popcnt")
                && std::arch::is_x86_feature_detected!("bmi1")
                && std::arch::is_x86_feature_detected!("bmi2")
                && std::arch::is_x86_feature_detected!("lzcnt")
            {
                return Engine::FastX86;
            }
        }
        Engine::Fast
    }
}

/// Counters of one worker.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counters {
    pub lane_instructions: u64,
    pub warp_instructions: u64,
    pub global_bytes_read: u64,
    pub global_bytes_written: u64,
}

#[derive(Debug)]
enum FaultKind {
    Oob,
    Misaligned,
    ReadOnly,
    Trap(String),
    Budget,
    WallTime,
}

/// An execution fault inside a warp, turned into an [`EmuError`] with location by the CTA.
#[derive(Debug)]
struct Fault {
    kind: FaultKind,
    space: Space,
    addr: u64,
    size: u32,
    lane: u32,
}

impl Fault {
    fn new(kind: FaultKind, space: Space, addr: u64, size: u32, lane: u32) -> Fault {
        Fault {
            kind,
            space,
            addr,
            size,
            lane,
        }
    }
}

struct Warp {
    regs: Vec<u64>,
    preds: Vec<u32>,
    pc: [u32; 32],
    bar_id: [u8; 32],
    live: u32,
    blocked: u32,
    gpc: u32,
    gmask: u32,
    next_other: u32,
    index: u32,
}

impl Warp {
    fn store_group(&mut self) {
        let mut m = self.gmask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            if let Some(p) = self.pc.get_mut(l) {
                *p = self.gpc;
            }
        }
        self.gmask = 0;
    }

    /// Picks the runnable lanes with the smallest pc as the new group.
    fn reselect(&mut self) -> bool {
        let runnable = self.live & !self.blocked;
        if runnable == 0 {
            self.gmask = 0;
            return false;
        }
        let mut min = u32::MAX;
        let mut m = runnable;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            min = min.min(self.pc[l]);
        }
        let (mut g, mut next) = (0u32, u32::MAX);
        let mut m = runnable;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            if self.pc[l] == min {
                g |= 1 << l;
            } else {
                next = next.min(self.pc[l]);
            }
        }
        self.gpc = min;
        self.gmask = g;
        self.next_other = next;
        true
    }
}

/// Memory private to one CTA plus the global-allocation cache of its worker.
struct CtaMem {
    shared: Vec<u8>,
    local: Vec<u8>,
    local_size: usize,
    cache_base: u64,
    cache_end: u64,
    cache_ptr: *const u8,
    counters: Counters,
    since_sync: u64,
}

#[inline(always)]
fn rd(regs: &[u64], r: R) -> [u64; 32] {
    let s = r as usize * 32;
    let mut out = [0u64; 32];
    if let Some(src) = regs.get(s..s + 32) {
        out.copy_from_slice(src);
    }
    out
}

#[inline(always)]
fn wr(regs: &mut [u64], r: R, vals: &[u64; 32], mask: u32) {
    let s = r as usize * 32;
    if let Some(dst) = regs.get_mut(s..s + 32) {
        if mask == FULL {
            dst.copy_from_slice(vals);
        } else {
            for l in 0..32 {
                if mask >> l & 1 != 0 {
                    dst[l] = vals[l];
                }
            }
        }
    }
}

#[inline(always)]
fn wr1(regs: &mut [u64], r: R, lane: u32, v: u64) {
    if let Some(x) = regs.get_mut(r as usize * 32 + lane as usize) {
        *x = v;
    }
}

/// The address lane `lane` of an `ld`/`st` accesses: its base register (none: 0, `.u32`
/// addressing: the low 32 bits) plus the immediate offset.
#[inline(always)]
fn lane_address(regs: &[u64], base: R, base32: bool, off: i64, lane: u32) -> u64 {
    let b = if base == NONE {
        0
    } else {
        rd1(regs, base, lane)
    };
    let b = if base32 { b & 0xffff_ffff } else { b };
    b.wrapping_add(off as u64)
}

#[inline(always)]
fn rd1(regs: &[u64], r: R, lane: u32) -> u64 {
    regs.get(r as usize * 32 + lane as usize)
        .copied()
        .unwrap_or(0)
}

#[inline(always)]
fn pget(preds: &[u32], p: u32) -> u32 {
    preds.get(p as usize).copied().unwrap_or(0)
}

#[inline(always)]
fn pset(preds: &mut [u32], p: u32, v: u32, mask: u32) {
    if let Some(x) = preds.get_mut(p as usize) {
        *x = (*x & !mask) | (v & mask);
    }
}

macro_rules! map1 {
    ($w:expr, $mask:expr, $d:expr, $a:expr, |$x:ident| $e:expr) => {{
        let av = rd(&$w.regs, $a);
        let mut out = [0u64; 32];
        for l in 0..32 {
            let $x = av[l];
            out[l] = $e;
        }
        wr(&mut $w.regs, $d, &out, $mask);
    }};
}

macro_rules! map2 {
    ($w:expr, $mask:expr, $d:expr, $a:expr, $b:expr, |$x:ident, $y:ident| $e:expr) => {{
        let av = rd(&$w.regs, $a);
        let bv = rd(&$w.regs, $b);
        let mut out = [0u64; 32];
        for l in 0..32 {
            let $x = av[l];
            let $y = bv[l];
            out[l] = $e;
        }
        wr(&mut $w.regs, $d, &out, $mask);
    }};
}

macro_rules! map3 {
    ($w:expr, $mask:expr, $d:expr, $a:expr, $b:expr, $c:expr, |$x:ident, $y:ident, $z:ident| $e:expr) => {{
        let av = rd(&$w.regs, $a);
        let bv = rd(&$w.regs, $b);
        let cv = rd(&$w.regs, $c);
        let mut out = [0u64; 32];
        for l in 0..32 {
            let $x = av[l];
            let $y = bv[l];
            let $z = cv[l];
            out[l] = $e;
        }
        wr(&mut $w.regs, $d, &out, $mask);
    }};
}

/// Applies a 16-bit float operation to both halves of a packed pair.
#[inline]
fn packed2(a: u64, b: u64, f: impl Fn(u64, u64) -> u64) -> u64 {
    let lo = f(a & 0xffff, b & 0xffff) & 0xffff;
    let hi = f((a >> 16) & 0xffff, (b >> 16) & 0xffff) & 0xffff;
    (hi << 16) | lo
}

#[inline]
fn packed3(a: u64, b: u64, c: u64, f: impl Fn(u64, u64, u64) -> u64) -> u64 {
    let lo = f(a & 0xffff, b & 0xffff, c & 0xffff) & 0xffff;
    let hi = f((a >> 16) & 0xffff, (b >> 16) & 0xffff, (c >> 16) & 0xffff) & 0xffff;
    (hi << 16) | lo
}

#[inline(always)]
fn f32_canon(v: f32) -> u64 {
    if v.is_nan() {
        0x7fff_ffff
    } else {
        v.to_bits() as u64
    }
}

#[inline]
fn ibin(op: IOp, ty: IntTy, a: u64, b: u64) -> u64 {
    let bits = ty.bits;
    let t = |v: u64| num::trunc(v, bits);
    match op {
        IOp::Add => t(a.wrapping_add(b)),
        IOp::Sub => t(a.wrapping_sub(b)),
        IOp::MulLo => t(a.wrapping_mul(b)),
        IOp::MulHi => num::mul_hi(bits, ty.signed, a, b),
        IOp::MulWide => num::trunc(num::mul_wide(bits, ty.signed, a, b), (bits * 2).min(64)),
        IOp::Min | IOp::Max => {
            let lt = if ty.signed {
                num::sext(a, bits) < num::sext(b, bits)
            } else {
                t(a) < t(b)
            };
            let pick_a = if op == IOp::Min { lt } else { !lt };
            if pick_a {
                t(a)
            } else {
                t(b)
            }
        }
        IOp::Div => num::idiv(bits, ty.signed, false, a, b),
        IOp::Rem => num::idiv(bits, ty.signed, true, a, b),
        IOp::And => t(a & b),
        IOp::Or => t(a | b),
        IOp::Xor => t(a ^ b),
        IOp::Shl => num::shl(bits, a, b),
        IOp::Shr => num::shr(bits, ty.signed, a, b),
        IOp::Mul24Lo | IOp::Mul24Hi => {
            let (x, y) = if ty.signed {
                (num::sext(a, 24), num::sext(b, 24))
            } else {
                ((a & 0xff_ffff) as i64, (b & 0xff_ffff) as i64)
            };
            let p = x.wrapping_mul(y) as u64;
            if op == IOp::Mul24Lo {
                t(p)
            } else {
                t(p >> 16)
            }
        }
        IOp::AbsDiff => {
            let d = if ty.signed {
                (num::sext(a, bits) as i128 - num::sext(b, bits) as i128).unsigned_abs() as u64
            } else {
                t(a).abs_diff(t(b))
            };
            t(d)
        }
        IOp::AddSat | IOp::SubSat => {
            let (x, y) = (num::sext(a, bits) as i128, num::sext(b, bits) as i128);
            let r = if op == IOp::AddSat { x + y } else { x - y };
            let (lo, hi) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
            t(r.clamp(lo, hi) as u64)
        }
    }
}

#[inline]
fn iun(op: IUn, ty: IntTy, a: u64) -> u64 {
    let bits = ty.bits;
    let t = |v: u64| num::trunc(v, bits);
    match op {
        IUn::Neg => t(a.wrapping_neg()),
        IUn::Abs => t(num::sext(a, bits).unsigned_abs()),
        IUn::Not => t(!a),
        IUn::Cnot => (t(a) == 0) as u64,
        IUn::Popc => t(a).count_ones() as u64,
        IUn::Clz => (t(a).leading_zeros() - (64 - bits)) as u64,
        IUn::Brev => t(a).reverse_bits() >> (64 - bits),
        IUn::Bfind { shiftamt } => num::bfind(bits, ty.signed, shiftamt, a),
    }
}

fn cvt(conv: Conv, a: u64) -> u64 {
    match conv {
        Conv::I2I { from, to, sat } => num::i2i(from, a, to, sat),
        Conv::F2I { from, ftz, rnd, to } => num::f2i(from, ftz, a, rnd, to),
        Conv::I2F { from, to, rnd, sat } => {
            let b = num::i2f(from, a, to, rnd);
            if sat {
                num::saturate(to, b)
            } else {
                b
            }
        }
        Conv::F2F {
            from,
            to,
            rnd,
            irnd,
            ftz,
            sat,
        } => num::f2f(from, a, to, rnd, irnd, ftz, sat),
    }
}

fn atom_new(op: AOp, kind: AKind, old: u64, b: u64, c: u64) -> u64 {
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

fn atom_size(kind: AKind) -> u32 {
    match kind {
        AKind::Int(t) => t.bits / 8,
        AKind::Float(f) => f.bits() / 8,
        AKind::Packed(_) => 4,
    }
}

fn space_name(sp: Sp) -> Space {
    match sp {
        Sp::Global => Space::Global,
        Sp::Shared => Space::Shared,
        Sp::Local => Space::Local,
        Sp::Param => Space::Param,
        Sp::Const => Space::Const,
        Sp::Generic => Space::Generic,
    }
}

/// Per-lane addresses `base + off` of a memory instruction.
#[inline(always)]
fn lane_addrs(regs: &[u64], base: R, base32: bool, off: i64) -> [u64; 32] {
    let bv = if base == NONE {
        [0u64; 32]
    } else {
        rd(regs, base)
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
enum Fast {
    /// Every active lane inside the cached global allocation.
    Global,
    /// Every active lane inside the CTA's shared memory.
    Shared,
}

/// Where an address lands after resolving generic addressing.
enum Target {
    Global(*const u8),
    Shared(u64),
    Local(u64),
    Param(u64),
}

impl<'a> LaunchCtx<'a> {
    /// Resolves `addr` in `space` for an access of `size` bytes (alignment `align`) by `lane`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn resolve(
        &self,
        m: &mut CtaMem,
        space: Sp,
        addr: u64,
        size: u32,
        align: u32,
        lane: u32,
        write: bool,
    ) -> Result<Target, Fault> {
        if addr & (align as u64 - 1) != 0 {
            return Err(Fault::new(
                FaultKind::Misaligned,
                space_name(space),
                addr,
                size,
                lane,
            ));
        }
        let space = if space == Sp::Generic {
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
            Sp::Global
        } else {
            space
        };
        match space {
            Sp::Shared => Ok(Target::Shared(addr & 0xffff_ffff)),
            Sp::Local => Ok(Target::Local(addr & 0xffff_ffff)),
            Sp::Param => {
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
                    _ => Err(Fault::new(
                        FaultKind::Oob,
                        space_name(space),
                        addr,
                        size,
                        lane,
                    )),
                }
            }
        }
    }

    /// Checks a whole warp's scalar access at once: all active lanes aligned and inside one
    /// global allocation (which becomes the cached one) or inside shared memory. `None` sends
    /// the instruction down the per-lane path, which also produces the precise error.
    #[inline(always)]
    fn fast_target(
        &self,
        m: &mut CtaMem,
        space: Sp,
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
            Sp::Global | Sp::Const | Sp::Generic => {
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
            Sp::Shared if end <= m.shared.len() as u64 => Some(Fast::Shared),
            _ => None,
        }
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn load(
        &self,
        m: &mut CtaMem,
        space: Sp,
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
    fn store(
        &self,
        m: &mut CtaMem,
        space: Sp,
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
    fn atomic(
        &self,
        m: &mut CtaMem,
        space: Sp,
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

    fn special(&self, s: SpecialReg, ctaid: [u32; 3], warp: u32, lane: u32, nwarps: u32) -> u64 {
        let t = warp * 32 + lane;
        let [bx, by, _] = self.block;
        let tid = [
            t % bx.max(1),
            (t / bx.max(1)) % by.max(1),
            t / (bx.max(1) * by.max(1)),
        ];
        match s {
            SpecialReg::Tid(d) => tid[d.index()] as u64,
            SpecialReg::Ntid(d) => self.block[d.index()] as u64,
            SpecialReg::Ctaid(d) => ctaid[d.index()] as u64,
            SpecialReg::Nctaid(d) => self.grid[d.index()] as u64,
            SpecialReg::ClusterCtaid(_) | SpecialReg::Clusterid(_) | SpecialReg::ClusterCtarank => {
                0
            }
            SpecialReg::ClusterNctaid(_)
            | SpecialReg::Nclusterid(_)
            | SpecialReg::ClusterNctarank => 1,
            SpecialReg::Laneid => lane as u64,
            SpecialReg::Warpid => warp as u64,
            SpecialReg::Nwarpid => nwarps as u64,
            SpecialReg::Nsmid => 1,
            SpecialReg::LanemaskEq => 1u64 << lane,
            SpecialReg::LanemaskLe => ((2u64 << lane) - 1) & 0xffff_ffff,
            SpecialReg::LanemaskLt => (1u64 << lane) - 1,
            SpecialReg::LanemaskGe => (!((1u64 << lane) - 1)) & 0xffff_ffff,
            SpecialReg::LanemaskGt => (!((2u64 << lane) - 1)) & 0xffff_ffff,
            SpecialReg::DynamicSmemSize => self.dyn_shared as u64,
            SpecialReg::TotalSmemSize | SpecialReg::AggrSmemSize => {
                (self.dyn_base() + self.dyn_shared as u64).max(self.func.shared_static as u64)
            }
            _ => 0,
        }
    }

    fn dyn_base(&self) -> u64 {
        (self.func.shared_static as u64).div_ceil(16) * 16
    }

    fn location(&self, pc: u32, ctaid: [u32; 3], warp: u32, lane: u32) -> Box<Location> {
        let t = warp * 32 + lane;
        let [bx, by, _] = self.block;
        let (bx, by) = (bx.max(1), by.max(1));
        Box::new(Location {
            kernel: self.kernel.to_string(),
            function: self.func.name.clone(),
            pc,
            instruction: self
                .func
                .text
                .get(pc as usize)
                .cloned()
                .unwrap_or_else(|| "<end>".into()),
            ctaid,
            tid: [t % bx, (t / bx) % by, t / (bx * by)],
        })
    }

    fn fault_error(&self, f: Fault, pc: u32, ctaid: [u32; 3], warp: u32) -> EmuError {
        let at = self.location(pc, ctaid, warp, f.lane);
        match f.kind {
            FaultKind::Oob => EmuError::OutOfBounds {
                at,
                space: f.space,
                address: f.addr,
                size: f.size,
            },
            FaultKind::Misaligned => EmuError::Misaligned {
                at,
                space: f.space,
                address: f.addr,
                size: f.size,
            },
            FaultKind::ReadOnly => EmuError::ReadOnly {
                at,
                space: f.space,
                address: f.addr,
            },
            FaultKind::Trap(message) => EmuError::Trap { at, message },
            FaultKind::Budget => EmuError::BudgetExhausted {
                at,
                budget: self.budget,
            },
            FaultKind::WallTime => EmuError::WallTimeExceeded {
                at,
                limit_ms: self.wall_time_limit.as_millis() as u64,
            },
        }
    }

    fn flush_budget(&self, m: &mut CtaMem) -> bool {
        let n = std::mem::take(&mut m.since_sync);
        let total = self.used.fetch_add(n, Ordering::Relaxed) + n;
        total > self.budget
    }

    /// Runs every CTA index handed out by `next`, returning this worker's counters.
    pub(crate) fn worker(
        &self,
        next: &std::sync::atomic::AtomicU64,
        ncta: u64,
    ) -> Result<Counters, EmuError> {
        let f = self.func;
        let nthreads = self.block[0] * self.block[1] * self.block[2];
        let nwarps = nthreads.div_ceil(32);
        let shared_size =
            (self.dyn_base() + self.dyn_shared as u64).max(f.shared_static as u64) as usize;
        let mut m = CtaMem {
            shared: vec![0; shared_size],
            local: vec![0; f.local_size as usize * nthreads as usize],
            local_size: f.local_size as usize,
            cache_base: 1,
            cache_end: 0,
            cache_ptr: std::ptr::null(),
            counters: Counters::default(),
            since_sync: 0,
        };
        let mut warps: Vec<Warp> = (0..nwarps)
            .map(|i| Warp {
                regs: vec![0; f.nrows as usize * 32],
                preds: vec![0; f.npreds as usize],
                pc: [0; 32],
                bar_id: [0; 32],
                live: 0,
                blocked: 0,
                gpc: 0,
                gmask: 0,
                next_other: u32::MAX,
                index: i,
            })
            .collect();
        loop {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let c = next.fetch_add(1, Ordering::Relaxed);
            if c >= ncta {
                break;
            }
            let [gx, gy, _] = self.grid;
            let (gx, gy) = (gx as u64, gy as u64);
            let ctaid = [
                (c % gx) as u32,
                ((c / gx) % gy) as u32,
                (c / (gx * gy)) as u32,
            ];
            if let Err(e) = self.run_cta(&mut m, &mut warps, ctaid, nthreads) {
                self.stop.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        self.used.fetch_add(m.since_sync, Ordering::Relaxed);
        Ok(m.counters)
    }

    fn run_cta(
        &self,
        m: &mut CtaMem,
        warps: &mut [Warp],
        ctaid: [u32; 3],
        nthreads: u32,
    ) -> Result<(), EmuError> {
        let f = self.func;
        m.shared.fill(0);
        m.local.fill(0);
        let nwarps = warps.len() as u32;
        for w in warps.iter_mut() {
            let first = w.index * 32;
            let n = nthreads.saturating_sub(first).min(32);
            w.live = if n == 32 { FULL } else { (1u32 << n) - 1 };
            w.blocked = 0;
            w.pc = [0; 32];
            w.gpc = 0;
            w.gmask = w.live;
            w.next_other = u32::MAX;
            w.preds.fill(0);
            for (r, src) in &f.consts {
                let base = *r as usize * 32;
                if let Some(row) = w.regs.get_mut(base..base + 32) {
                    for (lane, x) in row.iter_mut().enumerate() {
                        *x = match src {
                            ConstSrc::Imm(v) => *v,
                            ConstSrc::Special(s) => {
                                self.special(*s, ctaid, w.index, lane as u32, nwarps)
                            }
                            ConstSrc::ModuleVar(i, off) => self
                                .var_addrs
                                .get(*i as usize)
                                .copied()
                                .unwrap_or(0)
                                .wrapping_add(*off as u64),
                            ConstSrc::DynShared(off) => self.dyn_base().wrapping_add(*off as u64),
                        };
                    }
                }
            }
            for (p, v) in &f.pconsts {
                pset(&mut w.preds, *p, if *v { FULL } else { 0 }, FULL);
            }
        }
        let mut arrived = [0u32; 16];
        let mut expected = [0u32; 16];
        loop {
            let mut ran = false;
            for wi in 0..warps.len() {
                let w = &mut warps[wi];
                if w.live & !w.blocked == 0 {
                    continue;
                }
                ran = true;
                if let Err((pc, fault)) = self.run_warp(m, w, &mut arrived, &mut expected) {
                    return Err(self.fault_error(fault, pc, ctaid, w.index));
                }
                // Release complete barriers.
                for id in 0..16 {
                    let exp = if expected[id] == 0 {
                        nthreads
                    } else {
                        expected[id]
                    };
                    if arrived[id] > 0 && arrived[id] >= exp {
                        arrived[id] -= exp;
                        expected[id] = 0;
                        for w2 in warps.iter_mut() {
                            let mut mm = w2.blocked;
                            while mm != 0 {
                                let l = mm.trailing_zeros();
                                mm &= mm - 1;
                                if w2.bar_id[l as usize] as usize == id {
                                    w2.blocked &= !(1 << l);
                                }
                            }
                        }
                    }
                }
            }
            if !ran {
                break;
            }
        }
        // Everything stopped: either all exited or a deadlock.
        if let Some(w) = warps.iter().find(|w| w.live & w.blocked != 0) {
            let l = (w.live & w.blocked).trailing_zeros();
            let id = w.bar_id[l as usize] as usize;
            let exited: u32 = warps
                .iter()
                .map(|w| 32 - w.live.count_ones())
                .sum::<u32>()
                .saturating_sub(nwarps * 32 - nthreads);
            let exp = if expected[id] == 0 {
                nthreads
            } else {
                expected[id]
            };
            let pc = w.pc[l as usize].saturating_sub(1);
            return Err(EmuError::BarrierDeadlock {
                at: self.location(pc, ctaid, w.index, l),
                message: format!(
                    "barrier {id}: {} of {exp} expected threads arrived, {exited} threads of the CTA have exited",
                    arrived[id]
                ),
            });
        }
        Ok(())
    }

    /// Runs one warp until all its lanes have exited or are blocked at a barrier, or its time
    /// slice is used up, on the engine the launch chose ([`Engine`]).
    fn run_warp(
        &self,
        m: &mut CtaMem,
        w: &mut Warp,
        arrived: &mut [u32; 16],
        expected: &mut [u32; 16],
    ) -> Result<(), (u32, Fault)> {
        match self.engine {
            Engine::Reference => self.warp_loop::<false>(m, w, arrived, expected),
            #[cfg(target_arch = "x86_64")]
            Engine::FastX86 => {
                // SAFETY: `Engine::FastX86` is only chosen when the CPU reports these features
                // (`Engine::fast`).
                unsafe { self.warp_loop_x86(m, w, arrived, expected) }
            }
            Engine::Fast => self.warp_loop::<true>(m, w, arrived, expected),
        }
    }

    /// The fast engine compiled for AVX2 and FMA: the lane loops of [`super::lanes`] vectorize
    /// and `mul_add`/`trunc`/`round_ties_even` become instructions. IEEE semantics are the
    /// same (Rust never contracts `a * b + c` into an FMA), so results are bit-identical.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,sse4.1,popcnt,bmi1,bmi2,lzcnt")]
    unsafe fn warp_loop_x86(
        &self,
        m: &mut CtaMem,
        w: &mut Warp,
        arrived: &mut [u32; 16],
        expected: &mut [u32; 16],
    ) -> Result<(), (u32, Fault)> {
        self.warp_loop::<true>(m, w, arrived, expected)
    }

    /// The warp loop. `FAST` adds the whole-row kernels of [`super::lanes`] for the forms the
    /// compiler's math library spends its time on; without it this is the reference engine.
    #[inline(always)]
    fn warp_loop<const FAST: bool>(
        &self,
        m: &mut CtaMem,
        w: &mut Warp,
        arrived: &mut [u32; 16],
        expected: &mut [u32; 16],
    ) -> Result<(), (u32, Fault)> {
        let code = &self.func.code;
        if w.gmask == 0 && !w.reselect() {
            return Ok(());
        }
        // Time slice: yield to the CTA's other warps now and then, so that a warp spinning on
        // a flag another warp of the CTA sets (without a barrier) still sees it set.
        let mut slice = 0u32;
        loop {
            slice += 1;
            if slice > SLICE {
                return Ok(());
            }
            if w.gpc == w.next_other {
                w.store_group();
                w.reselect();
            }
            let pc = w.gpc;
            let Some(inst) = code.get(pc as usize) else {
                // Falling off the end: exit.
                w.live &= !w.gmask;
                w.gmask = 0;
                if !w.reselect() {
                    return Ok(());
                }
                continue;
            };
            let gmask = w.gmask;
            let mask = if inst.guard == NONE {
                gmask
            } else {
                let p = pget(&w.preds, inst.guard);
                gmask & if inst.gneg { !p } else { p }
            };
            let active = gmask.count_ones() as u64;
            m.counters.warp_instructions += 1;
            m.counters.lane_instructions += active;
            m.since_sync += active;
            if m.since_sync > 1 << 16 {
                if self.flush_budget(m) {
                    let lane = gmask.trailing_zeros();
                    return Err((pc, Fault::new(FaultKind::Budget, Space::Global, 0, 0, lane)));
                }
                // Checked at the same cadence as the budget: a clock read per 64Ki
                // lane-instructions costs nothing measurable.
                if self.deadline.is_some_and(|d| std::time::Instant::now() > d) {
                    let lane = gmask.trailing_zeros();
                    return Err((
                        pc,
                        Fault::new(FaultKind::WallTime, Space::Global, 0, 0, lane),
                    ));
                }
            }
            if mask == 0 && !matches!(inst.op, Op::Bar { .. }) {
                w.gpc += 1;
                continue;
            }
            let fault = |kind, lane| (pc, Fault::new(kind, Space::Global, 0, 0, lane));
            match &inst.op {
                Op::Nop => {}
                Op::Mov { d, a } => {
                    let av = rd(&w.regs, *a);
                    wr(&mut w.regs, *d, &av, mask);
                }
                Op::PMov { d, a, neg } => {
                    let v = pget(&w.preds, *a) ^ if *neg { FULL } else { 0 };
                    pset(&mut w.preds, *d, v, mask);
                }
                Op::PBin {
                    op,
                    d,
                    a,
                    an,
                    b,
                    bn,
                } => {
                    let x = pget(&w.preds, *a) ^ if *an { FULL } else { 0 };
                    let y = pget(&w.preds, *b) ^ if *bn { FULL } else { 0 };
                    let v = match op {
                        PBool::And => x & y,
                        PBool::Or => x | y,
                        PBool::Xor => x ^ y,
                    };
                    pset(&mut w.preds, *d, v, mask);
                }
                Op::Pack { d, parts, n, bits } => {
                    let mut out = [0u64; 32];
                    for k in 0..(*n as usize).min(4) {
                        let pr = parts[k];
                        if pr == NONE {
                            continue;
                        }
                        let v = rd(&w.regs, pr);
                        let sh = k as u32 * *bits as u32;
                        for l in 0..32 {
                            out[l] |= num::trunc(v[l], *bits as u32) << sh;
                        }
                    }
                    wr(&mut w.regs, *d, &out, mask);
                }
                Op::Unpack { ds, n, bits, a } => {
                    let v = rd(&w.regs, *a);
                    for k in 0..(*n as usize).min(4) {
                        let sh = k as u32 * *bits as u32;
                        let mut out = [0u64; 32];
                        for l in 0..32 {
                            out[l] = num::trunc(v[l] >> sh, *bits as u32);
                        }
                        wr(&mut w.regs, ds[k], &out, mask);
                    }
                }
                Op::IBin { op, ty, d, a, b } => {
                    let (op, ty) = (*op, *ty);
                    match (op, ty.bits) {
                        (IOp::Add, 32) => map2!(w, mask, *d, *a, *b, |x, y| (x as u32)
                            .wrapping_add(y as u32)
                            as u64),
                        (IOp::Add, 64) => map2!(w, mask, *d, *a, *b, |x, y| x.wrapping_add(y)),
                        (IOp::MulLo, 32) => {
                            map2!(
                                w,
                                mask,
                                *d,
                                *a,
                                *b,
                                |x, y| (x as u32).wrapping_mul(y as u32) as u64
                            )
                        }
                        (IOp::MulWide, 32) if ty.signed => {
                            map2!(w, mask, *d, *a, *b, |x, y| ((x as i32 as i64)
                                * (y as i32 as i64))
                                as u64)
                        }
                        (IOp::MulWide, 32) => map2!(w, mask, *d, *a, *b, |x, y| (x as u32 as u64)
                            * (y as u32 as u64)),
                        (IOp::Shl, 32) => map2!(w, mask, *d, *a, *b, |x, y| {
                            let n = y as u32;
                            if n >= 32 {
                                0
                            } else {
                                ((x as u32) << n) as u64
                            }
                        }),
                        _ => map2!(w, mask, *d, *a, *b, |x, y| ibin(op, ty, x, y)),
                    }
                }
                Op::IUn { op, ty, d, a } => {
                    let (op, ty) = (*op, *ty);
                    map1!(w, mask, *d, *a, |x| iun(op, ty, x))
                }
                Op::Mad {
                    mode,
                    ty,
                    d,
                    a,
                    b,
                    c,
                } => {
                    let (mode, ty) = (*mode, *ty);
                    if mode == IOp::MulLo && ty.bits == 32 {
                        map3!(w, mask, *d, *a, *b, *c, |x, y, z| (x as u32)
                            .wrapping_mul(y as u32)
                            .wrapping_add(z as u32)
                            as u64)
                    } else {
                        let wb = if mode == IOp::MulWide {
                            (ty.bits * 2).min(64)
                        } else {
                            ty.bits
                        };
                        map3!(w, mask, *d, *a, *b, *c, |x, y, z| num::trunc(
                            ibin(mode, ty, x, y).wrapping_add(z),
                            wb
                        ))
                    }
                }
                Op::Bfe { ty, d, a, b, c } => {
                    let ty = *ty;
                    map3!(w, mask, *d, *a, *b, *c, |x, y, z| num::bfe(
                        ty.bits, ty.signed, x, y, z
                    ))
                }
                Op::Bfi {
                    bits,
                    d,
                    a,
                    b,
                    c,
                    e,
                } => {
                    let bits = *bits;
                    let ev = rd(&w.regs, *e);
                    let av = rd(&w.regs, *a);
                    let bv = rd(&w.regs, *b);
                    let cv = rd(&w.regs, *c);
                    let mut out = [0u64; 32];
                    for l in 0..32 {
                        out[l] = num::bfi(bits, av[l], bv[l], cv[l], ev[l]);
                    }
                    wr(&mut w.regs, *d, &out, mask);
                }
                Op::Prmt { mode, d, a, b, c } => {
                    let mode = *mode;
                    map3!(w, mask, *d, *a, *b, *c, |x, y, z| num::prmt(mode, x, y, z))
                }
                Op::Lop3 { d, a, b, c, lut } => {
                    let lut = *lut;
                    map3!(w, mask, *d, *a, *b, *c, |x, y, z| num::lop3(x, y, z, lut))
                }
                Op::Shf {
                    left,
                    clamp,
                    d,
                    a,
                    b,
                    c,
                } => {
                    let (left, clamp) = (*left, *clamp);
                    map3!(w, mask, *d, *a, *b, *c, |x, y, z| num::shf(
                        left, clamp, x, y, z
                    ))
                }
                Op::FBin {
                    op,
                    fmt,
                    packed,
                    rnd,
                    ftz,
                    sat,
                    d,
                    a,
                    b,
                } => {
                    let (op, fmt, rnd, ftz, sat) = (*op, *fmt, *rnd, *ftz, *sat);
                    if FAST && fmt == Fmt::F64 && rnd == Rnd::Rn && !ftz && !sat && !*packed {
                        let out = lanes::f64_bin(op, &rd(&w.regs, *a), &rd(&w.regs, *b));
                        wr(&mut w.regs, *d, &out, mask);
                    } else if fmt == Fmt::F32 && rnd == Rnd::Rn && !ftz && !sat && !*packed {
                        match op {
                            num::FOp::Add => map2!(w, mask, *d, *a, *b, |x, y| f32_canon(
                                f32::from_bits(x as u32) + f32::from_bits(y as u32)
                            )),
                            num::FOp::Mul => map2!(w, mask, *d, *a, *b, |x, y| f32_canon(
                                f32::from_bits(x as u32) * f32::from_bits(y as u32)
                            )),
                            num::FOp::Sub => map2!(w, mask, *d, *a, *b, |x, y| f32_canon(
                                f32::from_bits(x as u32) - f32::from_bits(y as u32)
                            )),
                            num::FOp::Div => map2!(w, mask, *d, *a, *b, |x, y| f32_canon(
                                f32::from_bits(x as u32) / f32::from_bits(y as u32)
                            )),
                        }
                    } else {
                        let f = move |x: u64, y: u64| {
                            let r = num::fbin(op, fmt, rnd, ftz, x, y);
                            if sat {
                                num::saturate(fmt, r)
                            } else {
                                r
                            }
                        };
                        if *packed {
                            map2!(w, mask, *d, *a, *b, |x, y| packed2(x, y, f))
                        } else {
                            map2!(w, mask, *d, *a, *b, |x, y| f(x, y))
                        }
                    }
                }
                Op::FMinMax {
                    max,
                    fmt,
                    packed,
                    ftz,
                    nan,
                    d,
                    a,
                    b,
                } => {
                    let (max, fmt, ftz, nan) = (*max, *fmt, *ftz, *nan);
                    let f = move |x, y| num::fminmax(fmt, max, ftz, nan, x, y);
                    if FAST && !ftz && !*packed && matches!(fmt, Fmt::F64 | Fmt::F32) {
                        let (av, bv) = (rd(&w.regs, *a), rd(&w.regs, *b));
                        let out = if fmt == Fmt::F64 {
                            lanes::f64_minmax(max, nan, &av, &bv)
                        } else {
                            lanes::f32_minmax(max, nan, &av, &bv)
                        };
                        wr(&mut w.regs, *d, &out, mask);
                    } else if *packed {
                        map2!(w, mask, *d, *a, *b, |x, y| packed2(x, y, f))
                    } else {
                        map2!(w, mask, *d, *a, *b, |x, y| f(x, y))
                    }
                }
                Op::Fma {
                    fmt,
                    packed,
                    rnd,
                    ftz,
                    sat,
                    d,
                    a,
                    b,
                    c,
                } => {
                    let (fmt, rnd, ftz, sat) = (*fmt, *rnd, *ftz, *sat);
                    let f = move |x, y, z| {
                        let r = num::ffma(fmt, rnd, ftz, x, y, z);
                        if sat {
                            num::saturate(fmt, r)
                        } else {
                            r
                        }
                    };
                    let plain = rnd == Rnd::Rn && !ftz && !sat && !*packed;
                    if FAST && plain && matches!(fmt, Fmt::F64 | Fmt::F32) {
                        let (av, bv, cv) = (rd(&w.regs, *a), rd(&w.regs, *b), rd(&w.regs, *c));
                        let out = if fmt == Fmt::F64 {
                            lanes::f64_fma(&av, &bv, &cv)
                        } else {
                            lanes::f32_fma(&av, &bv, &cv)
                        };
                        wr(&mut w.regs, *d, &out, mask);
                    } else if *packed {
                        map3!(w, mask, *d, *a, *b, *c, |x, y, z| packed3(x, y, z, f))
                    } else if fmt == Fmt::F32 && rnd == Rnd::Rn && !ftz && !sat {
                        // Only active lanes: mul_add may be a libm call.
                        let (av, bv, cv) = (rd(&w.regs, *a), rd(&w.regs, *b), rd(&w.regs, *c));
                        let mut out = [0u64; 32];
                        let mut mm = mask;
                        while mm != 0 {
                            let l = mm.trailing_zeros() as usize;
                            mm &= mm - 1;
                            out[l] = f32_canon(f32::from_bits(av[l] as u32).mul_add(
                                f32::from_bits(bv[l] as u32),
                                f32::from_bits(cv[l] as u32),
                            ));
                        }
                        wr(&mut w.regs, *d, &out, mask);
                    } else {
                        map3!(w, mask, *d, *a, *b, *c, |x, y, z| f(x, y, z))
                    }
                }
                Op::FUn {
                    op,
                    fmt,
                    packed,
                    ftz,
                    d,
                    a,
                } => {
                    let (op, fmt, ftz) = (*op, *fmt, *ftz);
                    if FAST && fmt == Fmt::F64 && !ftz && !*packed {
                        let av = rd(&w.regs, *a);
                        let fast = match op {
                            FUn::Neg => Some(av.map(|x| x ^ (1 << 63))),
                            FUn::Abs => Some(av.map(|x| x & !(1 << 63))),
                            FUn::Rcp(Rnd::Rn) => {
                                Some(lanes::f64_bin(num::FOp::Div, &[1f64.to_bits(); 32], &av))
                            }
                            _ => None,
                        };
                        if let Some(out) = fast {
                            wr(&mut w.regs, *d, &out, mask);
                            w.gpc += 1;
                            continue;
                        }
                    }
                    let f = move |x: u64| -> u64 {
                        let sign = 1u64 << (fmt.bits() - 1);
                        match op {
                            FUn::Neg => {
                                let x = if ftz { fmt.ftz(x) } else { x };
                                x ^ sign
                            }
                            FUn::Abs => {
                                let x = if ftz { fmt.ftz(x) } else { x };
                                x & !sign & num::trunc(u64::MAX, fmt.bits())
                            }
                            FUn::Sqrt(r) => num::fsqrt(fmt, r, ftz, x),
                            FUn::Rcp(r) => {
                                num::fbin(num::FOp::Div, fmt, r, ftz, fmt.from_f64_rn(1.0), x)
                            }
                            FUn::Approx(ap) => num::fapprox(ap, fmt, ftz, x),
                        }
                    };
                    if *packed {
                        map1!(w, mask, *d, *a, |x| packed2(x, 0, |p, _| f(p)))
                    } else {
                        map1!(w, mask, *d, *a, |x| f(x))
                    }
                }
                Op::Copysign { fmt, d, a, b } => {
                    let fmt = *fmt;
                    map2!(w, mask, *d, *a, *b, |x, y| num::copysign(fmt, x, y))
                }
                Op::Testp { t, fmt, d, a } => {
                    let av = rd(&w.regs, *a);
                    let mut v = 0u32;
                    for l in 0..32 {
                        if num::testp(*t, *fmt, av[l]) {
                            v |= 1 << l;
                        }
                    }
                    pset(&mut w.preds, *d, v, mask);
                }
                Op::Setp {
                    cmp,
                    kind,
                    ftz,
                    d,
                    dn,
                    a,
                    b,
                    comb,
                } => {
                    let av = rd(&w.regs, *a);
                    let bv = rd(&w.regs, *b);
                    let mut v = 0u32;
                    match *kind {
                        CmpKind::Float(fmt @ (Fmt::F64 | Fmt::F32)) if FAST && !*ftz => {
                            v = lanes::fcmp_mask(*cmp, fmt == Fmt::F64, &av, &bv);
                        }
                        CmpKind::Int(IntTy { bits: 32, signed }) => {
                            for l in 0..32 {
                                let r = if signed {
                                    num::icmp(*cmp, 32, true, av[l], bv[l])
                                } else {
                                    num::icmp(*cmp, 32, false, av[l], bv[l])
                                };
                                v |= (r as u32) << l;
                            }
                        }
                        CmpKind::Int(t) => {
                            for l in 0..32 {
                                v |= (num::icmp(*cmp, t.bits, t.signed, av[l], bv[l]) as u32) << l;
                            }
                        }
                        CmpKind::Float(fmt) => {
                            for l in 0..32 {
                                v |= (num::fcmp(*cmp, fmt, *ftz, av[l], bv[l]) as u32) << l;
                            }
                        }
                    }
                    let mut nv = !v;
                    if let Some((op, c, cn)) = comb {
                        let cv = pget(&w.preds, *c) ^ if *cn { FULL } else { 0 };
                        let f = |x: u32| match op {
                            PBool::And => x & cv,
                            PBool::Or => x | cv,
                            PBool::Xor => x ^ cv,
                        };
                        v = f(v);
                        nv = f(nv);
                    }
                    pset(&mut w.preds, *d, v, mask);
                    if *dn != NONE {
                        pset(&mut w.preds, *dn, nv, mask);
                    }
                }
                Op::Set {
                    cmp,
                    kind,
                    ftz,
                    float_out,
                    d,
                    a,
                    b,
                } => {
                    let (cmp, kind, ftz, float_out) = (*cmp, *kind, *ftz, *float_out);
                    map2!(w, mask, *d, *a, *b, |x, y| {
                        let r = match kind {
                            CmpKind::Int(t) => num::icmp(cmp, t.bits, t.signed, x, y),
                            CmpKind::Float(f) => num::fcmp(cmp, f, ftz, x, y),
                        };
                        match (r, float_out) {
                            (true, true) => 0x3f80_0000,
                            (true, false) => 0xffff_ffff,
                            _ => 0,
                        }
                    })
                }
                Op::Selp { d, a, b, p, pn } => {
                    let pv = pget(&w.preds, *p) ^ if *pn { FULL } else { 0 };
                    let av = rd(&w.regs, *a);
                    let bv = rd(&w.regs, *b);
                    let mut out = [0u64; 32];
                    for l in 0..32 {
                        out[l] = if pv >> l & 1 != 0 { av[l] } else { bv[l] };
                    }
                    wr(&mut w.regs, *d, &out, mask);
                }
                Op::Cvt { conv, d, a } => {
                    let conv = *conv;
                    let fast = if FAST {
                        let av = || rd(&w.regs, *a);
                        match conv {
                            Conv::F2F {
                                from: Fmt::F64,
                                to: Fmt::F64,
                                irnd: Some(ir),
                                ftz: false,
                                sat: false,
                                ..
                            } => Some(lanes::f64_round_int(ir, &av())),
                            Conv::F2F {
                                from: Fmt::F32,
                                to: Fmt::F64,
                                irnd: None,
                                ftz: false,
                                sat: false,
                                ..
                            } => Some(lanes::f32_to_f64(&av())),
                            Conv::F2F {
                                from: Fmt::F64,
                                to: Fmt::F32,
                                rnd: Rnd::Rn,
                                irnd: None,
                                ftz: false,
                                sat: false,
                            } => Some(lanes::f64_to_f32_rn(&av())),
                            Conv::I2F {
                                from,
                                to: Fmt::F64,
                                rnd: Rnd::Rn,
                                sat: false,
                            } if from.bits == 32 || from.bits == 64 => {
                                Some(lanes::int_to_f64(from.signed, from.bits, &av()))
                            }
                            _ => None,
                        }
                    } else {
                        None
                    };
                    if let Some(out) = fast {
                        wr(&mut w.regs, *d, &out, mask);
                        w.gpc += 1;
                        continue;
                    }
                    match conv {
                        Conv::I2I {
                            from,
                            to,
                            sat: false,
                        } => {
                            map1!(w, mask, *d, *a, |x| num::trunc(
                                from.value(x) as u64,
                                to.bits
                            ))
                        }
                        _ => map1!(w, mask, *d, *a, |x| cvt(conv, x)),
                    }
                }
                Op::CvtPack { fmt, rnd, d, a, b } => {
                    let (fmt, rnd) = (*fmt, *rnd);
                    map2!(w, mask, *d, *a, *b, |x, y| {
                        let hi = num::f2f(Fmt::F32, x, fmt, rnd, None, false, false);
                        let lo = num::f2f(Fmt::F32, y, fmt, rnd, None, false, false);
                        (hi << 16) | lo
                    })
                }
                Op::Cvta {
                    to,
                    space,
                    bits,
                    d,
                    a,
                } => {
                    let (to, space, bits) = (*to, *space, *bits as u32);
                    let win = match space {
                        Sp::Shared => SHARED_WINDOW,
                        Sp::Local => LOCAL_WINDOW,
                        Sp::Param => PARAM_WINDOW,
                        _ => 0,
                    };
                    map1!(w, mask, *d, *a, |x| {
                        let v = if win == 0 {
                            x
                        } else if to {
                            x.wrapping_sub(win)
                        } else {
                            num::trunc(x, 32) + win
                        };
                        num::trunc(v, bits)
                    })
                }
                Op::Ld {
                    space,
                    size,
                    n,
                    sext,
                    ds,
                    base,
                    base32,
                    off,
                } => {
                    let (size, n) = (*size as u32, *n as u32);
                    if n == 1 {
                        let addrs = lane_addrs(&w.regs, *base, *base32, *off);
                        if let Some(fast) = self.fast_target(m, *space, &addrs, mask, size) {
                            let mut out = [0u64; 32];
                            let mut mm = mask;
                            match fast {
                                Fast::Global => {
                                    let (ptr, cb) = (m.cache_ptr, m.cache_base);
                                    m.counters.global_bytes_read +=
                                        (size * mask.count_ones()) as u64;
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
                            }
                            if *sext {
                                for v in out.iter_mut() {
                                    *v = num::sext(*v, size * 8) as u64;
                                }
                            }
                            wr(&mut w.regs, ds[0], &out, mask);
                            w.gpc += 1;
                            continue;
                        }
                    }
                    let mut mm = mask;
                    while mm != 0 {
                        let l = mm.trailing_zeros();
                        mm &= mm - 1;
                        let addr = lane_address(&w.regs, *base, *base32, *off, l);
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
                    base,
                    base32,
                    off,
                } => {
                    let (size, n) = (*size as u32, *n as u32);
                    if n == 1 {
                        let addrs = lane_addrs(&w.regs, *base, *base32, *off);
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
                            }
                            w.gpc += 1;
                            continue;
                        }
                    }
                    let mut mm = mask;
                    while mm != 0 {
                        let l = mm.trailing_zeros();
                        mm &= mm - 1;
                        let addr = lane_address(&w.regs, *base, *base32, *off, l);
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
                    base,
                    base32,
                    off,
                    b,
                    c,
                } => {
                    let (op, kind) = (*op, *kind);
                    let size = atom_size(kind);
                    let mut mm = mask;
                    while mm != 0 {
                        let l = mm.trailing_zeros();
                        mm &= mm - 1;
                        let bb = if *base == NONE {
                            0
                        } else {
                            rd1(&w.regs, *base, l)
                        };
                        let bb = if *base32 { bb & 0xffff_ffff } else { bb };
                        let addr = bb.wrapping_add(*off as u64);
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
                Op::Bra { target } => {
                    let target = *target;
                    if mask == gmask {
                        w.gpc = target;
                        if w.next_other != u32::MAX {
                            w.store_group();
                            w.reselect();
                        }
                    } else {
                        let mut mm = gmask;
                        while mm != 0 {
                            let l = mm.trailing_zeros() as usize;
                            mm &= mm - 1;
                            w.pc[l] = if mask >> l & 1 != 0 { target } else { pc + 1 };
                        }
                        w.gmask = 0;
                        w.reselect();
                    }
                    continue;
                }
                Op::Exit => {
                    w.live &= !mask;
                    w.gmask &= !mask;
                    if w.gmask == 0 {
                        if !w.reselect() {
                            return Ok(());
                        }
                        continue;
                    }
                }
                Op::Trap => {
                    return Err(fault(
                        FaultKind::Trap("trap instruction executed".into()),
                        mask.trailing_zeros(),
                    ));
                }
                Op::Bar { id, count, arrive } => {
                    let l0 = if mask != 0 {
                        mask.trailing_zeros()
                    } else {
                        gmask.trailing_zeros()
                    };
                    let idv = rd1(&w.regs, *id, l0);
                    if idv >= 16 {
                        return Err(fault(
                            FaultKind::Trap(format!("barrier id {idv} out of range 0..16")),
                            l0,
                        ));
                    }
                    let idx = idv as usize;
                    if mask != 0 {
                        arrived[idx] += mask.count_ones();
                        if *count != NONE {
                            expected[idx] = rd1(&w.regs, *count, l0) as u32;
                        }
                        if !*arrive {
                            w.blocked |= mask;
                            let mut mm = mask;
                            while mm != 0 {
                                let l = mm.trailing_zeros() as usize;
                                mm &= mm - 1;
                                w.bar_id[l] = idx as u8;
                            }
                        }
                    }
                    w.gpc = pc + 1;
                    w.store_group();
                    if !w.reselect() {
                        return Ok(());
                    }
                    continue;
                }
                Op::Shfl {
                    mode,
                    d,
                    p,
                    a,
                    b,
                    c,
                } => {
                    let av = rd(&w.regs, *a);
                    let bv = rd(&w.regs, *b);
                    let cv = rd(&w.regs, *c);
                    let mut out = [0u64; 32];
                    let mut pv = 0u32;
                    let mut mm = mask;
                    while mm != 0 {
                        let l = mm.trailing_zeros();
                        mm &= mm - 1;
                        let li = l as usize;
                        let bval = (bv[li] & 31) as i32;
                        let cval = (cv[li] & 31) as i32;
                        let seg = ((cv[li] >> 8) & 31) as i32;
                        let lane = l as i32;
                        let max_lane = (lane & seg) | (cval & !seg);
                        let min_lane = lane & seg;
                        let (j, ok) = match mode {
                            ShflMode::Up => {
                                let j = lane - bval;
                                (j, j >= max_lane)
                            }
                            ShflMode::Down => {
                                let j = lane + bval;
                                (j, j <= max_lane)
                            }
                            ShflMode::Bfly => {
                                let j = lane ^ bval;
                                (j, j <= max_lane)
                            }
                            ShflMode::Idx => {
                                let j = min_lane | (bval & !seg);
                                (j, j <= max_lane)
                            }
                        };
                        let j = if ok && (0..32).contains(&j) { j } else { lane };
                        out[li] = av[j as usize];
                        pv |= (ok as u32) << l;
                    }
                    wr(&mut w.regs, *d, &out, mask);
                    if *p != NONE {
                        pset(&mut w.preds, *p, pv, mask);
                    }
                }
                Op::Vote { mode, d, dp, a, an } => {
                    let v = (pget(&w.preds, *a) ^ if *an { FULL } else { 0 }) & mask;
                    match mode {
                        VoteMode::Ballot => {
                            let out = [v as u64; 32];
                            wr(&mut w.regs, *d, &out, mask);
                        }
                        VoteMode::All => {
                            pset(&mut w.preds, *dp, if v == mask { FULL } else { 0 }, mask)
                        }
                        VoteMode::Any => {
                            pset(&mut w.preds, *dp, if v != 0 { FULL } else { 0 }, mask)
                        }
                        VoteMode::Uni => pset(
                            &mut w.preds,
                            *dp,
                            if v == 0 || v == mask { FULL } else { 0 },
                            mask,
                        ),
                    }
                }
                Op::Activemask { d } => {
                    let out = [gmask as u64; 32];
                    wr(&mut w.regs, *d, &out, mask);
                }
                Op::MatchAny { d, a, bits } => {
                    let av = rd(&w.regs, *a);
                    let mut out = [0u64; 32];
                    let bits = *bits as u32;
                    for l in 0..32 {
                        if mask >> l & 1 == 0 {
                            continue;
                        }
                        let mut mk = 0u64;
                        for k in 0..32 {
                            if mask >> k & 1 != 0
                                && num::trunc(av[k], bits) == num::trunc(av[l], bits)
                            {
                                mk |= 1 << k;
                            }
                        }
                        out[l] = mk;
                    }
                    wr(&mut w.regs, *d, &out, mask);
                }
                Op::MatchAll { d, p, a, bits } => {
                    let av = rd(&w.regs, *a);
                    let bits = *bits as u32;
                    let first = av[mask.trailing_zeros() as usize];
                    let all = (0..32).all(|k| {
                        mask >> k & 1 == 0 || num::trunc(av[k], bits) == num::trunc(first, bits)
                    });
                    let out = [if all { mask as u64 } else { 0 }; 32];
                    wr(&mut w.regs, *d, &out, mask);
                    if *p != NONE {
                        pset(&mut w.preds, *p, if all { FULL } else { 0 }, mask);
                    }
                }
                Op::Slct {
                    cf,
                    ftz,
                    d,
                    a,
                    b,
                    c,
                } => {
                    let (cf, ftz) = (*cf, *ftz);
                    map3!(w, mask, *d, *a, *b, *c, |x, y, z| {
                        let ge = match cf {
                            Some(f) => {
                                let z = if ftz { f.ftz(z) } else { z };
                                f.to_f64(z) >= 0.0
                            }
                            None => (z as u32 as i32) >= 0,
                        };
                        if ge {
                            x
                        } else {
                            y
                        }
                    })
                }
                Op::Carry {
                    sub,
                    hi,
                    carry_in,
                    carry_out,
                    ty,
                    d,
                    a,
                    b,
                    c,
                    cc,
                } => {
                    let bits = ty.bits;
                    let cin = if *carry_in { pget(&w.preds, *cc) } else { 0 };
                    let av = rd(&w.regs, *a);
                    let bv = rd(&w.regs, *b);
                    let cv = if *c == NONE {
                        [0u64; 32]
                    } else {
                        rd(&w.regs, *c)
                    };
                    let mut out = [0u64; 32];
                    let mut cout = 0u32;
                    for l in 0..32 {
                        let ci = (cin >> l & 1) as u128;
                        let (x, y) = (
                            num::trunc(av[l], bits) as u128,
                            num::trunc(bv[l], bits) as u128,
                        );
                        let m = 1u128 << bits;
                        let (r, carry) = if *c != NONE {
                            let p = x * y;
                            let p = if *hi { p >> bits } else { p & (m - 1) };
                            let s = p + num::trunc(cv[l], bits) as u128 + ci;
                            (s, s >= m)
                        } else if *sub {
                            let s = x.wrapping_sub(y).wrapping_sub(ci);
                            (s, x < y + ci)
                        } else {
                            let s = x + y + ci;
                            (s, s >= m)
                        };
                        out[l] = num::trunc(r as u64, bits);
                        cout |= (carry as u32) << l;
                    }
                    wr(&mut w.regs, *d, &out, mask);
                    if *carry_out {
                        pset(&mut w.preds, *cc, cout, mask);
                    }
                }
                Op::Redux { op, signed, d, a } => {
                    let av = rd(&w.regs, *a);
                    let mut acc: Option<u64> = None;
                    for l in 0..32 {
                        if mask >> l & 1 == 0 {
                            continue;
                        }
                        let x = av[l] & 0xffff_ffff;
                        acc = Some(match acc {
                            None => x,
                            Some(y) => match op {
                                ReduxOp::Add => (x + y) & 0xffff_ffff,
                                ReduxOp::And => x & y,
                                ReduxOp::Or => x | y,
                                ReduxOp::Xor => x ^ y,
                                ReduxOp::Min | ReduxOp::Max => {
                                    let ty = IntTy {
                                        bits: 32,
                                        signed: *signed,
                                    };
                                    ibin(
                                        if *op == ReduxOp::Min {
                                            IOp::Min
                                        } else {
                                            IOp::Max
                                        },
                                        ty,
                                        x,
                                        y,
                                    )
                                }
                            },
                        });
                    }
                    let out = [acc.unwrap_or(0); 32];
                    wr(&mut w.regs, *d, &out, mask);
                }
            }
            w.gpc += 1;
        }
    }
}
