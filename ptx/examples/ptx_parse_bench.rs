//! PTX front-end throughput in MB/s over a set of PTX files, measured side by side in one run:
//! lexing, [`ptx::parse`] (the typed model), [`ptx::check`] (the same grammar, no model built) and
//! [`ptx::outline`] (signatures parsed, bodies only delimited: what the runtime does at load).
//!
//! `cargo run --release -p ptx --example ptx_parse_bench [-- FILE_OR_DIR...]` (default: the bundled
//! nvcc corpus under `testdata/corpus/ptx`).
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn files(args: &[String]) -> Vec<PathBuf> {
    let roots: Vec<PathBuf> = if args.is_empty() {
        vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/ptx")]
    } else {
        args.iter().map(PathBuf::from).collect()
    };
    let mut out = Vec::new();
    for r in roots {
        if r.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(&r)
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            v.retain(|p| p.extension().is_some_and(|e| e == "ptx"));
            v.sort();
            out.extend(v);
        } else {
            out.push(r);
        }
    }
    out
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let texts: Vec<String> = files(&args)
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(30);
    type FrontEnd = (&'static str, fn(&str) -> bool);
    let front_ends: [FrontEnd; 4] = [
        ("lex", |t| ptx::lex(t).is_ok()),
        ("parse", |t| ptx::parse(t).is_ok()),
        ("check", |t| ptx::check(t).is_ok()),
        ("outline", |t| ptx::outline(t).is_ok()),
    ];
    println!("{} files, {bytes} bytes", texts.len());
    for (name, run) in front_ends {
        let d = best(reps, || {
            for t in &texts {
                std::hint::black_box(run(t));
            }
        });
        println!(
            "{name:<8} {:>8.0} us  {:>7.1} MB/s",
            d.as_secs_f64() * 1e6,
            bytes as f64 / d.as_secs_f64() / 1e6
        );
    }
}
