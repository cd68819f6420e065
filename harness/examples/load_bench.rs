//! Load-time benchmark, per corpus module, measured side by side in one run:
//!
//! - load (bytes → ready executable on an emulated H100: validate, decode thunks, parse PTX,
//!   command-buffer pass, kernels decoded for the emulator) against compile (HLO module →
//!   bytes); goal: load ≥ 100x faster;
//! - load against a bare protobuf decode of the same bytes; goal: ≤ 3x;
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
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
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
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root.join("testdata/corpus/hlo"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.ends_with(".hlo") && !n.ends_with(".opt.hlo") && n.contains(filter.as_str())
        })
        .collect();
    cases.sort();
    println!(
        "{:<28} {:>8} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "module", "bytes", "compile", "load", "decode", "cmp/load", "load/dec", "heap/size"
    );
    let (mut r1, mut r2, mut r3) = (Vec::new(), Vec::new(), Vec::new());
    for path in cases {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_owned();
        let module = hlo::parse_module(&std::fs::read_to_string(&path)?)?;
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
        let registry = runtime::Registry::builtin();
        let (validate, _) = best(reps, || {
            runtime::validate(&bytes, &desc, &flags, &registry).map(|e| e.thunks.len())
        });
        let (ptx_parse, _) = best(reps, || {
            let p = proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice()).ok();
            p.map(|p| {
                p.thunks
                    .iter()
                    .filter_map(|t| match &t.r#impl {
                        Some(proto::xla::gpu::thunk_proto::Impl::KernelThunk(k)) => {
                            k.kernel_binary.as_ref().map(|b| ptx::parse(&b.ptx).is_ok())
                        }
                        _ => None,
                    })
                    .count()
            })
        });
        let (hlo_conv, _) = best(reps, || {
            let p = proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice()).ok();
            p.and_then(|p| {
                p.hlo_module_with_config
                    .map(|h| hlo::convert::from_proto(&h).is_ok())
            })
        });
        let (hlo_check, _) = best(reps, || {
            let p = proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice()).ok();
            p.and_then(|p| {
                p.hlo_module_with_config
                    .map(|h| hlo::convert::check_proto(&h).is_ok())
            })
        });
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let v = runtime::validate(&bytes, &desc, &flags, &registry)?;
        let vpeak = PEAK.load(Ordering::Relaxed) - base;
        drop(v);
        eprintln!("  {name}: validate {:.0}us (top-level ptx parse+decode {:.0}us, hlo decode+convert {:.0}us, hlo decode+check {:.0}us), validate peak heap {:.1}x", validate.as_secs_f64()*1e6, ptx_parse.as_secs_f64()*1e6, hlo_conv.as_secs_f64()*1e6, hlo_check.as_secs_f64()*1e6, vpeak as f64 / bytes.len() as f64);
        // Peak heap of one load, above what was live before it.
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let exe = runtime::load(&bytes, &device, &flags)?;
        let peak = PEAK.load(Ordering::Relaxed) - base;
        drop(exe);
        let a = compile.as_secs_f64() / load.as_secs_f64();
        let b = load.as_secs_f64() / decode.as_secs_f64();
        let c = peak as f64 / bytes.len() as f64;
        r1.push(a);
        r2.push(b);
        r3.push(c);
        println!(
            "{name:<28} {:>8} {:>8.0}us {:>8.0}us {:>8.1}us {:>8.0}x {:>8.1}x {:>8.2}x",
            bytes.len(),
            compile.as_secs_f64() * 1e6,
            load.as_secs_f64() * 1e6,
            decode.as_secs_f64() * 1e6,
            a,
            b,
            c
        );
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let (min1, max2, max3) = (
        r1.iter().copied().fold(f64::INFINITY, f64::min),
        r2.iter().copied().fold(0.0, f64::max),
        r3.iter().copied().fold(0.0, f64::max),
    );
    println!(
        "median: compile/load {:.0}x (goal >= 100x; min {min1:.0}x), load/decode {:.1}x (goal <= 3x; max {max2:.1}x), peak heap/artifact {:.2}x (goal <= 2x; max {max3:.2}x)",
        med(&mut r1),
        med(&mut r2),
        med(&mut r3)
    );
    Ok(())
}
