//! The io files `aot run` reads and writes: one per replica or device (`out.replica1.io.json`,
//! `out.device0.io.json`), and io arrays to and from the bytes of an executable's leaves.
use std::path::{Path, PathBuf};

use anyhow::Context;
use hlo::Array;
use hlo_eval::{ComplexArray, IoArray, IoCase};

/// Where `--write-outputs FILE` puts replica `replica`'s outputs when there are several:
/// `.replicaR` before the extension (`out.io.json` -> `out.replica1.io.json`, `out.json` ->
/// `out.replica1.json`, `out` -> `out.replica1`).
pub fn replica_path(path: &Path, replica: usize) -> PathBuf {
    numbered_path(path, "replica", replica)
}

/// Where `--write-outputs FILE` puts device `device`'s outputs when the executable has several
/// partitions: `.deviceD` before the extension, as [`replica_path`] (`out.io.json` ->
/// `out.device3.io.json`).
pub fn device_path(path: &Path, device: usize) -> PathBuf {
    numbered_path(path, "device", device)
}

pub(super) fn numbered_path(path: &Path, what: &str, n: usize) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (stem, ext) = if let Some(stem) = name.strip_suffix(".io.json") {
        (stem, ".io.json")
    } else if let Some(dot) = name.rfind('.').filter(|&d| d > 0) {
        (&name[..dot], &name[dot..])
    } else {
        (name.as_str(), "")
    };
    path.with_file_name(format!("{stem}.{what}{n}{ext}"))
}

/// Writes `outputs` computed from `inputs` as an io file at `path`.
pub fn write_outputs(path: &Path, inputs: &[Array], outputs: &[Array]) -> anyhow::Result<()> {
    if crate::npz::is_npz(path) {
        return crate::npz::write_npz(path, inputs, outputs)
            .with_context(|| format!("cannot write {}", path.display()));
    }
    let case = IoCase {
        inputs: inputs.to_vec(),
        outputs: outputs.to_vec(),
    };
    std::fs::write(path, hlo_eval::case_to_json(&case) + "\n")
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The bytes an io array passes as an argument (a complex array's parts have its bytes).
pub fn io_array_bytes(a: &IoArray) -> Vec<u8> {
    match a {
        IoArray::Real(a) => runtime::array_to_bytes(a),
        IoArray::Complex(c) => runtime::array_to_bytes(&c.parts),
    }
}

/// An output leaf's bytes as an io array: [`runtime::array_from_bytes`], and complex
/// leaves (`c64`, `c128`) as their parts.
pub fn io_array_from_bytes(leaf: &runtime::Leaf, bytes: &[u8]) -> anyhow::Result<IoArray> {
    if leaf.element_type.is_complex() {
        let mut dims = leaf.dims.clone();
        dims.push(2);
        let parts = runtime::array_from_bytes(leaf.element_type.complex_component(), &dims, bytes)?;
        return Ok(IoArray::Complex(ComplexArray::new(
            leaf.element_type,
            parts,
        )?));
    }
    Ok(IoArray::Real(runtime::array_from_bytes(
        leaf.element_type,
        &leaf.dims,
        bytes,
    )?))
}

/// The io bounds of a loaded executable: each array parameter's element count, each output
/// leaf's; an io file with longer lists is refused while it is read (hlo_eval::Expected).
pub(super) fn expected_of(exe: &runtime::Executable) -> hlo_eval::Expected {
    let elements = |dims: &[i64]| {
        dims.iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
    };
    let params = exe.parameters.iter().map(|(p, _)| p + 1).max().unwrap_or(0);
    let inputs = (0..params)
        .map(|p| {
            let mut leaves = exe.parameters.iter().filter(|(q, _)| *q == p);
            match (leaves.next(), leaves.next()) {
                (Some((_, leaf)), None) if leaf.shape_index.is_empty() => elements(&leaf.dims),
                _ => None,
            }
            .unwrap_or(usize::MAX)
        })
        .collect();
    let outputs = exe
        .outputs
        .iter()
        .map(|leaf| elements(&leaf.dims).unwrap_or(usize::MAX))
        .collect();
    hlo_eval::Expected::new(inputs, outputs)
}
