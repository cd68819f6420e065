//! Runs one PTX kernel on a deterministic input, for profiling the emulator (not a test): the
//! driver behind the host-instructions-per-lane-instruction figures of docs/performance.md,
//! measured with
//!
//! ```text
//! valgrind --tool=cachegrind --cache-sim=no \
//!     target/debug/examples/emu_profile KERNEL.ptx NAME GRID BLOCK BYTES... [--reference]
//! ```
//!
//! (the whole process: `--toggle-collect` is callgrind's, cachegrind has no such option; the
//! process without the launch, i.e. the input fill, is about 6.5 M host instructions plus 2.6 M
//! per MB of buffers), and per worker thread with
//!
//! ```text
//! valgrind --tool=callgrind --separate-threads=yes target/debug/examples/emu_profile ... --threads 2
//! ```
//!
//! Every parameter given as a number is a buffer of `BYTES` bytes filled with the f32 values
//! `aot bench`'s scale modules get (`harness::bench`'s `scale_input`), so the compiler's
//! scale kernels (`aot inspect` prints their PTX) run on the data they are measured with;
//! `i32:N` and `f32:X` are scalar parameters (for the corpus kernels of `aot bench --only
//! emulator`). `GRID` and `BLOCK` are `X` or `XxY`. One worker thread unless `--threads N`;
//! prints the launch's lane-instructions and its wall time.
use std::time::Instant;

use ptx::emu::{self, LaunchOptions, LoadedModule, Memory, ParamValue};

fn scale_input(p: usize, i: usize) -> f32 {
    let v = (i as u64).wrapping_mul(7 + 2 * p as u64) % 13;
    (v as f32 - 6.0) / 16.0
}

/// `X` or `XxY` as a launch dimension.
fn dims(s: &str) -> [u32; 3] {
    let mut it = s.split('x').map(|v| v.parse::<u32>().expect("a dimension"));
    let x = it.next().expect("a dimension");
    [x, it.next().unwrap_or(1), 1]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reference = args.iter().any(|a| a == "--reference");
    let threads = args
        .iter()
        .position(|a| a == "--threads")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(1usize);
    let pos: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--threads"))
        .map(|(_, a)| a)
        .collect();
    let [file, kernel, grid, block, bufs @ ..] = pos.as_slice() else {
        eprintln!("usage: emu_profile FILE.ptx KERNEL GRID BLOCK BYTES|i32:N|f32:X... [--reference] [--threads N]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(file).expect("read the PTX file");
    let module = LoadedModule::load(&ptx::parse(&text).expect("parse")).expect("load");
    let mut mem = Memory::new();
    let mut params = Vec::new();
    for (p, bytes) in bufs.iter().enumerate() {
        if let Some(v) = bytes.strip_prefix("i32:") {
            params.push(ParamValue::i32(v.parse().expect("i32 parameter")));
            continue;
        }
        if let Some(v) = bytes.strip_prefix("f32:") {
            params.push(ParamValue::f32(v.parse().expect("f32 parameter")));
            continue;
        }
        let n: usize = bytes.parse().expect("buffer size in bytes");
        let data: Vec<u8> = (0..n / 4)
            .flat_map(|i| scale_input(p, i).to_le_bytes())
            .collect();
        let ptr = mem.alloc(n as u64).expect("alloc");
        mem.write(ptr, &data).expect("write");
        params.push(ParamValue::ptr(ptr));
    }
    let options = LaunchOptions {
        threads,
        reference_engine: reference,
        ..LaunchOptions::default()
    };
    let t = Instant::now();
    let stats = emu::launch(
        &module,
        kernel,
        dims(grid),
        dims(block),
        0,
        &params,
        &mut mem,
        &options,
    )
    .expect("launch");
    println!(
        "{kernel}: {} lane-instructions, {} warp-instructions, {:.1} ms",
        stats.lane_instructions,
        stats.warp_instructions,
        t.elapsed().as_secs_f64() * 1e3
    );
}
