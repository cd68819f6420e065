//! `aot check-hlo MODULE.{hlo,mlir,pb} --io CASE.io.json --target-config T.txtpb`: compile the module,
//! serialize it, load the bytes in a fresh runtime (an emulated device from the same target
//! config), execute and compare with the io file. Exit 0 / 1 / 2 like `aot eval`.
use std::io::Write;
use std::path::{Path, PathBuf};

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
    compile_file_with(module, target_config, &compiler::CompileOptions::default())
}

/// [`compile_file`] with compile options (a staged rollout's emission turned on, say).
pub fn compile_file_with(
    module: &std::path::Path,
    target_config: &std::path::Path,
    options: &compiler::CompileOptions,
) -> anyhow::Result<Vec<u8>> {
    let m = hlo_front::read_module(module)?;
    compile_module(&m, module, target_config, options)
}

/// Compiles the module read from `path` (named in errors) for the target and serializes it.
fn compile_module(
    m: &hlo::HloModule,
    path: &Path,
    target_config: &Path,
    options: &compiler::CompileOptions,
) -> anyhow::Result<Vec<u8>> {
    let target = compiler::Target::load(target_config)
        .with_context(|| format!("cannot load {}", target_config.display()))?;
    compiler::compile_to_bytes(m, &target, options)
        .with_context(|| format!("cannot compile {}", path.display()))
}

/// Runs `aot check-hlo`: 0 all outputs match, 1 a mismatch; errors are the caller's exit 2.
///
/// A program for several devices given one io file of the whole program (JAX's global inputs
/// and outputs) is checked per device: the case is split by the entry's shardings
/// (`shard_io`) into one case per device, written to a scratch directory.
pub fn run(args: &CheckArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    run_with(args, &compiler::CompileOptions::default(), out)
}

/// [`run`] compiling with `options`.
pub fn run_with(
    args: &CheckArgs,
    options: &compiler::CompileOptions,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let m = hlo_front::read_module(&args.module)?;
    let bytes = compile_module(&m, &args.module, &args.target_config, options)?;
    let flags = RuntimeFlags {
        enable_command_buffers: !args.no_command_buffers,
        ..RuntimeFlags::default()
    };
    let scratch = ScratchDir::new()?;
    let io = match args.io.as_slice() {
        [global] => {
            split_global_io(&m, &args.module, global, &scratch)?.unwrap_or_else(|| args.io.clone())
        }
        _ => args.io.clone(),
    };
    let ok = crate::cmd::run::target_description(&args.target_config)
        .and_then(|target| {
            crate::cmd::run::load_run_compare(
                &bytes,
                "emulated",
                &target,
                &io,
                crate::cmd::run::DeviceCounts::default(),
                &flags,
                crate::cmd::run::RunReport::default(),
                args.write_outputs.as_deref(),
                None,
                out,
            )
        })
        .with_context(|| {
            format!(
                "{} (compiled, {} bytes)",
                args.module.display(),
                bytes.len()
            )
        })?;
    Ok(if ok { 0 } else { 1 })
}

/// One io file per device when `module` is for several devices and `global` holds its global
/// arrays (each input with its parameter's whole shape); `None` otherwise (the file is used as
/// it is, for every device).
fn split_global_io(
    m: &hlo::HloModule,
    module: &Path,
    global: &Path,
    scratch: &ScratchDir,
) -> anyhow::Result<Option<Vec<PathBuf>>> {
    let Some(entry) = compiler::entry_shardings(m)
        .with_context(|| format!("cannot partition {}", module.display()))?
    else {
        return Ok(None);
    };
    let expected = hlo_eval::Expected::for_module(m);
    let case = crate::npz::read_case(global, &expected)
        .with_context(|| format!("cannot load {}", global.display()))?;
    let whole = m.entry_computation().param_shapes();
    let global_shapes = case.inputs.len() == whole.len()
        && case.inputs.iter().zip(&whole).all(|(a, s)| match s {
            hlo::Shape::Array(s) => a
                .dims()
                .iter()
                .map(|&d| d as i64)
                .eq(s.dims.iter().copied()),
            _ => false,
        });
    if !global_shapes {
        return Ok(None);
    }
    let cases = crate::shard_io::split_case(&case, &entry.params, &entry.results, entry.devices)
        .with_context(|| format!("cannot split {} by the entry's shardings", global.display()))?;
    cases
        .iter()
        .enumerate()
        .map(|(d, c)| {
            let path = scratch.0.join(format!("device{d}.io.npz"));
            crate::npz::write_npz(&path, &c.inputs, &c.outputs)?;
            Ok(path)
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .map(Some)
}

/// A directory removed when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> anyhow::Result<ScratchDir> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("aot-check-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
