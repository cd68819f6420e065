//! `aot fuzz [--iterations N] [--seed S] [--target loader|hlo|stablehlo|ptx|config]...`: long
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
    let limits = Limits {
        deadline: Duration::from_secs(args.deadline_secs),
        heap_bytes: args.max_heap_bytes,
        time_limit: args.max_secs.map(Duration::from_secs),
        ..Limits::default()
    };
    let root = fuzz::repo_root();
    let mut findings = 0;
    for target in targets {
        let seeds = Seeds::load(target, &root)?;
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
