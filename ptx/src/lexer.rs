//! The PTX lexer: source text to tokens with line/column positions.
//!
//! Identifiers include `%`- and `$`-prefixed names; a dotted word (`.reg`, `.global`,
//! `.L1::evict_last`, `.shared::cta`) is one [`TokKind::Dot`] token; instruction modifiers
//! are recognised by adjacency ([`Token::joined`]). Comments (`//`, `/* */`) are skipped.

use crate::error::ParseError;

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub enum TokKind {
    /// An identifier (`foo`, `%r1`, `$L__BB0_2`, `_`).
    Ident(String),
    /// A dotted word without the dot (`reg`, `L1::evict_last`).
    Dot(String),
    /// An integer literal: value and whether it had the `U` suffix.
    Int(u64, bool),
    /// `0fXXXXXXXX`: raw f32 bits.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float: raw f64 bits.
    F64(u64),
    /// A string literal, unescaped.
    Str(String),
    /// A punctuation character: `, ; : [ ] { } ( ) < > + - ! @ | =`.
    Punct(char),
}

/// A token with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// The token.
    pub kind: TokKind,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// Byte offset of the first character.
    pub start: usize,
    /// Byte offset one past the last character.
    pub end: usize,
    /// True when this token directly follows the previous one, without whitespace or comment.
    pub joined: bool,
}

impl TokKind {
    /// A short description for error messages.
    pub fn describe(&self) -> String {
        match self {
            TokKind::Ident(s) => format!("`{s}`"),
            TokKind::Dot(s) => format!("`.{s}`"),
            TokKind::Int(v, u) => format!("integer `{v}{}`", if *u { "U" } else { "" }),
            TokKind::F32(b) => format!("float `0f{b:08X}`"),
            TokKind::F64(b) => format!("float `0d{b:016X}`"),
            TokKind::Str(s) => format!("string {s:?}"),
            TokKind::Punct(c) => format!("`{c}`"),
        }
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// Splits `src` into tokens.
pub fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0usize;
    let mut line = 1u32;
    let mut line_start = 0usize;
    let mut joined = false;
    while i < b.len() {
        let c = b[i];
        let column = (i - line_start + 1) as u32;
        let line0 = line;
        let err = |msg: String| ParseError::new(line0, column, msg);
        match c {
            b'\n' => {
                i += 1;
                line += 1;
                line_start = i;
                joined = false;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                joined = false;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                joined = false;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                loop {
                    if i >= b.len() {
                        return Err(err("unterminated block comment".into()));
                    }
                    if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        i += 2;
                        break;
                    }
                    if b[i] == b'\n' {
                        line += 1;
                        line_start = i + 1;
                    }
                    i += 1;
                }
                joined = false;
                continue;
            }
            _ => {}
        }
        let start = i;
        let kind = if is_ident_start(c) {
            i += 1;
            while i < b.len() && is_ident_char(b[i]) {
                i += 1;
            }
            TokKind::Ident(src[start..i].to_string())
        } else if c == b'.' {
            i += 1;
            let ws = i;
            while i < b.len() && is_ident_char(b[i]) {
                i += 1;
            }
            if i == ws {
                return Err(err("expected a name after `.`".into()));
            }
            while i + 2 < b.len() && b[i] == b':' && b[i + 1] == b':' && is_ident_char(b[i + 2]) {
                i += 2;
                while i < b.len() && is_ident_char(b[i]) {
                    i += 1;
                }
            }
            TokKind::Dot(src[ws..i].to_string())
        } else if c.is_ascii_digit() {
            let (k, n) = lex_number(&b[i..]).map_err(err)?;
            i += n;
            if i < b.len() && is_ident_char(b[i]) {
                return Err(err(format!(
                    "malformed numeric literal `{}`",
                    &src[start..=i]
                )));
            }
            k
        } else if c == b'"' {
            i += 1;
            let mut s = String::new();
            loop {
                let Some(&d) = b.get(i) else {
                    return Err(err("unterminated string literal".into()));
                };
                match d {
                    b'"' => {
                        i += 1;
                        break;
                    }
                    b'\n' => return Err(err("newline in string literal".into())),
                    b'\\' => {
                        let Some(&e) = b.get(i + 1) else {
                            return Err(err("unterminated string literal".into()));
                        };
                        s.push(match e {
                            b'n' => '\n',
                            b't' => '\t',
                            b'\\' => '\\',
                            b'"' => '"',
                            _ => return Err(err(format!("unknown escape `\\{}`", e as char))),
                        });
                        i += 2;
                    }
                    _ => {
                        // Copy one UTF-8 character.
                        let ch = src[i..].chars().next().unwrap_or('\u{FFFD}');
                        s.push(ch);
                        i += ch.len_utf8().max(1);
                    }
                }
            }
            TokKind::Str(s)
        } else if b",;:[]{}()<>+-!@|=".contains(&c) {
            i += 1;
            TokKind::Punct(c as char)
        } else {
            let ch = src[i..].chars().next().unwrap_or('\u{FFFD}');
            return Err(err(format!("unexpected character {ch:?}")));
        };
        toks.push(Token {
            kind,
            line,
            column,
            start,
            end: i,
            joined,
        });
        joined = true;
    }
    Ok(toks)
}

fn hex_val(c: u8) -> Option<u64> {
    (c as char).to_digit(16).map(u64::from)
}

/// Lexes a number at the start of `b`; returns the token and its length.
fn lex_number(b: &[u8]) -> Result<(TokKind, usize), String> {
    let text = |n: usize| String::from_utf8_lossy(&b[..n.min(b.len())]).into_owned();
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
            return Err(format!(
                "malformed float literal `{}`: expected {want} hex digits",
                text(n)
            ));
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
        if is_float {
            let s = text(n);
            let v: f64 = s
                .parse()
                .map_err(|_| format!("malformed float literal `{s}`"))?;
            return Ok((TokKind::F64(v.to_bits()), n));
        }
        let s = text(n);
        let (digits, radix) = if s.len() > 1 && s.starts_with('0') {
            (&s[1..], 8)
        } else {
            (s.as_str(), 10)
        };
        let v = u64::from_str_radix(digits, radix)
            .map_err(|_| format!("integer literal `{s}` is malformed or out of range"))?;
        let unsigned = b.get(n) == Some(&b'U');
        return Ok((TokKind::Int(v, unsigned), n + usize::from(unsigned)));
    }
    while n < b.len() && b[n].is_ascii_alphanumeric() && (b[n] as char).is_digit(radix) {
        n += 1;
    }
    if n == digits_start {
        return Err(format!("expected digits after `{}`", text(2)));
    }
    let s = text(n);
    let v = u64::from_str_radix(&s[2..], radix)
        .map_err(|_| format!("integer literal `{s}` is out of range"))?;
    let unsigned = b.get(n) == Some(&b'U');
    Ok((TokKind::Int(v, unsigned), n + usize::from(unsigned)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<TokKind> {
        lex(s).unwrap().into_iter().map(|t| t.kind).collect()
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
                TokKind::Ident("ld".into()),
                TokKind::Dot("global".into()),
                TokKind::Dot("L1::evict_last".into()),
                TokKind::Dot("f32".into()),
            ]
        );
    }
}
