//! Rules over the runtime's side of the surface that the wire rules cannot see: load-time passes
//! (`pass:NAME`). A changed flag default is checked by the backward-window rule itself, from the
//! `flag:NAME` entries of the census ([`crate::Census::with_runtime_dependencies`]).
use std::collections::BTreeSet;

use crate::census::Census;
use crate::finding::{Finding, Rule};
use crate::rules::BACKWARD_WINDOW_MONTHS;
use crate::{Date, Extras};

/// A load-time pass that is removed, or no longer applies to a construct, while a golden younger
/// than 6 months depends on it: those artifacts would execute differently (or, for a pass that
/// was needed, not at all). An error of the backward-window rule.
pub fn load_passes(base: &Extras, head: &Extras, census: &Census, today: Date) -> Vec<Finding> {
    let window_start = today.add_months(-BACKWARD_WINDOW_MONTHS);
    let mut out = Vec::new();
    for bp in &base.load_passes {
        let head_pass = head.load_passes.iter().find(|p| p.name == bp.name);
        let kept: BTreeSet<&String> = head_pass
            .map(|p| p.applies_to.iter().collect())
            .unwrap_or_default();
        let dropped: Vec<&String> = bp.applies_to.iter().filter(|c| !kept.contains(c)).collect();
        if head_pass.is_some() && dropped.is_empty() {
            continue;
        }
        let construct = format!("pass:{}", bp.name);
        // The goldens that use one of the constructs the pass no longer rewrites.
        let golden = census
            .goldens
            .iter()
            .filter(|g| g.created > window_start && g.constructs.contains(&construct))
            .filter(|g| dropped.iter().any(|c| g.constructs.contains(*c)))
            .max_by_key(|g| (g.created, g.version));
        let Some(golden) = golden else { continue };
        let legal = golden.created.add_months(BACKWARD_WINDOW_MONTHS);
        let what = if head_pass.is_none() {
            "is removed".to_owned()
        } else {
            format!(
                "no longer applies to {}",
                dropped
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        out.push(Finding::new(
            Rule::BackwardWindow,
            &construct,
            format!(
                "load-time pass `{}` {what}, but golden {} (created {}) depends on it",
                bp.name,
                golden.label(),
                golden.created
            ),
            None,
            format!(
                "keep the pass until {legal}, or make the new behaviour opt-in behind a new flag"
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::census::Golden;
    use crate::surface::LoadPass;

    fn extras(passes: &[(&str, &[&str])]) -> Extras {
        Extras {
            load_passes: passes
                .iter()
                .map(|(n, a)| LoadPass {
                    name: (*n).into(),
                    applies_to: a.iter().map(|c| (*c).to_owned()).collect(),
                })
                .collect(),
            ..Extras::default()
        }
    }

    fn census(created: &str, constructs: &[&str]) -> Census {
        Census {
            goldens: vec![Golden {
                target: "h100".into(),
                version: 2,
                created: created.parse().unwrap(),
                constructs: constructs.iter().map(|c| (*c).to_owned()).collect(),
            }],
        }
        .with_runtime_dependencies(&[])
    }

    const KERNEL: &str = "xla.gpu.ThunkProto.kernel_thunk";
    const COPY: &str = "xla.gpu.ThunkProto.copy_thunk";

    #[test]
    fn removed_pass_used_by_a_young_golden_is_an_error() {
        let base = extras(&[("command_buffer_conversion", &[KERNEL, COPY])]);
        let census =
            census("2026-11-01", &[KERNEL]).with_runtime_dependencies(&[&base, &Extras::default()]);
        let today: Date = "2026-12-01".parse().unwrap();
        let found = load_passes(&base, &Extras::default(), &census, today);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].message,
            "load-time pass `command_buffer_conversion` is removed, but golden h100/v2 (created 2026-11-01) depends on it"
        );
        assert_eq!(found[0].construct, "pass:command_buffer_conversion");
    }

    #[test]
    fn narrowed_pass_is_an_error_only_for_goldens_using_the_dropped_construct() {
        let base = extras(&[("command_buffer_conversion", &[KERNEL, COPY])]);
        let head = extras(&[("command_buffer_conversion", &[KERNEL])]);
        let today: Date = "2026-12-01".parse().unwrap();
        let copy_user = census("2026-11-01", &[COPY]).with_runtime_dependencies(&[&base, &head]);
        let found = load_passes(&base, &head, &copy_user, today);
        assert_eq!(
            found.iter().map(|f| f.message.as_str()).collect::<Vec<_>>(),
            ["load-time pass `command_buffer_conversion` no longer applies to xla.gpu.ThunkProto.copy_thunk, but golden h100/v2 (created 2026-11-01) depends on it"]
        );
        let kernel_user =
            census("2026-11-01", &[KERNEL]).with_runtime_dependencies(&[&base, &head]);
        assert!(load_passes(&base, &head, &kernel_user, today).is_empty());
    }

    #[test]
    fn removal_outside_the_window_or_unchanged_is_clean() {
        let base = extras(&[("command_buffer_conversion", &[KERNEL])]);
        let today: Date = "2026-12-01".parse().unwrap();
        let old = census("2026-05-01", &[KERNEL]).with_runtime_dependencies(&[&base]);
        assert!(load_passes(&base, &Extras::default(), &old, today).is_empty());
        let young = census("2026-11-01", &[KERNEL]).with_runtime_dependencies(&[&base]);
        assert!(load_passes(&base, &base, &young, today).is_empty());
    }
}
