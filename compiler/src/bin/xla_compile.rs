//! `xla_compile`: compiles an HLO module ahead of time into a serialized GPU executable, with
//! the flags of XLA's tool of the same name:
//!
//! ```text
//! xla_compile --module_file=model.hlo --output_file=model.pb --platform=gpu \
//!             --gpu_target_config=h100_sxm.txtpb
//! ```
//!
//! `--module_file` is HLO text (`.hlo`, `.txt`) or a binary `HloModuleProto` (`.pb`).
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Parser;
use proto::prost::Message;

/// Compiles an HLO module into a serialized `xla.gpu.GpuExecutableProto`.
#[derive(Parser, Debug)]
#[command(name = "xla_compile", version, about)]
struct Args {
    /// The HLO module: text (`.hlo`, `.txt`) or a binary HloModuleProto (`.pb`).
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
}

fn read_module(path: &Path) -> Result<hlo::HloModule> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext {
        "pb" => {
            let bytes = std::fs::read(path).with_context(|| format!("cannot read module file {}", path.display()))?;
            let module = proto::xla::HloModuleProto::decode(bytes.as_slice())
                .with_context(|| format!("{} is not a binary HloModuleProto", path.display()))?;
            let with_config = proto::xla::HloModuleProtoWithConfig {
                hlo_module: Some(module),
                config: None,
            };
            hlo::convert::from_proto(&with_config).with_context(|| format!("invalid HloModuleProto in {}", path.display()))
        }
        "hlo" | "txt" => {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read module file {}", path.display()))?;
            hlo::parse_module(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
        }
        other => bail!(
            "--module_file={}: unknown extension \"{other}\" (expected .hlo or .txt for HLO text, .pb for a binary HloModuleProto)",
            path.display()
        ),
    }
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
    let mut options = compiler::CompileOptions::default();
    options.cubin = args.cubin;
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
            ExitCode::FAILURE
        }
    }
}
