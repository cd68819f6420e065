//! A diff's report and its output formats: text, markdown (the PR comment), json, github
//! (workflow annotations).
use std::fmt::Write as _;
use std::str::FromStr;

use serde::Serialize;

use crate::finding::{Finding, Rule, Severity};
use crate::waiver::Waiver;
use crate::{Date, Error};

/// The outcome of a diff.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// What the head was compared against.
    pub base: String,
    /// The compared state.
    pub head: String,
    /// The day the windows were computed for.
    pub today: Date,
    /// Findings that stand, sorted by severity (errors first), then location.
    pub findings: Vec<Finding>,
    /// Findings silenced by a live waiver.
    #[serde(serialize_with = "ser_waived")]
    pub waived: Vec<(Finding, Waiver)>,
}

fn ser_waived<S: serde::Serializer>(w: &[(Finding, Waiver)], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct W<'a> {
        finding: &'a Finding,
        reason: &'a str,
        expires: Date,
    }
    s.collect_seq(w.iter().map(|(f, w)| W {
        finding: f,
        reason: &w.reason,
        expires: w.expires,
    }))
}

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `file:line:col: error[RULE]: message`, then the hint.
    Text,
    /// A pull-request comment: summary table, then each finding with its hint.
    Markdown,
    /// The report as JSON.
    Json,
    /// GitHub workflow annotations (`::error file=...`).
    Github,
}

impl FromStr for Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Format, Error> {
        match s {
            "text" => Ok(Format::Text),
            "markdown" | "md" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            "github" => Ok(Format::Github),
            other => Err(Error::format(
                "--format",
                format!("unknown format {other:?} (text, markdown, json, github)"),
            )),
        }
    }
}

impl Report {
    /// Sorts findings: errors first, then by location and rule.
    pub fn sort(&mut self) {
        self.findings.sort_by(|a, b| {
            (
                std::cmp::Reverse(a.severity),
                &a.location,
                a.rule,
                &a.construct,
            )
                .cmp(&(
                    std::cmp::Reverse(b.severity),
                    &b.location,
                    b.rule,
                    &b.construct,
                ))
        });
    }

    /// Number of findings at `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }

    /// 1 when any error stands, else 0.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.count(Severity::Error) > 0)
    }

    /// Renders the report.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => self.text(),
            Format::Markdown => self.markdown(),
            Format::Json => {
                let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|e| {
                    format!("{{\"error\": \"report does not serialize: {e}\"}}")
                });
                s.push('\n');
                s
            }
            Format::Github => self.github(),
        }
    }

    fn summary_line(&self) -> String {
        format!(
            "{} error(s), {} warning(s), {} note(s), {} waived; {} against {}, today {}",
            self.count(Severity::Error),
            self.count(Severity::Warning),
            self.count(Severity::Note),
            self.waived.len(),
            self.head,
            self.base,
            self.today
        )
    }

    fn text(&self) -> String {
        let mut s = String::new();
        for f in &self.findings {
            let place = f
                .location
                .as_ref()
                .map_or_else(|| f.construct.clone(), ToString::to_string);
            let _ = writeln!(s, "{place}: {}[{}]: {}", f.severity, f.rule, f.message);
            let _ = writeln!(s, "  = hint: {}", f.hint);
        }
        let _ = writeln!(s, "{}", self.summary_line());
        s
    }

    fn markdown(&self) -> String {
        let mut s = String::new();
        let errors = self.count(Severity::Error);
        let verdict = if errors > 0 {
            "❌ **Schema compatibility: this change breaks the contract.**"
        } else if self.findings.is_empty() {
            "✅ **Schema compatibility: no findings.**"
        } else {
            "✅ **Schema compatibility: mergeable** (see the notes below)."
        };
        let _ = writeln!(s, "## Schema compatibility bot\n\n{verdict}\n");
        let _ = writeln!(
            s,
            "Compared `{}` against `{}` on {} (forward window 14 days, backward window 6 months).\n",
            self.head, self.base, self.today
        );
        if !self.findings.is_empty() {
            let _ = writeln!(s, "| rule | severity | count |\n| --- | --- | --- |");
            for rule in Rule::ALL {
                let of_rule: Vec<&Finding> =
                    self.findings.iter().filter(|f| f.rule == *rule).collect();
                if let Some(first) = of_rule.first() {
                    let _ = writeln!(s, "| `{rule}` | {} | {} |", first.severity, of_rule.len());
                }
            }
            let _ = writeln!(s, "\n### Findings\n");
            for f in &self.findings {
                let place = f
                    .location
                    .as_ref()
                    .map_or_else(|| format!("`{}`", f.construct), |l| format!("`{l}`"));
                let _ = writeln!(
                    s,
                    "- **{}** `{}` at {place}: {}\n  - *How to land it:* {}",
                    f.severity, f.rule, f.message, f.hint
                );
            }
        }
        if !self.waived.is_empty() {
            let _ = writeln!(s, "\n### Waived\n");
            for (f, w) in &self.waived {
                let _ = writeln!(
                    s,
                    "- `{}` `{}` until {}: {}",
                    f.rule, f.construct, w.expires, w.reason
                );
            }
        }
        let _ = writeln!(s, "\n{}", self.summary_line());
        s
    }

    fn github(&self) -> String {
        let mut s = String::new();
        for f in &self.findings {
            let level = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "notice",
            };
            let mut props = Vec::new();
            if let Some(l) = &f.location {
                props.push(format!("file={}", escape_property(&l.file)));
                props.push(format!("line={}", l.line));
                props.push(format!("col={}", l.column));
            }
            props.push(format!("title={}", escape_property(f.rule.id())));
            let message = format!("{}\nHint: {}", f.message, f.hint);
            let _ = writeln!(
                s,
                "::{level} {}::{}",
                props.join(","),
                escape_data(&message)
            );
        }
        let _ = writeln!(s, "{}", self.summary_line());
        s
    }
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}
