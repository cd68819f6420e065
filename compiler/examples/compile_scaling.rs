//! Compile-time scaling (issue 17): how compile time grows with module size, for two shapes,
//! phase by phase, as the exponent `k` of `time ∝ N^k` between the smallest and largest size.
//! Times are this thread's CPU time (the machine may be shared), best of `REPS`.
//!
//! - `chain`: one fused chain, `v_i = op_i(v_{i-1}, p0)` over `f32[1024]` (one loop kernel);
//! - `dot_tanh`: N/2 pairs `h_i = tanh(dot(h_{i-1}, w))` over `f32[16,16]` (N/2 gemms and
//!   N/2 kernels).
//!
//! Each phase (verify, every pass of `passes::PIPELINE`, the fusion plan of the entry, lowering,
//! buffer assignment, serialization) is timed on its own (best of `REPS`), sizes measured side by
//! side in one run. The target is issue 17's: compile ≤ N^1.1 from 1,000 to 20,000 instructions.
//!
//! Run: `cargo run --release -p compiler --example compile_scaling [-- N1 N2 ...]`
//! (default sizes 1000 5000 20000).
use std::path::PathBuf;

const REPS: usize = 3;

fn chain(n: usize) -> String {
    let mut s = String::from("HloModule chain\n\nENTRY main {\n  p0 = f32[1024]{0} parameter(0)\n");
    let ops = ["add", "multiply", "subtract", "maximum"];
    let mut prev = "p0".to_string();
    for i in 1..n {
        let op = ops[i % ops.len()];
        let root = if i + 1 == n { "ROOT " } else { "" };
        s.push_str(&format!("  {root}v{i} = f32[1024]{{0}} {op}({prev}, p0)\n"));
        prev = format!("v{i}");
    }
    s.push_str("}\n");
    s
}

fn dot_tanh(n: usize) -> String {
    let mut s = String::from(
        "HloModule dot_tanh\n\nENTRY main {\n  h0 = f32[16,16]{1,0} parameter(0)\n  w = f32[16,16]{1,0} parameter(1)\n",
    );
    let pairs = (n.saturating_sub(2) / 2).max(1);
    let mut prev = "h0".to_string();
    for i in 1..=pairs {
        let root = if i == pairs { "ROOT " } else { "" };
        s.push_str(&format!(
            "  d{i} = f32[16,16]{{1,0}} dot({prev}, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n  {root}h{i} = f32[16,16]{{1,0}} tanh(d{i})\n"
        ));
        prev = format!("h{i}");
    }
    s.push_str("}\n");
    s
}

/// Seconds of CPU this thread has used (`CLOCK_THREAD_CPUTIME_ID`), so that other processes on
/// a loaded machine do not count.
fn now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn best<F: FnMut()>(mut f: F) -> f64 {
    let mut t = f64::INFINITY;
    for _ in 0..REPS {
        let t0 = now();
        f();
        t = t.min(now() - t0);
    }
    t
}

/// Seconds per phase, in a fixed order.
fn phases(text: &str, target: &compiler::Target) -> Vec<(String, f64)> {
    let options = compiler::CompileOptions::default();
    let module = hlo_text::parse_module(text).expect("parse");
    let mut out = Vec::new();
    out.push((
        "verify".to_string(),
        best(|| {
            hlo_verify::verify(&module).expect("verify");
        }),
    ));
    let mut m = module.clone();
    for (name, pass) in compiler::PIPELINE {
        let before = m.clone();
        let mut after = before.clone();
        let t = best(|| {
            after = before.clone();
            pass(&mut after).expect("pass");
        });
        // The clone is part of the measurement: subtract it.
        let c = best(|| {
            let _ = before.clone();
        });
        out.push((format!("pass {name}"), (t - c).max(0.0)));
        m = after;
    }
    let entry = m.get(m.entry).expect("entry").clone();
    out.push((
        "fusion plan".to_string(),
        best(|| {
            compiler::fusion_plan(&entry, true).expect("plan");
        }),
    ));
    let mut lowered = None;
    let t = best(|| {
        lowered = Some(compiler::lower(m.clone(), target, &options).expect("lower"));
    });
    let c = best(|| {
        let _ = m.clone();
    });
    out.push(("lower (fusion, codegen)".to_string(), (t - c).max(0.0)));
    let lowered = lowered.expect("lowered");
    let mut asg = None;
    out.push((
        "buffer assignment".to_string(),
        best(|| {
            asg = Some(compiler::assign_buffers(&lowered.values).expect("assign"));
        }),
    ));
    let asg = asg.expect("assignment");
    out.push((
        "serialize".to_string(),
        best(|| {
            compiler::build_executable(&module, &lowered, &asg, target, &options).expect("build");
        }),
    ));
    out.push((
        "compile (all)".to_string(),
        best(|| {
            compiler::compile(&module, target, &options).expect("compile");
        }),
    ));
    out
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target =
        compiler::Target::load(&root.join("testdata/target_specs/h100_sxm.txtpb")).expect("target");
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if sizes.len() < 2 {
        sizes = vec![1000, 5000, 20000];
    }
    // Deep chains recurse deeply in the elemental emitter: give the work a big stack.
    let run = std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(move || {
            for (shape, gen) in [
                ("chain", chain as fn(usize) -> String),
                ("dot_tanh", dot_tanh),
            ] {
                println!("## {shape}");
                println!();
                let results: Vec<Vec<(String, f64)>> =
                    sizes.iter().map(|&n| phases(&gen(n), &target)).collect();
                let mut header = String::from("| phase |");
                let mut rule = String::from("| --- |");
                for n in &sizes {
                    header.push_str(&format!(" N={n} ms |"));
                    rule.push_str(" ---: |");
                }
                header.push_str(" exponent |");
                rule.push_str(" ---: |");
                println!("{header}\n{rule}");
                let (n0, n1) = (sizes[0] as f64, sizes[sizes.len() - 1] as f64);
                for (k, (name, _)) in results[0].iter().enumerate() {
                    let mut line = format!("| {name} |");
                    for r in &results {
                        line.push_str(&format!(" {:.2} |", r[k].1 * 1e3));
                    }
                    let (t0, t1) = (results[0][k].1, results[results.len() - 1][k].1);
                    // Phases under 50 µs at the largest size are noise, not growth.
                    if t1 > 50e-6 && t0 > 0.0 {
                        line.push_str(&format!(" {:.2} |", (t1 / t0).ln() / (n1 / n0).ln()));
                    } else {
                        line.push_str(" - |");
                    }
                    println!("{line}");
                }
                println!();
            }
        })
        .expect("thread");
    run.join().expect("benchmark thread");
}
