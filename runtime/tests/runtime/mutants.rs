//! Semantics that cargo-mutants showed no other runtime test pinned (issue 11, the
//! execute.rs and thunks/ pass; docs/gate_selftest.md lists each mutant a test here kills).
//! Each test checks an exact output or an exact message, at the case where the mutated
//! operator and the real one disagree.

use proto::prost::Message;
use proto::stream_executor as se;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use runtime::thunks::{decode_sequence, DecodeContext};
use runtime::{Registry, RuntimeFlags};

use crate::common::*;

// ---- execute.rs ----

/// The deadline is checked before the first iteration: with a limit of 0 s it has passed by then
/// (the memset before the loop takes time), so a loop that would finish fails at once. Pins the
/// check itself (execute.rs `check_deadline` replaced by `Ok(())`, its guard by `false`, `>` by
/// `==`), which the endless-loop test in hostile.rs only shows as a timeout.
#[test]
fn a_wall_time_limit_of_zero_stops_a_loop_before_its_first_iteration() {
    let flags = RuntimeFlags {
        max_execution_secs: 0,
        ..RuntimeFlags::default()
    };
    let d = device();
    let exe = runtime::load(&while_counter().encode_to_vec(), &d, &flags).unwrap();
    let e = exe.execute(&d, &[]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "RESOURCE_EXHAUSTED: while_thunk 2 (t2): the execution ran longer than the wall-time limit of 0 s (RuntimeFlags::max_execution_secs, aot run --max-execution-secs)"
    );
    // The same loop under the default limit runs to the end.
    let r = run(&while_counter(), &RuntimeFlags::default(), &[]);
    assert_eq!(to_u32s(&r.outputs[0]), vec![10]);
}

/// A custom-kernel thunk built through the public API (`DecodeContext::allow_unimplemented`,
/// `Executable::thunks`) is refused when it runs, naming the thunk, not recorded as a command
/// (execute.rs: delete the `ThunkKind::CustomKernel` arm of `Run::thunk`).
#[test]
fn a_custom_kernel_thunk_is_refused_when_it_runs() {
    let d = device();
    let mut exe = runtime::load(&vadd().encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let sizes: Vec<u64> = exe.allocations.iter().map(|a| a.size).collect();
    let desc = h100();
    let flags = RuntimeFlags::default();
    let registry = Registry::builtin();
    let mut ctx = DecodeContext::new(&sizes, &desc, &flags, &registry, 1);
    ctx.allow_unimplemented = true;
    let mut protos = vec![custom_kernel(7, cubin_header(90))];
    exe.thunks = decode_sequence(&mut ctx, &mut protos, "thunks").unwrap();
    let x = f32s(&[1., 2., 3., 4.]);
    let e = exe.execute(&d, &[&x, &x]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "UNIMPLEMENTED: custom_kernel_thunk 7 (t7): custom kernels are not executed by this runtime"
    );
}

// ---- thunks/mod.rs: KernelCode::describe ----

/// XLA's form of a custom kernel: a cubin, block and thread dims wrapping the coordinates.
fn custom_kernel(id: i64, cubin: Vec<u8>) -> ThunkProto {
    thunk(
        id,
        Impl::CustomKernelThunk(CustomKernelThunkProto {
            args: vec![shaped(0, 0, 16)],
            written: vec![true],
            custom_kernel: Some(CustomKernelProto {
                name: "lib_kernel".into(),
                kernel_spec: Some(se::KernelLoaderSpecProto {
                    payload: Some(se::kernel_loader_spec_proto::Payload::Cubin(
                        se::CudaCubinProto { data: cubin },
                    )),
                    arity: 1,
                    kernel_name: "lib_kernel".into(),
                }),
                block_dims: Some(se::BlockDimProto {
                    coordinates: Some(se::Dim3DProto { x: 1, y: 1, z: 1 }),
                }),
                thread_dims: Some(se::ThreadDimProto {
                    coordinates: Some(se::Dim3DProto { x: 4, y: 1, z: 1 }),
                }),
                cluster_dim: None,
                shared_memory_bytes: 0,
            }),
        }),
    )
}

/// The refusal says which SM the cubin is for and whether it is the architecture-specific (`a`)
/// form, in either CUDA ELF ABI: ptxas 12's (ABI 7: e_flags bit 0x800; sm_90 0x5a055a, sm_90a
/// 0x5a0d5a) and ptxas 13's (ABI 8: SM in bits 8-15, bit 0x8; sm_90 0x6005a04).
#[test]
fn a_refused_custom_kernel_names_the_cubin_it_carries() {
    for (abi, flags, sm) in [
        (7, 0x005a_055a_u32, "sm_90"),
        (7, 0x005a_0d5a, "sm_90a"),
        (8, 0x0600_5a04, "sm_90"),
        (8, 0x0600_5a0c, "sm_90a"),
    ] {
        let mut cubin = cubin_header(90);
        cubin[8] = abi;
        cubin[48..52].copy_from_slice(&flags.to_le_bytes());
        let mut p = vadd();
        p.thunks = vec![custom_kernel(1, cubin)];
        assert_eq!(
            load_err(&p),
            format!("UNIMPLEMENTED: thunks[0].custom_kernel_thunk: this runtime does not execute custom-kernel thunks (kernel `lib_kernel`: it carries only an {sm} cubin (64 bytes), no PTX); the emulated device runs PTX; supply its PTX (aot run --kernel-ptx, runtime::load_with_kernel_ptx)")
        );
    }
}

// ---- thunks/decode/ ----

/// An index equal to the allocation count is the first one out of range.
#[test]
fn allocation_index_equal_to_the_allocation_count_is_out_of_range() {
    let mut p = vadd();
    p.thunks = vec![kernel(
        1,
        "vadd",
        vec![sl(0, 0, 16), sl(3, 0, 16), sl(2, 0, 16)],
        4,
    )];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk.args[1].buffer_allocation_index is 3, out of range [0, 3)"
    );
}

const ARRAY_PARAM_PTX: &str = r#"
.version 8.0
.target sm_90a
.address_size 64

.visible .entry arr(.param .align 8 .b8 a[16])
{
  ret;
}
"#;

/// A parameter's size is its element size times its array length: `.b8 a[16]` is 16 bytes, not
/// a device address.
#[test]
fn an_array_kernel_parameter_is_its_whole_size() {
    let mut p = vadd();
    let mut k = kernel(1, "arr", vec![sl(0, 0, 16)], 1);
    if let Some(Impl::KernelThunk(kt)) = k.r#impl.as_mut() {
        kt.kernel_binary = Some(KernelBinaryProto {
            ptx: ARRAY_PARAM_PTX.into(),
            cubin: vec![],
        });
    }
    p.thunks = vec![k];
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].kernel_thunk: parameter 0 (a) of .entry arr is 16 bytes; every kernel_thunk parameter must be a 64-bit device address"
    );
}

fn gemm_layouts(p: &mut GpuExecutableProto) -> &mut GemmConfigProto {
    match p.thunks[0].r#impl.as_mut() {
        Some(Impl::GemmThunk(g)) => g.gemm_config.as_mut().unwrap(),
        _ => panic!("not a gemm artifact"),
    }
}

/// Each of M, K and N is compared on its own: a wrong M or a wrong N alone is refused (the
/// contraction-only mismatch is load_errors.rs's `gemm_shapes_must_agree`).
#[test]
fn gemm_output_rows_and_columns_must_each_agree() {
    let f32t = proto::xla::PrimitiveType::F32 as i32;
    let mut p = gemm_artifact(false);
    gemm_layouts(&mut p).output_layout = Some(layout(3, 2, false, f32t));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk.gemm_config: op(lhs) is 2x3, op(rhs) is 3x2, output is 3x2; need MxK, KxN and MxN"
    );
    let mut p = gemm_artifact(false);
    gemm_layouts(&mut p).output_layout = Some(layout(2, 3, false, f32t));
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk.gemm_config: op(lhs) is 2x3, op(rhs) is 3x2, output is 2x3; need MxK, KxN and MxN"
    );
}

/// K = 0: the operands address no bytes (a layout with no rows or no columns spans 0 bytes), and
/// the product is the empty sum, 0, written over what the output held.
#[test]
fn gemm_with_an_empty_contraction_writes_zeros() {
    let f32t = proto::xla::PrimitiveType::F32 as i32;
    let hlo = "HloModule g\n\nENTRY e {\n  a = f32[2,0] parameter(0)\n  b = f32[0,2] parameter(1)\n  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let mut p = artifact(hlo, &["f32[2,0]", "f32[0,2]"], "f32[2,2]");
    *allocs(&mut p) = vec![
        alloc(0, 0, Some(0), false),
        alloc(1, 0, Some(1), false),
        alloc(2, 16, None, true),
    ];
    p.output_info_map = vec![out(vec![], 2)];
    p.thunks = vec![
        memset(1, sl(2, 0, 16), 0x3f80_0000), // 1.0f, overwritten by the gemm
        thunk(
            2,
            Impl::GemmThunk(GemmThunkProto {
                gemm_config: Some(GemmConfigProto {
                    lhs_layout: Some(layout(2, 0, false, f32t)),
                    rhs_layout: Some(layout(0, 2, false, f32t)),
                    output_layout: Some(layout(2, 2, false, f32t)),
                    alpha_real: 1.0,
                    alpha_imag: 0.0,
                    beta: 0.0,
                    compute_type: f32t,
                    operand_precisions: vec![],
                }),
                lhs_buffer: Some(sl(0, 0, 0)),
                rhs_buffer: Some(sl(1, 0, 0)),
                output_buffer: Some(sl(2, 0, 16)),
                workspace: None,
                deterministic: true,
                gemm_config_xyz: None,
            }),
        ),
    ];
    let r = run(&p, &RuntimeFlags::default(), &[&[], &[]]);
    assert_eq!(to_f32s(&r.outputs[0]), vec![0.; 4]);
}

/// The two-replica collective artifact of execute.rs with this module's replica_count.
fn with_replicas(mut p: GpuExecutableProto, replicas: u32) -> GpuExecutableProto {
    let hlo = format!("HloModule ar, replica_count={replicas}\n\nENTRY e {{\n  x = f32[4] parameter(0)\n  ROOT c = s32[] constant(0)\n}}\n");
    let m = hlo_text::parse_module(&hlo).unwrap();
    p.hlo_module_with_config = Some(hlo::to_proto(&m).unwrap());
    p
}

fn all_reduce(groups: Vec<Vec<i64>>) -> GpuExecutableProto {
    collective_artifact(
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: config(groups),
            buffers: cbuf(4, 4),
            reduction_kind: ReductionKindProto::ReductionKindSum as i32,
        }),
        4,
    )
}

/// Two groups of one replica each: every replica reduces only its own contribution.
#[test]
fn one_member_groups_reduce_each_replica_alone() {
    assert_eq!(
        run_two(&all_reduce(vec![vec![0], vec![1]])),
        vec![
            (vec![1., 2., 3., 4.], vec![0]),
            (vec![10., 20., 30., 40.], vec![1])
        ]
    );
}

#[test]
fn a_replica_in_two_groups_is_invalid_argument() {
    assert_eq!(
        load_err(&all_reduce(vec![vec![0, 1], vec![1, 0]])),
        "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.collective_config.replica_groups[1].replica_ids[0] is 1, which already appears in an earlier group"
    );
}

#[test]
fn a_replica_in_no_group_is_invalid_argument() {
    assert_eq!(
        load_err(&all_reduce(vec![vec![0]])),
        "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.collective_config.replica_groups: replica 1 is in no group (replica_count is 2)"
    );
}

#[test]
fn groups_of_unequal_sizes_are_invalid_argument() {
    assert_eq!(
        load_err(&with_replicas(all_reduce(vec![vec![0], vec![1, 2]]), 3)),
        "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.collective_config.replica_groups[1] has 2 replicas, replica_groups[0] has 1; groups must have equal sizes"
    );
}

/// An all-gather's destination holds every member's element_count elements.
#[test]
fn all_gather_destination_must_hold_the_whole_group() {
    let p = collective_artifact(
        Impl::AllGatherStartThunk(AllGatherStartThunkProto {
            collective_config: config(vec![]),
            buffers: cbuf(4, 4),
        }),
        4,
    );
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].all_gather_start_thunk.buffers[0].destination_buffer.size is 16, smaller than the 32 bytes element_count 4 of F32 needs"
    );
}

fn reduce_scatter(count: i64, dst_elems: i64) -> GpuExecutableProto {
    collective_artifact(
        Impl::ReduceScatterThunk(ReduceScatterThunkProto {
            collective_config: config(vec![]),
            buffers: cbuf(count, dst_elems),
            reduction_kind: ReductionKindProto::ReductionKindSum as i32,
        }),
        dst_elems,
    )
}

#[test]
fn reduce_scatter_count_must_divide_among_the_group() {
    assert_eq!(
        load_err(&reduce_scatter(3, 2)),
        "INVALID_ARGUMENT: thunks[0].reduce_scatter_thunk.buffers[0].element_count is 3, not a multiple of the group size 2"
    );
}

/// A reduce-scatter's destination holds one member's share: element_count / group size.
#[test]
fn reduce_scatter_destination_must_hold_its_share() {
    assert_eq!(
        load_err(&reduce_scatter(4, 1)),
        "INVALID_ARGUMENT: thunks[0].reduce_scatter_thunk.buffers[0].destination_buffer.size is 4, smaller than the 8 bytes element_count 4 of F32 needs"
    );
}

/// A sequential thunk runs its thunks in order (here the memset after the kernel overwrites the
/// kernel's first element), with command buffers on and off; with them off, the sequential and
/// its two thunks are three executed thunks.
#[test]
fn a_sequential_thunk_runs_its_thunks_in_order() {
    let x = f32s(&[1., 2., 3., 4.]);
    let y = f32s(&[10., 20., 30., 40.]);
    let mut p = vadd();
    p.thunks = vec![thunk(
        1,
        Impl::SequentialThunk(SequentialThunkProto {
            thunks: vec![
                kernel(2, "vadd", vec![sl(0, 0, 16), sl(1, 0, 16), sl(2, 0, 16)], 4),
                memset(3, sl(2, 0, 4), 0x3f80_0000), // 1.0f
            ],
        }),
    )];
    for enable_command_buffers in [true, false] {
        let flags = RuntimeFlags {
            enable_command_buffers,
            ..RuntimeFlags::default()
        };
        let r = run(&p, &flags, &[&x, &y]);
        assert_eq!(
            to_f32s(&r.outputs[0]),
            vec![1., 22., 33., 44.],
            "command buffers {enable_command_buffers}"
        );
        if !enable_command_buffers {
            assert_eq!((r.stats.thunks, r.stats.kernel_launches), (3, 1));
        }
    }
}

/// The partition id is 0 (one partition per replica), written as a u32 over what was there.
#[test]
fn the_partition_id_thunk_writes_zero() {
    let mut p = artifact(SCALAR_HLO, &[], "s32[]");
    *allocs(&mut p) = vec![alloc(0, 4, None, true)];
    p.output_info_map = vec![out(vec![], 0)];
    p.thunks = vec![
        memset(1, sl(0, 0, 4), 0xdead_beef),
        thunk(
            2,
            Impl::PartitionIdThunk(PartitionIdThunkProto {
                dest_buffer: Some(sl(0, 0, 4)),
            }),
        ),
    ];
    let r = run(&p, &RuntimeFlags::default(), &[]);
    assert_eq!(to_u32s(&r.outputs[0]), vec![0]);
}

/// An operand buffer one element short of what its layout spans is refused with both sizes
/// (hostile.rs covers only a span that overflows).
#[test]
fn gemm_buffer_smaller_than_its_layout_spans() {
    let mut p = gemm_artifact(false);
    if let Some(Impl::GemmThunk(g)) = p.thunks[0].r#impl.as_mut() {
        g.lhs_buffer = Some(sl(0, 0, 20));
    }
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk.lhs_buffer.size is 20, smaller than the 24 bytes gemm_config.lhs_layout addresses"
    );
}

/// The overlap check truncates the destination to mem_size too (load_errors.rs's
/// `copy_within_one_allocation_overlaps_only_by_its_size` truncates the source): a destination
/// slice that covers the source but whose first mem_size bytes do not is a valid copy.
#[test]
fn copy_into_a_destination_overlapping_only_past_mem_size() {
    let mut p = vadd();
    p.thunks = vec![
        memset(1, sl(2, 12, 4), 7),
        copy(2, sl(2, 12, 4), sl(2, 0, 16), 4),
    ];
    let r = run(&p, &RuntimeFlags::default(), &[&[0; 16], &[0; 16]]);
    assert_eq!(to_u32s(&r.outputs[0]), vec![7, 0, 0, 7]);
}
