//! Serialized `Exported`s: JAX's serialization back-compat artifacts
//! (`testdata/jax_exported/backcompat/`, serialization versions 4 to 11) read as JAX's own
//! deserializer reads them (`cases.json` `jax_reads`); their modules (StableHLO 1.13) convert to
//! text and to modules for the two devices they are partitioned over, with the shardings JAX's
//! test asserts (harness/tests/multidevice.rs runs them). Bad bytes are typed errors.

use std::path::{Path, PathBuf};

use hlo_front::{read_exported, to_stablehlo_text, Dim, ExportedError};
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/jax_exported/backcompat")
}

fn jax_dtype(name: &str) -> &str {
    match name {
        "float32" => "f32",
        "float64" => "f64",
        "int32" => "i32",
        other => other,
    }
}

#[test]
fn backcompat_artifacts_read_as_jax_reads_them() {
    let cases: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("cases.json")).unwrap()).unwrap();
    let cases = cases.as_array().unwrap();
    assert_eq!(cases.len(), 17);
    let mut layouts = Vec::new();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let bytes = std::fs::read(dir().join(format!("{name}.jax_exported"))).unwrap();
        let e = read_exported(&bytes).unwrap_or_else(|err| panic!("{name}: {err}"));
        let want = &c["jax_reads"];
        assert_eq!(
            e.function_name,
            want["function_name"].as_str().unwrap(),
            "{name}"
        );
        assert_eq!(
            u64::from(e.nr_devices),
            want["nr_devices"].as_u64().unwrap(),
            "{name}"
        );
        let platforms: Vec<&str> = want["platforms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        assert_eq!(e.platforms, platforms, "{name}");
        let kept: Vec<u16> = want["module_kept_var_idx"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_u64().unwrap() as u16)
            .collect();
        assert_eq!(e.module_kept_var_idx, kept, "{name}");
        assert_eq!(
            u64::from(e.calling_convention_version),
            want["calling_convention_version"].as_u64().unwrap(),
            "{name}"
        );
        for (what, got) in [("in_avals", &e.in_avals), ("out_avals", &e.out_avals)] {
            let w = want[what].as_array().unwrap();
            assert_eq!(got.len(), w.len(), "{name} {what}");
            for (g, w) in got.iter().zip(w) {
                let shape: Vec<Dim> = w["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| Dim::Fixed(d.as_u64().unwrap()))
                    .collect();
                assert_eq!(g.shape, shape, "{name} {what}");
                assert_eq!(
                    g.dtype.names().0,
                    jax_dtype(w["dtype"].as_str().unwrap()),
                    "{name} {what}"
                );
            }
        }
        // JAX's HloSharding strings: `{replicated}` exactly when ours is replicated.
        for (got, w) in e.in_shardings.iter().chain(&e.out_shardings).zip(
            want["in_shardings_hlo"]
                .as_array()
                .unwrap()
                .iter()
                .chain(want["out_shardings_hlo"].as_array().unwrap()),
        ) {
            let w = w.as_str().unwrap();
            if w != "None" {
                assert_eq!(
                    got.is_replicated(),
                    w == "{replicated}",
                    "{name}: {got} vs {w}"
                );
            }
        }
        // The embedded module (StableHLO 1.13.x) converts to text.
        let text =
            to_stablehlo_text(&e.mlir_module).unwrap_or_else(|err| panic!("{name}: module: {err}"));
        assert!(text.contains("func.func"), "{name}");
        // Two devices: the module is for 2 (harness/tests/multidevice.rs runs it); a calling
        // convention that disagrees with the module is refused naming the field.
        let module = e.module().unwrap_or_else(|err| panic!("{name}: {err}"));
        let config = &module.config;
        let devices = config.replica_count.unwrap_or(1) * config.num_partitions.unwrap_or(1);
        assert_eq!(devices, 2, "{name}");
        let mut four = e.clone();
        four.nr_devices = 4;
        assert_eq!(
            four.module().unwrap_err(),
            ExportedError::Unsupported {
                field: "nr_devices".into(),
                message: "4 devices, but the module is for 2 (num_replicas x num_partitions)"
                    .into()
            },
            "{name}"
        );
        let described = e.describe();
        assert!(described.contains("nr_devices: 2"), "{name}: {described}");
        layouts.push((
            name.to_string(),
            e.layout_version,
            c["serialization_version"].as_u64().unwrap(),
        ));
    }
    // The layout detected is a lower bound of the version that wrote it.
    for (name, layout, version) in layouts {
        assert!(
            u64::from(layout) <= version,
            "{name}: layout {layout} > version {version}"
        );
    }
}

#[test]
fn truncated_and_flipped_buffers_are_errors_not_panics() {
    let bytes =
        std::fs::read(dir().join("export_with_specified_sharding__v11.jax_exported")).unwrap();
    for n in 0..bytes.len() {
        let _ = read_exported(&bytes[..n]);
    }
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xFF] {
            let mut b = bytes.clone();
            b[i] ^= flip;
            if let Ok(e) = read_exported(&b) {
                let _ = e.module();
                let _ = e.describe();
            }
        }
    }
    assert!(matches!(
        read_exported(&[1, 2]),
        Err(ExportedError::Malformed(_))
    ));
}

#[test]
fn module_files_pick_the_reader_by_extension() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/jax_exported/models");
    // The Exported's module takes all three inputs (the middle one unused, restored); the bare
    // module takes the two it kept.
    let full = hlo_front::read_module(&models.join("unused_input.jax_exported")).unwrap();
    assert_eq!(full.entry_computation().params.len(), 3);
    let bare = hlo_front::read_module(&models.join("unused_input.mlirbc")).unwrap();
    assert_eq!(bare.entry_computation().params.len(), 2);
    let text = hlo_front::read_module(&models.join("unused_input.mlir")).unwrap();
    assert_eq!(hlo_text::print_module(&bare), hlo_text::print_module(&text));
    // Two platforms: the platform index is fixed, not a parameter.
    let multi = hlo_front::read_module(&models.join("multi_platform.jax_exported")).unwrap();
    assert_eq!(multi.entry_computation().params.len(), 1);
    // Content checked against the extension.
    let bytes = std::fs::read(models.join("unused_input.mlirbc")).unwrap();
    let e = hlo_front::parse_as(
        hlo_front::Format::JaxExported,
        &bytes,
        Path::new("m.jax_exported"),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "m.jax_exported: expected a serialized JAX Exported (from the extension), found MLIR bytecode: name the file .mlirbc to read it as a StableHLO portable artifact (MLIR bytecode)"
    );
}

/// JAX's test asserts where each device's shard of the output lies
/// (`out.addressable_shards[d].index`): with `out_shardings` `P(None, "x")` device 0 holds the
/// first two columns, without them (the output follows the input, `P("x", None)`) the first 8
/// rows. The module converted from every serialization version must say the same: its entry
/// parameter split by rows, its result by columns, or left to the partitioner. Shardings lost or misread in
/// conversion would run the program with other shards than JAX's caller passes.
#[test]
fn serialized_shardings_reach_the_module_as_jax_places_the_shards() {
    let mut seen = 0;
    for entry in std::fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".jax_exported") {
            continue;
        }
        // Unspecified: the module leaves the result to the partitioner, which places it where
        // its operand is (rows; harness/tests/multidevice.rs checks that placement).
        let result = if name.starts_with("export_with_specified_sharding") {
            Some("{devices=[1,2]<=[2]}")
        } else if name.starts_with("export_with_unspecified_sharding") {
            None
        } else {
            continue;
        };
        let e = read_exported(&std::fs::read(&path).unwrap()).unwrap();
        let module = e.module().unwrap_or_else(|err| panic!("{name}: {err}"));
        let entry = module.entry_computation();
        let sharding = |id: hlo::InstrId| {
            entry.instructions[id.index()]
                .attrs
                .sharding
                .as_ref()
                .map(|s| s.to_string())
        };
        assert_eq!(
            sharding(entry.params[0]).as_deref(),
            Some("{devices=[2,1]<=[2]}"),
            "{name}: parameter"
        );
        assert_eq!(sharding(entry.root).as_deref(), result, "{name}: result");
        seen += 1;
    }
    assert_eq!(seen, 10);
}
