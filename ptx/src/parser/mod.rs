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

mod decl;
mod instruction;
mod module;
mod statement;

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
