//! Control flow (branches, `exit`, `trap`, barriers) and warp-collective operations.
use crate::ast::{ShflMode, VoteMode};

use super::super::decode::{IOp, Op, ReduxOp, NONE};
use super::super::error::Space;
use super::super::numeric::{self as num, IntTy};
use super::alu::ibin;
use super::regs::{pget, pset, rd, rd1, wr};
use super::{Fault, FaultKind, LaunchCtx, Step, Warp, FULL};

impl<'a> LaunchCtx<'a> {
    /// Branches, `exit`, `trap` and barriers: what the warp loop does next.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn control(
        &self,
        w: &mut Warp,
        pc: u32,
        gmask: u32,
        mask: u32,
        op: &Op,
        arrived: &mut [u32; 16],
        expected: &mut [u32; 16],
    ) -> Result<Step, (u32, Fault)> {
        let fault = |kind, lane| (pc, Fault::new(kind, Space::Global, 0, 0, lane));
        match op {
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
                return Ok(Step::Jumped);
            }
            Op::Exit => {
                w.live &= !mask;
                w.gmask &= !mask;
                if w.gmask == 0 {
                    if !w.reselect() {
                        return Ok(Step::Stop);
                    }
                    return Ok(Step::Jumped);
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
                    return Ok(Step::Stop);
                }
                return Ok(Step::Jumped);
            }
            _ => {}
        }
        Ok(Step::Next)
    }
}

/// Warp-collective operations: `shfl`, `vote`, `activemask`, `match`, `redux`.
#[inline(always)]
pub(super) fn collective(w: &mut Warp, gmask: u32, mask: u32, op: &Op) {
    match op {
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
                VoteMode::All => pset(&mut w.preds, *dp, if v == mask { FULL } else { 0 }, mask),
                VoteMode::Any => pset(&mut w.preds, *dp, if v != 0 { FULL } else { 0 }, mask),
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
                    if mask >> k & 1 != 0 && num::trunc(av[k], bits) == num::trunc(av[l], bits) {
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
            let all = (0..32)
                .all(|k| mask >> k & 1 == 0 || num::trunc(av[k], bits) == num::trunc(first, bits));
            let out = [if all { mask as u64 } else { 0 }; 32];
            wr(&mut w.regs, *d, &out, mask);
            if *p != NONE {
                pset(&mut w.preds, *p, if all { FULL } else { 0 }, mask);
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
        _ => {}
    }
}
