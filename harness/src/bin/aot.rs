//! `aot`: the user-facing command-line tool of the project.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "aot",
    version,
    about = "XLA-style AOT GPU compiler/runtime toolbox"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate a module (HLO text, StableHLO or HloModuleProto) with the reference evaluator
    /// and compare with an io file. Exit status: 0 all outputs match, 1 a mismatch, 2 an error.
    Eval {
        /// The module: HLO text (`.hlo`, `.txt`), StableHLO (`.mlir`) or a binary
        /// HloModuleProto (`.pb`), as printed by JAX or XLA.
        module: PathBuf,
        /// Inputs and expected outputs (`{"inputs": [...], "outputs": [...]}`).
        #[arg(long)]
        io: PathBuf,
        /// Also write the evaluated outputs (with the inputs) to this io file, match or not.
        #[arg(long, value_name = "FILE")]
        write_outputs: Option<PathBuf>,
    },
    /// Run one PTX kernel on the SIMT emulator and compare the expected buffers of a launch spec.
    /// Exit status: 0 all buffers match, 1 a mismatch, 2 an error.
    PtxRun {
        /// PTX module text.
        ptx: PathBuf,
        /// Launch spec (`KERNEL.launch.json`).
        #[arg(long)]
        launch: PathBuf,
        #[command(flatten)]
        limits: harness::PtxRunLimits,
    },
    /// Snapshot or diff the compatibility surface (the schema bot).
    /// Exit status: 0 clean, 1 error findings, 2 usage or internal error.
    Schema(harness::cmd::schema::SchemaArgs),
    /// Load a serialized executable in the runtime, execute it and compare with an io file.
    /// Exit status: 0 all outputs match, 1 a mismatch, 2 an error.
    Run(harness::cmd::run::RunArgs),
    /// Compile a module (HLO text, StableHLO or HloModuleProto), load the bytes in a fresh runtime, execute and compare.
    /// Exit status: 0 all outputs match, 1 a mismatch, 2 an error.
    CheckHlo(harness::cmd::check::CheckArgs),
    /// Print an executable in protobuf text format (PTX as text) with a summary.
    Inspect(harness::cmd::inspect::InspectArgs),
    /// The census of executables (this project's, bare XLA:GPU, or PjRt bytes): every construct
    /// they use, and `unknown:` the fields this schema lacks. Exit 0, or 2 on an error.
    Census(harness::cmd::inspect::CensusArgs),
    /// The whole pipeline on the bundled cases (compile, load as a serving host would, execute on
    /// the emulated h100_sxm, check against the reference evaluator, replay the goldens).
    /// Exit status: 0 everything matched, 1 a mismatch, 2 an error.
    Demo(harness::cmd::demo::DemoArgs),
    /// Release engineering on the golden store: list, verify, regen.
    Goldens(harness::cmd::goldens::GoldensArgs),
    /// Forward compatibility on the real older runtime: today's artifacts for every golden case
    /// and target on an older `aot run` binary (ci/forward_compat.sh builds it), bit for bit.
    /// Exit status: 0 every row passes, 1 any fails, 2 an error.
    Forward(harness::cmd::forward::ForwardArgs),
    /// The gate self-test: commit each edit of the catalogue (harness/gate_selftest/) to a
    /// scratch worktree, run the gates, and check that breaks are caught and safe edits pass.
    /// Exit status: 0 every edit judged right, 1 a miss, false alarm or broken entry, 2 an error.
    Selftest(harness::cmd::selftest::SelftestArgs),
    /// Mutation testing of the entry points that read untrusted input (artifact loader, HLO,
    /// StableHLO, PTX, target configs), with outcomes counted by error code.
    /// Exit status: 0 no finding, 1 a panic, hang or allocation over the limit, 2 an error.
    Fuzz(harness::cmd::fuzz::FuzzArgs),
    /// The performance figures (docs/performance.md): corpus compile/load/size/launches/traffic,
    /// emulator throughput and core scaling, the scale table next to XLA:CPU, compile and load
    /// growth, golden suite and schema bot times, and a summary line per metric with its target.
    /// Exit status: 0 (the summary says which targets are met), 2 an error.
    Bench(harness::BenchArgs),
}

fn verdict(result: anyhow::Result<bool>) -> ExitCode {
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn code(result: anyhow::Result<u8>) -> ExitCode {
    match result {
        Ok(c) => ExitCode::from(c),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// mimalloc: the schema bot's diff and the compiler allocate many small objects from several
/// threads, where it is markedly faster than glibc's malloc (schema_history's diff_bench uses it
/// too, so it measures what this binary does). Counted (one relaxed atomic add per call, no limit
/// unless `aot fuzz` sets one), so that `aot fuzz` can check its memory property and `aot bench`
/// can report the peak heap of a load.
#[global_allocator]
static GLOBAL: harness::fuzz::alloc::CountingAlloc<mimalloc::MiMalloc> =
    harness::fuzz::alloc::CountingAlloc(mimalloc::MiMalloc);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut stdout = std::io::stdout().lock();
    match cli.command {
        Command::Eval {
            module,
            io,
            write_outputs,
        } => verdict(harness::cmd::eval::run_writing(
            &module,
            &io,
            write_outputs.as_deref(),
            &mut stdout,
        )),
        Command::PtxRun {
            ptx,
            launch,
            limits,
        } => verdict(harness::run_ptx_with(&ptx, &launch, &limits, &mut stdout)),
        Command::Run(args) => code(harness::cmd::run::run(&args, &mut stdout)),
        Command::CheckHlo(args) => code(harness::cmd::check::run(&args, &mut stdout)),
        Command::Inspect(args) => code(harness::cmd::inspect::run(&args, &mut stdout)),
        Command::Census(args) if args.support => {
            code(harness::cmd::inspect::support(&args.artifacts, &mut stdout).map(|()| 0))
        }
        Command::Census(args) => {
            code(harness::cmd::inspect::census(&args.artifacts, args.json, &mut stdout).map(|()| 0))
        }
        Command::Demo(args) => code(harness::cmd::demo::run(&args, &mut stdout)),
        Command::Goldens(args) => code(harness::cmd::goldens::run(&args, &mut stdout)),
        Command::Forward(args) => code(harness::cmd::forward::run(&args, &mut stdout)),
        Command::Selftest(args) => code(harness::cmd::selftest::run(&args, &mut stdout)),
        Command::Fuzz(args) => code(harness::cmd::fuzz::run(&args, &mut stdout)),
        Command::Bench(args) => code(harness::run_bench(&args, &mut stdout)),
        Command::Schema(args) => match harness::cmd::schema::run(&args, &mut stdout) {
            Ok(code) => ExitCode::from(code),
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(2)
            }
        },
    }
}
