//! Floating-point arithmetic, comparisons and conversions: the general paths (the fast engine
//! runs the forms [`super::fast`] covers through its table instead), and with `FAST` the
//! whole-row comparison kernels of [`super::super::lanes`] for `setp`.
use super::super::decode::{CmpKind, Conv, FUn, Op, PBool, Space, NONE};
use super::super::lanes;
use super::super::memory::{LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW};
use super::super::numeric::{self as num, Fmt, IntTy, Rnd};
use super::regs::{pget, pset, rd, wr};
use super::{Warp, FULL};

/// Applies a 16-bit float operation to both halves of a packed pair.
#[inline]
pub(super) fn packed2(a: u64, b: u64, f: impl Fn(u64, u64) -> u64) -> u64 {
    let lo = f(a & 0xffff, b & 0xffff) & 0xffff;
    let hi = f((a >> 16) & 0xffff, (b >> 16) & 0xffff) & 0xffff;
    (hi << 16) | lo
}

#[inline]
pub(super) fn packed3(a: u64, b: u64, c: u64, f: impl Fn(u64, u64, u64) -> u64) -> u64 {
    let lo = f(a & 0xffff, b & 0xffff, c & 0xffff) & 0xffff;
    let hi = f((a >> 16) & 0xffff, (b >> 16) & 0xffff, (c >> 16) & 0xffff) & 0xffff;
    (hi << 16) | lo
}

#[inline(always)]
pub(super) fn f32_canon(v: f32) -> u64 {
    if v.is_nan() {
        0x7fff_ffff
    } else {
        v.to_bits() as u64
    }
}

pub(super) fn cvt(conv: Conv, a: u64) -> u64 {
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
        Conv::F2Tf32 => super::matrix::tf32_rna(a),
    }
}

/// Floating-point arithmetic, min/max, unary functions, `copysign`, `testp`.
#[inline(always)]
pub(super) fn arith(w: &mut Warp, mask: u32, op: &Op) {
    match op {
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
            if fmt == Fmt::F32 && rnd == Rnd::Rn && !ftz && !sat && !*packed {
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
            if *packed {
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
            if *packed {
                map3!(w, mask, *d, *a, *b, *c, |x, y, z| packed3(x, y, z, f))
            } else if fmt == Fmt::F32 && rnd == Rnd::Rn && !ftz && !sat {
                // Only active lanes: mul_add may be a libm call.
                let (av, bv, cv) = (rd(&w.regs, *a), rd(&w.regs, *b), rd(&w.regs, *c));
                let mut out = [0u64; 32];
                let mut mm = mask;
                while mm != 0 {
                    let l = mm.trailing_zeros() as usize;
                    mm &= mm - 1;
                    out[l] = f32_canon(
                        f32::from_bits(av[l] as u32)
                            .mul_add(f32::from_bits(bv[l] as u32), f32::from_bits(cv[l] as u32)),
                    );
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
                    FUn::Rcp(r) => num::fbin(num::FOp::Div, fmt, r, ftz, fmt.from_f64_rn(1.0), x),
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
        _ => {}
    }
}

/// Comparisons (`setp`, `set`) and conversions (`cvt`, `cvta`).
#[inline(always)]
pub(super) fn compare_convert<const FAST: bool>(w: &mut Warp, mask: u32, op: &Op) {
    match op {
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
                    v = lanes::fcmp_mask(*cmp, fmt == Fmt::F64, av, bv);
                }
                CmpKind::Int(IntTy { bits, signed }) if FAST && (bits == 32 || bits == 64) => {
                    v = lanes::icmp_mask(*cmp, bits, signed, av, bv);
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
        Op::Cvt { conv, d, a } => {
            let conv = *conv;
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
                Space::Shared => SHARED_WINDOW,
                Space::Local => LOCAL_WINDOW,
                Space::Param => PARAM_WINDOW,
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
        _ => {}
    }
}
