//! Reading a model back from a canonical listing (a snapshot's `surface.txt`), with the types
//! shared between the snapshots of a history.
//!
//! A listing is read type by type: every line belongs to one message or enum (its declaration,
//! its fields, oneofs, values and reservations), and a type is a function of its own lines plus,
//! for a message, which of its field types are enums (that decides a field's wire class and
//! presence). Consecutive snapshots of a history differ in a few types, so
//! [`Model::from_listing_after`] walks the listing beside the one read before (both sorted, one
//! string comparison per line) and rebuilds only the types of the lines that differ; every
//! other type is the earlier model's `Arc`, re-checked when the set of enums changed. Twenty
//! snapshots cost about one parse and one set of allocations, not twenty.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::{Enum, EnumValue, Field, Message, Model, WireClass};
use crate::editions::{FieldFeatures, Presence};
use crate::spans::FastMap;

/// What one type's lines built.
#[derive(Debug, Clone)]
struct Built {
    message: Option<Arc<Message>>,
    enumeration: Option<Arc<Enum>>,
}

/// The lines of one type, in listing order.
struct Group<'a> {
    name: &'a str,
    lines: Vec<&'a str>,
}

impl Model {
    /// Rebuilds the wire model from a canonical listing (a snapshot's `surface.txt`): names,
    /// numbers, labels, types, oneofs and reservations; no locations. Much faster than decoding
    /// the descriptor set, and all that the history rules need. Lines that do not parse are
    /// skipped; opcode, registry and flag lines belong to the extras.
    pub fn from_listing<'a>(root: &str, lines: impl IntoIterator<Item = &'a str>) -> Model {
        let lines: Vec<&str> = lines.into_iter().collect();
        Model::from_listing_after(root, &lines, None::<(&[&str], &Model)>)
    }

    /// [`Model::from_listing`] of `lines`, given `before`: an earlier listing and the model
    /// this function made of it. The types whose lines are the same in both are `before`'s.
    ///
    /// Exact for any pair of listings: the walk matches equal lines in order (a common
    /// subsequence) and marks the type of every line it leaves unmatched, so a type left
    /// unmarked has the same lines in the same order on both sides. Sorted listings (as
    /// snapshots are written) match all their common lines; unsorted ones only rebuild more.
    pub(crate) fn from_listing_after<S: AsRef<str>, T: AsRef<str>>(
        root: &str,
        lines: &[S],
        before: Option<(&[T], &Model)>,
    ) -> Model {
        let Some((earlier, model)) = before else {
            let (groups, enum_names) = group(lines.iter().map(AsRef::as_ref), None);
            let built = groups.iter().map(|g| (g.name, build(g, &enum_names)));
            return assemble(root, BTreeMap::new(), BTreeMap::new(), built);
        };
        let mut changed = changed_types(earlier, lines);
        // A type's enum-ness comes from its own lines: the unchanged keep the earlier model's.
        let (groups, enum_names) = group_changed(lines, &changed);
        let mut enum_names = enum_names;
        for name in model.enums.keys() {
            if !changed.contains_key(name.as_str()) {
                enum_names.insert(name, ());
            }
        }
        let enums_same = enum_names.len() == model.enums.len()
            && model
                .enums
                .keys()
                .all(|e| enum_names.contains_key(e.as_str()));
        let (mut messages, mut enums) = (model.messages.clone(), model.enums.clone());
        for name in changed.keys() {
            messages.remove(*name);
            enums.remove(*name);
        }
        let mut groups = groups;
        if !enums_same {
            // An unchanged message whose field types changed enum-ness is rebuilt too.
            let stale: Vec<&str> = model
                .messages
                .iter()
                .filter(|(name, m)| {
                    !changed.contains_key(name.as_str()) && !fields_still_valid(m, &enum_names)
                })
                .map(|(name, _)| name.as_str())
                .collect();
            if !stale.is_empty() {
                for name in &stale {
                    changed.insert(name, ());
                }
                groups = group_changed(lines, &changed).0;
                messages.retain(|name, _| !changed.contains_key(name.as_str()));
            }
        }
        let built = groups.iter().map(|g| (g.name, build(g, &enum_names)));
        assemble(root, messages, enums, built)
    }
}

/// The model of `messages` and `enums` (the types kept) with the types `built` added.
fn assemble<'a>(
    root: &str,
    mut messages: BTreeMap<String, Arc<Message>>,
    mut enums: BTreeMap<String, Arc<Enum>>,
    built: impl Iterator<Item = (&'a str, Built)>,
) -> Model {
    for (name, b) in built {
        if let Some(m) = b.message {
            messages.insert(name.to_owned(), m);
        }
        if let Some(e) = b.enumeration {
            enums.insert(name.to_owned(), e);
        }
    }
    Model {
        root: root.to_owned(),
        messages,
        enums,
        files: BTreeSet::new(),
    }
}

/// The types of the lines that the walk of `earlier` beside `lines` leaves unmatched.
fn changed_types<'a, S: AsRef<str>, T: AsRef<str>>(
    earlier: &'a [T],
    lines: &'a [S],
) -> FastMap<&'a str, ()> {
    let mut changed = FastMap::default();
    let mut mark = |line: &'a str| {
        if let Some((owner, _)) = owner(line) {
            changed.insert(owner, ());
        }
    };
    let (mut i, mut j) = (0, 0);
    loop {
        match (
            earlier.get(i).map(AsRef::as_ref),
            lines.get(j).map(AsRef::as_ref),
        ) {
            (Some(a), Some(b)) if a == b => (i, j) = (i + 1, j + 1),
            (Some(a), Some(b)) if a < b => {
                mark(a);
                i += 1;
            }
            (Some(a), None) => {
                mark(a);
                i += 1;
            }
            (_, Some(b)) => {
                mark(b);
                j += 1;
            }
            (None, None) => break,
        }
    }
    changed
}

/// The words of a listing line, as `line.split(' ')` gives them (with `memchr`: cheaper).
fn split_words<'a>(line: &'a str, words: &mut Vec<&'a str>) {
    words.clear();
    let mut start = 0;
    for i in memchr::memchr_iter(b' ', line.as_bytes()) {
        words.push(line.get(start..i).unwrap_or_default());
        start = i + 1;
    }
    words.push(line.get(start..).unwrap_or_default());
}

/// The type a line belongs to and the line's kind (its second word); `None` for a line of no
/// type (extras, malformed), which no type reads.
fn owner(line: &str) -> Option<(&str, &str)> {
    // The first two words (`split_words` gives the same; this reads no further).
    let (name, rest) = line.split_once(' ')?;
    let kind = rest.split_once(' ').map_or(rest, |(kind, _)| kind);
    let owner = match kind {
        "message" | "enum" | "reserved" | "reserved-name" => name,
        "field" | "oneof" | "value" => name.rsplit_once('.')?.0,
        _ => return None,
    };
    Some((owner, kind))
}

/// [`group`] of the types in `only`. A snapshot's listing is its types' lines sorted, then
/// the extras: in the sorted prefix a type's lines all start with its name, so they are found
/// by a binary search and a short scan per type; the lines after it are read one by one.
fn group_changed<'a, S: AsRef<str>>(
    lines: &'a [S],
    only: &FastMap<&str, ()>,
) -> (Vec<Group<'a>>, FastMap<&'a str, ()>) {
    let sorted = 1 + lines
        .windows(2)
        .position(|w| w[0].as_ref() > w[1].as_ref())
        .unwrap_or(lines.len().saturating_sub(1));
    let (prefix, tail) = lines.split_at(sorted.min(lines.len()));
    let mut grouping = Grouping::default();
    for &name in only.keys() {
        let from = prefix.partition_point(|l| l.as_ref() < name);
        for line in prefix[from..].iter().map(AsRef::as_ref) {
            if !line.starts_with(name) {
                break;
            }
            match owner(line) {
                Some((owner, kind)) if owner == name => grouping.add(line, owner, kind),
                _ => {}
            }
        }
    }
    for line in tail.iter().map(AsRef::as_ref) {
        match owner(line) {
            Some((owner, kind)) if only.contains_key(owner) => grouping.add(line, owner, kind),
            _ => {}
        }
    }
    grouping.done()
}

/// Lines gathered by the type they belong to, in order of first appearance.
#[derive(Default)]
struct Grouping<'a> {
    groups: Vec<Group<'a>>,
    index: FastMap<&'a str, usize>,
    enum_names: FastMap<&'a str, ()>,
}

impl<'a> Grouping<'a> {
    fn add(&mut self, line: &'a str, owner: &'a str, kind: &str) {
        if kind == "enum" {
            self.enum_names.insert(owner, ());
        }
        let groups = &mut self.groups;
        let i = *self.index.entry(owner).or_insert_with(|| {
            groups.push(Group {
                name: owner,
                lines: Vec::new(),
            });
            groups.len() - 1
        });
        if let Some(g) = self.groups.get_mut(i) {
            g.lines.push(line);
        }
    }

    /// The groups and the names of the enums among them.
    fn done(self) -> (Vec<Group<'a>>, FastMap<&'a str, ()>) {
        (self.groups, self.enum_names)
    }
}

/// The lines of `lines` by the type they belong to (in order of first appearance; only the
/// types in `only`, when given), and the names of those types that are enums.
fn group<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    only: Option<&FastMap<&str, ()>>,
) -> (Vec<Group<'a>>, FastMap<&'a str, ()>) {
    let mut grouping = Grouping::default();
    for line in lines {
        let Some((owner, kind)) = owner(line) else {
            continue;
        };
        if only.is_some_and(|only| !only.contains_key(owner)) {
            continue;
        }
        grouping.add(line, owner, kind);
    }
    grouping.done()
}

/// Whether a message built in an earlier listing is what its (unchanged) lines build in this
/// one: each field's type is still an enum, or still not one.
fn fields_still_valid(m: &Message, enum_names: &FastMap<&str, ()>) -> bool {
    m.fields
        .values()
        .all(|f| f.is_message == is_message(&f.type_name, enum_names))
}

/// Whether a field of type `type_name` (as the listing writes it) holds a message: a named type
/// (`.pkg.Name`) that is not one of the listing's enums.
fn is_message(type_name: &str, enum_names: &FastMap<&str, ()>) -> bool {
    type_name.starts_with('.') && !enum_names.contains_key(type_name.trim_start_matches('.'))
}

/// The message and the enum (either may be absent) that one type's lines declare.
fn build(g: &Group<'_>, enum_names: &FastMap<&str, ()>) -> Built {
    let mut message: Option<Message> = None;
    let mut enumeration: Option<Enum> = None;
    let mut w: Vec<&str> = Vec::new();
    // The declarations first: a field or reservation line may come before its type's.
    for line in &g.lines {
        split_words(line, &mut w);
        match w.get(1).copied() {
            Some("message") => message = Some(empty_message(g.name)),
            Some("enum") => enumeration = Some(empty_enum(g.name, line.ends_with(" closed"))),
            _ => {}
        }
    }
    for line in &g.lines {
        split_words(line, &mut w);
        let (Some(&name), Some(&kind)) = (w.first(), w.get(1)) else {
            continue;
        };
        let rest = w.get(2..).unwrap_or(&[]);
        match (kind, message.as_mut(), enumeration.as_mut()) {
            ("field", Some(m), _) => {
                if let Some(field) = field(name, rest, enum_names) {
                    m.insert_field(field);
                }
            }
            ("oneof", Some(m), _) => {
                if let Some((_, o)) = name.rsplit_once('.') {
                    m.oneofs.insert(o.to_owned());
                }
            }
            ("value", _, Some(e)) => {
                let (Some((_, v)), Some(number)) = (
                    name.rsplit_once('.'),
                    rest.first().and_then(|n| n.parse::<i32>().ok()),
                ) else {
                    continue;
                };
                let value = EnumValue {
                    name: v.to_owned(),
                    number,
                    location: None,
                };
                e.values.insert(v.to_owned(), value);
            }
            // A reservation belongs to the message of its name, else to the enum.
            ("reserved", Some(m), _) => {
                if let Some((s, l)) = reserved_range(rest) {
                    if let (Ok(s), Ok(e)) = (u32::try_from(s), u32::try_from(l + 1)) {
                        m.reserved_ranges.push((s, e));
                    }
                }
            }
            ("reserved", None, Some(e)) => {
                if let Some((s, l)) = reserved_range(rest) {
                    if let (Ok(s), Ok(l)) = (i32::try_from(s), i32::try_from(l)) {
                        e.reserved_ranges.push((s, l));
                    }
                }
            }
            ("reserved-name", Some(m), _) => {
                if let Some(n) = rest.first() {
                    m.reserved_names.insert((*n).to_owned());
                }
            }
            ("reserved-name", None, Some(e)) => {
                if let Some(n) = rest.first() {
                    e.reserved_names.insert((*n).to_owned());
                }
            }
            _ => {}
        }
    }
    Built {
        message: message.map(Arc::new),
        enumeration: enumeration.map(Arc::new),
    }
}

pub(super) fn empty_message(name: &str) -> Message {
    Message {
        name: name.to_owned(),
        fields: BTreeMap::new(),
        names: HashMap::new(),
        oneofs: BTreeSet::new(),
        reserved_ranges: Vec::new(),
        reserved_names: BTreeSet::new(),
        location: None,
    }
}

fn empty_enum(name: &str, closed: bool) -> Enum {
    Enum {
        name: name.to_owned(),
        values: BTreeMap::new(),
        reserved_ranges: Vec::new(),
        reserved_names: BTreeSet::new(),
        location: None,
        closed,
    }
}

/// `N` or `N to M` (inclusive) of a `reserved` line.
fn reserved_range(rest: &[&str]) -> Option<(i64, i64)> {
    let start = rest.first().and_then(|n| n.parse::<i64>().ok())?;
    let last = match (rest.get(1).copied(), rest.get(2)) {
        (Some("to"), Some(n)) => n.parse::<i64>().ok()?,
        _ => start,
    };
    Some((start, last))
}

/// The field of a `NAME field NUMBER [repeated|optional] TYPE [oneof O] [flags]` line (`rest`:
/// the words after `field`); `None` when it does not parse.
fn field(name: &str, rest: &[&str], enum_names: &FastMap<&str, ()>) -> Option<Field> {
    let (_, short) = name.rsplit_once('.')?;
    let number = rest.first().and_then(|n| n.parse::<u32>().ok())?;
    let mut i = 1;
    let (mut repeated, mut presence) = (false, false);
    match rest.get(i).copied() {
        Some("repeated") => {
            repeated = true;
            i += 1;
        }
        Some("optional") => {
            presence = true;
            i += 1;
        }
        _ => {}
    }
    let type_name = rest.get(i).copied().unwrap_or("");
    let oneof = match (rest.get(i + 1).copied(), rest.get(i + 2).copied()) {
        (Some("oneof"), Some(o)) => Some(o.to_owned()),
        _ => None,
    };
    let is_message = is_message(type_name, enum_names);
    let features = FieldFeatures {
        presence: if rest.contains(&"[required]") {
            Presence::Required
        } else if presence || repeated || oneof.is_some() || is_message {
            Presence::Explicit
        } else {
            Presence::Implicit
        },
        packed: !rest.contains(&"[expanded]"),
        utf8_verified: !rest.contains(&"[utf8-unchecked]"),
        delimited: rest.contains(&"[delimited]"),
    };
    let wire = match type_name {
        _ if features.delimited => WireClass::Group,
        "int32" | "int64" | "uint32" | "uint64" | "bool" => WireClass::Varint,
        "sint32" | "sint64" => WireClass::ZigZag,
        "fixed32" | "sfixed32" | "float" => WireClass::Fixed32,
        "fixed64" | "sfixed64" | "double" => WireClass::Fixed64,
        t if t.starts_with('.') && !is_message => WireClass::Varint,
        _ => WireClass::Length,
    };
    Some(Field {
        name: short.to_owned(),
        number,
        type_name: type_name.to_owned(),
        wire,
        repeated,
        presence: !repeated && (presence || oneof.is_some() || is_message),
        is_message,
        oneof,
        ignorable: rest.contains(&"[ignorable]"),
        packed: false,
        location: None,
        features,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything a model holds, in a fixed order (`Message::names` is a hash map).
    fn canonical(m: &Model) -> String {
        let mut s = String::new();
        for (k, v) in &m.messages {
            let names: BTreeMap<_, _> = v.names.iter().collect();
            s += &format!(
                "{k} {:?} {:?} {:?} {:?} {:?} {:?} {names:?}\n",
                v.name, v.fields, v.oneofs, v.reserved_ranges, v.reserved_names, v.location
            );
        }
        for (k, v) in &m.enums {
            s += &format!("{k} {v:?}\n");
        }
        s + &format!("{} {:?}", m.root, m.files)
    }

    /// xorshift64: the same edits on every run.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n.max(1) as u64) as usize
        }
    }

    /// Forty random edits of `lines`: a line dropped, moved, a word replaced, a message made an
    /// enum and back (which changes the wire class of the fields of other, unchanged types).
    fn edit(lines: &mut Vec<String>, rng: &mut Rng) {
        const WORDS: [&str; 18] = [
            "message",
            "enum",
            "field",
            "value",
            "oneof",
            "reserved",
            "reserved-name",
            "to",
            "closed",
            "repeated",
            "optional",
            "[required]",
            "[delimited]",
            "1",
            "-3",
            "99999999999",
            ".a.B",
            "int32",
        ];
        for _ in 0..40 {
            let i = rng.below(lines.len());
            match rng.below(5) {
                0 => {
                    lines.remove(i);
                }
                1 => {
                    let line = lines[i].clone();
                    let to = rng.below(lines.len());
                    lines.insert(to, line);
                }
                2 => {
                    let mut w: Vec<&str> = lines[i].split(' ').collect();
                    let k = rng.below(w.len());
                    w[k] = WORDS[rng.below(WORDS.len())];
                    lines[i] = w.join(" ");
                }
                3 => lines[i] = lines[i].replace(" message", " enum"),
                _ => lines[i] = lines[i].replace(" enum", " message"),
            }
        }
    }

    /// Reusing the types of the listing before never changes what a listing reads as: the
    /// project's own snapshots in order, then 300 randomly edited listings in a row, each read
    /// after the one before (some shuffled: the walk assumes no order).
    #[test]
    fn a_read_after_another_is_a_fresh_read() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots");
        let mut dirs: Vec<_> = std::fs::read_dir(root)
            .expect("the project's snapshots")
            .filter_map(|e| Some(e.ok()?.path()))
            .collect();
        dirs.sort();
        assert!(dirs.len() >= 2, "{root}: fewer than two snapshots");
        let mut before: Option<(Vec<String>, Model)> = None;
        let mut first: Vec<String> = Vec::new();
        for dir in &dirs {
            let text = std::fs::read_to_string(dir.join("surface.txt")).expect("surface.txt");
            let lines: Vec<String> = text.lines().map(str::to_owned).collect();
            let earlier = before.as_ref().map(|(l, m)| (l.as_slice(), m));
            let after = Model::from_listing_after("r", &lines, earlier);
            let fresh = Model::from_listing("r", text.lines());
            assert_eq!(canonical(&after), canonical(&fresh), "{}", dir.display());
            if first.is_empty() {
                first = lines.clone();
            }
            before = Some((lines, after));
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut before: Option<(Vec<String>, Model)> = None;
        for round in 0..300 {
            // Edits of the first listing: every other one sorted again (as snapshots are
            // written), every tenth shuffled.
            let mut lines = first.clone();
            edit(&mut lines, &mut rng);
            if round % 2 == 0 {
                lines.sort();
            } else if round % 10 == 9 {
                for i in (1..lines.len()).rev() {
                    lines.swap(i, rng.below(i + 1));
                }
            }
            let earlier = before.as_ref().map(|(l, m)| (l.as_slice(), m));
            let after = Model::from_listing_after("r", &lines, earlier);
            let fresh = Model::from_listing("r", lines.iter().map(String::as_str));
            assert_eq!(canonical(&after), canonical(&fresh), "round {round}");
            before = Some((lines, after));
        }
    }
}
