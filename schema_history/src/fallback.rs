//! The fallback rule: every runtime fallback carries its expiry comment, in the exact form of
//! DESIGN.md, so that tools can find it:
//!
//! `// Can be removed in <Month YYYY> (6 months backward compatibility window).`
//!
//! A *fallback* is a declaration (`fn`, `const`, `static`, `struct`, `enum`, `mod`, `type`,
//! `trait`) whose name contains `legacy` or `fallback` (any case), or a string literal that is a
//! registered legacy alias. Its expiry comment must be on the same line or in the comment and
//! attribute lines right above it. A comment that says "can be removed" in any other form is
//! malformed; an expiry month that has begun means the cleanup is due.
use std::path::Path;

use crate::date::MONTHS;
use crate::finding::{Finding, Rule};
use crate::model::Location;
use crate::{Date, Error};

const SUFFIX: &str = " (6 months backward compatibility window).";
const PREFIX: &str = "Can be removed in ";
const EXAMPLE: &str = "// Can be removed in <Month YYYY> (6 months backward compatibility window).";
const DECL_KEYWORDS: &[&str] = &[
    "fn", "const", "static", "struct", "enum", "mod", "type", "trait",
];
const LOOKBACK: usize = 12;

/// What a comment line says about expiry.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expiry {
    None,
    Valid(Date),
    Malformed,
}

fn comment_of(line: &str) -> Option<&str> {
    let idx = line.find("//")?;
    Some(line.get(idx + 2..).unwrap_or(""))
}

fn expiry(line: &str) -> Expiry {
    let Some(comment) = comment_of(line) else {
        return Expiry::None;
    };
    if !comment.to_ascii_lowercase().contains("can be removed") {
        return Expiry::None;
    }
    let text = comment.trim_end();
    let Some(rest) = text.strip_prefix(' ').and_then(|t| t.strip_prefix(PREFIX)) else {
        return Expiry::Malformed;
    };
    let Some(month_year) = rest.strip_suffix(SUFFIX) else {
        return Expiry::Malformed;
    };
    let Some((month, year)) = month_year.split_once(' ') else {
        return Expiry::Malformed;
    };
    let Some(m) = MONTHS.iter().position(|n| *n == month) else {
        return Expiry::Malformed;
    };
    if year.len() != 4 || !year.bytes().all(|b| b.is_ascii_digit()) {
        return Expiry::Malformed;
    }
    match year
        .parse()
        .ok()
        .and_then(|y| Date::new(y, m as u32 + 1, 1))
    {
        Some(d) => Expiry::Valid(d),
        None => Expiry::Malformed,
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The fallback a line declares, if any: the declared name.
fn declared_fallback(line: &str) -> Option<String> {
    let code = match line.find("//") {
        Some(i) => line.get(..i).unwrap_or(""),
        None => line,
    };
    let mut words = code
        .split(|c: char| !is_ident_char(c))
        .filter(|w| !w.is_empty());
    while let Some(word) = words.next() {
        if DECL_KEYWORDS.contains(&word) {
            let name = words.next()?;
            let lower = name.to_ascii_lowercase();
            if lower.contains("legacy") || lower.contains("fallback") {
                return Some(name.to_owned());
            }
            return None;
        }
    }
    None
}

/// The registered legacy aliases as the string literals a line may hold (`"name"`), formed
/// once per scan rather than once per line.
struct Literals<'a> {
    quoted: Vec<(String, &'a str)>,
}

impl<'a> Literals<'a> {
    fn new(aliases: &'a [String]) -> Literals<'a> {
        Literals {
            quoted: aliases
                .iter()
                .map(|a| (format!("\"{a}\""), a.as_str()))
                .collect(),
        }
    }

    /// Whether `text` holds any of them anywhere.
    fn any_in(&self, text: &str) -> bool {
        self.quoted.iter().any(|(q, _)| text.contains(q.as_str()))
    }

    /// The first alias whose literal is in the code of `line` (before any `//`).
    fn in_line(&self, line: &str) -> Option<&'a str> {
        let code = match line.find("//") {
            Some(i) => line.get(..i).unwrap_or(""),
            None => line,
        };
        self.quoted
            .iter()
            .find(|(q, _)| code.contains(q.as_str()))
            .map(|(_, a)| *a)
    }
}

/// What a line must hold (ASCII case folded) for [`expiry`] to be other than `None`: its
/// comment must say it.
const EXPIRY_WORDS: &str = "can be removed";
/// What a line must hold (case folded) for [`declared_fallback`] to find a name.
const FALLBACK_WORDS: [&str; 2] = ["legacy", "fallback"];

/// Scans every `.rs` file under `dir` (missing: no findings). `display_root` is stripped from
/// paths in findings; `aliases` are the registry's legacy names.
pub fn scan(
    dir: &Path,
    display_root: &Path,
    aliases: &[String],
    today: Date,
) -> Result<Vec<Finding>, Error> {
    let mut out = Vec::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| Error::io(dir, std::io::Error::other(e.to_string())))?;
        let path = entry.path();
        if !entry.file_type().is_file() || path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let Some(text) = crate::bounded_read::read_text(path)? else {
            continue; // removed while walking
        };
        let shown = path
            .strip_prefix(display_root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        scan_text(&shown, &text, aliases, today, &mut out);
    }
    Ok(out)
}

/// Scans one file's text.
///
/// Every finding needs a line whose case-folded text says `can be removed`, `legacy` or
/// `fallback`, or that holds an alias literal, so a file with none of them is skipped whole,
/// and a line is only parsed for what its words allow (most runtime files and lines hold none:
/// the scan was most of a diff's time when every line was parsed).
pub fn scan_text(file: &str, text: &str, aliases: &[String], today: Date, out: &mut Vec<Finding>) {
    let literals = Literals::new(aliases);
    // ASCII case folding keeps every byte offset, so the folded lines pair with the lines.
    let folded = text.to_ascii_lowercase();
    let may_expire = folded.contains(EXPIRY_WORDS);
    let may_declare = FALLBACK_WORDS.iter().any(|w| folded.contains(w));
    let may_alias = literals.any_in(text);
    if !(may_expire || may_declare || may_alias) {
        return;
    }
    let lines: Vec<&str> = text.lines().collect();
    for (i, (line, folded)) in lines.iter().zip(folded.lines()).enumerate() {
        let loc = |col: usize| Location {
            file: file.to_owned(),
            line: i as u32 + 1,
            column: col as u32 + 1,
        };
        let expires = if may_expire && folded.contains(EXPIRY_WORDS) {
            expiry(line)
        } else {
            Expiry::None
        };
        match expires {
            Expiry::Malformed => {
                out.push(Finding::new(
                    Rule::FallbackExpiry,
                    format!("{file}:{}", i + 1),
                    format!("malformed expiry comment `{}`", line.trim()),
                    Some(loc(line.find("//").unwrap_or(0))),
                    format!("write it exactly as `{EXAMPLE}`"),
                ));
            }
            Expiry::Valid(month) if today >= month => {
                out.push(Finding::new(
                    Rule::CleanupDue,
                    format!("{file}:{}", i + 1),
                    format!(
                        "fallback expired in {}: the cleanup is due",
                        month.month_year()
                    ),
                    Some(loc(line.find("//").unwrap_or(0))),
                    "delete the fallback and mark its tags and names `reserved` (staged rollout step 3)",
                ));
            }
            _ => {}
        }
        let declares = may_declare && FALLBACK_WORDS.iter().any(|w| folded.contains(w));
        let subject = declares
            .then(|| declared_fallback(line))
            .flatten()
            .map(|n| (n.clone(), format!("fallback `{n}`")))
            .or_else(|| {
                (may_alias && line.contains('"'))
                    .then(|| literals.in_line(line))
                    .flatten()
                    .map(|a| (a.to_owned(), format!("legacy alias \"{a}\"")))
            });
        let Some((name, what)) = subject else {
            continue;
        };
        if has_expiry(&lines, i) {
            continue;
        }
        let col = line.find(name.as_str()).unwrap_or(0);
        out.push(Finding::new(
            Rule::FallbackExpiry,
            format!("{file}:{name}"),
            format!("{what} has no expiry comment"),
            Some(loc(col)),
            format!("put `{EXAMPLE}` right above it (the month 6 months after the newest artifact that needs it)"),
        ));
    }
}

fn has_expiry(lines: &[&str], at: usize) -> bool {
    if lines.get(at).is_some_and(|l| expiry(l) != Expiry::None) {
        return true;
    }
    let mut i = at;
    let mut looked = 0;
    while i > 0 && looked < LOOKBACK {
        i -= 1;
        looked += 1;
        let Some(line) = lines.get(i) else { break };
        let t = line.trim_start();
        if expiry(line) != Expiry::None {
            return true;
        }
        if !(t.starts_with("//") || t.starts_with("#[") || t.starts_with("#![")) {
            break;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        s.parse().unwrap()
    }

    #[test]
    fn exact_form_only() {
        assert_eq!(
            expiry("    // Can be removed in May 2027 (6 months backward compatibility window)."),
            Expiry::Valid(d("2027-05-01"))
        );
        assert_eq!(
            expiry("// can be removed in May 2027 (6 months backward compatibility window)."),
            Expiry::Malformed
        );
        assert_eq!(
            expiry("// Can be removed in 2027-05 (6 months backward compatibility window)."),
            Expiry::Malformed
        );
        assert_eq!(expiry("// Can be removed in May 2027."), Expiry::Malformed);
        assert_eq!(expiry("let x = 1; // unrelated"), Expiry::None);
    }

    #[test]
    fn fallbacks_need_comments() {
        let text = "\
// Can be removed in May 2027 (6 months backward compatibility window).
fn legacy_decode() {}

pub fn fallback_path() {}
fn normal() {}
// Can be removed in January 2026 (6 months backward compatibility window).
#[inline]
const LEGACY_NAME: &str = \"__old\";
fn reg() { r.alias(\"__old_alias\", \"__new\"); }
";
        let mut out = Vec::new();
        scan_text(
            "rt.rs",
            text,
            &["__old_alias".to_owned()],
            d("2026-11-29"),
            &mut out,
        );
        let ids: Vec<String> = out
            .iter()
            .map(|f| {
                format!(
                    "{} {} {}",
                    f.rule,
                    f.construct,
                    f.location.as_ref().unwrap()
                )
            })
            .collect();
        assert_eq!(
            ids,
            vec![
                "fallback-expiry rt.rs:fallback_path rt.rs:4:8",
                "cleanup-due rt.rs:6 rt.rs:6:1",
                "fallback-expiry rt.rs:__old_alias rt.rs:9:21",
            ]
        );
    }
}
