//! Whole-row forms of the integer operations kernels spend their index arithmetic on: 32- and
//! 64-bit `add`, `sub`, `and`, `or`, `xor`, `shl`, `shr`, 32-bit `mul.lo`, `mul.wide` and
//! `mad.lo`. Each is `alu::ibin` (or `mad`'s general lane) with the operation and width fixed,
//! so a lane loop has no call and no branch and vectorizes.
//!
//! Both engines use them: the general path of `alu::integer` for these forms, and the fast
//! engine's table, where they join straight runs (`exec::fast`). An index computation between
//! two float operations used to end a straight run (the `shl.b32` in f32 `exp` split its 12
//! instructions in two, and every address computation split a row kernel's loop body).
use super::decode::IOp;
use super::lanes::map2;
use super::numeric::IntTy;

/// An integer operation with a row form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntRow {
    Add32,
    Add64,
    Sub32,
    Sub64,
    And32,
    And64,
    Or32,
    Or64,
    Xor32,
    Xor64,
    MulLo32,
    MulWideU32,
    MulWideS32,
    Shl32,
    Shl64,
    ShrU32,
    ShrS32,
    ShrU64,
    ShrS64,
    /// `mad.lo` of 32 bits (the only one that reads `c`).
    MadLo32,
}

impl IntRow {
    /// The row form of `op` on `ty`, if it has one.
    pub(crate) fn of(op: IOp, ty: IntTy) -> Option<IntRow> {
        use IntRow::*;
        Some(match (op, ty.bits, ty.signed) {
            (IOp::Add, 32, _) => Add32,
            (IOp::Add, 64, _) => Add64,
            (IOp::Sub, 32, _) => Sub32,
            (IOp::Sub, 64, _) => Sub64,
            (IOp::And, 32, _) => And32,
            (IOp::And, 64, _) => And64,
            (IOp::Or, 32, _) => Or32,
            (IOp::Or, 64, _) => Or64,
            (IOp::Xor, 32, _) => Xor32,
            (IOp::Xor, 64, _) => Xor64,
            (IOp::MulLo, 32, _) => MulLo32,
            (IOp::MulWide, 32, false) => MulWideU32,
            (IOp::MulWide, 32, true) => MulWideS32,
            (IOp::Shl, 32, _) => Shl32,
            (IOp::Shl, 64, _) => Shl64,
            (IOp::Shr, 32, false) => ShrU32,
            (IOp::Shr, 32, true) => ShrS32,
            (IOp::Shr, 64, false) => ShrU64,
            (IOp::Shr, 64, true) => ShrS64,
            _ => return None,
        })
    }

    /// The row form of `mad` in `mode` on `ty`, if it has one.
    pub(crate) fn mad(mode: IOp, ty: IntTy) -> Option<IntRow> {
        (mode == IOp::MulLo && ty.bits == 32).then_some(IntRow::MadLo32)
    }
}

/// `k` on every lane of `a`, `b` (and `c` for `mad`). The shift counts are the low 32 bits of
/// `b`, clamped at the width, as `numeric::shl`/`shr` take them.
#[inline(always)]
pub(crate) fn int_row<const N: usize>(
    k: IntRow,
    a: &[u64; N],
    b: &[u64; N],
    c: &[u64; N],
) -> [u64; N] {
    let lo = |x: u64| x as u32;
    match k {
        IntRow::Add32 => map2(a, b, |x, y| lo(x).wrapping_add(lo(y)) as u64),
        IntRow::Add64 => map2(a, b, |x, y| x.wrapping_add(y)),
        IntRow::Sub32 => map2(a, b, |x, y| lo(x).wrapping_sub(lo(y)) as u64),
        IntRow::Sub64 => map2(a, b, |x, y| x.wrapping_sub(y)),
        IntRow::And32 => map2(a, b, |x, y| (x & y) & 0xffff_ffff),
        IntRow::And64 => map2(a, b, |x, y| x & y),
        IntRow::Or32 => map2(a, b, |x, y| (x | y) & 0xffff_ffff),
        IntRow::Or64 => map2(a, b, |x, y| x | y),
        IntRow::Xor32 => map2(a, b, |x, y| (x ^ y) & 0xffff_ffff),
        IntRow::Xor64 => map2(a, b, |x, y| x ^ y),
        IntRow::MulLo32 => map2(a, b, |x, y| lo(x).wrapping_mul(lo(y)) as u64),
        IntRow::MulWideU32 => map2(a, b, |x, y| u64::from(lo(x)) * u64::from(lo(y))),
        IntRow::MulWideS32 => map2(a, b, |x, y| {
            (i64::from(lo(x) as i32) * i64::from(lo(y) as i32)) as u64
        }),
        IntRow::Shl32 => map2(a, b, |x, y| match lo(y) {
            n @ 0..=31 => (lo(x) << n) as u64,
            _ => 0,
        }),
        IntRow::Shl64 => map2(a, b, |x, y| match lo(y) {
            n @ 0..=63 => x << n,
            _ => 0,
        }),
        IntRow::ShrU32 => map2(a, b, |x, y| match lo(y) {
            n @ 0..=31 => (lo(x) >> n) as u64,
            _ => 0,
        }),
        IntRow::ShrS32 => map2(a, b, |x, y| ((lo(x) as i32) >> lo(y).min(31)) as u32 as u64),
        IntRow::ShrU64 => map2(a, b, |x, y| match lo(y) {
            n @ 0..=63 => x >> n,
            _ => 0,
        }),
        IntRow::ShrS64 => map2(a, b, |x, y| ((x as i64) >> lo(y).min(63)) as u64),
        IntRow::MadLo32 => {
            let mut out = [0u64; N];
            for l in 0..N {
                out[l] = lo(a[l]).wrapping_mul(lo(b[l])).wrapping_add(lo(c[l])) as u64;
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row form is the general lane (`alu::ibin`, or `mad`'s truncated sum) on every lane,
    /// over values at the edges of both widths and shift counts past them.
    #[test]
    fn rows_are_the_general_lanes() {
        let vals = [
            0u64,
            1,
            2,
            7,
            31,
            32,
            33,
            63,
            64,
            65,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            0x1_0000_0000,
            0x7fff_ffff_ffff_ffff,
            0x8000_0000_0000_0000,
            u64::MAX,
            0x1234_5678_9abc_def0,
        ];
        let mut a = [0u64; 32];
        let mut b = [0u64; 32];
        let mut c = [0u64; 32];
        let ops = [
            IOp::Add,
            IOp::Sub,
            IOp::And,
            IOp::Or,
            IOp::Xor,
            IOp::MulLo,
            IOp::MulWide,
            IOp::Shl,
            IOp::Shr,
        ];
        for round in 0..vals.len() {
            for l in 0..32 {
                a[l] = vals[(l + round) % vals.len()];
                b[l] = vals[(l * 7 + round) % vals.len()];
                c[l] = vals[(l * 3 + 1) % vals.len()];
            }
            for bits in [32, 64] {
                for signed in [false, true] {
                    let ty = IntTy { bits, signed };
                    // The registers of a `bits`-wide operation hold `bits`-wide values.
                    let t = |v: u64| super::super::numeric::trunc(v, bits);
                    let (a, b, c) = (a.map(t), b.map(t), c.map(t));
                    for op in ops {
                        let Some(k) = IntRow::of(op, ty) else {
                            continue;
                        };
                        let got = int_row(k, &a, &b, &c);
                        for l in 0..32 {
                            let want = super::super::exec::ibin_for_tests(op, ty, a[l], b[l]);
                            assert_eq!(got[l], want, "{op:?} {ty:?} {:#x} {:#x}", a[l], b[l]);
                        }
                    }
                    if let Some(k) = IntRow::mad(IOp::MulLo, ty) {
                        let got = int_row(k, &a, &b, &c);
                        for l in 0..32 {
                            let p = super::super::exec::ibin_for_tests(IOp::MulLo, ty, a[l], b[l]);
                            assert_eq!(got[l], t(p.wrapping_add(c[l])), "mad {ty:?}");
                        }
                    }
                }
            }
        }
    }
}
