//! The checks the golden suite runs: backward compatibility (old artifacts in today's runtime),
//! golden verification (today's compiler reproduces the newest version), forward compatibility
//! (today's artifacts against an older schema) and integrity.
//!
//! Every failure message says what broke and where to read about it (docs/compatibility.md, or
//! docs/goldens.md for regeneration).
use std::path::{Path, PathBuf};

use hlo::Array;
use hlo_eval::IoCase;
use proto::prost_reflect::{DynamicMessage, ReflectMessage, Value};
use proto::xla::gpu::GpuExecutableProto;
use runtime::DeviceDescription;

pub use super::error::{
    BitMismatch, CoverageError, ManifestError, NotRefused, OutputsDiffer, ReplayBreak, ReplayError,
    SkewBreak,
};
use super::manifest::{verify_dir, Manifest};
use super::regen::{
    exercise_artifact, io_file_name, run_artifact, Exercised, EXECUTABLE_FILE, MODULE_FILE,
    TARGET_FILE,
};
use super::store::GoldenStore;

pub use super::coverage::{
    runtime_coverage, runtime_thunk_kinds, uncovered_behaviours, uncovered_values,
    UNREACHABLE_VALUE_CLASSES,
};
mod forward;

pub use forward::{accepted_abi, forward_compat, old_schema, OldSchema};
use forward::{cuda_versions, version_triple};

/// Where a failure points the reader.
pub const COMPAT_GUIDE: &str = "docs/compatibility.md";

/// The command that writes the next version of a target.
pub fn regen_command(target: &str) -> String {
    format!("cargo run --release -p harness --bin aot -- goldens regen --target {target}")
}

/// One golden case of one version, read from disk.
#[derive(Debug, Clone)]
pub struct GoldenCase {
    /// Target spec name (`h100_sxm`): its directory under the store's root.
    pub target: String,
    /// The `N` of the `v<N>` directory.
    pub version: u32,
    /// Case name: its directory inside the version directory.
    pub case: String,
    /// The version directory.
    pub dir: PathBuf,
    /// The exact artifact bytes.
    pub bytes: Vec<u8>,
    /// The recorded io cases (one per replica).
    pub io: Vec<IoCase>,
    /// The target config text the version was made for.
    pub target_config: String,
}

impl GoldenCase {
    /// `h100_sxm/v3/softmax`.
    pub fn label(&self) -> String {
        format!("{}/v{}/{}", self.target, self.version, self.case)
    }

    /// Reads a case of a version. Replica count comes from the io files present.
    pub fn read(
        store: &GoldenStore,
        target: &str,
        version: u32,
        case: &str,
    ) -> Result<GoldenCase, ReplayError> {
        let dir = store.version_dir(target, version);
        let case_dir = dir.join(case);
        let read = |p: &Path| {
            crate::golden::read_store_file(p).map_err(|error| ManifestError::Read {
                path: p.to_owned(),
                error,
            })
        };
        let bytes = read(&case_dir.join(EXECUTABLE_FILE))?;
        let target_config =
            String::from_utf8(read(&dir.join(TARGET_FILE))?).map_err(|_| ReplayError::NotUtf8 {
                dir: dir.clone(),
                file: TARGET_FILE,
            })?;
        let single = case_dir.join(io_file_name(1, 0));
        let io_paths: Vec<PathBuf> = if single.exists() {
            vec![single]
        } else {
            (0..)
                .map(|r| case_dir.join(io_file_name(2, r)))
                .take_while(|p| p.exists())
                .collect()
        };
        if io_paths.is_empty() {
            return Err(ReplayError::NoIoFile { case_dir });
        }
        let io = io_paths
            .iter()
            .map(|p| {
                IoCase::read(p).map_err(|error| ReplayError::Io {
                    path: p.clone(),
                    error,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(GoldenCase {
            target: target.to_owned(),
            version,
            case: case.to_owned(),
            dir,
            bytes,
            io,
            target_config,
        })
    }

    pub(crate) fn description(&self) -> Result<DeviceDescription, ReplayError> {
        let config = proto::parse_target_config(
            &self.target_config,
            &format!("{}/{TARGET_FILE}", self.dir.display()),
        )?;
        Ok(DeviceDescription::from_target_config(&config)?)
    }
}

/// Bit equality of two arrays, NaN equal to NaN (io files carry NaN without its payload).
pub(crate) fn bit_identical(got: &Array, want: &Array) -> Result<(), BitMismatch> {
    if got.dtype() != want.dtype() || got.dims() != want.dims() {
        return Err(BitMismatch::Shape {
            produced: got.shape_string(),
            recorded: want.shape_string(),
        });
    }
    let (g, w) = (got.data().to_bits(), want.data().to_bits());
    let gf = got.data().to_f64_vec();
    let wf = want.data().to_f64_vec();
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let both_nan = got.dtype().is_float()
            && gf.get(i).is_some_and(|x| x.is_nan())
            && wf.get(i).is_some_and(|x| x.is_nan());
        if a != b && !both_nan {
            return Err(BitMismatch::Element {
                index: i,
                produced: gf.get(i).copied().unwrap_or(f64::NAN),
                produced_bits: *a,
                recorded: wf.get(i).copied().unwrap_or(f64::NAN),
                recorded_bits: *b,
            });
        }
    }
    Ok(())
}

/// Whether the reference evaluator can be the oracle for a module: not when it holds an opcode
/// the evaluator does not evaluate (`hlo_eval::NOT_EVALUATED`): custom-call targets, whose
/// semantics live in the runtime's registry, not in HLO, and collectives (a one-device
/// collective-permute, say), which need devices.
pub fn evaluator_applies(module: &hlo::HloModule) -> bool {
    !module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .any(|i| hlo_eval::NOT_EVALUATED.contains(&i.opcode))
}

/// Backward compatibility: today's runtime loads the exact bytes, executes them, produces
/// outputs bit-identical to the recorded ones and, for single-replica cases, within tolerance of
/// the reference evaluator. (Multi-replica and custom-call cases were checked against their
/// hand-computed expected values when recorded; the evaluator has no replicas and no registry.)
///
/// The artifact runs as `exercise_artifact` runs it (command buffers on and off, each load
/// executed twice), and every behaviour class the version's census records for the case must be
/// reached again: the census is what the behavioural coverage gate counts, so a class it claims
/// and the replay no longer reaches would be coverage that is not there.
pub fn backward_compat(golden: &GoldenCase) -> Result<(), ReplayError> {
    let reached = replay(golden, &golden.bytes)?;
    let manifest = Manifest::read(&golden.dir)?;
    let claimed = manifest
        .census
        .get(&golden.case)
        .into_iter()
        .flatten()
        .filter(|c| c.starts_with(BEHAVIOUR_PREFIX));
    let reached: std::collections::BTreeSet<String> = reached
        .iter()
        .map(runtime::Behaviour::census_name)
        .collect();
    let missed: Vec<String> = claimed.filter(|c| !reached.contains(*c)).cloned().collect();
    if missed.is_empty() {
        return Ok(());
    }
    Err(ReplayError::CoverageLost {
        label: golden.label(),
        missed,
    })
}

/// The census prefix of a behaviour class ([`runtime::Behaviour::census_name`]).
pub const BEHAVIOUR_PREFIX: &str = "behaviour:";

/// [`backward_compat`] on substitute bytes (used to prove the suite catches mutations).
pub fn replay_bytes(golden: &GoldenCase, bytes: &[u8]) -> Result<(), ReplayError> {
    replay(golden, bytes).map(drop)
}

/// Runs `bytes` with the golden's inputs, compares with its recorded outputs and (single replica)
/// the reference evaluator; returns the behaviour classes reached.
fn replay(golden: &GoldenCase, bytes: &[u8]) -> Result<runtime::Behaviours, ReplayError> {
    let label = golden.label();
    let broken = |what: ReplayBreak| ReplayError::Backward {
        label: label.clone(),
        what,
    };
    let description = golden.description()?;
    let Exercised {
        io: produced,
        behaviours,
    } = exercise_artifact(bytes, &description, &golden.io)
        .map_err(|e| broken(ReplayBreak::Run(e)))?;
    for (r, (got, want)) in produced.iter().zip(&golden.io).enumerate() {
        if got.outputs.len() != want.outputs.len() {
            return Err(broken(ReplayBreak::Outputs(OutputsDiffer::Outputs {
                replica: r,
                produced: got.outputs.len(),
                recorded: want.outputs.len(),
            })));
        }
        for (i, (g, w)) in got.outputs.iter().zip(&want.outputs).enumerate() {
            bit_identical(g, w).map_err(|mismatch| {
                broken(ReplayBreak::Outputs(OutputsDiffer::Bits {
                    replica: r,
                    output: i,
                    mismatch,
                }))
            })?;
        }
    }
    if let [single] = golden.io.as_slice() {
        let module = read_module(golden)?;
        if !evaluator_applies(&module) {
            return Ok(behaviours);
        }
        let reference = hlo_eval::evaluate_flat(&module, &single.inputs).map_err(|error| {
            ReplayError::Evaluator {
                label: label.clone(),
                error,
            }
        })?;
        let produced_outputs = produced
            .first()
            .map(|p| p.outputs.clone())
            .unwrap_or_default();
        let mut report = Vec::new();
        let matched = crate::cmd::run::report(
            "",
            &produced_outputs,
            &reference,
            crate::cmd::run::ToleranceRule::PerDtype,
            &mut report,
        )
        .map_err(|error| ReplayError::Report {
            label: label.clone(),
            error,
        })?;
        if matched != reference.len() {
            return Err(broken(ReplayBreak::Reference {
                report: String::from_utf8_lossy(&report).into_owned(),
            }));
        }
    }
    Ok(behaviours)
}

/// The case's source module, read and parsed.
fn read_module(golden: &GoldenCase) -> Result<hlo::HloModule, ReplayError> {
    let label = golden.label();
    let text = crate::golden::read_store_text(golden.dir.join(&golden.case).join(MODULE_FILE))
        .map_err(|error| ReplayError::ModuleRead {
            label: label.clone(),
            file: MODULE_FILE,
            error,
        })?;
    hlo_text::parse_module(&text).map_err(|error| ReplayError::ModuleParse {
        label,
        file: MODULE_FILE,
        error,
    })
}

/// `X.Y.Z` with the minor version raised: a runtime upgrade the artifact must survive.
fn newer_version(v: &str) -> Option<String> {
    let (major, minor, _) = version_triple(v)?;
    Some(format!("{major}.{}.0", minor.checked_add(1)?))
}

/// The nearest `X.Y.Z` strictly below `v` (its lowest non-zero component lowered by one), `None`
/// for `0.0.0`: the smallest downgrade, so a check that tolerates any older version is caught.
fn older_version(v: &str) -> Option<String> {
    let (major, minor, patch) = version_triple(v)?;
    if patch > 0 {
        Some(format!("{major}.{minor}.{}", patch - 1))
    } else if minor > 0 {
        Some(format!("{major}.{}.0", minor - 1))
    } else if major > 0 {
        Some(format!("{}.0.0", major - 1))
    } else {
        None
    }
}

/// The device's three ABI versions, as `(component name in load errors, field)`.
fn abi_slots(d: &mut DeviceDescription) -> [(&'static str, &mut String); 3] {
    [
        ("CUDA toolkit", &mut d.cuda_toolkit_version),
        ("cuDNN", &mut d.cudnn_version),
        ("CUB", &mut d.cub_version),
    ]
}

/// Environment skew: the golden's device with every ABI version newer than both the device's and
/// the artifact's must load it and produce bit-identical outputs (a driver upgrade on a serving
/// host); with one version older than the artifact needs it must fail with FAILED_PRECONDITION
/// naming the component and both versions; on a device of another compute capability it must fail
/// naming both capabilities, and that mismatch leads the message when the ABI fails too.
///
/// Only the newer device executes (the older and other-capability ones fail at load, before any
/// allocation), so the skew costs one extra execution per case.
pub fn env_skew(golden: &GoldenCase) -> Result<(), ReplayError> {
    let label = golden.label();
    let broken = |what: SkewBreak| ReplayError::EnvSkew {
        label: label.clone(),
        what: Box::new(what),
    };
    // Only the ABI is wanted here (the replay decodes the rest): the embedded module (1) and the
    // thunks (13), nearly all of the bytes, stay undecoded, as in `accepted_abi`.
    let split = proto::decode_except::<GpuExecutableProto>(
        &golden.bytes,
        usize::MAX,
        &[
            proto::fields::EXECUTABLE_HLO_MODULE_WITH_CONFIG,
            proto::fields::EXECUTABLE_THUNKS,
        ],
    )
    .map_err(|error| ReplayError::Decode {
        origin: format!("{label}/{EXECUTABLE_FILE}"),
        error,
    })?;
    let needed: Vec<String> =
        cuda_versions(&split.message.executable_abi_version.unwrap_or_default())
            .into_iter()
            .map(|(_, _, v)| v)
            .collect();
    let exact = golden.description()?;

    let mut newer = exact.clone();
    for ((_, have), need) in abi_slots(&mut newer).into_iter().zip(&needed) {
        let base = match (version_triple(have), version_triple(need)) {
            (Some(h), Some(n)) if n > h => need.clone(),
            (Some(_), _) => have.clone(),
            (None, Some(_)) => need.clone(),
            (None, None) => continue,
        };
        if let Some(v) = newer_version(&base) {
            *have = v;
        }
    }
    let produced = run_artifact(&golden.bytes, &newer, &golden.io).map_err(|error| {
        broken(SkewBreak::NewerRefused {
            toolkit: newer.cuda_toolkit_version.clone(),
            cudnn: newer.cudnn_version.clone(),
            cub: newer.cub_version.clone(),
            error,
        })
    })?;
    compare_outputs(&produced, &golden.io).map_err(|m| broken(SkewBreak::NewerDiffers(m)))?;

    let flags = runtime::RuntimeFlags::default();
    let registry = runtime::Registry::builtin();
    let refuse = |d: &DeviceDescription| -> Result<String, NotRefused> {
        match runtime::validate(&golden.bytes, d, &flags, &registry) {
            Ok(_) => Err(NotRefused::Loaded),
            Err(e) if e.code() == runtime::Code::FailedPrecondition => Ok(e.into_message()),
            Err(e) => Err(NotRefused::OtherCode(e)),
        }
    };
    for (i, need) in needed.iter().enumerate() {
        let Some(lower) = older_version(need) else {
            continue;
        };
        let mut older = newer.clone();
        let Some((component, slot)) = abi_slots(&mut older).into_iter().nth(i) else {
            continue;
        };
        *slot = lower.clone();
        let msg = refuse(&older).map_err(|why| {
            broken(SkewBreak::OlderAccepted {
                component,
                lower: lower.clone(),
                need: need.clone(),
                why,
            })
        })?;
        // A check of the message the user reads (this suite's oracle), not a decision on it.
        if !(msg.contains(component) && msg.contains(need.as_str()) && msg.contains(&lower)) {
            return Err(broken(SkewBreak::OlderUnnamed {
                component,
                lower,
                need: need.clone(),
                message: msg,
            }));
        }
    }

    let (major, minor) = exact.compute_capability;
    let other = if (major, minor) == (8, 0) {
        (9, 0)
    } else {
        (8, 0)
    };
    let mut elsewhere = newer.clone();
    elsewhere.compute_capability = other;
    let artifact_cc = format!("sm_{major}{minor}");
    let device_cc = format!("sm_{}{}", other.0, other.1);
    let msg = refuse(&elsewhere).map_err(|why| {
        broken(SkewBreak::ElsewhereAccepted {
            device: device_cc.clone(),
            artifact: artifact_cc.clone(),
            why,
        })
    })?;
    if !(msg.starts_with("gpu_compute_capability")
        && msg.contains(&artifact_cc)
        && msg.contains(&device_cc))
    {
        return Err(broken(SkewBreak::ElsewhereUnnamed {
            device: device_cc,
            message: msg,
        }));
    }
    // Both environment checks failing: the compute capability still leads.
    let mut both = elsewhere.clone();
    for ((_, slot), need) in abi_slots(&mut both).into_iter().zip(&needed) {
        if let Some(lower) = older_version(need) {
            *slot = lower;
        }
    }
    if needed.iter().any(|n| older_version(n).is_some()) {
        let msg = refuse(&both).map_err(|why| {
            broken(SkewBreak::BothAccepted {
                device: device_cc.clone(),
                why,
            })
        })?;
        if !msg.starts_with("gpu_compute_capability") {
            return Err(broken(SkewBreak::BothUnordered { message: msg }));
        }
    }
    Ok(())
}

/// Outputs bit-identical to the recorded ones, replica by replica.
fn compare_outputs(produced: &[IoCase], recorded: &[IoCase]) -> Result<(), OutputsDiffer> {
    if produced.len() != recorded.len() {
        return Err(OutputsDiffer::Replicas {
            produced: produced.len(),
            recorded: recorded.len(),
        });
    }
    for (r, (got, want)) in produced.iter().zip(recorded).enumerate() {
        if got.outputs.len() != want.outputs.len() {
            return Err(OutputsDiffer::Outputs {
                replica: r,
                produced: got.outputs.len(),
                recorded: want.outputs.len(),
            });
        }
        for (i, (g, w)) in got.outputs.iter().zip(&want.outputs).enumerate() {
            bit_identical(g, w).map_err(|mismatch| OutputsDiffer::Bits {
                replica: r,
                output: i,
                mismatch,
            })?;
        }
    }
    Ok(())
}

/// Fields whose differences golden verification ignores: debug information only.
///
/// - `xla.gpu.ThunkInfoProto.profile_annotation`: the profiler's label for a thunk.
/// - `xla.OpMetadata`: source locations and op names of the embedded HLO.
pub const VERIFY_IGNORED: &[&str] = &[
    "xla.gpu.ThunkInfoProto.profile_annotation",
    "xla.OpMetadata",
];

/// Golden verification: today's compiler recompiles the newest version's HLO for its target and
/// must reproduce the golden field by field.
pub fn golden_verification(golden: &GoldenCase) -> Result<(), ReplayError> {
    let label = golden.label();
    let module = read_module(golden)?;
    let origin = format!("{}/{TARGET_FILE}", golden.dir.display());
    let config = proto::parse_target_config(&golden.target_config, &origin)?;
    let target = compiler::Target::from_config(config, &origin)?;
    let today = compiler::compile(&module, &target, &compiler::CompileOptions::default()).map_err(
        |error| ReplayError::Compile {
            label: label.clone(),
            error,
        },
    )?;
    let golden_exe: GpuExecutableProto =
        proto::decode_limited(&golden.bytes, usize::MAX).map_err(|error| ReplayError::Decode {
            origin: format!("{label}/{EXECUTABLE_FILE}"),
            error,
        })?;
    let mut diffs = Vec::new();
    diff_messages(
        &proto::to_dynamic(&golden_exe),
        &proto::to_dynamic(&today),
        "",
        &mut diffs,
    );
    if diffs.is_empty() {
        return Ok(());
    }
    Err(ReplayError::NotReproduced {
        label,
        target: golden.target.clone(),
        diffs,
    })
}

fn is_ignored(full_name: &str) -> bool {
    VERIFY_IGNORED.contains(&full_name)
}

/// Field-by-field differences between two messages of the same type, as readable lines.
pub fn diff_messages(
    golden: &DynamicMessage,
    today: &DynamicMessage,
    path: &str,
    out: &mut Vec<String>,
) {
    let desc = golden.descriptor();
    if is_ignored(desc.full_name()) {
        return;
    }
    for field in desc.fields() {
        if is_ignored(field.full_name()) {
            continue;
        }
        let here = if path.is_empty() {
            field.name().to_owned()
        } else {
            format!("{path}.{}", field.name())
        };
        let (a, b) = (golden.get_field(&field), today.get_field(&field));
        diff_values(&a, &b, &here, out);
    }
}

fn diff_values(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Message(x), Value::Message(y)) => diff_messages(x, y, path, out),
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                out.push(format!(
                    "{path}: golden has {} elements, today {}",
                    x.len(),
                    y.len()
                ));
            }
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                diff_values(p, q, &format!("{path}[{i}]"), out);
            }
        }
        (Value::String(x), Value::String(y))
            if x != y && (x.contains('\n') || y.contains('\n')) =>
        {
            let diff = similar::TextDiff::from_lines(x.as_str(), y.as_str())
                .unified_diff()
                .context_radius(2)
                .header("golden", "today")
                .to_string();
            let clipped: String = diff.lines().take(40).collect::<Vec<_>>().join("\n");
            out.push(format!("{path}: text differs:\n{clipped}"));
        }
        // Floats compare by bits: a NaN constant must equal itself, and -0.0 is not 0.0.
        (Value::F32(x), Value::F32(y)) if x.to_bits() == y.to_bits() => {}
        (Value::F64(x), Value::F64(y)) if x.to_bits() == y.to_bits() => {}
        (x, y) if x != y => out.push(format!("{path}: golden {}, today {}", short(x), short(y))),
        _ => {}
    }
}

fn short(v: &Value) -> String {
    let s = format!("{v:?}");
    if s.len() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s
    }
}

/// Integrity of one version: every file hashed in the manifest matches, none missing or extra.
pub fn integrity(store: &GoldenStore, target: &str, version: u32) -> Result<(), ReplayError> {
    let dir = store.version_dir(target, version);
    let problems = verify_dir(&dir);
    if problems.is_empty() {
        return Ok(());
    }
    Err(ReplayError::Integrity {
        target: target.to_owned(),
        version,
        problems,
    })
}

/// The manifest of a version.
pub fn manifest(
    store: &GoldenStore,
    target: &str,
    version: u32,
) -> Result<Manifest, ManifestError> {
    Manifest::read(&store.version_dir(target, version))
}

/// The manifest of a version and the date it records as created (an error naming the
/// version when that date does not parse): what the forward check and the coverage census
/// both pick versions by.
pub(crate) fn dated_manifest(
    store: &GoldenStore,
    target: &str,
    version: u32,
) -> Result<(Manifest, schema_history::Date), ReplayError> {
    let m = manifest(store, target, version)?;
    let created = m.created.parse().map_err(|error| ReplayError::Created {
        target: target.to_owned(),
        version,
        error,
    })?;
    Ok((m, created))
}

#[cfg(test)]
mod value_tests {
    use super::*;

    #[test]
    fn a_boolean_seen_one_way_is_uncovered_unless_unreachable() {
        let used: std::collections::BTreeSet<String> = [
            "value:xla.gpu.GemmThunkProto.deterministic=true",
            "value:xla.gpu.ConditionalThunkProto.branch_index_is_bool=true",
            "value:xla.gpu.ConditionalThunkProto.branch_index_is_bool=false",
            "value:xla.BufferAllocationProto.is_tuple=false",
        ]
        .map(str::to_owned)
        .into();
        assert_eq!(
            uncovered_values(&used),
            ["value:xla.gpu.GemmThunkProto.deterministic=false (a boolean the runtime reads; goldens set it only to true)"]
        );
    }
}
