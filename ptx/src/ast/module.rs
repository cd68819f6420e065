//! Module level: the module, its directives, functions and their parameters.
use super::*;

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
        /// The line's comma-separated values, each `ty` wide.
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
