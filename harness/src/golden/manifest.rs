//! The manifest of one golden version, and integrity checks against it.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// File name of the manifest inside a version directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Version of the manifest format itself.
pub const MANIFEST_FORMAT_VERSION: u32 = 1;

/// `goldens/executables/<target>/v<N>/manifest.json`.
///
/// The `census` key is read by the schema bot (`schema_history::Census`): per case, the sorted
/// construct names the case's artifact uses (`pkg.Message`, `pkg.Message.field`, `pkg.Enum.VALUE`,
/// `opcode:NAME`, `registry:NAME`) and the runtime flags and load passes it depends on
/// (`flag:NAME`, `pass:NAME`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// `N` of `v<N>`.
    pub version: u32,
    /// Target name (the target config's file stem, e.g. `h100_sxm`).
    pub target: String,
    /// Creation day, `YYYY-MM-DD`.
    pub created: String,
    /// Version of the compiler that wrote the artifacts.
    pub compiler_version: String,
    /// Git commit of the compiler that wrote the artifacts (`unknown` outside a git checkout).
    pub compiler_commit: String,
    /// Case names, sorted.
    pub cases: Vec<String>,
    /// sha256 (lowercase hex) of every file of the version except the manifest, by path relative
    /// to the version directory (`/`-separated).
    pub files: BTreeMap<String, String>,
    /// Per case, the constructs its artifact uses.
    pub census: BTreeMap<String, BTreeSet<String>>,
}

/// One way a version directory disagrees with its manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntegrityProblem {
    /// The manifest is missing or unreadable.
    Manifest(String),
    /// A file the manifest lists is absent.
    Missing(String),
    /// A file is present that the manifest does not list.
    Extra(String),
    /// A file's hash differs from the manifest's.
    HashMismatch {
        /// Path relative to the version directory, as the manifest lists it.
        path: String,
        /// Hash in the manifest.
        expected: String,
        /// Hash of the file on disk.
        actual: String,
    },
}

impl std::fmt::Display for IntegrityProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IntegrityProblem::Manifest(m) => write!(f, "manifest: {m}"),
            IntegrityProblem::Missing(p) => write!(f, "{p}: listed in the manifest but missing"),
            IntegrityProblem::Extra(p) => write!(f, "{p}: present but not listed in the manifest"),
            IntegrityProblem::HashMismatch {
                path,
                expected,
                actual,
            } => write!(f, "{path}: sha256 {actual}, manifest says {expected}"),
        }
    }
}

/// Lowercase hex sha256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every regular file under `dir` except the manifest, as `/`-separated relative paths, sorted.
pub fn list_files(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(std::io::Error::other)?;
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(dir) else {
            continue;
        };
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let rel = rel.join("/");
        if rel != MANIFEST_FILE {
            out.push(rel);
        }
    }
    Ok(out)
}

/// Hashes every file of a version directory (for writing a manifest).
pub fn hash_files(dir: &Path) -> std::io::Result<BTreeMap<String, String>> {
    list_files(dir)?
        .into_iter()
        .map(|rel| {
            let bytes = crate::golden::read_store_file(dir.join(&rel))?;
            Ok((rel, sha256_hex(&bytes)))
        })
        .collect()
}

impl Manifest {
    /// Reads `dir/manifest.json`.
    pub fn read(dir: &Path) -> Result<Manifest, super::error::ManifestError> {
        use super::error::ManifestError;
        let path: PathBuf = dir.join(MANIFEST_FILE);
        let text = crate::golden::read_store_file(&path).map_err(|error| ManifestError::Read {
            path: path.clone(),
            error,
        })?;
        serde_json::from_slice(&text).map_err(|error| ManifestError::Json { path, error })
    }

    /// Serializes with sorted keys and a trailing newline (stable bytes for review and hashing).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Compares the directory with this manifest: missing, extra and modified files.
    pub fn check(&self, dir: &Path) -> Vec<IntegrityProblem> {
        let mut problems = Vec::new();
        let present = match list_files(dir) {
            Ok(p) => p,
            Err(e) => {
                return vec![IntegrityProblem::Manifest(format!(
                    "cannot list {}: {e}",
                    dir.display()
                ))]
            }
        };
        let present_set: BTreeSet<&String> = present.iter().collect();
        for (rel, expected) in &self.files {
            if !present_set.contains(rel) {
                problems.push(IntegrityProblem::Missing(rel.clone()));
                continue;
            }
            match crate::golden::read_store_file(dir.join(rel)) {
                Ok(bytes) => {
                    let actual = sha256_hex(&bytes);
                    if &actual != expected {
                        problems.push(IntegrityProblem::HashMismatch {
                            path: rel.clone(),
                            expected: expected.clone(),
                            actual,
                        });
                    }
                }
                Err(e) => problems.push(IntegrityProblem::Manifest(format!(
                    "cannot read {rel}: {e}"
                ))),
            }
        }
        for rel in present {
            if !self.files.contains_key(&rel) {
                problems.push(IntegrityProblem::Extra(rel));
            }
        }
        problems
    }
}

/// Reads the manifest of `dir` and checks the directory against it.
pub fn verify_dir(dir: &Path) -> Vec<IntegrityProblem> {
    match Manifest::read(dir) {
        Ok(m) => m.check(dir),
        Err(e) => vec![IntegrityProblem::Manifest(e.to_string())],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrity_reports_missing_extra_and_modified_files() {
        let dir = std::env::temp_dir().join(format!("golden-manifest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("case_a")).unwrap();
        std::fs::write(dir.join("case_a/executable.pb"), b"bytes").unwrap();
        std::fs::write(dir.join("case_a/module.hlo"), b"HloModule m").unwrap();
        let manifest = Manifest {
            format_version: MANIFEST_FORMAT_VERSION,
            version: 1,
            target: "h100_sxm".into(),
            created: "2026-11-29".into(),
            compiler_version: "0.1.0".into(),
            compiler_commit: "abc".into(),
            cases: vec!["case_a".into()],
            files: hash_files(&dir).unwrap(),
            census: BTreeMap::new(),
        };
        std::fs::write(dir.join(MANIFEST_FILE), manifest.to_json()).unwrap();
        assert_eq!(verify_dir(&dir), vec![]);

        std::fs::write(dir.join("case_a/executable.pb"), b"tampered").unwrap();
        std::fs::remove_file(dir.join("case_a/module.hlo")).unwrap();
        std::fs::write(dir.join("case_a/stray.txt"), b"?").unwrap();
        let problems: Vec<String> = verify_dir(&dir).iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(
            problems[0].starts_with("case_a/executable.pb: sha256 "),
            "{problems:?}"
        );
        assert_eq!(
            problems[1],
            "case_a/module.hlo: listed in the manifest but missing"
        );
        assert_eq!(
            problems[2],
            "case_a/stray.txt: present but not listed in the manifest"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
