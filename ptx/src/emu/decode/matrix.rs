//! Decoding of the warp-level matrix instructions XLA's Triton kernels use on Ampere and Hopper:
//! `ldmatrix`, `stmatrix`,
//! `mma.sync` and `cp.async` with its group operations (the "Matrix instructions" of the
//! `ptx::emu` docs; their semantics are in exec/matrix.rs). Every form outside the few listed here is refused with
//! [`EmuError::Unsupported`] naming the form, never guessed at.
use std::collections::HashMap;

use crate::ast::{
    CacheHint, CacheOp, Instruction, Layout, MatrixCount, Modifier, Opcode, Operand, Shape,
    StateSpace, Type,
};

use super::super::error::EmuError;
use super::*;

impl<'m> Ctx<'m> {
    /// `ldmatrix`, `mma`, `cp.async`, `cp.async.commit_group`, `cp.async.wait_group`,
    /// `cp.async.wait_all`.
    pub(super) fn inst_matrix(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        fname: &str,
    ) -> Result<Op, EmuError> {
        match i.op {
            Opcode::Ldmatrix => self.ldmatrix(scope, i, fname),
            Opcode::Stmatrix => self.stmatrix(scope, i, fname),
            Opcode::Mma => self.mma(scope, i, fname),
            Opcode::CpAsync => self.cp_async(scope, i, fname),
            // The emulator completes every `cp.async` when it is issued (exec/matrix.rs says
            // why that is a legal execution), so committing a group and waiting for groups
            // have nothing left to do.
            Opcode::CpAsyncCommitGroup | Opcode::CpAsyncWaitAll if i.mods.is_empty() => Ok(Op::Nop),
            Opcode::CpAsyncWaitGroup if i.mods.is_empty() => match i.operands.as_slice() {
                [Operand::Imm(_)] => Ok(Op::Nop),
                _ => Err(self.err(fname, "cp.async.wait_group needs one immediate operand")),
            },
            _ => Err(self.err(fname, form_refused(i))),
        }
    }

    /// `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 {d..}, [a]`.
    fn ldmatrix(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        fname: &str,
    ) -> Result<Op, EmuError> {
        let (n, trans, space) = self.matrix_form(i, fname)?;
        let parts = match self.operand(i, 0, fname)? {
            Operand::Vector(p) if p.len() == n => p,
            _ => {
                return Err(self.err(
                    fname,
                    format!("ldmatrix .x{n} needs a vector of {n} destination registers"),
                ))
            }
        };
        let mut ds = [NONE; 4];
        for (k, p) in parts.iter().enumerate() {
            if let Some(slot) = ds.get_mut(k) {
                *slot = self.dst(scope, p, fname)?;
            }
        }
        let (sym_space, addr) = self.addr(scope, self.operand(i, 1, fname)?, fname)?;
        if i.operands.len() != 2 {
            return Err(self.err(fname, "ldmatrix takes two operands"));
        }
        Ok(Op::Matrix(Box::new(MatrixOp::Ldmatrix {
            n: n as u8,
            trans,
            space: sym_space.or(space).unwrap_or(Space::Generic),
            ds,
            addr,
        })))
    }

    /// `stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 [a], {s..}` (sm_90):
    /// `ldmatrix` in reverse, which Triton's Hopper epilogues store accumulators with.
    fn stmatrix(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        fname: &str,
    ) -> Result<Op, EmuError> {
        let (n, trans, space) = self.matrix_form(i, fname)?;
        if i.operands.len() != 2 {
            return Err(self.err(fname, "stmatrix takes two operands"));
        }
        let (sym_space, addr) = self.addr(scope, self.operand(i, 0, fname)?, fname)?;
        let parts = match self.operand(i, 1, fname)? {
            Operand::Vector(p) if p.len() == n => p,
            _ => {
                return Err(self.err(
                    fname,
                    format!("stmatrix .x{n} needs a vector of {n} source registers"),
                ))
            }
        };
        let mut srcs = [NONE; 4];
        for (k, p) in parts.iter().enumerate() {
            if let Some(slot) = srcs.get_mut(k) {
                *slot = self.src(scope, p, Type::B32, fname)?;
            }
        }
        Ok(Op::Matrix(Box::new(MatrixOp::Stmatrix {
            n: n as u8,
            trans,
            space: sym_space.or(space).unwrap_or(Space::Generic),
            srcs,
            addr,
        })))
    }

    /// The modifiers `ldmatrix` and `stmatrix` share: `.sync.aligned.m8n8.{x1,x2,x4}{.trans}
    /// {.shared{::cta}}.b16`, any other refused. Returns the matrix count, `.trans` and the
    /// state space when given.
    fn matrix_form(
        &self,
        i: &Instruction,
        fname: &str,
    ) -> Result<(usize, bool, Option<Space>), EmuError> {
        let (mut count, mut trans, mut space, mut ok) = (None, false, None, true);
        let mut seen = (false, false, false, false);
        for m in &i.mods {
            match m {
                Modifier::Sync => seen.0 = true,
                Modifier::Aligned => seen.1 = true,
                Modifier::Shape(Shape::M8n8) => seen.2 = true,
                Modifier::Type(Type::B16) => seen.3 = true,
                Modifier::Count(c) if count.is_none() => count = Some(*c),
                Modifier::Trans if !trans => trans = true,
                Modifier::Space(StateSpace::Shared | StateSpace::SharedCta) if space.is_none() => {
                    space = Some(Space::Shared)
                }
                _ => ok = false,
            }
        }
        let n = match count {
            Some(MatrixCount::X1) => 1,
            Some(MatrixCount::X2) => 2,
            Some(MatrixCount::X4) => 4,
            None => 0,
        };
        if !ok || seen != (true, true, true, true) || n == 0 {
            return Err(self.err(fname, form_refused(i)));
        }
        Ok((n, trans, space))
    }

    /// `mma.sync.aligned.{m16n8k16,m16n8k8}.row.col.f32.{f16,bf16}.{f16,bf16}.f32` and
    /// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`.
    fn mma(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        fname: &str,
    ) -> Result<Op, EmuError> {
        use Modifier as M;
        let (shape, ty) = match i.mods.as_slice() {
            [M::Sync, M::Aligned, M::Shape(s), M::Layout(Layout::Row), M::Layout(Layout::Col), M::Type(Type::F32), M::Type(a), M::Type(b), M::Type(Type::F32)]
                if a == b =>
            {
                (*s, *a)
            }
            _ => return Err(self.err(fname, form_refused(i))),
        };
        let input = match (shape, ty) {
            (Shape::M16n8k16, Type::F16) => MmaInput::F16 { k16: true },
            (Shape::M16n8k16, Type::Bf16) => MmaInput::Bf16 { k16: true },
            (Shape::M16n8k8, Type::F16) => MmaInput::F16 { k16: false },
            (Shape::M16n8k8, Type::Bf16) => MmaInput::Bf16 { k16: false },
            (Shape::M16n8k8, Type::Tf32) => MmaInput::Tf32,
            _ => return Err(self.err(fname, form_refused(i))),
        };
        let (na, nb) = input.registers();
        if i.operands.len() != 4 {
            return Err(self.err(fname, "mma takes four operands (d, a, b, c)"));
        }
        let mut regs = [[NONE; 4]; 4];
        for (k, want) in [4, na, nb, 4].into_iter().enumerate() {
            let parts = match self.operand(i, k, fname)? {
                Operand::Vector(p) if p.len() == want => p,
                _ => {
                    return Err(self.err(
                        fname,
                        format!(
                            "mma operand {k} of this form must be a vector of {want} registers"
                        ),
                    ))
                }
            };
            for (j, p) in parts.iter().enumerate() {
                let r = if k == 0 {
                    self.dst(scope, p, fname)?
                } else {
                    self.src(scope, p, Type::B32, fname)?
                };
                if let Some(slot) = regs.get_mut(k).and_then(|row| row.get_mut(j)) {
                    *slot = r;
                }
            }
        }
        let [d, a, b, c] = regs;
        Ok(Op::Matrix(Box::new(MatrixOp::Mma {
            input,
            d,
            a,
            b: [b[0], b[1]],
            c,
        })))
    }

    /// `cp.async.{ca,cg}.shared{::cta}.global{.L2::128B|.L2::256B} [dst], [src], cp-size{, src-size}`.
    fn cp_async(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        fname: &str,
    ) -> Result<Op, EmuError> {
        use Modifier as M;
        let mut rest = i.mods.as_slice();
        let cg = match rest {
            [M::Cache(CacheOp::Ca), r @ ..] => {
                rest = r;
                false
            }
            [M::Cache(CacheOp::Cg), r @ ..] => {
                rest = r;
                true
            }
            _ => return Err(self.err(fname, form_refused(i))),
        };
        // Prefetch-size hints change what the L2 fetches, not what is copied.
        match rest {
            [M::Space(StateSpace::Shared | StateSpace::SharedCta), M::Space(StateSpace::Global)]
            | [M::Space(StateSpace::Shared | StateSpace::SharedCta), M::Space(StateSpace::Global), M::Hint(
                CacheHint::L2Prefetch64B | CacheHint::L2Prefetch128B | CacheHint::L2Prefetch256B,
            )] => {}
            _ => return Err(self.err(fname, form_refused(i))),
        }
        let size = match i.operands.get(2) {
            Some(Operand::Imm(v)) => v.bits(),
            _ => return Err(self.err(fname, "cp.async needs an immediate cp-size")),
        };
        // The ISA: .cg copies 16 bytes; .ca 4, 8 or 16.
        if !(size == 16 || (!cg && (size == 4 || size == 8))) {
            return Err(self.err(
                fname,
                format!(
                    "cp.async.{} with cp-size {size} (.cg: 16; .ca: 4, 8, 16)",
                    if cg { "cg" } else { "ca" }
                ),
            ));
        }
        let src_size = match i.operands.get(3) {
            None => NONE,
            Some(o @ (Operand::Imm(_) | Operand::Reg(_))) => {
                if let Operand::Reg(r) = o {
                    if matches!(self.lookup(scope, r.name(), fname)?, Sym::Pred(_)) {
                        return Err(self.err(
                            fname,
                            "cp.async with an ignore-src predicate is not supported",
                        ));
                    }
                }
                self.src(scope, o, Type::U32, fname)?
            }
            Some(_) => {
                return Err(self.err(fname, "cp.async src-size must be a register or immediate"))
            }
        };
        if i.operands.len() > 4 {
            return Err(self.err(fname, form_refused(i)));
        }
        let (dsym, dst) = self.addr(scope, self.operand(i, 0, fname)?, fname)?;
        let (ssym, src) = self.addr(scope, self.operand(i, 1, fname)?, fname)?;
        if dsym.is_some_and(|s| s != Space::Shared) || ssym.is_some() {
            return Err(self.err(
                fname,
                "cp.async copies from global memory into shared memory",
            ));
        }
        Ok(Op::Matrix(Box::new(MatrixOp::CpAsync {
            size: size as u8,
            src_size,
            dst,
            src,
        })))
    }
}

/// The message for a form of these instructions the emulator does not execute.
fn form_refused(i: &Instruction) -> String {
    let mut s = i.op.as_str().to_string();
    for m in &i.mods {
        s.push('.');
        s.push_str(m.as_str());
    }
    format!("`{s}` is not supported (the `ptx::emu` docs list the supported matrix forms)")
}
