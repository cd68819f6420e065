//! Per-device programs of several partitions (issue 30), compiled and run end to end on emulated
//! devices in every form the staged rollout allows: the default (N partitions of one replica as
//! N replicas, collective-permute as an all-gather, dynamic-slices and a select: what runtimes
//! before 2026-12-04 run), and with `CompileOptions::emit_partitions` and / or
//! `emit_collective_permute` (`num_partitions` in the artifact, `partition_id_thunk` reading the
//! device's partition, `collective_permute_start_thunk`). Every form must give the hand-worked
//! outputs of `goldens/cases/partition_*`.
use std::collections::BTreeSet;

use harness::census_of;
use harness::run_artifact;
use harness::{curated_cases, repo_root, Case};
use hlo_eval::IoCase;
use proto::prost::Message;

const PERMUTE_THUNK: &str = "xla.gpu.ThunkProto.collective_permute_start_thunk";

fn case(name: &str) -> Case {
    curated_cases()
        .unwrap()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no case {name}"))
}

fn options(partitions: bool, permute: bool) -> compiler::CompileOptions {
    let mut o = compiler::CompileOptions::default();
    o.emit_partitions = partitions;
    o.emit_collective_permute = permute;
    o
}

fn target(name: &str) -> compiler::Target {
    compiler::Target::load(&repo_root().join(format!("testdata/target_specs/{name}.txtpb")))
        .unwrap()
}

fn description(name: &str) -> runtime::DeviceDescription {
    let path = repo_root().join(format!("testdata/target_specs/{name}.txtpb"));
    let config = proto::load_target_config(&path).unwrap();
    runtime::DeviceDescription::from_target_config(&config).unwrap()
}

fn compile_text(text: &str, o: &compiler::CompileOptions) -> Vec<u8> {
    let module = hlo_text::parse_module(text).unwrap();
    compiler::compile_to_bytes(&module, &target("h100_sxm"), o).unwrap()
}

/// Compiles `case` with `o`, runs it on one emulated device per io file and checks every output
/// bit for bit against the case's; returns the artifact's census.
fn run_case(c: &Case, o: &compiler::CompileOptions) -> BTreeSet<String> {
    let module = hlo_front::read_module(&c.module).unwrap();
    let bytes = compiler::compile_to_bytes(&module, &target("h100_sxm"), o).unwrap();
    let want: Vec<IoCase> = c.io.iter().map(|p| IoCase::read(p).unwrap()).collect();
    let got = run_artifact(&bytes, &description("h100_sxm"), &want).unwrap();
    for (d, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.outputs, w.outputs, "{} device {d} with {o:?}", c.name);
    }
    census(&bytes)
}

fn census(bytes: &[u8]) -> BTreeSet<String> {
    census_of(&proto::xla::gpu::GpuExecutableProto::decode(bytes).unwrap())
}

/// The embedded module's (replica_count, num_partitions) as the artifact records them.
fn embedded_counts(bytes: &[u8]) -> (i64, i64) {
    let exe = proto::xla::gpu::GpuExecutableProto::decode(bytes).unwrap();
    let config = exe
        .hlo_module_with_config
        .and_then(|h| h.config)
        .expect("config");
    (config.replica_count, config.num_partitions)
}

#[test]
fn every_form_of_the_permute_case_computes_the_same() {
    let c = case("partition_permute");
    assert_eq!(c.io.len(), 4);
    for (partitions, permute) in [(false, false), (true, false), (false, true), (true, true)] {
        let census = run_case(&c, &options(partitions, permute));
        assert_eq!(
            census.contains(PERMUTE_THUNK),
            permute,
            "partitions {partitions} permute {permute}"
        );
    }
}

#[test]
fn every_form_of_the_collectives_case_computes_the_same() {
    let c = case("partition_collectives");
    for partitions in [false, true] {
        let census = run_case(&c, &options(partitions, false));
        assert!(census.contains("xla.gpu.ThunkProto.all_reduce_start_thunk"));
        assert_eq!(
            census.contains("xla.gpu.ThunkProto.partition_id_thunk"),
            partitions
        );
    }
}

#[test]
fn the_default_form_is_a_replica_program_older_runtimes_load() {
    let text = std::fs::read_to_string(case("partition_permute").module).unwrap();
    let bytes = compile_text(&text, &compiler::CompileOptions::default());
    assert_eq!(embedded_counts(&bytes), (4, 0));
    let census = census(&bytes);
    assert!(!census.contains(PERMUTE_THUNK));
    assert!(census.contains("xla.gpu.ThunkProto.all_gather_start_thunk"));
    let native = compile_text(&text, &options(true, true));
    assert_eq!(embedded_counts(&native), (0, 4));
}

/// 2 replicas x 2 partitions, device d = 2r + p given x_d = [d, 10d]: `ar` sums one partition
/// over the replicas (x_p + x_{2+p}: [2, 20] for partition 0, [4, 40] for partition 1); `perm`
/// swaps the partitions of each replica (x_{2r + 1 - p}).
const GRID: &str = "HloModule grid, replica_count=2, num_partitions=2\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[2] parameter(0)\n  ar = f32[2] all-reduce(x), replica_groups={{0,1}}, to_apply=add\n  perm = f32[2] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,0}}\n  rid = u32[] replica-id()\n  pid = u32[] partition-id()\n  ROOT t = (f32[2], f32[2], u32[], u32[]) tuple(ar, perm, rid, pid)\n}\n";

#[test]
fn replicas_and_partitions_together_need_emit_partitions() {
    let module = hlo_text::parse_module(GRID).unwrap();
    let e = compiler::compile(&module, &target("h100_sxm"), &options(false, true)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the module runs on 2 replicas x 2 partitions; until CompileOptions::emit_partitions is on (2026-12-18 at the earliest) a program of several partitions is emitted as replicas, which needs replica_count 1"
    );
    let x =
        |d: u32| hlo::Array::new(vec![2], hlo::Data::F32(vec![d as f32, 10.0 * d as f32])).unwrap();
    for permute in [false, true] {
        let bytes = compile_text(GRID, &options(true, permute));
        let cases: Vec<IoCase> = (0..4)
            .map(|d| IoCase {
                inputs: vec![x(d)],
                outputs: vec![],
            })
            .collect();
        let got = run_artifact(&bytes, &description("h100_sxm"), &cases).unwrap();
        for (d, case) in got.iter().enumerate() {
            let (r, p) = (d as u32 / 2, d as u32 % 2);
            let sum = [2.0 + 2.0 * p as f32, 20.0 + 20.0 * p as f32];
            let swapped = 2 * r + 1 - p;
            let f = |i: usize| case.outputs[i].data().to_f64_vec();
            assert_eq!(f(0), sum.map(f64::from), "device {d} ar");
            assert_eq!(
                f(1),
                [swapped as f64, 10.0 * swapped as f64],
                "device {d} perm"
            );
            assert_eq!((f(2), f(3)), (vec![r as f64], vec![p as f64]), "device {d}");
        }
    }
}

/// `aot run` of the native form: one io file per device, verdicts per device, `--partitions`
/// checked against the executable's, and `--write-outputs` per device (`.deviceD`).
#[test]
fn aot_run_takes_one_io_file_per_device() {
    let c = case("partition_permute");
    let dir = std::env::temp_dir().join(format!("aot-partitions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let artifact = dir.join("permute.pb");
    let text = std::fs::read_to_string(&c.module).unwrap();
    std::fs::write(&artifact, compile_text(&text, &options(true, true))).unwrap();
    let run = |partitions: Option<usize>| {
        let args = harness::cmd::run::RunArgs {
            partitions,
            write_outputs: Some(dir.join("out.io.json")),
            ..harness::cmd::run::RunArgs::new(
                artifact.clone(),
                repo_root().join("testdata/target_specs/h100_sxm.txtpb"),
                c.io.clone(),
            )
        };
        let mut out = Vec::new();
        let r = harness::cmd::run::run(&args, &mut out).map_err(|e| format!("{e:#}"));
        (r, String::from_utf8_lossy(&out).into_owned())
    };
    let (r, out) = run(Some(4));
    assert_eq!(r, Ok(0), "{out}");
    assert!(out.contains("device 3 output 2 f32[4]: OK"), "{out}");
    assert!(out.ends_with("OK: 12 of 12 outputs match\n"), "{out}");
    let written = IoCase::read(&dir.join("out.device2.io.json")).unwrap();
    assert_eq!(written.outputs, IoCase::read(&c.io[2]).unwrap().outputs);
    let (r, _) = run(Some(2));
    assert_eq!(
        r.unwrap_err(),
        format!(
            "{}: --partitions 2, but the executable's num_partitions is 4",
            artifact.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
