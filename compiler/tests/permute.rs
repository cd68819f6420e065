//! Partitions and collective-permute (issue 30) in both staged-rollout forms: the default (N
//! partitions of one replica as N replicas, collective-permute as an all-gather, dynamic-slices
//! and a select) and the native one (`emit_partitions`, `emit_collective_permute`), checked on
//! the artifact's thunks and embedded module; each refusal with its exact message. (Execution
//! of both forms on the runtime: harness/tests/partitions.rs.)
mod common;
use common::{all_thunks, options, target};
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::{CollectiveOpGroupModeProto as Mode, GpuExecutableProto};

fn module(partitions: u32, body: &str) -> hlo::HloModule {
    let text = format!(
        "HloModule m, num_partitions={partitions}\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}}\n\nENTRY e {{\n  x = f32[4] parameter(0)\n{body}}}\n"
    );
    hlo_text::parse_module(&text).expect("parse")
}

fn compile(m: &hlo::HloModule, partitions: bool, permute: bool) -> GpuExecutableProto {
    let mut o = options();
    o.emit_partitions = partitions;
    o.emit_collective_permute = permute;
    compiler::compile(m, &target("h100_sxm"), &o).unwrap_or_else(|e| panic!("{e}"))
}

fn error(m: &hlo::HloModule, permute: bool) -> String {
    let mut o = options();
    o.emit_collective_permute = permute;
    match compiler::compile(m, &target("h100_sxm"), &o) {
        Ok(_) => panic!("compiled"),
        Err(e) => e.to_string(),
    }
}

fn embedded(exe: &GpuExecutableProto) -> hlo::HloModule {
    hlo::from_proto(exe.hlo_module_with_config.as_ref().expect("module")).expect("module")
}

fn kinds(exe: &GpuExecutableProto) -> Vec<&'static str> {
    all_thunks(exe)
        .iter()
        .filter_map(|t| match &t.r#impl {
            Some(Impl::CollectivePermuteStartThunk(_)) => Some("permute"),
            Some(Impl::AllGatherStartThunk(_)) => Some("all-gather"),
            Some(Impl::PartitionIdThunk(_)) => Some("partition-id"),
            Some(Impl::ReplicaIdThunk(_)) => Some("replica-id"),
            _ => None,
        })
        .collect()
}

const RING: &str = "  p = f32[4] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,0}}\n  id = u32[] partition-id()\n  ROOT t = (f32[4], u32[]) tuple(p, id)\n";

#[test]
fn by_default_partitions_become_replicas_and_the_permute_an_all_gather() {
    let exe = compile(&module(2, RING), false, false);
    let m = embedded(&exe);
    assert_eq!(
        (m.config.replica_count, m.config.num_partitions),
        (Some(2), None)
    );
    // The embedded module keeps the permute (now over replicas) and reads the replica id.
    let entry = m.get(m.entry).expect("entry");
    let ops: Vec<_> = entry.instructions.iter().map(|i| i.opcode.name()).collect();
    assert!(ops.contains(&"collective-permute") && ops.contains(&"replica-id"));
    assert!(!ops.contains(&"partition-id"));
    let p = entry
        .instructions
        .iter()
        .find(|i| i.name == "p")
        .expect("p");
    assert_eq!(p.attrs.channel_id, None);
    assert_eq!(p.attrs.raw("source_target_pairs"), Some("{{0,1},{1,0}}"));
    // The thunks: a gather of both operands, and the id read twice (the permute's own lookup
    // and the program's), both as replica ids.
    let k = kinds(&exe);
    assert!(
        k.contains(&"all-gather") && !k.contains(&"permute"),
        "{k:?}"
    );
    assert!(!k.contains(&"partition-id"), "{k:?}");
}

#[test]
fn with_the_options_the_permute_is_a_cross_partition_thunk() {
    let exe = compile(&module(2, RING), true, true);
    let m = embedded(&exe);
    assert_eq!(m.config.num_partitions, Some(2));
    let permutes: Vec<_> = all_thunks(&exe)
        .into_iter()
        .filter_map(|t| match &t.r#impl {
            Some(Impl::CollectivePermuteStartThunk(p)) => Some(p.clone()),
            _ => None,
        })
        .collect();
    let [p] = permutes.as_slice() else {
        panic!("{} permute thunks", permutes.len())
    };
    let pairs: Vec<(i64, i64)> = p
        .source_target_pairs
        .iter()
        .map(|s| (s.source, s.target))
        .collect();
    assert_eq!(pairs, [(0, 1), (1, 0)]);
    let config = p.collective_config.as_ref().expect("config");
    assert_eq!(
        config.group_mode,
        Mode::CollectiveOpGroupModeCrossPartition as i32
    );
    assert_eq!(config.op_id, 1);
    assert_eq!(kinds(&exe), ["permute", "partition-id"]);
}

#[test]
fn a_permute_without_a_channel_id_names_replicas() {
    let body = "  ROOT p = f32[4] collective-permute(x), source_target_pairs={{0,0}}\n";
    let exe = compile(&module(1, body), false, true);
    let modes: Vec<i32> = all_thunks(&exe)
        .iter()
        .filter_map(|t| match &t.r#impl {
            Some(Impl::CollectivePermuteStartThunk(p)) => {
                p.collective_config.as_ref().map(|c| c.group_mode)
            }
            _ => None,
        })
        .collect();
    assert_eq!(modes, [Mode::CollectiveOpGroupModeCrossReplica as i32]);
    // As replicas of a 4-partition program, (0,0) over the one replica is every device's own.
    let exe = compile(&module(4, body), false, false);
    let m = embedded(&exe);
    let entry = m.get(m.entry).expect("entry");
    let p = entry
        .instructions
        .iter()
        .find(|i| i.name == "p")
        .expect("p");
    assert_eq!(
        p.attrs.raw("source_target_pairs"),
        Some("{{0,0},{1,1},{2,2},{3,3}}")
    );
}

#[test]
fn collectives_over_partitions_become_groups_of_replicas() {
    let body = "  a = f32[4] all-reduce(x), channel_id=1, replica_groups={{0}}, to_apply=add\n  b = f32[4] all-reduce(x), replica_groups={}, to_apply=add\n  c = f32[4] all-reduce(x), channel_id=2, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add\n  ROOT t = (f32[4], f32[4], f32[4]) tuple(a, b, c)\n";
    let exe = compile(&module(4, body), false, false);
    let m = embedded(&exe);
    let entry = m.get(m.entry).expect("entry");
    let groups = |name: &str| {
        let i = entry
            .instructions
            .iter()
            .find(|i| i.name == name)
            .expect(name);
        assert_eq!(
            (i.attrs.channel_id, i.attrs.use_global_device_ids),
            (None, None)
        );
        match &i.attrs.replica_groups {
            Some(hlo::ReplicaGroups::List(l)) => l.clone(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(groups("a"), [vec![0, 1, 2, 3]]);
    assert_eq!(groups("b"), [vec![0], vec![1], vec![2], vec![3]]);
    assert_eq!(groups("c"), [vec![0, 2], vec![1, 3]]);
}

const WHERE: &str = "unsupported: p (collective-permute) in e";

#[test]
fn a_pair_out_of_range_is_refused() {
    let body =
        "  ROOT p = f32[4] collective-permute(x), channel_id=1, source_target_pairs={{0,2}}\n";
    for permute in [false, true] {
        assert_eq!(
            error(&module(2, body), permute),
            format!("{WHERE}: source_target_pairs has {{0,2}}, outside the 2 sources and 2 targets of its partitions")
        );
    }
}

#[test]
fn a_repeated_target_is_refused() {
    let body = "  ROOT p = f32[4] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{2,1}}\n";
    assert_eq!(
        error(&module(4, body), true),
        format!(
            "{WHERE}: source_target_pairs has {{2,1}}: a device is a source once and a target once"
        )
    );
}

#[test]
fn malformed_pairs_are_refused() {
    let body = "  ROOT p = f32[4] collective-permute(x), channel_id=1, source_target_pairs={{0}}\n";
    assert_eq!(
        error(&module(2, body), true),
        format!("{WHERE}: source_target_pairs={{{{0}}}} is not {{{{s,t}},...}}")
    );
}

#[test]
fn iota_groups_cannot_become_replicas() {
    let body = "  ROOT a = f32[4] all-reduce(x), channel_id=1, replica_groups=[1,2]<=[2], use_global_device_ids=true, to_apply=add\n";
    assert_eq!(
        error(&module(2, body), false),
        "unsupported: a (all-reduce) in e: iota replica groups [1,2]<=[2]"
    );
}
