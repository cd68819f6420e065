//! Fidelity to XLA's schema: every message this schema declares under an XLA name, and every
//! message or enum that a field of such a message refers to where XLA's field of the same number
//! refers to a message or enum too (followed transitively, so `xla.gpu.GemmConfigProto` is held
//! to XLA's `xla.GemmConfigProto` through `GemmThunkProto.gemm_config`, and `xla.gpu.Dim3DProto`
//! to XLA's `BlockDimProto` through `LaunchDimensionsProto.block_counts`), is compared field by
//! field and value by value, by number, with XLA's (name, type, label), using the descriptors
//! embedded in the XLA that jax-cuda12-plugin 0.10.2 ships
//! (`testdata/xla_gpu/xla_descriptors.binpb`, see testdata/README.md). The disagreements are
//! pinned: fixing one, or adding a new one, fails this test until the list below and the table in
//! docs/artifact.md ("Fidelity to XLA's schema") say so.
use std::collections::{BTreeMap, BTreeSet};

use prost::Message;
use prost_reflect::{Cardinality, Kind};
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FileDescriptorSet};

/// (name, type, label, full name of the message or enum type) of a field; message and enum
/// types are compared by their simple name, so a type that lives in another package here
/// (`xla.gpu.ShapedSliceProto` for `xla.ShapedSliceProto`) is the same type (the binary format
/// does not see packages).
type Field = (String, String, &'static str, String);

fn simple(type_name: &str) -> &str {
    type_name.rsplit('.').next().unwrap_or(type_name)
}

fn xla_set() -> FileDescriptorSet {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/xla_gpu/xla_descriptors.binpb"
    );
    let bytes = std::fs::read(path).unwrap();
    FileDescriptorSet::decode(bytes.as_slice()).unwrap()
}

/// XLA's enums: full name -> number -> value name.
fn xla_enums() -> BTreeMap<String, BTreeMap<i32, String>> {
    let set = xla_set();
    fn values(e: &prost_types::EnumDescriptorProto) -> BTreeMap<i32, String> {
        e.value
            .iter()
            .map(|v| (v.number(), v.name().to_owned()))
            .collect()
    }
    fn add(prefix: &str, m: &DescriptorProto, out: &mut BTreeMap<String, BTreeMap<i32, String>>) {
        let full = format!("{prefix}.{}", m.name());
        for e in &m.enum_type {
            out.insert(format!("{full}.{}", e.name()), values(e));
        }
        for n in &m.nested_type {
            add(&full, n, out);
        }
    }
    let mut out = BTreeMap::new();
    for file in &set.file {
        for e in &file.enum_type {
            out.insert(format!("{}.{}", file.package(), e.name()), values(e));
        }
        for m in &file.message_type {
            add(file.package(), m, &mut out);
        }
    }
    out
}

/// XLA's reserved field numbers, by message full name.
fn xla_reserved() -> BTreeMap<String, BTreeSet<i32>> {
    fn add(prefix: &str, m: &DescriptorProto, out: &mut BTreeMap<String, BTreeSet<i32>>) {
        let full = format!("{prefix}.{}", m.name());
        // Reserved ranges are half-open: [start, end).
        let numbers = m
            .reserved_range
            .iter()
            .flat_map(|r| r.start()..r.end())
            .collect();
        out.insert(full.clone(), numbers);
        for n in &m.nested_type {
            add(&full, n, out);
        }
    }
    let mut out = BTreeMap::new();
    for file in &xla_set().file {
        for m in &file.message_type {
            add(file.package(), m, &mut out);
        }
    }
    out
}

fn xla_messages() -> BTreeMap<String, BTreeMap<i32, Field>> {
    let set = xla_set();
    fn add(prefix: &str, m: &DescriptorProto, out: &mut BTreeMap<String, BTreeMap<i32, Field>>) {
        let full = format!("{prefix}.{}", m.name());
        let fields = m
            .field
            .iter()
            .map(|f| {
                let ty = match f.r#type() {
                    Type::Message | Type::Group => format!("message {}", simple(f.type_name())),
                    Type::Enum => format!("enum {}", simple(f.type_name())),
                    t => t.as_str_name().trim_start_matches("TYPE_").to_lowercase(),
                };
                let label = if f.label() == Label::Repeated {
                    "repeated"
                } else {
                    "singular"
                };
                let target = f.type_name().trim_start_matches('.').to_owned();
                (f.number(), (f.name().to_owned(), ty, label, target))
            })
            .collect();
        out.insert(full.clone(), fields);
        for n in &m.nested_type {
            add(&full, n, out);
        }
    }
    let mut out = BTreeMap::new();
    for file in &set.file {
        for m in &file.message_type {
            add(file.package(), m, &mut out);
        }
    }
    out
}

fn kind(k: &Kind) -> String {
    match k {
        Kind::Message(m) => format!("message {}", m.name()),
        Kind::Enum(e) => format!("enum {}", e.name()),
        Kind::Double => "double".into(),
        Kind::Float => "float".into(),
        Kind::Int32 => "int32".into(),
        Kind::Int64 => "int64".into(),
        Kind::Uint32 => "uint32".into(),
        Kind::Uint64 => "uint64".into(),
        Kind::Sint32 => "sint32".into(),
        Kind::Sint64 => "sint64".into(),
        Kind::Fixed32 => "fixed32".into(),
        Kind::Fixed64 => "fixed64".into(),
        Kind::Sfixed32 => "sfixed32".into(),
        Kind::Sfixed64 => "sfixed64".into(),
        Kind::Bool => "bool".into(),
        Kind::String => "string".into(),
        Kind::Bytes => "bytes".into(),
    }
}

/// Whether our type `ours` (a simple name) and XLA's `theirs` (a full name) are one type by
/// name: equal once a trailing `Proto` and any `Start` are dropped (`CudaPlatformVersionProto`
/// is XLA's `CudaPlatformVersion`, `AllGatherStartThunkProto` its `AllGatherThunkProto`).
fn same_type(ours: &str, theirs: &str) -> bool {
    fn norm(s: &str) -> String {
        s.strip_suffix("Proto").unwrap_or(s).replace("Start", "")
    }
    norm(ours) == norm(simple(theirs))
}

/// Where a compared type's lines are reported: `ours` alone when XLA declares it under the same
/// full name, else `ours (as XLA's theirs)`.
fn place(ours: &str, theirs: &str) -> String {
    if ours == theirs {
        ours.to_owned()
    } else {
        format!("{ours} (as XLA's {theirs})")
    }
}

#[test]
fn disagreements_with_xla_are_the_documented_ones() {
    let xla = xla_messages();
    let enums = xla_enums();
    let reserved = xla_reserved();
    let pool = proto::descriptor_pool();
    let mut found = Vec::new();
    // Pairs (ours, XLA's) still to compare: every message declared under an XLA name, then each
    // message or enum that a compared field leads to on both sides.
    let mut messages: Vec<(String, String)> = pool
        .all_messages()
        .filter(|m| xla.contains_key(m.full_name()))
        .map(|m| (m.full_name().to_owned(), m.full_name().to_owned()))
        .collect();
    let mut enum_pairs: BTreeSet<(String, String)> = pool
        .all_enums()
        .filter(|e| enums.contains_key(e.full_name()))
        .map(|e| (e.full_name().to_owned(), e.full_name().to_owned()))
        .collect();
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    while let Some((ours_name, theirs_name)) = messages.pop() {
        if !seen.insert((ours_name.clone(), theirs_name.clone())) {
            continue;
        }
        let (Some(m), Some(theirs)) = (pool.get_message_by_name(&ours_name), xla.get(&theirs_name))
        else {
            continue;
        };
        let here = place(&ours_name, &theirs_name);
        for f in m.fields() {
            let label = if f.cardinality() == Cardinality::Repeated {
                "repeated"
            } else {
                "singular"
            };
            let ours = (f.name().to_owned(), kind(&f.kind()), label);
            let at = format!("{here}.{} = {}", f.name(), f.number());
            let Some(t) = theirs.get(&(f.number() as i32)) else {
                // A project field must use a number XLA does not use, reserved ones included
                // (XLA retired them: its older artifacts may still carry them).
                let retired = reserved
                    .get(&theirs_name)
                    .is_some_and(|r| r.contains(&(f.number() as i32)));
                found.push(if retired {
                    format!("{at}: XLA has no field {}, and reserves it", f.number())
                } else {
                    format!("{at}: XLA has no field {}", f.number())
                });
                continue;
            };
            // Follow the field into its type on both sides when the two types are one type under
            // two names (another package, or a name XLA spells without `Proto` or `Start`): its
            // fields or values are then held to XLA's. Types that differ in substance (a slice
            // where XLA has a shaped slice) are one finding, on the field, not a cascade.
            match (f.kind(), t.1.split(' ').next()) {
                (Kind::Message(ty), Some("message")) if same_type(ty.name(), &t.3) => {
                    messages.push((ty.full_name().to_owned(), t.3.clone()));
                }
                (Kind::Enum(ty), Some("enum")) if same_type(ty.name(), &t.3) => {
                    enum_pairs.insert((ty.full_name().to_owned(), t.3.clone()));
                }
                _ => {}
            }
            if (&t.1, t.2) != (&ours.1, ours.2) {
                found.push(format!(
                    "{at}: {} {} here, XLA `{}` {} {}",
                    ours.2, ours.1, t.0, t.2, t.1
                ));
            } else if t.0 != ours.0 {
                found.push(format!("{at}: named `{}` by XLA", t.0));
            }
        }
    }
    for (ours_name, theirs_name) in &enum_pairs {
        let (Some(e), Some(theirs)) = (pool.get_enum_by_name(ours_name), enums.get(theirs_name))
        else {
            continue;
        };
        let here = place(ours_name, theirs_name);
        for v in e.values() {
            let at = format!("{here}.{} = {}", v.name(), v.number());
            match theirs.get(&v.number()) {
                None => found.push(format!("{at}: XLA has no value {}", v.number())),
                Some(n) if n != v.name() => found.push(format!("{at}: XLA's value {n}")),
                Some(_) => {}
            }
        }
    }
    found.sort();
    let want = [
        "stream_executor.ExecutableAbiVersionProto.CudaPlatformVersionProto (as XLA's stream_executor.ExecutableAbiVersionProto.CudaPlatformVersion).cub_version = 3: singular string here, XLA `cub_version` singular bytes",
        "stream_executor.ExecutableAbiVersionProto.CudaPlatformVersionProto (as XLA's stream_executor.ExecutableAbiVersionProto.CudaPlatformVersion).cuda_toolkit_version = 1: singular string here, XLA `cuda_toolkit_version` singular bytes",
        "stream_executor.ExecutableAbiVersionProto.CudaPlatformVersionProto (as XLA's stream_executor.ExecutableAbiVersionProto.CudaPlatformVersion).cudnn_version = 2: singular string here, XLA `cudnn_version` singular bytes",
        "stream_executor.ExecutableAbiVersionProto.cuda_platform_version = 3: singular message CudaPlatformVersionProto here, XLA `cuda_platform_version` singular message CudaPlatformVersion",
        "stream_executor.GpuDeviceInfoProto.collective_memory_granularity = 46: XLA has no field 46",
        "stream_executor.GpuDeviceInfoProto.max_blocks_per_multiprocessor = 45: XLA has no field 45",
        "stream_executor.GpuDeviceInfoProto.mem_clock_ghz = 43: XLA has no field 43",
        "stream_executor.GpuDeviceInfoProto.reserved_shared_memory_per_block = 44: XLA has no field 44",
        "xla.HloModuleConfigProto.allow_spmd_sharding_propagation_to_output_legacy = 24: repeated bool here, XLA `phase_ordering_config` repeated message BoolList",
        "xla.HloModuleConfigProto.allow_spmd_sharding_propagation_to_parameters_legacy = 23: repeated bool here, XLA `memory_space_assignment_config` repeated uint64",
        "xla.HloModuleProto.frontend_attributes_legacy = 18: singular message FrontendAttributes here, XLA `buffer_donor` singular message HloBufferDonorProto",
        "xla.OpMetadata.deduplicated_name = 12: singular bool here, XLA `deduplicated_name` singular string",
        "xla.PrecisionConfig.Precision.PACKED_NIBBLE = 3: XLA has no value 3",
        "xla.PrimitiveType.F4E2M1FN_LEGACY = 30: XLA's value S1",
        "xla.PrimitiveType.F8E8M0FNU_LEGACY = 31: XLA's value U1",
        "xla.ShapeIndexProto.indices = 1: named `indexes` by XLA",
        "xla.gpu.CollectiveBufferProto.destination_buffer_xyz = 1001: XLA has no field 1001",
        "xla.gpu.CollectiveBufferProto.source_buffer_xyz = 1000: XLA has no field 1000",
        "xla.gpu.CollectiveConfigProto.op_id_xyz = 1000: XLA has no field 1000",
        "xla.gpu.CollectiveBufferProto.destination_buffer = 3: singular message BufferAllocationSliceProto here, XLA `destination_buffer` singular message ShapedSliceProto",
        "xla.gpu.CollectiveBufferProto.source_buffer = 2: singular message BufferAllocationSliceProto here, XLA `source_buffer` singular message ShapedSliceProto",
        "xla.gpu.CollectiveConfigProto.group_mode_xyz = 1001: XLA has no field 1001",
        "xla.gpu.CollectiveConfigProto.group_mode = 3: singular enum CollectiveOpGroupModeProto here, XLA `group_mode` singular enum CollectiveOpGroupMode",
        "xla.gpu.CollectiveConfigProto.op_id = 4: singular int64 here, XLA `use_symmetric_buffer` singular bool",
        "xla.gpu.CollectiveConfigProto.use_symmetric_buffer = 5: XLA has no field 5",
        "xla.gpu.CollectiveOpGroupModeProto (as XLA's xla.CollectiveOpGroupMode).COLLECTIVE_OP_GROUP_MODE_CROSS_PARTITION = 2: XLA's value COLLECTIVE_OP_GROUP_MODE_CROSS_REPLICA_AND_PARTITION",
        "xla.gpu.CollectiveOpGroupModeProto (as XLA's xla.CollectiveOpGroupMode).COLLECTIVE_OP_GROUP_MODE_CROSS_REPLICA = 1: XLA's value COLLECTIVE_OP_GROUP_MODE_CROSS_PARTITION",
        "xla.gpu.CollectiveOpGroupModeProto (as XLA's xla.CollectiveOpGroupMode).COLLECTIVE_OP_GROUP_MODE_CROSS_REPLICA_AND_PARTITION = 3: XLA's value COLLECTIVE_OP_GROUP_MODE_FLATTENED_ID",
        "xla.gpu.CollectiveOpGroupModeProto (as XLA's xla.CollectiveOpGroupMode).COLLECTIVE_OP_GROUP_MODE_FLATTENED_ID = 4: XLA has no value 4",
        "xla.gpu.CollectiveOpGroupModeProto (as XLA's xla.CollectiveOpGroupMode).COLLECTIVE_OP_GROUP_MODE_UNSPECIFIED = 0: XLA's value COLLECTIVE_OP_GROUP_MODE_CROSS_REPLICA",
        "xla.gpu.ConditionalThunkProto.branch_index_is_bool = 3: XLA has no field 3",
        "xla.gpu.CopyThunkProto.destination_buffer_xyz = 1001: XLA has no field 1001",
        "xla.gpu.CopyThunkProto.destination_buffer = 2: singular message BufferAllocationSliceProto here, XLA `destination_buffer` singular message ShapedSliceProto",
        "xla.gpu.CopyThunkProto.source_buffer_xyz = 1000: XLA has no field 1000",
        "xla.gpu.CopyThunkProto.source_buffer = 1: singular message BufferAllocationSliceProto here, XLA `source_buffer` singular message ShapedSliceProto",
        "xla.gpu.CustomCallThunkProto.attributes = 6: repeated message AttributesEntry here, XLA `attributes` singular message AttributesMapProto",
        "xla.gpu.CustomCallThunkProto.attributes_xyz = 1000: XLA has no field 1000",
        "xla.gpu.DeviceToDeviceCopyThunkProto.copy_thunk = 1: singular message ShapedCopyThunkProto here, XLA `copy_thunk` singular message CopyThunkProto",
        "xla.gpu.GemmConfigProto (as XLA's xla.GemmConfigProto).alpha_imag = 5: named `alpha_real` by XLA",
        "xla.gpu.GemmConfigProto (as XLA's xla.GemmConfigProto).alpha_real = 4: singular double here, XLA `output_layout` singular message MatrixLayout",
        "xla.gpu.GemmConfigProto (as XLA's xla.GemmConfigProto).beta = 6: named `alpha_imag` by XLA",
        "xla.gpu.GemmConfigProto (as XLA's xla.GemmConfigProto).compute_type = 9: singular enum PrimitiveType here, XLA `precision_algorithm` singular enum Algorithm",
        "xla.gpu.GemmConfigProto (as XLA's xla.GemmConfigProto).lhs_layout = 1: singular message MatrixLayoutProto here, XLA `lhs_layout` singular message MatrixLayout",
        "xla.gpu.GemmConfigProto (as XLA's xla.GemmConfigProto).operand_precisions = 10: repeated enum Precision here, XLA `algorithm` singular int64",
        "xla.gpu.GemmConfigProto (as XLA's xla.GemmConfigProto).output_layout = 3: singular message MatrixLayoutProto here, XLA `c_layout` singular message MatrixLayout",
        "xla.gpu.GemmConfigProto (as XLA's xla.GemmConfigProto).rhs_layout = 2: singular message MatrixLayoutProto here, XLA `rhs_layout` singular message MatrixLayout",
        "xla.gpu.GemmThunkProto.gemm_config_xyz = 1000: XLA has no field 1000",
        "xla.gpu.GpuExecutableProto.ConstantInfoProto.offset_in_binary = 4: XLA has no field 4",
        "xla.gpu.GpuExecutableProto.ConstantInfoProto.size = 5: XLA has no field 5",
        "xla.gpu.KernelThunkProto.kernel_binary = 11: XLA has no field 11",
        "xla.gpu.LaunchDimensionsProto.block_counts_xyz = 1000: XLA has no field 1000",
        "xla.gpu.LaunchDimensionsProto.thread_counts_per_block_xyz = 1001: XLA has no field 1001",
        "xla.gpu.LaunchDimensionsProto.block_counts = 1: singular message Dim3DProto here, XLA `block_counts` singular message BlockDimProto",
        "xla.gpu.LaunchDimensionsProto.thread_counts_per_block = 2: singular message Dim3DProto here, XLA `thread_counts_per_block` singular message ThreadDimProto",
        "xla.gpu.MatrixLayoutProto (as XLA's xla.GemmConfigProto.MatrixLayout).transpose = 7: singular bool here, XLA `transpose` singular enum BlasTransposeProto",
        "xla.gpu.MatrixLayoutProto.Order (as XLA's xla.GemmConfigProto.MatrixLayout.Order).COLUMN_MAJOR = 1: XLA's value ORDER_ROW_MAJOR",
        "xla.gpu.MatrixLayoutProto.Order (as XLA's xla.GemmConfigProto.MatrixLayout.Order).ROW_MAJOR = 0: XLA's value ORDER_UNKNOWN",
        "xla.gpu.ThunkInfoProto.execution_stream_id = 1000: XLA has no field 1000",
        "xla.gpu.ThunkProto.all_gather_start_thunk = 38: singular message AllGatherStartThunkProto here, XLA `all_gather_thunk` singular message AllGatherThunkProto",
        "xla.gpu.ThunkProto.all_reduce_start_thunk = 39: singular message AllReduceStartThunkProto here, XLA `all_reduce_thunk` singular message AllReduceThunkProto",
        "xla.gpu.ThunkProto.all_to_all_start_thunk = 41: singular message AllToAllStartThunkProto here, XLA `all_to_all_thunk` singular message AllToAllThunkProto",
        "xla.gpu.ThunkProto.collective_permute_start_thunk = 43: singular message CollectivePermuteStartThunkProto here, XLA `collective_permute_thunk` singular message CollectivePermuteThunkProto",
        "xla.gpu.ThunkProto.memset8bit_value_thunk = 29: XLA has no field 29",
    ];
    let mut want: Vec<String> = want.iter().map(|s| (*s).to_owned()).collect();
    want.sort();
    assert!(
        found == want,
        "the schema's disagreements with XLA changed; update this list and docs/artifact.md:\n{}",
        similar::TextDiff::from_lines(&want.join("\n"), &found.join("\n"))
            .unified_diff()
            .header("documented", "found")
    );
}

/// The numbers issue 19's stage 1 takes from XLA (docs/artifact.md, "Every disagreement,
/// classified"): each is declared here under XLA's name, with XLA's type and label (the test
/// above finds no disagreement on them), and XLA declares it so: a later edit of XLA's
/// descriptors or of ours that loses one fails here by name.
#[test]
fn the_numbers_taken_from_xla_in_stage_1_are_xlas() {
    let xla = xla_messages();
    let enums = xla_enums();
    let pool = proto::descriptor_pool();
    for (message, number, name) in [
        (
            "xla.HloModuleConfigProto",
            33,
            "allow_spmd_sharding_propagation_to_parameters",
        ),
        (
            "xla.HloModuleConfigProto",
            27,
            "allow_spmd_sharding_propagation_to_output",
        ),
        ("xla.HloModuleProto", 19, "frontend_attributes"),
    ] {
        let theirs = &xla[message][&number];
        let ours = pool
            .get_message_by_name(message)
            .and_then(|m| m.get_field(number as u32))
            .unwrap_or_else(|| panic!("{message} has no field {number} here"));
        assert_eq!(
            (theirs.0.as_str(), ours.name()),
            (name, name),
            "{message} {number}"
        );
        assert_eq!(theirs.1, kind(&ours.kind()), "{message}.{name} type");
    }
    let ours = pool.get_enum_by_name("xla.PrimitiveType").unwrap();
    for (number, name) in [(32, "F4E2M1FN"), (33, "F8E8M0FNU")] {
        assert_eq!(enums["xla.PrimitiveType"][&number], name);
        assert_eq!(
            ours.get_value(number)
                .map(|v| v.name().to_owned())
                .as_deref(),
            Some(name)
        );
    }
}
