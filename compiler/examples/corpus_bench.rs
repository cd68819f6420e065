//! The compiler benchmark: for every module of testdata/corpus/hlo, compiled for h100_sxm,
//! reports
//! - compile time (median of 5 compilations, measured side by side in this run),
//! - kernel launches (kernel thunks) and library calls (gemm thunks) in the executable, against
//!   the fusions + library calls + unfused kernel instructions of XLA's own optimized module
//!   (`NAME.opt.hlo`),
//! - XLA:GPU's kernel launches for the same module and target, read from
//!   `testdata/xla_gpu/summary.json` (rows of `module`, `target`, `launches`, written by the
//!   generator under `tools/`; `-` where the file or the row is missing: the bench needs no
//!   Python), and whether this project needs at most as many,
//! - global-memory traffic of one run on the `ptx` emulator (test thunk interpreter), divided
//!   by the minimum: parameter bytes read once plus output bytes written once.
//!
//! - emulated run time of that one run (the `ptx` emulator's speed, not a GPU's).
//!
//! Run: `cargo run --release -p compiler --example corpus_bench [-- DIR [SUBSTRING]]`: DIR (relative
//! to the workspace root, default `testdata/corpus/hlo`) and only the cases whose name contains
//! SUBSTRING, e.g. `-- testdata/models conv`. Directories without `NAME.opt.hlo` show `?` for XLA.
#[path = "../tests/common/interp.rs"]
#[allow(dead_code)]
mod interp;

use std::path::PathBuf;
use std::time::Instant;

use hlo::ir::Computation;
use hlo::{HloModule, Opcode};
use proto::xla::gpu::{thunk_proto::Impl, GpuExecutableProto, ThunkProto};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Fusions, library calls and unfused kernel instructions of XLA's optimized module, counted in
/// the entry and the control-flow computations it reaches (not inside fusions or reducers).
fn xla_launches(m: &HloModule) -> usize {
    let mut count = 0;
    let mut stack = vec![m.entry];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(c) = stack.pop() {
        if !seen.insert(c) {
            continue;
        }
        let Some(comp): Option<&Computation> = m.get(c) else {
            continue;
        };
        for i in &comp.instructions {
            match i.opcode {
                Opcode::Fusion | Opcode::CustomCall | Opcode::Dot | Opcode::Convolution => {
                    count += 1
                }
                Opcode::While | Opcode::Conditional | Opcode::Call => {
                    stack.extend(i.called_computations());
                }
                _ => {
                    if compiler::fusion::class(i) != compiler::fusion::Class::NonKernel {
                        count += 1;
                    }
                }
            }
        }
    }
    count
}

/// XLA:GPU's launches per module for `target`, from the generator's summary (empty when absent).
fn xla_gpu_launches(target: &str) -> std::collections::BTreeMap<String, u64> {
    let path = root().join("testdata/xla_gpu/summary.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Default::default();
    };
    let v: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            return Default::default();
        }
    };
    v.get("rows")
        .and_then(|r| r.as_array())
        .into_iter()
        .flatten()
        .filter(|r| r.get("target").and_then(|t| t.as_str()) == Some(target))
        .filter_map(|r| {
            Some((
                r.get("module")?.as_str()?.to_string(),
                r.get("launches")?.as_u64()?,
            ))
        })
        .collect()
}

fn count(thunks: &[ThunkProto], k: &mut (usize, usize, usize)) {
    for t in thunks {
        match &t.r#impl {
            Some(Impl::KernelThunk(_)) => k.0 += 1,
            Some(Impl::GemmThunk(_)) => k.1 += 1,
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

fn census(exe: &GpuExecutableProto) -> (usize, usize, usize) {
    let mut k = (0, 0, 0);
    count(&exe.thunks, &mut k);
    k
}

fn main() {
    let cli: Vec<String> = std::env::args().skip(1).collect();
    let dir = root().join(cli.first().map_or("testdata/corpus/hlo", String::as_str));
    let filter = cli.get(1).cloned().unwrap_or_default();
    let target = compiler::Target::load(&root().join("testdata/target_specs/h100_sxm.txtpb"))
        .expect("target");
    let options = compiler::CompileOptions::default();
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
    let gpu = xla_gpu_launches("h100_sxm");
    if gpu.is_empty() {
        eprintln!("no XLA:GPU launch counts (testdata/xla_gpu/summary.json): that column shows -");
    }
    println!("| case | compile ms | kernels | gemms | other thunks | launches (k+g) | XLA fusions+calls | launches ok | XLA:GPU launches | <= XLA:GPU | traffic ratio | emulated ms |");
    println!(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | :---: | ---: | ---: |"
    );
    let (mut ok_launch, mut n, mut log_ratio_sum, mut n_ratio) = (0usize, 0usize, 0f64, 0usize);
    let (mut ok_gpu, mut n_gpu) = (0usize, 0usize);
    for case in &cases {
        let text = std::fs::read_to_string(dir.join(format!("{case}.hlo"))).expect("hlo");
        let module = hlo::parse_module(&text).expect("parse");
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
                println!("| {case} | - | compile error: {e} | | | | | | | | | |");
                continue;
            }
            None => continue,
        };
        let (k, g, o) = census(&exe);
        let xla = std::fs::read_to_string(dir.join(format!("{case}.opt.hlo")))
            .ok()
            .and_then(|t| hlo::parse_module(&t).ok())
            .map(|m| xla_launches(&m));
        let launches = k + g;
        let ok = xla.is_some_and(|x| launches <= x);
        n += 1;
        if ok {
            ok_launch += 1;
        }
        let io = hlo::io::IoCase::read(&dir.join(format!("{case}.io.json"))).expect("io");
        let args: Vec<Vec<u8>> = io.inputs.iter().map(interp::to_bytes).collect();
        let sizes: Vec<usize> = io
            .outputs
            .iter()
            .map(|a| a.len() * (a.dtype().bit_width() / 8) as usize)
            .collect();
        let min_bytes: usize =
            args.iter().map(Vec::len).sum::<usize>() + sizes.iter().sum::<usize>();
        let t0 = Instant::now();
        let result = interp::run(&exe, &args, &sizes);
        let emulated_ms = t0.elapsed().as_secs_f64() * 1e3;
        let ratio = match result {
            Ok((_, t)) if min_bytes > 0 => {
                let r = (t.read + t.written) as f64 / min_bytes as f64;
                log_ratio_sum += r.max(1e-9).ln();
                n_ratio += 1;
                format!("{r:.2}")
            }
            Ok(_) => "-".into(),
            Err(e) => format!("run error: {e}"),
        };
        let on_gpu = gpu.get(case.as_str()).copied();
        let ok_g = on_gpu.map(|x| launches as u64 <= x);
        if let Some(okg) = ok_g {
            n_gpu += 1;
            ok_gpu += usize::from(okg);
        }
        println!(
            "| {case} | {:.2} | {k} | {g} | {o} | {launches} | {} | {} | {} | {} | {ratio} | {emulated_ms:.1} |",
            times[times.len() / 2],
            xla.map_or("?".into(), |x| x.to_string()),
            if ok { "yes" } else { "no" },
            on_gpu.map_or("-".into(), |x| x.to_string()),
            match ok_g {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            }
        );
    }
    println!();
    println!(
        "launches <= XLA:GPU's on {ok_gpu}/{n_gpu} cases with a count in testdata/xla_gpu/summary.json"
    );
    println!(
        "launches <= XLA on {ok_launch}/{n} cases ({:.0}%); geometric-mean traffic ratio {:.3} over {n_ratio} cases",
        100.0 * ok_launch as f64 / n.max(1) as f64,
        (log_ratio_sum / n_ratio.max(1) as f64).exp()
    );
}
