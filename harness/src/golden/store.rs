//! Discovering golden targets and versions.
use std::path::{Path, PathBuf};

/// Environment variable that makes replay cover every version instead of the boundary ones.
pub const ALL_VERSIONS_ENV: &str = "XLA_AOT_TEST_ALL_VERSIONS";

/// Why the store could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GoldenError {
    /// No `v<N>` directory exists for the target.
    #[error("NotFound: no golden versions for target `{target}` under {dir} (expected v1, v2, ... directories; run `aot goldens regen --target {target}`)")]
    NoVersions {
        /// The target spec's name (`h100_sxm`), as the caller gave it.
        target: String,
        /// The directory searched.
        dir: PathBuf,
    },
    /// The store directory or a version directory could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The directory whose listing failed.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// The directory, inside a target's, of its hand-written versions
/// (`goldens/executables/<target>/handwritten/v<N>/`): artifacts built with the proto types for
/// constructs today's compiler does not emit, replayed like the others but never compared with
/// today's compiler, and not "what the compiler emits by default" for the forward window.
pub const HANDWRITTEN_DIR: &str = "handwritten";

/// A golden store rooted at `goldens/executables`.
#[derive(Debug, Clone)]
pub struct GoldenStore {
    root: PathBuf,
    /// `Some(HANDWRITTEN_DIR)` for the hand-written versions of each target.
    subdir: Option<&'static str>,
}

impl GoldenStore {
    /// A store rooted at `root` (usually `<repo>/goldens/executables`).
    pub fn new(root: impl Into<PathBuf>) -> GoldenStore {
        GoldenStore {
            root: root.into(),
            subdir: None,
        }
    }

    /// The hand-written versions under `root`: `<root>/<target>/handwritten/v<N>/`.
    pub fn handwritten(root: impl Into<PathBuf>) -> GoldenStore {
        GoldenStore {
            root: root.into(),
            subdir: Some(HANDWRITTEN_DIR),
        }
    }

    /// The repository's own store.
    pub fn in_repo() -> GoldenStore {
        GoldenStore::new(super::cases::repo_root().join("goldens/executables"))
    }

    /// The repository's hand-written versions.
    pub fn handwritten_in_repo() -> GoldenStore {
        GoldenStore::handwritten(super::cases::repo_root().join("goldens/executables"))
    }

    /// Whether this is a store of hand-written versions.
    pub fn is_handwritten(&self) -> bool {
        self.subdir.is_some()
    }

    /// The directory holding a target's versions.
    fn target_dir(&self, target: &str) -> PathBuf {
        match self.subdir {
            Some(sub) => self.root.join(target).join(sub),
            None => self.root.join(target),
        }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory of one version.
    pub fn version_dir(&self, target: &str, version: u32) -> PathBuf {
        self.target_dir(target).join(format!("v{version}"))
    }

    /// Target names (subdirectories), sorted. A missing root means no targets.
    pub fn targets(&self) -> Result<Vec<String>, GoldenError> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(GoldenError::Io {
                    path: self.root.clone(),
                    source,
                })
            }
        };
        let mut targets: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .filter(|name| !name.starts_with('.'))
            .collect();
        targets.sort();
        Ok(targets)
    }

    /// The target's versions in numeric order (v2 before v10). Only directories named `v<int>`
    /// count; anything else (notes, scratch directories, `v1.tmp-...`) is ignored. No versions is
    /// a [`GoldenError::NoVersions`].
    pub fn versions(&self, target: &str) -> Result<Vec<u32>, GoldenError> {
        let dir = self.target_dir(target);
        let entries = std::fs::read_dir(&dir).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => GoldenError::NoVersions {
                target: target.to_owned(),
                dir: dir.clone(),
            },
            _ => GoldenError::Io {
                path: dir.clone(),
                source,
            },
        })?;
        let mut versions: Vec<u32> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| parse_version(e.file_name().to_str()?))
            .collect();
        versions.sort_unstable();
        if versions.is_empty() {
            return Err(GoldenError::NoVersions {
                target: target.to_owned(),
                dir,
            });
        }
        Ok(versions)
    }
}

/// `v12` -> 12. Leading zeros, signs, suffixes and `v0` are not versions.
fn parse_version(name: &str) -> Option<u32> {
    let digits = name.strip_prefix('v')?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Whether [`ALL_VERSIONS_ENV`] asks for every version: `1`, `true`, `t`, `yes`, `y` in any case
/// (surrounding whitespace ignored); anything else, empty or unset means boundary mode.
pub fn all_versions_requested(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "t" | "yes" | "y"
        )
    })
}

/// The versions a backward-compatibility replay covers: every version when `all` is set or when
/// there are three or fewer; otherwise the boundary ones — the oldest (the edge of the window),
/// the second-newest (the newest one golden verification does not already pin) and
/// the newest. Golden verification recompiles the newest but executes nothing, and the newest
/// is where a case added to pin a behaviour class lives (issue 35: the pred and negative-index
/// conditionals, permuted groups, first recorded in v4): without its replay a runtime change to
/// those readings would pass every default gate.
pub fn select_versions(versions: &[u32], all: bool) -> Vec<u32> {
    let mut out = oldest_and_one_more(versions, all, 1);
    if let Some(&newest) = versions.iter().max() {
        if !out.contains(&newest) {
            out.push(newest);
        }
    }
    out
}

/// [`select_versions`] for hand-written versions: the oldest and the newest. No compiler made
/// them, so golden verification pins none of them and the newest must be replayed (it holds the
/// forms added last, such as the attributes at 1000 of hand-written v3).
pub fn select_handwritten_versions(versions: &[u32], all: bool) -> Vec<u32> {
    oldest_and_one_more(versions, all, 0)
}

/// Every version (sorted, once each) when `all` is set or there are two or fewer; otherwise the
/// oldest and the one `back` places before the newest.
fn oldest_and_one_more(versions: &[u32], all: bool, back: usize) -> Vec<u32> {
    let mut sorted = versions.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if all || sorted.len() <= 2 {
        return sorted;
    }
    let oldest = sorted.first().copied();
    let other = sorted
        .len()
        .checked_sub(1 + back)
        .and_then(|i| sorted.get(i))
        .copied();
    oldest.into_iter().chain(other).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_numerically_and_ignore_other_entries() {
        let dir = std::env::temp_dir().join(format!("goldens-store-{}", std::process::id()));
        let target = dir.join("h100_sxm");
        for name in [
            "v1",
            "v2",
            "v10",
            "v9",
            "vx",
            "v01",
            "v3.tmp-123",
            "notes",
            "v0",
        ] {
            std::fs::create_dir_all(target.join(name)).unwrap();
        }
        std::fs::write(target.join("v11"), b"a file, not a version").unwrap();
        let store = GoldenStore::new(&dir);
        assert_eq!(store.versions("h100_sxm").unwrap(), vec![1, 2, 9, 10]);
        assert_eq!(store.targets().unwrap(), vec!["h100_sxm".to_owned()]);
        let err = store.versions("a100_sxm_80").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("NotFound: no golden versions for target `a100_sxm_80`"),
            "{err}"
        );
        std::fs::create_dir_all(dir.join("empty")).unwrap();
        assert!(matches!(
            store.versions("empty"),
            Err(GoldenError::NoVersions { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn boundary_selection() {
        assert_eq!(select_versions(&[1], false), vec![1]);
        assert_eq!(select_versions(&[1, 2], false), vec![1, 2]);
        assert_eq!(select_versions(&[1, 2, 3], false), vec![1, 2, 3]);
        assert_eq!(select_versions(&[10, 2, 9, 1], false), vec![1, 9, 10]);
        assert_eq!(select_versions(&[10, 2, 9, 1], true), vec![1, 2, 9, 10]);
        assert_eq!(select_versions(&[], false), Vec::<u32>::new());
    }

    #[test]
    fn handwritten_boundary_selection_keeps_the_newest() {
        assert_eq!(select_handwritten_versions(&[1, 2], false), vec![1, 2]);
        assert_eq!(select_handwritten_versions(&[3, 1, 2], false), vec![1, 3]);
        assert_eq!(select_handwritten_versions(&[3, 1, 2], true), vec![1, 2, 3]);
        assert_eq!(select_handwritten_versions(&[], false), Vec::<u32>::new());
    }

    #[test]
    fn env_switch_values() {
        for on in ["1", "true", "TRUE", "t", "T", "yes", "Yes", "y", "Y", " y "] {
            assert!(all_versions_requested(Some(on)), "{on}");
        }
        for off in ["0", "false", "", "no", "n", "2", "on", "enable"] {
            assert!(!all_versions_requested(Some(off)), "{off}");
        }
        assert!(!all_versions_requested(None));
    }
}
