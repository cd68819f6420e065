//! XLA:GPU's forms of the constructs its executables carry (issue 28), on hand-built artifacts:
//! a cubin-only custom kernel launched from supplied PTX, the device-to-device copy thunk, the
//! conditional whose pred selector is known by its shape, and the result tuple's index table in
//! `output_info_map`; each check by its exact message.
use proto::stream_executor as se;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use proto::xla::ShapeProto;
use runtime::{KernelPtx, Registry, RuntimeFlags};

use crate::common::*;
use crate::load_errors::assert_loads;

/// vadd as XLA writes it: a custom kernel carrying a cubin, arguments as shaped slices.
fn xla_vadd(cluster: Option<(i64, i64, i64)>) -> GpuExecutableProto {
    let mut p = vadd();
    p.thunks = vec![thunk(
        1,
        Impl::CustomKernelThunk(CustomKernelThunkProto {
            args: vec![shaped(0, 0, 16), shaped(1, 0, 16), shaped(2, 0, 16)],
            written: vec![false, false, true],
            custom_kernel: Some(CustomKernelProto {
                name: "vadd_fusion".into(),
                kernel_spec: Some(se::KernelLoaderSpecProto {
                    payload: Some(se::kernel_loader_spec_proto::Payload::Cubin(
                        se::CudaCubinProto {
                            data: cubin_header(90),
                        },
                    )),
                    arity: 3,
                    kernel_name: "vadd".into(),
                }),
                block_dims: Some(se::BlockDimProto {
                    coordinates: Some(se::Dim3DProto { x: 1, y: 1, z: 1 }),
                }),
                thread_dims: Some(se::ThreadDimProto {
                    coordinates: Some(se::Dim3DProto { x: 4, y: 1, z: 1 }),
                }),
                cluster_dim: cluster.map(|(x, y, z)| se::ClusterDimProto {
                    coordinates: Some(se::Dim3DProto { x, y, z }),
                }),
                shared_memory_bytes: 0,
            }),
        }),
    )];
    p
}

fn load_with_ptx(
    p: &GpuExecutableProto,
) -> runtime::Result<(runtime::Executable, runtime::EmulatedDevice)> {
    use proto::prost::Message;
    let d = device();
    let k = KernelPtx::new([("vadd.ptx".to_owned(), PTX.to_owned())])?;
    let exe = runtime::load_with_kernel_ptx(
        &p.encode_to_vec(),
        &d,
        &RuntimeFlags::default(),
        &Registry::builtin(),
        &k,
    )?;
    Ok((exe, d))
}

#[test]
fn a_cubin_only_custom_kernel_runs_from_supplied_ptx() {
    // The thunk's kernel_spec.kernel_name (the symbol) names the entry, not custom_kernel.name.
    let (exe, d) = load_with_ptx(&xla_vadd(None)).unwrap();
    let r = exe
        .execute(
            &d,
            &[
                &f32s(&[1.0, 2.0, 3.0, 4.0]),
                &f32s(&[10.0, 20.0, 30.0, 40.0]),
            ],
        )
        .unwrap();
    assert_eq!(to_f32s(&r.outputs[0]), vec![11.0, 22.0, 33.0, 44.0]);
    assert_eq!(r.stats.kernel_launches, 1);
}

#[test]
fn a_thread_block_cluster_is_refused() {
    let err = load_with_ptx(&xla_vadd(Some((2, 1, 1)))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "UNIMPLEMENTED: thunks[0].custom_kernel_thunk.custom_kernel.cluster_dim is 2x1x1; the emulated device launches no thread-block clusters"
    );
    // A 1x1x1 cluster is a plain launch.
    assert!(load_with_ptx(&xla_vadd(Some((1, 1, 1)))).is_ok());
}

fn d2d(id: i64, copy: Option<ShapedCopyThunkProto>) -> ThunkProto {
    thunk(
        id,
        Impl::DeviceToDeviceCopyThunk(DeviceToDeviceCopyThunkProto { copy_thunk: copy }),
    )
}

fn shaped_copy(src: ShapedSliceProto, dst: ShapedSliceProto, size: i64) -> ShapedCopyThunkProto {
    ShapedCopyThunkProto {
        source_buffer: Some(src),
        destination_buffer: Some(dst),
        mem_size: size,
    }
}

#[test]
fn device_to_device_copies_run_and_are_checked() {
    let mut p = vadd();
    // out = [b[2], b[3], a[0], a[1]].
    p.thunks = vec![
        d2d(1, Some(shaped_copy(shaped(1, 8, 8), shaped(2, 0, 8), 8))),
        d2d(2, Some(shaped_copy(shaped(0, 0, 8), shaped(2, 8, 8), 8))),
    ];
    let r = run(
        &p,
        &RuntimeFlags::default(),
        &[&f32s(&[1.0, 2.0, 3.0, 4.0]), &f32s(&[5.0, 6.0, 7.0, 8.0])],
    );
    assert_eq!(to_f32s(&r.outputs[0]), vec![7.0, 8.0, 1.0, 2.0]);
    p.thunks = vec![d2d(1, None)];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].device_to_device_copy_thunk.copy_thunk is not set"
    );
    p.thunks = vec![d2d(
        1,
        Some(shaped_copy(shaped(0, 0, 16), shaped(2, 0, 8), 16)),
    )];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].device_to_device_copy_thunk.copy_thunk.mem_size is 16, larger than destination_buffer.size 8"
    );
    p.thunks = vec![d2d(
        1,
        Some(shaped_copy(shaped(2, 0, 8), shaped(2, 4, 8), 8)),
    )];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].device_to_device_copy_thunk.copy_thunk: source_buffer and destination_buffer overlap in allocation 2"
    );
}

/// A conditional with XLA's encoding: no `branch_index_is_bool`, the selector's shape says.
fn conditional(
    ty: proto::xla::PrimitiveType,
    is_bool: bool,
    branches: usize,
) -> GpuExecutableProto {
    let mut p = vadd();
    let mut selector = shaped(0, 0, 4);
    selector.shape = Some(ShapeProto {
        element_type: ty as i32,
        ..Default::default()
    });
    p.thunks = vec![thunk(
        1,
        Impl::ConditionalThunk(ConditionalThunkProto {
            branch_index_buffer: Some(selector),
            branch_thunks: vec![ThunkSequenceProto::default(); branches],
            branch_index_is_bool: is_bool,
        }),
    )];
    p
}

#[test]
fn a_pred_shaped_selector_is_a_pred() {
    use proto::xla::PrimitiveType;
    // Read as a pred (XLA's encoding): a pred selector needs exactly two branches.
    assert_eq!(
        load_err(&conditional(PrimitiveType::Pred, false, 3)),
        "INVALID_ARGUMENT: thunks[0].conditional_thunk.branch_thunks has 3 branches; a pred selector needs exactly 2"
    );
    assert_loads(
        &conditional(PrimitiveType::Pred, false, 2),
        &RuntimeFlags::default(),
    );
    assert_loads(
        &conditional(PrimitiveType::S32, false, 3),
        &RuntimeFlags::default(),
    );
    assert_eq!(
        load_err(&conditional(PrimitiveType::S32, true, 2)),
        "INVALID_ARGUMENT: thunks[0].conditional_thunk.branch_index_is_bool is true, but branch_index_buffer.shape.element_type is S32; a selector is a pred or an s32, not both"
    );
}

const PAIR_HLO: &str = "HloModule pair\n\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  c = f32[4] add(a, b)\n  ROOT t = (f32[4], f32[4]) tuple(c, a)\n}\n";

/// (a + b, a) with the result tuple's index table in allocation 3, as XLA:GPU maps it.
fn pair() -> GpuExecutableProto {
    let mut p = artifact(PAIR_HLO, &["f32[4]", "f32[4]"], "(f32[4], f32[4])");
    *allocs(&mut p) = vec![
        alloc(0, 16, Some(0), true),
        alloc(1, 16, Some(1), false),
        alloc(2, 16, None, true),
        alloc(3, 16, None, true),
    ];
    p.output_info_map = vec![out(vec![], 3), out(vec![0], 2), out(vec![1], 0)];
    p.thunks = vec![kernel(
        1,
        "vadd",
        vec![sl(0, 0, 16), sl(1, 0, 16), sl(2, 0, 16)],
        4,
    )];
    p
}

#[test]
fn the_result_tuple_has_an_index_table_entry() {
    let r = run(
        &pair(),
        &RuntimeFlags::default(),
        &[
            &f32s(&[1.0, 2.0, 3.0, 4.0]),
            &f32s(&[10.0, 20.0, 30.0, 40.0]),
        ],
    );
    assert_eq!(r.outputs.len(), 2);
    assert_eq!(to_f32s(&r.outputs[0]), vec![11.0, 22.0, 33.0, 44.0]);
    assert_eq!(to_f32s(&r.outputs[1]), vec![1.0, 2.0, 3.0, 4.0]);
    let mut small = pair();
    allocs(&mut small)[3].size = 8;
    assert_eq!(
        load_err(&small),
        "INVALID_ARGUMENT: output_info_map[0]: the index table of tuple [] is 16 bytes (2 elements), larger than buffer_allocations[3].size 8"
    );
}

#[test]
fn a_tuple_table_needs_an_entry_for_each_element() {
    let hlo = "HloModule nest\n\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  c = f32[4] add(a, b)\n  i = (f32[4]) tuple(c)\n  ROOT t = ((f32[4]), f32[4]) tuple(i, a)\n}\n";
    let mut p = artifact(hlo, &["f32[4]", "f32[4]"], "((f32[4]), f32[4])");
    *allocs(&mut p) = pair().buffer_allocations.unwrap().values;
    // The inner tuple [0] has no entry of its own.
    p.output_info_map = vec![out(vec![], 3), out(vec![0, 0], 2), out(vec![1], 0)];
    p.thunks = pair().thunks;
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: output_info_map gives tuple [] an allocation but not its element [0], whose address its index table holds"
    );
}
