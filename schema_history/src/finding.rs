//! Findings: what a rule reports.
use std::fmt;

use serde::Serialize;

use crate::model::Location;

/// How bad a finding is. Only errors fail the bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Information for the reviewer (a cleanup that is due, when a new construct may ship).
    Note,
    /// Probably wrong, does not block (renames).
    Warning,
    /// Blocks the merge.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// Every rule of the engine. The id is what waivers and reports name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// A field deleted without reserving both its number and its name (the message says which
    /// of the two it reserved).
    FieldDeleted,
    /// An enum value deleted without reserving both its number and its name (the message says
    /// which of the two it reserved).
    EnumValueDeleted,
    /// A reserved number or name no longer reserved.
    ReservedRemoved,
    /// A number used or reserved earlier (base or any snapshot) used again.
    NumberReused,
    /// A name used or reserved earlier (base or any snapshot) used again for another number.
    NameReused,
    /// The wire type of a field changed.
    WireTypeChanged,
    /// A field's type changed within one of protobuf's wire-compatible groups (values may be
    /// truncated or reinterpreted), or to a message of compatible structure.
    TypeChanged,
    /// A field's type changed within one wire type to one that readers parse differently
    /// (`bytes` <-> `string`, `fixed64` <-> `double`, a structurally different message).
    TypeIncompatible,
    /// A field or enum value kept its name but changed its number.
    Renumbered,
    /// A repeated scalar field switched between packed and expanded encoding.
    PackedChanged,
    /// A field changed between repeated and singular.
    CardinalityChanged,
    /// A field gained or lost explicit presence.
    PresenceChanged,
    /// A field moved into, out of or between oneofs.
    OneofChanged,
    /// A reachable message or enum deleted while a field still referred to it.
    TypeDeleted,
    /// A field or enum value renamed, or a message or enum renamed or moved to another package
    /// with a compatible structure.
    Renamed,
    /// A construct emitted by default before it has been in the schema 14 days.
    ForwardWindow,
    /// A construct removed (or a flag default changed) while a golden younger than 6 months
    /// uses it.
    BackwardWindow,
    /// A new construct: when it may be emitted by default.
    StagedRollout,
    /// A runtime fallback without a well-formed expiry comment.
    FallbackExpiry,
    /// A runtime fallback whose expiry has passed.
    CleanupDue,
    /// A waiver past its expiry date.
    WaiverExpired,
    /// A waiver that matches no finding.
    WaiverUnused,
    /// A Protobuf Editions feature that changes the wire form or validation changed (error),
    /// or one that does not (note).
    FeatureChanged,
    /// The compared file or root message is new at the head (absent at the base).
    SchemaCreated,
    /// The change loosens the bot's own inputs (its policy or its waivers, read from the base):
    /// enforced, a maintainer approves it (`--approve-trusted-inputs`).
    TrustedInputLoosened,
    /// A file of an existing golden version changed or deleted, or a version younger than the
    /// backward window removed: golden versions are append-only. Enforced.
    GoldenStoreRewritten,
    /// A runtime limit an artifact can depend on (an iteration cap, a timeout, a memory bound)
    /// lowered while goldens inside the backward window depend on it. Enforced.
    LimitTightened,
    /// The newest goldens' kernels need a newer CUDA toolkit (by their PTX `.version`) than their
    /// artifacts declare.
    KernelHeader,
}

impl Rule {
    /// Every rule, in report order.
    pub const ALL: &'static [Rule] = &[
        Rule::FieldDeleted,
        Rule::EnumValueDeleted,
        Rule::ReservedRemoved,
        Rule::NumberReused,
        Rule::NameReused,
        Rule::WireTypeChanged,
        Rule::TypeChanged,
        Rule::TypeIncompatible,
        Rule::Renumbered,
        Rule::PackedChanged,
        Rule::CardinalityChanged,
        Rule::PresenceChanged,
        Rule::OneofChanged,
        Rule::TypeDeleted,
        Rule::Renamed,
        Rule::ForwardWindow,
        Rule::BackwardWindow,
        Rule::StagedRollout,
        Rule::FallbackExpiry,
        Rule::CleanupDue,
        Rule::WaiverExpired,
        Rule::WaiverUnused,
        Rule::FeatureChanged,
        Rule::SchemaCreated,
        Rule::TrustedInputLoosened,
        Rule::GoldenStoreRewritten,
        Rule::LimitTightened,
        Rule::KernelHeader,
    ];

    /// The rule's id, as reports and waivers spell it.
    pub fn id(self) -> &'static str {
        match self {
            Rule::FieldDeleted => "field-deleted",
            Rule::EnumValueDeleted => "enum-value-deleted",
            Rule::ReservedRemoved => "reserved-removed",
            Rule::NumberReused => "number-reused",
            Rule::NameReused => "name-reused",
            Rule::WireTypeChanged => "wire-type-changed",
            Rule::TypeChanged => "type-changed",
            Rule::TypeIncompatible => "type-incompatible",
            Rule::Renumbered => "renumbered",
            Rule::PackedChanged => "packed-changed",
            Rule::CardinalityChanged => "cardinality-changed",
            Rule::PresenceChanged => "presence-changed",
            Rule::OneofChanged => "oneof-changed",
            Rule::TypeDeleted => "type-deleted",
            Rule::Renamed => "renamed",
            Rule::ForwardWindow => "forward-window",
            Rule::BackwardWindow => "backward-window",
            Rule::StagedRollout => "staged-rollout",
            Rule::FallbackExpiry => "fallback-expiry",
            Rule::CleanupDue => "cleanup-due",
            Rule::WaiverExpired => "waiver-expired",
            Rule::WaiverUnused => "waiver-unused",
            Rule::FeatureChanged => "feature-changed",
            Rule::SchemaCreated => "schema-created",
            Rule::TrustedInputLoosened => "trusted-input-loosened",
            Rule::GoldenStoreRewritten => "golden-store-rewritten",
            Rule::LimitTightened => "limit-tightened",
            Rule::KernelHeader => "kernel-header",
        }
    }

    /// The rule with this id.
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.iter().copied().find(|r| r.id() == id)
    }

    /// Whether the rule guards what the gates themselves stand on (their policy and waivers, the
    /// golden store, the runtime's limits): no policy demotes its findings and no waiver
    /// silences them, since the change under review could otherwise write its own pass.
    pub fn is_enforced(self) -> bool {
        matches!(
            self,
            Rule::TrustedInputLoosened | Rule::GoldenStoreRewritten | Rule::LimitTightened
        )
    }

    /// The severity the rule reports at.
    pub fn severity(self) -> Severity {
        match self {
            Rule::TypeChanged | Rule::PresenceChanged | Rule::Renamed => Severity::Warning,
            Rule::StagedRollout
            | Rule::CleanupDue
            | Rule::WaiverUnused
            | Rule::PackedChanged
            | Rule::SchemaCreated => Severity::Note,
            _ => Severity::Error,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

/// One problem (or notice) the engine found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Which check fired; reports and waivers name it by [`Rule::id`] (`field-deleted`, ...).
    pub rule: Rule,
    /// The rule's [`Rule::severity`] at first; a waiver lowers it to a note, a policy
    /// exception sets it.
    pub severity: Severity,
    /// The construct it is about (`pkg.Msg.field`, `opcode:add`, a source file for fallbacks).
    pub construct: String,
    /// What is wrong.
    pub message: String,
    /// Where, when a place exists.
    pub location: Option<Location>,
    /// How to land the change safely.
    pub hint: String,
}

impl Finding {
    /// A finding at the rule's severity.
    pub fn new(
        rule: Rule,
        construct: impl Into<String>,
        message: impl Into<String>,
        location: Option<Location>,
        hint: impl Into<String>,
    ) -> Finding {
        Finding {
            rule,
            severity: rule.severity(),
            construct: construct.into(),
            message: message.into(),
            location,
            hint: hint.into(),
        }
    }
}
