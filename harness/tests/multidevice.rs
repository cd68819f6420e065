//! JAX's multi-device programs end to end (issue 30): every piece of `testdata/multidevice`
//! (`shard_map` psum / all_gather / ppermute / psum_scatter / axis_index, sharded `jit` MLP step,
//! tensor-parallel matmul, elementwise, reductions; exported by jax 0.10.2 for 2 and 4 devices
//! as `.mlir` and `.hlo`) is compiled, partitioned, run on that many emulated devices of both
//! targets and compared with XLA:CPU's results: one global io file, split per device by the
//! entry's shardings (`harness::shard_io`). Both forms of the staged rollout: the default (the
//! partitions emitted as replicas, collective-permute as an all-gather) and the native one
//! (`emit_partitions`, `emit_collective_permute`). The same for JAX's serialization back-compat
//! artifacts (`testdata/jax_exported/backcompat`: serialized `Exported`s for 2 devices).
use std::path::{Path, PathBuf};

/// A module, its global io file and the devices it runs on.
struct Case {
    module: PathBuf,
    io: PathBuf,
    devices: usize,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `testdata/multidevice`: 40 modules (`.mlir` and `.hlo`) for 2 and 4 devices.
fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (n, devices) in [("n2", 2), ("n4", 4)] {
        let mut dir: Vec<PathBuf> = std::fs::read_dir(root().join("testdata/multidevice").join(n))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name.ends_with(".mlir") || name.ends_with(".hlo")) && !name.contains(".xla_cpu.")
            })
            .collect();
        dir.sort();
        out.extend(dir.into_iter().map(|module| {
            let name = module.file_name().unwrap().to_string_lossy().into_owned();
            let stem = name.split('.').next().unwrap().to_owned();
            let io = module.with_file_name(format!("{stem}.io.json"));
            Case {
                module,
                io,
                devices,
            }
        }));
    }
    assert_eq!(out.len(), 40);
    out
}

/// JAX's 17 serialization back-compat artifacts (`testdata/jax_exported/backcompat`,
/// serialization versions 4 to 11), each a program for 2 devices, with the inputs and outputs
/// of JAX's own test (`tools/jax_exported/convert_backcompat.py`).
fn serialization_cases() -> Vec<Case> {
    let dir = root().join("testdata/jax_exported/backcompat");
    let mut out: Vec<Case> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jax_exported"))
        .map(|module| Case {
            io: module.with_extension("io.json"),
            module,
            devices: 2,
        })
        .collect();
    out.sort_by(|a, b| a.module.cmp(&b.module));
    assert_eq!(out.len(), 17);
    out
}

/// Shardy programs for 2 devices exported today (`testdata/jax_exported/sharded`,
/// `tools/jax_exports/sharded_exports.py`), each as `.mlir`, `.mlirbc` and `.jax_exported`.
fn sharded_export_cases() -> Vec<Case> {
    let dir = root().join("testdata/jax_exported/sharded");
    let mut out = Vec::new();
    for name in ["sharding_constraint", "rows_times_replicated"] {
        for ext in ["mlir", "mlirbc", "jax_exported"] {
            out.push(Case {
                module: dir.join(format!("{name}.{ext}")),
                io: dir.join(format!("{name}.io.json")),
                devices: 2,
            });
        }
    }
    out
}

fn check_all(cases: &[Case], options: &compiler::CompileOptions) {
    let specs = root().join("testdata/target_specs");
    let mut failures = Vec::new();
    for Case {
        module,
        io,
        devices,
    } in cases
    {
        for target in ["h100_sxm", "a100_sxm_80"] {
            let args = harness::cmd::check::CheckArgs {
                module: module.clone(),
                io: vec![io.clone()],
                target_config: specs.join(format!("{target}.txtpb")),
                no_command_buffers: false,
                write_outputs: None,
            };
            let mut out = Vec::new();
            let verdict = harness::cmd::check::run_with(&args, options, &mut out);
            let text = String::from_utf8_lossy(&out);
            match verdict {
                Ok(0) => {
                    // Every device's outputs were compared, not one device's.
                    let last = text.lines().last().unwrap_or_default().to_owned();
                    let ok = last.starts_with("OK: ")
                        && text.contains(&format!("{} output 0", label(devices - 1, options)));
                    if !ok {
                        failures.push(format!("{} on {target}: {text}", module.display()));
                    }
                }
                Ok(_) => failures.push(format!("{} on {target}: {text}", module.display())),
                Err(e) => failures.push(format!("{} on {target}: {e:#}", module.display())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// How verdict lines name a device: replicas in the default form, devices in the native one.
fn label(device: usize, options: &compiler::CompileOptions) -> String {
    if options.emit_partitions {
        format!("device {device}")
    } else {
        format!("replica {device}")
    }
}

/// The native form of the partitions rollout (`emit_partitions`, `emit_collective_permute`).
fn native() -> compiler::CompileOptions {
    let mut options = compiler::CompileOptions::default();
    options.emit_partitions = true;
    options.emit_collective_permute = true;
    options
}

#[test]
fn every_piece_matches_xla_cpu_on_2_and_4_devices_in_the_default_form() {
    check_all(&cases(), &compiler::CompileOptions::default());
}

#[test]
fn every_piece_matches_xla_cpu_on_2_and_4_devices_in_the_native_form() {
    check_all(&cases(), &native());
}

/// Today's Shardy exports (a `with_sharding_constraint` among them) in all three forms: the
/// bytecode ones (`sdy` attributes, the constraint op between VHLO casts) run as the text does.
#[test]
fn shardy_exports_run_on_2_devices_from_text_bytecode_and_serialized_exported() {
    let cases = sharded_export_cases();
    check_all(&cases, &compiler::CompileOptions::default());
    check_all(&cases, &native());
}

/// JAX's `export_serialization_back_compat_test`: what `Exported.call` gives on 2 devices, from
/// every serialization version JAX keeps, in both forms, with each device's shard where JAX's
/// test asserts it (`addressable_shards[d].index`): the unspecified output follows its input's
/// rows (the specified one's columns are the module's own, hlo_front/tests/jax_exported.rs).
#[test]
fn jax_serialization_back_compat_artifacts_run_on_2_devices() {
    for case in serialization_cases() {
        let name = case
            .module
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if !name.starts_with("export_with_unspecified_sharding") {
            continue;
        }
        let module = hlo_front::read_module(&case.module).unwrap();
        let placed = compiler::entry_shardings(&module).unwrap().unwrap();
        assert_eq!(
            placed.results[0].to_string(),
            "{devices=[2,1]<=[2]}",
            "{name}"
        );
    }
    let cases = serialization_cases();
    check_all(&cases, &compiler::CompileOptions::default());
    check_all(&cases, &native());
}
