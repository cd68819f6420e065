//! Hand-built artifacts (no compiler): small HLO modules for the embedded module, hand-written
//! PTX kernels, and thunk builders.
#![allow(dead_code)]
use std::path::PathBuf;
use std::sync::Arc;

use proto::prost::Message;
use proto::stream_executor::{
    executable_abi_version_proto, gpu_compute_capability_proto, CudaComputeCapabilityProto,
    ExecutableAbiVersionProto, GpuComputeCapabilityProto,
};
use proto::xla::buffer_assignment::BufferAllocationSliceProto;
use proto::xla::gpu::gpu_executable_proto::{
    OutputInfoMapEntry, OutputInfoProto, RepeatedBufferAllocations,
};
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use proto::xla::{BufferAllocationProto, ProgramShapeProto, ShapeIndexProto};
use runtime::{Device, DeviceDescription, EmulatedDevice, Registry, RuntimeFlags};

pub fn spec(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/target_specs")
        .join(format!("{name}.txtpb"))
}

pub fn desc(name: &str) -> DeviceDescription {
    let c = proto::load_target_config(&spec(name)).unwrap();
    DeviceDescription::from_target_config(&c).unwrap()
}

pub fn h100() -> DeviceDescription {
    desc("h100_sxm")
}

pub fn device() -> EmulatedDevice {
    EmulatedDevice::new(h100())
}

/// Validates (steps 1-7) against the H100 description; the error's full text.
pub fn load_err(p: &GpuExecutableProto) -> String {
    load_err_with(p, &h100(), &RuntimeFlags::default())
}

pub fn load_err_with(p: &GpuExecutableProto, d: &DeviceDescription, f: &RuntimeFlags) -> String {
    match runtime::validate(&p.encode_to_vec(), d, f, &Registry::builtin()) {
        Ok(_) => panic!("the artifact loaded"),
        Err(e) => e.to_string(),
    }
}

pub const PTX: &str = r#"
.version 8.0
.target sm_90a
.address_size 64

.visible .entry vadd(.param .u64 a, .param .u64 b, .param .u64 c)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  ld.param.u64 %rd3, [c];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd1, %rd4;
  add.s64 %rd6, %rd2, %rd4;
  add.s64 %rd7, %rd3, %rd4;
  ld.global.f32 %f1, [%rd5];
  ld.global.f32 %f2, [%rd6];
  add.f32 %f3, %f1, %f2;
  st.global.f32 [%rd7], %f3;
  ret;
}

.visible .entry lt10(.param .u64 c, .param .u64 p)
{
  .reg .pred %q;
  .reg .b32 %r<3>;
  .reg .b16 %h;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [c];
  ld.param.u64 %rd2, [p];
  ld.global.u32 %r1, [%rd1];
  setp.lt.u32 %q, %r1, 10;
  selp.u32 %r2, 1, 0, %q;
  cvt.u16.u32 %h, %r2;
  st.global.u8 [%rd2], %h;
  ret;
}

.visible .entry inc(.param .u64 c)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [c];
  ld.global.u32 %r1, [%rd1];
  add.u32 %r2, %r1, 1;
  st.global.u32 [%rd1], %r2;
  ret;
}

.visible .entry forever(.param .u64 p)
{
  .reg .b16 %h;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  mov.u16 %h, 1;
  st.global.u8 [%rd1], %h;
  ret;
}
"#;

pub fn sl(allocation: i64, offset: i64, size: i64) -> BufferAllocationSliceProto {
    BufferAllocationSliceProto {
        offset,
        size,
        buffer_allocation_index: allocation,
    }
}

pub fn shaped(allocation: i64, offset: i64, size: i64) -> ShapedSliceProto {
    ShapedSliceProto {
        slice: Some(sl(allocation, offset, size)),
        shape: None,
    }
}

pub fn thunk(id: i64, imp: Impl) -> ThunkProto {
    ThunkProto {
        thunk_info: Some(ThunkInfoProto {
            profile_annotation: format!("t{id}"),
            thunk_id: id,
            execution_stream_id: 0,
            concurrent_region_id: None,
        }),
        r#impl: Some(imp),
    }
}

pub fn dim(x: i64, y: i64, z: i64) -> Dim3DProto {
    Dim3DProto { x, y, z }
}

pub fn kernel(
    id: i64,
    name: &str,
    args: Vec<BufferAllocationSliceProto>,
    threads: i64,
) -> ThunkProto {
    let n = args.len();
    thunk(
        id,
        Impl::KernelThunk(KernelThunkProto {
            args,
            written: vec![true; n],
            kernel_name: name.into(),
            launch_dimensions: Some(LaunchDimensionsProto {
                block_counts: Some(dim(1, 1, 1)),
                thread_counts_per_block: Some(dim(threads, 1, 1)),
                ..Default::default()
            }),
            shmem_bytes: 0,
            args_shape: vec![],
            kernel_binary: Some(KernelBinaryProto {
                ptx: PTX.into(),
                cubin: vec![],
            }),
        }),
    )
}

pub fn memset(id: i64, dest: BufferAllocationSliceProto, value: u32) -> ThunkProto {
    thunk(
        id,
        Impl::Memset32bitValueThunk(Memset32BitValueThunkProto {
            dest_buffer: Some(dest),
            value,
        }),
    )
}

pub fn memset8(id: i64, dest: BufferAllocationSliceProto, value: u32) -> ThunkProto {
    thunk(
        id,
        Impl::Memset8bitValueThunk(Memset8BitValueThunkProto {
            dest_buffer: Some(dest),
            value,
        }),
    )
}

pub fn copy(
    id: i64,
    src: BufferAllocationSliceProto,
    dst: BufferAllocationSliceProto,
    n: i64,
) -> ThunkProto {
    thunk(
        id,
        Impl::CopyThunk(CopyThunkProto {
            source_buffer: Some(src),
            destination_buffer: Some(dst),
            mem_size: n,
            ..Default::default()
        }),
    )
}

/// An allocation: `param` = Some(number) for an entry parameter.
pub fn alloc(index: i64, size: i64, param: Option<i64>, live_out: bool) -> BufferAllocationProto {
    BufferAllocationProto {
        index,
        size,
        is_entry_computation_parameter: param.is_some(),
        parameter_number: param.unwrap_or(0),
        maybe_live_out: live_out,
        ..Default::default()
    }
}

pub fn out(index: Vec<i64>, allocation: i64) -> OutputInfoMapEntry {
    OutputInfoMapEntry {
        shape_index: Some(ShapeIndexProto { indices: index }),
        output_info: Some(OutputInfoProto {
            allocation_index: allocation,
            passthrough: false,
            alias_config: None,
        }),
    }
}

pub fn shape(s: &str) -> proto::xla::ShapeProto {
    hlo::shape_to_proto(&hlo_text::parse_shape(s).unwrap()).unwrap()
}

/// An artifact skeleton for the H100: embedded module from `hlo` text, program shape from the
/// given parameter and result shapes, no allocations or thunks yet.
pub fn artifact(hlo_text: &str, params: &[&str], result: &str) -> GpuExecutableProto {
    let m = hlo_text::parse_module(hlo_text).unwrap();
    GpuExecutableProto {
        hlo_module_with_config: Some(hlo::to_proto(&m).unwrap()),
        binary: vec![],
        gpu_compute_capability: Some(GpuComputeCapabilityProto {
            compute_capability: Some(
                gpu_compute_capability_proto::ComputeCapability::CudaComputeCapability(
                    CudaComputeCapabilityProto {
                        major: 9,
                        minor: 0,
                        feature_extension: 2,
                    },
                ),
            ),
        }),
        module_name: m.name.clone(),
        program_shape: Some(ProgramShapeProto {
            parameters: params.iter().map(|p| shape(p)).collect(),
            result: Some(shape(result)),
            parameter_names: vec![],
        }),
        buffer_allocations: Some(RepeatedBufferAllocations { values: vec![] }),
        output_info_map: vec![],
        constants: vec![],
        thunks: vec![],
        executable_abi_version: Some(ExecutableAbiVersionProto {
            platform_name: "CUDA".into(),
            platform_version: Some(
                executable_abi_version_proto::PlatformVersion::CudaPlatformVersion(
                    executable_abi_version_proto::CudaPlatformVersionProto {
                        cuda_toolkit_version: "12.8.0".into(),
                        cudnn_version: "9.10.0".into(),
                        cub_version: "3.1.2".into(),
                    },
                ),
            ),
        }),
    }
}

pub fn allocs(p: &mut GpuExecutableProto) -> &mut Vec<BufferAllocationProto> {
    &mut p
        .buffer_allocations
        .get_or_insert_with(Default::default)
        .values
}

pub const ADD_HLO: &str = "HloModule add\n\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  ROOT c = f32[4] add(a, b)\n}\n";

/// c = a + b on f32[4] with one kernel thunk.
pub fn vadd() -> GpuExecutableProto {
    let mut p = artifact(ADD_HLO, &["f32[4]", "f32[4]"], "f32[4]");
    *allocs(&mut p) = vec![
        alloc(0, 16, Some(0), false),
        alloc(1, 16, Some(1), false),
        alloc(2, 16, None, true),
    ];
    p.output_info_map = vec![out(vec![], 2)];
    p.thunks = vec![kernel(
        1,
        "vadd",
        vec![sl(0, 0, 16), sl(1, 0, 16), sl(2, 0, 16)],
        4,
    )];
    p
}

pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn to_f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn to_u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub const SCALAR_HLO: &str = "HloModule s\n\nENTRY e {\n  ROOT c = s32[] constant(0)\n}\n";

/// Loads and runs on a fresh emulated H100.
pub fn run(
    p: &GpuExecutableProto,
    flags: &RuntimeFlags,
    args: &[&[u8]],
) -> runtime::ExecutionResult {
    let d = device();
    let exe = runtime::load(&p.encode_to_vec(), &d, flags).unwrap();
    exe.execute(&d, args).unwrap()
}

/// The 64-byte ELF header of a cubin for `sm` (as ptxas 12 writes it: EM_CUDA, CUDA ELF ABI 7,
/// SM in e_flags' low byte).
pub fn cubin_header(sm: u32) -> Vec<u8> {
    let mut h = vec![0u8; 64];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = 2;
    h[5] = 1;
    h[8] = 7;
    h[18..20].copy_from_slice(&190u16.to_le_bytes());
    h[48..52].copy_from_slice(&(sm | (sm << 16)).to_le_bytes());
    h
}

/// counter = 0; while (counter < 10) counter += 1.
pub fn while_counter() -> GpuExecutableProto {
    let mut p = artifact(SCALAR_HLO, &[], "s32[]");
    *allocs(&mut p) = vec![alloc(0, 4, None, true), alloc(1, 1, None, false)];
    p.output_info_map = vec![out(vec![], 0)];
    p.thunks = vec![
        memset(1, sl(0, 0, 4), 0),
        thunk(
            2,
            Impl::WhileThunk(WhileThunkProto {
                condition_result_buffer_index: Some(sl(1, 0, 1)),
                condition_thunk_sequence: Some(ThunkSequenceProto {
                    thunks: vec![kernel(3, "lt10", vec![sl(0, 0, 4), sl(1, 0, 1)], 1)],
                }),
                body_thunk_sequence: Some(ThunkSequenceProto {
                    thunks: vec![kernel(4, "inc", vec![sl(0, 0, 4)], 1)],
                }),
                trip_count: Some(10),
            }),
        ),
    ];
    p
}

pub fn layout(rows: i64, cols: i64, transpose: bool, dtype: i32) -> MatrixLayoutProto {
    MatrixLayoutProto {
        order: 0,
        num_rows: rows,
        num_cols: cols,
        batch_size: 1,
        leading_dim_stride: cols,
        batch_stride: rows * cols,
        transpose,
        dtype,
    }
}

pub fn gemm_artifact(rhs_transposed: bool) -> GpuExecutableProto {
    let hlo = "HloModule g\n\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[3,2] parameter(1)\n  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let f32t = proto::xla::PrimitiveType::F32 as i32;
    let mut p = artifact(
        hlo,
        &[
            "f32[2,3]",
            if rhs_transposed {
                "f32[2,3]"
            } else {
                "f32[3,2]"
            },
        ],
        "f32[2,2]",
    );
    *allocs(&mut p) = vec![
        alloc(0, 24, Some(0), false),
        alloc(1, 24, Some(1), false),
        alloc(2, 16, None, true),
    ];
    p.output_info_map = vec![out(vec![], 2)];
    let rhs = if rhs_transposed {
        layout(2, 3, true, f32t)
    } else {
        layout(3, 2, false, f32t)
    };
    p.thunks = vec![thunk(
        1,
        Impl::GemmThunk(GemmThunkProto {
            gemm_config: Some(GemmConfigProto {
                lhs_layout: Some(layout(2, 3, false, f32t)),
                rhs_layout: Some(rhs),
                output_layout: Some(layout(2, 2, false, f32t)),
                alpha_real: 1.0,
                alpha_imag: 0.0,
                beta: 0.0,
                compute_type: f32t,
                operand_precisions: vec![],
            }),
            lhs_buffer: Some(sl(0, 0, 24)),
            rhs_buffer: Some(sl(1, 0, 24)),
            output_buffer: Some(sl(2, 0, 16)),
            workspace: None,
            deterministic: true,
            gemm_config_xyz: None,
        }),
    )];
    p
}

/// The gemm artifact with its config at the stage-1 number (1000) instead of 1.
pub fn gemm_artifact_xyz(rhs_transposed: bool) -> GpuExecutableProto {
    let mut p = gemm_artifact(rhs_transposed);
    if let Some(Impl::GemmThunk(g)) = p.thunks[0].r#impl.as_mut() {
        g.gemm_config_xyz = g.gemm_config.take().as_ref().map(Into::into);
    }
    p
}

pub fn collective_artifact(imp: Impl, dst_elems: i64) -> GpuExecutableProto {
    let hlo = "HloModule ar, replica_count=2\n\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT c = s32[] constant(0)\n}\n";
    let result = format!("(f32[{dst_elems}], u32[])");
    let mut p = artifact(hlo, &["f32[4]"], &result);
    *allocs(&mut p) = vec![
        alloc(0, 16, Some(0), false),
        alloc(1, dst_elems * 4, None, true),
        alloc(2, 4, None, true),
    ];
    p.output_info_map = vec![out(vec![0], 1), out(vec![1], 2)];
    p.thunks = vec![
        thunk(1, imp),
        thunk(
            2,
            Impl::ReplicaIdThunk(ReplicaIdThunkProto {
                dest_buffer: Some(sl(2, 0, 4)),
            }),
        ),
    ];
    p
}

pub fn cbuf(count: i64, dst_elems: i64) -> Vec<CollectiveBufferProto> {
    vec![CollectiveBufferProto {
        element_count: count,
        source_buffer: Some(sl(0, 0, 16)),
        destination_buffer: Some(sl(1, 0, dst_elems * 4)),
        source_memory_space: 0,
        destination_memory_space: 0,
        ..Default::default()
    }]
}

pub fn config(groups: Vec<Vec<i64>>) -> Option<CollectiveConfigProto> {
    Some(CollectiveConfigProto {
        operand_element_type: vec![proto::xla::PrimitiveType::F32 as i32],
        replica_groups: groups
            .into_iter()
            .map(|g| proto::xla::ReplicaGroup { replica_ids: g })
            .collect(),
        group_mode: 1,
        op_id: 1,
        use_symmetric_buffer: false,
        group_mode_xyz: None,
        op_id_xyz: None,
    })
}

/// Runs on two emulated devices, replica r with f32[4] argument `[1, 2, 3, 4] * 10^r`.
pub fn run_two(p: &GpuExecutableProto) -> Vec<(Vec<f32>, Vec<u32>)> {
    let devices: Vec<Arc<dyn Device>> = vec![Arc::new(device()), Arc::new(device())];
    let exe = runtime::load(
        &p.encode_to_vec(),
        devices[0].as_ref(),
        &RuntimeFlags::default(),
    )
    .unwrap();
    let args = vec![
        vec![f32s(&[1., 2., 3., 4.])],
        vec![f32s(&[10., 20., 30., 40.])],
    ];
    exe.execute_replicated(&devices, &args)
        .unwrap()
        .into_iter()
        .map(|r| (to_f32s(&r.outputs[0]), to_u32s(&r.outputs[1])))
        .collect()
}
