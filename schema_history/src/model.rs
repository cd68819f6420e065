//! The wire-relevant model of a schema: every message and enum reachable from the root, with
//! numbers, names, types, labels, oneofs, reserved ranges and names, options and source locations.
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use prost_reflect::{
    Cardinality, DescriptorPool, EnumDescriptor, FieldDescriptor, FileDescriptor, Kind,
    MessageDescriptor, Value,
};
use serde::Serialize;

use crate::editions::{self, FieldFeatures, Presence};
use crate::protos::Compiled;
use crate::spans::Spans;
use crate::Error;

mod listing;

/// A place in a `.proto` file: repository-relative path, 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Location {
    /// Repository-relative path (or import name when the repository path is unknown).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// How a value is laid out on the wire (one home: `proto::contract`).
pub use proto::WireClass;

/// A field of a reachable message.
#[derive(Debug, Clone)]
pub struct Field {
    /// Short name.
    pub name: String,
    /// Field number.
    pub number: u32,
    /// Type as written: `int64`, `.xla.ShapeProto`, ...
    pub type_name: String,
    /// Wire layout of the type.
    pub wire: WireClass,
    /// `repeated`.
    pub repeated: bool,
    /// Explicit presence (proto2 optional, proto3 `optional`, messages, oneof members).
    pub presence: bool,
    /// Message-typed (messages always have presence, so it is not printed).
    pub is_message: bool,
    /// The (non-synthetic) oneof it belongs to.
    pub oneof: Option<String>,
    /// Carries the compat option `ignorable = true`.
    pub ignorable: bool,
    /// Repeated and encoded packed (one length-delimited record). Known only for models
    /// extracted from descriptors; a model read from a listing says `false` (the listing does
    /// not record it, and only base against head compares it).
    pub packed: bool,
    /// Where it is declared.
    pub location: Option<Location>,
    /// The resolved features that change what a reader sees (for proto2 / proto3 files, what
    /// their syntax means; for editions files, the edition defaults and the file, message,
    /// oneof and field settings). `presence` and `wire` above already reflect them.
    pub features: FieldFeatures,
}

/// A reachable message.
#[derive(Debug, Clone)]
pub struct Message {
    /// Full name.
    pub name: String,
    /// Fields by number.
    pub fields: BTreeMap<u32, Field>,
    /// Names of real (non-synthetic) oneofs.
    pub oneofs: BTreeSet<String>,
    /// Reserved number ranges, `start..end` (end exclusive).
    pub reserved_ranges: Vec<(u32, u32)>,
    /// Field names the message reserves: a later field that takes one is a `name-reused`
    /// finding.
    pub reserved_names: BTreeSet<String>,
    /// Where it is declared.
    pub location: Option<Location>,
    /// Field name to number, filled with `fields` (by [`Message::insert_field`] or the model
    /// builders): `field_named` is a hash lookup, so a diff stays linear in the number of fields
    /// (a scan made a message of 20,000 fields take 44 s).
    pub(crate) names: HashMap<String, u32>,
}

impl Message {
    /// The field called `name`.
    pub fn field_named(&self, name: &str) -> Option<&Field> {
        self.names.get(name).and_then(|n| self.fields.get(n))
    }

    /// Adds (or replaces) a field, keeping the name index.
    pub(crate) fn insert_field(&mut self, field: Field) {
        if let Some(old) = self.fields.get(&field.number) {
            if self.names.get(&old.name) == Some(&old.number) {
                self.names.remove(&old.name);
            }
        }
        self.names.insert(field.name.clone(), field.number);
        self.fields.insert(field.number, field);
    }

    /// Whether `number` is in a reserved range.
    pub fn number_reserved(&self, number: u32) -> bool {
        self.reserved_ranges
            .iter()
            .any(|(s, e)| (*s..*e).contains(&number))
    }
}

/// A value of a reachable enum.
#[derive(Debug, Clone)]
pub struct EnumValue {
    /// Short name.
    pub name: String,
    /// Several values may share one (an enum with `allow_alias`): look values up by number with
    /// [`Enum::values_numbered`].
    pub number: i32,
    /// Where it is declared.
    pub location: Option<Location>,
}

/// A reachable enum.
#[derive(Debug, Clone)]
pub struct Enum {
    /// Full name.
    pub name: String,
    /// Values by name.
    pub values: BTreeMap<String, EnumValue>,
    /// Reserved number ranges, inclusive (as descriptors store an enum's, unlike a message's:
    /// [`Message::reserved_ranges`]).
    pub reserved_ranges: Vec<(i32, i32)>,
    /// Value names the enum reserves: a later value that takes one is a `name-reused` finding.
    pub reserved_names: BTreeSet<String>,
    /// Where it is declared.
    pub location: Option<Location>,
    /// Closed (`enum_type = CLOSED`, every proto2 enum): a reader keeps unknown values as
    /// unknown fields instead of in the field.
    pub closed: bool,
}

impl Enum {
    /// Whether `number` is in a reserved range.
    pub fn number_reserved(&self, number: i32) -> bool {
        self.reserved_ranges
            .iter()
            .any(|(s, e)| (*s..=*e).contains(&number))
    }

    /// The values numbered `number`.
    pub fn values_numbered(&self, number: i32) -> impl Iterator<Item = &EnumValue> {
        self.values.values().filter(move |v| v.number == number)
    }
}

/// Everything reachable from a root message.
#[derive(Debug, Clone)]
pub struct Model {
    /// The root message's full name.
    pub root: String,
    /// Reachable messages by full name.
    pub messages: BTreeMap<String, Arc<Message>>,
    /// Reachable enums by full name.
    pub enums: BTreeMap<String, Arc<Enum>>,
    /// Import names of the files that declare reachable types, with their imports.
    pub files: BTreeSet<String>,
}

/// Where the declarations of one file are.
struct FileSpans {
    /// Repository-relative path (or import name).
    path: String,
    spans: Arc<Spans>,
}

impl FileSpans {
    fn locate(&self, path: &[i32]) -> Option<Location> {
        let (line, column) = self.spans.get(path)?;
        Some(Location {
            file: self.path.clone(),
            line,
            column,
        })
    }
}

struct Locator<'a> {
    repo_paths: &'a BTreeMap<String, String>,
    /// Spans known beforehand, by import name.
    known: &'a HashMap<String, Arc<Spans>>,
    files: HashMap<String, Arc<FileSpans>>,
}

impl Locator<'_> {
    /// The spans of `file` (from its source info unless known beforehand).
    fn file(&mut self, file: &FileDescriptor) -> Arc<FileSpans> {
        let name = file.name();
        if let Some(f) = self.files.get(name) {
            return Arc::clone(f);
        }
        let spans = match self.known.get(name) {
            Some(spans) => Arc::clone(spans),
            None => Arc::new(Spans::of(file)),
        };
        let path = self
            .repo_paths
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_owned());
        let f = Arc::new(FileSpans { path, spans });
        self.files.insert(name.to_owned(), Arc::clone(&f));
        f
    }
}

impl Model {
    /// Walks everything reachable from `root` in `compiled`. `ignorable` is the full name of the
    /// boolean field option that marks fields older runtimes may drop.
    pub fn extract(compiled: &Compiled, root: &str, ignorable: &str) -> Result<Model, Error> {
        let pool = &compiled.pool;
        let root_desc = pool
            .get_message_by_name(root)
            .ok_or_else(|| Error::NoRoot {
                root: root.to_owned(),
                side: "the schema".to_owned(),
            })?;
        let ext = pool.get_extension_by_name(ignorable);
        let mut locator = Locator {
            repo_paths: &compiled.repo_paths,
            known: &compiled.spans,
            files: HashMap::new(),
        };
        let mut model = Model {
            root: root.to_owned(),
            messages: BTreeMap::new(),
            enums: BTreeMap::new(),
            files: BTreeSet::new(),
        };
        let mut queue = VecDeque::from([root_desc]);
        let mut enums: Vec<EnumDescriptor> = Vec::new();
        while let Some(msg) = queue.pop_front() {
            if model.messages.contains_key(msg.full_name()) {
                continue;
            }
            insert_name(&mut model.files, msg.parent_file().name());
            for field in msg.fields() {
                match field.kind() {
                    Kind::Message(m) => queue.push_back(m),
                    Kind::Enum(e) => enums.push(e),
                    _ => {}
                }
            }
            let edition = compiled.editions.get(msg.parent_file().name()).copied();
            let m = message(&msg, ext.as_ref(), &mut locator, edition);
            model.messages.insert(m.name.clone(), Arc::new(m));
        }
        for e in enums {
            if model.enums.contains_key(e.full_name()) {
                continue;
            }
            let file = e.parent_file();
            insert_name(&mut model.files, file.name());
            let spans = locator.file(&file);
            let mut values = BTreeMap::new();
            for v in e.values() {
                values.insert(
                    v.name().to_owned(),
                    EnumValue {
                        name: v.name().to_owned(),
                        number: v.number(),
                        location: spans.locate(v.path()),
                    },
                );
            }
            let en = Enum {
                name: e.full_name().to_owned(),
                values,
                reserved_ranges: e
                    .reserved_ranges()
                    .map(|r| (*r.start(), *r.end()))
                    .collect(),
                reserved_names: e.reserved_names().map(str::to_owned).collect(),
                location: spans.locate(e.path()),
                closed: editions::enum_closed(&e, compiled.editions.get(file.name()).copied()),
            };
            model.enums.insert(en.name.clone(), Arc::new(en));
        }
        // The files a decoder needs: those declaring reachable types and their imports.
        let mut stack: Vec<String> = model.files.iter().cloned().collect();
        while let Some(name) = stack.pop() {
            if let Some(file) = pool.get_file_by_name(&name) {
                for dep in file.dependencies() {
                    if model.files.insert(dep.name().to_owned()) {
                        stack.push(dep.name().to_owned());
                    }
                }
            }
        }
        Ok(model)
    }

    /// Every construct name of the model: messages, fields (`Msg.field`), enums, enum values
    /// (`Enum.VALUE`).
    pub fn constructs(&self) -> BTreeSet<String> {
        let mut out = Vec::new();
        for m in self.messages.values() {
            out.push(m.name.clone());
            out.extend(m.fields.values().map(|f| member(&m.name, &f.name)));
        }
        for e in self.enums.values() {
            out.push(e.name.clone());
            out.extend(e.values.keys().map(|v| member(&e.name, v)));
        }
        // Sorted once and built in bulk: much cheaper than inserting one by one.
        out.sort_unstable();
        out.into_iter().collect()
    }

    /// The field a construct name (`Msg.field`) denotes.
    pub fn field(&self, construct: &str) -> Option<&Field> {
        let (msg, field) = construct.rsplit_once('.')?;
        self.messages.get(msg)?.field_named(field)
    }

    /// The canonical listing lines of the model, sorted: one per message, field, oneof, enum,
    /// enum value, reserved range and reserved name.
    pub fn listing(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for m in self.messages.values() {
            lines.push(format!("{} message", m.name));
            for o in &m.oneofs {
                lines.push(format!("{}.{} oneof", m.name, o));
            }
            for f in m.fields.values() {
                let mut line = format!("{}.{} field {} ", m.name, f.name, f.number);
                if f.repeated {
                    line.push_str("repeated ");
                } else if f.presence && f.oneof.is_none() && !f.is_message {
                    line.push_str("optional ");
                }
                line.push_str(&f.type_name);
                if let Some(o) = &f.oneof {
                    line.push_str(" oneof ");
                    line.push_str(o);
                }
                if f.ignorable {
                    line.push_str(" [ignorable]");
                }
                // The features that differ from the edition 2023 defaults (presence is the
                // `optional` above; required is written out).
                if f.features.presence == Presence::Required {
                    line.push_str(" [required]");
                }
                if !f.features.packed {
                    line.push_str(" [expanded]");
                }
                if !f.features.utf8_verified {
                    line.push_str(" [utf8-unchecked]");
                }
                if f.features.delimited {
                    line.push_str(" [delimited]");
                }
                lines.push(line);
            }
            for (s, e) in &m.reserved_ranges {
                lines.push(format!("{} reserved {}", m.name, range_text(*s, e - 1)));
            }
            for n in &m.reserved_names {
                lines.push(format!("{} reserved-name {n}", m.name));
            }
        }
        for e in self.enums.values() {
            lines.push(if e.closed {
                format!("{} enum closed", e.name)
            } else {
                format!("{} enum", e.name)
            });
            for v in e.values.values() {
                lines.push(format!("{}.{} value {}", e.name, v.name, v.number));
            }
            for (s, end) in &e.reserved_ranges {
                lines.push(format!("{} reserved {}", e.name, range_text(*s, *end)));
            }
            for n in &e.reserved_names {
                lines.push(format!("{} reserved-name {n}", e.name));
            }
        }
        lines.sort();
        lines
    }
}

fn range_text<T: PartialEq + fmt::Display>(start: T, last: T) -> String {
    if start == last {
        start.to_string()
    } else {
        format!("{start} to {last}")
    }
}

fn message(
    msg: &MessageDescriptor,
    ext: Option<&prost_reflect::ExtensionDescriptor>,
    locator: &mut Locator<'_>,
    edition: Option<editions::Edition>,
) -> Message {
    let spans = locator.file(&msg.parent_file());
    let mut fields = BTreeMap::new();
    let inherited = editions::inherited(msg, edition);
    for f in msg.fields() {
        let field = field(&f, ext, &spans, inherited);
        fields.insert(field.number, field);
    }
    Message {
        name: msg.full_name().to_owned(),
        names: fields
            .values()
            .map(|f| (f.name.clone(), f.number))
            .collect(),
        fields,
        oneofs: msg
            .oneofs()
            .filter(|o| !o.is_synthetic())
            .map(|o| o.name().to_owned())
            .collect(),
        reserved_ranges: msg.reserved_ranges().map(|r| (r.start, r.end)).collect(),
        reserved_names: msg.reserved_names().map(str::to_owned).collect(),
        location: spans.locate(msg.path()),
    }
}

/// `parent.name`: the construct name of a field or enum value.
fn member(parent: &str, name: &str) -> String {
    let mut s = String::with_capacity(parent.len() + 1 + name.len());
    s.push_str(parent);
    s.push('.');
    s.push_str(name);
    s
}

/// `.` and a full name: how a field's type is written in the listing.
fn dotted(full_name: &str) -> String {
    let mut s = String::with_capacity(full_name.len() + 1);
    s.push('.');
    s.push_str(full_name);
    s
}

/// Adds `name` to `set` (allocating only when it is new).
fn insert_name(set: &mut BTreeSet<String>, name: &str) {
    if !set.contains(name) {
        set.insert(name.to_owned());
    }
}

fn field(
    f: &FieldDescriptor,
    ext: Option<&prost_reflect::ExtensionDescriptor>,
    spans: &FileSpans,
    inherited: Option<FieldFeatures>,
) -> Field {
    let kind = f.kind();
    let type_name = match &kind {
        Kind::Message(m) => dotted(m.full_name()),
        Kind::Enum(e) => dotted(e.full_name()),
        Kind::Double => "double".to_owned(),
        Kind::Float => "float".to_owned(),
        Kind::Int32 => "int32".to_owned(),
        Kind::Int64 => "int64".to_owned(),
        Kind::Uint32 => "uint32".to_owned(),
        Kind::Uint64 => "uint64".to_owned(),
        Kind::Sint32 => "sint32".to_owned(),
        Kind::Sint64 => "sint64".to_owned(),
        Kind::Fixed32 => "fixed32".to_owned(),
        Kind::Fixed64 => "fixed64".to_owned(),
        Kind::Sfixed32 => "sfixed32".to_owned(),
        Kind::Sfixed64 => "sfixed64".to_owned(),
        Kind::Bool => "bool".to_owned(),
        Kind::String => "string".to_owned(),
        Kind::Bytes => "bytes".to_owned(),
    };
    let ignorable = ext.is_some_and(|ext| {
        // A field without options cannot carry the extension: skip decoding them.
        if f.field_descriptor_proto().options.is_none() {
            return false;
        }
        let options = f.options();
        options.has_extension(ext)
            && matches!(options.get_extension(ext).as_ref(), Value::Bool(true))
    });
    let features = editions::resolve_field(f, inherited);
    let repeated = f.cardinality() == Cardinality::Repeated;
    // An editions file is compiled as proto2 text (every field `optional`): its presence and
    // group encoding come from the features.
    let (presence, group) = match inherited {
        Some(_) => (
            !repeated && features.presence != Presence::Implicit,
            features.delimited,
        ),
        None => (f.supports_presence(), f.is_group()),
    };
    Field {
        name: f.name().to_owned(),
        number: f.number(),
        wire: WireClass::of(&kind, group),
        type_name,
        repeated,
        presence,
        is_message: matches!(kind, Kind::Message(_)),
        oneof: f
            .containing_oneof()
            .filter(|o| !o.is_synthetic())
            .map(|o| o.name().to_owned()),
        ignorable,
        packed: repeated && crate::editions::is_packable(&kind) && features.packed,
        location: spans.locate(f.path()),
        features,
    }
}

/// Encodes the files of `model` (declaring reachable types, plus their imports) from `pool` as a
/// `FileDescriptorSet`, custom options and source info intact, in the pool's (topological) order.
pub fn encode_reachable(pool: &DescriptorPool, model: &Model) -> Vec<u8> {
    let mut out = Vec::new();
    for file in pool.files() {
        if !model.files.contains(file.name()) {
            continue;
        }
        let bytes = file.encode_to_vec();
        // FileDescriptorSet.file = 1, length-delimited.
        out.push(0x0a);
        prost::encoding::encode_varint(bytes.len() as u64, &mut out);
        out.extend_from_slice(&bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, number: u32) -> Field {
        Field {
            name: name.to_owned(),
            number,
            type_name: "int32".to_owned(),
            wire: WireClass::Varint,
            repeated: false,
            presence: false,
            is_message: false,
            oneof: None,
            ignorable: false,
            packed: false,
            location: None,
            features: FieldFeatures::default(),
        }
    }

    /// The name index follows replacements: a number given a new name answers to the new name
    /// only.
    #[test]
    fn field_named_follows_inserted_and_replaced_fields() {
        let mut m = listing::empty_message("t.M");
        m.insert_field(field("a", 1));
        m.insert_field(field("b", 2));
        m.insert_field(field("c", 1));
        assert!(m.field_named("a").is_none());
        assert_eq!(m.field_named("c").map(|f| f.number), Some(1));
        assert_eq!(m.field_named("b").map(|f| f.number), Some(2));
    }
}
