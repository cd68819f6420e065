//! `aot selftest`: the gate self-test. It proves that each gate does its job by committing
//! realistic breaking and safe edits to a scratch copy of the repository and running the gates on
//! each: a breaking edit must be caught by the gate its catalogue entry names, with a message that
//! names the broken construct; a safe edit must pass every gate it runs.
//!
//! The catalogue is data (`harness/gate_selftest/catalogue.toml`, described in
//! `docs/gate_selftest.md`): the gates (their commands), then one entry per edit with its steps
//! (exact text replacements, commands such as `aot schema snapshot` or `aot goldens regen`), the
//! gates it runs and what each expected gate must say.
//!
//! One scratch worktree (a `git worktree` of `HEAD`) and one scratch target directory serve every
//! entry, so an edit that touches Rust rebuilds incrementally. Entries whose steps touch no Rust
//! use this very binary for `{aot}` (the schema bot compiles protos from source), so they need no
//! build at all; the catalogue gives such entries only the bot, which is what `--quick` runs.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde::Deserialize;

/// Default catalogue, relative to the repository root.
pub const DEFAULT_CATALOGUE: &str = "harness/gate_selftest/catalogue.toml";

/// The scratch branch each edit is committed on (reset for every entry, deleted at the end).
const SCRATCH_BRANCH: &str = "gate-selftest/scratch";

/// Arguments of `aot selftest`.
#[derive(Debug, clap::Args)]
pub struct SelftestArgs {
    /// Catalogue file (default: `harness/gate_selftest/catalogue.toml` in the repository).
    #[arg(long)]
    pub catalogue: Option<PathBuf>,
    /// Only the entries marked `quick = true` (the subset `.ci/run` runs).
    #[arg(long)]
    pub quick: bool,
    /// Only the named entry (repeatable).
    #[arg(long = "only")]
    pub only: Vec<String>,
    /// Print the entries with their gates and exit.
    #[arg(long)]
    pub list: bool,
    /// Repository whose `HEAD` is copied (default: the git top level of the current directory).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// Scratch directory: the worktree, the shared target directory and the gates' logs
    /// (default: `$CARGO_TARGET_DIR/gate-selftest`, else `<repo>/target/gate-selftest`).
    #[arg(long)]
    pub scratch: Option<PathBuf>,
    /// Time limit of one gate command (or build) in seconds; past it the command is killed and
    /// the entry fails.
    #[arg(long, default_value_t = 1800)]
    pub timeout: u64,
    /// Keep the scratch worktree and branch after the run (for inspecting an entry).
    #[arg(long)]
    pub keep: bool,
}

/// The catalogue file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    /// The gates by name.
    pub gate: BTreeMap<String, Gate>,
    /// The edits, in the order they run.
    pub edit: Vec<Entry>,
}

/// One gate: how to run it in the scratch worktree.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    /// What the gate is (shown by `--list`).
    pub description: String,
    /// The command (placeholders: `{aot}`, `{base}`, `{repo}`; in edit steps also `{newest:T}`,
    /// `{next:T}`, `{newest_number:T}` and `{next_number:T}`: target T's newest compiled golden
    /// version and the one after, see `expand_versions`). It catches an edit when it exits
    /// non-zero.
    pub command: Vec<String>,
    /// A build to run first (e.g. `cargo test --no-run ...`): when it fails the edit does not
    /// compile, which is a broken catalogue entry, not a catch.
    #[serde(default)]
    pub prebuild: Vec<String>,
}

/// Whether an edit must be caught or must pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Breaks the compiler/runtime contract: the expected gates must catch it.
    Break,
    /// Keeps the contract: every gate it runs must pass.
    Safe,
}

/// One catalogue entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Unique name (used by `--only` and in the score table).
    pub name: String,
    /// Break or safe.
    pub kind: Kind,
    /// What the edit does and why it is (or is not) a break.
    pub summary: String,
    /// Where it comes from (e.g. "issue 11 blind spot 3").
    #[serde(default)]
    pub origin: String,
    /// In the `--quick` subset.
    #[serde(default)]
    pub quick: bool,
    /// Gates to run, by name.
    pub gates: Vec<String>,
    /// For breaks: the gates that must catch it and a fragment of what each must say.
    #[serde(default)]
    pub expect: Vec<Expect>,
    /// The edit, applied in order.
    pub step: Vec<Step>,
}

/// A gate that must catch a break, and a fragment its output must contain.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Gate name.
    pub gate: String,
    /// Fragment of the gate's output (case-sensitive), naming the broken construct.
    pub says: String,
}

/// One step of an edit.
#[derive(Debug, Deserialize)]
#[serde(tag = "do", rename_all = "lowercase", deny_unknown_fields)]
pub enum Step {
    /// Replace the one occurrence of `find` in `file` (relative to the repository) by `with`.
    /// `find` must occur exactly once, so a stale entry fails loudly instead of editing nothing.
    Replace {
        /// File relative to the repository root.
        file: String,
        /// Text to find (exactly one occurrence).
        find: String,
        /// Replacement.
        with: String,
    },
    /// Run a command in the scratch worktree (placeholders as for gates), e.g.
    /// `["{aot}", "schema", "snapshot"]`; it must succeed.
    Run {
        /// Program and arguments, not a shell line; with `{aot}` in it, `aot` is first rebuilt
        /// from the edited tree when an edit made it stale.
        command: Vec<String>,
    },
}

impl Catalogue {
    /// Parses and checks a catalogue (unique names, known gates, expectations only on breaks).
    pub fn parse(text: &str) -> anyhow::Result<Catalogue> {
        let c: Catalogue = toml::from_str(text)?;
        let mut names = BTreeSet::new();
        for (name, g) in &c.gate {
            if g.command.is_empty() {
                bail!("gate {name}: empty command");
            }
        }
        for e in &c.edit {
            if !names.insert(e.name.as_str()) {
                bail!("edit {}: the name is used twice", e.name);
            }
            if e.step.is_empty() {
                bail!("edit {}: no steps", e.name);
            }
            if e.gates.is_empty() {
                bail!("edit {}: no gates", e.name);
            }
            for g in &e.gates {
                if !c.gate.contains_key(g) {
                    bail!("edit {}: unknown gate {g}", e.name);
                }
            }
            match e.kind {
                Kind::Break if e.expect.is_empty() => {
                    bail!(
                        "edit {}: a break must name the gate that catches it",
                        e.name
                    )
                }
                Kind::Safe if !e.expect.is_empty() => {
                    bail!("edit {}: a safe edit expects no gate to catch it", e.name)
                }
                _ => {}
            }
            for x in &e.expect {
                if !e.gates.contains(&x.gate) {
                    bail!(
                        "edit {}: expects gate {} to catch it but does not run it",
                        e.name,
                        x.gate
                    );
                }
                if x.says.is_empty() {
                    bail!("edit {}: empty `says` for gate {}", e.name, x.gate);
                }
            }
            for s in &e.step {
                if let Step::Run { command } = s {
                    if command.is_empty() {
                        bail!("edit {}: a run step with an empty command", e.name);
                    }
                }
            }
        }
        Ok(c)
    }
}

/// How one gate ended on one edit.
#[derive(Debug)]
struct GateRun {
    gate: String,
    failed: bool,
    secs: f64,
    log: PathBuf,
    output: String,
}

/// The verdict on one edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Caught,
    Passed,
    Missed,
    FalseAlarm,
    Broken,
}

impl Verdict {
    fn ok(self) -> bool {
        matches!(self, Verdict::Caught | Verdict::Passed)
    }
    fn label(self) -> &'static str {
        match self {
            Verdict::Caught => "caught",
            Verdict::Passed => "passed",
            Verdict::Missed => "MISSED",
            Verdict::FalseAlarm => "FALSE ALARM",
            Verdict::Broken => "BROKEN ENTRY",
        }
    }
}

struct Outcome {
    name: String,
    kind: Kind,
    expected: String,
    caught_by: Vec<String>,
    verdict: Verdict,
    problems: Vec<String>,
    secs: f64,
}

/// The scratch worktree and what every command there needs.
struct Scratch {
    repo: PathBuf,
    worktree: PathBuf,
    target: PathBuf,
    logs: PathBuf,
    base: String,
    own_aot: PathBuf,
    timeout: Duration,
}

/// The result of a command run with a time limit.
struct Ran {
    success: bool,
    secs: f64,
    output: String,
}

impl Scratch {
    fn git(&self, dir: &Path, args: &[&str]) -> anyhow::Result<String> {
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
    fn create(&self) -> anyhow::Result<()> {
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

    fn remove(&self) {
        let wt = self.worktree.to_string_lossy().into_owned();
        // Failures are expected when there is nothing to remove.
        let _ = self.git(&self.repo, &["worktree", "remove", "--force", &wt]);
        let _ = std::fs::remove_dir_all(&self.worktree);
        let _ = self.git(&self.repo, &["worktree", "prune"]);
        let _ = self.git(&self.repo, &["branch", "-q", "-D", SCRATCH_BRANCH]);
    }

    fn reset(&self) -> anyhow::Result<()> {
        self.git(&self.worktree, &["reset", "-q", "--hard", &self.base])?;
        self.git(&self.worktree, &["clean", "-q", "-fdx"])?;
        Ok(())
    }

    fn commit(&self, name: &str) -> anyhow::Result<()> {
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

    fn expand(&self, arg: &str, aot: &Path) -> String {
        arg.replace("{aot}", &aot.to_string_lossy())
            .replace("{base}", &self.base)
            .replace("{repo}", &self.worktree.to_string_lossy())
    }

    /// Runs `argv` in the worktree with the scratch target directory, output to `log`, killed
    /// (with its process group: cargo's children too) past the time limit.
    fn run(&self, argv: &[String], log: &Path) -> anyhow::Result<Ran> {
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
fn needs_rebuild(file: &str) -> bool {
    file.ends_with(".rs")
        || file.ends_with("Cargo.toml")
        || file.ends_with("Cargo.lock")
        || file.ends_with("build.rs")
}

/// The newest compiled golden version of each target under `root/goldens/executables`.
fn newest_versions(root: &Path) -> std::collections::BTreeMap<String, u32> {
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
enum StepError {
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
fn expand_versions(
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

fn apply_replace(root: &Path, file: &str, find: &str, with: &str) -> Result<(), StepError> {
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

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Runs one entry: reset, steps, commit, gates, verdict.
fn run_entry(
    s: &Scratch,
    c: &Catalogue,
    e: &Entry,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let start = Instant::now();
    let logs = s.logs.join(slug(&e.name));
    // Logs of an earlier run would be mistaken for this one's.
    let _ = std::fs::remove_dir_all(&logs);
    std::fs::create_dir_all(&logs)?;
    let expected = match e.kind {
        Kind::Break => e
            .expect
            .iter()
            .map(|x| x.gate.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        Kind::Safe => "none".to_owned(),
    };
    let mut outcome = Outcome {
        name: e.name.clone(),
        kind: e.kind,
        expected,
        caught_by: Vec::new(),
        verdict: Verdict::Broken,
        problems: Vec::new(),
        secs: 0.0,
    };
    s.reset()?;
    // `{aot}` is this binary until a step touches Rust; then the edited tree's own build.
    let built_aot = s.target.join("debug").join("aot");
    let mut aot = s.own_aot.clone();
    let mut stale = false;
    let ensure_aot = |aot: &mut PathBuf, stale: &mut bool| -> anyhow::Result<Option<String>> {
        if !*stale {
            return Ok(None);
        }
        let argv: Vec<String> = ["cargo", "build", "-q", "-p", "harness", "--bin", "aot"]
            .map(String::from)
            .to_vec();
        let ran = s.run(&argv, &logs.join("build-aot.log"))?;
        if !ran.success {
            return Ok(Some(format!(
                "the edited tree does not build (`cargo build -p harness --bin aot`, {:.0} s): see {}",
                ran.secs,
                logs.join("build-aot.log").display()
            )));
        }
        *aot = built_aot.clone();
        *stale = false;
        Ok(None)
    };
    // `{newest:T}` / `{next:T}` name golden versions as they were before the edit's first step.
    let versions = newest_versions(&s.worktree);
    for (i, step) in e.step.iter().enumerate() {
        match step {
            Step::Replace { file, find, with } => {
                let replaced = (|| {
                    let file = expand_versions(file, &versions)?;
                    let find = expand_versions(find, &versions)?;
                    let with = expand_versions(with, &versions)?;
                    apply_replace(&s.worktree, &file, &find, &with).map(|()| file)
                })();
                let file = match replaced {
                    Ok(file) => file,
                    Err(msg) => {
                        outcome.problems.push(format!("step {}: {msg}", i + 1));
                        outcome.secs = start.elapsed().as_secs_f64();
                        return Ok(outcome);
                    }
                };
                stale |= needs_rebuild(&file);
            }
            Step::Run { command } => {
                if command.iter().any(|a| a.contains("{aot}")) {
                    if let Some(msg) = ensure_aot(&mut aot, &mut stale)? {
                        outcome.problems.push(msg);
                        outcome.secs = start.elapsed().as_secs_f64();
                        return Ok(outcome);
                    }
                }
                let argv = command
                    .iter()
                    .map(|a| expand_versions(&s.expand(a, &aot), &versions))
                    .collect::<Result<Vec<String>, StepError>>();
                let argv = match argv {
                    Ok(argv) => argv,
                    Err(msg) => {
                        outcome.problems.push(format!("step {}: {msg}", i + 1));
                        outcome.secs = start.elapsed().as_secs_f64();
                        return Ok(outcome);
                    }
                };
                let log = logs.join(format!("step{}.log", i + 1));
                let ran = s.run(&argv, &log)?;
                if !ran.success {
                    outcome.problems.push(format!(
                        "step {} (`{}`) failed: see {}",
                        i + 1,
                        command.join(" "),
                        log.display()
                    ));
                    outcome.secs = start.elapsed().as_secs_f64();
                    return Ok(outcome);
                }
            }
        }
    }
    s.commit(&e.name)?;
    let mut runs = Vec::new();
    for g in &e.gates {
        let Some(gate) = c.gate.get(g) else {
            bail!("unknown gate {g}");
        };
        if gate.command.iter().any(|a| a.contains("{aot}")) {
            if let Some(msg) = ensure_aot(&mut aot, &mut stale)? {
                outcome.problems.push(msg);
                outcome.secs = start.elapsed().as_secs_f64();
                return Ok(outcome);
            }
        }
        if !gate.prebuild.is_empty() {
            let argv: Vec<String> = gate.prebuild.iter().map(|a| s.expand(a, &aot)).collect();
            let log = logs.join(format!("{g}.build.log"));
            let ran = s.run(&argv, &log)?;
            if !ran.success {
                outcome.problems.push(format!(
                    "gate {g}'s build (`{}`) failed, so the edit does not compile: see {}",
                    gate.prebuild.join(" "),
                    log.display()
                ));
                outcome.secs = start.elapsed().as_secs_f64();
                return Ok(outcome);
            }
        }
        let argv: Vec<String> = gate.command.iter().map(|a| s.expand(a, &aot)).collect();
        let log = logs.join(format!("{g}.log"));
        let ran = s.run(&argv, &log)?;
        writeln!(
            out,
            "   {g}: {} in {:.1} s",
            if ran.success { "passed" } else { "FAILED" },
            ran.secs
        )?;
        runs.push(GateRun {
            gate: g.clone(),
            failed: !ran.success,
            secs: ran.secs,
            log,
            output: ran.output,
        });
    }
    outcome.caught_by = runs
        .iter()
        .filter(|r| r.failed)
        .map(|r| r.gate.clone())
        .collect();
    outcome.verdict = judge(e, &runs, &mut outcome.problems);
    outcome.secs = start.elapsed().as_secs_f64();
    Ok(outcome)
}

/// A break is caught when every expected gate failed and said the expected fragment; a safe
/// edit passes when no gate failed.
fn judge(e: &Entry, runs: &[GateRun], problems: &mut Vec<String>) -> Verdict {
    match e.kind {
        Kind::Break => {
            for x in &e.expect {
                let Some(r) = runs.iter().find(|r| r.gate == x.gate) else {
                    problems.push(format!("gate {} did not run", x.gate));
                    continue;
                };
                if !r.failed {
                    problems.push(format!(
                        "expected gate {} to catch it, but it passed ({:.1} s; log {})",
                        x.gate,
                        r.secs,
                        r.log.display()
                    ));
                } else if !r.output.contains(&x.says) {
                    problems.push(format!(
                        "gate {} failed, but its output does not say `{}` (log {})",
                        x.gate,
                        x.says,
                        r.log.display()
                    ));
                }
            }
            if problems.is_empty() {
                Verdict::Caught
            } else {
                Verdict::Missed
            }
        }
        Kind::Safe => {
            for r in runs.iter().filter(|r| r.failed) {
                problems.push(format!(
                    "gate {} failed on a safe edit (log {})",
                    r.gate,
                    r.log.display()
                ));
            }
            if problems.is_empty() {
                Verdict::Passed
            } else {
                Verdict::FalseAlarm
            }
        }
    }
}

fn repo_of(arg: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match arg {
        Some(p) => p.to_path_buf(),
        None => std::env::current_dir()?,
    };
    let out = Command::new("git")
        .arg("-C")
        .arg(&dir)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .context("running git")?;
    if !out.status.success() {
        bail!("{} is not inside a git repository", dir.display());
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn table(outcomes: &[Outcome]) -> String {
    let head = [
        "edit",
        "kind",
        "expected gate",
        "caught by",
        "verdict",
        "time",
    ];
    let rows: Vec<[String; 6]> = outcomes
        .iter()
        .map(|o| {
            [
                o.name.clone(),
                match o.kind {
                    Kind::Break => "break".to_owned(),
                    Kind::Safe => "safe".to_owned(),
                },
                o.expected.clone(),
                if o.caught_by.is_empty() {
                    "-".to_owned()
                } else {
                    o.caught_by.join(", ")
                },
                o.verdict.label().to_owned(),
                format!("{:.0} s", o.secs),
            ]
        })
        .collect();
    let mut w = head.map(str::len);
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.len());
        }
    }
    let line = |cells: [&str; 6]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            let _ = write!(l, "| {c:<width$} ", width = w[i]);
        }
        l.push_str("|\n");
        l
    };
    let mut t = line(head);
    t.push_str(&line(
        w.map(|n| "-".repeat(n)).each_ref().map(String::as_str),
    ));
    for r in &rows {
        t.push_str(&line(r.each_ref().map(String::as_str)));
    }
    t
}

/// Runs `aot selftest`; the exit code (0 every edit judged right, 1 a miss, a false alarm or a
/// broken entry).
pub fn run(args: &SelftestArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let repo = repo_of(args.repo.as_deref())?;
    let cat_path = args
        .catalogue
        .clone()
        .unwrap_or_else(|| repo.join(DEFAULT_CATALOGUE));
    let text = std::fs::read_to_string(&cat_path)
        .with_context(|| format!("reading {}", cat_path.display()))?;
    let catalogue =
        Catalogue::parse(&text).with_context(|| format!("in {}", cat_path.display()))?;
    for name in &args.only {
        if !catalogue.edit.iter().any(|e| &e.name == name) {
            bail!("--only {name}: no such edit in {}", cat_path.display());
        }
    }
    let selected: Vec<&Entry> = catalogue
        .edit
        .iter()
        .filter(|e| !args.quick || e.quick)
        .filter(|e| args.only.is_empty() || args.only.contains(&e.name))
        .collect();
    if args.list {
        for (name, g) in &catalogue.gate {
            writeln!(
                out,
                "gate {name}: {} (`{}`)",
                g.description,
                g.command.join(" ")
            )?;
        }
        for e in &selected {
            writeln!(
                out,
                "{:<40} {:<5} gates {:<22} expect {}{}",
                e.name,
                match e.kind {
                    Kind::Break => "break",
                    Kind::Safe => "safe",
                },
                e.gates.join(","),
                if e.expect.is_empty() {
                    "none".to_owned()
                } else {
                    e.expect
                        .iter()
                        .map(|x| format!("{} `{}`", x.gate, x.says))
                        .collect::<Vec<_>>()
                        .join("; ")
                },
                if e.quick { " (quick)" } else { "" }
            )?;
        }
        return Ok(0);
    }
    let scratch_root = match &args.scratch {
        Some(p) => p.clone(),
        None => std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo.join("target"))
            .join("gate-selftest"),
    };
    std::fs::create_dir_all(&scratch_root)?;
    let scratch_root = scratch_root.canonicalize()?;
    let base = {
        let out = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["rev-parse", "HEAD"])
            .output()?;
        if !out.status.success() {
            bail!("{} has no HEAD commit", repo.display());
        }
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let s = Scratch {
        repo: repo.clone(),
        worktree: scratch_root.join("worktree"),
        target: scratch_root.join("target"),
        logs: scratch_root.join("logs"),
        base,
        own_aot: std::env::current_exe().context("locating this aot binary")?,
        timeout: Duration::from_secs(args.timeout),
    };
    writeln!(
        out,
        "gate selftest: {} edit(s) on a worktree of HEAD {} in {}",
        selected.len(),
        &s.base[..s.base.len().min(12)],
        s.worktree.display()
    )?;
    let start = Instant::now();
    s.create()?;
    let mut outcomes = Vec::new();
    for (i, e) in selected.iter().enumerate() {
        writeln!(
            out,
            "[{}/{}] {}: {}",
            i + 1,
            selected.len(),
            e.name,
            e.summary
        )?;
        out.flush()?;
        let o = match run_entry(&s, &catalogue, e, out) {
            Ok(o) => o,
            Err(err) => Outcome {
                name: e.name.clone(),
                kind: e.kind,
                expected: String::new(),
                caught_by: Vec::new(),
                verdict: Verdict::Broken,
                problems: vec![format!("{err:#}")],
                secs: 0.0,
            },
        };
        writeln!(out, "   => {} ({:.0} s)", o.verdict.label(), o.secs)?;
        for p in &o.problems {
            writeln!(out, "      {p}")?;
        }
        out.flush()?;
        outcomes.push(o);
    }
    if !args.keep {
        s.remove();
    }
    let total = start.elapsed().as_secs_f64();
    writeln!(out, "\n{}", table(&outcomes))?;
    let breaks = outcomes.iter().filter(|o| o.kind == Kind::Break).count();
    let caught = outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Caught)
        .count();
    let safe = outcomes.iter().filter(|o| o.kind == Kind::Safe).count();
    let passed = outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Passed)
        .count();
    writeln!(
        out,
        "score: {caught} of {breaks} breaks caught, {passed} of {safe} safe edits passed; {:.0} s in all (logs in {})",
        total,
        s.logs.display()
    )?;
    let bad: Vec<&Outcome> = outcomes.iter().filter(|o| !o.verdict.ok()).collect();
    for o in &bad {
        writeln!(out, "{}: {}", o.name, o.verdict.label())?;
        for p in &o.problems {
            writeln!(out, "    {p}")?;
        }
    }
    Ok(if bad.is_empty() { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_placeholders_name_the_newest_and_the_next() {
        let versions = [("h100_sxm".to_owned(), 9)].into_iter().collect();
        assert_eq!(
            expand_versions(
                "goldens/executables/h100_sxm/{newest:h100_sxm} -> {next:h100_sxm}: \"version\": {next_number:h100_sxm} {keep}",
                &versions
            )
            .unwrap(),
            "goldens/executables/h100_sxm/v9 -> v10: \"version\": 10 {keep}"
        );
        assert_eq!(
            expand_versions("{newest:a100}", &versions)
                .unwrap_err()
                .to_string(),
            "no golden versions of target \"a100\""
        );
        assert_eq!(
            expand_versions("message M { x", &versions).unwrap(),
            "message M { x"
        );
    }

    const GATES: &str = "[gate.bot]\ndescription = \"d\"\ncommand = [\"{aot}\"]\n";

    fn parse_err(edit: &str) -> String {
        match Catalogue::parse(&format!("{GATES}{edit}")) {
            Ok(_) => panic!("the catalogue parsed"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn the_repository_catalogue_parses() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("gate_selftest/catalogue.toml");
        let text = std::fs::read_to_string(&path).expect("the catalogue is in the repository");
        let c = Catalogue::parse(&text).expect("the catalogue is valid");
        assert!(c.edit.iter().any(|e| e.quick), "no quick subset");
        assert!(c.edit.iter().filter(|e| e.kind == Kind::Safe).count() >= 3);
    }

    /// Every entry's text edits still apply to today's tree: each `find` occurs exactly once in
    /// its file, after the entry's earlier edits (applied in memory, nothing is written). A
    /// refactor that moves an anchor then fails `cargo test` here, instead of only the
    /// self-test's run in CI reporting a BROKEN ENTRY (which is how four went stale once).
    #[test]
    fn every_catalogue_edit_applies_to_the_tree() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the workspace root");
        let text = std::fs::read_to_string(root.join("harness/gate_selftest/catalogue.toml"))
            .expect("the catalogue is in the repository");
        let c = Catalogue::parse(&text).expect("the catalogue is valid");
        let mut stale = Vec::new();
        let versions = newest_versions(root);
        for e in &c.edit {
            let mut files: BTreeMap<String, String> = BTreeMap::new();
            let mut ran = false;
            for (i, step) in e.step.iter().enumerate() {
                let Step::Replace { file, find, with } = step else {
                    ran = true;
                    continue;
                };
                let expand =
                    |t: &str| expand_versions(t, &versions).unwrap_or_else(|e| panic!("{e}"));
                let (file, find, with) = (expand(file), expand(find), expand(with));
                let text = match files.get(file.as_str()) {
                    Some(t) => t.clone(),
                    None => match std::fs::read_to_string(root.join(&file)) {
                        Ok(t) => t,
                        // A file a `run` step makes (a copied golden version): only the run
                        // itself can show whether the anchor is there.
                        Err(err) if ran && err.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(err) => {
                            stale.push(format!("{} step {}: reading {file}: {err}", e.name, i + 1));
                            continue;
                        }
                    },
                };
                let n = text.matches(find.as_str()).count();
                if n != 1 {
                    stale.push(format!(
                        "{} step {}: the text occurs {n} times in {file} (must be once)",
                        e.name,
                        i + 1
                    ));
                    continue;
                }
                files.insert(file, text.replacen(find.as_str(), &with, 1));
            }
        }
        assert!(
            stale.is_empty(),
            "stale catalogue entries:\n{}",
            stale.join("\n")
        );
    }

    #[test]
    fn a_break_without_expectation_is_rejected() {
        let e = "[[edit]]\nname = \"x\"\nkind = \"break\"\nsummary = \"s\"\ngates = [\"bot\"]\n\
                 [[edit.step]]\ndo = \"run\"\ncommand = [\"true\"]\n";
        assert_eq!(
            parse_err(e),
            "edit x: a break must name the gate that catches it"
        );
    }

    #[test]
    fn an_unknown_gate_is_rejected() {
        let e = "[[edit]]\nname = \"x\"\nkind = \"safe\"\nsummary = \"s\"\ngates = [\"nope\"]\n\
                 [[edit.step]]\ndo = \"run\"\ncommand = [\"true\"]\n";
        assert_eq!(parse_err(e), "edit x: unknown gate nope");
    }

    #[test]
    fn an_expectation_on_a_gate_not_run_is_rejected() {
        let e = "[gate.goldens]\ndescription = \"d\"\ncommand = [\"true\"]\n\
                 [[edit]]\nname = \"x\"\nkind = \"break\"\nsummary = \"s\"\ngates = [\"bot\"]\n\
                 expect = [{ gate = \"goldens\", says = \"y\" }]\n\
                 [[edit.step]]\ndo = \"run\"\ncommand = [\"true\"]\n";
        assert_eq!(
            parse_err(e),
            "edit x: expects gate goldens to catch it but does not run it"
        );
    }

    #[test]
    fn a_replacement_must_match_once() {
        let dir = std::env::temp_dir().join(format!("gate-selftest-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("f.txt"), "a b a").expect("write");
        let err = apply_replace(&dir, "f.txt", "a", "c").expect_err("two occurrences");
        assert_eq!(
            err.to_string(),
            "the edit no longer applies: the text to replace occurs 2 times in f.txt (must be once):\na"
        );
        apply_replace(&dir, "f.txt", "b", "c").expect("one occurrence");
        assert_eq!(
            std::fs::read_to_string(dir.join("f.txt")).expect("read"),
            "a c a"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn run_of(gate: &str, failed: bool, output: &str) -> GateRun {
        GateRun {
            gate: gate.into(),
            failed,
            secs: 1.0,
            log: PathBuf::from("l"),
            output: output.into(),
        }
    }

    fn entry(kind: Kind, expect: Vec<Expect>) -> Entry {
        Entry {
            name: "e".into(),
            kind,
            summary: String::new(),
            origin: String::new(),
            quick: false,
            gates: vec!["bot".into()],
            expect,
            step: Vec::new(),
        }
    }

    #[test]
    fn a_break_the_gate_passes_is_missed_with_a_clear_message() {
        let e = entry(
            Kind::Break,
            vec![Expect {
                gate: "bot".into(),
                says: "shmem_bytes".into(),
            }],
        );
        let mut p = Vec::new();
        assert_eq!(
            judge(&e, &[run_of("bot", false, "")], &mut p),
            Verdict::Missed
        );
        assert_eq!(
            p,
            ["expected gate bot to catch it, but it passed (1.0 s; log l)"]
        );
    }

    #[test]
    fn a_failure_that_does_not_name_the_construct_is_not_a_catch() {
        let e = entry(
            Kind::Break,
            vec![Expect {
                gate: "bot".into(),
                says: "shmem_bytes".into(),
            }],
        );
        let mut p = Vec::new();
        let v = judge(&e, &[run_of("bot", true, "error: internal")], &mut p);
        assert_eq!(v, Verdict::Missed);
        assert_eq!(
            p,
            ["gate bot failed, but its output does not say `shmem_bytes` (log l)"]
        );
        let mut p = Vec::new();
        let v = judge(&e, &[run_of("bot", true, "error[x]: shmem_bytes")], &mut p);
        assert_eq!((v, p.len()), (Verdict::Caught, 0));
    }

    #[test]
    fn a_safe_edit_a_gate_fails_is_a_false_alarm() {
        let e = entry(Kind::Safe, Vec::new());
        let mut p = Vec::new();
        assert_eq!(
            judge(&e, &[run_of("bot", true, "")], &mut p),
            Verdict::FalseAlarm
        );
        assert_eq!(p, ["gate bot failed on a safe edit (log l)"]);
    }
}
