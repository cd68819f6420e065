//! The MLIR text scanner: a cursor over the bytes with the token readers the op parser needs
//! (names, numbers, strings, punctuation), the builtin types (`tensor<4x5xf32>`, `tuple<...>`,
//! `!stablehlo.token`) and the attribute values (`dense<...>`, `array<i64: ...>`, lists,
//! dictionaries, `#stablehlo.*<...>` attributes, enums, symbols).
//!
//! Hand-written rather than built on a lexer crate: MLIR's lexical grammar is context dependent
//! (`4x5xf32` is split inside `tensor<...>` only, `#stablehlo.conv<[b, 0]x[0, i]->[b, 0]>` has its
//! own label syntax), and scanning the bytes in place, without a token vector, is what keeps this
//! front end at least as fast as the HLO text parser.

use hlo::SourceLoc;
use hlo::{PrimitiveType, Shape};
use hlo_text::{ParseError, ParseErrorKind};

mod attrs;
mod types;

/// Deepest nesting (regions, attribute values, types) the front end accepts.
pub const MAX_NESTING: usize = 64;

/// Largest rank accepted for a tensor type.
pub const MAX_RANK: usize = 64;

pub(crate) type Result<T> = std::result::Result<T, ParseError>;

/// A number as written: an integer, a float, or a hex literal (`0x7FC00000`, which MLIR uses for
/// float bit patterns and for whole dense buffers).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
    Hex(String),
}

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Attr {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    /// A hex literal standing alone (`0x7FC00000`).
    Hex(String),
    /// `dense<...> : type`.
    Dense(Dense, Shape),
    /// `array<i64: 1, 2>` (and `array<i1: true>` as 0/1).
    IntArray(Vec<i64>),
    /// `[a, b]`.
    List(Vec<Attr>),
    /// `[0] x [1]` of the pretty `dot_general`.
    Pair(Box<Attr>, Box<Attr>),
    /// `{k = v, ...}` (a key without a value is a unit attribute), and its source text (what
    /// XLA keeps as a typed-FFI custom call's `backend_config`: the entries' types, `0 : ui8`,
    /// are part of it).
    Dict(Vec<(String, Attr)>, String),
    /// A bare keyword (`DEFAULT`, `GT`) or `#stablehlo<precision DEFAULT>`.
    Enum(String),
    /// `#stablehlo.gather<k = v, ...>` and other structured dialect attributes: the name after
    /// the dialect prefix and the fields.
    Struct(String, Vec<(String, Attr)>),
    /// Convolution labels `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`.
    Conv(Vec<String>, Vec<String>, Vec<String>),
    /// `@name`.
    Symbol(String),
    /// A type used as an attribute.
    Type(Shape),
    /// `unit` or a dictionary key written alone.
    Unit,
    /// An attribute the front end does not model (an unknown dialect's `#foo<...>`, `loc(...)`,
    /// `affine_map<...>`): skipped, kept only so it can be reported if an op needs it.
    Opaque(String),
}

/// The body of `dense<...>`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Dense {
    /// Elements in row-major order (one element is a splat); `shape` is the nesting seen.
    Elems(Vec<Elem>),
    /// `dense<"0x...">`: the raw little-endian buffer (one element's bytes for a splat).
    Bytes(Vec<u8>),
}

/// One element of a dense literal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Elem {
    Int(i128),
    Float(f64),
    /// A bit pattern (`0x7FC00000`).
    Bits(u64),
    Bool(bool),
    Complex(f64, f64),
    /// A complex element whose parts are written as bit patterns of the part type (MLIR prints
    /// NaN parts so: `(0x7FC00000,0x7FC00000)`), either or both; resolved against the type.
    ComplexParts(Part, Part),
}

/// One part of a complex dense element: a number, or a bit pattern of the part's float type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Part {
    Value(f64),
    Bits(u64),
}

/// The byte cursor. `pos` always sits on a UTF-8 boundary: every token reader consumes ASCII
/// or whole strings.
pub(crate) struct Cursor<'a> {
    pub src: &'a str,
    b: &'a [u8],
    pub pos: usize,
    /// Byte offsets where lines start (line 1 at index 0), for locations computed on demand.
    line_starts: Vec<usize>,
    pub depth: usize,
    /// Inside the type of a `dense<...>` attribute, where MLIR's `index` may appear (the
    /// `operand_layouts = [dense<[0, 1]> : tensor<2xindex>]` of a custom call): read as s64, the
    /// index width of every XLA target. Values of type `index` stay refused.
    in_dense_type: bool,
}

fn is_id_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_id_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'.'
}

/// Characters of an SSA suffix name after `%` (MLIR's `suffix-id` also takes `-`).
fn is_suffix_char(c: u8) -> bool {
    is_id_char(c) || c == b'-'
}

impl<'a> Cursor<'a> {
    pub fn new(src: &'a str) -> Cursor<'a> {
        let b = src.as_bytes();
        let mut line_starts = vec![0];
        line_starts.extend(
            b.iter()
                .enumerate()
                .filter(|(_, &c)| c == b'\n')
                .map(|(i, _)| i + 1),
        );
        Cursor {
            src,
            b,
            pos: 0,
            line_starts,
            depth: 0,
            in_dense_type: false,
        }
    }

    /// The 1-based line and column (in characters) of a byte offset.
    pub fn loc_at(&self, pos: usize) -> SourceLoc {
        let line = self.line_starts.partition_point(|&s| s <= pos).max(1);
        let start = self.line_starts.get(line - 1).copied().unwrap_or(0);
        let column = self
            .src
            .get(start..pos.min(self.src.len()))
            .map_or(0, |s| s.chars().count())
            + 1;
        SourceLoc {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        }
    }

    /// The location of the next token.
    pub fn loc(&mut self) -> SourceLoc {
        self.ws();
        self.loc_at(self.pos)
    }

    pub fn error(&mut self, kind: ParseErrorKind, msg: impl Into<String>) -> ParseError {
        let loc = self.loc();
        ParseError::new(loc, kind, msg)
    }

    /// A description of what comes next, for "expected X, found Y" messages.
    pub fn found(&mut self) -> String {
        self.ws();
        let rest = self.src.get(self.pos..).unwrap_or("");
        match rest.chars().next() {
            None => "end of input".to_string(),
            Some(c) if c.is_ascii_alphanumeric() || c == '%' || c == '@' || c == '_' => {
                let word: String = rest
                    .chars()
                    .take_while(|&c| {
                        c.is_ascii() && (is_suffix_char(c as u8) || c == '%' || c == '@')
                    })
                    .take(40)
                    .collect();
                format!("'{word}'")
            }
            Some(c) => format!("'{c}'"),
        }
    }

    pub fn expected(&mut self, what: &str) -> ParseError {
        let found = self.found();
        self.error(
            ParseErrorKind::Syntax,
            format!("expected {what}, found {found}"),
        )
    }

    pub fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error(
                ParseErrorKind::TooDeep,
                format!("nesting deeper than {MAX_NESTING} levels"),
            ));
        }
        Ok(())
    }

    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Skips whitespace and `//` comments.
    pub fn ws(&mut self) {
        loop {
            match self.b.get(self.pos) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if self.b.get(self.pos + 1) == Some(&b'/') => {
                    while let Some(&c) = self.b.get(self.pos) {
                        if c == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    pub fn at_end(&mut self) -> bool {
        self.ws();
        self.pos >= self.b.len()
    }

    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.pos).copied()
    }

    pub fn peek_at(&self, off: usize) -> Option<u8> {
        self.b.get(self.pos + off).copied()
    }

    pub fn rest(&self) -> &'a [u8] {
        self.b.get(self.pos..).unwrap_or(&[])
    }

    /// Consumes one punctuation character.
    pub fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub fn expect(&mut self, c: u8) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{}'", c as char)))
        }
    }

    /// Consumes `->`.
    pub fn eat_arrow(&mut self) -> bool {
        self.ws();
        if self.rest().starts_with(b"->") {
            self.pos += 2;
            true
        } else {
            false
        }
    }

    /// Consumes the keyword `kw` when it stands as a whole identifier next.
    pub fn eat_kw(&mut self, kw: &str) -> bool {
        self.ws();
        let r = self.rest();
        if r.starts_with(kw.as_bytes())
            && !r.get(kw.len()).is_some_and(|&c| is_id_char(c) || c == b'-')
        {
            self.pos += kw.len();
            true
        } else {
            false
        }
    }

    pub fn expect_kw(&mut self, kw: &str) -> Result<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{kw}'")))
        }
    }

    /// A bare identifier `[A-Za-z_][A-Za-z0-9_$.]*`.
    pub fn ident(&mut self) -> Option<&'a str> {
        self.ws();
        let start = self.pos;
        if !self.b.get(start).copied().is_some_and(is_id_start) {
            return None;
        }
        let mut end = start + 1;
        while self.b.get(end).copied().is_some_and(is_id_char) {
            end += 1;
        }
        self.pos = end;
        self.src.get(start..end)
    }

    pub fn expect_ident(&mut self, what: &str) -> Result<&'a str> {
        match self.ident() {
            Some(s) => Ok(s),
            None => Err(self.expected(what)),
        }
    }

    /// The identifier that comes next, without consuming it.
    pub fn peek_ident(&mut self) -> Option<&'a str> {
        let save = self.pos;
        let id = self.ident();
        self.pos = save;
        id
    }

    /// `%name` (without the `%`); `None` when no `%` comes next.
    pub fn value_name(&mut self) -> Result<Option<&'a str>> {
        if self.peek() != Some(b'%') {
            return Ok(None);
        }
        self.pos += 1;
        let start = self.pos;
        while self.b.get(self.pos).copied().is_some_and(is_suffix_char) {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.expected("a value name after '%'"));
        }
        Ok(self.src.get(start..self.pos))
    }

    /// `@name` or `@"name"` (without the `@`); `None` when no `@` comes next.
    pub fn symbol(&mut self) -> Result<Option<String>> {
        if self.peek() != Some(b'@') {
            return Ok(None);
        }
        self.pos += 1;
        if self.b.get(self.pos) == Some(&b'"') {
            return self.string().map(Some);
        }
        let start = self.pos;
        while self.b.get(self.pos).copied().is_some_and(is_suffix_char) {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.expected("a symbol name after '@'"));
        }
        Ok(self.src.get(start..self.pos).map(str::to_string))
    }

    /// A string literal with MLIR's escapes (`\"`, `\\`, `\n`, `\t`, `\XX` hex bytes).
    pub fn string(&mut self) -> Result<String> {
        if self.peek() != Some(b'"') {
            return Err(self.expected("a string"));
        }
        let open = self.pos;
        self.pos += 1;
        let mut bytes = Vec::new();
        loop {
            let Some(&c) = self.b.get(self.pos) else {
                let loc = self.loc_at(open);
                return Err(ParseError::new(
                    loc,
                    ParseErrorKind::Lex,
                    "unterminated string",
                ));
            };
            self.pos += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.b.get(self.pos) else {
                        continue;
                    };
                    self.pos += 1;
                    match e {
                        b'"' | b'\\' => bytes.push(e),
                        b'n' => bytes.push(b'\n'),
                        b't' => bytes.push(b'\t'),
                        _ => {
                            let hi = (e as char).to_digit(16);
                            let lo = self.b.get(self.pos).and_then(|&d| (d as char).to_digit(16));
                            match (hi, lo) {
                                (Some(h), Some(l)) => {
                                    self.pos += 1;
                                    bytes.push((h * 16 + l) as u8);
                                }
                                _ => {
                                    let loc = self.loc_at(self.pos - 2);
                                    return Err(ParseError::new(
                                        loc,
                                        ParseErrorKind::Lex,
                                        format!("invalid escape '\\{}' in string", e as char),
                                    ));
                                }
                            }
                        }
                    }
                }
                _ => bytes.push(c),
            }
        }
        // Escapes can produce bytes that are not UTF-8 (binary blobs); keep what is valid.
        Ok(String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    /// A number: `-?digits`, `-?digits.digits(e[+-]digits)?`, `0x...`, `inf`/`nan` words.
    pub fn number(&mut self) -> Result<Option<Num>> {
        self.ws();
        let start = self.pos;
        let mut p = start;
        let neg = self.b.get(p) == Some(&b'-');
        if neg || self.b.get(p) == Some(&b'+') {
            p += 1;
        }
        if !self.b.get(p).is_some_and(u8::is_ascii_digit) {
            return Ok(None);
        }
        if self.b.get(p) == Some(&b'0') && matches!(self.b.get(p + 1), Some(b'x' | b'X')) {
            let hs = p + 2;
            let mut e = hs;
            while self.b.get(e).is_some_and(u8::is_ascii_hexdigit) {
                e += 1;
            }
            if e == hs {
                return Err(self.expected("hex digits after '0x'"));
            }
            self.pos = e;
            let digits = self.src.get(hs..e).unwrap_or("");
            if neg {
                let v = i128::from_str_radix(digits, 16).map_err(|_| {
                    self.error(ParseErrorKind::BadLiteral, "hex literal out of range")
                })?;
                return Ok(Some(Num::Int(-v)));
            }
            return Ok(Some(Num::Hex(digits.to_string())));
        }
        while self.b.get(p).is_some_and(u8::is_ascii_digit) {
            p += 1;
        }
        let mut float = false;
        if self.b.get(p) == Some(&b'.') && self.b.get(p + 1).is_some_and(u8::is_ascii_digit) {
            float = true;
            p += 1;
            while self.b.get(p).is_some_and(u8::is_ascii_digit) {
                p += 1;
            }
        } else if self.b.get(p) == Some(&b'.') {
            // `1.` is a float in MLIR.
            float = true;
            p += 1;
        }
        if matches!(self.b.get(p), Some(b'e' | b'E')) {
            let mut q = p + 1;
            if matches!(self.b.get(q), Some(b'+' | b'-')) {
                q += 1;
            }
            if self.b.get(q).is_some_and(u8::is_ascii_digit) {
                float = true;
                while self.b.get(q).is_some_and(u8::is_ascii_digit) {
                    q += 1;
                }
                p = q;
            }
        }
        let text = self.src.get(start..p).unwrap_or("");
        self.pos = p;
        if float {
            text.parse::<f64>()
                .map(|f| Some(Num::Float(f)))
                .map_err(|_| self.error(ParseErrorKind::BadLiteral, format!("bad float '{text}'")))
        } else {
            text.parse::<i128>()
                .map(|i| Some(Num::Int(i)))
                .map_err(|_| {
                    self.error(
                        ParseErrorKind::BadLiteral,
                        format!("integer '{text}' out of range"),
                    )
                })
        }
    }

    pub fn integer(&mut self, what: &str) -> Result<i64> {
        let loc = self.loc();
        match self.number()? {
            Some(Num::Int(i)) => i64::try_from(i).map_err(|_| {
                ParseError::new(
                    loc,
                    ParseErrorKind::BadLiteral,
                    format!("{what} {i} out of range"),
                )
            }),
            Some(Num::Hex(h)) => i64::from_str_radix(&h, 16).map_err(|_| {
                ParseError::new(
                    loc,
                    ParseErrorKind::BadLiteral,
                    format!("{what} 0x{h} out of range"),
                )
            }),
            _ => Err(self.expected(what)),
        }
    }

    /// Skips a balanced group that starts at the current bracket (`(`, `[`, `{`, `<`), honouring
    /// strings; returns the skipped text.
    pub fn skip_balanced(&mut self) -> Result<&'a str> {
        self.ws();
        let start = self.pos;
        let mut stack: Vec<u8> = Vec::new();
        loop {
            let Some(&c) = self.b.get(self.pos) else {
                let loc = self.loc_at(start);
                return Err(ParseError::new(
                    loc,
                    ParseErrorKind::Syntax,
                    "unbalanced brackets",
                ));
            };
            match c {
                b'(' | b'[' | b'{' | b'<' => {
                    if stack.len() >= MAX_NESTING * 4 {
                        return Err(self.error(ParseErrorKind::TooDeep, "nesting too deep"));
                    }
                    stack.push(c);
                    self.pos += 1;
                }
                b')' | b']' | b'}' | b'>' => {
                    // `->` inside a group is an arrow, not a closing bracket.
                    if c == b'>' && self.pos > 0 && self.b.get(self.pos - 1) == Some(&b'-') {
                        self.pos += 1;
                        continue;
                    }
                    let open = match c {
                        b')' => b'(',
                        b']' => b'[',
                        b'}' => b'{',
                        _ => b'<',
                    };
                    if stack.pop() != Some(open) {
                        return Err(self.error(ParseErrorKind::Syntax, "unbalanced brackets"));
                    }
                    self.pos += 1;
                    if stack.is_empty() {
                        return Ok(self.src.get(start..self.pos).unwrap_or(""));
                    }
                }
                b'"' => {
                    self.string()?;
                }
                _ => {
                    if stack.is_empty() {
                        return Err(self.expected("a bracket"));
                    }
                    self.pos += 1;
                }
            }
        }
    }

    /// Skips a trailing `loc(...)`.
    pub fn opt_loc(&mut self) -> Result<()> {
        self.ws();
        if self.rest().starts_with(b"loc(") {
            self.pos += 3;
            self.skip_balanced()?;
        }
        Ok(())
    }
}

/// MLIR element type names.
pub(crate) fn element_type_named(name: &str) -> Option<PrimitiveType> {
    use PrimitiveType::*;
    Some(match name {
        "i1" => Pred,
        "i2" | "si2" => S2,
        "i4" | "si4" => S4,
        "i8" | "si8" => S8,
        "i16" | "si16" => S16,
        "i32" | "si32" => S32,
        "i64" | "si64" => S64,
        "ui1" => U1,
        "ui2" => U2,
        "ui4" => U4,
        "ui8" => U8,
        "ui16" => U16,
        "ui32" => U32,
        "ui64" => U64,
        "f16" => F16,
        "bf16" => Bf16,
        "f32" => F32,
        "f64" => F64,
        "f4E2M1FN" => F4E2M1FN,
        "f8E3M4" => F8E3M4,
        "f8E4M3" => F8E4M3,
        "f8E4M3FN" => F8E4M3FN,
        "f8E4M3B11FNUZ" => F8E4M3B11FNUZ,
        "f8E4M3FNUZ" => F8E4M3FNUZ,
        "f8E5M2" => F8E5M2,
        "f8E5M2FNUZ" => F8E5M2FNUZ,
        "f8E8M0FNU" => F8E8M0FNU,
        _ => return None,
    })
}
