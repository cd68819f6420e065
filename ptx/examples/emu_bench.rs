//! Emulator throughput benchmark (not a test): lane-instructions per second per core on a large
//! grid-stride SAXPY and on a 256x256x256 tiled matmul (the corpus nvcc kernels with bigger
//! launches), each next to a native Rust loop doing the same work, measured in the same run.
//!
//! `cargo run --release -p ptx --example emu_bench [-- --threads N]`
use std::time::Instant;

use ptx::emu::{self, LaunchOptions, LoadedModule, Memory, ParamValue};

fn load(name: &str) -> LoadedModule {
    let path = format!(
        "{}/../testdata/corpus/ptx/{name}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("corpus PTX");
    let ast = ptx::parse(&text).expect("parse");
    LoadedModule::load(&ast).expect("load")
}

fn f32s(mem: &mut Memory, v: &[f32]) -> emu::DevicePtr {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let p = mem.alloc(b.len() as u64).expect("alloc");
    mem.write(p, &b).expect("write");
    p
}

fn read_f32s(mem: &mut Memory, p: emu::DevicePtr, n: usize) -> Vec<f32> {
    mem.read_vec(p, n * 4)
        .expect("read")
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
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

fn report(name: &str, lane_instr: u64, emu_s: f64, native_s: f64, threads: usize) {
    let per_core = lane_instr as f64 / emu_s / threads as f64;
    println!(
        "{name:<28} {lane_instr:>12} lane-instr  emu {emu_s:>8.4} s  {:>7.1} M lane-instr/s/core  native {native_s:>8.5} s  emu/native {:>7.1}x",
        per_core / 1e6,
        emu_s / native_s
    );
}

fn main() {
    let threads = std::env::args()
        .skip_while(|a| a != "--threads")
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1usize);
    let opts = LaunchOptions {
        threads,
        ..LaunchOptions::default()
    };
    // With one worker the launch runs on this thread, so thread CPU time is exact.
    let cpu = threads == 1 && thread_cpu().is_some();
    println!(
        "emulator benchmark, {threads} worker thread(s); times are {} (best of 3); per-core = total / threads",
        if cpu { "thread CPU time" } else { "wall time" }
    );

    // SAXPY, grid-stride, 16M elements.
    let saxpy = load("saxpy_gridstride");
    let n = 1usize << 24;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * 0.5).collect();
    let alpha = 1.5f32;
    let mut mem = Memory::new();
    let px = f32s(&mut mem, &x);
    let py = f32s(&mut mem, &y0);
    let params = [
        ParamValue::i32(n as i32),
        ParamValue::f32(alpha),
        ParamValue::ptr(px),
        ParamValue::ptr(py),
    ];
    let (emu_s, stats) = best(3, cpu, || {
        emu::launch(
            &saxpy,
            "saxpy",
            [1024, 1, 1],
            [256, 1, 1],
            0,
            &params,
            &mut mem,
            &opts,
        )
        .expect("launch")
    });
    let mut y = y0.clone();
    let (native_s, _) = best(3, cpu, || {
        y.copy_from_slice(&y0);
        for (yi, xi) in y.iter_mut().zip(&x) {
            *yi = alpha.mul_add(*xi, *yi);
        }
        std::hint::black_box(&y);
    });
    // Check once (the emulator ran 3 times on the same y: recompute 3 applications natively).
    let got = read_f32s(&mut mem, py, n);
    let mut want = y0.clone();
    for _ in 0..3 {
        for (w, xi) in want.iter_mut().zip(&x) {
            *w = alpha.mul_add(*xi, *w);
        }
    }
    assert!(
        got.iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "saxpy result mismatch"
    );
    report(
        "saxpy 16M (grid-stride)",
        stats.lane_instructions,
        emu_s,
        native_s,
        threads,
    );

    // Tiled matmul 256x256x256.
    let mm = load("tiled_matmul");
    let d = 256usize;
    let a: Vec<f32> = (0..d * d)
        .map(|i| ((i * 7) % 13) as f32 * 0.25 - 1.0)
        .collect();
    let b: Vec<f32> = (0..d * d)
        .map(|i| ((i * 5) % 11) as f32 * 0.125 - 0.5)
        .collect();
    let mut mem = Memory::new();
    let pa = f32s(&mut mem, &a);
    let pb = f32s(&mut mem, &b);
    let pc = f32s(&mut mem, &vec![0.0; d * d]);
    let dd = d as i32;
    let params = [
        ParamValue::ptr(pa),
        ParamValue::ptr(pb),
        ParamValue::ptr(pc),
        ParamValue::i32(dd),
        ParamValue::i32(dd),
        ParamValue::i32(dd),
    ];
    let grid = [(d / 16) as u32, (d / 16) as u32, 1];
    let (emu_s, stats) = best(3, cpu, || {
        emu::launch(
            &mm,
            "matmul",
            grid,
            [16, 16, 1],
            0,
            &params,
            &mut mem,
            &opts,
        )
        .expect("launch")
    });
    let mut c = vec![0f32; d * d];
    let (native_s, _) = best(3, cpu, || {
        for i in 0..d {
            for j in 0..d {
                let mut acc = 0f32;
                for k in 0..d {
                    acc = a[i * d + k].mul_add(b[k * d + j], acc);
                }
                c[i * d + j] = acc;
            }
        }
        std::hint::black_box(&c);
    });
    let got = read_f32s(&mut mem, pc, d * d);
    assert!(
        got.iter().zip(&c).all(|(g, w)| g.to_bits() == w.to_bits()),
        "matmul result mismatch"
    );
    report(
        "matmul 256^3 (16x16 tiles)",
        stats.lane_instructions,
        emu_s,
        native_s,
        threads,
    );
}
