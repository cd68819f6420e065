//! The fast path (`gemm::fast`): its kernels against the element sums written out by
//! hand and against the reference loop bit for bit, and each of its decisions (kernel, thread
//! plan, eligibility) pinned with the bytes it writes.
use super::*;

/// Buffer big enough for every element `layout` addresses over `batch` batches, filled with
/// pseudo-random values of its type (sums of them round differently in each order).
fn random_buffer(l: &MatrixLayout, batch: u64, seed: &mut u64) -> Vec<u8> {
    let mut last = 0;
    for b in 0..batch {
        for r in 0..l.num_rows {
            for c in 0..l.num_cols {
                last = last.max(l.offset(b, r, c) + 1);
            }
        }
    }
    let mut buf = vec![0u8; (last * l.dtype.size()) as usize];
    for i in 0..last {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let x = ((*seed >> 33) % 2001) as f64 / 1000.0 - 1.0;
        let v = match l.dtype {
            ElemType::S8 | ElemType::S32 => (x * 100.0).round(),
            _ => x * 3.7,
        };
        put(&mut buf, l.dtype, i, v);
    }
    buf
}

/// The kernel choices this CPU can run, each with 1, 2 and 3 threads, and the machine's own.
fn every_option() -> Vec<Options> {
    let mut all = vec![Options::machine()];
    for isa in Isa::ALL {
        if isa.supported() {
            for threads in [1, 2, 3] {
                all.push(Options { threads, isa });
            }
        } else {
            eprintln!("this CPU cannot run the {isa:?} kernels: not tested here");
        }
    }
    all
}

/// The fast path against the reference loop, bit for bit, with every kernel and thread count:
/// every order and transpose of each operand and of the output, sizes on both sides of the
/// register blocks (4 x 16, 6 x 16, 6 x 8, 8 x 32, 8 x 16), batches with padded strides, every
/// compute type with its operand types, alpha and beta, and one size big enough to split rows
/// over threads.
#[test]
fn the_fast_path_matches_the_reference_loop_bit_for_bit() {
    let mut seed = 17u64;
    let options = every_option();
    let sizes: [(u64, u64, u64); 10] = [
        (1, 1, 1),
        (3, 5, 2),
        (4, 16, 7),
        (5, 17, 1),
        (9, 33, 13),
        (2, 3, 0),
        (6, 8, 3),
        (8, 32, 5),
        (13, 31, 4),
        (70, 75, 64),
    ];
    let types = [
        (ElemType::F32, ElemType::F32, ElemType::F32),
        (ElemType::F16, ElemType::F16, ElemType::F32),
        (ElemType::BF16, ElemType::BF16, ElemType::BF16),
        (ElemType::F64, ElemType::F64, ElemType::F64),
        (ElemType::S8, ElemType::S32, ElemType::S32),
        (ElemType::S32, ElemType::F32, ElemType::S32),
    ];
    let mut cases = 0;
    for (ti, &(operand, output, compute)) in types.iter().enumerate() {
        for (si, &(m, n, k)) in sizes.iter().enumerate() {
            let variant = ti + si;
            let orders = [Order::RowMajor, Order::ColumnMajor];
            let lo = orders[variant % 2];
            let ro = orders[(variant / 2) % 2];
            let oo = orders[(variant / 4) % 2];
            let (lt, rt, ot) = (variant % 3 == 0, variant % 5 == 1, variant % 7 == 2);
            let batch = 1 + (variant % 3) as u64;
            let (lr, lc) = if lt { (k, m) } else { (m, k) };
            let (rr, rc) = if rt { (n, k) } else { (k, n) };
            let (or, oc) = if ot { (n, m) } else { (m, n) };
            let mut l = layout(lo, lr, lc, lt, operand);
            let mut r = layout(ro, rr, rc, rt, operand);
            let mut o = layout(oo, or, oc, ot, output);
            for x in [&mut l, &mut r, &mut o] {
                x.batch_size = batch;
                x.leading_dim_stride += 1;
                x.batch_stride = (x.leading_dim_stride + 1) * x.num_rows.max(x.num_cols) + 3;
            }
            let mut cfg = config(l, r, o, compute);
            cfg.alpha_real = if compute == ElemType::S32 { 3.0 } else { 0.75 };
            cfg.beta = [0.0, 1.0, -0.5][variant % 3];
            if compute == ElemType::S32 && output == ElemType::F32 {
                // An s32 accumulator reads an old output only as an integer (an error for
                // f32 outputs, pinned by the test above).
                cfg.beta = 0.0;
            }
            let lhs = random_buffer(&l, batch, &mut seed);
            let rhs = random_buffer(&r, batch, &mut seed);
            let out0 = random_buffer(&o, batch, &mut seed);
            let mut ref_out = out0.clone();
            assert_eq!(gemm_reference(&cfg, &lhs, &rhs, &mut ref_out, None), Ok(()));
            for &opt in &options {
                let mut fast_out = out0.clone();
                // The fast path itself, not the reference loop it falls back to.
                let ran = match compute {
                    ElemType::S32 => {
                        fast::run::<Wrapping<i32>>(&cfg, &lhs, &rhs, &mut fast_out, opt, None)
                            == Ok(true)
                    }
                    ElemType::F64 => {
                        fast::run::<f64>(&cfg, &lhs, &rhs, &mut fast_out, opt, None) == Ok(true)
                    }
                    _ => fast::run::<f32>(&cfg, &lhs, &rhs, &mut fast_out, opt, None) == Ok(true),
                };
                assert!(ran, "the fast path declined {cfg:?} ({opt:?})");
                let mut via_gemm = out0.clone();
                assert_eq!(gemm_with(&cfg, &lhs, &rhs, &mut via_gemm, opt), Ok(()));
                assert!(via_gemm == fast_out);
                assert!(
                    fast_out == ref_out,
                    "fast path ({opt:?}) differs from the reference for {cfg:?}"
                );
            }
            cases += 1;
        }
    }
    assert_eq!(cases, types.len() * sizes.len());
}

/// Operands whose packed copies would dwarf their buffers (stride 0: every row the same
/// memory) take the reference loop, with the same result and no M x K allocation.
#[test]
fn a_broadcast_operand_takes_the_reference_loop() {
    let mut l = layout(Order::RowMajor, 4096, 2, false, ElemType::F32);
    l.leading_dim_stride = 0;
    let r = layout(Order::RowMajor, 2, 1, false, ElemType::F32);
    let o = layout(Order::RowMajor, 4096, 1, false, ElemType::F32);
    let cfg = config(l, r, o, ElemType::F32);
    let lhs: Vec<u8> = [1.5f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let rhs: Vec<u8> = [4.0f32, 0.25]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert!(!fast::run::<f32>(
        &cfg,
        &lhs,
        &rhs,
        &mut vec![0u8; 4096 * 4],
        Options::machine(),
        None
    )
    .unwrap());
    let mut out = vec![0u8; 4096 * 4];
    assert_eq!(gemm(&cfg, &lhs, &rhs, &mut out), Ok(()));
    assert!((0..4096).all(|i| get(&out, ElemType::F32, i) == 6.5));
}

/// The element-at-a-time sum every kernel must reproduce: `acc = 0; acc = acc + a * b` per k.
fn block_by_hand<T: fast::Compute>(
    a: &[T],
    b: &[T],
    mr: usize,
    nr: usize,
    r: usize,
    j: usize,
) -> T {
    let k = a.len() / mr;
    (0..k).fold(T::ZERO, |acc, kk| acc + a[kk * mr + r] * b[kk * nr + j])
}

/// Values whose sums round differently in each order, and the IEEE edge cases: signed zeros,
/// infinities (whose products with zero and sums of opposite signs make the default NaN),
/// subnormals and overflow. No NaN operand: which of two NaN payloads an add keeps is not
/// specified by Rust, and depends on the operand order the compiler picks.
const SPECIAL: [f64; 14] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.1,
    3.0e38,
    -3.0e38,
    1.0e-40,
    -2.5e-44,
    f64::INFINITY,
    f64::NEG_INFINITY,
    1.0e8,
    -7.25,
    1.0e300,
];

/// Every kernel against the sum written out by hand, on the same bytes: each compute type with
/// each ISA this CPU has, k from 0 to past the unrolled lengths, special values, and a `c`
/// wider than the block whose cells outside it must keep their contents.
#[test]
fn every_kernel_computes_the_element_sums_in_k_order() {
    trait Bits {
        fn bits(&self) -> u64;
    }
    impl Bits for f32 {
        fn bits(&self) -> u64 {
            self.to_bits().into()
        }
    }
    impl Bits for f64 {
        fn bits(&self) -> u64 {
            self.to_bits()
        }
    }
    impl Bits for Wrapping<i32> {
        fn bits(&self) -> u64 {
            u64::from(self.0 as u32)
        }
    }
    fn check<T: fast::Compute + Bits + std::fmt::Debug>(from: impl Fn(f64) -> T) {
        let mut seed = 5u64;
        let next = |seed: &mut u64| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            from(SPECIAL[((*seed >> 33) % SPECIAL.len() as u64) as usize])
        };
        for isa in Isa::ALL.into_iter().filter(|i| i.supported()) {
            let kernel = kernels::select::<T>(isa);
            let (mr, nr) = (kernel.mr, kernel.nr);
            for k in [0, 1, 2, 7, 33] {
                let a: Vec<T> = (0..mr * k).map(|_| next(&mut seed)).collect();
                let b: Vec<T> = (0..k * nr).map(|_| next(&mut seed)).collect();
                let ldc = nr + 3;
                let sentinel = from(-9.0);
                let mut c = vec![sentinel; mr * ldc];
                (kernel.block)(&a, &b, &mut c, ldc);
                for r in 0..mr {
                    for j in 0..ldc {
                        let want = if j < nr {
                            block_by_hand(&a, &b, mr, nr, r, j)
                        } else {
                            sentinel
                        };
                        let got = c[r * ldc + j];
                        // Compared as bytes: NaN == NaN, 0.0 != -0.0.
                        assert!(
                            got.bits() == want.bits(),
                            "{isa:?} {mr}x{nr} k={k} ({r}, {j}): {got:?} != {want:?}"
                        );
                    }
                }
            }
        }
    }
    check::<f32>(|v| v as f32);
    check::<f64>(|v| v);
    check::<Wrapping<i32>>(|v| Wrapping(v.clamp(-2e9, 2e9) as i32));
}

/// The options: the widest kernel is one the CPU has, and the machine's thread count is its
/// available parallelism.
#[test]
fn the_machine_options_are_what_the_cpu_has() {
    let o = Options::machine();
    assert!(o.isa.supported());
    assert_eq!(o.isa, Isa::best());
    assert!(Isa::Portable.supported());
    assert_eq!(
        o.threads,
        std::thread::available_parallelism().map_or(1, |t| t.get())
    );
    // Nothing wider than the best is supported.
    let best = Isa::ALL.iter().position(|&i| i == o.isa).expect("listed");
    assert!(Isa::ALL[best + 1..].iter().all(|i| !i.supported()));
}

/// The fast path alone (not the reference loop `gemm_with` falls back to) for `cfg`'s compute
/// type: whether it ran.
fn fast_run(cfg: &GemmConfig, lhs: &[u8], rhs: &[u8], out: &mut [u8], opt: Options) -> bool {
    match cfg.compute_type {
        ElemType::S32 => fast::run::<Wrapping<i32>>(cfg, lhs, rhs, out, opt, None),
        ElemType::F64 => fast::run::<f64>(cfg, lhs, rhs, out, opt, None),
        _ => fast::run::<f32>(cfg, lhs, rhs, out, opt, None),
    }
    .unwrap()
}

/// Every kernel this CPU has, on one thread (the decisions below do not depend on threads).
fn every_isa() -> Vec<Options> {
    Isa::ALL
        .into_iter()
        .filter(|i| i.supported())
        .map(|isa| Options { threads: 1, isa })
        .collect()
}

/// A row-major `m x k` times `k x n` f32 product into a row-major `m x n` output, with random
/// operands and old output, and `beta = 0.5` (so a second pass over an element would show).
fn f32_case(m: u64, n: u64, k: u64, seed: &mut u64) -> (GemmConfig, Vec<u8>, Vec<u8>, Vec<u8>) {
    let l = layout(Order::RowMajor, m, k, false, ElemType::F32);
    let r = layout(Order::RowMajor, k, n, false, ElemType::F32);
    let o = layout(Order::RowMajor, m, n, false, ElemType::F32);
    let mut cfg = config(l, r, o, ElemType::F32);
    cfg.beta = 0.5;
    let (lhs, rhs, out) = (
        random_buffer(&l, 1, seed),
        random_buffer(&r, 1, seed),
        random_buffer(&o, 1, seed),
    );
    (cfg, lhs, rhs, out)
}

/// An empty product has nothing to read or write: the fast path is done at once, with no
/// buffers at all. With K = 0 (an empty sum) it writes `beta * old` and reads no operand.
#[test]
fn empty_products_run_on_the_fast_path_without_operands() {
    for (m, n, k, batch) in [(0, 3, 2, 1), (2, 0, 3, 1), (2, 3, 2, 0)] {
        let mut cfg = config(
            layout(Order::RowMajor, m, k, false, ElemType::F32),
            layout(Order::RowMajor, k, n, false, ElemType::F32),
            layout(Order::RowMajor, m, n, false, ElemType::F32),
            ElemType::F32,
        );
        cfg.batch = batch;
        for opt in every_isa() {
            assert!(
                fast_run(&cfg, &[], &[], &mut [], opt),
                "{m}x{n}x{k}, {batch} batches, {opt:?}"
            );
        }
        assert_eq!(gemm(&cfg, &[], &[], &mut []), Ok(()));
    }
    let o = layout(Order::RowMajor, 2, 3, false, ElemType::F32);
    let mut cfg = config(
        layout(Order::RowMajor, 2, 0, false, ElemType::F32),
        layout(Order::RowMajor, 0, 3, false, ElemType::F32),
        o,
        ElemType::F32,
    );
    (cfg.alpha_real, cfg.beta) = (2.0, 0.5);
    let old = store_logical(&o, &[vec![vec![1.0, 2.0, 3.0], vec![4.0, -6.0, 8.0]]]);
    for opt in every_isa() {
        let mut out = old.clone();
        assert!(fast_run(&cfg, &[], &[], &mut out, opt), "{opt:?}");
        assert_eq!(
            read_logical(&o, &out, 0),
            [[0.5, 1.0, 1.5], [2.0, -3.0, 4.0]],
            "{opt:?}"
        );
    }
}

/// An output one element too short: the fast path declines before writing anything (on one
/// thread and split over threads), and the reference loop reports the error.
#[test]
fn a_short_output_is_declined_before_any_write() {
    let mut seed = 3u64;
    // 3 x 5 (one thread), 64 x 64 x 64 (2^18 multiply-adds: split over threads).
    for (m, n, k) in [(3, 5, 4), (64, 64, 64)] {
        let (cfg, lhs, rhs, mut old) = f32_case(m, n, k, &mut seed);
        old.truncate(old.len() - 4);
        let mut options = every_isa();
        options.extend([2, 3].map(|threads| Options {
            threads,
            ..Options::machine()
        }));
        for opt in options {
            let mut out = old.clone();
            assert!(
                !fast_run(&cfg, &lhs, &rhs, &mut out, opt),
                "{m}x{n}x{k} {opt:?}"
            );
            assert!(out == old, "{m}x{n}x{k} {opt:?}: the output was written");
        }
        let mut out = old.clone();
        assert_eq!(
            gemm(&cfg, &lhs, &rhs, &mut out),
            Err(Error::internal("gemm operand access out of bounds"))
        );
    }
}

/// An operand (or output) too short only in its last batch: the whole access is checked before
/// batch 0 is written, so the fast path declines with the output untouched, and the reference
/// loop reports the error.
#[test]
fn a_buffer_short_in_its_last_batch_is_declined_before_batch_0_is_written() {
    let mut seed = 7u64;
    let l = layout(Order::RowMajor, 3, 4, false, ElemType::F32);
    let r = layout(Order::RowMajor, 4, 5, false, ElemType::F32);
    let o = layout(Order::RowMajor, 3, 5, false, ElemType::F32);
    let [l, r, o] = [l, r, o].map(|x| MatrixLayout { batch_size: 2, ..x });
    let mut cfg = config(l, r, o, ElemType::F32);
    cfg.beta = 0.5;
    let lhs = random_buffer(&l, 2, &mut seed);
    let rhs = random_buffer(&r, 2, &mut seed);
    let old = random_buffer(&o, 2, &mut seed);
    let short = |b: &[u8]| b[..b.len() - 4].to_vec();
    let cases = [
        ("lhs", short(&lhs), rhs.clone(), old.clone()),
        ("rhs", lhs.clone(), short(&rhs), old.clone()),
        ("output", lhs.clone(), rhs.clone(), short(&old)),
    ];
    for (what, lhs, rhs, old) in cases {
        for opt in every_isa() {
            let mut out = old.clone();
            assert!(!fast_run(&cfg, &lhs, &rhs, &mut out, opt), "{what} {opt:?}");
            assert!(out == old, "short {what} ({opt:?}): batch 0 was written");
        }
        let mut out = old.clone();
        assert_eq!(
            gemm(&cfg, &lhs, &rhs, &mut out),
            Err(Error::internal("gemm operand access out of bounds")),
            "{what}"
        );
    }
}

/// An operand whose last batch's index does not fit in u64 is declined whole, before batch 0
/// is written: batch 2 at 2 * 2^63 would wrap around to index 0 (in release builds) and read
/// batch 0's elements.
#[test]
fn an_operand_whose_last_index_overflows_is_declined() {
    let mut seed = 13u64;
    let l = layout(Order::RowMajor, 3, 2, false, ElemType::F32);
    let r = layout(Order::RowMajor, 2, 3, false, ElemType::F32);
    let o = layout(Order::RowMajor, 3, 3, false, ElemType::F32);
    let [l, r, o] = [l, r, o].map(|x| MatrixLayout { batch_size: 3, ..x });
    let fine = config(l, r, o, ElemType::F32);
    let (lhs, rhs) = (
        random_buffer(&l, 3, &mut seed),
        random_buffer(&r, 3, &mut seed),
    );
    let old = random_buffer(&o, 3, &mut seed);
    for opt in every_isa() {
        assert!(fast_run(&fine, &lhs, &rhs, &mut old.clone(), opt));
    }
    let huge = MatrixLayout {
        batch_stride: 1 << 63,
        ..l
    };
    let huge_r = MatrixLayout {
        batch_stride: 1 << 63,
        ..r
    };
    for cfg in [
        config(huge, r, o, ElemType::F32),
        config(l, huge_r, o, ElemType::F32),
    ] {
        for opt in every_isa() {
            let mut out = old.clone();
            assert!(!fast_run(&cfg, &lhs, &rhs, &mut out, opt), "{opt:?}");
            assert!(out == old, "{opt:?}: batch 0 was written");
        }
    }
}

/// An output whose rows all overlap (row stride 0) over a large M x N: its product buffer
/// would be many times the output's size, so the reference loop runs it (same bytes).
#[test]
fn a_broadcast_output_takes_the_reference_loop() {
    let mut seed = 11u64;
    let (mut cfg, lhs, rhs, _) = f32_case(1024, 256, 1, &mut seed);
    cfg.output.leading_dim_stride = 0;
    let old = random_buffer(&cfg.output, 1, &mut seed);
    assert_eq!(old.len(), 256 * 4);
    for opt in every_isa() {
        let mut out = old.clone();
        assert!(!fast_run(&cfg, &lhs, &rhs, &mut out, opt), "{opt:?}");
        assert!(out == old);
    }
    let (mut want, mut got) = (old.clone(), old);
    assert_eq!(gemm_reference(&cfg, &lhs, &rhs, &mut want, None), Ok(()));
    assert_eq!(gemm(&cfg, &lhs, &rhs, &mut got), Ok(()));
    assert!(got == want);
}

/// Matrix-vector products (one column of B, or one row of A): the packed copies are mostly
/// block padding, within the bound that allows for it, so the fast path runs them.
#[test]
fn matrix_vector_products_take_the_fast_path() {
    let mut seed = 23u64;
    for (m, n, k) in [(100, 1, 64), (1, 100, 64), (1, 1, 64)] {
        let (cfg, lhs, rhs, old) = f32_case(m, n, k, &mut seed);
        let mut want = old.clone();
        assert_eq!(gemm_reference(&cfg, &lhs, &rhs, &mut want, None), Ok(()));
        for opt in every_isa() {
            let mut out = old.clone();
            assert!(
                fast_run(&cfg, &lhs, &rhs, &mut out, opt),
                "{m}x{n}x{k} {opt:?}"
            );
            assert!(out == want, "{m}x{n}x{k} {opt:?}");
        }
    }
}

/// Output rows that overlap (row stride below N) get their epilogue on the calling thread in
/// the reference's order, also when the product is split over threads: each old value is read
/// just before its element is written, as in the reference loop.
#[test]
fn overlapping_output_rows_take_the_fast_path_on_every_thread_count() {
    let mut seed = 29u64;
    let (mut cfg, lhs, rhs, _) = f32_case(64, 64, 64, &mut seed);
    cfg.output.leading_dim_stride = 40;
    let old = random_buffer(&cfg.output, 1, &mut seed);
    assert_eq!(old.len(), (63 * 40 + 64) * 4);
    let mut want = old.clone();
    assert_eq!(gemm_reference(&cfg, &lhs, &rhs, &mut want, None), Ok(()));
    for opt in every_option() {
        let mut out = old.clone();
        assert!(fast_run(&cfg, &lhs, &rhs, &mut out, opt), "{opt:?}");
        assert!(out == want, "{opt:?}");
    }
}

/// The plan of a row-major `m x n x k` product in 8 x 32 blocks.
fn plan(m: u64, n: u64, k: u64, block: (usize, usize), threads: usize) -> fast::Plan {
    let o = layout(Order::RowMajor, m, n, false, ElemType::F32);
    let dims = (m as usize, n as usize, k as usize);
    fast::Plan::of(dims, block, fast::View::of(&o), threads)
}

fn one_thread(mp: usize, np: usize) -> fast::Plan {
    fast::Plan {
        threads: 1,
        a_rows: mp,
        b_cols: np,
        split_epilogue: false,
    }
}

/// Threads only from 2^18 multiply-adds per batch, and only with two row panels or more; K = 0
/// (no work) never.
#[test]
fn the_plan_splits_only_products_of_2_18_multiply_adds_and_two_row_panels() {
    let split = |threads, a_rows, b_cols| fast::Plan {
        threads,
        a_rows,
        b_cols,
        split_epilogue: true,
    };
    let b = (8, 32);
    // 64 x 64 x 63 = 2^18 - 4096 multiply-adds; 64^3 = 2^18.
    assert_eq!(plan(64, 64, 63, b, 2), one_thread(64, 64));
    assert_eq!(plan(64, 64, 64, b, 2), split(2, 32, 32));
    assert_eq!(plan(64, 64, 64, b, 1), one_thread(64, 64));
    assert_eq!(plan(64, 64, 64, b, 0), one_thread(64, 64));
    // One panel of 8 rows (2^18 multiply-adds), then two (9 rows, the second padded).
    assert_eq!(plan(8, 4096, 8, b, 2), one_thread(8, 4096));
    assert_eq!(plan(9, 4096, 8, b, 2), split(2, 8, 2048));
    // No work: one thread whatever M and N.
    assert_eq!(plan(4096, 4096, 0, b, 2), one_thread(4096, 4096));
}

/// Whole panels per thread: 13 row panels of 8 (M = 100 padded to 104) and 4 column panels of
/// 32 (N = 100 padded to 128), split as evenly as whole panels go, the last thread taking
/// what is left; with more threads than row panels, one panel each.
#[test]
fn the_plan_splits_rows_and_columns_in_whole_panels() {
    let split = |threads, a_rows, b_cols| fast::Plan {
        threads,
        a_rows,
        b_cols,
        split_epilogue: true,
    };
    let b = (8, 32);
    // 2 threads: 7 + 6 row panels (56 + 48 rows), 2 + 2 column panels.
    assert_eq!(plan(100, 100, 64, b, 2), split(2, 56, 64));
    // 3 threads: 5 + 5 + 3 row panels, 2 + 2 column panels (two packing threads suffice).
    assert_eq!(plan(100, 100, 64, b, 3), split(3, 40, 64));
    // 16 threads: one row panel each (13 threads), one column panel each.
    assert_eq!(plan(100, 100, 64, b, 16), split(13, 8, 32));
    // 6 x 16 blocks: 17 row panels (M padded to 102) and 7 column panels (N padded to 112).
    assert_eq!(plan(100, 100, 64, (6, 16), 3), split(3, 36, 48));
}

/// The threads run their own rows' epilogue only when those rows are disjoint, contiguous
/// pieces of the output: unit column stride, row stride at least N.
#[test]
fn the_plan_splits_the_epilogue_only_over_disjoint_contiguous_rows() {
    let with = |order, rows, cols, ld: u64, transpose| {
        let mut o = layout(order, rows, cols, transpose, ElemType::F32);
        o.leading_dim_stride = ld;
        let (m, n) = o.op_dims();
        fast::Plan::of((m as usize, n as usize, 64), (8, 32), fast::View::of(&o), 2)
    };
    // 64 x 64 row-major: row stride 64 or more; 63 overlaps.
    assert!(with(Order::RowMajor, 64, 64, 64, false).split_epilogue);
    assert!(with(Order::RowMajor, 64, 64, 70, false).split_epilogue);
    assert!(!with(Order::RowMajor, 64, 64, 63, false).split_epilogue);
    // Column-major, or a transposed row-major store: columns are contiguous, not rows.
    assert!(!with(Order::ColumnMajor, 64, 64, 64, false).split_epilogue);
    assert!(!with(Order::RowMajor, 64, 64, 64, true).split_epilogue);
    // One column (4096 x 1, 2^18 multiply-adds): column-major has row stride 1, which is at
    // least N = 1, but its column stride is not 1; row-major with stride 1 is contiguous.
    assert!(!with(Order::ColumnMajor, 4096, 1, 4096, false).split_epilogue);
    assert!(with(Order::RowMajor, 4096, 1, 1, false).split_epilogue);
    assert_eq!(with(Order::RowMajor, 4096, 1, 1, false).threads, 2);
}

// The AVX-512 kernels need Rust 1.89; before it the AVX2 ones run for `Isa::Avx512`.
#[rustversion::since(1.89)]
const AVX512_KERNELS: [&str; 2] = ["f32 8x32 avx512", "f64 8x16 avx512"];
#[rustversion::before(1.89)]
const AVX512_KERNELS: [&str; 2] = ["f32 6x16 avx2", "f64 6x8 avx2"];

/// Which kernel each ISA runs for each compute type on this CPU (the bytes cannot tell: every
/// kernel gives the same ones), read from the CPU's own feature flags: an ISA it lacks runs
/// the portable loop. The block shape is the one the name says.
#[test]
fn each_isa_runs_its_own_kernel_where_the_cpu_has_it() {
    #[cfg(target_arch = "x86_64")]
    let (avx2, avx512) = (
        std::is_x86_feature_detected!("avx2"),
        std::is_x86_feature_detected!("avx512f"),
    );
    #[cfg(not(target_arch = "x86_64"))]
    let (avx2, avx512) = (false, false);
    assert_eq!(
        (Isa::Avx2.supported(), Isa::Avx512.supported()),
        (avx2, avx512)
    );
    let portable = "4x16 portable";
    let int_avx2 = "4x16 portable, built for avx2";
    let [f32_512, f64_512] = AVX512_KERNELS;
    let want = [
        (Isa::Portable, true, [portable, portable, portable]),
        (Isa::Avx2, avx2, ["f32 6x16 avx2", "f64 6x8 avx2", int_avx2]),
        (Isa::Avx512, avx512, [f32_512, f64_512, int_avx2]),
    ];
    for (isa, has, names) in want {
        let [f32_name, f64_name, s32_name] = if has { names } else { [portable; 3] };
        for (compute, name) in [
            (ElemType::F32, f32_name),
            (ElemType::F16, f32_name),
            (ElemType::BF16, f32_name),
            (ElemType::F64, f64_name),
            (ElemType::S32, s32_name),
        ] {
            assert_eq!(kernel_name(compute, isa), name, "{compute:?} {isa:?}");
        }
        let shape = |mr: usize, nr: usize, name: &str| {
            assert!(
                name.starts_with(&format!("{mr}x{nr}")) || name.contains(&format!(" {mr}x{nr} "))
            );
        };
        let k = kernels::select::<f32>(isa);
        shape(k.mr, k.nr, k.name);
        let k = kernels::select::<f64>(isa);
        shape(k.mr, k.nr, k.name);
        let k = kernels::select::<Wrapping<i32>>(isa);
        shape(k.mr, k.nr, k.name);
    }
}
