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
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// Default catalogue, relative to the repository root.
pub const DEFAULT_CATALOGUE: &str = "harness/gate_selftest/catalogue.toml";

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

mod catalogue;
mod scratch;

pub use catalogue::{Catalogue, Entry, Expect, Gate, Kind, Step};
use scratch::{
    apply_replace, expand_versions, needs_rebuild, newest_versions, slug, Scratch, StepError,
};

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
mod tests;
