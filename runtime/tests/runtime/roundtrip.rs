//! Every thunk kind converts from its proto and back unchanged.
use proto::stream_executor as se;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use runtime::thunks::{decode_sequence, encode_sequence, DecodeContext};
use runtime::{Registry, RuntimeFlags};

use crate::common::*;

fn roundtrip(thunks: Vec<ThunkProto>, replicas: u64) {
    let d = h100();
    let f = RuntimeFlags::default();
    let r = Registry::builtin();
    let sizes = [64u64, 64, 64, 64];
    let mut ctx = DecodeContext::new(&sizes, &d, &f, &r, replicas);
    ctx.allow_unimplemented = true;
    let mut consumed = thunks.clone();
    let decoded = decode_sequence(&mut ctx, &mut consumed, "thunks").unwrap();
    assert_eq!(encode_sequence(&decoded), thunks);
}

fn seq(thunks: Vec<ThunkProto>) -> Option<ThunkSequenceProto> {
    Some(ThunkSequenceProto { thunks })
}

fn cfg(groups: Vec<Vec<i64>>) -> Option<CollectiveConfigProto> {
    Some(CollectiveConfigProto {
        operand_element_type: vec![proto::xla::PrimitiveType::F32 as i32],
        replica_groups: groups
            .into_iter()
            .map(|g| proto::xla::ReplicaGroup { replica_ids: g })
            .collect(),
        group_mode: 1,
        op_id: 7,
        use_symmetric_buffer: true,
        group_mode_xyz: None,
        op_id_xyz: None,
    })
}

fn bufs() -> Vec<CollectiveBufferProto> {
    vec![CollectiveBufferProto {
        element_count: 4,
        source_buffer: Some(sl(0, 0, 16)),
        destination_buffer: Some(sl(1, 0, 32)),
        source_memory_space: 0,
        destination_memory_space: 1,
        ..Default::default()
    }]
}

#[test]
fn sequential() {
    roundtrip(
        vec![thunk(
            1,
            Impl::SequentialThunk(SequentialThunkProto {
                thunks: vec![memset(2, sl(0, 0, 8), 3)],
            }),
        )],
        1,
    );
}

#[test]
fn copy_memset_memzero() {
    roundtrip(
        vec![
            copy(1, sl(0, 0, 16), sl(1, 16, 16), 12),
            memset(2, sl(2, 4, 8), 0xdead_beef),
            memset8(4, sl(2, 1, 3), 0xab),
            thunk(
                3,
                Impl::MemzeroThunk(MemzeroThunkProto {
                    dest_buffer: Some(shaped(3, 1, 3)),
                }),
            ),
        ],
        1,
    );
}

#[test]
fn conditional_and_while() {
    roundtrip(
        vec![
            thunk(
                1,
                Impl::ConditionalThunk(ConditionalThunkProto {
                    branch_index_buffer: Some(shaped(0, 0, 4)),
                    branch_thunks: vec![
                        ThunkSequenceProto {
                            thunks: vec![memset(2, sl(1, 0, 4), 1)],
                        },
                        ThunkSequenceProto { thunks: vec![] },
                        ThunkSequenceProto {
                            thunks: vec![memset(3, sl(1, 0, 4), 2)],
                        },
                    ],
                    branch_index_is_bool: false,
                }),
            ),
            thunk(
                4,
                Impl::WhileThunk(WhileThunkProto {
                    condition_result_buffer_index: Some(sl(2, 3, 1)),
                    condition_thunk_sequence: seq(vec![crate::common::kernel(
                        5,
                        "lt10",
                        vec![sl(0, 0, 4), sl(2, 3, 1)],
                        1,
                    )]),
                    body_thunk_sequence: seq(vec![crate::common::kernel(
                        6,
                        "inc",
                        vec![sl(0, 0, 4)],
                        1,
                    )]),
                    trip_count: Some(10),
                }),
            ),
        ],
        1,
    );
}

#[test]
fn kernel() {
    let mut k = crate::common::kernel(1, "vadd", vec![sl(0, 0, 16), sl(1, 0, 16), sl(2, 0, 16)], 4);
    if let Some(Impl::KernelThunk(k)) = k.r#impl.as_mut() {
        k.written = vec![false, false, true];
        k.shmem_bytes = 1024;
        k.kernel_binary.as_mut().unwrap().cubin = crate::common::cubin_header(90);
        k.args_shape =
            vec![hlo::shape_to_proto(&hlo_text::parse_shape("f32[4]").unwrap()).unwrap()];
    }
    roundtrip(vec![k], 1);
}

#[test]
fn gemm() {
    let mut p = crate::common::gemm_artifact(true);
    if let Some(Impl::GemmThunk(g)) = p.thunks[0].r#impl.as_mut() {
        g.workspace = Some(sl(3, 0, 64));
        let c = g.gemm_config.as_mut().unwrap();
        c.beta = 0.5;
        c.alpha_real = 2.0;
        c.operand_precisions = vec![0, 1];
    }
    roundtrip(p.thunks, 1);
}

#[test]
fn replica_and_partition_id() {
    roundtrip(
        vec![
            thunk(
                1,
                Impl::ReplicaIdThunk(ReplicaIdThunkProto {
                    dest_buffer: Some(sl(0, 4, 4)),
                }),
            ),
            thunk(
                2,
                Impl::PartitionIdThunk(PartitionIdThunkProto {
                    dest_buffer: Some(sl(1, 0, 4)),
                }),
            ),
        ],
        1,
    );
}

#[test]
fn custom_call() {
    let mut attributes = std::collections::BTreeMap::new();
    attributes.insert("alpha".to_string(), "2.5".to_string());
    roundtrip(
        vec![thunk(
            1,
            Impl::CustomCallThunk(CustomCallThunkProto {
                target_name: "__xla_saxpy".into(),
                operands: vec![
                    NullableShapedSliceProto {
                        shaped_slice: Some(shaped(0, 0, 16)),
                    },
                    NullableShapedSliceProto { shaped_slice: None },
                ],
                results: vec![NullableShapedSliceProto {
                    shaped_slice: Some(shaped(1, 0, 16)),
                }],
                opaque: vec![9, 8, 7],
                api_version: 4,
                attributes,
                called_computation: Some("callee".into()),
                attributes_xyz: Default::default(),
            }),
        )],
        1,
    );
}

#[test]
fn custom_kernel() {
    roundtrip(
        vec![thunk(
            1,
            Impl::CustomKernelThunk(CustomKernelThunkProto {
                args: vec![shaped(0, 0, 8)],
                written: vec![true],
                // XLA's layout: block and thread dims wrap the coordinates, the code is a cubin.
                custom_kernel: Some(CustomKernelProto {
                    name: "lib_kernel".into(),
                    kernel_spec: Some(se::KernelLoaderSpecProto {
                        payload: Some(se::kernel_loader_spec_proto::Payload::Cubin(
                            se::CudaCubinProto {
                                data: b"\x7fELF-not-checked-on-decode".to_vec(),
                            },
                        )),
                        arity: 0,
                        kernel_name: "lib_kernel".into(),
                    }),
                    block_dims: Some(se::BlockDimProto {
                        coordinates: Some(se::Dim3DProto { x: 2, y: 1, z: 1 }),
                    }),
                    thread_dims: Some(se::ThreadDimProto {
                        coordinates: Some(se::Dim3DProto { x: 32, y: 2, z: 1 }),
                    }),
                    cluster_dim: None,
                    shared_memory_bytes: 256,
                }),
            }),
        )],
        1,
    );
}

#[test]
fn collectives() {
    roundtrip(
        vec![
            thunk(
                1,
                Impl::AllGatherStartThunk(AllGatherStartThunkProto {
                    collective_config: cfg(vec![vec![1, 0]]),
                    buffers: bufs(),
                }),
            ),
            thunk(
                2,
                Impl::AllReduceStartThunk(AllReduceStartThunkProto {
                    collective_config: cfg(vec![]),
                    buffers: bufs(),
                    reduction_kind: 3,
                }),
            ),
            thunk(
                3,
                Impl::ReduceScatterThunk(ReduceScatterThunkProto {
                    collective_config: cfg(vec![vec![0, 1]]),
                    buffers: bufs(),
                    reduction_kind: 1,
                }),
            ),
            thunk(
                4,
                Impl::AllToAllStartThunk(AllToAllStartThunkProto {
                    collective_config: cfg(vec![]),
                    buffers: bufs(),
                    has_split_dimension: true,
                }),
            ),
            thunk(
                5,
                Impl::CollectivePermuteStartThunk(CollectivePermuteStartThunkProto {
                    buffers: bufs(),
                    collective_config: cfg(vec![]),
                    source_target_pairs: vec![
                        proto::xla::SourceTarget {
                            source: 0,
                            target: 1,
                        },
                        proto::xla::SourceTarget {
                            source: 1,
                            target: 0,
                        },
                    ],
                }),
            ),
        ],
        2,
    );
}
