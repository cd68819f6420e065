//! The fast engine's row kernels, chosen once per decoded instruction: [`table`] turns each
//! instruction of a function into the [`Kernel`] that computes it (or none: the general path of
//! its family), once per launch, so the warp loop runs a row kernel after one `match` on a
//! small enum instead of matching the instruction, then its format, rounding, flags and
//! packing on every warp-instruction (that re-selection was a tenth of the elementwise
//! kernel's host instructions).
//!
//! Each entry is the condition under which the general path equals the row kernel (the
//! kernels in [`super::super::lanes`] say which general call each one is); the reference engine
//! never reads the table. The table also knows the straight runs of row kernels
//! (`LaunchCtx::straight_run`), which the warp loop runs as one step, the load groups
//! ([`load_group_len`]), which it runs as one step too, and where a run starts with four or
//! more kernels of 32-bit lanes, their [`Tape`] (`exec::tape`): those run on 32-bit slots.
use super::super::decode::{Conv, FUn, Inst, Op, Space, NONE, R};
use super::super::int_rows::{int_row, IntRow};
use super::super::lanes::{self, Row};
use super::super::numeric::{Approx, FOp, Fmt, IRnd, IntTy, Rnd};
use super::regs::{rd, wr};
use super::tape::{self, Tape};
use super::{CtaMem, LaunchCtx, Warp, FULL, SLICE};

/// A whole-row computation of `d` from rows `a`, `b`, `c` (unused operands are ignored).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kernel {
    /// `mov`: the row itself.
    Mov,
    F64Add,
    F64Sub,
    F64Mul,
    F64Div,
    F64Fma,
    F32Fma,
    /// `add`/`sub`/`mul`/`div.rn.f32`.
    F32Bin(FOp),
    /// `ex2.approx.f32` (no `.ftz`).
    F32Ex2,
    /// `min`/`max` on f64 (`f64s`) or f32, `.NaN` when `nan`.
    MinMax {
        f64s: bool,
        max: bool,
        nan: bool,
    },
    /// `neg`/`abs` (`abs`) on f64 (`f64s`) or f32: the sign bit flipped or cleared.
    Sign {
        f64s: bool,
        abs: bool,
    },
    /// `rcp.rn.f64`.
    F64Rcp,
    /// `cvt.rXi.f64.f64`.
    F64RoundInt(IRnd),
    /// `cvt.f64.f32`.
    F32ToF64,
    /// `cvt.sat.f32.f32`: clamped to [0, 1], NaN to +0.
    F32Sat,
    /// `cvt.rn.f32.f64`.
    F64ToF32,
    /// `cvt.rXi.{s,u}{32,64}.{f64,f32}`.
    FloatToInt {
        f64s: bool,
        ir: IRnd,
        to: IntTy,
    },
    /// `cvt.rn.f64.{s,u}{32,64}`.
    IntToF64 {
        signed: bool,
        bits: u32,
    },
    /// Integer arithmetic with a row form ([`crate::emu::int_rows`]).
    Int(IntRow),
}

/// One table entry: the kernel and its rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FastInst {
    kernel: Kernel,
    d: R,
    a: R,
    b: R,
    c: R,
}

impl FastInst {
    #[cfg(test)]
    pub(super) fn new(kernel: Kernel, d: R, a: R, b: R, c: R) -> FastInst {
        FastInst { kernel, d, a, b, c }
    }

    pub(super) fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Its rows: `(d, a, b, c)`.
    pub(super) fn rows(&self) -> (R, R, R, R) {
        (self.d, self.a, self.b, self.c)
    }
}

/// The fast engine's form of a function: each instruction's row kernel, and where straight
/// runs of them start.
#[derive(Debug, Default)]
pub(crate) struct FastCode {
    /// The row kernel of each instruction, `None` where the general path runs.
    insts: Vec<Option<FastInst>>,
    /// `runs[pc]`: how many instructions from `pc` on are unguarded and have a row kernel (a
    /// straight run: none of them branches, faults, or reads a predicate); with [`GROUP`] set,
    /// the length of the load group at `pc` instead.
    runs: Vec<u32>,
    /// `tape_at[pc]`: 1 + the index in `tapes` of the tape of the run at `pc`, 0 for none.
    /// Runs get tapes where their 32-bit stretch starts (a run entered further in, after a
    /// time slice or at a branch target, goes kernel by kernel).
    tape_at: Vec<u32>,
    tapes: Vec<Tape>,
}

/// The bit of a `runs` entry that marks a load group.
const GROUP: u32 = 1 << 31;

/// The most bytes past its first address one lane of a load group may read: a group is the
/// unrolled loads of one thread's few neighbouring elements, not a walk over an array.
const GROUP_SPAN: i64 = 256;

/// The most loads one group takes: the table looks for a group at every pc, so a kernel of
/// nothing but loads from one address would otherwise cost time quadratic in its length.
const GROUP_MAX: u32 = 32;

/// How many instructions from `code[0]` on form a load group: unguarded scalar loads of one
/// size from one base register (not written by any of them) in a global or generic space,
/// whose offsets differ by multiples of the size and stay within [`GROUP_SPAN`], at most
/// [`GROUP_MAX`] of them. The unrolled loads of a thread's neighbouring elements
/// (`ld.global.f32 %f3, [%rd14]; ... [%rd14+12]`) take one address row and one bounds check
/// for all of them
/// ([`LaunchCtx::load_group`](super::LaunchCtx)); a run shorter than 2 is no group.
pub(super) fn load_group_len(code: &[Inst]) -> u32 {
    let scalar_load = |i: &Inst| match i.op {
        Op::Ld {
            space: space @ (Space::Global | Space::Const | Space::Generic),
            size,
            n: 1,
            ds,
            addr,
            ..
        } if i.guard == NONE && addr.base != NONE && ds[0] != addr.base => {
            Some((space, size, addr))
        }
        _ => None,
    };
    let Some((space, size, first)) = code.first().and_then(scalar_load) else {
        return 0;
    };
    let (mut lo, mut hi) = (first.off, first.off);
    let mut len = 1;
    for i in code.iter().skip(1).take(GROUP_MAX as usize - 1) {
        let Some((sp, sz, a)) = scalar_load(i) else {
            break;
        };
        let delta = a.off.wrapping_sub(first.off);
        let (l, h) = (lo.min(a.off), hi.max(a.off));
        if (sp, sz, a.base, a.base32) != (space, size, first.base, first.base32)
            || delta % i64::from(size) != 0
            || h.saturating_sub(l) > GROUP_SPAN
        {
            break;
        }
        (lo, hi) = (l, h);
        len += 1;
    }
    if len >= 2 {
        len
    } else {
        0
    }
}

/// The fast engine's form of `code` (per launch; the reference engine never reads it).
pub(crate) fn table(code: &[Inst]) -> FastCode {
    let insts: Vec<Option<FastInst>> = code.iter().map(|i| classify(&i.op)).collect();
    let mut runs = vec![0u32; code.len()];
    let mut after = 0u32;
    for pc in (0..code.len()).rev() {
        after = if insts[pc].is_some() && code[pc].guard == NONE {
            after + 1
        } else {
            0
        };
        let group = load_group_len(&code[pc..]);
        runs[pc] = if group >= 2 { GROUP | group } else { after };
    }
    let (mut tape_at, mut tapes) = (vec![0u32; code.len()], Vec::new());
    for pc in 0..code.len() {
        let run = runs[pc];
        let inside = pc > 0 && runs[pc - 1] & GROUP == 0 && runs[pc - 1] >= 2 && {
            let before = insts[pc - 1].map(|f| f.kernel);
            before.is_some_and(tape::has_32_bit_form)
        };
        if run & GROUP != 0 || inside {
            continue;
        }
        if let Some(t) = Tape::of(&insts[pc..pc + run as usize]) {
            tapes.push(t);
            tape_at[pc] = tapes.len() as u32;
        }
    }
    FastCode {
        insts,
        runs,
        tape_at,
        tapes,
    }
}

impl FastCode {
    /// The row kernel of the instruction at `pc`, if it has one.
    #[inline(always)]
    pub(super) fn get(&self, pc: u32) -> Option<&FastInst> {
        self.insts.get(pc as usize).and_then(Option::as_ref)
    }
}

impl LaunchCtx<'_> {
    /// Runs the straight run of row kernels at the group's pc as one step, when the warp loop
    /// would run exactly these instructions one by one and nothing it checks between them could
    /// fire: the run ends before the pc where other lanes wait (they merge there), inside the
    /// time slice (`slice` is the loop's count for the first instruction), and before the
    /// budget's next check (`since_sync` crossing 2^16). The counters take the run at once,
    /// and each instruction costs its row kernel alone: no pc, guard, count or budget work per
    /// instruction. A load group ([`load_group_len`]) runs so too when its whole extent is in
    /// one global allocation. Returns how many instructions ran; 0 (a run shorter than 2, or
    /// one that must stop at a check) leaves the step to the loop.
    #[inline(always)]
    pub(super) fn straight_run(&self, m: &mut CtaMem, w: &mut Warp, slice: u32) -> u32 {
        let pc = w.gpc;
        // First the one test most instructions end at: most are in no run.
        let entry = match self.fast.runs.get(pc as usize) {
            Some(&len) if len >= 2 => len,
            _ => return 0,
        };
        let mut n = (entry & !GROUP).min((SLICE + 1).saturating_sub(slice));
        if w.next_other > pc {
            n = n.min(w.next_other - pc);
        }
        let lanes = n as u64 * w.gmask.count_ones() as u64;
        if n < 2 || m.since_sync + lanes > 1 << 16 {
            return 0;
        }
        let range = pc as usize..(pc + n) as usize;
        if entry & GROUP != 0 {
            match self.rows.code.get(range) {
                Some(loads) if self.load_group(m, w, loads) => {}
                _ => return 0,
            }
        } else {
            let Some(kernels) = self.fast.insts.get(range) else {
                return 0;
            };
            let mask = w.gmask;
            let tape = match self.fast.tape_at.get(pc as usize) {
                Some(&t) if t > 0 => self.fast.tapes.get(t as usize - 1),
                _ => None,
            };
            let done = match tape {
                Some(t) if t.len <= n && t.run(&mut w.regs, &mut m.tape, mask) => t.len as usize,
                _ => 0,
            };
            let kernels = kernels.get(done..).unwrap_or_default();
            // A run's mask is most often the whole warp: with the constant, each chunk's
            // write is a plain store, without a test.
            if mask == FULL {
                for f in kernels.iter().flatten() {
                    run(&mut w.regs, FULL, f);
                }
            } else {
                for f in kernels.iter().flatten() {
                    run(&mut w.regs, mask, f);
                }
            }
        }
        m.counters.warp_instructions += n as u64;
        m.counters.lane_instructions += lanes;
        m.since_sync += lanes;
        w.gpc = pc + n;
        n
    }
}

/// The row kernel that computes `op` exactly as its general path does, if there is one.
fn classify(op: &Op) -> Option<FastInst> {
    let at = |kernel, d, a, b, c| Some(FastInst { kernel, d, a, b, c });
    match *op {
        Op::Mov { d, a } => at(Kernel::Mov, d, a, a, a),
        Op::IBin { op, ty, d, a, b } => at(Kernel::Int(IntRow::of(op, ty)?), d, a, b, b),
        Op::Mad {
            mode,
            ty,
            d,
            a,
            b,
            c,
        } => at(Kernel::Int(IntRow::mad(mode, ty)?), d, a, b, c),
        // `numeric::fbin(op, Fmt::F64, Rnd::Rn, false, ..)`.
        Op::FBin {
            op,
            fmt: Fmt::F64,
            packed: false,
            rnd: Rnd::Rn,
            ftz: false,
            sat: false,
            d,
            a,
            b,
        } => {
            let k = match op {
                FOp::Add => Kernel::F64Add,
                FOp::Sub => Kernel::F64Sub,
                FOp::Mul => Kernel::F64Mul,
                FOp::Div => Kernel::F64Div,
            };
            at(k, d, a, b, b)
        }
        // `numeric::fbin(op, Fmt::F32, Rnd::Rn, false, ..)`.
        Op::FBin {
            op,
            fmt: Fmt::F32,
            packed: false,
            rnd: Rnd::Rn,
            ftz: false,
            sat: false,
            d,
            a,
            b,
        } => at(Kernel::F32Bin(op), d, a, b, b),
        Op::FMinMax {
            max,
            fmt: fmt @ (Fmt::F64 | Fmt::F32),
            packed: false,
            ftz: false,
            nan,
            d,
            a,
            b,
        } => at(
            Kernel::MinMax {
                f64s: fmt == Fmt::F64,
                max,
                nan,
            },
            d,
            a,
            b,
            b,
        ),
        Op::Fma {
            fmt: fmt @ (Fmt::F64 | Fmt::F32),
            packed: false,
            rnd: Rnd::Rn,
            ftz: false,
            sat: false,
            d,
            a,
            b,
            c,
        } => {
            let k = if fmt == Fmt::F64 {
                Kernel::F64Fma
            } else {
                Kernel::F32Fma
            };
            at(k, d, a, b, c)
        }
        Op::FUn {
            op,
            fmt: fmt @ (Fmt::F64 | Fmt::F32),
            packed: false,
            ftz: false,
            d,
            a,
        } => {
            let f64s = fmt == Fmt::F64;
            // The general path's `x ^ sign` and `x & !sign & trunc(MAX, bits)`.
            let k = match op {
                FUn::Neg => Kernel::Sign { f64s, abs: false },
                FUn::Abs => Kernel::Sign { f64s, abs: true },
                FUn::Rcp(Rnd::Rn) if f64s => Kernel::F64Rcp,
                FUn::Approx(Approx::Ex2) if !f64s => Kernel::F32Ex2,
                _ => return None,
            };
            at(k, d, a, a, a)
        }
        Op::Cvt { conv, d, a } => {
            let k = match conv {
                Conv::F2F {
                    from: Fmt::F64,
                    to: Fmt::F64,
                    irnd: Some(ir),
                    ftz: false,
                    sat: false,
                    ..
                } => Kernel::F64RoundInt(ir),
                Conv::F2F {
                    from: Fmt::F32,
                    to: Fmt::F64,
                    irnd: None,
                    ftz: false,
                    sat: false,
                    ..
                } => Kernel::F32ToF64,
                // Exact in any rounding mode: an f32 is an f32.
                Conv::F2F {
                    from: Fmt::F32,
                    to: Fmt::F32,
                    irnd: None,
                    ftz: false,
                    sat: true,
                    ..
                } => Kernel::F32Sat,
                Conv::F2F {
                    from: Fmt::F64,
                    to: Fmt::F32,
                    rnd: Rnd::Rn,
                    irnd: None,
                    ftz: false,
                    sat: false,
                } => Kernel::F64ToF32,
                Conv::F2I {
                    from: from @ (Fmt::F64 | Fmt::F32),
                    ftz: false,
                    rnd,
                    to,
                } if to.bits == 32 || to.bits == 64 => Kernel::FloatToInt {
                    f64s: from == Fmt::F64,
                    ir: rnd,
                    to,
                },
                Conv::I2F {
                    from,
                    to: Fmt::F64,
                    rnd: Rnd::Rn,
                    sat: false,
                } if from.bits == 32 || from.bits == 64 => Kernel::IntToF64 {
                    signed: from.signed,
                    bits: from.bits,
                },
                _ => return None,
            };
            at(k, d, a, a, a)
        }
        _ => None,
    }
}

/// Lanes per step of a row kernel: two AVX-512 vectors of `u64`s, four of AVX2. Eight lanes
/// (one vector) made a long kernel's chains too short to overlap: `ex2`'s degree-9 polynomial
/// ran twice as slow, and logsumexp with it (8.7 → 15.7 ms); sixteen cost what whole rows did.
const CHUNK: usize = 16;

/// Runs `f` on the lanes of `mask`: each row kernel computes every lane (the write-back keeps
/// the others), `CHUNK` lanes at a time, read from the operand rows and written straight into
/// the destination row. A whole row computed into a temporary and copied into the register was
/// a third more stores, and the temporary on the stack made the engine's speed depend on where
/// the stack lay modulo 4 KiB (docs/performance.md, "The layout lottery"). Reading a chunk of
/// every operand before writing that chunk keeps `add %f2, %f2, %f16` exact: a lane's result
/// depends on that lane's operands only. (A macro, not a closure: a closure is a function of
/// its own, compiled without the warp loop's target features.)
#[inline(always)]
pub(super) fn run(regs: &mut [Row], mask: u32, f: &FastInst) {
    let (d, a, b, c) = (f.d as usize, f.a as usize, f.b as usize, f.c as usize);
    if d.max(a).max(b).max(c) >= regs.len() {
        return run_past_file(regs, mask, f);
    }
    macro_rules! each {
        (|$x:ident, $y:ident, $z:ident| $e:expr) => {
            each!(CHUNK; |$x, $y, $z| $e)
        };
        ($n:expr; |$x:ident, $y:ident, $z:ident| $e:expr) => {
            for q in 0..32 / $n {
                let r: [u64; $n] = {
                    let $x = &chunk::<$n>(&regs[a], q);
                    let $y = &chunk::<$n>(&regs[b], q);
                    let $z = &chunk::<$n>(&regs[c], q);
                    let _ = ($x, $y, $z);
                    $e
                };
                put(&mut regs[d], q, r, mask);
            }
        };
    }
    match f.kernel {
        Kernel::Mov => each!(|a, b, c| *a),
        Kernel::F64Add => each!(|a, b, c| lanes::f64_bin(FOp::Add, a, b)),
        Kernel::F64Sub => each!(|a, b, c| lanes::f64_bin(FOp::Sub, a, b)),
        Kernel::F64Mul => each!(|a, b, c| lanes::f64_bin(FOp::Mul, a, b)),
        Kernel::F64Div => each!(|a, b, c| lanes::f64_bin(FOp::Div, a, b)),
        Kernel::F64Fma => each!(|a, b, c| lanes::f64_fma(a, b, c)),
        Kernel::F32Fma => each!(|a, b, c| lanes::f32_fma(a, b, c)),
        Kernel::F32Bin(op) => each!(|a, b, c| lanes::f32_bin(op, a, b)),
        Kernel::F32Ex2 => each!(32; |a, b, c| lanes::f32_ex2(a)),
        Kernel::MinMax {
            f64s: true,
            max,
            nan,
        } => each!(|a, b, c| lanes::f64_minmax(max, nan, a, b)),
        Kernel::MinMax {
            f64s: false,
            max,
            nan,
        } => each!(|a, b, c| lanes::f32_minmax(max, nan, a, b)),
        Kernel::Sign { f64s: true, abs } => each!(|a, b, c| lanes::sign(abs, 63, a)),
        Kernel::Sign { f64s: false, abs } => each!(|a, b, c| lanes::sign(abs, 31, a)),
        Kernel::F64Rcp => each!(|a, b, c| lanes::f64_bin(FOp::Div, &[1f64.to_bits(); CHUNK], a)),
        Kernel::F64RoundInt(ir) => each!(|a, b, c| lanes::f64_round_int(ir, a)),
        Kernel::F32ToF64 => each!(|a, b, c| lanes::f32_to_f64(a)),
        Kernel::F32Sat => each!(|a, b, c| lanes::f32_sat(a)),
        Kernel::F64ToF32 => each!(|a, b, c| lanes::f64_to_f32_rn(a)),
        Kernel::FloatToInt { f64s, ir, to } => {
            each!(|a, b, c| lanes::float_to_int(f64s, ir, to, a))
        }
        Kernel::IntToF64 { signed, bits } => each!(|a, b, c| lanes::int_to_f64(signed, bits, a)),
        Kernel::Int(k) => each!(|a, b, c| int_row(k, a, b, c)),
    }
}

/// Chunk `q` of `N` lanes of `row`.
#[inline(always)]
fn chunk<const N: usize>(row: &Row, q: usize) -> [u64; N] {
    let mut v = [0u64; N];
    v.copy_from_slice(&row[q * N..][..N]);
    v
}

/// Writes `r` into chunk `q` of `N` lanes of `row` on the lanes of `mask`.
#[inline(always)]
fn put<const N: usize>(row: &mut Row, q: usize, r: [u64; N], mask: u32) {
    let dst = &mut row[q * N..][..N];
    let all = (u64::MAX >> (64 - N)) as u32;
    let m = (mask >> (q * N)) & all;
    if m == all {
        dst.copy_from_slice(&r);
    } else {
        for (j, (x, v)) in dst.iter_mut().zip(r).enumerate() {
            let keep = 0u64.wrapping_sub(u64::from(m >> j & 1));
            *x = (*x & !keep) | (v & keep);
        }
    }
}

/// [`run`] on a row index past the register file (decoding never makes one): such a row reads
/// as zero and drops the write, as [`rd`] and [`wr`] do, so the kernel runs on copies.
#[cold]
#[inline(never)]
fn run_past_file(regs: &mut [Row], mask: u32, f: &FastInst) {
    let mut rows = [*rd(regs, f.a), *rd(regs, f.b), *rd(regs, f.c), [0; 32]];
    let local = FastInst {
        d: 3,
        a: 0,
        b: 1,
        c: 2,
        ..*f
    };
    run(&mut rows, u32::MAX, &local);
    wr(regs, f.d, &rows[3], mask);
}

#[cfg(test)]
mod tests {
    use super::{load_group_len, run, table, FastInst, Kernel, GROUP, GROUP_MAX};
    use crate::emu::exec::regs::{rd, wr};
    use crate::emu::int_rows::{int_row, IntRow};
    use crate::emu::lanes::{self, Row};
    use crate::emu::numeric::FOp;
    use crate::emu::LoadedModule;

    /// The whole-row form of a kernel (every lane at once, into a new row): what [`run`]
    /// computed before it worked chunk by chunk, straight into the destination.
    fn whole(k: Kernel, a: &Row, b: &Row, c: &Row) -> Row {
        match k {
            Kernel::Mov => *a,
            Kernel::F32Bin(op) => lanes::f32_bin(op, a, b),
            Kernel::F32Fma => lanes::f32_fma(a, b, c),
            Kernel::F32Ex2 => lanes::f32_ex2(a),
            Kernel::MinMax { f64s, max, nan } if f64s => lanes::f64_minmax(max, nan, a, b),
            Kernel::MinMax { max, nan, .. } => lanes::f32_minmax(max, nan, a, b),
            Kernel::F64Div => lanes::f64_bin(FOp::Div, a, b),
            Kernel::F64Rcp => lanes::f64_bin(FOp::Div, &[1f64.to_bits(); 32], a),
            Kernel::Sign { abs, .. } => lanes::sign(abs, 31, a),
            Kernel::F64ToF32 => lanes::f64_to_f32_rn(a),
            Kernel::Int(k) => int_row(k, a, b, c),
            other => unreachable!("not in the test: {other:?}"),
        }
    }

    /// Chunked, in place, under any mask, with the destination among the operands or past the
    /// file: the same rows as the whole-row kernel and a masked write.
    #[test]
    fn chunked_kernels_write_what_whole_rows_wrote() {
        let kernels = [
            Kernel::Mov,
            Kernel::F32Bin(FOp::Add),
            Kernel::F32Bin(FOp::Div),
            Kernel::F32Fma,
            Kernel::F32Ex2,
            Kernel::MinMax {
                f64s: false,
                max: true,
                nan: true,
            },
            Kernel::MinMax {
                f64s: true,
                max: false,
                nan: false,
            },
            Kernel::F64Div,
            Kernel::F64Rcp,
            Kernel::Sign {
                f64s: false,
                abs: true,
            },
            Kernel::F64ToF32,
            Kernel::Int(IntRow::Add32),
            Kernel::Int(IntRow::MadLo32),
            Kernel::Int(IntRow::ShrS64),
        ];
        // Values across formats: f32 and f64 bits, NaNs, infinities, zeros of both signs.
        let seed = |r: usize, l: usize| -> u64 {
            let pool = [
                0u64,
                0x8000_0000,
                0x3f80_0000,
                0xc2f0_0000,
                0x7fc0_0000,
                0x7f80_0000,
                0x4000_0000_0000_0000,
                0xbff8_0000_0000_0000,
                0x7ff8_0000_0000_0000,
                0x0000_0001_4120_0000,
                0x4120_0000,
                0x3e99_999a,
            ];
            pool[(r * 7 + l * 5 + l / 3) % pool.len()].wrapping_add((l as u64) << 3)
        };
        let file: Vec<Row> = (0..5)
            .map(|r| std::array::from_fn(|l| seed(r, l)))
            .collect();
        let masks = [
            u32::MAX,
            0,
            0x5555_5555,
            0x0000_ffff,
            0xffff_0000,
            1 << 17,
            0x8001_7ffe,
        ];
        // (d, a, b, c): distinct rows, the destination as each operand, a row past the file.
        let rows = [
            (4, 0, 1, 2),
            (0, 0, 1, 2),
            (1, 0, 1, 2),
            (2, 0, 1, 2),
            (9, 0, 1, 2),
            (3, 0, 9, 2),
        ];
        for kernel in kernels {
            for &mask in &masks {
                for &(d, a, b, c) in &rows {
                    let f = FastInst { kernel, d, a, b, c };
                    let mut got = file.clone();
                    run(&mut got, mask, &f);
                    let mut want = file.clone();
                    let out = whole(kernel, rd(&want, a), rd(&want, b), rd(&want, c));
                    wr(&mut want, d, &out, mask);
                    assert_eq!(
                        got,
                        want,
                        "{kernel:?} mask {mask:#x} rows {:?}",
                        (d, a, b, c)
                    );
                }
            }
        }
    }

    /// A kernel of `n` loads of `ld.global.u32 %r1, [%rd1+OFF]`, OFF from `off(i)`.
    fn loads(n: usize, off: impl Fn(usize) -> usize) -> crate::emu::decode::Func {
        let mut body = String::from(" ld.param.u64 %rd1, [out];\n");
        for i in 0..n {
            body += &format!(" ld.global.u32 %r1, [%rd1+{}];\n", off(i));
        }
        let text = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n{body} ret;\n}}\n"
        );
        let ast = crate::parse(&text).unwrap_or_else(|e| panic!("{e}"));
        LoadedModule::load(&ast).expect("load").kernels[0].clone()
    }

    #[test]
    fn groups_take_neighbouring_loads_up_to_their_bounds() {
        // Offsets 0, 4, 8, 12: one group of 4 from the first load.
        let f = loads(4, |i| 4 * i);
        assert_eq!(load_group_len(&f.code[1..]), 4);
        // An offset that is not a multiple of the size, or past the span, ends the group.
        let f = loads(3, |i| [0, 4, 6][i]);
        assert_eq!(load_group_len(&f.code[1..]), 2);
        let f = loads(3, |i| [0, 4, 400][i]);
        assert_eq!(load_group_len(&f.code[1..]), 2);
        // The parameter load before them has no global base: no group.
        assert_eq!(load_group_len(&f.code), 0);
    }

    #[test]
    fn a_long_run_of_loads_is_cut_into_bounded_groups_in_linear_time() {
        // 100,000 loads of one address: every group stops at GROUP_MAX, so building the table
        // looks at most GROUP_MAX instructions from each pc.
        let f = loads(100_000, |_| 8);
        let t = table(&f.code);
        let longest = t
            .runs
            .iter()
            .filter(|&&e| e & GROUP != 0)
            .map(|e| e & !GROUP)
            .max();
        assert_eq!(longest, Some(GROUP_MAX));
    }
}
