//! The reference evaluator's convolution against XLA:CPU: every convolution export of
//! testdata/models (JAX 0.10.2, `tools/jax_exports/models.py`: NHWC and NCHW, 1-D bf16, strided,
//! dilated with negative padding, grouped, depthwise, and the input and weight gradients that use
//! lhs dilation, reversed kernels and batch groups), in both its HLO text and StableHLO forms,
//! matches the outputs recorded in its io file.
use std::path::{Path, PathBuf};

use hlo_eval::evaluate_flat;
use hlo_eval::{compare, IoCase, Tolerance};

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/models")
}

fn check(path: &Path, io: &IoCase) -> Result<(), String> {
    let module = hlo_front::read_module(path).map_err(|e| e.to_string())?;
    let got = evaluate_flat(&module, &io.inputs).map_err(|e| e.to_string())?;
    if got.len() != io.outputs.len() {
        return Err(format!(
            "{} outputs, expected {}",
            got.len(),
            io.outputs.len()
        ));
    }
    for (i, (g, w)) in got.iter().zip(&io.outputs).enumerate() {
        let c = compare(g, w, Tolerance::for_dtype(w.dtype()));
        if !c.ok {
            return Err(format!(
                "output {i}: {} mismatches, max abs err {:e}, first {:?}",
                c.mismatches, c.max_abs_err, c.first
            ));
        }
    }
    Ok(())
}

#[test]
fn every_convolution_export_matches_xla_cpu() {
    let mut names: Vec<String> = std::fs::read_dir(models())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("conv"))
        .filter_map(|n| n.strip_suffix(".io.json").map(str::to_owned))
        .collect();
    names.sort();
    assert!(
        names.len() >= 11,
        "only {} convolution exports",
        names.len()
    );
    let mut failures = Vec::new();
    for name in &names {
        let io = IoCase::read(&models().join(format!("{name}.io.json"))).unwrap();
        for ext in ["hlo", "mlir"] {
            if let Err(e) = check(&models().join(format!("{name}.{ext}")), &io) {
                failures.push(format!("{name}.{ext}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
