//! The curated case list: every JAX-exported module of the corpus (`testdata/corpus/hlo/*.hlo`,
//! with its reference io file) plus the modules written for the suite (`goldens/cases/*.hlo`:
//! collectives, custom calls, aliasing), with one io file per replica where they need it.
use std::path::{Path, PathBuf};

pub use super::error::CasesError;

/// One case: a module and the io files that give its inputs and expected outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// Case name (the module's file stem), unique across the list.
    pub name: String,
    /// The module: HLO text, or StableHLO (read through `hlo_front::read_module`).
    pub module: PathBuf,
    /// One io file for a single-device case, or one per device (replica order; device order,
    /// replica-major, when the module has several partitions).
    pub io: Vec<PathBuf>,
}

impl Case {
    /// Number of devices the case runs on (replicas x partitions).
    pub fn replicas(&self) -> usize {
        self.io.len().max(1)
    }
}

/// The repository root (where `testdata/` and `goldens/` live).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Every case under the repository's corpus and `goldens/cases`, sorted by name.
pub fn curated_cases() -> Result<Vec<Case>, CasesError> {
    let root = repo_root();
    let mut cases = cases_in(&root.join("testdata/corpus/hlo"))?;
    cases.extend(cases_in(&root.join("goldens/cases"))?);
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(w) = cases.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(CasesError::Duplicate(w[0].name.clone()));
    }
    Ok(cases)
}

/// Cases in one directory: `NAME.hlo` (not `NAME.opt.hlo`), or `NAME.mlir` (StableHLO) when there
/// is no `NAME.hlo` (the corpus's `.mlir` twins of `.hlo` cases are not separate cases), with
/// `NAME.io.json`, `NAME.replica<R>.io.json` or (several partitions) `NAME.device<D>.io.json`
/// files.
pub fn cases_in(dir: &Path) -> Result<Vec<Case>, CasesError> {
    let entries = std::fs::read_dir(dir).map_err(|error| CasesError::ReadDir {
        dir: dir.to_owned(),
        error,
    })?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .collect();
    names.sort();
    let mut cases = Vec::new();
    for file in &names {
        let name = match (file.strip_suffix(".hlo"), file.strip_suffix(".mlir")) {
            (Some(n), _) => n,
            (None, Some(n)) if !names.contains(&format!("{n}.hlo")) => n,
            _ => continue,
        };
        if name.ends_with(".opt") {
            continue;
        }
        let single = format!("{name}.io.json");
        let io: Vec<PathBuf> = if names.contains(&single) {
            vec![dir.join(single)]
        } else {
            // One per replica, or (a module with several partitions) one per device.
            let numbered = |what: &str| -> Vec<PathBuf> {
                (0..)
                    .map(|r| format!("{name}.{what}{r}.io.json"))
                    .take_while(|f| names.contains(f))
                    .map(|f| dir.join(f))
                    .collect()
            };
            let replicas = numbered("replica");
            if replicas.is_empty() {
                numbered("device")
            } else {
                replicas
            }
        };
        if io.is_empty() {
            return Err(CasesError::NoIoFile {
                dir: dir.to_owned(),
                file: file.clone(),
            });
        }
        cases.push(Case {
            name: name.to_owned(),
            module: dir.join(file),
            io,
        });
    }
    Ok(cases)
}
