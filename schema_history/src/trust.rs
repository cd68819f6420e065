//! The bot's own inputs, read from the merge base: its policy and its waivers.
//!
//! A pull request that demotes a rule or adds a waiver would otherwise judge itself by its own
//! leniency (the break and the policy that excuses it in one commit). So the findings are judged
//! with the base's policy and waivers, and every way the head loosens them is a
//! `trusted-input-loosened` finding: an error no policy or waiver lowers, which a maintainer
//! approves (`aot schema diff --approve-trusted-inputs`, `SCHEMA_BOT_APPROVE_TRUSTED_INPUTS=1`
//! for `ci/schema_bot.sh`); then the head's inputs apply and the findings are notes. Tightening
//! (a rule raised, a waiver removed or shortened) needs nobody's approval.
use std::path::Path;

use crate::finding::{Finding, Rule, Severity};
use crate::git::{Repo, Revision};
use crate::model::Location;
use crate::policy::{Level, Policy};
use crate::waiver::Waivers;
use crate::Error;

/// The policy and waivers the findings are judged with, and what the head loosened.
pub(crate) struct Trusted {
    pub policy: Policy,
    pub waivers: Waivers,
    pub loosened: Vec<Finding>,
}

/// One input file of one side: its text (`None`: absent) and the path findings name.
struct Input {
    text: Option<String>,
    shown: String,
}

/// Reads `path` at `rev`: an absolute path from the file system (an operator's file, the same
/// on both sides), a relative one from the repository at `rev`.
fn read_input(repo: &Repo, rev: &Revision, path: &Path) -> Result<Input, Error> {
    let shown = path.to_string_lossy().into_owned();
    if path.is_absolute() {
        let text = crate::bounded_read::read_text(path)?;
        return Ok(Input { text, shown });
    }
    let mut files = repo.read_files(rev, std::slice::from_ref(&shown))?;
    let text = match files.remove(&shown) {
        Some(bytes) => Some(
            String::from_utf8(bytes)
                .map_err(|_| Error::format(format!("{shown} at {rev}"), "not UTF-8 text"))?,
        ),
        None => None,
    };
    Ok(Input { text, shown })
}

fn parse_policy(input: &Input) -> Result<Policy, Error> {
    input
        .text
        .as_deref()
        .map_or(Ok(Policy::default()), |t| Policy::parse(t, &input.shown))
}

fn parse_waivers(input: &Input) -> Result<Waivers, Error> {
    input
        .text
        .as_deref()
        .map_or(Ok(Waivers::default()), |t| Waivers::parse(t, &input.shown))
}

/// Whether both sides read the same file (an absolute path, or a base that is the working
/// tree too): then there is nothing to compare.
fn same_file(path: &Path, base: &Revision, head: &Revision) -> bool {
    path.is_absolute() || base == head
}

/// An input read at the base, named so in errors.
fn at_base(mut input: Input) -> Input {
    input.shown = format!("{} at the base", input.shown);
    input
}

/// The trusted policy and waivers for a diff of `head` against `base`.
pub(crate) fn load(
    repo: &Repo,
    base: &Revision,
    head: &Revision,
    policy_path: &Path,
    waivers_path: &Path,
    approved: bool,
) -> Result<Trusted, Error> {
    let head_policy_in = read_input(repo, head, policy_path)?;
    let head_waivers_in = read_input(repo, head, waivers_path)?;
    // The head's files must parse even when the base's are used: a malformed file fails now,
    // not after it merges.
    let head_policy = parse_policy(&head_policy_in)?;
    let head_waivers = parse_waivers(&head_waivers_in)?;
    let base_policy = if same_file(policy_path, base, head) {
        head_policy.clone()
    } else {
        parse_policy(&at_base(read_input(repo, base, policy_path)?))?
    };
    let base_waivers = if same_file(waivers_path, base, head) {
        head_waivers.clone()
    } else {
        let mut waivers = parse_waivers(&at_base(read_input(repo, base, waivers_path)?))?;
        // Findings name the file as the repository spells it.
        for w in &mut waivers.waivers {
            w.location.file.clone_from(&head_waivers_in.shown);
        }
        waivers
    };
    let mut loosened = policy_loosening(&base_policy, &head_policy, &head_policy_in.shown);
    loosened.extend(waiver_loosening(&base_waivers, &head_waivers));
    for f in &mut loosened {
        if approved {
            f.severity = Severity::Note;
            f.message
                .push_str(" (approved by a maintainer: the head's policy and waivers apply)");
        }
    }
    Ok(if approved {
        Trusted {
            policy: head_policy,
            waivers: head_waivers,
            loosened,
        }
    } else {
        Trusted {
            policy: base_policy,
            waivers: base_waivers,
            loosened,
        }
    })
}

/// How strict a level is: `off` < `note` < `warning` < `error`.
fn rank(level: Level) -> u8 {
    match level {
        Level::Off => 0,
        Level::At(Severity::Note) => 1,
        Level::At(Severity::Warning) => 2,
        Level::At(Severity::Error) => 3,
    }
}

fn level_name(level: Level) -> String {
    match level {
        Level::Off => "off".to_owned(),
        Level::At(s) => s.to_string(),
    }
}

/// The level a policy gives `rule` (the last entry naming it, else the rule's own severity).
fn rule_level(policy: &Policy, rule: Rule) -> Level {
    policy
        .rules
        .iter()
        .rev()
        .find(|(r, _)| *r == rule)
        .map_or(Level::At(rule.severity()), |(_, l)| *l)
}

const HINT: &str = "the bot judges a change with the base's policy and waivers; a maintainer \
                    approves the loosening (`ci/schema_bot.sh` with \
                    SCHEMA_BOT_APPROVE_TRUSTED_INPUTS=1, `aot schema diff \
                    --approve-trusted-inputs`), or the change leaves them as they are";

fn finding(construct: String, message: String, location: Location) -> Finding {
    Finding::new(
        Rule::TrustedInputLoosened,
        construct,
        message,
        Some(location),
        HINT,
    )
}

/// Every way `head` is more lenient than `base`.
fn policy_loosening(base: &Policy, head: &Policy, shown: &str) -> Vec<Finding> {
    let at = || Location {
        file: shown.to_owned(),
        line: 1,
        column: 1,
    };
    let mut out = Vec::new();
    for &rule in Rule::ALL {
        let (was, now) = (rule_level(base, rule), rule_level(head, rule));
        if rank(now) < rank(was) {
            out.push(finding(
                format!("policy:breaking.rules.{rule}"),
                format!(
                    "the policy lowers {rule} from {} to {}",
                    level_name(was),
                    level_name(now)
                ),
                at(),
            ));
        }
    }
    // Without the key, a name-only reservation is as severe as the deletion rule (an error).
    let reservation = |p: &Policy| {
        p.name_only_reservation
            .unwrap_or(Level::At(Severity::Error))
    };
    let (was, now) = (reservation(base), reservation(head));
    if rank(now) < rank(was) {
        out.push(finding(
            "policy:breaking.name_only_reservation".to_owned(),
            format!(
                "the policy lowers name_only_reservation from {} to {}",
                level_name(was),
                level_name(now)
            ),
            at(),
        ));
    }
    for e in &head.exceptions {
        let known = base
            .exceptions
            .iter()
            .any(|b| b.path == e.path && b.rules == e.rules && rank(b.level) <= rank(e.level));
        if known || e.level == Level::At(Severity::Error) {
            continue;
        }
        let rules = if e.rules.is_empty() {
            "every rule".to_owned()
        } else {
            e.rules
                .iter()
                .map(|r| r.id())
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push(finding(
            format!("policy:breaking.except:{}", e.path),
            format!(
                "the policy adds an exception setting {rules} to {} under `{}`",
                level_name(e.level),
                e.path
            ),
            at(),
        ));
    }
    out
}

/// Waivers the head has that the base does not (or lets live longer).
fn waiver_loosening(base: &Waivers, head: &Waivers) -> Vec<Finding> {
    head.waivers
        .iter()
        .filter(|w| {
            !base
                .waivers
                .iter()
                .any(|b| b.rule == w.rule && b.construct == w.construct && b.expires >= w.expires)
        })
        .map(|w| {
            let extended = base
                .waivers
                .iter()
                .find(|b| b.rule == w.rule && b.construct == w.construct);
            let what = match extended {
                Some(b) => format!(
                    "extends the waiver of {} for `{}` from {} to {}",
                    w.rule, w.construct, b.expires, w.expires
                ),
                None => format!(
                    "adds a waiver of {} for `{}` (until {}; reason: {})",
                    w.rule, w.construct, w.expires, w.reason
                ),
            };
            finding(
                format!("waiver:{}:{}", w.rule, w.construct),
                format!("the change {what}"),
                w.location.clone(),
            )
        })
        .collect()
}
