//! A module written for several devices is partitioned before any pass into one device's
//! program (`compiler/src/passes/spmd/`): what JAX 0.10.2 prints for a sharded `jit` over a
//! 2-device mesh compiles with per-device shapes and `num_partitions`, and what cannot be
//! partitioned is refused naming the instruction. A one-device mesh compiles as before.
mod common;
use common::{options, target};

fn compile(text: &str) -> Result<proto::xla::gpu::GpuExecutableProto, String> {
    let module = hlo_text::parse_module(text).expect("parse");
    compiler::compile(&module, &target("h100_sxm"), &options()).map_err(|e| e.to_string())
}

/// The header JAX 0.10.2 prints for a program over a mesh of `size` devices.
fn header(size: u32) -> String {
    format!("HloModule m, frontend_attributes={{xla.sdy.meshes={{mesh = #sdy.mesh<[\"x\"={size}]>}}}}\n\n")
}

/// The embedded module's device count (partitions, or replicas while
/// `CompileOptions::emit_partitions` is off: passes/partitions.rs) and entry parameter shapes.
fn embedded(exe: &proto::xla::gpu::GpuExecutableProto) -> (Option<i64>, Vec<String>) {
    let with_config = exe.hlo_module_with_config.clone().expect("embedded module");
    let m = hlo::from_proto(&with_config).expect("embedded module reads");
    let shapes = m
        .entry_computation()
        .param_shapes()
        .iter()
        .map(|s| s.without_layout().to_string())
        .collect();
    let devices = match (m.config.num_partitions, m.config.replica_count) {
        (Some(p), _) if p > 1 => Some(p),
        (_, r) => r,
    };
    (devices, shapes)
}

#[test]
fn a_replicated_program_over_two_devices_runs_whole_on_each() {
    let text = header(2) + "ENTRY e {\n  a = f32[8] parameter(0), sharding={replicated}\n  ROOT s = f32[8] sine(a)\n}\n";
    let exe = compile(&text).expect("compiles");
    assert_eq!(embedded(&exe), (Some(2), vec!["f32[8]".to_string()]));
}

#[test]
fn a_shard_map_call_without_a_mesh_is_refused() {
    let body = "ENTRY e {\n  a = f32[8] parameter(0)\n  l = f32[4] custom-call(a), custom_call_target=\"xla.sdy.GlobalToLocalShape\", custom_call_has_side_effect=true\n  ROOT s = f32[4] sine(l)\n}\n";
    let text = &format!("HloModule m\n\n{body}");
    assert_eq!(
        compile(text).unwrap_err(),
        "the module is partitioned for several devices (e/l: a Shardy manual computation (xla.sdy.GlobalToLocalShape)) but names no partition count (num_partitions, a Shardy mesh or a tiled sharding): export it with its mesh, or give the per-device program"
    );
    // With its mesh, the missing attributes are named.
    assert_eq!(
        compile(&(header(2) + body)).unwrap_err(),
        "unsupported: l (custom-call) in e: no xla.sdy.manual_axes attribute"
    );
}

#[test]
fn a_tiled_value_compiles_as_its_shard_and_a_replicated_one_as_before() {
    let text = "HloModule m\n\nENTRY e {\n  a = f32[8] parameter(0), sharding={devices=[2]<=[2]}\n  ROOT s = f32[8] sine(a), sharding={devices=[2]<=[2]}\n}\n";
    let exe = compile(text).expect("compiles");
    assert_eq!(embedded(&exe), (Some(2), vec!["f32[4]".to_string()]));
    let one = header(1)
        + "ENTRY e {\n  a = f32[8] parameter(0), sharding={replicated}\n  ROOT s = f32[8] sine(a)\n}\n";
    let exe = compile(&one).expect("one device compiles");
    assert_eq!(embedded(&exe).1, vec!["f32[8]".to_string()]);
}

#[test]
fn what_cannot_be_partitioned_is_refused_naming_it() {
    let text = "HloModule m\n\nENTRY e {\n  a = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}\n  ROOT t = f32[4,8] transpose(a), dimensions={1,0}\n}\n";
    assert_eq!(
        compile(text).unwrap_err(),
        "unsupported: t (transpose) in e: SPMD partitioning: transpose with operands sharded {devices=[2,1]<=[2]} is not partitioned (docs/sharding.md lists what is)"
    );
    let uneven = "HloModule m\n\nENTRY e {\n  a = f32[5] parameter(0), sharding={devices=[2]<=[2]}\n  ROOT s = f32[5] sine(a)\n}\n";
    assert_eq!(
        compile(uneven).unwrap_err(),
        "unsupported: a (parameter) in e: SPMD partitioning: dimension of size 5 split in 2 does not divide evenly (XLA pads; this partitioner does not)"
    );
    let partly_manual = "HloModule m\n\nENTRY e {\n  a = f32[8] parameter(0), sharding={devices=[2,2]<=[4] last_tile_dims={manual}}\n  ROOT s = f32[8] sine(a)\n}\n";
    assert_eq!(
        compile(partly_manual).unwrap_err(),
        "unsupported: a (parameter) in e: SPMD partitioning: sharding {devices=[2,2]<=[4] last_tile_dims={manual}}: a manual subgroup (a partly manual value) cannot be partitioned (on a)"
    );
}
