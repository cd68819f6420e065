//! Memory: atomics under contention, vector and local/shared/dynamic/generic accesses, module
//! variables, and every safety error (OOB, misaligned, read-only, budget, launch mistakes).
mod emu_common;
use emu_common::*;
use ptx::emu::{self, EmuError, LaunchOptions, Memory, ParamValue, Space};

const ATOMICS: &str = r#"
.visible .entry atomics(.param .u64 ctr)
{
    .reg .pred %p<4>;
    .reg .b32 %r<32>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [ctr];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r1, %r2, %r3;
    atom.global.add.u32 %r5, [%rd2], 1;
    atom.global.add.f32 %f1, [%rd2+4], 0f3F800000;
    atom.global.max.s32 %r6, [%rd2+8], %r4;
    atom.global.min.u32 %r7, [%rd2+12], %r4;
    atom.global.inc.u32 %r8, [%rd2+16], 99;
    atom.global.or.b32 %r9, [%rd2+20], %r3;
    red.global.add.u64 [%rd2+24], 3;
    atom.global.exch.b32 %r10, [%rd2+32], %r4;
    // A CAS loop: every thread adds 2.
CAS:
    ld.volatile.global.u32 %r11, [%rd2+36];
    add.u32 %r12, %r11, 2;
    atom.global.cas.b32 %r13, [%rd2+36], %r11, %r12;
    setp.ne.u32 %p1, %r13, %r11;
    @%p1 bra CAS;
    atom.global.dec.u32 %r14, [%rd2+40], 1000000;
    atom.global.add.f64 %fd1, [%rd2+48], 0d3FE0000000000000;
    ret;
}
"#;

#[test]
fn atomics_under_contention() {
    let text = module(&ATOMICS.replace(
        ".reg .b64 %rd<8>;",
        ".reg .b64 %rd<8>;\n    .reg .f64 %fd<2>;",
    ));
    let m = load(&text);
    for threads in [1, 4] {
        let mut mem = Memory::new();
        let mut init = vec![0u32; 14];
        init[3] = u32::MAX; // min
        init[10] = 900_000; // dec
        let p = buf_u32(&mut mem, &init);
        let opts = LaunchOptions {
            threads,
            ..LaunchOptions::default()
        };
        let (grid, block) = (64u32, 256u32);
        let n = grid * block;
        emu::launch(
            &m,
            "atomics",
            [grid, 1, 1],
            [block, 1, 1],
            0,
            &[ParamValue::ptr(p)],
            &mut mem,
            &opts,
        )
        .unwrap();
        let v = read_u32(&mut mem, p, 14);
        assert_eq!(v[0], n, "add.u32");
        assert_eq!(f32::from_bits(v[1]), n as f32, "add.f32");
        assert_eq!(v[2], n - 1, "max.s32");
        assert_eq!(v[3], 0, "min.u32");
        assert_eq!(v[4], n % 100, "inc wraps at 99");
        assert_eq!(v[5], 255, "or");
        assert_eq!(
            v[6] as u64 | (v[7] as u64) << 32,
            3 * n as u64,
            "red.add.u64"
        );
        assert!(v[8] < n, "exch leaves one thread's value");
        assert_eq!(v[9], 2 * n, "cas loop");
        assert_eq!(v[10], 900_000 - n, "dec");
        assert_eq!(
            f64::from_bits(v[12] as u64 | (v[13] as u64) << 32),
            n as f64 * 0.5,
            "add.f64"
        );
    }
}

#[test]
fn shared_atomics_histogram() {
    let text = module(
        r#"
.visible .entry hist(.param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b32 bins[8];
    mov.u32 %r0, %tid.x;
    setp.ge.u32 %p1, %r0, 8;
    @%p1 bra INIT_DONE;
    shl.b32 %r1, %r0, 2;
    mov.u32 %r2, bins;
    add.u32 %r3, %r2, %r1;
    st.shared.u32 [%r3], 0;
INIT_DONE:
    bar.sync 0;
    and.b32 %r4, %r0, 7;
    shl.b32 %r5, %r4, 2;
    mov.u32 %r6, bins;
    add.u32 %r7, %r6, %r5;
    atom.shared.add.u32 %r8, [%r7], %r0;
    bar.sync 0;
    @%p1 bra END;
    shl.b32 %r1, %r0, 2;
    add.u32 %r3, %r6, %r1;
    ld.shared.u32 %r9, [%r3];
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r0, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r9;
END:
    ret;
}
"#,
    );
    let out = run_bufs(&text, "hist", [1, 1, 1], [256, 1, 1], &[vec![0; 8]], 1).unwrap();
    for b in 0..8u32 {
        let want: u32 = (0..256u32).filter(|t| t % 8 == b).sum();
        assert_eq!(out[0][b as usize], want);
    }
}

#[test]
fn vectors_local_generic_dynamic_shared_and_module_vars() {
    let text = module(
        r#"
.global .align 4 .u32 table[4] = {10, 20, 30, 40};
.const .align 4 .f32 scale = 0f40000000;
.extern .shared .align 16 .b8 dsmem[];
.visible .entry k(.param .u64 out, .param .u64 inp)
{
    .reg .pred %p<4>;
    .reg .b32 %r<40>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<16>;
    .local .align 8 .b32 arr[8];
    .shared .align 4 .b32 st[32];
    mov.u32 %r0, %tid.x;
    ld.param.u64 %rd1, [inp];
    mul.wide.u32 %rd2, %r0, 16;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.nc.v4.u32 {%r1, %r2, %r3, %r4}, [%rd3];
    // local array: arr[i] = input word i, summed back through a generic pointer
    mov.u64 %rd4, arr;
    st.local.v2.u32 [%rd4], {%r1, %r2};
    st.local.v2.u32 [%rd4+8], {%r3, %r4};
    cvta.local.u64 %rd5, %rd4;
    ld.u32 %r5, [%rd5+4];
    ld.local.u32 %r6, [arr+12];
    add.u32 %r7, %r5, %r6;
    // dynamic shared through generic addressing
    mov.u32 %r8, dsmem;
    shl.b32 %r9, %r0, 2;
    add.u32 %r10, %r8, %r9;
    st.shared.u32 [%r10], %r7;
    mov.u32 %r20, st;
    add.u32 %r21, %r20, %r9;
    st.shared.u32 [%r21], 1;
    bar.sync 0;
    xor.b32 %r11, %r0, 1;
    shl.b32 %r12, %r11, 2;
    add.u32 %r13, %r8, %r12;
    cvt.u64.u32 %rd6, %r13;
    cvta.shared.u64 %rd7, %rd6;
    ld.u32 %r14, [%rd7];
    // module variables
    and.b32 %r15, %r0, 3;
    mul.wide.u32 %rd8, %r15, 4;
    mov.u64 %rd9, table;
    add.s64 %rd10, %rd9, %rd8;
    ld.global.u32 %r16, [%rd10];
    ld.const.f32 %f1, [scale];
    cvt.rzi.u32.f32 %r17, %f1;
    mad.lo.u32 %r18, %r16, %r17, %r14;
    // pack/unpack through b64
    mov.b64 %rd11, {%r18, %r0};
    mov.b64 {%r19, %r22}, %rd11;
    add.u32 %r23, %r19, %r22;
    ld.param.u64 %rd12, [out];
    mul.wide.u32 %rd13, %r0, 4;
    add.s64 %rd14, %rd12, %rd13;
    st.global.u32 [%rd14], %r23;
    ret;
}
"#,
    );
    let m = load(&text);
    let mut mem = Memory::new();
    let n = 32usize;
    let inp: Vec<u32> = (0..n as u32 * 4).map(|i| i * 3 + 1).collect();
    let pin = buf_u32(&mut mem, &inp);
    let pout = buf_u32(&mut mem, &vec![0; n]);
    emu::launch(
        &m,
        "k",
        [1, 1, 1],
        [n as u32, 1, 1],
        128,
        &[ParamValue::ptr(pout), ParamValue::ptr(pin)],
        &mut mem,
        &LaunchOptions::default(),
    )
    .unwrap();
    let out = read_u32(&mut mem, pout, n);
    for t in 0..n {
        let other = t ^ 1;
        let w = |k: usize, i: usize| inp[k * 4 + i];
        let partner = w(other, 1) + w(other, 3);
        let want = [10, 20, 30, 40][t % 4] * 2 + partner + t as u32;
        assert_eq!(out[t], want, "thread {t}");
    }
}

fn oob_kernel(offset: i64, ty: &str) -> String {
    module(&format!(
        r#"
.visible .entry k(.param .u64 out)
{{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    mov.u32 %r1, %tid.x;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.{ty} %r2, [%rd3+{offset}];
    st.global.u32 [%rd3], %r2;
    ret;
}}
"#
    ))
}

#[test]
fn out_of_bounds_access_is_an_error() {
    // 32 threads, 31 words: thread 31 reads past the end.
    let text = oob_kernel(0, "u32");
    let err = run_bufs(&text, "k", [1, 1, 1], [32, 1, 1], &[vec![0; 31]], 1).unwrap_err();
    match &err {
        EmuError::OutOfBounds {
            at,
            space,
            address,
            size,
            ..
        } => {
            assert_eq!(*space, Space::Global);
            assert_eq!(*size, 4);
            assert_eq!(at.tid, [31, 0, 0]);
            assert_eq!(at.ctaid, [0, 0, 0]);
            assert_eq!(at.kernel, "k");
            assert!(at.instruction.starts_with("ld.global.u32"), "{err}");
            assert_eq!(address % 4, 0);
            let msg = err.to_string();
            assert!(
                msg.contains("out-of-bounds global read of 4 bytes"),
                "{msg}"
            );
            assert!(msg.contains("tid (31,0,0)"), "{msg}");
        }
        e => panic!("wrong error {e}"),
    }
    // Null pointer.
    let m = load(&text);
    let mut mem = Memory::new();
    let err = emu::launch(
        &m,
        "k",
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[ParamValue::u64(0)],
        &mut mem,
        &LaunchOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, EmuError::OutOfBounds { address: 0, .. }),
        "{err}"
    );
    // Shared out of bounds.
    let text = module(
        r#"
.visible .entry k()
{
    .reg .b32 %r<4>;
    .shared .align 4 .b32 s[4];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    st.shared.u32 [%r2], 1;
    ret;
}
"#,
    );
    let m = load(&text);
    let err = emu::launch(
        &m,
        "k",
        [1, 1, 1],
        [8, 1, 1],
        0,
        &[],
        &mut Memory::new(),
        &LaunchOptions::default(),
    )
    .unwrap_err();
    match err {
        EmuError::OutOfBounds {
            space: Space::Shared,
            address: 16,
            at,
            ..
        } => assert_eq!(at.tid, [4, 0, 0]),
        e => panic!("wrong error {e}"),
    }
}

#[test]
fn misaligned_access_is_an_error() {
    let text = oob_kernel(2, "u32");
    let err = run_bufs(&text, "k", [1, 1, 1], [4, 1, 1], &[vec![0; 8]], 1).unwrap_err();
    match &err {
        EmuError::Misaligned {
            at,
            space: Space::Global,
            size: 4,
            address,
        } => {
            assert_eq!(at.tid, [0, 0, 0]);
            assert_eq!(address % 4, 2);
        }
        e => panic!("wrong error {e}"),
    }
    // A v4 access must be 16-byte aligned.
    let text = module(
        r#"
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+4];
    ret;
}
"#,
    );
    let err = run_bufs(&text, "k", [1, 1, 1], [1, 1, 1], &[vec![0; 16]], 1).unwrap_err();
    assert!(matches!(err, EmuError::Misaligned { size: 4, .. }), "{err}");
}

#[test]
fn writes_to_kernel_params_are_rejected() {
    let text = module(
        r#"
.visible .entry k(.param .u32 x)
{
    st.param.u32 [x], 1;
    ret;
}
"#,
    );
    let m = load(&text);
    let err = emu::launch(
        &m,
        "k",
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[ParamValue::u32(3)],
        &mut Memory::new(),
        &LaunchOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            EmuError::ReadOnly {
                space: Space::Param,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn instruction_budget_stops_infinite_loops() {
    let text = module(
        r#"
.visible .entry spin()
{
    .reg .b32 %r<4>;
L:
    add.u32 %r1, %r1, 1;
    bra L;
}
"#,
    );
    let m = load(&text);
    for threads in [1, 4] {
        let opts = LaunchOptions {
            instruction_budget: 1_000_000,
            threads,
            ..LaunchOptions::default()
        };
        let err = emu::launch(
            &m,
            "spin",
            [8, 1, 1],
            [64, 1, 1],
            0,
            &[],
            &mut Memory::new(),
            &opts,
        )
        .unwrap_err();
        match err {
            EmuError::BudgetExhausted { budget, at } => {
                assert_eq!(budget, 1_000_000);
                assert_eq!(at.kernel, "spin");
            }
            e => panic!("wrong error {e}"),
        }
    }
}

/// A branch-to-self loop under the default 2^36 budget ran for seconds to minutes; the wall-time
/// limit stops it at the same check as the budget.
#[test]
fn wall_time_limit_stops_a_spinning_kernel() {
    let text = module(
        r#"
.visible .entry spin()
{
L:
    bra L;
}
"#,
    );
    let m = load(&text);
    let opts = LaunchOptions {
        threads: 1,
        wall_time_limit: Some(std::time::Duration::from_millis(200)),
        ..LaunchOptions::default()
    };
    let start = std::time::Instant::now();
    let err = emu::launch(
        &m,
        "spin",
        [1, 1, 1],
        [32, 1, 1],
        0,
        &[],
        &mut Memory::new(),
        &opts,
    )
    .unwrap_err();
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    match err {
        EmuError::WallTimeExceeded { limit_ms, at } => {
            assert_eq!(limit_ms, 200);
            assert_eq!(at.kernel, "spin");
        }
        e => panic!("wrong error {e}"),
    }
}

/// 2^31-1 blocks pass CUDA's grid limit, but cannot finish within the budget (every thread runs
/// at least its `ret`): refused before any block runs rather than run for minutes.
#[test]
fn launch_larger_than_the_budget_is_refused_before_running() {
    let m = load(&module(".visible .entry k()\n{\n ret;\n}\n"));
    let opts = LaunchOptions::default();
    let start = std::time::Instant::now();
    let err = emu::launch(
        &m,
        "k",
        [(1 << 31) - 1, 1, 1],
        [64, 1, 1],
        0,
        &[],
        &mut Memory::new(),
        &opts,
    )
    .unwrap_err();
    assert!(start.elapsed() < std::time::Duration::from_secs(1));
    assert_eq!(
        err.to_string(),
        "kernel `k`: invalid launch configuration: grid [2147483647, 1, 1] x block [64, 1, 1] is 137438953408 threads, more than the instruction budget of 68719476736 lane-instructions can run"
    );
    let err = emu::launch(
        &m,
        "k",
        [1, 65536, 1],
        [1, 1, 1],
        0,
        &[],
        &mut Memory::new(),
        &opts,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel `k`: invalid launch configuration: grid [1, 65536, 1] exceeds the grid limit [2147483647, 65535, 65535]"
    );
}

#[test]
fn trap_is_an_error() {
    let text = module(".visible .entry k()\n{\n trap;\n}\n");
    let m = load(&text);
    let err = emu::launch(
        &m,
        "k",
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[],
        &mut Memory::new(),
        &LaunchOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, EmuError::Trap { .. }), "{err}");
}

#[test]
fn launch_mistakes_are_errors() {
    let text = oob_kernel(0, "u32");
    let m = load(&text);
    let mut mem = Memory::new();
    let p = mem.alloc(128).unwrap();
    let o = LaunchOptions::default();
    let err = emu::launch(
        &m,
        "nope",
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[ParamValue::ptr(p)],
        &mut mem,
        &o,
    )
    .unwrap_err();
    assert!(
        matches!(&err, EmuError::UnknownKernel { kernel, available } if kernel == "nope" && available == "k"),
        "{err}"
    );
    let err = emu::launch(&m, "k", [1, 1, 1], [1, 1, 1], 0, &[], &mut mem, &o).unwrap_err();
    assert!(
        matches!(
            err,
            EmuError::ParamCount {
                expected: 1,
                got: 0,
                ..
            }
        ),
        "{err}"
    );
    let err = emu::launch(
        &m,
        "k",
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[ParamValue::u32(1)],
        &mut mem,
        &o,
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            EmuError::ParamSize {
                index: 0,
                expected: 8,
                got: 4,
                ..
            }
        ),
        "{err}"
    );
    let err = emu::launch(
        &m,
        "k",
        [1, 1, 1],
        [2048, 1, 1],
        0,
        &[ParamValue::ptr(p)],
        &mut mem,
        &o,
    )
    .unwrap_err();
    assert!(matches!(err, EmuError::LaunchConfig { .. }), "{err}");
    let err = emu::launch(
        &m,
        "k",
        [0, 1, 1],
        [1, 1, 1],
        0,
        &[ParamValue::ptr(p)],
        &mut mem,
        &o,
    )
    .unwrap_err();
    assert!(matches!(err, EmuError::LaunchConfig { .. }), "{err}");
    // Host-side memory misuse.
    assert!(mem.write(p.offset(120), &[0; 16]).is_err());
    assert!(mem.free(p.offset(4)).is_err());
    mem.free(p).unwrap();
    assert!(mem.read_vec(p, 4).is_err());
}

#[test]
fn unsupported_input_is_an_error_not_a_panic() {
    for body in [
        "bra NOWHERE;",
        "add.f32 %f1, %f1, %nosuch;",
        "tex.2d.v4.f32.f32 {%f1, %f1, %f1, %f1}, [t, {%f1, %f1}];",
    ] {
        let text = module(&format!(
            ".visible .entry k()\n{{\n .reg .f32 %f<4>;\n {body}\n ret;\n}}\n"
        ));
        if let Ok(ast) = ptx::parse(&text) {
            let r = emu::LoadedModule::load(&ast);
            assert!(
                matches!(r, Err(EmuError::Unsupported { .. })),
                "{body}: {r:?}"
            );
        }
    }
}

/// Issue 33: a kernel reading 512 bytes past an 80-byte buffer used to get the next buffer's
/// bytes (allocations were 256 bytes apart) and exit 0; a store just before a buffer's start
/// wrote the previous one. Both are faults now, naming the address and the instruction.
#[test]
fn an_access_past_one_buffer_never_reaches_its_neighbour() {
    let text = module(
        r#"
.visible .entry k(.param .u64 a, .param .u64 b, .param .u64 off)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u64 %rd3, [off];
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r1, [%rd4];
    st.global.u32 [%rd2], %r1;
    ret;
}
"#,
    );
    let m = load(&text);
    for (off, what) in [(512i64, "past the end"), (-8, "before the start")] {
        for reference_engine in [false, true] {
            let mut mem = Memory::new();
            let a = buf_u32(&mut mem, &[7; 20]);
            let b = buf_u32(&mut mem, &[9; 256]);
            // Past the end of `a` (where `b` used to start), or 8 bytes before `b` (the end
            // of `a`'s old guard gap); the kernel stores what it read into the other buffer.
            let (base, target) = if off < 0 { (b, a) } else { (a, b) };
            let opts = LaunchOptions {
                reference_engine,
                ..LaunchOptions::default()
            };
            let err = emu::launch(
                &m,
                "k",
                [1, 1, 1],
                [1, 1, 1],
                0,
                &[
                    ParamValue::ptr(base),
                    ParamValue::ptr(target),
                    ParamValue::u64(off as u64),
                ],
                &mut mem,
                &opts,
            )
            .expect_err(what);
            match &err {
                EmuError::OutOfBounds {
                    space: Space::Global,
                    address,
                    size: 4,
                    at,
                    ..
                } => {
                    assert_eq!(*address, base.0.wrapping_add(off as u64), "{what}");
                    assert!(at.instruction.starts_with("ld.global.u32"), "{err}");
                }
                e => panic!("{what}: wrong error {e}"),
            }
            assert_eq!(
                read_u32(&mut mem, a, 20),
                vec![7; 20],
                "{what}: a unchanged"
            );
            assert_eq!(
                read_u32(&mut mem, b, 256),
                vec![9; 256],
                "{what}: b unchanged"
            );
        }
    }
}

/// `Memory::fill32`: the pattern repeats from the start, a tail shorter than a word takes its
/// first bytes, zero clears, and a range past the allocation is the write's error.
#[test]
fn fill32_repeats_the_pattern_in_place() {
    let mut mem = Memory::new();
    let p = mem.alloc(11).unwrap();
    mem.write(p, &[0xaa; 11]).unwrap();
    mem.fill32(emu::DevicePtr(p.0 + 1), 10, 0x0403_0201)
        .unwrap();
    assert_eq!(
        mem.read_vec(p, 11).unwrap(),
        vec![0xaa, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2]
    );
    mem.fill32(p, 8, 0).unwrap();
    assert_eq!(
        mem.read_vec(p, 11).unwrap(),
        vec![0, 0, 0, 0, 0, 0, 0, 0, 4, 1, 2]
    );
    let err = mem.fill32(p, 12, 7).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "invalid device memory operation: range {:#x}+12 is not inside one allocation",
            p.0
        )
    );
}

/// Global vector loads and stores of every width and element size, with inactive lanes, signed
/// elements and two lanes storing one vector: the whole-warp path (the default) leaves the same
/// bytes and counts as the lane-by-lane path (which initcheck forces).
#[test]
fn vector_accesses_whole_warp_equal_lane_by_lane() {
    let text = module(
        r#"
.visible .entry k(.param .u64 out, .param .u64 inp)
{
    .reg .pred %p<4>;
    .reg .b16 %h<8>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<40>;
    mov.u32 %r0, %tid.x;
    ld.param.u64 %rd1, [inp];
    ld.param.u64 %rd2, [out];
    mul.wide.u32 %rd3, %r0, 16;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd4];
    ld.global.v2.u64 {%rd6, %rd7}, [%rd4];
    ld.global.v2.s16 {%h1, %h2}, [%rd4+4];
    ld.global.v4.s16 {%h3, %h4, %h5, %h6}, [%rd4+8];
    cvt.s32.s16 %r5, %h1;
    cvt.s32.s16 %r6, %h6;
    add.s32 %r7, %r5, %r6;
    xor.b32 %r8, %r1, %r4;
    // Lanes 0-9 are inactive for the stores; lanes 20 and 21 store one vector.
    setp.lt.u32 %p1, %r0, 10;
    @%p1 bra DONE;
    setp.eq.u32 %p2, %r0, 21;
    @%p2 sub.s64 %rd5, %rd5, 16;
    st.global.v4.u32 [%rd5], {%r7, %r8, %r2, %r3};
    st.global.v2.u64 [%rd5+512], {%rd7, %rd6};
    st.global.v2.b16 [%rd5+1024], {%h4, %h2};
DONE:
    ret;
}
"#,
    );
    let m = load(&text);
    let n = 64usize;
    let run = |initcheck: bool| {
        let mut mem = Memory::new();
        mem.set_initcheck(initcheck);
        let inp: Vec<u32> = (0..n as u32 * 4)
            .map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i << 7))
            .collect();
        let pin = buf_u32(&mut mem, &inp);
        let pout = buf_u32(&mut mem, &vec![7; n * 4 + 384]);
        let options = LaunchOptions {
            initcheck,
            ..LaunchOptions::default()
        };
        let stats = emu::launch(
            &m,
            "k",
            [1, 1, 1],
            [n as u32, 1, 1],
            0,
            &[ParamValue::ptr(pout), ParamValue::ptr(pin)],
            &mut mem,
            &options,
        )
        .unwrap();
        (read_u32(&mut mem, pout, n * 4 + 384), stats)
    };
    let (fast, fast_stats) = run(false);
    let (per_lane, per_lane_stats) = run(true);
    assert_eq!(fast, per_lane);
    assert_eq!(fast_stats, per_lane_stats);
    // Lane 21's vector is the one at lane 20's address (the higher lane's stays).
    assert_ne!(fast[20 * 4..21 * 4], [7; 4]);
    assert_eq!(fast[21 * 4..22 * 4], [7; 4]);
}

/// A global spin lock (`atom.cas` to take it, a strong store to release it) around a plain
/// read-increment-write, lane 0 of each warp (two warps per CTA), CTAs on four workers: no increment and no release
/// is lost (a CAS that fails writes nothing, and strong stores hold the address's stripe; see
/// `ptx::emu::stripes`).
#[test]
fn a_spin_lock_built_from_atomics_and_strong_stores() {
    for release in [
        "st.release.gpu.global.u32 [%rd1], 0;",
        "st.volatile.global.u32 [%rd1], 0;",
    ] {
        let text = module(&format!(
            r#"
.visible .entry k(.param .u64 lock, .param .u64 counter)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    mov.u32 %r0, %laneid;
    setp.ne.u32 %p0, %r0, 0;
    @%p0 bra DONE;
    ld.param.u64 %rd1, [lock];
    ld.param.u64 %rd2, [counter];
SPIN:
    atom.global.cas.b32 %r1, [%rd1], 0, 1;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SPIN;
    ld.volatile.global.u32 %r2, [%rd2];
    add.u32 %r3, %r2, 1;
    st.volatile.global.u32 [%rd2], %r3;
    {release}
DONE:
    ret;
}}
"#
        ));
        let m = load(&text);
        let mut mem = Memory::new();
        let lock = buf_u32(&mut mem, &[0]);
        let counter = buf_u32(&mut mem, &[0]);
        let options = LaunchOptions {
            threads: 4,
            ..LaunchOptions::default()
        };
        emu::launch(
            &m,
            "k",
            [256, 1, 1],
            [64, 1, 1],
            0,
            &[ParamValue::ptr(lock), ParamValue::ptr(counter)],
            &mut mem,
            &options,
        )
        .unwrap();
        assert_eq!(read_u32(&mut mem, counter, 1), [512], "{release}");
        assert_eq!(read_u32(&mut mem, lock, 1), [0], "{release}");
    }
}

/// One warp's `atom.global.add.f32` at `base + 4 * slot[lane]`, old values to `old[lane]`: the
/// whole-warp path sums lanes whose addresses it shows distinct in one gather and scatter, and
/// takes lane order otherwise. Every pattern must give what lane-ordered read-modify-writes give
/// (a lane sees the sums of the lower lanes on its address), with subnormal and NaN values
/// flushed and canonicalized as `atom.add.f32` does.
#[test]
fn warp_float_atomics_equal_lane_ordered_read_modify_writes() {
    let text = module(
        r#"
.visible .entry scat(.param .u64 table, .param .u64 slots, .param .u64 vals, .param .u64 old)
{
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [table];
    ld.param.u64 %rd2, [slots];
    ld.param.u64 %rd3, [vals];
    ld.param.u64 %rd4, [old];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd2, %rd5;
    ld.global.u32 %r2, [%rd6];
    add.s64 %rd7, %rd3, %rd5;
    ld.global.f32 %f1, [%rd7];
    mul.wide.u32 %rd8, %r2, 4;
    add.s64 %rd9, %rd1, %rd8;
    atom.global.add.f32 %f2, [%rd9], %f1;
    add.s64 %rd10, %rd4, %rd5;
    st.global.f32 [%rd10], %f2;
    ret;
}
"#,
    );
    let m = load(&text);
    let ftz = |v: u32| {
        if v & 0x7f80_0000 == 0 {
            v & 0x8000_0000
        } else {
            v
        }
    };
    let add = |a: u32, b: u32| {
        let s = f32::from_bits(ftz(a)) + f32::from_bits(ftz(b));
        if s.is_nan() {
            0x7fff_ffff
        } else {
            ftz(s.to_bits())
        }
    };
    let patterns: Vec<(&str, Vec<u32>)> = vec![
        ("ascending", (0..32).collect()),
        (
            "two descending rows",
            (0..32)
                .map(|l| if l < 16 { 40 + l } else { l - 16 })
                .collect(),
        ),
        ("runs that overlap", (0..32).map(|l| l % 16).collect()),
        ("one address", vec![5; 32]),
        ("descending", (0..32).rev().collect()),
        ("five runs", (0..32).map(|l| (l % 5) * 8 + l / 5).collect()),
    ];
    let vals: Vec<u32> = (0..32u32)
        .map(|l| match l % 8 {
            0 => 0x0000_0001,           // subnormal: flushed
            1 => 0x7f80_0000,           // +inf
            2 if l > 16 => 0xff80_0000, // -inf: inf - inf is NaN
            3 => 0x8000_0000,           // -0
            _ => (1.25f32 + l as f32).to_bits(),
        })
        .collect();
    for (name, slots) in patterns {
        let mut mem = Memory::new();
        let table0: Vec<u32> = (0..64u32).map(|i| (i as f32 * 0.5).to_bits()).collect();
        let table = buf_u32(&mut mem, &table0);
        let ps = buf_u32(&mut mem, &slots);
        let pv = buf_u32(&mut mem, &vals);
        let po = buf_u32(&mut mem, &[0; 32]);
        let params = [table, ps, pv, po].map(ParamValue::ptr);
        emu::launch(
            &m,
            "scat",
            [1, 1, 1],
            [32, 1, 1],
            0,
            &params,
            &mut mem,
            &LaunchOptions::default(),
        )
        .unwrap();
        let (mut want, mut want_old) = (table0.clone(), vec![0u32; 32]);
        for l in 0..32 {
            let s = slots[l] as usize;
            want_old[l] = want[s];
            want[s] = add(want[s], vals[l]);
        }
        assert_eq!(read_u32(&mut mem, table, 64), want, "{name}: table");
        assert_eq!(read_u32(&mut mem, po, 32), want_old, "{name}: old values");
    }
}
