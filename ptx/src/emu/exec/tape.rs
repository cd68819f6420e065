//! Straight runs of 32-bit row kernels on 32-bit lanes.
//!
//! A register row holds 64-bit lanes, so every f32 row kernel reads each operand as two
//! vectors of `u64` and narrows it, computes, and widens the result back into a row: on an
//! AVX-512 host three quarters of an `fma.rn.f32`'s vector instructions are that traffic, not
//! the fused multiply-add. A [`Tape`] is the longest prefix of a straight run whose kernels all
//! have a 32-bit form (f32 add/sub/mul/div, `fma`, `ex2.approx`, `cvt.sat`, and 32-bit integer
//! arithmetic): it narrows each row the run reads before writing it once into a slot of 32
//! `u32`s, runs every kernel slot to slot, and widens each row the run writes once at the end,
//! under the run's mask. Libdevice's f32 `exp` is ten such kernels, one of them `ex2`.
//!
//! The same values land in the rows as kernel by kernel: each 32-bit kernel reads the low 32
//! bits of its operand rows and writes its result zero-extended (`lanes`, `int_rows`), so a
//! row's low half is all a later kernel of the run can see, and the high half of every row the
//! run writes is zero either way. Kernels whose result keeps an operand's high bits (`mov`,
//! `neg`/`abs`, `min`/`max`, which pick an operand whole) or is 64-bit stay out. A lane's
//! result depends on that lane alone, so computing inactive lanes on stale values and leaving
//! them out of the write-back is what the masked kernels did. The test below runs random
//! tapes both ways.
use super::super::int_rows::IntRow;
use super::super::lanes::Row;
use super::super::numeric::FOp;
use super::fast::{FastInst, Kernel};
use super::FULL;

/// The fewest kernels worth a tape: below this, narrowing and widening every row cost what
/// they save.
const TAPE_MIN: usize = 4;

/// The most rows one tape touches (slots live in the worker's scratch, 128 bytes each).
const TAPE_SLOTS: usize = 256;

type Lanes = [u32; 32];

/// A 32-bit kernel: what it computes, and the slots it reads and writes.
#[derive(Debug, Clone, Copy)]
struct Op32 {
    kernel: K32,
    d: u16,
    a: u16,
    b: u16,
    c: u16,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum K32 {
    Bin(FOp),
    Fma,
    Ex2,
    Sat,
    Int(IntRow),
}

/// A straight run's 32-bit prefix, compiled to slots.
#[derive(Debug)]
pub(super) struct Tape {
    /// How many instructions of the run it covers.
    pub(super) len: u32,
    /// Rows read before the tape writes them, and their slots: narrowed in first.
    ins: Box<[(u16, u32)]>,
    ops: Box<[Op32]>,
    /// Rows the tape writes, and their slots: widened back at the end.
    outs: Box<[(u16, u32)]>,
    /// One past the highest row named: the tape runs only on a register file this long.
    rows: usize,
}

/// Whether `k` has a 32-bit form (may join a tape).
pub(super) fn has_32_bit_form(k: Kernel) -> bool {
    k32(k).is_some()
}

/// The 32-bit form of `k`, if it has one.
fn k32(k: Kernel) -> Option<K32> {
    use IntRow::*;
    Some(match k {
        Kernel::F32Bin(op) => K32::Bin(op),
        Kernel::F32Fma => K32::Fma,
        Kernel::F32Ex2 => K32::Ex2,
        Kernel::F32Sat => K32::Sat,
        Kernel::Int(
            i
            @ (Add32 | Sub32 | And32 | Or32 | Xor32 | MulLo32 | Shl32 | ShrU32 | ShrS32 | MadLo32),
        ) => K32::Int(i),
        _ => return None,
    })
}

impl Tape {
    /// The tape of the longest prefix of `run` (a straight run's kernels) with 32-bit forms,
    /// if it has at least [`TAPE_MIN`] kernels.
    pub(super) fn of(run: &[Option<FastInst>]) -> Option<Tape> {
        let mut slot_of: Vec<(u32, u16, bool)> = Vec::new(); // row, slot, written
        let (mut ins, mut ops, mut rows) = (Vec::new(), Vec::new(), 0usize);
        for f in run {
            let Some((f, kernel)) = f.as_ref().and_then(|f| Some((f, k32(f.kernel())?))) else {
                break;
            };
            let (d, a, b, c) = f.rows();
            if slot_of.len() + 4 > TAPE_SLOTS {
                break;
            }
            let mut read = |r: u32| -> u16 {
                if let Some(&(_, s, _)) = slot_of.iter().find(|x| x.0 == r) {
                    return s;
                }
                let s = slot_of.len() as u16;
                slot_of.push((r, s, false));
                ins.push((s, r));
                s
            };
            let (a, b, c) = (read(a), read(b), read(c));
            let d = match slot_of.iter_mut().find(|x| x.0 == d) {
                Some(x) => {
                    x.2 = true;
                    x.1
                }
                None => {
                    let s = slot_of.len() as u16;
                    slot_of.push((d, s, true));
                    s
                }
            };
            ops.push(Op32 { kernel, d, a, b, c });
        }
        if ops.len() < TAPE_MIN {
            return None;
        }
        for &(r, _, _) in &slot_of {
            rows = rows.max(r as usize + 1);
        }
        let outs: Vec<(u16, u32)> = slot_of
            .iter()
            .filter(|x| x.2)
            .map(|&(r, s, _)| (s, r))
            .collect();
        Some(Tape {
            len: ops.len() as u32,
            ins: ins.into(),
            ops: ops.into(),
            outs: outs.into(),
            rows,
        })
    }

    /// Runs the tape on `regs` under `mask` with `scratch` for its slots. `false` (a row past
    /// the register file, which decoding never makes) leaves the run to the kernel-by-kernel
    /// path, nothing done.
    #[inline(always)]
    pub(super) fn run(&self, regs: &mut [Row], scratch: &mut Slots, mask: u32) -> bool {
        if self.rows > regs.len() {
            return false;
        }
        // Slot indices are below TAPE_SLOTS by construction; the mask makes that visible to
        // the compiler, so slot accesses carry no bounds checks.
        let at = |i: u16| i as usize % TAPE_SLOTS;
        for &(slot, row) in self.ins.iter() {
            // Plain loops, not `array::from_fn`: that is a call of its own, compiled without
            // the warp loop's target features.
            if let Some(src) = regs.get(row as usize) {
                let dst = &mut scratch[at(slot)];
                for l in 0..32 {
                    dst[l] = src[l] as u32;
                }
            }
        }
        for op in self.ops.iter() {
            // Operands by value (a kernel may write one of its own operands), the result
            // straight into its slot: a result built on the stack and copied was stored lane
            // by lane and reloaded as vectors, a stall on every kernel.
            let (a, b, c) = (scratch[at(op.a)], scratch[at(op.b)], scratch[at(op.c)]);
            let d = &mut scratch[at(op.d)];
            match op.kernel {
                K32::Bin(FOp::Add) => map2(&a, &b, d, |x, y| x + y),
                K32::Bin(FOp::Sub) => map2(&a, &b, d, |x, y| x - y),
                K32::Bin(FOp::Mul) => map2(&a, &b, d, |x, y| x * y),
                K32::Bin(FOp::Div) => map2(&a, &b, d, |x, y| x / y),
                K32::Fma => fma(&a, &b, &c, d),
                K32::Ex2 => super::super::exp2::ex2_f32_lanes(&a, d),
                K32::Sat => sat(&a, d),
                K32::Int(k) => int(k, &a, &b, &c, d),
            }
        }
        for &(slot, row) in self.outs.iter() {
            let src = &scratch[at(slot)];
            let Some(dst) = regs.get_mut(row as usize) else {
                continue;
            };
            if mask == FULL {
                for l in 0..32 {
                    dst[l] = u64::from(src[l]);
                }
            } else {
                for l in 0..32 {
                    let keep = 0u64.wrapping_sub(u64::from(mask >> l & 1));
                    dst[l] = (dst[l] & !keep) | (u64::from(src[l]) & keep);
                }
            }
        }
        true
    }
}

/// A worker's tape slots.
pub(super) type Slots = [Lanes; TAPE_SLOTS];

/// Zeroed slots for a worker.
pub(super) fn slots() -> Box<Slots> {
    Box::new([[0; 32]; TAPE_SLOTS])
}

/// `x` where `c`, else `y`, through a mask (a blend, never a branch: `lanes::pick`).
#[inline(always)]
fn pick(c: bool, x: u32, y: u32) -> u32 {
    let m = 0u32.wrapping_sub(c as u32);
    (x & m) | (y & !m)
}

/// PTX's canonical f32 NaN for a NaN result, else the result's bits (`lanes::f32_canon`).
#[inline(always)]
fn canon(v: f32) -> u32 {
    if v.is_nan() {
        0x7fff_ffff
    } else {
        v.to_bits()
    }
}

/// An f32 operation on every lane, NaN canonical (`lanes::f32_bin`).
#[inline(always)]
fn map2(a: &Lanes, b: &Lanes, out: &mut Lanes, f: impl Fn(f32, f32) -> f32) {
    for l in 0..32 {
        out[l] = canon(f(f32::from_bits(a[l]), f32::from_bits(b[l])));
    }
}

/// `lanes::f32_fma`.
#[inline(always)]
fn fma(a: &Lanes, b: &Lanes, c: &Lanes, out: &mut Lanes) {
    for l in 0..32 {
        let (x, y, z) = (
            f32::from_bits(a[l]),
            f32::from_bits(b[l]),
            f32::from_bits(c[l]),
        );
        out[l] = canon(x.mul_add(y, z));
    }
}

/// `lanes::f32_sat`: +0 for NaN and at or below 0, 1 at or above 1, the value between.
#[inline(always)]
fn sat(a: &Lanes, out: &mut Lanes) {
    for l in 0..32 {
        let v = f32::from_bits(a[l]);
        // NaN compares false both times: +0.
        let inside = pick(v < 1.0, a[l], 1f32.to_bits());
        out[l] = pick(v > 0.0, inside, 0);
    }
}

/// `int_rows::int_row` of a 32-bit kind on the low halves (what it reads), its result's low
/// half (it zero-extends).
#[inline(always)]
fn int(k: IntRow, a: &Lanes, b: &Lanes, c: &Lanes, out: &mut Lanes) {
    macro_rules! each {
        (|$x:ident, $y:ident| $e:expr) => {
            for l in 0..32 {
                let ($x, $y) = (a[l], b[l]);
                out[l] = $e;
            }
        };
    }
    match k {
        IntRow::Add32 => each!(|x, y| x.wrapping_add(y)),
        IntRow::Sub32 => each!(|x, y| x.wrapping_sub(y)),
        IntRow::And32 => each!(|x, y| x & y),
        IntRow::Or32 => each!(|x, y| x | y),
        IntRow::Xor32 => each!(|x, y| x ^ y),
        IntRow::MulLo32 => each!(|x, y| x.wrapping_mul(y)),
        IntRow::Shl32 => each!(|x, y| pick(y < 32, x.wrapping_shl(y), 0)),
        IntRow::ShrU32 => each!(|x, y| pick(y < 32, x.wrapping_shr(y), 0)),
        IntRow::ShrS32 => each!(|x, y| ((x as i32) >> y.min(31)) as u32),
        IntRow::MadLo32 => {
            for l in 0..32 {
                out[l] = a[l].wrapping_mul(b[l]).wrapping_add(c[l]);
            }
        }
        // `k32` admits the kinds above only.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emu::exec::fast::run as run_kernel;

    /// A small deterministic generator (xorshift), so failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Lane values that reach every kernel's edges: signed zeros, subnormals, infinities,
    /// NaNs, ex2's range ends, exact halves, integers and shift counts past the width, and
    /// rows whose high halves are not zero.
    fn value(rng: &mut Rng) -> u64 {
        const F: [f32; 16] = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1e-40,
            -1e-40,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            127.9,
            -126.5,
            128.0,
            3.0e38,
            0.7,
            -88.7,
        ];
        let low = match rng.below(4) {
            0 => F[rng.below(16) as usize].to_bits(),
            1 => rng.below(40) as u32,
            2 => f32::from_bits(rng.next() as u32).to_bits(),
            _ => (rng.next() % 1000) as f32 as u32 ^ 0x3f80_0000,
        };
        let high = if rng.below(4) == 0 {
            rng.next() << 32
        } else {
            0
        };
        high | u64::from(low)
    }

    /// Random runs of 32-bit kernels over a few rows (so they read what they wrote, write
    /// their own operands and rewrite rows), under random masks: the tape leaves the same
    /// register file as the kernels one by one.
    #[test]
    fn tapes_write_what_their_kernels_wrote() {
        let kernels = [
            Kernel::F32Bin(FOp::Add),
            Kernel::F32Bin(FOp::Sub),
            Kernel::F32Bin(FOp::Mul),
            Kernel::F32Bin(FOp::Div),
            Kernel::F32Fma,
            Kernel::F32Ex2,
            Kernel::F32Sat,
            Kernel::Int(IntRow::Add32),
            Kernel::Int(IntRow::Sub32),
            Kernel::Int(IntRow::And32),
            Kernel::Int(IntRow::Or32),
            Kernel::Int(IntRow::Xor32),
            Kernel::Int(IntRow::MulLo32),
            Kernel::Int(IntRow::Shl32),
            Kernel::Int(IntRow::ShrU32),
            Kernel::Int(IntRow::ShrS32),
            Kernel::Int(IntRow::MadLo32),
        ];
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for case in 0..2000 {
            let nrows = 2 + rng.below(7) as u32;
            let len = TAPE_MIN + rng.below(12) as usize;
            let run: Vec<Option<FastInst>> = (0..len)
                .map(|_| {
                    let k = kernels[rng.below(kernels.len() as u64) as usize];
                    let mut r = || rng.below(u64::from(nrows)) as u32;
                    Some(FastInst::new(k, r(), r(), r(), r()))
                })
                .collect();
            let mask = match rng.below(3) {
                0 => FULL,
                1 => rng.next() as u32,
                _ => 1 << rng.below(32),
            };
            let regs: Vec<Row> = (0..nrows)
                .map(|_| std::array::from_fn(|_| value(&mut rng)))
                .collect();
            let mut want = regs.clone();
            for f in run.iter().flatten() {
                run_kernel(&mut want, mask, f);
            }
            let tape = Tape::of(&run).expect("every kernel has a 32-bit form");
            assert_eq!(tape.len as usize, len);
            let mut got = regs.clone();
            assert!(tape.run(&mut got, &mut slots(), mask));
            assert_eq!(got, want, "case {case}: {run:?} under {mask:#x}");
        }
    }

    #[test]
    fn a_tape_is_the_32_bit_prefix_and_needs_four_kernels() {
        let k = |kernel| Some(FastInst::new(kernel, 0, 1, 2, 3));
        let fma = k(Kernel::F32Fma);
        let add64 = k(Kernel::Int(IntRow::Add64));
        let tape = Tape::of(&[fma, fma, fma, fma, add64, fma]).expect("four kernels");
        assert_eq!(tape.len, 4);
        assert!(Tape::of(&[fma, fma, fma, add64, fma, fma]).is_none());
        assert!(Tape::of(&[k(Kernel::Mov), fma, fma, fma, fma]).is_none());
        // A row past the register file: the run is left to the kernels.
        let far = Some(FastInst::new(Kernel::F32Fma, 9, 0, 0, 0));
        let tape = Tape::of(&[far, fma, fma, fma]).expect("four kernels");
        assert!(!tape.run(&mut vec![[0; 32]; 4], &mut slots(), FULL));
    }
}
