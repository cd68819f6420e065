//! The compiler benchmark: for every module of testdata/corpus/hlo, compiled for h100_sxm,
//! reports
//! - compile time (median of 5 compilations, measured side by side in this run),
//! - kernel launches (kernel thunks) and library calls (gemm thunks) in the executable, against
//!   the fusions + library calls + unfused kernel instructions of XLA's own optimized module
//!   (`NAME.opt.hlo`),
//! - XLA:GPU's kernel launches, device-to-device copies, inner-executable bytes and compile time
//!   for the same module and target, read from `testdata/xla_gpu/summary.json`
//!   ([`harness::XlaGpuSummary`], written by `tools/xla_artifacts/gen.py`; `-` where the
//!   file or the row is missing: the bench needs no Python), and whether this project needs at
//!   most as many launches and copies (copy thunks counted at every depth, each once, as the
//!   generator counts XLA's); XLA's compile times are the generator's, not measured side by side,
//!   so their ratio is for reading, not judging,
//! - global-memory traffic of one run on the emulated GPU (today's runtime), in bytes and divided
//!   by the minimum: parameter bytes read once plus output bytes written once. XLA:GPU's traffic
//!   is not in the summary and cannot be read from its artifact: its kernels are cubins only
//!   (no PTX for the emulator to run) and the artifact records what each launch may touch, not
//!   what it reads; docs/compiler.md, "Tests and benchmark".
//!
//! - emulated run time of that one run (the `ptx` emulator's speed, not a GPU's).
//!
//! It lives in the harness because it runs what the compiler emits, and only the harness sees
//! both the compiler and the runtime (docs: DESIGN.md, dependency rules); `aot bench` reports
//! the same figures over the corpus without the XLA:GPU column.
//!
//! Run: `cargo run --release -p harness --example corpus_bench [-- DIR [SUBSTRING]]`: DIR (relative
//! to the workspace root, default `testdata/corpus/hlo`) and only the cases whose name contains
//! SUBSTRING, e.g. `-- testdata/models conv`. Directories without `NAME.opt.hlo` show `?` for XLA.
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use harness::{xla_launches, XlaGpuSummary};
use proto::prost::Message;
use proto::xla::gpu::{thunk_proto::Impl, GpuExecutableProto, ThunkProto};
use runtime::{Device, DeviceDescription, EmulatedDevice, RuntimeFlags};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// (kernels, gemms, other thunks, copies), at every depth.
fn count(thunks: &[ThunkProto], k: &mut (usize, usize, usize, usize)) {
    for t in thunks {
        match &t.r#impl {
            Some(Impl::KernelThunk(_)) => k.0 += 1,
            Some(Impl::GemmThunk(_)) => k.1 += 1,
            Some(Impl::CopyThunk(_)) => {
                k.2 += 1;
                k.3 += 1;
            }
            Some(Impl::WhileThunk(w)) => {
                k.2 += 1;
                for s in [&w.condition_thunk_sequence, &w.body_thunk_sequence]
                    .into_iter()
                    .flatten()
                {
                    count(&s.thunks, k);
                }
            }
            Some(Impl::ConditionalThunk(c)) => {
                k.2 += 1;
                for s in &c.branch_thunks {
                    count(&s.thunks, k);
                }
            }
            _ => k.2 += 1,
        }
    }
}

fn census(exe: &GpuExecutableProto) -> (usize, usize, usize, usize) {
    let mut k = (0, 0, 0, 0);
    count(&exe.thunks, &mut k);
    k
}

/// Runs the executable once on an emulated device: global bytes read and written, and that ÷ the
/// minimum (parameters read once, outputs written once); `None` for multi-replica executables.
fn run(
    exe: &GpuExecutableProto,
    desc: &DeviceDescription,
    inputs: &[hlo::Array],
) -> anyhow::Result<Option<(u64, f64)>> {
    let dev = Arc::new(EmulatedDevice::new(desc.clone()));
    let loaded = runtime::load(&exe.encode_to_vec(), dev.as_ref(), &RuntimeFlags::default())?;
    if loaded.num_replicas != 1 {
        return Ok(None);
    }
    let devices: Vec<Arc<dyn Device>> = vec![dev.clone()];
    harness::cmd::run::execute_arrays(&loaded, &devices, std::slice::from_ref(&inputs.to_vec()))?;
    let min: u64 = loaded.parameters.iter().map(|(_, l)| l.size).sum::<u64>()
        + loaded.outputs.iter().map(|l| l.size).sum::<u64>();
    let totals = dev.take_totals();
    let bytes = totals.bytes_read + totals.bytes_written;
    Ok((min > 0).then(|| (bytes, bytes as f64 / min as f64)))
}

fn main() {
    let cli: Vec<String> = std::env::args().skip(1).collect();
    let dir = root().join(cli.first().map_or("testdata/corpus/hlo", String::as_str));
    let filter = cli.get(1).cloned().unwrap_or_default();
    let target = compiler::Target::load(&root().join("testdata/target_specs/h100_sxm.txtpb"))
        .expect("target");
    let options = compiler::CompileOptions::default();
    let spec = proto::load_target_config(&root().join("testdata/target_specs/h100_sxm.txtpb"))
        .expect("target config");
    let desc = DeviceDescription::from_target_config(&spec).expect("device");
    let mut cases: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".io.json"))
                .map(str::to_owned)
        })
        .filter(|n| n.contains(&filter))
        .collect();
    cases.sort();
    let gpu = match XlaGpuSummary::read(&root()) {
        Ok(Some(s)) => s,
        Ok(None) => {
            eprintln!("no XLA:GPU summary (testdata/xla_gpu/summary.json): those columns show -");
            XlaGpuSummary::default()
        }
        Err(e) => {
            eprintln!("{e}: the XLA:GPU columns show -");
            XlaGpuSummary::default()
        }
    };
    println!("| case | compile ms | XLA:GPU compile ms | bytes | XLA:GPU bytes | kernels | gemms | other thunks | launches (k+g) | XLA fusions+calls | launches ok | XLA:GPU launches | <= XLA:GPU | copies | XLA:GPU copies | traffic bytes | traffic ratio | emulated ms |");
    println!(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: |"
    );
    let (mut log_compile, mut log_size, mut n_gpu_rows) = (0f64, 0f64, 0usize);
    let (mut ok_launch, mut n, mut log_ratio_sum, mut n_ratio) = (0usize, 0usize, 0f64, 0usize);
    let (mut ok_gpu, mut n_gpu) = (0usize, 0usize);
    let (mut ok_copies, mut n_copies) = (0usize, 0usize);
    for case in &cases {
        let text = std::fs::read_to_string(dir.join(format!("{case}.hlo"))).expect("hlo");
        let module = hlo_text::parse_module(&text).expect("parse");
        let mut times = Vec::new();
        let mut exe = None;
        for _ in 0..5 {
            let t0 = Instant::now();
            let r = compiler::compile(&module, &target, &options);
            times.push(t0.elapsed().as_secs_f64() * 1e3);
            exe = Some(r);
        }
        times.sort_by(f64::total_cmp);
        let exe = match exe {
            Some(Ok(e)) => e,
            Some(Err(e)) => {
                println!("| {case} | - | compile error: {e} | | | | | | | | | | | | | | | |");
                continue;
            }
            None => continue,
        };
        let (k, g, o, copies) = census(&exe);
        let xla = std::fs::read_to_string(dir.join(format!("{case}.opt.hlo")))
            .ok()
            .and_then(|t| hlo_text::parse_module(&t).ok())
            .map(|m| xla_launches(&m));
        let launches = k + g;
        let ok = xla.is_some_and(|x| launches <= x);
        n += 1;
        if ok {
            ok_launch += 1;
        }
        let io = hlo_eval::IoCase::read(&dir.join(format!("{case}.io.json"))).expect("io");
        let t0 = Instant::now();
        let result = run(&exe, &desc, &io.inputs);
        let emulated_ms = t0.elapsed().as_secs_f64() * 1e3;
        let (traffic, ratio) = match result {
            Ok(Some((b, r))) => {
                log_ratio_sum += r.max(1e-9).ln();
                n_ratio += 1;
                (b.to_string(), format!("{r:.2}"))
            }
            Ok(None) => ("-".into(), "-".into()),
            Err(e) => ("-".into(), format!("run error: {e}")),
        };
        let row = gpu.get(case, "h100_sxm");
        let on_gpu = row.map(|r| r.launches);
        let gpu_copies = row.map(|r| r.copies);
        let compile_ms = times[times.len() / 2];
        let bytes = exe.encoded_len();
        if let Some(r) = row {
            log_compile += (compile_ms / r.compile_ms).ln();
            log_size += (bytes as f64 / r.executable_bytes.max(1) as f64).ln();
            n_gpu_rows += 1;
        }
        let ok_g = on_gpu.map(|x| launches as u64 <= x);
        if let Some(okg) = ok_g {
            n_gpu += 1;
            ok_gpu += usize::from(okg);
        }
        if let Some(c) = gpu_copies {
            n_copies += 1;
            ok_copies += usize::from(copies as u64 <= c);
        }
        println!(
            "| {case} | {compile_ms:.2} | {} | {bytes} | {} | {k} | {g} | {o} | {launches} | {} | {} | {} | {} | {copies} | {} | {traffic} | {ratio} | {emulated_ms:.1} |",
            row.map_or("-".into(), |r| format!("{:.1}", r.compile_ms)),
            row.map_or("-".into(), |r| r.executable_bytes.to_string()),
            xla.map_or("?".into(), |x| x.to_string()),
            if ok { "yes" } else { "no" },
            on_gpu.map_or("-".into(), |x| x.to_string()),
            match ok_g {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            },
            gpu_copies.map_or("-".into(), |x| x.to_string()),
        );
    }
    println!();
    println!(
        "launches <= XLA:GPU's on {ok_gpu}/{n_gpu} cases with a count in testdata/xla_gpu/summary.json"
    );
    println!("copies <= XLA:GPU's on {ok_copies}/{n_copies} cases");
    if n_gpu_rows > 0 {
        let n = n_gpu_rows as f64;
        println!(
            "geometric means over {n_gpu_rows} cases: compile time / XLA:GPU's {:.4} (XLA's times as the generator recorded them, jax {}: not side by side), artifact bytes / XLA:GPU's inner executable {:.2}",
            (log_compile / n).exp(),
            gpu.jax,
            (log_size / n).exp()
        );
    }
    println!(
        "launches <= XLA on {ok_launch}/{n} cases ({:.0}%); geometric-mean traffic ratio {:.3} over {n_ratio} cases",
        100.0 * ok_launch as f64 / n.max(1) as f64,
        (log_ratio_sum / n_ratio.max(1) as f64).exp()
    );
}
