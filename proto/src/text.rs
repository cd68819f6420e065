//! Protobuf text format for every message of the schema.
//!
//! Parsing follows protobuf's own (C++) text parser in one respect prost-reflect does not: a field
//! whose name is *reserved* in its message is skipped, not rejected. That is how a schema retires a
//! field while old text files that still mention it (XLA's target configs, for one) keep loading.
use miette::Diagnostic;
use prost_reflect::{DynamicMessage, Kind, MessageDescriptor};

use crate::reflect::{message_descriptor, to_dynamic};

/// Why a text-format message could not be parsed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TextFormatError {
    /// The text is not a valid text-format encoding of the message.
    #[error("{line}:{column}: {message} (parsing {message_name})")]
    Syntax {
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column (in characters) of the problem.
        column: usize,
        /// What went wrong.
        message: String,
        /// The message type being parsed.
        message_name: String,
    },
    /// The parsed dynamic message could not be converted to the generated type.
    #[error("text-format {message_name} does not convert to the generated type: {source}")]
    Convert {
        /// The message type being parsed.
        message_name: String,
        /// The underlying decode error.
        #[source]
        source: prost::DecodeError,
    },
}

/// Prints a generated message in protobuf text format (multi-line, fields in number order).
pub fn to_text_format<M: prost::Message + prost::Name>(message: &M) -> String {
    let options = prost_reflect::text_format::FormatOptions::new()
        .pretty(true)
        .print_message_fields_in_index_order(false);
    to_dynamic(message).to_text_format_with_options(&options)
}

/// Parses a generated message from protobuf text format.
pub fn parse_text_format<M: prost::Message + prost::Name + Default>(
    text: &str,
) -> Result<M, TextFormatError> {
    let dynamic = parse_text_format_dynamic(message_descriptor::<M>(), text)?;
    dynamic
        .transcode_to::<M>()
        .map_err(|source| TextFormatError::Convert {
            message_name: M::full_name(),
            source,
        })
}

/// Parses any message of the pool from protobuf text format.
pub fn parse_text_format_dynamic(
    desc: MessageDescriptor,
    text: &str,
) -> Result<DynamicMessage, TextFormatError> {
    let cleaned = blank_reserved_fields(&desc, text);
    DynamicMessage::parse_text_format(desc.clone(), &cleaned).map_err(|e| {
        let offset = e
            .labels()
            .and_then(|mut labels| labels.next())
            .map_or(0, |label| label.offset());
        let (line, column) = line_column(text, offset);
        TextFormatError::Syntax {
            line,
            column,
            message: e.to_string(),
            message_name: desc.full_name().to_owned(),
        }
    })
}

/// 1-based line and column of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// Returns `text` with every field whose name is reserved in its message replaced by spaces
/// (newlines kept), so that error positions still point into the original text. Anything the
/// scanner does not understand is left alone for the real parser to report.
fn blank_reserved_fields(desc: &MessageDescriptor, text: &str) -> String {
    let tokens = tokenize(text);
    let mut scanner = Scanner {
        text,
        tokens: &tokens,
        pos: 0,
        blank: Vec::new(),
    };
    scanner.message(Some(desc), None, 0);
    if scanner.blank.is_empty() {
        return text.to_owned();
    }
    let mut bytes = text.as_bytes().to_vec();
    for (start, end) in scanner.blank {
        for b in bytes.iter_mut().take(end).skip(start) {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    // Only whole tokens (ASCII delimiters, or the full extent of multi-byte strings) were
    // blanked, so the result is still UTF-8; fall back to the original text if it were not.
    String::from_utf8(bytes).unwrap_or_else(|_| text.to_owned())
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok {
    Ident,
    Str,
    Num,
    Punct(u8),
}

/// Tokens with byte spans. Comments and whitespace are dropped.
fn tokenize(text: &str) -> Vec<(Tok, usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        let start = i;
        match c {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'#' => {
                while bytes.get(i).is_some_and(|&c| c != b'\n') {
                    i += 1;
                }
            }
            b'"' | b'\'' => {
                i = crate::scan::string_literal_end(bytes, start);
                out.push((Tok::Str, start, i));
            }
            b'0'..=b'9' | b'.' | b'-' | b'+' => {
                i += 1;
                while bytes
                    .get(i)
                    .is_some_and(|&d| d.is_ascii_alphanumeric() || d == b'.' || d == b'_')
                    || (bytes.get(i).is_some_and(|&d| d == b'-' || d == b'+')
                        && bytes
                            .get(i.wrapping_sub(1))
                            .is_some_and(|&p| p == b'e' || p == b'E'))
                {
                    i += 1;
                }
                out.push((Tok::Num, start, i));
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while bytes
                    .get(i)
                    .is_some_and(|&d| d.is_ascii_alphanumeric() || d == b'_')
                {
                    i += 1;
                }
                out.push((Tok::Ident, start, i));
            }
            c if c.is_ascii() => {
                out.push((Tok::Punct(c), start, i + 1));
                i += 1;
            }
            _ => {
                // A non-ASCII character outside a string: step over the whole UTF-8 sequence.
                i += 1;
                while bytes.get(i).is_some_and(|&d| (d & 0xC0) == 0x80) {
                    i += 1;
                }
                out.push((Tok::Punct(0), start, i));
            }
        }
    }
    out
}

/// Maximum message nesting the scanner follows; deeper input is left to the real parser.
const MAX_DEPTH: usize = 100;

struct Scanner<'a> {
    text: &'a str,
    tokens: &'a [(Tok, usize, usize)],
    pos: usize,
    blank: Vec<(usize, usize)>,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<(Tok, usize, usize)> {
        self.tokens.get(self.pos).copied()
    }

    fn eat(&mut self, p: u8) -> bool {
        if matches!(self.peek(), Some((Tok::Punct(q), _, _)) if q == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Scans fields until `close` (or the end); returns false if the input is not understood.
    fn message(
        &mut self,
        desc: Option<&MessageDescriptor>,
        close: Option<u8>,
        depth: usize,
    ) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        loop {
            let Some((tok, start, _)) = self.peek() else {
                return close.is_none();
            };
            match tok {
                Tok::Punct(p) if Some(p) == close => {
                    self.pos += 1;
                    return true;
                }
                Tok::Ident => {
                    let name = self.text_of(self.pos);
                    self.pos += 1;
                    let reserved = desc.is_some_and(|d| {
                        d.get_field_by_name(name).is_none() && d.reserved_names().any(|r| r == name)
                    });
                    let child = desc
                        .and_then(|d| d.get_field_by_name(name))
                        .and_then(|f| match f.kind() {
                            Kind::Message(m) => Some(m),
                            _ => None,
                        });
                    self.eat(b':');
                    if !self.value(child.as_ref(), depth) {
                        return false;
                    }
                    if reserved {
                        let end = self
                            .tokens
                            .get(self.pos.wrapping_sub(1))
                            .map_or(start, |t| t.2);
                        self.blank.push((start, end));
                    }
                    if !self.eat(b',') {
                        self.eat(b';');
                    }
                }
                Tok::Punct(b'[') => {
                    // Extension or Any type URL: skip the bracketed name, then the value.
                    while let Some((t, _, _)) = self.peek() {
                        self.pos += 1;
                        if t == Tok::Punct(b']') {
                            break;
                        }
                    }
                    self.eat(b':');
                    if !self.value(None, depth) {
                        return false;
                    }
                }
                _ => return false,
            }
        }
    }

    fn value(&mut self, desc: Option<&MessageDescriptor>, depth: usize) -> bool {
        match self.peek() {
            Some((Tok::Punct(b'{'), _, _)) => {
                self.pos += 1;
                self.message(desc, Some(b'}'), depth + 1)
            }
            Some((Tok::Punct(b'<'), _, _)) => {
                self.pos += 1;
                self.message(desc, Some(b'>'), depth + 1)
            }
            Some((Tok::Punct(b'['), _, _)) => {
                self.pos += 1;
                if self.eat(b']') {
                    return true;
                }
                loop {
                    if !self.value(desc, depth + 1) {
                        return false;
                    }
                    if self.eat(b']') {
                        return true;
                    }
                    if !self.eat(b',') {
                        return false;
                    }
                }
            }
            Some((Tok::Str, _, _)) => {
                while matches!(self.peek(), Some((Tok::Str, _, _))) {
                    self.pos += 1;
                }
                true
            }
            Some((Tok::Punct(b'-'), _, _)) => {
                self.pos += 1;
                self.value(desc, depth)
            }
            Some((Tok::Num | Tok::Ident, _, _)) => {
                self.pos += 1;
                true
            }
            _ => false,
        }
    }

    fn text_of(&self, index: usize) -> &'a str {
        self.tokens
            .get(index)
            .and_then(|&(_, start, end)| self.text.get(start..end))
            .unwrap_or("")
    }
}
