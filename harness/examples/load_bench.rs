//! Load-time benchmark, per corpus module, measured side by side in one run:
//!
//! - load (bytes → ready executable on an emulated H100, `RuntimeFlags::default()`: decode,
//!   ABI and capability checks, the embedded HLO checked by streaming over it, thunks decoded and
//!   validated, each kernel's PTX outline parsed, command-buffer pass) against compile (HLO
//!   module → bytes). Two compiles: PTX only (the default), and XLA's whole pipeline, which also
//!   assembles every kernel with `ptxas` and embeds the cubins (`CompileOptions::cubin`; when
//!   ptxas is found), whose artifact is then the one loaded; goal: load ≥ 100x faster;
//! - load against a bare protobuf decode (prost, whole message) of the same bytes; goal: ≤ 3x;
//!   `load+full` is the load with `PtxCheck::Full` (every PTX body checked), for comparison;
//! - peak heap during load (a counting global allocator) against the artifact size; goal: ≤ 2x.
//!
//! `cargo run --release -p harness --example load_bench [-- FILTER]`
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use proto::prost::Message;

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: `l` is the caller's layout, passed on unchanged.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `System.alloc` with the same layout (`alloc` above).
        unsafe { System.dealloc(p, l) };
        CURRENT.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn best<T>(reps: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..reps {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed());
        last = Some(v);
    }
    (best, last.expect("reps > 0"))
}

fn main() -> anyhow::Result<()> {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let spec = root.join("testdata/target_specs/h100_sxm.txtpb");
    let target = compiler::Target::load(&spec)?;
    let desc = runtime::DeviceDescription::from_target_config(&proto::load_target_config(&spec)?)?;
    let flags = runtime::RuntimeFlags::default();
    let full = runtime::RuntimeFlags {
        ptx_check: runtime::PtxCheck::Full,
        ..runtime::RuntimeFlags::default()
    };
    let have_ptxas = ptx::ptxas::find().is_some();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root.join("testdata/corpus/hlo"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.ends_with(".hlo") && !n.ends_with(".opt.hlo") && n.contains(filter.as_str())
        })
        .collect();
    cases.sort();
    println!(
        "{:<20} {:>6} {:>8} {:>7} {:>7} {:>8} {:>8} {:>9} {:>8} {:>9} {:>9}",
        "module",
        "bytes",
        "compile",
        "decode",
        "load",
        "load+full",
        "cmp/load",
        "load/dec",
        "heap/sz",
        "+ptxas",
        "xla/load"
    );
    let (mut r1, mut r2, mut r3, mut r4, mut r5) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    for path in cases {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_owned();
        let module = hlo_text::parse_module(&std::fs::read_to_string(&path)?)?;
        let opts = compiler::CompileOptions::default();
        let (compile, bytes) = best(3, || compiler::compile_to_bytes(&module, &target, &opts));
        let bytes = bytes?;
        let device = runtime::EmulatedDevice::new(desc.clone());
        let reps = 20;
        let (decode, _) = best(reps, || {
            proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice()).map(|p| p.thunks.len())
        });
        let (load, _) = best(reps, || {
            runtime::load(&bytes, &device, &flags).map(|e| e.thunks.len())
        });
        let (load_full, _) = best(reps, || {
            runtime::load(&bytes, &device, &full).map(|e| e.thunks.len())
        });
        // Peak heap of one load, above what was live before it.
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let exe = runtime::load(&bytes, &device, &flags)?;
        let peak = PEAK.load(Ordering::Relaxed) - base;
        drop(exe);
        // XLA's pipeline: the same compile plus ptxas for every kernel; that artifact loaded.
        let xla = if have_ptxas {
            let mut with = compiler::CompileOptions::default();
            with.cubin = true;
            let (t, b) = best(3, || compiler::compile_to_bytes(&module, &target, &with));
            let b = b?;
            let (l, _) = best(reps, || {
                runtime::load(&b, &device, &flags).map(|e| e.thunks.len())
            });
            Some((t, l))
        } else {
            None
        };
        let a = compile.as_secs_f64() / load.as_secs_f64();
        let b = load.as_secs_f64() / decode.as_secs_f64();
        let c = peak as f64 / bytes.len() as f64;
        let f = load_full.as_secs_f64() / decode.as_secs_f64();
        r1.push(a);
        r2.push(b);
        r3.push(c);
        r5.push(f);
        let (xla_col, ratio_col) = match xla {
            Some((t, l)) => {
                let x = t.as_secs_f64() / l.as_secs_f64();
                r4.push(x);
                (
                    format!("{:.1}ms", t.as_secs_f64() * 1e3),
                    format!("{x:.0}x"),
                )
            }
            None => ("-".into(), "-".into()),
        };
        println!(
            "{name:<20} {:>6} {:>6.0}us {:>5.1}us {:>5.1}us {:>7.1}us {:>7.0}x {:>8.1}x {:>7.2}x {:>9} {:>9}",
            bytes.len(),
            us(compile),
            us(decode),
            us(load),
            us(load_full),
            a,
            b,
            c,
            xla_col,
            ratio_col
        );
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let (max2, max3, max5) = (max(&r2), max(&r3), max(&r5));
    println!(
        "median: load/decode {:.1}x (goal <= 3x; max {max2:.1}x; with PtxCheck::Full {:.1}x, max {max5:.1}x), peak heap/artifact {:.2}x (goal <= 2x; max {max3:.2}x)",
        med(&mut r2),
        med(&mut r5),
        med(&mut r3),
    );
    let min1 = min(&r1);
    let a = med(&mut r1);
    if r4.is_empty() {
        println!("median: compile/load {a:.0}x (PTX only; min {min1:.0}x); ptxas not found, so no XLA-pipeline compile (goal >= 100x)");
    } else {
        let min4 = min(&r4);
        println!(
            "median: compile/load {:.0}x with ptxas as XLA compiles (goal >= 100x; min {min4:.0}x); PTX-only compile/load {a:.0}x (min {min1:.0}x)",
            med(&mut r4)
        );
    }
    Ok(())
}
