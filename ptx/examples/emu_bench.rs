//! Emulator throughput benchmark (not a test): lane-instructions per second per core on the
//! workloads of `ptx::emu::bench` (a grid-stride SAXPY, shared-memory block sums and a tiled
//! matmul: the corpus nvcc kernels with bigger launches), each next to a native Rust loop doing
//! the same work, measured in the same run. `aot bench --only emulator` times the same workloads
//! with 1 and with all threads, in its report.
//!
//! `cargo run --release -p ptx --example emu_bench [-- --threads N] [--quick] [--initcheck]
//! [--racecheck] [--stack-pad K]` (`--quick`: the smaller sizes of `aot bench --quick`, one
//! repetition; short enough to run under `valgrind --tool=cachegrind`; the next two turn the
//! sanitizer's optional checks on; `--stack-pad K` runs each launch K small frames deeper on
//! the stack: with one thread the launch runs on this thread, and the fast engine's speed
//! depended on where that stack lay modulo 4 KiB until its row kernels stopped building results
//! on the stack, so `for k in $(seq 0 31)` checks that every K still runs alike; see
//! docs/performance.md, "The layout lottery" and "Round 8").
use std::time::Instant;

use ptx::emu::bench::{self, Workload};
use ptx::emu::{LaunchOptions, LoadedModule};

fn load(name: &str) -> LoadedModule {
    let path = format!(
        "{}/../testdata/corpus/ptx/{name}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("corpus PTX");
    let ast = ptx::parse(&text).expect("parse");
    LoadedModule::load(&ast).expect("load")
}

/// CPU time of the calling thread in seconds (`/proc/thread-self/schedstat`), so that a busy
/// shared machine does not distort the per-core figures; wall time where unavailable.
fn thread_cpu() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// Best of `reps` times (seconds) of `f`: thread CPU time when `cpu`, else wall time.
fn best<T>(reps: usize, cpu: bool, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..reps {
        let (t, c) = (Instant::now(), thread_cpu());
        let r = f();
        let dt = match (cpu, c, thread_cpu()) {
            (true, Some(a), Some(b)) => b - a,
            _ => t.elapsed().as_secs_f64(),
        };
        best = best.min(dt);
        last = Some(r);
    }
    (best, last.expect("reps > 0"))
}

/// Runs `f` `k` frames of at least 128 bytes deeper on the stack than it would run.
#[inline(never)]
fn padded<T>(k: usize, f: &mut dyn FnMut() -> T) -> T {
    if k == 0 {
        return f();
    }
    let pad = std::hint::black_box([0u8; 128]);
    let r = padded(k - 1, f);
    std::hint::black_box(&pad);
    r
}

/// The number after `flag` on the command line, if there is one.
fn flag_value(args: &[String], flag: &str) -> Option<usize> {
    args.iter()
        .skip_while(|a| *a != flag)
        .nth(1)
        .and_then(|s| s.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads = flag_value(&args, "--threads").unwrap_or(1);
    let quick = args.iter().any(|a| a == "--quick");
    let pad = flag_value(&args, "--stack-pad").unwrap_or(0);
    let reps = if quick { 1 } else { 3 };
    // The sanitizer's optional checks, to price them (memcheck is always on). The workloads'
    // memory is made without initcheck's shadow, so `--initcheck` prices the per-lane path and
    // the shared/local shadows, not the global shadow bits.
    let opts = LaunchOptions {
        threads,
        initcheck: args.iter().any(|a| a == "--initcheck"),
        racecheck: args.iter().any(|a| a == "--racecheck"),
        ..LaunchOptions::default()
    };
    // With one worker the launch runs on this thread, so thread CPU time is exact.
    let cpu = threads == 1 && thread_cpu().is_some();
    println!(
        "emulator benchmark, {threads} worker thread(s); times are {} (best of {reps}); per-core = total / threads",
        if cpu { "thread CPU time" } else { "wall time" }
    );

    let (n, m, d) = if quick {
        (1 << 20, 1 << 20, 128)
    } else {
        (1 << 24, 1 << 22, 256)
    };
    let workloads = [
        (
            format!("saxpy {}M (grid-stride)", n >> 20),
            Workload::saxpy(load(bench::SAXPY), n),
        ),
        (
            format!("block sums of {}M", m >> 20),
            Workload::block_sum(load(bench::BLOCK_SUM), m),
        ),
        (
            format!("matmul {d}^3 (16x16 tiles)"),
            Workload::tiled_matmul(load(bench::TILED_MATMUL), d),
        ),
    ];
    for (name, w) in workloads {
        let mut w = w.expect("workload");
        let (emu_s, stats) = best(reps, cpu, || {
            padded(pad, &mut || w.launch(&opts).expect("launch"))
        });
        let (native_s, ()) = best(reps, cpu, || w.native());
        assert!(w.check().expect("read"), "{name}: result mismatch");
        let lane_instr = stats.lane_instructions;
        let per_core = lane_instr as f64 / emu_s / threads as f64;
        println!(
            "{name:<28} {lane_instr:>12} lane-instr  emu {emu_s:>8.4} s  {:>7.1} M lane-instr/s/core  native {native_s:>8.5} s  emu/native {:>7.1}x",
            per_core / 1e6,
            emu_s / native_s
        );
    }
}
