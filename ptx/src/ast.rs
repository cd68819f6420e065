//! The typed PTX model.
//!
//! # Structure
//!
//! ```text
//! Module { version, target, address_size, directives: Vec<Directive> }
//!   Directive::Function(Function)   .entry / .func (declaration or definition)
//!   Directive::Variable(VarDecl)    module-scope .global / .const / .shared variables
//!   Directive::File(FileDirective)  .file debug directive
//!   Directive::Section(Section)     .section .debug_str { ... } (DWARF data)
//!   Directive::Pragma(Vec<String>)  module-scope .pragma
//! Function { linkage, kind, return_params, name, params, perf: Vec<PerfDirective>, body }
//!   body: Option<Vec<Statement>>    None for a prototype ending in `;`
//! Statement
//!   Decl(VarDecl)          .reg / .local / .shared / .param / .const declarations
//!   Label(String)          `$L__BB0_2:`
//!   Instruction(Instruction)
//!   Block(Vec<Statement>)  nested `{ ... }` scope
//!   Loc / Pragma / BranchTargets / CallPrototype
//! Instruction { guard: Option<Guard>, op: Opcode, mods: Vec<Modifier>, operands: Vec<Operand> }
//! ```
//!
//! An instruction keeps every dotted suffix after the opcode, **types included**, as one ordered
//! list of typed [`Modifier`]s (`cvt.rn.f16.f32` is `Cvt` with
//! `[Rounding(Rn), Type(F16), Type(F32)]`), so printing reproduces the source order exactly.
//! Accessors such as [`Instruction::ty`], [`Instruction::types`], [`Instruction::rounding`],
//! [`Instruction::state_space`] and [`Instruction::has`] read them without caring about order.
//!
//! Operands are typed: registers ([`Operand::Reg`]), special registers ([`Operand::Special`]),
//! immediates ([`Operand::Imm`]), addresses ([`Operand::Address`]), symbols (labels, variables,
//! functions, parameters: [`Operand::Symbol`]), vectors `{%r1, _}`, predicate pairs `%r1|%p1`,
//! negated predicates `!%p1` and parenthesised call argument lists.
//!
//! An identifier operand is a [`Register`] when it starts with `%` (and is not a special
//! register) or was declared by a `.reg` in an enclosing scope (including `.reg` parameters of a
//! `.func`); otherwise it is a symbol. Immediates keep their exact bits: integers as `i64`/`u64`,
//! `0f`/`0d` floats as raw bits, decimal floats as f64 bits (see [`Immediate`]).
//!
//! The opcode set is closed: an opcode or modifier the model does not know is a parse error,
//! never an `Unknown(String)`. Not modelled yet: textures and surfaces (`tex`, `suld`, ...),
//! `mbarrier`, `cp.async.bulk`/TMA, `wgmma`, `createpolicy`, `setmaxnreg`, video instructions,
//! constant-expression operands (`(a+4)*2`) and `.alias`.
//!
//! Everything derives `Debug, Clone, PartialEq`; the printer ([`crate::printer`]) implements
//! `Display` for each node, and parsing the printed text gives back an equal model. Small
//! builders ([`Module::new`], [`VarDecl::regs`], [`Instruction::new`], [`Operand::reg`],
//! [`Operand::addr_reg`], ...) make constructing kernels in code concise.

use std::fmt;

macro_rules! keyword_enum {
    (
        $(#[$m:meta])*
        $name:ident { $($var:ident = $s:literal),* $(,)? }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $(
                #[doc = concat!("`", $s, "`")]
                $var
            ),*
        }
        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),*];
            /// The PTX spelling, without the leading dot.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$var => $s),* }
            }
            /// Parses the PTX spelling (without the leading dot).
            #[allow(clippy::should_implement_trait)]
            pub fn from_str(s: &str) -> Option<Self> {
                match s { $($s => Some($name::$var),)* _ => None }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

// ---------------------------------------------------------------------------------------------
// Module level
// ---------------------------------------------------------------------------------------------

/// A whole PTX module (one `.ptx` file).
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    /// `.version major.minor`
    pub version: Version,
    /// `.target sm_90, ...`
    pub target: Target,
    /// `.address_size 32|64`, when present.
    pub address_size: Option<u32>,
    /// Module-scope directives in source order.
    pub directives: Vec<Directive>,
}

impl Module {
    /// An empty module: `.version major.minor`, `.target arch`, `.address_size 64`.
    pub fn new(major: u32, minor: u32, arch: &str) -> Self {
        Module {
            version: Version { major, minor },
            target: Target {
                arch: arch.to_string(),
                options: Vec::new(),
            },
            address_size: Some(64),
            directives: Vec::new(),
        }
    }

    /// All functions (`.entry` and `.func`, declarations included) in source order.
    pub fn functions(&self) -> impl Iterator<Item = &Function> {
        self.directives.iter().filter_map(|d| match d {
            Directive::Function(f) => Some(f),
            _ => None,
        })
    }

    /// All module-scope variables in source order.
    pub fn variables(&self) -> impl Iterator<Item = &VarDecl> {
        self.directives.iter().filter_map(|d| match d {
            Directive::Variable(v) => Some(v),
            _ => None,
        })
    }

    /// The function (entry or func) with this name that has a body, else any with that name.
    pub fn function(&self, name: &str) -> Option<&Function> {
        let mut fallback = None;
        for f in self.functions().filter(|f| f.name == name) {
            if f.body.is_some() {
                return Some(f);
            }
            fallback = Some(f);
        }
        fallback
    }

    /// The `.entry` kernel with this name.
    pub fn kernel(&self, name: &str) -> Option<&Function> {
        self.functions()
            .find(|f| f.kind == FunctionKind::Entry && f.name == name && f.body.is_some())
    }
}

/// What [`crate::check`] returns: a module's header and the signature of every function, the
/// bodies having been checked against the grammar and dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct Outline {
    /// `.version major.minor`
    pub version: Version,
    /// `.target sm_90, ...`
    pub target: Target,
    /// `.address_size 32|64`, when present.
    pub address_size: Option<u32>,
    /// Every `.entry` and `.func` in source order, declarations included.
    pub functions: Vec<Signature>,
}

/// A function's signature (see [`Outline`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// Linkage, when given.
    pub linkage: Option<Linkage>,
    /// Entry or func.
    pub kind: FunctionKind,
    /// Return parameters of a `.func`; `None` when absent.
    pub return_params: Option<Vec<Param>>,
    /// The function's name.
    pub name: String,
    /// Parameters; `None` when the parameter list is omitted entirely.
    pub params: Option<Vec<Param>>,
    /// Whether it has a body (else it is a declaration ending in `;`).
    pub defined: bool,
}

impl Signature {
    /// The parameters (empty when the list is absent).
    pub fn params(&self) -> &[Param] {
        self.params.as_deref().unwrap_or(&[])
    }
}

impl Outline {
    /// The outline of a parsed module (equal to what [`crate::check`] gives for its text),
    /// taking its signatures rather than copying them.
    pub fn from_module(module: Module) -> Outline {
        Outline {
            version: module.version,
            target: module.target,
            address_size: module.address_size,
            functions: module
                .directives
                .into_iter()
                .filter_map(|d| match d {
                    Directive::Function(f) => Some(Signature {
                        linkage: f.linkage,
                        kind: f.kind,
                        return_params: f.return_params,
                        name: f.name,
                        params: f.params,
                        defined: f.body.is_some(),
                    }),
                    _ => None,
                })
                .collect(),
        }
    }

    /// The defined `.entry` kernel with this name (as [`Module::kernel`]).
    pub fn kernel(&self, name: &str) -> Option<&Signature> {
        self.functions
            .iter()
            .find(|f| f.kind == FunctionKind::Entry && f.name == name && f.defined)
    }

    /// The defined `.entry` kernels in source order.
    pub fn entries(&self) -> impl Iterator<Item = &Signature> {
        self.functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Entry && f.defined)
    }
}

/// `.version major.minor`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Version {
    /// Major version (e.g. 9 in `9.5`).
    pub major: u32,
    /// Minor version (e.g. 5 in `9.5`).
    pub minor: u32,
}

/// `.target arch {, option}*`, e.g. `.target sm_90a` or `.target sm_52, texmode_independent`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// The architecture, e.g. `sm_90` or `sm_90a`.
    pub arch: String,
    /// Further comma-separated options in order (`texmode_independent`, `debug`, ...).
    pub options: Vec<String>,
}

/// A module-scope directive.
#[derive(Debug, Clone, PartialEq)]
pub enum Directive {
    /// A `.entry` or `.func` definition or declaration.
    Function(Function),
    /// A module-scope variable declaration (`.global`, `.const`, `.shared`, ...).
    Variable(VarDecl),
    /// `.file index "path" {, timestamp, size}`
    File(FileDirective),
    /// `.section .debug_str { ... }` (DWARF data emitted with `-lineinfo` / `-G`).
    Section(Section),
    /// Module-scope `.pragma "s" {, "s"}* ;`
    Pragma(Vec<String>),
}

/// A `.section` directive: raw DWARF data with labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Section name without the dot (`debug_str`).
    pub name: String,
    /// Labels and data lines in order.
    pub items: Vec<SectionItem>,
}

/// One item of a [`Section`].
#[derive(Debug, Clone, PartialEq)]
pub enum SectionItem {
    /// `label:`
    Label(String),
    /// `.b8 1, 2, 3` / `.b32 .debug_abbrev` / `.b64 $L__func_begin0`
    Data {
        /// Element type (`.b8`, `.b16`, `.b32`, `.b64`).
        ty: Type,
        /// Values.
        values: Vec<SectionValue>,
    },
}

/// A value in a section data line.
#[derive(Debug, Clone, PartialEq)]
pub enum SectionValue {
    /// An integer.
    Int(i64),
    /// A label plus offset.
    Symbol {
        /// The label.
        name: String,
        /// Byte offset.
        offset: i64,
    },
    /// A section name (`.debug_abbrev`), stored without the dot.
    Section(String),
    /// A label difference `a-b`.
    Diff(String, String),
}

/// `.file index "path" {, timestamp, size}`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDirective {
    /// File index referenced by `.loc`.
    pub index: u32,
    /// The path, unescaped.
    pub path: String,
    /// Optional modification timestamp and file size.
    pub timestamp_size: Option<(u64, u64)>,
}

/// Symbol linkage: `.visible`, `.extern`, `.weak`, `.common`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// `.visible`
    Visible,
    /// `.extern`
    Extern,
    /// `.weak`
    Weak,
    /// `.common`
    Common,
}

impl Linkage {
    /// The PTX spelling without the leading dot.
    pub fn as_str(self) -> &'static str {
        match self {
            Linkage::Visible => "visible",
            Linkage::Extern => "extern",
            Linkage::Weak => "weak",
            Linkage::Common => "common",
        }
    }
}

/// `.entry` (kernel) or `.func` (device function).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    /// `.entry`: a kernel.
    Entry,
    /// `.func`: a device function.
    Func,
}

/// A `.entry` or `.func`.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    /// Linkage, when given.
    pub linkage: Option<Linkage>,
    /// Entry or func.
    pub kind: FunctionKind,
    /// Return parameters of a `.func` (`.func (.param .b32 r) f(...)`); `None` when absent.
    pub return_params: Option<Vec<Param>>,
    /// The function's name.
    pub name: String,
    /// Parameters; `None` when the parameter list is omitted entirely (`.func f;`).
    pub params: Option<Vec<Param>>,
    /// Performance-tuning directives and attributes between the signature and the body.
    pub perf: Vec<PerfDirective>,
    /// The body; `None` for a declaration (prototype) ending in `;`.
    pub body: Option<Vec<Statement>>,
}

impl Function {
    /// The parameters (empty when the list is absent).
    pub fn params(&self) -> &[Param] {
        self.params.as_deref().unwrap_or(&[])
    }

    /// Every statement of the body depth-first, blocks flattened (the `Block` itself is not
    /// yielded, its contents are). Empty for a declaration.
    pub fn statements(&self) -> Statements<'_> {
        Statements {
            stack: vec![self.body.as_deref().unwrap_or(&[]).iter()],
        }
    }

    /// Every instruction of the body in order, nested blocks included.
    pub fn instructions(&self) -> impl Iterator<Item = &Instruction> {
        self.statements().filter_map(|s| match s {
            Statement::Instruction(i) => Some(i),
            _ => None,
        })
    }

    /// `.reqntid` or else `.maxntid` dimensions, if declared.
    pub fn ntid_hint(&self) -> Option<&[u32]> {
        self.perf
            .iter()
            .find_map(|p| match p {
                PerfDirective::ReqNtid(d) => Some(d.as_slice()),
                _ => None,
            })
            .or_else(|| {
                self.perf.iter().find_map(|p| match p {
                    PerfDirective::MaxNtid(d) => Some(d.as_slice()),
                    _ => None,
                })
            })
    }
}

/// Depth-first iterator over a function body's statements (see [`Function::statements`]).
#[derive(Debug, Clone)]
pub struct Statements<'a> {
    stack: Vec<std::slice::Iter<'a, Statement>>,
}

impl<'a> Iterator for Statements<'a> {
    type Item = &'a Statement;

    fn next(&mut self) -> Option<&'a Statement> {
        loop {
            let top = self.stack.last_mut()?;
            match top.next() {
                None => {
                    self.stack.pop();
                }
                Some(Statement::Block(b)) => self.stack.push(b.iter()),
                Some(s) => return Some(s),
            }
        }
    }
}

/// A function parameter: `.param .u64 .ptr .global .align 8 name` or `.reg .b32 x`.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// `.param` (usual) or `.reg` (allowed for `.func`).
    pub space: StateSpace,
    /// `.align N` before the type.
    pub align: Option<u32>,
    /// Vector width (`.v2`/`.v4`), rarely used for parameters.
    pub vector: Option<VectorWidth>,
    /// Element type.
    pub ty: Type,
    /// `.ptr {.space} {.align N}` attribute of a kernel pointer parameter.
    pub ptr: Option<PtrAttr>,
    /// Parameter name.
    pub name: String,
    /// Array dimensions (`[16]`); `None` entries are unsized `[]`.
    pub array: Vec<Option<u64>>,
}

/// `.ptr {.space} {.align N}` on a kernel parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtrAttr {
    /// `.global`, `.shared`, `.const`, `.local`, when given.
    pub space: Option<StateSpace>,
    /// `.align N`, when given.
    pub align: Option<u32>,
}

/// Performance-tuning directives and attributes of a function, kept in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PerfDirective {
    /// `.maxntid x{, y{, z}}`
    MaxNtid(Vec<u32>),
    /// `.reqntid x{, y{, z}}`
    ReqNtid(Vec<u32>),
    /// `.minnctapersm n`
    MinNctaPerSm(u32),
    /// `.maxnctapersm n` (deprecated spelling)
    MaxNctaPerSm(u32),
    /// `.maxnreg n`
    MaxNreg(u32),
    /// `.maxclusterrank n`
    MaxClusterRank(u32),
    /// `.explicitcluster`
    ExplicitCluster,
    /// `.reqnctapercluster x{, y{, z}}`
    ReqNctaPerCluster(Vec<u32>),
    /// `.noreturn`
    NoReturn,
    /// `.pragma "a", "b";`
    Pragma(Vec<String>),
}

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// A variable or register declaration, module-scope or inside a body:
/// `{linkage} .space {.align N} {.vN} .type declarator {, declarator}* ;`
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl {
    /// `.visible`, `.extern`, `.weak`, `.common`, when given.
    pub linkage: Option<Linkage>,
    /// `.reg`, `.global`, `.const`, `.shared`, `.local`, `.param`, ...
    pub space: StateSpace,
    /// `.align N`
    pub align: Option<u32>,
    /// `.v2` / `.v4` / `.v8`
    pub vector: Option<VectorWidth>,
    /// Element type.
    pub ty: Type,
    /// One or more declared names.
    pub declarators: Vec<Declarator>,
}

/// One declared name: `%r<12>`, `x[4][2] = {...}`, `smem[]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Declarator {
    /// The name (for a parameterized range, the prefix: `%r` in `%r<12>`).
    pub name: String,
    /// `<N>`: declares `name0` .. `name{N-1}`.
    pub range: Option<u32>,
    /// Array dimensions; `None` for `[]`.
    pub array: Vec<Option<u64>>,
    /// `= initializer`
    pub init: Option<Initializer>,
}

impl VarDecl {
    /// A parameterized register declaration `.reg .ty prefix<count>;` (`%r<12>`).
    pub fn regs(ty: Type, prefix: &str, count: u32) -> Self {
        VarDecl {
            linkage: None,
            space: StateSpace::Reg,
            align: None,
            vector: None,
            ty,
            declarators: vec![Declarator {
                name: prefix.to_string(),
                range: Some(count),
                array: Vec::new(),
                init: None,
            }],
        }
    }

    /// A byte-array declaration `.space .align N .b8 name[size];` (shared / local / global).
    pub fn bytes(space: StateSpace, align: u32, name: &str, size: Option<u64>) -> Self {
        VarDecl {
            linkage: None,
            space,
            align: Some(align),
            vector: None,
            ty: Type::B8,
            declarators: vec![Declarator {
                name: name.to_string(),
                range: None,
                array: vec![size],
                init: None,
            }],
        }
    }
}

impl Declarator {
    /// Number of elements of the array (product of dimensions; 1 for scalars,
    /// `None` if a dimension is unsized).
    pub fn element_count(&self) -> Option<u64> {
        self.array
            .iter()
            .try_fold(1u64, |acc, d| d.and_then(|d| acc.checked_mul(d)))
    }
}

/// A variable initializer.
#[derive(Debug, Clone, PartialEq)]
pub enum Initializer {
    /// An integer or floating-point constant.
    Imm(Immediate),
    /// A symbol's address plus byte offset: `sym`, `sym+8`.
    Symbol {
        /// The symbol.
        name: String,
        /// Byte offset.
        offset: i64,
    },
    /// `generic(sym)+offset`: the generic address of a variable.
    Generic {
        /// The symbol.
        name: String,
        /// Byte offset.
        offset: i64,
    },
    /// `{ a, b, ... }` (nested for multi-dimensional arrays).
    List(Vec<Initializer>),
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

/// One statement of a function body.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// A declaration (`.reg`, `.local`, `.shared`, `.param`, ...).
    Decl(VarDecl),
    /// A label (without the colon).
    Label(String),
    /// An instruction.
    Instruction(Instruction),
    /// A nested `{ ... }` scope.
    Block(Vec<Statement>),
    /// `.loc file line column {, function_name label{+off}, inlined_at file line column}`
    Loc(Loc),
    /// `.pragma "s" {, "s"}* ;`
    Pragma(Vec<String>),
    /// `name: .branchtargets L1, L2, ... ;`
    BranchTargets {
        /// The target list's name (operand of `brx.idx`).
        name: String,
        /// The labels.
        labels: Vec<String>,
    },
    /// `name: .callprototype {(ret)} _ (params) {.noreturn};`
    CallPrototype {
        /// The prototype's name (last operand of an indirect `call`).
        name: String,
        /// Return parameters, when present.
        return_params: Option<Vec<Param>>,
        /// Parameters.
        params: Vec<Param>,
        /// `.noreturn` given.
        noreturn: bool,
    },
}

/// A `.loc` debug directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    /// File index (see `.file`).
    pub file: u32,
    /// Line.
    pub line: u32,
    /// Column.
    pub column: u32,
    /// `, function_name label{+off}, inlined_at file line column`
    pub inlined_at: Option<InlinedAt>,
}

/// The inlining part of a `.loc` directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlinedAt {
    /// `function_name` label (usually `$L__info_stringN`).
    pub function_name: String,
    /// Offset added to the label.
    pub function_offset: i64,
    /// File index of the call site.
    pub file: u32,
    /// Line of the call site.
    pub line: u32,
    /// Column of the call site.
    pub column: u32,
}

// ---------------------------------------------------------------------------------------------
// Instructions
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Operands
// ---------------------------------------------------------------------------------------------

/// A (non-special) register name, `%`-prefixed or a plain identifier declared with `.reg`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Register(pub String);

impl Register {
    /// The name as written (`%r12`).
    pub fn name(&self) -> &str {
        &self.0
    }

    /// Splits a parameterized register name into prefix and index: `%r12` → `("%r", 12)`.
    /// `None` when the name does not end in digits.
    pub fn split_index(&self) -> Option<(&str, u32)> {
        let s = self.0.as_str();
        let digits = s.bytes().rev().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits == s.len() {
            return None;
        }
        let (p, n) = s.split_at(s.len() - digits);
        n.parse().ok().map(|n| (p, n))
    }
}

/// A component `.x` / `.y` / `.z` of a vector special register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `.x`
    X,
    /// `.y`
    Y,
    /// `.z`
    Z,
}

impl Dim {
    /// 0, 1 or 2.
    pub fn index(self) -> usize {
        match self {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        }
    }

    /// `x`, `y` or `z`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        }
    }
}

/// A special (read-only, hardware) register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    /// `%tid.d`: thread index in the CTA.
    Tid(Dim),
    /// `%ntid.d`: CTA dimensions.
    Ntid(Dim),
    /// `%ctaid.d`: CTA index in the grid.
    Ctaid(Dim),
    /// `%nctaid.d`: grid dimensions.
    Nctaid(Dim),
    /// `%clusterid.d`
    Clusterid(Dim),
    /// `%nclusterid.d`
    Nclusterid(Dim),
    /// `%cluster_ctaid.d`
    ClusterCtaid(Dim),
    /// `%cluster_nctaid.d`
    ClusterNctaid(Dim),
    /// `%cluster_ctarank`
    ClusterCtarank,
    /// `%cluster_nctarank`
    ClusterNctarank,
    /// `%is_explicit_cluster`
    IsExplicitCluster,
    /// `%laneid`
    Laneid,
    /// `%warpid`
    Warpid,
    /// `%nwarpid`
    Nwarpid,
    /// `%smid`
    Smid,
    /// `%nsmid`
    Nsmid,
    /// `%gridid`
    Gridid,
    /// `%lanemask_eq`
    LanemaskEq,
    /// `%lanemask_le`
    LanemaskLe,
    /// `%lanemask_lt`
    LanemaskLt,
    /// `%lanemask_ge`
    LanemaskGe,
    /// `%lanemask_gt`
    LanemaskGt,
    /// `%clock`
    Clock,
    /// `%clock_hi`
    ClockHi,
    /// `%clock64`
    Clock64,
    /// `%globaltimer`
    Globaltimer,
    /// `%globaltimer_lo`
    GlobaltimerLo,
    /// `%globaltimer_hi`
    GlobaltimerHi,
    /// `%dynamic_smem_size`
    DynamicSmemSize,
    /// `%total_smem_size`
    TotalSmemSize,
    /// `%aggr_smem_size`
    AggrSmemSize,
    /// `%envregN` (0..=31)
    Envreg(u8),
    /// `%pmN` (0..=7)
    Pm(u8),
    /// `%pmN_64` (0..=7)
    Pm64(u8),
}

impl SpecialReg {
    /// Parses a special register name including `%` and component (`%tid.x`).
    pub fn parse(s: &str) -> Option<SpecialReg> {
        use SpecialReg as S;
        let body = s.strip_prefix('%')?;
        if let Some((base, comp)) = body.split_once('.') {
            let d = match comp {
                "x" => Dim::X,
                "y" => Dim::Y,
                "z" => Dim::Z,
                _ => return None,
            };
            return Some(match base {
                "tid" => S::Tid(d),
                "ntid" => S::Ntid(d),
                "ctaid" => S::Ctaid(d),
                "nctaid" => S::Nctaid(d),
                "clusterid" => S::Clusterid(d),
                "nclusterid" => S::Nclusterid(d),
                "cluster_ctaid" => S::ClusterCtaid(d),
                "cluster_nctaid" => S::ClusterNctaid(d),
                _ => return None,
            });
        }
        let num = |prefix: &str, max: u8| -> Option<u8> {
            let n: u8 = body.strip_prefix(prefix)?.parse().ok()?;
            (n <= max && !body[prefix.len()..].starts_with('+')).then_some(n)
        };
        Some(match body {
            "cluster_ctarank" => S::ClusterCtarank,
            "cluster_nctarank" => S::ClusterNctarank,
            "is_explicit_cluster" => S::IsExplicitCluster,
            "laneid" => S::Laneid,
            "warpid" => S::Warpid,
            "nwarpid" => S::Nwarpid,
            "smid" => S::Smid,
            "nsmid" => S::Nsmid,
            "gridid" => S::Gridid,
            "lanemask_eq" => S::LanemaskEq,
            "lanemask_le" => S::LanemaskLe,
            "lanemask_lt" => S::LanemaskLt,
            "lanemask_ge" => S::LanemaskGe,
            "lanemask_gt" => S::LanemaskGt,
            "clock" => S::Clock,
            "clock_hi" => S::ClockHi,
            "clock64" => S::Clock64,
            "globaltimer" => S::Globaltimer,
            "globaltimer_lo" => S::GlobaltimerLo,
            "globaltimer_hi" => S::GlobaltimerHi,
            "dynamic_smem_size" => S::DynamicSmemSize,
            "total_smem_size" => S::TotalSmemSize,
            "aggr_smem_size" => S::AggrSmemSize,
            _ => {
                if let Some(n) = body.strip_suffix("_64").and_then(|b| {
                    let n: u8 = b.strip_prefix("pm")?.parse().ok()?;
                    (n <= 7).then_some(n)
                }) {
                    S::Pm64(n)
                } else if let Some(n) = num("envreg", 31) {
                    S::Envreg(n)
                } else if let Some(n) = num("pm", 7) {
                    S::Pm(n)
                } else {
                    return None;
                }
            }
        })
    }
}

impl fmt::Display for SpecialReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SpecialReg as S;
        let dim = |f: &mut fmt::Formatter<'_>, n: &str, d: &Dim| write!(f, "%{n}.{}", d.as_str());
        match self {
            S::Tid(d) => dim(f, "tid", d),
            S::Ntid(d) => dim(f, "ntid", d),
            S::Ctaid(d) => dim(f, "ctaid", d),
            S::Nctaid(d) => dim(f, "nctaid", d),
            S::Clusterid(d) => dim(f, "clusterid", d),
            S::Nclusterid(d) => dim(f, "nclusterid", d),
            S::ClusterCtaid(d) => dim(f, "cluster_ctaid", d),
            S::ClusterNctaid(d) => dim(f, "cluster_nctaid", d),
            S::ClusterCtarank => f.write_str("%cluster_ctarank"),
            S::ClusterNctarank => f.write_str("%cluster_nctarank"),
            S::IsExplicitCluster => f.write_str("%is_explicit_cluster"),
            S::Laneid => f.write_str("%laneid"),
            S::Warpid => f.write_str("%warpid"),
            S::Nwarpid => f.write_str("%nwarpid"),
            S::Smid => f.write_str("%smid"),
            S::Nsmid => f.write_str("%nsmid"),
            S::Gridid => f.write_str("%gridid"),
            S::LanemaskEq => f.write_str("%lanemask_eq"),
            S::LanemaskLe => f.write_str("%lanemask_le"),
            S::LanemaskLt => f.write_str("%lanemask_lt"),
            S::LanemaskGe => f.write_str("%lanemask_ge"),
            S::LanemaskGt => f.write_str("%lanemask_gt"),
            S::Clock => f.write_str("%clock"),
            S::ClockHi => f.write_str("%clock_hi"),
            S::Clock64 => f.write_str("%clock64"),
            S::Globaltimer => f.write_str("%globaltimer"),
            S::GlobaltimerLo => f.write_str("%globaltimer_lo"),
            S::GlobaltimerHi => f.write_str("%globaltimer_hi"),
            S::DynamicSmemSize => f.write_str("%dynamic_smem_size"),
            S::TotalSmemSize => f.write_str("%total_smem_size"),
            S::AggrSmemSize => f.write_str("%aggr_smem_size"),
            S::Envreg(n) => write!(f, "%envreg{n}"),
            S::Pm(n) => write!(f, "%pm{n}"),
            S::Pm64(n) => write!(f, "%pm{n}_64"),
        }
    }
}

/// An immediate constant.
///
/// Integer literals are 64-bit: `Int` holds signed values (decimal, hex, octal, binary, with or
/// without a leading `-`), `UInt` holds literals with the `U` suffix or too large for `i64`.
/// `0fXXXXXXXX` is `F32` (raw bits) and `0dXXXXXXXXXXXXXXXX` / decimal floats are `F64` (raw
/// bits; PTX decimal float literals are double precision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Immediate {
    /// A signed 64-bit integer literal.
    Int(i64),
    /// An unsigned 64-bit integer literal (`U` suffix, or above `i64::MAX`).
    UInt(u64),
    /// Single-precision float, raw IEEE bits (`0f3F800000`).
    F32(u32),
    /// Double-precision float, raw IEEE bits (`0d3FF0000000000000`, `1.0`).
    F64(u64),
}

impl Immediate {
    /// The literal's 64 raw bits (sign-extended for `Int`, zero-extended for `F32`).
    pub fn bits(self) -> u64 {
        match self {
            Immediate::Int(v) => v as u64,
            Immediate::UInt(v) => v,
            Immediate::F32(b) => b as u64,
            Immediate::F64(b) => b,
        }
    }

    /// The value as an f64 (integers converted, floats widened).
    pub fn as_f64(self) -> f64 {
        match self {
            Immediate::Int(v) => v as f64,
            Immediate::UInt(v) => v as f64,
            Immediate::F32(b) => f32::from_bits(b) as f64,
            Immediate::F64(b) => f64::from_bits(b),
        }
    }
}

/// The base of an address operand.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AddressBase {
    /// `[%rd1]`
    Reg(Register),
    /// `[sym]`: a variable or parameter.
    Symbol(String),
    /// `[1024]`: an absolute address.
    Imm(u64),
}

/// An address operand `[base]`, `[base+off]`, `[base+-off]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Address {
    /// The base.
    pub base: AddressBase,
    /// Byte offset (0 when absent).
    pub offset: i64,
}

/// One instruction operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A register.
    Reg(Register),
    /// A special register (`%tid.x`, `%laneid`, ...).
    Special(SpecialReg),
    /// An immediate.
    Imm(Immediate),
    /// A symbol: label, variable, parameter or function name. With an offset (`sym+4`) when
    /// used as a value, e.g. `mov.u64 %rd1, sym+4;`.
    Symbol {
        /// The symbol.
        name: String,
        /// Byte offset (0 when absent).
        offset: i64,
    },
    /// An address `[...]`.
    Address(Address),
    /// A vector `{a, b, ...}` (elements are registers, immediates or [`Operand::Sink`]).
    Vector(Vec<Operand>),
    /// `_`: a discarded destination.
    Sink,
    /// `!%p`: a negated predicate source.
    Not(Register),
    /// `a|b`: a destination with a predicate output (`shfl ... %r1|%p1`, `setp ... %p|%q`).
    Pair(Box<Operand>, Register),
    /// `(a, b, ...)`: a parenthesised list (call return values and arguments).
    List(Vec<Operand>),
}

impl Operand {
    /// A register operand from a name.
    pub fn reg(name: &str) -> Operand {
        Operand::Reg(Register(name.to_string()))
    }

    /// A symbol operand without offset.
    pub fn symbol(name: &str) -> Operand {
        Operand::Symbol {
            name: name.to_string(),
            offset: 0,
        }
    }

    /// A signed integer immediate.
    pub fn int(v: i64) -> Operand {
        Operand::Imm(Immediate::Int(v))
    }

    /// An f32 immediate (printed as `0fXXXXXXXX`).
    pub fn f32(v: f32) -> Operand {
        Operand::Imm(Immediate::F32(v.to_bits()))
    }

    /// An f64 immediate (printed as `0dXXXXXXXXXXXXXXXX`).
    pub fn f64(v: f64) -> Operand {
        Operand::Imm(Immediate::F64(v.to_bits()))
    }

    /// An address `[reg+offset]`.
    pub fn addr_reg(reg: &str, offset: i64) -> Operand {
        Operand::Address(Address {
            base: AddressBase::Reg(Register(reg.to_string())),
            offset,
        })
    }

    /// An address `[symbol+offset]`.
    pub fn addr_symbol(symbol: &str, offset: i64) -> Operand {
        Operand::Address(Address {
            base: AddressBase::Symbol(symbol.to_string()),
            offset,
        })
    }

    /// The register, if this is [`Operand::Reg`].
    pub fn as_reg(&self) -> Option<&Register> {
        match self {
            Operand::Reg(r) => Some(r),
            _ => None,
        }
    }

    /// The symbol name, if this is [`Operand::Symbol`].
    pub fn as_symbol(&self) -> Option<&str> {
        match self {
            Operand::Symbol { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The address, if this is [`Operand::Address`].
    pub fn as_address(&self) -> Option<&Address> {
        match self {
            Operand::Address(a) => Some(a),
            _ => None,
        }
    }

    /// The immediate, if this is [`Operand::Imm`].
    pub fn as_imm(&self) -> Option<Immediate> {
        match self {
            Operand::Imm(i) => Some(*i),
            _ => None,
        }
    }
}
