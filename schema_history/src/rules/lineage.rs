//! Identity across renames and history: the earlier models (snapshots, the base) with the head's
//! renamed types mapped onto them, and what a field, number or enum value was called before.
use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Enum, Field, Location, Message, Model};
use crate::retype::type_renames;
use crate::surface::History;
use crate::Date;

pub(super) fn loc_of(primary: Option<&Location>, fallback: Option<&Location>) -> Option<Location> {
    primary.or(fallback).cloned()
}

/// An earlier model (a snapshot or the base) with the head's renamed types mapped onto it.
pub(super) struct Earlier<'a> {
    /// "snapshot NAME" or "the base", for messages.
    pub(super) label: String,
    pub(super) model: &'a Model,
    /// The snapshot's date (`None` for the base).
    pub(super) date: Option<Date>,
    /// Head type name -> this model's name, for types renamed or moved since.
    pub(super) from_head: BTreeMap<String, String>,
}

impl Earlier<'_> {
    /// The name the head's type `name` has in this model, if it has the type.
    pub(super) fn type_name<'n>(&'n self, name: &'n str) -> Option<&'n str> {
        if let Some(n) = self.from_head.get(name) {
            return Some(n);
        }
        (self.model.messages.contains_key(name) || self.model.enums.contains_key(name))
            .then_some(name)
    }

    pub(super) fn message(&self, name: &str) -> Option<&Message> {
        self.model.messages.get(self.type_name(name)?).map(|m| &**m)
    }

    pub(super) fn enumeration(&self, name: &str) -> Option<&Enum> {
        self.model.enums.get(self.type_name(name)?).map(|e| &**e)
    }
}

/// Every earlier model a number or name may have been used in: each snapshot of the history,
/// oldest first, then the base; each with the head's renamed types mapped onto it.
pub(super) struct Lineage<'a> {
    pub(super) earlier: Vec<Earlier<'a>>,
}

pub(super) fn invert(map: BTreeMap<String, String>) -> BTreeMap<String, String> {
    map.into_iter().map(|(k, v)| (v, k)).collect()
}

impl<'a> Lineage<'a> {
    pub(super) fn new(base: &'a Model, head: &Model, history: &'a History) -> Lineage<'a> {
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

    pub(super) fn snapshots(&self) -> impl Iterator<Item = &Earlier<'a>> {
        self.earlier.iter().filter(|e| e.date.is_some())
    }

    pub(super) fn base(&self) -> Option<&Earlier<'a>> {
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
pub(super) fn same_identity(f: &Field, tm: &Message, from_to: &BTreeMap<String, String>) -> bool {
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
pub(super) fn counterpart(
    from: &Model,
    to: &Model,
    from_to: &BTreeMap<String, String>,
    construct: &str,
) -> Option<bool> {
    // Runs for every construct of a side: looked up without allocating.
    pub(super) fn mapped<'m>(from_to: &'m BTreeMap<String, String>, name: &'m str) -> &'m str {
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
pub(super) fn vanished(
    from: &Model,
    to: &Model,
    from_to: &BTreeMap<String, String>,
) -> BTreeSet<String> {
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
pub(super) fn first_seen(
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
pub(super) fn same_field(e: &Earlier<'_>, f: &Field, hf: &Field) -> bool {
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
pub(super) fn earlier_number(lineage: &Lineage<'_>, msg: &str, hf: &Field) -> Option<String> {
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
pub(super) fn earlier_name(
    lineage: &Lineage<'_>,
    msg: &str,
    number: u32,
    name: &str,
) -> Option<String> {
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

pub(super) fn earlier_enum_number(
    lineage: &Lineage<'_>,
    en: &str,
    number: i32,
    name: &str,
) -> Option<String> {
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

pub(super) fn earlier_enum_name(
    lineage: &Lineage<'_>,
    en: &str,
    number: i32,
    name: &str,
) -> Option<String> {
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
pub(super) fn reservation_words(
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
