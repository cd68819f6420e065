//! What a reader sees when a field's type changes: protobuf's wire-compatible groups, the
//! same-wire-type changes that still break readers, and the structural comparison of two
//! messages (recursively, by number) behind message retypes and type renames.
//!
//! Written by hand: no crate compares protobuf descriptors by wire compatibility
//! (`buf breaking` is Go and works by name and package, not by structure).
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::model::{Field, Message, Model, WireClass};

/// How deep the structural comparison follows message-typed fields before it gives up (and
/// calls the retype incompatible rather than guess). Cycles end earlier: a pair of types under
/// comparison counts as compatible where it recurs.
pub(crate) const MAX_DEPTH: usize = 32;

/// What readers see across a type change of one field (the wire class being equal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Retype {
    /// Same type.
    Same,
    /// Wire-compatible: every old value still parses, though some may read differently (the
    /// reason says how).
    Compatible(String),
    /// Readers of one side misparse or reject values of the other (the reason says what).
    Incompatible(String),
}

/// Why an old message type does not read the same under a new one: the first incompatible
/// path, e.g. ``field 3 `size` int64 -> string``.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StructureError {
    /// The comparison reached [`MAX_DEPTH`].
    #[error("nested deeper than {MAX_DEPTH} messages: not compared further")]
    TooDeep,
    /// One of the two names is not a message of its model.
    #[error("`.{old}` or `.{new}` is not a reachable message")]
    Unreachable {
        /// The old type.
        old: String,
        /// The new type.
        new: String,
    },
    /// A field of the old type that the new one neither has nor reserves.
    #[error("field {number} `{name}` ({type_name}) is missing: the new reader drops it")]
    Missing {
        /// Its number.
        number: u32,
        /// Its name.
        name: String,
        /// Its type.
        type_name: String,
    },
    /// A field of both whose shape changed.
    #[error("field {number} `{name}` {change}")]
    Field {
        /// Its number.
        number: u32,
        /// Its old name.
        name: String,
        /// How it changed.
        change: FieldChange,
    },
    /// A field of the new type on a number the old one reserved.
    #[error(
        "field {number} `{name}` uses a number `.{message}` reserved: old artifacts may carry it"
    )]
    Reserved {
        /// Its number.
        number: u32,
        /// Its name.
        name: String,
        /// The old message.
        message: String,
    },
}

/// How one field's shape changed between two message types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FieldChange {
    /// Singular to repeated or back.
    #[error("{from} -> {to}")]
    Label {
        /// `repeated` or `singular`.
        from: &'static str,
        /// `repeated` or `singular`.
        to: &'static str,
    },
    /// A type change readers see (another wire type, or an incompatible scalar).
    #[error("{from} -> {to}")]
    Type {
        /// The old type.
        from: String,
        /// The new type.
        to: String,
    },
    /// Fields that cleared each other no longer do, or the reverse.
    #[error("changes oneof grouping (oneof `{from}` -> `{to}`)")]
    OneofGrouping {
        /// The old oneof.
        from: String,
        /// The new oneof.
        to: String,
    },
    /// Into or out of a oneof.
    #[error("moved {} a oneof", if *.out { "out of" } else { "into" })]
    OneofMove {
        /// Out of one (else into one).
        out: bool,
    },
    /// Its message type does not read the same.
    #[error("({from} -> {to}): {error}")]
    Message {
        /// The old type.
        from: String,
        /// The new type.
        to: String,
        /// Why.
        error: Box<StructureError>,
    },
}

/// The family of a scalar type name within its wire class, for the compatibility table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scalar {
    /// int32, int64, uint32, uint64, bool.
    Integer,
    /// An enum.
    Enum,
    /// sint32, sint64.
    ZigZag,
    /// fixed32, sfixed32, fixed64, sfixed64.
    FixedInt,
    /// float, double.
    Float,
    /// string.
    String,
    /// bytes.
    Bytes,
    /// A message (or group).
    Message,
}

fn scalar(f: &Field) -> Scalar {
    if f.is_message {
        return Scalar::Message;
    }
    match f.type_name.as_str() {
        "int32" | "int64" | "uint32" | "uint64" | "bool" => Scalar::Integer,
        "sint32" | "sint64" => Scalar::ZigZag,
        "fixed32" | "sfixed32" | "fixed64" | "sfixed64" => Scalar::FixedInt,
        "float" | "double" => Scalar::Float,
        "string" => Scalar::String,
        "bytes" => Scalar::Bytes,
        _ => Scalar::Enum,
    }
}

/// The type change of two fields of the same wire class, message types aside (those are
/// compared structurally by [`Structure`]).
pub(crate) fn scalar_retype(old: &Field, new: &Field) -> Retype {
    if old.type_name == new.type_name {
        return Retype::Same;
    }
    let (o, n) = (scalar(old), scalar(new));
    let (from, to) = (&old.type_name, &new.type_name);
    match (o, n) {
        (Scalar::Integer, Scalar::Integer) => Retype::Compatible(format!(
            "`{from}` and `{to}` share the varint encoding: values that do not fit the new type are truncated as a C++ cast would, and signs may be reinterpreted"
        )),
        (Scalar::Enum, Scalar::Enum) => Retype::Compatible(format!(
            "both enums are varints read by number: a number `{to}` does not define reads as an unknown value"
        )),
        (Scalar::Enum, Scalar::Integer) | (Scalar::Integer, Scalar::Enum) => {
            Retype::Compatible(
                "enums and the int32 family share the varint encoding: numbers the enum does not define read as unknown values, 64-bit values are truncated"
                    .to_owned(),
            )
        }
        (Scalar::ZigZag, Scalar::ZigZag) => Retype::Compatible(format!(
            "`{from}` and `{to}` share the zigzag encoding: 64-bit values are truncated by 32-bit readers"
        )),
        (Scalar::FixedInt, Scalar::FixedInt) => Retype::Compatible(format!(
            "`{from}` and `{to}` share the fixed-width encoding: values with the top bit set change sign"
        )),
        (Scalar::FixedInt, Scalar::Float) | (Scalar::Float, Scalar::FixedInt) => {
            Retype::Incompatible(format!(
                "the same fixed-width bytes read as `{from}` and as `{to}` are different numbers: every value changes"
            ))
        }
        (Scalar::Bytes, Scalar::String) => Retype::Incompatible(
            "string readers validate UTF-8: old artifacts whose payload is not UTF-8 stop decoding"
                .to_owned(),
        ),
        (Scalar::String, Scalar::Bytes) => Retype::Incompatible(
            "runtimes up to 14 days old read it as a string and validate UTF-8: new payloads that are not UTF-8 fail to decode there"
                .to_owned(),
        ),
        (Scalar::String | Scalar::Bytes, Scalar::Message)
        | (Scalar::Message, Scalar::String | Scalar::Bytes) => Retype::Incompatible(format!(
            "a message reader parses the payload as fields and a `{}` reader takes it as data: one side misreads the other",
            if o == Scalar::Message { to } else { from }
        )),
        // Other pairs differ in wire class and never get here; call them what they are.
        _ => Retype::Incompatible(format!(
            "`{from}` and `{to}` are encoded differently"
        )),
    }
}

/// Whether the field's values could be packed (scalar numeric: varint, zigzag, fixed).
pub(crate) fn packable(f: &Field) -> bool {
    matches!(
        f.wire,
        WireClass::Varint | WireClass::ZigZag | WireClass::Fixed32 | WireClass::Fixed64
    )
}

/// Where two messages are compared: the old type in `old`, the new one in `new`.
pub(crate) struct Structure<'a> {
    old: &'a Model,
    new: &'a Model,
    /// Old type name -> new type name of the types known to be the same (renamed or moved):
    /// compared as equal where they meet.
    same: &'a BTreeMap<String, String>,
    /// Pairs under comparison or already found compatible (cycles end here).
    seen: HashSet<(String, String)>,
}

impl<'a> Structure<'a> {
    pub(crate) fn new(old: &'a Model, new: &'a Model, same: &'a BTreeMap<String, String>) -> Self {
        Structure {
            old,
            new,
            same,
            seen: HashSet::new(),
        }
    }

    /// `Ok` when every value of old type `a` reads the same under new type `b` and back (same
    /// numbers, wire types, labels and oneof grouping; fields only in `a` reserved by `b`), else
    /// the first incompatible path, e.g. ``field 3 `size` int64 -> string``.
    pub(crate) fn messages(&mut self, a: &str, b: &str) -> Result<(), StructureError> {
        self.compare(a, b, 0)
    }

    fn compare(&mut self, a: &str, b: &str, depth: usize) -> Result<(), StructureError> {
        if a == b || self.same.get(a).is_some_and(|n| n == b) {
            return Ok(());
        }
        if !self.seen.insert((a.to_owned(), b.to_owned())) {
            return Ok(());
        }
        if depth >= MAX_DEPTH {
            return Err(StructureError::TooDeep);
        }
        let (Some(am), Some(bm)) = (self.old.messages.get(a), self.new.messages.get(b)) else {
            return Err(StructureError::Unreachable {
                old: a.to_owned(),
                new: b.to_owned(),
            });
        };
        self.fields(am, bm, depth)
    }

    fn fields(&mut self, am: &Message, bm: &Message, depth: usize) -> Result<(), StructureError> {
        // Oneof grouping must map one to one: fields that clear each other must keep doing so.
        let mut oneofs: HashMap<&str, &str> = HashMap::new();
        let mut oneofs_back: HashMap<&str, &str> = HashMap::new();
        for (number, af) in &am.fields {
            let Some(bf) = bm.fields.get(number) else {
                if bm.number_reserved(*number) {
                    continue;
                }
                return Err(StructureError::Missing {
                    number: *number,
                    name: af.name.clone(),
                    type_name: af.type_name.clone(),
                });
            };
            let at = |change: FieldChange| StructureError::Field {
                number: *number,
                name: af.name.clone(),
                change,
            };
            let retyped = || FieldChange::Type {
                from: af.type_name.clone(),
                to: bf.type_name.clone(),
            };
            if af.repeated != bf.repeated {
                let label = |r: bool| if r { "repeated" } else { "singular" };
                return Err(at(FieldChange::Label {
                    from: label(af.repeated),
                    to: label(bf.repeated),
                }));
            }
            if af.wire != bf.wire {
                return Err(at(retyped()));
            }
            match (&af.oneof, &bf.oneof) {
                (None, None) => {}
                (Some(x), Some(y)) => {
                    let forth = *oneofs.entry(x).or_insert(y);
                    let back = *oneofs_back.entry(y).or_insert(x);
                    if forth != y.as_str() || back != x.as_str() {
                        return Err(at(FieldChange::OneofGrouping {
                            from: x.clone(),
                            to: y.clone(),
                        }));
                    }
                }
                (x, _) => return Err(at(FieldChange::OneofMove { out: x.is_some() })),
            }
            if af.is_message && bf.is_message {
                let (x, y) = (
                    af.type_name.trim_start_matches('.'),
                    bf.type_name.trim_start_matches('.'),
                );
                if let Err(inner) = self.compare(x, y, depth + 1) {
                    return Err(at(FieldChange::Message {
                        from: af.type_name.clone(),
                        to: bf.type_name.clone(),
                        error: Box::new(inner),
                    }));
                }
            } else if let Retype::Incompatible(_) = scalar_retype(af, bf) {
                return Err(at(retyped()));
            }
        }
        for (number, bf) in &bm.fields {
            if !am.fields.contains_key(number) && am.number_reserved(*number) {
                return Err(StructureError::Reserved {
                    number: *number,
                    name: bf.name.clone(),
                    message: am.name.clone(),
                });
            }
        }
        Ok(())
    }
}

/// Messages and enums of `old` that `new` no longer has under that name but has under another
/// (renamed, or moved to another package) with a compatible structure: old name -> new name.
///
/// A pair is found where a field keeps its number while its type changes from a type only `old`
/// has to one only `new` has (following pairs found this way into their own fields), or, for
/// the rest, where a type only `new` has carries the same short name (a package move). Each
/// type pairs at most once.
pub(crate) fn type_renames(old: &Model, new: &Model) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    // Most diffs add or delete no type: the sorted names are equal, one comparison each.
    if old.messages.keys().eq(new.messages.keys()) && old.enums.keys().eq(new.enums.keys()) {
        return out;
    }
    let gone_msgs: BTreeSet<&str> = old
        .messages
        .keys()
        .filter(|n| !new.messages.contains_key(*n))
        .map(String::as_str)
        .collect();
    let gone_enums: BTreeSet<&str> = old
        .enums
        .keys()
        .filter(|n| !new.enums.contains_key(*n))
        .map(String::as_str)
        .collect();
    if gone_msgs.is_empty() && gone_enums.is_empty() {
        return out;
    }
    let fresh = |name: &str| !old.messages.contains_key(name) && !old.enums.contains_key(name);
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut queue: Vec<(&str, &str)> = old
        .messages
        .keys()
        .filter(|n| new.messages.contains_key(*n))
        .map(|n| (n.as_str(), n.as_str()))
        .collect();
    while let Some((a, b)) = queue.pop() {
        let (Some(am), Some(bm)) = (old.messages.get(a), new.messages.get(b)) else {
            continue;
        };
        for (number, af) in &am.fields {
            let Some(bf) = bm.fields.get(number) else {
                continue;
            };
            let (x, y) = (
                af.type_name.trim_start_matches('.'),
                bf.type_name.trim_start_matches('.'),
            );
            if x == y || out.contains_key(x) || taken.contains(y) || !fresh(y) {
                continue;
            }
            let paired = if gone_msgs.contains(x) && new.messages.contains_key(y) {
                Structure::new(old, new, &out).messages(x, y).is_ok()
            } else if gone_enums.contains(x) {
                new.enums
                    .get(y)
                    .is_some_and(|ne| old.enums.get(x).is_some_and(|oe| enum_compatible(oe, ne)))
            } else {
                false
            };
            if paired {
                out.insert(x.to_owned(), y.to_owned());
                taken.insert(y.to_owned());
                if let (Some((x, _)), Some((y, _))) =
                    (old.messages.get_key_value(x), new.messages.get_key_value(y))
                {
                    queue.push((x.as_str(), y.as_str()));
                }
            }
        }
    }
    // Package moves of top-level types no surviving field points at. Nested types (map entries
    // above all) pair only through their parents, above: the same short name in two unrelated
    // messages says nothing.
    let short = |n: &str| n.rsplit('.').next().unwrap_or(n).to_owned();
    let nested = |m: &Model, n: &str| {
        n.rsplit_once('.')
            .is_some_and(|(parent, _)| m.messages.contains_key(parent))
    };
    for x in gone_msgs.iter().chain(&gone_enums) {
        if out.contains_key(*x) || nested(old, x) {
            continue;
        }
        let is_msg = gone_msgs.contains(x);
        let candidates: Vec<&String> = if is_msg {
            new.messages.keys().collect()
        } else {
            new.enums.keys().collect()
        };
        let found = candidates.into_iter().find(|y| {
            fresh(y)
                && !nested(new, y)
                && !taken.contains(*y)
                && short(y) == short(x)
                && if is_msg {
                    Structure::new(old, new, &out).messages(x, y).is_ok()
                } else {
                    matches!((old.enums.get(*x), new.enums.get(*y)), (Some(a), Some(b)) if enum_compatible(a, b))
                }
        });
        if let Some(y) = found {
            taken.insert(y.clone());
            out.insert((*x).to_owned(), y.clone());
        }
    }
    out
}

/// Every number of `old` is a number of `new`: old values keep their meaning by number.
fn enum_compatible(old: &crate::model::Enum, new: &crate::model::Enum) -> bool {
    old.values
        .values()
        .all(|v| new.values_numbered(v.number).next().is_some())
}

#[cfg(test)]
mod tests {
    use super::{FieldChange, StructureError};

    #[test]
    fn structure_errors_read_as_a_path() {
        let inner = StructureError::Field {
            number: 2,
            name: "y".into(),
            change: FieldChange::OneofMove { out: false },
        };
        let outer = StructureError::Field {
            number: 1,
            name: "a".into(),
            change: FieldChange::Message {
                from: ".t.A".into(),
                to: ".t.B".into(),
                error: Box::new(inner),
            },
        };
        assert_eq!(
            outer.to_string(),
            "field 1 `a` (.t.A -> .t.B): field 2 `y` moved into a oneof"
        );
        let label = StructureError::Field {
            number: 3,
            name: "size".into(),
            change: FieldChange::Label {
                from: "singular",
                to: "repeated",
            },
        };
        assert_eq!(label.to_string(), "field 3 `size` singular -> repeated");
        let reserved = StructureError::Reserved {
            number: 4,
            name: "z".into(),
            message: "t.A".into(),
        };
        assert_eq!(
            reserved.to_string(),
            "field 4 `z` uses a number `.t.A` reserved: old artifacts may carry it"
        );
        assert_eq!(
            StructureError::TooDeep.to_string(),
            "nested deeper than 32 messages: not compared further"
        );
    }
}
