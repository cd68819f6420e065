//! Decoding of one instruction: the dispatcher picks the family handler by opcode; each handler
//! reads the operands of its opcodes and returns the [`Op`].
use std::collections::HashMap;

use crate::ast::{
    self, Instruction, Modifier, Opcode, Operand, ReduceOp, TestpClass, Type, VoteMode,
};

use super::super::error::EmuError;
use super::super::numeric::{Approx, FOp, Fmt, IRnd, PrmtMode, TestP};
use super::*;

/// What every handler may need of the instruction besides its operands.
#[derive(Debug, Clone, Copy)]
struct Form {
    /// The instruction's (first) type, or `.b32` for untyped instructions.
    t: Type,
    /// `.ftz`.
    ftz: bool,
    /// `.sat`.
    sat: bool,
}

impl<'m> Ctx<'m> {
    fn unsupported_opcode(&self, fname: &str, op: Opcode) -> EmuError {
        self.err(
            fname,
            format!("instruction `{}` is not supported", op.as_str()),
        )
    }

    pub(super) fn inst(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        frame: &mut Option<&mut InlineFrame>,
        fname: &str,
        label_scope: usize,
    ) -> Result<(), EmuError> {
        use Opcode as O;
        let ty = i.ty();
        if i.types().iter().any(|t| t.bits() > 64) {
            return Err(self.err(fname, "128-bit types are not supported"));
        }
        let t = ty.unwrap_or(Type::B32);
        let ftz = i.has(Modifier::Ftz);
        let sat = i.has(Modifier::Sat);
        if i.has(Modifier::Cc) && matches!(i.op, O::Add | O::Sub | O::Mad) {
            return self.carry(scope, i, fname, false);
        }
        let form = Form { t, ftz, sat };
        let op = match i.op {
            O::And | O::Or | O::Xor | O::Not | O::Cnot if t == Type::Pred => {
                self.inst_moves(scope, i, &form, fname)?
            }
            O::Mov => self.inst_moves(scope, i, &form, fname)?,
            O::Add
            | O::Sub
            | O::Mul
            | O::Min
            | O::Max
            | O::Div
            | O::Rem
            | O::And
            | O::Or
            | O::Xor
            | O::Shl
            | O::Shr
            | O::Sad
            | O::Mul24
            | O::Mad24 => self.inst_arith(scope, i, &form, fname)?,
            O::Mad
            | O::Fma
            | O::Neg
            | O::Abs
            | O::Not
            | O::Cnot
            | O::Popc
            | O::Clz
            | O::Brev
            | O::Bfind
            | O::Sqrt
            | O::Rsqrt
            | O::Rcp
            | O::Sin
            | O::Cos
            | O::Lg2
            | O::Ex2
            | O::Tanh => self.inst_fused_unary(scope, i, &form, fname)?,
            O::Bfe | O::Bfi | O::Prmt | O::Lop3 | O::Shf | O::Copysign | O::Testp | O::Slct => {
                self.inst_bits(scope, i, &form, fname)?
            }
            O::Setp | O::Set | O::Selp | O::Cvt | O::Cvta => {
                self.inst_compare_convert(scope, i, &form, fname)?
            }
            O::Ld | O::Ldu | O::St | O::Atom | O::Red => {
                self.inst_memory(scope, i, &form, fname)?
            }
            O::Bra
            | O::Ret
            | O::Exit
            | O::Trap
            | O::Bar
            | O::Barrier
            | O::BarWarpSync
            | O::Membar
            | O::Fence
            | O::Prefetch
            | O::Prefetchu
            | O::Nanosleep
            | O::Pmevent
            | O::Griddepcontrol
            | O::Brkpt => self.inst_control(scope, i, &form, fname, frame, label_scope)?,
            O::Shfl | O::Vote | O::Activemask | O::Match | O::Redux => {
                self.inst_warp(scope, i, &form, fname)?
            }
            O::Call => return self.call(scope, i, fname),
            O::Addc | O::Subc | O::Madc => {
                return self.carry(scope, i, fname, true);
            }
            O::Ldmatrix
            | O::Stmatrix
            | O::Mma
            | O::CpAsync
            | O::CpAsyncCommitGroup
            | O::CpAsyncWaitGroup
            | O::CpAsyncWaitAll => self.inst_matrix(scope, i, fname)?,
            other => return Err(self.unsupported_opcode(fname, other)),
        };
        self.push(i, scope, op, fname)
    }

    /// Decodes moves and predicate logic.
    fn inst_moves(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        form: &Form,
        fname: &str,
    ) -> Result<Op, EmuError> {
        use Opcode as O;
        let Form { t, .. } = *form;
        Ok(match i.op {
            O::Mov => {
                let d0 = self.operand(i, 0, fname)?;
                let a0 = self.operand(i, 1, fname)?;
                if t == Type::Pred {
                    let d = self.pdst(scope, d0, fname)?;
                    let (a, neg) = self.psrc(scope, a0, fname)?;
                    Op::PMov { d, a, neg }
                } else if let Operand::Vector(parts) = a0 {
                    let d = self.dst(scope, d0, fname)?;
                    let n = parts.len().clamp(1, 4);
                    let bits = (t.bits() / n as u32) as u8;
                    let mut ps = [NONE; 4];
                    for (k, p) in parts.iter().take(4).enumerate() {
                        ps[k] = self.src(scope, p, Type::B32, fname)?;
                    }
                    Op::Pack {
                        d,
                        parts: ps,
                        n: n as u8,
                        bits,
                    }
                } else if let Operand::Vector(parts) = d0 {
                    let a = self.src(scope, a0, t, fname)?;
                    let n = parts.len().clamp(1, 4);
                    let bits = (t.bits() / n as u32) as u8;
                    let mut ds = [NONE; 4];
                    for (k, p) in parts.iter().take(4).enumerate() {
                        ds[k] = self.dst(scope, p, fname)?;
                    }
                    Op::Unpack {
                        ds,
                        n: n as u8,
                        bits,
                        a,
                    }
                } else {
                    let d = self.dst(scope, d0, fname)?;
                    let a = self.src(scope, a0, t, fname)?;
                    Op::Mov { d, a }
                }
            }
            O::And | O::Or | O::Xor | O::Not | O::Cnot if t == Type::Pred => {
                let d = self.pdst(scope, self.operand(i, 0, fname)?, fname)?;
                let (a, an) = self.psrc(scope, self.operand(i, 1, fname)?, fname)?;
                match i.op {
                    O::Not => Op::PMov { d, a, neg: !an },
                    _ => {
                        let (b, bn) = self.psrc(scope, self.operand(i, 2, fname)?, fname)?;
                        let op = match i.op {
                            O::And => PBool::And,
                            O::Or => PBool::Or,
                            _ => PBool::Xor,
                        };
                        Op::PBin {
                            op,
                            d,
                            a,
                            an,
                            b,
                            bn,
                        }
                    }
                }
            }
            other => return Err(self.unsupported_opcode(fname, other)),
        })
    }

    /// Decodes binary integer and float arithmetic and the 24-bit forms.
    fn inst_arith(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        form: &Form,
        fname: &str,
    ) -> Result<Op, EmuError> {
        use Opcode as O;
        let Form { t, ftz, sat, .. } = *form;
        Ok(match i.op {
            O::Add
            | O::Sub
            | O::Mul
            | O::Min
            | O::Max
            | O::Div
            | O::Rem
            | O::And
            | O::Or
            | O::Xor
            | O::Shl
            | O::Shr => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                // Shift amounts are .u32.
                let bt = if matches!(i.op, O::Shl | O::Shr) {
                    Type::U32
                } else {
                    t
                };
                let b = self.src(scope, self.operand(i, 2, fname)?, bt, fname)?;
                if let Some((fmt, packed)) = float_ty(t) {
                    let rnd = rnd_of(i.rounding());
                    match i.op {
                        O::Add => Op::FBin {
                            op: FOp::Add,
                            fmt,
                            packed,
                            rnd,
                            ftz,
                            sat,
                            d,
                            a,
                            b,
                        },
                        O::Sub => Op::FBin {
                            op: FOp::Sub,
                            fmt,
                            packed,
                            rnd,
                            ftz,
                            sat,
                            d,
                            a,
                            b,
                        },
                        O::Mul => Op::FBin {
                            op: FOp::Mul,
                            fmt,
                            packed,
                            rnd,
                            ftz,
                            sat,
                            d,
                            a,
                            b,
                        },
                        O::Div => Op::FBin {
                            op: FOp::Div,
                            fmt,
                            packed,
                            rnd,
                            ftz,
                            sat,
                            d,
                            a,
                            b,
                        },
                        O::Min | O::Max => Op::FMinMax {
                            max: i.op == O::Max,
                            fmt,
                            packed,
                            ftz,
                            nan: i.has(Modifier::NaN),
                            d,
                            a,
                            b,
                        },
                        _ => {
                            return Err(
                                self.err(fname, format!("`{}` on float type", i.op.as_str()))
                            )
                        }
                    }
                } else {
                    let it = int_ty(t).ok_or_else(|| {
                        self.err(fname, format!("unsupported type .{}", t.as_str()))
                    })?;
                    let op = match i.op {
                        O::Add if sat => IOp::AddSat,
                        O::Sub if sat => IOp::SubSat,
                        O::Add => IOp::Add,
                        O::Sub => IOp::Sub,
                        O::Mul => match i.mul_mode() {
                            Some(Modifier::Hi) => IOp::MulHi,
                            Some(Modifier::Wide) => IOp::MulWide,
                            _ => IOp::MulLo,
                        },
                        O::Min => IOp::Min,
                        O::Max => IOp::Max,
                        O::Div => IOp::Div,
                        O::Rem => IOp::Rem,
                        O::And => IOp::And,
                        O::Or => IOp::Or,
                        O::Xor => IOp::Xor,
                        O::Shl => IOp::Shl,
                        _ => IOp::Shr,
                    };
                    Op::IBin {
                        op,
                        ty: it,
                        d,
                        a,
                        b,
                    }
                }
            }
            O::Sad | O::Mul24 | O::Mad24 => {
                let it = int_ty(t).ok_or_else(|| self.err(fname, "bad integer type"))?;
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, t, fname)?;
                let mode = match (i.op, i.mul_mode()) {
                    (O::Sad, _) => IOp::AbsDiff,
                    (_, Some(Modifier::Hi)) => IOp::Mul24Hi,
                    _ => IOp::Mul24Lo,
                };
                if i.op == O::Mul24 {
                    Op::IBin {
                        op: mode,
                        ty: it,
                        d,
                        a,
                        b,
                    }
                } else {
                    let c = self.src(scope, self.operand(i, 3, fname)?, t, fname)?;
                    Op::Mad {
                        mode,
                        ty: it,
                        d,
                        a,
                        b,
                        c,
                    }
                }
            }
            other => return Err(self.unsupported_opcode(fname, other)),
        })
    }

    /// Decodes multiply-adds and unary operations.
    fn inst_fused_unary(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        form: &Form,
        fname: &str,
    ) -> Result<Op, EmuError> {
        use Opcode as O;
        let Form { t, ftz, sat, .. } = *form;
        Ok(match i.op {
            O::Mad | O::Fma => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, t, fname)?;
                if let Some((fmt, packed)) = float_ty(t) {
                    let c = self.src(scope, self.operand(i, 3, fname)?, t, fname)?;
                    Op::Fma {
                        fmt,
                        packed,
                        rnd: rnd_of(i.rounding()),
                        ftz,
                        sat,
                        d,
                        a,
                        b,
                        c,
                    }
                } else {
                    let it = int_ty(t).ok_or_else(|| self.err(fname, "bad mad type"))?;
                    let mode = match i.mul_mode() {
                        Some(Modifier::Hi) => IOp::MulHi,
                        Some(Modifier::Wide) => IOp::MulWide,
                        _ => IOp::MulLo,
                    };
                    let ct = if mode == IOp::MulWide {
                        int_ty(t).map_or(t, |_| Type::B64)
                    } else {
                        t
                    };
                    let c = self.src(scope, self.operand(i, 3, fname)?, ct, fname)?;
                    Op::Mad {
                        mode,
                        ty: it,
                        d,
                        a,
                        b,
                        c,
                    }
                }
            }
            O::Neg
            | O::Abs
            | O::Not
            | O::Cnot
            | O::Popc
            | O::Clz
            | O::Brev
            | O::Bfind
            | O::Sqrt
            | O::Rsqrt
            | O::Rcp
            | O::Sin
            | O::Cos
            | O::Lg2
            | O::Ex2
            | O::Tanh => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                if let Some((fmt, packed)) = float_ty(t) {
                    let approx = i.has(Modifier::Approx);
                    let fop = match i.op {
                        O::Neg => FUn::Neg,
                        O::Abs => FUn::Abs,
                        O::Sqrt if approx => FUn::Approx(Approx::Sqrt),
                        O::Sqrt => FUn::Sqrt(rnd_of(i.rounding())),
                        O::Rcp if approx => FUn::Approx(Approx::Rcp),
                        O::Rcp => FUn::Rcp(rnd_of(i.rounding())),
                        O::Rsqrt => FUn::Approx(Approx::Rsqrt),
                        O::Sin => FUn::Approx(Approx::Sin),
                        O::Cos => FUn::Approx(Approx::Cos),
                        O::Lg2 => FUn::Approx(Approx::Lg2),
                        O::Ex2 => FUn::Approx(Approx::Ex2),
                        O::Tanh => FUn::Approx(Approx::Tanh),
                        _ => {
                            return Err(
                                self.err(fname, format!("`{}` on float type", i.op.as_str()))
                            )
                        }
                    };
                    Op::FUn {
                        op: fop,
                        fmt,
                        packed,
                        ftz,
                        d,
                        a,
                    }
                } else {
                    let it = int_ty(t).ok_or_else(|| {
                        self.err(fname, format!("unsupported type .{}", t.as_str()))
                    })?;
                    let op = match i.op {
                        O::Neg => IUn::Neg,
                        O::Abs => IUn::Abs,
                        O::Not => IUn::Not,
                        O::Cnot => IUn::Cnot,
                        O::Popc => IUn::Popc,
                        O::Clz => IUn::Clz,
                        O::Brev => IUn::Brev,
                        O::Bfind => IUn::Bfind {
                            shiftamt: i.has(Modifier::ShiftAmt),
                        },
                        _ => {
                            return Err(
                                self.err(fname, format!("`{}` on integer type", i.op.as_str()))
                            )
                        }
                    };
                    Op::IUn { op, ty: it, d, a }
                }
            }
            other => return Err(self.unsupported_opcode(fname, other)),
        })
    }

    /// Decodes bit manipulation, `copysign`, `testp`, `slct`.
    fn inst_bits(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        form: &Form,
        fname: &str,
    ) -> Result<Op, EmuError> {
        use Opcode as O;
        let Form { t, ftz, .. } = *form;
        Ok(match i.op {
            O::Bfe => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, Type::U32, fname)?;
                let c = self.src(scope, self.operand(i, 3, fname)?, Type::U32, fname)?;
                let it = int_ty(t).ok_or_else(|| self.err(fname, "bad bfe type"))?;
                Op::Bfe { ty: it, d, a, b, c }
            }
            O::Bfi => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, t, fname)?;
                let c = self.src(scope, self.operand(i, 3, fname)?, Type::U32, fname)?;
                let e = self.src(scope, self.operand(i, 4, fname)?, Type::U32, fname)?;
                Op::Bfi {
                    bits: t.bits(),
                    d,
                    a,
                    b,
                    c,
                    e,
                }
            }
            O::Prmt => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, t, fname)?;
                let c = self.src(scope, self.operand(i, 3, fname)?, t, fname)?;
                let mode = match i.prmt_mode() {
                    None => PrmtMode::Default,
                    Some(ast::PrmtMode::F4e) => PrmtMode::F4e,
                    Some(ast::PrmtMode::B4e) => PrmtMode::B4e,
                    Some(ast::PrmtMode::Rc8) => PrmtMode::Rc8,
                    Some(ast::PrmtMode::Ecl) => PrmtMode::Ecl,
                    Some(ast::PrmtMode::Ecr) => PrmtMode::Ecr,
                    Some(ast::PrmtMode::Rc16) => PrmtMode::Rc16,
                };
                Op::Prmt { mode, d, a, b, c }
            }
            O::Lop3 => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, t, fname)?;
                let c = self.src(scope, self.operand(i, 3, fname)?, t, fname)?;
                let lut = self
                    .operand(i, 4, fname)?
                    .as_imm()
                    .ok_or_else(|| self.err(fname, "lop3 needs an immediate truth table"))?
                    .bits() as u8;
                Op::Lop3 { d, a, b, c, lut }
            }
            O::Shf => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, t, fname)?;
                let c = self.src(scope, self.operand(i, 3, fname)?, Type::U32, fname)?;
                Op::Shf {
                    left: i.has(Modifier::ShfL),
                    clamp: i.has(Modifier::Clamp),
                    d,
                    a,
                    b,
                    c,
                }
            }
            O::Copysign => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, t, fname)?;
                let (fmt, _) =
                    float_ty(t).ok_or_else(|| self.err(fname, "copysign needs a float type"))?;
                Op::Copysign { fmt, d, a, b }
            }
            O::Testp => {
                let d = self.pdst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let (fmt, _) =
                    float_ty(t).ok_or_else(|| self.err(fname, "testp needs a float type"))?;
                let tp = match i.testp_class() {
                    Some(TestpClass::Finite) => TestP::Finite,
                    Some(TestpClass::Infinite) => TestP::Infinite,
                    Some(TestpClass::Number) => TestP::Number,
                    Some(TestpClass::NotANumber) => TestP::NotANumber,
                    Some(TestpClass::Normal) => TestP::Normal,
                    Some(TestpClass::Subnormal) => TestP::Subnormal,
                    None => return Err(self.err(fname, "testp without class")),
                };
                Op::Testp { t: tp, fmt, d, a }
            }
            O::Slct => {
                let ct = i.ty2().unwrap_or(Type::S32);
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, t, fname)?;
                let c = self.src(scope, self.operand(i, 3, fname)?, ct, fname)?;
                let cf = float_ty(ct).map(|(f, _)| f);
                Op::Slct {
                    cf,
                    ftz,
                    d,
                    a,
                    b,
                    c,
                }
            }
            other => return Err(self.unsupported_opcode(fname, other)),
        })
    }

    /// Decodes comparisons, selection and conversions.
    fn inst_compare_convert(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        form: &Form,
        fname: &str,
    ) -> Result<Op, EmuError> {
        use Opcode as O;
        let Form { t, ftz, sat, .. } = *form;
        Ok(match i.op {
            O::Setp | O::Set => {
                let types = i.types();
                let st = if i.op == O::Set {
                    types.get(1).copied().unwrap_or(t)
                } else {
                    t
                };
                let cmp = cmp_of(
                    i.cmp_op()
                        .ok_or_else(|| self.err(fname, "setp without comparison"))?,
                );
                let kind = if let Some((fmt, _)) = float_ty(st) {
                    CmpKind::Float(fmt)
                } else {
                    CmpKind::Int(int_ty(st).ok_or_else(|| self.err(fname, "bad setp type"))?)
                };
                let d0 = self.operand(i, 0, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, st, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, st, fname)?;
                if i.op == O::Set {
                    let d = self.dst(scope, d0, fname)?;
                    Op::Set {
                        cmp,
                        kind,
                        ftz,
                        float_out: t.is_float(),
                        d,
                        a,
                        b,
                    }
                } else {
                    let (d, dn) = match d0 {
                        Operand::Pair(x, y) => {
                            let d = self.pdst(scope, x, fname)?;
                            let dn = self.pdst(scope, &Operand::Reg(y.clone()), fname)?;
                            (d, dn)
                        }
                        o => (self.pdst(scope, o, fname)?, NONE),
                    };
                    let comb = match i.bool_op() {
                        Some(bo) => {
                            let (c, cn) = self.psrc(scope, self.operand(i, 3, fname)?, fname)?;
                            Some((pbool(bo), c, cn))
                        }
                        None => None,
                    };
                    Op::Setp {
                        cmp,
                        kind,
                        ftz,
                        d,
                        dn,
                        a,
                        b,
                        comb,
                    }
                }
            }
            O::Selp => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, t, fname)?;
                let (p, pn) = self.psrc(scope, self.operand(i, 3, fname)?, fname)?;
                Op::Selp { d, a, b, p, pn }
            }
            O::Cvt => {
                let types = i.types();
                let (dt, st) = match (types.first(), types.get(1)) {
                    (Some(a), Some(b)) => (*a, *b),
                    _ => return Err(self.err(fname, "cvt needs two types")),
                };
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let r = i.rounding();
                if let (Some((dfmt, true)), Some((Fmt::F32, false))) = (float_ty(dt), float_ty(st))
                {
                    let a = self.src(scope, self.operand(i, 1, fname)?, st, fname)?;
                    let b = self.src(scope, self.operand(i, 2, fname)?, st, fname)?;
                    Op::CvtPack {
                        fmt: dfmt,
                        rnd: rnd_of(r),
                        d,
                        a,
                        b,
                    }
                } else {
                    let a = self.src(scope, self.operand(i, 1, fname)?, st, fname)?;
                    let conv = match (float_ty(dt), float_ty(st), int_ty(dt), int_ty(st)) {
                        (Some((to, false)), Some((from, false)), _, _) => Conv::F2F {
                            from,
                            to,
                            rnd: rnd_of(r),
                            irnd: irnd_of(r),
                            ftz,
                            sat,
                        },
                        (None, Some((from, false)), Some(to), _) => Conv::F2I {
                            from,
                            ftz,
                            rnd: irnd_of(r).unwrap_or(IRnd::Rzi),
                            to,
                        },
                        (Some((to, false)), None, _, Some(from)) => Conv::I2F {
                            from,
                            to,
                            rnd: rnd_of(r),
                            sat,
                        },
                        (None, None, Some(to), Some(from)) => Conv::I2I { from, to, sat },
                        // sm_80's only form: `.rna`, no `.ftz`/`.sat`/`.satfinite`/`.relu`.
                        _ if dt == Type::Tf32
                            && st == Type::F32
                            && r == Some(ast::Rounding::Rna)
                            && !ftz
                            && !sat
                            && !i.has(Modifier::SatFinite)
                            && !i.has(Modifier::Relu) =>
                        {
                            Conv::F2Tf32
                        }
                        _ => {
                            return Err(self.err(
                                fname,
                                format!("unsupported conversion .{}.{}", dt.as_str(), st.as_str()),
                            ))
                        }
                    };
                    Op::Cvt { conv, d, a }
                }
            }
            O::Cvta => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let space = i
                    .state_space()
                    .and_then(space_of)
                    .ok_or_else(|| self.err(fname, "cvta needs a state space"))?;
                Op::Cvta {
                    to: i.has(Modifier::To),
                    space,
                    bits: t.bits() as u8,
                    d,
                    a,
                }
            }
            other => return Err(self.unsupported_opcode(fname, other)),
        })
    }

    /// Decodes loads, stores and atomics.
    fn inst_memory(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        form: &Form,
        fname: &str,
    ) -> Result<Op, EmuError> {
        use Opcode as O;
        let Form { t, .. } = *form;
        Ok(match i.op {
            O::Ld | O::Ldu | O::St => {
                let is_st = i.op == O::St;
                let (ao, vo) = if is_st {
                    (self.operand(i, 0, fname)?, self.operand(i, 1, fname)?)
                } else {
                    (self.operand(i, 1, fname)?, self.operand(i, 0, fname)?)
                };
                let (sym_space, addr) = self.addr(scope, ao, fname)?;
                let decl_space = i
                    .state_space()
                    .map(|s| space_of(s).unwrap_or(Space::Generic))
                    .unwrap_or(Space::Generic);
                // A symbol's own space wins over generic; kernel params are in Space::Param, call-site
                // params in local memory.
                let space = match (sym_space, decl_space) {
                    (Some(s), _) => s,
                    (None, s) => s,
                };
                let n = i.vector().map_or(1, |v| v.len());
                if n > 4 {
                    return Err(self.err(fname, "vectors wider than 4 are not supported"));
                }
                let size = t.size_bytes();
                if !matches!(size, 1 | 2 | 4 | 8) {
                    return Err(self.err(fname, format!("unsupported access size {size}")));
                }
                let mut regs = [NONE; 4];
                match vo {
                    Operand::Vector(parts) => {
                        for (k, p) in parts.iter().take(4).enumerate() {
                            regs[k] = if is_st {
                                self.src(scope, p, t, fname)?
                            } else {
                                self.dst(scope, p, fname)?
                            };
                        }
                    }
                    o => {
                        regs[0] = if is_st {
                            self.src(scope, o, t, fname)?
                        } else {
                            self.dst(scope, o, fname)?
                        }
                    }
                }
                if is_st {
                    use crate::ast::{MemSemantics as S, Modifier as M};
                    Op::St {
                        space,
                        size: size as u8,
                        n: n as u8,
                        ss: regs,
                        addr,
                        strong: [S::Volatile, S::Relaxed, S::Release, S::Mmio]
                            .into_iter()
                            .any(|m| i.has(M::Sem(m))),
                    }
                } else {
                    Op::Ld {
                        space,
                        size: size as u8,
                        n: n as u8,
                        sext: t.is_signed(),
                        ds: regs,
                        addr,
                    }
                }
            }
            O::Atom | O::Red => {
                let is_red = i.op == O::Red;
                let k0 = if is_red { 0 } else { 1 };
                let d = if is_red {
                    self.scratch
                } else {
                    self.dst(scope, self.operand(i, 0, fname)?, fname)?
                };
                let (sym_space, addr) = self.addr(scope, self.operand(i, k0, fname)?, fname)?;
                let space = sym_space.unwrap_or_else(|| {
                    i.state_space().and_then(space_of).unwrap_or(Space::Generic)
                });
                let b = self.src(scope, self.operand(i, k0 + 1, fname)?, t, fname)?;
                let rop = i
                    .reduce_op()
                    .ok_or_else(|| self.err(fname, "atom without operation"))?;
                let op = match rop {
                    ReduceOp::Add => AOp::Add,
                    ReduceOp::Min => AOp::Min,
                    ReduceOp::Max => AOp::Max,
                    ReduceOp::Inc => AOp::Inc,
                    ReduceOp::Dec => AOp::Dec,
                    ReduceOp::And => AOp::And,
                    ReduceOp::Or => AOp::Or,
                    ReduceOp::Xor => AOp::Xor,
                    ReduceOp::Exch => AOp::Exch,
                    ReduceOp::Cas => AOp::Cas,
                    ReduceOp::Popc => return Err(self.err(fname, "atom.popc")),
                };
                let c = if op == AOp::Cas {
                    self.src(scope, self.operand(i, k0 + 2, fname)?, t, fname)?
                } else {
                    NONE
                };
                let kind = match float_ty(t) {
                    Some((f, false)) => AKind::Float(f),
                    Some((f, true)) => AKind::Packed(f),
                    None => AKind::Int(int_ty(t).ok_or_else(|| self.err(fname, "bad atom type"))?),
                };
                Op::Atom {
                    space,
                    op,
                    kind,
                    d,
                    addr,
                    b,
                    c,
                }
            }
            other => return Err(self.unsupported_opcode(fname, other)),
        })
    }

    /// Decodes branches, returns, exits, traps and barriers.
    fn inst_control(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        _form: &Form,
        fname: &str,
        frame: &mut Option<&mut InlineFrame>,
        label_scope: usize,
    ) -> Result<Op, EmuError> {
        use Opcode as O;
        Ok(match i.op {
            O::Bra => {
                let target = match self.operand(i, 0, fname)? {
                    Operand::Symbol { name, .. } => name.clone(),
                    _ => return Err(self.err(fname, "bra needs a label")),
                };
                self.fixups.push((self.code.len(), label_scope, target));
                Op::Bra { target: NONE }
            }
            O::Ret => match frame {
                Some(fr) => {
                    fr.ret_fixups.push(self.code.len());
                    Op::Bra { target: NONE }
                }
                None => Op::Exit,
            },
            O::Exit => Op::Exit,
            O::Trap => Op::Trap,
            O::Bar | O::Barrier => {
                if i.has(Modifier::BarRed) {
                    return Err(self.err(fname, "bar.red is not supported"));
                }
                let id = match i.operands.first() {
                    Some(o) => self.src(scope, o, Type::U32, fname)?,
                    None => self.konst(ConstSrc::Imm(0)),
                };
                let count = match i.operands.get(1) {
                    Some(o) => self.src(scope, o, Type::U32, fname)?,
                    None => NONE,
                };
                Op::Bar {
                    id,
                    count,
                    arrive: i.has(Modifier::Arrive),
                }
            }
            O::BarWarpSync
            | O::Membar
            | O::Fence
            | O::Prefetch
            | O::Prefetchu
            | O::Nanosleep
            | O::Pmevent
            | O::Griddepcontrol
            | O::Brkpt => Op::Nop,
            other => return Err(self.unsupported_opcode(fname, other)),
        })
    }

    /// Decodes warp-collective operations.
    fn inst_warp(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        form: &Form,
        fname: &str,
    ) -> Result<Op, EmuError> {
        use Opcode as O;
        let Form { t, .. } = *form;
        Ok(match i.op {
            O::Shfl => {
                let (d0, p) = match self.operand(i, 0, fname)? {
                    Operand::Pair(x, y) => {
                        let dd = self.dst(scope, x, fname)?;
                        let pp = self.pdst(scope, &Operand::Reg(y.clone()), fname)?;
                        (dd, pp)
                    }
                    o => (self.dst(scope, o, fname)?, NONE),
                };
                let a = self.src(scope, self.operand(i, 1, fname)?, Type::B32, fname)?;
                let b = self.src(scope, self.operand(i, 2, fname)?, Type::B32, fname)?;
                let c = self.src(scope, self.operand(i, 3, fname)?, Type::B32, fname)?;
                let mode = i
                    .shfl_mode()
                    .ok_or_else(|| self.err(fname, "shfl without mode"))?;
                Op::Shfl {
                    mode,
                    d: d0,
                    p,
                    a,
                    b,
                    c,
                }
            }
            O::Vote => {
                let mode = i
                    .vote_mode()
                    .ok_or_else(|| self.err(fname, "vote without mode"))?;
                let (a, an) = self.psrc(scope, self.operand(i, 1, fname)?, fname)?;
                if mode == VoteMode::Ballot {
                    let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                    Op::Vote {
                        mode,
                        d,
                        dp: NONE,
                        a,
                        an,
                    }
                } else {
                    let dp = self.pdst(scope, self.operand(i, 0, fname)?, fname)?;
                    Op::Vote {
                        mode,
                        d: NONE,
                        dp,
                        a,
                        an,
                    }
                }
            }
            O::Activemask => Op::Activemask {
                d: self.dst(scope, self.operand(i, 0, fname)?, fname)?,
            },
            O::Match => {
                let mode = i
                    .vote_mode()
                    .ok_or_else(|| self.err(fname, "match without mode"))?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let bits = t.bits() as u8;
                if mode == VoteMode::All {
                    let (d, p) = match self.operand(i, 0, fname)? {
                        Operand::Pair(x, y) => {
                            let dd = self.dst(scope, x, fname)?;
                            let pp = self.pdst(scope, &Operand::Reg(y.clone()), fname)?;
                            (dd, pp)
                        }
                        o => (self.dst(scope, o, fname)?, NONE),
                    };
                    Op::MatchAll { d, p, a, bits }
                } else {
                    let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                    Op::MatchAny { d, a, bits }
                }
            }
            O::Redux => {
                let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
                let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
                let op = match i.reduce_op() {
                    Some(ReduceOp::Add) => ReduxOp::Add,
                    Some(ReduceOp::Min) => ReduxOp::Min,
                    Some(ReduceOp::Max) => ReduxOp::Max,
                    Some(ReduceOp::And) => ReduxOp::And,
                    Some(ReduceOp::Or) => ReduxOp::Or,
                    Some(ReduceOp::Xor) => ReduxOp::Xor,
                    _ => return Err(self.err(fname, "unsupported redux operation")),
                };
                Op::Redux {
                    op,
                    signed: t.is_signed(),
                    d,
                    a,
                }
            }
            other => return Err(self.unsupported_opcode(fname, other)),
        })
    }

    /// `add.cc addc sub.cc subc mad.cc madc` (`.cc` sets the carry, the `c` forms read it).
    fn carry(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        fname: &str,
        carry_in: bool,
    ) -> Result<(), EmuError> {
        let t = i.ty().unwrap_or(Type::U32);
        let ty =
            int_ty(t).ok_or_else(|| self.err(fname, "carry arithmetic needs an integer type"))?;
        if ty.bits < 32 {
            return Err(self.err(fname, "carry arithmetic needs a 32- or 64-bit type"));
        }
        if self.cc == NONE {
            self.cc = self.new_pred();
        }
        let mul = matches!(i.op, Opcode::Mad | Opcode::Madc);
        let d = self.dst(scope, self.operand(i, 0, fname)?, fname)?;
        let a = self.src(scope, self.operand(i, 1, fname)?, t, fname)?;
        let b = self.src(scope, self.operand(i, 2, fname)?, t, fname)?;
        let c = if mul {
            self.src(scope, self.operand(i, 3, fname)?, t, fname)?
        } else {
            NONE
        };
        let op = Op::Carry {
            sub: matches!(i.op, Opcode::Sub | Opcode::Subc),
            hi: mul && i.mul_mode() == Some(Modifier::Hi),
            carry_in,
            carry_out: i.has(Modifier::Cc),
            ty,
            d,
            a,
            b,
            c,
            cc: self.cc,
        };
        self.push(i, scope, op, fname)
    }
}
