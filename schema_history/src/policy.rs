//! The repository policy (`schema_history/policy.toml`), in the spirit of `buf.yaml`'s
//! `breaking` section: which rules apply, at which severity, and per-path exceptions. It is
//! applied to the findings after the rules ran (and before the waivers), by rule id.
//!
//! ```toml
//! [breaking]
//! # A deletion that reserves the number but not the name (`reserved 11; // Was foo.`).
//! name_only_reservation = "warning"
//!
//! [breaking.rules]
//! renamed = "off"            # "error", "warning", "note" or "off"
//!
//! [[breaking.except]]
//! path = "proto/legacy/**"   # a glob over the finding's file
//! rules = ["field-deleted"]  # optional: every rule when absent
//! severity = "note"
//! ```
//!
//! A rule set to its default severity leaves its findings as the rule reports them (a rule may
//! report some findings below its default, as `feature-changed` does for encoding changes
//! every parser reads). Without a policy file the built-in defaults apply: every rule at its
//! default severity, a name-only reservation as severe as the deletion rule, no exceptions.
use std::path::Path;

use globset::{Glob, GlobMatcher};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::editions::line_col;
use crate::finding::{Finding, Rule, Severity};
use crate::model::Model;
use crate::Error;

/// Where this project keeps its policy, relative to the repository root.
pub const DEFAULT_POLICY: &str = "schema_history/policy.toml";

/// What a policy sets a rule (or a finding) to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Report at this severity.
    At(Severity),
    /// Drop the finding.
    Off,
}

impl Level {
    fn parse(s: &str) -> Option<Level> {
        match s {
            "error" => Some(Level::At(Severity::Error)),
            "warning" => Some(Level::At(Severity::Warning)),
            "note" => Some(Level::At(Severity::Note)),
            "off" => Some(Level::Off),
            _ => None,
        }
    }
}

/// A per-path exception.
#[derive(Debug, Clone)]
pub struct Exception {
    /// The glob as written.
    pub path: String,
    matcher: GlobMatcher,
    /// The rules it applies to (every rule when empty).
    pub rules: Vec<Rule>,
    /// What the matched findings become.
    pub level: Level,
}

/// A repository's policy.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Rule to level, for the rules the policy names.
    pub rules: Vec<(Rule, Level)>,
    /// The level of a `field-deleted` / `enum-value-deleted` finding whose number the head
    /// reserves (only the name is missing); `None`: as the rule.
    pub name_only_reservation: Option<Level>,
    /// In file order; the last that matches wins.
    pub exceptions: Vec<Exception>,
}

/// The error for `key` at byte `offset` of `text`.
fn bad(path: &str, text: &str, offset: usize, key: &str, message: impl Into<String>) -> Error {
    Error::Policy {
        path: path.to_owned(),
        line: line_col(text, offset).0,
        key: key.to_owned(),
        message: message.into(),
    }
}

fn level_of(
    path: &str,
    text: &str,
    key: &str,
    value: &Spanned<DeValue<'_>>,
) -> Result<Level, Error> {
    match value.get_ref() {
        DeValue::String(s) => Level::parse(s).ok_or_else(|| {
            bad(
                path,
                text,
                value.span().start,
                key,
                format!("unknown severity {s:?} (error, warning, note, off)"),
            )
        }),
        _ => Err(bad(
            path,
            text,
            value.span().start,
            key,
            "expected a severity string (error, warning, note, off)",
        )),
    }
}

fn rule_of(path: &str, text: &str, key: &str, id: &str, offset: usize) -> Result<Rule, Error> {
    Rule::from_id(id).ok_or_else(|| bad(path, text, offset, key, format!("unknown rule {id:?}")))
}

fn table<'a, 'i>(
    path: &str,
    text: &str,
    key: &str,
    value: &'a Spanned<DeValue<'i>>,
) -> Result<&'a DeTable<'i>, Error> {
    match value.get_ref() {
        DeValue::Table(t) => Ok(t),
        _ => Err(bad(path, text, value.span().start, key, "expected a table")),
    }
}

impl Policy {
    /// Reads a policy file; a missing file is the built-in defaults. `shown` is the path used
    /// in errors.
    pub fn load(file: &Path, shown: &str) -> Result<Policy, Error> {
        match crate::bounded_read::read_text(file)? {
            Some(text) => Policy::parse(&text, shown),
            None => Ok(Policy::default()),
        }
    }

    /// Parses policy text; errors name `path`, the line and the key.
    pub fn parse(text: &str, path: &str) -> Result<Policy, Error> {
        let doc = DeTable::parse(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            bad(path, text, offset, "(syntax)", e.message().to_owned())
        })?;
        let mut policy = Policy::default();
        for (key, value) in doc.get_ref() {
            if key.get_ref().as_ref() != "breaking" {
                return Err(bad(
                    path,
                    text,
                    key.span().start,
                    key.get_ref(),
                    "unknown section (expected [breaking])",
                ));
            }
            for (k, v) in table(path, text, "breaking", value)? {
                let name = format!("breaking.{}", k.get_ref());
                match k.get_ref().as_ref() {
                    "rules" => {
                        for (rk, rv) in table(path, text, &name, v)? {
                            let key = format!("breaking.rules.{}", rk.get_ref());
                            let rule = rule_of(path, text, &key, rk.get_ref(), rk.span().start)?;
                            let level = level_of(path, text, &key, rv)?;
                            check_enforced(path, text, &key, rule, level, rv.span().start)?;
                            policy.rules.push((rule, level));
                        }
                    }
                    "name_only_reservation" => {
                        policy.name_only_reservation = Some(level_of(path, text, &name, v)?);
                    }
                    "except" => {
                        let DeValue::Array(items) = v.get_ref() else {
                            return Err(bad(
                                path,
                                text,
                                v.span().start,
                                &name,
                                "expected [[breaking.except]] tables",
                            ));
                        };
                        for item in items {
                            policy.exceptions.push(exception(
                                path,
                                text,
                                table(path, text, &name, item)?,
                                item,
                            )?);
                        }
                    }
                    _ => {
                        return Err(bad(
                            path,
                            text,
                            k.span().start,
                            &name,
                            "unknown key (expected rules, name_only_reservation, except)",
                        ))
                    }
                }
            }
        }
        Ok(policy)
    }

    /// The level a rule's findings get (`None`: as the rule reports them; always for an
    /// [enforced](Rule::is_enforced) rule).
    fn rule_level(&self, rule: Rule) -> Option<Level> {
        if rule.is_enforced() {
            return None;
        }
        let level = self.rules.iter().rev().find(|(r, _)| *r == rule)?.1;
        (level != Level::At(rule.severity())).then_some(level)
    }

    /// Applies the policy to `findings` (`base` and `head` tell a name-only reservation).
    pub fn apply(&self, findings: Vec<Finding>, base: &Model, head: &Model) -> Vec<Finding> {
        let mut out = Vec::with_capacity(findings.len());
        for mut f in findings {
            let mut level = self.rule_level(f.rule);
            if let Some(l) = self.name_only_reservation {
                if name_only(&f, base, head) {
                    level = Some(l);
                    f.message.push_str(
                        " (the number is reserved, only the name is not: the policy's \
                         name_only_reservation applies)",
                    );
                }
            }
            if let Some(file) = f
                .location
                .as_ref()
                .map(|l| l.file.as_str())
                .filter(|_| !f.rule.is_enforced())
            {
                for e in &self.exceptions {
                    if (e.rules.is_empty() || e.rules.contains(&f.rule)) && e.matcher.is_match(file)
                    {
                        level = Some(e.level);
                    }
                }
            }
            match level {
                None => out.push(f),
                Some(Level::Off) => {}
                Some(Level::At(severity)) => {
                    f.severity = severity;
                    out.push(f);
                }
            }
        }
        out
    }
}

fn exception(
    path: &str,
    text: &str,
    t: &DeTable<'_>,
    at: &Spanned<DeValue<'_>>,
) -> Result<Exception, Error> {
    let mut glob = None;
    let mut rules = Vec::new();
    let mut level = None;
    for (k, v) in t {
        let key = format!("breaking.except.{}", k.get_ref());
        match k.get_ref().as_ref() {
            "path" => {
                let DeValue::String(p) = v.get_ref() else {
                    return Err(bad(
                        path,
                        text,
                        v.span().start,
                        &key,
                        "expected a glob string",
                    ));
                };
                let matcher = Glob::new(p)
                    .map_err(|e| bad(path, text, v.span().start, &key, e.kind().to_string()))?
                    .compile_matcher();
                glob = Some((p.to_string(), matcher));
            }
            "rules" => {
                let DeValue::Array(ids) = v.get_ref() else {
                    return Err(bad(
                        path,
                        text,
                        v.span().start,
                        &key,
                        "expected a list of rule ids",
                    ));
                };
                for id in ids {
                    let DeValue::String(s) = id.get_ref() else {
                        return Err(bad(path, text, id.span().start, &key, "expected a rule id"));
                    };
                    rules.push((
                        rule_of(path, text, &key, s, id.span().start)?,
                        id.span().start,
                    ));
                }
            }
            "severity" => level = Some(level_of(path, text, &key, v)?),
            _ => {
                return Err(bad(
                    path,
                    text,
                    k.span().start,
                    &key,
                    "unknown key (expected path, rules, severity)",
                ))
            }
        }
    }
    let start = at.span().start;
    let (path_glob, matcher) =
        glob.ok_or_else(|| bad(path, text, start, "breaking.except.path", "missing"))?;
    let level =
        level.ok_or_else(|| bad(path, text, start, "breaking.except.severity", "missing"))?;
    for (rule, offset) in &rules {
        check_enforced(path, text, "breaking.except.rules", *rule, level, *offset)?;
    }
    let rules = rules.into_iter().map(|(rule, _)| rule).collect();
    Ok(Exception {
        path: path_glob,
        matcher,
        rules,
        level,
    })
}

/// An [enforced](Rule::is_enforced) rule named at anything but `error`: refused, since the
/// policy is one of the inputs such a rule guards. (An exception that names no rules leaves
/// enforced rules alone.)
fn check_enforced(
    path: &str,
    text: &str,
    key: &str,
    rule: Rule,
    level: Level,
    offset: usize,
) -> Result<(), Error> {
    if !rule.is_enforced() || level == Level::At(Severity::Error) {
        return Ok(());
    }
    Err(bad(
        path,
        text,
        offset,
        key,
        format!("{rule} is enforced: no policy lowers it (only \"error\" is accepted)"),
    ))
}

/// Whether `f` is a deletion whose number the head reserves, only the name missing.
fn name_only(f: &Finding, base: &Model, head: &Model) -> bool {
    let Some((parent, name)) = f.construct.rsplit_once('.') else {
        return false;
    };
    match f.rule {
        Rule::FieldDeleted => {
            let (Some(bm), Some(hm)) = (base.messages.get(parent), head.messages.get(parent))
            else {
                return false;
            };
            bm.field_named(name).is_some_and(|bf| {
                hm.number_reserved(bf.number) && !hm.reserved_names.contains(name)
            })
        }
        Rule::EnumValueDeleted => {
            let (Some(be), Some(he)) = (base.enums.get(parent), head.enums.get(parent)) else {
                return false;
            };
            be.values.get(name).is_some_and(|bv| {
                he.number_reserved(bv.number) && !he.reserved_names.contains(name)
            })
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Policy::parse(text, "policy.toml")
            .expect_err("malformed")
            .to_string()
    }

    #[test]
    fn unknown_rule_names_line_and_key() {
        assert_eq!(
            err("[breaking.rules]\nfield-deleted = \"error\"\nfield-gone = \"off\"\n"),
            "policy.toml:3: breaking.rules.field-gone: unknown rule \"field-gone\""
        );
    }

    #[test]
    fn bad_severity_names_line_and_key() {
        assert_eq!(
            err("[breaking]\nname_only_reservation = \"fatal\"\n"),
            "policy.toml:2: breaking.name_only_reservation: unknown severity \"fatal\" (error, warning, note, off)"
        );
    }

    #[test]
    fn unknown_key_names_line_and_key() {
        assert_eq!(
            err("[breaking]\n\n[[breaking.except]]\npath = \"a/**\"\nseverity = \"off\"\nrule = \"renamed\"\n"),
            "policy.toml:6: breaking.except.rule: unknown key (expected path, rules, severity)"
        );
    }

    #[test]
    fn unknown_section_names_line_and_key() {
        assert_eq!(
            err("# c\n[lint]\nx = 1\n"),
            "policy.toml:2: lint: unknown section (expected [breaking])"
        );
    }

    #[test]
    fn missing_severity_names_the_exception() {
        assert_eq!(
            err("[[breaking.except]]\npath = \"a/**\"\n"),
            "policy.toml:1: breaking.except.severity: missing"
        );
    }

    #[test]
    fn enforced_rule_cannot_be_demoted() {
        assert_eq!(
            err("[breaking.rules]\ngolden-store-rewritten = \"warning\"\n"),
            "policy.toml:2: breaking.rules.golden-store-rewritten: golden-store-rewritten is enforced: no policy lowers it (only \"error\" is accepted)"
        );
        assert_eq!(
            err("[[breaking.except]]\npath = \"**\"\nrules = [\"renamed\", \"limit-tightened\"]\nseverity = \"off\"\n"),
            "policy.toml:3: breaking.except.rules: limit-tightened is enforced: no policy lowers it (only \"error\" is accepted)"
        );
    }

    #[test]
    fn exception_for_every_rule_leaves_enforced_rules_alone() {
        let policy = Policy::parse(
            "[[breaking.except]]\npath = \"**\"\nseverity = \"off\"\n",
            "p",
        )
        .expect("parses");
        let at = Some(crate::model::Location {
            file: "goldens/executables/h100/v1/manifest.json".into(),
            line: 1,
            column: 1,
        });
        let finding = |rule| Finding::new(rule, "c", "m", at.clone(), "h");
        let empty = Model {
            root: "r".into(),
            messages: Default::default(),
            enums: Default::default(),
            files: Default::default(),
        };
        let kept = policy.apply(
            vec![finding(Rule::Renamed), finding(Rule::GoldenStoreRewritten)],
            &empty,
            &empty,
        );
        assert_eq!(
            kept.iter().map(|f| f.rule).collect::<Vec<_>>(),
            [Rule::GoldenStoreRewritten]
        );
        assert_eq!(kept[0].severity, Severity::Error);
    }

    #[test]
    fn syntax_error_names_the_line() {
        assert_eq!(
            err("[breaking]\nrules = {\n"),
            "policy.toml:2: (syntax): unclosed inline table, expected `}`"
        );
    }
}
