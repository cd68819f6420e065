//! The census of an artifact: every schema construct it uses, by reflection.
//!
//! Walking the artifact as a `DynamicMessage` over the schema's descriptor pool yields, for every
//! field that is set (non-default), the message (`xla.gpu.KernelThunkProto`), the field
//! (`xla.gpu.KernelThunkProto.kernel_name`; oneof variants are fields, so a thunk kind appears as
//! `xla.gpu.ThunkProto.kernel_thunk`) and, for enum fields, the enum value
//! (`xla.PrimitiveType.F32`). Two constructs come from the data rather than the schema: the HLO
//! opcodes of the embedded module (`opcode:add`) and the custom-call targets the runtime must
//! resolve (`registry:NAME`). Two come from the runtime: the flags its load and execution of the
//! artifact read (`flag:num_streams`) and the load-time passes that rewrite it
//! (`pass:command_buffer_conversion`), from [`FLAG_READERS`] and [`PASS_APPLIES_TO`].
use std::collections::BTreeSet;

use proto::prost_reflect::{DynamicMessage, FieldDescriptor, Kind, ReflectMessage, Value};
use proto::stream_executor::executable_abi_version_proto::PlatformVersion;
use proto::xla::gpu::{thunk_proto::Impl, GpuExecutableProto, ThunkProto};
use schema_history::{FfiAttribute, FlagReaders, LoadPass};

/// Every artifact.
const ANY_ARTIFACT: &[&str] = &["xla.gpu.GpuExecutableProto"];
/// Every thunk: each one's stream id and nesting depth are checked at load.
const ANY_THUNK: &[&str] = &["xla.gpu.ThunkProto"];
/// Thunks the command-buffer conversion groups (`runtime/src/passes/command_buffer.rs`,
/// `eligible`).
const COMMAND_BUFFER_THUNKS: &[&str] = &[
    "xla.gpu.ThunkProto.kernel_thunk",
    "xla.gpu.ThunkProto.copy_thunk",
    "xla.gpu.ThunkProto.memset32bit_value_thunk",
    "xla.gpu.ThunkProto.memset8bit_value_thunk",
    "xla.gpu.ThunkProto.memzero_thunk",
    "xla.gpu.ThunkProto.gemm_thunk",
];
/// Thunks that launch PTX on the device.
const KERNEL_THUNKS: &[&str] = &[
    "xla.gpu.ThunkProto.kernel_thunk",
    "xla.gpu.ThunkProto.custom_kernel_thunk",
];
/// Thunks that wait for the other replicas.
const COLLECTIVE_THUNKS: &[&str] = &[
    "xla.gpu.ThunkProto.all_gather_start_thunk",
    "xla.gpu.ThunkProto.all_reduce_start_thunk",
    "xla.gpu.ThunkProto.reduce_scatter_thunk",
    "xla.gpu.ThunkProto.all_to_all_start_thunk",
    "xla.gpu.ThunkProto.collective_permute_start_thunk",
];

/// For every flag of `runtime::flag_defaults()`, the constructs whose load or execution reads
/// it: a golden using one of them depends on the flag's default (the `flag:` census entries, and
/// the surface's `read-for` lines the bot derives them from for manifests that predate them).
/// Hand-written from the runtime's code (where each flag is read); the test
/// `every_runtime_flag_has_readers` fails when a flag is added without an entry.
pub const FLAG_READERS: &[(&str, &[&str])] = &[
    // Checked against the artifact's size before decoding.
    ("max_artifact_bytes", ANY_ARTIFACT),
    ("enable_command_buffers", COMMAND_BUFFER_THUNKS),
    ("command_buffer_min_thunks", COMMAND_BUFFER_THUNKS),
    ("max_while_iterations", &["xla.gpu.ThunkProto.while_thunk"]),
    ("num_streams", ANY_THUNK),
    ("max_thunk_depth", ANY_THUNK),
    ("emulator_instruction_budget", KERNEL_THUNKS),
    ("emulator_instructions_per_thread", KERNEL_THUNKS),
    ("emulator_instruction_floor", KERNEL_THUNKS),
    ("collective_timeout_secs", COLLECTIVE_THUNKS),
    ("ptx_check", KERNEL_THUNKS),
    // Checked against `replica_count` at load, before it sizes anything.
    ("max_replicas", ANY_ARTIFACT),
    // Checked against `num_partitions` at load, before it sizes anything.
    ("max_partitions", ANY_ARTIFACT),
    // Checked against the entry's parameter and result shapes at load.
    ("max_array_elements", ANY_ARTIFACT),
    // The wall-time limit of every execution (per while iteration and per emulated launch).
    ("max_execution_secs", ANY_ARTIFACT),
    // Bounds every emulated allocation the artifact declares.
    ("emulator_host_memory_bytes", ANY_ARTIFACT),
    // Bounds the `.local` pages each emulated launch writes.
    ("emulator_local_memory_bytes", KERNEL_THUNKS),
    // The emulated device's initcheck and racecheck (off by default).
    ("emulator_initcheck", KERNEL_THUNKS),
    ("emulator_racecheck", KERNEL_THUNKS),
];

/// For every pass of `runtime::LOAD_PASSES`, the thunk kinds it rewrites.
pub const PASS_APPLIES_TO: &[(&str, &[&str])] =
    &[("command_buffer_conversion", COMMAND_BUFFER_THUNKS)];

/// The constructs of `name` in a table, as owned strings (none when it has no entry).
fn lookup(table: &[(&str, &[&str])], name: &str) -> Vec<String> {
    table
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, cs)| cs.iter().map(|c| (*c).to_owned()).collect())
        .unwrap_or_default()
}

/// The flags the runtime reads (`runtime::flag_defaults()`) with their readers from
/// [`FLAG_READERS`], as the surface records them. Driven by the runtime's list, so a flag removed
/// there leaves the surface even if the table still names it.
pub fn flag_readers() -> Vec<FlagReaders> {
    runtime::flag_defaults()
        .into_iter()
        .map(|(flag, _)| FlagReaders {
            flag: flag.to_owned(),
            read_for: lookup(FLAG_READERS, flag),
        })
        .collect()
}

/// The runtime's load-time passes (`runtime::LOAD_PASSES`) with what each applies to
/// ([`PASS_APPLIES_TO`]), as the surface records them: a pass removed from the runtime leaves
/// the surface, and the bot then names the goldens that depended on it.
pub fn load_passes() -> Vec<LoadPass> {
    runtime::LOAD_PASSES
        .iter()
        .map(|name| LoadPass {
            name: (*name).to_owned(),
            applies_to: lookup(PASS_APPLIES_TO, name),
        })
        .collect()
}

/// Deepest message nesting walked (the schema's own nesting is far shallower).
const MAX_DEPTH: usize = 64;

/// Every construct the artifact uses, sorted.
pub fn census_of(executable: &GpuExecutableProto) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(&proto::to_dynamic(executable), &mut out, 0);
    out.extend(data_constructs(executable));
    let dependencies = schema_history::Extras {
        flag_readers: flag_readers(),
        load_passes: load_passes(),
        ..Default::default()
    }
    .runtime_dependencies(&out);
    out.extend(dependencies);
    out
}

/// The constructs that come from the artifact's data rather than its schema: the HLO opcodes of
/// the embedded module (`opcode:NAME`) and the custom-call targets (`registry:NAME`). Cheap (no
/// reflection), for checks that need only these.
pub fn data_constructs(executable: &GpuExecutableProto) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Some(module) = executable
        .hlo_module_with_config
        .as_ref()
        .and_then(|m| m.hlo_module.as_ref())
    {
        for instr in module.computations.iter().flat_map(|c| &c.instructions) {
            out.insert(format!("opcode:{}", instr.opcode));
        }
    }
    if let Some(PlatformVersion::CudaPlatformVersion(v)) = executable
        .executable_abi_version
        .as_ref()
        .and_then(|a| a.platform_version.as_ref())
    {
        if !v.cuda_toolkit_version.is_empty() {
            out.insert(format!("abi:cuda-toolkit:{}", v.cuda_toolkit_version));
        }
    }
    let mut stack: Vec<&ThunkProto> = executable.thunks.iter().collect();
    while let Some(thunk) = stack.pop() {
        match &thunk.r#impl {
            Some(Impl::CustomCallThunk(c)) => {
                out.insert(format!("registry:{}", c.target_name));
                for (name, value) in c.attributes.iter().chain(&c.attributes_xyz) {
                    let ty = ffi_value_type(value);
                    out.extend(FfiAttribute::constructs_for(&c.target_name, name, ty));
                }
            }
            Some(Impl::KernelThunk(k)) => {
                if let Some(b) = k.kernel_binary.as_ref().filter(|b| !b.ptx.is_empty()) {
                    out.extend(ptx_header(&b.ptx));
                }
            }
            Some(Impl::SequentialThunk(s)) => stack.extend(&s.thunks),
            Some(Impl::WhileThunk(w)) => {
                for seq in [&w.condition_thunk_sequence, &w.body_thunk_sequence]
                    .into_iter()
                    .flatten()
                {
                    stack.extend(&seq.thunks);
                }
            }
            Some(Impl::ConditionalThunk(c)) => {
                for seq in &c.branch_thunks {
                    stack.extend(&seq.thunks);
                }
            }
            _ => {}
        }
    }
    out
}

/// The type a typed-FFI attribute's value text is written with, in the MLIR spelling the
/// runtime's handler schemas use: `true`/`false` are `bool`, `0 : ui8` is `ui8`, a bare integer
/// `i64` and a bare float `f64` (MLIR's defaults), `"..."` a `string`; `si32` is `i32`. Anything
/// else (arrays, dictionaries) is `other`: no handler takes one, so no schema names it.
pub fn ffi_value_type(value: &str) -> &str {
    let v = value.trim();
    if v == "true" || v == "false" {
        return "bool";
    }
    if v.starts_with('"') {
        return "string";
    }
    if let Some((number, ty)) = v.rsplit_once(" : ") {
        let ty = ty.trim();
        let numeric = number.trim().parse::<f64>().is_ok()
            || number.trim() == "true"
            || number.trim() == "false";
        if numeric {
            return ty
                .strip_prefix('s')
                .filter(|t| t.starts_with('i'))
                .unwrap_or(ty);
        }
        return "other";
    }
    if v.parse::<i128>().is_ok() {
        "i64"
    } else if v.parse::<f64>().is_ok() {
        "f64"
    } else {
        "other"
    }
}

/// A kernel's PTX header as census constructs: `ptx:isa:X.Y` (its `.version`), `ptx:target:ARCH`
/// and `ptx:needs-cuda:X.Y`, the oldest CUDA toolkit that JIT-compiles that ISA (`unknown` past
/// the table of `ptx::compat`). The bot holds the last against the artifact's declared
/// `abi:cuda-toolkit:X.Y.Z` (rule `kernel-header`) with no PTX knowledge of its own. PTX whose
/// header does not parse gives nothing: the loader refuses it, naming the line.
fn ptx_header(ptx_text: &str) -> Vec<String> {
    let Ok(outline) = ptx::outline(ptx_text) else {
        return Vec::new();
    };
    let v = outline.version;
    let needs = match ptx::min_toolkit(v) {
        ptx::ToolkitNeed::AtLeast(t) => t.to_string(),
        ptx::ToolkitNeed::Unknown => "unknown".to_owned(),
    };
    vec![
        format!("ptx:isa:{}.{}", v.major, v.minor),
        format!("ptx:target:{}", outline.target.arch),
        format!("ptx:needs-cuda:{needs}"),
    ]
}

fn walk(message: &DynamicMessage, out: &mut BTreeSet<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let desc = message.descriptor();
    out.insert(desc.full_name().to_owned());
    for (field, value) in message.fields() {
        out.insert(field.full_name().to_owned());
        // A reader that may skip this field skips everything in it: the messages and enum
        // values below it are no dependency of the artifact, so the forward-window rule must
        // not see them as "emitted but new".
        if proto::field_is_ignorable(&field) {
            continue;
        }
        let kind = field.kind();
        let mut visit = |v: &Value| match (v, &kind) {
            (Value::Message(m), _) => walk(m, out, depth + 1),
            (Value::EnumNumber(n), Kind::Enum(e)) => {
                out.insert(e.get_value(*n).map_or_else(
                    || format!("{}.<{n}>", e.full_name()),
                    |v| format!("{}.{}", e.full_name(), v.name()),
                ));
            }
            _ => {}
        };
        match value {
            Value::List(items) => items.iter().for_each(&mut visit),
            Value::Map(entries) => {
                // Map entries are messages in the schema; their value part is what can nest.
                for v in entries.values() {
                    if let Value::Message(m) = v {
                        walk(m, out, depth + 1);
                    }
                }
            }
            v => visit(v),
        }
    }
}

/// The value classes of the boolean fields that decide execution: for every message of the
/// artifact outside the embedded HLO module (which the runtime parses and checks but does not
/// execute from), each singular `bool` field that is not ignorable gives `value:FIELD=true` or
/// `value:FIELD=false`. Proto3 writes `false` as absence, so the presence census above sees only
/// one side; a runtime that read either side wrongly would pass every golden that never sets it.
pub fn value_classes(executable: &GpuExecutableProto) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    value_walk(&proto::to_dynamic(executable), &mut out, 0);
    out
}

/// The embedded module: its values are checked at load, not executed.
const NOT_EXECUTED: &str = "xla.gpu.GpuExecutableProto.hlo_module_with_config";

fn value_walk(message: &DynamicMessage, out: &mut BTreeSet<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    for field in message.descriptor().fields() {
        if field.is_list() || field.is_map() || proto::field_is_ignorable(&field) {
            continue;
        }
        if let Kind::Bool = field.kind() {
            let set = message.get_field(&field).as_bool().unwrap_or(false);
            out.insert(format!("value:{}={set}", field.full_name()));
        }
    }
    for (field, child) in children(message) {
        if field.full_name() != NOT_EXECUTED {
            value_walk(child, out, depth + 1);
        }
    }
}

/// The messages directly inside `message`, with the field holding each: singular message
/// fields, the items of repeated ones and the values of maps.
fn children(message: &DynamicMessage) -> impl Iterator<Item = (FieldDescriptor, &DynamicMessage)> {
    message.fields().flat_map(|(field, value)| {
        let messages: Vec<&DynamicMessage> = match value {
            Value::List(items) => items.iter().filter_map(Value::as_message).collect(),
            Value::Map(entries) => entries.values().filter_map(Value::as_message).collect(),
            v => v.as_message().into_iter().collect(),
        };
        messages.into_iter().map(move |m| (field.clone(), m))
    })
}

/// The census of serialized executable bytes read with this project's schema by reflection, plus
/// every field the schema does not declare, as `unknown:MESSAGE.NUMBER` (what a newer compiler, or
/// XLA:GPU, writes that this schema lacks). A field whose number is declared with another wire
/// type fails the decode (a mis-typed field is a schema disagreement, not an unknown field).
pub fn census_of_bytes(executable: &[u8]) -> Result<BTreeSet<String>, proto::prost::DecodeError> {
    let root = proto::message_descriptor::<GpuExecutableProto>();
    let dynamic = DynamicMessage::decode(root, executable)?;
    let mut out = BTreeSet::new();
    walk(&dynamic, &mut out, 0);
    unknown(&dynamic, &mut out, 0);
    // The data constructs and runtime dependencies need the typed message; the reflective decode
    // above already proved the bytes are well-typed, so this decode cannot disagree.
    if let Ok(typed) = <GpuExecutableProto as proto::prost::Message>::decode(executable) {
        out.extend(data_constructs(&typed));
        let dependencies = schema_history::Extras {
            flag_readers: flag_readers(),
            load_passes: load_passes(),
            ..Default::default()
        }
        .runtime_dependencies(&out);
        out.extend(dependencies);
    }
    Ok(out)
}

fn unknown(message: &DynamicMessage, out: &mut BTreeSet<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let name = message.descriptor().full_name().to_owned();
    for f in message.unknown_fields() {
        out.insert(format!("unknown:{name}.{}", f.number()));
    }
    for (_, child) in children(message) {
        unknown(child, out, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::xla::gpu::{CustomCallThunkProto, KernelThunkProto, SequentialThunkProto};

    #[test]
    fn census_records_an_ignorable_field_but_not_its_subtree() {
        use proto::xla::{
            HloComputationProto, HloInstructionProto, HloModuleConfigProto, HloModuleProto,
            HloModuleProtoWithConfig, TriangularSolveOptions,
        };
        let instr = HloInstructionProto {
            opcode: "triangular-solve".into(),
            triangular_solve_options: Some(TriangularSolveOptions {
                left_side: true,
                transpose_a: 1,
                ..Default::default()
            }),
            ..Default::default()
        };
        let exe = GpuExecutableProto {
            hlo_module_with_config: Some(HloModuleProtoWithConfig {
                hlo_module: Some(HloModuleProto {
                    computations: vec![HloComputationProto {
                        instructions: vec![instr],
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                config: Some(HloModuleConfigProto::default()),
            }),
            ..Default::default()
        };
        let c = census_of(&exe);
        assert!(c.contains("xla.HloInstructionProto.triangular_solve_options"));
        for skipped in [
            "xla.TriangularSolveOptions",
            "xla.TriangularSolveOptions.left_side",
            "xla.TriangularSolveOptions.Transpose.NO_TRANSPOSE",
        ] {
            assert!(!c.contains(skipped), "{skipped} in {c:?}");
        }
    }

    #[test]
    fn ffi_attribute_values_are_typed_as_written() {
        for (value, ty) in [
            ("true", "bool"),
            (" false ", "bool"),
            ("0 : ui8", "ui8"),
            ("-3 : si32", "i32"),
            ("7 : i64", "i64"),
            ("7", "i64"),
            ("2.5", "f64"),
            ("1.000000e+00 : f32", "f32"),
            ("\"a b\"", "string"),
            ("array<i64: 1, 2>", "other"),
            ("{k = 1}", "other"),
        ] {
            assert_eq!(ffi_value_type(value), ty, "{value}");
        }
    }

    #[test]
    fn ffi_attributes_are_in_the_census_with_their_written_type() {
        let call = CustomCallThunkProto {
            target_name: "cusolver_syevd_ffi".into(),
            attributes: [("algorithm".to_owned(), "0 : ui8".to_owned())].into(),
            attributes_xyz: [("lower".to_owned(), "true".to_owned())].into(),
            ..Default::default()
        };
        let exe = GpuExecutableProto {
            thunks: vec![ThunkProto {
                thunk_info: None,
                r#impl: Some(Impl::CustomCallThunk(call)),
            }],
            ..Default::default()
        };
        let c = data_constructs(&exe);
        for want in [
            "ffi-attr:cusolver_syevd_ffi.algorithm",
            "ffi-attr:cusolver_syevd_ffi.algorithm:ui8",
            "ffi-attr:cusolver_syevd_ffi.lower",
            "ffi-attr:cusolver_syevd_ffi.lower:bool",
        ] {
            assert!(c.contains(want), "{want} missing from {c:?}");
        }
    }

    #[test]
    fn census_names_fields_oneof_variants_enums_and_registry_targets() {
        let exe = GpuExecutableProto {
            module_name: "m".into(),
            // Not in a kernel thunk's `args_shape`: that field is ignorable, so the census does
            // not descend into it.
            program_shape: Some(proto::xla::ProgramShapeProto {
                result: Some(proto::xla::ShapeProto {
                    element_type: proto::xla::PrimitiveType::F32 as i32,
                    ..Default::default()
                }),
                ..Default::default()
            }),
            thunks: vec![ThunkProto {
                thunk_info: None,
                r#impl: Some(Impl::SequentialThunk(SequentialThunkProto {
                    thunks: vec![
                        ThunkProto {
                            thunk_info: None,
                            r#impl: Some(Impl::KernelThunk(KernelThunkProto {
                                kernel_name: "k".into(),
                                ..Default::default()
                            })),
                        },
                        ThunkProto {
                            thunk_info: None,
                            r#impl: Some(Impl::CustomCallThunk(CustomCallThunkProto {
                                target_name: "my_target".into(),
                                ..Default::default()
                            })),
                        },
                    ],
                })),
            }],
            ..Default::default()
        };
        let census = census_of(&exe);
        for want in [
            "xla.gpu.GpuExecutableProto",
            "xla.gpu.GpuExecutableProto.module_name",
            "xla.gpu.GpuExecutableProto.thunks",
            "xla.gpu.ThunkProto.sequential_thunk",
            "xla.gpu.ThunkProto.kernel_thunk",
            "xla.gpu.ThunkProto.custom_call_thunk",
            "xla.gpu.KernelThunkProto.kernel_name",
            "xla.ShapeProto.element_type",
            "xla.PrimitiveType.F32",
            "registry:my_target",
        ] {
            assert!(census.contains(want), "{want} missing from {census:#?}");
        }
        for want in [
            "flag:num_streams",
            "flag:max_thunk_depth",
            "flag:max_artifact_bytes",
            "flag:ptx_check",
            "flag:enable_command_buffers",
            "pass:command_buffer_conversion",
        ] {
            assert!(census.contains(want), "{want} missing from {census:#?}");
        }
        for unread in ["flag:max_while_iterations", "flag:collective_timeout_secs"] {
            assert!(
                !census.contains(unread),
                "{unread}: no while or collective thunk"
            );
        }
        assert!(!census.contains("xla.gpu.ThunkProto.gemm_thunk"));
        assert!(
            !census.contains("xla.gpu.KernelThunkProto.shmem_bytes"),
            "unset fields are not used"
        );
    }

    #[test]
    fn census_records_each_kernels_ptx_header_and_the_declared_toolkit() {
        use proto::stream_executor::executable_abi_version_proto::CudaPlatformVersionProto;
        use proto::stream_executor::ExecutableAbiVersionProto;
        use proto::xla::gpu::KernelBinaryProto;
        let kernel = |ptx: &str| ThunkProto {
            thunk_info: None,
            r#impl: Some(Impl::KernelThunk(KernelThunkProto {
                kernel_binary: Some(KernelBinaryProto {
                    ptx: ptx.to_owned(),
                    cubin: Vec::new(),
                }),
                ..Default::default()
            })),
        };
        let exe = GpuExecutableProto {
            executable_abi_version: Some(ExecutableAbiVersionProto {
                platform_name: "CUDA".into(),
                platform_version: Some(PlatformVersion::CudaPlatformVersion(
                    CudaPlatformVersionProto {
                        cuda_toolkit_version: "12.8.0".into(),
                        ..Default::default()
                    },
                )),
            }),
            thunks: vec![
                kernel(".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"),
                kernel(".version 9.9\n.target sm_80\n.address_size 64\n.visible .entry j()\n{\n\tret;\n}\n"),
                kernel("not ptx"),
            ],
            ..Default::default()
        };
        let header: Vec<String> = data_constructs(&exe)
            .into_iter()
            .filter(|c| c.starts_with("ptx:") || c.starts_with("abi:"))
            .collect();
        assert_eq!(
            header,
            [
                "abi:cuda-toolkit:12.8.0",
                "ptx:isa:8.7",
                "ptx:isa:9.9",
                "ptx:needs-cuda:12.8",
                "ptx:needs-cuda:unknown",
                "ptx:target:sm_80",
                "ptx:target:sm_90a",
            ]
        );
    }

    #[test]
    fn value_classes_name_both_sides_of_executed_booleans_only() {
        use proto::xla::gpu::{ConditionalThunkProto, GemmThunkProto};
        let exe = GpuExecutableProto {
            hlo_module_with_config: Some(Default::default()),
            thunks: vec![
                ThunkProto {
                    thunk_info: None,
                    r#impl: Some(Impl::GemmThunk(GemmThunkProto {
                        deterministic: true,
                        ..Default::default()
                    })),
                },
                ThunkProto {
                    thunk_info: None,
                    r#impl: Some(Impl::ConditionalThunk(ConditionalThunkProto::default())),
                },
            ],
            ..Default::default()
        };
        let classes = value_classes(&exe);
        let want: BTreeSet<String> = [
            "value:xla.gpu.GemmThunkProto.deterministic=true",
            "value:xla.gpu.ConditionalThunkProto.branch_index_is_bool=false",
        ]
        .map(str::to_owned)
        .into();
        assert_eq!(
            classes, want,
            "unset booleans read as false; the HLO module is skipped"
        );
    }

    #[test]
    fn every_runtime_flag_and_pass_has_readers() {
        let flags: Vec<&str> = runtime::flag_defaults().iter().map(|(n, _)| *n).collect();
        let readers: Vec<&str> = FLAG_READERS.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            readers, flags,
            "FLAG_READERS must list every runtime flag, in order"
        );
        let passes: Vec<&str> = PASS_APPLIES_TO.iter().map(|(n, _)| *n).collect();
        assert_eq!(passes, runtime::LOAD_PASSES);
        // Every construct named is a real one (a typo would make a flag read for nothing).
        let pool = proto::descriptor_pool();
        for c in FLAG_READERS
            .iter()
            .chain(PASS_APPLIES_TO)
            .flat_map(|(_, cs)| cs.iter())
        {
            let known = pool.get_message_by_name(c).is_some()
                || c.rsplit_once('.').is_some_and(|(m, f)| {
                    pool.get_message_by_name(m)
                        .is_some_and(|m| m.get_field_by_name(f).is_some())
                });
            assert!(known, "{c} is not a message or field of the schema");
        }
    }
}
