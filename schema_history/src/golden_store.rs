//! The golden store is append-only against the base: a version, once merged, is what the
//! runtime of that day was shown to load; rewriting it to bless a changed result, or deleting
//! it while it is inside the backward window, removes the evidence the backward gate replays.
//!
//! The golden suite checks each version against its own manifest, in one commit; only the
//! bot sees both sides. Files of `<target>/v<N>/` and `<target>/handwritten/v<N>/` at the base
//! must be at the head byte for byte, except a whole version (its manifest gone) older than the
//! window. Files outside version directories (the census index) may change. The findings are
//! `golden-store-rewritten`, which no policy lowers and no waiver silences.
use std::collections::BTreeMap;

use crate::finding::{Finding, Rule, Severity};
use crate::git::{Repo, Revision};
use crate::model::Location;
use crate::rules::BACKWARD_WINDOW_MONTHS;
use crate::{Date, Error};

/// What the head did to one version directory of the base.
#[derive(Default)]
struct Touched {
    /// Files (below the version directory) changed in place.
    changed: Vec<String>,
    /// Files deleted.
    deleted: Vec<String>,
    /// Whether its manifest is deleted (the version is removed).
    removed: bool,
}

/// `dir`-relative `path` split at its version directory (the first `v<N>` component after at
/// least one target component): `("h100/v2", "add/executable.pb")`.
fn split_version(path: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = path.split('/').collect();
    let is_version = |p: &&str| {
        p.strip_prefix('v')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let at = parts.iter().skip(1).position(is_version)? + 1;
    if at + 1 >= parts.len() {
        return None;
    }
    Some((parts[..=at].join("/"), parts[at + 1..].join("/")))
}

/// The changes git reports between `base` and `head` under `dir` (`git diff --name-status`, no
/// rename detection: a rename is a deletion and an addition).
fn changes(
    repo: &Repo,
    base: &str,
    head: &Revision,
    dir: &str,
) -> Result<Vec<(u8, String)>, Error> {
    let mut args = vec!["diff", "--no-renames", "--name-status", "-z", base];
    if let Revision::Git(h) = head {
        args.push(h.as_str());
    }
    args.extend(["--", dir]);
    let out = repo.git(&args)?;
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut list = Vec::new();
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        let path = String::from_utf8_lossy(path).into_owned();
        list.push((status.first().copied().unwrap_or(b'?'), path));
    }
    Ok(list)
}

/// The `created` day of a manifest's JSON text (`None`: unreadable, judged as young).
fn created(bytes: &[u8]) -> Option<Date> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    v.get("created")?.as_str()?.parse().ok()
}

fn listed(files: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut s = files
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > SHOWN {
        s.push_str(&format!(" and {} more", files.len() - SHOWN));
    }
    s
}

/// The findings for the golden store under `dir` (repository-relative), `head` against `base`.
pub(crate) fn check(
    repo: &Repo,
    base: &str,
    head: &Revision,
    dir: &str,
    today: Date,
) -> Result<Vec<Finding>, Error> {
    let dir = dir.trim_end_matches('/');
    let mut versions: BTreeMap<String, Touched> = BTreeMap::new();
    for (status, path) in changes(repo, base, head, dir)? {
        let Some(rel) = path.strip_prefix(dir).and_then(|p| p.strip_prefix('/')) else {
            continue;
        };
        let Some((version, file)) = split_version(rel) else {
            continue;
        };
        let t = versions.entry(version).or_default();
        match status {
            b'A' => {}
            b'D' => {
                t.removed |= file == "manifest.json";
                t.deleted.push(file);
            }
            _ => t.changed.push(file),
        }
    }
    versions.retain(|_, t| !t.changed.is_empty() || !t.deleted.is_empty());
    let manifests: Vec<String> = versions
        .keys()
        .map(|v| format!("{dir}/{v}/manifest.json"))
        .collect();
    let base_rev = Revision::Git(base.to_owned());
    let read = repo.read_files(&base_rev, &manifests)?;
    let window_start = today.add_months(-BACKWARD_WINDOW_MONTHS);
    let mut out = Vec::new();
    for (version, t) in versions {
        let manifest = format!("{dir}/{version}/manifest.json");
        let made = read.get(&manifest).and_then(|b| created(b));
        let made_text = made.map_or("on an unreadable date".to_owned(), |d| format!("{d}"));
        let location = Some(Location {
            file: manifest.clone(),
            line: 1,
            column: 1,
        });
        let construct = format!("golden:{version}");
        if t.removed && t.changed.is_empty() {
            match made {
                Some(d) if d <= window_start => {
                    let mut f = Finding::new(
                        Rule::GoldenStoreRewritten,
                        construct,
                        format!(
                            "golden {version} (created {d}) is removed: it is older than the backward window"
                        ),
                        location,
                        "nothing to do: versions older than 6 months may go",
                    );
                    f.severity = Severity::Note;
                    out.push(f);
                }
                _ => out.push(Finding::new(
                    Rule::GoldenStoreRewritten,
                    construct,
                    format!(
                        "golden {version} (created {made_text}) is removed inside the backward window: today's runtime must keep loading it{}",
                        made.map_or(String::new(), |d| format!(
                            " until {}",
                            d.add_months(BACKWARD_WINDOW_MONTHS)
                        ))
                    ),
                    location,
                    format!(
                        "restore it (`git checkout {base} -- {dir}/{version}`); versions may be removed once they are 6 months old"
                    ),
                )),
            }
            continue;
        }
        let what: Vec<String> = [("changed", &t.changed), ("deleted", &t.deleted)]
            .into_iter()
            .filter(|(_, files)| !files.is_empty())
            .map(|(how, files)| {
                let s = if files.len() == 1 { "" } else { "s" };
                format!("{} file{s} {how} ({})", files.len(), listed(files))
            })
            .collect();
        out.push(Finding::new(
            Rule::GoldenStoreRewritten,
            construct,
            format!(
                "golden {version} (created {made_text}) is rewritten: {}; merged golden versions are append-only",
                what.join(", ")
            ),
            location,
            format!(
                "restore it (`git checkout {base} -- {dir}/{version}`); a changed result is a new version (`aot goldens regen` writes the next one), and a behaviour change that old artifacts see is a break"
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_directories_split_after_their_target() {
        assert_eq!(
            split_version("h100/v2/add/executable.pb"),
            Some(("h100/v2".into(), "add/executable.pb".into()))
        );
        assert_eq!(
            split_version("h100/handwritten/v1/manifest.json"),
            Some(("h100/handwritten/v1".into(), "manifest.json".into()))
        );
        assert_eq!(split_version("census.json"), None);
        assert_eq!(split_version("v1/manifest.json"), None);
        assert_eq!(split_version("h100/v2"), None);
        assert_eq!(split_version("h100/vx/manifest.json"), None);
    }

    #[test]
    fn created_reads_the_manifest_day() {
        assert_eq!(
            created(br#"{"created": "2026-12-01"}"#),
            Some("2026-12-01".parse().unwrap())
        );
        assert_eq!(created(b"{"), None);
        assert_eq!(created(br#"{"created": 3}"#), None);
    }
}
