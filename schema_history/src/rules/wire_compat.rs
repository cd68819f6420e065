//! The wire rules: base against head (removals, renumberings, type and cardinality changes),
//! and reuse of a number or name against the whole history.
use std::collections::{BTreeMap, BTreeSet};

use super::lineage::*;
use crate::finding::{Finding, Rule};
use crate::model::{Enum, Field, Location, Message, Model};
use crate::retype::{packable, scalar_retype, Retype, Structure};
use crate::surface::History;

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
