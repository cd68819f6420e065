//! Front-end throughput in MB/s, measured side by side in one run on the same functions: the
//! HLO text parser on the corpus's `NAME.hlo` and the StableHLO front end on its `NAME.mlir`
//! twins (the same 43 JAX functions). Each is timed alone (parse) and with the verifier (what
//! `hlo_front::read_module` does for `.mlir`, and what every tool runs before compiling HLO).
//! The last line is the ratio the StableHLO front end must keep at or above 1.
//!
//! `cargo run --release -p hlo_front --example parse_bench` (`REPS=N` sets the repetitions; the best
//! is kept).
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn texts(ext: &str) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/hlo");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| {
        let n = p.to_string_lossy();
        n.ends_with(ext) && !n.ends_with(".opt.hlo")
    });
    v.sort();
    v.iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

fn best(reps: usize, mut f: impl FnMut()) -> Duration {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(50);
    let hlo_texts = texts(".hlo");
    let mlir_texts = texts(".mlir");
    type FrontEnd = (&'static str, &'static str, fn(&str) -> bool);
    let runs: [FrontEnd; 4] = [
        ("hlo parse", ".hlo", |t| hlo_text::parse_module(t).is_ok()),
        ("mlir parse", ".mlir", |t| {
            hlo_front::parse_stablehlo_unverified(t).is_ok()
        }),
        ("hlo parse+verify", ".hlo", |t| {
            hlo_text::parse_module(t).is_ok_and(|m| hlo_verify::verify(&m).is_ok())
        }),
        ("mlir parse+verify", ".mlir", |t| {
            hlo_front::parse_stablehlo(t).is_ok()
        }),
    ];
    let mut mbps = Vec::new();
    for (name, ext, run) in runs {
        let set = if ext == ".hlo" {
            &hlo_texts
        } else {
            &mlir_texts
        };
        let bytes: usize = set.iter().map(String::len).sum();
        assert!(set.iter().all(|t| run(t)), "{name}: a corpus file fails");
        let d = best(reps, || {
            for t in set {
                std::hint::black_box(run(t));
            }
        });
        let rate = bytes as f64 / d.as_secs_f64() / 1e6;
        mbps.push(rate);
        println!(
            "{name:<18} {:>3} files {bytes:>7} bytes {:>8.0} us {rate:>8.1} MB/s",
            set.len(),
            d.as_secs_f64() * 1e6
        );
    }
    println!(
        "stablehlo / hlo text MB/s: parse {:.2}x, parse+verify {:.2}x",
        mbps[1] / mbps[0],
        mbps[3] / mbps[2]
    );
}
