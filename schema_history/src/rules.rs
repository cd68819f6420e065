//! The rules: wire compatibility (base against head, and against the whole history) and the
//! time windows (forward 14 days, backward 6 months) checked against the golden census.
use std::collections::BTreeSet;

use crate::census::Census;
use crate::finding::{Finding, Rule};
use crate::model::{Enum, Field, Location, Message, Model};
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

/// Every earlier model a number or name may have been used in: each snapshot of the history,
/// oldest first, then the base, labelled for messages ("snapshot NAME", "the base").
fn earlier_models<'a>(
    base: &'a Model,
    history: &'a History,
) -> impl Iterator<Item = (String, &'a Model)> + 'a {
    history
        .snapshots
        .iter()
        .map(|s| (format!("snapshot {}", s.name), &s.model))
        .chain(std::iter::once(("the base".to_owned(), base)))
}

/// An earlier use of a number or name: where (snapshot name or "the base") and what.
fn earlier_number(
    base: &Model,
    history: &History,
    msg: &str,
    number: u32,
    name: &str,
) -> Option<String> {
    for (label, model) in earlier_models(base, history) {
        let Some(m) = model.messages.get(msg) else {
            continue;
        };
        if let Some(f) = m.fields.get(&number) {
            if f.name != name {
                return Some(format!("{label} used it for `{}`", f.name));
            }
        } else if m.number_reserved(number) {
            return Some(format!("{label} reserved it"));
        }
    }
    None
}

fn earlier_name(
    base: &Model,
    history: &History,
    msg: &str,
    number: u32,
    name: &str,
) -> Option<String> {
    for (label, model) in earlier_models(base, history) {
        let Some(m) = model.messages.get(msg) else {
            continue;
        };
        if let Some(f) = m.field_named(name) {
            if f.number != number {
                return Some(format!("{label} used it for number {}", f.number));
            }
        } else if m.reserved_names.contains(name) {
            return Some(format!("{label} reserved it"));
        }
    }
    None
}

fn earlier_enum_number(
    base: &Model,
    history: &History,
    en: &str,
    number: i32,
    name: &str,
) -> Option<String> {
    for (label, model) in earlier_models(base, history) {
        let Some(e) = model.enums.get(en) else {
            continue;
        };
        if let Some(user) = e.values_numbered(number).find(|v| v.name != name) {
            return Some(format!("{label} used it for `{}`", user.name));
        }
        if e.values_numbered(number).next().is_none() && e.number_reserved(number) {
            return Some(format!("{label} reserved it"));
        }
    }
    None
}

fn earlier_enum_name(
    base: &Model,
    history: &History,
    en: &str,
    number: i32,
    name: &str,
) -> Option<String> {
    for (label, model) in earlier_models(base, history) {
        let Some(e) = model.enums.get(en) else {
            continue;
        };
        if let Some(v) = e.values.get(name) {
            if v.number != number {
                return Some(format!("{label} used it for number {}", v.number));
            }
        } else if e.reserved_names.contains(name) {
            return Some(format!("{label} reserved it"));
        }
    }
    None
}

/// Wire rules: base against head, and reuse against the whole history.
pub fn wire(base: &Model, head: &Model, history: &History) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, bm) in &base.messages {
        match head.messages.get(name) {
            Some(hm) => message_rules(base, history, bm, hm, &mut out),
            None => type_deleted(name, "message", bm.location.as_ref(), base, head, &mut out),
        }
    }
    for (name, be) in &base.enums {
        match head.enums.get(name) {
            Some(he) => enum_rules(base, history, be, he, &mut out),
            None => type_deleted(name, "enum", be.location.as_ref(), base, head, &mut out),
        }
    }
    // Messages and enums new to the head can still reuse history.
    for (name, hm) in &head.messages {
        if !base.messages.contains_key(name) {
            let empty = Message {
                name: name.clone(),
                fields: Default::default(),
                oneofs: Default::default(),
                reserved_ranges: hm.reserved_ranges.clone(),
                reserved_names: hm.reserved_names.clone(),
                location: None,
            };
            new_fields(base, history, &empty, hm, &mut out);
        }
    }
    out
}

/// A type is deleted when the head no longer reaches it. Deleting it together with the last field
/// that used it is the field rules' business; a field that survives with another type is not.
fn type_deleted(
    name: &str,
    kind: &str,
    location: Option<&Location>,
    base: &Model,
    head: &Model,
    out: &mut Vec<Finding>,
) {
    let type_name = format!(".{name}");
    for bm in base.messages.values() {
        for bf in bm.fields.values() {
            if bf.type_name != type_name {
                continue;
            }
            let Some(hf) = head
                .messages
                .get(&bm.name)
                .and_then(|hm| hm.fields.get(&bf.number))
            else {
                continue;
            };
            out.push(Finding::new(
                Rule::TypeDeleted,
                name,
                format!(
                    "{kind} `{name}` was deleted while `{}.{}` = {} still exists (now `{}`)",
                    bm.name, hf.name, hf.number, hf.type_name
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

fn message_rules(
    base: &Model,
    history: &History,
    bm: &Message,
    hm: &Message,
    out: &mut Vec<Finding>,
) {
    let msg = &bm.name;
    for (number, bf) in &bm.fields {
        let construct = || format!("{msg}.{}", bf.name);
        let Some(hf) = hm.fields.get(number) else {
            let number_ok = hm.number_reserved(*number);
            let name_ok =
                hm.reserved_names.contains(&bf.name) || hm.field_named(&bf.name).is_some();
            if !(number_ok && name_ok) {
                let missing = match (number_ok, name_ok) {
                    (false, false) => {
                        format!("`reserved {number};` and `reserved \"{}\";`", bf.name)
                    }
                    (false, true) => format!("`reserved {number};`"),
                    _ => format!("`reserved \"{}\";`", bf.name),
                };
                out.push(Finding::new(
                    Rule::FieldDeleted,
                    construct(),
                    format!(
                        "field `{}` = {number} deleted from `{msg}` without reserving its number and name",
                        bf.name
                    ),
                    loc_of(hm.location.as_ref(), bf.location.as_ref()),
                    format!("add {missing} to `{msg}` so that no later change reuses them"),
                ));
            }
            continue;
        };
        if hf.name != bf.name {
            out.push(Finding::new(
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
        field_shape_rules(msg, bf, hf, out);
    }
    new_fields(base, history, bm, hm, out);
    // Reserved numbers and names the head dropped (and does not reuse: that is reported above).
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
            out.push(Finding::new(
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
            out.push(Finding::new(
                Rule::ReservedRemoved,
                format!("{msg} reserved \"{name}\""),
                format!("reserved name \"{name}\" of `{msg}` is no longer reserved"),
                hm.location.clone(),
                format!("restore `reserved \"{name}\";` in `{msg}`"),
            ));
        }
    }
}

fn field_shape_rules(msg: &str, bf: &Field, hf: &Field, out: &mut Vec<Finding>) {
    let number = bf.number;
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
        out.push(Finding::new(
            Rule::TypeChanged,
            construct(),
            format!(
                "field `{}` = {number} of `{msg}` changed type from `{}` to `{}` (same wire type)",
                hf.name, bf.type_name, hf.type_name
            ),
            loc(),
            "check that every old value reads the same under the new type, or add a new field",
        ));
    }
    if hf.repeated != bf.repeated {
        let label = |r: bool| if r { "repeated" } else { "singular" };
        out.push(Finding::new(
            Rule::CardinalityChanged,
            construct(),
            format!(
                "field `{}` = {number} of `{msg}` changed from {} to {}",
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

fn new_fields(base: &Model, history: &History, bm: &Message, hm: &Message, out: &mut Vec<Finding>) {
    let msg = &hm.name;
    for (number, hf) in &hm.fields {
        let construct = || format!("{msg}.{}", hf.name);
        if !bm.fields.contains_key(number) {
            if let Some(earlier) = earlier_number(base, history, msg, *number, &hf.name) {
                out.push(Finding::new(
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
            if let Some(earlier) = earlier_name(base, history, msg, *number, &hf.name) {
                out.push(Finding::new(
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

fn enum_rules(base: &Model, history: &History, be: &Enum, he: &Enum, out: &mut Vec<Finding>) {
    let en = &be.name;
    for (name, bv) in &be.values {
        let construct = || format!("{en}.{name}");
        if let Some(hv) = he.values.get(name) {
            if hv.number != bv.number {
                out.push(Finding::new(
                    Rule::WireTypeChanged,
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
            out.push(Finding::new(
                Rule::EnumValueDeleted,
                construct(),
                format!(
                    "enum value `{name}` = {} deleted from `{en}` without reserving its number and name",
                    bv.number
                ),
                loc_of(he.location.as_ref(), bv.location.as_ref()),
                format!(
                    "add `reserved {};` and `reserved \"{name}\";` to `{en}`",
                    bv.number
                ),
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
            if let Some(earlier) = earlier_enum_number(base, history, en, hv.number, name) {
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
        if let Some(earlier) = earlier_enum_name(base, history, en, hv.number, name) {
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

/// Whether a base field or enum value still exists in the head under another name (a rename:
/// binary artifacts are unaffected, the `renamed` rule reports it).
fn survives_renamed(base: &Model, head: &Model, construct: &str) -> bool {
    let Some((parent, child)) = construct.rsplit_once('.') else {
        return false;
    };
    if let (Some(bm), Some(hm)) = (base.messages.get(parent), head.messages.get(parent)) {
        if let Some(bf) = bm.field_named(child) {
            return hm
                .fields
                .get(&bf.number)
                .is_some_and(|hf| hf.wire == bf.wire);
        }
    }
    if let (Some(be), Some(he)) = (base.enums.get(parent), head.enums.get(parent)) {
        if let Some(bv) = be.values.get(child) {
            return he.values_numbered(bv.number).next().is_some();
        }
    }
    false
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

    // Backward: removals and flag default changes.
    for construct in base_constructs.difference(&head_constructs) {
        if survives_renamed(base.model, head.model, construct) {
            continue;
        }
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
            let since = match history.first_seen(construct) {
                Some(None) => continue,
                Some(Some(date)) => date,
                // Without any snapshot the base is the baseline: what it has predates the windows.
                None if history.snapshots.is_empty() && base_constructs.contains(construct) => {
                    continue
                }
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

    // Staged rollout: say when each new construct may ship.
    for construct in head_constructs.difference(&base_constructs) {
        if construct.starts_with("flag:") || reported.contains(construct) {
            continue;
        }
        let (parent, _) = construct.rsplit_once('.').unwrap_or((construct, ""));
        // A new message's fields are covered by the message's note.
        let new_parent = (!base.model.messages.contains_key(parent)
            && head.model.messages.contains_key(parent))
            || (!base.model.enums.contains_key(parent) && head.model.enums.contains_key(parent));
        if new_parent && !construct.contains(':') {
            continue;
        }
        if head.model.field(construct).is_some_and(|f| f.ignorable) {
            continue;
        }
        let since = match history.first_seen(construct) {
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
                "land runtime support first; keep compiler emission off by default until {} (14 days), then keep the legacy path 6 months",
                since.add_days(FORWARD_WINDOW_DAYS)
            ),
        ));
    }
    out
}
