//! The workloads section (issue 32): five ordinary workloads nobody tuned the compiler for (a
//! conv net, logsumexp over a 32,000 vocabulary, attention, a GELU MLP, an embedding-gradient
//! scatter-add) on the emulated GPU next to XLA:CPU's times, which `tools/bench_workloads.py`
//! wrote into `testdata/bench/workloads/xla_cpu_times.json` (no Python here).
//!
//! The modules are compiled with every staged-rollout option on, as the defaults will be once
//! their stage-2 dates ([`proto::rollout::ROLLOUTS`]) have passed
//! ([`compiler::CompileOptions::after_staged_flips`]): the convolution thunk among them. The
//! section's note says so.
use anyhow::Context;
use runtime::RuntimeFlags;

use super::report::{Report, Section};
use super::scale::scale_input;
use super::stats::{geomean, ms, opt};
use super::xla_cpu::{sum_check, timed, timed_resident, xla_cpu_times, Sourced, Timed};
use super::Env;

/// Element `i` of parameter `p` of a workload, as `tools/bench_workloads.py` builds it: the
/// scale section's formula for f32, `(i * 7919) mod modulus` for s32 (row indices).
pub fn workload_input(t: hlo::PrimitiveType, p: usize, i: usize, modulus: u64) -> Option<[u8; 4]> {
    match t {
        hlo::PrimitiveType::F32 => Some(scale_input(p, i).to_le_bytes()),
        hlo::PrimitiveType::S32 => {
            let v = (i as u64).wrapping_mul(7919) % modulus.max(1);
            Some((v as i32).to_le_bytes())
        }
        _ => None,
    }
}

/// Left out of `--quick` (CI's smoke test, a debug build): its two host gemms of 2^29
/// multiply-adds take about 25 s unoptimized.
const FULL_ONLY: &[&str] = &["workload_gelu_mlp_256x1024x2048"];

#[derive(serde::Deserialize)]
struct XlaModule {
    median_ms: f64,
    int_modulus: u64,
    output_sum: f64,
    output_abs_sum: f64,
}

/// One workload's row and its ratio to XLA:CPU.
fn row(
    env: &Env,
    dir: &std::path::Path,
    name: &str,
    xla: &XlaModule,
    (reps, resident_reps): (usize, usize),
) -> anyhow::Result<(Vec<String>, f64)> {
    let text = std::fs::read_to_string(dir.join(format!("{name}.hlo")))?;
    let module = hlo_text::parse_module(&text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let options = compiler::CompileOptions::after_staged_flips();
    let bytes = compiler::compile_to_bytes(&module, &env.target, &options)
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let device = env.device();
    let exe = runtime::load(&bytes, &device, &RuntimeFlags::default())?;
    let mut args = Vec::new();
    for (number, leaf) in &exe.parameters {
        let n = (leaf.size / 4) as usize;
        let mut bytes = Vec::with_capacity(n * 4);
        for i in 0..n {
            let v = workload_input(leaf.element_type, *number, i, xla.int_modulus).with_context(
                || {
                    format!(
                        "{name}: parameter {number} is {}, the generator writes f32 and s32",
                        leaf.element_type
                    )
                },
            )?;
            bytes.extend_from_slice(&v);
        }
        args.push(bytes);
    }
    let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    let Timed {
        wall: host,
        cpu,
        result,
        totals,
    } = timed(&exe, &device, &refs, reps)?;
    let check = sum_check(&result.outputs, xla.output_sum, xla.output_abs_sum);
    let t = timed_resident(&exe, &device, &refs, resident_reps)?;
    let ratio = ms(t) / xla.median_ms;
    let row = vec![
        name.trim_start_matches("workload_").to_owned(),
        format!("{:.2}", ms(t)),
        format!("{:.2}", ms(host)),
        opt(cpu.map(|c| c * 1e3), 0),
        format!("{:.3}", xla.median_ms),
        format!("{ratio:.1}"),
        (totals.launches / reps as u64).to_string(),
        (totals.lane_instructions / reps as u64).to_string(),
        check,
    ];
    Ok((row, ratio))
}

pub(super) fn workloads(env: &Env, report: &mut Report) -> anyhow::Result<()> {
    let dir = env.root.join("testdata/bench/workloads");
    let Sourced { times, provenance } = xla_cpu_times::<XlaModule>(
        &env.root,
        "testdata/bench/workloads",
        "tools/bench_workloads.py",
        env.xla_cpu_python.as_deref(),
    )?;
    let reps = if env.quick { 1 } else { 3 };
    // The compared figure is a median, as XLA:CPU's is: more runs than the best-of columns.
    let resident_reps = if env.quick { 1 } else { 9 };
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    for (name, xla) in &times.modules {
        if env.quick && FULL_ONLY.contains(&name.as_str()) {
            continue;
        }
        let (r, ratio) = row(env, &dir, name, xla, (reps, resident_reps))?;
        rows.push(r);
        ratios.push(ratio);
    }
    report.sections.push(Section {
        title: "Workloads: five untuned programs on the emulated GPU next to XLA:CPU".into(),
        note: format!(
            "testdata/bench/workloads modules (issue 32), compiled for h100_sxm with every staged-rollout option on, as the defaults will be after their flip dates (2026-12-15, 2026-12-18; CompileOptions::after_staged_flips: convolution and FFT thunks among them), timed as XLA:CPU is, with the inputs on the device and nothing read back (`aot run --resident-inputs`: uploaded once, one warm-up, then the median of {resident_reps} executions against XLA:CPU's median){}; host to host (`aot run`'s default: inputs copied in and outputs out each execution, best of {reps}) and its CPU time for reference; kernel launches and lane-instructions per host-to-host execution; XLA:CPU: {provenance}",
            if env.quick { "; --quick leaves out the GELU MLP" } else { "" },
        ),
        headers: [
            "workload",
            "emulated ms",
            "host to host ms",
            "CPU ms",
            "XLA:CPU ms",
            "ratio",
            "kernel launches",
            "lane-instr",
            "check",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    });
    let g = geomean(&ratios);
    let worst = ratios
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    report.line(
        "emulated ÷ XLA:CPU, workloads (geometric mean)",
        format!("{}×", opt(g, 1)),
        "≤ 5×",
        g.map(|v| v <= 5.0),
    );
    report.line(
        "emulated ÷ XLA:CPU, workloads (worst)",
        format!("{}×", opt(worst, 1)),
        "≤ 10×",
        worst.map(|v| v <= 10.0),
    );
    Ok(())
}
