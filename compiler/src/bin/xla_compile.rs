//! `xla_compile`: compiles an HLO module ahead of time into a serialized GPU executable, with
//! the flags of XLA's tool of the same name:
//!
//! ```text
//! xla_compile --module_file=model.hlo --output_file=model.pb --platform=gpu \
//!             --gpu_target_config=h100_sxm.txtpb
//! ```
//!
//! `--module_file` is HLO text (`.hlo`, `.txt`), StableHLO MLIR text (`.mlir`, what JAX prints)
//! or a binary `HloModuleProto` (`.pb`); the content must match the extension.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Parser;

/// Compiles an HLO module into a serialized `xla.gpu.GpuExecutableProto`.
#[derive(Parser, Debug)]
#[command(name = "xla_compile", version, about)]
struct Args {
    /// The module: HLO text (`.hlo`, `.txt`), StableHLO (`.mlir`) or a binary HloModuleProto (`.pb`).
    #[arg(long = "module_file", value_name = "FILE")]
    module_file: PathBuf,
    /// Where to write the serialized executable.
    #[arg(long = "output_file", value_name = "FILE")]
    output_file: PathBuf,
    /// The platform: `gpu` (CUDA).
    #[arg(long = "platform", value_name = "PLATFORM")]
    platform: String,
    /// The GPU target config (`GpuTargetConfigProto` in text format).
    #[arg(long = "gpu_target_config", value_name = "FILE.txtpb")]
    gpu_target_config: PathBuf,
    /// Also assemble every kernel with NVIDIA's ptxas and embed the cubins ($PTXAS, PATH, or the
    /// nvidia-cuda-nvcc-cu12 wheel).
    #[arg(long)]
    cubin: bool,
    /// XLA's flag of the same name: compute f16/bf16 arithmetic that the program widens to f32
    /// without the intermediate rounding, as XLA does (`--xla_allow_excess_precision=false`:
    /// round every narrow result).
    #[arg(
        long = "xla_allow_excess_precision",
        value_name = "BOOL",
        default_value_t = true,
        action = clap::ArgAction::Set
    )]
    allow_excess_precision: bool,
    /// The most elements any array of the module may have (CompileOptions::max_array_elements;
    /// the runtime's and the reference evaluator's limit by default).
    #[arg(long = "max_array_elements", value_name = "N", default_value_t = hlo::MAX_ELEMENTS)]
    max_array_elements: u64,
    /// Compile as the defaults will be once every staged rollout has flipped
    /// (`CompileOptions::after_staged_flips`: FFT, convolution and cuSOLVER thunks among them).
    /// Runtimes from before a flip's date refuse what it emits: for testing today's runtime.
    #[arg(long = "after_staged_flips")]
    after_staged_flips: bool,
}

/// Reads the module in the format its extension names, checked against the content
/// (`hlo_front::read_module`, shared by every tool that takes a module).
fn read_module(path: &Path) -> Result<hlo::HloModule> {
    hlo_front::read_module(path).map_err(anyhow::Error::new)
}

fn run(args: Args) -> Result<()> {
    match args.platform.to_ascii_lowercase().as_str() {
        "gpu" | "cuda" => {}
        other => {
            bail!("--platform={other}: unknown platform (xla_compile supports only --platform=gpu)")
        }
    }
    let target = compiler::Target::load(&args.gpu_target_config)?;
    let module = read_module(&args.module_file)?;
    let mut options = if args.after_staged_flips {
        compiler::CompileOptions::after_staged_flips()
    } else {
        compiler::CompileOptions::default()
    };
    options.cubin = args.cubin;
    options.allow_excess_precision = args.allow_excess_precision;
    options.max_array_elements = args.max_array_elements;
    let bytes = compiler::compile_to_bytes(&module, &target, &options)
        .with_context(|| format!("cannot compile {}", args.module_file.display()))?;
    std::fs::write(&args.output_file, bytes)
        .with_context(|| format!("cannot write {}", args.output_file.display()))?;
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xla_compile: error: {e:#}");
            // The project's one convention (README): 0 ok, 1 mismatch or findings, 2 error; clap
            // exits 2 on a usage error too.
            ExitCode::from(2)
        }
    }
}
