//! Instructions: the guard, the instruction and its accessors, and the opcode set.
use super::*;

/// A guard predicate: `@%p1` or `@!%p1`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Guard {
    /// `@!p`: execute when the predicate is false.
    pub negated: bool,
    /// The predicate register.
    pub reg: Register,
}

/// One instruction: `{@{!}p} opcode{.mod}* operand {, operand}* ;`
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    /// Guard predicate.
    pub guard: Option<Guard>,
    /// The opcode.
    pub op: Opcode,
    /// All dotted suffixes after the opcode in source order, types included.
    pub mods: Vec<Modifier>,
    /// Operands in source order (destinations first, as in PTX).
    pub operands: Vec<Operand>,
}

impl Instruction {
    /// A new unguarded instruction.
    pub fn new(op: Opcode, mods: Vec<Modifier>, operands: Vec<Operand>) -> Self {
        Instruction {
            guard: None,
            op,
            mods,
            operands,
        }
    }

    /// The same instruction under guard `@p` (`negated`: `@!p`).
    pub fn guarded(mut self, negated: bool, pred: &str) -> Self {
        self.guard = Some(Guard {
            negated,
            reg: Register(pred.to_string()),
        });
        self
    }

    /// True when the modifier list contains `m`.
    pub fn has(&self, m: Modifier) -> bool {
        self.mods.contains(&m)
    }

    /// The type modifiers in order (`cvt.f32.s32` gives `[F32, S32]`).
    pub fn types(&self) -> Vec<Type> {
        self.mods
            .iter()
            .filter_map(|m| match m {
                Modifier::Type(t) => Some(*t),
                _ => None,
            })
            .collect()
    }

    /// The first type (the instruction type, or the destination type of `cvt`/`set`).
    pub fn ty(&self) -> Option<Type> {
        self.mods.iter().find_map(|m| match m {
            Modifier::Type(t) => Some(*t),
            _ => None,
        })
    }

    /// The second type (source type of `cvt`, `set`, `slct`, `dp4a`, ...).
    pub fn ty2(&self) -> Option<Type> {
        self.mods
            .iter()
            .filter_map(|m| match m {
                Modifier::Type(t) => Some(*t),
                _ => None,
            })
            .nth(1)
    }

    fn find<T>(&self, f: impl Fn(&Modifier) -> Option<T>) -> Option<T> {
        self.mods.iter().find_map(f)
    }

    /// Rounding modifier (`.rn`, `.rzi`, ...).
    pub fn rounding(&self) -> Option<Rounding> {
        self.find(|m| match m {
            Modifier::Rounding(r) => Some(*r),
            _ => None,
        })
    }

    /// State space modifier (`ld.global`, `cvta.to.shared`, ...).
    pub fn state_space(&self) -> Option<StateSpace> {
        self.find(|m| match m {
            Modifier::Space(s) => Some(*s),
            _ => None,
        })
    }

    /// Comparison operator of `setp`/`set`.
    pub fn cmp_op(&self) -> Option<CmpOp> {
        self.find(|m| match m {
            Modifier::Cmp(c) => Some(*c),
            _ => None,
        })
    }

    /// Boolean combining operator of `setp.lt.and` / `set`.
    pub fn bool_op(&self) -> Option<BoolOp> {
        self.find(|m| match m {
            Modifier::Bool(b) => Some(*b),
            _ => None,
        })
    }

    /// Vector width (`.v2`/`.v4`/`.v8`).
    pub fn vector(&self) -> Option<VectorWidth> {
        self.find(|m| match m {
            Modifier::Vector(v) => Some(*v),
            _ => None,
        })
    }

    /// Reduction / atomic operation (`atom.add`, `redux.sync.min`, `bar.red.popc`).
    pub fn reduce_op(&self) -> Option<ReduceOp> {
        self.find(|m| match m {
            Modifier::Reduce(r) => Some(*r),
            _ => None,
        })
    }

    /// Memory scope (`.cta`, `.gpu`, `.sys`, `.cluster`).
    pub fn scope(&self) -> Option<Scope> {
        self.find(|m| match m {
            Modifier::Scope(s) => Some(*s),
            _ => None,
        })
    }

    /// Memory-ordering semantics (`.relaxed`, `.acquire`, ...).
    pub fn semantics(&self) -> Option<MemSemantics> {
        self.find(|m| match m {
            Modifier::Sem(s) => Some(*s),
            _ => None,
        })
    }

    /// Cache operator (`.ca`, `.cg`, ...).
    pub fn cache_op(&self) -> Option<CacheOp> {
        self.find(|m| match m {
            Modifier::Cache(c) => Some(*c),
            _ => None,
        })
    }

    /// Cache eviction / level hints (`.L1::evict_last`, `.L2::cache_hint`, ...).
    pub fn cache_hints(&self) -> Vec<CacheHint> {
        self.mods
            .iter()
            .filter_map(|m| match m {
                Modifier::Hint(h) => Some(*h),
                _ => None,
            })
            .collect()
    }

    /// `shfl` mode.
    pub fn shfl_mode(&self) -> Option<ShflMode> {
        self.find(|m| match m {
            Modifier::Shfl(s) => Some(*s),
            _ => None,
        })
    }

    /// `vote` / `match` mode.
    pub fn vote_mode(&self) -> Option<VoteMode> {
        self.find(|m| match m {
            Modifier::Vote(v) => Some(*v),
            _ => None,
        })
    }

    /// `testp` class.
    pub fn testp_class(&self) -> Option<TestpClass> {
        self.find(|m| match m {
            Modifier::Testp(t) => Some(*t),
            _ => None,
        })
    }

    /// `prmt` mode.
    pub fn prmt_mode(&self) -> Option<PrmtMode> {
        self.find(|m| match m {
            Modifier::Prmt(p) => Some(*p),
            _ => None,
        })
    }

    /// `mul`/`mad` width mode: `.hi`, `.lo` or `.wide` (as a modifier), if given.
    pub fn mul_mode(&self) -> Option<Modifier> {
        self.find(|m| match m {
            Modifier::Hi | Modifier::Lo | Modifier::Wide => Some(*m),
            _ => None,
        })
    }

    /// The destination operand (first operand), if any.
    pub fn dst(&self) -> Option<&Operand> {
        self.operands.first()
    }

    /// Source operands (all but the first). For `st`, `bra`, `bar`, ... which have no
    /// destination, use [`Instruction::operands`] directly.
    pub fn srcs(&self) -> &[Operand] {
        self.operands.get(1..).unwrap_or(&[])
    }
}

keyword_enum! {
    /// An instruction opcode. Multi-word opcodes (`cvt.pack`, `brx.idx`, `bar.warp.sync`,
    /// `cp.async.*`) are single variants; everything else after the first word is a [`Modifier`].
    Opcode {
        Add = "add", Addc = "addc", Sub = "sub", Subc = "subc", Mul = "mul", Mad = "mad",
        Madc = "madc", Mul24 = "mul24", Mad24 = "mad24", Sad = "sad", Div = "div", Rem = "rem",
        Abs = "abs", Neg = "neg", Min = "min", Max = "max", Popc = "popc", Clz = "clz",
        Bfind = "bfind", Fns = "fns", Brev = "brev", Bfe = "bfe", Bfi = "bfi", Bmsk = "bmsk",
        Szext = "szext", Dp4a = "dp4a", Dp2a = "dp2a",
        And = "and", Or = "or", Xor = "xor", Not = "not", Cnot = "cnot", Lop3 = "lop3",
        Shf = "shf", Shl = "shl", Shr = "shr", Prmt = "prmt",
        Testp = "testp", Copysign = "copysign", Rcp = "rcp", Sqrt = "sqrt", Rsqrt = "rsqrt",
        Sin = "sin", Cos = "cos", Lg2 = "lg2", Ex2 = "ex2", Tanh = "tanh", Fma = "fma",
        Setp = "setp", Set = "set", Selp = "selp", Slct = "slct",
        Mov = "mov", Ld = "ld", Ldu = "ldu", St = "st", Cvta = "cvta", Cvt = "cvt",
        CvtPack = "cvt.pack", Isspacep = "isspacep", Prefetch = "prefetch",
        Prefetchu = "prefetchu",
        Bra = "bra", BrxIdx = "brx.idx", Call = "call", Ret = "ret", Exit = "exit",
        Bar = "bar", BarWarpSync = "bar.warp.sync", Barrier = "barrier", Membar = "membar",
        Fence = "fence", Atom = "atom", Red = "red", Vote = "vote", Match = "match",
        Activemask = "activemask", Shfl = "shfl", Redux = "redux",
        Griddepcontrol = "griddepcontrol", Nanosleep = "nanosleep", Trap = "trap",
        Brkpt = "brkpt", Pmevent = "pmevent",
        CpAsync = "cp.async", CpAsyncCommitGroup = "cp.async.commit_group",
        CpAsyncWaitGroup = "cp.async.wait_group", CpAsyncWaitAll = "cp.async.wait_all",
        Mma = "mma", Ldmatrix = "ldmatrix", Stmatrix = "stmatrix",
        WmmaLoad = "wmma.load", WmmaStore = "wmma.store", WmmaMma = "wmma.mma",
        Mapa = "mapa", Getctarank = "getctarank", Elect = "elect",
        Stacksave = "stacksave", Stackrestore = "stackrestore", Alloca = "alloca",
    }
}
