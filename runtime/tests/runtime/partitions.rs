//! Programs on replicas x partitions (issue 30): device ids, every collective group mode and
//! collective permute on 2 and 4 emulated devices, with outputs worked by hand, and the load
//! errors of bad pairs and modes, each with its exact message.
//!
//! Device `d` (replica `d / P`, partition `d % P`) is given `x_d = [10d+1, 10d+2, 10d+3, 10d+4]`.
use std::sync::Arc;

use proto::prost::Message;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use runtime::{Device, RuntimeFlags};

use crate::common::*;

const CROSS_REPLICA: i32 = CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplica as i32;
const CROSS_PARTITION: i32 = CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossPartition as i32;
const CROSS_BOTH: i32 =
    CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplicaAndPartition as i32;
const FLATTENED: i32 = CollectiveOpGroupModeProto::CollectiveOpGroupModeFlattenedId as i32;

/// An artifact for `replicas x partitions` devices: `imp` writes f32[dst_elems] from the f32[4]
/// parameter; a replica-id and a partition-id thunk write the two u32 outputs.
fn grid_artifact(replicas: u32, partitions: u32, imp: Impl, dst_elems: i64) -> GpuExecutableProto {
    let hlo = format!(
        "HloModule g, replica_count={replicas}, num_partitions={partitions}\n\nENTRY e {{\n  x = f32[4] parameter(0)\n  ROOT c = s32[] constant(0)\n}}\n"
    );
    let result = format!("(f32[{dst_elems}], u32[], u32[])");
    let mut p = artifact(&hlo, &["f32[4]"], &result);
    *allocs(&mut p) = vec![
        alloc(0, 16, Some(0), false),
        alloc(1, dst_elems * 4, None, true),
        alloc(2, 4, None, true),
        alloc(3, 4, None, true),
    ];
    p.output_info_map = vec![out(vec![0], 1), out(vec![1], 2), out(vec![2], 3)];
    p.thunks = vec![
        thunk(1, imp),
        thunk(
            2,
            Impl::ReplicaIdThunk(ReplicaIdThunkProto {
                dest_buffer: Some(sl(2, 0, 4)),
            }),
        ),
        thunk(
            3,
            Impl::PartitionIdThunk(PartitionIdThunkProto {
                dest_buffer: Some(sl(3, 0, 4)),
            }),
        ),
    ];
    p
}

fn cfg(mode: i32, groups: Vec<Vec<i64>>) -> Option<CollectiveConfigProto> {
    let mut c = config(groups);
    if let Some(c) = c.as_mut() {
        c.group_mode = mode;
    }
    c
}

fn all_reduce(mode: i32, groups: Vec<Vec<i64>>) -> Impl {
    Impl::AllReduceStartThunk(AllReduceStartThunkProto {
        collective_config: cfg(mode, groups),
        buffers: cbuf(4, 4),
        reduction_kind: ReductionKindProto::ReductionKindSum as i32,
    })
}

fn permute(mode: i32, pairs: &[(i64, i64)]) -> Impl {
    Impl::CollectivePermuteStartThunk(CollectivePermuteStartThunkProto {
        buffers: cbuf(4, 4),
        collective_config: cfg(mode, vec![]),
        source_target_pairs: pairs
            .iter()
            .map(|&(source, target)| proto::xla::SourceTarget { source, target })
            .collect(),
    })
}

fn x(d: usize) -> [f32; 4] {
    let b = 10.0 * d as f32;
    [b + 1., b + 2., b + 3., b + 4.]
}

fn sum(ds: &[usize]) -> Vec<f32> {
    (0..4).map(|i| ds.iter().map(|&d| x(d)[i]).sum()).collect()
}

/// Runs on `devices` emulated devices; per device (f32 output, replica id, partition id).
fn run_grid(p: &GpuExecutableProto, devices: usize) -> Vec<(Vec<f32>, u32, u32)> {
    let devs: Vec<Arc<dyn Device>> = (0..devices)
        .map(|_| Arc::new(device()) as Arc<dyn Device>)
        .collect();
    let exe = runtime::load(
        &p.encode_to_vec(),
        devs[0].as_ref(),
        &RuntimeFlags::default(),
    )
    .unwrap();
    assert_eq!(exe.num_devices(), devices as u64);
    let args: Vec<Vec<Vec<u8>>> = (0..devices).map(|d| vec![f32s(&x(d))]).collect();
    exe.execute_replicated(&devs, &args)
        .unwrap()
        .into_iter()
        .map(|r| {
            (
                to_f32s(&r.outputs[0]),
                to_u32s(&r.outputs[1])[0],
                to_u32s(&r.outputs[2])[0],
            )
        })
        .collect()
}

fn outputs(p: &GpuExecutableProto, devices: usize) -> Vec<Vec<f32>> {
    run_grid(p, devices)
        .into_iter()
        .map(|(o, _, _)| o)
        .collect()
}

#[test]
fn every_device_writes_its_replica_and_partition() {
    for (r, p) in [(1, 2), (1, 4), (2, 2), (4, 1)] {
        let a = grid_artifact(r, p, all_reduce(CROSS_REPLICA, vec![]), 4);
        let ids: Vec<(u32, u32)> = run_grid(&a, (r * p) as usize)
            .into_iter()
            .map(|(_, r, p)| (r, p))
            .collect();
        let want: Vec<(u32, u32)> = (0..r * p).map(|d| (d / p, d % p)).collect();
        assert_eq!(ids, want, "{r} x {p}");
    }
}

#[test]
fn cross_partition_all_reduce_sums_the_partitions_of_each_replica() {
    let a = grid_artifact(1, 2, all_reduce(CROSS_PARTITION, vec![]), 4);
    assert_eq!(outputs(&a, 2), vec![sum(&[0, 1]); 2]);
    let a = grid_artifact(2, 2, all_reduce(CROSS_PARTITION, vec![]), 4);
    let (r0, r1) = (sum(&[0, 1]), sum(&[2, 3]));
    assert_eq!(outputs(&a, 4), vec![r0.clone(), r0, r1.clone(), r1]);
    // Groups of partition ids: {0, 2} and {1, 3} on 4 partitions.
    let a = grid_artifact(
        1,
        4,
        all_reduce(CROSS_PARTITION, vec![vec![0, 2], vec![1, 3]]),
        4,
    );
    let (even, odd) = (sum(&[0, 2]), sum(&[1, 3]));
    assert_eq!(outputs(&a, 4), vec![even.clone(), odd.clone(), even, odd]);
}

#[test]
fn cross_replica_all_reduce_sums_one_partition_over_the_replicas() {
    let a = grid_artifact(2, 2, all_reduce(CROSS_REPLICA, vec![vec![0, 1]]), 4);
    let (p0, p1) = (sum(&[0, 2]), sum(&[1, 3]));
    assert_eq!(outputs(&a, 4), vec![p0.clone(), p1.clone(), p0, p1]);
    // One partition: as before partitions existed.
    let a = grid_artifact(2, 1, all_reduce(CROSS_REPLICA, vec![]), 4);
    assert_eq!(outputs(&a, 2), vec![sum(&[0, 1]); 2]);
}

#[test]
fn cross_replica_and_partition_takes_every_partition_of_the_listed_replicas() {
    let a = grid_artifact(2, 2, all_reduce(CROSS_BOTH, vec![vec![0], vec![1]]), 4);
    let (r0, r1) = (sum(&[0, 1]), sum(&[2, 3]));
    assert_eq!(outputs(&a, 4), vec![r0.clone(), r0, r1.clone(), r1]);
    let a = grid_artifact(2, 2, all_reduce(CROSS_BOTH, vec![vec![0, 1]]), 4);
    assert_eq!(outputs(&a, 4), vec![sum(&[0, 1, 2, 3]); 4]);
    let a = grid_artifact(1, 2, all_reduce(CROSS_BOTH, vec![vec![0]]), 4);
    assert_eq!(outputs(&a, 2), vec![sum(&[0, 1]); 2]);
}

#[test]
fn flattened_ids_group_devices_and_order_a_gather() {
    let a = grid_artifact(1, 4, all_reduce(FLATTENED, vec![vec![0, 3], vec![1, 2]]), 4);
    let (outer, inner) = (sum(&[0, 3]), sum(&[1, 2]));
    assert_eq!(
        outputs(&a, 4),
        vec![outer.clone(), inner.clone(), inner, outer]
    );
    // An all-gather places contributions in the group's list order: {3, 0} puts device 3 first.
    let gather = Impl::AllGatherStartThunk(AllGatherStartThunkProto {
        collective_config: cfg(FLATTENED, vec![vec![3, 0], vec![1, 2]]),
        buffers: cbuf(4, 8),
    });
    let a = grid_artifact(2, 2, gather, 8);
    let cat = |a: usize, b: usize| [x(a), x(b)].concat();
    assert_eq!(
        outputs(&a, 4),
        vec![cat(3, 0), cat(1, 2), cat(1, 2), cat(3, 0)]
    );
}

#[test]
fn cross_partition_all_gather_and_reduce_scatter_on_four_partitions() {
    let gather = Impl::AllGatherStartThunk(AllGatherStartThunkProto {
        collective_config: cfg(CROSS_PARTITION, vec![]),
        buffers: cbuf(4, 16),
    });
    let a = grid_artifact(1, 4, gather, 16);
    let all = [x(0), x(1), x(2), x(3)].concat();
    assert_eq!(outputs(&a, 4), vec![all; 4]);
    // Each partition keeps its quarter (one element) of the sum.
    let scatter = Impl::ReduceScatterThunk(ReduceScatterThunkProto {
        collective_config: cfg(CROSS_PARTITION, vec![]),
        buffers: cbuf(4, 1),
        reduction_kind: ReductionKindProto::ReductionKindSum as i32,
    });
    let a = grid_artifact(1, 4, scatter, 1);
    let total = sum(&[0, 1, 2, 3]);
    let want: Vec<Vec<f32>> = (0..4).map(|d| vec![total[d]]).collect();
    assert_eq!(outputs(&a, 4), want);
}

#[test]
fn collective_permute_ring_over_partitions() {
    let a = grid_artifact(
        1,
        4,
        permute(CROSS_PARTITION, &[(0, 1), (1, 2), (2, 3), (3, 0)]),
        4,
    );
    let want: Vec<Vec<f32>> = [3, 0, 1, 2].iter().map(|&s| x(s).to_vec()).collect();
    assert_eq!(outputs(&a, 4), want);
    // The same ring on 2 replicas x 2 partitions stays inside each replica.
    let a = grid_artifact(2, 2, permute(CROSS_PARTITION, &[(0, 1), (1, 0)]), 4);
    let want: Vec<Vec<f32>> = [1, 0, 3, 2].iter().map(|&s| x(s).to_vec()).collect();
    assert_eq!(outputs(&a, 4), want);
}

#[test]
fn collective_permute_pairs_swap_two_partitions() {
    let a = grid_artifact(1, 2, permute(CROSS_PARTITION, &[(0, 1), (1, 0)]), 4);
    assert_eq!(outputs(&a, 2), vec![x(1).to_vec(), x(0).to_vec()]);
}

#[test]
fn collective_permute_leaves_zeros_where_nothing_arrives() {
    // Only 0 -> 2: partitions 0, 1 and 3 receive nothing.
    let a = grid_artifact(1, 4, permute(CROSS_PARTITION, &[(0, 2)]), 4);
    let z = vec![0.0; 4];
    assert_eq!(
        outputs(&a, 4),
        vec![z.clone(), z.clone(), x(0).to_vec(), z.clone()]
    );
    // No pairs at all: every device gets zeros.
    let a = grid_artifact(1, 2, permute(CROSS_PARTITION, &[]), 4);
    assert_eq!(outputs(&a, 2), vec![z.clone(); 2]);
    // A device may send to itself.
    let a = grid_artifact(1, 2, permute(CROSS_PARTITION, &[(1, 1)]), 4);
    assert_eq!(outputs(&a, 2), vec![z, x(1).to_vec()]);
}

#[test]
fn cross_replica_collective_permute_pairs_name_replicas() {
    // On 2 replicas x 2 partitions, replica 0 -> 1 within each partition.
    let a = grid_artifact(2, 2, permute(CROSS_REPLICA, &[(0, 1)]), 4);
    let z = vec![0.0; 4];
    assert_eq!(
        outputs(&a, 4),
        vec![z.clone(), z, x(0).to_vec(), x(1).to_vec()]
    );
    let a = grid_artifact(2, 1, permute(CROSS_REPLICA, &[(0, 1), (1, 0)]), 4);
    assert_eq!(outputs(&a, 2), vec![x(1).to_vec(), x(0).to_vec()]);
}

#[test]
fn collective_permute_thunk_round_trips() {
    let a = grid_artifact(1, 4, permute(CROSS_PARTITION, &[(0, 1), (3, 2)]), 4);
    let d = device();
    let exe = runtime::load(&a.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    assert_eq!(exe.thunk_protos(), a.thunks);
}

fn permute_err(partitions: u32, mode: i32, pairs: &[(i64, i64)]) -> String {
    load_err(&grid_artifact(1, partitions, permute(mode, pairs), 4))
}

const PERMUTE: &str = "INVALID_ARGUMENT: thunks[0].collective_permute_start_thunk";

#[test]
fn permute_source_out_of_range() {
    assert_eq!(
        permute_err(2, CROSS_PARTITION, &[(0, 1), (2, 0)]),
        format!("{PERMUTE}.source_target_pairs[1].source is 2, out of range [0, 2) (the module's num_partitions)")
    );
    assert_eq!(
        permute_err(2, CROSS_REPLICA, &[(0, 1)]),
        format!("{PERMUTE}.source_target_pairs[0].target is 1, out of range [0, 1) (the module's replica_count)")
    );
}

#[test]
fn permute_target_out_of_range() {
    assert_eq!(
        permute_err(2, CROSS_PARTITION, &[(0, -1)]),
        format!("{PERMUTE}.source_target_pairs[0].target is -1, out of range [0, 2) (the module's num_partitions)")
    );
}

#[test]
fn permute_duplicate_source() {
    assert_eq!(
        permute_err(4, CROSS_PARTITION, &[(0, 1), (2, 3), (0, 2)]),
        format!("{PERMUTE}.source_target_pairs[2].source is 0, as is source_target_pairs[0].source; each partition is a source once")
    );
}

#[test]
fn permute_duplicate_target() {
    assert_eq!(
        permute_err(4, CROSS_PARTITION, &[(0, 1), (2, 1)]),
        format!("{PERMUTE}.source_target_pairs[1].target is 1, as is source_target_pairs[0].target; each partition is a target once")
    );
}

#[test]
fn permute_in_a_mode_that_does_not_name_pairs() {
    assert_eq!(
        permute_err(2, CROSS_BOTH, &[(0, 1)]),
        format!("{PERMUTE}.collective_config.group_mode is 3 (CrossReplicaAndPartition); a collective permute's source_target_pairs name replicas (CROSS_REPLICA) or partitions (CROSS_PARTITION)")
    );
    let mut a = grid_artifact(1, 2, permute(0, &[(0, 1)]), 4);
    if let Some(Impl::CollectivePermuteStartThunk(t)) = a.thunks[0].r#impl.as_mut() {
        if let Some(c) = t.collective_config.as_mut() {
            c.group_mode_xyz = Some(FLATTENED);
        }
    }
    assert_eq!(
        load_err(&a),
        format!("{PERMUTE}.collective_config.group_mode_xyz is 4 (FlattenedId); a collective permute's source_target_pairs name replicas (CROSS_REPLICA) or partitions (CROSS_PARTITION)")
    );
}

#[test]
fn permute_with_replica_groups() {
    let mut a = grid_artifact(1, 2, permute(CROSS_PARTITION, &[(0, 1)]), 4);
    if let Some(Impl::CollectivePermuteStartThunk(t)) = a.thunks[0].r#impl.as_mut() {
        t.collective_config = cfg(CROSS_PARTITION, vec![vec![0, 1]]);
    }
    assert_eq!(
        load_err(&a),
        format!("{PERMUTE}.collective_config.replica_groups has 1 groups; a collective permute has none (its source_target_pairs say who sends to whom)")
    );
}

#[test]
fn group_ids_are_bounded_by_the_mode_space() {
    let err = |r, p, mode, groups| load_err(&grid_artifact(r, p, all_reduce(mode, groups), 4));
    const AR: &str = "INVALID_ARGUMENT: thunks[0].all_reduce_start_thunk.collective_config";
    assert_eq!(
        err(2, 2, CROSS_PARTITION, vec![vec![0, 2]]),
        format!("{AR}.replica_groups[0].replica_ids[1] is 2, out of range [0, 2) (the module's num_partitions)")
    );
    assert_eq!(
        err(1, 2, CROSS_BOTH, vec![vec![0, 1]]),
        format!("{AR}.replica_groups[0].replica_ids[1] is 1, out of range [0, 1) (the module's replica_count)")
    );
    assert_eq!(
        err(2, 2, FLATTENED, vec![vec![0, 4]]),
        format!("{AR}.replica_groups[0].replica_ids[1] is 4, out of range [0, 4) (the module's replica_count * num_partitions)")
    );
    assert_eq!(
        err(2, 2, FLATTENED, vec![vec![0, 1], vec![1, 2]]),
        format!(
            "{AR}.replica_groups[1].replica_ids[0] is 1, which already appears in an earlier group"
        )
    );
    assert_eq!(
        err(1, 4, FLATTENED, vec![vec![0, 1], vec![3]]),
        format!("{AR}.replica_groups[1] has 1 devices, replica_groups[0] has 2; groups must have equal sizes")
    );
    assert_eq!(
        err(1, 4, CROSS_PARTITION, vec![vec![0, 1]]),
        format!("{AR}.replica_groups: partition 2 is in no group (num_partitions is 4)")
    );
    assert_eq!(
        err(1, 4, FLATTENED, vec![vec![0, 1]]),
        format!(
            "{AR}.replica_groups: device 2 is in no group (replica_count * num_partitions is 4)"
        )
    );
}

#[test]
fn a_partitioned_executable_wants_every_device() {
    let a = grid_artifact(1, 2, all_reduce(CROSS_PARTITION, vec![]), 4);
    let d = device();
    let exe = runtime::load(&a.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let one: Vec<u8> = f32s(&x(0));
    assert_eq!(
        exe.execute(&d, &[&one]).unwrap_err().to_string(),
        "INVALID_ARGUMENT: the executable has num_partitions 2; use execute_replicated"
    );
    let a = grid_artifact(2, 2, all_reduce(CROSS_PARTITION, vec![]), 4);
    let exe = runtime::load(&a.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let devs: Vec<Arc<dyn Device>> = vec![Arc::new(device()), Arc::new(device())];
    assert_eq!(
        exe.execute_replicated(&devs, &[vec![one.clone()], vec![one]])
            .unwrap_err()
            .to_string(),
        "INVALID_ARGUMENT: 2 devices given, the executable runs on 4 (replica_count 2 x num_partitions 2)"
    );
}

#[test]
fn a_failing_device_reports_its_own_error() {
    let a = grid_artifact(1, 2, all_reduce(CROSS_PARTITION, vec![]), 4);
    let devs: Vec<Arc<dyn Device>> = vec![Arc::new(device()), Arc::new(device())];
    let exe = runtime::load(
        &a.encode_to_vec(),
        devs[0].as_ref(),
        &RuntimeFlags::default(),
    )
    .unwrap();
    // Device 1's argument has the wrong size: the error is its own, not "another failed".
    let e = exe
        .execute_replicated(&devs, &[vec![f32s(&x(0))], vec![f32s(&[1.0])]])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT: argument 0 (parameter 0 [], f32[4]) is 4 bytes, expected 16"
    );
}
