//! The compact census: `<goldens>/census.json`, one file the bot reads instead of every golden
//! manifest.
//!
//! The manifests hold each case's construct list (1.9 MB of JSON over ten manifests, 25,000
//! names of which about 400 are distinct); parsing them cost more than a protox compile of the
//! schema, on every diff. The index holds what [`Census::load_at`] makes of them, deduplicated:
//! one sorted table of construct names and, per golden version, its target, version, creation
//! date and the indices of the names it uses.
//!
//! It can never be stale unnoticed: it records the path and a content hash of every manifest it
//! summarizes, and the reader checks them against the manifests it lists (every manifest the
//! exact read would read, hashed as read). Any difference (a manifest added, removed or changed,
//! an index missing or malformed) makes the reader ignore it and read the manifests, so the
//! census, and every verdict, is the one the manifests give. `aot goldens regen` rewrites the
//! index with each new version; `aot goldens verify` and the golden suite's `integrity::census`
//! fail naming [`INDEX_COMMAND`] when it is stale, so the fast path stays the one taken.
//!
//! The hash is HighwayHash-128 with a fixed key (the `highway` crate: a stable, specified
//! output, already the harness's hash): the reader hashes 1.9 MB per diff, which HighwayHash
//! does in a fraction of a millisecond, where SHA-256 would cost about half a compile. It guards
//! against accidents (a version added, a manifest regenerated), not against someone forging
//! a manifest to match a hash: the manifests are reviewed files, and their own `sha256`s are
//! what integrity rests on.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use highway::{HighwayHash, HighwayHasher, Key};
use serde::{Deserialize, Serialize};

use super::{Census, Golden};
use crate::{Date, Error};

/// The index's file name, directly in the goldens directory.
pub const INDEX_FILE: &str = "census.json";

/// The command that rewrites the index.
pub const INDEX_COMMAND: &str = "cargo run -p harness --bin aot -- goldens index";

/// The layout this reader knows (bumped on any change to the file's shape or meaning).
const FORMAT: u32 = 1;

/// The HighwayHash key: fixed, so that the hash of a file is the same on every machine.
const KEY: Key = Key([
    0x7863_6c61_2d61_6f74, // "xla-aot"
    0x6365_6e73_7573_2d31, // "census-1"
    0x0123_4567_89ab_cdef,
    0xfedc_ba98_7654_3210,
]);

/// Why the index is not used: the reader then reads the manifests.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// There is no index.
    #[error("{path} is missing; run `{INDEX_COMMAND}`")]
    Missing {
        /// The index as shown to the user.
        path: String,
    },
    /// The index does not parse, has another format, or names a construct it does not have.
    #[error("{path} is malformed ({message}); run `{INDEX_COMMAND}`")]
    Malformed {
        /// The index as shown to the user.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The manifests are not the ones it summarizes.
    #[error("{path} is stale: {what}; run `{INDEX_COMMAND}`")]
    Stale {
        /// The index as shown to the user.
        path: String,
        /// The first difference, naming the manifest.
        what: String,
    },
}

/// The file as written.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Index {
    /// For whoever opens the file.
    about: String,
    format: u32,
    /// Every manifest summarized: path below the goldens directory, content hash.
    manifests: Vec<Summarized>,
    /// Every construct name any golden uses, sorted.
    names: Vec<String>,
    /// Sorted by target, then version, as [`Census::goldens`].
    goldens: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Summarized {
    path: String,
    highway128: String,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Entry {
    target: String,
    version: u32,
    created: Date,
    /// Indices into `names`, ascending.
    constructs: Vec<u32>,
}

/// A manifest as the census reader listed it: its path below the goldens directory and its
/// bytes.
pub(super) struct Listed<'a> {
    pub(super) rel: &'a str,
    pub(super) bytes: &'a [u8],
}

fn hash(bytes: &[u8]) -> String {
    let [a, b] = HighwayHasher::new(KEY).hash128(bytes);
    format!("{a:016x}{b:016x}")
}

impl Index {
    fn new(census: &Census, listed: &[Listed<'_>]) -> Index {
        let names: BTreeSet<&String> = census.goldens.iter().flat_map(|g| &g.constructs).collect();
        let number: BTreeMap<&String, u32> = names
            .iter()
            .zip(0u32..)
            .map(|(name, i)| (*name, i))
            .collect();
        let mut manifests: Vec<Summarized> = listed
            .iter()
            .map(|m| Summarized {
                path: m.rel.to_owned(),
                highway128: hash(m.bytes),
            })
            .collect();
        manifests.sort_by(|a, b| a.path.cmp(&b.path));
        Index {
            about: format!(
                "The golden census in one file, generated from the manifests below (checked by \
                 their hashes on every read; a stale index is ignored). Regenerate: {INDEX_COMMAND}"
            ),
            format: FORMAT,
            manifests,
            names: names.into_iter().cloned().collect(),
            goldens: census
                .goldens
                .iter()
                .map(|g| Entry {
                    target: g.target.clone(),
                    version: g.version,
                    created: g.created,
                    constructs: g
                        .constructs
                        .iter()
                        .filter_map(|c| number.get(c).copied())
                        .collect(),
                })
                .collect(),
        }
    }

    fn to_json(&self) -> String {
        // Pretty, so that a new version's entry reads as lines added in review.
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The census it holds, if it summarizes exactly `listed`.
    fn census(self, shown: &str, listed: &[Listed<'_>]) -> Result<Census, IndexError> {
        let stale = |what: String| IndexError::Stale {
            path: shown.to_owned(),
            what,
        };
        if self.format != FORMAT {
            return Err(IndexError::Malformed {
                path: shown.to_owned(),
                message: format!("format {}, this reader knows {FORMAT}", self.format),
            });
        }
        let recorded: BTreeMap<&str, &str> = self
            .manifests
            .iter()
            .map(|m| (m.path.as_str(), m.highway128.as_str()))
            .collect();
        let mut seen = BTreeSet::new();
        for m in listed {
            match recorded.get(m.rel) {
                None => return Err(stale(format!("`{}` is not in it", m.rel))),
                Some(h) if *h != hash(m.bytes) => {
                    return Err(stale(format!("`{}` changed since it was written", m.rel)))
                }
                Some(_) => {
                    seen.insert(m.rel);
                }
            }
        }
        if let Some(gone) = recorded.keys().find(|p| !seen.contains(*p)) {
            return Err(stale(format!("`{gone}` is in it but not in the store")));
        }
        let mut goldens = Vec::with_capacity(self.goldens.len());
        for e in self.goldens {
            let constructs = e
                .constructs
                .iter()
                .map(|&i| {
                    usize::try_from(i)
                        .ok()
                        .and_then(|i| self.names.get(i))
                        .cloned()
                        .ok_or_else(|| IndexError::Malformed {
                            path: shown.to_owned(),
                            message: format!(
                                "{}/v{} names construct {i} of {}",
                                e.target,
                                e.version,
                                self.names.len()
                            ),
                        })
                })
                .collect::<Result<BTreeSet<String>, IndexError>>()?;
            goldens.push(Golden {
                target: e.target,
                version: e.version,
                created: e.created,
                constructs,
            });
        }
        Ok(Census { goldens })
    }
}

/// The census `index_bytes` holds (the index as read, `None` when there is none), if it
/// summarizes exactly `listed`.
pub(super) fn read(
    index_bytes: Option<&[u8]>,
    shown: &str,
    listed: &[Listed<'_>],
) -> Result<Census, IndexError> {
    let Some(bytes) = index_bytes else {
        return Err(IndexError::Missing {
            path: shown.to_owned(),
        });
    };
    let index: Index = serde_json::from_slice(bytes).map_err(|e| IndexError::Malformed {
        path: shown.to_owned(),
        message: e.to_string(),
    })?;
    index.census(shown, listed)
}

/// The index's text for `census`, read from `listed`.
pub(super) fn text(census: &Census, listed: &[Listed<'_>]) -> String {
    Index::new(census, listed).to_json()
}

/// What [`write_index`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexOutcome {
    /// The index already summarized the manifests as they are; nothing was written.
    UpToDate(PathBuf),
    /// The index was (re)written.
    Written(PathBuf),
}

/// Rewrites `<dir>/census.json` from the manifests under `dir` (on the file system), unless it
/// already holds exactly what they give. Written to a temporary file and renamed into place, so
/// a reader never sees half an index. A malformed manifest is an error, as it is for the diff.
pub fn write_index(dir: &Path) -> Result<IndexOutcome, Error> {
    let repo = crate::git::Repo::new(dir);
    let rev = crate::git::Revision::WorkTree;
    let read = super::read_store(&repo, &rev, "")?;
    let listed = read.listed();
    let census = super::from_manifests(&read)?;
    let text = text(&census, &listed);
    let path = dir.join(INDEX_FILE);
    if crate::bounded_read::read_file(&path)?.is_some_and(|old| old == text.as_bytes()) {
        return Ok(IndexOutcome::UpToDate(path));
    }
    let tmp = dir.join(format!(".{INDEX_FILE}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, &text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(&path, e)
    })?;
    Ok(IndexOutcome::Written(path))
}

/// Whether `<dir>/census.json` summarizes the manifests under `dir` (on the file system) as they
/// are now: `Ok(Err(why))` when it does not (the reader then reads the manifests), `Err` when
/// the manifests themselves cannot be read.
pub fn check_index(dir: &Path) -> Result<Result<(), IndexError>, Error> {
    let repo = crate::git::Repo::new(dir);
    let rev = crate::git::Revision::WorkTree;
    let read = super::read_store(&repo, &rev, "")?;
    let listed = read.listed();
    let shown = dir.join(INDEX_FILE).display().to_string();
    let index = self::read(read.index.as_deref(), &shown, &listed);
    let Ok(fast) = index else {
        return Ok(index.map(|_| ()));
    };
    // Fresh by its hashes; and it must hold what the manifests give (an index written by a
    // reader with other rules, or edited by hand, is as wrong as a stale one).
    let exact = super::from_manifests(&read)?;
    if fast.goldens != exact.goldens {
        return Ok(Err(IndexError::Stale {
            path: shown,
            what: "its census differs from the manifests'".to_owned(),
        }));
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store under the temp directory with a manifest per `(version dir, census)`.
    fn store(name: &str, manifests: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("census-index-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (sub, census) in manifests {
            put(&dir, sub, census);
        }
        dir
    }

    fn put(dir: &Path, sub: &str, census: &str) {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        std::fs::write(
            dir.join(sub).join("manifest.json"),
            format!(r#"{{"target": "h100", "created": "2026-11-29", "census": {census}}}"#),
        )
        .unwrap();
    }

    fn load(dir: &Path) -> (Census, Option<IndexError>) {
        let repo = crate::git::Repo::new(dir);
        Census::load_traced(&repo, &crate::git::Revision::WorkTree, "").unwrap()
    }

    fn labels(census: &Census) -> Vec<(String, Vec<String>)> {
        census
            .goldens
            .iter()
            .map(|g| (g.label(), g.constructs.iter().cloned().collect()))
            .collect()
    }

    const V1: &str = r#"{"add": ["a.B", "opcode:add"], "mul": ["a.B", "opcode:multiply"]}"#;

    #[test]
    fn a_fresh_index_gives_the_census_the_manifests_give() {
        let dir = store(
            "fresh",
            &[
                ("h100/v1", V1),
                ("h100/handwritten/v1", r#"["a.C"]"#),
                ("h100/v1/case", r#"["not.Read"]"#),
            ],
        );
        let exact = load(&dir);
        assert!(matches!(exact.1, Some(IndexError::Missing { .. })));
        assert!(matches!(write_index(&dir), Ok(IndexOutcome::Written(_))));
        assert!(matches!(write_index(&dir), Ok(IndexOutcome::UpToDate(_))));
        let (fast, why) = load(&dir);
        assert_eq!(why, None);
        assert_eq!(fast.goldens, exact.0.goldens);
        assert_eq!(
            labels(&fast),
            [
                (
                    "h100/v1".to_owned(),
                    vec!["a.B".into(), "opcode:add".into(), "opcode:multiply".into()]
                ),
                ("h100/handwritten/v1".to_owned(), vec!["a.C".into()]),
            ]
        );
        assert_eq!(check_index(&dir).unwrap(), Ok(()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Each way the manifests can move on from their index: the reader reads the manifests
    /// (their census, not the index's), and the check names the difference exactly.
    #[test]
    fn a_stale_index_is_ignored_and_named() {
        let dir = store("stale", &[("h100/v1", V1)]);
        write_index(&dir).unwrap();
        let shown = dir.join(INDEX_FILE).display().to_string();
        let check = |what: &str| {
            assert_eq!(
                check_index(&dir).unwrap().unwrap_err().to_string(),
                format!("{shown} is stale: {what}; run `cargo run -p harness --bin aot -- goldens index`")
            );
            let (census, why) = load(&dir);
            assert!(matches!(why, Some(IndexError::Stale { .. })));
            let repo = crate::git::Repo::new(&dir);
            let store =
                super::super::read_store(&repo, &crate::git::Revision::WorkTree, "").unwrap();
            assert_eq!(
                census.goldens,
                super::super::from_manifests(&store).unwrap().goldens
            );
            census
        };
        // Changed: the new construct is seen.
        put(
            &dir,
            "h100/v1",
            r#"{"add": ["a.B", "opcode:add", "a.New"]}"#,
        );
        let census = check("`h100/v1/manifest.json` changed since it was written");
        assert!(census.goldens[0].constructs.contains("a.New"));
        // Added.
        write_index(&dir).unwrap();
        put(&dir, "h100/v2", r#"["a.Two"]"#);
        let census = check("`h100/v2/manifest.json` is not in it");
        assert_eq!(census.goldens.len(), 2);
        // Removed.
        write_index(&dir).unwrap();
        std::fs::remove_dir_all(dir.join("h100/v2")).unwrap();
        check("`h100/v2/manifest.json` is in it but not in the store");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_or_malformed_index_is_named() {
        let dir = store("malformed", &[("h100/v1", V1)]);
        let shown = dir.join(INDEX_FILE).display().to_string();
        let run = "run `cargo run -p harness --bin aot -- goldens index`";
        assert_eq!(
            check_index(&dir).unwrap().unwrap_err().to_string(),
            format!("{shown} is missing; {run}")
        );
        std::fs::write(dir.join(INDEX_FILE), "{").unwrap();
        assert_eq!(
            check_index(&dir).unwrap().unwrap_err().to_string(),
            format!("{shown} is malformed (EOF while parsing an object at line 1 column 1); {run}")
        );
        write_index(&dir).unwrap();
        let text = std::fs::read_to_string(dir.join(INDEX_FILE)).unwrap();
        std::fs::write(
            dir.join(INDEX_FILE),
            text.replace("\"format\": 1", "\"format\": 2"),
        )
        .unwrap();
        assert_eq!(
            check_index(&dir).unwrap().unwrap_err().to_string(),
            format!("{shown} is malformed (format 2, this reader knows 1); {run}")
        );
        // An index pointing past its name table.
        let mut index: Index = serde_json::from_str(&text).unwrap();
        index.goldens[0].constructs.push(99);
        std::fs::write(dir.join(INDEX_FILE), index.to_json()).unwrap();
        assert_eq!(
            check_index(&dir).unwrap().unwrap_err().to_string(),
            format!("{shown} is malformed (h100/v1 names construct 99 of 3); {run}")
        );
        // Hashes that match, a census that does not (edited by hand): the reader cannot tell,
        // the check (the golden suite's `integrity::census`) does.
        let mut index: Index = serde_json::from_str(&text).unwrap();
        index.goldens[0].constructs.pop();
        std::fs::write(dir.join(INDEX_FILE), index.to_json()).unwrap();
        assert_eq!(
            check_index(&dir).unwrap().unwrap_err().to_string(),
            format!("{shown} is stale: its census differs from the manifests'; {run}")
        );
        for bad in ["{", "[]"] {
            std::fs::write(dir.join(INDEX_FILE), bad).unwrap();
            let (census, why) = load(&dir);
            assert!(matches!(why, Some(IndexError::Malformed { .. })));
            assert_eq!(census.goldens.len(), 1);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The file-system listing the census uses finds what the general walk finds.
    #[test]
    fn the_manifest_listing_matches_the_walk() {
        let dir = store(
            "listing",
            &[
                ("h100/v1", V1),
                ("h100/v10", V1),
                ("h100/v1/case", V1),
                ("h100/handwritten/v2", V1),
                ("h100/handwritten/v2/case", V1),
                ("h100/handwritten", V1),
                ("h100/.v3.tmp-1", V1),
                ("h100/notes", V1),
                ("a100/v1", V1),
                ("handwritten/v1", V1),
            ],
        );
        std::fs::create_dir_all(dir.join("h100/v4")).unwrap();
        std::fs::create_dir_all(dir.join("h100/v5/manifest.json")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            dir.join("h100/v1/manifest.json"),
            dir.join("h100/v4/manifest.json"),
        )
        .unwrap();
        let repo = crate::git::Repo::new(&dir);
        let enter = |parts: &[&str]| match parts {
            [_] | [_, _] => true,
            [_, parent, _] => *parent == super::super::HANDWRITTEN,
            _ => false,
        };
        let walked: Vec<String> = repo
            .list_files_within(
                &crate::git::Revision::WorkTree,
                "",
                "/manifest.json",
                &enter,
            )
            .unwrap()
            .into_iter()
            // The versions the census reads of what the walk lists.
            .filter(|p| {
                let parts: Vec<&str> = p.split('/').collect();
                let v = match parts.as_slice() {
                    [_, v, _] | [_, "handwritten", v, _] => *v,
                    _ => return false,
                };
                v.strip_prefix('v')
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .collect();
        let listed = super::super::worktree_manifests(&dir, "").unwrap();
        assert_eq!(listed, walked);
        assert_eq!(
            listed,
            [
                "a100/v1/manifest.json",
                "h100/handwritten/v2/manifest.json",
                "h100/v1/manifest.json",
                "h100/v10/manifest.json",
                // A link is listed (its read refuses it), as git lists links.
                #[cfg(unix)]
                "h100/v4/manifest.json",
                "handwritten/v1/manifest.json",
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
