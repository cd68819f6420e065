//! The time windows: forward (a construct in the schema 14 days before a compiler emits it by
//! default) and backward (6 months of goldens still load), checked against the golden census,
//! with the staged-rollout notes for new constructs.
use std::collections::BTreeSet;

use super::lineage::*;
use super::{Side, BACKWARD_WINDOW_MONTHS, FORWARD_WINDOW_DAYS};
use crate::census::Census;
use crate::finding::{Finding, Rule};
use crate::model::{Location, Model};
use crate::surface::History;
use crate::Date;

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
