//! The PTX parser: tokens to the typed model in [`crate::ast`].
//!
//! Recursive descent with bounded nesting ([`MAX_DEPTH`]); every failure is a
//! [`ParseError`] with line and column, never a panic.
//!
//! ```
//! use ptx::{Modifier, Opcode, StateSpace, Statement, Type};
//!
//! let src = "
//! .version 9.5
//! .target sm_90
//! .address_size 64
//! .visible .entry k(.param .u64 k_param_0)
//! {
//!     .reg .b64 %rd<3>;
//!     .reg .f32 %f<2>;
//!     ld.param.u64 %rd1, [k_param_0];
//!     cvta.to.global.u64 %rd2, %rd1;
//!     ld.global.nc.f32 %f1, [%rd2+4];
//!     ret;
//! }";
//! let module = ptx::parse(src).unwrap();
//! let kernel = module.kernel("k").unwrap();
//! let body = kernel.body.as_deref().unwrap();
//! let Statement::Instruction(ld) = &body[4] else { panic!() };
//! assert_eq!(ld.op, Opcode::Ld);
//! assert_eq!(ld.state_space(), Some(StateSpace::Global));
//! assert!(ld.has(Modifier::Nc));
//! assert_eq!(ld.ty(), Some(Type::F32));
//! assert_eq!(ld.to_string(), "ld.global.nc.f32\t%f1, [%rd2+4];");
//!
//! // Printing gives PTX that parses back to the same model.
//! assert_eq!(ptx::parse(&ptx::print(&module)).unwrap(), module);
//!
//! // Errors carry line and column.
//! let err = ptx::parse(".version 9.5\n.target sm_90\n.entry k()\n{\n\tfoo.u32 %r1;\n}").unwrap_err();
//! assert_eq!((err.line, err.column), (5, 2));
//! assert_eq!(err.message, "unknown opcode `foo`");
//! ```

use crate::ast::*;
use crate::error::ParseError;
use crate::lexer::{unescape, Lexer, TokKind, Token};

/// Maximum nesting depth of `{ }` blocks and initializer lists.
pub const MAX_DEPTH: usize = 64;

/// Parses a whole PTX module.
pub fn parse(src: &str) -> Result<Module, ParseError> {
    let mut p = Parser::new(src, true);
    let m = p.module();
    p.finish(m)
}

/// Checks a whole PTX module against the same grammar as [`parse`] — same acceptance, same
/// errors at the same line:column — without building the model: statements are checked and
/// dropped as the parser streams through them, so memory stays bounded by one statement whatever
/// the module's size. Returns the module's [`Outline`]: header and function signatures.
///
/// ```
/// let src = ".version 9.5\n.target sm_90\n.address_size 64\n\
///            .visible .entry k(.param .u64 k_param_0)\n{\n\tret;\n}\n";
/// let outline = ptx::check(src).unwrap();
/// assert_eq!(outline.kernel("k").unwrap().params()[0].name, "k_param_0");
/// let bad = src.replace("ret;", "ret");
/// assert_eq!(ptx::check(&bad).unwrap_err(), ptx::parse(&bad).unwrap_err());
/// ```
pub fn check(src: &str) -> Result<Outline, ParseError> {
    let mut p = Parser::new(src, false);
    let m = p.module();
    p.finish(m).map(Outline::from_module)
}

/// Parses a module's header, module-level directives and function signatures with the grammar
/// of [`parse`], and only delimits each function body: comments, string literals and nested
/// braces are followed to the closing `}`, the statements inside are not parsed. This is what a
/// loader needs to resolve kernels and check their parameters, at several hundred MB/s; the
/// bodies are left to whoever compiles them (a driver's JIT, the emulator), or to [`check`].
///
/// ```
/// let src = ".version 9.5\n.target sm_90\n.visible .entry k(.param .u64 p)\n{\n\tfoo.u32 %r1;\n}\n";
/// assert_eq!(ptx::outline(src).unwrap().kernel("k").unwrap().params().len(), 1);
/// assert!(ptx::check(src).is_err()); // the body does not parse
/// assert!(ptx::outline(".version 9.5\n.target sm_90\n.entry k(\n{").is_err());
/// ```
pub fn outline(src: &str) -> Result<Outline, ParseError> {
    let mut p = Parser::new(src, false);
    p.skip_bodies = true;
    let m = p.module();
    p.finish(m).map(Outline::from_module)
}

/// Parses a single instruction (with optional guard and optional trailing `;`), e.g.
/// `"@%p1 add.s32 %r1, %r2, 1"`. Non-`%` identifiers are taken as symbols.
pub fn parse_instruction(src: &str) -> Result<Instruction, ParseError> {
    let mut p = Parser::new(src, true);
    let r = p.instruction(false).and_then(|inst| {
        if p.peek().is_some() {
            Err(p.expected("end of input"))
        } else {
            Ok(inst)
        }
    });
    p.finish(r)
}

/// A recursive-descent parser over a window of tokens lexed on demand. Backtracking never
/// crosses a statement boundary, so the window is emptied at each one ([`Parser::release`]).
struct Parser<'a> {
    src: &'a str,
    lexer: Lexer<'a>,
    /// Tokens of the current statement (and lookahead); `pos` indexes it.
    toks: Vec<Token<'a>>,
    pos: usize,
    /// The last token released from the window (for end-of-input positions).
    released: Option<Token<'a>>,
    /// The lexer's error; the window ends where it happened.
    lex_error: Option<ParseError>,
    lex_done: bool,
    /// Names declared with `.reg` that do not start with `%`, one list per scope.
    reg_scopes: Vec<Vec<&'a str>>,
    /// The `.reg` parameters of the `.func` being parsed (registers inside its body).
    reg_params: Vec<String>,
    /// Whether to build the model; when false statements are checked and dropped ([`check`]).
    build: bool,
    /// Whether function bodies are only delimited, not parsed ([`outline`]).
    skip_bodies: bool,
    /// Scratch: the dotted words after an opcode, and a multi-word opcode's name.
    words: Vec<(&'a str, usize)>,
    scratch: String,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, build: bool) -> Self {
        Parser {
            src,
            lexer: Lexer::new(src),
            toks: Vec::new(),
            pos: 0,
            released: None,
            lex_error: None,
            lex_done: false,
            reg_scopes: Vec::new(),
            reg_params: Vec::new(),
            build,
            skip_bodies: false,
            words: Vec::new(),
            scratch: String::new(),
        }
    }

    /// A successful parse still fails if the lexer stopped early.
    fn finish<T>(&mut self, r: Result<T, ParseError>) -> Result<T, ParseError> {
        match (r, self.lex_error.take()) {
            (Ok(_), Some(e)) => Err(e),
            (r, _) => r,
        }
    }

    // ----- token window -----

    /// The token `n` ahead of the cursor, lexing as needed.
    #[inline]
    fn tok(&mut self, n: usize) -> Option<&Token<'a>> {
        while self.toks.len() <= self.pos + n {
            if !self.lex_more() {
                return None;
            }
        }
        self.toks.get(self.pos + n)
    }

    fn lex_more(&mut self) -> bool {
        if self.lex_done {
            return false;
        }
        match self.lexer.next_token() {
            Ok(Some(t)) => {
                self.toks.push(t);
                true
            }
            Ok(None) => {
                self.lex_done = true;
                false
            }
            Err(e) => {
                self.lex_done = true;
                self.lex_error = Some(e);
                false
            }
        }
    }

    /// Drops the tokens before the cursor: called where a statement starts, since nothing ever
    /// backtracks into a finished statement.
    fn release(&mut self) {
        if self.pos > 0 {
            self.released = self.toks.get(self.pos - 1).copied();
            self.toks.drain(..self.pos);
            self.pos = 0;
        }
    }

    /// Owns a name when building the model; an empty (unallocated) string when only checking.
    fn own(&self, s: &str) -> String {
        if self.build {
            s.to_owned()
        } else {
            String::new()
        }
    }

    // ----- token helpers -----

    fn peek(&mut self) -> Option<TokKind<'a>> {
        self.tok(0).map(|t| t.kind)
    }

    fn peek_at(&mut self, n: usize) -> Option<TokKind<'a>> {
        self.tok(n).map(|t| t.kind)
    }

    fn peek_joined(&mut self) -> bool {
        self.tok(0).is_some_and(|t| t.joined)
    }

    fn err_here(&mut self, msg: impl Into<String>) -> ParseError {
        let _ = self.tok(0);
        self.err_at(self.pos, msg)
    }

    /// An error at the token with index `idx` of the window (end of input if out of range).
    fn err_at(&mut self, idx: usize, msg: impl Into<String>) -> ParseError {
        match self.toks.get(idx) {
            Some(t) => ParseError::at(self.src, t.start, msg),
            None => self.err_eof(msg),
        }
    }

    /// An error at the end of the input, or the lexer's error if that is why the input ended.
    fn err_eof(&mut self, msg: impl Into<String>) -> ParseError {
        while self.lex_more() {}
        if let Some(e) = &self.lex_error {
            return e.clone();
        }
        // Position just past the last token.
        let end = self
            .toks
            .last()
            .or(self.released.as_ref())
            .map_or(0, |t| t.end);
        ParseError::at(self.src, end, msg)
    }

    fn found(&mut self) -> String {
        match self.peek() {
            Some(k) => k.describe(),
            None => "end of input".to_string(),
        }
    }

    fn expected(&mut self, what: &str) -> ParseError {
        let found = self.found();
        self.err_here(format!("expected {what}, found {found}"))
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(TokKind::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char, ctx: &str) -> Result<(), ParseError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{c}' {ctx}")))
        }
    }

    fn peek_dot(&mut self) -> Option<&'a str> {
        match self.peek() {
            Some(TokKind::Dot(s)) => Some(s),
            _ => None,
        }
    }

    fn eat_dot(&mut self, w: &str) -> bool {
        if self.peek_dot() == Some(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_dot(&mut self, w: &str) -> Result<(), ParseError> {
        if self.eat_dot(w) {
            Ok(())
        } else {
            Err(self.expected(&format!("`.{w}`")))
        }
    }

    /// An identifier, borrowed from the source.
    fn name(&mut self, what: &str) -> Result<&'a str, ParseError> {
        match self.peek() {
            Some(TokKind::Ident(s)) => {
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.expected(what)),
        }
    }

    /// An identifier, owned (module-level names, kept in both modes).
    fn ident(&mut self, what: &str) -> Result<String, ParseError> {
        self.name(what).map(str::to_owned)
    }

    fn uint(&mut self, what: &str) -> Result<u64, ParseError> {
        match self.peek() {
            Some(TokKind::Int(v, _)) => {
                self.pos += 1;
                Ok(v)
            }
            _ => Err(self.expected(what)),
        }
    }

    fn u32(&mut self, what: &str) -> Result<u32, ParseError> {
        let here = self.pos;
        let v = self.uint(what)?;
        u32::try_from(v).map_err(|_| {
            self.pos = here;
            self.err_here(format!("{what} {v} is out of range"))
        })
    }

    /// A signed integer: `-`? int.
    fn int(&mut self, what: &str) -> Result<i64, ParseError> {
        let neg = self.eat_punct('-');
        let here = self.pos;
        let v = self.uint(what)?;
        let r = if neg {
            if v <= i64::MAX as u64 + 1 {
                Some((v as i64).wrapping_neg())
            } else {
                None
            }
        } else {
            i64::try_from(v).ok()
        };
        r.ok_or_else(|| self.err_at(here, format!("{what} is out of range")))
    }

    fn string(&mut self, what: &str) -> Result<String, ParseError> {
        match self.peek() {
            Some(TokKind::Str(s)) => {
                self.pos += 1;
                Ok(unescape(s).into_owned())
            }
            _ => Err(self.expected(what)),
        }
    }

    // ----- module -----

    fn module(&mut self) -> Result<Module, ParseError> {
        self.expect_dot("version")?;
        let version = self.version()?;
        self.expect_dot("target")?;
        let arch = self.ident("a target architecture such as `sm_90`")?;
        let mut options = Vec::new();
        while self.eat_punct(',') {
            options.push(self.ident("a target option")?);
        }
        let target = Target { arch, options };
        let address_size = if self.eat_dot("address_size") {
            let here = self.pos;
            let v = self.u32("an address size")?;
            if v != 32 && v != 64 {
                self.pos = here;
                return Err(self.err_here(format!("address size must be 32 or 64, found {v}")));
            }
            Some(v)
        } else {
            None
        };
        let mut directives = Vec::new();
        loop {
            self.release();
            if self.peek().is_none() {
                break;
            }
            let d = self.directive()?;
            if self.build || matches!(d, Directive::Function(_)) {
                directives.push(d);
            }
        }
        Ok(Module {
            version,
            target,
            address_size,
            directives,
        })
    }

    fn version(&mut self) -> Result<Version, ParseError> {
        let Some(t) = self.tok(0).copied() else {
            return Err(self.expected("a version number such as `9.5`"));
        };
        let text = self.src.get(t.start..t.end).unwrap_or("");
        let parsed = match t.kind {
            TokKind::F64(_) => text
                .split_once('.')
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?))),
            _ => None,
        };
        match parsed {
            Some((major, minor)) => {
                self.pos += 1;
                Ok(Version { major, minor })
            }
            None => Err(self.expected("a version number such as `9.5`")),
        }
    }

    fn linkage(&mut self) -> Option<Linkage> {
        let l = match self.peek_dot()? {
            "visible" => Linkage::Visible,
            "extern" => Linkage::Extern,
            "weak" => Linkage::Weak,
            "common" => Linkage::Common,
            _ => return None,
        };
        self.pos += 1;
        Some(l)
    }

    fn directive(&mut self) -> Result<Directive, ParseError> {
        if self.eat_dot("file") {
            let index = self.u32("a file index")?;
            let path = self.string("a file path string")?;
            let timestamp_size = if self.eat_punct(',') {
                let ts = self.uint("a timestamp")?;
                self.expect_punct(',', "between timestamp and file size")?;
                Some((ts, self.uint("a file size")?))
            } else {
                None
            };
            return Ok(Directive::File(FileDirective {
                index,
                path,
                timestamp_size,
            }));
        }
        if self.eat_dot("pragma") {
            return Ok(Directive::Pragma(self.pragma_strings()?));
        }
        if self.eat_dot("section") {
            return Ok(Directive::Section(self.section()?));
        }
        let linkage = self.linkage();
        match self.peek_dot() {
            Some("entry") | Some("func") => Ok(Directive::Function(self.function(linkage)?)),
            Some(s) if is_var_space(s) => Ok(Directive::Variable(self.var_decl(linkage)?)),
            _ => Err(self.expected(
                "a module directive (`.entry`, `.func`, `.global`, `.const`, `.shared`, `.file`)",
            )),
        }
    }

    fn section(&mut self) -> Result<Section, ParseError> {
        let name = match self.peek_dot() {
            Some(n) => n.to_string(),
            None => return Err(self.expected("a section name such as `.debug_str`")),
        };
        self.pos += 1;
        self.expect_punct('{', "to open the section")?;
        let mut items = Vec::new();
        loop {
            self.release();
            match self.peek() {
                Some(TokKind::Punct('}')) => {
                    self.pos += 1;
                    return Ok(Section { name, items });
                }
                Some(TokKind::Ident(_)) if self.peek_at(1) == Some(TokKind::Punct(':')) => {
                    let label = self.name("a label")?;
                    self.pos += 1;
                    if self.build {
                        items.push(SectionItem::Label(label.to_owned()));
                    }
                }
                Some(TokKind::Dot(d)) => {
                    let Some(ty) = Type::from_str(d).filter(|t| t.is_bits()) else {
                        return Err(self.expected("`.b8`, `.b16`, `.b32` or `.b64` section data"));
                    };
                    self.pos += 1;
                    let mut values = vec![self.section_value()?];
                    while self.eat_punct(',') {
                        let v = self.section_value()?;
                        if self.build {
                            values.push(v);
                        }
                    }
                    self.eat_punct(';');
                    if self.build {
                        items.push(SectionItem::Data { ty, values });
                    }
                }
                None => {
                    return Err(
                        self.err_eof("expected '}' to close the section, found end of input")
                    )
                }
                Some(_) => return Err(self.expected("a label, section data or '}'")),
            }
        }
    }

    fn section_value(&mut self) -> Result<SectionValue, ParseError> {
        match self.peek() {
            Some(TokKind::Dot(d)) => {
                self.pos += 1;
                Ok(SectionValue::Section(self.own(d)))
            }
            Some(TokKind::Ident(_)) => {
                let name = self.name("a label")?;
                if self.peek() == Some(TokKind::Punct('-'))
                    && matches!(self.peek_at(1), Some(TokKind::Ident(_)))
                {
                    self.pos += 1;
                    let b = self.name("a label")?;
                    return Ok(SectionValue::Diff(self.own(name), self.own(b)));
                }
                let offset = self.opt_offset()?;
                Ok(SectionValue::Symbol {
                    name: self.own(name),
                    offset,
                })
            }
            _ => Ok(SectionValue::Int(self.int("a section data value")?)),
        }
    }

    fn function(&mut self, linkage: Option<Linkage>) -> Result<Function, ParseError> {
        let kind = if self.eat_dot("entry") {
            FunctionKind::Entry
        } else {
            self.expect_dot("func")?;
            FunctionKind::Func
        };
        let return_params =
            if kind == FunctionKind::Func && self.peek() == Some(TokKind::Punct('(')) {
                Some(self.param_list()?)
            } else {
                None
            };
        let name = self.ident("a function name")?;
        let params = if self.peek() == Some(TokKind::Punct('(')) {
            Some(self.param_list()?)
        } else {
            None
        };
        let mut perf = Vec::new();
        while let Some(d) = self.peek_dot() {
            let item = match d {
                "maxntid" | "reqntid" | "reqnctapercluster" => {
                    self.pos += 1;
                    let mut v = vec![self.u32("a dimension")?];
                    while self.eat_punct(',') {
                        if v.len() == 3 {
                            return Err(self.err_here("at most 3 dimensions are allowed"));
                        }
                        v.push(self.u32("a dimension")?);
                    }
                    match d {
                        "maxntid" => PerfDirective::MaxNtid(v),
                        "reqntid" => PerfDirective::ReqNtid(v),
                        _ => PerfDirective::ReqNctaPerCluster(v),
                    }
                }
                "minnctapersm" | "maxnctapersm" | "maxnreg" | "maxclusterrank" => {
                    self.pos += 1;
                    let n = self.u32("a count")?;
                    match d {
                        "minnctapersm" => PerfDirective::MinNctaPerSm(n),
                        "maxnctapersm" => PerfDirective::MaxNctaPerSm(n),
                        "maxnreg" => PerfDirective::MaxNreg(n),
                        _ => PerfDirective::MaxClusterRank(n),
                    }
                }
                "explicitcluster" => {
                    self.pos += 1;
                    PerfDirective::ExplicitCluster
                }
                "noreturn" => {
                    self.pos += 1;
                    PerfDirective::NoReturn
                }
                "pragma" => {
                    self.pos += 1;
                    PerfDirective::Pragma(self.pragma_strings()?)
                }
                _ => break,
            };
            perf.push(item);
        }
        let body = if self.eat_punct(';') {
            None
        } else if self.peek() == Some(TokKind::Punct('{')) {
            self.pos += 1;
            // `.reg` parameters of a `.func` are registers inside its body.
            self.reg_params = return_params
                .iter()
                .chain(params.iter())
                .flatten()
                .filter(|p| p.space == StateSpace::Reg && !p.name.starts_with('%'))
                .map(|p| p.name.clone())
                .collect();
            self.reg_scopes.clear();
            let b = if self.skip_bodies {
                self.skip_body()?;
                Vec::new()
            } else {
                self.block_body(1)?
            };
            self.reg_params.clear();
            Some(b)
        } else {
            return Err(self.expected("'{' or ';' after the function signature"));
        };
        Ok(Function {
            linkage,
            kind,
            return_params,
            name,
            params,
            perf,
            body,
        })
    }

    fn pragma_strings(&mut self) -> Result<Vec<String>, ParseError> {
        let mut v = vec![self.string("a pragma string")?];
        while self.eat_punct(',') {
            v.push(self.string("a pragma string")?);
        }
        self.expect_punct(';', "after .pragma")?;
        Ok(v)
    }

    fn param_list(&mut self) -> Result<Vec<Param>, ParseError> {
        self.expect_punct('(', "to open a parameter list")?;
        let mut v = Vec::new();
        if self.eat_punct(')') {
            return Ok(v);
        }
        loop {
            // Nothing backtracks into an earlier parameter.
            self.release();
            v.push(self.param()?);
            if self.eat_punct(')') {
                return Ok(v);
            }
            self.expect_punct(',', "or ')' in parameter list")?;
        }
    }

    fn param(&mut self) -> Result<Param, ParseError> {
        let space = match self.peek_dot() {
            Some("param") => StateSpace::Param,
            Some("reg") => StateSpace::Reg,
            _ => return Err(self.expected("`.param` or `.reg`")),
        };
        self.pos += 1;
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        let mut ptr: Option<PtrAttr> = None;
        while let Some(w) = self.peek_dot() {
            self.pos += 1;
            if w == "align" {
                let a = Some(self.u32("an alignment")?);
                match ptr.as_mut() {
                    Some(p) => p.align = a,
                    None => align = a,
                }
            } else if w == "ptr" {
                ptr = Some(PtrAttr {
                    space: None,
                    align: None,
                });
            } else if let (Some(p), Some(sp)) = (ptr.as_mut(), StateSpace::from_str(w)) {
                p.space = Some(sp);
            } else if let Some(v) = VectorWidth::from_str(w) {
                vector = Some(v);
            } else if let Some(t) = Type::from_str(w) {
                ty = Some(t);
            } else {
                self.pos -= 1;
                return Err(self.expected("a parameter type, `.align`, or `.ptr`"));
            }
        }
        let Some(ty) = ty else {
            return Err(self.expected("a parameter type such as `.u64`"));
        };
        let name = self.ident("a parameter name")?;
        let array = self.array_dims()?;
        Ok(Param {
            space,
            align,
            vector,
            ty,
            ptr,
            name,
            array,
        })
    }

    fn array_dims(&mut self) -> Result<Vec<Option<u64>>, ParseError> {
        let mut dims = Vec::new();
        while self.eat_punct('[') {
            if dims.len() >= 8 {
                return Err(self.err_here("too many array dimensions"));
            }
            if self.eat_punct(']') {
                dims.push(None);
            } else {
                dims.push(Some(self.uint("an array size")?));
                self.expect_punct(']', "to close the array size")?;
            }
        }
        Ok(dims)
    }

    // ----- declarations -----

    fn var_decl(&mut self, linkage: Option<Linkage>) -> Result<VarDecl, ParseError> {
        let space = match self.peek_dot().and_then(StateSpace::from_str) {
            Some(s) => s,
            None => return Err(self.expected("a state space")),
        };
        self.pos += 1;
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        while let Some(w) = self.peek_dot() {
            self.pos += 1;
            if w == "align" {
                align = Some(self.u32("an alignment")?);
            } else if let Some(v) = VectorWidth::from_str(w) {
                vector = Some(v);
            } else if let Some(t) = Type::from_str(w) {
                if ty.is_some() {
                    self.pos -= 1;
                    return Err(self.expected("a variable name"));
                }
                ty = Some(t);
            } else {
                self.pos -= 1;
                return Err(self.expected("a variable type, `.align`, or `.v2`/`.v4`"));
            }
        }
        let Some(ty) = ty else {
            return Err(self.expected("a variable type such as `.b32`"));
        };
        let mut declarators = Vec::new();
        loop {
            let name = self.name("a variable name")?;
            if space == StateSpace::Reg && !name.starts_with('%') {
                if let Some(s) = self.reg_scopes.last_mut() {
                    s.push(name);
                }
            }
            let range = if self.eat_punct('<') {
                let n = self.u32("a register count")?;
                self.expect_punct('>', "to close `<N>`")?;
                Some(n)
            } else {
                None
            };
            let array = self.array_dims()?;
            let init = if self.eat_punct('=') {
                Some(self.initializer(0)?)
            } else {
                None
            };
            if self.build {
                declarators.push(Declarator {
                    name: name.to_owned(),
                    range,
                    array,
                    init,
                });
            }
            if self.eat_punct(';') {
                break;
            }
            self.expect_punct(',', "or ';' after a declaration")?;
        }
        Ok(VarDecl {
            linkage,
            space,
            align,
            vector,
            ty,
            declarators,
        })
    }

    fn initializer(&mut self, depth: usize) -> Result<Initializer, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.err_here("initializer nested too deeply"));
        }
        if self.eat_punct('{') {
            let mut v = Vec::new();
            if self.eat_punct('}') {
                return Ok(Initializer::List(v));
            }
            loop {
                let item = self.initializer(depth + 1)?;
                if self.build {
                    v.push(item);
                }
                if self.eat_punct('}') {
                    return Ok(Initializer::List(v));
                }
                self.expect_punct(',', "or '}' in initializer list")?;
            }
        }
        if let Some(TokKind::Ident(s)) = self.peek() {
            self.pos += 1;
            if s == "generic" && self.eat_punct('(') {
                let name = self.name("a symbol inside generic()")?;
                self.expect_punct(')', "to close generic(")?;
                let offset = self.opt_offset()?;
                return Ok(Initializer::Generic {
                    name: self.own(name),
                    offset,
                });
            }
            let offset = self.opt_offset()?;
            return Ok(Initializer::Symbol {
                name: self.own(s),
                offset,
            });
        }
        match self.immediate()? {
            Some(i) => Ok(Initializer::Imm(i)),
            None => Err(self.expected("an initializer value")),
        }
    }

    /// `+N`, `+-N` or `-N` after a symbol; 0 when absent.
    fn opt_offset(&mut self) -> Result<i64, ParseError> {
        if self.eat_punct('+') || self.peek() == Some(TokKind::Punct('-')) {
            self.int("an offset")
        } else {
            Ok(0)
        }
    }

    /// An optional-sign numeric literal; `None` (consuming nothing) if the next token is not one.
    fn immediate(&mut self) -> Result<Option<Immediate>, ParseError> {
        let neg = self.peek() == Some(TokKind::Punct('-'));
        let k = if neg { self.peek_at(1) } else { self.peek() };
        let here = self.pos;
        let imm = match k {
            Some(TokKind::Int(v, unsigned)) => {
                if neg {
                    if unsigned || v > i64::MAX as u64 + 1 {
                        self.pos += 1;
                        return Err(self.err_here("negative integer literal is out of range"));
                    }
                    Immediate::Int((v as i64).wrapping_neg())
                } else if unsigned || v > i64::MAX as u64 {
                    Immediate::UInt(v)
                } else {
                    Immediate::Int(v as i64)
                }
            }
            Some(TokKind::F32(b)) => Immediate::F32(if neg { b ^ 0x8000_0000 } else { b }),
            Some(TokKind::F64(b)) => Immediate::F64(if neg { b ^ (1 << 63) } else { b }),
            _ => return Ok(None),
        };
        self.pos = here + 1 + usize::from(neg);
        Ok(Some(imm))
    }

    // ----- statements -----

    /// Skips a function body after its `{` (see [`outline`]).
    fn skip_body(&mut self) -> Result<(), ParseError> {
        // Resume the lexer right after the `{` (nothing past it has been lexed by a peek, but
        // rewinding makes that not matter).
        let at = self.toks.get(self.pos).map(|t| t.start);
        if let Some(at) = at {
            self.lexer.seek(at);
            self.toks.truncate(self.pos);
        }
        match self.lexer.skip_block() {
            Ok(()) => Ok(()),
            Err(Some(e)) => Err(e),
            Err(None) => {
                self.lex_done = true;
                let last = self.lexer.last_token_end();
                Err(ParseError::at(
                    self.src,
                    last,
                    "expected '}' to close the block, found end of input",
                ))
            }
        }
    }

    /// Statements up to and including the closing `}`.
    fn block_body(&mut self, depth: usize) -> Result<Vec<Statement>, ParseError> {
        if depth > MAX_DEPTH {
            self.pos = self.pos.saturating_sub(1);
            return Err(self.err_here("blocks nested too deeply"));
        }
        self.reg_scopes.push(Vec::new());
        let mut out = Vec::new();
        loop {
            self.release();
            let s = match self.peek() {
                None => {
                    return Err(self.err_eof("expected '}' to close the block, found end of input"))
                }
                Some(TokKind::Punct('}')) => {
                    self.pos += 1;
                    self.reg_scopes.pop();
                    return Ok(out);
                }
                Some(TokKind::Punct('{')) => {
                    self.pos += 1;
                    Statement::Block(self.block_body(depth + 1)?)
                }
                Some(TokKind::Dot(_)) => self.body_directive()?,
                Some(TokKind::Ident(_)) if self.peek_at(1) == Some(TokKind::Punct(':')) => {
                    self.label_like()?
                }
                Some(TokKind::Ident(_)) | Some(TokKind::Punct('@')) => {
                    Statement::Instruction(self.instruction(true)?)
                }
                Some(_) => return Err(self.expected("a statement")),
            };
            if self.build {
                out.push(s);
            }
        }
    }

    fn body_directive(&mut self) -> Result<Statement, ParseError> {
        if self.eat_dot("loc") {
            let file = self.u32("a file index")?;
            let line = self.u32("a line number")?;
            let column = self.u32("a column number")?;
            let inlined_at = if self.eat_punct(',') {
                let w = self.name("`function_name`")?;
                if w != "function_name" {
                    self.pos -= 1;
                    return Err(self.expected("`function_name`"));
                }
                let function_name = self.name("a function name label")?;
                let function_offset = self.opt_offset()?;
                self.expect_punct(',', "before `inlined_at`")?;
                let w = self.name("`inlined_at`")?;
                if w != "inlined_at" {
                    self.pos -= 1;
                    return Err(self.expected("`inlined_at`"));
                }
                Some(InlinedAt {
                    function_name: self.own(function_name),
                    function_offset,
                    file: self.u32("a file index")?,
                    line: self.u32("a line number")?,
                    column: self.u32("a column number")?,
                })
            } else {
                None
            };
            return Ok(Statement::Loc(Loc {
                file,
                line,
                column,
                inlined_at,
            }));
        }
        if self.eat_dot("pragma") {
            return Ok(Statement::Pragma(self.pragma_strings()?));
        }
        let linkage = self.linkage();
        match self.peek_dot() {
            Some(s) if is_var_space(s) || s == "reg" || s == "param" || s == "local" => {
                Ok(Statement::Decl(self.var_decl(linkage)?))
            }
            _ => Err(self.expected("a declaration, `.loc` or `.pragma`")),
        }
    }

    fn label_like(&mut self) -> Result<Statement, ParseError> {
        let name = self.name("a label")?;
        self.expect_punct(':', "after label")?;
        if self.eat_dot("branchtargets") {
            let mut labels = vec![self.ident("a label")?];
            while self.eat_punct(',') {
                labels.push(self.ident("a label")?);
            }
            self.expect_punct(';', "after .branchtargets")?;
            return Ok(Statement::BranchTargets {
                name: self.own(name),
                labels,
            });
        }
        if self.eat_dot("callprototype") {
            let return_params = if self.peek() == Some(TokKind::Punct('(')) {
                Some(self.param_list()?)
            } else {
                None
            };
            let u = self.name("`_`")?;
            if u != "_" {
                self.pos -= 1;
                return Err(self.expected("`_`"));
            }
            let params = self.param_list()?;
            let noreturn = self.eat_dot("noreturn");
            self.expect_punct(';', "after .callprototype")?;
            return Ok(Statement::CallPrototype {
                name: self.own(name),
                return_params,
                params,
                noreturn,
            });
        }
        Ok(Statement::Label(self.own(name)))
    }

    fn instruction(&mut self, require_semi: bool) -> Result<Instruction, ParseError> {
        let guard = if self.eat_punct('@') {
            let negated = self.eat_punct('!');
            let r = self.name("a predicate register after '@'")?;
            if SpecialReg::parse(r).is_some() || !self.is_reg_name(r) {
                self.pos -= 1;
                return Err(self.expected("a predicate register after '@'"));
            }
            Some(Guard {
                negated,
                reg: Register(self.own(r)),
            })
        } else {
            None
        };
        let op_pos = self.pos;
        let word = self.name("an instruction opcode")?;
        let mut words = std::mem::take(&mut self.words);
        words.clear();
        while self.peek_joined() {
            match self.peek() {
                Some(TokKind::Dot(s)) => {
                    words.push((s, self.pos));
                    self.pos += 1;
                }
                _ => break,
            }
        }
        let r = self.finish_instruction(guard, op_pos, word, &words, require_semi);
        self.words = words;
        r
    }

    fn finish_instruction(
        &mut self,
        guard: Option<Guard>,
        op_pos: usize,
        word: &'a str,
        words: &[(&'a str, usize)],
        require_semi: bool,
    ) -> Result<Instruction, ParseError> {
        // Longest multi-word opcode first.
        let mut op = None;
        for n in (0..=words.len().min(2)).rev() {
            let found = if n == 0 {
                Opcode::from_str(word)
            } else {
                self.scratch.clear();
                self.scratch.push_str(word);
                for (w, _) in &words[..n] {
                    self.scratch.push('.');
                    self.scratch.push_str(w);
                }
                Opcode::from_str(&self.scratch)
            };
            if let Some(o) = found {
                op = Some((o, n));
                break;
            }
        }
        let Some((op, used)) = op else {
            return Err(self.err_at(op_pos, format!("unknown opcode `{word}`")));
        };
        let mut mods = Vec::new();
        for &(w, p) in &words[used..] {
            match Modifier::parse(op, w) {
                Some(m) if self.build => mods.push(m),
                Some(_) => {}
                None => {
                    return Err(
                        self.err_at(p, format!("unknown modifier `.{w}` for `{}`", op.as_str()))
                    );
                }
            }
        }
        let mut operands = Vec::new();
        if !matches!(self.peek(), None | Some(TokKind::Punct(';'))) {
            let mut count = 0usize;
            loop {
                let o = self.operand(true)?;
                count += 1;
                if self.build {
                    operands.push(o);
                }
                if !self.eat_punct(',') {
                    break;
                }
                if count > 64 {
                    return Err(self.err_here("too many operands"));
                }
            }
        }
        if require_semi || self.peek().is_some() {
            self.expect_punct(';', "after instruction")?;
        }
        Ok(Instruction {
            guard,
            op,
            mods,
            operands,
        })
    }

    fn is_reg_name(&self, name: &str) -> bool {
        name.starts_with('%')
            || self.reg_scopes.iter().any(|s| s.contains(&name))
            || self.reg_params.iter().any(|p| p == name)
    }

    /// One operand. `nested` allows vectors and lists (not inside each other).
    fn operand(&mut self, nested: bool) -> Result<Operand, ParseError> {
        let op = match self.peek() {
            Some(TokKind::Punct('[')) => {
                self.pos += 1;
                Operand::Address(self.address()?)
            }
            Some(TokKind::Punct('{')) if nested => {
                self.pos += 1;
                let mut v = Vec::new();
                let mut count = 0usize;
                loop {
                    let o = self.operand(false)?;
                    count += 1;
                    if self.build {
                        v.push(o);
                    }
                    if self.eat_punct('}') {
                        break;
                    }
                    self.expect_punct(',', "or '}' in vector operand")?;
                    if count > 8 {
                        return Err(self.err_here("vector operand has too many elements"));
                    }
                }
                Operand::Vector(v)
            }
            Some(TokKind::Punct('(')) if nested => {
                self.pos += 1;
                let mut v = Vec::new();
                if !self.eat_punct(')') {
                    let mut count = 0usize;
                    loop {
                        let o = self.operand(false)?;
                        count += 1;
                        if self.build {
                            v.push(o);
                        }
                        if self.eat_punct(')') {
                            break;
                        }
                        self.expect_punct(',', "or ')' in argument list")?;
                        if count > 1024 {
                            return Err(self.err_here("argument list too long"));
                        }
                    }
                }
                Operand::List(v)
            }
            Some(TokKind::Punct('!')) => {
                self.pos += 1;
                let r = self.name("a predicate register after '!'")?;
                Operand::Not(Register(self.own(r)))
            }
            Some(TokKind::Ident(_)) => {
                let name = self.name("an operand")?;
                if name == "_" {
                    Operand::Sink
                } else if let Some(sr) = self.special(name)? {
                    Operand::Special(sr)
                } else if self.is_reg_name(name) {
                    Operand::Reg(Register(self.own(name)))
                } else {
                    let offset = self.opt_offset()?;
                    Operand::Symbol {
                        name: self.own(name),
                        offset,
                    }
                }
            }
            _ => match self.immediate()? {
                Some(i) => Operand::Imm(i),
                None => return Err(self.expected("an operand")),
            },
        };
        if self.eat_punct('|') {
            let r = self.name("a predicate register after '|'")?;
            return Ok(Operand::Pair(Box::new(op), Register(self.own(r))));
        }
        Ok(op)
    }

    /// Recognises a special register (the identifier was just consumed); merges a joined
    /// `.x`/`.y`/`.z` component.
    fn special(&mut self, name: &str) -> Result<Option<SpecialReg>, ParseError> {
        if !name.starts_with('%') {
            return Ok(None);
        }
        if self.peek_joined() {
            if let Some(TokKind::Dot(c)) = self.peek() {
                self.scratch.clear();
                self.scratch.push_str(name);
                self.scratch.push('.');
                self.scratch.push_str(c);
                return match SpecialReg::parse(&self.scratch) {
                    Some(s) => {
                        self.pos += 1;
                        Ok(Some(s))
                    }
                    None => {
                        let full = std::mem::take(&mut self.scratch);
                        Err(self.err_here(format!("unknown special register `{full}`")))
                    }
                };
            }
        }
        Ok(SpecialReg::parse(name))
    }

    fn address(&mut self) -> Result<Address, ParseError> {
        let base = match self.peek() {
            Some(TokKind::Ident(_)) => {
                let name = self.name("an address base")?;
                if SpecialReg::parse(name).is_some() {
                    self.pos -= 1;
                    return Err(self.expected("a register or symbol as address base"));
                }
                if self.is_reg_name(name) {
                    AddressBase::Reg(Register(self.own(name)))
                } else {
                    AddressBase::Symbol(self.own(name))
                }
            }
            Some(TokKind::Int(v, _)) => {
                self.pos += 1;
                AddressBase::Imm(v)
            }
            _ => return Err(self.expected("a register, symbol or address inside '[ ]'")),
        };
        let offset = self.opt_offset()?;
        self.expect_punct(']', "to close the address")?;
        Ok(Address { base, offset })
    }
}

fn is_var_space(s: &str) -> bool {
    matches!(
        s,
        "global" | "const" | "shared" | "local" | "reg" | "param" | "tex"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_basics() {
        let i = parse_instruction("@!%p1 ld.global.nc.v2.f32 {%f1, _}, [%rd1+-8];").unwrap();
        assert_eq!(i.op, Opcode::Ld);
        assert!(i.guard.as_ref().is_some_and(|g| g.negated));
        assert_eq!(i.state_space(), Some(StateSpace::Global));
        assert!(i.has(Modifier::Nc));
        assert_eq!(i.vector(), Some(VectorWidth::V2));
        assert_eq!(i.ty(), Some(Type::F32));
        assert_eq!(
            i.operands[1],
            Operand::Address(Address {
                base: AddressBase::Reg(Register("%rd1".into())),
                offset: -8
            })
        );
        let s = parse_instruction("setp.lo.and.u32 %p1|%p2, %r1, 4, !%p3").unwrap();
        assert_eq!(s.cmp_op(), Some(CmpOp::Lo));
        assert_eq!(s.bool_op(), Some(BoolOp::And));
        let m = parse_instruction("mad.lo.s32 %r1, %r2, %r3, %tid.x").unwrap();
        assert_eq!(m.mul_mode(), Some(Modifier::Lo));
        assert_eq!(m.operands[3], Operand::Special(SpecialReg::Tid(Dim::X)));
        let c = parse_instruction("cvt.pack.sat.u8.s32.b32 %r1, %r2, %r3, %r4").unwrap();
        assert_eq!(c.op, Opcode::CvtPack);
        assert!(parse_instruction("frobnicate.u32 %r1").is_err());
        assert!(parse_instruction("add.bogus.u32 %r1, %r2, %r3").is_err());
    }
}
