//! The checks the golden suite runs: backward compatibility (old artifacts in today's runtime),
//! golden verification (today's compiler reproduces the newest version), forward compatibility
//! (today's artifacts against an older schema) and integrity.
//!
//! Every failure message says what broke and where to read about it (docs/compatibility.md, or
//! docs/goldens.md for regeneration).
use std::path::{Path, PathBuf};

use hlo::io::IoCase;
use hlo::literal::Array;
use proto::prost_reflect::{
    DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage, Value,
};
use proto::xla::gpu::GpuExecutableProto;
use runtime::DeviceDescription;

use super::manifest::{verify_dir, Manifest};
use super::regen::{io_file_name, run_artifact, EXECUTABLE_FILE, MODULE_FILE, TARGET_FILE};
use super::store::GoldenStore;

/// Where a failure points the reader.
pub const COMPAT_GUIDE: &str = "docs/compatibility.md";

/// The command that writes the next version of a target.
pub fn regen_command(target: &str) -> String {
    format!("cargo run --release -p harness --bin aot -- goldens regen --target {target}")
}

/// One golden case of one version, read from disk.
#[derive(Debug, Clone)]
pub struct GoldenCase {
    /// Target name.
    pub target: String,
    /// Version number.
    pub version: u32,
    /// Case name.
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
    ) -> Result<GoldenCase, String> {
        let dir = store.version_dir(target, version);
        let case_dir = dir.join(case);
        let read =
            |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
        let bytes = read(&case_dir.join(EXECUTABLE_FILE))?;
        let target_config = String::from_utf8(read(&dir.join(TARGET_FILE))?)
            .map_err(|_| format!("{}/{TARGET_FILE} is not UTF-8", dir.display()))?;
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
            return Err(format!("{} has no io file", case_dir.display()));
        }
        let io = io_paths
            .iter()
            .map(|p| IoCase::read(p).map_err(|e| format!("{}: {e}", p.display())))
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

    fn description(&self) -> Result<DeviceDescription, String> {
        let config = proto::parse_target_config(
            &self.target_config,
            &format!("{}/{TARGET_FILE}", self.dir.display()),
        )
        .map_err(|e| e.to_string())?;
        DeviceDescription::from_target_config(&config).map_err(|e| e.to_string())
    }
}

/// Bit equality of two arrays, NaN equal to NaN (io files carry NaN without its payload).
fn bit_identical(got: &Array, want: &Array) -> Result<(), String> {
    if got.dtype() != want.dtype() || got.dims() != want.dims() {
        return Err(format!(
            "produced {}, recorded {}",
            got.shape_string(),
            want.shape_string()
        ));
    }
    let (g, w) = (got.data().to_bits(), want.data().to_bits());
    let gf = got.data().to_f64_vec();
    let wf = want.data().to_f64_vec();
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let both_nan = got.dtype().is_float()
            && gf.get(i).is_some_and(|x| x.is_nan())
            && wf.get(i).is_some_and(|x| x.is_nan());
        if a != b && !both_nan {
            return Err(format!(
                "element {i}: produced {} (bits {a:#x}), recorded {} (bits {b:#x})",
                gf.get(i).copied().unwrap_or(f64::NAN),
                wf.get(i).copied().unwrap_or(f64::NAN)
            ));
        }
    }
    Ok(())
}

/// Whether the reference evaluator can be the oracle for a module: not when it calls custom-call
/// targets, whose semantics live in the runtime's registry, not in HLO.
pub fn evaluator_applies(module: &hlo::HloModule) -> bool {
    !module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .any(|i| i.opcode == hlo::Opcode::CustomCall)
}

/// Backward compatibility: today's runtime loads the exact bytes, executes them, produces
/// outputs bit-identical to the recorded ones and, for single-replica cases, within tolerance of
/// the reference evaluator. (Multi-replica and custom-call cases were checked against their
/// hand-computed expected values when recorded; the evaluator has no replicas and no registry.)
pub fn backward_compat(golden: &GoldenCase) -> Result<(), String> {
    replay_bytes(golden, &golden.bytes)
}

/// [`backward_compat`] on substitute bytes (used to prove the suite catches mutations).
pub fn replay_bytes(golden: &GoldenCase, bytes: &[u8]) -> Result<(), String> {
    let label = golden.label();
    let broken = |what: String| {
        format!(
            "backward compatibility broken for {label}: {what}\n\
             Today's runtime must load and run, with identical results, every artifact compilers \
             emitted in the last 6 months. If this change removes or changes a construct that \
             artifact uses, keep the old path (with an expiry comment) until the window passes; \
             see {COMPAT_GUIDE}."
        )
    };
    let description = golden.description()?;
    let produced =
        run_artifact(bytes, &description, &golden.io).map_err(|e| broken(format!("{e:#}")))?;
    for (r, (got, want)) in produced.iter().zip(&golden.io).enumerate() {
        if got.outputs.len() != want.outputs.len() {
            return Err(broken(format!(
                "replica {r} produced {} outputs, {} recorded",
                got.outputs.len(),
                want.outputs.len()
            )));
        }
        for (i, (g, w)) in got.outputs.iter().zip(&want.outputs).enumerate() {
            bit_identical(g, w).map_err(|m| {
                broken(format!(
                    "replica {r} output {i} is not bit-identical to the recorded one: {m} \
                     (execution semantics changed)"
                ))
            })?;
        }
    }
    if let [single] = golden.io.as_slice() {
        let text = std::fs::read_to_string(golden.dir.join(&golden.case).join(MODULE_FILE))
            .map_err(|e| format!("{label}: cannot read {MODULE_FILE}: {e}"))?;
        let module = hlo::parse_module(&text).map_err(|e| format!("{label}/{MODULE_FILE}:{e}"))?;
        if !evaluator_applies(&module) {
            return Ok(());
        }
        let reference = hlo::eval::evaluate_flat(&module, &single.inputs)
            .map_err(|e| format!("{label}: the reference evaluator failed: {e}"))?;
        let produced_outputs = produced
            .first()
            .map(|p| p.outputs.clone())
            .unwrap_or_default();
        let mut report = Vec::new();
        let matched = crate::run_cmd::report("", &produced_outputs, &reference, &mut report)
            .map_err(|e| format!("{label}: {e}"))?;
        if matched != reference.len() {
            return Err(broken(format!(
                "outputs differ from the reference evaluator beyond tolerance:\n{}",
                String::from_utf8_lossy(&report)
            )));
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
pub fn golden_verification(golden: &GoldenCase) -> Result<(), String> {
    let label = golden.label();
    let text = std::fs::read_to_string(golden.dir.join(&golden.case).join(MODULE_FILE))
        .map_err(|e| format!("{label}: cannot read {MODULE_FILE}: {e}"))?;
    let module = hlo::parse_module(&text).map_err(|e| format!("{label}/{MODULE_FILE}:{e}"))?;
    let origin = format!("{}/{TARGET_FILE}", golden.dir.display());
    let config =
        proto::parse_target_config(&golden.target_config, &origin).map_err(|e| e.to_string())?;
    let target = compiler::Target::from_config(config, &origin).map_err(|e| e.to_string())?;
    let today =
        compiler::compile(&module, &target, &compiler::CompileOptions::default()).map_err(|e| {
            format!("{label}: today's compiler cannot compile the golden's module: {e}")
        })?;
    let golden_exe: GpuExecutableProto = proto::decode_limited(&golden.bytes, usize::MAX)
        .map_err(|e| format!("{label}/{EXECUTABLE_FILE}: {e}"))?;
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
    let shown = diffs.len().min(20);
    Err(format!(
        "today's compiler no longer reproduces {label} ({} differing fields{}):\n{}\n\
         If the change is intended, record it as a new version (never edit an existing one):\n  {}\n\
         See docs/goldens.md; a new construct must first land behind an emission flag (see {COMPAT_GUIDE}).",
        diffs.len(),
        if shown < diffs.len() { format!(", first {shown} shown") } else { String::new() },
        diffs.iter().take(shown).map(String::as_str).collect::<Vec<_>>().join("\n"),
        regen_command(&golden.target),
    ))
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

/// An older schema to decode today's artifacts with: the oldest snapshot at least 14 days older
/// than `today`, or the oldest snapshot there is.
#[derive(Debug, Clone)]
pub struct OldSchema {
    /// Snapshot directory name.
    pub name: String,
    /// Its descriptor pool.
    pub pool: DescriptorPool,
}

/// Picks the forward-compatibility schema from `schema_history/snapshots`.
pub fn old_schema(snapshots: &Path, today: schema_history::Date) -> Result<OldSchema, String> {
    let entries = std::fs::read_dir(snapshots)
        .map_err(|e| format!("cannot read {}: {e}", snapshots.display()))?;
    let mut dated: Vec<(schema_history::Date, String, PathBuf)> = Vec::new();
    for e in entries.filter_map(Result::ok) {
        let dir = e.path();
        let meta = dir.join("surface.json");
        let Ok(text) = std::fs::read(&meta) else {
            continue;
        };
        let meta: schema_history::SnapshotMeta =
            serde_json::from_slice(&text).map_err(|err| format!("{}: {err}", meta.display()))?;
        dated.push((meta.date, e.file_name().to_string_lossy().into_owned(), dir));
    }
    dated.sort();
    let cutoff = today.add_days(-14);
    let chosen = dated
        .iter()
        .filter(|(d, _, _)| *d <= cutoff)
        .max()
        .or_else(|| dated.first())
        .ok_or_else(|| format!("no schema snapshots under {}", snapshots.display()))?;
    let bytes = std::fs::read(chosen.2.join("descriptor_set.bin"))
        .map_err(|e| format!("{}: {e}", chosen.2.display()))?;
    let pool =
        DescriptorPool::decode(bytes.as_slice()).map_err(|e| format!("{}: {e}", chosen.1))?;
    Ok(OldSchema {
        name: chosen.1.clone(),
        pool,
    })
}

/// Forward compatibility: every field of today's artifact that the older schema does not know
/// must be `ignorable`, and every oneof variant set must be one the older schema knows.
pub fn forward_compat(today: &GpuExecutableProto, old: &OldSchema) -> Result<(), String> {
    let Some(old_root) = old.pool.get_message_by_name(proto::ROOT_MESSAGE) else {
        return Err(format!(
            "snapshot {} has no {}",
            old.name,
            proto::ROOT_MESSAGE
        ));
    };
    let mut problems = Vec::new();
    check_known(&proto::to_dynamic(today), &old_root, "", &mut problems);
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "today's compiler emits constructs a runtime built from schema snapshot {} cannot read:\n{}\n\
         A new field must be marked [(xla.compat.ignorable) = true] if older runtimes may drop it, \
         or stay behind an emission flag that is off by default until 2 weeks have passed; see {COMPAT_GUIDE}.",
        old.name,
        problems.join("\n")
    ))
}

fn check_known(msg: &DynamicMessage, old: &MessageDescriptor, path: &str, out: &mut Vec<String>) {
    for (field, value) in msg.fields() {
        let here = if path.is_empty() {
            field.name().to_owned()
        } else {
            format!("{path}.{}", field.name())
        };
        let Some(old_field) = old.get_field(field.number()) else {
            if field.containing_oneof().is_some() {
                out.push(format!(
                    "{here}: oneof variant {} (number {}) is unknown to the older schema",
                    field.full_name(),
                    field.number()
                ));
            } else if !proto::field_is_ignorable(&field) {
                out.push(format!(
                    "{here}: field {} (number {}) is unknown to the older schema and not ignorable",
                    field.full_name(),
                    field.number()
                ));
            }
            continue;
        };
        let child = match old_field.kind() {
            proto::prost_reflect::Kind::Message(m) => Some(m),
            _ => None,
        };
        let Some(child) = child else { continue };
        match value {
            Value::Message(m) => check_known(m, &child, &here, out),
            Value::List(items) => {
                for (i, v) in items.iter().enumerate() {
                    if let Value::Message(m) = v {
                        check_known(m, &child, &format!("{here}[{i}]"), out);
                    }
                }
            }
            Value::Map(entries) => {
                let value_field = child.map_entry_value_field();
                if let proto::prost_reflect::Kind::Message(vm) = value_field.kind() {
                    for v in entries.values() {
                        if let Value::Message(m) = v {
                            check_known(m, &vm, &here, out);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Integrity of one version: every file hashed in the manifest matches, none missing or extra.
pub fn integrity(store: &GoldenStore, target: &str, version: u32) -> Result<(), String> {
    let dir = store.version_dir(target, version);
    let problems = verify_dir(&dir);
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{target}/v{version} does not match its manifest (versions are immutable once committed; \
         restore the files from git or regenerate a new version, see docs/goldens.md):\n{}",
        problems
            .iter()
            .map(|p| format!("  {p}"))
            .collect::<Vec<_>>()
            .join("\n")
    ))
}

/// The manifest of a version.
pub fn manifest(store: &GoldenStore, target: &str, version: u32) -> Result<Manifest, String> {
    Manifest::read(&store.version_dir(target, version))
}
