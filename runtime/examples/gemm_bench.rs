//! Times the native gemm (`runtime::gemm`) alone, without compile, load or device copies:
//! the 512³ f32 product of the `aot bench` scale module (`testdata/bench/scale_matmul_512.hlo`),
//! then the other layouts, transpositions, batch forms and element types the gemm thunk supports.
//!
//! `cargo run --release -p runtime --example gemm_bench [-- REPS [ISA [FILTER [THREADS]]]]`,
//! ISA `best` (the default), `portable`, `avx2` or `avx512`, FILTER a substring of the case
//! names, THREADS one thread count instead of 1 and all. Prints
//! per case the median and best wall time with one thread and with all of the machine's, and an
//! FNV-1a hash of the output bytes (the same with either thread count, or the bench stops), so
//! builds and kernels can be checked for bit-identical results too.
use std::time::Instant;

use runtime::thunks::{ElemType, ElemTypeExt, GemmConfig, MatrixLayout, Order};
use runtime::{gemm_kernel_name as kernel_name, gemm_with, GemmIsa as Isa, GemmOptions as Options};

/// Element `i` of parameter `p`, the formula of `tools/xla_cpu_times.py` (and `aot bench`).
fn input(p: usize, i: usize) -> f64 {
    let v = (i as u64).wrapping_mul(7 + 2 * p as u64) % 13;
    (v as f64 - 6.0) / 16.0
}

fn encode(t: ElemType, v: f64) -> Vec<u8> {
    match t {
        ElemType::F16 => half::f16::from_f64(v).to_le_bytes().to_vec(),
        ElemType::BF16 => half::bf16::from_f64(v).to_le_bytes().to_vec(),
        ElemType::F32 => (v as f32).to_le_bytes().to_vec(),
        ElemType::F64 => v.to_le_bytes().to_vec(),
        // Integer operands: the formula's numerator.
        ElemType::S8 => vec![(v * 16.0) as i8 as u8],
        ElemType::S32 => ((v * 16.0) as i32).to_le_bytes().to_vec(),
        other => panic!("no encoding for {other:?}"),
    }
}

/// CPU time of the calling thread (Linux: the first field of `/proc/thread-self/schedstat`, in
/// nanoseconds), or `None` where that file is missing.
fn thread_cpu_ms() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e6)
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

struct Case {
    name: &'static str,
    batch: u64,
    mnk: (u64, u64, u64),
    /// (order, transpose) of lhs, rhs and output.
    forms: [(Order, bool); 3],
    types: (ElemType, ElemType, ElemType),
}

fn run(case: &Case, reps: usize, isa: Isa, thread_counts: &[usize]) {
    let (m, n, k) = case.mnk;
    let (operand, compute, output) = case.types;
    let stored = |(rows, cols): (u64, u64), t: bool| if t { (cols, rows) } else { (rows, cols) };
    let [(lo, lt), (ro, rt), (oo, ot)] = case.forms;
    let (lr, lc) = stored((m, k), lt);
    let (rr, rc) = stored((k, n), rt);
    let (or, oc) = stored((m, n), ot);
    let l = MatrixLayout::packed(lo, lr, lc, case.batch, lt, operand);
    let r = MatrixLayout::packed(ro, rr, rc, case.batch, rt, operand);
    let o = MatrixLayout::packed(oo, or, oc, case.batch, ot, output);
    let cfg = GemmConfig {
        lhs: l,
        rhs: r,
        output: o,
        alpha_real: 1.0,
        alpha_imag: 0.0,
        beta: 0.0,
        compute_type: compute,
        operand_precisions: Vec::new(),
        m,
        n,
        k,
        batch: case.batch,
    };
    let buffer = |p: usize, x: &MatrixLayout| -> Vec<u8> {
        let len = (x.batch_stride * case.batch) as usize;
        (0..len)
            .flat_map(|i| encode(x.dtype, input(p, i)))
            .collect()
    };
    let (lhs, rhs) = (buffer(0, &l), buffer(1, &r));
    let mut line = format!("{:<28}", case.name);
    let mut hashes = Vec::new();
    for &threads in thread_counts {
        let options = Options { threads, isa };
        let mut out = vec![0u8; (o.batch_stride * case.batch * output.size()) as usize];
        gemm_with(&cfg, &lhs, &rhs, &mut out, options).expect("gemm runs");
        let cpu0 = thread_cpu_ms();
        let mut times: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                gemm_with(&cfg, &lhs, &rhs, &mut out, options).expect("gemm runs");
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        let cpu = thread_cpu_ms()
            .zip(cpu0)
            .map(|(b, a)| (b - a) / reps as f64);
        times.sort_by(f64::total_cmp);
        line += &format!(
            "  {threads}T median {:>8.3} best {:>8.3} ms",
            times[times.len() / 2],
            times[0]
        );
        if let (1, Some(cpu)) = (threads, cpu) {
            // One thread: its CPU time is the work, whatever else the machine runs.
            line += &format!(" (CPU {cpu:>8.3} ms)");
        }
        hashes.push(fnv(&out));
    }
    assert!(
        hashes.windows(2).all(|w| w[0] == w[1]),
        "{}: different bytes with {thread_counts:?} threads",
        case.name
    );
    println!(
        "{line}  hash {:016x}  [{}]",
        hashes[0],
        kernel_name(compute, isa)
    );
}

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("REPS is a count"))
        .unwrap_or(15);
    let isa = match std::env::args().nth(2).as_deref() {
        None | Some("best") => Isa::best(),
        Some("portable") => Isa::Portable,
        Some("avx2") => Isa::Avx2,
        Some("avx512") => Isa::Avx512,
        Some(other) => panic!("unknown ISA {other}: portable, avx2 or avx512"),
    };
    let threads = Options::machine().threads;
    println!(
        "gemm_bench: {reps} reps, {isa:?} kernels (supported: {}), 1 and {threads} thread(s)",
        isa.supported()
    );
    let (row, col) = (Order::RowMajor, Order::ColumnMajor);
    let f32s = (ElemType::F32, ElemType::F32, ElemType::F32);
    let cases = [
        Case {
            name: "f32 512³ NN (scale module)",
            batch: 1,
            mnk: (512, 512, 512),
            forms: [(row, false), (row, false), (row, false)],
            types: f32s,
        },
        Case {
            name: "f32 512³ lhs^T",
            batch: 1,
            mnk: (512, 512, 512),
            forms: [(row, true), (row, false), (row, false)],
            types: f32s,
        },
        Case {
            name: "f32 512³ rhs^T",
            batch: 1,
            mnk: (512, 512, 512),
            forms: [(row, false), (row, true), (row, false)],
            types: f32s,
        },
        Case {
            name: "f32 512³ col-major all",
            batch: 1,
            mnk: (512, 512, 512),
            forms: [(col, false), (col, false), (col, false)],
            types: f32s,
        },
        Case {
            name: "f32 512³ out^T",
            batch: 1,
            mnk: (512, 512, 512),
            forms: [(row, false), (row, false), (row, true)],
            types: f32s,
        },
        Case {
            name: "f32 8x256³ batched",
            batch: 8,
            mnk: (256, 256, 256),
            forms: [(row, false), (row, false), (row, false)],
            types: f32s,
        },
        Case {
            name: "f32 509x515x511 odd",
            batch: 1,
            mnk: (509, 515, 511),
            forms: [(row, false), (row, false), (row, false)],
            types: f32s,
        },
        Case {
            name: "f64 512³",
            batch: 1,
            mnk: (512, 512, 512),
            forms: [(row, false), (row, false), (row, false)],
            types: (ElemType::F64, ElemType::F64, ElemType::F64),
        },
        Case {
            name: "bf16 512³ (f32 compute)",
            batch: 1,
            mnk: (512, 512, 512),
            forms: [(row, false), (row, false), (row, false)],
            types: (ElemType::BF16, ElemType::F32, ElemType::BF16),
        },
        Case {
            name: "s8 512³ (s32 compute)",
            batch: 1,
            mnk: (512, 512, 512),
            forms: [(row, false), (row, false), (row, false)],
            types: (ElemType::S8, ElemType::S32, ElemType::S32),
        },
    ];
    let filter = std::env::args().nth(3).unwrap_or_default();
    let thread_counts: Vec<usize> = match std::env::args().nth(4) {
        Some(t) => vec![t.parse().expect("THREADS is a count")],
        None => vec![1, threads],
    };
    for case in cases.iter().filter(|c| c.name.contains(&filter)) {
        run(case, reps, isa, &thread_counts);
    }
}
