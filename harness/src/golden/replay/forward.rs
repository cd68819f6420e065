//! Forward compatibility: today's artifacts read by the schema of an older runtime (every field
//! and enum value it knows, read the same way), and the ABI versions it accepts.
use std::path::Path;

use proto::prost_reflect::{
    DescriptorPool, DynamicMessage, EnumDescriptor, Kind, MessageDescriptor, Value,
};
use proto::stream_executor::{executable_abi_version_proto, ExecutableAbiVersionProto};
use proto::xla::gpu::GpuExecutableProto;
use proto::{Version, WireClass};

use super::*;

/// What a runtime built from an older snapshot understands: its full schema (the descriptor
/// set) and the rest of its surface (opcodes, registry names), as recorded in the snapshot.
#[derive(Debug, Clone)]
pub struct OldSchema {
    /// Snapshot directory name.
    pub name: String,
    /// Its descriptor pool.
    pub pool: DescriptorPool,
    /// Its non-proto surface (`surface.json`): HLO opcodes and registry names it accepts.
    pub extras: schema_history::Extras,
}

/// Picks the forward-compatibility schema from `schema_history/snapshots`: the newest snapshot at
/// least 14 days older than `today` (the oldest runtime the forward window promises to serve), or
/// the oldest snapshot there is.
pub fn old_schema(snapshots: &Path, today: schema_history::Date) -> Result<OldSchema, ReplayError> {
    let entries = std::fs::read_dir(snapshots).map_err(|error| ReplayError::Snapshots {
        dir: snapshots.to_owned(),
        error,
    })?;
    let mut dated: Vec<(
        schema_history::Date,
        String,
        PathBuf,
        schema_history::SnapshotMeta,
    )> = Vec::new();
    for e in entries.filter_map(Result::ok) {
        let dir = e.path();
        let meta = dir.join("surface.json");
        let Ok(text) = crate::golden::read_store_file(&meta) else {
            continue;
        };
        let meta: schema_history::SnapshotMeta =
            serde_json::from_slice(&text).map_err(|error| ManifestError::Json {
                path: meta.clone(),
                error,
            })?;
        dated.push((
            meta.date,
            e.file_name().to_string_lossy().into_owned(),
            dir,
            meta,
        ));
    }
    dated.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let cutoff = today.add_days(-14);
    let chosen = dated
        .iter()
        .rfind(|(d, _, _, _)| *d <= cutoff)
        .or_else(|| dated.first())
        .ok_or_else(|| ReplayError::NoSnapshots {
            dir: snapshots.to_owned(),
        })?;
    let bytes =
        crate::golden::read_store_file(chosen.2.join("descriptor_set.bin")).map_err(|error| {
            ReplayError::SnapshotRead {
                dir: chosen.2.clone(),
                error,
            }
        })?;
    let pool =
        DescriptorPool::decode(bytes.as_slice()).map_err(|error| ReplayError::SnapshotDecode {
            name: chosen.1.clone(),
            error,
        })?;
    Ok(OldSchema {
        name: chosen.1.clone(),
        pool,
        extras: chosen.3.extras.clone(),
    })
}

/// Forward compatibility: today's artifact read as a runtime built from the older snapshot reads
/// it. Every problem is reported, each naming the construct:
///
/// - a field the older schema does not know that is not `ignorable`, or an unknown oneof variant;
/// - a field whose number it knows with another wire type or declared type (an `int64` read as
///   `string` decodes garbage or fails), or another cardinality;
/// - an enum value number it does not know;
/// - an HLO opcode of the embedded module or a custom-call target it does not accept (from the
///   snapshot's surface);
/// - ABI versions above `accepted_abi`, the versions the older compiler emitted for the target
///   (what serving hosts of that runtime were set up for), when given.
pub fn forward_compat(
    today: &GpuExecutableProto,
    old: &OldSchema,
    accepted_abi: Option<&ExecutableAbiVersionProto>,
) -> Result<(), ReplayError> {
    let Some(old_root) = old.pool.get_message_by_name(proto::ROOT_MESSAGE) else {
        return Err(ReplayError::SnapshotRoot {
            name: old.name.clone(),
            root: proto::ROOT_MESSAGE,
        });
    };
    let mut problems = Vec::new();
    check_known(&proto::to_dynamic(today), &old_root, "", &mut problems, 0);
    let known = old.extras.constructs();
    for construct in crate::golden::census::data_constructs(today) {
        let kind = if construct.starts_with("opcode:") {
            "HLO opcode"
        } else if construct.starts_with("registry:") {
            "custom-call target"
        } else {
            continue;
        };
        if !known.contains(&construct) {
            problems.push(format!(
                "{construct}: {kind} unknown to the older runtime (not in snapshot {}'s surface)",
                old.name
            ));
        }
    }
    if let Some(accepted) = accepted_abi {
        check_abi_not_above(today, accepted, &mut problems);
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(ReplayError::Forward {
        snapshot: old.name.clone(),
        problems,
    })
}

/// The ABI versions runtimes of the forward window were serving for `case` on `target`: those of
/// the case's artifact in the newest version created at least 14 days before `today`, or in the
/// oldest version there is. `Ok(None)` when no such version holds the case (a new case).
pub fn accepted_abi(
    store: &GoldenStore,
    target: &str,
    case: &str,
    today: schema_history::Date,
) -> Result<Option<ExecutableAbiVersionProto>, ReplayError> {
    let versions = store.versions(target)?;
    let cutoff = today.add_days(-14);
    let mut chosen = None;
    for &v in &versions {
        let (m, created) = dated_manifest(store, target, v)?;
        if created <= cutoff || chosen.is_none() {
            chosen = Some((v, m));
        }
    }
    let Some((v, m)) = chosen else {
        return Ok(None);
    };
    if !m.cases.iter().any(|c| c == case) {
        return Ok(None);
    }
    let path = store
        .version_dir(target, v)
        .join(case)
        .join(EXECUTABLE_FILE);
    let bytes = crate::golden::read_store_file(&path).map_err(|error| ManifestError::Read {
        path: path.clone(),
        error,
    })?;
    // Only the ABI is wanted: the embedded module and the thunks, nearly all of the bytes, stay
    // undecoded.
    use proto::fields::{EXECUTABLE_HLO_MODULE_WITH_CONFIG, EXECUTABLE_THUNKS};
    let split = proto::decode_except::<GpuExecutableProto>(
        &bytes,
        usize::MAX,
        &[EXECUTABLE_HLO_MODULE_WITH_CONFIG, EXECUTABLE_THUNKS],
    )
    .map_err(|error| ReplayError::Decode {
        origin: path.display().to_string(),
        error,
    })?;
    Ok(split.message.executable_abi_version)
}

/// The `X.Y.Z` components of a version string (missing components are 0); `None` if not an
/// `X.Y.Z` version ([`Version::parse`], the runtime's reading).
pub(super) fn version_triple(v: &str) -> Option<(u64, u64, u64)> {
    Version::parse(v).map(|v| (v.major, v.minor, v.patch))
}

pub(super) fn cuda_versions(
    abi: &ExecutableAbiVersionProto,
) -> [(&'static str, &'static str, String); 3] {
    let v = match &abi.platform_version {
        Some(executable_abi_version_proto::PlatformVersion::CudaPlatformVersion(v)) => v.clone(),
        None => Default::default(),
    };
    [
        (
            "cuda_toolkit_version",
            "CUDA toolkit",
            v.cuda_toolkit_version,
        ),
        ("cudnn_version", "cuDNN", v.cudnn_version),
        ("cub_version", "CUB", v.cub_version),
    ]
}

pub(super) fn check_abi_not_above(
    today: &GpuExecutableProto,
    accepted: &ExecutableAbiVersionProto,
    out: &mut Vec<String>,
) {
    let Some(abi) = &today.executable_abi_version else {
        return;
    };
    if !abi
        .platform_name
        .eq_ignore_ascii_case(&accepted.platform_name)
    {
        out.push(format!(
            "executable_abi_version.platform_name: today's artifact says \"{}\", the older runtime's artifacts \"{}\"",
            abi.platform_name.escape_debug(),
            accepted.platform_name.escape_debug()
        ));
    }
    for ((field, component, need), (_, _, had)) in
        cuda_versions(abi).into_iter().zip(cuda_versions(accepted))
    {
        if need.is_empty() {
            continue;
        }
        let above = match (version_triple(&need), version_triple(&had)) {
            (Some(n), Some(h)) => n > h,
            // An unparsable requirement, or one the older artifacts never made, is above.
            _ => true,
        };
        if above {
            out.push(format!(
                "executable_abi_version.cuda_platform_version.{field}: today's artifact needs {component} {need}, above the {} the older runtime's artifacts needed (its hosts may not have it)",
                if had.is_empty() { "none".to_owned() } else { had }
            ));
        }
    }
}

/// A field's declared type as a reader sees it (`int64`, `string`, `message xla.ShapeProto`).
pub(super) fn declared_type(kind: &Kind) -> String {
    match kind {
        Kind::Message(m) => format!("message {}", m.full_name()),
        Kind::Enum(e) => format!("enum {}", e.full_name()),
        other => format!("{other:?}").to_ascii_lowercase(),
    }
}

/// An integer value as written, widened.
pub(super) fn integer(v: &Value) -> Option<i128> {
    match v {
        Value::I32(x) => Some((*x).into()),
        Value::I64(x) => Some((*x).into()),
        Value::U32(x) => Some((*x).into()),
        Value::U64(x) => Some((*x).into()),
        Value::Bool(b) => Some((*b).into()),
        Value::EnumNumber(n) => Some((*n).into()),
        _ => None,
    }
}

/// Whether an older reader of kind `old` reads the integer `v` back as the same number.
pub(super) fn fits(old: &Kind, v: i128) -> bool {
    match old {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Enum(_) => i32::try_from(v).is_ok(),
        Kind::Uint32 | Kind::Fixed32 => u32::try_from(v).is_ok(),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => i64::try_from(v).is_ok(),
        Kind::Uint64 | Kind::Fixed64 => u64::try_from(v).is_ok(),
        Kind::Bool => v == 0 || v == 1,
        _ => false,
    }
}

/// Whether an older reader of `old` reads `value`, written today as `today`, as the same thing:
/// `Err` says why not. Messages are compared by the recursion (field by field, by number) and
/// enums value by value, so two message or two enum types pass here.
pub(super) fn same_reading(today: &Kind, old: &Kind, value: &Value) -> Result<(), ReadingMismatch> {
    // Same kind (two messages, two enums, or the same scalar type): nothing to check here. A
    // comparison without formatting, since it runs for every field of every message, the
    // embedded module's instructions included.
    if std::mem::discriminant(today) == std::mem::discriminant(old) {
        return Ok(());
    }
    let mismatch = |value: Option<i128>| ReadingMismatch {
        today: declared_type(today),
        today_wire: WireClass::of(today, false).name(),
        old: declared_type(old),
        old_wire: WireClass::of(old, false).name(),
        value,
    };
    // Protobuf documents a change of integer type as wire-compatible within one wire class.
    let class = WireClass::of_integer(today);
    if class.is_none() || class != WireClass::of_integer(old) {
        return Err(mismatch(None));
    }
    let values: Vec<&Value> = match value {
        Value::List(items) => items.iter().collect(),
        v => vec![v],
    };
    for v in values {
        match integer(v) {
            Some(n) if fits(old, n) => {}
            Some(n) => return Err(mismatch(Some(n))),
            None => return Err(mismatch(None)),
        }
    }
    Ok(())
}

/// Why an older reader reads a field as something else: the declared types (and their wire
/// types) today and in the older schema, and the value that does not fit when the types are
/// wire-compatible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ReadingMismatch {
    today: String,
    today_wire: &'static str,
    old: String,
    old_wire: &'static str,
    value: Option<i128>,
}

impl std::fmt::Display for ReadingMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (w, ow) = (self.today_wire, self.old_wire);
        write!(
            f,
            "{} ({w}) today, the older schema declares {} ({ow}){}",
            self.today,
            self.old,
            if w == ow {
                ""
            } else {
                ": the wire type differs"
            }
        )?;
        if let Some(n) = self.value {
            write!(
                f,
                ": the value {n} does not fit the older reader's {}",
                self.old
            )?;
        }
        Ok(())
    }
}

pub(super) fn check_known(
    msg: &DynamicMessage,
    old: &MessageDescriptor,
    path: &str,
    out: &mut Vec<String>,
    depth: usize,
) {
    if depth > MAX_FORWARD_DEPTH {
        out.push(format!(
            "{path}: nested deeper than {MAX_FORWARD_DEPTH} messages"
        ));
        return;
    }
    for (field, value) in msg.fields() {
        let here = if path.is_empty() {
            field.name().to_owned()
        } else {
            format!("{path}.{}", field.name())
        };
        let Some(old_field) = old.get_field(field.number()) else {
            // A proto3 `optional` field sits in a synthetic oneof of its own: it is a plain
            // field with presence (an older reader skips it as unknown, like any field), not a
            // variant of a real oneof whose older readers would see "none set".
            if field.containing_oneof().is_some_and(|o| !o.is_synthetic()) {
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
        let (kind, old_kind) = (field.kind(), old_field.kind());
        if let Err(why) = same_reading(&kind, &old_kind, value) {
            out.push(format!(
                "{here}: field {} (number {}) is {why} (as {})",
                field.full_name(),
                field.number(),
                old_field.full_name(),
            ));
            continue;
        }
        if field.is_list() != old_field.is_list() || field.is_map() != old_field.is_map() {
            let card = |f: &proto::prost_reflect::FieldDescriptor| {
                if f.is_map() {
                    "a map"
                } else if f.is_list() {
                    "repeated"
                } else {
                    "singular"
                }
            };
            out.push(format!(
                "{here}: field {} (number {}) is {} today, {} in the older schema",
                field.full_name(),
                field.number(),
                card(&field),
                card(&old_field)
            ));
            continue;
        }
        match (&old_kind, value) {
            (Kind::Enum(e), Value::EnumNumber(n)) => check_enum(e, *n, &here, out),
            (Kind::Enum(e), Value::List(items)) => {
                for (i, v) in items.iter().enumerate() {
                    if let Value::EnumNumber(n) = v {
                        check_enum(e, *n, &format!("{here}[{i}]"), out);
                    }
                }
            }
            (Kind::Message(child), Value::Message(m)) => {
                check_known(m, child, &here, out, depth + 1)
            }
            (Kind::Message(child), Value::List(items)) => {
                for (i, v) in items.iter().enumerate() {
                    if let Value::Message(m) = v {
                        check_known(m, child, &format!("{here}[{i}]"), out, depth + 1);
                    }
                }
            }
            (Kind::Message(entry), Value::Map(entries)) => {
                let value_field = entry.map_entry_value_field();
                if let Kind::Message(vm) = value_field.kind() {
                    for v in entries.values() {
                        if let Value::Message(m) = v {
                            check_known(m, &vm, &here, out, depth + 1);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Deepest message nesting the forward check walks (the schema's own nesting is far shallower;
/// this bounds the recursion on a hostile artifact).
pub(super) const MAX_FORWARD_DEPTH: usize = 64;

pub(super) fn check_enum(e: &EnumDescriptor, n: i32, here: &str, out: &mut Vec<String>) {
    if e.get_value(n).is_none() {
        out.push(format!(
            "{here}: enum value {n} of {} is unknown to the older schema",
            e.full_name()
        ));
    }
}
