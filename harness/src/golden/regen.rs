//! Regeneration: compile every case with today's compiler, run it with today's runtime, and write
//! the result as the next version `v<N+1>`.
//!
//! The new version is built in a hidden temporary directory next to the versions and renamed into
//! place only when complete, so an interrupted run leaves no partial version (leftover temporary
//! directories are removed by the next run). Existing versions are never modified. A run whose
//! output equals the newest version is refused unless forced: nothing changed, so nothing new
//! should be pinned.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use hlo_eval::{case_to_json, IoCase};
use runtime::{Device, DeviceDescription, EmulatedDevice, RuntimeFlags};

use super::cases::Case;
use super::census_of;
use super::manifest::{hash_files, Manifest, MANIFEST_FILE, MANIFEST_FORMAT_VERSION};
use super::store::{GoldenError, GoldenStore};

/// File names inside a version directory.
pub const EXECUTABLE_FILE: &str = "executable.pb";
/// The case's source module.
pub const MODULE_FILE: &str = "module.hlo";
/// The target config the version was compiled for (and is replayed on).
pub const TARGET_FILE: &str = "target.txtpb";

/// The io file of a case in a version directory: `io.json`, or `replica<R>.io.json`.
pub fn io_file_name(replicas: usize, replica: usize) -> String {
    if replicas <= 1 {
        "io.json".to_owned()
    } else {
        format!("replica{replica}.io.json")
    }
}

/// What regeneration is asked to do.
#[derive(Debug, Clone)]
pub struct RegenOptions {
    /// Target name (the directory under the store).
    pub target: String,
    /// The target config file to compile for.
    pub target_config: PathBuf,
    /// Write a new version even when nothing changed.
    pub force: bool,
    /// The creation date to record (`YYYY-MM-DD`); today when `None`.
    pub today: Option<String>,
    /// Compiler commit to record; `git rev-parse HEAD` when `None`.
    pub commit: Option<String>,
    /// Show a progress bar.
    pub progress: bool,
}

/// What regeneration did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegenOutcome {
    /// A new version was written.
    Written {
        /// Its number.
        version: u32,
        /// Its directory.
        dir: PathBuf,
        /// Constructs used by the new version and not by the previous newest one.
        added: BTreeSet<String>,
        /// Constructs used by the previous newest version and no longer by the new one.
        removed: BTreeSet<String>,
    },
    /// The output equals the newest version; nothing was written.
    Unchanged {
        /// The newest version's `N`: every file's hash in its manifest equals the new output's.
        version: u32,
    },
}

/// The compiler commit recorded in manifests.
pub fn current_commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(super::cases::repo_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Compiles and runs one case as the golden suite replays it ([`exercise_artifact`]), returning
/// the artifact bytes, one io case per replica (the case's inputs with the outputs today's
/// runtime produced) and the behaviour classes the runs reached. Fails when the outputs do not
/// match the case's expected outputs within tolerance: a wrong result is never pinned.
pub fn build_case(
    case: &Case,
    target: &compiler::Target,
    description: &DeviceDescription,
) -> anyhow::Result<(Vec<u8>, Exercised)> {
    let module = hlo_front::read_module(&case.module)?;
    let bytes = compiler::compile_to_bytes(&module, target, &compiler::CompileOptions::default())
        .with_context(|| format!("cannot compile case `{}`", case.name))?;
    let expected = case
        .io
        .iter()
        .map(|p| IoCase::read(p).with_context(|| format!("cannot read {}", p.display())))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let exercised = exercise_artifact(&bytes, description, &expected)
        .with_context(|| format!("case `{}`", case.name))?;
    if let Some(report) = crate::cmd::run::first_mismatch(&exercised.io, &expected)? {
        bail!(
            "case `{}`: today's compiler and runtime do not reproduce the expected outputs; \
             refusing to record them:\n{report}",
            case.name,
        );
    }
    Ok((bytes, exercised))
}

/// How many times the golden suite executes one loaded executable: state the runtime keeps
/// between executions (recorded command buffers, loaded kernels) must not change a result.
pub const EXECUTIONS_PER_LOAD: usize = 2;

/// The `enable_command_buffers` settings the golden suite loads each artifact with: the default
/// (on) first, then off, so both the command-buffer path and the thunk-by-thunk path run.
pub const COMMAND_BUFFER_MODES: [bool; 2] = [true, false];

/// What [`exercise_artifact`] observed.
#[derive(Debug, Clone)]
pub struct Exercised {
    /// The io cases with the outputs of the first execution (every later one is bit-identical).
    pub io: Vec<IoCase>,
    /// The behaviour classes any execution reached ([`runtime::Behaviour`]).
    pub behaviours: runtime::Behaviours,
}

/// Runs `bytes` as the golden suite does: loaded once per [`COMMAND_BUFFER_MODES`] setting, each
/// load executed [`EXECUTIONS_PER_LOAD`] times. Fails when any execution's outputs are not
/// bit-identical to the first's, naming the execution and the mode.
pub fn exercise_artifact(
    bytes: &[u8],
    description: &DeviceDescription,
    cases: &[IoCase],
) -> anyhow::Result<Exercised> {
    let mut first: Option<Vec<IoCase>> = None;
    let mut behaviours = runtime::Behaviours::new();
    for command_buffers in COMMAND_BUFFER_MODES {
        let flags = RuntimeFlags {
            enable_command_buffers: command_buffers,
            ..RuntimeFlags::default()
        };
        let devices = emulated_devices(description, cases.len());
        let first_device = devices.first().context("no io case to run")?;
        let exe = runtime::load(bytes, first_device.as_ref(), &flags)?;
        for execution in 1..=EXECUTIONS_PER_LOAD {
            let mode = format!(
                "execution {execution} of one load with command buffers {}",
                if command_buffers { "on" } else { "off" }
            );
            let (io, stats) = execute_cases(&exe, &devices, cases).context(mode.clone())?;
            behaviours.extend(stats.behaviours);
            match &first {
                None => first = Some(io),
                Some(want) => {
                    if let Some(diff) = first_difference(&io, want) {
                        bail!(
                            "{mode} differs from the first execution (command buffers on): {diff}"
                        );
                    }
                }
            }
        }
    }
    Ok(Exercised {
        io: first.context("no execution ran")?,
        behaviours,
    })
}

/// The first output that is not bit-identical between two runs of the same cases.
fn first_difference(got: &[IoCase], want: &[IoCase]) -> Option<String> {
    for (r, (g, w)) in got.iter().zip(want).enumerate() {
        for (i, (a, b)) in g.outputs.iter().zip(&w.outputs).enumerate() {
            if let Err(m) = super::replay::bit_identical(a, b) {
                return Some(format!("replica {r} output {i}: {m}"));
            }
        }
    }
    None
}

fn emulated_devices(description: &DeviceDescription, n: usize) -> Vec<Arc<dyn Device>> {
    (0..n)
        .map(|_| Arc::new(EmulatedDevice::new(description.clone())) as Arc<dyn Device>)
        .collect()
}

/// One execution of `exe` with each case's inputs (one case per replica).
fn execute_cases(
    exe: &runtime::Executable,
    devices: &[Arc<dyn Device>],
    cases: &[IoCase],
) -> anyhow::Result<(Vec<IoCase>, runtime::ExecutionStats)> {
    let inputs: Vec<Vec<hlo::Array>> = cases.iter().map(|c| c.inputs.clone()).collect();
    let (outputs, stats) = crate::cmd::run::execute_arrays(exe, devices, &inputs)?;
    let io = cases
        .iter()
        .zip(outputs)
        .map(|(c, outputs)| IoCase {
            inputs: c.inputs.clone(),
            outputs,
        })
        .collect();
    Ok((io, stats))
}

/// Loads `bytes` on emulated devices (one per io case) and runs it once with each case's inputs;
/// the returned io cases carry the outputs produced.
pub fn run_artifact(
    bytes: &[u8],
    description: &DeviceDescription,
    cases: &[IoCase],
) -> anyhow::Result<Vec<IoCase>> {
    let devices = emulated_devices(description, cases.len());
    let first = devices.first().context("no io case to run")?;
    let exe = runtime::load(bytes, first.as_ref(), &RuntimeFlags::default())?;
    Ok(execute_cases(&exe, &devices, cases)?.0)
}

/// Regenerates one target: writes `v<N+1>` (or reports that nothing changed).
pub fn regenerate(
    store: &GoldenStore,
    cases: &[Case],
    options: &RegenOptions,
) -> anyhow::Result<RegenOutcome> {
    let target_dir = store.root().join(&options.target);
    std::fs::create_dir_all(&target_dir)
        .with_context(|| format!("cannot create {}", target_dir.display()))?;
    remove_stale_temporaries(&target_dir);
    let newest = match store.versions(&options.target) {
        Ok(v) => v.last().copied(),
        Err(GoldenError::NoVersions { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let version = newest.map_or(1, |n| n + 1);
    let tmp = target_dir.join(format!(".v{version}.tmp-{}", std::process::id()));
    let result = write_version(&tmp, version, cases, options);
    let manifest = match result {
        Ok(m) => m,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    if let Some(n) = newest {
        let previous = Manifest::read(&store.version_dir(&options.target, n))
            .map_err(|e| anyhow::anyhow!(e))?;
        if previous.files == manifest.files && !options.force {
            let _ = std::fs::remove_dir_all(&tmp);
            return Ok(RegenOutcome::Unchanged { version: n });
        }
        let (added, removed) = census_difference(&previous, &manifest);
        let dir = publish(&tmp, &store.version_dir(&options.target, version))?;
        return Ok(RegenOutcome::Written {
            version,
            dir,
            added,
            removed,
        });
    }
    let added = union(&manifest);
    let dir = publish(&tmp, &store.version_dir(&options.target, version))?;
    Ok(RegenOutcome::Written {
        version,
        dir,
        added,
        removed: BTreeSet::new(),
    })
}

fn publish(tmp: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
    if dir.exists() {
        let _ = std::fs::remove_dir_all(tmp);
        bail!(
            "{} appeared while regenerating; refusing to overwrite it",
            dir.display()
        );
    }
    std::fs::rename(tmp, dir)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), dir.display()))?;
    Ok(dir.to_owned())
}

/// Removes `.v<N>.tmp-<pid>` directories left by interrupted runs.
fn remove_stale_temporaries(target_dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(target_dir) {
        for e in entries.filter_map(Result::ok) {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(".v") && name.contains(".tmp-") {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

fn write_version(
    dir: &Path,
    version: u32,
    cases: &[Case],
    options: &RegenOptions,
) -> anyhow::Result<Manifest> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let config_text = std::fs::read_to_string(&options.target_config)
        .with_context(|| format!("cannot read {}", options.target_config.display()))?;
    let origin = options.target_config.display().to_string();
    let config = proto::parse_target_config(&config_text, &origin)?;
    let target = compiler::Target::from_config(config.clone(), &origin)?;
    let description = DeviceDescription::from_target_config(&config)?;
    std::fs::write(dir.join(TARGET_FILE), &config_text)?;

    let bar = if options.progress {
        indicatif::ProgressBar::new(cases.len() as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_prefix(format!("{} v{version}", options.target));
    let mut census = BTreeMap::new();
    for case in cases {
        bar.set_message(case.name.clone());
        let (bytes, exercised) = build_case(case, &target, &description)?;
        let recorded = &exercised.io;
        let case_dir = dir.join(&case.name);
        std::fs::create_dir_all(&case_dir)?;
        std::fs::write(case_dir.join(EXECUTABLE_FILE), &bytes)?;
        if hlo_front::format_of(&case.module)? == hlo_front::Format::HloText {
            std::fs::copy(&case.module, case_dir.join(MODULE_FILE))?;
        } else {
            // A StableHLO case is recorded as the HLO module it converts to: what the artifact
            // embeds and what golden verification recompiles (the printer round-trips).
            let module = hlo_front::read_module(&case.module)?;
            std::fs::write(case_dir.join(MODULE_FILE), hlo_text::print_module(&module))?;
        }
        for (r, io) in recorded.iter().enumerate() {
            let mut text = case_to_json(io);
            text.push('\n');
            std::fs::write(case_dir.join(io_file_name(recorded.len(), r)), text)?;
        }
        let exe: proto::xla::gpu::GpuExecutableProto = proto::decode_limited(&bytes, usize::MAX)?;
        let mut constructs = census_of(&exe);
        constructs.extend(
            exercised
                .behaviours
                .iter()
                .map(runtime::Behaviour::census_name),
        );
        census.insert(case.name.clone(), constructs);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let manifest = Manifest {
        format_version: MANIFEST_FORMAT_VERSION,
        version,
        target: options.target.clone(),
        created: options
            .today
            .clone()
            .unwrap_or_else(|| schema_history::Date::today().to_string()),
        compiler_version: env!("CARGO_PKG_VERSION").to_owned(),
        compiler_commit: options.commit.clone().unwrap_or_else(current_commit),
        cases: cases.iter().map(|c| c.name.clone()).collect(),
        files: hash_files(dir)?,
        census,
    };
    std::fs::write(dir.join(MANIFEST_FILE), manifest.to_json())?;
    Ok(manifest)
}

fn union(m: &Manifest) -> BTreeSet<String> {
    m.census.values().flatten().cloned().collect()
}

/// Constructs the new version uses that the old one did not, and the reverse.
pub fn census_difference(old: &Manifest, new: &Manifest) -> (BTreeSet<String>, BTreeSet<String>) {
    let (o, n) = (union(old), union(new));
    (
        n.difference(&o).cloned().collect(),
        o.difference(&n).cloned().collect(),
    )
}
