//! The emulator section: corpus kernels on the PTX emulator, next to native loops.
use std::path::Path;
use std::time::Duration;

use anyhow::Context;

use super::report::{Report, Section};
use super::stats::{best, geomean, ms, opt};
use super::Env;

fn f32_buffer(mem: &mut ptx::emu::Memory, v: &[f32]) -> anyhow::Result<ptx::emu::DevicePtr> {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let p = mem.alloc(b.len() as u64)?;
    mem.write(p, &b)?;
    Ok(p)
}

fn read_f32(
    mem: &mut ptx::emu::Memory,
    p: ptx::emu::DevicePtr,
    n: usize,
) -> anyhow::Result<Vec<f32>> {
    Ok(mem
        .read_vec(p, n * 4)?
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn corpus_kernel(root: &Path, name: &str) -> anyhow::Result<ptx::emu::LoadedModule> {
    let path = root.join(format!("testdata/corpus/ptx/{name}.ptx"));
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let ast = ptx::parse(&text).map_err(|e| anyhow::anyhow!("{name}.ptx: {e}"))?;
    Ok(ptx::emu::LoadedModule::load(&ast)?)
}

/// One kernel's measurement: lane-instructions, the best time with 1 and with all worker
/// threads, the native loop's best time.
struct KernelRun {
    name: String,
    lanes: u64,
    one: Duration,
    all: Duration,
    native: Duration,
    /// Process CPU time with all threads ÷ with 1 thread (all repetitions).
    cpu_ratio: Option<f64>,
}

#[allow(clippy::too_many_arguments)]
fn time_kernel(
    reps: usize,
    module: &ptx::emu::LoadedModule,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    params: &[ptx::emu::ParamValue],
    mem: &mut ptx::emu::Memory,
    threads: usize,
) -> anyhow::Result<(u64, Duration, Duration, Option<f64>)> {
    let mut run = |threads: usize| {
        let opts = ptx::emu::LaunchOptions {
            threads,
            ..ptx::emu::LaunchOptions::default()
        };
        let cpu0 = process_cpu();
        let r = best(reps, || {
            ptx::emu::launch(module, kernel, grid, block, 0, params, mem, &opts)
        });
        (r, process_cpu().zip(cpu0).map(|(b, a)| b - a))
    };
    let ((one, stats), cpu_one) = run(1);
    let stats = stats?;
    let ((all, _), cpu_all) = run(threads);
    let cpu_ratio = cpu_all
        .zip(cpu_one)
        .and_then(|(a, o)| (o > 0.0).then(|| a / o));
    Ok((stats.lane_instructions, one, all, cpu_ratio))
}

/// CPU time of the whole process (every thread), in seconds, from `/proc/self/stat` (clock
/// ticks, 10 ms at the usual 100 Hz): on a loaded machine, N threads that spend no more CPU in
/// total than 1 thread show the work itself parallelizes, whatever share of the cores they got.
pub(super) fn process_cpu() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = s.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

pub(super) fn emulator(env: &Env, report: &mut Report) -> anyhow::Result<()> {
    use ptx::emu::{Memory, ParamValue};
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let reps = if env.quick { 1 } else { 3 };
    let mut runs = Vec::new();

    // Elementwise: grid-stride SAXPY (checked bit for bit against the native loop).
    let saxpy = corpus_kernel(&env.root, "saxpy_gridstride")?;
    let n = if env.quick { 1 << 20 } else { 1 << 23 };
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * 0.5).collect();
    let alpha = 1.5f32;
    let mut mem = Memory::new();
    let (px, py) = (f32_buffer(&mut mem, &x)?, f32_buffer(&mut mem, &y0)?);
    let params = [
        ParamValue::i32(n as i32),
        ParamValue::f32(alpha),
        ParamValue::ptr(px),
        ParamValue::ptr(py),
    ];
    mem.write(
        py,
        &y0.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
    )?;
    let (lanes, one, all, cpu_ratio) = time_kernel(
        reps,
        &saxpy,
        "saxpy",
        [1024, 1, 1],
        [256, 1, 1],
        &params,
        &mut mem,
        threads,
    )?;
    let mut y = y0.clone();
    let (native, _) = best(reps, || {
        y.copy_from_slice(&y0);
        for (yi, xi) in y.iter_mut().zip(&x) {
            *yi = alpha.mul_add(*xi, *yi);
        }
        std::hint::black_box(&y);
    });
    // The emulator ran 2 * reps times on the same y: as many applications natively.
    let mut want = y0.clone();
    for _ in 0..2 * reps {
        for (w, xi) in want.iter_mut().zip(&x) {
            *w = alpha.mul_add(*xi, *w);
        }
    }
    let got = read_f32(&mut mem, py, n)?;
    anyhow::ensure!(
        got.iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "saxpy on the emulator differs from the native loop"
    );
    runs.push(KernelRun {
        name: format!("elementwise: saxpy {n} (grid-stride)"),
        lanes,
        one,
        all,
        native,
        cpu_ratio,
    });

    // Reduction: shared-memory block sums (256 threads, 2 elements each).
    let reduce = corpus_kernel(&env.root, "block_reduce_smem")?;
    let n = if env.quick { 1 << 20 } else { 1 << 22 };
    let v: Vec<f32> = (0..n).map(|i| ((i % 13) as f32 - 6.0) * 0.125).collect();
    let blocks = n / 512;
    let mut mem = Memory::new();
    let pin = f32_buffer(&mut mem, &v)?;
    let pout = f32_buffer(&mut mem, &vec![0.0; blocks])?;
    let params = [
        ParamValue::ptr(pin),
        ParamValue::ptr(pout),
        ParamValue::i32(n as i32),
    ];
    let (lanes, one, all, cpu_ratio) = time_kernel(
        reps,
        &reduce,
        "block_sum",
        [blocks as u32, 1, 1],
        [256, 1, 1],
        &params,
        &mut mem,
        threads,
    )?;
    let mut partial = vec![0f32; blocks];
    let (native, _) = best(reps, || {
        for (p, chunk) in partial.iter_mut().zip(v.chunks(512)) {
            *p = chunk.iter().sum();
        }
        std::hint::black_box(&partial);
    });
    // Every value is a multiple of 1/8 with small partial sums: exact in any order.
    let got = read_f32(&mut mem, pout, blocks)?;
    anyhow::ensure!(
        got == partial,
        "block_sum on the emulator differs from the native sums"
    );
    runs.push(KernelRun {
        name: format!("reduction: block sums of {n}"),
        lanes,
        one,
        all,
        native,
        cpu_ratio,
    });

    // Tiled matmul (16x16 shared-memory tiles).
    let mm = corpus_kernel(&env.root, "tiled_matmul")?;
    let d = if env.quick { 128usize } else { 256 };
    let a: Vec<f32> = (0..d * d)
        .map(|i| ((i * 7) % 13) as f32 * 0.25 - 1.0)
        .collect();
    let b: Vec<f32> = (0..d * d)
        .map(|i| ((i * 5) % 11) as f32 * 0.125 - 0.5)
        .collect();
    let mut mem = Memory::new();
    let (pa, pb) = (f32_buffer(&mut mem, &a)?, f32_buffer(&mut mem, &b)?);
    let pc = f32_buffer(&mut mem, &vec![0.0; d * d])?;
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
    let (lanes, one, all, cpu_ratio) = time_kernel(
        reps,
        &mm,
        "matmul",
        grid,
        [16, 16, 1],
        &params,
        &mut mem,
        threads,
    )?;
    let mut c = vec![0f32; d * d];
    let (native, _) = best(reps, || {
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
    let got = read_f32(&mut mem, pc, d * d)?;
    anyhow::ensure!(
        got.iter().zip(&c).all(|(g, w)| g.to_bits() == w.to_bits()),
        "tiled matmul on the emulator differs from the native loop"
    );
    runs.push(KernelRun {
        name: format!("tiled matmul {d}³ (16x16 tiles)"),
        lanes,
        one,
        all,
        native,
        cpu_ratio,
    });

    let mut rows = Vec::new();
    let (mut rates, mut speedups) = (Vec::new(), Vec::new());
    for r in &runs {
        let rate = r.lanes as f64 / r.one.as_secs_f64();
        let speedup = r.one.as_secs_f64() / r.all.as_secs_f64();
        rates.push(rate);
        speedups.push(speedup);
        rows.push(vec![
            r.name.clone(),
            r.lanes.to_string(),
            format!("{:.1}", ms(r.one)),
            format!("{:.0}", rate / 1e6),
            format!("{:.1}", ms(r.all)),
            format!("{speedup:.2}"),
            opt(r.cpu_ratio, 2),
            format!("{:.2}", ms(r.native)),
            format!("{:.0}", r.one.as_secs_f64() / r.native.as_secs_f64()),
        ]);
    }
    report.sections.push(Section {
        title: "Emulator throughput".into(),
        note: format!(
            "corpus PTX kernels on `ptx::emu` (wall time, best of {reps}); rate = lane-instructions/s with 1 worker thread (per core); speedup = 1 thread ÷ {threads} threads (wall); CPU N/1 = process CPU time with {threads} threads ÷ with 1 (about 1: the threads add no work, so the speedup is bounded only by the free cores); native = the same work as a plain Rust loop, 1 thread"
        ),
        headers: [
            "kernel",
            "lane-instr",
            "1 thread ms",
            "M lane-instr/s/core",
            &format!("{threads} threads ms"),
            "speedup",
            "CPU N/1",
            "native ms",
            "emu/native",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    });
    let min_speedup = speedups.iter().copied().reduce(f64::min);
    report.line(
        "emulator lane-instructions/s/core (geometric mean)",
        format!("{} M", opt(geomean(&rates).map(|r| r / 1e6), 0)),
        "none of its own (the scale table's target is what it serves)",
        None,
    );
    report.line(
        &format!("emulator speedup, 1 → {threads} threads (minimum over kernels)"),
        opt(min_speedup, 2),
        if threads >= 2 {
            "≥ 1.8× from 1 to 2 cores"
        } else {
            "≥ 1.8× (needs 2 cores)"
        },
        min_speedup.filter(|_| threads >= 2).map(|s| s >= 1.8),
    );
    Ok(())
}
