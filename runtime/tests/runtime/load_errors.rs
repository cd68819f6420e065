//! One test per load check, asserting the exact message (wasmtime serialization.rs style), in
//! DESIGN's loading order.
use proto::prost::Message;
use proto::stream_executor::{executable_abi_version_proto, gpu_compute_capability_proto};
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use runtime::{Registry, RuntimeFlags};

use crate::common::*;

fn abi(p: &mut GpuExecutableProto) -> &mut executable_abi_version_proto::CudaPlatformVersionProto {
    match p
        .executable_abi_version
        .as_mut()
        .unwrap()
        .platform_version
        .as_mut()
        .unwrap()
    {
        executable_abi_version_proto::PlatformVersion::CudaPlatformVersion(v) => v,
    }
}

fn kernel_mut(p: &mut GpuExecutableProto) -> &mut KernelThunkProto {
    match p.thunks[0].r#impl.as_mut().unwrap() {
        Impl::KernelThunk(k) => k,
        _ => unreachable!(),
    }
}

// 1. Size limit and decode.

/// The compiler's bound and message (`proto::contract`): major 3 to 20, minor 0 to 9. Runtimes
/// before 2026-12-04 took majors up to 99 and minors up to 99, which no device has.
#[test]
fn target_configs_outside_the_compute_capability_bound_are_refused_as_the_compiler_does() {
    use proto::stream_executor::gpu_device_info_proto::ComputeCapability;
    let with = |major: i32, minor: i32| {
        let mut config = proto::load_target_config(&spec("h100_sxm")).unwrap();
        let info = config.gpu_device_info.as_mut().unwrap();
        let Some(ComputeCapability::CudaComputeCapability(c)) = info.compute_capability.as_mut()
        else {
            panic!("h100_sxm names a CUDA compute capability")
        };
        (c.major, c.minor) = (major, minor);
        runtime::DeviceDescription::from_target_config(&config).map(|d| d.compute_capability)
    };
    assert_eq!(with(3, 0).unwrap(), (3, 0));
    assert_eq!(with(20, 9).unwrap(), (20, 9));
    for (major, minor) in [(2, 0), (21, 0), (99, 0), (9, 10), (9, 99), (-1, 0)] {
        assert_eq!(
            with(major, minor).unwrap_err().to_string(),
            format!(
                "INVALID_ARGUMENT: target config: cuda_compute_capability {major}.{minor} is not a \
                 CUDA compute capability"
            )
        );
    }
}

#[test]
fn size_limit_is_checked_before_decoding() {
    let flags = RuntimeFlags {
        max_artifact_bytes: 100,
        ..RuntimeFlags::default()
    };
    let bytes = vadd().encode_to_vec();
    let e = runtime::validate(&bytes, &h100(), &flags, &Registry::builtin()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("RESOURCE_EXHAUSTED: the artifact is {} bytes, over the limit of 100 bytes (RuntimeFlags::max_artifact_bytes)", bytes.len())
    );
}

#[test]
fn malformed_bytes_fail_to_decode() {
    let e = runtime::validate(
        &[0x0a, 0xff, 0xff],
        &h100(),
        &RuntimeFlags::default(),
        &Registry::builtin(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: the artifact is not a valid GpuExecutableProto: malformed protobuf: failed to decode Protobuf message: GpuExecutableProto.hlo_module_with_config: invalid varint"
    );
}

// 2. ABI.

#[test]
fn newer_cudnn_is_failed_precondition() {
    let mut p = vadd();
    abi(&mut p).cudnn_version = "9.11.0".into();
    assert_eq!(
        load_err(&p),
        "FAILED_PRECONDITION: executable_abi_version.cuda_platform_version.cudnn_version: the executable needs cuDNN 9.11.0 or newer, the device's runtime has cuDNN 9.10.0"
    );
}

#[test]
fn newer_cuda_toolkit_is_failed_precondition() {
    let mut p = vadd();
    abi(&mut p).cuda_toolkit_version = "12.10".into();
    assert_eq!(
        load_err(&p),
        "FAILED_PRECONDITION: executable_abi_version.cuda_platform_version.cuda_toolkit_version: the executable needs CUDA toolkit 12.10 or newer, the device's runtime has CUDA toolkit 12.8.0"
    );
}

#[test]
fn newer_cub_is_failed_precondition() {
    let mut p = vadd();
    abi(&mut p).cub_version = "3.2.0".into();
    assert_eq!(
        load_err(&p),
        "FAILED_PRECONDITION: executable_abi_version.cuda_platform_version.cub_version: the executable needs CUB 3.2.0 or newer, the device's runtime has CUB 3.1.2"
    );
}

#[test]
fn older_versions_and_empty_ones_load() {
    let mut p = vadd();
    abi(&mut p).cuda_toolkit_version = "12.1".into();
    abi(&mut p).cudnn_version = String::new();
    abi(&mut p).cub_version = "2".into();
    runtime::validate(
        &p.encode_to_vec(),
        &h100(),
        &RuntimeFlags::default(),
        &Registry::builtin(),
    )
    .unwrap();
}

#[test]
fn malformed_version_is_invalid_argument() {
    let mut p = vadd();
    abi(&mut p).cub_version = "3.x".into();
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: executable_abi_version.cuda_platform_version.cub_version is \"3.x\", not an X.Y.Z version"
    );
}

#[test]
fn toolkit_requirement_of_zero_is_met_by_a_runtime_without_one() {
    // XLA:GPU records CUDA toolkit 0.0.0 for targets whose spec has no runtime version (a100).
    let mut p = vadd();
    abi(&mut p).cuda_toolkit_version = "0.0.0".into();
    let mut device = h100();
    device.cuda_toolkit_version = String::new();
    runtime::validate(
        &p.encode_to_vec(),
        &device,
        &RuntimeFlags::default(),
        &Registry::builtin(),
    )
    .unwrap();
}

#[test]
fn other_platform_is_failed_precondition() {
    let mut p = vadd();
    p.executable_abi_version.as_mut().unwrap().platform_name = "ROCM".into();
    assert_eq!(
        load_err(&p),
        "FAILED_PRECONDITION: executable_abi_version.platform_name is \"ROCM\", the device's platform is \"CUDA\""
    );
}

#[test]
fn missing_abi_version_is_invalid_argument() {
    let mut p = vadd();
    p.executable_abi_version = None;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: executable_abi_version is not set"
    );
}

// 3. Compute capability.

#[test]
fn sm90_artifact_on_sm80_device_is_failed_precondition() {
    let p = vadd();
    assert_eq!(
        load_err_with(&p, &desc("a100_sxm_40"), &RuntimeFlags::default()),
        "FAILED_PRECONDITION: gpu_compute_capability is sm_90 (9.0), the device is sm_80 (8.0); an executable runs only on a device with the same major and minor compute capability"
    );
}

#[test]
fn capability_mismatch_is_named_before_an_abi_mismatch() {
    // a100_sxm_80's target config has no CUDA toolkit version: both environment checks fail, and
    // the actionable one (wrong device) must lead.
    let p = vadd();
    assert_eq!(
        load_err_with(&p, &desc("a100_sxm_80"), &RuntimeFlags::default()),
        "FAILED_PRECONDITION: gpu_compute_capability is sm_90 (9.0), the device is sm_80 (8.0); an executable runs only on a device with the same major and minor compute capability; the ABI check fails too: executable_abi_version.cuda_platform_version.cuda_toolkit_version: the executable needs CUDA toolkit 12.8.0, the device's runtime has no CUDA toolkit version"
    );
}

#[test]
fn sm80_artifact_on_sm90_device_is_failed_precondition() {
    let mut p = vadd();
    if let Some(gpu_compute_capability_proto::ComputeCapability::CudaComputeCapability(c)) = p
        .gpu_compute_capability
        .as_mut()
        .unwrap()
        .compute_capability
        .as_mut()
    {
        c.major = 8;
    }
    assert_eq!(
        load_err(&p),
        "FAILED_PRECONDITION: gpu_compute_capability is sm_80 (8.0), the device is sm_90 (9.0); an executable runs only on a device with the same major and minor compute capability"
    );
}

fn cuda_cc(p: &mut GpuExecutableProto) -> &mut proto::stream_executor::CudaComputeCapabilityProto {
    match p
        .gpu_compute_capability
        .as_mut()
        .and_then(|c| c.compute_capability.as_mut())
    {
        Some(gpu_compute_capability_proto::ComputeCapability::CudaComputeCapability(c)) => c,
        other => panic!("{other:?}"),
    }
}

fn toolkit_mut(p: &mut GpuExecutableProto) -> &mut String {
    match p
        .executable_abi_version
        .as_mut()
        .and_then(|a| a.platform_version.as_mut())
    {
        Some(executable_abi_version_proto::PlatformVersion::CudaPlatformVersion(v)) => {
            &mut v.cuda_toolkit_version
        }
        other => panic!("{other:?}"),
    }
}

fn set_ptx_header(p: &mut GpuExecutableProto, version: &str, target: &str) {
    let bin = kernel_mut(p).kernel_binary.as_mut().unwrap();
    bin.ptx = bin
        .ptx
        .replace(".version 8.0", &format!(".version {version}"))
        .replace(".target sm_90a", &format!(".target {target}"));
}

#[test]
fn sm90a_artifact_on_a_device_without_accelerated_features_is_failed_precondition() {
    let p = vadd();
    let mut d = h100();
    d.compute_capability_features = ptx::Features::Baseline;
    assert_eq!(
        load_err_with(&p, &d, &RuntimeFlags::default()),
        "FAILED_PRECONDITION: gpu_compute_capability is sm_90a (9.0, feature_extension ACCELERATED_FEATURES), the device is sm_90 (9.0, feature_extension NONE); an executable compiled for sm_90a runs only on a device with those features"
    );
    // A family executable needs the family features, which an accelerated device has.
    let mut p = vadd();
    cuda_cc(&mut p).feature_extension = 3;
    set_ptx_header(&mut p, "8.0", "sm_90");
    assert_eq!(
        load_err_with(&p, &d, &RuntimeFlags::default()),
        "FAILED_PRECONDITION: gpu_compute_capability is sm_90f (9.0, feature_extension FAMILY_COMPATIBLE_FEATURES), the device is sm_90 (9.0, feature_extension NONE); an executable compiled for sm_90f runs only on a device with those features"
    );
    assert_loads(&p, &RuntimeFlags::default());
}

#[test]
fn unknown_feature_extension_is_invalid_argument() {
    let mut p = vadd();
    cuda_cc(&mut p).feature_extension = 7;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: gpu_compute_capability.cuda_compute_capability.feature_extension is 7, not a known CudaComputeCapabilityProto.FeatureExtension"
    );
}

// 6 (the kernels' PTX headers): `.version` against the declared toolkit, `.target` against the
// compute capability.

#[test]
fn ptx_isa_newer_than_the_declared_toolkit_is_invalid_argument() {
    let mut p = vadd();
    set_ptx_header(&mut p, "9.0", "sm_90a");
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.kernel_binary.ptx: kernel \"vadd\" has .version 9.0 (PTX ISA 9.0), which needs CUDA toolkit 13.0 or newer, but executable_abi_version.cuda_platform_version.cuda_toolkit_version declares CUDA toolkit 12.8.0; a runtime of that toolkit cannot JIT-compile the kernel, so the artifact contradicts itself"
    );
    // The newest ISA 12.8 accepts loads; declaring 13.0 makes 9.0 consistent (the device's runtime
    // must then have 13.0, step 2).
    let mut ok = vadd();
    set_ptx_header(&mut ok, "8.7", "sm_90a");
    assert_loads(&ok, &RuntimeFlags::default());
    *toolkit_mut(&mut p) = "13.0.0".into();
    let mut d = h100();
    d.cuda_toolkit_version = "13.0.0".into();
    runtime::validate(
        &p.encode_to_vec(),
        &d,
        &RuntimeFlags::default(),
        &Registry::builtin(),
    )
    .unwrap();
}

#[test]
fn ptx_isa_newer_than_any_known_toolkit_is_invalid_argument() {
    let mut p = vadd();
    set_ptx_header(&mut p, "9.5", "sm_90a");
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.kernel_binary.ptx: kernel \"vadd\" has .version 9.5 (PTX ISA 9.5), which needs a CUDA toolkit newer than any this table knows (the newest it knows is 13.1, for PTX ISA 9.1), but executable_abi_version.cuda_platform_version.cuda_toolkit_version declares CUDA toolkit 12.8.0; a runtime of that toolkit cannot JIT-compile the kernel, so the artifact contradicts itself"
    );
}

#[test]
fn with_no_declared_toolkit_the_ptx_isa_is_held_to_the_device_runtime() {
    let mut p = vadd();
    set_ptx_header(&mut p, "9.0", "sm_90a");
    for none in ["", "0.0.0"] {
        *toolkit_mut(&mut p) = none.into();
        assert_eq!(
            load_err(&p),
            "FAILED_PRECONDITION: thunks[0].kernel_thunk.kernel_binary.ptx: kernel \"vadd\" has .version 9.0 (PTX ISA 9.0), which needs CUDA toolkit 13.0 or newer; the executable declares no CUDA toolkit version and the device's runtime has CUDA toolkit 12.8.0",
            "{none:?}"
        );
    }
    // Neither declares one: nothing to compare.
    let mut d = h100();
    d.cuda_toolkit_version.clear();
    runtime::validate(
        &p.encode_to_vec(),
        &d,
        &RuntimeFlags::default(),
        &Registry::builtin(),
    )
    .unwrap();
}

#[test]
fn ptx_target_newer_than_the_capability_is_invalid_argument() {
    let mut p = vadd();
    set_ptx_header(&mut p, "8.7", "sm_100");
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.kernel_binary.ptx: kernel \"vadd\" has .target sm_100, but gpu_compute_capability is sm_90a (9.0); PTX for sm_100 runs only on compute capability 10.0 or newer"
    );
    // An older plain target runs on a newer capability.
    let mut p = vadd();
    set_ptx_header(&mut p, "8.7", "sm_80");
    assert_loads(&p, &RuntimeFlags::default());
}

#[test]
fn ptx_accelerated_target_needs_the_capability_with_its_features() {
    let mut p = vadd();
    cuda_cc(&mut p).feature_extension = 1;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.kernel_binary.ptx: kernel \"vadd\" has .target sm_90a, but gpu_compute_capability is sm_90 (9.0); PTX for sm_90a runs only on compute capability 9.0 with accelerated features"
    );
}

#[test]
fn ptx_family_target_needs_its_family() {
    let mut p = vadd();
    set_ptx_header(&mut p, "8.8", "sm_100f");
    *toolkit_mut(&mut p) = "12.9.0".into();
    let mut d = h100();
    d.cuda_toolkit_version = "12.9.0".into();
    assert_eq!(
        load_err_with(&p, &d, &RuntimeFlags::default()),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.kernel_binary.ptx: kernel \"vadd\" has .target sm_100f, but gpu_compute_capability is sm_90a (9.0); PTX for sm_100f runs only on compute capability 10.x with x >= 0 and family or accelerated features"
    );
}

#[test]
fn ptx_target_that_is_not_an_sm_architecture_is_invalid_argument() {
    let mut p = vadd();
    set_ptx_header(&mut p, "8.0", "compute_90");
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.kernel_binary.ptx: kernel \"vadd\" has .target compute_90, not an sm_XY, sm_XYa or sm_XYf architecture"
    );
}

// 4. Embedded HLO.

#[test]
fn unknown_hlo_opcode_fails_the_load() {
    let mut p = vadd();
    let m = p
        .hlo_module_with_config
        .as_mut()
        .unwrap()
        .hlo_module
        .as_mut()
        .unwrap();
    let root = m.computations[0]
        .instructions
        .iter_mut()
        .find(|i| i.name == "c")
        .unwrap();
    root.opcode = "frobnicate".into();
    assert_eq!(
        load_err(&p),
        "UNIMPLEMENTED: hlo_module_with_config: e/c: unknown opcode \"frobnicate\"; this runtime does not know that opcode"
    );
}

#[test]
fn missing_hlo_module_is_invalid_argument() {
    let mut p = vadd();
    p.hlo_module_with_config = None;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: hlo_module_with_config is not set"
    );
}

// 5. Buffer allocations.

#[test]
fn allocation_index_must_equal_position() {
    let mut p = vadd();
    allocs(&mut p)[2].index = 5;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: buffer_allocations.values[2].index is 5, expected 2"
    );
}

#[test]
fn negative_allocation_size_is_invalid_argument() {
    let mut p = vadd();
    allocs(&mut p)[2].size = -16;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: buffer_allocations.values[2].size is -16, must be >= 0"
    );
}

#[test]
fn allocations_over_device_memory_are_resource_exhausted() {
    let mut p = vadd();
    allocs(&mut p)[2].size = 90_000_000_000;
    assert_eq!(
        load_err(&p),
        "RESOURCE_EXHAUSTED: buffer_allocations need 90000000032 bytes in total, over the device's device_memory_size of 84942979072 bytes"
    );
}

#[test]
fn parameter_allocation_size_must_match_the_parameter() {
    let mut p = vadd();
    allocs(&mut p)[1].size = 12;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: buffer_allocations.values[1].size is 12, but parameter 1 [] is 16 bytes"
    );
}

#[test]
fn constant_outside_binary_is_invalid_argument() {
    let mut p = vadd();
    p.binary = vec![0; 8];
    p.constants = vec![gpu_executable_proto::ConstantInfoProto {
        symbol_name: "k".into(),
        offset_in_binary: 4,
        size: 8,
        allocation_index: 2,
    }];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: constants[0]: offset_in_binary 4 + size 8 exceeds the 8 bytes of binary"
    );
}

#[test]
fn output_allocation_out_of_range_is_invalid_argument() {
    let mut p = vadd();
    p.output_info_map = vec![out(vec![], 3)];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: output_info_map[0].output_info.allocation_index is 3, out of range [0, 3)"
    );
}

#[test]
fn output_count_must_match_result_leaves() {
    let mut p = vadd();
    p.output_info_map.clear();
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: output_info_map has 0 entries, the result has 1 array leaves"
    );
}

#[test]
fn an_output_node_has_one_entry() {
    let mut p = vadd();
    p.output_info_map.push(out(vec![], 2));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: output_info_map[1].shape_index [] has an earlier entry; each node has one"
    );
}

// 6. Thunks.

#[test]
fn unset_thunk_impl_was_made_by_a_newer_compiler() {
    let mut p = vadd();
    p.thunks[0].r#impl = None;
    assert_eq!(
        load_err(&p),
        "UNIMPLEMENTED: thunks[0].impl is not set: the thunk was made by a newer compiler; this runtime does not know that thunk kind"
    );
}

#[test]
fn unknown_thunk_kind_from_the_wire_was_made_by_a_newer_compiler() {
    // A ThunkProto whose only field is an unknown oneof case (field 99, empty message).
    let mut p = vadd();
    p.thunks.clear();
    let mut bytes = p.encode_to_vec();
    // thunks = 13 (length-delimited): a ThunkProto of bytes [0x9a, 0x06, 0x00] (field 99, len 0).
    bytes.extend_from_slice(&[0x6a, 0x03, 0x9a, 0x06, 0x00]);
    let e = runtime::validate(
        &bytes,
        &h100(),
        &RuntimeFlags::default(),
        &Registry::builtin(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "UNIMPLEMENTED: thunks[0].impl is not set: the thunk was made by a newer compiler; this runtime does not know that thunk kind"
    );
    // The error names the undeclared field for callers that report it (`aot run`).
    assert_eq!(
        e.cause(),
        Some(&runtime::Cause::UnknownThunkKind { fields: vec![99] })
    );
}

#[test]
fn unknown_nested_thunk_kind_names_its_field() {
    // A sequential thunk (field 2) holding a ThunkProto whose only field is 98 (empty).
    let mut p = vadd();
    p.thunks.clear();
    let mut bytes = p.encode_to_vec();
    // thunks = 13: {sequential_thunk = 2: {thunks = 1: {98: ""}}}.
    bytes.extend_from_slice(&[0x6a, 0x07, 0x12, 0x05, 0x0a, 0x03, 0x92, 0x06, 0x00]);
    let e = runtime::validate(
        &bytes,
        &h100(),
        &RuntimeFlags::default(),
        &Registry::builtin(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "UNIMPLEMENTED: thunks[0].sequential_thunk.thunks[0].impl is not set: the thunk was made by a newer compiler; this runtime does not know that thunk kind"
    );
    assert_eq!(
        e.cause(),
        Some(&runtime::Cause::UnknownThunkKind { fields: vec![98] })
    );
}

#[test]
fn allocation_index_out_of_range() {
    let mut p = vadd();
    kernel_mut(&mut p).args[1].buffer_allocation_index = 7;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.args[1].buffer_allocation_index is 7, out of range [0, 3)"
    );
}

#[test]
fn slice_past_the_allocation_end() {
    let mut p = vadd();
    kernel_mut(&mut p).args[2].offset = 8;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.args[2]: offset 8 + size 16 exceeds the size 16 of buffer_allocations[2]"
    );
}

#[test]
fn negative_slice_offset() {
    let mut p = vadd();
    kernel_mut(&mut p).args[0].offset = -4;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.args[0].offset is -4, must be >= 0"
    );
}

#[test]
fn stream_id_out_of_range() {
    let mut p = vadd();
    p.thunks[0].thunk_info.as_mut().unwrap().execution_stream_id = 9;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].thunk_info.execution_stream_id is 9, out of range [0, 4) (RuntimeFlags::num_streams)"
    );
}

#[test]
fn duplicate_thunk_id() {
    let mut p = vadd();
    p.thunks.push(p.thunks[0].clone());
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[1].thunk_info.thunk_id is 1, already used by thunks[0]; thunk ids must be unique"
    );
}

#[test]
fn too_many_threads_per_block() {
    let mut p = vadd();
    let ld = kernel_mut(&mut p).launch_dimensions.as_mut().unwrap();
    ld.thread_counts_per_block = Some(dim(64, 32, 1));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.launch_dimensions.thread_counts_per_block is 64x32x1 = 2048 threads, over the device's threads_per_block_limit of 1024"
    );
}

#[test]
fn block_dimension_over_its_limit() {
    let mut p = vadd();
    let ld = kernel_mut(&mut p).launch_dimensions.as_mut().unwrap();
    ld.thread_counts_per_block = Some(dim(1, 1, 65));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.launch_dimensions.thread_counts_per_block.z is 65, out of range [1, 64] (the device's thread_dim_limit_z)"
    );
}

#[test]
fn grid_dimension_over_its_limit() {
    let mut p = vadd();
    let ld = kernel_mut(&mut p).launch_dimensions.as_mut().unwrap();
    ld.block_counts = Some(dim(1, 65536, 1));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.launch_dimensions.block_counts.y is 65536, out of range [1, 65535] (the device's block_dim_limit_y)"
    );
}

/// Moves the launch counts of the first kernel to the stage-1 numbers (1000, 1001).
fn launch_xyz(p: &mut GpuExecutableProto) -> &mut LaunchDimensionsProto {
    let ld = kernel_mut(p).launch_dimensions.as_mut().unwrap();
    ld.block_counts_xyz = ld.block_counts.take();
    ld.thread_counts_per_block_xyz = ld.thread_counts_per_block.take();
    ld
}

#[test]
fn launch_counts_at_the_project_numbers_load() {
    let mut p = vadd();
    launch_xyz(&mut p);
    assert_loads(&p, &RuntimeFlags::default());
}

#[test]
fn launch_counts_in_both_pairs() {
    let mut p = vadd();
    let ld = launch_xyz(&mut p);
    ld.block_counts = ld.block_counts_xyz;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.launch_dimensions sets both block_counts/thread_counts_per_block (1, 2) and block_counts_xyz/thread_counts_per_block_xyz (1000, 1001); an artifact sets one pair"
    );
}

#[test]
fn launch_counts_at_the_project_numbers_without_the_block() {
    let mut p = vadd();
    launch_xyz(&mut p).thread_counts_per_block_xyz = None;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.launch_dimensions.thread_counts_per_block_xyz is not set"
    );
}

#[test]
fn launch_counts_at_the_project_numbers_over_the_limits() {
    let mut p = vadd();
    launch_xyz(&mut p).block_counts_xyz = Some(dim(1, 65536, 1));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.launch_dimensions.block_counts_xyz.y is 65536, out of range [1, 65535] (the device's block_dim_limit_y)"
    );
    let ld = kernel_mut(&mut p).launch_dimensions.as_mut().unwrap();
    ld.block_counts_xyz = Some(dim(1, 1, 1));
    ld.thread_counts_per_block_xyz = Some(dim(64, 32, 1));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.launch_dimensions.thread_counts_per_block_xyz is 64x32x1 = 2048 threads, over the device's threads_per_block_limit of 1024"
    );
}

#[test]
fn zero_grid_dimension() {
    let mut p = vadd();
    let ld = kernel_mut(&mut p).launch_dimensions.as_mut().unwrap();
    ld.block_counts = Some(dim(0, 1, 1));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.launch_dimensions.block_counts.x is 0, out of range [1, 2147483647] (the device's block_dim_limit_x)"
    );
}

#[test]
fn shared_memory_over_the_limit() {
    let mut p = vadd();
    kernel_mut(&mut p).shmem_bytes = 300_000;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.shmem_bytes is 300000, out of range [0, 232448] (the device's shared_memory_per_block_optin)"
    );
}

#[test]
fn ptx_signature_that_does_not_parse() {
    let mut p = vadd();
    kernel_mut(&mut p).kernel_binary.as_mut().unwrap().ptx =
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry vadd(.param .q64 a) { ret; }\n"
            .into();
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.kernel_binary.ptx does not parse: line 4:29: expected a parameter type, `.align`, or `.ptr`, found `.q64`"
    );
}

#[test]
fn ptx_with_an_unclosed_body_does_not_parse() {
    let mut p = vadd();
    let bin = kernel_mut(&mut p).kernel_binary.as_mut().unwrap();
    bin.ptx = bin.ptx.replace(
        "  ret;\n}\n\n.visible .entry lt10",
        "  ret;\n\n.visible .entry lt10",
    );
    let e = load_err(&p);
    assert!(
        e.starts_with(
            "INVALID_ARGUMENT: thunks[0].kernel_thunk.kernel_binary.ptx does not parse: line "
        ) && e.ends_with(": expected '}' to close the block, found end of input"),
        "{e}"
    );
}

/// A malformed statement inside a body: with `PtxCheck::Full` the load fails naming its line and
/// column; by default the load only parses signatures and the emulator reports it at the
/// kernel's first launch, with the same position.
#[test]
fn ptx_body_that_does_not_parse() {
    let mut p = vadd();
    let bin = kernel_mut(&mut p).kernel_binary.as_mut().unwrap();
    bin.ptx = bin
        .ptx
        .replacen("add.f32 %f3, %f1, %f2;", "bogus.f32 %f3, %f1, %f2;", 1);
    let full = RuntimeFlags {
        ptx_check: runtime::PtxCheck::Full,
        ..RuntimeFlags::default()
    };
    assert_eq!(
        load_err_with(&p, &h100(), &full),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.kernel_binary.ptx does not parse: line 21:3: unknown opcode `bogus`"
    );
    let d = device();
    let exe = runtime::load(&p.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let e = exe
        .execute(&d, &[&f32s(&[1.0; 4]), &f32s(&[1.0; 4])])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: kernel_binary.ptx (.entry vadd, lt10, inc, forever) does not parse: line 21:3: unknown opcode `bogus` (found at its first launch; RuntimeFlags::ptx_check = full finds it at load)"
    );
}

#[test]
fn cubin_that_is_not_elf() {
    let mut p = vadd();
    kernel_mut(&mut p).kernel_binary.as_mut().unwrap().cubin = vec![1, 2, 3];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.kernel_binary.cubin is not a cubin: 3 bytes, shorter than an ELF64 header"
    );
}

#[test]
fn cubin_for_another_sm() {
    let mut p = vadd();
    kernel_mut(&mut p).kernel_binary.as_mut().unwrap().cubin = cubin_header(80);
    assert_eq!(
        load_err(&p),
        "FAILED_PRECONDITION: thunks[0].kernel_thunk.kernel_binary.cubin is for sm_80, the device is sm_90"
    );
}

#[test]
fn cubins_disagree_for_the_same_ptx() {
    let mut p = vadd();
    let mut second = p.thunks[0].clone();
    if let Some(Impl::KernelThunk(k)) = second.r#impl.as_mut() {
        k.kernel_binary.as_mut().unwrap().cubin = cubin_header(90);
    }
    second.thunk_info.as_mut().unwrap().thunk_id = 2;
    p.thunks.push(second);
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[1].kernel_thunk.kernel_binary.cubin differs from the one of an earlier kernel thunk with the same PTX"
    );
}

#[test]
fn missing_kernel_entry_is_not_found() {
    let mut p = vadd();
    kernel_mut(&mut p).kernel_name = "vsub".into();
    assert_eq!(
        load_err(&p),
        "NOT_FOUND: thunks[0].kernel_thunk.kernel_name \"vsub\" is not an .entry of its kernel_binary.ptx (entries: vadd, lt10, inc, forever)"
    );
}

#[test]
fn kernel_parameter_count_mismatch() {
    let mut p = vadd();
    kernel_mut(&mut p).args.pop();
    kernel_mut(&mut p).written.pop();
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.args has 2 entries, .entry vadd takes 3 parameters"
    );
}

#[test]
fn unknown_custom_call_target_is_not_found() {
    let mut p = vadd();
    p.thunks[0].r#impl = Some(Impl::CustomCallThunk(CustomCallThunkProto {
        target_name: "my_lib$fancy_op".into(),
        ..Default::default()
    }));
    assert_eq!(
        load_err(&p),
        "NOT_FOUND: thunks[0].custom_call_thunk.target_name \"my_lib$fancy_op\" is not registered (no custom-call target or FFI handler has that name or legacy alias)"
    );
}

/// A target of XLA:CPU (jaxlib's LAPACK handlers) says the module was lowered for the CPU.
#[test]
fn cpu_custom_call_target_says_which_platform() {
    let mut p = vadd();
    p.thunks[0].r#impl = Some(Impl::CustomCallThunk(CustomCallThunkProto {
        target_name: "lapack_strsm_ffi".into(),
        api_version: 4,
        ..Default::default()
    }));
    assert_eq!(
        load_err(&p),
        "NOT_FOUND: thunks[0].custom_call_thunk.target_name \"lapack_strsm_ffi\" is an XLA:CPU target (LAPACK), not registered here: the module was lowered for the CPU; lower it for the GPU (`jax.export.export(jax.jit(f), platforms=[\"cuda\"])`, or `jax.jit(f).lower(...)` with a GPU backend)"
    );
}

/// An FFI call with `alpha` in the attributes at 6 (`at_6`) and/or at 1000 (`at_1000`).
fn axpy_with_attributes(at_6: bool, at_1000: bool) -> GpuExecutableProto {
    let mut p = vadd();
    let alpha: std::collections::BTreeMap<String, String> =
        [("alpha".to_owned(), "2".to_owned())].into_iter().collect();
    p.thunks[0].r#impl = Some(Impl::CustomCallThunk(CustomCallThunkProto {
        target_name: "xla.runtime.axpy_f32".into(),
        api_version: 4,
        attributes: if at_6 {
            alpha.clone()
        } else {
            Default::default()
        },
        attributes_xyz: if at_1000 { alpha } else { Default::default() },
        ..Default::default()
    }));
    p
}

#[test]
fn custom_call_attributes_load_from_either_number() {
    assert_loads(&axpy_with_attributes(true, false), &RuntimeFlags::default());
    assert_loads(&axpy_with_attributes(false, true), &RuntimeFlags::default());
}

#[test]
fn custom_call_attributes_at_both_numbers() {
    assert_eq!(
        load_err(&axpy_with_attributes(true, true)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk sets both attributes (6) and attributes_xyz (1000); an artifact sets one"
    );
}

#[test]
fn nesting_deeper_than_the_limit() {
    let mut p = vadd();
    let mut t = p.thunks[0].clone();
    for i in 0..3 {
        t = thunk(
            100 + i,
            Impl::SequentialThunk(SequentialThunkProto { thunks: vec![t] }),
        );
    }
    p.thunks = vec![t];
    let flags = RuntimeFlags {
        max_thunk_depth: 3,
        ..RuntimeFlags::default()
    };
    assert_eq!(
        load_err_with(&p, &h100(), &flags),
        "INVALID_ARGUMENT: thunks[0].sequential_thunk.thunks[0].sequential_thunk.thunks[0].sequential_thunk.thunks[0]: thunk nesting depth 4 exceeds the limit of 3 (RuntimeFlags::max_thunk_depth)"
    );
}

#[test]
fn all_to_all_is_unimplemented() {
    let mut p = vadd();
    p.thunks[0].r#impl = Some(Impl::AllToAllStartThunk(AllToAllStartThunkProto::default()));
    assert_eq!(
        load_err(&p),
        "UNIMPLEMENTED: thunks[0].all_to_all_start_thunk: this runtime does not execute all_to_all_start_thunk (not emitted by today's compiler)"
    );
}

/// The gemm artifact's config at the stage-1 number (1000), for `edit` to break.
fn gemm_xyz_with(
    edit: impl FnOnce(&mut GemmThunkProto, &mut GemmConfigXyzProto),
) -> GpuExecutableProto {
    let mut p = crate::common::gemm_artifact_xyz(false);
    if let Some(Impl::GemmThunk(g)) = p.thunks[0].r#impl.as_mut() {
        let mut c = g.gemm_config_xyz.take().unwrap();
        edit(g, &mut c);
        g.gemm_config_xyz = Some(c);
    }
    p
}

#[test]
fn gemm_config_in_both_fields() {
    let p = gemm_xyz_with(|g, c| g.gemm_config = Some((&*c).into()));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk sets both gemm_config (1) and gemm_config_xyz (1000); an artifact sets one"
    );
}

#[test]
fn gemm_config_in_neither_field() {
    let mut p = crate::common::gemm_artifact(false);
    if let Some(Impl::GemmThunk(g)) = p.thunks[0].r#impl.as_mut() {
        g.gemm_config = None;
    }
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk.gemm_config is not set"
    );
}

#[test]
fn gemm_config_at_the_project_number_without_a_layout() {
    let p = gemm_xyz_with(|_, c| c.lhs_layout = None);
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk.gemm_config_xyz.lhs_layout is not set"
    );
}

#[test]
fn gemm_config_at_the_project_number_with_an_unknown_order() {
    let p = gemm_xyz_with(|_, c| c.rhs_layout.as_mut().unwrap().order = 5);
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk.gemm_config_xyz.rhs_layout.order is 5, not a known MatrixLayoutXyzProto.Order"
    );
}

#[test]
fn gemm_layout_with_an_unknown_order() {
    let mut p = crate::common::gemm_artifact(false);
    if let Some(Impl::GemmThunk(g)) = p.thunks[0].r#impl.as_mut() {
        g.gemm_config
            .as_mut()
            .unwrap()
            .rhs_layout
            .as_mut()
            .unwrap()
            .order = 5;
    }
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk.gemm_config.rhs_layout.order is 5, not a known MatrixLayoutProto.Order"
    );
}

#[test]
fn gemm_config_at_the_project_number_whose_shapes_disagree() {
    let p = gemm_xyz_with(|_, c| c.rhs_layout.as_mut().unwrap().num_rows = 4);
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk.gemm_config_xyz: op(lhs) is 2x3, op(rhs) is 4x2, output is 2x2; need MxK, KxN and MxN"
    );
}

#[test]
fn gemm_buffer_smaller_than_its_layout_at_the_project_number() {
    let p = gemm_xyz_with(|g, _| g.output_buffer = Some(sl(2, 0, 12)));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk.output_buffer.size is 12, smaller than the 16 bytes gemm_config_xyz.output_layout addresses"
    );
}

#[test]
fn gemm_shapes_must_agree() {
    let mut p = crate::common::gemm_artifact(false);
    if let Some(Impl::GemmThunk(g)) = p.thunks[0].r#impl.as_mut() {
        g.gemm_config
            .as_mut()
            .unwrap()
            .rhs_layout
            .as_mut()
            .unwrap()
            .num_rows = 4;
    }
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk.gemm_config: op(lhs) is 2x3, op(rhs) is 4x2, output is 2x2; need MxK, KxN and MxN"
    );
}

#[test]
fn copy_larger_than_its_slices() {
    let mut p = vadd();
    p.thunks = vec![copy(1, sl(0, 0, 8), sl(2, 0, 16), 12)];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].copy_thunk.mem_size is 12, larger than source_buffer.size 8"
    );
}

/// A copy with its slices at the stage-1 numbers (1000, 1001).
fn copy_xyz(
    id: i64,
    src: proto::xla::buffer_assignment::BufferAllocationSliceProto,
    dst: proto::xla::buffer_assignment::BufferAllocationSliceProto,
    n: i64,
) -> ThunkProto {
    let mut t = copy(id, src, dst, n);
    if let Some(Impl::CopyThunk(c)) = &mut t.r#impl {
        c.source_buffer_xyz = c.source_buffer.take();
        c.destination_buffer_xyz = c.destination_buffer.take();
    }
    t
}

#[test]
fn copy_slices_at_the_project_numbers_load() {
    let mut p = vadd();
    p.thunks = vec![copy_xyz(1, sl(0, 0, 8), sl(2, 0, 16), 8)];
    assert_loads(&p, &RuntimeFlags::default());
}

#[test]
fn copy_slices_in_both_pairs() {
    let mut p = vadd();
    let mut t = copy_xyz(1, sl(0, 0, 8), sl(2, 0, 16), 8);
    if let Some(Impl::CopyThunk(c)) = &mut t.r#impl {
        c.source_buffer = Some(sl(0, 0, 8));
    }
    p.thunks = vec![t];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].copy_thunk sets both source_buffer/destination_buffer (1, 2) and source_buffer_xyz/destination_buffer_xyz (1000, 1001); an artifact sets one pair"
    );
}

#[test]
fn copy_at_the_project_numbers_larger_than_its_slices() {
    let mut p = vadd();
    p.thunks = vec![copy_xyz(1, sl(0, 0, 8), sl(2, 0, 16), 12)];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].copy_thunk.mem_size is 12, larger than source_buffer_xyz.size 8"
    );
}

#[test]
fn copy_at_the_project_numbers_without_its_destination() {
    let mut p = vadd();
    let mut t = copy_xyz(1, sl(0, 0, 8), sl(2, 0, 16), 8);
    if let Some(Impl::CopyThunk(c)) = &mut t.r#impl {
        c.destination_buffer_xyz = None;
    }
    p.thunks = vec![t];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].copy_thunk.destination_buffer_xyz is not set"
    );
}

#[test]
fn memset_size_not_a_multiple_of_four() {
    let mut p = vadd();
    p.thunks = vec![memset(1, sl(2, 0, 6), 0)];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].memset32bit_value_thunk.dest_buffer.size is 6, not a multiple of 4"
    );
}

#[test]
fn memset8_value_larger_than_a_byte() {
    let mut p = vadd();
    p.thunks = vec![memset8(1, sl(2, 0, 6), 256)];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].memset8bit_value_thunk.value is 256, larger than 255"
    );
}

#[test]
fn replica_group_id_out_of_range() {
    let mut p = vadd();
    p.thunks = vec![thunk(
        1,
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: Some(CollectiveConfigProto {
                operand_element_type: vec![proto::xla::PrimitiveType::F32 as i32],
                replica_groups: vec![proto::xla::ReplicaGroup {
                    replica_ids: vec![0, 1],
                }],
                ..Default::default()
            }),
            buffers: vec![CollectiveBufferProto {
                element_count: 4,
                source_buffer: Some(sl(0, 0, 16)),
                destination_buffer: Some(sl(2, 0, 16)),
                ..Default::default()
            }],
            reduction_kind: 1,
        }),
    )];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.collective_config.replica_groups[0].replica_ids[1] is 1, out of range [0, 1) (the module's replica_count)"
    );
}

/// A one-replica all-reduce whose config `edit` adjusts (group mode tests).
fn all_reduce_with(edit: impl FnOnce(&mut CollectiveConfigProto)) -> GpuExecutableProto {
    let mut config = CollectiveConfigProto {
        operand_element_type: vec![proto::xla::PrimitiveType::F32 as i32],
        ..Default::default()
    };
    edit(&mut config);
    let mut p = vadd();
    p.thunks = vec![thunk(
        1,
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: Some(config),
            buffers: vec![CollectiveBufferProto {
                element_count: 4,
                source_buffer: Some(sl(0, 0, 16)),
                destination_buffer: Some(sl(2, 0, 16)),
                ..Default::default()
            }],
            reduction_kind: 1,
        }),
    )];
    p
}

const CROSS_REPLICA: i32 = CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplica as i32;
const CROSS_PARTITION: i32 = CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossPartition as i32;

/// The all-reduce's buffer with its slices moved to the stage-1 numbers (1000, 1001).
fn all_reduce_slices_xyz() -> GpuExecutableProto {
    let mut p = all_reduce_with(|_| {});
    if let Some(Impl::AllReduceStartThunk(t)) = p.thunks[0].r#impl.as_mut() {
        let b = &mut t.buffers[0];
        b.source_buffer_xyz = b.source_buffer.take();
        b.destination_buffer_xyz = b.destination_buffer.take();
    }
    p
}

fn all_reduce_buffer(p: &mut GpuExecutableProto) -> &mut CollectiveBufferProto {
    match p.thunks[0].r#impl.as_mut() {
        Some(Impl::AllReduceStartThunk(t)) => &mut t.buffers[0],
        _ => unreachable!(),
    }
}

#[test]
fn collective_slices_at_the_project_numbers_load() {
    assert_loads(&all_reduce_slices_xyz(), &RuntimeFlags::default());
}

#[test]
fn collective_slices_in_both_pairs() {
    let mut p = all_reduce_slices_xyz();
    all_reduce_buffer(&mut p).destination_buffer = Some(sl(2, 0, 16));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.buffers[0] sets both source_buffer/destination_buffer (2, 3) and source_buffer_xyz/destination_buffer_xyz (1000, 1001); an artifact sets one pair"
    );
}

#[test]
fn collective_slices_at_the_project_numbers_without_a_source() {
    let mut p = all_reduce_slices_xyz();
    all_reduce_buffer(&mut p).source_buffer_xyz = None;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.buffers[0].source_buffer_xyz is not set"
    );
}

#[test]
fn collective_slice_at_the_project_numbers_too_small() {
    let mut p = all_reduce_slices_xyz();
    all_reduce_buffer(&mut p).destination_buffer_xyz = Some(sl(2, 0, 12));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.buffers[0].destination_buffer_xyz.size is 12, smaller than the 16 bytes element_count 4 of F32 needs"
    );
}

#[test]
fn op_id_at_the_project_number_loads() {
    for id in [0, 7] {
        let p = all_reduce_with(|c| c.op_id_xyz = Some(id));
        assert_loads(&p, &RuntimeFlags::default());
    }
}

#[test]
fn op_id_in_both_fields() {
    let p = all_reduce_with(|c| {
        c.op_id = 7;
        c.op_id_xyz = Some(7);
    });
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.collective_config sets both op_id (4) and op_id_xyz (1000); an artifact sets one"
    );
}

#[test]
fn group_mode_at_the_project_number_loads() {
    for mode in [0, CROSS_REPLICA] {
        let p = all_reduce_with(|c| c.group_mode_xyz = Some(mode));
        assert_loads(&p, &RuntimeFlags::default());
    }
}

#[test]
fn group_mode_in_both_fields() {
    let p = all_reduce_with(|c| {
        c.group_mode = CROSS_REPLICA;
        c.group_mode_xyz = Some(CROSS_REPLICA);
    });
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.collective_config sets both group_mode (3) and group_mode_xyz (1001); an artifact sets one"
    );
}

#[test]
fn group_mode_unknown() {
    let p = all_reduce_with(|c| c.group_mode = 9);
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.collective_config.group_mode is 9, not a known CollectiveOpGroupModeProto"
    );
}

#[test]
fn group_mode_at_the_project_number_unknown() {
    let p = all_reduce_with(|c| c.group_mode_xyz = Some(9));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.collective_config.group_mode_xyz is 9, not a known CollectiveOpGroupModeProto"
    );
}

#[test]
fn group_mode_cross_partition_loads_in_either_field() {
    // One partition: the group of partition ids is the device itself.
    assert_loads(
        &all_reduce_with(|c| c.group_mode = CROSS_PARTITION),
        &RuntimeFlags::default(),
    );
    assert_loads(
        &all_reduce_with(|c| c.group_mode_xyz = Some(CROSS_PARTITION)),
        &RuntimeFlags::default(),
    );
}

// Every limit is inclusive: an artifact exactly at a bound loads, one past it fails. These pin
// the comparison operators of the checks above (cargo-mutants: `>` vs `>=`, `<` vs `<=`).

#[test]
fn artifact_exactly_at_the_size_limit_loads() {
    let bytes = vadd().encode_to_vec();
    let at = RuntimeFlags {
        max_artifact_bytes: bytes.len(),
        ..RuntimeFlags::default()
    };
    runtime::validate(&bytes, &h100(), &at, &Registry::builtin()).unwrap();
    let under = RuntimeFlags {
        max_artifact_bytes: bytes.len() - 1,
        ..RuntimeFlags::default()
    };
    let e = runtime::validate(&bytes, &h100(), &under, &Registry::builtin()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "RESOURCE_EXHAUSTED: the artifact is {} bytes, over the limit of {} bytes (RuntimeFlags::max_artifact_bytes)",
            bytes.len(),
            bytes.len() - 1
        )
    );
}

/// A two-replica artifact (an all-reduce of f32[4]).
fn two_replicas() -> GpuExecutableProto {
    crate::common::collective_artifact(
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: crate::common::config(vec![]),
            buffers: crate::common::cbuf(4, 4),
            reduction_kind: ReductionKindProto::ReductionKindSum as i32,
        }),
        4,
    )
}

#[test]
fn replica_count_exactly_at_the_limit_loads() {
    let at = RuntimeFlags {
        max_replicas: 2,
        ..RuntimeFlags::default()
    };
    assert_loads(&two_replicas(), &at);
    let under = RuntimeFlags {
        max_replicas: 1,
        ..RuntimeFlags::default()
    };
    assert_eq!(
        load_err_with(&two_replicas(), &h100(), &under),
        "RESOURCE_EXHAUSTED: hlo_module_with_config.config.replica_count is 2, over the limit of 1 replicas (RuntimeFlags::max_replicas, aot run --max-replicas)"
    );
}

pub(crate) fn assert_loads(p: &GpuExecutableProto, f: &RuntimeFlags) {
    runtime::validate(&p.encode_to_vec(), &h100(), f, &Registry::builtin()).unwrap();
}

#[test]
fn partition_count_exactly_at_the_limit_loads() {
    let mut p = vadd();
    let hlo = ADD_HLO.replace("HloModule add", "HloModule add, num_partitions=2");
    p.hlo_module_with_config = artifact(&hlo, &[], "s32[]").hlo_module_with_config;
    let at = RuntimeFlags {
        max_partitions: 2,
        ..RuntimeFlags::default()
    };
    assert_loads(&p, &at);
    let under = RuntimeFlags {
        max_partitions: 1,
        ..RuntimeFlags::default()
    };
    assert_eq!(
        load_err_with(&p, &h100(), &under),
        "RESOURCE_EXHAUSTED: hlo_module_with_config.config.num_partitions is 2, over the limit of 1 partitions (RuntimeFlags::max_partitions, aot run --max-partitions)"
    );
    // One partition, spelled out, is the default.
    let hlo = ADD_HLO.replace("HloModule add", "HloModule add, num_partitions=1");
    p.hlo_module_with_config = artifact(&hlo, &[], "s32[]").hlo_module_with_config;
    assert_loads(&p, &under);
}

#[test]
fn allocations_exactly_filling_device_memory_load() {
    // vadd's three allocations are 48 bytes.
    let mut d = h100();
    d.device_memory_size = 48;
    runtime::validate(
        &vadd().encode_to_vec(),
        &d,
        &RuntimeFlags::default(),
        &Registry::builtin(),
    )
    .unwrap();
    d.device_memory_size = 47;
    assert_eq!(
        load_err_with(&vadd(), &d, &RuntimeFlags::default()),
        "RESOURCE_EXHAUSTED: buffer_allocations need 48 bytes in total, over the device's device_memory_size of 47 bytes"
    );
}

#[test]
fn parameter_number_out_of_range_is_invalid_argument() {
    let mut p = vadd();
    allocs(&mut p)[1].parameter_number = 2;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: buffer_allocations.values[1].parameter_number is 2, out of range [0, 2) (program_shape.parameters)"
    );
}

fn constant(size: i64, allocation_index: i64) -> gpu_executable_proto::ConstantInfoProto {
    gpu_executable_proto::ConstantInfoProto {
        symbol_name: "k".into(),
        offset_in_binary: 0,
        size,
        allocation_index,
    }
}

#[test]
fn constant_allocation_out_of_range_is_invalid_argument() {
    let mut p = vadd();
    p.binary = vec![0; 16];
    p.constants = vec![constant(16, 3)];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: constants[0].allocation_index is 3, out of range [0, 3)"
    );
}

#[test]
fn constant_larger_than_its_allocation_is_invalid_argument() {
    let mut p = vadd();
    p.binary = vec![0; 20];
    p.constants = vec![constant(20, 2)];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: constants[0].size is 20, larger than buffer_allocations[2].size 16"
    );
    // Exactly the binary's length and the allocation's size.
    p.binary = vec![0; 16];
    p.constants = vec![constant(16, 2)];
    assert_loads(&p, &RuntimeFlags::default());
}

#[test]
fn output_leaf_larger_than_its_allocation_is_invalid_argument() {
    let mut p = vadd();
    allocs(&mut p)[2].size = 12;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: output_info_map[0]: the leaf [] is 16 bytes, larger than buffer_allocations[2].size 12"
    );
}

// Step 6 again: the decoder's bounds, at and past each limit (cargo-mutants survivors of
// runtime/src/thunks/decode/).

fn nested_in_sequentials(levels: i64) -> GpuExecutableProto {
    let mut p = vadd();
    let mut t = p.thunks[0].clone();
    for i in 0..levels {
        t = thunk(
            100 + i,
            Impl::SequentialThunk(SequentialThunkProto { thunks: vec![t] }),
        );
    }
    p.thunks = vec![t];
    p
}

#[test]
fn nesting_exactly_at_the_limit_loads() {
    let flags = RuntimeFlags {
        max_thunk_depth: 4,
        ..RuntimeFlags::default()
    };
    runtime::validate(
        &nested_in_sequentials(3).encode_to_vec(),
        &h100(),
        &flags,
        &Registry::builtin(),
    )
    .unwrap();
}

/// Branches, loop conditions and loop bodies are one level deeper than their thunk.
#[test]
fn nesting_counts_branches_and_loop_sequences() {
    let flags = RuntimeFlags {
        max_thunk_depth: 1,
        ..RuntimeFlags::default()
    };
    let deep = || {
        thunk(
            20,
            Impl::SequentialThunk(SequentialThunkProto {
                thunks: vec![memset(21, sl(2, 0, 4), 0)],
            }),
        )
    };
    let mut cond = vadd();
    cond.thunks = vec![thunk(
        1,
        Impl::ConditionalThunk(ConditionalThunkProto {
            branch_index_buffer: Some(shaped(0, 0, 4)),
            branch_thunks: vec![ThunkSequenceProto {
                thunks: vec![deep()],
            }],
            branch_index_is_bool: false,
        }),
    )];
    assert_eq!(
        load_err_with(&cond, &h100(), &flags),
        "INVALID_ARGUMENT: thunks[0].conditional_thunk.branch_thunks[0].thunks[0]: thunk nesting depth 2 exceeds the limit of 1 (RuntimeFlags::max_thunk_depth)"
    );
    let while_with = |in_condition: bool| {
        let mut p = vadd();
        let (c, b) = if in_condition {
            (vec![deep()], vec![])
        } else {
            (vec![], vec![deep()])
        };
        p.thunks = vec![thunk(
            1,
            Impl::WhileThunk(WhileThunkProto {
                condition_result_buffer_index: Some(sl(2, 0, 1)),
                condition_thunk_sequence: Some(ThunkSequenceProto { thunks: c }),
                body_thunk_sequence: Some(ThunkSequenceProto { thunks: b }),
                trip_count: None,
            }),
        )];
        p
    };
    assert_eq!(
        load_err_with(&while_with(true), &h100(), &flags),
        "INVALID_ARGUMENT: thunks[0].while_thunk.condition_thunk_sequence.thunks[0]: thunk nesting depth 2 exceeds the limit of 1 (RuntimeFlags::max_thunk_depth)"
    );
    assert_eq!(
        load_err_with(&while_with(false), &h100(), &flags),
        "INVALID_ARGUMENT: thunks[0].while_thunk.body_thunk_sequence.thunks[0]: thunk nesting depth 2 exceeds the limit of 1 (RuntimeFlags::max_thunk_depth)"
    );
}

#[test]
fn negative_stream_id() {
    let mut p = vadd();
    p.thunks[0].thunk_info.as_mut().unwrap().execution_stream_id = -1;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].thunk_info.execution_stream_id is -1, out of range [0, 4) (RuntimeFlags::num_streams)"
    );
}

/// Id 0 means "no id": any number of thunks may have it.
#[test]
fn thunk_id_zero_may_repeat() {
    let mut p = vadd();
    p.thunks = vec![memset(0, sl(2, 0, 4), 1), memset(0, sl(2, 4, 4), 2)];
    assert_loads(&p, &RuntimeFlags::default());
}

/// The overlap check looks at the bytes copied (mem_size), not the whole slices.
#[test]
fn copy_within_one_allocation_overlaps_only_by_its_size() {
    let mut p = vadd();
    p.thunks = vec![copy(1, sl(2, 0, 12), sl(2, 4, 8), 8)];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].copy_thunk: source_buffer and destination_buffer overlap in allocation 2"
    );
    p.thunks = vec![
        memset(1, sl(2, 0, 4), 7),
        copy(2, sl(2, 0, 12), sl(2, 8, 8), 4),
    ];
    let r = run(&p, &RuntimeFlags::default(), &[&[0; 16], &[0; 16]]);
    assert_eq!(to_u32s(&r.outputs[0]), vec![7, 0, 7, 0]);
}

fn conditional_with(size: i64, is_bool: bool, branches: usize) -> GpuExecutableProto {
    let mut p = vadd();
    p.thunks = vec![thunk(
        1,
        Impl::ConditionalThunk(ConditionalThunkProto {
            branch_index_buffer: Some(shaped(0, 0, size)),
            branch_thunks: vec![ThunkSequenceProto::default(); branches],
            branch_index_is_bool: is_bool,
        }),
    )];
    p
}

#[test]
fn conditional_selector_smaller_than_its_type() {
    assert_eq!(
        load_err(&conditional_with(3, false, 2)),
        "INVALID_ARGUMENT: thunks[0].conditional_thunk.branch_index_buffer.slice.size is 3, smaller than the 4 bytes of the s32 selector"
    );
    assert_eq!(
        load_err(&conditional_with(0, true, 2)),
        "INVALID_ARGUMENT: thunks[0].conditional_thunk.branch_index_buffer.slice.size is 0, smaller than the 1 bytes of the pred selector"
    );
}

#[test]
fn pred_conditional_needs_exactly_two_branches() {
    assert_eq!(
        load_err(&conditional_with(1, true, 3)),
        "INVALID_ARGUMENT: thunks[0].conditional_thunk.branch_thunks has 3 branches; a pred selector needs exactly 2"
    );
    // An index selector takes any number.
    assert_loads(&conditional_with(4, false, 3), &RuntimeFlags::default());
}

#[test]
fn while_condition_result_of_zero_bytes() {
    let mut p = vadd();
    p.thunks = vec![thunk(
        1,
        Impl::WhileThunk(WhileThunkProto {
            condition_result_buffer_index: Some(sl(2, 0, 0)),
            ..Default::default()
        }),
    )];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].while_thunk.condition_result_buffer_index.size is 0, smaller than the 1 byte of a pred"
    );
}

#[test]
fn replica_id_destination_smaller_than_a_u32() {
    let mut p = vadd();
    p.thunks = vec![thunk(
        1,
        Impl::ReplicaIdThunk(ReplicaIdThunkProto {
            dest_buffer: Some(sl(2, 0, 3)),
        }),
    )];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].replica_id_thunk.dest_buffer.size is 3, smaller than the 4 bytes of a u32 id"
    );
}

/// Launch dimensions and shared memory exactly at the device's limits load.
#[test]
fn launch_exactly_at_the_device_limits_loads() {
    let mut p = vadd();
    let k = kernel_mut(&mut p);
    k.launch_dimensions = Some(LaunchDimensionsProto {
        block_counts: Some(dim(2147483647, 65535, 65535)),
        thread_counts_per_block: Some(dim(16, 1, 64)),
        ..Default::default()
    });
    k.shmem_bytes = 232448;
    assert_loads(&p, &RuntimeFlags::default());
    let k = kernel_mut(&mut p);
    k.launch_dimensions = Some(LaunchDimensionsProto {
        block_counts: Some(dim(1, 1, 1)),
        thread_counts_per_block: Some(dim(1024, 1, 1)),
        ..Default::default()
    });
    assert_loads(&p, &RuntimeFlags::default());
}

#[test]
fn written_must_be_parallel_to_args() {
    let mut p = vadd();
    kernel_mut(&mut p).written.pop();
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.written has 2 entries, args has 3; they must be parallel"
    );
    // Empty means "unknown".
    kernel_mut(&mut p).written.clear();
    assert_loads(&p, &RuntimeFlags::default());
}

/// A cubin is checked against major * 10 + minor: sm_86 on an 8.6 device loads (a minor of 0
/// would hide an arithmetic slip).
#[test]
fn cubin_for_the_device_with_a_nonzero_minor_loads() {
    let mut p = vadd();
    if let Some(gpu_compute_capability_proto::ComputeCapability::CudaComputeCapability(c)) = p
        .gpu_compute_capability
        .as_mut()
        .and_then(|c| c.compute_capability.as_mut())
    {
        c.major = 8;
        c.minor = 6;
        c.feature_extension = 1;
    }
    // The PTX is for the artifact's capability too (sm_90a PTX in an 8.6 artifact is refused).
    let bin = kernel_mut(&mut p).kernel_binary.as_mut().unwrap();
    bin.ptx = bin.ptx.replace(".target sm_90a", ".target sm_86");
    bin.cubin = cubin_header(86);
    let mut d = h100();
    d.compute_capability = (8, 6);
    runtime::validate(
        &p.encode_to_vec(),
        &d,
        &RuntimeFlags::default(),
        &Registry::builtin(),
    )
    .unwrap();
}
