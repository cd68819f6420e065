//! `aot forward --old-aot BIN`: forward compatibility on the real older runtime binary.
//!
//! The schema-level forward check (`harness/tests/goldens.rs`, `forward_compat::*`) reads today's
//! artifacts with an older *schema*; it cannot see a change in how an older *runtime* interprets a
//! field. This command runs the older runtime itself: every golden case is compiled with today's
//! compiler (default options) for each golden target, run by today's runtime in process, and then
//! handed to the older `aot run` (built from an older revision by `ci/forward_compat.sh`) on the
//! emulated device of the same target config.
//!
//! # How the older runtime's outputs are compared bit for bit
//!
//! `aot run` cannot write its outputs; it only compares them with an io file, with the dtype
//! tolerance of `hlo_eval::io` (exact for integers and `pred`, relative for floats). So today's outputs
//! become the io file's expectations, and a case passes only when the older runtime reports
//! **every** output `OK` with `max_abs_err=0`: for floats that means every element is equal as a
//! number. What this cannot see: the sign of a zero (`-0 == +0`) and NaN payloads (io files write
//! every NaN as `"nan"`); both are documented in docs/compatibility.md. Today's outputs themselves
//! are checked against the recorded expectations (the newest golden version's io files, else the
//! case's reference io file) with the usual tolerance, so a passing row means: the older runtime
//! computes exactly what today's runtime computes, and that is the recorded answer.
//!
//! With `--old-compiler BIN` the artifacts come from that older `xla_compile` instead (the nightly
//! backward check beyond the committed goldens, `ci/backward_nightly.sh`): today's runtime must
//! then reproduce, exactly, what the older runtime computes for an older artifact.
//!
//! Exit status: 0 every row passes, 1 any row fails, 2 usage or internal error (including an older
//! CLI that lacks an option the check needs: it is named, never silently skipped).
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use hlo_eval::{case_to_json, IoCase};
use proto::prost::Message;
use runtime::DeviceDescription;

use crate::golden::cases::{curated_cases, repo_root, Case};
use crate::golden::regen::{io_file_name, run_artifact, TARGET_FILE};
use crate::golden::store::GoldenStore;

/// Arguments of `aot forward`.
#[derive(Debug, clap::Args)]
pub struct ForwardArgs {
    /// The older `aot` binary whose runtime is checked (`ci/forward_compat.sh` builds it).
    #[arg(long)]
    pub old_aot: PathBuf,
    /// The older revision (a commit): named in the table, and its schema names the constructs
    /// an artifact uses that the older revision does not have.
    #[arg(long)]
    pub old_rev: Option<String>,
    /// The older revision's `xla_compile`. A row that fails is then run again with the older
    /// revision's own artifact: when the older runtime cannot run that either, the row is
    /// `OLD-BROKEN`. It is listed, and fails unless the case is new since `--old-rev` (its module
    /// absent there: the older revision never had it, so today's compiler broke nothing); a case
    /// the older revision had and could not run is a row nobody has checked, never a pass. With
    /// `--backward` it produces the artifacts.
    #[arg(long)]
    pub old_compiler: Option<PathBuf>,
    /// The nightly backward direction: artifacts from `--old-compiler`, today's runtime must
    /// compute exactly what the older runtime computes for them.
    #[arg(long, requires = "old_compiler")]
    pub backward: bool,
    /// Only these golden targets (repeatable; default: every target of the golden store).
    #[arg(long = "target")]
    pub targets: Vec<String>,
    /// Only cases whose name contains this text.
    #[arg(long)]
    pub case: Option<String>,
    /// Directory for the artifacts and io files handed to the older binaries (default: a new
    /// directory under the system's temporary directory, removed afterwards).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Seconds one run of an older binary may take before it is killed and the row fails.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    /// Cases checked at the same time (default: the number of CPUs, at most 4).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// The verdict of one row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The older runtime computes exactly today's outputs, and they match the expectations.
    Ok,
    /// The older runtime refused to load or run the artifact.
    Rejected(String),
    /// The older runtime ran it and an output differs from today's runtime's.
    Differs(String),
    /// Today's outputs do not match the recorded expectations (the older runtime is not to
    /// blame; the row still fails).
    Expectation(String),
    /// The artifact could not be produced or run by today's side, or an older binary failed in
    /// a way that says nothing about compatibility (timeout, crash, unreadable output).
    Error(String),
    /// The older runtime fails the same case with its own compiler's artifact. Excused (listed,
    /// not failed) only when the case is new since the older revision, which never had it; a
    /// case the older revision had fails the row: whatever broke it there, this row checked
    /// nothing, and an excuse here once hid four rows today's compiler broke.
    OldBroken {
        /// What the older revision did with today's artifact and with its own.
        detail: String,
        /// Whether the case's module is absent at the older revision.
        case_is_new: bool,
    },
}

impl Verdict {
    /// Whether the row fails the check.
    pub fn fails(&self) -> bool {
        !matches!(
            self,
            Verdict::Ok
                | Verdict::OldBroken {
                    case_is_new: true,
                    ..
                }
        )
    }

    /// The word in the table's verdict column.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Ok => "OK",
            Verdict::Rejected(_) => "REJECTED",
            Verdict::Differs(_) => "DIFFERS",
            Verdict::Expectation(_) => "EXPECTATION",
            Verdict::Error(_) => "ERROR",
            Verdict::OldBroken { .. } => "OLD-BROKEN",
        }
    }

    fn detail(&self) -> &str {
        match self {
            Verdict::Ok => "",
            Verdict::Rejected(s)
            | Verdict::Differs(s)
            | Verdict::Expectation(s)
            | Verdict::Error(s)
            | Verdict::OldBroken { detail: s, .. } => s,
        }
    }
}

/// One checked (case, target).
#[derive(Debug, Clone)]
pub struct Row {
    /// Case name.
    pub case: String,
    /// Golden target name (`h100_sxm`).
    pub target: String,
    /// What happened.
    pub verdict: Verdict,
}

/// What the older `aot run` printed about one run, read from its output.
#[derive(Debug, Clone, PartialEq)]
pub enum OldRun {
    /// It ran and printed one verdict line per output: each line and its `max_abs_err`
    /// (`None` for a structural mismatch, which prints none).
    Compared(Vec<(String, Option<f64>, bool)>),
    /// It failed with an error (exit 2): the error text.
    Failed(String),
}

/// Reads the older `aot run`'s stdout/stderr and exit code. The format is the one `aot run`
/// has printed since it exists (`[replica R ]output I SHAPE: OK max_abs_err=E` or `...: MISMATCH
/// ...`, then a summary line; errors as `error: ...` on stderr with exit 2).
pub fn parse_old_run(code: Option<i32>, stdout: &str, stderr: &str) -> OldRun {
    if code != Some(0) && code != Some(1) {
        let msg = stderr
            .lines()
            .find_map(|l| l.strip_prefix("error: "))
            .map(str::to_owned)
            .unwrap_or_else(|| {
                let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
                format!(
                    "exit {}: {}",
                    code.map_or_else(|| "by signal".to_owned(), |c| c.to_string()),
                    tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                )
            });
        return OldRun::Failed(msg);
    }
    let lines = stdout
        .lines()
        .filter(|l| {
            let body = strip_replica(l);
            body.starts_with("output ") && (body.contains(": OK") || body.contains(": MISMATCH"))
        })
        .map(|l| {
            let ok = l.contains(": OK");
            let err = l
                .split_once("max_abs_err=")
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .and_then(|v| v.parse::<f64>().ok());
            (l.to_owned(), err, ok)
        })
        .collect();
    OldRun::Compared(lines)
}

fn strip_replica(line: &str) -> &str {
    match line.strip_prefix("replica ") {
        Some(rest) => rest.split_once(' ').map_or(rest, |(_, r)| r),
        None => line,
    }
}

/// The verdict of an older run compared with today's outputs (`expected_lines` outputs over all
/// replicas): every line `OK` with `max_abs_err` exactly 0, one line per output.
pub fn judge(run: &OldRun, expected_lines: usize, unknown: &BTreeSet<String>) -> Verdict {
    match run {
        OldRun::Failed(msg) => {
            let mut s = msg.clone();
            if !unknown.is_empty() {
                s.push_str(&format!(
                    " [constructs unknown to the older revision: {}]",
                    unknown.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
            Verdict::Rejected(s)
        }
        OldRun::Compared(lines) => {
            if let Some((line, _, _)) = lines.iter().find(|(_, err, ok)| !*ok || *err != Some(0.0))
            {
                return Verdict::Differs(format!("older runtime vs today's: {line}"));
            }
            if lines.len() != expected_lines {
                return Verdict::Error(format!(
                    "the older runtime printed {} output verdicts, expected {expected_lines}",
                    lines.len()
                ));
            }
            Verdict::Ok
        }
    }
}

/// The options of the older `aot run` (and `xla_compile`) this check needs, checked against
/// their `--help`: an older CLI without one is a clear error, not a silent pass.
fn require_options(bin: &Path, sub: &[&str], needed: &[&str], what: &str) -> anyhow::Result<()> {
    let out = Command::new(bin)
        .args(sub)
        .arg("--help")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot start {}", bin.display()))?;
    let help = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "{what} ({}) has no `{}`: {}",
            bin.display(),
            sub.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|o| !help.contains(o))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{what} ({}) does not take {} needed by the forward check; pick a newer revision",
            bin.display(),
            missing.join(", ")
        );
    }
    Ok(())
}

/// Runs a command with stdout/stderr in files and a deadline; `(exit code, stdout, stderr)`, or
/// the reason it did not finish.
fn run_with_deadline(
    mut cmd: Command,
    log: &Path,
    timeout: Duration,
) -> anyhow::Result<(Option<i32>, String, String)> {
    let out_path = log.with_extension("stdout");
    let err_path = log.with_extension("stderr");
    let stdout = std::fs::File::create(&out_path)
        .with_context(|| format!("cannot create {}", out_path.display()))?;
    let stderr = std::fs::File::create(&err_path)
        .with_context(|| format!("cannot create {}", err_path.display()))?;
    let mut child = crate::deadline::spawn_group(cmd.stdout(stdout).stderr(stderr))
        .context("cannot start the older binary")?;
    let Some(status) = crate::deadline::wait_or_kill(&mut child, timeout)? else {
        bail!("did not finish within {} s (killed)", timeout.as_secs());
    };
    let read = |p: &Path| std::fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned());
    Ok((
        status.code(),
        read(&out_path).unwrap_or_default(),
        read(&err_path).unwrap_or_default(),
    ))
}

/// The expectations recorded for a case: the newest golden version's io files when the case is
/// in it, else the case's own reference io files.
fn expectation_paths(
    store: &GoldenStore,
    target: &str,
    case: &Case,
) -> anyhow::Result<Vec<PathBuf>> {
    let replicas = case.replicas();
    let newest = store.versions(target)?.last().copied();
    let golden: Option<Vec<PathBuf>> = newest.map(|v| {
        let dir = store.version_dir(target, v).join(&case.name);
        (0..replicas)
            .map(|r| dir.join(io_file_name(replicas, r)))
            .collect()
    });
    Ok(match golden {
        Some(p) if p.iter().all(|p| p.is_file()) => p,
        _ => case.io.clone(),
    })
}

fn read_io(paths: &[PathBuf]) -> anyhow::Result<Vec<IoCase>> {
    paths
        .iter()
        .map(|p| IoCase::read(p).with_context(|| format!("cannot read {}", p.display())))
        .collect()
}

struct Context1<'a> {
    args: &'a ForwardArgs,
    store: &'a GoldenStore,
    work: &'a Path,
    old_constructs: Option<&'a BTreeSet<String>>,
}

/// Checks one (case, target).
fn check_case(cx: &Context1<'_>, target: &str, config: &Path, case: &Case) -> Row {
    let verdict = match check_case_inner(cx, target, config, case) {
        Ok(OldVerdict::Final(v)) => v,
        Ok(OldVerdict::OldBroken(detail)) => {
            let case_is_new = cx
                .args
                .old_rev
                .as_deref()
                .is_some_and(|rev| case_is_new_since(rev, case));
            let why = match (case_is_new, cx.args.old_rev.as_deref()) {
                (true, Some(rev)) => format!("the case is new since {rev}: excused"),
                (false, Some(rev)) => {
                    format!("the case exists at {rev}, which could not run it: nothing was checked")
                }
                (_, None) => {
                    "no --old-rev to tell whether the case is new: nothing was checked".to_owned()
                }
            };
            Verdict::OldBroken {
                detail: format!("{detail} ({why})"),
                case_is_new,
            }
        }
        Err(e) => Verdict::Error(format!("{e:#}")),
    };
    Row {
        case: case.name.clone(),
        target: target.to_owned(),
        verdict,
    }
}

/// A row's verdict before the `OLD-BROKEN` excuse is decided ([`check_case`] asks git).
enum OldVerdict {
    Final(Verdict),
    OldBroken(String),
}

impl From<Verdict> for OldVerdict {
    fn from(v: Verdict) -> Self {
        OldVerdict::Final(v)
    }
}

/// Whether `case`'s module is absent at `rev` (a revision this repository does not have, or a
/// module outside it, counts as not new: the excuse needs proof).
fn case_is_new_since(rev: &str, case: &Case) -> bool {
    let root = repo_root();
    let Ok(rel) = case.module.strip_prefix(&root) else {
        return false;
    };
    let repo = schema_history::Repo::new(&root);
    let spec = format!("{rev}:{}", rel.to_string_lossy().replace('\\', "/"));
    // `cat-file -e` fails both for a missing path and for an unknown revision: tell them apart.
    let rev_known = repo
        .git(&["rev-parse", "--verify", "-q", &format!("{rev}^{{commit}}")])
        .is_ok();
    rev_known && repo.git(&["cat-file", "-e", &spec]).is_err()
}

fn check_case_inner(
    cx: &Context1<'_>,
    target: &str,
    config: &Path,
    case: &Case,
) -> anyhow::Result<OldVerdict> {
    let dir = cx.work.join(target).join(&case.name);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let artifact = dir.join("executable.pb");
    let timeout = Duration::from_secs(cx.args.timeout);
    let old_compiler = cx.args.old_compiler.as_deref().filter(|_| cx.args.backward);
    let bytes = match old_compiler {
        None => {
            let text = std::fs::read_to_string(&case.module)
                .with_context(|| format!("cannot read {}", case.module.display()))?;
            let module = hlo_text::parse_module(&text)
                .map_err(|e| anyhow::anyhow!("{}:{e}", case.module.display()))?;
            let compiler_target = compiler::Target::load(config)?;
            let bytes = match compiler::compile_to_bytes(
                &module,
                &compiler_target,
                &compiler::CompileOptions::default(),
            ) {
                Ok(b) => b,
                Err(e) => {
                    return Ok(OldVerdict::Final(Verdict::Error(format!(
                        "today's compiler: {e}"
                    ))))
                }
            };
            std::fs::write(&artifact, &bytes)
                .with_context(|| format!("cannot write {}", artifact.display()))?;
            bytes
        }
        Some(old) => match old_compile(old, case, config, &artifact, timeout)? {
            Ok(bytes) => bytes,
            Err(e) => return Ok(OldVerdict::Final(Verdict::Error(e.to_string()))),
        },
    };
    let expected_paths = expectation_paths(cx.store, target, case)?;
    let expected = read_io(&expected_paths)?;
    let description = DeviceDescription::from_target_config(&proto::load_target_config(config)?)?;
    let today = match run_artifact(&bytes, &description, &expected) {
        Ok(t) => t,
        Err(e) => {
            return Ok(OldVerdict::Final(Verdict::Error(format!(
                "today's runtime: {e:#}"
            ))))
        }
    };
    if let Some(text) = crate::cmd::run::first_mismatch(&today, &expected)? {
        let first = text
            .lines()
            .find(|l| l.contains("MISMATCH"))
            .unwrap_or_default()
            .to_owned();
        return Ok(OldVerdict::Final(Verdict::Expectation(format!(
            "today's runtime vs the recorded expectations: {first}"
        ))));
    }
    let replicas = today.len();
    let mut cmd = Command::new(&cx.args.old_aot);
    cmd.arg("run")
        .arg(&artifact)
        .arg("--target-config")
        .arg(config);
    let mut expected_lines = 0;
    for (r, io) in today.iter().enumerate() {
        let path = dir.join(format!("today.{}", io_file_name(replicas, r)));
        std::fs::write(&path, case_to_json(io))
            .with_context(|| format!("cannot write {}", path.display()))?;
        cmd.arg("--io").arg(&path);
        expected_lines += io.outputs.len();
    }
    if replicas > 1 {
        cmd.arg("--replicas").arg(replicas.to_string());
    }
    let (code, stdout, stderr) = match run_with_deadline(cmd, &dir.join("old-run.log"), timeout) {
        Ok(r) => r,
        Err(e) => {
            return Ok(OldVerdict::Final(Verdict::Error(format!(
                "the older runtime {e:#}"
            ))))
        }
    };
    let run = parse_old_run(code, &stdout, &stderr);
    let unknown = match (&run, cx.old_constructs) {
        (OldRun::Failed(_), Some(old)) => unknown_constructs(&bytes, old),
        _ => BTreeSet::new(),
    };
    let verdict = judge(&run, expected_lines, &unknown);
    match (&verdict, cx.args.old_compiler.as_deref()) {
        // Backward: the artifact is the older revision's own and today's runtime already matched
        // the expectations with it; an older runtime that refuses it never ran the case.
        (Verdict::Rejected(msg), _) if cx.args.backward => Ok(OldVerdict::OldBroken(format!(
            "the older revision fails its own artifact: {msg}"
        ))),
        (Verdict::Rejected(_) | Verdict::Differs(_), Some(old)) if !cx.args.backward => {
            own_artifact_check(cx, old, case, config, &dir, &expected_paths, verdict)
        }
        _ => Ok(verdict.into()),
    }
}

/// Why the older `xla_compile` gave no artifact for a case (the row's verdict, not an error of
/// the check).
#[derive(Debug, thiserror::Error)]
enum OldCompileError {
    /// It could not be run, or ran past the deadline.
    #[error("the older compiler {0:#}")]
    Run(anyhow::Error),
    /// It exited unsuccessfully (its stderr, trimmed).
    #[error("the older compiler failed: {0}")]
    Failed(String),
}

/// Compiles `case` with an older `xla_compile`: the bytes, or why it failed.
fn old_compile(
    old: &Path,
    case: &Case,
    config: &Path,
    artifact: &Path,
    timeout: Duration,
) -> anyhow::Result<Result<Vec<u8>, OldCompileError>> {
    let mut cmd = Command::new(old);
    cmd.arg(format!("--module_file={}", case.module.display()))
        .arg(format!("--output_file={}", artifact.display()))
        .arg("--platform=gpu")
        .arg(format!("--gpu_target_config={}", config.display()));
    let log = artifact.with_file_name("compile.log");
    let (code, _, stderr) = match run_with_deadline(cmd, &log, timeout) {
        Ok(r) => r,
        Err(e) => return Ok(Err(OldCompileError::Run(e))),
    };
    if code != Some(0) {
        return Ok(Err(OldCompileError::Failed(stderr.trim().to_owned())));
    }
    let bytes =
        std::fs::read(artifact).with_context(|| format!("cannot read {}", artifact.display()))?;
    Ok(Ok(bytes))
}

/// A failing forward row, checked again with the older revision's own artifact for the case
/// (compared with the recorded expectations, as the older `aot run` compares): if the older
/// runtime fails that too, the older revision never ran the case and the row is `OLD-BROKEN`;
/// otherwise today's compiler broke it and `verdict` stands.
fn own_artifact_check(
    cx: &Context1<'_>,
    old: &Path,
    case: &Case,
    config: &Path,
    dir: &Path,
    expected: &[PathBuf],
    verdict: Verdict,
) -> anyhow::Result<OldVerdict> {
    let timeout = Duration::from_secs(cx.args.timeout);
    let artifact = dir.join("own.executable.pb");
    if let Err(e) = old_compile(old, case, config, &artifact, timeout)? {
        return Ok(OldVerdict::OldBroken(format!(
            "{e} (today's artifact: {})",
            verdict.detail()
        )));
    }
    let mut cmd = Command::new(&cx.args.old_aot);
    cmd.arg("run")
        .arg(&artifact)
        .arg("--target-config")
        .arg(config);
    for p in expected {
        cmd.arg("--io").arg(p);
    }
    if expected.len() > 1 {
        cmd.arg("--replicas").arg(expected.len().to_string());
    }
    let own = match run_with_deadline(cmd, &dir.join("own-run.log"), timeout) {
        Ok((Some(0), _, _)) => return Ok(verdict.into()),
        Ok((code, stdout, stderr)) => match parse_old_run(code, &stdout, &stderr) {
            OldRun::Failed(msg) => msg,
            OldRun::Compared(lines) => lines
                .iter()
                .find(|(_, _, ok)| !ok)
                .map_or_else(|| "a mismatch".to_owned(), |(l, _, _)| l.clone()),
        },
        Err(e) => format!("{e:#}"),
    };
    Ok(OldVerdict::OldBroken(format!(
        "the older revision fails its own artifact too: {own}"
    )))
}

/// Schema constructs the artifact uses that the older revision's schema does not have.
fn unknown_constructs(bytes: &[u8], old: &BTreeSet<String>) -> BTreeSet<String> {
    let Ok(exe) = proto::xla::gpu::GpuExecutableProto::decode(bytes) else {
        return BTreeSet::new();
    };
    crate::golden::census_of(&exe)
        .into_iter()
        .filter(|c| !c.contains(':') && !old.contains(c))
        .collect()
}

/// The older revision's schema constructs, read from git objects (no checkout).
fn old_schema_constructs(rev: &str) -> anyhow::Result<BTreeSet<String>> {
    let repo = schema_history::Repo::new(repo_root());
    let spec = schema_history::SchemaSpec::project();
    let side = schema_history::Revision::Git(rev.to_owned());
    let compiled = spec
        .compile(&repo, &side)
        .with_context(|| format!("cannot compile the schema at {rev}"))?;
    Ok(spec.model(&compiled, &side)?.constructs())
}

/// Runs `aot forward`: 0 every row passes, 1 any fails; errors are the caller's exit 2.
pub fn run(args: &ForwardArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let started = Instant::now();
    require_options(
        &args.old_aot,
        &["run"],
        &["--target-config", "--io", "--replicas"],
        "the older runtime CLI",
    )?;
    if let Some(c) = &args.old_compiler {
        require_options(
            c,
            &[],
            &[
                "--module_file",
                "--output_file",
                "--platform",
                "--gpu_target_config",
            ],
            "the older compiler",
        )?;
    }
    let old_constructs = match &args.old_rev {
        Some(rev) => Some(old_schema_constructs(rev)?),
        None => None,
    };
    let store = GoldenStore::in_repo();
    let mut targets = store.targets()?;
    if !args.targets.is_empty() {
        for t in &args.targets {
            if !targets.contains(t) {
                bail!("no golden target {t:?} (have: {})", targets.join(", "));
            }
        }
        targets.retain(|t| args.targets.contains(t));
    }
    if targets.is_empty() {
        bail!("the golden store {} has no targets", store.root().display());
    }
    let cases: Vec<Case> = curated_cases()
        .map_err(|e| anyhow::anyhow!(e))?
        .into_iter()
        .filter(|c| args.case.as_deref().is_none_or(|f| c.name.contains(f)))
        .collect();
    if cases.is_empty() {
        bail!("no case matches {:?}", args.case.as_deref().unwrap_or(""));
    }
    let (work, remove_work) = match &args.work_dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("aot-forward-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let mut jobs_list = Vec::new();
    for target in &targets {
        let newest = store.versions(target)?.last().copied().unwrap_or(1);
        let config = store.version_dir(target, newest).join(TARGET_FILE);
        for case in &cases {
            jobs_list.push((target.clone(), config.clone(), case.clone()));
        }
    }
    let cx = Context1 {
        args,
        store: &store,
        work: &work,
        old_constructs: old_constructs.as_ref(),
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(4)))
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let rows = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((target, config, case)) = jobs_list.get(i) else {
                    break;
                };
                let row = check_case(&cx, target, config, case);
                if let Ok(mut r) = rows.lock() {
                    r.push((i, row));
                }
            });
        }
    });
    let mut rows = rows.into_inner().unwrap_or_default();
    rows.sort_by_key(|(i, _)| *i);
    let rows: Vec<Row> = rows.into_iter().map(|(_, r)| r).collect();
    if remove_work {
        let _ = std::fs::remove_dir_all(&work);
    }
    let direction = if args.backward {
        "today's runtime on the older compiler's artifacts, checked by the older runtime"
    } else {
        "today's compiler's artifacts on the older runtime"
    };
    writeln!(
        out,
        "{direction} ({})",
        args.old_rev.as_deref().unwrap_or("older binary")
    )?;
    print_table(&rows, out)?;
    let failed = rows.iter().filter(|r| r.verdict.fails()).count();
    let excused = rows
        .iter()
        .filter(|r| !r.verdict.fails() && matches!(r.verdict, Verdict::OldBroken { .. }))
        .count();
    writeln!(
        out,
        "{}: {} of {} rows pass, {excused} excused (new since the older revision, which cannot run them), {failed} fail ({} cases x {} targets), {:.1} s",
        if failed == 0 { "OK" } else { "FAILED" },
        rows.len() - failed - excused,
        rows.len(),
        cases.len(),
        targets.len(),
        started.elapsed().as_secs_f64()
    )?;
    Ok(if failed == 0 { 0 } else { 1 })
}

/// Prints the table: case, target, the older runtime's verdict, the first rejected construct
/// or differing output.
pub fn print_table(rows: &[Row], out: &mut dyn Write) -> std::io::Result<()> {
    let w = rows.iter().map(|r| r.case.len()).max().unwrap_or(4).max(4);
    let t = rows
        .iter()
        .map(|r| r.target.len())
        .max()
        .unwrap_or(6)
        .max(6);
    writeln!(
        out,
        "{:<w$}  {:<t$}  {:<11}  detail",
        "case", "target", "old runtime"
    )?;
    for r in rows {
        writeln!(
            out,
            "{:<w$}  {:<t$}  {:<11}  {}",
            r.case,
            r.target,
            r.verdict.word(),
            r.verdict.detail()
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_outputs_pass() {
        let run = parse_old_run(
            Some(0),
            "output 0 f32[4]: OK max_abs_err=0e0\noutput 1 s32[2]: OK max_abs_err=0e0\nOK: 2 of 2 outputs match\n",
            "",
        );
        assert_eq!(judge(&run, 2, &BTreeSet::new()), Verdict::Ok);
    }

    #[test]
    fn within_tolerance_is_not_exact() {
        let run = parse_old_run(
            Some(0),
            "replica 0 output 0 f32[4]: OK max_abs_err=1.1920929e-7\nOK: 1 of 1 outputs match\n",
            "",
        );
        assert_eq!(
            judge(&run, 1, &BTreeSet::new()),
            Verdict::Differs(
                "older runtime vs today's: replica 0 output 0 f32[4]: OK max_abs_err=1.1920929e-7"
                    .to_owned()
            )
        );
    }

    #[test]
    fn missing_verdict_lines_are_an_error() {
        let run = parse_old_run(Some(0), "output 0 f32[4]: OK max_abs_err=0e0\n", "");
        assert_eq!(
            judge(&run, 2, &BTreeSet::new()),
            Verdict::Error("the older runtime printed 1 output verdicts, expected 2".to_owned())
        );
    }

    #[test]
    fn a_load_error_is_a_rejection_naming_unknown_constructs() {
        let run = parse_old_run(
            Some(2),
            "",
            "error: a.pb: UNIMPLEMENTED: thunks[1]: no impl set\n",
        );
        let unknown: BTreeSet<String> = ["xla.gpu.ThunkProto.fill_thunk".to_owned()].into();
        assert_eq!(
            judge(&run, 1, &unknown),
            Verdict::Rejected(
                "a.pb: UNIMPLEMENTED: thunks[1]: no impl set [constructs unknown to the older \
                 revision: xla.gpu.ThunkProto.fill_thunk]"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_crash_is_reported_with_its_exit() {
        let run = parse_old_run(Some(101), "", "thread 'main' panicked at x.rs:1:1\nboom\n");
        assert_eq!(
            run,
            OldRun::Failed("exit 101: thread 'main' panicked at x.rs:1:1 | boom".to_owned())
        );
    }
}
