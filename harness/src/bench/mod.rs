//! `aot bench`: the project's performance figures in one process, each measured side by side with
//! what it is judged against (machines are shared and noisy, so ratios in one run, not absolute
//! times across runs, are what to read). Sections:
//!
//! - corpus: per module of `testdata/corpus/hlo`, compiled for h100_sxm: compile time, load time,
//!   load ÷ compile, load ÷ bare protobuf decode, peak heap during load ÷ artifact size, artifact
//!   size ÷ payload (kernel binaries, constants and the embedded HLO: what the artifact must carry),
//!   launches (kernel + gemm thunks) next to XLA's fusions and library calls (`NAME.opt.hlo`) and
//!   next to real XLA:GPU's launches, executable bytes and compile time (`testdata/xla_gpu/
//!   summary.json`, [`XlaGpuSummary`]: recorded by the generator, not measured in this run), and
//!   global-memory traffic of one emulated run ÷ the minimum (parameters read once, outputs written
//!   once);
//! - emulator: lane-instructions per second per core on an elementwise, a reduction and a tiled
//!   matmul kernel of `testdata/corpus/ptx`, each next to a native loop doing the same work;
//! - scale: the modules of `testdata/bench` (matmul 512³, elementwise chain over 1M, softmax
//!   256×4096, 2-layer transformer) on the emulated GPU next to XLA:CPU's times, which
//!   `tools/xla_cpu_times.py` wrote into `testdata/bench/xla_cpu_times.json`, or which it
//!   measures in this run with `--xla-cpu-python PYTHON` (`xla_cpu`);
//! - workloads: the five workloads of issue 32 (`testdata/bench/workloads`: conv net, logsumexp
//!   64×32,000, attention 512×64, GELU MLP 256×1024×2048, embedding-gradient scatter-add),
//!   compiled with the staged-rollout options as they will be after their flip dates, next to
//!   XLA:CPU's times from `tools/bench_workloads.py`;
//! - scaling: compile and load time from 1,000 to 20,000 instructions (an elementwise chain, one
//!   kernel per 256 levels; N/2 dot+tanh pairs), with the fitted exponent;
//! - goldens: the wall time of the backward-compatibility replay (boundary versions, and every
//!   version) and of golden verification;
//! - schema: the schema bot's diff of the project's protos ÷ protox's compile of the same files,
//!   by wall time and by process CPU time (the diff's threads wait for cores on a loaded machine);
//!
//! then one summary line per metric with its target. `--quick` uses fewer repetitions and smaller
//! scaling sizes (under a minute on 2 cores, release); CI runs it as a smoke test, without
//! thresholds. Peak heap needs the counting allocator ([`crate::fuzz::alloc::CountingAlloc`]) the `aot` binary
//! installs; elsewhere that column says so.
mod corpus;
mod emulator;
mod report;
mod scale;
mod scaling;
mod stats;
mod suites;
mod workloads;
mod xla_cpu;
mod xla_gpu;

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use runtime::{DeviceDescription, EmulatedDevice};

pub use corpus::xla_launches;
use report::{machine, Report};
pub use xla_gpu::XlaGpuSummary;

/// `aot bench` arguments.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Fewer repetitions and smaller scaling sizes (under a minute on 2 cores): CI's smoke test.
    #[arg(long)]
    pub quick: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Markdown)]
    pub format: OutputFormat,
    /// Only these sections (comma-separated: corpus, emulator, scale, workloads, scaling, goldens,
    /// schema).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// A Python with jax and numpy: the scale and workloads sections then run their XLA:CPU
    /// generators (`tools/xla_cpu_times.py`, `tools/bench_workloads.py`) in this run, just before
    /// the emulated side, instead of reading the times they recorded in the repository.
    #[arg(long, value_name = "PYTHON")]
    pub xla_cpu_python: Option<PathBuf>,
}

/// How `aot bench` prints its report.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// Markdown tables (the README's form).
    Markdown,
    /// One JSON object: `sections` (title, note, headers, rows) and `summary`.
    Json,
}

/// The target every section compiles for (its spec is `testdata/target_specs/TARGET.txtpb`).
const TARGET: &str = "h100_sxm";

struct Env {
    root: PathBuf,
    target: compiler::Target,
    desc: DeviceDescription,
    quick: bool,
    /// `--xla-cpu-python`: XLA:CPU measured in this run.
    xla_cpu_python: Option<PathBuf>,
}

impl Env {
    fn device(&self) -> EmulatedDevice {
        EmulatedDevice::new(self.desc.clone())
    }
}

/// One section of the bench.
type Step = fn(&Env, &mut Report) -> anyhow::Result<()>;

/// Runs the whole bench and prints the report. Exit code 0 (a bench has no verdict; the summary
/// says which targets are met), 2 on an error.
pub fn run(args: &BenchArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let root = crate::golden::cases::repo_root();
    let spec = root.join(format!("testdata/target_specs/{TARGET}.txtpb"));
    let target = compiler::Target::load(&spec)?;
    let desc = DeviceDescription::from_target_config(&proto::load_target_config(&spec)?)?;
    let env = Env {
        root,
        target,
        desc,
        quick: args.quick,
        xla_cpu_python: args.xla_cpu_python.clone(),
    };
    let mut report = Report {
        date_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        machine: machine(),
        quick: args.quick,
        ..Report::default()
    };
    let steps: [(&str, Step); 7] = [
        ("corpus", corpus::corpus),
        ("emulator", emulator::emulator),
        ("scale", scale::scale),
        ("workloads", workloads::workloads),
        ("scaling", scaling::scaling),
        ("goldens", suites::goldens),
        ("schema", suites::schema),
    ];
    if let Some(unknown) = args
        .only
        .iter()
        .find(|o| !steps.iter().any(|(name, _)| name == o))
    {
        anyhow::bail!(
            "--only {unknown}: no such section (corpus, emulator, scale, workloads, scaling, goldens, schema)"
        );
    }
    for (name, step) in steps {
        if !args.only.is_empty() && !args.only.iter().any(|o| o == name) {
            continue;
        }
        let t = Instant::now();
        // Each section on its own (default-stack) thread, so a panic is reported per section.
        // The 20,000-deep chains of the growth section need no larger stack: fusion cuts
        // operand chains into kernels and the code generator bounds its recursion
        // (docs/hardening.md, "Depth").
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .name(format!("bench-{name}"))
                .spawn_scoped(s, || step(&env, &mut report))
                .map_err(anyhow::Error::from)
                .and_then(|h| {
                    h.join()
                        .map_err(|_| anyhow::anyhow!("the {name} section panicked"))?
                })
        })
        .with_context(|| format!("bench section {name}"))?;
        eprintln!(
            "aot bench: {name} done in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    match args.format {
        OutputFormat::Markdown => report.markdown(out)?,
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &report)?;
            writeln!(out)?;
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::scale::scale_input;
    use super::scaling::{chain_module, dot_tanh_module};
    use super::stats::exponent;

    #[test]
    fn exponent_of_a_power_law_is_its_power() {
        let pts: Vec<(f64, f64)> = [1000.0, 2000.0, 5000.0, 20000.0]
            .iter()
            .map(|&n: &f64| (n, 3e-9 * n.powf(1.44)))
            .collect();
        let e = exponent(&pts).unwrap_or(0.0);
        assert!((e - 1.44).abs() < 1e-9, "{e}");
        assert_eq!(exponent(&pts[..1]), None);
    }

    #[test]
    fn scale_inputs_follow_the_generators_formula() {
        // tools/xla_cpu_times.py: ((i * (7 + 2p)) % 13 - 6) / 16.
        assert_eq!(scale_input(0, 0), -6.0 / 16.0);
        assert_eq!(scale_input(0, 1), 1.0 / 16.0);
        // (2 * 9) mod 13 = 5.
        assert_eq!(scale_input(1, 2), -1.0 / 16.0);
        assert_eq!(scale_input(2, 1000), ((11_000 % 13) as f32 - 6.0) / 16.0);
    }

    #[test]
    fn generated_scaling_modules_parse_with_about_n_instructions() {
        for n in [10, 101] {
            let chain = hlo_text::parse_module(&chain_module(n)).map_err(|e| e.to_string());
            let dots = hlo_text::parse_module(&dot_tanh_module(n)).map_err(|e| e.to_string());
            let count = |m: &hlo::HloModule| m.get(m.entry).map_or(0, |c| c.instructions.len());
            assert_eq!(chain.as_ref().map(count), Ok(n));
            assert_eq!(dots.as_ref().map(count), Ok(2 + 2 * (n / 2)));
        }
    }
}
