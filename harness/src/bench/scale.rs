//! The scale section: the `testdata/bench` modules on the emulated GPU next to XLA:CPU's times.
use runtime::RuntimeFlags;

use super::emulator::process_cpu;
use super::report::{Report, Section};
use super::stats::{best, geomean, ms, opt};
use super::xla_cpu::{sum_check, timed, xla_cpu_times, Sourced, Timed};
use super::Env;

/// Element `i` of parameter `p` of a scale module, as `tools/xla_cpu_times.py` builds it.
pub fn scale_input(p: usize, i: usize) -> f32 {
    let v = (i as u64).wrapping_mul(7 + 2 * p as u64) % 13;
    (v as f32 - 6.0) / 16.0
}

#[derive(serde::Deserialize)]
struct XlaModule {
    median_ms: f64,
    output_sum: f64,
    output_abs_sum: f64,
}

pub(super) fn scale(env: &Env, report: &mut Report) -> anyhow::Result<()> {
    let dir = env.root.join("testdata/bench");
    let Sourced { times, provenance } = xla_cpu_times::<XlaModule>(
        &env.root,
        "testdata/bench",
        "tools/xla_cpu_times.py",
        env.xla_cpu_python.as_deref(),
    )?;
    let reps = if env.quick { 1 } else { 3 };
    let flags = RuntimeFlags::default();
    let options = compiler::CompileOptions::default();
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    let mut matmul_ratio = None;
    for (name, xla) in &times.modules {
        let text = std::fs::read_to_string(dir.join(format!("{name}.hlo")))?;
        let module = hlo_text::parse_module(&text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let bytes = compiler::compile_to_bytes(&module, &env.target, &options)
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let device = env.device();
        let exe = runtime::load(&bytes, &device, &flags)?;
        let mut args = Vec::new();
        for (number, leaf) in &exe.parameters {
            anyhow::ensure!(
                leaf.element_type == hlo::PrimitiveType::F32,
                "{name}: parameter {number} is {}, the generator writes f32",
                leaf.element_type
            );
            let n = (leaf.size / 4) as usize;
            args.push(
                (0..n)
                    .flat_map(|i| scale_input(*number, i).to_le_bytes())
                    .collect::<Vec<u8>>(),
            );
        }
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let Timed {
            wall: t,
            cpu,
            result,
            totals,
        } = timed(&exe, &device, &refs, reps)?;
        // The same executable on the reference engine (the interpreter without the fast
        // engine's whole-row kernels and vector units: what the emulator was before them),
        // whose outputs must be the same bytes.
        let reference = env.device().with_launch_options(ptx::emu::LaunchOptions {
            reference_engine: true,
            ..ptx::emu::LaunchOptions::default()
        });
        let ref_exe = runtime::load(&bytes, &reference, &flags)?;
        let cpu0 = process_cpu();
        let (t_ref, ref_result) = best(1, || ref_exe.execute(&reference, &refs));
        let cpu_ref = process_cpu().zip(cpu0).map(|(b, a)| b - a);
        anyhow::ensure!(
            ref_result?.outputs == result.outputs,
            "{name}: the fast and the reference engine give different outputs"
        );
        let check = sum_check(&result.outputs, xla.output_sum, xla.output_abs_sum);
        let ratio = ms(t) / xla.median_ms;
        ratios.push(ratio);
        if name.contains("matmul") {
            matmul_ratio = Some(ratio);
        }
        rows.push(vec![
            name.clone(),
            format!("{:.2}", ms(t)),
            opt(cpu.map(|c| c * 1e3), 0),
            format!("{:.2}", ms(t_ref)),
            opt(cpu_ref.map(|c| c * 1e3), 0),
            format!("{:.3}", xla.median_ms),
            format!("{ratio:.1}"),
            (totals.launches / reps as u64).to_string(),
            (totals.lane_instructions / reps as u64).to_string(),
            check,
        ]);
    }
    report.sections.push(Section {
        title: "Scale: the emulated GPU next to XLA:CPU".into(),
        note: format!(
            "testdata/bench modules, compiled for h100_sxm and run with `aot run`'s defaults (best of {reps}; CPU: process CPU time per run, all threads); the reference engine (`LaunchOptions::reference_engine`, one run, outputs checked byte-identical) is the emulator without its fast paths; XLA:CPU: {provenance}",
        ),
        headers: [
            "module",
            "emulated ms",
            "CPU ms",
            "reference engine ms",
            "reference CPU ms",
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
    report.line(
        "emulated ÷ XLA:CPU, scale modules (geometric mean)",
        format!("{}×", opt(g, 1)),
        "≤ 20×",
        g.map(|v| v <= 20.0),
    );
    report.line(
        "emulated gemm ÷ XLA:CPU, matmul 512³",
        format!("{}×", opt(matmul_ratio, 2)),
        "≤ 2×",
        matmul_ratio.map(|v| v <= 2.0),
    );
    Ok(())
}
