//! The PTX lexer: source text to tokens with byte offsets, without copying.
//!
//! Identifiers include `%`- and `$`-prefixed names; a dotted word (`.reg`, `.global`,
//! `.L1::evict_last`, `.shared::cta`) is one [`TokKind::Dot`] token; instruction modifiers
//! are recognised by adjacency ([`Token::joined`]). Comments (`//`, `/* */`) are skipped.
//!
//! [`Lexer`] produces tokens one at a time and borrows every name from the source, so a parser
//! can stream through a module in constant memory; [`lex`] collects them.

use std::borrow::Cow;

use crate::error::ParseError;

/// What a token is. Names borrow from the source text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TokKind<'a> {
    /// An identifier (`foo`, `%r1`, `$L__BB0_2`, `_`).
    Ident(&'a str),
    /// A dotted word without the dot (`reg`, `L1::evict_last`).
    Dot(&'a str),
    /// An integer literal: value and whether it had the `U` suffix.
    Int(u64, bool),
    /// `0fXXXXXXXX`: raw f32 bits.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float: raw f64 bits.
    F64(u64),
    /// A string literal: the source text between the quotes, escapes not yet resolved (the lexer
    /// has checked them; `unescape` resolves them).
    Str(&'a str),
    /// A punctuation character: `, ; : [ ] { } ( ) < > + - ! @ | =`.
    Punct(char),
}

/// A token with its position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Token<'a> {
    /// The token.
    pub kind: TokKind<'a>,
    /// Byte offset of the first character.
    pub start: usize,
    /// Byte offset one past the last character.
    pub end: usize,
    /// True when this token directly follows the previous one, without whitespace or comment.
    pub joined: bool,
}

impl TokKind<'_> {
    /// A short description for error messages.
    pub fn describe(&self) -> String {
        match self {
            TokKind::Ident(s) => format!("`{s}`"),
            TokKind::Dot(s) => format!("`.{s}`"),
            TokKind::Int(v, u) => format!("integer `{v}{}`", if *u { "U" } else { "" }),
            TokKind::F32(b) => format!("float `0f{b:08X}`"),
            TokKind::F64(b) => format!("float `0d{b:016X}`"),
            TokKind::Str(s) => format!("string {:?}", unescape(s)),
            TokKind::Punct(c) => format!("`{c}`"),
        }
    }
}

/// Resolves the escapes (`\n`, `\t`, `\\`, `\"`) of a [`TokKind::Str`] body.
pub fn unescape(raw: &str) -> Cow<'_, str> {
    if !raw.contains('\\') {
        return Cow::Borrowed(raw);
    }
    let mut s = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            s.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => s.push('\n'),
            Some('t') => s.push('\t'),
            Some(other) => s.push(other),
            None => {}
        }
    }
    Cow::Owned(s)
}

/// Byte classes for the lexer's hot loops.
const IDENT: u8 = 1; // [A-Za-z0-9_$]: continues an identifier or dotted word
const START: u8 = 2; // [A-Za-z_$%]: starts an identifier
const SPACE: u8 = 4; // space, tab, CR, LF
const PUNCT: u8 = 8; // , ; : [ ] { } ( ) < > + - ! @ | =
const BLOCK: u8 = 16; // { } " /: what skipping a block looks at

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0usize;
    while c < 256 {
        let b = c as u8;
        let mut k = 0;
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' {
            k |= IDENT;
        }
        if b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b == b'%' {
            k |= START;
        }
        if matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
            k |= SPACE;
        }
        if matches!(
            b,
            b',' | b';'
                | b':'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'('
                | b')'
                | b'<'
                | b'>'
                | b'+'
                | b'-'
                | b'!'
                | b'@'
                | b'|'
                | b'='
        ) {
            k |= PUNCT;
        }
        if matches!(b, b'{' | b'}' | b'"' | b'/') {
            k |= BLOCK;
        }
        t[c] = k;
        c += 1;
    }
    t
};

#[inline]
fn is(c: u8, class: u8) -> bool {
    CLASS[c as usize] & class != 0
}

/// If a comment starts at `i`: `Some(Ok(end))`, one past it (a line comment stops before its
/// newline); `Some(Err(()))` for a block comment that is never closed; `None` if none starts.
fn comment_end(b: &[u8], i: usize) -> Option<Result<usize, ()>> {
    if b.get(i) != Some(&b'/') {
        return None;
    }
    match b.get(i + 1) {
        Some(b'/') => Some(Ok(b[i..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |p| i + p))),
        Some(b'*') => {
            let mut j = i + 2;
            loop {
                if j + 1 >= b.len() {
                    return Some(Err(()));
                }
                if b[j] == b'*' && b[j + 1] == b'/' {
                    return Some(Ok(j + 2));
                }
                j += 1;
            }
        }
        _ => None,
    }
}

/// The index of the closing quote of the string literal opening at `open`; `None` when it is
/// unterminated, crosses a newline or holds an escape other than `\n \t \\ \"`.
fn string_close(b: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        match b.get(i)? {
            b'"' => return Some(i),
            b'\n' => return None,
            b'\\' => match b.get(i + 1)? {
                b'n' | b't' | b'\\' | b'"' => i += 2,
                _ => return None,
            },
            _ => i += 1,
        }
    }
}

/// Why the hot loop stopped; turned into a message off the hot path ([`Lexer::fail`]).
#[derive(Debug, Clone, Copy)]
enum Fail {
    UnterminatedComment,
    NoNameAfterDot,
    Number,
    Unexpected,
    String,
}

/// Splits `src` into tokens.
pub fn lex(src: &str) -> Result<Vec<Token<'_>>, ParseError> {
    let mut lexer = Lexer::new(src);
    let mut toks = Vec::new();
    while let Some(t) = lexer.next_token()? {
        toks.push(t);
    }
    Ok(toks)
}

/// A streaming lexer: [`Lexer::next_token`] returns one token at a time.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    src: &'a str,
    i: usize,
    joined: bool,
    /// See [`Lexer::last_token_end`].
    last: usize,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'a str) -> Self {
        Lexer {
            src,
            i: 0,
            joined: false,
            last: 0,
        }
    }

    /// The next token, `None` at the end of the input.
    #[inline]
    pub fn next_token(&mut self) -> Result<Option<Token<'a>>, ParseError> {
        self.scan().map_err(|(fail, at)| self.fail(fail, at))
    }

    /// Moves to byte `offset` (a token boundary), as after whitespace.
    pub fn seek(&mut self, offset: usize) {
        self.i = offset.min(self.src.len());
        self.joined = false;
    }

    /// Skips the rest of a `{ }` block whose `{` was the last token: nested braces, comments and
    /// string literals are followed, nothing else is looked at. `Err(None)` when the input ends
    /// first (the position is then [`Lexer::last_token_end`]); `Err(Some(_))` for an unterminated
    /// comment or a malformed string literal.
    pub fn skip_block(&mut self) -> Result<(), Option<ParseError>> {
        let b = self.src.as_bytes();
        let mut i = self.i;
        let mut depth = 1usize;
        while i < b.len() {
            let c = b[i];
            if !is(c, BLOCK) {
                i += 1;
                continue;
            }
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.i = i + 1;
                        self.joined = true;
                        return Ok(());
                    }
                }
                b'"' => match string_close(b, i) {
                    Some(close) => i = close,
                    None => return Err(Some(self.fail(Fail::String, i))),
                },
                b'/' => match comment_end(b, i) {
                    Some(Ok(end)) => {
                        i = end;
                        continue;
                    }
                    Some(Err(())) => return Err(Some(self.fail(Fail::UnterminatedComment, i))),
                    None => {}
                },
                _ => {}
            }
            i += 1;
        }
        self.last = self.last_token_end_from(self.i);
        self.i = i;
        Err(None)
    }

    /// One past the last byte from `from` on that is neither whitespace nor in a comment (the
    /// end of the last token, for an error at the end of input). Off the hot path.
    #[cold]
    fn last_token_end_from(&self, from: usize) -> usize {
        let b = self.src.as_bytes();
        let (mut i, mut last) = (from, from);
        while i < b.len() {
            match comment_end(b, i) {
                Some(Ok(end)) => {
                    i = end;
                    continue;
                }
                Some(Err(())) => break,
                None => {}
            }
            if !is(b[i], SPACE) {
                last = i + 1;
            }
            i += 1;
        }
        last
    }

    /// One past the last token seen by [`Lexer::skip_block`] when it reached the end of input.
    pub fn last_token_end(&self) -> usize {
        self.last
    }

    /// The hot loop: never formats, never allocates.
    fn scan(&mut self) -> Result<Option<Token<'a>>, (Fail, usize)> {
        let src = self.src;
        let b = src.as_bytes();
        let mut i = self.i;
        let mut joined = self.joined;
        // Skip whitespace and comments.
        while let Some(&c) = b.get(i) {
            if is(c, SPACE) {
                i += 1;
                joined = false;
            } else {
                match comment_end(b, i) {
                    Some(Ok(end)) => i = end,
                    Some(Err(())) => {
                        self.i = b.len();
                        return Err((Fail::UnterminatedComment, i));
                    }
                    None => break,
                }
                joined = false;
            }
        }
        let Some(&c) = b.get(i) else {
            self.i = i;
            self.joined = joined;
            return Ok(None);
        };
        let start = i;
        let kind = if is(c, START) {
            i += 1;
            while i < b.len() && is(b[i], IDENT) {
                i += 1;
            }
            TokKind::Ident(&src[start..i])
        } else if is(c, PUNCT) {
            i += 1;
            TokKind::Punct(c as char)
        } else if c == b'.' {
            i += 1;
            let ws = i;
            while i < b.len() && is(b[i], IDENT) {
                i += 1;
            }
            if i == ws {
                return Err((Fail::NoNameAfterDot, start));
            }
            while i + 2 < b.len() && b[i] == b':' && b[i + 1] == b':' && is(b[i + 2], IDENT) {
                i += 2;
                while i < b.len() && is(b[i], IDENT) {
                    i += 1;
                }
            }
            TokKind::Dot(&src[ws..i])
        } else if c.is_ascii_digit() {
            // Fast path: a plain decimal integer (no leading zero, at most 19 digits).
            let mut j = i;
            let mut v = 0u64;
            while j < b.len() && b[j].is_ascii_digit() && j - i < 19 {
                v = v * 10 + u64::from(b[j] - b'0');
                j += 1;
            }
            let next = b.get(j).copied().unwrap_or(b' ');
            if (c != b'0' || j == i + 1) && !is(next, IDENT) && next != b'.' {
                i = j;
                TokKind::Int(v, false)
            } else {
                let (k, n) = lex_number(&b[i..]).map_err(|_| (Fail::Number, start))?;
                i += n;
                if i < b.len() && is(b[i], IDENT) {
                    return Err((Fail::Number, start));
                }
                k
            }
        } else if c == b'"' {
            let close = string_close(b, i).ok_or((Fail::String, start))?;
            i = close + 1;
            TokKind::Str(&src[start + 1..close])
        } else {
            return Err((Fail::Unexpected, start));
        };
        self.i = i;
        self.joined = true;
        Ok(Some(Token {
            kind,
            start,
            end: i,
            joined,
        }))
    }

    /// The error for a [`Fail`] at byte `at`: the message, line and column.
    #[cold]
    #[inline(never)]
    fn fail(&self, fail: Fail, at: usize) -> ParseError {
        let b = self.src.as_bytes();
        let message = match fail {
            Fail::UnterminatedComment => "unterminated block comment".to_string(),
            Fail::NoNameAfterDot => "expected a name after `.`".to_string(),
            Fail::Number => match lex_number(&b[at..]) {
                Err(e) => e.to_string(),
                Ok((_, n)) => format!(
                    "malformed numeric literal `{}`",
                    String::from_utf8_lossy(&b[at..(at + n + 1).min(b.len())])
                ),
            },
            Fail::String => {
                let mut i = at + 1;
                loop {
                    match b.get(i) {
                        None => break "unterminated string literal".to_string(),
                        Some(b'\n') => break "newline in string literal".to_string(),
                        Some(b'\\') => match b.get(i + 1) {
                            None => break "unterminated string literal".to_string(),
                            Some(b'n' | b't' | b'\\' | b'"') => i += 2,
                            Some(&e) => break format!("unknown escape `\\{}`", e as char),
                        },
                        _ => i += 1,
                    }
                }
            }
            Fail::Unexpected => {
                let ch = self.src[at..].chars().next().unwrap_or('\u{FFFD}');
                format!("unexpected character {ch:?}")
            }
        };
        ParseError::at(self.src, at, message)
    }
}

fn hex_val(c: u8) -> Option<u64> {
    (c as char).to_digit(16).map(u64::from)
}

/// Why a numeric literal does not lex.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NumberError {
    /// `0f`/`0d` without exactly 8 or 16 hex digits.
    #[error("malformed float literal `{text}`: expected {want} hex digits")]
    HexFloatDigits {
        /// The literal as far as it was read.
        text: String,
        /// 8 (`0f`) or 16 (`0d`).
        want: usize,
    },
    /// A decimal float Rust does not parse.
    #[error("malformed float literal `{0}`")]
    Float(String),
    /// A decimal or octal integer with bad digits or out of range.
    #[error("integer literal `{0}` is malformed or out of range")]
    Integer(String),
    /// `0x`/`0b` without digits.
    #[error("expected digits after `{0}`")]
    NoDigits(String),
    /// A hex or binary integer out of range.
    #[error("integer literal `{0}` is out of range")]
    OutOfRange(String),
}

/// Lexes a number at the start of `b`; returns the token and its length.
fn lex_number(b: &[u8]) -> Result<(TokKind<'static>, usize), NumberError> {
    // The bytes consumed so far are ASCII digits, letters, `.`, `+` or `-`.
    let text = |n: usize| std::str::from_utf8(&b[..n.min(b.len())]).unwrap_or("");
    let prefix = b.get(1).map(|c| c.to_ascii_lowercase());
    if b[0] == b'0' && matches!(prefix, Some(b'f') | Some(b'd')) {
        let want = if prefix == Some(b'f') { 8 } else { 16 };
        let mut n = 2;
        let mut v = 0u64;
        while n < b.len() && b[n].is_ascii_hexdigit() {
            v = (v << 4) | hex_val(b[n]).unwrap_or(0);
            n += 1;
            if n - 2 > want {
                break;
            }
        }
        if n - 2 != want {
            return Err(NumberError::HexFloatDigits {
                text: text(n).to_owned(),
                want,
            });
        }
        return Ok((
            if want == 8 {
                TokKind::F32(v as u32)
            } else {
                TokKind::F64(v)
            },
            n,
        ));
    }
    let (radix, mut n) = match prefix {
        Some(b'x') if b[0] == b'0' => (16u32, 2usize),
        Some(b'b') if b[0] == b'0' => (2, 2),
        _ => (10, 0),
    };
    let digits_start = n;
    if radix == 10 {
        // Decimal integer, octal integer, or decimal float.
        while n < b.len() && b[n].is_ascii_digit() {
            n += 1;
        }
        let mut is_float = false;
        if n < b.len() && b[n] == b'.' && b.get(n + 1).is_some_and(u8::is_ascii_digit) {
            is_float = true;
            n += 1;
            while n < b.len() && b[n].is_ascii_digit() {
                n += 1;
            }
        }
        if n < b.len() && (b[n] == b'e' || b[n] == b'E') {
            let mut m = n + 1;
            if m < b.len() && (b[m] == b'+' || b[m] == b'-') {
                m += 1;
            }
            if m < b.len() && b[m].is_ascii_digit() {
                is_float = true;
                n = m;
                while n < b.len() && b[n].is_ascii_digit() {
                    n += 1;
                }
            }
        }
        let s = text(n);
        if is_float {
            let v: f64 = s.parse().map_err(|_| NumberError::Float(s.to_owned()))?;
            return Ok((TokKind::F64(v.to_bits()), n));
        }
        let (digits, radix) = if s.len() > 1 && s.starts_with('0') {
            (&s[1..], 8)
        } else {
            (s, 10)
        };
        let v =
            u64::from_str_radix(digits, radix).map_err(|_| NumberError::Integer(s.to_owned()))?;
        let unsigned = b.get(n) == Some(&b'U');
        return Ok((TokKind::Int(v, unsigned), n + usize::from(unsigned)));
    }
    while n < b.len() && b[n].is_ascii_alphanumeric() && (b[n] as char).is_digit(radix) {
        n += 1;
    }
    if n == digits_start {
        return Err(NumberError::NoDigits(text(2).to_owned()));
    }
    let s = text(n);
    let v =
        u64::from_str_radix(&s[2..], radix).map_err(|_| NumberError::OutOfRange(s.to_owned()))?;
    let unsigned = b.get(n) == Some(&b'U');
    Ok((TokKind::Int(v, unsigned), n + usize::from(unsigned)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<TokKind<'_>> {
        lex(s).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn number_errors_say_which_literal() {
        let err = |t: &str| lex_number(t.as_bytes()).unwrap_err().to_string();
        assert_eq!(
            err("0f3F80 "),
            "malformed float literal `0f3F80`: expected 8 hex digits"
        );
        assert_eq!(err("0x "), "expected digits after `0x`");
        assert_eq!(
            err("0x1FFFFFFFFFFFFFFFF"),
            "integer literal `0x1FFFFFFFFFFFFFFFF` is out of range"
        );
        assert_eq!(
            err("08"),
            "integer literal `08` is malformed or out of range"
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(kinds("0f3F800000"), vec![TokKind::F32(0x3F80_0000)]);
        assert_eq!(
            kinds("0d3FF0000000000000"),
            vec![TokKind::F64(0x3FF0_0000_0000_0000)]
        );
        assert_eq!(kinds("0x1F"), vec![TokKind::Int(31, false)]);
        assert_eq!(kinds("017"), vec![TokKind::Int(15, false)]);
        assert_eq!(kinds("0b101U"), vec![TokKind::Int(5, true)]);
        assert_eq!(kinds("1.5"), vec![TokKind::F64(1.5f64.to_bits())]);
        assert!(lex("0f3F80").is_err());
        assert!(lex("08").is_err());
        assert!(lex("12abc").is_err());
        assert!(lex("99999999999999999999").is_err());
    }

    #[test]
    fn dotted() {
        assert_eq!(
            kinds("ld.global.L1::evict_last.f32"),
            vec![
                TokKind::Ident("ld"),
                TokKind::Dot("global"),
                TokKind::Dot("L1::evict_last"),
                TokKind::Dot("f32"),
            ]
        );
    }
}
