//! The decoded form: operations on register rows and predicate masks, one [`Inst`] per PTX
//! instruction, and the per-function tables the engine reads.
use super::super::numeric::{Approx, Cmp, FOp, Fmt, IRnd, IntTy, PrmtMode, Rnd, TestP};
use crate::ast::{ShflMode, SpecialReg, VoteMode};

use super::{P, R};

/// The state space of an access is decoded straight to the one its faults name (`.param`: the
/// kernel parameter buffer, read-only), so the engine reports a fault without a translation.
pub(crate) use super::super::error::Space;

/// An address operand after decoding: the base register's value (none: 0; `base32`, `.u32`
/// addressing: its low 32 bits) plus the immediate offset. One type for every instruction that
/// takes an address, so decode and exec agree on it in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Addr {
    pub(crate) base: R,
    pub(crate) base32: bool,
    pub(crate) off: i64,
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
    /// `cvt.rna.tf32.f32`: an f32 rounded to tf32 (10 mantissa bits, nearest, ties away from
    /// zero), kept in f32 format with the low 13 bits zero.
    F2Tf32,
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
        space: Space,
        bits: u8,
        d: R,
        a: R,
    },
    /// `ld`: `n` elements of `size` bytes into `ds`; `sext` sign-extends from the element size.
    Ld {
        space: Space,
        size: u8,
        n: u8,
        sext: bool,
        ds: [R; 4],
        addr: Addr,
    },
    St {
        space: Space,
        size: u8,
        n: u8,
        ss: [R; 4],
        addr: Addr,
        /// A strong store (`.volatile`, `.relaxed`, `.release`, `.mmio`): in global memory it
        /// takes its address's stripe, so a read-modify-write never overwrites it
        /// (`crate::emu::stripes`).
        strong: bool,
    },
    Atom {
        space: Space,
        op: AOp,
        kind: AKind,
        d: R,
        addr: Addr,
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
    /// `ldmatrix`, `mma`, `cp.async` (boxed: they are rare, and `Op` stays as small as the
    /// hot loop needs).
    Matrix(Box<MatrixOp>),
}

/// Operand types of a supported `mma.sync` form (all accumulate in f32, layout `.row.col`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MmaInput {
    /// `.f16` A and B; `k16`: shape m16n8k16, else m16n8k8.
    F16 { k16: bool },
    /// `.bf16` A and B; `k16` as for F16.
    Bf16 { k16: bool },
    /// `.tf32` A and B, shape m16n8k8.
    Tf32,
}

impl MmaInput {
    /// Registers per lane of the A and B fragments.
    pub(crate) fn registers(self) -> (usize, usize) {
        match self {
            MmaInput::F16 { k16: true } | MmaInput::Bf16 { k16: true } => (4, 2),
            MmaInput::F16 { k16: false } | MmaInput::Bf16 { k16: false } => (2, 1),
            MmaInput::Tf32 => (4, 2),
        }
    }
}

/// The warp-level matrix instructions (decode/matrix.rs, exec/matrix.rs).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MatrixOp {
    /// `ldmatrix.sync.aligned.m8n8.x{n}{.trans}.b16`: `n` 8x8 matrices of b16 into `ds[..n]`.
    Ldmatrix {
        n: u8,
        trans: bool,
        space: Space,
        ds: [R; 4],
        addr: Addr,
    },
    /// `stmatrix.sync.aligned.m8n8.x{n}{.trans}.b16`: `n` 8x8 matrices of b16 from `srcs[..n]`.
    Stmatrix {
        n: u8,
        trans: bool,
        space: Space,
        srcs: [R; 4],
        addr: Addr,
    },
    /// `mma.sync.aligned.m16n8k{8,16}.row.col.f32.T.T.f32 d, a, b, c` (unused slots NONE).
    Mma {
        input: MmaInput,
        d: [R; 4],
        a: [R; 4],
        b: [R; 2],
        c: [R; 4],
    },
    /// `cp.async`: `size` bytes to shared `[dst]` from global `[src]`, of which the first
    /// `src_size` (a row; NONE: all) come from `src` and the rest are zero.
    CpAsync {
        size: u8,
        src_size: R,
        dst: Addr,
        src: Addr,
    },
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

/// Unmapped bytes after every shared and local variable in the emulator's layout: an access
/// that runs off a variable by less than this faults (memcheck) instead of reaching the next.
pub(crate) const REDZONE: u64 = 64;

/// A shared or local variable's place: `size` bytes at offset `off` of its state space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VarRegion {
    pub name: String,
    pub off: u64,
    pub size: u64,
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
    /// Bytes of static shared variables as declared (alignment included, no redzones).
    pub shared_static: u32,
    /// Bytes of static shared memory in the emulator's layout (with redzones).
    pub shared_layout: u64,
    /// Where each static shared variable lies in that layout.
    pub shared_vars: Vec<VarRegion>,
    /// Where each local variable lies in a thread's local memory.
    pub local_vars: Vec<VarRegion>,
    pub local_size: u32,
    pub params: Vec<ParamSlot>,
    pub param_size: u32,
    /// The code with its registers packed into fewer rows, for the fast engine
    /// ([`super::rows`]); `None` when packing saves nothing.
    pub packed: Option<super::Packed>,
}
