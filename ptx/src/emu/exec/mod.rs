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

//!
//! # Files
//!
//! This module holds the launch context, the CTA scheduler and the warp loop, whose `match`
//! delegates each instruction to its family's handler: `alu` (moves, integers, select/carry),
//! `float` (float arithmetic, comparisons, conversions), `mem` (loads, stores, atomics and
//! address resolution), `warp_ops` (control flow, barriers, warp collectives); `regs` reads and
//! writes register rows; `fast` is the fast engine's table of row kernels, one per decoded
//! instruction, which the fast warp loop consults before that `match`, and its straight runs
//! and load groups, which the fast loop runs as one step each. The fast engine runs the
//! function's packed form (`decode/rows.rs`: registers whose live ranges do not overlap share a
//! row; [`Rows`]), the reference engine the code as decoded. Every handler is
//! `#[inline(always)]`: the loop compiles to one function per engine, as fast as the single
//! match it replaced.

// Lane loops index several 32-element arrays by lane: clearer than zipped iterators.
#![allow(clippy::needless_range_loop)]
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::ast::SpecialReg;

use super::decode::{ConstSrc, Func, Inst, Op, NONE, R};
use super::error::{Access, EmuError, Location, Space};
use super::memory::Memory;
use super::sanitize::{GlobalMap, RaceCell, Region, VarMap};

const FULL: u32 = u32::MAX;
/// Warp-instructions a warp runs before yielding to the other warps of its CTA.
const SLICE: u32 = 1 << 14;

/// Per-launch, read-only context shared by all worker threads.
pub(crate) struct LaunchCtx<'a> {
    pub kernel: &'a str,
    /// The locks every global read-modify-write of the launch holds ([`super::stripes`]).
    pub stripes: super::stripes::Stripes,
    pub func: &'a Func,
    /// The code the warp loop runs: `func.code`, or for the fast engine its packed form
    /// ([`Rows`]); instruction indices are the same in both.
    pub rows: Rows<'a>,
    pub mem: &'a Memory,
    pub params: &'a [u8],
    pub var_addrs: &'a [u64],
    /// Names of the module variables at `var_addrs`, for messages.
    pub var_names: Vec<String>,
    /// Memcheck's global regions of this launch.
    pub globals: GlobalMap,
    /// Memcheck's shared variables (and dynamic shared memory) and local variables.
    pub shared_map: VarMap,
    pub local_map: VarMap,
    /// Initcheck and racecheck are on (both send accesses down the per-lane path).
    pub initcheck: bool,
    pub racecheck: bool,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dyn_shared: u32,
    pub budget: u64,
    pub used: &'a AtomicU64,
    /// The launch's committed `.local` bytes and their limit.
    pub local: local::LocalBudget<'a>,
    pub stop: &'a AtomicBool,
    /// When the launch's wall time runs out (checked with the budget).
    pub deadline: Option<std::time::Instant>,
    /// The wall-time limit, for the error message.
    pub wall_time_limit: std::time::Duration,
    /// Which warp loop runs.
    pub engine: Engine,
    /// The fast engine's row kernel of each instruction and its straight runs
    /// ([`fast::table`]); empty for the reference engine, which never reads it.
    pub fast: fast::FastCode,
}

/// The code a launch runs and its register file: the decoded function's, or its packed form
/// (`decode::Packed`: fewer rows, the same instructions at the same indices).
#[derive(Clone, Copy)]
pub(crate) struct Rows<'a> {
    pub code: &'a [Inst],
    /// Rows per warp.
    pub nrows: u32,
    /// The row of each decoded register (for the constant rows); `None`: the identity.
    pub map: Option<&'a [R]>,
}

impl<'a> Rows<'a> {
    /// `func` as decoded, or packed when `packed` and the function has a packed form.
    pub(crate) fn of(func: &'a Func, packed: bool) -> Rows<'a> {
        match &func.packed {
            Some(p) if packed => Rows {
                code: &p.code,
                nrows: p.nrows,
                map: Some(&p.map),
            },
            _ => Rows {
                code: &func.code,
                nrows: func.nrows,
                map: None,
            },
        }
    }

    /// The row of decoded register `r`.
    fn row(&self, r: R) -> R {
        self.map
            .map_or(r, |m| m.get(r as usize).copied().unwrap_or(NONE))
    }
}

/// The warp loop a launch runs: the reference (the general path of every instruction), or the
/// fast one (the reference plus whole-row kernels for common forms, compiled for the host's
/// vector units where it has them). Both give bit-identical results, faults and counts; the
/// reference stays callable (`LaunchOptions::reference_engine`) so tests can check that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    Reference,
    Fast,
    /// The fast engine compiled for AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    FastX86,
    /// The fast engine compiled for AVX-512 (F, VL, DQ, BW) as well: twice the lanes per
    /// vector, and f64 <-> i64 conversions (`ex2`'s power of two) as vector instructions.
    #[cfg(target_arch = "x86_64")]
    FastX86Avx512,
}

/// The widest host instruction set the fast engine may be compiled for
/// ([`super::LaunchOptions::host_isa`]): it runs the widest build the CPU has, up to this. Every
/// build gives the same bits (IEEE operations are exact whatever the vector width, and Rust
/// never contracts `a * b + c`); the tests run each build the CPU has against the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostIsa {
    /// No target features beyond the compile target's.
    Portable,
    /// AVX2, FMA, BMI1/2, LZCNT, POPCNT (x86-64).
    Avx2,
    /// AVX2's set plus AVX-512 F, VL, DQ and BW (x86-64).
    Avx512,
}

impl Engine {
    /// The engine for `isa`: the reference when `reference`, else the fast engine compiled for
    /// the widest instruction set the CPU has, at most `isa`.
    pub(crate) fn choose(reference: bool, isa: HostIsa) -> Engine {
        if reference {
            return Engine::Reference;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if isa >= HostIsa::Avx512 && HostIsa::Avx512.supported() {
                return Engine::FastX86Avx512;
            }
            if isa >= HostIsa::Avx2 && HostIsa::Avx2.supported() {
                return Engine::FastX86;
            }
        }
        let _ = isa;
        Engine::Fast
    }
}

/// Whether this build has the AVX-512 warp loop (`target_feature(enable = "avx512f")` is stable
/// from Rust 1.89; the workspace's rust-version is 1.85).
#[rustversion::since(1.89)]
const AVX512_BUILT: bool = true;
#[rustversion::before(1.89)]
const AVX512_BUILT: bool = false;

impl HostIsa {
    /// Whether this CPU can run the fast engine's build for `self`.
    pub fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
                && std::arch::is_x86_feature_detected!("sse4.1")
                && std::arch::is_x86_feature_detected!("popcnt")
                && std::arch::is_x86_feature_detected!("bmi1")
                && std::arch::is_x86_feature_detected!("bmi2")
                && std::arch::is_x86_feature_detected!("lzcnt");
            match self {
                HostIsa::Portable => true,
                HostIsa::Avx2 => avx2,
                HostIsa::Avx512 => {
                    AVX512_BUILT
                        && avx2
                        && std::arch::is_x86_feature_detected!("avx512f")
                        && std::arch::is_x86_feature_detected!("avx512vl")
                        && std::arch::is_x86_feature_detected!("avx512dq")
                        && std::arch::is_x86_feature_detected!("avx512bw")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == HostIsa::Portable
        }
    }

    /// The builds this CPU can run, narrowest first.
    pub fn available() -> Vec<HostIsa> {
        [HostIsa::Portable, HostIsa::Avx2, HostIsa::Avx512]
            .into_iter()
            .filter(|i| i.supported())
            .collect()
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
pub(super) enum FaultKind {
    Oob,
    /// Initcheck: a read of unwritten bytes.
    Uninit,
    /// Racecheck: the hazard and the linear index of the other thread.
    Race(&'static str, u32),
    Misaligned,
    ReadOnly,
    /// A store into a kernel argument the launch does not mark written.
    NotWritten,
    Trap(String),
    Budget,
    WallTime,
    /// A local store needed a page past the launch's local memory limit.
    LocalMemory,
}

/// An execution fault inside a warp, turned into an [`EmuError`] with location by the CTA.
#[derive(Debug)]
pub(super) struct Fault {
    kind: FaultKind,
    space: Space,
    addr: u64,
    size: u32,
    lane: u32,
    access: Access,
}

impl Fault {
    pub(super) fn new(kind: FaultKind, space: Space, addr: u64, size: u32, lane: u32) -> Fault {
        Fault {
            kind,
            space,
            addr,
            size,
            lane,
            access: Access::Read,
        }
    }

    /// The same fault, of an access of kind `access`.
    pub(super) fn with(self, access: Access) -> Fault {
        Fault { access, ..self }
    }
}

pub(super) struct Warp {
    /// Register rows (`regs::rd`).
    regs: Vec<[u64; 32]>,
    preds: Vec<u32>,
    pc: [u32; 32],
    bar_id: [u8; 32],
    live: u32,
    blocked: u32,
    gpc: u32,
    gmask: u32,
    next_other: u32,
    index: u32,
    /// The lane-varying constant rows (`%tid`, `%laneid`, the lane masks), in the order of
    /// [`Func::consts`]: they depend on the warp and the block shape but not on the CTA, so
    /// they are computed once per worker and copied at each CTA start (computed per lane at
    /// each CTA start, they were a twentieth of the elementwise kernel's host instructions).
    lane_rows: Vec<[u64; 32]>,
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
        // Over all 32 lanes with the non-runnable ones masked to the largest pc: compares and
        // minimums that vectorize, where a walk over the set bits was a branch per lane (an
        // eighth of a block-sum kernel, whose barriers regroup every warp often).
        let pcs: [u32; 32] = std::array::from_fn(|l| {
            if runnable >> l & 1 != 0 {
                self.pc[l]
            } else {
                u32::MAX
            }
        });
        let min = pcs.iter().fold(u32::MAX, |a, &b| a.min(b));
        let (mut g, mut next) = (0u32, u32::MAX);
        for (l, &p) in pcs.iter().enumerate() {
            let at_min = p == min;
            g |= (at_min as u32) << l;
            next = next.min(if at_min { u32::MAX } else { p });
        }
        // A non-runnable lane holds u32::MAX, which is never below a runnable pc, so neither
        // the group (runnable & at the minimum) nor `next` changes with it.
        g &= runnable;
        self.gpc = min;
        self.gmask = g;
        self.next_other = next;
        true
    }
}

/// Memory private to one CTA plus the global-allocation cache of its worker.
pub(super) struct CtaMem {
    shared: Vec<u8>,
    /// The resident threads' `.local` memory (and its initcheck shadow), made as written.
    local: local::LocalMem,
    /// The global region the last access hit: `cache_base..cache_end`, its host pointer, and
    /// its allocation's initcheck shadow (null when none) with the allocation's base.
    cache_base: u64,
    cache_end: u64,
    cache_ptr: *const u8,
    cache_shadow: *const std::sync::atomic::AtomicU8,
    cache_shadow_len: usize,
    cache_alloc: u64,
    /// Stores may land in the cached region ([`Region::writable`]).
    cache_writable: bool,
    /// The cached region's index in the launch's [`GlobalMap`], and the one cached before it
    /// (`usize::MAX`: none), which a miss tries before searching ([`LaunchCtx::recache`]).
    cache_idx: usize,
    cache_prev: usize,
    /// The shared variable the last shared access hit.
    sh_lo: u64,
    sh_hi: u64,
    /// Initcheck's shadow of shared memory (a byte per byte; empty when off).
    shared_init: Vec<u8>,
    /// Racecheck's shadow of shared memory (empty when off) and the barrier epoch.
    race: Vec<RaceCell>,
    epoch: u32,
    counters: Counters,
    since_sync: u64,
    /// The slots of straight runs' tapes ([`tape`]).
    tape: Box<tape::Slots>,
}

impl CtaMem {
    #[inline(always)]
    fn cache_region(&mut self, r: &Region) {
        self.cache_base = r.lo;
        self.cache_end = r.hi;
        self.cache_ptr = r.ptr;
        self.cache_shadow = r.shadow;
        self.cache_shadow_len = r.shadow_len;
        self.cache_alloc = r.alloc_base;
        self.cache_writable = r.writable;
    }
}

/// What the warp loop does after a control instruction.
pub(super) enum Step {
    /// The next instruction (`gpc + 1`).
    Next,
    /// The group's pc was set (branch taken, regrouped): run from there.
    Jumped,
    /// No lane of the warp can run: yield to the CTA scheduler.
    Stop,
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

mod alu;

/// `alu::ibin`, for the row forms' tests.
#[cfg(test)]
pub(crate) fn ibin_for_tests(
    op: super::decode::IOp,
    ty: super::numeric::IntTy,
    a: u64,
    b: u64,
) -> u64 {
    alu::ibin(op, ty, a, b)
}
pub(crate) mod fast;
mod float;
pub(crate) mod local;
mod matrix;
mod mem;
mod prefetch;
mod regs;
mod tape;
mod warp_ops;

pub(crate) use fast::table as fast_table;
use regs::{pget, pset};

/// The special registers whose value differs between the lanes of a warp (the others are one
/// value per warp or per CTA).
fn lane_varying(s: SpecialReg) -> bool {
    matches!(
        s,
        SpecialReg::Tid(_)
            | SpecialReg::Laneid
            | SpecialReg::LanemaskEq
            | SpecialReg::LanemaskLe
            | SpecialReg::LanemaskLt
            | SpecialReg::LanemaskGe
            | SpecialReg::LanemaskGt
    )
}

impl<'a> LaunchCtx<'a> {
    fn special(&self, s: SpecialReg, ctaid: [u32; 3], warp: u32, lane: u32, nwarps: u32) -> u64 {
        match s {
            SpecialReg::Tid(d) => {
                let t = warp * 32 + lane;
                let [bx, by, _] = self.block;
                let tid = [
                    t % bx.max(1),
                    (t / bx.max(1)) % by.max(1),
                    t / (bx.max(1) * by.max(1)),
                ];
                tid[d.index()] as u64
            }
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
            // As declared: the redzones of the emulator's layout are not the kernel's.
            SpecialReg::TotalSmemSize | SpecialReg::AggrSmemSize => {
                (self.func.shared_static as u64).div_ceil(16) * 16 + self.dyn_shared as u64
            }
            _ => 0,
        }
    }

    /// Where the dynamic shared memory starts in the emulator's layout: after the static
    /// variables and their redzones, 16-byte aligned.
    pub(crate) fn dyn_base(&self) -> u64 {
        self.func.shared_layout.div_ceil(16) * 16
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

    /// A thread's `%tid` from its linear index in the CTA.
    fn tid3(&self, t: u32) -> [u32; 3] {
        let [bx, by, _] = self.block;
        let (bx, by) = (bx.max(1), by.max(1));
        [t % bx, (t / bx) % by, t / (bx * by)]
    }

    /// What an out-of-bounds access missed (the nearest allocation or variable, by how much).
    fn missed(&self, space: Space, addr: u64, size: u32) -> String {
        match space {
            Space::Shared => self.shared_map.missed(addr, size),
            Space::Local => self.local_map.missed(addr, size),
            Space::Param => format!("the kernel parameters are {} bytes", self.params.len()),
            _ => self
                .globals
                .missed(self.mem, addr, size, &self.func.params, &self.var_names),
        }
    }

    fn fault_error(&self, f: Fault, pc: u32, ctaid: [u32; 3], warp: u32) -> EmuError {
        let at = self.location(pc, ctaid, warp, f.lane);
        match f.kind {
            FaultKind::Oob => EmuError::OutOfBounds {
                at,
                space: f.space,
                access: f.access,
                address: f.addr,
                size: f.size,
                missed: self.missed(f.space, f.addr, f.size),
            },
            FaultKind::Uninit => EmuError::UninitializedRead {
                at,
                space: f.space,
                address: f.addr,
                size: f.size,
                region: match f.space {
                    Space::Shared => self.shared_map.name_of(f.addr & 0xffff_ffff),
                    Space::Local => self.local_map.name_of(f.addr & 0xffff_ffff),
                    _ => self
                        .globals
                        .name_of(f.addr, &self.func.params, &self.var_names),
                },
            },
            FaultKind::Race(hazard, other) => EmuError::SharedRace {
                at,
                hazard,
                address: f.addr,
                size: f.size,
                other_tid: self.tid3(other),
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
            FaultKind::NotWritten => EmuError::NotWritten {
                at,
                address: f.addr,
                region: self
                    .globals
                    .name_of(f.addr, &self.func.params, &self.var_names),
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
            FaultKind::LocalMemory => EmuError::LocalMemoryExhausted {
                at,
                limit: self.local.limit,
            },
        }
    }

    fn flush_budget(&self, m: &mut CtaMem) -> bool {
        let n = std::mem::take(&mut m.since_sync);
        let total = self.used.fetch_add(n, Ordering::Relaxed) + n;
        total > self.budget
    }

    /// Runs the CTAs it claims from `queue` until none are left (or another worker stopped
    /// the launch), returning this worker's counters.
    pub(crate) fn worker(&self, queue: &super::cta_queue::CtaQueue) -> Result<Counters, EmuError> {
        let f = self.func;
        let nthreads = self.block[0] * self.block[1] * self.block[2];
        let nwarps = nthreads.div_ceil(32);
        let shared_size = (self.dyn_base() + self.dyn_shared as u64) as usize;
        let mut m = CtaMem {
            shared: vec![0; shared_size],
            local: local::LocalMem::new(f.local_size as u64, nthreads, self.initcheck),
            cache_base: 1,
            cache_end: 0,
            cache_ptr: std::ptr::null(),
            cache_shadow: std::ptr::null(),
            cache_shadow_len: 0,
            cache_alloc: 0,
            cache_idx: usize::MAX,
            cache_prev: usize::MAX,
            cache_writable: false,
            sh_lo: 1,
            sh_hi: 0,
            shared_init: if self.initcheck {
                vec![0; shared_size]
            } else {
                Vec::new()
            },
            race: if self.racecheck {
                vec![RaceCell::default(); shared_size]
            } else {
                Vec::new()
            },
            epoch: 1,
            counters: Counters::default(),
            since_sync: 0,
            tape: tape::slots(),
        };
        let mut warps: Vec<Warp> = (0..nwarps)
            .map(|i| Warp {
                regs: vec![[0; 32]; self.rows.nrows as usize],
                preds: vec![0; f.npreds as usize],
                pc: [0; 32],
                bar_id: [0; 32],
                live: 0,
                blocked: 0,
                gpc: 0,
                gmask: 0,
                next_other: u32::MAX,
                index: i,
                lane_rows: f
                    .consts
                    .iter()
                    .filter_map(|(_, src)| match src {
                        ConstSrc::Special(s) if lane_varying(*s) => {
                            Some(std::array::from_fn(|lane| {
                                self.special(*s, [0; 3], i, lane as u32, nwarps)
                            }))
                        }
                        _ => None,
                    })
                    .collect(),
            })
            .collect();
        let [gx, gy, _] = self.grid.map(u64::from);
        'claims: while let Some(run) = queue.claim() {
            for c in run {
                if self.stop.load(Ordering::Relaxed) {
                    break 'claims;
                }
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
        m.local.clear();
        m.shared_init.fill(0);
        m.race.fill(RaceCell::default());
        m.epoch = 1;
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
            // Row by row: a constant row is one value but for the lane-varying special
            // registers, so most rows are a fill (per lane with a match, this was a seventh of
            // an elementwise kernel's host instructions: many CTAs of few iterations).
            let mut lane_rows = w.lane_rows.iter();
            for (r, src) in &f.consts {
                if let Some(row) = w.regs.get_mut(self.rows.row(*r) as usize) {
                    match src {
                        ConstSrc::Imm(v) => row.fill(*v),
                        ConstSrc::Special(s) if lane_varying(*s) => {
                            if let Some(v) = lane_rows.next() {
                                row.copy_from_slice(v);
                            }
                        }
                        // The others are the same in every lane of the warp.
                        ConstSrc::Special(s) => {
                            row.fill(self.special(*s, ctaid, w.index, 0, nwarps))
                        }
                        ConstSrc::ModuleVar(i, off) => row.fill(
                            self.var_addrs
                                .get(*i as usize)
                                .copied()
                                .unwrap_or(0)
                                .wrapping_add(*off as u64),
                        ),
                        ConstSrc::DynShared(off) => {
                            row.fill(self.dyn_base().wrapping_add(*off as u64))
                        }
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
                // Release complete barriers (none can be complete while nothing has arrived).
                if arrived.iter().fold(0, |a, &b| a | b) == 0 {
                    continue;
                }
                for id in 0..16 {
                    let exp = if expected[id] == 0 {
                        nthreads
                    } else {
                        expected[id]
                    };
                    if arrived[id] > 0 && arrived[id] >= exp {
                        // Racecheck: accesses on either side of a release never race.
                        m.epoch = m.epoch.wrapping_add(1).max(1);
                        arrived[id] -= exp;
                        expected[id] = 0;
                        for w2 in warps.iter_mut() {
                            // The lanes waiting at `id`, as a mask: one compare per lane that
                            // vectorizes, not a branch per blocked lane.
                            let mut at_id = 0u32;
                            for (l, &b) in w2.bar_id.iter().enumerate() {
                                at_id |= ((b as usize == id) as u32) << l;
                            }
                            w2.blocked &= !at_id;
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
                // (`HostIsa::supported`).
                unsafe { self.warp_loop_x86(m, w, arrived, expected) }
            }
            #[cfg(target_arch = "x86_64")]
            Engine::FastX86Avx512 => {
                // SAFETY: `Engine::FastX86Avx512` is only chosen when the CPU reports these
                // features (`HostIsa::supported`).
                unsafe { self.warp_loop_avx512(m, w, arrived, expected) }
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

    /// The fast engine compiled for AVX-512 as well ([`Engine::FastX86Avx512`]).
    #[rustversion::since(1.89)]
    #[cfg(target_arch = "x86_64")]
    #[target_feature(
        enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma,sse4.1,popcnt,bmi1,bmi2,lzcnt"
    )]
    unsafe fn warp_loop_avx512(
        &self,
        m: &mut CtaMem,
        w: &mut Warp,
        arrived: &mut [u32; 16],
        expected: &mut [u32; 16],
    ) -> Result<(), (u32, Fault)> {
        self.warp_loop::<true>(m, w, arrived, expected)
    }

    /// Before Rust 1.89 there is no AVX-512 build ([`AVX512_BUILT`] is false, so this is never
    /// chosen): the AVX2 one.
    #[rustversion::before(1.89)]
    #[cfg(target_arch = "x86_64")]
    unsafe fn warp_loop_avx512(
        &self,
        m: &mut CtaMem,
        w: &mut Warp,
        arrived: &mut [u32; 16],
        expected: &mut [u32; 16],
    ) -> Result<(), (u32, Fault)> {
        // SAFETY: as the caller's.
        unsafe { self.warp_loop_x86(m, w, arrived, expected) }
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
        let code = self.rows.code;
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
            if FAST {
                let n = self.straight_run(m, w, slice);
                if n > 0 {
                    slice += n - 1;
                    continue;
                }
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
            if FAST {
                if let Some(f) = self.fast.get(pc) {
                    // The whole warp as a constant: each chunk's write without a test.
                    if mask == FULL {
                        fast::run(&mut w.regs, FULL, f);
                    } else {
                        fast::run(&mut w.regs, mask, f);
                    }
                    w.gpc += 1;
                    continue;
                }
            }
            match &inst.op {
                Op::Nop => {}
                op @ (Op::Mov { .. }
                | Op::PMov { .. }
                | Op::PBin { .. }
                | Op::Pack { .. }
                | Op::Unpack { .. }
                | Op::Selp { .. }) => alu::moves(w, mask, op),
                op @ (Op::IBin { .. }
                | Op::IUn { .. }
                | Op::Mad { .. }
                | Op::Bfe { .. }
                | Op::Bfi { .. }
                | Op::Prmt { .. }
                | Op::Lop3 { .. }
                | Op::Shf { .. }) => alu::integer(w, mask, op),
                op @ (Op::Slct { .. } | Op::Carry { .. }) => alu::select_carry(w, mask, op),
                op @ (Op::FBin { .. }
                | Op::FMinMax { .. }
                | Op::Fma { .. }
                | Op::FUn { .. }
                | Op::Copysign { .. }
                | Op::Testp { .. }) => float::arith(w, mask, op),
                op @ (Op::Setp { .. }
                | Op::Set { .. }
                | Op::Cvt { .. }
                | Op::CvtPack { .. }
                | Op::Cvta { .. }) => float::compare_convert::<FAST>(w, mask, op),
                op @ (Op::Ld { .. } | Op::St { .. } | Op::Atom { .. }) => {
                    self.memory(m, w, pc, mask, op)?
                }
                op @ (Op::Bra { .. } | Op::Exit | Op::Trap | Op::Bar { .. }) => {
                    match self.control(w, pc, gmask, mask, op, arrived, expected)? {
                        Step::Next => {}
                        Step::Jumped => continue,
                        Step::Stop => return Ok(()),
                    }
                }
                op @ (Op::Shfl { .. }
                | Op::Vote { .. }
                | Op::Activemask { .. }
                | Op::MatchAny { .. }
                | Op::MatchAll { .. }
                | Op::Redux { .. }) => warp_ops::collective(w, gmask, mask, op),
                Op::Matrix(mx) => self.matrix(m, w, pc, mask, mx)?,
            }
            w.gpc += 1;
        }
    }
}
