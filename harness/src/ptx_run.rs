//! `aot ptx-run KERNEL.ptx --launch KERNEL.launch.json`: run one kernel on the emulator and
//! compare the expected buffers.
//!
//! The launch spec is described in `testdata/corpus/README.md` and read, run and compared by
//! [`ptx::run_launch_spec`] (the runner the emulator's own corpus tests use); this command adds the
//! runtime's limits and prints the verdict per buffer.
use std::io::Write;
use std::path::Path;

use anyhow::{anyhow, Context};
use ptx::emu::{LaunchOptions, LoadedModule};
use ptx::LaunchSpec;

/// How many mismatching elements are printed per buffer.
const SHOW: usize = 5;

/// The limits of one `aot ptx-run` launch, with the runtime's defaults (`RuntimeFlags`), so a
/// launch spec gets what an artifact's kernel gets.
#[derive(Debug, Clone, clap::Args)]
pub struct Limits {
    /// Most lane-instructions the launch may execute (RuntimeFlags::emulator_instruction_budget).
    #[arg(long, default_value_t = runtime::RuntimeFlags::default().emulator_instruction_budget)]
    pub instruction_budget: u64,
    /// Lane-instructions per launched thread (RuntimeFlags::emulator_instructions_per_thread;
    /// 0: the budget alone).
    #[arg(long, default_value_t = runtime::RuntimeFlags::default().emulator_instructions_per_thread)]
    pub instructions_per_thread: u64,
    /// The least budget of a scaled launch (RuntimeFlags::emulator_instruction_floor).
    #[arg(long, default_value_t = runtime::RuntimeFlags::default().emulator_instruction_floor)]
    pub instruction_floor: u64,
    /// Longest wall time of the launch, in seconds (RuntimeFlags::max_execution_secs).
    #[arg(long, default_value_t = runtime::RuntimeFlags::default().max_execution_secs)]
    pub max_execution_secs: u64,
    /// Most bytes of emulated memory the spec's buffers may take
    /// (RuntimeFlags::emulator_host_memory_bytes).
    #[arg(long, default_value_t = runtime::RuntimeFlags::default().emulator_host_memory_bytes)]
    pub memory_bytes: u64,
    /// Most bytes of `.local` memory the launch's threads may write
    /// (RuntimeFlags::emulator_local_memory_bytes).
    #[arg(long, default_value_t = runtime::RuntimeFlags::default().emulator_local_memory_bytes)]
    pub local_memory_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        let flags = runtime::RuntimeFlags::default();
        Limits {
            instruction_budget: flags.emulator_instruction_budget,
            instructions_per_thread: flags.emulator_instructions_per_thread,
            instruction_floor: flags.emulator_instruction_floor,
            max_execution_secs: flags.max_execution_secs,
            memory_bytes: flags.emulator_host_memory_bytes,
            local_memory_bytes: flags.emulator_local_memory_bytes,
        }
    }
}

/// Runs the launch with the runtime's default limits, printing a per-buffer verdict to `out`.
/// `Ok(true)`: every expected buffer matches; `Ok(false)`: at least one mismatch; `Err`: the
/// launch could not run at all.
pub fn run(ptx: &Path, launch: &Path, out: &mut dyn Write) -> anyhow::Result<bool> {
    run_with(ptx, launch, &Limits::default(), out)
}

/// [`run`] with `limits`.
pub fn run_with(
    ptx: &Path,
    launch: &Path,
    limits: &Limits,
    out: &mut dyn Write,
) -> anyhow::Result<bool> {
    let text =
        std::fs::read_to_string(ptx).with_context(|| format!("reading {}", ptx.display()))?;
    let spec_text =
        std::fs::read_to_string(launch).with_context(|| format!("reading {}", launch.display()))?;
    let spec: serde_json::Value = serde_json::from_str(&spec_text)
        .with_context(|| format!("parsing {}", launch.display()))?;
    let spec = LaunchSpec::from_json(&spec)?;
    let ast = ptx::parse(&text).map_err(|e| anyhow!("{}: {e}", ptx.display()))?;
    let module = LoadedModule::load(&ast).with_context(|| format!("loading {}", ptx.display()))?;
    let options = LaunchOptions {
        instruction_budget: limits.instruction_budget,
        wall_time_limit: Some(std::time::Duration::from_secs(limits.max_execution_secs)),
        instructions_per_thread: limits.instructions_per_thread,
        instruction_floor: limits.instruction_floor,
        local_memory_bytes: limits.local_memory_bytes,
        ..LaunchOptions::default()
    };
    let outcome = ptx::run_launch_spec_limited(&module, &spec, &options, SHOW, limits.memory_bytes)
        .with_context(|| format!("running {} on {}", launch.display(), ptx.display()))?;
    let (kernel, grid, block, stats) = (&spec.kernel, spec.grid, spec.block, &outcome.stats);
    writeln!(
        out,
        "{kernel}: grid {grid:?} block {block:?}: {} lane-instructions ({} warp-instructions), {} B read, {} B written",
        stats.lane_instructions, stats.warp_instructions, stats.global_bytes_read, stats.global_bytes_written
    )?;
    for check in &outcome.checks {
        let e = &check.expected;
        let (pi, dtype, n, at, rt) = (e.param, e.dtype, e.elements(), e.abs_tol, e.rel_tol);
        if check.mismatches == 0 {
            writeln!(
                out,
                "param {pi} ({dtype}[{n}]): OK (abs_tol {at}, rel_tol {rt})"
            )?;
        } else {
            writeln!(
                out,
                "param {pi} ({dtype}[{n}]): MISMATCH in {} elements (abs_tol {at}, rel_tol {rt}); first:",
                check.mismatches
            )?;
            for m in &check.first {
                writeln!(out, "  [{}] got {} want {}", m.index, m.got, m.want)?;
            }
        }
    }
    Ok(outcome.passed())
}
