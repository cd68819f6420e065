//! Execution of hand-built artifacts on the emulated device.
use std::sync::Arc;

use proto::prost::Message;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use runtime::{Device, RuntimeFlags};

use crate::common::*;

#[test]
fn vector_add_runs_on_the_emulator() {
    let r = run(
        &vadd(),
        &RuntimeFlags::default(),
        &[
            &f32s(&[1.0, 2.0, 3.0, 4.0]),
            &f32s(&[10.0, 20.0, 30.0, 40.0]),
        ],
    );
    assert_eq!(to_f32s(&r.outputs[0]), vec![11.0, 22.0, 33.0, 44.0]);
    assert_eq!(r.stats.kernel_launches, 1);
}

#[test]
fn wrong_argument_size_is_invalid_argument() {
    let d = device();
    let exe = runtime::load(&vadd().encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let e = exe
        .execute(&d, &[&f32s(&[1.0]), &f32s(&[1.0; 4])])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: argument 0 (parameter 0 [], f32[4]) is 4 bytes, expected 16"
    );
}

#[test]
fn while_loop_with_a_counter_kernel() {
    let r = run(&while_counter(), &RuntimeFlags::default(), &[]);
    assert_eq!(to_u32s(&r.outputs[0]), vec![10]);
    assert_eq!(r.stats.while_iterations, 10);
}

#[test]
fn while_loop_bound_is_resource_exhausted() {
    let d = device();
    let flags = RuntimeFlags {
        max_while_iterations: 5,
        ..RuntimeFlags::default()
    };
    let exe = runtime::load(&while_counter().encode_to_vec(), &d, &flags).unwrap();
    let e = exe.execute(&d, &[]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "RESOURCE_EXHAUSTED: while_thunk 2 (t2): the loop ran 5 iterations without its condition becoming false, the limit is 5 (RuntimeFlags::max_while_iterations, aot run --max-while-iterations)"
    );
}

fn conditional(is_bool: bool, branches: usize) -> GpuExecutableProto {
    let (param, hlo) = if is_bool {
        ("pred[]", "HloModule c\n\nENTRY e {\n  p = pred[] parameter(0)\n  ROOT c = s32[] constant(0)\n}\n")
    } else {
        (
            "s32[]",
            "HloModule c\n\nENTRY e {\n  p = s32[] parameter(0)\n  ROOT c = s32[] constant(0)\n}\n",
        )
    };
    let mut p = artifact(hlo, &[param], "s32[]");
    let psize = if is_bool { 1 } else { 4 };
    *allocs(&mut p) = vec![alloc(0, psize, Some(0), false), alloc(1, 4, None, true)];
    p.output_info_map = vec![out(vec![], 1)];
    p.thunks = vec![thunk(
        1,
        Impl::ConditionalThunk(ConditionalThunkProto {
            branch_index_buffer: Some(shaped(0, 0, psize)),
            branch_thunks: (0..branches)
                .map(|b| ThunkSequenceProto {
                    thunks: vec![memset(10 + b as i64, sl(1, 0, 4), 100 + b as u32)],
                })
                .collect(),
            branch_index_is_bool: is_bool,
        }),
    )];
    p
}

#[test]
fn conditional_with_pred_selector() {
    let p = conditional(true, 2);
    assert_eq!(
        to_u32s(&run(&p, &RuntimeFlags::default(), &[&[1]]).outputs[0]),
        vec![100]
    );
    assert_eq!(
        to_u32s(&run(&p, &RuntimeFlags::default(), &[&[0]]).outputs[0]),
        vec![101]
    );
}

#[test]
fn conditional_with_index_selector_out_of_range_runs_the_last_branch() {
    let p = conditional(false, 3);
    let f = RuntimeFlags::default();
    assert_eq!(
        to_u32s(&run(&p, &f, &[&1i32.to_le_bytes()]).outputs[0]),
        vec![101]
    );
    assert_eq!(
        to_u32s(&run(&p, &f, &[&7i32.to_le_bytes()]).outputs[0]),
        vec![102]
    );
    assert_eq!(
        to_u32s(&run(&p, &f, &[&(-1i32).to_le_bytes()]).outputs[0]),
        vec![102]
    );
}

#[test]
fn gemm_matches_the_hand_computed_product() {
    // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
    let a = f32s(&[1., 2., 3., 4., 5., 6.]);
    let r = run(
        &gemm_artifact(false),
        &RuntimeFlags::default(),
        &[&a, &f32s(&[7., 8., 9., 10., 11., 12.])],
    );
    assert_eq!(to_f32s(&r.outputs[0]), vec![58., 64., 139., 154.]);
    // Same with rhs stored transposed: [[7,9,11],[8,10,12]].
    let r = run(
        &gemm_artifact(true),
        &RuntimeFlags::default(),
        &[&a, &f32s(&[7., 9., 11., 8., 10., 12.])],
    );
    assert_eq!(to_f32s(&r.outputs[0]), vec![58., 64., 139., 154.]);
}

fn custom_call(target: &str, opaque: Vec<u8>) -> GpuExecutableProto {
    let mut p = vadd();
    p.thunks = vec![thunk(
        1,
        Impl::CustomCallThunk(CustomCallThunkProto {
            target_name: target.into(),
            operands: vec![
                NullableShapedSliceProto {
                    shaped_slice: Some(shaped(0, 0, 16)),
                },
                NullableShapedSliceProto {
                    shaped_slice: Some(shaped(1, 0, 16)),
                },
            ],
            results: vec![NullableShapedSliceProto {
                shaped_slice: Some(shaped(2, 0, 16)),
            }],
            opaque,
            api_version: 0,
            attributes: Default::default(),
            called_computation: None,
            attributes_xyz: Default::default(),
        }),
    )];
    p
}

#[test]
fn custom_calls_resolve_names_and_legacy_aliases() {
    let f = RuntimeFlags::default();
    let x = f32s(&[1., 2., 3., 4.]);
    let y = f32s(&[10., 20., 30., 40.]);
    // Legacy alias, alpha from opaque.
    let r = run(
        &custom_call("__xla_saxpy", 2f32.to_le_bytes().to_vec()),
        &f,
        &[&x, &y],
    );
    assert_eq!(to_f32s(&r.outputs[0]), vec![12., 24., 36., 48.]);
    // Current name, alpha from an FFI attribute.
    let mut p = custom_call("xla.runtime.axpy_f32", vec![]);
    if let Some(Impl::CustomCallThunk(c)) = &mut p.thunks[0].r#impl {
        c.attributes.insert("alpha".into(), "-1".into());
    }
    assert_eq!(
        to_f32s(&run(&p, &f, &[&x, &y]).outputs[0]),
        vec![9., 18., 27., 36.]
    );
    // The same attribute at the stage-1 number (1000, CustomCallThunkProto.attributes_xyz).
    let mut p = custom_call("xla.runtime.axpy_f32", vec![]);
    if let Some(Impl::CustomCallThunk(c)) = &mut p.thunks[0].r#impl {
        c.attributes_xyz.insert("alpha".into(), "-1".into());
    }
    assert_eq!(
        to_f32s(&run(&p, &f, &[&x, &y]).outputs[0]),
        vec![9., 18., 27., 36.]
    );
    let r = run(&custom_call("__xla_memcpy", vec![]), &f, &[&x, &y]);
    assert_eq!(to_f32s(&r.outputs[0]), vec![1., 2., 3., 4.]);
    let r = run(&custom_call("xla.runtime.noop", vec![]), &f, &[&x, &y]);
    assert_eq!(to_f32s(&r.outputs[0]), vec![0.; 4]);
}

/// memset8 over an odd number of bytes (a byte fill) and over whole words (issued as a word fill
/// of the repeated byte), with command buffers on and off.
#[test]
fn memset8_fills_every_byte() {
    let x = f32s(&[1., 2., 3., 4.]);
    let y = f32s(&[10., 20., 30., 40.]);
    let mut p = vadd();
    p.thunks = vec![
        kernel(1, "vadd", vec![sl(0, 0, 16), sl(1, 0, 16), sl(2, 0, 16)], 4),
        memset8(2, sl(2, 1, 5), 0x7f),
        memset8(3, sl(2, 8, 8), 0x80),
    ];
    let d = device();
    for enable_command_buffers in [true, false] {
        let flags = RuntimeFlags {
            enable_command_buffers,
            ..RuntimeFlags::default()
        };
        let exe = runtime::load(&p.encode_to_vec(), &d, &flags).unwrap();
        let out = &exe.execute(&d, &[&x, &y]).unwrap().outputs[0];
        let mut want = f32s(&[11., 22., 33., 44.]);
        want[1..6].fill(0x7f);
        want[8..16].fill(0x80);
        assert_eq!(out, &want, "command buffers {enable_command_buffers}");
    }
}

/// vadd, copy, memset, vadd again: one command buffer of 4 commands.
fn chain() -> GpuExecutableProto {
    let mut p = vadd();
    allocs(&mut p).push(alloc(3, 16, None, false));
    p.thunks = vec![
        kernel(1, "vadd", vec![sl(0, 0, 16), sl(1, 0, 16), sl(3, 0, 16)], 4),
        copy(2, sl(3, 0, 16), sl(2, 0, 16), 16),
        memset(3, sl(3, 8, 8), 0x3f80_0000), // 1.0f
        kernel(4, "vadd", vec![sl(2, 0, 16), sl(3, 0, 16), sl(2, 0, 16)], 4),
    ];
    p
}

#[test]
fn command_buffers_on_and_off_give_identical_results() {
    let x = f32s(&[1., 2., 3., 4.]);
    let y = f32s(&[10., 20., 30., 40.]);
    let on = RuntimeFlags::default();
    let off = RuntimeFlags {
        enable_command_buffers: false,
        ..RuntimeFlags::default()
    };
    let d = device();
    let exe_on = runtime::load(&chain().encode_to_vec(), &d, &on).unwrap();
    let exe_off = runtime::load(&chain().encode_to_vec(), &d, &off).unwrap();
    assert!(matches!(
        exe_on.thunks[0].kind,
        runtime::thunks::ThunkKind::CommandBuffer(_)
    ));
    assert_eq!(exe_on.thunks.len(), 1);
    assert_eq!(exe_off.thunks.len(), 4);
    // Never serialized: re-encoding gives the artifact's thunks back.
    assert_eq!(exe_on.thunk_protos(), chain().thunks);
    let first = exe_on.execute(&d, &[&x, &y]).unwrap();
    let second = exe_on.execute(&d, &[&x, &y]).unwrap();
    let plain = exe_off.execute(&d, &[&x, &y]).unwrap();
    assert_eq!(first.outputs, plain.outputs);
    assert_eq!(second.outputs, plain.outputs);
    // 11+11, 22+22, 33+1, 44+1
    assert_eq!(to_f32s(&plain.outputs[0]), vec![22., 44., 34., 45.]);
    assert_eq!(
        (
            first.stats.command_buffer_recordings,
            first.stats.command_buffer_replays
        ),
        (1, 0)
    );
    assert_eq!(
        (
            second.stats.command_buffer_recordings,
            second.stats.command_buffer_replays
        ),
        (0, 1)
    );
    assert_eq!(plain.stats.command_buffer_recordings, 0);
}

#[test]
fn command_buffers_are_built_inside_loops_too() {
    let mut p = while_counter();
    if let Some(Impl::WhileThunk(w)) = &mut p.thunks[1].r#impl {
        let body = w.body_thunk_sequence.as_mut().unwrap();
        body.thunks.push(kernel(5, "inc", vec![sl(0, 0, 4)], 1));
    }
    // Body increments twice: 0, 2, 4, ..., 10.
    let on = run(&p, &RuntimeFlags::default(), &[]);
    let off = run(
        &p,
        &RuntimeFlags {
            enable_command_buffers: false,
            ..RuntimeFlags::default()
        },
        &[],
    );
    assert_eq!(on.outputs, off.outputs);
    assert_eq!(to_u32s(&on.outputs[0]), vec![10]);
    assert_eq!(
        (
            on.stats.command_buffer_recordings,
            on.stats.command_buffer_replays
        ),
        (1, 4)
    );
}

#[test]
fn cross_stream_dependencies_become_event_waits() {
    let mut p = chain();
    // The copy runs on stream 1 and reads what the first kernel (stream 0) wrote; the memset
    // (stream 0) overwrites what the copy read.
    p.thunks[1].thunk_info.as_mut().unwrap().execution_stream_id = 1;
    let d = device();
    let exe = runtime::load(&p.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let waits: Vec<(i64, i64)> = exe.events.iter().map(|w| (w.waiter, w.producer)).collect();
    assert_eq!(waits, vec![(2, 1), (3, 2), (4, 2)]);
    let r = exe
        .execute(
            &d,
            &[&f32s(&[1., 2., 3., 4.]), &f32s(&[10., 20., 30., 40.])],
        )
        .unwrap();
    assert_eq!(to_f32s(&r.outputs[0]), vec![22., 44., 34., 45.]);
    assert_eq!(r.stats.event_waits, 3);
}

#[test]
fn gemm_with_its_config_at_the_project_number_computes_the_same_product() {
    let a = f32s(&[1., 2., 3., 4., 5., 6.]);
    for transposed in [false, true] {
        let b = if transposed {
            f32s(&[7., 9., 11., 8., 10., 12.])
        } else {
            f32s(&[7., 8., 9., 10., 11., 12.])
        };
        let r = run(
            &gemm_artifact_xyz(transposed),
            &RuntimeFlags::default(),
            &[&a, &b],
        );
        assert_eq!(to_f32s(&r.outputs[0]), vec![58., 64., 139., 154.]);
    }
}

/// [`run_two`] with each replica's first u32 output.
fn run2(p: &GpuExecutableProto) -> Vec<(Vec<f32>, u32)> {
    run_two(p).into_iter().map(|(f, u)| (f, u[0])).collect()
}

#[test]
fn two_replica_all_reduce_sum_and_replica_ids() {
    let p = collective_artifact(
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: config(vec![]),
            buffers: cbuf(4, 4),
            reduction_kind: ReductionKindProto::ReductionKindSum as i32,
        }),
        4,
    );
    assert_eq!(
        run2(&p),
        vec![(vec![11., 22., 33., 44.], 0), (vec![11., 22., 33., 44.], 1)]
    );
}

#[test]
fn two_replica_all_reduce_max() {
    let p = collective_artifact(
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: config(vec![vec![0, 1]]),
            buffers: cbuf(4, 4),
            reduction_kind: ReductionKindProto::ReductionKindMax as i32,
        }),
        4,
    );
    assert_eq!(run2(&p)[0].0, vec![10., 20., 30., 40.]);
}

#[test]
fn two_replica_all_gather_in_rank_order() {
    let gather = |groups| {
        collective_artifact(
            Impl::AllGatherStartThunk(AllGatherStartThunkProto {
                collective_config: config(groups),
                buffers: cbuf(4, 8),
            }),
            8,
        )
    };
    let both = vec![1., 2., 3., 4., 10., 20., 30., 40.];
    assert_eq!(run2(&gather(vec![])), vec![(both.clone(), 0), (both, 1)]);
    // Rank order is the group's order: replica 1 is rank 0 here.
    let swapped = vec![10., 20., 30., 40., 1., 2., 3., 4.];
    assert_eq!(run2(&gather(vec![vec![1, 0]]))[0].0, swapped);
}

#[test]
fn two_replica_reduce_scatter() {
    let p = collective_artifact(
        Impl::ReduceScatterThunk(ReduceScatterThunkProto {
            collective_config: config(vec![]),
            buffers: cbuf(4, 2),
            reduction_kind: ReductionKindProto::ReductionKindSum as i32,
        }),
        2,
    );
    assert_eq!(run2(&p), vec![(vec![11., 22.], 0), (vec![33., 44.], 1)]);
}

#[test]
fn single_replica_executable_refuses_replicated_devices() {
    let d = device();
    let exe = runtime::load(&vadd().encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let devices: Vec<Arc<dyn Device>> = vec![Arc::new(device()), Arc::new(device())];
    let e = exe
        .execute_replicated(&devices, &[vec![], vec![]])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: 2 devices given, the executable's replica_count is 1"
    );
}

#[test]
fn constants_are_copied_from_binary() {
    let mut p = vadd();
    // Parameter 1 replaced by a constant allocation filled from `binary`.
    p.binary = f32s(&[0.5, 0.25, 0.125, 0.0625]);
    p.program_shape.as_mut().unwrap().parameters.truncate(1);
    allocs(&mut p)[1] = proto::xla::BufferAllocationProto {
        index: 1,
        size: 16,
        is_constant: true,
        ..Default::default()
    };
    p.constants = vec![proto::xla::gpu::gpu_executable_proto::ConstantInfoProto {
        symbol_name: "b".into(),
        offset_in_binary: 0,
        size: 16,
        allocation_index: 1,
    }];
    let r = run(&p, &RuntimeFlags::default(), &[&f32s(&[1., 2., 3., 4.])]);
    assert_eq!(to_f32s(&r.outputs[0]), vec![1.5, 2.25, 3.125, 4.0625]);
}

#[test]
fn cuda_device_without_a_driver_is_unavailable() {
    if runtime::cuda_driver_present() {
        return;
    }
    let e = runtime::CudaDevice::new(0, h100()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "UNAVAILABLE: no CUDA driver library (libcuda.so) on this machine"
    );
}

#[test]
fn two_replica_all_reduce_with_two_buffers_and_partition_mode() {
    let buffers = vec![
        CollectiveBufferProto {
            element_count: 4,
            source_buffer: Some(sl(0, 0, 16)),
            destination_buffer: Some(sl(1, 0, 16)),
            ..Default::default()
        },
        CollectiveBufferProto {
            element_count: 4,
            source_buffer: Some(sl(0, 0, 16)),
            destination_buffer: Some(sl(1, 16, 16)),
            ..Default::default()
        },
    ];
    let mut c = config(vec![vec![0, 1]]);
    if let Some(c) = c.as_mut() {
        c.operand_element_type.push(c.operand_element_type[0]);
        c.group_mode =
            CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplicaAndPartition as i32;
    }
    let p = collective_artifact(
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: c,
            buffers,
            reduction_kind: ReductionKindProto::ReductionKindProduct as i32,
        }),
        8,
    );
    let want = vec![10., 40., 90., 160., 10., 40., 90., 160.];
    assert_eq!(run2(&p), vec![(want.clone(), 0), (want, 1)]);
}

/// A device that runs command buffers as one unit, as the CUDA device does with graphs: it
/// records what it was given and issues it on an emulated device.
#[derive(Debug)]
struct WholeBuffers {
    inner: runtime::EmulatedDevice,
    seen: std::sync::Mutex<Vec<(u64, Vec<String>)>>,
}

impl Device for WholeBuffers {
    fn description(&self) -> &runtime::DeviceDescription {
        self.inner.description()
    }
    fn kind(&self) -> runtime::DeviceKind {
        self.inner.kind()
    }
    fn allocate(&self, size: u64) -> runtime::Result<u64> {
        self.inner.allocate(size)
    }
    fn free(&self, address: u64) -> runtime::Result<()> {
        self.inner.free(address)
    }
    fn write(&self, address: u64, data: &[u8]) -> runtime::Result<()> {
        self.inner.write(address, data)
    }
    fn read(&self, address: u64, out: &mut [u8]) -> runtime::Result<()> {
        self.inner.read(address, out)
    }
    fn load_module(&self, module: &runtime::thunks::KernelModule) -> runtime::Result<()> {
        self.inner.load_module(module)
    }
    fn launch(
        &self,
        module: &runtime::thunks::KernelModule,
        kernel: &str,
        shape: runtime::LaunchShape,
        args: &[runtime::KernelArg],
    ) -> runtime::Result<()> {
        self.inner.launch(module, kernel, shape, args)
    }
    fn run_command_buffer(&self, key: u64, ops: &[runtime::DeviceOp<'_>]) -> runtime::Result<bool> {
        let kinds = ops
            .iter()
            .map(|o| match o {
                runtime::DeviceOp::Launch { kernel, .. } => format!("launch {kernel}"),
                runtime::DeviceOp::Copy { size, .. } => format!("copy {size}"),
                runtime::DeviceOp::Memset32 { size, value, .. } => {
                    format!("memset32 {size} {value:#x}")
                }
                runtime::DeviceOp::Zero { size, .. } => format!("zero {size}"),
                runtime::DeviceOp::Memset8 { size, value, .. } => {
                    format!("memset8 {size} {value:#x}")
                }
                runtime::DeviceOp::Gemm { .. } => "gemm".to_owned(),
            })
            .collect();
        self.seen.lock().unwrap().push((key, kinds));
        for op in ops {
            runtime::issue(&self.inner, op)?;
        }
        Ok(true)
    }
    fn synchronize(&self) -> runtime::Result<()> {
        self.inner.synchronize()
    }
}

/// A device that takes whole command buffers (the CUDA graph path) gets every command with this
/// execution's addresses, and the results are those of issuing the thunks one by one.
#[test]
fn a_device_may_run_command_buffers_whole() {
    let x = f32s(&[1., 2., 3., 4.]);
    let y = f32s(&[10., 20., 30., 40.]);
    let d = WholeBuffers {
        inner: device(),
        seen: Default::default(),
    };
    let exe = runtime::load(&chain().encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let first = exe.execute(&d, &[&x, &y]).unwrap();
    let second = exe.execute(&d, &[&x, &y]).unwrap();
    assert_eq!(to_f32s(&first.outputs[0]), vec![22., 44., 34., 45.]);
    assert_eq!(first.outputs, second.outputs);
    assert_eq!(first.stats.kernel_launches, 2);
    let seen = d.seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].0, seen[1].0, "the same command buffer both times");
    assert_eq!(
        seen[0].1,
        vec![
            "launch vadd",
            "copy 16",
            "memset32 8 0x3f800000",
            "launch vadd"
        ]
    );
}

// Pinned by cargo-mutants (docs/gate_selftest.md): the counters, the argument checks of
// replicated runs, the device operation each recorded command becomes, and collective details
// the tests above leave open.

/// Every counter of one execution, with the timings' wall time (the only nondeterministic part)
/// left out: (kernel, bytes) per launch.
fn counters(s: &runtime::ExecutionStats) -> (runtime::ExecutionStats, Vec<(String, u64)>) {
    let timings = s
        .kernel_timings
        .iter()
        .map(|t| (t.kernel.clone(), t.bytes))
        .collect();
    let rest = runtime::ExecutionStats {
        kernel_timings: vec![],
        ..s.clone()
    };
    (rest, timings)
}

#[test]
fn while_loop_counts_every_thunk_launch_and_iteration() {
    let r = run(&while_counter(), &RuntimeFlags::default(), &[]);
    // memset + while, then 11 evaluations of the condition (lt10) and 10 of the body (inc).
    let mut launches = vec![];
    for _ in 0..10 {
        launches.push(("lt10".to_owned(), 5)); // counter (4 bytes) + predicate (1 byte)
        launches.push(("inc".to_owned(), 4));
    }
    launches.push(("lt10".to_owned(), 5));
    assert_eq!(
        counters(&r.stats),
        (
            runtime::ExecutionStats {
                thunks: 23,
                kernel_launches: 21,
                while_iterations: 10,
                ..Default::default()
            },
            launches
        )
    );
}

#[test]
fn command_buffer_counts_its_commands_and_its_own_recordings() {
    let x = f32s(&[1., 2., 3., 4.]);
    let y = f32s(&[10., 20., 30., 40.]);
    let d = device();
    let exe = runtime::load(&chain().encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let first = exe.execute(&d, &[&x, &y]).unwrap();
    let second = exe.execute(&d, &[&x, &y]).unwrap();
    // The command buffer thunk itself and its 4 commands; two vadd launches of 3 x 16 bytes.
    let launches = vec![("vadd".to_owned(), 48), ("vadd".to_owned(), 48)];
    assert_eq!(
        counters(&first.stats),
        (
            runtime::ExecutionStats {
                thunks: 5,
                kernel_launches: 2,
                command_buffer_recordings: 1,
                ..Default::default()
            },
            launches.clone()
        )
    );
    assert_eq!(
        counters(&second.stats),
        (
            runtime::ExecutionStats {
                thunks: 5,
                kernel_launches: 2,
                command_buffer_replays: 1,
                behaviours: [
                    runtime::Behaviour::CommandBufferReplayed,
                    runtime::Behaviour::ExecutableReexecuted,
                ]
                .into_iter()
                .collect(),
                ..Default::default()
            },
            launches
        )
    );
    // The thunk's own counters, across both executions.
    let runtime::thunks::ThunkKind::CommandBuffer(cb) = &exe.thunks[0].kind else {
        panic!("not a command buffer: {:?}", exe.thunks[0].kind.name());
    };
    assert_eq!(
        (*cb.recordings.lock().unwrap(), *cb.replays.lock().unwrap()),
        (1, 1)
    );
}

#[test]
fn conditional_index_equal_to_the_branch_count_runs_the_last_branch() {
    let p = conditional(false, 3);
    let r = run(&p, &RuntimeFlags::default(), &[&3i32.to_le_bytes()]);
    assert_eq!(to_u32s(&r.outputs[0]), vec![102]);
}

#[test]
fn replicated_executable_refuses_a_single_device_run() {
    let p = collective_artifact(
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: config(vec![]),
            buffers: cbuf(4, 4),
            reduction_kind: ReductionKindProto::ReductionKindSum as i32,
        }),
        4,
    );
    let d = device();
    let exe = runtime::load(&p.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let e = exe.execute(&d, &[&f32s(&[1.; 4])]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: the executable has replica_count 2; use execute_replicated"
    );
}

/// Replica 1 fails before the all-reduce, so replica 0 fails in it with "another replica
/// failed"; the run reports replica 1's error, the one a user can act on.
#[test]
fn replicated_run_reports_the_root_cause() {
    let p = collective_artifact(
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: config(vec![]),
            buffers: cbuf(4, 4),
            reduction_kind: ReductionKindProto::ReductionKindSum as i32,
        }),
        4,
    );
    let devices: Vec<Arc<dyn Device>> = vec![Arc::new(device()), Arc::new(device())];
    let exe = runtime::load(
        &p.encode_to_vec(),
        devices[0].as_ref(),
        &RuntimeFlags::default(),
    )
    .unwrap();
    let e = exe
        .execute_replicated(&devices, &[vec![f32s(&[1.; 4])], vec![f32s(&[1.; 2])]])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: argument 0 (parameter 0 [], f32[4]) is 8 bytes, expected 16"
    );
    let e = exe
        .execute_replicated(&devices, &[vec![f32s(&[1.; 4])]])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: 1 argument sets given for 2 replicas"
    );
}

fn run2_stats(p: &GpuExecutableProto) -> Vec<runtime::ExecutionResult> {
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
    exe.execute_replicated(&devices, &args).unwrap()
}

/// element_count, not the source slice's size, is what a collective sends.
#[test]
fn all_gather_sends_element_count_elements_of_a_larger_source() {
    let p = collective_artifact(
        Impl::AllGatherStartThunk(AllGatherStartThunkProto {
            collective_config: config(vec![]),
            buffers: cbuf(2, 4),
        }),
        4,
    );
    let r = run2_stats(&p);
    for (replica, r) in r.iter().enumerate() {
        assert_eq!(to_f32s(&r.outputs[0]), vec![1., 2., 10., 20.]);
        assert_eq!(to_u32s(&r.outputs[1]), vec![replica as u32]);
        assert_eq!(
            counters(&r.stats).0,
            runtime::ExecutionStats {
                thunks: 2,
                collectives: 1,
                // No replica groups: every replica, in id order.
                behaviours: [runtime::Behaviour::CollectiveGroupAscending]
                    .into_iter()
                    .collect(),
                ..Default::default()
            }
        );
    }
}

/// Two buffers of one all-reduce are two rendezvous: each gets its own contributions.
#[test]
fn all_reduce_of_two_buffers_keeps_them_apart() {
    let buffers = vec![
        CollectiveBufferProto {
            element_count: 2,
            source_buffer: Some(sl(0, 0, 8)),
            destination_buffer: Some(sl(1, 0, 8)),
            ..Default::default()
        },
        CollectiveBufferProto {
            element_count: 2,
            source_buffer: Some(sl(0, 8, 8)),
            destination_buffer: Some(sl(1, 8, 8)),
            ..Default::default()
        },
    ];
    let mut c = config(vec![]);
    if let Some(c) = c.as_mut() {
        c.operand_element_type.push(c.operand_element_type[0]);
    }
    let p = collective_artifact(
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: c,
            buffers,
            reduction_kind: ReductionKindProto::ReductionKindSum as i32,
        }),
        4,
    );
    for r in run2_stats(&p) {
        assert_eq!(to_f32s(&r.outputs[0]), vec![11., 22., 33., 44.]);
    }
}

/// The device operation each fill becomes: a byte fill or zeroing of whole words is issued as
/// the word fill of the repeated byte (cuMemsetD32), any other size as itself.
#[test]
fn byte_fills_and_zeroing_become_word_fills_only_on_whole_words() {
    let x = f32s(&[1., 2., 3., 4.]);
    let y = f32s(&[10., 20., 30., 40.]);
    let mut p = vadd();
    p.thunks = vec![
        kernel(1, "vadd", vec![sl(0, 0, 16), sl(1, 0, 16), sl(2, 0, 16)], 4),
        memset8(2, sl(2, 0, 4), 0x7f),
        memset8(3, sl(2, 4, 3), 0x80),
        thunk(
            4,
            Impl::MemzeroThunk(MemzeroThunkProto {
                dest_buffer: Some(shaped(2, 8, 4)),
            }),
        ),
        thunk(
            5,
            Impl::MemzeroThunk(MemzeroThunkProto {
                dest_buffer: Some(shaped(2, 13, 2)),
            }),
        ),
    ];
    let d = WholeBuffers {
        inner: device(),
        seen: Default::default(),
    };
    let exe = runtime::load(&p.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let r = exe.execute(&d, &[&x, &y]).unwrap();
    let mut want = f32s(&[11., 22., 33., 44.]);
    want[0..4].fill(0x7f);
    want[4..7].fill(0x80);
    want[8..12].fill(0);
    want[13..15].fill(0);
    assert_eq!(r.outputs[0], want);
    let seen = d.seen.lock().unwrap();
    assert_eq!(
        seen[0].1,
        vec![
            "launch vadd",
            "memset32 4 0x7f7f7f7f",
            "memset8 3 0x80",
            "memset32 4 0x0",
            "zero 2"
        ]
    );
}

/// Issue 33: a collective that only replica 0 reaches (it sits in the branch a conditional on
/// the replica id takes on replica 0) used to wait the whole `collective_timeout_secs` (120 s,
/// past `max_execution_secs`); replica 1 finishing now ends replica 0's wait at once.
#[test]
fn a_collective_only_replica_0_reaches_fails_at_once() {
    let all_reduce = thunk(
        1,
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: config(vec![]),
            buffers: cbuf(4, 4),
            reduction_kind: ReductionKindProto::ReductionKindSum as i32,
        }),
    );
    let mut p = collective_artifact(all_reduce.r#impl.clone().unwrap(), 4);
    p.thunks = vec![
        thunk(
            2,
            Impl::ReplicaIdThunk(ReplicaIdThunkProto {
                dest_buffer: Some(sl(2, 0, 4)),
            }),
        ),
        thunk(
            3,
            Impl::ConditionalThunk(ConditionalThunkProto {
                branch_index_buffer: Some(shaped(2, 0, 1)),
                // Replica 1's id is true: branch 0, empty; replica 0 takes branch 1.
                branch_thunks: vec![
                    ThunkSequenceProto { thunks: vec![] },
                    ThunkSequenceProto {
                        thunks: vec![all_reduce],
                    },
                ],
                branch_index_is_bool: true,
            }),
        ),
    ];
    let devices: Vec<Arc<dyn Device>> = vec![Arc::new(device()), Arc::new(device())];
    let exe = runtime::load(
        &p.encode_to_vec(),
        devices[0].as_ref(),
        &RuntimeFlags::default(),
    )
    .unwrap();
    let start = std::time::Instant::now();
    let e = exe
        .execute_replicated(&devices, &[vec![f32s(&[1.; 4])], vec![f32s(&[2.; 4])]])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: collective 0: replica 0 waits for 1 of the group [0, 1], which finished its execution without reaching it (the devices issue different collectives)"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
}
