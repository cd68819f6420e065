//! The golden suite: what the `cargo test` CI gate runs against `goldens/executables`.
//!
//! - `backward_compat::<target>::v<N>::<case>`: the exact bytes of an old artifact load in today's
//!   runtime and produce the recorded outputs bit for bit (and, single-replica, within tolerance of
//!   the reference evaluator). Boundary versions by default (the oldest, the second-newest and the newest);
//!   every version when `XLA_AOT_TEST_ALL_VERSIONS` is truthy.
//! - `golden_verification::<target>::<case>`: today's compiler reproduces the newest version.
//! - `forward_compat::<target>::<case>`: today's artifact is read correctly by a runtime built
//!   from the newest schema snapshot at least 14 days old (its whole schema and surface).
//! - `integrity::<target>::v<N>`: every version matches its manifest.
//! - `integrity::census`: `goldens/executables/census.json`, the compact census the schema bot
//!   reads, summarizes the manifests as they are (else it names `aot goldens index`).
//! - `coverage::<target>`: every thunk kind and opcode today's compiler can emit appears in the
//!   newest version.
//! - `env_skew::<target>::v<N>::<case>`: the same bytes on a device with newer ABI versions (loads,
//!   identical outputs), older ones (FAILED_PRECONDITION naming the component and both versions)
//!   and another compute capability (named first).
//! - `coverage::runtime::<target>`: every thunk kind the runtime decodes and every registry name
//!   and alias is used by a golden inside the 6-month window.
//! - `handwritten::{integrity,backward_compat,env_skew}::...`: the hand-written versions
//!   (`<target>/handwritten/v<N>/`); boundary mode replays the oldest and the newest (no golden
//!   verification pins the newest of these).
//! - `negative::*`: mutated goldens make the replay fail with a message that says what broke; the
//!   runtime coverage check fails, naming them, without the hand-written versions.
//! - `forward_negative::*`: an older runtime crafted to lack or misread one construct makes
//!   `forward_compat` fail naming it.
//!
//! Filters work as with any cargo test (`cargo test -p harness --test goldens -- backward_compat`);
//! `--list` shows every check. docs/goldens.md explains failures and regeneration.
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use harness::cmd::goldens::GOLDEN_TARGETS;
use harness::replay::{self, CoverageError, GoldenCase, OldSchema, ReplayError};
use harness::{
    all_versions_requested, select_handwritten_versions, select_versions, GoldenStore,
    ALL_VERSIONS_ENV,
};
use libtest_mimic::{Arguments, Failed, Trial};
use proto::prost::Message;
use proto::prost_reflect::prost_types::{
    DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet,
};
use proto::prost_reflect::DescriptorPool;
use proto::stream_executor::{executable_abi_version_proto, ExecutableAbiVersionProto};
use proto::xla::gpu::{thunk_proto::Impl, GpuExecutableProto, ThunkProto};

fn fail(e: impl std::fmt::Display) -> Failed {
    Failed::from(e.to_string())
}

fn newest(store: &GoldenStore, target: &str) -> Result<u32, String> {
    store
        .versions(target)
        .map_err(|e| e.to_string())?
        .last()
        .copied()
        .ok_or_else(|| format!("no versions for {target}"))
}

fn cases_of(store: &GoldenStore, target: &str, version: u32) -> Vec<String> {
    replay::manifest(store, target, version)
        .map(|m| m.cases)
        .unwrap_or_default()
}

fn compile_today(golden: &GoldenCase) -> Result<GpuExecutableProto, Failed> {
    let text = std::fs::read_to_string(golden.dir.join(&golden.case).join("module.hlo"))?;
    let module = hlo_text::parse_module(&text).map_err(fail)?;
    let config = proto::parse_target_config(&golden.target_config, "target.txtpb").map_err(fail)?;
    let target = compiler::Target::from_config(config, "target.txtpb").map_err(fail)?;
    compiler::compile(&module, &target, &compiler::CompileOptions::default()).map_err(fail)
}

/// One golden case for the trials that replay it (`backward_compat` and `env_skew`): read from
/// the store (artifact bytes, io files parsed) by whichever trial runs first, then shared, instead
/// of once per trial. A read error fails both trials with the same message.
#[derive(Clone)]
struct SharedCase {
    store: Arc<GoldenStore>,
    target: &'static str,
    version: u32,
    case: Arc<str>,
    read: Arc<OnceLock<Result<GoldenCase, ReplayError>>>,
}

impl SharedCase {
    fn new(store: &Arc<GoldenStore>, target: &'static str, version: u32, case: &str) -> Self {
        SharedCase {
            store: store.clone(),
            target,
            version,
            case: case.into(),
            read: Arc::default(),
        }
    }

    fn get(&self) -> Result<&GoldenCase, Failed> {
        self.read
            .get_or_init(|| GoldenCase::read(&self.store, self.target, self.version, &self.case))
            .as_ref()
            .map_err(fail)
    }
}

fn trials(
    store: &Arc<GoldenStore>,
    old_schema: &Arc<Result<OldSchema, ReplayError>>,
) -> Vec<Trial> {
    let all = all_versions_requested(std::env::var(ALL_VERSIONS_ENV).ok().as_deref());
    let mut out = Vec::new();
    // The compact census the schema bot reads (schema_history's `census/index.rs`): a stale one
    // is ignored by the bot, which then reads every manifest; this keeps the fast path taken.
    let s = store.clone();
    out.push(Trial::test("integrity::census", move || {
        schema_history::check_index(s.root())
            .map_err(fail)?
            .map_err(fail)
    }));
    for &target in GOLDEN_TARGETS {
        let versions = match store.versions(target) {
            Ok(v) => v,
            Err(e) => {
                let msg = e.to_string();
                out.push(Trial::test(format!("store::{target}"), move || {
                    Err(msg.into())
                }));
                continue;
            }
        };
        for &v in &versions {
            let s = store.clone();
            out.push(Trial::test(
                format!("integrity::{target}::v{v}"),
                move || replay::integrity(&s, target, v).map_err(fail),
            ));
        }
        for v in select_versions(&versions, all) {
            for case in cases_of(store, target, v) {
                let golden = SharedCase::new(store, target, v, &case);
                let g = golden.clone();
                out.push(Trial::test(
                    format!("backward_compat::{target}::v{v}::{case}"),
                    move || replay::backward_compat(g.get()?).map_err(fail),
                ));
                out.push(Trial::test(
                    format!("env_skew::{target}::v{v}::{case}"),
                    move || replay::env_skew(golden.get()?).map_err(fail),
                ));
            }
        }
        let Some(&n) = versions.last() else { continue };
        for case in cases_of(store, target, n) {
            let s = store.clone();
            let c = case.clone();
            out.push(Trial::test(
                format!("golden_verification::{target}::{case}"),
                move || {
                    let golden = GoldenCase::read(&s, target, n, &c).map_err(fail)?;
                    replay::golden_verification(&golden).map_err(fail)
                },
            ));
            let s = store.clone();
            let schema = old_schema.clone();
            out.push(Trial::test(
                format!("forward_compat::{target}::{case}"),
                move || {
                    let golden = GoldenCase::read(&s, target, n, &case).map_err(fail)?;
                    let today = compile_today(&golden)?;
                    let old = schema.as_ref().as_ref().map_err(fail)?;
                    let abi =
                        replay::accepted_abi(&s, target, &case, schema_history::Date::today())
                            .map_err(fail)?;
                    replay::forward_compat(&today, old, abi.as_ref()).map_err(fail)
                },
            ));
        }
        let s = store.clone();
        out.push(Trial::test(format!("coverage::{target}"), move || {
            coverage(&s, target)
        }));
    }
    out.extend(handwritten_trials(store));
    out.extend(negative_trials(store));
    out.extend(forward_negative_trials(store));
    out.extend(forward_positive_trials(store));
    out
}

/// The hand-written versions (`<target>/handwritten/v<N>/`): integrity, backward compatibility
/// and environment skew like compiled versions (no golden verification: no compiler made them),
/// and the coverage check from the runtime's side.
fn handwritten_trials(compiled: &Arc<GoldenStore>) -> Vec<Trial> {
    let all = all_versions_requested(std::env::var(ALL_VERSIONS_ENV).ok().as_deref());
    let store = Arc::new(GoldenStore::handwritten(compiled.root()));
    let mut out = Vec::new();
    for &target in GOLDEN_TARGETS {
        // The coverage check reads whatever versions exist, so it runs (and names what is
        // missing) even when the hand-written store is absent.
        let (c, h) = (compiled.clone(), store.clone());
        out.push(Trial::test(
            format!("coverage::runtime::{target}"),
            move || {
                replay::runtime_coverage(&[&c, &h], target, schema_history::Date::today())
                    .map_err(fail)
            },
        ));
        // The gate itself: the compiled versions alone leave the hand-written constructs
        // unpinned, and the check must say so, naming them.
        let c = compiled.clone();
        out.push(Trial::test(
            format!("negative::runtime_coverage_without_handwritten::{target}"),
            move || match replay::runtime_coverage(&[&c], target, schema_history::Date::today()) {
                Ok(()) => Err("coverage::runtime passed without the hand-written goldens".into()),
                Err(CoverageError::Uncovered { missing, .. })
                    // (memzero and memset32 are compiled since v12: constant fills)
                    if [
                        "registry:Memcpy (a legacy alias of xla.runtime.memcpy)",
                    ]
                    .iter()
                    .all(|n| missing.iter().any(|m| m == n)) =>
                {
                    Ok(())
                }
                Err(msg) => Err(format!("the failure does not name the unpinned constructs:\n{msg}").into()),
            },
        ));
        let versions = match store.versions(target) {
            Ok(v) => v,
            Err(e) => {
                let msg = e.to_string();
                out.push(Trial::test(
                    format!("handwritten::store::{target}"),
                    move || Err(msg.into()),
                ));
                continue;
            }
        };
        for &v in &versions {
            let s = store.clone();
            out.push(Trial::test(
                format!("handwritten::integrity::{target}::v{v}"),
                move || replay::integrity(&s, target, v).map_err(fail),
            ));
        }
        for v in select_handwritten_versions(&versions, all) {
            for case in cases_of(&store, target, v) {
                let golden = SharedCase::new(&store, target, v, &case);
                let g = golden.clone();
                out.push(Trial::test(
                    format!("handwritten::backward_compat::{target}::v{v}::{case}"),
                    move || replay::backward_compat(g.get()?).map_err(fail),
                ));
                out.push(Trial::test(
                    format!("handwritten::env_skew::{target}::v{v}::{case}"),
                    move || replay::env_skew(golden.get()?).map_err(fail),
                ));
            }
        }
    }
    out
}

/// How a crafted older runtime differs from today's: its schema (file descriptors), its surface
/// (opcodes, registry) or the ABI its hosts run.
enum Craft {
    Schema(fn(&mut Vec<FileDescriptorProto>) -> bool),
    Surface(fn(&mut schema_history::Extras) -> bool),
    Abi(fn(&mut ExecutableAbiVersionProto)),
}

fn message_mut<'a>(
    files: &'a mut [FileDescriptorProto],
    package: &str,
    name: &str,
) -> Option<&'a mut DescriptorProto> {
    files
        .iter_mut()
        .filter(|f| f.package() == package)
        .flat_map(|f| f.message_type.iter_mut())
        .find(|m| m.name() == name)
}

fn field_mut<'a>(
    files: &'a mut [FileDescriptorProto],
    package: &str,
    message: &str,
    field: &str,
) -> Option<&'a mut FieldDescriptorProto> {
    message_mut(files, package, message)?
        .field
        .iter_mut()
        .find(|f| f.name() == field)
}

/// forward_compat must fail, naming the construct, when the older runtime lacks or reads
/// differently something today's artifact uses. Each trial crafts such an older runtime from
/// today's (schema, surface, ABI) and reads the newest golden of the first target with it.
fn forward_negative_trials(store: &Arc<GoldenStore>) -> Vec<Trial> {
    use proto::prost_reflect::prost_types::field_descriptor_proto::Type;
    let cases: Vec<(&str, &str, Craft, &str)> = vec![
        (
            "retyped_int64_to_string",
            "softmax",
            Craft::Schema(|files| {
                field_mut(files, "xla", "BufferAllocationProto", "size").is_some_and(|f| {
                    f.set_type(Type::String);
                    true
                })
            }),
            "field xla.BufferAllocationProto.size (number 2) is int64 (varint) today, the older schema declares string (length-delimited): the wire type differs",
        ),
        (
            "retyped_int64_to_bool_value_misread",
            "softmax",
            // An older reader of bool truncates every size but 0 and 1: wire-compatible on
            // paper, misread in fact.
            Craft::Schema(|files| {
                field_mut(files, "xla", "BufferAllocationProto", "size").is_some_and(|f| {
                    f.set_type(Type::Bool);
                    true
                })
            }),
            "field xla.BufferAllocationProto.size (number 2) is int64 (varint) today, the older schema declares bool (varint): the value",
        ),
        (
            "retyped_int64_to_sint64_zigzag",
            "softmax",
            // Both varints on the wire, but an older sint64 reader unzigzags every size.
            Craft::Schema(|files| {
                field_mut(files, "xla", "BufferAllocationProto", "size").is_some_and(|f| {
                    f.set_type(Type::Sint64);
                    true
                })
            }),
            "field xla.BufferAllocationProto.size (number 2) is int64 (varint) today, the older schema declares sint64 (zigzag varint): the wire type differs",
        ),
        (
            "unknown_enum_value",
            "softmax",
            Craft::Schema(|files| {
                let Some(e) = files
                    .iter_mut()
                    .filter(|f| f.package() == "xla")
                    .flat_map(|f| f.enum_type.iter_mut())
                    .find(|e| e.name() == "PrimitiveType")
                else {
                    return false;
                };
                let before = e.value.len();
                e.value.retain(|v| v.name() != "F32");
                e.value.len() < before
            }),
            "enum value 11 of xla.PrimitiveType is unknown to the older schema",
        ),
        (
            "unknown_oneof_variant",
            "softmax",
            Craft::Schema(|files| {
                let Some(m) = message_mut(files, "xla.gpu", "ThunkProto") else {
                    return false;
                };
                let before = m.field.len();
                m.field.retain(|f| f.name() != "kernel_thunk");
                m.field.len() < before
            }),
            "oneof variant xla.gpu.ThunkProto.kernel_thunk (number 8) is unknown to the older schema",
        ),
        (
            "unknown_field",
            "softmax",
            Craft::Schema(|files| {
                let Some(m) = message_mut(files, "xla.gpu", "GpuExecutableProto") else {
                    return false;
                };
                let before = m.field.len();
                m.field.retain(|f| f.name() != "buffer_allocations");
                m.field.len() < before
            }),
            "field xla.gpu.GpuExecutableProto.buffer_allocations (number 10) is unknown to the older schema and not ignorable",
        ),
        (
            "unknown_opcode",
            "softmax",
            Craft::Surface(|extras| {
                let before = extras.opcodes.len();
                extras.opcodes.retain(|o| o != "exponential");
                extras.opcodes.len() < before
            }),
            "opcode:exponential: HLO opcode unknown to the older runtime",
        ),
        (
            "unknown_registry_name",
            "custom_call_axpy",
            Craft::Surface(|extras| {
                let mut removed = false;
                for r in &mut extras.registry {
                    let before = r.aliases.len();
                    r.aliases.retain(|a| a != "__xla_saxpy");
                    removed |= r.aliases.len() < before;
                }
                removed
            }),
            "registry:__xla_saxpy: custom-call target unknown to the older runtime",
        ),
        (
            "abi_above_accepted",
            "softmax",
            Craft::Abi(|abi| {
                if let Some(executable_abi_version_proto::PlatformVersion::CudaPlatformVersion(v)) =
                    &mut abi.platform_version
                {
                    v.cuda_toolkit_version = "12.4.0".into();
                }
            }),
            "executable_abi_version.cuda_platform_version.cuda_toolkit_version: today's artifact needs CUDA toolkit 12.8.0, above the 12.4.0 the older runtime's artifacts needed",
        ),
    ];
    let Some(&target) = GOLDEN_TARGETS.first() else {
        return Vec::new();
    };
    cases
        .into_iter()
        .map(|(name, case, craft, needle)| {
            let s = store.clone();
            Trial::test(format!("forward_negative::{name}"), move || {
                let n = newest(&s, target).map_err(fail)?;
                let golden = GoldenCase::read(&s, target, n, case).map_err(fail)?;
                let today: GpuExecutableProto =
                    proto::decode_limited(&golden.bytes, usize::MAX).map_err(fail)?;
                let mut files: Vec<FileDescriptorProto> = proto::descriptor_pool()
                    .file_descriptor_protos()
                    .cloned()
                    .collect();
                let mut extras = harness::cmd::schema::project_extras();
                let mut abi = today.executable_abi_version.clone().unwrap_or_default();
                let crafted = match &craft {
                    Craft::Schema(f) => f(&mut files),
                    Craft::Surface(f) => f(&mut extras),
                    Craft::Abi(f) => {
                        f(&mut abi);
                        true
                    }
                };
                if !crafted {
                    return Err(format!(
                        "{case}: the schema or surface has nothing to craft for {name}"
                    )
                    .into());
                }
                let pool =
                    DescriptorPool::from_file_descriptor_set(FileDescriptorSet { file: files })
                        .map_err(fail)?;
                let old = OldSchema {
                    name: format!("crafted-{name}"),
                    pool,
                    extras,
                };
                match replay::forward_compat(&today, &old, Some(&abi)) {
                    Ok(()) => Err(format!(
                        "{case} passed forward_compat against the crafted older runtime"
                    )
                    .into()),
                    Err(ReplayError::Forward { problems, .. })
                        if problems.iter().any(|p| p.contains(needle)) =>
                    {
                        Ok(())
                    }
                    Err(msg) => Err(format!("the failure does not name `{needle}`:\n{msg}").into()),
                }
            })
        })
        .collect()
}

/// An ignorable proto3 `optional` field (its own synthetic oneof) that the older schema lacks is
/// skipped by the older reader like any unknown field: `forward_compat` must accept it, not call
/// it an unknown oneof variant (it did before issue 35, so no such field could ever be emitted).
fn forward_positive_trials(store: &Arc<GoldenStore>) -> Vec<Trial> {
    let Some(&target) = GOLDEN_TARGETS.first() else {
        return Vec::new();
    };
    let s = store.clone();
    vec![Trial::test(
        "forward_positive::ignorable_optional_field_unknown_to_the_older_schema",
        move || {
            let n = newest(&s, target).map_err(fail)?;
            let golden = GoldenCase::read(&s, target, n, "fori_loop").map_err(fail)?;
            let mut today: GpuExecutableProto =
                proto::decode_limited(&golden.bytes, usize::MAX).map_err(fail)?;
            let w = first_while(&mut today.thunks).ok_or("fori_loop has no while thunk")?;
            w.trip_count = Some(5);
            let mut files: Vec<FileDescriptorProto> = proto::descriptor_pool()
                .file_descriptor_protos()
                .cloned()
                .collect();
            let removed = files
                .iter_mut()
                .filter(|f| f.package() == "xla.gpu")
                .flat_map(|f| f.message_type.iter_mut())
                .find(|m| m.name() == "WhileThunkProto")
                .is_some_and(|m| {
                    let before = m.field.len();
                    m.field.retain(|f| f.name() != "trip_count");
                    m.oneof_decl.retain(|o| o.name() != "_trip_count");
                    m.field.len() < before
                });
            if !removed {
                return Err("xla.gpu.WhileThunkProto has no trip_count to remove".into());
            }
            let pool = DescriptorPool::from_file_descriptor_set(FileDescriptorSet { file: files })
                .map_err(fail)?;
            let old = OldSchema {
                name: "crafted-without-trip_count".to_owned(),
                pool,
                extras: harness::cmd::schema::project_extras(),
            };
            let abi = today.executable_abi_version.clone().unwrap_or_default();
            replay::forward_compat(&today, &old, Some(&abi)).map_err(fail)
        },
    )]
}

fn first_while(thunks: &mut [ThunkProto]) -> Option<&mut proto::xla::gpu::WhileThunkProto> {
    first_impl(thunks, &mut |i| match i {
        Impl::WhileThunk(w) => Some(w),
        _ => None,
    })
}

/// The first thunk (depth first through sequential thunks) whose impl `pick` accepts.
fn first_impl<'a, T>(
    thunks: &'a mut [ThunkProto],
    pick: &mut dyn FnMut(&'a mut Impl) -> Option<&'a mut T>,
) -> Option<&'a mut T> {
    for t in thunks {
        match &mut t.r#impl {
            Some(Impl::SequentialThunk(s)) => {
                if let Some(found) = first_impl(&mut s.thunks, pick) {
                    return Some(found);
                }
            }
            Some(other) => {
                if let Some(found) = pick(other) {
                    return Some(found);
                }
            }
            None => {}
        }
    }
    None
}

/// Every thunk kind and HLO opcode today's compiler can emit must appear in the newest version
/// of the target: otherwise a change could break it and no golden would notice.
fn coverage(store: &GoldenStore, target: &str) -> Result<(), Failed> {
    let n = newest(store, target).map_err(fail)?;
    let manifest = replay::manifest(store, target, n).map_err(fail)?;
    let used: BTreeSet<&String> = manifest.census.values().flatten().collect();
    let mut missing = Vec::new();
    for kind in compiler::EMITTED_THUNK_KINDS {
        let construct = format!("xla.gpu.ThunkProto.{kind}");
        if !used.contains(&construct) {
            missing.push(construct);
        }
    }
    for opcode in compiler::supported_opcodes() {
        let construct = format!("opcode:{opcode}");
        if !used.contains(&construct) {
            missing.push(construct);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{target}/v{n} contains no case using {} construct(s) today's compiler can emit:\n  {}\n\
         Add a case that uses each (testdata/corpus/hlo or goldens/cases), then write a new \
         version: {}",
        missing.len(),
        missing.join("\n  "),
        replay::regen_command(target)
    )
    .into())
}

/// Mutations of the newest golden of the first target, each of which today's runtime must
/// refuse, with a message naming what broke and pointing at the compatibility guide.
fn negative_trials(store: &Arc<GoldenStore>) -> Vec<Trial> {
    type Mutate = fn(&mut GpuExecutableProto) -> bool;
    let cases: [(&str, &str, Mutate, &str); 3] = [
        (
            "unknown_thunk_kind",
            "softmax",
            |exe| match exe.thunks.first_mut() {
                Some(t) => {
                    // What a newer compiler's thunk looks like to this runtime: no known variant.
                    t.r#impl = None;
                    true
                }
                None => false,
            },
            "does not know that thunk kind",
        ),
        (
            "removed_field_data",
            "softmax",
            |exe| {
                first_kernel(&mut exe.thunks).is_some_and(|k| {
                    k.kernel_binary = None;
                    true
                })
            },
            "kernel_binary",
        ),
        (
            "renamed_custom_call_target",
            "custom_call_axpy",
            |exe| {
                let mut stack: Vec<&mut ThunkProto> = exe.thunks.iter_mut().collect();
                while let Some(t) = stack.pop() {
                    match &mut t.r#impl {
                        Some(Impl::CustomCallThunk(c)) => {
                            c.target_name = "__xla_saxpy_renamed".into();
                            return true;
                        }
                        Some(Impl::SequentialThunk(s)) => stack.extend(s.thunks.iter_mut()),
                        _ => {}
                    }
                }
                false
            },
            "__xla_saxpy_renamed",
        ),
    ];
    let Some(&target) = GOLDEN_TARGETS.first() else {
        return Vec::new();
    };
    cases
        .into_iter()
        .map(|(name, case, mutate, needle)| {
            let s = store.clone();
            Trial::test(format!("negative::{name}"), move || {
                let n = newest(&s, target).map_err(fail)?;
                let golden = GoldenCase::read(&s, target, n, case).map_err(fail)?;
                let mut exe: GpuExecutableProto =
                    proto::decode_limited(&golden.bytes, usize::MAX).map_err(fail)?;
                if !mutate(&mut exe) {
                    return Err(format!("{case} has nothing to mutate for {name}").into());
                }
                match replay::replay_bytes(&golden, &exe.encode_to_vec()) {
                    Ok(()) => Err(format!("the mutated {case} still replayed cleanly").into()),
                    Err(msg)
                        if msg.to_string().contains(needle)
                            && msg.to_string().contains(replay::COMPAT_GUIDE) =>
                    {
                        Ok(())
                    }
                    Err(msg) => Err(format!(
                        "the failure does not name `{needle}` and point at {}:\n{msg}",
                        replay::COMPAT_GUIDE
                    )
                    .into()),
                }
            })
        })
        .collect()
}

fn first_kernel(thunks: &mut [ThunkProto]) -> Option<&mut proto::xla::gpu::KernelThunkProto> {
    first_impl(thunks, &mut |i| match i {
        Impl::KernelThunk(k) => Some(k),
        _ => None,
    })
}

fn main() {
    let args = Arguments::from_args();
    let store = Arc::new(GoldenStore::in_repo());
    let snapshots = harness::repo_root().join("schema_history/snapshots");
    let old_schema = Arc::new(replay::old_schema(
        &snapshots,
        schema_history::Date::today(),
    ));
    libtest_mimic::run(&args, trials(&store, &old_schema)).exit();
}
