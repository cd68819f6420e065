//! JAX's multi-device programs end to end (issue 30): every piece of `testdata/multidevice`
//! (`shard_map` psum / all_gather / ppermute / psum_scatter / axis_index, sharded `jit` MLP step,
//! tensor-parallel matmul, elementwise, reductions; exported by jax 0.10.2 for 2 and 4 devices
//! as `.mlir` and `.hlo`) is compiled, partitioned, run on that many emulated devices of both
//! targets and compared with XLA:CPU's results: one global io file, split per device by the
//! entry's shardings (`harness::shard_io`). Both forms of the staged rollout: the default (the
//! partitions emitted as replicas, collective-permute as an all-gather) and the native one
//! (`emit_partitions`, `emit_collective_permute`).
use std::path::{Path, PathBuf};

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/multidevice");
    let mut out = Vec::new();
    for n in ["n2", "n4"] {
        let mut dir: Vec<PathBuf> = std::fs::read_dir(root.join(n))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name.ends_with(".mlir") || name.ends_with(".hlo")) && !name.contains(".xla_cpu.")
            })
            .collect();
        dir.sort();
        out.extend(dir);
    }
    out
}

fn check_all(options: &compiler::CompileOptions) {
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/target_specs");
    let cases = cases();
    assert_eq!(cases.len(), 40, "{cases:?}");
    let mut failures = Vec::new();
    for module in &cases {
        let name = module.file_name().unwrap().to_string_lossy();
        let stem = name.split('.').next().unwrap();
        let io = module.with_file_name(format!("{stem}.io.json"));
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
                    let devices = if module.parent().unwrap().ends_with("n4") {
                        4
                    } else {
                        2
                    };
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

#[test]
fn every_piece_matches_xla_cpu_on_2_and_4_devices_in_the_default_form() {
    check_all(&compiler::CompileOptions::default());
}

#[test]
fn every_piece_matches_xla_cpu_on_2_and_4_devices_in_the_native_form() {
    let mut options = compiler::CompileOptions::default();
    options.emit_partitions = true;
    options.emit_collective_permute = true;
    check_all(&options);
}
