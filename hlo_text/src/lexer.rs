//! Tokenizer for HLO text.
//!
//! Produces [`Token`]s with byte spans and 1-based line/column. Comments (`// ...` to end of
//! line and `/* ... */`) are skipped. A *word* is a run of `[A-Za-z0-9_.$%@+-]` (a `-` is not
//! taken when it starts `->`); numbers, names, opcodes, keywords, `2x2` and `0_0x1_2` are all
//! words, interpreted by the parser according to context.

use crate::error::{ParseError, ParseErrorKind};
use hlo::SourceLoc;

/// What the lexer splits HLO text into; words stay uninterpreted until the parser reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenKind {
    /// A word (name, number, keyword, `2x2`, ...), with a leading `%` removed.
    Word(String),
    /// A string literal, unescaped.
    Str(String),
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `,`
    Comma,
    /// `=`
    Equal,
    /// `:`
    Colon,
    /// `->`
    Arrow,
    /// `<=`
    LessEq,
    /// `?`
    Question,
    /// `*`
    Star,
    /// `#`
    Hash,
    /// End of input.
    Eof,
}

impl TokenKind {
    /// A short description for error messages.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Word(w) => format!("'{w}'"),
            TokenKind::Str(s) => format!("string \"{}\"", s.escape_default()),
            TokenKind::LBrace => "'{'".into(),
            TokenKind::RBrace => "'}'".into(),
            TokenKind::LBracket => "'['".into(),
            TokenKind::RBracket => "']'".into(),
            TokenKind::LParen => "'('".into(),
            TokenKind::RParen => "')'".into(),
            TokenKind::Comma => "','".into(),
            TokenKind::Equal => "'='".into(),
            TokenKind::Colon => "':'".into(),
            TokenKind::Arrow => "'->'".into(),
            TokenKind::LessEq => "'<='".into(),
            TokenKind::Question => "'?'".into(),
            TokenKind::Star => "'*'".into(),
            TokenKind::Hash => "'#'".into(),
            TokenKind::Eof => "end of input".into(),
        }
    }
}

/// A token with its byte span and location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The kind (and payload).
    pub kind: TokenKind,
    /// Byte offset of the first character.
    pub start: usize,
    /// Byte offset one past the last character.
    pub end: usize,
    /// Line and column of the first character.
    pub loc: SourceLoc,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-' | '+' | '@')
}

/// Tokenizes `src`. The last token is always [`TokenKind::Eof`].
pub fn tokenize(src: &str) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::new();
    let chars: Vec<(usize, char)> = src.char_indices().collect();
    let mut i = 0usize;
    let mut line = 1u32;
    let mut col = 1u32;
    let at = |i: usize| chars.get(i).map(|&(_, c)| c);
    let byte = |i: usize| chars.get(i).map_or(src.len(), |&(b, _)| b);
    // Advances over chars[i..j], updating line/column.
    macro_rules! advance_to {
        ($j:expr) => {{
            let j = $j;
            while i < j {
                if at(i) == Some('\n') {
                    line += 1;
                    col = 1;
                } else {
                    col += 1;
                }
                i += 1;
            }
        }};
    }
    while let Some(c) = at(i) {
        let loc = SourceLoc { line, column: col };
        if c.is_whitespace() {
            advance_to!(i + 1);
            continue;
        }
        if c == '/' && at(i + 1) == Some('/') {
            let mut j = i;
            while let Some(c) = at(j) {
                if c == '\n' {
                    break;
                }
                j += 1;
            }
            advance_to!(j);
            continue;
        }
        if c == '/' && at(i + 1) == Some('*') {
            let mut j = i + 2;
            loop {
                match at(j) {
                    None => {
                        return Err(ParseError::new(
                            loc,
                            ParseErrorKind::Lex,
                            "unterminated /* comment",
                        ))
                    }
                    Some('*') if at(j + 1) == Some('/') => {
                        j += 2;
                        break;
                    }
                    Some(_) => j += 1,
                }
            }
            advance_to!(j);
            continue;
        }
        let start = byte(i);
        // An MLIR dialect attribute inside an attribute value (`#sdy.mesh<["x"=2]>`, which JAX's
        // HLO prints in `frontend_attributes`): one word token, angle brackets balanced and
        // quoted strings skipped, so the value keeps its text.
        if c == '#' && at(i + 1).is_some_and(|n| n.is_ascii_alphabetic()) {
            if let Some(j) = mlir_attribute_end(&at, i + 1) {
                let text: String = chars[i..j].iter().map(|&(_, c)| c).collect();
                advance_to!(j);
                tokens.push(Token {
                    kind: TokenKind::Word(text),
                    start,
                    end: byte(i),
                    loc,
                });
                continue;
            }
        }
        let simple = match c {
            '{' => Some(TokenKind::LBrace),
            '}' => Some(TokenKind::RBrace),
            '[' => Some(TokenKind::LBracket),
            ']' => Some(TokenKind::RBracket),
            '(' => Some(TokenKind::LParen),
            ')' => Some(TokenKind::RParen),
            ',' => Some(TokenKind::Comma),
            '=' => Some(TokenKind::Equal),
            ':' => Some(TokenKind::Colon),
            '?' => Some(TokenKind::Question),
            '*' => Some(TokenKind::Star),
            '#' => Some(TokenKind::Hash),
            _ => None,
        };
        if let Some(kind) = simple {
            advance_to!(i + 1);
            tokens.push(Token {
                kind,
                start,
                end: byte(i),
                loc,
            });
            continue;
        }
        if c == '-' && at(i + 1) == Some('>') {
            advance_to!(i + 2);
            tokens.push(Token {
                kind: TokenKind::Arrow,
                start,
                end: byte(i),
                loc,
            });
            continue;
        }
        if c == '<' && at(i + 1) == Some('=') {
            advance_to!(i + 2);
            tokens.push(Token {
                kind: TokenKind::LessEq,
                start,
                end: byte(i),
                loc,
            });
            continue;
        }
        if c == '"' {
            let mut s = String::new();
            let mut j = i + 1;
            loop {
                match at(j) {
                    None => {
                        return Err(ParseError::new(
                            loc,
                            ParseErrorKind::Lex,
                            "unterminated string literal",
                        ))
                    }
                    Some('"') => {
                        j += 1;
                        break;
                    }
                    Some('\\') => {
                        let e = at(j + 1).ok_or_else(|| {
                            ParseError::new(loc, ParseErrorKind::Lex, "unterminated string literal")
                        })?;
                        j += 2;
                        match e {
                            'n' => s.push('\n'),
                            't' => s.push('\t'),
                            'r' => s.push('\r'),
                            '0' => s.push('\0'),
                            'x' => {
                                let h: String = (0..2).filter_map(|k| at(j + k)).collect();
                                match u8::from_str_radix(&h, 16) {
                                    Ok(v) if h.len() == 2 => {
                                        s.push(char::from(v));
                                        j += 2;
                                    }
                                    _ => s.push('x'),
                                }
                            }
                            other => s.push(other),
                        }
                    }
                    Some(ch) => {
                        s.push(ch);
                        j += 1;
                    }
                }
            }
            advance_to!(j);
            tokens.push(Token {
                kind: TokenKind::Str(s),
                start,
                end: byte(i),
                loc,
            });
            continue;
        }
        if is_word_char(c) || c == '%' {
            let mut j = i + 1;
            while let Some(ch) = at(j) {
                if ch == '-' && at(j + 1) == Some('>') {
                    break;
                }
                if !is_word_char(ch) {
                    break;
                }
                j += 1;
            }
            let text: String = chars[i..j].iter().map(|&(_, c)| c).collect();
            let word = text.strip_prefix('%').unwrap_or(&text).to_string();
            advance_to!(j);
            tokens.push(Token {
                kind: TokenKind::Word(word),
                start,
                end: byte(i),
                loc,
            });
            continue;
        }
        return Err(ParseError::new(
            loc,
            ParseErrorKind::Lex,
            format!("unexpected character {c:?}"),
        ));
    }
    tokens.push(Token {
        kind: TokenKind::Eof,
        start: src.len(),
        end: src.len(),
        loc: SourceLoc { line, column: col },
    });
    Ok(tokens)
}

/// Where an MLIR dialect attribute that starts with its name at `i` (after the `#`) ends: the
/// dotted name, then an optional `<...>` body with nested angle brackets balanced and `"..."`
/// strings skipped. `None` when the body is unterminated (the `#` is then lexed alone).
fn mlir_attribute_end(at: &impl Fn(usize) -> Option<char>, mut i: usize) -> Option<usize> {
    while at(i).is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$')) {
        i += 1;
    }
    if at(i) != Some('<') {
        return Some(i);
    }
    let mut depth = 0usize;
    loop {
        match at(i)? {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            '"' => {
                i += 1;
                loop {
                    match at(i)? {
                        '"' => break,
                        '\\' => i += 2,
                        _ => i += 1,
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_arrows() {
        let t =
            tokenize("%a = f32[2]{0} x(%b), dim_labels=b01f_01io->b01f /* c */ // x\n\"s\\\"\"")
                .unwrap();
        let kinds: Vec<_> = t.iter().map(|t| t.kind.clone()).collect();
        assert_eq!(kinds[0], TokenKind::Word("a".into()));
        assert!(kinds.contains(&TokenKind::Arrow));
        assert!(kinds.contains(&TokenKind::Str("s\"".into())));
        assert_eq!(kinds.last(), Some(&TokenKind::Eof));
    }
}
