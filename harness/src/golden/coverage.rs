//! The runtime-side coverage gate (`coverage::runtime::<target>`, docs/goldens.md): every thunk
//! kind today's runtime executes, every behaviour class its executor reads, every value class of
//! the booleans that decide execution, and every registered custom-call name is used by some
//! golden inside the 6-month window, so a change to its semantics fails a replay.
use proto::prost_reflect::{DynamicMessage, Kind, Value};
use proto::xla::gpu::GpuExecutableProto;
use runtime::DeviceDescription;

use super::error::{CoverageError, ReplayError};
use super::replay::{dated_manifest, GoldenCase};
use super::store::GoldenStore;

/// The thunk kinds (`impl` oneof variants of `xla.gpu.ThunkProto`, from the descriptor) that
/// today's runtime decodes, found by asking it: each variant, set to its default message, is
/// validated inside `base` for `device` (the golden's own); a variant refused with UNIMPLEMENTED
/// is one this runtime does not execute, any other outcome (loaded, or refused for its empty
/// fields) is one it does.
pub fn runtime_thunk_kinds(
    base: &GpuExecutableProto,
    device: &DeviceDescription,
) -> Result<Vec<(String, bool)>, CoverageError> {
    let pool = proto::descriptor_pool();
    let thunk = pool
        .get_message_by_name("xla.gpu.ThunkProto")
        .ok_or(CoverageError::Schema(
            "the schema has no xla.gpu.ThunkProto",
        ))?;
    let oneof = thunk
        .oneofs()
        .find(|o| o.name() == "impl")
        .ok_or(CoverageError::Schema(
            "xla.gpu.ThunkProto has no oneof impl",
        ))?;
    let info = thunk
        .get_field_by_name("thunk_info")
        .ok_or(CoverageError::Schema(
            "xla.gpu.ThunkProto has no thunk_info",
        ))?;
    let flags = runtime::RuntimeFlags::default();
    let registry = runtime::Registry::builtin();
    let mut out = Vec::new();
    for variant in oneof.fields() {
        let Kind::Message(body) = variant.kind() else {
            continue;
        };
        let mut probe = DynamicMessage::new(thunk.clone());
        if let Kind::Message(info_desc) = info.kind() {
            probe.set_field(&info, Value::Message(DynamicMessage::new(info_desc)));
        }
        probe.set_field(&variant, Value::Message(DynamicMessage::new(body)));
        let probe: proto::xla::gpu::ThunkProto =
            probe.transcode_to().map_err(|error| CoverageError::Probe {
                variant: variant.full_name().to_owned(),
                error,
            })?;
        let mut exe = base.clone();
        exe.thunks = vec![probe];
        let bytes = proto::prost::Message::encode_to_vec(&exe);
        let executes = !matches!(
            runtime::validate(&bytes, device, &flags, &registry),
            Err(e) if e.code() == runtime::Code::Unimplemented
        );
        out.push((variant.full_name().to_owned(), executes));
    }
    Ok(out)
}

/// Coverage from the runtime's side: every thunk kind the runtime executes and every name (and
/// legacy alias) its registry resolves must be used by a golden of `target` inside the 6-month
/// window, in any of `stores` (compiled and hand-written). Otherwise a change to its semantics
/// would pass every gate: add a golden, or drop the support.
pub fn runtime_coverage(
    stores: &[&GoldenStore],
    target: &str,
    today: schema_history::Date,
) -> Result<(), CoverageError> {
    let window_start = today.add_months(-schema_history::BACKWARD_WINDOW_MONTHS);
    let mut used = std::collections::BTreeSet::new();
    let mut base: Option<(GpuExecutableProto, DeviceDescription)> = None;
    for store in stores {
        let versions = match store.versions(target) {
            Ok(v) => v,
            // A store without versions holds no golden (the store's own trial reports it).
            Err(super::GoldenError::NoVersions { .. }) => continue,
            Err(e) => return Err(e.into()),
        };
        for v in versions {
            let (m, created) = dated_manifest(store, target, v)?;
            if created < window_start {
                continue;
            }
            for case in &m.cases {
                let g = GoldenCase::read(store, target, v, case)?;
                let exe = proto::decode_limited(&g.bytes, usize::MAX).map_err(|error| {
                    ReplayError::Decode {
                        origin: g.label(),
                        error,
                    }
                })?;
                used.extend(super::census::value_classes(&exe));
                if base.is_none() {
                    base = Some((exe, g.description()?));
                }
            }
            used.extend(m.census.into_values().flatten());
        }
    }
    let (base, device) = base.ok_or_else(|| CoverageError::NoGolden {
        target: target.to_owned(),
    })?;
    let mut missing = Vec::new();
    for (kind, executes) in runtime_thunk_kinds(&base, &device)? {
        if executes && !used.contains(&kind) {
            missing.push(format!("{kind} (a thunk kind the runtime executes)"));
        }
    }
    missing.extend(uncovered_behaviours(&used));
    missing.extend(uncovered_values(&used));
    for (name, aliases) in runtime::custom_call_names() {
        for n in std::iter::once(&name).chain(&aliases) {
            if !used.contains(&format!("registry:{n}")) {
                let what = if *n == name {
                    "a registered name".to_owned()
                } else {
                    format!("a legacy alias of {name}")
                };
                missing.push(format!("registry:{n} ({what})"));
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(CoverageError::Uncovered {
        target: target.to_owned(),
        missing,
    })
}

/// Value classes no golden reaches, each with why no golden can: the runtime refuses the value at
/// load (the refusal is its behaviour, pinned by the test named), or never reads the field. A
/// runtime that starts reading such a field must take its entry out, and the gate then asks for
/// a golden.
pub const UNREACHABLE_VALUE_CLASSES: &[(&str, &str)] = &[
    (
        "value:xla.BufferAllocationProto.is_tuple=true",
        "not read: runtime/src/load.rs check_allocations treats a tuple-holding allocation as \
         plain device memory (thunks are given element slices; the result tuple's index table \
         is written from output_info_map), harness/tests/xla_artifacts.rs runs XLA's own \
         executables that carry it",
    ),
    (
        "value:xla.BufferAllocationProto.is_thread_local=true",
        "not read: runtime/src/load.rs check_allocations places every allocation in device \
         global memory",
    ),
];

/// The boolean value classes (`census::value_classes`) seen on one side only: for every
/// field some golden sets one way, the other way too (unless [`UNREACHABLE_VALUE_CLASSES`] lists
/// it).
pub fn uncovered_values(used: &std::collections::BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for class in used.iter().filter_map(|c| c.strip_prefix("value:")) {
        let Some((field, side)) = class.rsplit_once('=') else {
            continue;
        };
        let other = format!("value:{field}={}", side != "true");
        if used.contains(&other) {
            continue;
        }
        if UNREACHABLE_VALUE_CLASSES.iter().any(|(c, _)| *c == other) {
            continue;
        }
        out.push(format!(
            "{other} (a boolean the runtime reads; goldens set it only to {side})"
        ));
    }
    out
}

/// The behaviour classes ([`runtime::Behaviour`]) no construct of `used` records: each fixed
/// class, and every registered custom-call target at the API version it is called with: a
/// typed-FFI handler (one with an attribute schema, which the loader refuses through any other
/// API) at `API_VERSION_TYPED_FFI`, every other at the version today's compiler writes by default
/// ([`compiler::DEFAULT_CUSTOM_CALL_API_VERSION`]).
pub fn uncovered_behaviours(used: &std::collections::BTreeSet<String>) -> Vec<String> {
    let default_api = compiler::DEFAULT_CUSTOM_CALL_API_VERSION;
    let typed_ffi: std::collections::BTreeSet<String> = runtime::attribute_schemas()
        .into_iter()
        .map(|(target, _)| target)
        .collect();
    let calls = runtime::custom_call_names().into_iter().map(|(target, _)| {
        let api = if typed_ffi.contains(&target) {
            proto::xla::CustomCallApiVersion::ApiVersionTypedFfi
        } else {
            default_api
        };
        runtime::Behaviour::CustomCall {
            target,
            api_version: api as i32,
        }
    });
    runtime::Behaviour::FIXED
        .iter()
        .cloned()
        .chain(calls)
        .filter(|b| !used.contains(&b.census_name()))
        .map(|b| match &b {
            runtime::Behaviour::CustomCall { .. } => format!(
                "{} (a registered target at the API version it is called with)",
                b.census_name()
            ),
            _ => format!(
                "{} (a behaviour class the runtime's executor reads)",
                b.census_name()
            ),
        })
        .collect()
}
