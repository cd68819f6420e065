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

use std::collections::HashSet;

use crate::ast::*;
use crate::error::ParseError;
use crate::lexer::{lex, TokKind, Token};

/// Maximum nesting depth of `{ }` blocks and initializer lists.
pub const MAX_DEPTH: usize = 64;

/// Parses a whole PTX module.
pub fn parse(src: &str) -> Result<Module, ParseError> {
    let toks = lex(src)?;
    let mut p = Parser::new(src, toks);
    p.module()
}

/// Parses a single instruction (with optional guard and optional trailing `;`), e.g.
/// `"@%p1 add.s32 %r1, %r2, 1"`. Non-`%` identifiers are taken as symbols.
pub fn parse_instruction(src: &str) -> Result<Instruction, ParseError> {
    let toks = lex(src)?;
    let mut p = Parser::new(src, toks);
    let inst = p.instruction(false)?;
    if p.peek().is_some() {
        return Err(p.expected("end of input"));
    }
    Ok(inst)
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    /// Names declared with `.reg` that do not start with `%`, one set per scope.
    reg_scopes: Vec<HashSet<String>>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, toks: Vec<Token>) -> Self {
        Parser {
            src,
            toks,
            pos: 0,
            reg_scopes: Vec::new(),
        }
    }

    // ----- token helpers -----

    fn peek(&self) -> Option<&TokKind> {
        self.toks.get(self.pos).map(|t| &t.kind)
    }

    fn peek_at(&self, n: usize) -> Option<&TokKind> {
        self.toks.get(self.pos + n).map(|t| &t.kind)
    }

    fn peek_joined(&self) -> bool {
        self.toks.get(self.pos).is_some_and(|t| t.joined)
    }

    fn err_here(&self, msg: impl Into<String>) -> ParseError {
        match self.toks.get(self.pos) {
            Some(t) => ParseError::new(t.line, t.column, msg),
            None => self.err_eof(msg),
        }
    }

    /// An error at the token with index `idx` (end of input if out of range).
    fn err_at(&self, idx: usize, msg: impl Into<String>) -> ParseError {
        match self.toks.get(idx) {
            Some(t) => ParseError::new(t.line, t.column, msg),
            None => self.err_eof(msg),
        }
    }

    fn err_eof(&self, msg: impl Into<String>) -> ParseError {
        // Position just past the last token.
        let (mut line, mut col) = (1u32, 1u32);
        if let Some(t) = self.toks.last() {
            line = t.line;
            let text = self.src.get(t.start..t.end).unwrap_or("");
            let nl = text.matches('\n').count() as u32;
            line += nl;
            col = if nl == 0 {
                t.column + (t.end - t.start) as u32
            } else {
                text.rsplit('\n').next().map_or(1, |s| s.len() as u32 + 1)
            };
        }
        ParseError::new(line, col, msg)
    }

    fn found(&self) -> String {
        match self.peek() {
            Some(k) => k.describe(),
            None => "end of input".to_string(),
        }
    }

    fn expected(&self, what: &str) -> ParseError {
        self.err_here(format!("expected {what}, found {}", self.found()))
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(&TokKind::Punct(c)) {
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

    fn peek_dot(&self) -> Option<&str> {
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

    fn ident(&mut self, what: &str) -> Result<String, ParseError> {
        match self.peek() {
            Some(TokKind::Ident(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.expected(what)),
        }
    }

    fn uint(&mut self, what: &str) -> Result<u64, ParseError> {
        match self.peek() {
            Some(&TokKind::Int(v, _)) => {
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
                let s = s.clone();
                self.pos += 1;
                Ok(s)
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
        while self.peek().is_some() {
            directives.push(self.directive()?);
        }
        Ok(Module {
            version,
            target,
            address_size,
            directives,
        })
    }

    fn version(&mut self) -> Result<Version, ParseError> {
        let Some(t) = self.toks.get(self.pos) else {
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
            match self.peek() {
                Some(TokKind::Punct('}')) => {
                    self.pos += 1;
                    return Ok(Section { name, items });
                }
                Some(TokKind::Ident(_)) if self.peek_at(1) == Some(&TokKind::Punct(':')) => {
                    items.push(SectionItem::Label(self.ident("a label")?));
                    self.pos += 1;
                }
                Some(TokKind::Dot(d)) => {
                    let Some(ty) = Type::from_str(d).filter(|t| t.is_bits()) else {
                        return Err(self.expected("`.b8`, `.b16`, `.b32` or `.b64` section data"));
                    };
                    self.pos += 1;
                    let mut values = vec![self.section_value()?];
                    while self.eat_punct(',') {
                        values.push(self.section_value()?);
                    }
                    self.eat_punct(';');
                    items.push(SectionItem::Data { ty, values });
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
                let d = d.clone();
                self.pos += 1;
                Ok(SectionValue::Section(d))
            }
            Some(TokKind::Ident(_)) => {
                let name = self.ident("a label")?;
                if self.peek() == Some(&TokKind::Punct('-'))
                    && matches!(self.peek_at(1), Some(TokKind::Ident(_)))
                {
                    self.pos += 1;
                    let b = self.ident("a label")?;
                    return Ok(SectionValue::Diff(name, b));
                }
                let offset = self.opt_offset()?;
                Ok(SectionValue::Symbol { name, offset })
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
            if kind == FunctionKind::Func && self.peek() == Some(&TokKind::Punct('(')) {
                Some(self.param_list()?)
            } else {
                None
            };
        let name = self.ident("a function name")?;
        let params = if self.peek() == Some(&TokKind::Punct('(')) {
            Some(self.param_list()?)
        } else {
            None
        };
        let mut perf = Vec::new();
        while let Some(d) = self.peek_dot() {
            let d = d.to_string();
            let item = match d.as_str() {
                "maxntid" | "reqntid" | "reqnctapercluster" => {
                    self.pos += 1;
                    let mut v = vec![self.u32("a dimension")?];
                    while self.eat_punct(',') {
                        if v.len() == 3 {
                            return Err(self.err_here("at most 3 dimensions are allowed"));
                        }
                        v.push(self.u32("a dimension")?);
                    }
                    match d.as_str() {
                        "maxntid" => PerfDirective::MaxNtid(v),
                        "reqntid" => PerfDirective::ReqNtid(v),
                        _ => PerfDirective::ReqNctaPerCluster(v),
                    }
                }
                "minnctapersm" | "maxnctapersm" | "maxnreg" | "maxclusterrank" => {
                    self.pos += 1;
                    let n = self.u32("a count")?;
                    match d.as_str() {
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
        } else if self.peek() == Some(&TokKind::Punct('{')) {
            self.pos += 1;
            // `.reg` parameters of a `.func` are registers inside its body.
            let reg_params = return_params
                .iter()
                .chain(params.iter())
                .flatten()
                .filter(|p| p.space == StateSpace::Reg && !p.name.starts_with('%'))
                .map(|p| p.name.clone())
                .collect();
            self.reg_scopes.clear();
            self.reg_scopes.push(reg_params);
            let b = self.block_body(1)?;
            self.reg_scopes.clear();
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
            let w = w.to_string();
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
            } else if let (Some(p), Some(sp)) = (ptr.as_mut(), StateSpace::from_str(&w)) {
                p.space = Some(sp);
            } else if let Some(v) = VectorWidth::from_str(&w) {
                vector = Some(v);
            } else if let Some(t) = Type::from_str(&w) {
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
            let w = w.to_string();
            self.pos += 1;
            if w == "align" {
                align = Some(self.u32("an alignment")?);
            } else if let Some(v) = VectorWidth::from_str(&w) {
                vector = Some(v);
            } else if let Some(t) = Type::from_str(&w) {
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
            let name = self.ident("a variable name")?;
            if space == StateSpace::Reg && !name.starts_with('%') {
                if let Some(s) = self.reg_scopes.last_mut() {
                    s.insert(name.clone());
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
            declarators.push(Declarator {
                name,
                range,
                array,
                init,
            });
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
                v.push(self.initializer(depth + 1)?);
                if self.eat_punct('}') {
                    return Ok(Initializer::List(v));
                }
                self.expect_punct(',', "or '}' in initializer list")?;
            }
        }
        if let Some(TokKind::Ident(s)) = self.peek() {
            let s = s.clone();
            self.pos += 1;
            if s == "generic" && self.eat_punct('(') {
                let name = self.ident("a symbol inside generic()")?;
                self.expect_punct(')', "to close generic(")?;
                let offset = self.opt_offset()?;
                return Ok(Initializer::Generic { name, offset });
            }
            let offset = self.opt_offset()?;
            return Ok(Initializer::Symbol { name: s, offset });
        }
        match self.immediate()? {
            Some(i) => Ok(Initializer::Imm(i)),
            None => Err(self.expected("an initializer value")),
        }
    }

    /// `+N`, `+-N` or `-N` after a symbol; 0 when absent.
    fn opt_offset(&mut self) -> Result<i64, ParseError> {
        if self.eat_punct('+') || self.peek() == Some(&TokKind::Punct('-')) {
            self.int("an offset")
        } else {
            Ok(0)
        }
    }

    /// An optional-sign numeric literal; `None` (consuming nothing) if the next token is not one.
    fn immediate(&mut self) -> Result<Option<Immediate>, ParseError> {
        let neg = self.peek() == Some(&TokKind::Punct('-'));
        let k = if neg { self.peek_at(1) } else { self.peek() };
        let here = self.pos;
        let imm = match k {
            Some(&TokKind::Int(v, unsigned)) => {
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
            Some(&TokKind::F32(b)) => Immediate::F32(if neg { b ^ 0x8000_0000 } else { b }),
            Some(&TokKind::F64(b)) => Immediate::F64(if neg { b ^ (1 << 63) } else { b }),
            _ => return Ok(None),
        };
        self.pos = here + 1 + usize::from(neg);
        Ok(Some(imm))
    }

    // ----- statements -----

    /// Statements up to and including the closing `}`.
    fn block_body(&mut self, depth: usize) -> Result<Vec<Statement>, ParseError> {
        if depth > MAX_DEPTH {
            self.pos = self.pos.saturating_sub(1);
            return Err(self.err_here("blocks nested too deeply"));
        }
        self.reg_scopes.push(HashSet::new());
        let mut out = Vec::new();
        loop {
            match self.peek() {
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
                    out.push(Statement::Block(self.block_body(depth + 1)?));
                }
                Some(TokKind::Dot(_)) => out.push(self.body_directive()?),
                Some(TokKind::Ident(_)) if self.peek_at(1) == Some(&TokKind::Punct(':')) => {
                    out.push(self.label_like()?);
                }
                Some(TokKind::Ident(_)) | Some(TokKind::Punct('@')) => {
                    out.push(Statement::Instruction(self.instruction(true)?));
                }
                Some(_) => return Err(self.expected("a statement")),
            }
        }
    }

    fn body_directive(&mut self) -> Result<Statement, ParseError> {
        if self.eat_dot("loc") {
            let file = self.u32("a file index")?;
            let line = self.u32("a line number")?;
            let column = self.u32("a column number")?;
            let inlined_at = if self.eat_punct(',') {
                let w = self.ident("`function_name`")?;
                if w != "function_name" {
                    self.pos -= 1;
                    return Err(self.expected("`function_name`"));
                }
                let function_name = self.ident("a function name label")?;
                let function_offset = self.opt_offset()?;
                self.expect_punct(',', "before `inlined_at`")?;
                let w = self.ident("`inlined_at`")?;
                if w != "inlined_at" {
                    self.pos -= 1;
                    return Err(self.expected("`inlined_at`"));
                }
                Some(InlinedAt {
                    function_name,
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
        let name = self.ident("a label")?;
        self.expect_punct(':', "after label")?;
        if self.eat_dot("branchtargets") {
            let mut labels = vec![self.ident("a label")?];
            while self.eat_punct(',') {
                labels.push(self.ident("a label")?);
            }
            self.expect_punct(';', "after .branchtargets")?;
            return Ok(Statement::BranchTargets { name, labels });
        }
        if self.eat_dot("callprototype") {
            let return_params = if self.peek() == Some(&TokKind::Punct('(')) {
                Some(self.param_list()?)
            } else {
                None
            };
            let u = self.ident("`_`")?;
            if u != "_" {
                self.pos -= 1;
                return Err(self.expected("`_`"));
            }
            let params = self.param_list()?;
            let noreturn = self.eat_dot("noreturn");
            self.expect_punct(';', "after .callprototype")?;
            return Ok(Statement::CallPrototype {
                name,
                return_params,
                params,
                noreturn,
            });
        }
        Ok(Statement::Label(name))
    }

    fn instruction(&mut self, require_semi: bool) -> Result<Instruction, ParseError> {
        let guard = if self.eat_punct('@') {
            let negated = self.eat_punct('!');
            let r = self.ident("a predicate register after '@'")?;
            if SpecialReg::parse(&r).is_some() || !self.is_reg_name(&r) {
                self.pos -= 1;
                return Err(self.expected("a predicate register after '@'"));
            }
            Some(Guard {
                negated,
                reg: Register(r),
            })
        } else {
            None
        };
        let op_pos = self.pos;
        let word = self.ident("an instruction opcode")?;
        let mut words: Vec<(String, usize)> = Vec::new();
        while self.peek_joined() {
            match self.peek() {
                Some(TokKind::Dot(s)) => {
                    words.push((s.clone(), self.pos));
                    self.pos += 1;
                }
                _ => break,
            }
        }
        // Longest multi-word opcode first.
        let mut op = None;
        for n in (0..=words.len().min(2)).rev() {
            let mut name = word.clone();
            for (w, _) in &words[..n] {
                name.push('.');
                name.push_str(w);
            }
            if let Some(o) = Opcode::from_str(&name) {
                op = Some((o, n));
                break;
            }
        }
        let Some((op, used)) = op else {
            return Err(self.err_at(op_pos, format!("unknown opcode `{word}`")));
        };
        let mut mods = Vec::new();
        for (w, p) in &words[used..] {
            match Modifier::parse(op, w) {
                Some(m) => mods.push(m),
                None => {
                    return Err(
                        self.err_at(*p, format!("unknown modifier `.{w}` for `{}`", op.as_str()))
                    );
                }
            }
        }
        let mut operands = Vec::new();
        let at_end = |p: &Self| matches!(p.peek(), None | Some(TokKind::Punct(';')));
        if !at_end(self) {
            loop {
                operands.push(self.operand(true)?);
                if !self.eat_punct(',') {
                    break;
                }
                if operands.len() > 64 {
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
        name.starts_with('%') || self.reg_scopes.iter().any(|s| s.contains(name))
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
                loop {
                    v.push(self.operand(false)?);
                    if self.eat_punct('}') {
                        break;
                    }
                    self.expect_punct(',', "or '}' in vector operand")?;
                    if v.len() > 8 {
                        return Err(self.err_here("vector operand has too many elements"));
                    }
                }
                Operand::Vector(v)
            }
            Some(TokKind::Punct('(')) if nested => {
                self.pos += 1;
                let mut v = Vec::new();
                if !self.eat_punct(')') {
                    loop {
                        v.push(self.operand(false)?);
                        if self.eat_punct(')') {
                            break;
                        }
                        self.expect_punct(',', "or ')' in argument list")?;
                        if v.len() > 1024 {
                            return Err(self.err_here("argument list too long"));
                        }
                    }
                }
                Operand::List(v)
            }
            Some(TokKind::Punct('!')) => {
                self.pos += 1;
                let r = self.ident("a predicate register after '!'")?;
                Operand::Not(Register(r))
            }
            Some(TokKind::Ident(_)) => {
                let name = self.ident("an operand")?;
                if name == "_" {
                    Operand::Sink
                } else if let Some(sr) = self.special(&name)? {
                    Operand::Special(sr)
                } else if self.is_reg_name(&name) {
                    Operand::Reg(Register(name))
                } else {
                    let offset = self.opt_offset()?;
                    Operand::Symbol { name, offset }
                }
            }
            _ => match self.immediate()? {
                Some(i) => Operand::Imm(i),
                None => return Err(self.expected("an operand")),
            },
        };
        if self.eat_punct('|') {
            let r = self.ident("a predicate register after '|'")?;
            return Ok(Operand::Pair(Box::new(op), Register(r)));
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
                let full = format!("{name}.{c}");
                return match SpecialReg::parse(&full) {
                    Some(s) => {
                        self.pos += 1;
                        Ok(Some(s))
                    }
                    None => Err(self.err_here(format!("unknown special register `{full}`"))),
                };
            }
        }
        Ok(SpecialReg::parse(name))
    }

    fn address(&mut self) -> Result<Address, ParseError> {
        let base = match self.peek() {
            Some(TokKind::Ident(_)) => {
                let name = self.ident("an address base")?;
                if SpecialReg::parse(&name).is_some() {
                    self.pos -= 1;
                    return Err(self.expected("a register or symbol as address base"));
                }
                if self.is_reg_name(&name) {
                    AddressBase::Reg(Register(name))
                } else {
                    AddressBase::Symbol(name)
                }
            }
            Some(&TokKind::Int(v, _)) => {
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
