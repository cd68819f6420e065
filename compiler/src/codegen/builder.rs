//! A small typed PTX builder on top of [`ptx::ast`]: virtual registers of six classes, labels,
//! typed instructions, and assembly of a one-kernel module. No PTX text is ever formatted here;
//! the module is printed with [`ptx::print`].
use ptx::{
    Address, AddressBase, Declarator, Directive, Function, FunctionKind, Guard, Immediate,
    Initializer, Instruction, Linkage, Modifier, Module, Opcode, Operand, Param, Register,
    Rounding, SpecialReg, StateSpace, Statement, Target, Type, VarDecl, Version,
};

/// Register classes (one `.reg` declaration each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegKind {
    /// `.pred`
    Pred,
    /// `.b16`
    B16,
    /// `.b32`
    B32,
    /// `.b64`
    B64,
    /// `.f32`
    F32,
    /// `.f64`
    F64,
}

const KINDS: [(RegKind, Type, &str); 6] = [
    (RegKind::Pred, Type::Pred, "%p"),
    (RegKind::B16, Type::B16, "%h"),
    (RegKind::B32, Type::B32, "%r"),
    (RegKind::B64, Type::B64, "%rd"),
    (RegKind::F32, Type::F32, "%f"),
    (RegKind::F64, Type::F64, "%fd"),
];

impl RegKind {
    fn slot(self) -> usize {
        match self {
            RegKind::Pred => 0,
            RegKind::B16 => 1,
            RegKind::B32 => 2,
            RegKind::B64 => 3,
            RegKind::F32 => 4,
            RegKind::F64 => 5,
        }
    }

    /// The register class holding values of a PTX type.
    pub fn of(ty: Type) -> RegKind {
        match ty {
            Type::Pred => RegKind::Pred,
            Type::F32 => RegKind::F32,
            Type::F64 => RegKind::F64,
            t if t.bits() == 64 => RegKind::B64,
            t if t.bits() <= 16 && !matches!(t, Type::U8 | Type::S8 | Type::B8) => RegKind::B16,
            _ => RegKind::B32,
        }
    }
}

/// A virtual register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reg {
    /// Its class.
    pub kind: RegKind,
    /// Number within the class.
    pub id: u32,
}

impl Reg {
    /// The PTX register name (`%r7`).
    pub fn name(&self) -> String {
        format!("{}{}", KINDS[self.kind.slot()].2, self.id)
    }

    pub(crate) fn reg(&self) -> Register {
        Register(self.name())
    }
}

/// A source operand: a register or an immediate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Src {
    /// A register.
    R(Reg),
    /// A signed integer immediate.
    I(i64),
    /// An f32 immediate.
    F32(f32),
    /// An f64 immediate.
    F64(f64),
}

impl From<Reg> for Src {
    fn from(r: Reg) -> Src {
        Src::R(r)
    }
}

impl From<&Reg> for Src {
    fn from(r: &Reg) -> Src {
        Src::R(*r)
    }
}

impl Src {
    fn operand(self) -> Operand {
        match self {
            Src::R(r) => Operand::Reg(r.reg()),
            Src::I(v) => Operand::Imm(Immediate::Int(v)),
            Src::F32(v) => Operand::Imm(Immediate::F32(v.to_bits())),
            Src::F64(v) => Operand::Imm(Immediate::F64(v.to_bits())),
        }
    }
}

/// Shorthand for a type modifier.
pub fn t(ty: Type) -> Modifier {
    Modifier::Type(ty)
}

/// Shorthand for `.rn`.
pub const RN: Modifier = Modifier::Rounding(Rounding::Rn);

/// Builds the body of one kernel.
#[derive(Debug, Default)]
pub struct Builder {
    body: Vec<Statement>,
    counts: [u32; 6],
    labels: u32,
    prefix: String,
    /// The target has `min.NaN`/`max.NaN` on f32 (sm_80 and later, PTX ISA 7.0): a
    /// NaN-propagating minimum or maximum is one instruction instead of five.
    pub nan_minmax: bool,
}

impl Builder {
    /// A builder whose labels start with `prefix` (a valid identifier fragment).
    pub fn new(prefix: &str) -> Builder {
        Builder {
            prefix: prefix.to_string(),
            ..Builder::default()
        }
    }

    /// A fresh register.
    pub fn reg(&mut self, kind: RegKind) -> Reg {
        let slot = kind.slot();
        let id = self.counts[slot];
        self.counts[slot] += 1;
        Reg { kind, id }
    }

    /// A fresh label name.
    pub fn label(&mut self) -> String {
        self.labels += 1;
        format!("$L_{}_{}", self.prefix, self.labels)
    }

    /// Places a label.
    pub fn place(&mut self, label: &str) {
        self.body.push(Statement::Label(label.to_string()));
    }

    /// Emits a raw instruction.
    pub fn raw(
        &mut self,
        guard: Option<(Reg, bool)>,
        op: Opcode,
        mods: Vec<Modifier>,
        ops: Vec<Operand>,
    ) {
        let mut i = Instruction::new(op, mods, ops);
        i.guard = guard.map(|(r, negated)| Guard {
            negated,
            reg: r.reg(),
        });
        self.body.push(Statement::Instruction(i));
    }

    /// `op.mods dst, srcs...` with a fresh destination of the class of `dst_ty`.
    pub fn op(&mut self, op: Opcode, mods: Vec<Modifier>, dst_ty: Type, srcs: &[Src]) -> Reg {
        let d = self.reg(RegKind::of(dst_ty));
        self.op_to(d, op, mods, srcs);
        d
    }

    /// `op.mods dst, srcs...` into an existing register.
    pub fn op_to(&mut self, dst: Reg, op: Opcode, mods: Vec<Modifier>, srcs: &[Src]) {
        let mut ops = vec![Operand::Reg(dst.reg())];
        ops.extend(srcs.iter().map(|s| s.operand()));
        self.raw(None, op, mods, ops);
    }

    /// `mov.ty dst, src` into an existing register.
    pub fn mov_to(&mut self, dst: Reg, ty: Type, src: Src) {
        self.op_to(dst, Opcode::Mov, vec![t(ty)], &[src]);
    }

    /// `mov.ty` into a fresh register.
    pub fn mov(&mut self, ty: Type, src: Src) -> Reg {
        self.op(Opcode::Mov, vec![t(ty)], ty, &[src])
    }

    /// A two-operand arithmetic instruction with optional extra modifiers before the type.
    pub fn bin(&mut self, op: Opcode, pre: &[Modifier], ty: Type, a: Src, b: Src) -> Reg {
        let mut mods = pre.to_vec();
        mods.push(t(ty));
        self.op(op, mods, ty, &[a, b])
    }

    /// `mul.lo.<ty> d, a, b`: the low half of an integer product, as index arithmetic wants it.
    pub fn mul_lo(&mut self, ty: Type, a: Src, b: Src) -> Reg {
        self.bin(Opcode::Mul, &[Modifier::Lo], ty, a, b)
    }

    /// A one-operand instruction.
    pub fn un(&mut self, op: Opcode, pre: &[Modifier], ty: Type, a: Src) -> Reg {
        let mut mods = pre.to_vec();
        mods.push(t(ty));
        self.op(op, mods, ty, &[a])
    }

    /// `setp.cmp.ty p, a, b`.
    pub fn setp(&mut self, cmp: ptx::CmpOp, ty: Type, a: Src, b: Src) -> Reg {
        self.op(
            Opcode::Setp,
            vec![Modifier::Cmp(cmp), t(ty)],
            Type::Pred,
            &[a, b],
        )
    }

    /// `selp.ty d, a, b, p`.
    pub fn selp(&mut self, ty: Type, a: Src, b: Src, p: Reg) -> Reg {
        self.op(Opcode::Selp, vec![t(ty)], ty, &[a, b, Src::R(p)])
    }

    /// `cvt{.mods}.dst.src`.
    pub fn cvt(&mut self, round: Option<Rounding>, dst: Type, src: Type, a: Src) -> Reg {
        let mut mods = Vec::new();
        if let Some(r) = round {
            mods.push(Modifier::Rounding(r));
        }
        mods.push(t(dst));
        mods.push(t(src));
        self.op(Opcode::Cvt, mods, dst, &[a])
    }

    /// `fma.rn.ty d, a, b, c`.
    pub fn fma(&mut self, ty: Type, a: Src, b: Src, c: Src) -> Reg {
        self.op(Opcode::Fma, vec![RN, t(ty)], ty, &[a, b, c])
    }

    /// `mad.lo.u32 d, a, b, c` (`a * b + c` in 32 bits): a global thread number, a row's slot.
    pub fn mad_lo_u32(&mut self, a: Src, b: Src, c: Src) -> Reg {
        self.op(
            Opcode::Mad,
            vec![Modifier::Lo, t(Type::U32)],
            Type::U32,
            &[a, b, c],
        )
    }

    /// `mul.wide.u32 d, a, b`: a 32-bit index times an element size, as a 64-bit byte offset.
    pub fn mul_wide_u32(&mut self, a: Src, b: Src) -> Reg {
        self.op(
            Opcode::Mul,
            vec![Modifier::Wide, t(Type::U32)],
            Type::U64,
            &[a, b],
        )
    }

    /// `add.u32 dst, a, b` into an existing register: the step of a loop counter.
    pub fn add_u32_to(&mut self, dst: Reg, a: Src, b: Src) {
        self.op_to(dst, Opcode::Add, vec![t(Type::U32)], &[a, b]);
    }

    /// `and/or/xor/not` on predicates.
    pub fn pand(&mut self, a: Reg, b: Reg) -> Reg {
        self.bin(Opcode::And, &[], Type::Pred, a.into(), b.into())
    }

    /// `acc && c` for a conjunction built one condition at a time (per dimension, say): just
    /// `c` for the first, so a rank-1 guard costs no `and`.
    pub fn pand_acc(&mut self, acc: Option<Reg>, c: Reg) -> Reg {
        match acc {
            Some(p) => self.pand(p, c),
            None => c,
        }
    }

    /// `or.pred`.
    pub fn por(&mut self, a: Reg, b: Reg) -> Reg {
        self.bin(Opcode::Or, &[], Type::Pred, a.into(), b.into())
    }

    /// `not.pred`.
    pub fn pnot(&mut self, a: Reg) -> Reg {
        self.un(Opcode::Not, &[], Type::Pred, a.into())
    }

    /// `bra label`, optionally guarded by `p` (negated when `neg`).
    pub fn bra(&mut self, guard: Option<(Reg, bool)>, label: &str) {
        self.raw(
            guard,
            Opcode::Bra,
            vec![Modifier::Uni],
            vec![Operand::symbol(label)],
        );
    }

    /// Guarded branch without `.uni` (divergent).
    pub fn bra_div(&mut self, p: Reg, negated: bool, label: &str) {
        self.raw(
            Some((p, negated)),
            Opcode::Bra,
            vec![],
            vec![Operand::symbol(label)],
        );
    }

    /// Reads a special register into a fresh `.b32` register.
    pub fn special(&mut self, s: SpecialReg) -> Reg {
        let d = self.reg(RegKind::B32);
        self.raw(
            None,
            Opcode::Mov,
            vec![t(Type::U32)],
            vec![Operand::Reg(d.reg()), Operand::Special(s)],
        );
        d
    }

    /// `ld.space.ty d, [addr]` into a fresh register of class `kind`.
    pub fn ld(&mut self, space: StateSpace, ty: Type, kind: RegKind, addr: Reg) -> Reg {
        self.ld_at(space, ty, kind, addr, 0)
    }

    /// `ld.space.ty d, [addr + offset]` into a fresh register of class `kind`: elements at
    /// fixed distances from one pointer (a thread's consecutive elements of a row) cost no
    /// address arithmetic each.
    pub fn ld_at(
        &mut self,
        space: StateSpace,
        ty: Type,
        kind: RegKind,
        addr: Reg,
        offset: i64,
    ) -> Reg {
        let d = self.reg(kind);
        self.raw(
            None,
            Opcode::Ld,
            vec![Modifier::Space(space), t(ty)],
            vec![
                Operand::Reg(d.reg()),
                Operand::Address(Address {
                    base: AddressBase::Reg(addr.reg()),
                    offset,
                }),
            ],
        );
        d
    }

    /// `st.space.ty [addr], v`.
    pub fn st(&mut self, space: StateSpace, ty: Type, addr: Reg, v: Reg) {
        self.raw(
            None,
            Opcode::St,
            vec![Modifier::Space(space), t(ty)],
            vec![
                Operand::Address(Address {
                    base: AddressBase::Reg(addr.reg()),
                    offset: 0,
                }),
                Operand::Reg(v.reg()),
            ],
        );
    }

    /// `ld.param.u64` of a kernel parameter, converted to a global address.
    pub fn param_ptr(&mut self, name: &str) -> Reg {
        let d = self.reg(RegKind::B64);
        self.raw(
            None,
            Opcode::Ld,
            vec![Modifier::Space(StateSpace::Param), t(Type::U64)],
            vec![Operand::Reg(d.reg()), Operand::addr_symbol(name, 0)],
        );
        let g = self.reg(RegKind::B64);
        self.raw(
            None,
            Opcode::Cvta,
            vec![
                Modifier::To,
                Modifier::Space(StateSpace::Global),
                t(Type::U64),
            ],
            vec![Operand::Reg(g.reg()), Operand::Reg(d.reg())],
        );
        g
    }

    /// The address of a module or shared variable.
    pub fn symbol_addr(&mut self, name: &str) -> Reg {
        let d = self.reg(RegKind::B64);
        self.raw(
            None,
            Opcode::Mov,
            vec![t(Type::U64)],
            vec![Operand::Reg(d.reg()), Operand::symbol(name)],
        );
        d
    }

    /// `bar.sync 0`.
    pub fn barrier(&mut self) {
        self.raw(
            None,
            Opcode::Bar,
            vec![Modifier::Sync],
            vec![Operand::Imm(Immediate::Int(0))],
        );
    }

    /// Assembles the kernel into a complete module and prints it.
    pub fn finish(
        mut self,
        name: &str,
        params: &[String],
        globals: Vec<VarDecl>,
        shared_bytes: u64,
        target: &super::CodegenTarget,
    ) -> String {
        self.raw(None, Opcode::Ret, vec![], vec![]);
        let mut body = Vec::new();
        if shared_bytes > 0 {
            body.push(Statement::Decl(VarDecl::bytes(
                StateSpace::Shared,
                8,
                SHARED_NAME,
                Some(shared_bytes),
            )));
        }
        for (kind, ty, prefix) in KINDS {
            let n = self.counts[kind.slot()];
            if n > 0 {
                body.push(Statement::Decl(VarDecl::regs(ty, prefix, n)));
            }
        }
        super::fold_copies::fold_copies(&mut self.body);
        remove_dead(&mut self.body);
        body.append(&mut self.body);
        let func = Function {
            linkage: Some(Linkage::Visible),
            kind: FunctionKind::Entry,
            return_params: None,
            name: name.to_string(),
            params: Some(
                params
                    .iter()
                    .map(|p| Param {
                        space: StateSpace::Param,
                        align: None,
                        vector: None,
                        ty: Type::U64,
                        ptr: None,
                        name: p.clone(),
                        array: Vec::new(),
                    })
                    .collect(),
            ),
            perf: Vec::new(),
            body: Some(body),
        };
        let mut directives: Vec<Directive> = globals.into_iter().map(Directive::Variable).collect();
        directives.push(Directive::Function(func));
        let module = Module {
            version: Version {
                major: target.ptx_version.0,
                minor: target.ptx_version.1,
            },
            target: Target {
                arch: target.target_name(),
                options: Vec::new(),
            },
            address_size: Some(64),
            directives,
        };
        ptx::print(&module)
    }
}

/// Opcodes that only write their destination register: one whose result no instruction reads
/// can go.
pub(super) const PURE: &[Opcode] = &[
    Opcode::Add,
    Opcode::Sub,
    Opcode::Mul,
    Opcode::Mad,
    Opcode::Div,
    Opcode::Rem,
    Opcode::Abs,
    Opcode::Neg,
    Opcode::Min,
    Opcode::Max,
    Opcode::And,
    Opcode::Or,
    Opcode::Xor,
    Opcode::Not,
    Opcode::Shl,
    Opcode::Shr,
    Opcode::Fma,
    Opcode::Setp,
    Opcode::Selp,
    Opcode::Mov,
    Opcode::Cvta,
    Opcode::Cvt,
];

/// Every register an operand reads or writes.
fn operand_regs<'a>(o: &'a Operand, out: &mut std::collections::HashSet<&'a str>) {
    match o {
        Operand::Reg(r) | Operand::Not(r) => {
            out.insert(r.0.as_str());
        }
        Operand::Address(a) => {
            if let AddressBase::Reg(r) = &a.base {
                out.insert(r.0.as_str());
            }
        }
        Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|o| operand_regs(o, out)),
        Operand::Pair(a, r) => {
            operand_regs(a, out);
            out.insert(r.0.as_str());
        }
        Operand::Special(_) | Operand::Imm(_) | Operand::Symbol { .. } | Operand::Sink => {}
    }
}

/// The destination of a pure, unguarded instruction (`None` for anything else).
fn pure_dest(i: &Instruction) -> Option<&str> {
    match i.operands.first() {
        Some(Operand::Reg(r)) if i.guard.is_none() && PURE.contains(&i.op) => Some(r.0.as_str()),
        _ => None,
    }
}

/// Dead-code elimination: drops pure instructions whose destination no instruction reads
/// (index components a kernel computes and never uses: a broadcast's delinearized index, the
/// parts of a reduction's index a row kernel does not need), until none is left. Each emulated
/// instruction costs every thread that runs it, so this is a per-element saving.
fn remove_dead(body: &mut Vec<Statement>) {
    // Nested scopes are not walked: a kernel with one keeps every instruction.
    if body.iter().any(|st| matches!(st, Statement::Block(_))) {
        return;
    }
    loop {
        let mut read = std::collections::HashSet::new();
        for st in body.iter() {
            if let Statement::Instruction(i) = st {
                if let Some(g) = &i.guard {
                    read.insert(g.reg.0.as_str());
                }
                let skip = usize::from(pure_dest(i).is_some());
                for o in &i.operands[skip..] {
                    operand_regs(o, &mut read);
                }
            }
        }
        let dead: std::collections::HashSet<usize> = body
            .iter()
            .enumerate()
            .filter_map(|(k, st)| match st {
                Statement::Instruction(i) => pure_dest(i).filter(|d| !read.contains(d)).map(|_| k),
                _ => None,
            })
            .collect();
        if dead.is_empty() {
            return;
        }
        let mut k = 0;
        body.retain(|_| {
            k += 1;
            !dead.contains(&(k - 1))
        });
    }
}

/// Name of the kernel's static shared-memory array.
pub const SHARED_NAME: &str = "smem";

/// A module-scope `.global .align 8 .b8 name[n] = {bytes}` constant table.
pub fn global_bytes(name: &str, bytes: &[u8]) -> VarDecl {
    VarDecl {
        linkage: None,
        space: StateSpace::Global,
        align: Some(8),
        vector: None,
        ty: Type::B8,
        declarators: vec![Declarator {
            name: name.to_string(),
            range: None,
            array: vec![Some(bytes.len().max(1) as u64)],
            init: Some(Initializer::List(
                bytes
                    .iter()
                    .map(|b| Initializer::Imm(Immediate::Int(i64::from(*b))))
                    .collect(),
            )),
        }],
    }
}
