//! The scratch worktree every entry runs in: git there, commands with a time limit, the
//! rebuild of `aot` when an edit made it stale, and the steps' text replacements with their
//! `{newest:T}` / `{next:T}` placeholders.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// The scratch branch each edit is committed on (reset for every entry, deleted at the end).
const SCRATCH_BRANCH: &str = "gate-selftest/scratch";

/// The scratch worktree and what every command there needs.
pub(super) struct Scratch {
    pub(super) repo: PathBuf,
    pub(super) worktree: PathBuf,
    pub(super) target: PathBuf,
    pub(super) logs: PathBuf,
    pub(super) base: String,
    pub(super) own_aot: PathBuf,
    pub(super) timeout: Duration,
}

/// The result of a command run with a time limit.
pub(super) struct Ran {
    pub(super) success: bool,
    pub(super) secs: f64,
    pub(super) output: String,
}

impl Scratch {
    pub(super) fn git(&self, dir: &Path, args: &[&str]) -> anyhow::Result<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "gate selftest")
            .env("GIT_AUTHOR_EMAIL", "gate-selftest@example.invalid")
            .env("GIT_COMMITTER_NAME", "gate selftest")
            .env("GIT_COMMITTER_EMAIL", "gate-selftest@example.invalid")
            .output()
            .with_context(|| format!("running git {}", args.join(" ")))?;
        if !out.status.success() {
            bail!(
                "git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// A fresh worktree of `base` on the scratch branch (an old one from an interrupted run is
    /// removed first).
    pub(super) fn create(&self) -> anyhow::Result<()> {
        self.remove();
        std::fs::create_dir_all(&self.logs)
            .with_context(|| format!("creating {}", self.logs.display()))?;
        let wt = self.worktree.to_string_lossy().into_owned();
        self.git(
            &self.repo,
            &[
                "worktree",
                "add",
                "-q",
                "-f",
                "-B",
                SCRATCH_BRANCH,
                &wt,
                &self.base,
            ],
        )?;
        Ok(())
    }

    pub(super) fn remove(&self) {
        let wt = self.worktree.to_string_lossy().into_owned();
        // Failures are expected when there is nothing to remove.
        let _ = self.git(&self.repo, &["worktree", "remove", "--force", &wt]);
        let _ = std::fs::remove_dir_all(&self.worktree);
        let _ = self.git(&self.repo, &["worktree", "prune"]);
        let _ = self.git(&self.repo, &["branch", "-q", "-D", SCRATCH_BRANCH]);
    }

    pub(super) fn reset(&self) -> anyhow::Result<()> {
        self.git(&self.worktree, &["reset", "-q", "--hard", &self.base])?;
        self.git(&self.worktree, &["clean", "-q", "-fdx"])?;
        Ok(())
    }

    pub(super) fn commit(&self, name: &str) -> anyhow::Result<()> {
        self.git(&self.worktree, &["add", "-A"])?;
        self.git(
            &self.worktree,
            &[
                "-c",
                "commit.gpgsign=false",
                "commit",
                "-q",
                "--no-verify",
                "--allow-empty",
                "-m",
                &format!("gate selftest: {name}"),
            ],
        )?;
        Ok(())
    }

    pub(super) fn expand(&self, arg: &str, aot: &Path) -> String {
        arg.replace("{aot}", &aot.to_string_lossy())
            .replace("{base}", &self.base)
            .replace("{repo}", &self.worktree.to_string_lossy())
    }

    /// Runs `argv` in the worktree with the scratch target directory, output to `log`, killed
    /// (with its process group: cargo's children too) past the time limit.
    pub(super) fn run(&self, argv: &[String], log: &Path) -> anyhow::Result<Ran> {
        let Some((program, args)) = argv.split_first() else {
            bail!("empty command");
        };
        let file =
            std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let err = file.try_clone()?;
        let start = Instant::now();
        let mut child = crate::deadline::spawn_group(
            Command::new(program)
                .args(args)
                .current_dir(&self.worktree)
                .env("CARGO_TARGET_DIR", &self.target)
                .stdout(file)
                .stderr(err),
        )
        .with_context(|| format!("starting {}", argv.join(" ")))?;
        let status = crate::deadline::wait_or_kill(&mut child, self.timeout)?;
        let secs = start.elapsed().as_secs_f64();
        let mut output = std::fs::read_to_string(log).unwrap_or_default();
        if status.is_none() {
            let _ = writeln!(
                output,
                "\ngate selftest: killed after {} s (--timeout)",
                self.timeout.as_secs()
            );
        }
        Ok(Ran {
            success: status.is_some_and(|s| s.success()),
            secs,
            output,
        })
    }
}

/// Files whose change needs a rebuild of `aot` before `{aot}` can stand for the edited tree.
pub(super) fn needs_rebuild(file: &str) -> bool {
    file.ends_with(".rs")
        || file.ends_with("Cargo.toml")
        || file.ends_with("Cargo.lock")
        || file.ends_with("build.rs")
}

/// The newest compiled golden version of each target under `root/goldens/executables`.
pub(super) fn newest_versions(root: &Path) -> std::collections::BTreeMap<String, u32> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(targets) = std::fs::read_dir(root.join("goldens/executables")) else {
        return out;
    };
    for t in targets.flatten() {
        let Ok(versions) = std::fs::read_dir(t.path()) else {
            continue;
        };
        let newest = versions
            .flatten()
            .filter_map(|v| {
                v.file_name()
                    .to_str()?
                    .strip_prefix('v')?
                    .parse::<u32>()
                    .ok()
            })
            .max();
        if let Some(n) = newest {
            out.insert(t.file_name().to_string_lossy().into_owned(), n);
        }
    }
    out
}

/// Why a step of an entry could not be carried out (the entry is then broken, not caught).
#[derive(Debug, thiserror::Error)]
pub(super) enum StepError {
    /// `{newest:T}` (or another placeholder) for a target without golden versions.
    #[error("no golden versions of target {0:?}")]
    NoVersions(String),
    /// The file to edit could not be read.
    #[error("reading {file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    /// The text to replace is not in the file exactly once.
    #[error("the edit no longer applies: the text to replace occurs {count} times in {file} (must be once):\n{find}")]
    NoLongerApplies {
        file: String,
        count: usize,
        find: String,
    },
    /// The edited file could not be written.
    #[error("writing {file}: {source}")]
    Write {
        file: String,
        source: std::io::Error,
    },
}

/// `{newest:T}` as `vN` (target T's newest compiled golden version), `{next:T}` as `vN+1`, and
/// `{newest_number:T}` / `{next_number:T}` as the bare numbers, so that an entry about "the
/// newest goldens" keeps meaning that as versions are added. Other braces are left as they are.
pub(super) fn expand_versions(
    text: &str,
    versions: &std::collections::BTreeMap<String, u32>,
) -> Result<String, StepError> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('{') {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let Some(end) = tail.find('}') else {
            out.push_str(tail);
            return Ok(out);
        };
        let inner = &tail[1..end];
        let version = |target: &str| {
            versions
                .get(target)
                .copied()
                .ok_or_else(|| StepError::NoVersions(target.to_owned()))
        };
        match inner.split_once(':') {
            Some(("newest", t)) => out.push_str(&format!("v{}", version(t)?)),
            Some(("next", t)) => out.push_str(&format!("v{}", version(t)? + 1)),
            Some(("newest_number", t)) => out.push_str(&version(t)?.to_string()),
            Some(("next_number", t)) => out.push_str(&(version(t)? + 1).to_string()),
            _ => out.push_str(&tail[..=end]),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

pub(super) fn apply_replace(
    root: &Path,
    file: &str,
    find: &str,
    with: &str,
) -> Result<(), StepError> {
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).map_err(|source| StepError::Read {
        file: file.to_owned(),
        source,
    })?;
    let count = text.matches(find).count();
    if count != 1 {
        return Err(StepError::NoLongerApplies {
            file: file.to_owned(),
            count,
            find: find.to_owned(),
        });
    }
    std::fs::write(&path, text.replacen(find, with, 1)).map_err(|source| StepError::Write {
        file: file.to_owned(),
        source,
    })
}

pub(super) fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
