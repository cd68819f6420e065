//! The golden census: which constructs each golden artifact uses.
//!
//! Read from `<goldens>/<target>/v<N>/manifest.json` files that carry a `census` key:
//!
//! ```json
//! {
//!   "target": "h100",
//!   "version": 3,
//!   "created": "2026-11-29",
//!   "census": { "add_f32": ["xla.gpu.ThunkProto.kernel_thunk", "opcode:add"] }
//! }
//! ```
//!
//! Hand-written versions (`<target>/handwritten/v<N>/manifest.json`) are read too, as target
//! `<target>/handwritten`: they count for the backward window but are never the compiler's
//! default output ([`Census::newest_per_target`] skips them).
//!
//! `census` is either a list of construct names for the whole version or an object mapping each
//! case to its list. Construct names: `pkg.Message`, `pkg.Message.field` (oneof variants are
//! fields), `pkg.Enum`, `pkg.Enum.VALUE`, `opcode:NAME`, `registry:NAME`, `flag:NAME`,
//! `ffi-attr:TARGET.NAME` and `ffi-attr:TARGET.NAME:TYPE` (a typed-FFI attribute as written).
//! `flag:NAME` and `pass:NAME` (the runtime flags and load-time passes the artifact's load and
//! execution depend on) are also derived at diff time from the surface's `flag_readers` and
//! `load_passes` ([`Census::with_runtime_dependencies`]), since v1 manifests predate them.
//! `target` and `version` default to the directory names; the creation date is read from
//! `created`, `creation_date` or `date` (`YYYY-MM-DD` or an RFC 3339 timestamp).
//!
//! The manifests are read through the compact census `<goldens>/census.json` ([`index`]) when
//! it summarizes exactly the manifests found (by path and content hash); otherwise from the
//! manifests themselves. Both give the same [`Census`].
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use crate::git::{Repo, Revision};
use crate::{Date, Error, Extras};

mod index;

pub use index::{check_index, write_index, IndexError, IndexOutcome, INDEX_COMMAND, INDEX_FILE};

/// One golden version and what it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Golden {
    /// Target name (`<target>` directory).
    pub target: String,
    /// Version number (`v<N>`).
    pub version: u32,
    /// The day it was created.
    pub created: Date,
    /// Construct names it uses.
    pub constructs: BTreeSet<String>,
}

/// The directory, inside a target's, of its hand-written versions.
const HANDWRITTEN: &str = "handwritten";

impl Golden {
    /// `h100/v3`, `h100/handwritten/v1`.
    pub fn label(&self) -> String {
        format!("{}/v{}", self.target, self.version)
    }

    /// A hand-written version (`<target>/handwritten/v<N>/`): replayed for the backward window,
    /// never what the compiler emits.
    pub fn is_handwritten(&self) -> bool {
        self.target
            .rsplit_once('/')
            .is_some_and(|(_, last)| last == HANDWRITTEN)
    }
}

/// Every golden with a census.
#[derive(Debug, Clone, Default)]
pub struct Census {
    /// Sorted by target, then version.
    pub goldens: Vec<Golden>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum CensusValue {
    List(Vec<String>),
    PerCase(BTreeMap<String, Vec<String>>),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum VersionValue {
    Number(u32),
    Text(String),
}

/// A manifest's fields the census reads, with its `census` as `C`: [`Constructs`] on the fast
/// path, [`CensusValue`] (untagged: buffered, then tried as each form) for the exact error.
#[derive(Deserialize)]
struct Manifest<C> {
    target: Option<String>,
    version: Option<VersionValue>,
    created: Option<String>,
    creation_date: Option<String>,
    date: Option<String>,
    census: Option<C>,
}

/// The construct names of a `census` value read in one pass: the list, or every case's list.
/// It accepts what [`CensusValue`] accepts, except a case named twice (an error, so that the
/// exact read, which keeps the last list, runs instead). Names are borrowed from the input
/// where they can be and copied once per distinct name (a big manifest names each construct in
/// many cases).
struct Constructs(BTreeSet<String>);

/// A string borrowed from the input unless it has escapes.
#[derive(PartialEq, Eq, Hash)]
struct Name<'de>(std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Name<'de>, E> {
                Ok(Name(std::borrow::Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Name<'de>, E> {
                Ok(Name(std::borrow::Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// The distinct names seen so far, borrowed where they can be (hashed: a sorted set's string
/// comparisons cost more than the parse on the project's goldens).
type Names<'de> =
    std::collections::HashSet<std::borrow::Cow<'de, str>, foldhash::fast::RandomState>;

fn sorted(names: Names<'_>) -> Constructs {
    Constructs(
        names
            .into_iter()
            .map(std::borrow::Cow::into_owned)
            .collect(),
    )
}

/// A list of names, each added to the set as it is read.
struct AddNames<'a, 'de>(&'a mut Names<'de>);

impl<'de> serde::de::DeserializeSeed<'de> for AddNames<'_, 'de> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for AddNames<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of construct names")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(name) = seq.next_element::<Name<'de>>()? {
            self.0.insert(name.0);
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Constructs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Constructs;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of construct names, or an object of such lists")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<Constructs, A::Error> {
                let mut names = Names::default();
                AddNames(&mut names).visit_seq(seq)?;
                Ok(sorted(names))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Constructs, A::Error> {
                let mut names = Names::default();
                let mut cases: std::collections::HashSet<Name<'de>, foldhash::fast::RandomState> =
                    Default::default();
                while let Some(case) = map.next_key::<Name<'de>>()? {
                    // A case named twice keeps only its last list: this pass, which adds
                    // each list as it is read, cannot; the exact read does it.
                    if !cases.insert(case) {
                        return Err(serde::de::Error::custom("a case named twice"));
                    }
                    map.next_value_seed(AddNames(&mut names))?;
                }
                Ok(sorted(names))
            }
        }
        d.deserialize_any(V)
    }
}

impl CensusValue {
    fn into_constructs(self) -> BTreeSet<String> {
        match self {
            CensusValue::List(list) => list.into_iter().collect(),
            CensusValue::PerCase(cases) => cases.into_values().flatten().collect(),
        }
    }
}

impl Census {
    /// Scans `dir` on the file system for `<target>/v<N>/manifest.json`. A missing directory is
    /// an empty census; a manifest without a `census` key is skipped; a malformed one is an error.
    pub fn load(dir: &Path) -> Result<Census, Error> {
        let repo = Repo::new(dir);
        Census::load_at(&repo, &Revision::WorkTree, "")
    }

    /// Scans `dir` (repository-relative) at `rev` for `<target>/v<N>/manifest.json`, read
    /// through the compact census `<dir>/census.json` when it summarizes exactly those manifests
    /// (see `index`; else from the manifests themselves, with the same result).
    pub fn load_at(repo: &Repo, rev: &Revision, dir: &str) -> Result<Census, Error> {
        Census::load_traced(repo, rev, dir).map(|(census, _)| census)
    }

    /// [`load_at`](Self::load_at), and why the index was not used when it was not.
    pub(crate) fn load_traced(
        repo: &Repo,
        rev: &Revision,
        dir: &str,
    ) -> Result<(Census, Option<IndexError>), Error> {
        let store = read_store(repo, rev, dir)?;
        match index::read(store.index.as_deref(), &store.index_path, &store.listed()) {
            Ok(mut census) => {
                census
                    .goldens
                    .sort_by(|a, b| (&a.target, a.version).cmp(&(&b.target, b.version)));
                Ok((census, None))
            }
            Err(why) => Ok((from_manifests(&store)?, Some(why))),
        }
    }

    /// Adds to every golden the runtime flags and load-time passes it depends on (`flag:NAME`,
    /// `pass:NAME`), derived from the constructs it uses and each side's surface
    /// ([`Extras::runtime_dependencies`]). Manifests written before the census recorded them
    /// (versions are immutable, so they are never rewritten) get them this way; newer manifests
    /// record them too, and the union is kept. Deriving from both sides means a flag that one
    /// side stops declaring a reader for still counts.
    pub fn with_runtime_dependencies(mut self, sides: &[&Extras]) -> Census {
        for g in &mut self.goldens {
            let derived: BTreeSet<String> = sides
                .iter()
                .flat_map(|e| e.runtime_dependencies(&g.constructs))
                .collect();
            g.constructs.extend(derived);
        }
        self
    }

    /// The newest version of each target: what today's compiler emits by default (golden
    /// verification keeps it reproducible). Hand-written versions are not: no compiler emitted
    /// them.
    pub fn newest_per_target(&self) -> Vec<&Golden> {
        let mut newest: BTreeMap<&str, &Golden> = BTreeMap::new();
        for g in self.goldens.iter().filter(|g| !g.is_handwritten()) {
            let slot = newest.entry(&g.target).or_insert(g);
            if g.version > slot.version {
                *slot = g;
            }
        }
        newest.into_values().collect()
    }

    /// The newest golden created after `since` that uses `construct`.
    pub fn newest_user_since(&self, construct: &str, since: Date) -> Option<&Golden> {
        self.goldens
            .iter()
            .filter(|g| g.created > since && g.constructs.contains(construct))
            .max_by_key(|g| (g.created, g.version))
    }
}

/// A golden store's manifests and compact census as read at one revision.
pub(crate) struct Store {
    /// The manifests found, in path order, each with its bytes.
    manifests: Vec<StoredManifest>,
    /// The compact census, when there is one.
    index: Option<Vec<u8>>,
    /// Its repository path.
    index_path: String,
}

struct StoredManifest {
    /// Repository-relative.
    path: String,
    /// Below the goldens directory (what the index records).
    rel: String,
    target: String,
    version: u32,
    bytes: Vec<u8>,
}

impl Store {
    fn listed(&self) -> Vec<index::Listed<'_>> {
        self.manifests
            .iter()
            .map(|m| index::Listed {
                rel: &m.rel,
                bytes: &m.bytes,
            })
            .collect()
    }
}

/// Lists and reads the manifests under `dir` at `rev`, and the compact census beside them.
fn read_store(repo: &Repo, rev: &Revision, dir: &str) -> Result<Store, Error> {
    let manifests = match rev {
        Revision::WorkTree => worktree_manifests(repo.root(), dir)?,
        Revision::Git(_) => {
            // Manifests are at `<target>/v<N>/` and `<target>/handwritten/v<N>/` (a git
            // listing is the whole tree's, cached, whatever `enter` says).
            let enter = |parts: &[&str]| match parts {
                [_] | [_, _] => true,
                [_, parent, _] => *parent == HANDWRITTEN,
                _ => false,
            };
            repo.list_files_within(rev, dir, "/manifest.json", &enter)?
        }
    };
    let prefix = dir.trim_end_matches('/');
    let mut wanted = Vec::new();
    for path in manifests {
        let rel = if prefix.is_empty() {
            path.as_str()
        } else {
            match path.strip_prefix(prefix) {
                Some(r) => r.trim_start_matches('/'),
                None => continue,
            }
        };
        let parts: Vec<&str> = rel.split('/').collect();
        // Compiled versions, and hand-written ones (`<target>/handwritten/v<N>/`), which
        // count for the backward window under the target name `<target>/handwritten`.
        let (target, version) = match parts.as_slice() {
            [target, version, "manifest.json"] => ((*target).to_owned(), *version),
            [target, HANDWRITTEN, version, "manifest.json"] => {
                (format!("{target}/{HANDWRITTEN}"), *version)
            }
            _ => continue,
        };
        let Some(version) = version
            .strip_prefix('v')
            .and_then(|v| v.parse::<u32>().ok())
        else {
            continue;
        };
        wanted.push((path.clone(), rel.to_owned(), target, version));
    }
    let index_path = if prefix.is_empty() {
        index::INDEX_FILE.to_owned()
    } else {
        format!("{prefix}/{}", index::INDEX_FILE)
    };
    let mut paths: Vec<String> = wanted.iter().map(|(p, ..)| p.clone()).collect();
    paths.push(index_path.clone());
    let mut contents = repo.read_files(rev, &paths)?;
    let index = contents.remove(&index_path);
    let manifests = wanted
        .into_iter()
        .filter_map(|(path, rel, target, version)| {
            let bytes = contents.remove(&path)?;
            Some(StoredManifest {
                path,
                rel,
                target,
                version,
                bytes,
            })
        })
        .collect();
    Ok(Store {
        manifests,
        index,
        index_path,
    })
}

/// The repository paths (below `root`) of the files `<dir>/<target>/v<N>/manifest.json` and
/// `<dir>/<target>/handwritten/v<N>/manifest.json` on the file system, sorted: the manifests
/// [`read_store`] reads. Listed by looking at those paths only (a directory read per target,
/// one `lstat` per version), where a general walk read every version's directory of 57 cases
/// and cost more than the whole census read from the index. Like git's tree walk it follows no
/// symbolic link and lists links as files (their read then refuses them).
fn worktree_manifests(root: &Path, dir: &str) -> Result<Vec<String>, Error> {
    let dir = dir.trim_end_matches('/');
    let base = root.join(dir);
    if !base.is_dir() {
        return Ok(Vec::new());
    }
    // The subdirectories of `path` (not links to them), by name.
    let subdirs = |path: &Path| -> Result<Vec<String>, Error> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| Error::io(path, e))? {
            let entry = entry.map_err(|e| Error::io(path, e))?;
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                names.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        Ok(names)
    };
    let is_version = |name: &str| {
        name.strip_prefix('v')
            .is_some_and(|n| n.parse::<u32>().is_ok())
    };
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let mut found = Vec::new();
    let mut consider = |rel: String| {
        // A link or other non-directory is listed too, so that reading it fails naming it
        // (crate::bounded_read): skipped, a tampered version would vanish from the census.
        let listed = std::fs::symlink_metadata(base.join(&rel)).is_ok_and(|m| !m.is_dir());
        if listed {
            found.push(format!("{prefix}{rel}"));
        }
    };
    for target in subdirs(&base)? {
        for version in subdirs(&base.join(&target))? {
            if version == HANDWRITTEN {
                for hand in subdirs(&base.join(&target).join(HANDWRITTEN))? {
                    if is_version(&hand) {
                        consider(format!("{target}/{HANDWRITTEN}/{hand}/manifest.json"));
                    }
                }
            } else if is_version(&version) {
                consider(format!("{target}/{version}/manifest.json"));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The census the manifests of `store` give, each read in full.
fn from_manifests(store: &Store) -> Result<Census, Error> {
    let mut goldens = Vec::new();
    for m in &store.manifests {
        if let Some(g) = read_manifest(&m.bytes, &m.path, &m.target, m.version)? {
            goldens.push(g);
        }
    }
    goldens.sort_by(|a, b| (&a.target, a.version).cmp(&(&b.target, b.version)));
    Ok(Census { goldens })
}

fn read_manifest(
    text: &[u8],
    path: &str,
    target: &str,
    version: u32,
) -> Result<Option<Golden>, Error> {
    // The fast path reads what the exact one does; on any error the exact one runs, for its
    // message.
    let manifest = match serde_json::from_slice::<Manifest<Constructs>>(text) {
        Ok(m) => Manifest {
            target: m.target,
            version: m.version,
            created: m.created,
            creation_date: m.creation_date,
            date: m.date,
            census: m.census.map(|c| c.0),
        },
        Err(_) => {
            let m: Manifest<CensusValue> =
                serde_json::from_slice(text).map_err(|e| Error::format(path, e))?;
            Manifest {
                target: m.target,
                version: m.version,
                created: m.created,
                creation_date: m.creation_date,
                date: m.date,
                census: m.census.map(CensusValue::into_constructs),
            }
        }
    };
    let Some(constructs) = manifest.census else {
        return Ok(None);
    };
    let created = manifest
        .created
        .or(manifest.creation_date)
        .or(manifest.date)
        .ok_or_else(|| Error::format(path, "census without a creation date"))?;
    let created: Date = created.parse().map_err(|e| Error::format(path, e))?;
    let version = match manifest.version {
        Some(VersionValue::Number(n)) => n,
        Some(VersionValue::Text(t)) => t.trim_start_matches('v').parse().unwrap_or(version),
        None => version,
    };
    // A hand-written version's manifest names the plain target; its directory says what it is.
    let target = match manifest.target {
        Some(t) if target.ends_with(&format!("/{HANDWRITTEN}")) => format!("{t}/{HANDWRITTEN}"),
        Some(t) => t,
        None => target.to_owned(),
    };
    Ok(Some(Golden {
        target,
        version,
        created,
        constructs,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handwritten_versions_count_for_the_backward_window_only() {
        let dir = std::env::temp_dir().join(format!("census-handwritten-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (sub, constructs) in [
            ("h100/v1", r#"["xla.gpu.ThunkProto.kernel_thunk"]"#),
            (
                "h100/handwritten/v1",
                r#"["xla.gpu.ThunkProto.memzero_thunk"]"#,
            ),
        ] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
            std::fs::write(
                dir.join(sub).join("manifest.json"),
                format!(r#"{{"target": "h100", "created": "2026-11-29", "census": {constructs}}}"#),
            )
            .unwrap();
        }
        let census = Census::load(&dir).unwrap();
        let labels: Vec<String> = census.goldens.iter().map(Golden::label).collect();
        assert_eq!(labels, ["h100/v1", "h100/handwritten/v1"]);
        let newest: Vec<String> = census
            .newest_per_target()
            .into_iter()
            .map(Golden::label)
            .collect();
        assert_eq!(newest, ["h100/v1"]);
        let since: Date = "2026-06-01".parse().unwrap();
        assert_eq!(
            census
                .newest_user_since("xla.gpu.ThunkProto.memzero_thunk", since)
                .map(Golden::label),
            Some("h100/handwritten/v1".to_owned())
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The constructs as the exact (untagged) form reads them.
    fn exact(census: &str) -> Option<BTreeSet<String>> {
        let text = format!(r#"{{"created": "2026-11-29", "census": {census}}}"#);
        let m: Manifest<CensusValue> = serde_json::from_str(&text).ok()?;
        m.census.map(CensusValue::into_constructs)
    }

    /// The constructs as the one-pass form alone reads them.
    fn one_pass(census: &str) -> Option<BTreeSet<String>> {
        let text = format!(r#"{{"created": "2026-11-29", "census": {census}}}"#);
        let m: Manifest<Constructs> = serde_json::from_str(&text).ok()?;
        m.census.map(|c| c.0)
    }

    /// The constructs as the census reads them (the one-pass form, else the exact one).
    fn read(census: &str) -> Option<BTreeSet<String>> {
        let text = format!(r#"{{"created": "2026-11-29", "census": {census}}}"#);
        read_manifest(text.as_bytes(), "m", "t", 1)
            .ok()
            .flatten()
            .map(|g| g.constructs)
    }

    #[test]
    fn the_one_pass_read_accepts_what_the_untagged_form_accepts() {
        for census in [
            r#"["a.B", "opcode:add", "a.B"]"#,
            r#"{"x": ["a.B", "a.C"], "y": ["a.C", "flag:f"]}"#,
            // A case named twice keeps its last list.
            r#"{"x": ["a.B"], "x": ["a.C"]}"#,
            r#"["esc\u0061ped", "a.\"q\""]"#,
            "[]",
            "{}",
            "null",
            // Neither form: both reject.
            "[1]",
            r#"{"x": "a.B"}"#,
            r#""a.B""#,
            "7",
        ] {
            assert_eq!(read(census), exact(census), "census {census}");
        }
        // The one-pass form declines a case named twice; the exact read keeps the last list.
        let twice = r#"{"x": ["a.B"], "x": ["a.C"]}"#;
        assert_eq!(one_pass(twice), None);
        assert_eq!(read(twice), Some(BTreeSet::from(["a.C".to_owned()])));
        assert_eq!(
            one_pass(r#"{"x": ["a.B"], "y": ["a.C", "a.B"]}"#),
            Some(BTreeSet::from(["a.B".to_owned(), "a.C".to_owned()]))
        );
    }

    #[test]
    fn a_census_of_neither_form_keeps_the_untagged_message() {
        let text = br#"{"created": "2026-11-29", "census": [1]}"#;
        let err = read_manifest(text, "t/v1/manifest.json", "t", 1).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t/v1/manifest.json: data did not match any variant of untagged enum CensusValue at line 1 column 40"
        );
    }

    #[test]
    fn manifests_inside_case_directories_are_not_read() {
        let dir = std::env::temp_dir().join(format!("census-depth-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let manifest = r#"{"created": "2026-11-29", "census": ["a.B"]}"#;
        for sub in [
            "h100/v1",
            "h100/v1/case",
            "h100/handwritten/v2",
            "h100/handwritten/v2/case",
        ] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
            std::fs::write(dir.join(sub).join("manifest.json"), manifest).unwrap();
        }
        let census = Census::load(&dir).unwrap();
        let labels: Vec<String> = census.goldens.iter().map(Golden::label).collect();
        assert_eq!(labels, ["h100/v1", "h100/handwritten/v2"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
