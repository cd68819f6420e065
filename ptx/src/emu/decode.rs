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
use std::collections::HashMap;

use crate::ast::{
    self, AddressBase, BoolOp, CmpOp, Immediate, Initializer, Instruction, Modifier, Opcode,
    Operand, ReduceOp, Rounding, ShflMode, SpecialReg, StateSpace, Statement, TestpClass, Type,
    VoteMode,
};

use super::error::EmuError;
use super::numeric::{Approx, Cmp, FOp, Fmt, IRnd, IntTy, PrmtMode, Rnd, TestP};

/// Row index into the per-warp register file.
pub(crate) type R = u32;
/// Index into the per-warp predicate file.
pub(crate) type P = u32;
/// "No register" marker.
pub(crate) const NONE: u32 = u32::MAX;

/// Memory state space of an access after decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sp {
    Global,
    Shared,
    Local,
    /// Kernel parameter buffer (read-only).
    Param,
    Const,
    Generic,
}

/// Integer binary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IOp {
    Add,
    Sub,
    MulLo,
    MulHi,
    MulWide,
    Min,
    Max,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    AddSat,
    SubSat,
    /// `mul24.lo` / `mad24.lo`.
    Mul24Lo,
    /// `mul24.hi` / `mad24.hi`.
    Mul24Hi,
    /// `|a - b|` (`sad`).
    AbsDiff,
}

/// Integer unary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IUn {
    Neg,
    Abs,
    Not,
    Cnot,
    Popc,
    Clz,
    Brev,
    Bfind { shiftamt: bool },
}

/// Float unary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FUn {
    Neg,
    Abs,
    Sqrt(Rnd),
    Rcp(Rnd),
    Approx(Approx),
}

/// Conversions of `cvt`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Conv {
    I2I {
        from: IntTy,
        to: IntTy,
        sat: bool,
    },
    F2I {
        from: Fmt,
        ftz: bool,
        rnd: IRnd,
        to: IntTy,
    },
    I2F {
        from: IntTy,
        to: Fmt,
        rnd: Rnd,
        sat: bool,
    },
    F2F {
        from: Fmt,
        to: Fmt,
        rnd: Rnd,
        irnd: Option<IRnd>,
        ftz: bool,
        sat: bool,
    },
}

/// Atomic operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

/// Value type of an atomic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AKind {
    Int(IntTy),
    Float(Fmt),
    /// Packed pair of 16-bit floats.
    Packed(Fmt),
}

/// Comparison kind of `setp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpKind {
    Int(IntTy),
    Float(Fmt),
}

/// Boolean operator for predicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PBool {
    And,
    Or,
    Xor,
}

/// Warp-level reduction of `redux.sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// A decoded operation. Register operands are rows, predicates are predicate indices.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    Nop,
    Mov {
        d: R,
        a: R,
    },
    PMov {
        d: P,
        a: P,
        neg: bool,
    },
    PBin {
        op: PBool,
        d: P,
        a: P,
        an: bool,
        b: P,
        bn: bool,
    },
    /// `mov.b64 d, {a, b}`: parts little-endian, `bits` each.
    Pack {
        d: R,
        parts: [R; 4],
        n: u8,
        bits: u8,
    },
    /// `mov.b64 {a, b}, s`.
    Unpack {
        ds: [R; 4],
        n: u8,
        bits: u8,
        a: R,
    },
    IBin {
        op: IOp,
        ty: IntTy,
        d: R,
        a: R,
        b: R,
    },
    IUn {
        op: IUn,
        ty: IntTy,
        d: R,
        a: R,
    },
    /// `mad.lo/hi/wide` (`mode` as IOp::MulLo/MulHi/MulWide), `.sat` for `mad.hi.sat.s32`.
    Mad {
        mode: IOp,
        ty: IntTy,
        d: R,
        a: R,
        b: R,
        c: R,
    },
    Bfe {
        ty: IntTy,
        d: R,
        a: R,
        b: R,
        c: R,
    },
    Bfi {
        bits: u32,
        d: R,
        a: R,
        b: R,
        c: R,
        e: R,
    },
    Prmt {
        mode: PrmtMode,
        d: R,
        a: R,
        b: R,
        c: R,
    },
    Lop3 {
        d: R,
        a: R,
        b: R,
        c: R,
        lut: u8,
    },
    Shf {
        left: bool,
        clamp: bool,
        d: R,
        a: R,
        b: R,
        c: R,
    },
    FBin {
        op: FOp,
        fmt: Fmt,
        packed: bool,
        rnd: Rnd,
        ftz: bool,
        sat: bool,
        d: R,
        a: R,
        b: R,
    },
    FMinMax {
        max: bool,
        fmt: Fmt,
        packed: bool,
        ftz: bool,
        nan: bool,
        d: R,
        a: R,
        b: R,
    },
    Fma {
        fmt: Fmt,
        packed: bool,
        rnd: Rnd,
        ftz: bool,
        sat: bool,
        d: R,
        a: R,
        b: R,
        c: R,
    },
    FUn {
        op: FUn,
        fmt: Fmt,
        packed: bool,
        ftz: bool,
        d: R,
        a: R,
    },
    Copysign {
        fmt: Fmt,
        d: R,
        a: R,
        b: R,
    },
    Testp {
        t: TestP,
        fmt: Fmt,
        d: P,
        a: R,
    },
    Setp {
        cmp: Cmp,
        kind: CmpKind,
        ftz: bool,
        d: P,
        dn: P,
        a: R,
        b: R,
        comb: Option<(PBool, P, bool)>,
    },
    /// `set.cmp.dtype.stype`: all ones / 1.0 when true.
    Set {
        cmp: Cmp,
        kind: CmpKind,
        ftz: bool,
        float_out: bool,
        d: R,
        a: R,
        b: R,
    },
    Selp {
        d: R,
        a: R,
        b: R,
        p: P,
        pn: bool,
    },
    Cvt {
        conv: Conv,
        d: R,
        a: R,
    },
    /// `cvt.rn.f16x2.f32 d, a, b`: `d = {cvt(a) (high), cvt(b) (low)}`.
    CvtPack {
        fmt: Fmt,
        rnd: Rnd,
        d: R,
        a: R,
        b: R,
    },
    /// Generic ↔ state-space address (`to` = generic → space).
    Cvta {
        to: bool,
        space: Sp,
        bits: u8,
        d: R,
        a: R,
    },
    /// `ld`: `n` elements of `size` bytes into `ds`; `sext` sign-extends from the element size.
    Ld {
        space: Sp,
        size: u8,
        n: u8,
        sext: bool,
        ds: [R; 4],
        base: R,
        base32: bool,
        off: i64,
    },
    St {
        space: Sp,
        size: u8,
        n: u8,
        ss: [R; 4],
        base: R,
        base32: bool,
        off: i64,
    },
    Atom {
        space: Sp,
        op: AOp,
        kind: AKind,
        d: R,
        base: R,
        base32: bool,
        off: i64,
        b: R,
        c: R,
    },
    Bra {
        target: u32,
    },
    Exit,
    /// `bar.sync`/`barrier.sync` (arrive = false) or `bar.arrive`.
    Bar {
        id: R,
        count: R,
        arrive: bool,
    },
    Shfl {
        mode: ShflMode,
        d: R,
        p: P,
        a: R,
        b: R,
        c: R,
    },
    Vote {
        mode: VoteMode,
        d: R,
        dp: P,
        a: P,
        an: bool,
    },
    Activemask {
        d: R,
    },
    MatchAny {
        d: R,
        a: R,
        bits: u8,
    },
    MatchAll {
        d: R,
        p: P,
        a: R,
        bits: u8,
    },
    Redux {
        op: ReduxOp,
        signed: bool,
        d: R,
        a: R,
    },
    /// `slct`: `d = c >= 0 ? a : b` (`cf`: float comparison operand, NaN selects `b`).
    Slct {
        cf: Option<Fmt>,
        ftz: bool,
        d: R,
        a: R,
        b: R,
        c: R,
    },
    /// Extended-precision `add.cc addc sub.cc subc mad.cc madc` (`mul` = NONE for add/sub,
    /// else `d = a * b (lo or hi) + c`); the carry flag CC.CF is predicate `cc`.
    Carry {
        sub: bool,
        hi: bool,
        carry_in: bool,
        carry_out: bool,
        ty: IntTy,
        d: R,
        a: R,
        b: R,
        c: R,
        cc: P,
    },
    Trap,
}

/// One decoded instruction.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Inst {
    /// Guard predicate (NONE = unguarded).
    pub guard: P,
    /// `@!p`.
    pub gneg: bool,
    /// The operation.
    pub op: Op,
}

/// Source of a constant row's value, filled when a warp starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ConstSrc {
    Imm(u64),
    Special(SpecialReg),
    /// Device address of module variable `idx` plus offset.
    ModuleVar(u32, i64),
    /// Shared-space address of the dynamic shared memory (after all static shared variables,
    /// 16-byte aligned) plus offset.
    DynShared(i64),
}

/// A module-scope `.global` / `.const` variable.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModuleVar {
    pub name: String,
    pub size: u64,
    pub init: Vec<u8>,
}

/// A kernel parameter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParamSlot {
    pub name: String,
    pub offset: u32,
    pub size: u32,
}

/// A decoded function (kernels after inlining every call).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Func {
    pub name: String,
    pub code: Vec<Inst>,
    /// Printed text of each instruction, for error messages.
    pub text: Vec<String>,
    pub nrows: u32,
    pub npreds: u32,
    pub consts: Vec<(R, ConstSrc)>,
    pub pconsts: Vec<(P, bool)>,
    pub shared_static: u32,
    pub local_size: u32,
    pub params: Vec<ParamSlot>,
    pub param_size: u32,
}

#[derive(Debug, Clone, Copy)]
enum Sym {
    Val {
        row: R,
        bits: u32,
    },
    Pred(P),
    /// Address in a state space (shared/local/kernel param offsets).
    Addr {
        space: Sp,
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
    vars: &'m HashMap<String, (u32, Sp)>,
    code: Vec<Inst>,
    text: Vec<String>,
    nrows: u32,
    npreds: u32,
    consts: Vec<(R, ConstSrc)>,
    const_map: HashMap<ConstSrc, R>,
    pconsts: Vec<(P, bool)>,
    pconst_map: [P; 2],
    shared: u64,
    local: u64,
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

fn space_of(s: StateSpace) -> Option<Sp> {
    Some(match s {
        StateSpace::Global => Sp::Global,
        StateSpace::Shared | StateSpace::SharedCta => Sp::Shared,
        StateSpace::Local => Sp::Local,
        StateSpace::Param | StateSpace::ParamEntry | StateSpace::ParamFunc => Sp::Param,
        StateSpace::Const => Sp::Const,
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
            StateSpace::Global => Sp::Global,
            StateSpace::Const => Sp::Const,
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
    vars: &HashMap<String, (u32, Sp)>,
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
        local: 0,
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
                cx.declare_mem(&mut scope, v, d, Sp::Shared);
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
                space: Sp::Param,
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
        sp: Sp,
    ) {
        let elem = v.ty.size_bytes() as u64 * v.vector.map_or(1, |w| w.len() as u64);
        let align = (v.align.map_or(elem, |a| a as u64)).max(1);
        if sp == Sp::Shared && d.array.iter().any(|a| a.is_none()) {
            scope.insert(d.name.clone(), Sym::DynShared);
            return;
        }
        let size = decl_size(v.ty, v.vector, d);
        let cur = if sp == Sp::Shared {
            &mut self.shared
        } else {
            &mut self.local
        };
        let align = align.min(1 << 12);
        let off = cur.div_ceil(align).saturating_mul(align);
        *cur = off.saturating_add(size);
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
        self.collect_labels(stmts, label_scope);
        self.walk(scope, stmts, &mut frame, fname, label_scope)
    }

    fn collect_labels(&mut self, stmts: &[Statement], label_scope: usize) {
        // Labels are resolved by fixups after the body is emitted; here only reserve the scope.
        let _ = (stmts, label_scope);
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
                    let names: Vec<String> = match d.range {
                        Some(n) if n > 1 << 16 => {
                            return Err(unsupported(
                                fname,
                                None,
                                format!("register range {}<{n}> is too large", d.name),
                            ))
                        }
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
                    self.declare_mem(scope, v, d, Sp::Shared);
                }
            }
            // Local variables and call-site `.param` variables are per-thread local memory.
            StateSpace::Local | StateSpace::Param => {
                for d in &v.declarators {
                    self.declare_mem(scope, v, d, Sp::Local);
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

    /// An address operand → (space override from the symbol, base row, base is 32-bit, offset).
    fn addr(
        &mut self,
        scope: &HashMap<String, Sym>,
        o: &Operand,
        fname: &str,
    ) -> Result<(Option<Sp>, R, bool, i64), EmuError> {
        let a = match o {
            Operand::Address(a) => a,
            _ => return Err(self.err(fname, "address operand expected")),
        };
        match &a.base {
            AddressBase::Reg(r) => match self.lookup(scope, r.name(), fname)? {
                Sym::Val { row, bits } => Ok((None, row, bits <= 32, a.offset)),
                Sym::Addr { space, off } => Ok((
                    Some(space),
                    NONE,
                    false,
                    (off as i64).wrapping_add(a.offset),
                )),
                Sym::ModuleVar { idx, .. } => {
                    let r = self.konst(ConstSrc::ModuleVar(idx, 0));
                    Ok((None, r, false, a.offset))
                }
                _ => Err(self.err(fname, format!("bad address base {}", r.name()))),
            },
            AddressBase::Symbol(n) => match self.lookup(scope, n, fname)? {
                Sym::Addr { space, off } => Ok((
                    Some(space),
                    NONE,
                    false,
                    (off as i64).wrapping_add(a.offset),
                )),
                Sym::ModuleVar { idx, .. } => {
                    let r = self.konst(ConstSrc::ModuleVar(idx, 0));
                    Ok((None, r, false, a.offset))
                }
                Sym::Val { row, bits } => Ok((None, row, bits <= 32, a.offset)),
                Sym::DynShared => {
                    let r = self.konst(ConstSrc::DynShared(0));
                    Ok((Some(Sp::Shared), r, true, a.offset))
                }
                _ => Err(self.err(fname, format!("bad address symbol `{n}`"))),
            },
            AddressBase::Imm(v) => Ok((None, NONE, false, (*v as i64).wrapping_add(a.offset))),
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

    fn inst(
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
        let op = match i.op {
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
            O::Ld | O::Ldu | O::St => {
                let is_st = i.op == O::St;
                let (ao, vo) = if is_st {
                    (self.operand(i, 0, fname)?, self.operand(i, 1, fname)?)
                } else {
                    (self.operand(i, 1, fname)?, self.operand(i, 0, fname)?)
                };
                let (sym_space, base, base32, off) = self.addr(scope, ao, fname)?;
                let decl_space = i
                    .state_space()
                    .map(|s| space_of(s).unwrap_or(Sp::Generic))
                    .unwrap_or(Sp::Generic);
                // A symbol's own space wins over generic; kernel params are in Sp::Param, call-site
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
                    Op::St {
                        space,
                        size: size as u8,
                        n: n as u8,
                        ss: regs,
                        base,
                        base32,
                        off,
                    }
                } else {
                    Op::Ld {
                        space,
                        size: size as u8,
                        n: n as u8,
                        sext: t.is_signed(),
                        ds: regs,
                        base,
                        base32,
                        off,
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
                let (sym_space, base, base32, off) =
                    self.addr(scope, self.operand(i, k0, fname)?, fname)?;
                let space = sym_space
                    .unwrap_or_else(|| i.state_space().and_then(space_of).unwrap_or(Sp::Generic));
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
                    base,
                    base32,
                    off,
                    b,
                    c,
                }
            }
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
            O::Call => return self.call(scope, i, fname),
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
            O::Addc | O::Subc | O::Madc => {
                return self.carry(scope, i, fname, true);
            }
            other => {
                return Err(self.err(
                    fname,
                    format!("instruction `{}` is not supported", other.as_str()),
                ))
            }
        };
        self.push(i, scope, op, fname)
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

    /// Inlines `call (rets), f, (args);`.
    fn call(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        fname: &str,
    ) -> Result<(), EmuError> {
        if i.guard.is_some() {
            return Err(self.err(fname, "guarded calls are not supported"));
        }
        let mut ops = i.operands.iter();
        let mut rets: Vec<&Operand> = Vec::new();
        let mut first = ops.next();
        if let Some(Operand::List(r)) = first {
            rets = r.iter().collect();
            first = ops.next();
        }
        let callee_name = match first {
            Some(Operand::Symbol { name, .. }) => name.clone(),
            _ => return Err(self.err(fname, "indirect calls are not supported")),
        };
        let args: Vec<&Operand> = match ops.next() {
            Some(Operand::List(a)) => a.iter().collect(),
            None => Vec::new(),
            Some(o) => vec![o],
        };
        let callee = self
            .module
            .function(&callee_name)
            .filter(|f| f.body.is_some())
            .ok_or_else(|| {
                self.err(fname, format!("call of `{callee_name}`, which has no body"))
            })?;
        if self.depth >= 16 {
            return Err(self.err(
                fname,
                format!("call depth limit reached calling `{callee_name}` (recursion?)"),
            ));
        }
        // Callee scope: module symbols only, plus parameters bound to the caller's slots.
        let mut cscope: HashMap<String, Sym> = HashMap::new();
        for (k, p) in callee.params().iter().enumerate() {
            let sym = match args.get(k) {
                Some(Operand::Symbol { name, .. })
                | Some(Operand::Address(ast::Address {
                    base: AddressBase::Symbol(name),
                    ..
                })) => self.lookup(scope, name, fname)?,
                Some(Operand::Reg(r)) if p.space == StateSpace::Reg => {
                    self.lookup(scope, r.name(), fname)?
                }
                _ => {
                    return Err(self.err(
                        fname,
                        format!("unsupported argument {k} of call to `{callee_name}`"),
                    ))
                }
            };
            cscope.insert(p.name.clone(), sym);
        }
        for (k, p) in callee
            .return_params
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let sym = match rets.get(k) {
                Some(Operand::Symbol { name, .. }) => self.lookup(scope, name, fname)?,
                Some(Operand::Reg(r)) if p.space == StateSpace::Reg => {
                    self.lookup(scope, r.name(), fname)?
                }
                _ => {
                    return Err(self.err(
                        fname,
                        format!("unsupported return value {k} of call to `{callee_name}`"),
                    ))
                }
            };
            cscope.insert(p.name.clone(), sym);
        }
        // Module-scope shared variables stay visible.
        for (name, sym) in scope.iter() {
            if matches!(
                sym,
                Sym::Addr {
                    space: Sp::Shared,
                    ..
                }
            ) && !cscope.contains_key(name)
            {
                cscope.insert(name.clone(), *sym);
            }
        }
        self.depth += 1;
        let mut frame = InlineFrame {
            ret_fixups: Vec::new(),
        };
        let body = callee.body.as_deref().unwrap_or(&[]);
        self.body(&mut cscope, body, Some(&mut frame), &callee.name)?;
        self.depth -= 1;
        let end = self.code.len() as u32;
        for pc in frame.ret_fixups {
            if let Some(Inst {
                op: Op::Bra { target },
                ..
            }) = self.code.get_mut(pc)
            {
                *target = end;
            }
        }
        Ok(())
    }
}
