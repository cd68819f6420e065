//! What real XLA:GPU made of the corpus, as `tools/xla_artifacts/gen.py` recorded it in
//! `testdata/xla_gpu/summary.json`: per module and target, the kernel launches, the thunk kinds,
//! the PjRt and inner-executable sizes and the compile time. The bench reads the file instead of
//! running XLA, so it needs no Python; the compile times are the generator's, taken on the machine
//! and at the time it ran, not side by side with this run.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One compile of the generator.
#[derive(Debug, Clone, PartialEq)]
pub struct XlaGpuRow {
    /// Kernel launches (custom-kernel, kernel and library-call thunks, at every depth).
    pub launches: u64,
    /// Device-to-device copy thunks (0 where the row lists none).
    pub copies: u64,
    /// The `SerializeExecutable` bytes (IFRT envelope, Riegeli, snappy).
    pub pjrt_bytes: u64,
    /// The inner `xla.gpu.GpuExecutableProto`, the form comparable with this project's artifact.
    pub executable_bytes: u64,
    /// One in-process compile, in milliseconds.
    pub compile_ms: f64,
}

/// The generator's summary, by (module, target).
#[derive(Debug, Clone, Default)]
pub struct XlaGpuSummary {
    /// The jax version that compiled it.
    pub jax: String,
    rows: BTreeMap<(String, String), XlaGpuRow>,
}

/// Why the summary could not be read. A missing file is not an error ([`XlaGpuSummary::read`]
/// returns `None`): the bench then shows `-`.
#[derive(Debug, thiserror::Error)]
pub enum XlaGpuSummaryError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not the generator's format: {source}")]
    Format {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: rows[{index}] ({module}, {target}) appears twice")]
    Duplicate {
        path: PathBuf,
        index: usize,
        module: String,
        target: String,
    },
}

#[derive(serde::Deserialize)]
struct File {
    jax: String,
    rows: Vec<FileRow>,
}

#[derive(serde::Deserialize)]
struct FileRow {
    module: String,
    target: String,
    launches: u64,
    #[serde(default)]
    thunks: BTreeMap<String, u64>,
    pjrt_bytes: u64,
    executable_bytes: u64,
    compile_ms: f64,
}

impl XlaGpuSummary {
    /// The summary under `root` (`testdata/xla_gpu/summary.json`), `None` when it is absent.
    pub fn read(root: &Path) -> Result<Option<Self>, XlaGpuSummaryError> {
        let path = root.join("testdata/xla_gpu/summary.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(XlaGpuSummaryError::Io { path, source }),
        };
        Self::parse(&text, &path).map(Some)
    }

    /// Parses the summary's text (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Self, XlaGpuSummaryError> {
        let file: File =
            serde_json::from_str(text).map_err(|source| XlaGpuSummaryError::Format {
                path: path.to_owned(),
                source,
            })?;
        let mut rows = BTreeMap::new();
        for (index, r) in file.rows.into_iter().enumerate() {
            let row = XlaGpuRow {
                launches: r.launches,
                copies: r.thunks.get("device_to_device_copy").copied().unwrap_or(0),
                pjrt_bytes: r.pjrt_bytes,
                executable_bytes: r.executable_bytes,
                compile_ms: r.compile_ms,
            };
            let key = (r.module, r.target);
            if rows.contains_key(&key) {
                let (module, target) = key;
                return Err(XlaGpuSummaryError::Duplicate {
                    path: path.to_owned(),
                    index,
                    module,
                    target,
                });
            }
            rows.insert(key, row);
        }
        Ok(Self {
            jax: file.jax,
            rows,
        })
    }

    /// The row of `module` compiled for `target`.
    pub fn get(&self, module: &str, target: &str) -> Option<&XlaGpuRow> {
        self.rows.get(&(module.to_owned(), target.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"{"module": "add", "target": "h100_sxm", "launches": 1,
        "thunks": {"custom_kernel": 1, "device_to_device_copy": 2}, "pjrt_bytes": 4407,
        "executable_bytes": 6025, "compile_ms": 538.33}"#;

    fn parse(rows: &[&str]) -> Result<XlaGpuSummary, XlaGpuSummaryError> {
        let text = format!(r#"{{"jax": "0.10.2", "rows": [{}]}}"#, rows.join(","));
        XlaGpuSummary::parse(&text, Path::new("summary.json"))
    }

    #[test]
    fn reads_a_row() {
        let s = parse(&[ROW]).unwrap();
        assert_eq!(s.jax, "0.10.2");
        assert_eq!(
            s.get("add", "h100_sxm"),
            Some(&XlaGpuRow {
                launches: 1,
                copies: 2,
                pjrt_bytes: 4407,
                executable_bytes: 6025,
                compile_ms: 538.33,
            })
        );
        assert_eq!(s.get("add", "a100_sxm_80"), None);
    }

    #[test]
    fn a_duplicate_row_is_refused() {
        let e = parse(&[ROW, ROW]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "summary.json: rows[1] (add, h100_sxm) appears twice"
        );
    }

    #[test]
    fn a_row_without_a_size_is_refused() {
        let e = parse(&[r#"{"module": "add", "target": "h100_sxm", "launches": 1}"#]).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "summary.json: not the generator's format: missing field `pjrt_bytes`"
            ),
            "{e}"
        );
    }

    #[test]
    fn an_absent_summary_is_none_and_an_unreadable_one_an_error() {
        let dir = std::env::temp_dir().join(format!("xla_gpu_summary_{}", std::process::id()));
        let summary = dir.join("testdata/xla_gpu/summary.json");
        std::fs::create_dir_all(&summary).unwrap();
        // A directory where the file should be: read_to_string fails, and not with NotFound.
        let unreadable = XlaGpuSummary::read(&dir);
        std::fs::remove_dir(&summary).unwrap();
        let absent = XlaGpuSummary::read(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(matches!(absent, Ok(None)), "{absent:?}");
        match unreadable {
            Err(XlaGpuSummaryError::Io { path, .. }) => assert_eq!(path, summary),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_committed_summary_covers_the_corpus_on_both_targets() {
        let root = crate::golden::cases::repo_root();
        let s = XlaGpuSummary::read(&root)
            .unwrap()
            .expect("testdata/xla_gpu/summary.json");
        let corpus = std::fs::read_dir(root.join("testdata/corpus/hlo")).unwrap();
        let mut n = 0;
        for e in corpus {
            let name = e.unwrap().file_name().into_string().unwrap();
            let Some(case) = name.strip_suffix(".io.json") else {
                continue;
            };
            for target in ["h100_sxm", "a100_sxm_80"] {
                let row = s
                    .get(case, target)
                    .unwrap_or_else(|| panic!("{case} {target}"));
                assert!(row.launches >= 1 && row.executable_bytes > 0 && row.compile_ms > 0.0);
            }
            n += 1;
        }
        assert_eq!(n, 43);
    }
}
