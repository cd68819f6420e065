//! Waivers (`schema_history/waivers.toml`): a finding of `rule` about `construct` is silenced
//! until `expires`; an expired waiver silences nothing and is itself an error.
//!
//! ```toml
//! [[waiver]]
//! rule = "forward-window"
//! construct = "xla.gpu.ThunkProto.memzero_thunk"
//! reason = "only emitted for tests, see #123"
//! expires = "2026-12-31"
//! ```
use std::path::Path;

use serde::Deserialize;

use crate::finding::{Finding, Rule, Severity};
use crate::model::Location;
use crate::{Date, Error};

/// One waiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiver {
    /// Rule id it silences.
    pub rule: String,
    /// A finding's `construct` exactly (`xla.gpu.ThunkProto.memzero_thunk`; no patterns).
    pub construct: String,
    /// Why.
    pub reason: String,
    /// Last day it applies.
    pub expires: Date,
    /// Where it is written.
    pub location: Location,
}

/// The waivers of a repository.
#[derive(Debug, Clone, Default)]
pub struct Waivers {
    /// In file order.
    pub waivers: Vec<Waiver>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWaiver {
    rule: String,
    construct: String,
    reason: String,
    expires: toml::Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    waiver: Vec<RawWaiver>,
}

impl Waivers {
    /// Reads a waivers file; a missing file is no waivers. `shown` is the path used in findings.
    pub fn load(path: &Path, shown: &str) -> Result<Waivers, Error> {
        match crate::bounded_read::read_text(path)? {
            Some(text) => Waivers::parse(&text, shown),
            None => Ok(Waivers::default()),
        }
    }

    /// Parses the TOML text of a waivers file.
    pub fn parse(text: &str, shown: &str) -> Result<Waivers, Error> {
        let raw: RawFile = toml::from_str(text).map_err(|e| Error::format(shown, e))?;
        let mut waivers = Vec::new();
        for (i, w) in raw.waiver.into_iter().enumerate() {
            let at = format!("{shown}: waiver {}", i + 1);
            match Rule::from_id(&w.rule) {
                None => return Err(Error::format(&at, format!("unknown rule {:?}", w.rule))),
                Some(rule) if rule.is_enforced() => {
                    return Err(Error::format(
                        &at,
                        format!("{rule} is enforced: no waiver silences it"),
                    ))
                }
                Some(_) => {}
            }
            if w.reason.trim().is_empty() {
                return Err(Error::format(&at, "a waiver needs a reason"));
            }
            let expires: Date = match &w.expires {
                toml::Value::String(s) => s.parse(),
                toml::Value::Datetime(d) => d.to_string().parse(),
                other => Err(Error::BadDate(format!("{other:?}"))),
            }
            .map_err(|e| Error::format(&at, e))?;
            let needle = format!("\"{}\"", w.construct);
            let line = text
                .lines()
                .position(|l| l.contains("construct") && l.contains(&needle))
                .map_or(1, |l| l as u32 + 1);
            waivers.push(Waiver {
                rule: w.rule,
                construct: w.construct,
                reason: w.reason,
                expires,
                location: Location {
                    file: shown.to_owned(),
                    line,
                    column: 1,
                },
            });
        }
        Ok(Waivers { waivers })
    }

    /// Splits `findings` into those that stand and those a live waiver silences; adds an error for
    /// each expired waiver that matches nothing live and a note for each unused live waiver.
    pub fn apply(
        &self,
        findings: Vec<Finding>,
        today: Date,
    ) -> (Vec<Finding>, Vec<(Finding, Waiver)>) {
        let mut kept = Vec::new();
        let mut waived = Vec::new();
        let mut used = vec![false; self.waivers.len()];
        for f in findings {
            let hit = self
                .waivers
                .iter()
                .enumerate()
                .find(|(_, w)| w.rule == f.rule.id() && w.construct == f.construct);
            match hit {
                Some((i, w)) if w.expires >= today => {
                    if let Some(u) = used.get_mut(i) {
                        *u = true;
                    }
                    waived.push((f, w.clone()));
                }
                _ => kept.push(f),
            }
        }
        for (i, w) in self.waivers.iter().enumerate() {
            if w.expires < today {
                kept.push(Finding::new(
                    Rule::WaiverExpired,
                    &w.construct,
                    format!(
                        "waiver of {} for `{}` expired on {} (reason was: {})",
                        w.rule, w.construct, w.expires, w.reason
                    ),
                    Some(w.location.clone()),
                    "fix the finding it silenced, or renew the waiver with a new date and reason",
                ));
            } else if !used.get(i).copied().unwrap_or(true) {
                let mut f = Finding::new(
                    Rule::WaiverUnused,
                    &w.construct,
                    format!(
                        "waiver of {} for `{}` matches no finding",
                        w.rule, w.construct
                    ),
                    Some(w.location.clone()),
                    "delete it",
                );
                f.severity = Severity::Note;
                kept.push(f);
            }
        }
        (kept, waived)
    }
}
