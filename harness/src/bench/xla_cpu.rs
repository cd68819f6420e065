//! XLA:CPU's side of the scale and workloads sections: the times its generator recorded in the
//! repository, or (`aot bench --xla-cpu-python PYTHON`) the same generator run by the bench into a
//! scratch folder just before the emulated runs, so both sides are measured on one machine in
//! one run.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context};
use serde::de::DeserializeOwned;

/// A generator's `xla_cpu_times.json`: when, with what, where, and per module what the section
/// reads (`M`).
#[derive(serde::Deserialize)]
pub(super) struct XlaTimes<M> {
    pub date: String,
    pub jax: String,
    pub machine: String,
    pub modules: BTreeMap<String, M>,
}

/// The times and a note saying where they come from (for the section's note).
pub(super) struct Sourced<M> {
    pub times: XlaTimes<M>,
    pub provenance: String,
}

/// XLA:CPU's times for the modules of `dir` (repository-relative), whose generator is `script`
/// (repository-relative): recorded (`python` is `None`) or measured now by running `script` with
/// `python` into a fresh folder.
pub(super) fn xla_cpu_times<M: DeserializeOwned>(
    root: &Path,
    dir: &str,
    script: &str,
    python: Option<&Path>,
) -> anyhow::Result<Sourced<M>> {
    let Some(python) = python else {
        let path = root.join(dir).join("xla_cpu_times.json");
        let times: XlaTimes<M> = read(&path)?;
        let provenance = format!(
            "median of the jitted function recorded in {dir}/xla_cpu_times.json (jax {}, {}, {}; not this run: rerun {script}, or pass --xla-cpu-python, on the machine you compare on)",
            times.jax, times.machine, times.date
        );
        return Ok(Sourced { times, provenance });
    };
    let out = scratch_dir(dir)?;
    // The generator's progress goes to stderr: stdout is the report (`--format json` included).
    let status = Command::new(python)
        .arg(root.join(script))
        .arg(&out)
        .current_dir(root)
        .stdout(Stdio::from(std::io::stderr()))
        .status()
        .with_context(|| format!("cannot run {} {script}", python.display()))?;
    if !status.success() {
        bail!(
            "{} {script} {} failed ({status}): does that Python have jax and numpy?",
            python.display(),
            out.display()
        );
    }
    let times: XlaTimes<M> = read(&out.join("xla_cpu_times.json"))?;
    let provenance = format!(
        "median of the jitted function measured in this run by {script} (jax {}, {})",
        times.jax, times.machine
    );
    let _ = std::fs::remove_dir_all(&out);
    Ok(Sourced { times, provenance })
}

fn read<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not the generator's format", path.display()))
}

/// An empty folder of this process's own under the system's temporary folder.
fn scratch_dir(dir: &str) -> anyhow::Result<PathBuf> {
    let name = dir.replace('/', "_");
    let out = std::env::temp_dir().join(format!("aot-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    Ok(out)
}

/// One module's emulated execution, timed the way the scale and workloads sections time it.
pub(super) struct Timed {
    /// The best of the repetitions' wall times.
    pub wall: std::time::Duration,
    /// Process CPU seconds per repetition (all threads), where the platform reports it.
    pub cpu: Option<f64>,
    /// The last repetition's result.
    pub result: runtime::ExecutionResult,
    /// Launches and lane-instructions over all repetitions.
    pub totals: runtime::DeviceTotals,
}

/// Runs `exe` `reps` times on `device` with `args`.
pub(super) fn timed(
    exe: &runtime::Executable,
    device: &runtime::EmulatedDevice,
    args: &[&[u8]],
    reps: usize,
) -> anyhow::Result<Timed> {
    device.take_totals();
    let cpu0 = super::emulator::process_cpu();
    let (wall, result) = super::stats::best(reps, || exe.execute(device, args));
    let cpu = super::emulator::process_cpu()
        .zip(cpu0)
        .map(|(b, a)| (b - a) / reps as f64);
    Ok(Timed {
        wall,
        cpu,
        result: result?,
        totals: device.take_totals(),
    })
}

/// The median of `reps` executions of `exe` on `device` with `args` uploaded once into device
/// buffers (after one warm-up) and no output read back: what a JAX call on device arrays does,
/// and what XLA:CPU's generators time (the median of `jax.block_until_ready(compiled(*args))`
/// on `jnp` arrays), so the two sides are the same statistic of the same kind of call. The
/// host-to-host figure of [`timed`] adds the copies in and out.
pub(super) fn timed_resident(
    exe: &runtime::Executable,
    device: &runtime::EmulatedDevice,
    args: &[&[u8]],
    reps: usize,
) -> anyhow::Result<std::time::Duration> {
    let (times, _) = crate::cmd::run::resident_times(exe, device, args, reps.max(1))?;
    let secs: Vec<f64> = times.iter().map(std::time::Duration::as_secs_f64).collect();
    let median = super::stats::median(&secs).unwrap_or(0.0);
    Ok(std::time::Duration::from_secs_f64(median))
}

/// The table's check column: the f32 outputs' sum against the sum XLA:CPU's generator
/// recorded (within 1e-4 of the sum of absolute values, plus 1e-3).
pub(super) fn sum_check(outputs: &[Vec<u8>], output_sum: f64, output_abs_sum: f64) -> String {
    let sum: f64 = outputs
        .iter()
        .flat_map(|o| o.chunks_exact(4))
        .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .sum();
    if (sum - output_sum).abs() <= 1e-4 * output_abs_sum + 1e-3 {
        "sums match".into()
    } else {
        format!("sum {sum} vs XLA {output_sum}")
    }
}
