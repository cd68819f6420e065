//! Moves, integer arithmetic, bit manipulation, `slct` and the carry chain.
use super::super::decode::{IOp, IUn, Op, PBool, NONE};
use super::super::int_rows::{int_row, IntRow};
use super::super::numeric::{self as num, IntTy};
use super::regs::{pget, pset, rd, wr};
use super::{Warp, FULL};

#[inline]
pub(super) fn ibin(op: IOp, ty: IntTy, a: u64, b: u64) -> u64 {
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
pub(super) fn iun(op: IUn, ty: IntTy, a: u64) -> u64 {
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

/// `mov` (incl. vector pack/unpack), predicate logic and `selp`.
#[inline(always)]
pub(super) fn moves(w: &mut Warp, mask: u32, op: &Op) {
    match op {
        Op::Mov { d, a } => {
            let av = *rd(&w.regs, *a);
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
            let v = *rd(&w.regs, *a);
            for k in 0..(*n as usize).min(4) {
                let sh = k as u32 * *bits as u32;
                let mut out = [0u64; 32];
                for l in 0..32 {
                    out[l] = num::trunc(v[l] >> sh, *bits as u32);
                }
                wr(&mut w.regs, ds[k], &out, mask);
            }
        }
        Op::Selp { d, a, b, p, pn } => {
            let pv = pget(&w.preds, *p) ^ if *pn { FULL } else { 0 };
            let av = rd(&w.regs, *a);
            let bv = rd(&w.regs, *b);
            let mut out = [0u64; 32];
            for l in 0..32 {
                // All ones where the predicate is set: a blend, not a branch per lane.
                let m = 0u64.wrapping_sub((pv >> l & 1) as u64);
                out[l] = (av[l] & m) | (bv[l] & !m);
            }
            wr(&mut w.regs, *d, &out, mask);
        }
        _ => {}
    }
}

/// Integer arithmetic and bit manipulation.
#[inline(always)]
pub(super) fn integer(w: &mut Warp, mask: u32, op: &Op) {
    match op {
        Op::IBin { op, ty, d, a, b } => {
            let (op, ty) = (*op, *ty);
            match IntRow::of(op, ty) {
                // The common forms with the width fixed (an index's `and` mask, a row offset's
                // `sub`, a reduction loop's `shr` were a call per lane): `int_rows`.
                Some(k) => {
                    let out = int_row(k, rd(&w.regs, *a), rd(&w.regs, *b), rd(&w.regs, *b));
                    wr(&mut w.regs, *d, &out, mask);
                }
                None => map2!(w, mask, *d, *a, *b, |x, y| ibin(op, ty, x, y)),
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
            if let Some(k) = IntRow::mad(mode, ty) {
                let out = int_row(k, rd(&w.regs, *a), rd(&w.regs, *b), rd(&w.regs, *c));
                wr(&mut w.regs, *d, &out, mask);
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
        _ => {}
    }
}

/// `slct` and the extended-precision carry chain.
#[inline(always)]
pub(super) fn select_carry(w: &mut Warp, mask: u32, op: &Op) {
    match op {
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
                *rd(&w.regs, *c)
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
        _ => {}
    }
}
