//! Fidelity to XLA's schema: every field this schema declares in a message that XLA declares
//! under the same full name is compared, by number, with XLA's field (name, type, label), using
//! the descriptors embedded in the XLA that jax-cuda12-plugin 0.10.2 ships
//! (`testdata/xla_gpu/xla_descriptors.binpb`, see testdata/README.md). The disagreements are
//! pinned: fixing one, or adding a new one, fails this test until the list below and the table in
//! docs/artifact.md ("Fidelity to XLA's schema") say so.
use std::collections::BTreeMap;

use prost::Message;
use prost_reflect::{Cardinality, Kind};
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FileDescriptorSet};

/// (name, type, label) of a field; message and enum types by their simple name, so a type that
/// lives in another package here (`xla.gpu.ShapedSliceProto` for `xla.ShapedSliceProto`) is the
/// same type (the binary format does not see packages).
type Field = (String, String, &'static str);

fn simple(type_name: &str) -> &str {
    type_name.rsplit('.').next().unwrap_or(type_name)
}

/// XLA's enums: full name -> number -> value name.
fn xla_enums() -> BTreeMap<String, BTreeMap<i32, String>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/xla_gpu/xla_descriptors.binpb"
    );
    let bytes = std::fs::read(path).unwrap();
    let set = FileDescriptorSet::decode(bytes.as_slice()).unwrap();
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

fn xla_messages() -> BTreeMap<String, BTreeMap<i32, Field>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/xla_gpu/xla_descriptors.binpb"
    );
    let bytes = std::fs::read(path).unwrap();
    let set = FileDescriptorSet::decode(bytes.as_slice()).unwrap();
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
                (f.number(), (f.name().to_owned(), ty, label))
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

#[test]
fn disagreements_with_xla_are_the_documented_ones() {
    let xla = xla_messages();
    let mut found = Vec::new();
    for m in proto::descriptor_pool().all_messages() {
        let Some(theirs) = xla.get(m.full_name()) else {
            continue;
        };
        for f in m.fields() {
            let label = if f.cardinality() == Cardinality::Repeated {
                "repeated"
            } else {
                "singular"
            };
            let ours = (f.name().to_owned(), kind(&f.kind()), label);
            let at = format!("{}.{} = {}", m.full_name(), f.name(), f.number());
            match theirs.get(&(f.number() as i32)) {
                None => found.push(format!("{at}: XLA has no field {}", f.number())),
                Some(t) if (&t.1, t.2) != (&ours.1, ours.2) => found.push(format!(
                    "{at}: {} {} here, XLA `{}` {} {}",
                    ours.2, ours.1, t.0, t.2, t.1
                )),
                Some(t) if t.0 != ours.0 => found.push(format!("{at}: named `{}` by XLA", t.0)),
                Some(_) => {}
            }
        }
    }
    let enums = xla_enums();
    for e in proto::descriptor_pool().all_enums() {
        let Some(theirs) = enums.get(e.full_name()) else {
            continue;
        };
        for v in e.values() {
            let at = format!("{}.{} = {}", e.full_name(), v.name(), v.number());
            match theirs.get(&v.number()) {
                None => found.push(format!("{at}: XLA has no value {}", v.number())),
                Some(n) if n != v.name() => found.push(format!("{at}: XLA's value {n}")),
                Some(_) => {}
            }
        }
    }
    found.sort();
    let want = [
        "stream_executor.ExecutableAbiVersionProto.cuda_platform_version = 3: singular message CudaPlatformVersionProto here, XLA `cuda_platform_version` singular message CudaPlatformVersion",
        "stream_executor.GpuDeviceInfoProto.collective_memory_granularity = 46: XLA has no field 46",
        "stream_executor.GpuDeviceInfoProto.max_blocks_per_multiprocessor = 45: XLA has no field 45",
        "stream_executor.GpuDeviceInfoProto.mem_clock_ghz = 43: XLA has no field 43",
        "stream_executor.GpuDeviceInfoProto.reserved_shared_memory_per_block = 44: XLA has no field 44",
        "stream_executor.OneAPIComputeCapabilityProto.major = 2: singular int32 here, XLA `variant` singular string",
        "stream_executor.OneAPIComputeCapabilityProto.minor = 3: XLA has no field 3",
        "xla.CollectiveDeviceListProto.iota_replica_group_list = 2: XLA has no field 2",
        "xla.HloModuleConfigProto.allow_spmd_sharding_propagation_to_output = 24: repeated bool here, XLA `phase_ordering_config` repeated message BoolList",
        "xla.HloModuleConfigProto.allow_spmd_sharding_propagation_to_parameters = 23: repeated bool here, XLA `memory_space_assignment_config` repeated uint64",
        "xla.HloModuleConfigProto.alias_passthrough_params = 16: singular bool here, XLA `shardable_value_update_pairs` repeated message ShardableValueUpdatePairProto",
        "xla.HloModuleConfigProto.content_aware_computation_sorting = 17: named `alias_passthrough_params` by XLA",
        "xla.HloModuleProto.frontend_attributes = 18: singular message FrontendAttributes here, XLA `buffer_donor` singular message HloBufferDonorProto",
        "xla.IotaReplicaGroupListProto.iota_transpose_perm = 4: repeated int64 here, XLA `iota_transpose_perm` repeated int32",
        "xla.OpMetadata.deduplicated_name = 12: singular bool here, XLA `deduplicated_name` singular string",
        "xla.ShapeIndexProto.indices = 1: named `indexes` by XLA",
        "xla.gpu.CollectiveBufferProto.destination_buffer = 3: singular message BufferAllocationSliceProto here, XLA `destination_buffer` singular message ShapedSliceProto",
        "xla.gpu.CollectiveBufferProto.source_buffer = 2: singular message BufferAllocationSliceProto here, XLA `source_buffer` singular message ShapedSliceProto",
        "xla.gpu.CollectiveConfigProto.group_mode = 3: singular enum CollectiveOpGroupModeProto here, XLA `group_mode` singular enum CollectiveOpGroupMode",
        "xla.gpu.CollectiveConfigProto.op_id = 4: singular int64 here, XLA `use_symmetric_buffer` singular bool",
        "xla.gpu.CollectiveConfigProto.use_symmetric_buffer = 5: XLA has no field 5",
        "xla.gpu.ConditionalThunkProto.branch_index_is_bool = 3: XLA has no field 3",
        "xla.gpu.CopyThunkProto.destination_buffer = 2: singular message BufferAllocationSliceProto here, XLA `destination_buffer` singular message ShapedSliceProto",
        "xla.gpu.CopyThunkProto.source_buffer = 1: singular message BufferAllocationSliceProto here, XLA `source_buffer` singular message ShapedSliceProto",
        "xla.gpu.CustomCallThunkProto.attributes = 6: repeated message AttributesEntry here, XLA `attributes` singular message AttributesMapProto",
        "xla.gpu.GpuExecutableProto.ConstantInfoProto.offset_in_binary = 4: XLA has no field 4",
        "xla.gpu.GpuExecutableProto.ConstantInfoProto.size = 5: XLA has no field 5",
        "xla.gpu.KernelThunkProto.kernel_binary = 11: XLA has no field 11",
        "xla.gpu.LaunchDimensionsProto.block_counts = 1: singular message Dim3DProto here, XLA `block_counts` singular message BlockDimProto",
        "xla.gpu.LaunchDimensionsProto.thread_counts_per_block = 2: singular message Dim3DProto here, XLA `thread_counts_per_block` singular message ThreadDimProto",
        "xla.gpu.ThunkInfoProto.execution_stream_id = 4: named `concurrent_region_id` by XLA",
        "xla.gpu.ThunkProto.all_gather_start_thunk = 38: singular message AllGatherStartThunkProto here, XLA `all_gather_thunk` singular message AllGatherThunkProto",
        "xla.gpu.ThunkProto.all_reduce_start_thunk = 39: singular message AllReduceStartThunkProto here, XLA `all_reduce_thunk` singular message AllReduceThunkProto",
        "xla.gpu.ThunkProto.all_to_all_start_thunk = 41: singular message AllToAllStartThunkProto here, XLA `all_to_all_thunk` singular message AllToAllThunkProto",
        "xla.gpu.ThunkProto.collective_permute_start_thunk = 43: singular message CollectivePermuteStartThunkProto here, XLA `collective_permute_thunk` singular message CollectivePermuteThunkProto",
        "xla.gpu.ThunkProto.memset8bit_value_thunk = 29: XLA has no field 29",
        "xla.PrecisionConfig.Precision.PACKED_NIBBLE = 3: XLA has no value 3",
        "xla.PrimitiveType.F4E2M1FN = 30: XLA's value S1",
        "xla.PrimitiveType.F8E8M0FNU = 31: XLA's value U1",
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
