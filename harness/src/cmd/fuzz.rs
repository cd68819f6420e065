//! `aot fuzz [--iterations N] [--seed S] [--target loader|hlo|stablehlo|ptx|config|mlirbc|jax-exported]...`: long
//! mutation runs of [`crate::fuzz`], reporting how many cases ended in each outcome (by error
//! code or parse-error kind). Exit status: 0 no finding, 1 a panic (each printed with the case
//! seed that replays it), 2 an error. A hang or an allocation over the limit ends the process
//! (status 1 from the watchdog, an abort from the allocator) after printing the case seed.
use std::io::Write;
use std::time::{Duration, Instant};

use crate::fuzz::{self, Limits, Seeds, Target};

/// Arguments of `aot fuzz`.
#[derive(Debug, clap::Args)]
pub struct FuzzArgs {
    /// Cases per target.
    #[arg(long, default_value_t = 100_000)]
    pub iterations: u64,
    /// Seed of the first case (case i uses SEED + i); default: from the clock, printed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Entry points to fuzz (repeat the option for several; default: all, one after another).
    #[arg(long, value_enum)]
    pub target: Vec<Target>,
    /// Wall time of one case, in seconds, before it counts as a hang.
    #[arg(long, default_value_t = 30)]
    pub deadline_secs: u64,
    /// Live heap bytes a case may reach before its allocation is refused.
    #[arg(long, default_value_t = 1 << 30)]
    pub max_heap_bytes: usize,
    /// Stop each target after this many seconds, even before --iterations (the report gives
    /// the count that ran).
    #[arg(long)]
    pub max_secs: Option<u64>,
    /// Loader: lane-instructions one emulated launch may execute (default: `Limits::default`).
    #[arg(long)]
    pub instruction_budget: Option<u64>,
    /// Loader: wall time of one emulated launch, in milliseconds.
    #[arg(long)]
    pub launch_wall_ms: Option<u64>,
    /// Loader: wall time of one execution, in seconds.
    #[arg(long)]
    pub max_execution_secs: Option<u64>,
    /// Loader: iterations one while loop may run.
    #[arg(long)]
    pub max_while_iterations: Option<u64>,
    /// Loader: bytes the emulated device may allocate.
    #[arg(long)]
    pub emulator_memory_bytes: Option<u64>,
    /// Loader: emulator worker threads per launch (0: one per core). With more than one, a
    /// panic in a worker is reported by the emulator as an error, not caught as a finding.
    #[arg(long)]
    pub emulator_threads: Option<usize>,
    /// Run every case, even one whose bytes equal an earlier case's.
    #[arg(long)]
    pub no_dedupe: bool,
    /// Run each seed input unmutated instead (every one should be `ok`: a seed the limits stop
    /// is printed, and the exit status is 1), to check the limits are not too tight.
    #[arg(long)]
    pub seeds_only: bool,
}

impl FuzzArgs {
    /// The limits the options give ([`Limits::default`] for each one not given).
    pub fn limits(&self) -> Limits {
        let mut limits = Limits {
            deadline: Duration::from_secs(self.deadline_secs),
            heap_bytes: self.max_heap_bytes,
            time_limit: self.max_secs.map(Duration::from_secs),
            dedupe: !self.no_dedupe,
            ..Limits::default()
        };
        let f = &mut limits.flags;
        if let Some(v) = self.instruction_budget {
            f.emulator_instruction_budget = v;
        }
        if let Some(v) = self.max_execution_secs {
            f.max_execution_secs = v;
        }
        if let Some(v) = self.max_while_iterations {
            f.max_while_iterations = v;
        }
        if let Some(v) = self.emulator_memory_bytes {
            f.emulator_host_memory_bytes = v;
        }
        if let Some(v) = self.launch_wall_ms {
            limits.launch_wall_time = Duration::from_millis(v);
        }
        if let Some(v) = self.emulator_threads {
            limits.emulator_threads = v;
        }
        limits
    }
}

/// Runs `aot fuzz`; the exit status.
pub fn run(args: &FuzzArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    if !fuzz::alloc::installed() {
        anyhow::bail!("this binary's global allocator does not count allocations (harness::fuzz::alloc::CountingAlloc), so the memory property cannot be checked");
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    });
    let targets: Vec<Target> = if args.target.is_empty() {
        Target::ALL.to_vec()
    } else {
        args.target.clone()
    };
    let limits = args.limits();
    writeln!(out, "{}", limits.describe())?;
    let root = fuzz::repo_root();
    let mut findings = 0;
    for target in targets {
        let seeds = Seeds::load(target, &root)?;
        if args.seeds_only {
            findings += run_seeds(target, &seeds, &limits, out)?;
            continue;
        }
        writeln!(
            out,
            "fuzz {}: {} cases from {} seed inputs, seed {seed}",
            target.name(),
            args.iterations,
            seeds.len()
        )?;
        out.flush()?;
        let mut last = Instant::now();
        let report = fuzz::run(&seeds, args.iterations, seed, &limits, |r| {
            // Progress on stderr every 30 s, so a long run shows it is alive.
            if last.elapsed() >= Duration::from_secs(30) {
                last = Instant::now();
                eprintln!("  {} cases, {} panics", r.cases, r.findings.len());
            }
        });
        write!(out, "{}", report.render(target))?;
        out.flush()?;
        findings += report.findings.len();
    }
    Ok(if findings == 0 { 0 } else { 1 })
}

/// `--seeds-only`: each seed unmutated; the number that were not `ok`.
fn run_seeds(
    target: Target,
    seeds: &Seeds,
    limits: &Limits,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    let started = Instant::now();
    let mut bad = 0;
    for i in 0..seeds.len() {
        let t0 = Instant::now();
        let outcome = seeds.run_seed(i, limits);
        if !matches!(outcome, Some(fuzz::Outcome::Ok)) {
            bad += 1;
            writeln!(
                out,
                "  {}: {outcome:?} ({:.3} s)",
                seeds.name(i).unwrap_or("?"),
                t0.elapsed().as_secs_f64()
            )?;
        }
    }
    writeln!(
        out,
        "{}: {} seeds in {:.1} s, {bad} not ok",
        target.name(),
        seeds.len(),
        started.elapsed().as_secs_f64()
    )?;
    Ok(bad)
}
