//! The Editions feature rule (`feature-changed`): base against head, per field and enum, on the
//! resolved features of [`crate::editions`].
//!
//! A feature change that alters what a reader accepts or sees is an error; one that only
//! changes how a writer encodes, which every conforming parser reads either way, is a note:
//!
//! | feature | change | severity | why |
//! | --- | --- | --- | --- |
//! | `field_presence` | to or from `LEGACY_REQUIRED` | error | a reader that requires the field rejects messages without it |
//! | `field_presence` | `EXPLICIT` ↔ `IMPLICIT` | (`presence-changed`, warning) | wire-compatible; has-ness differs |
//! | `enum_type` | `OPEN` ↔ `CLOSED` | error | unknown values land in the field or in the unknown fields: readers see different values |
//! | `utf8_validation` | `VERIFY` ↔ `NONE` | error | one side rejects strings the other accepts |
//! | `message_encoding` | `LENGTH_PREFIXED` ↔ `DELIMITED` | (`wire-type-changed`, error) | the wire type changes (length-delimited vs group) |
//! | `repeated_field_encoding` | `PACKED` ↔ `EXPANDED` | note | parsers must accept both encodings of a packable repeated field |
use crate::editions::Presence;
use crate::finding::{Finding, Rule};
use crate::model::{Field, Model};

fn presence_name(p: Presence) -> &'static str {
    match p {
        Presence::Explicit => "EXPLICIT",
        Presence::Implicit => "IMPLICIT",
        Presence::Required => "LEGACY_REQUIRED",
    }
}

fn flag(verified: bool, yes: &'static str, no: &'static str) -> &'static str {
    if verified {
        yes
    } else {
        no
    }
}

/// Every `feature-changed` finding of `head` against `base`.
pub(crate) fn compare(base: &Model, head: &Model) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, hm) in &head.messages {
        let Some(bm) = base.messages.get(name) else {
            continue;
        };
        for (number, hf) in &hm.fields {
            let Some(bf) = bm.fields.get(number) else {
                continue;
            };
            field(name, bf, hf, &mut out);
        }
    }
    for (name, he) in &head.enums {
        let Some(be) = base.enums.get(name) else {
            continue;
        };
        if be.closed != he.closed {
            let (from, to) = (
                flag(be.closed, "CLOSED", "OPEN"),
                flag(he.closed, "CLOSED", "OPEN"),
            );
            out.push(Finding::new(
                Rule::FeatureChanged,
                name.clone(),
                format!(
                    "enum `{name}` changes enum_type from {from} to {to}: an open enum keeps \
                     unknown values in the field, a closed one moves them to the unknown fields, \
                     so old and new readers see different values"
                ),
                he.location.clone(),
                format!("keep `features.enum_type = {from}` on `{name}` (or its file)"),
            ));
        }
    }
    out
}

fn field(msg: &str, bf: &Field, hf: &Field, out: &mut Vec<Finding>) {
    let construct = format!("{msg}.{}", hf.name);
    let (b, h) = (&bf.features, &hf.features);
    if b.presence != h.presence
        && (b.presence == Presence::Required || h.presence == Presence::Required)
    {
        let (from, to) = (presence_name(b.presence), presence_name(h.presence));
        out.push(Finding::new(
            Rule::FeatureChanged,
            construct.clone(),
            format!(
                "field `{}` ({}) changes field_presence from {from} to {to}: a reader that \
                 requires the field rejects messages without it",
                hf.name, hf.number
            ),
            hf.location.clone(),
            format!("keep `features.field_presence = {from}` on `{}`", hf.name),
        ));
    }
    let strings = bf.type_name == "string" && hf.type_name == "string";
    if strings && b.utf8_verified != h.utf8_verified {
        let (from, to) = (
            flag(b.utf8_verified, "VERIFY", "NONE"),
            flag(h.utf8_verified, "VERIFY", "NONE"),
        );
        out.push(Finding::new(
            Rule::FeatureChanged,
            construct.clone(),
            format!(
                "field `{}` ({}) changes utf8_validation from {from} to {to}: a reader that \
                 verifies rejects strings the other side accepts",
                hf.name, hf.number
            ),
            hf.location.clone(),
            format!("keep `features.utf8_validation = {from}` on `{}`", hf.name),
        ));
    }
    // A PACKED <-> EXPANDED change is the rules' `packed-changed` note: the model's `packed`
    // is these features' resolved encoding, so it is reported once, there.
}
