//! A module written for several devices is refused before any pass, with the evidence
//! (`compiler/src/partitioned.rs`): what JAX 0.10.2 prints for a `shard_map` and for a sharded
//! `jit` over a 2-device mesh, and a GSPMD-tiled value. A one-device mesh compiles.
mod common;
use common::{options, target};

fn compile_error(text: &str) -> String {
    let module = hlo::parse_module(text).expect("parse");
    match compiler::compile(&module, &target("h100_sxm"), &options()) {
        Ok(_) => panic!("compiled:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const WHY: &str = "this compiler does not partition SPMD programs: export it for one device, or give the per-device program";

/// The header JAX 0.10.2 prints for a program over a mesh of `size` devices.
fn header(size: u32) -> String {
    format!("HloModule m, frontend_attributes={{xla.sdy.meshes={{mesh = #sdy.mesh<[\"x\"={size}]>}}}}\n\n")
}

#[test]
fn a_shardy_mesh_of_two_devices_is_refused() {
    let text = header(2) + "ENTRY e {\n  a = f32[8] parameter(0)\n  ROOT s = f32[8] sine(a)\n}\n";
    assert_eq!(
        compile_error(&text),
        format!("the module is partitioned for several devices (the Shardy mesh {{mesh = #sdy.mesh<[\"x\"=2]>}}); {WHY}")
    );
}

#[test]
fn a_shard_map_body_is_refused_by_its_call() {
    let text = "HloModule m\n\nENTRY e {\n  a = f32[8] parameter(0)\n  l = f32[4] custom-call(a), custom_call_target=\"xla.sdy.GlobalToLocalShape\", custom_call_has_side_effect=true\n  ROOT s = f32[4] sine(l)\n}\n";
    assert_eq!(
        compile_error(text),
        format!("the module is partitioned for several devices (e/l: a Shardy manual computation (xla.sdy.GlobalToLocalShape)); {WHY}")
    );
}

#[test]
fn a_tiled_sharding_is_refused_and_a_replicated_one_compiles() {
    let text = "HloModule m\n\nENTRY e {\n  a = f32[8] parameter(0), sharding={devices=[2]<=[2]}\n  ROOT s = f32[8] sine(a)\n}\n";
    assert_eq!(
        compile_error(text),
        format!("the module is partitioned for several devices (e/a: sharding={{devices=[2]<=[2]}}); {WHY}")
    );
    let one = header(1)
        + "ENTRY e {\n  a = f32[8] parameter(0), sharding={replicated}\n  ROOT s = f32[8] sine(a)\n}\n";
    let module = hlo::parse_module(&one).expect("parse");
    compiler::compile(&module, &target("h100_sxm"), &options()).expect("one device compiles");
}
