//! `aot ptx-run KERNEL.ptx --launch KERNEL.launch.json`: run one kernel on the emulator and
//! compare the expected buffers.
use std::io::Write;
use std::path::Path;

/// Runs the launch, printing a per-buffer verdict to `out`. `Ok(true)`: every expected buffer
/// matches; `Ok(false)`: at least one mismatch; `Err`: the launch could not run at all.
pub fn run(ptx: &Path, launch: &Path, out: &mut dyn Write) -> anyhow::Result<bool> {
    let _ = (ptx, launch, out);
    anyhow::bail!("aot ptx-run is not implemented yet")
}
