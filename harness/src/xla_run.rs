//! Running XLA:GPU's own executables whole on the emulated device, with the PTX XLA dumped for
//! them (`tools/xla_artifacts/ptx_dump.py`: `NAME.gpuexe` beside `NAME.KERNEL.ptx` files), and
//! comparing with XLA:CPU's outputs (`testdata/corpus/hlo/NAME.io.json`) under
//! [`ToleranceRule::XlaGpu`]. `aot run --kernel-ptx` is the command-line form; this is what the
//! harness tests and the corpus table use.
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use hlo_eval::{compare, IoCase};
use runtime::RuntimeFlags;

use crate::cmd::run::{
    execute_arrays, make_devices, read_kernel_ptx, target_description, ToleranceRule,
};

/// One executable run to its verdict.
#[derive(Debug, Clone)]
pub struct XlaRun {
    /// Kernel launches of the execution (every while iteration's included).
    pub launches: u64,
    /// Wall time of the execution on the emulated device (load excluded), in milliseconds.
    pub millis: f64,
    /// The largest absolute difference from the expected outputs, over every output.
    pub max_abs_err: f64,
    /// Outputs within the tolerance, of `outputs`.
    pub matched: usize,
    /// Outputs compared.
    pub outputs: usize,
    /// The tolerance the outputs were held to.
    pub tolerance: ToleranceRule,
}

impl XlaRun {
    /// Whether every output matched.
    pub fn ok(&self) -> bool {
        self.matched == self.outputs
    }
}

/// The PTX files beside `NAME.gpuexe` in `dir`: `NAME.*.ptx`, sorted by name.
pub fn ptx_files(dir: &Path, module: &str) -> anyhow::Result<Vec<PathBuf>> {
    let prefix = format!("{module}.");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let p = e?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with(&prefix) && name.ends_with(".ptx") {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

/// Loads `artifact` (either form `aot run` reads) with `ptx` on an emulated device of
/// `target_config`, runs it once with `io`'s inputs, and compares with `io`'s outputs.
pub fn run(
    artifact: &Path,
    ptx: &[PathBuf],
    target_config: &Path,
    io: &Path,
) -> anyhow::Result<XlaRun> {
    let raw =
        std::fs::read(artifact).with_context(|| format!("cannot read {}", artifact.display()))?;
    let bytes = crate::xla_artifact::unwrap(&raw)
        .with_context(|| artifact.display().to_string())?
        .executable;
    let kernel_ptx = read_kernel_ptx(ptx)?;
    let flags = RuntimeFlags::default();
    let devices = make_devices("emulated", &target_description(target_config)?, 1, &flags)?;
    let exe = runtime::load_with_kernel_ptx(
        &bytes,
        devices[0].as_ref(),
        &flags,
        &runtime::Registry::builtin(),
        &kernel_ptx,
    )
    .with_context(|| artifact.display().to_string())?;
    let case = IoCase::read(io).with_context(|| format!("cannot load {}", io.display()))?;
    let start = Instant::now();
    let (got, stats) = execute_arrays(&exe, &devices, std::slice::from_ref(&case.inputs))?;
    let millis = start.elapsed().as_secs_f64() * 1e3;
    let tolerance = ToleranceRule::for_executable(&bytes, true);
    let got = got.into_iter().next().unwrap_or_default();
    anyhow::ensure!(
        got.len() == case.outputs.len(),
        "{}: the executable produces {} outputs, {} lists {}",
        artifact.display(),
        got.len(),
        io.display(),
        case.outputs.len()
    );
    let mut run = XlaRun {
        launches: stats.kernel_launches,
        millis,
        max_abs_err: 0.0,
        matched: 0,
        outputs: got.len(),
        tolerance,
    };
    for (g, w) in got.iter().zip(&case.outputs) {
        let c = compare(g, w, tolerance.tolerance(w));
        run.matched += usize::from(c.ok);
        run.max_abs_err = run.max_abs_err.max(c.max_abs_err);
    }
    Ok(run)
}
