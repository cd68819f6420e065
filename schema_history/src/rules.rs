//! The rules: wire compatibility (base against head, and against the whole history) and the
//! time windows (forward 14 days, backward 6 months) checked against the golden census.
//!
//! Identity is by number, not name: a field is its message and number (with its wire class and
//! oneof), an enum value its enum and number, and a message or enum keeps its identity across a
//! rename or a package move with a compatible structure ([`crate::retype::type_renames`]). So a
//! rename keeps a construct's age and is not a removal, and a name that survives with another
//! number is a renumbering.
use std::collections::{BTreeMap, BTreeSet};

use crate::census::Census;
use crate::finding::{Finding, Rule};
use crate::model::{Enum, Field, Location, Message, Model};
use crate::retype::{packable, scalar_retype, type_renames, Retype, Structure};
use crate::surface::{Extras, History};
use crate::Date;

/// Days a construct must be in the schema before a compiler may emit it by default.
pub const FORWARD_WINDOW_DAYS: i64 = 14;
/// Months today's runtime must keep loading artifacts for.
pub const BACKWARD_WINDOW_MONTHS: i32 = 6;

/// One side of a comparison.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The wire model.
    pub model: &'a Model,
    /// Opcodes, registry names, runtime flags.
    pub extras: &'a Extras,
}

impl Side<'_> {
    /// Every construct of the side.
    pub fn constructs(&self) -> BTreeSet<String> {
        let mut c = self.model.constructs();
        c.extend(self.extras.constructs());
        c
    }
}

fn loc_of(primary: Option<&Location>, fallback: Option<&Location>) -> Option<Location> {
    primary.or(fallback).cloned()
}

/// An earlier model (a snapshot or the base) with the head's renamed types mapped onto it.
struct Earlier<'a> {
    /// "snapshot NAME" or "the base", for messages.
    label: String,
    model: &'a Model,
    /// The snapshot's date (`None` for the base).
    date: Option<Date>,
    /// Head type name -> this model's name, for types renamed or moved since.
    from_head: BTreeMap<String, String>,
}

impl Earlier<'_> {
    /// The name the head's type `name` has in this model, if it has the type.
    fn type_name<'n>(&'n self, name: &'n str) -> Option<&'n str> {
        if let Some(n) = self.from_head.get(name) {
            return Some(n);
        }
        (self.model.messages.contains_key(name) || self.model.enums.contains_key(name))
            .then_some(name)
    }

    fn message(&self, name: &str) -> Option<&Message> {
        self.model.messages.get(self.type_name(name)?)
    }

    fn enumeration(&self, name: &str) -> Option<&Enum> {
        self.model.enums.get(self.type_name(name)?)
    }
}

/// Every earlier model a number or name may have been used in: each snapshot of the history,
/// oldest first, then the base; each with the head's renamed types mapped onto it.
struct Lineage<'a> {
    earlier: Vec<Earlier<'a>>,
}

fn invert(map: BTreeMap<String, String>) -> BTreeMap<String, String> {
    map.into_iter().map(|(k, v)| (v, k)).collect()
}

impl<'a> Lineage<'a> {
    fn new(base: &'a Model, head: &Model, history: &'a History) -> Lineage<'a> {
        let mut earlier: Vec<Earlier<'a>> = history
            .snapshots
            .iter()
            .map(|s| Earlier {
                label: format!("snapshot {}", s.name),
                model: &s.model,
                date: Some(s.meta.date),
                from_head: invert(type_renames(&s.model, head)),
            })
            .collect();
        earlier.push(Earlier {
            label: "the base".to_owned(),
            model: base,
            date: None,
            from_head: invert(type_renames(base, head)),
        });
        Lineage { earlier }
    }

    fn snapshots(&self) -> impl Iterator<Item = &Earlier<'a>> {
        self.earlier.iter().filter(|e| e.date.is_some())
    }

    fn base(&self) -> Option<&Earlier<'a>> {
        self.earlier.iter().find(|e| e.date.is_none())
    }
}

/// Whether field `f` (of one side) has a counterpart in `tm` (the other side's message;
/// `from_to` maps the first side's renamed types to the other's): the field at the same number,
/// with the same wire class and oneof, so that a reader of one side reads the other's values as
/// this field. Fields age by meaning, not by number: a number whose name changed *together*
/// with a sign that its meaning changed is a new field (for the windows, `first seen`, the
/// backward window's "removed" and the staged-rollout notes). The signs: the type changed (an
/// `int64` renamed and made unsigned, a message renamed to an unrelated message), or explicit
/// presence changed (`int64 execution_stream_id = 4` becoming XLA's `optional int64
/// concurrent_region_id = 4`). A pure rename keeps identity (and age). An old name that lives
/// on at another number is no sign: it may carry the old meaning there (`execution_stream_id`
/// moved to 1000) or only the name (`frontend_attributes` 18 renamed `_legacy`, XLA's form at 19,
/// 18 meaning what it meant).
fn same_identity(f: &Field, tm: &Message, from_to: &BTreeMap<String, String>) -> bool {
    let Some(g) = tm.fields.get(&f.number) else {
        return false;
    };
    if g.wire != f.wire || g.oneof != f.oneof {
        return false;
    }
    if g.name == f.name {
        return true;
    }
    let (ft, gt) = (
        f.type_name.trim_start_matches('.'),
        g.type_name.trim_start_matches('.'),
    );
    let same_type = ft == gt || from_to.get(ft).is_some_and(|t| t == gt);
    same_type && g.presence == f.presence
}

/// Whether `construct`, a message, enum, field or enum value of `from`, has a counterpart in
/// `to` (`from_to` maps `from`'s renamed types to `to`'s names): the type by name or rename, a
/// field by number with the same wire class and oneof (so that a reader of one side reads the
/// other's values as this field; a field whose encoding changed is a new construct), an enum
/// value by number. `None` when it is not a
/// construct of `from`'s model (opcodes, registry names, flags).
fn counterpart(
    from: &Model,
    to: &Model,
    from_to: &BTreeMap<String, String>,
    construct: &str,
) -> Option<bool> {
    // Runs for every construct of a side: looked up without allocating.
    fn mapped<'m>(from_to: &'m BTreeMap<String, String>, name: &'m str) -> &'m str {
        from_to.get(name).map_or(name, String::as_str)
    }
    if from.messages.contains_key(construct) {
        return Some(to.messages.contains_key(mapped(from_to, construct)));
    }
    if from.enums.contains_key(construct) {
        return Some(to.enums.contains_key(mapped(from_to, construct)));
    }
    let (parent, child) = construct.rsplit_once('.')?;
    if let Some(m) = from.messages.get(parent) {
        let f = m.field_named(child)?;
        return Some(
            to.messages
                .get(mapped(from_to, parent))
                .is_some_and(|tm| same_identity(f, tm, from_to)),
        );
    }
    let e = from.enums.get(parent)?;
    let v = e.values.get(child)?;
    Some(
        to.enums
            .get(mapped(from_to, parent))
            .is_some_and(|te| te.values_numbered(v.number).next().is_some()),
    )
}

/// The constructs of `from` without a counterpart in `to` (see [`counterpart`]), found in one
/// walk: a name lookup per type, number lookups per member. Usually none.
fn vanished(from: &Model, to: &Model, from_to: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mapped = |name: &str| {
        to.messages
            .get(from_to.get(name).map_or(name, String::as_str))
    };
    for (name, m) in &from.messages {
        let Some(tm) = mapped(name) else {
            out.insert(name.clone());
            out.extend(m.fields.values().map(|f| format!("{name}.{}", f.name)));
            continue;
        };
        for f in m.fields.values() {
            if !same_identity(f, tm, from_to) {
                out.insert(format!("{name}.{}", f.name));
            }
        }
    }
    for (name, e) in &from.enums {
        let Some(te) = to
            .enums
            .get(from_to.get(name).map_or(name.as_str(), String::as_str))
        else {
            out.insert(name.clone());
            out.extend(e.values.keys().map(|v| format!("{name}.{v}")));
            continue;
        };
        for v in e.values.values() {
            if te.values_numbered(v.number).next().is_none() {
                out.insert(format!("{name}.{}", v.name));
            }
        }
    }
    out
}

/// When the head's `construct` first appeared, by identity (see [`counterpart`]): `None` when no
/// snapshot has it, `Some(None)` when the baseline has it, else the date of the first snapshot
/// with it. Opcodes, registry names and flags are looked up by name.
fn first_seen(
    lineage: &Lineage<'_>,
    head: &Model,
    history: &History,
    construct: &str,
) -> Option<Option<Date>> {
    for (i, e) in lineage.snapshots().enumerate() {
        let to_earlier = &e.from_head;
        match counterpart(head, e.model, to_earlier, construct) {
            None => return history.first_seen(construct),
            Some(true) => return Some(if i == 0 { None } else { e.date }),
            Some(false) => {}
        }
    }
    None
}

/// Whether `f`, a field of `e`'s model, is the head's field `hf` as it was: the same name,
/// wire class, label and type (a type renamed since counts as the same).
fn same_field(e: &Earlier<'_>, f: &Field, hf: &Field) -> bool {
    f.name == hf.name
        && f.wire == hf.wire
        && f.repeated == hf.repeated
        && (f.type_name == hf.type_name
            || e.type_name(hf.type_name.trim_start_matches('.'))
                .is_some_and(|t| t == f.type_name.trim_start_matches('.')))
}

/// An earlier use of a number that makes the head's field a reuse: where (snapshot name or "the
/// base") and what. The states are read oldest first. A number whose every earlier user is the
/// field itself (same name, wire class, label and type) is the field restored, not a reuse, even
/// where a later state reserved it: old artifacts decode it as exactly that field. A
/// reservation before any user in sight is a reuse (what the number meant is unknown), whatever
/// later states hold (the head's own snapshot has the field).
fn earlier_number(lineage: &Lineage<'_>, msg: &str, hf: &Field) -> Option<String> {
    let mut restored = false;
    for e in &lineage.earlier {
        let Some(m) = e.message(msg) else {
            continue;
        };
        if let Some(f) = m.fields.get(&hf.number) {
            if f.name != hf.name {
                return Some(format!("{} used it for `{}`", e.label, f.name));
            }
            if !same_field(e, f, hf) {
                return Some(format!(
                    "{} used it for `{}` as {}`{}`",
                    e.label,
                    f.name,
                    if f.repeated { "repeated " } else { "" },
                    f.type_name
                ));
            }
            restored = true;
        } else if !restored && m.number_reserved(hf.number) {
            return Some(format!("{} reserved it", e.label));
        }
    }
    None
}

/// An earlier use of a name for another number, or its reservation before any state had this
/// very name at this number (after one, the reservation is the field's own: a restore).
fn earlier_name(lineage: &Lineage<'_>, msg: &str, number: u32, name: &str) -> Option<String> {
    let mut restored = false;
    for e in &lineage.earlier {
        let Some(m) = e.message(msg) else {
            continue;
        };
        if let Some(f) = m.field_named(name) {
            if f.number != number {
                return Some(format!("{} used it for number {}", e.label, f.number));
            }
            restored = true;
        } else if !restored && m.reserved_names.contains(name) {
            return Some(format!("{} reserved it", e.label));
        }
    }
    None
}

fn earlier_enum_number(lineage: &Lineage<'_>, en: &str, number: i32, name: &str) -> Option<String> {
    let mut restored = false;
    for e in &lineage.earlier {
        let Some(m) = e.enumeration(en) else {
            continue;
        };
        if let Some(user) = m.values_numbered(number).find(|v| v.name != name) {
            return Some(format!("{} used it for `{}`", e.label, user.name));
        }
        if m.values_numbered(number).next().is_some() {
            restored = true;
        } else if !restored && m.number_reserved(number) {
            return Some(format!("{} reserved it", e.label));
        }
    }
    None
}

fn earlier_enum_name(lineage: &Lineage<'_>, en: &str, number: i32, name: &str) -> Option<String> {
    let mut restored = false;
    for e in &lineage.earlier {
        let Some(m) = e.enumeration(en) else {
            continue;
        };
        if let Some(v) = m.values.get(name) {
            if v.number != number {
                return Some(format!("{} used it for number {}", e.label, v.number));
            }
            restored = true;
        } else if !restored && m.reserved_names.contains(name) {
            return Some(format!("{} reserved it", e.label));
        }
    }
    None
}

/// What a deletion reserved, in words: "reserves neither its number 7 nor its name `foo`",
/// "reserves its name but not its number 7", ... `name_user` is the number of another field or
/// value that now carries the name (a renumbering, reported on its own).
fn reservation_words(
    number: impl std::fmt::Display,
    name: &str,
    number_ok: bool,
    name_reserved: bool,
    name_user: Option<String>,
) -> String {
    let now = name_user.map_or(String::new(), |u| format!(" (now {u}'s)"));
    match (number_ok, name_reserved) {
        (false, false) => {
            format!("reserves neither its number {number} nor its name `{name}`{now}")
        }
        (false, true) => format!("reserves its name but not its number {number}"),
        (true, false) => format!("reserves its number {number} but not its name `{name}`{now}"),
        (true, true) => format!("reserves its number {number} and its name `{name}`"),
    }
}

/// What the wire rules compare, and what they found.
struct Wire<'a> {
    base: &'a Model,
    head: &'a Model,
    lineage: Lineage<'a>,
    /// Base type name -> head type name, for types renamed or moved.
    renames: BTreeMap<String, String>,
    out: Vec<Finding>,
}

/// Wire rules: base against head, and reuse against the whole history.
pub fn wire(base: &Model, head: &Model, history: &History) -> Vec<Finding> {
    let lineage = Lineage::new(base, head, history);
    let renames = lineage
        .base()
        .map(|b| invert(b.from_head.clone()))
        .unwrap_or_default();
    let mut w = Wire {
        base,
        head,
        lineage,
        renames,
        out: Vec::new(),
    };
    for (name, bm) in &base.messages {
        let head_name = w.renames.get(name).cloned().unwrap_or_else(|| name.clone());
        match head.messages.get(&head_name) {
            Some(hm) => {
                if &head_name != name {
                    w.type_renamed("message", name, &head_name, hm.location.as_ref());
                }
                w.message_rules(bm, hm);
            }
            None => w.type_deleted(name, "message", bm.location.as_ref()),
        }
    }
    for (name, be) in &base.enums {
        let head_name = w.renames.get(name).cloned().unwrap_or_else(|| name.clone());
        match head.enums.get(&head_name) {
            Some(he) => {
                if &head_name != name {
                    w.type_renamed("enum", name, &head_name, he.location.as_ref());
                }
                w.enum_rules(be, he);
            }
            None => w.type_deleted(name, "enum", be.location.as_ref()),
        }
    }
    // Messages and enums new to the head can still reuse history.
    let renamed: BTreeSet<String> = w.renames.values().cloned().collect();
    for (name, hm) in &head.messages {
        if !base.messages.contains_key(name) && !renamed.contains(name) {
            let empty = Message {
                name: name.clone(),
                fields: Default::default(),
                names: Default::default(),
                oneofs: Default::default(),
                reserved_ranges: hm.reserved_ranges.clone(),
                reserved_names: hm.reserved_names.clone(),
                location: None,
            };
            w.new_fields(&empty, hm);
        }
    }
    w.out
}

impl Wire<'_> {
    fn type_renamed(&mut self, kind: &str, old: &str, new: &str, location: Option<&Location>) {
        // A nested type (a map entry, say) that moved with its renamed parent is part of the
        // parent's finding.
        let moved_with_parent = match (old.rsplit_once('.'), new.rsplit_once('.')) {
            (Some((op, on)), Some((np, nn))) => {
                on == nn && self.renames.get(op).is_some_and(|p| p == np)
            }
            _ => false,
        };
        if moved_with_parent {
            return;
        }
        self.out.push(Finding::new(
            Rule::Renamed,
            old,
            format!(
                "{kind} `{old}` renamed or moved to `{new}` with a compatible structure: binary artifacts still load, but whatever names the type (`Any` type URLs, reflection by name) breaks"
            ),
            location.cloned(),
            format!("keep `{old}` if anything resolves the type by name; otherwise nothing to do"),
        ));
    }

    /// A type is deleted when the head no longer reaches it. Deleting it together with the last
    /// field that used it is the field rules' business; so is a field that survives with a type
    /// of compatible structure (a `type-changed` warning). A field that survives with a type its
    /// old values do not read as is the error.
    fn type_deleted(&mut self, name: &str, kind: &str, location: Option<&Location>) {
        let type_name = format!(".{name}");
        for bm in self.base.messages.values() {
            for bf in bm.fields.values() {
                if bf.type_name != type_name {
                    continue;
                }
                let head_msg = self.renames.get(&bm.name).unwrap_or(&bm.name);
                let Some(hf) = self
                    .head
                    .messages
                    .get(head_msg)
                    .and_then(|hm| hm.fields.get(&bf.number))
                else {
                    continue;
                };
                if hf.wire == bf.wire && matches!(self.retype(bf, hf), Retype::Compatible(_)) {
                    continue;
                }
                self.out.push(Finding::new(
                    Rule::TypeDeleted,
                    name,
                    format!(
                        "{kind} `{name}` was deleted while `{head_msg}.{}` = {} still exists (now `{}`)",
                        hf.name, hf.number, hf.type_name
                    ),
                    loc_of(hf.location.as_ref(), location),
                    "keep the type; add the replacement as a new field with a new number and stage \
                     the switch (runtime support, then emission after 14 days, then cleanup after 6 \
                     months)",
                ));
                return;
            }
        }
    }

    fn message_rules(&mut self, bm: &Message, hm: &Message) {
        let msg = &bm.name;
        for (number, bf) in &bm.fields {
            let construct = || format!("{msg}.{}", bf.name);
            // A name that survives under another number: old artifacts' number is no longer
            // read as this field, whatever became of it (reserved, reused, nothing).
            let kept = hm.fields.get(number).is_some_and(|hf| hf.name == bf.name);
            if let Some(moved) = (!kept)
                .then(|| hm.field_named(&bf.name))
                .flatten()
                .filter(|f| f.number != *number)
            {
                self.out.push(Finding::new(
                    Rule::Renumbered,
                    construct(),
                    format!(
                        "field `{}` of `{msg}` renumbered from {number} to {}: old artifacts carry it as {number}, which the new reader no longer reads as `{}`",
                        bf.name, moved.number, bf.name
                    ),
                    moved.location.clone(),
                    format!(
                        "keep `{}` = {number}; add the new field under a new name and number and stage the switch",
                        bf.name
                    ),
                ));
            }
            let Some(hf) = hm.fields.get(number) else {
                let number_ok = hm.number_reserved(*number);
                let name_reserved = hm.reserved_names.contains(&bf.name);
                let name_user = hm
                    .field_named(&bf.name)
                    .map(|f| format!("field {}", f.number));
                let name_ok = name_reserved || name_user.is_some();
                if !(number_ok && name_ok) {
                    let words =
                        reservation_words(number, &bf.name, number_ok, name_reserved, name_user);
                    let missing = match (number_ok, name_ok) {
                        (false, false) => {
                            format!("`reserved {number};` and `reserved \"{}\";`", bf.name)
                        }
                        (false, true) => format!("`reserved {number};`"),
                        _ => format!("`reserved \"{}\";`", bf.name),
                    };
                    self.out.push(Finding::new(
                        Rule::FieldDeleted,
                        construct(),
                        format!(
                            "field `{}` = {number} deleted from `{msg}`: the deletion {words}",
                            bf.name
                        ),
                        loc_of(hm.location.as_ref(), bf.location.as_ref()),
                        format!("add {missing} to `{msg}` so that no later change reuses them"),
                    ));
                }
                continue;
            };
            if hf.name != bf.name {
                self.out.push(Finding::new(
                    Rule::Renamed,
                    construct(),
                    format!(
                        "field {number} of `{msg}` renamed from `{}` to `{}`: binary artifacts still load, but text-format and JSON goldens break",
                        bf.name, hf.name
                    ),
                    hf.location.clone(),
                    format!(
                        "keep the old name, or reserve `\"{}\"` and regenerate the text goldens",
                        bf.name
                    ),
                ));
            }
            self.field_shape_rules(msg, bf, hf);
        }
        self.new_fields(bm, hm);
        // Reserved numbers and names the head dropped (and does not reuse: that is reported
        // above).
        for (start, end) in &bm.reserved_ranges {
            let dropped: Vec<u32> = (*start..*end)
                .take(1 << 16)
                .filter(|n| !hm.number_reserved(*n) && !hm.fields.contains_key(n))
                .collect();
            if let Some(first) = dropped.first() {
                let last = dropped.last().copied().unwrap_or(*first);
                let text = if first == &last {
                    first.to_string()
                } else {
                    format!("{first} to {last}")
                };
                self.out.push(Finding::new(
                    Rule::ReservedRemoved,
                    format!("{msg} reserved {text}"),
                    format!("reserved number(s) {text} of `{msg}` are no longer reserved"),
                    hm.location.clone(),
                    format!(
                        "restore `reserved {text};` in `{msg}`: old artifacts may still carry them"
                    ),
                ));
            }
        }
        for name in &bm.reserved_names {
            if !hm.reserved_names.contains(name) && hm.field_named(name).is_none() {
                self.out.push(Finding::new(
                    Rule::ReservedRemoved,
                    format!("{msg} reserved \"{name}\""),
                    format!("reserved name \"{name}\" of `{msg}` is no longer reserved"),
                    hm.location.clone(),
                    format!("restore `reserved \"{name}\";` in `{msg}`"),
                ));
            }
        }
    }

    /// The type change of a field whose wire class stayed: what each reader sees.
    fn retype(&self, bf: &Field, hf: &Field) -> Retype {
        if !(bf.is_message && hf.is_message) {
            return scalar_retype(bf, hf);
        }
        let (x, y) = (
            bf.type_name.trim_start_matches('.'),
            hf.type_name.trim_start_matches('.'),
        );
        // The same type (or one renamed in this change, reported as such): nothing to compare
        // here; the type's own fields are checked by number where it is declared.
        if x == y || self.renames.get(x).is_some_and(|n| n == y) {
            return Retype::Same;
        }
        match Structure::new(self.base, self.head, &self.renames).messages(x, y) {
            Ok(()) => Retype::Compatible(
                "the structure is compatible (same numbers, wire types, labels and oneofs), but the meaning may differ"
                    .to_owned(),
            ),
            Err(path) => Retype::Incompatible(path.to_string()),
        }
    }

    fn field_shape_rules(&mut self, msg: &str, bf: &Field, hf: &Field) {
        let number = bf.number;
        let out = &mut self.out;
        // Named and located only when a rule fires: most fields keep their shape.
        let construct = || format!("{msg}.{}", bf.name);
        let loc = || hf.location.clone();
        if hf.wire != bf.wire {
            out.push(Finding::new(
                Rule::WireTypeChanged,
                construct(),
                format!(
                    "field `{}` = {number} of `{msg}` changed from `{}` ({}) to `{}` ({}): old and new readers misparse each other",
                    hf.name, bf.type_name, bf.wire.name(), hf.type_name, hf.wire.name()
                ),
                loc(),
                "add a new field with a new number and the new type; deprecate the old one",
            ));
        } else if hf.type_name != bf.type_name {
            let retype = self.retype(bf, hf);
            let out = &mut self.out;
            match retype {
                Retype::Same => {}
                Retype::Compatible(why) => out.push(Finding::new(
                    Rule::TypeChanged,
                    construct(),
                    format!(
                        "field `{}` = {number} of `{msg}` changed type from `{}` to `{}` (same wire type): {why}",
                        hf.name, bf.type_name, hf.type_name
                    ),
                    loc(),
                    "check that every old value reads the same under the new type, or add a new field",
                )),
                Retype::Incompatible(why) => {
                    let what = if bf.is_message && hf.is_message {
                        format!(
                            "`{msg}.{}` ({} -> {}): {why}",
                            hf.name,
                            bf.type_name.trim_start_matches('.'),
                            hf.type_name.trim_start_matches('.')
                        )
                    } else {
                        format!(
                            "field `{}` = {number} of `{msg}` changed from `{}` to `{}`: {why}",
                            hf.name, bf.type_name, hf.type_name
                        )
                    };
                    out.push(Finding::new(
                        Rule::TypeIncompatible,
                        construct(),
                        what,
                        loc(),
                        "add a new field with a new number and the new type; deprecate the old one",
                    ));
                }
            }
        }
        let out = &mut self.out;
        if hf.repeated != bf.repeated {
            let label = |r: bool| if r { "repeated" } else { "singular" };
            // Proto3 packs repeated numbers by default: a singular reader of a packed field
            // sees a length-delimited record where it expects a number and cannot parse it.
            let packed = [bf, hf].into_iter().find(|f| f.repeated && f.packed);
            let why = if packed.is_some() {
                ": a singular reader cannot parse the packed encoding"
            } else {
                ""
            };
            out.push(Finding::new(
                Rule::CardinalityChanged,
                construct(),
                format!(
                    "field `{}` = {number} of `{msg}` changed from {} to {}{why}",
                    hf.name,
                    label(bf.repeated),
                    label(hf.repeated)
                ),
                loc(),
                "add a new field with a new number instead of changing the label",
            ));
        } else if hf.oneof == bf.oneof && hf.presence != bf.presence && !hf.is_message {
            out.push(Finding::new(
                Rule::PresenceChanged,
                construct(),
                format!(
                    "field `{}` = {number} of `{msg}` {} explicit presence: readers may tell unset from default differently",
                    hf.name,
                    if hf.presence { "gained" } else { "lost" }
                ),
                loc(),
                "make sure no reader depends on presence, or add a new field",
            ));
        }
        if hf.repeated && bf.repeated && hf.packed != bf.packed && packable(bf) && packable(hf) {
            let enc = |p: bool| if p { "packed" } else { "expanded" };
            out.push(Finding::new(
                Rule::PackedChanged,
                construct(),
                format!(
                    "field `{}` = {number} of `{msg}` changed from {} to {} encoding: protobuf parsers (prost included) accept both for repeated numbers",
                    hf.name,
                    enc(bf.packed),
                    enc(hf.packed)
                ),
                loc(),
                "nothing to do unless a reader older than protobuf 2.3 or a hand-written parser reads it",
            ));
        }
        if hf.oneof != bf.oneof {
            let where_ = |o: &Option<String>| match o {
                Some(o) => format!("oneof `{o}`"),
                None => "no oneof".to_owned(),
            };
            out.push(Finding::new(
                Rule::OneofChanged,
                construct(),
                format!(
                    "field `{}` = {number} of `{msg}` moved from {} to {}: setting it now clears other fields",
                    hf.name,
                    where_(&bf.oneof),
                    where_(&hf.oneof)
                ),
                loc(),
                "add a new field with a new number in the wanted oneof",
            ));
        }
    }

    fn new_fields(&mut self, bm: &Message, hm: &Message) {
        let msg = &hm.name;
        for (number, hf) in &hm.fields {
            let construct = || format!("{msg}.{}", hf.name);
            if !bm.fields.contains_key(number) {
                if let Some(earlier) = earlier_number(&self.lineage, msg, hf) {
                    self.out.push(Finding::new(
                        Rule::NumberReused,
                        construct(),
                        format!(
                            "field `{}` reuses number {number} of `{msg}`: {earlier}; old artifacts decode as the wrong field",
                            hf.name
                        ),
                        hf.location.clone(),
                        format!(
                            "pick a number never used in `{msg}` and keep `reserved {number};`"
                        ),
                    ));
                }
            }
            if bm.field_named(&hf.name).is_none() {
                if let Some(earlier) = earlier_name(&self.lineage, msg, *number, &hf.name) {
                    self.out.push(Finding::new(
                        Rule::NameReused,
                        construct(),
                        format!(
                            "field `{}` = {number} reuses the name `{}` of `{msg}`: {earlier}; text-format and JSON goldens read it as the old field",
                            hf.name, hf.name
                        ),
                        hf.location.clone(),
                        "pick a name never used in this message",
                    ));
                }
            }
        }
    }

    fn enum_rules(&mut self, be: &Enum, he: &Enum) {
        let (lineage, out) = (&self.lineage, &mut self.out);
        let en = &be.name;
        for (name, bv) in &be.values {
            let construct = || format!("{en}.{name}");
            if let Some(hv) = he.values.get(name) {
                if hv.number != bv.number {
                    out.push(Finding::new(
                    Rule::Renumbered,
                    construct(),
                    format!(
                        "enum value `{name}` of `{en}` renumbered from {} to {}: old artifacts decode as another value",
                        bv.number, hv.number
                    ),
                    hv.location.clone(),
                    "keep the number; add a new value instead",
                ));
                }
                continue;
            }
            let renamed_to: Vec<&str> = he
                .values_numbered(bv.number)
                .filter(|v| !be.values.contains_key(&v.name))
                .map(|v| v.name.as_str())
                .collect();
            if let Some(new_name) = renamed_to.first() {
                out.push(Finding::new(
                Rule::Renamed,
                construct(),
                format!(
                    "enum value {} of `{en}` renamed from `{name}` to `{new_name}`: binary artifacts still load, but text-format and JSON goldens break",
                    bv.number
                ),
                he.values.get(*new_name).and_then(|v| v.location.clone()),
                format!("keep the old name, or reserve \"{name}\" and regenerate the text goldens"),
            ));
                continue;
            }
            let number_ok =
                he.number_reserved(bv.number) || he.values_numbered(bv.number).next().is_some();
            let name_ok = he.reserved_names.contains(name);
            if !(number_ok && name_ok) {
                let words = reservation_words(bv.number, name, number_ok, name_ok, None);
                out.push(Finding::new(
                    Rule::EnumValueDeleted,
                    construct(),
                    format!(
                        "enum value `{name}` = {} deleted from `{en}`: the deletion {words}",
                        bv.number
                    ),
                    loc_of(he.location.as_ref(), bv.location.as_ref()),
                    // Ask only for what is missing: repositories often reserve the number alone.
                    match number_ok {
                        true => format!("add `reserved \"{name}\";` to `{en}`"),
                        false if name_ok => format!("add `reserved {};` to `{en}`", bv.number),
                        false => format!(
                            "add `reserved {};` and `reserved \"{name}\";` to `{en}`",
                            bv.number
                        ),
                    },
                ));
            }
        }
        for (name, hv) in &he.values {
            let construct = || format!("{en}.{name}");
            if be.values.contains_key(name) {
                continue;
            }
            let number_new = be.values_numbered(hv.number).next().is_none();
            if number_new {
                if let Some(earlier) = earlier_enum_number(lineage, en, hv.number, name) {
                    out.push(Finding::new(
                        Rule::NumberReused,
                        construct(),
                        format!(
                            "enum value `{name}` reuses number {} of `{en}`: {earlier}",
                            hv.number
                        ),
                        hv.location.clone(),
                        "pick a number never used in this enum",
                    ));
                }
            }
            if let Some(earlier) = earlier_enum_name(lineage, en, hv.number, name) {
                out.push(Finding::new(
                    Rule::NameReused,
                    construct(),
                    format!(
                        "enum value `{name}` = {} reuses a name of `{en}`: {earlier}",
                        hv.number
                    ),
                    hv.location.clone(),
                    "pick a name never used in this enum",
                ));
            }
        }
        for (start, end) in &be.reserved_ranges {
            let dropped = (*start..=*end)
                .take(1 << 16)
                .find(|n| !he.number_reserved(*n) && he.values_numbered(*n).next().is_none());
            if let Some(n) = dropped {
                out.push(Finding::new(
                    Rule::ReservedRemoved,
                    format!("{en} reserved {n}"),
                    format!("reserved number {n} of `{en}` is no longer reserved"),
                    he.location.clone(),
                    format!("restore the reserved range in `{en}`"),
                ));
            }
        }
        for name in &be.reserved_names {
            if !he.reserved_names.contains(name) && !he.values.contains_key(name) {
                out.push(Finding::new(
                    Rule::ReservedRemoved,
                    format!("{en} reserved \"{name}\""),
                    format!("reserved name \"{name}\" of `{en}` is no longer reserved"),
                    he.location.clone(),
                    format!("restore `reserved \"{name}\";` in `{en}`"),
                ));
            }
        }
    }
}

/// Where a construct lives in a model, for locations.
fn construct_location(model: &Model, construct: &str) -> Option<Location> {
    if let Some(m) = model.messages.get(construct) {
        return m.location.clone();
    }
    if let Some(e) = model.enums.get(construct) {
        return e.location.clone();
    }
    let (parent, child) = construct.rsplit_once('.')?;
    if let Some(m) = model.messages.get(parent) {
        return m
            .field_named(child)
            .and_then(|f| f.location.clone())
            .or_else(|| m.location.clone());
    }
    let e = model.enums.get(parent)?;
    e.values
        .get(child)
        .and_then(|v| v.location.clone())
        .or_else(|| e.location.clone())
}

/// Forward and backward windows, and the staged-rollout notes for new constructs.
pub fn windows(
    base: Side<'_>,
    head: Side<'_>,
    history: &History,
    census: &Census,
    today: Date,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let base_constructs = base.constructs();
    let head_constructs = head.constructs();
    let window_start = today.add_months(-BACKWARD_WINDOW_MONTHS);
    let lineage = Lineage::new(base.model, head.model, history);
    let head_to_base = lineage
        .base()
        .map(|b| b.from_head.clone())
        .unwrap_or_default();
    let base_to_head = invert(head_to_base.clone());
    // What each side has that the other lacks: by identity for the model's constructs (a rename
    // survives, a renumbering does not), by name for the extras (whose names hold a `:`, which
    // no protobuf name does).
    let base_only = vanished(base.model, head.model, &base_to_head);
    let head_only = vanished(head.model, base.model, &head_to_base);
    let extra = |c: &&String| c.contains(':');
    let in_base = |construct: &str| {
        if construct.contains(':') {
            base_constructs.contains(construct)
        } else {
            !head_only.contains(construct)
        }
    };
    let removed: BTreeSet<&String> = base_only
        .iter()
        .chain(base_constructs.difference(&head_constructs).filter(extra))
        .collect();
    let added: BTreeSet<&String> = head_only
        .iter()
        .chain(head_constructs.difference(&base_constructs).filter(extra))
        .collect();

    // Backward: removals and flag default changes.
    for construct in removed {
        if let Some(golden) = census.newest_user_since(construct, window_start) {
            let legal = golden.created.add_months(BACKWARD_WINDOW_MONTHS);
            out.push(Finding::new(
                Rule::BackwardWindow,
                construct,
                format!(
                    "`{construct}` is removed, but golden {} (created {}) uses it and today's runtime must load artifacts for 6 months",
                    golden.label(),
                    golden.created
                ),
                construct_location(head.model, construct)
                    .or_else(|| construct_location(base.model, construct)),
                format!(
                    "keep it (and its runtime support) until {legal}, the first day the removal is legal; then delete it and reserve its number and name"
                ),
            ));
        }
    }
    for bf in &base.extras.runtime_flags {
        let Some(hf) = head.extras.runtime_flags.iter().find(|f| f.name == bf.name) else {
            continue;
        };
        if hf.default == bf.default {
            continue;
        }
        let construct = format!("flag:{}", bf.name);
        // A limit (marked on either side: unmarking one does not hide it) is judged by the
        // direction of the change: raising is compatible, lowering is enforced.
        if bf.limit || hf.limit {
            if let (Ok(old), Ok(new)) = (bf.default.parse::<u128>(), hf.default.parse::<u128>()) {
                if new > old {
                    continue;
                }
                if let Some(golden) = census.newest_user_since(&construct, window_start) {
                    out.push(limit_tightened(&bf.name, &bf.default, &hf.default, golden));
                }
                continue;
            }
        }
        if let Some(golden) = census.newest_user_since(&construct, window_start) {
            let legal = golden.created.add_months(BACKWARD_WINDOW_MONTHS);
            out.push(Finding::new(
                Rule::BackwardWindow,
                &construct,
                format!(
                    "runtime flag `{}` changes its default from `{}` to `{}`, but golden {} (created {}) depends on it",
                    bf.name, bf.default, hf.default, golden.label(), golden.created
                ),
                None,
                format!("keep the old default until {legal}, or make the new behaviour opt-in"),
            ));
        }
    }

    out.extend(crate::flag_rules::load_passes(
        base.extras,
        head.extras,
        census,
        today,
    ));
    out.extend(crate::kernel_header::kernel_headers(census));

    // Forward: what today's compiler emits by default must be at least 14 days old.
    let mut reported = BTreeSet::new();
    for golden in census.newest_per_target() {
        for construct in &golden.constructs {
            // Flags are read by the runtime, never emitted: the backward rule covers them.
            if !head_constructs.contains(construct)
                || reported.contains(construct)
                || construct.starts_with("flag:")
            {
                continue;
            }
            if head.model.field(construct).is_some_and(|f| f.ignorable) {
                continue;
            }
            let since = match first_seen(&lineage, head.model, history, construct) {
                Some(None) => continue,
                Some(Some(date)) => date,
                // Without any snapshot the base is the baseline: what it has predates the windows.
                None if history.snapshots.is_empty() && in_base(construct) => continue,
                None => today,
            };
            let age = today.days_since(since);
            if age >= FORWARD_WINDOW_DAYS {
                continue;
            }
            reported.insert(construct.clone());
            let legal = since.add_days(FORWARD_WINDOW_DAYS);
            out.push(Finding::new(
                Rule::ForwardWindow,
                construct,
                format!(
                    "`{construct}` is emitted by default (golden {} uses it) but has been in the schema only since {since} ({age} day{}); runtimes up to 14 days old cannot read it",
                    golden.label(),
                    if age == 1 { "" } else { "s" }
                ),
                construct_location(head.model, construct),
                format!(
                    "keep its emission behind a compiler flag that is off by default until {legal}, and regenerate the goldens without it"
                ),
            ));
        }
    }

    // Staged rollout: say when each new construct may ship (new by identity: a renamed
    // construct is not new, a renumbered field is).
    for construct in &added {
        let construct = construct.as_str();
        if construct.starts_with("flag:") || reported.contains(construct) {
            continue;
        }
        let (parent, _) = construct.rsplit_once('.').unwrap_or((construct, ""));
        // A new message's fields are covered by the message's note.
        let new_parent = (head.model.messages.contains_key(parent)
            || head.model.enums.contains_key(parent))
            && !in_base(parent);
        if new_parent && !construct.contains(':') {
            continue;
        }
        if head.model.field(construct).is_some_and(|f| f.ignorable) {
            continue;
        }
        let since = match first_seen(&lineage, head.model, history, construct) {
            Some(None) => continue,
            Some(Some(date)) => date,
            None => today,
        };
        out.push(Finding::new(
            Rule::StagedRollout,
            construct,
            format!("new construct `{construct}` (in the schema since {since})"),
            construct_location(head.model, construct),
            format!(
                "land runtime support first; keep compiler emission off by default until {} (14 days), then keep the legacy path 6 months{}",
                since.add_days(FORWARD_WINDOW_DAYS),
                rollout_row(construct)
            ),
        ));
    }
    out
}

/// What the rollout table (`proto::rollout`, the one home of each staged construct's numbers and
/// dates) says of `construct`, for the staged-rollout note: its row, flag and stage-2 date; nothing
/// when it has no row.
fn rollout_row(construct: &str) -> String {
    let row = proto::rollout::ROLLOUTS.iter().find(|r| {
        construct == r.construct
            || construct
                .strip_prefix(r.construct)
                .is_some_and(|rest| rest.starts_with('.'))
    });
    match row {
        Some(r) => format!(
            "; proto::rollout has it as `{}`{}, stage 2 from {}",
            r.name,
            r.option
                .map(|o| format!(" behind CompileOptions::{o}"))
                .unwrap_or_default(),
            r.stage2
        ),
        None => String::new(),
    }
}

/// A limit lowered while `golden` (inside the backward window) depends on it.
fn limit_tightened(name: &str, old: &str, new: &str, golden: &crate::census::Golden) -> Finding {
    let legal = golden.created.add_months(BACKWARD_WINDOW_MONTHS);
    Finding::new(
        Rule::LimitTightened,
        format!("flag:{name}"),
        format!(
            "runtime limit `{name}` is lowered from {old} to {new}, but golden {} (created {}) depends on it: artifacts that ran under {old} would be refused; no waiver silences this",
            golden.label(),
            golden.created
        ),
        None,
        format!(
            "keep the default at {old} (a deployment may set a lower value itself) until {legal}, or raise it instead"
        ),
    )
}

#[cfg(test)]
mod rollout_row_tests {
    use super::rollout_row;

    #[test]
    fn staged_rollout_notes_name_the_constructs_row() {
        assert_eq!(
            rollout_row("xla.gpu.LaunchDimensionsProto.block_counts_xyz"),
            "; proto::rollout has it as `launch_dims` behind CompileOptions::emit_launch_dims_at_1000, stage 2 from 2026-12-15"
        );
        assert_eq!(
            rollout_row("xla.gpu.ThunkProto.fft_thunk"),
            "; proto::rollout has it as `fft_thunk` behind CompileOptions::emit_fft_thunk, stage 2 from 2026-12-18"
        );
        assert_eq!(rollout_row("xla.gpu.LaunchDimensionsProtoX"), "");
    }
}
