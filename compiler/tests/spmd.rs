//! The SPMD partitioner against JAX's own per-device program: JAX 0.10.2's Shardy export of a
//! `shard_map` over two devices (`testdata/stablehlo/collectives.mlir`), partitioned, holds the
//! collectives of the manual computation's body as JAX's per-device export writes them
//! (`collectives_per_device.mlir`): the same ops, replica groups, channel ids and
//! `use_global_device_ids`, and per-device parameter shapes.
use std::path::Path;

use hlo::{HloModule, Opcode};

fn read(name: &str) -> HloModule {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/stablehlo")
        .join(name);
    let text = std::fs::read_to_string(path).expect("reads");
    hlo_front::parse_stablehlo(&text).expect("parses")
}

/// Each collective of the entry: opcode, replica groups, channel id, global ids, dimensions.
fn collectives(m: &HloModule) -> Vec<String> {
    let mut out: Vec<String> = m
        .entry_computation()
        .instructions
        .iter()
        .filter(|i| {
            matches!(
                i.opcode,
                Opcode::AllReduce
                    | Opcode::AllGather
                    | Opcode::ReduceScatter
                    | Opcode::AllToAll
                    | Opcode::CollectivePermute
            )
        })
        .map(|i| {
            let a = &i.attrs;
            format!(
                "{} {:?} channel={:?} global={:?} dims={:?} pairs={:?} shape={}",
                i.opcode,
                a.replica_groups,
                a.channel_id,
                a.use_global_device_ids,
                a.dimensions,
                a.raw("source_target_pairs"),
                i.shape.without_layout()
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_shard_map_partitions_into_jax_per_device_program() {
    let mut global = read("collectives.mlir");
    compiler::partition_spmd(&mut global).expect("partitions");
    hlo_verify::verify(&global).expect("the per-device program verifies");
    let mut per_device = read("collectives_per_device.mlir");
    compiler::inline_calls(&mut per_device).expect("inlines");
    assert_eq!(global.config.num_partitions, Some(2));
    let got = collectives(&global);
    assert!(!got.is_empty());
    assert_eq!(got, collectives(&per_device));
    assert_eq!(
        global.entry_computation().param_shapes(),
        per_device.entry_computation().param_shapes()
    );
}
