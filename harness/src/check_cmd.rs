//! `aot check-hlo MODULE.{hlo,mlir,pb} --io CASE.io.json --target-config T.txtpb`: compile the module,
//! serialize it, load the bytes in a fresh runtime (an emulated device from the same target
//! config), execute and compare with the io file. Exit 0 / 1 / 2 like `aot eval`.
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use runtime::RuntimeFlags;

/// Arguments of `aot check-hlo`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The module: HLO text (`.hlo`, `.txt`), StableHLO (`.mlir`) or a binary HloModuleProto (`.pb`).
    pub module: PathBuf,
    /// Inputs and expected outputs; one per device (replica, or device with several partitions)
    /// or one for all.
    #[arg(long, required = true)]
    pub io: Vec<PathBuf>,
    /// Target config (`.txtpb`) to compile for and to emulate.
    #[arg(long)]
    pub target_config: PathBuf,
    /// Turn the runtime's command-buffer pass off.
    #[arg(long)]
    pub no_command_buffers: bool,
    /// Also write the computed outputs (with the inputs) to this io file, match or not (as
    /// `aot run --write-outputs`).
    #[arg(long, value_name = "FILE")]
    pub write_outputs: Option<PathBuf>,
}

/// Compiles `module` for the target and serializes it.
pub fn compile_file(
    module: &std::path::Path,
    target_config: &std::path::Path,
) -> anyhow::Result<Vec<u8>> {
    let m = hlo::input::read_module(module)?;
    let target = compiler::Target::load(target_config)
        .with_context(|| format!("cannot load {}", target_config.display()))?;
    compiler::compile_to_bytes(&m, &target, &compiler::CompileOptions::default())
        .with_context(|| format!("cannot compile {}", module.display()))
}

/// Runs `aot check-hlo`: 0 all outputs match, 1 a mismatch; errors are the caller's exit 2.
pub fn run(args: &CheckArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let bytes = compile_file(&args.module, &args.target_config)?;
    let flags = RuntimeFlags {
        enable_command_buffers: !args.no_command_buffers,
        ..RuntimeFlags::default()
    };
    let ok = crate::run_cmd::load_run_compare(
        &bytes,
        "emulated",
        &args.target_config,
        &args.io,
        crate::run_cmd::DeviceCounts::default(),
        &flags,
        crate::run_cmd::RunReport::default(),
        args.write_outputs.as_deref(),
        None,
        out,
    )
    .with_context(|| {
        format!(
            "{} (compiled, {} bytes)",
            args.module.display(),
            bytes.len()
        )
    })?;
    Ok(if ok { 0 } else { 1 })
}
