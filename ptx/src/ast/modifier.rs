//! The dotted suffixes of an instruction: types, vector widths and every other modifier.
use std::fmt;

use super::*;

keyword_enum! {
    /// A PTX fundamental type.
    Type {
        B8 = "b8", B16 = "b16", B32 = "b32", B64 = "b64", B128 = "b128",
        U8 = "u8", U16 = "u16", U32 = "u32", U64 = "u64",
        S8 = "s8", S16 = "s16", S32 = "s32", S64 = "s64",
        F16 = "f16", F16x2 = "f16x2", Bf16 = "bf16", Bf16x2 = "bf16x2", Tf32 = "tf32",
        F32 = "f32", F64 = "f64", Pred = "pred",
        E4m3 = "e4m3", E5m2 = "e5m2", E4m3x2 = "e4m3x2", E5m2x2 = "e5m2x2",
        U16x2 = "u16x2", S16x2 = "s16x2",
    }
}

impl Type {
    /// Width in bits (`.pred` counts as 1).
    pub fn bits(self) -> u32 {
        use Type::*;
        match self {
            Pred => 1,
            B8 | U8 | S8 | E4m3 | E5m2 => 8,
            B16 | U16 | S16 | F16 | Bf16 | E4m3x2 | E5m2x2 => 16,
            B32 | U32 | S32 | F32 | F16x2 | Bf16x2 | Tf32 | U16x2 | S16x2 => 32,
            B64 | U64 | S64 | F64 => 64,
            B128 => 128,
        }
    }

    /// Size in bytes (`.pred` counts as 1).
    pub fn size_bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Signed integer (`.s8` .. `.s64`, `.s16x2`).
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Type::S8 | Type::S16 | Type::S32 | Type::S64 | Type::S16x2
        )
    }

    /// Unsigned integer (`.u8` .. `.u64`, `.u16x2`).
    pub fn is_unsigned(self) -> bool {
        matches!(
            self,
            Type::U8 | Type::U16 | Type::U32 | Type::U64 | Type::U16x2
        )
    }

    /// Untyped bits (`.b8` .. `.b128`).
    pub fn is_bits(self) -> bool {
        matches!(
            self,
            Type::B8 | Type::B16 | Type::B32 | Type::B64 | Type::B128
        )
    }

    /// Any floating-point type, packed and fp8 included.
    pub fn is_float(self) -> bool {
        use Type::*;
        matches!(
            self,
            F16 | F16x2 | Bf16 | Bf16x2 | Tf32 | F32 | F64 | E4m3 | E5m2 | E4m3x2 | E5m2x2
        )
    }
}

keyword_enum! {
    /// Rounding modifier.
    Rounding {
        Rn = "rn", Rz = "rz", Rm = "rm", Rp = "rp",
        Rni = "rni", Rzi = "rzi", Rmi = "rmi", Rpi = "rpi", Rna = "rna", Rs = "rs",
    }
}

keyword_enum! {
    /// Comparison operator of `setp` / `set`.
    CmpOp {
        Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt", Ge = "ge",
        Lo = "lo", Ls = "ls", Hi = "hi", Hs = "hs",
        Equ = "equ", Neu = "neu", Ltu = "ltu", Leu = "leu", Gtu = "gtu", Geu = "geu",
        Num = "num", Nan = "nan",
    }
}

keyword_enum! {
    /// Boolean operator combining a comparison with a predicate (`setp.lt.and`).
    BoolOp { And = "and", Or = "or", Xor = "xor" }
}

keyword_enum! {
    /// A state space.
    StateSpace {
        Reg = "reg", Sreg = "sreg", Const = "const", Global = "global", Local = "local",
        Param = "param", ParamEntry = "param::entry", ParamFunc = "param::func",
        Shared = "shared", SharedCta = "shared::cta", SharedCluster = "shared::cluster",
        Tex = "tex",
    }
}

keyword_enum! {
    /// Cache operator of `ld` / `st`.
    CacheOp {
        Ca = "ca", Cg = "cg", Cs = "cs", Lu = "lu", Cv = "cv", Wb = "wb", Wt = "wt",
    }
}

keyword_enum! {
    /// Cache eviction priority / level hint.
    CacheHint {
        L1EvictNormal = "L1::evict_normal", L1EvictUnchanged = "L1::evict_unchanged",
        L1EvictFirst = "L1::evict_first", L1EvictLast = "L1::evict_last",
        L1NoAllocate = "L1::no_allocate",
        L2EvictNormal = "L2::evict_normal", L2EvictFirst = "L2::evict_first",
        L2EvictLast = "L2::evict_last", L2CacheHint = "L2::cache_hint",
        L2Prefetch64B = "L2::64B", L2Prefetch128B = "L2::128B", L2Prefetch256B = "L2::256B",
        L1 = "L1", L2 = "L2",
    }
}

keyword_enum! {
    /// Vector width.
    VectorWidth { V2 = "v2", V4 = "v4", V8 = "v8" }
}

impl VectorWidth {
    /// Number of elements.
    pub fn len(self) -> usize {
        match self {
            VectorWidth::V2 => 2,
            VectorWidth::V4 => 4,
            VectorWidth::V8 => 8,
        }
    }

    /// Always false (vectors have at least two elements); provided for clippy's sake.
    pub fn is_empty(self) -> bool {
        false
    }
}

keyword_enum! {
    /// Atomic / reduction operation (`atom`, `red`, `redux`, `bar.red`).
    ReduceOp {
        Add = "add", Min = "min", Max = "max", Inc = "inc", Dec = "dec",
        And = "and", Or = "or", Xor = "xor", Exch = "exch", Cas = "cas", Popc = "popc",
    }
}

keyword_enum! {
    /// Memory scope.
    Scope { Cta = "cta", Cluster = "cluster", Gpu = "gpu", Sys = "sys" }
}

keyword_enum! {
    /// Memory-ordering semantics.
    MemSemantics {
        Weak = "weak", Relaxed = "relaxed", Acquire = "acquire", Release = "release",
        AcqRel = "acq_rel", Sc = "sc", Volatile = "volatile", Mmio = "mmio",
    }
}

keyword_enum! {
    /// `shfl` mode.
    ShflMode { Up = "up", Down = "down", Bfly = "bfly", Idx = "idx" }
}

keyword_enum! {
    /// `vote` mode (also `match.any` / `match.all`).
    VoteMode { All = "all", Any = "any", Uni = "uni", Ballot = "ballot" }
}

keyword_enum! {
    /// `testp` class.
    TestpClass {
        Finite = "finite", Infinite = "infinite", Number = "number",
        NotANumber = "notanumber", Normal = "normal", Subnormal = "subnormal",
    }
}

keyword_enum! {
    /// `prmt` mode.
    PrmtMode {
        F4e = "f4e", B4e = "b4e", Rc8 = "rc8", Ecl = "ecl", Ecr = "ecr", Rc16 = "rc16",
    }
}

keyword_enum! {
    /// Matrix shape of `mma` / `wmma` / `ldmatrix` / `stmatrix`.
    Shape {
        M8n8 = "m8n8", M8n16 = "m8n16", M16n16 = "m16n16",
        M8n8k4 = "m8n8k4", M8n8k16 = "m8n8k16", M8n8k32 = "m8n8k32", M8n8k128 = "m8n8k128",
        M16n8k4 = "m16n8k4", M16n8k8 = "m16n8k8", M16n8k16 = "m16n8k16",
        M16n8k32 = "m16n8k32", M16n8k64 = "m16n8k64", M16n8k128 = "m16n8k128",
        M16n8k256 = "m16n8k256", M16n16k8 = "m16n16k8", M16n16k16 = "m16n16k16",
        M32n8k16 = "m32n8k16", M8n32k16 = "m8n32k16",
    }
}

keyword_enum! {
    /// Matrix layout (`.row` / `.col`).
    Layout { Row = "row", Col = "col" }
}

keyword_enum! {
    /// Number of matrices moved by `ldmatrix` / `stmatrix` (`.x1`, `.x2`, `.x4`).
    MatrixCount { X1 = "x1", X2 = "x2", X4 = "x4" }
}

keyword_enum! {
    /// `wmma.load` / `wmma.store` fragment (`.a`, `.b`, `.c`, `.d`).
    Fragment { A = "a", B = "b", C = "c", D = "d" }
}

/// One dotted suffix of an instruction, typed. Types are modifiers too ([`Modifier::Type`]) so
/// the source order is kept exactly.
///
/// Some spellings depend on the opcode: `.hi`/`.lo` are [`CmpOp`]s for `setp`/`set` and width
/// modes elsewhere; `.and`/`.or`/`.xor` are [`BoolOp`]s for `setp`/`set` and [`ReduceOp`]s for
/// `atom`/`red`/`redux`/`bar`; `.uni` is a [`VoteMode`] for `vote` and [`Modifier::Uni`]
/// elsewhere. [`Modifier::parse`] takes the opcode for that reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Modifier {
    /// A type (`.f32`, `.u64`, ...).
    Type(Type),
    /// Rounding (`.rn`, ...).
    Rounding(Rounding),
    /// Comparison (`setp.lt`).
    Cmp(CmpOp),
    /// Boolean combine (`setp.lt.and`).
    Bool(BoolOp),
    /// State space (`ld.global`).
    Space(StateSpace),
    /// Cache operator (`ld.cg`).
    Cache(CacheOp),
    /// Cache hint (`ld.L1::evict_last`).
    Hint(CacheHint),
    /// Vector width (`ld.v4`).
    Vector(VectorWidth),
    /// Atomic/reduction op (`atom.add`).
    Reduce(ReduceOp),
    /// Scope (`atom.gpu`).
    Scope(Scope),
    /// Semantics (`ld.acquire`).
    Sem(MemSemantics),
    /// `shfl` mode.
    Shfl(ShflMode),
    /// `vote`/`match` mode.
    Vote(VoteMode),
    /// `testp` class.
    Testp(TestpClass),
    /// `prmt` mode.
    Prmt(PrmtMode),
    /// Matrix shape (`mma.m16n8k16`).
    Shape(Shape),
    /// Matrix layout (`mma.row.col`).
    Layout(Layout),
    /// Matrix count (`ldmatrix.x4`).
    Count(MatrixCount),
    /// `wmma` fragment (`wmma.load.a`).
    Frag(Fragment),
    /// `.trans` (`ldmatrix.trans`)
    Trans,
    /// `.ftz`
    Ftz,
    /// `.sat`
    Sat,
    /// `.satfinite`
    SatFinite,
    /// `.relu`
    Relu,
    /// `.approx`
    Approx,
    /// `.full`
    Full,
    /// `.hi` (width mode)
    Hi,
    /// `.lo` (width mode)
    Lo,
    /// `.wide`
    Wide,
    /// `.cc` (carry out)
    Cc,
    /// `.nc` (non-coherent load)
    Nc,
    /// `.uni` (uniform branch / call / ret)
    Uni,
    /// `.sync`
    Sync,
    /// `.aligned`
    Aligned,
    /// `.arrive` (`bar.arrive`, `barrier.arrive`)
    Arrive,
    /// `.red` (`bar.red`)
    BarRed,
    /// `.to` (`cvta.to`)
    To,
    /// `.noftz` (`atom.add.noftz.f16`)
    NoFtz,
    /// `.NaN` (`min.NaN`)
    NaN,
    /// `.xorsign` (`min.xorsign.abs`)
    XorSign,
    /// `.abs` (`min.xorsign.abs`)
    Abs,
    /// `.shiftamt` (`bfind.shiftamt`)
    ShiftAmt,
    /// `.l` (`shf.l`)
    ShfL,
    /// `.r` (`shf.r`)
    ShfR,
    /// `.wrap` (`shf.wrap`)
    Wrap,
    /// `.clamp` (`shf.clamp`)
    Clamp,
    /// `.gl` (`membar.gl`)
    Gl,
    /// `.wait` (`griddepcontrol.wait`)
    Wait,
    /// `.launch_dependents` (`griddepcontrol.launch_dependents`)
    LaunchDependents,
    /// `.proxy` (`fence.proxy.async`)
    Proxy,
    /// `.async` (`fence.proxy.async`)
    Async,
    /// `.alias` (`fence.proxy.alias`)
    Alias,
}

impl Modifier {
    /// Parses a dotted suffix (without the dot) in the context of `op`.
    pub fn parse(op: Opcode, s: &str) -> Option<Modifier> {
        use Opcode as O;
        let cmp_ctx = matches!(op, O::Setp | O::Set);
        let red_ctx = matches!(op, O::Atom | O::Red | O::Redux | O::Bar | O::Barrier);
        let vote_ctx = matches!(op, O::Vote | O::Match);
        if cmp_ctx {
            if let Some(c) = CmpOp::from_str(s) {
                return Some(Modifier::Cmp(c));
            }
            if let Some(b) = BoolOp::from_str(s) {
                return Some(Modifier::Bool(b));
            }
        }
        if red_ctx {
            if let Some(r) = ReduceOp::from_str(s) {
                return Some(Modifier::Reduce(r));
            }
        }
        if vote_ctx {
            if let Some(v) = VoteMode::from_str(s) {
                return Some(Modifier::Vote(v));
            }
        }
        if op == O::Shfl {
            if let Some(m) = ShflMode::from_str(s) {
                return Some(Modifier::Shfl(m));
            }
        }
        if op == O::Testp {
            if let Some(t) = TestpClass::from_str(s) {
                return Some(Modifier::Testp(t));
            }
        }
        if op == O::Prmt {
            if let Some(p) = PrmtMode::from_str(s) {
                return Some(Modifier::Prmt(p));
            }
        }
        if matches!(op, O::WmmaLoad | O::WmmaStore) {
            if let Some(fr) = Fragment::from_str(s) {
                return Some(Modifier::Frag(fr));
            }
        }
        if matches!(
            op,
            O::Mma | O::Ldmatrix | O::Stmatrix | O::WmmaLoad | O::WmmaStore | O::WmmaMma
        ) {
            if let Some(sh) = Shape::from_str(s) {
                return Some(Modifier::Shape(sh));
            }
            if let Some(l) = Layout::from_str(s) {
                return Some(Modifier::Layout(l));
            }
            if let Some(c) = MatrixCount::from_str(s) {
                return Some(Modifier::Count(c));
            }
            if s == "trans" {
                return Some(Modifier::Trans);
            }
        }
        if let Some(t) = Type::from_str(s) {
            return Some(Modifier::Type(t));
        }
        if let Some(r) = Rounding::from_str(s) {
            return Some(Modifier::Rounding(r));
        }
        if let Some(sp) = StateSpace::from_str(s) {
            return Some(Modifier::Space(sp));
        }
        if let Some(c) = CacheOp::from_str(s) {
            return Some(Modifier::Cache(c));
        }
        if let Some(h) = CacheHint::from_str(s) {
            return Some(Modifier::Hint(h));
        }
        if let Some(v) = VectorWidth::from_str(s) {
            return Some(Modifier::Vector(v));
        }
        if let Some(sc) = Scope::from_str(s) {
            return Some(Modifier::Scope(sc));
        }
        if let Some(sem) = MemSemantics::from_str(s) {
            return Some(Modifier::Sem(sem));
        }
        Some(match s {
            "ftz" => Modifier::Ftz,
            "sat" => Modifier::Sat,
            "satfinite" => Modifier::SatFinite,
            "relu" => Modifier::Relu,
            "approx" => Modifier::Approx,
            "full" => Modifier::Full,
            "hi" => Modifier::Hi,
            "lo" => Modifier::Lo,
            "wide" => Modifier::Wide,
            "cc" => Modifier::Cc,
            "nc" => Modifier::Nc,
            "uni" => Modifier::Uni,
            "sync" => Modifier::Sync,
            "aligned" => Modifier::Aligned,
            "arrive" => Modifier::Arrive,
            "red" if matches!(op, O::Bar | O::Barrier) => Modifier::BarRed,
            "to" => Modifier::To,
            "noftz" => Modifier::NoFtz,
            "NaN" => Modifier::NaN,
            "xorsign" => Modifier::XorSign,
            "abs" => Modifier::Abs,
            "shiftamt" => Modifier::ShiftAmt,
            "l" if op == O::Shf => Modifier::ShfL,
            "r" if op == O::Shf => Modifier::ShfR,
            "wrap" => Modifier::Wrap,
            "clamp" => Modifier::Clamp,
            "gl" => Modifier::Gl,
            "wait" => Modifier::Wait,
            "launch_dependents" => Modifier::LaunchDependents,
            "proxy" => Modifier::Proxy,
            "async" => Modifier::Async,
            "alias" => Modifier::Alias,
            _ => return None,
        })
    }

    /// The PTX spelling without the leading dot.
    pub fn as_str(self) -> &'static str {
        match self {
            Modifier::Type(t) => t.as_str(),
            Modifier::Rounding(r) => r.as_str(),
            Modifier::Cmp(c) => c.as_str(),
            Modifier::Bool(b) => b.as_str(),
            Modifier::Space(s) => s.as_str(),
            Modifier::Cache(c) => c.as_str(),
            Modifier::Hint(h) => h.as_str(),
            Modifier::Vector(v) => v.as_str(),
            Modifier::Reduce(r) => r.as_str(),
            Modifier::Scope(s) => s.as_str(),
            Modifier::Sem(s) => s.as_str(),
            Modifier::Shfl(s) => s.as_str(),
            Modifier::Vote(v) => v.as_str(),
            Modifier::Testp(t) => t.as_str(),
            Modifier::Prmt(p) => p.as_str(),
            Modifier::Shape(x) => x.as_str(),
            Modifier::Layout(x) => x.as_str(),
            Modifier::Count(x) => x.as_str(),
            Modifier::Frag(x) => x.as_str(),
            Modifier::Trans => "trans",
            Modifier::Ftz => "ftz",
            Modifier::Sat => "sat",
            Modifier::SatFinite => "satfinite",
            Modifier::Relu => "relu",
            Modifier::Approx => "approx",
            Modifier::Full => "full",
            Modifier::Hi => "hi",
            Modifier::Lo => "lo",
            Modifier::Wide => "wide",
            Modifier::Cc => "cc",
            Modifier::Nc => "nc",
            Modifier::Uni => "uni",
            Modifier::Sync => "sync",
            Modifier::Aligned => "aligned",
            Modifier::Arrive => "arrive",
            Modifier::BarRed => "red",
            Modifier::To => "to",
            Modifier::NoFtz => "noftz",
            Modifier::NaN => "NaN",
            Modifier::XorSign => "xorsign",
            Modifier::Abs => "abs",
            Modifier::ShiftAmt => "shiftamt",
            Modifier::ShfL => "l",
            Modifier::ShfR => "r",
            Modifier::Wrap => "wrap",
            Modifier::Clamp => "clamp",
            Modifier::Gl => "gl",
            Modifier::Wait => "wait",
            Modifier::LaunchDependents => "launch_dependents",
            Modifier::Proxy => "proxy",
            Modifier::Async => "async",
            Modifier::Alias => "alias",
        }
    }
}

impl fmt::Display for Modifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
