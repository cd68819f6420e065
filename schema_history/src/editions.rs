//! Protobuf Editions (2023, 2024) on top of protox 0.10, which parses only `proto2` and `proto3`.
//!
//! The route (see `docs/compatibility.md`, "Editions"): a front pass rewrites an editions file
//! into equivalent `proto2` text, **keeping every line where it was** (statements are blanked
//! with spaces, never removed; insertions stay on their line), and keeps the `features` options
//! as they are: protox resolves them as ordinary options of `google.protobuf.*Options`, so the
//! compiled descriptors carry them. [`resolve_field`] and [`enum_closed`] then resolve each
//! feature per field and enum (edition defaults, then file, enclosing messages, oneof, field),
//! which works the same for files lowered here and for editions descriptors from a
//! `FileDescriptorSet` image ([`lower_image`]).
//!
//! The rewrite:
//! - `edition = "2023";` becomes `syntax = "proto2";`;
//! - a field without a label (outside oneofs and maps) gets `optional ` (proto2 needs a label;
//!   presence is resolved from the features, not from the label);
//! - `reserved foo, bar;` (editions names are identifiers) gets the names quoted;
//! - 2024's `export` / `local` before `message` / `enum` and the `option` of `import option`
//!   are blanked;
//! - features that change nothing a reader sees are blanked: language features
//!   (`features.(pb.cpp).…`, their `google/protobuf/*_features.proto` imports) and 2024's
//!   `enforce_naming_style` / `default_symbol_visibility`.
use std::collections::BTreeMap;

use prost::Message as _;
use prost_reflect::{
    DescriptorPool, DynamicMessage, EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor,
    Syntax, Value,
};
use serde::Serialize;

/// An edition this crate resolves features for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Edition {
    /// `edition = "2023";`
    E2023,
    /// `edition = "2024";`
    E2024,
}

impl Edition {
    fn parse(text: &str) -> Option<Edition> {
        match text {
            "2023" => Some(Edition::E2023),
            "2024" => Some(Edition::E2024),
            _ => None,
        }
    }

    /// `google.protobuf.Edition`'s number (a descriptor's `edition` field).
    fn from_number(n: i32) -> Option<Edition> {
        match n {
            1000 => Some(Edition::E2023),
            1001 => Some(Edition::E2024),
            _ => None,
        }
    }
}

impl std::fmt::Display for Edition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Edition::E2023 => "2023",
            Edition::E2024 => "2024",
        })
    }
}

/// Why an editions file cannot be read. The caller adds the import chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What is not supported (the edition, the construct).
    pub what: String,
}

/// A field's presence as the features resolve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    /// `EXPLICIT`: has-ness is tracked (proto2 `optional`, proto3 `optional`, messages).
    Explicit,
    /// `IMPLICIT`: a default value is not serialized (proto3 scalars).
    Implicit,
    /// `LEGACY_REQUIRED`: proto2 `required`; a parse without the field fails.
    Required,
}

/// The resolved features of a field that change what a reader sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct FieldFeatures {
    /// `field_presence`.
    pub presence: Presence,
    /// `repeated_field_encoding = PACKED` (meaningful for repeated scalars only).
    pub packed: bool,
    /// `utf8_validation = VERIFY` (meaningful for strings only).
    pub utf8_verified: bool,
    /// `message_encoding = DELIMITED` (meaningful for messages only): group wire format.
    pub delimited: bool,
}

impl Default for FieldFeatures {
    /// Edition 2023's defaults.
    fn default() -> FieldFeatures {
        FieldFeatures {
            presence: Presence::Explicit,
            packed: true,
            utf8_verified: true,
            delimited: false,
        }
    }
}

// google.protobuf.FeatureSet's enum numbers.
const PRESENCE_EXPLICIT: i32 = 1;
const PRESENCE_IMPLICIT: i32 = 2;
const PRESENCE_LEGACY_REQUIRED: i32 = 3;
const ENUM_OPEN: i32 = 1;
const ENUM_CLOSED: i32 = 2;
const ENCODING_PACKED: i32 = 1;
const ENCODING_EXPANDED: i32 = 2;
const UTF8_VERIFY: i32 = 2;
const UTF8_NONE: i32 = 3;
/// `NONE` in the descriptor.proto that protox resolves options against (prost-reflect's copy
/// predates the renumbering to 3); images written by a current protoc carry 3.
const UTF8_NONE_OLD: i32 = 1;
const MESSAGE_LENGTH_PREFIXED: i32 = 1;
const MESSAGE_DELIMITED: i32 = 2;

/// The features a `FeatureSet` (an options message's `features`) sets, applied over `into`.
fn apply(options: &DynamicMessage, into: &mut FieldFeatures, closed: &mut bool) {
    let Some(Value::Message(set)) = options
        .has_field_by_name("features")
        .then(|| options.get_field_by_name("features"))
        .flatten()
        .map(|v| v.into_owned())
    else {
        return;
    };
    let get = |name: &str| match set
        .has_field_by_name(name)
        .then(|| set.get_field_by_name(name))
        .flatten()
        .as_deref()
    {
        Some(Value::EnumNumber(n)) => Some(*n),
        _ => None,
    };
    match get("field_presence") {
        Some(PRESENCE_EXPLICIT) => into.presence = Presence::Explicit,
        Some(PRESENCE_IMPLICIT) => into.presence = Presence::Implicit,
        Some(PRESENCE_LEGACY_REQUIRED) => into.presence = Presence::Required,
        _ => {}
    }
    match get("enum_type") {
        Some(ENUM_OPEN) => *closed = false,
        Some(ENUM_CLOSED) => *closed = true,
        _ => {}
    }
    match get("repeated_field_encoding") {
        Some(ENCODING_PACKED) => into.packed = true,
        Some(ENCODING_EXPANDED) => into.packed = false,
        _ => {}
    }
    match get("utf8_validation") {
        Some(UTF8_VERIFY) => into.utf8_verified = true,
        Some(UTF8_NONE | UTF8_NONE_OLD) => into.utf8_verified = false,
        _ => {}
    }
    match get("message_encoding") {
        Some(MESSAGE_LENGTH_PREFIXED) => into.delimited = false,
        Some(MESSAGE_DELIMITED) => into.delimited = true,
        _ => {}
    }
}

/// The chain of messages enclosing `msg`, outermost first, `msg` last.
fn message_chain(msg: &MessageDescriptor) -> Vec<MessageDescriptor> {
    let mut chain = vec![msg.clone()];
    while let Some(parent) = chain.last().and_then(MessageDescriptor::parent_message) {
        chain.push(parent);
    }
    chain.reverse();
    chain
}

/// The features the fields of `msg` inherit (edition defaults, the file, each enclosing
/// message); `None` outside editions files. Computed once per message: each level's options
/// are decoded once, not once per field.
pub(crate) fn inherited(
    msg: &MessageDescriptor,
    edition: Option<Edition>,
) -> Option<FieldFeatures> {
    edition?;
    let mut features = FieldFeatures::default();
    let mut closed = false;
    let file = msg.parent_file();
    if file.file_descriptor_proto().options.is_some() {
        apply(&file.options(), &mut features, &mut closed);
    }
    for m in message_chain(msg) {
        if m.descriptor_proto().options.is_some() {
            apply(&m.options(), &mut features, &mut closed);
        }
    }
    Some(features)
}

/// The features of `field` as a reader sees them. `inherited` is [`inherited`] of its message:
/// `None` for proto2 / proto3 files, whose syntax fixes them.
pub(crate) fn resolve_field(
    field: &FieldDescriptor,
    inherited: Option<FieldFeatures>,
) -> FieldFeatures {
    let Some(mut features) = inherited else {
        // What proto2 and proto3 mean in terms of features.
        let proto3 = field.parent_file().syntax() == Syntax::Proto3;
        return FieldFeatures {
            presence: if field.is_required() {
                Presence::Required
            } else if field.supports_presence() || field.is_list() || field.is_map() {
                // Repeated fields have no presence either way: keep them at the default so a
                // syntax change alone is not a finding.
                Presence::Explicit
            } else {
                Presence::Implicit
            },
            // Only packable scalars have an encoding to choose.
            packed: if field.is_list() && is_packable(&field.kind()) {
                packed_option(field).unwrap_or(proto3)
            } else {
                true
            },
            utf8_verified: proto3 || !matches!(field.kind(), Kind::String),
            delimited: field.is_group(),
        };
    };
    let mut closed = false;
    if let Some(oneof) = field.containing_oneof() {
        if oneof.oneof_descriptor_proto().options.is_some() {
            apply(&oneof.options(), &mut features, &mut closed);
        }
    }
    if field.field_descriptor_proto().options.is_some() {
        apply(&field.options(), &mut features, &mut closed);
    }
    // What a feature means where it does not apply, normalised so that it is never a change.
    if field.is_list() || field.is_map() || field.containing_oneof().is_some() {
        // Repeated fields and oneof members have no field_presence of their own.
        features.presence = Presence::Explicit;
    }
    if matches!(field.kind(), Kind::Message(_)) && features.presence == Presence::Implicit {
        features.presence = Presence::Explicit;
    }
    if !field.is_list() || !is_packable(&field.kind()) {
        features.packed = true;
    }
    if !matches!(field.kind(), Kind::String) {
        features.utf8_verified = true;
    }
    if !matches!(field.kind(), Kind::Message(_)) || field.is_map() {
        features.delimited = false;
    }
    features
}

/// The `packed` option as written, read from the options themselves (prost-reflect's
/// `is_packed` does not see it in a pool that protox built).
fn packed_option(field: &FieldDescriptor) -> Option<bool> {
    field.field_descriptor_proto().options.as_ref()?;
    let options = field.options();
    if !options.has_field_by_name("packed") {
        return None;
    }
    match options.get_field_by_name("packed").as_deref() {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    }
}

/// Scalars that may be packed.
pub(crate) fn is_packable(kind: &Kind) -> bool {
    !matches!(kind, Kind::String | Kind::Bytes | Kind::Message(_))
}

/// Whether an enum is closed (unknown values kept as unknown fields, not in the field).
pub(crate) fn enum_closed(en: &EnumDescriptor, edition: Option<Edition>) -> bool {
    let Some(_) = edition else {
        return en.parent_file().syntax() == Syntax::Proto2;
    };
    let mut features = FieldFeatures::default();
    let mut closed = false;
    let file = en.parent_file();
    if file.file_descriptor_proto().options.is_some() {
        apply(&file.options(), &mut features, &mut closed);
    }
    if let Some(parent) = en.parent_message() {
        for m in message_chain(&parent) {
            if m.descriptor_proto().options.is_some() {
                apply(&m.options(), &mut features, &mut closed);
            }
        }
    }
    if en.enum_descriptor_proto().options.is_some() {
        apply(&en.options(), &mut features, &mut closed);
    }
    closed
}

// ---------------------------------------------------------------------------------------------
// The front pass.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Ident,
    Int,
    Str,
    Punct(u8),
}

#[derive(Debug, Clone, Copy)]
struct Token {
    kind: Tok,
    start: usize,
    end: usize,
}

/// Splits proto text into tokens (comments and white space dropped). Anything it does not
/// recognise becomes one punctuation byte: protox reports it later with its own message.
fn tokenize(text: &str) -> Vec<Token> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let start = i;
        match c {
            b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while b.get(i).is_some_and(|c| *c != b'\n') {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i = (i + 2).min(b.len());
            }
            b'"' | b'\'' => {
                i = proto::string_literal_end(b, start);
                out.push(Token {
                    kind: Tok::Str,
                    start,
                    end: i,
                });
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while b
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    i += 1;
                }
                out.push(Token {
                    kind: Tok::Ident,
                    start,
                    end: i,
                });
            }
            c if c.is_ascii_digit() => {
                while b
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.' || *c == b'_')
                {
                    i += 1;
                }
                out.push(Token {
                    kind: Tok::Int,
                    start,
                    end: i,
                });
            }
            _ => {
                // One byte; a multi-byte character is kept whole.
                i += 1;
                while i < b.len() && !text.is_char_boundary(i) {
                    i += 1;
                }
                out.push(Token {
                    kind: Tok::Punct(c),
                    start,
                    end: i,
                });
            }
        }
    }
    out
}

/// The 1-based line and column of byte `offset` of `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.bytes().filter(|b| *b == b'\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    File,
    Message,
    Enum,
    Oneof,
    Extend,
    /// A service, or a braced block of an option value: skipped.
    Other,
}

/// A file rewritten into proto2 text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lowered {
    /// The proto2 text, same lines as the original.
    pub text: String,
    /// The file's edition.
    pub edition: Edition,
}

struct Pass<'a> {
    text: &'a str,
    toks: Vec<Token>,
    /// (start, end, replacement), in order, not overlapping.
    edits: Vec<(usize, usize, String)>,
}

impl Pass<'_> {
    fn tok(&self, i: usize) -> Option<Token> {
        self.toks.get(i).copied()
    }

    fn word(&self, i: usize) -> &str {
        self.tok(i)
            .and_then(|t| self.text.get(t.start..t.end))
            .unwrap_or("")
    }

    fn is_punct(&self, i: usize, c: u8) -> bool {
        self.tok(i).is_some_and(|t| t.kind == Tok::Punct(c))
    }

    fn unsupported(&self, i: usize, what: String) -> Unsupported {
        let offset = self.tok(i).map_or(self.text.len(), |t| t.start);
        let (line, column) = line_col(self.text, offset);
        Unsupported { line, column, what }
    }

    /// Blanks tokens `from..to` (exclusive), newlines kept.
    fn blank(&mut self, from: usize, to: usize) {
        let (Some(a), Some(b)) = (self.tok(from), to.checked_sub(1).and_then(|t| self.tok(t)))
        else {
            return;
        };
        let span = self.text.get(a.start..b.end).unwrap_or("");
        let blanked: String = span
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        self.edits.push((a.start, b.end, blanked));
    }

    /// The index just past the `;` ending the statement at `i` (braces and brackets nested).
    fn statement_end(&self, i: usize) -> usize {
        let mut depth = 0usize;
        let mut j = i;
        while let Some(t) = self.tok(j) {
            match t.kind {
                Tok::Punct(b'{') | Tok::Punct(b'[') | Tok::Punct(b'(') | Tok::Punct(b'<') => {
                    depth += 1
                }
                Tok::Punct(b'}') | Tok::Punct(b']') | Tok::Punct(b')') | Tok::Punct(b'>') => {
                    depth = depth.saturating_sub(1)
                }
                Tok::Punct(b';') if depth == 0 => return j + 1,
                _ => {}
            }
            j += 1;
        }
        j
    }

    /// Whether the option name starting at `i` is a feature that changes nothing on the wire:
    /// a language feature (`features.(pb.cpp)…`) or a 2024 style feature.
    fn inert_feature(&self, i: usize) -> bool {
        self.word(i) == "features"
            && self.is_punct(i + 1, b'.')
            && (self.is_punct(i + 2, b'(')
                || matches!(
                    self.word(i + 2),
                    "enforce_naming_style" | "default_symbol_visibility"
                ))
    }

    /// Blanks the inert features of the `[...]` option lists in tokens `from..to`.
    fn field_options(&mut self, from: usize, to: usize) {
        let mut j = from;
        while j < to {
            if self.is_punct(j, b'[') {
                let open = j;
                // Elements: token ranges between commas at depth 0.
                let mut elements = Vec::new();
                let mut depth = 0usize;
                let mut start = j + 1;
                let mut k = j + 1;
                let mut close = to;
                while k < to {
                    match self.tok(k).map(|t| t.kind) {
                        Some(Tok::Punct(b'{' | b'[' | b'(' | b'<')) => depth += 1,
                        Some(Tok::Punct(b'}' | b')' | b'>')) => depth = depth.saturating_sub(1),
                        Some(Tok::Punct(b']')) if depth == 0 => {
                            elements.push((start, k));
                            close = k;
                            break;
                        }
                        Some(Tok::Punct(b']')) => depth = depth.saturating_sub(1),
                        Some(Tok::Punct(b',')) if depth == 0 => {
                            elements.push((start, k));
                            start = k + 1;
                        }
                        _ => {}
                    }
                    k += 1;
                }
                let inert: Vec<bool> = elements
                    .iter()
                    .map(|(s, _)| self.inert_feature(*s))
                    .collect();
                if !inert.is_empty() && inert.iter().all(|x| *x) {
                    self.blank(open, close + 1);
                } else {
                    // Blank each inert element with the comma after it (or, for the last one,
                    // the comma before it).
                    let last = elements.len().saturating_sub(1);
                    for (n, ((s, e), is_inert)) in elements.iter().zip(&inert).enumerate() {
                        if !is_inert {
                            continue;
                        }
                        if n < last {
                            self.blank(*s, e + 1);
                        } else {
                            self.blank(s - 1, *e);
                        }
                    }
                }
                j = close + 1;
            } else {
                j += 1;
            }
        }
    }

    fn run(&mut self) -> Result<Option<Edition>, Unsupported> {
        let mut stack = vec![Ctx::File];
        let mut edition = None;
        let mut i = 0;
        let mut first = true;
        while let Some(t) = self.tok(i) {
            let ctx = stack.last().copied().unwrap_or(Ctx::File);
            let word = self.word(i).to_owned();
            if first && ctx == Ctx::File {
                first = false;
                match word.as_str() {
                    "edition" => {
                        let end = self.statement_end(i);
                        let value = (i + 1..end)
                            .find(|j| self.tok(*j).is_some_and(|t| t.kind == Tok::Str))
                            .map(|j| self.word(j).trim_matches(['"', '\'']).to_owned());
                        let Some(value) = value else {
                            return Err(self.unsupported(i, "an edition without a value".into()));
                        };
                        let Some(e) = Edition::parse(&value) else {
                            return Err(self.unsupported(
                                i,
                                format!(
                                    "edition \"{value}\" (this bot reads editions 2023 and 2024)"
                                ),
                            ));
                        };
                        edition = Some(e);
                        let (a, b) = (t.start, self.tok(end - 1).map_or(t.end, |t| t.end));
                        self.edits.push((a, b, "syntax = \"proto2\";".to_owned()));
                        i = end;
                        continue;
                    }
                    // Not an editions file: nothing to do.
                    _ => return Ok(None),
                }
            }
            if t.kind == Tok::Punct(b'}') {
                stack.pop();
                i += 1;
                continue;
            }
            if t.kind == Tok::Punct(b';') {
                i += 1;
                continue;
            }
            if ctx == Ctx::Other {
                if t.kind == Tok::Punct(b'{') {
                    stack.push(Ctx::Other);
                }
                i += 1;
                continue;
            }
            match word.as_str() {
                "import" => {
                    let end = self.statement_end(i);
                    let path = (i + 1..end)
                        .find(|j| self.tok(*j).is_some_and(|t| t.kind == Tok::Str))
                        .map(|j| self.word(j).trim_matches(['"', '\'']).to_owned())
                        .unwrap_or_default();
                    if is_language_features(&path) {
                        self.blank(i, end);
                    } else if self.word(i + 1) == "option" {
                        self.blank(i + 1, i + 2);
                    }
                    i = end;
                }
                "option" => {
                    let end = self.statement_end(i);
                    if self.inert_feature(i + 1) {
                        self.blank(i, end);
                    }
                    i = end;
                }
                "export" | "local" if matches!(self.word(i + 1), "message" | "enum") => {
                    self.blank(i, i + 1);
                    i += 1;
                }
                "message" | "enum" | "oneof" | "extend" | "service"
                    if ctx != Ctx::Enum
                        && self.tok(i + 1).is_some_and(|t| t.kind == Tok::Ident) =>
                {
                    // Up to the opening brace (an extend names a dotted type).
                    let mut j = i + 1;
                    while self.tok(j).is_some_and(|t| t.kind != Tok::Punct(b'{')) {
                        if self.is_punct(j, b';') || self.is_punct(j, b'=') {
                            break;
                        }
                        j += 1;
                    }
                    if !self.is_punct(j, b'{') {
                        // A field whose type is called `message` or the like.
                        i = self.field(i, ctx);
                        continue;
                    }
                    stack.push(match word.as_str() {
                        "message" => Ctx::Message,
                        "enum" => Ctx::Enum,
                        "oneof" => Ctx::Oneof,
                        "extend" => Ctx::Extend,
                        _ => Ctx::Other,
                    });
                    i = j + 1;
                }
                "reserved" => {
                    let end = self.statement_end(i);
                    let idents: Vec<usize> = (i + 1..end)
                        .filter(|j| self.tok(*j).is_some_and(|t| t.kind == Tok::Ident))
                        .collect();
                    let numbers =
                        (i + 1..end).any(|j| self.tok(j).is_some_and(|t| t.kind == Tok::Int));
                    if !numbers {
                        for j in idents {
                            if let Some(t) = self.tok(j) {
                                let name = self.word(j).to_owned();
                                self.edits.push((t.start, t.end, format!("\"{name}\"")));
                            }
                        }
                    }
                    i = end;
                }
                "extensions" | "syntax" | "package" => i = self.statement_end(i),
                "edition" if ctx == Ctx::File && self.is_punct(i + 1, b'=') => {
                    return Err(self.unsupported(i, "a second edition declaration".into()));
                }
                _ if ctx == Ctx::Enum => {
                    let end = self.statement_end(i);
                    self.field_options(i, end);
                    i = end;
                }
                _ if matches!(ctx, Ctx::Message | Ctx::Extend | Ctx::Oneof) => {
                    i = self.field(i, ctx);
                }
                _ => {
                    // Something at file level protox will judge.
                    i = self.statement_end(i).max(i + 1);
                }
            }
        }
        Ok(edition)
    }

    /// A field statement at `i`; returns the index after it.
    fn field(&mut self, i: usize, ctx: Ctx) -> usize {
        let end = self.statement_end(i);
        let word = self.word(i);
        let labelled = matches!(word, "optional" | "required" | "repeated");
        let map = word == "map" && self.is_punct(i + 1, b'<');
        if !labelled && !map && ctx != Ctx::Oneof && word != "group" {
            if let Some(t) = self.tok(i) {
                self.edits.push((t.start, t.start, "optional ".to_owned()));
            }
        }
        self.field_options(i, end);
        end
    }
}

/// `google/protobuf/cpp_features.proto` and its siblings (java, go, rust, ...): they define
/// language features only, and protox's resolver does not have them.
fn is_language_features(path: &str) -> bool {
    path.strip_prefix("google/protobuf/")
        .is_some_and(|p| p.ends_with("_features.proto") && !p.contains('/'))
}

/// Rewrites an editions file into proto2 text (see the module docs); `Ok(None)` when `text` is
/// not an editions file.
pub(crate) fn lower(text: &str) -> Result<Option<Lowered>, Unsupported> {
    // Most files are not editions files: skip the pass unless the word is there at all.
    if memchr::memmem::find(text.as_bytes(), b"edition").is_none() {
        return Ok(None);
    }
    let mut pass = Pass {
        text,
        toks: tokenize(text),
        edits: Vec::new(),
    };
    let Some(edition) = pass.run()? else {
        // protox would say `expected 'enum', ... but found 'edition'`: say what it is.
        // At file level only: an enum value may be called `edition`.
        let mut depth = 0usize;
        let misplaced = (0..pass.toks.len()).find(|&i| {
            if pass.is_punct(i, b'{') {
                depth += 1;
            } else if pass.is_punct(i, b'}') {
                depth = depth.saturating_sub(1);
            }
            depth == 0
                && pass.word(i) == "edition"
                && pass.is_punct(i + 1, b'=')
                && (i == 0 || pass.is_punct(i - 1, b';') || pass.is_punct(i - 1, b'}'))
        });
        if let Some(i) = misplaced {
            return Err(pass.unsupported(
                i,
                "an edition declaration after other statements (it must come first)".into(),
            ));
        }
        return Ok(None);
    };
    let mut edits = std::mem::take(&mut pass.edits);
    edits.sort_by_key(|(s, e, _)| (*s, *e));
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (start, end, with) in edits {
        if start < at {
            // Overlapping edits (a blanked span inside a blanked span): the first wins.
            continue;
        }
        out.push_str(text.get(at..start).unwrap_or(""));
        out.push_str(&with);
        at = end;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    Ok(Some(Lowered { text: out, edition }))
}

// ---------------------------------------------------------------------------------------------
// Images.

/// Why an image's editions files could not be rewritten.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImageError {
    /// The global pool lacks `FileDescriptorSet` (a build without the well-known types).
    #[error("google.protobuf.FileDescriptorSet is not known")]
    NoSetDescriptor,
    /// The bytes are not a `FileDescriptorSet`.
    #[error("{0}")]
    Decode(#[from] prost::DecodeError),
    /// A file of an edition this bot does not read.
    #[error("{file}: edition number {number} (this bot reads editions 2023 and 2024)")]
    Edition {
        /// The file's name.
        file: String,
        /// Its `edition` field.
        number: i32,
    },
}

/// Rewrites the editions files of an encoded `FileDescriptorSet` (as `protoc` or `buf` write
/// them) into proto2 descriptors that prost-reflect accepts, the `features` options kept;
/// returns the new encoding and the edition of each rewritten file.
pub(crate) fn lower_image(
    bytes: &[u8],
) -> Result<(Vec<u8>, BTreeMap<String, Edition>), ImageError> {
    let global = DescriptorPool::global();
    let set_desc = global
        .get_message_by_name("google.protobuf.FileDescriptorSet")
        .ok_or(ImageError::NoSetDescriptor)?;
    let mut set = DynamicMessage::decode(set_desc, bytes)?;
    let mut editions = BTreeMap::new();
    let Some(Value::List(files)) = set.get_field_by_name_mut("file") else {
        return Ok((bytes.to_vec(), editions));
    };
    for file in files.iter_mut() {
        let Value::Message(file) = file else {
            continue;
        };
        let syntax = match file.get_field_by_name("syntax").as_deref() {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        if syntax != "editions" {
            continue;
        }
        let name = match file.get_field_by_name("name").as_deref() {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        let number = match file.get_field_by_name("edition").as_deref() {
            Some(Value::EnumNumber(n)) => *n,
            _ => 0,
        };
        let edition = Edition::from_number(number).ok_or_else(|| ImageError::Edition {
            file: name.clone(),
            number,
        })?;
        file.set_field_by_name("syntax", Value::String("proto2".to_owned()));
        file.clear_field_by_name("edition");
        editions.insert(name, edition);
    }
    Ok((set.encode_to_vec(), editions))
}

/// The files `text` imports, in order (any file: a cheap scan, no parse).
pub(crate) fn imports(text: &str) -> Vec<String> {
    if memchr::memmem::find(text.as_bytes(), b"import").is_none() {
        return Vec::new();
    }
    let toks = tokenize(text);
    let word = |t: &Token| text.get(t.start..t.end).unwrap_or("");
    let mut out = Vec::new();
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            Tok::Punct(b'{') => depth += 1,
            Tok::Punct(b'}') => depth = depth.saturating_sub(1),
            Tok::Ident if depth == 0 && word(t) == "import" => {
                let path = toks
                    .get(i + 1..)
                    .unwrap_or(&[])
                    .iter()
                    .take(3)
                    .find(|t| t.kind == Tok::Str);
                if let Some(p) = path {
                    out.push(word(p).trim_matches(['"', '\'']).to_owned());
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(text: &str) -> String {
        lower(text).expect("lowers").expect("an editions file").text
    }

    #[test]
    fn image_errors_say_what() {
        assert_eq!(
            ImageError::Edition {
                file: "a.proto".into(),
                number: 99,
            }
            .to_string(),
            "a.proto: edition number 99 (this bot reads editions 2023 and 2024)"
        );
        let truncated = lower_image(&[0x0a, 0x05]).unwrap_err();
        assert!(matches!(truncated, ImageError::Decode(_)), "{truncated}");
    }

    #[test]
    fn keeps_every_line_and_labels_fields() {
        let text = "edition = \"2023\";\npackage p;\nmessage A {\n  int32 a = 1;\n  repeated int32 b = 2;\n  map<string, int32> m = 3;\n  oneof o {\n    string s = 4;\n  }\n  reserved foo, bar;\n}\n";
        let out = lowered(text);
        assert_eq!(out.lines().count(), text.lines().count());
        assert_eq!(
            out,
            "syntax = \"proto2\";\npackage p;\nmessage A {\n  optional int32 a = 1;\n  repeated int32 b = 2;\n  map<string, int32> m = 3;\n  oneof o {\n    string s = 4;\n  }\n  reserved \"foo\", \"bar\";\n}\n"
        );
    }

    #[test]
    fn blanks_language_and_style_features_only() {
        let text = "edition = \"2024\";\nimport \"google/protobuf/cpp_features.proto\";\nimport option \"opts.proto\";\noption features.(pb.cpp).string_type = VIEW;\noption features.enforce_naming_style = STYLE_LEGACY;\nexport message A {\n  string s = 1 [features.(pb.cpp).string_type = VIEW, features.utf8_validation = NONE];\n  string t = 2 [features.(pb.cpp).string_type = VIEW];\n}\n";
        let out = lowered(text);
        assert_eq!(out.lines().count(), text.lines().count());
        let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            [
                "syntax = \"proto2\";",
                "",
                "import        \"opts.proto\";",
                "",
                "",
                "       message A {",
                &format!(
                    "  optional string s = 1 [{}features.utf8_validation = NONE];",
                    " ".repeat(38)
                ),
                &format!("  optional string t = 2{};", " ".repeat(39)),
                "}",
            ]
        );
    }

    #[test]
    fn not_an_editions_file() {
        assert_eq!(lower("syntax = \"proto3\";\n// edition\n"), Ok(None));
        assert_eq!(lower("syntax = \"proto3\";\nmessage A {}\n"), Ok(None));
    }

    #[test]
    fn misplaced_and_repeated_editions_name_the_line() {
        assert_eq!(
            lower("package p;\nedition = \"2023\";\n"),
            Err(Unsupported {
                line: 2,
                column: 1,
                what: "an edition declaration after other statements (it must come first)".into()
            })
        );
        assert_eq!(
            lower("edition = \"2023\";\n  edition = \"2024\";\n"),
            Err(Unsupported {
                line: 2,
                column: 3,
                what: "a second edition declaration".into()
            })
        );
        // A field or an enum value called `edition` is one.
        assert!(lower("syntax = \"proto3\";\nmessage A { int32 edition = 1; }\nenum E { X = 0; edition = 1; }\n")
            .expect("reads")
            .is_none());
    }

    #[test]
    fn unknown_edition_names_the_line() {
        let err = lower("// header\n\nedition = \"2025\";\n").expect_err("unsupported");
        assert_eq!(
            err,
            Unsupported {
                line: 3,
                column: 1,
                what: "edition \"2025\" (this bot reads editions 2023 and 2024)".into()
            }
        );
    }
}
