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
                for severity in [Severity::Error, Severity::Warning, Severity::Note] {
                    let n = self
                        .findings
                        .iter()
                        .filter(|f| f.rule == *rule && f.severity == severity)
                        .count();
                    if n > 0 {
                        let _ = writeln!(s, "| `{rule}` | {severity} | {n} |");
                    }
                }
            }
        }
        // Everything after the table must fit GitHub's comment limit (65,536 characters):
        // errors first, then warnings, then the notes collapsed; what does not fit is counted.
        let tail = format!("\n{}\n", self.summary_line());
        let mut budget = MARKDOWN_LIMIT
            .saturating_sub(s.chars().count() + tail.chars().count() + ELISION_RESERVE);
        let mut elided = [0usize; 3];
        let sections = [
            (Severity::Error, "### Errors\n"),
            (Severity::Warning, "### Warnings\n"),
            (Severity::Note, "<details><summary>Notes</summary>\n"),
        ];
        for (i, (severity, heading)) in sections.iter().enumerate() {
            let of: Vec<&Finding> = self
                .findings
                .iter()
                .filter(|f| f.severity == *severity)
                .collect();
            if of.is_empty() {
                continue;
            }
            let mut section = format!("\n{heading}\n");
            let closing = if *severity == Severity::Note {
                "\n</details>\n"
            } else {
                ""
            };
            let mut used = section.chars().count() + closing.chars().count();
            if used > budget {
                elided[i] = of.len();
                continue;
            }
            for (n, f) in of.iter().enumerate() {
                let item = markdown_item(f);
                let len = item.chars().count();
                if used + len > budget {
                    elided[i] = of.len() - n;
                    break;
                }
                used += len;
                section.push_str(&item);
            }
            section.push_str(closing);
            budget -= used;
            s.push_str(&section);
        }
        if !self.waived.is_empty() {
            let mut section = String::from("\n### Waived\n\n");
            let mut used = section.chars().count();
            let mut shown = 0;
            for (f, w) in &self.waived {
                let item = format!(
                    "- `{}` `{}` until {}: {}\n",
                    f.rule, f.construct, w.expires, w.reason
                );
                if used + item.chars().count() > budget {
                    break;
                }
                used += item.chars().count();
                section.push_str(&item);
                shown += 1;
            }
            if shown > 0 {
                s.push_str(&section);
            }
            elided[2] += self.waived.len() - shown;
        }
        if elided.iter().any(|n| *n > 0) {
            let _ = writeln!(
                s,
                "\n*Not shown, to fit the comment limit: {} error(s), {} warning(s), {} note(s) \
                 or waived finding(s). `aot schema diff --format text` with the same options \
                 prints every finding.*",
                elided[0], elided[1], elided[2]
            );
        }
        s.push_str(&tail);
        s
    }

    fn github(&self) -> String {
        let mut s = String::new();
        for f in self.findings.iter().take(GITHUB_ANNOTATIONS) {
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
        // Errors sort first, so what is left out is the least severe.
        let rest = self.findings.get(GITHUB_ANNOTATIONS..).unwrap_or(&[]);
        if !rest.is_empty() {
            let count = |sev| rest.iter().filter(|f| f.severity == sev).count();
            let level = if count(Severity::Error) > 0 {
                "error"
            } else if count(Severity::Warning) > 0 {
                "warning"
            } else {
                "notice"
            };
            let _ = writeln!(
                s,
                "::{level} title=schema-bot::{} more finding(s) not annotated ({} error(s), {} \
                 warning(s), {} note(s)); `aot schema diff --format text` prints every finding",
                rest.len(),
                count(Severity::Error),
                count(Severity::Warning),
                count(Severity::Note)
            );
        }
        let _ = writeln!(s, "{}", self.summary_line());
        s
    }
}

/// GitHub's limit on a comment, in characters.
pub const MARKDOWN_LIMIT: usize = 65_536;
/// Room kept for the line that counts what was left out.
const ELISION_RESERVE: usize = 400;
/// Workflow annotations printed at most (GitHub shows only so many per step).
pub const GITHUB_ANNOTATIONS: usize = 50;

fn markdown_item(f: &Finding) -> String {
    let place = f
        .location
        .as_ref()
        .map_or_else(|| format!("`{}`", f.construct), |l| format!("`{l}`"));
    format!(
        "- **{}** `{}` at {place}: {}\n  - *How to land it:* {}\n",
        f.severity, f.rule, f.message, f.hint
    )
}

/// What a run that could not reach a verdict (exit 2) writes in `format`: json an error object,
/// github an `::error` annotation, markdown a comment that says so, text the message.
pub fn render_error(format: Format, message: &str) -> String {
    match format {
        Format::Text => format!("error: {message}\n"),
        Format::Json => {
            let value = serde_json::json!({
                "error": { "message": message, "exit_code": 2 },
                "findings": [],
            });
            let mut s = serde_json::to_string_pretty(&value).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Github => format!(
            "::error title=schema-bot::the schema bot could not run: {}\n",
            escape_data(message)
        ),
        Format::Markdown => format!(
            "## Schema compatibility bot\n\n⚠️ **No verdict: the bot could not run.**\n\n```\n{}\n```\n",
            message.replace("```", "'''")
        ),
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
