//! Declarations (`.reg`, `.shared`, ... with initializers) and the statements of a body.
use super::*;

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
        /// `brx.idx` with index `i` jumps to `labels[i]`; at least one (the parser requires it).
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
    /// Source line in that file, as written: the directive is parsed to be printed back, and
    /// nothing else reads it.
    pub line: u32,
    /// Source column, as written (like `line`).
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
