//! Decoding of the typed PTX model into the emulator's compact form.
//!
//! Every function is decoded once: register names become row indices of a per-warp register
//! file (`u64` per lane, values zero-extended), predicates become indices of a per-warp file of
//! 32-bit lane masks, labels become instruction indices, and every immediate, special register
//! (`%tid.x`, ...) and symbol address becomes a *constant row* filled when a warp starts, so that
//! every operand at run time is a plain row index.
//!
//! Calls of `.func`s are inlined at decode time (recursion is rejected): the caller's `.param`
//! variables and the callee's parameters share per-thread slots in local memory, `ret` in the
//! callee becomes a branch to the end of the inlined body.
//!
//! Files: `ops` holds the decoded form ([`Op`], [`Inst`], [`Func`]); this module the per-kernel
//! context (registers, labels, declarations, operands); `inst` the instruction dispatcher, whose
//! `match` on the opcode delegates to one handler per family; `call` the inlining of `.func`s.
use std::collections::HashMap;

use crate::ast::{
    self, AddressBase, BoolOp, CmpOp, Immediate, Initializer, Instruction, Operand, Rounding,
    StateSpace, Statement, Type,
};

use super::error::EmuError;
use super::numeric::{Cmp, Fmt, IRnd, IntTy, Rnd};

/// Row index into the per-warp register file.
pub(crate) type R = u32;
/// Index into the per-warp predicate file.
pub(crate) type P = u32;
/// "No register" marker.
pub(crate) const NONE: u32 = u32::MAX;

mod call;
mod inst;
mod matrix;
mod ops;
mod rows;

pub(crate) use ops::*;
pub(crate) use rows::Packed;

#[derive(Debug, Clone, Copy)]
enum Sym {
    Val {
        row: R,
        bits: u32,
    },
    Pred(P),
    /// Address in a state space (shared/local/kernel param offsets).
    Addr {
        space: Space,
        off: u64,
    },
    ModuleVar {
        idx: u32,
    },
    /// An unsized `.extern .shared` array: the dynamic shared memory.
    DynShared,
}

struct Ctx<'m> {
    module: &'m ast::Module,
    vars: &'m HashMap<String, (u32, Space)>,
    code: Vec<Inst>,
    text: Vec<String>,
    nrows: u32,
    npreds: u32,
    consts: Vec<(R, ConstSrc)>,
    const_map: HashMap<ConstSrc, R>,
    pconsts: Vec<(P, bool)>,
    pconst_map: [P; 2],
    /// Extent of the static shared variables as declared (what limits and `%total_smem_size`
    /// see).
    shared: u64,
    /// The emulator's layouts, with a [`REDZONE`] after every variable.
    shared_layout: u64,
    local: u64,
    /// Each shared / local variable's place in the layout, for the sanitizer's bounds.
    shared_vars: Vec<VarRegion>,
    local_vars: Vec<VarRegion>,
    /// Pending branch fixups: (instruction index, scope id, label).
    fixups: Vec<(usize, usize, String)>,
    /// Labels per inlined scope.
    labels: Vec<HashMap<String, u32>>,
    depth: u32,
    scratch: R,
    /// The condition-code (carry) predicate, allocated on first use.
    cc: P,
}

fn unsupported(function: &str, pc: Option<u32>, message: impl Into<String>) -> EmuError {
    EmuError::Unsupported {
        function: function.to_string(),
        pc,
        message: message.into(),
    }
}

/// Text of an instruction for error messages: opcode, modifiers, operands.
pub(crate) fn inst_text(i: &Instruction) -> String {
    let mut s = String::new();
    if let Some(g) = &i.guard {
        s.push('@');
        if g.negated {
            s.push('!');
        }
        s.push_str(g.reg.name());
        s.push(' ');
    }
    s.push_str(i.op.as_str());
    for m in &i.mods {
        s.push('.');
        s.push_str(m.as_str());
    }
    for (k, o) in i.operands.iter().enumerate() {
        s.push_str(if k == 0 { " " } else { ", " });
        operand_text(o, &mut s);
    }
    s
}

fn operand_text(o: &Operand, s: &mut String) {
    match o {
        Operand::Reg(r) => s.push_str(r.name()),
        Operand::Special(sr) => s.push_str(&sr.to_string()),
        Operand::Imm(Immediate::Int(v)) => s.push_str(&v.to_string()),
        Operand::Imm(Immediate::UInt(v)) => s.push_str(&format!("{v}U")),
        Operand::Imm(Immediate::F32(b)) => s.push_str(&format!("0f{b:08X}")),
        Operand::Imm(Immediate::F64(b)) => s.push_str(&format!("0d{b:016X}")),
        Operand::Symbol { name, offset } => {
            s.push_str(name);
            if *offset != 0 {
                s.push_str(&format!("+{offset}"));
            }
        }
        Operand::Address(a) => {
            s.push('[');
            match &a.base {
                AddressBase::Reg(r) => s.push_str(r.name()),
                AddressBase::Symbol(n) => s.push_str(n),
                AddressBase::Imm(v) => s.push_str(&v.to_string()),
            }
            if a.offset != 0 {
                s.push_str(&format!("+{}", a.offset));
            }
            s.push(']');
        }
        Operand::Vector(v) | Operand::List(v) => {
            let (open, close) = if matches!(o, Operand::Vector(_)) {
                ('{', '}')
            } else {
                ('(', ')')
            };
            s.push(open);
            for (k, e) in v.iter().enumerate() {
                if k > 0 {
                    s.push_str(", ");
                }
                operand_text(e, s);
            }
            s.push(close);
        }
        Operand::Sink => s.push('_'),
        Operand::Not(r) => {
            s.push('!');
            s.push_str(r.name());
        }
        Operand::Pair(a, b) => {
            operand_text(a, s);
            s.push('|');
            s.push_str(b.name());
        }
    }
}

fn space_of(s: StateSpace) -> Option<Space> {
    Some(match s {
        StateSpace::Global => Space::Global,
        StateSpace::Shared | StateSpace::SharedCta => Space::Shared,
        StateSpace::Local => Space::Local,
        StateSpace::Param | StateSpace::ParamEntry | StateSpace::ParamFunc => Space::Param,
        StateSpace::Const => Space::Const,
        _ => return None,
    })
}

fn int_ty(t: Type) -> Option<IntTy> {
    use Type::*;
    Some(match t {
        B8 | U8 => IntTy {
            bits: 8,
            signed: false,
        },
        S8 => IntTy {
            bits: 8,
            signed: true,
        },
        B16 | U16 => IntTy {
            bits: 16,
            signed: false,
        },
        S16 => IntTy {
            bits: 16,
            signed: true,
        },
        B32 | U32 => IntTy {
            bits: 32,
            signed: false,
        },
        S32 => IntTy {
            bits: 32,
            signed: true,
        },
        B64 | U64 => IntTy {
            bits: 64,
            signed: false,
        },
        S64 => IntTy {
            bits: 64,
            signed: true,
        },
        _ => return None,
    })
}

/// Float format and "packed pair" flag.
fn float_ty(t: Type) -> Option<(Fmt, bool)> {
    Some(match t {
        Type::F16 => (Fmt::F16, false),
        Type::F16x2 => (Fmt::F16, true),
        Type::Bf16 => (Fmt::Bf16, false),
        Type::Bf16x2 => (Fmt::Bf16, true),
        Type::F32 => (Fmt::F32, false),
        Type::F64 => (Fmt::F64, false),
        _ => return None,
    })
}

fn rnd_of(r: Option<Rounding>) -> Rnd {
    match r {
        Some(Rounding::Rz) | Some(Rounding::Rzi) => Rnd::Rz,
        Some(Rounding::Rm) | Some(Rounding::Rmi) => Rnd::Rm,
        Some(Rounding::Rp) | Some(Rounding::Rpi) => Rnd::Rp,
        _ => Rnd::Rn,
    }
}

fn irnd_of(r: Option<Rounding>) -> Option<IRnd> {
    Some(match r {
        Some(Rounding::Rni) => IRnd::Rni,
        Some(Rounding::Rzi) => IRnd::Rzi,
        Some(Rounding::Rmi) => IRnd::Rmi,
        Some(Rounding::Rpi) => IRnd::Rpi,
        _ => return None,
    })
}

fn cmp_of(c: CmpOp) -> Cmp {
    match c {
        CmpOp::Eq => Cmp::Eq,
        CmpOp::Ne => Cmp::Ne,
        CmpOp::Lt => Cmp::Lt,
        CmpOp::Le => Cmp::Le,
        CmpOp::Gt => Cmp::Gt,
        CmpOp::Ge => Cmp::Ge,
        CmpOp::Lo => Cmp::Lo,
        CmpOp::Ls => Cmp::Ls,
        CmpOp::Hi => Cmp::Hi,
        CmpOp::Hs => Cmp::Hs,
        CmpOp::Equ => Cmp::Equ,
        CmpOp::Neu => Cmp::Neu,
        CmpOp::Ltu => Cmp::Ltu,
        CmpOp::Leu => Cmp::Leu,
        CmpOp::Gtu => Cmp::Gtu,
        CmpOp::Geu => Cmp::Geu,
        CmpOp::Num => Cmp::Num,
        CmpOp::Nan => Cmp::Nan,
    }
}

fn pbool(b: BoolOp) -> PBool {
    match b {
        BoolOp::And => PBool::And,
        BoolOp::Or => PBool::Or,
        BoolOp::Xor => PBool::Xor,
    }
}

/// Byte size and alignment of a declaration's element type times its array size.
fn decl_size(ty: Type, vector: Option<ast::VectorWidth>, d: &ast::Declarator) -> u64 {
    let elem = ty.size_bytes() as u64 * vector.map_or(1, |v| v.len() as u64);
    elem.saturating_mul(d.element_count().unwrap_or(0))
}

/// Flattens an initializer into little-endian bytes of `ty` elements.
fn init_bytes(init: &Initializer, ty: Type, out: &mut Vec<u8>) -> Option<()> {
    match init {
        Initializer::Imm(i) => {
            let n = ty.size_bytes() as usize;
            let bits = match (float_ty(ty), i) {
                (Some((Fmt::F32, _)), Immediate::F64(b)) => {
                    (f64::from_bits(*b) as f32).to_bits() as u64
                }
                (Some((Fmt::F64, _)), Immediate::F32(b)) => (f32::from_bits(*b) as f64).to_bits(),
                (Some((f, false)), Immediate::Int(v)) => f.from_f64_rn(*v as f64),
                _ => i.bits(),
            };
            out.extend_from_slice(bits.to_le_bytes().get(..n.min(8))?);
            Some(())
        }
        Initializer::List(items) => {
            for it in items {
                init_bytes(it, ty, out)?;
            }
            Some(())
        }
        _ => None,
    }
}

/// Everything decoded from a module.
pub(crate) struct Decoded {
    pub kernels: Vec<Func>,
    pub vars: Vec<ModuleVar>,
}

/// Decodes every kernel of `module`.
pub(crate) fn decode_module(module: &ast::Module) -> Result<Decoded, EmuError> {
    let mut vars = Vec::new();
    let mut var_map = HashMap::new();
    for v in module.variables() {
        let sp = match v.space {
            StateSpace::Global => Space::Global,
            StateSpace::Const => Space::Const,
            // Module-scope .shared variables are handled per kernel.
            _ => continue,
        };
        for d in &v.declarators {
            let size = decl_size(v.ty, v.vector, d);
            let mut init = Vec::new();
            if let Some(i) = &d.init {
                if init_bytes(i, v.ty, &mut init).is_none() {
                    return Err(unsupported(
                        &d.name,
                        None,
                        "unsupported variable initializer",
                    ));
                }
            }
            init.truncate(size as usize);
            var_map.insert(d.name.clone(), (vars.len() as u32, sp));
            vars.push(ModuleVar {
                name: d.name.clone(),
                size,
                init,
            });
        }
    }
    let mut kernels = Vec::new();
    for f in module.functions() {
        if f.kind != ast::FunctionKind::Entry || f.body.is_none() {
            continue;
        }
        kernels.push(decode_kernel(module, &var_map, f)?);
    }
    Ok(Decoded { kernels, vars })
}

fn decode_kernel(
    module: &ast::Module,
    vars: &HashMap<String, (u32, Space)>,
    f: &ast::Function,
) -> Result<Func, EmuError> {
    let mut cx = Ctx {
        module,
        vars,
        code: Vec::new(),
        text: Vec::new(),
        nrows: 0,
        npreds: 0,
        consts: Vec::new(),
        const_map: HashMap::new(),
        pconsts: Vec::new(),
        pconst_map: [NONE; 2],
        shared: 0,
        shared_layout: 0,
        local: 0,
        shared_vars: Vec::new(),
        local_vars: Vec::new(),
        fixups: Vec::new(),
        labels: Vec::new(),
        depth: 0,
        scratch: 0,
        cc: NONE,
    };
    cx.scratch = cx.new_row();
    let mut scope: HashMap<String, Sym> = HashMap::new();
    // Module-scope shared variables.
    for v in module.variables() {
        if matches!(v.space, StateSpace::Shared | StateSpace::SharedCta) {
            for d in &v.declarators {
                cx.declare_mem(&mut scope, v, d, Space::Shared);
            }
        }
    }
    // Kernel parameters.
    let mut params = Vec::new();
    let mut off = 0u32;
    for p in f.params() {
        let elem = p.ty.size_bytes() * p.vector.map_or(1, |v| v.len() as u32);
        let n = p
            .array
            .iter()
            .try_fold(1u64, |acc, d| acc.checked_mul(d.unwrap_or(0)));
        let too_big = || {
            unsupported(
                &f.name,
                None,
                format!("parameter `{}` is too large", p.name),
            )
        };
        let size = n
            .and_then(|n| n.checked_mul(elem as u64))
            .and_then(|s| u32::try_from(s).ok())
            .filter(|s| *s <= 1 << 20)
            .ok_or_else(too_big)?;
        let align = p.align.unwrap_or(elem).clamp(1, 1 << 12);
        off = off.div_ceil(align) * align;
        scope.insert(
            p.name.clone(),
            Sym::Addr {
                space: Space::Param,
                off: off as u64,
            },
        );
        params.push(ParamSlot {
            name: p.name.clone(),
            offset: off,
            size,
        });
        off = off.checked_add(size).ok_or_else(too_big)?;
    }
    let body = f.body.as_deref().unwrap_or(&[]);
    cx.body(&mut scope, body, None, &f.name)?;
    cx.code.push(Inst {
        guard: NONE,
        gneg: false,
        op: Op::Exit,
    });
    cx.text.push("<end of kernel>".into());
    cx.resolve_fixups(&f.name)?;
    Ok(Func {
        name: f.name.clone(),
        packed: rows::pack(&cx.code, cx.nrows),
        code: cx.code,
        text: cx.text,
        nrows: cx.nrows,
        npreds: cx.npreds,
        consts: cx.consts,
        pconsts: cx.pconsts,
        shared_static: u32::try_from(cx.shared).map_err(|_| {
            unsupported(
                &f.name,
                None,
                format!("{} bytes of shared variables", cx.shared),
            )
        })?,
        shared_layout: cx.shared_layout,
        shared_vars: cx.shared_vars,
        local_vars: cx.local_vars,
        local_size: u32::try_from(cx.local.div_ceil(8) * 8).map_err(|_| {
            unsupported(
                &f.name,
                None,
                format!("{} bytes of local variables", cx.local),
            )
        })?,
        params,
        param_size: off,
    })
}

/// The most registers (values and predicates, its inlined callees' included) one kernel may
/// declare. Each is a row of 32 lanes in every resident warp; XLA's kernels declare at most a
/// few thousand (the largest range in this repository's XLA:GPU PTX is `%r<526>`).
pub const MAX_KERNEL_REGISTERS: u64 = 1 << 16;

/// The most instructions one kernel may have once its calls are inlined (XLA's kernels have a
/// few thousand).
pub const MAX_KERNEL_INSTRUCTIONS: u64 = 1 << 21;

/// Where `ret` goes and how callee parameters map, for an inlined body.
struct InlineFrame {
    ret_fixups: Vec<usize>,
}

impl<'m> Ctx<'m> {
    fn new_row(&mut self) -> R {
        self.nrows += 1;
        self.nrows - 1
    }

    fn new_pred(&mut self) -> P {
        self.npreds += 1;
        self.npreds - 1
    }

    fn konst(&mut self, c: ConstSrc) -> R {
        if let Some(r) = self.const_map.get(&c) {
            return *r;
        }
        let r = self.new_row();
        self.consts.push((r, c));
        self.const_map.insert(c, r);
        r
    }

    fn pconst(&mut self, v: bool) -> P {
        let i = v as usize;
        if self.pconst_map[i] == NONE {
            let p = self.new_pred();
            self.pconsts.push((p, v));
            self.pconst_map[i] = p;
        }
        self.pconst_map[i]
    }

    fn declare_mem(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        v: &ast::VarDecl,
        d: &ast::Declarator,
        sp: Space,
    ) {
        let elem = v.ty.size_bytes() as u64 * v.vector.map_or(1, |w| w.len() as u64);
        let align = (v.align.map_or(elem, |a| a as u64)).max(1);
        if sp == Space::Shared && d.array.iter().any(|a| a.is_none()) {
            scope.insert(d.name.clone(), Sym::DynShared);
            return;
        }
        let size = decl_size(v.ty, v.vector, d);
        let align = align.min(1 << 12);
        let place = |cur: &mut u64, redzone: u64| {
            let off = cur.div_ceil(align).saturating_mul(align);
            *cur = off.saturating_add(size).saturating_add(redzone);
            off
        };
        // Variables sit `REDZONE` bytes apart in the emulator's layout, so that running off the
        // end of one faults instead of reaching the next (the declared extent is kept apart).
        let (off, vars) = if sp == Space::Shared {
            place(&mut self.shared, 0);
            (
                place(&mut self.shared_layout, REDZONE),
                &mut self.shared_vars,
            )
        } else {
            (place(&mut self.local, REDZONE), &mut self.local_vars)
        };
        vars.push(VarRegion {
            name: d.name.clone(),
            off,
            size,
        });
        scope.insert(d.name.clone(), Sym::Addr { space: sp, off });
    }

    fn body(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        stmts: &[Statement],
        mut frame: Option<&mut InlineFrame>,
        fname: &str,
    ) -> Result<(), EmuError> {
        let label_scope = self.labels.len();
        self.labels.push(HashMap::new());
        self.walk(scope, stmts, &mut frame, fname, label_scope)
    }

    fn walk(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        stmts: &[Statement],
        frame: &mut Option<&mut InlineFrame>,
        fname: &str,
        label_scope: usize,
    ) -> Result<(), EmuError> {
        for s in stmts {
            match s {
                Statement::Decl(v) => self.decl(scope, v, fname)?,
                Statement::Label(l) => {
                    let pc = self.code.len() as u32;
                    if let Some(m) = self.labels.get_mut(label_scope) {
                        m.insert(l.clone(), pc);
                    }
                }
                Statement::Block(b) => self.walk(scope, b, frame, fname, label_scope)?,
                Statement::Instruction(i) => self.inst(scope, i, frame, fname, label_scope)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn decl(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        v: &ast::VarDecl,
        fname: &str,
    ) -> Result<(), EmuError> {
        match v.space {
            StateSpace::Reg => {
                for d in &v.declarators {
                    // Registers of the whole kernel (its inlined callees included), counted
                    // before any is made: 300 ranges of 65,536 took 46 s and 2.3 GB.
                    let wanted = u64::from(d.range.unwrap_or(1));
                    let declared = u64::from(self.nrows) + u64::from(self.npreds);
                    if declared + wanted > MAX_KERNEL_REGISTERS {
                        return Err(unsupported(
                            fname,
                            None,
                            format!(
                                "declaring {}{} would take the kernel past {MAX_KERNEL_REGISTERS} registers ({declared} declared before it)",
                                d.name,
                                d.range.map(|n| format!("<{n}>")).unwrap_or_default()
                            ),
                        ));
                    }
                    let names: Vec<String> = match d.range {
                        Some(n) => (0..n).map(|k| format!("{}{k}", d.name)).collect(),
                        None => vec![d.name.clone()],
                    };
                    for n in names {
                        let sym = if v.ty == Type::Pred {
                            Sym::Pred(self.new_pred())
                        } else {
                            let bits = v.ty.bits() * v.vector.map_or(1, |w| w.len() as u32);
                            if bits > 64 {
                                return Err(unsupported(
                                    fname,
                                    None,
                                    format!("register {n} wider than 64 bits"),
                                ));
                            }
                            Sym::Val {
                                row: self.new_row(),
                                bits,
                            }
                        };
                        scope.insert(n, sym);
                    }
                }
            }
            StateSpace::Shared | StateSpace::SharedCta => {
                for d in &v.declarators {
                    self.declare_mem(scope, v, d, Space::Shared);
                }
            }
            // Local variables and call-site `.param` variables are per-thread local memory.
            StateSpace::Local | StateSpace::Param => {
                for d in &v.declarators {
                    self.declare_mem(scope, v, d, Space::Local);
                }
            }
            other => {
                return Err(unsupported(
                    fname,
                    None,
                    format!("`.{}` declarations inside a function body", other.as_str()),
                ))
            }
        }
        Ok(())
    }

    fn err(&self, fname: &str, msg: impl Into<String>) -> EmuError {
        unsupported(fname, Some(self.code.len() as u32), msg)
    }

    fn lookup(
        &self,
        scope: &HashMap<String, Sym>,
        name: &str,
        fname: &str,
    ) -> Result<Sym, EmuError> {
        if let Some(s) = scope.get(name) {
            return Ok(*s);
        }
        if let Some((idx, _space)) = self.vars.get(name) {
            return Ok(Sym::ModuleVar { idx: *idx });
        }
        Err(self.err(fname, format!("unknown symbol `{name}`")))
    }

    /// A value operand of the given type → row.
    fn src(
        &mut self,
        scope: &HashMap<String, Sym>,
        o: &Operand,
        ty: Type,
        fname: &str,
    ) -> Result<R, EmuError> {
        match o {
            Operand::Reg(r) => match self.lookup(scope, r.name(), fname)? {
                Sym::Val { row, .. } => Ok(row),
                Sym::Pred(_) => {
                    Err(self.err(fname, format!("predicate {} used as a value", r.name())))
                }
                _ => Err(self.err(fname, format!("{} is not a register", r.name()))),
            },
            Operand::Imm(i) => {
                let bits = match (float_ty(ty), i) {
                    (Some((Fmt::F32, false)), Immediate::F64(b)) => {
                        (f64::from_bits(*b) as f32).to_bits() as u64
                    }
                    (Some((Fmt::F64, false)), Immediate::F32(b)) => {
                        (f32::from_bits(*b) as f64).to_bits()
                    }
                    (Some((f @ (Fmt::F16 | Fmt::Bf16), false)), Immediate::F64(b)) => {
                        f.from_f64_rn(f64::from_bits(*b))
                    }
                    (Some((f @ (Fmt::F16 | Fmt::Bf16), false)), Immediate::F32(b)) => {
                        f.from_f64_rn(f32::from_bits(*b) as f64)
                    }
                    _ => i.bits(),
                };
                Ok(self.konst(ConstSrc::Imm(bits)))
            }
            Operand::Special(s) => Ok(self.konst(ConstSrc::Special(*s))),
            Operand::Symbol { name, offset } => match self.lookup(scope, name, fname)? {
                Sym::Addr { off, .. } => {
                    Ok(self.konst(ConstSrc::Imm(off.wrapping_add(*offset as u64))))
                }
                Sym::ModuleVar { idx, .. } => Ok(self.konst(ConstSrc::ModuleVar(idx, *offset))),
                Sym::DynShared => Ok(self.konst(ConstSrc::DynShared(*offset))),
                Sym::Val { row, .. } => Ok(row),
                _ => Err(self.err(fname, format!("symbol `{name}` has no value"))),
            },
            _ => Err(self.err(fname, "unsupported operand kind")),
        }
    }

    fn dst(
        &mut self,
        scope: &HashMap<String, Sym>,
        o: &Operand,
        fname: &str,
    ) -> Result<R, EmuError> {
        match o {
            Operand::Reg(r) => match self.lookup(scope, r.name(), fname)? {
                Sym::Val { row, .. } => Ok(row),
                _ => Err(self.err(fname, format!("{} is not a value register", r.name()))),
            },
            Operand::Sink => Ok(self.scratch),
            _ => Err(self.err(fname, "destination must be a register")),
        }
    }

    fn pdst(
        &mut self,
        scope: &HashMap<String, Sym>,
        o: &Operand,
        fname: &str,
    ) -> Result<P, EmuError> {
        match o {
            Operand::Reg(r) => match self.lookup(scope, r.name(), fname)? {
                Sym::Pred(p) => Ok(p),
                _ => Err(self.err(fname, format!("{} is not a predicate", r.name()))),
            },
            Operand::Sink => {
                let p = self.new_pred();
                Ok(p)
            }
            _ => Err(self.err(fname, "predicate destination must be a register")),
        }
    }

    fn psrc(
        &mut self,
        scope: &HashMap<String, Sym>,
        o: &Operand,
        fname: &str,
    ) -> Result<(P, bool), EmuError> {
        match o {
            Operand::Reg(r) => match self.lookup(scope, r.name(), fname)? {
                Sym::Pred(p) => Ok((p, false)),
                _ => Err(self.err(fname, format!("{} is not a predicate", r.name()))),
            },
            Operand::Not(r) => match self.lookup(scope, r.name(), fname)? {
                Sym::Pred(p) => Ok((p, true)),
                _ => Err(self.err(fname, format!("{} is not a predicate", r.name()))),
            },
            Operand::Imm(i) => Ok((self.pconst(i.bits() != 0), false)),
            _ => Err(self.err(fname, "predicate operand expected")),
        }
    }

    /// An address operand → (space override from the symbol, the address).
    fn addr(
        &mut self,
        scope: &HashMap<String, Sym>,
        o: &Operand,
        fname: &str,
    ) -> Result<(Option<Space>, Addr), EmuError> {
        let a = match o {
            Operand::Address(a) => a,
            _ => return Err(self.err(fname, "address operand expected")),
        };
        // A register and a symbol resolve alike, but only a symbol may name the dynamic shared
        // memory, and each is refused in its own words.
        let (name, is_reg) = match &a.base {
            AddressBase::Reg(r) => (r.name(), true),
            AddressBase::Symbol(n) => (n.as_str(), false),
            AddressBase::Imm(v) => {
                return Ok((
                    None,
                    Addr {
                        base: NONE,
                        base32: false,
                        off: (*v as i64).wrapping_add(a.offset),
                    },
                ));
            }
        };
        match self.lookup(scope, name, fname)? {
            Sym::Val { row, bits } => Ok((
                None,
                Addr {
                    base: row,
                    base32: bits <= 32,
                    off: a.offset,
                },
            )),
            Sym::Addr { space, off } => Ok((
                Some(space),
                Addr {
                    base: NONE,
                    base32: false,
                    off: (off as i64).wrapping_add(a.offset),
                },
            )),
            Sym::ModuleVar { idx, .. } => {
                let r = self.konst(ConstSrc::ModuleVar(idx, 0));
                Ok((
                    None,
                    Addr {
                        base: r,
                        base32: false,
                        off: a.offset,
                    },
                ))
            }
            Sym::DynShared if !is_reg => {
                let r = self.konst(ConstSrc::DynShared(0));
                Ok((
                    Some(Space::Shared),
                    Addr {
                        base: r,
                        base32: true,
                        off: a.offset,
                    },
                ))
            }
            _ if is_reg => Err(self.err(fname, format!("bad address base {name}"))),
            _ => Err(self.err(fname, format!("bad address symbol `{name}`"))),
        }
    }

    fn operand<'a>(
        &self,
        i: &'a Instruction,
        k: usize,
        fname: &str,
    ) -> Result<&'a Operand, EmuError> {
        i.operands.get(k).ok_or_else(|| {
            self.err(
                fname,
                format!("`{}` needs at least {} operands", i.op.as_str(), k + 1),
            )
        })
    }

    fn push(
        &mut self,
        i: &Instruction,
        scope: &HashMap<String, Sym>,
        op: Op,
        fname: &str,
    ) -> Result<(), EmuError> {
        let (guard, gneg) = match &i.guard {
            Some(g) => match self.lookup(scope, g.reg.name(), fname)? {
                Sym::Pred(p) => (p, g.negated),
                _ => return Err(self.err(fname, "guard is not a predicate")),
            },
            None => (NONE, false),
        };
        self.code.push(Inst { guard, gneg, op });
        self.text.push(inst_text(i));
        Ok(())
    }

    fn resolve_fixups(&mut self, fname: &str) -> Result<(), EmuError> {
        for (pc, sc, label) in std::mem::take(&mut self.fixups) {
            let target = self
                .labels
                .get(sc)
                .and_then(|m| m.get(&label))
                .copied()
                .ok_or_else(|| {
                    unsupported(fname, Some(pc as u32), format!("unknown label `{label}`"))
                })?;
            if let Some(Inst {
                op: Op::Bra { target: t },
                ..
            }) = self.code.get_mut(pc)
            {
                *t = target;
            }
        }
        Ok(())
    }
}
