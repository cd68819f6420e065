//! SIMT control flow: divergence and reconvergence, barriers, shuffles, votes, calls.
mod emu_common;
use emu_common::*;
use ptx::emu::EmuError;

#[test]
fn nested_if_else_loops_and_reconvergence() {
    let body = r#"
    and.b32 %r2, %r0, 1;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra EVEN;
    rem.u32 %r3, %r0, 3;
    setp.eq.u32 %p2, %r3, 0;
    @!%p2 bra ODD_ELSE;
    mov.u32 %r1, 100;
    bra ODD_END;
ODD_ELSE:
    mov.u32 %r1, 200;
ODD_END:
    bra JOIN;
EVEN:
    rem.u32 %r4, %r0, 7;
    mov.u32 %r1, 0;
    mov.u32 %r5, 0;
LOOP:
    setp.ge.u32 %p3, %r5, %r4;
    @%p3 bra LOOP_END;
    add.u32 %r1, %r1, %r5;
    add.u32 %r5, %r5, 1;
    bra LOOP;
LOOP_END:
    add.u32 %r1, %r1, 1000;
JOIN:
    activemask.b32 %r6;
    setp.ne.u32 %p4, %r6, -1;
    selp.u32 %r7, 1073741824, 0, %p4;
    or.b32 %r1, %r1, %r7;
"#;
    let out = run_unary(body, 256, 128);
    for (t, v) in out.iter().enumerate() {
        let want = if t % 2 == 1 {
            if t % 3 == 0 {
                100
            } else {
                200
            }
        } else {
            (0..(t as u32 % 7)).sum::<u32>() + 1000
        };
        assert_eq!(*v, want, "thread {t}");
    }
}

#[test]
fn loop_trip_counts_differ_per_lane() {
    // Lane l iterates (l % 5) + 1 times and adds popc(activemask) each iteration: the lanes still
    // looping must stay converged.
    let body = r#"
    and.b32 %r2, %r0, 31;
    rem.u32 %r3, %r2, 5;
    add.u32 %r3, %r3, 1;
    mov.u32 %r1, 0;
    mov.u32 %r4, 0;
L:
    activemask.b32 %r5;
    popc.b32 %r6, %r5;
    add.u32 %r1, %r1, %r6;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p1, %r4, %r3;
    @%p1 bra L;
"#;
    let out = run_unary(body, 64, 64);
    let trip = |l: u32| l % 5 + 1;
    for (t, v) in out.iter().enumerate() {
        let l = t as u32 % 32;
        let want: u32 = (0..trip(l))
            .map(|i| (0..32).filter(|&k| trip(k) > i).count() as u32)
            .sum();
        assert_eq!(*v, want, "thread {t}");
    }
}

#[test]
fn early_exit_then_work() {
    let text = module(
        r#"
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<128>;
    .reg .b64 %rd<32>;
    mov.u32 %r100, %ctaid.x;
    mov.u32 %r101, %ntid.x;
    mov.u32 %r102, %tid.x;
    mad.lo.s32 %r0, %r100, %r101, %r102;
    ld.param.u64 %rd10, [out];
    mul.wide.u32 %rd11, %r0, 4;
    add.s64 %rd0, %rd10, %rd11;
    and.b32 %r2, %r0, 3;
    setp.eq.u32 %p1, %r2, 3;
    @!%p1 bra WORK;
    st.global.u32 [%rd0], 7;
    exit;
WORK:
    mul.lo.u32 %r1, %r0, %r0;
    activemask.b32 %r3;
    st.global.u32 [%rd0], %r1;
    setp.eq.u32 %p2, %r0, 0;
    @%p2 st.global.u32 [%rd10+4], %r3;
    ret;
}
"#,
    );
    let out = run_bufs(&text, "k", [2, 1, 1], [64, 1, 1], &[vec![0; 128]], 1).unwrap();
    for t in 0..128u32 {
        let want = if t == 1 {
            0x7777_7777 // activemask without lanes 3, 7, 11, ...
        } else if t % 4 == 3 {
            7
        } else {
            t * t
        };
        assert_eq!(out[0][t as usize], want, "thread {t}");
    }
}

#[test]
fn barriers_inside_a_loop_prefix_sum() {
    let text = module(
        r#"
.visible .entry scan(.param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b32 s[128];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, s;
    shl.b32 %r2, %r0, 2;
    add.u32 %r3, %r1, %r2;
    st.shared.u32 [%r3], %r0;
    mov.u32 %r4, 1;
LOOP:
    bar.sync 0;
    mov.u32 %r5, 0;
    setp.lt.u32 %p1, %r0, %r4;
    @%p1 bra SKIP;
    shl.b32 %r6, %r4, 2;
    sub.u32 %r7, %r3, %r6;
    ld.shared.u32 %r5, [%r7];
SKIP:
    barrier.sync 0;
    ld.shared.u32 %r8, [%r3];
    add.u32 %r8, %r8, %r5;
    st.shared.u32 [%r3], %r8;
    shl.b32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, 128;
    @%p2 bra LOOP;
    bar.sync 0;
    ld.shared.u32 %r9, [%r3];
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r0, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r9;
    ret;
}
"#,
    );
    let out = run_bufs(&text, "scan", [1, 1, 1], [128, 1, 1], &[vec![0; 128]], 1).unwrap();
    for t in 0..128u32 {
        assert_eq!(out[0][t as usize], t * (t + 1) / 2, "thread {t}");
    }
}

fn shfl_kernel(mode: &str, b: u32, c: u32) -> Vec<u32> {
    let body = format!(
        r#"
    mul.lo.u32 %r2, %r0, 10;
    add.u32 %r2, %r2, 7;
    shfl.sync.{mode}.b32 %r3|%p1, %r2, {b}, {c}, -1;
    selp.u32 %r4, 65536, 0, %p1;
    or.b32 %r1, %r3, %r4;
"#
    );
    run_unary(&body, 64, 64)
}

#[test]
fn shuffles_all_modes() {
    let val = |t: u32| t * 10 + 7;
    let check = |mode: &str, b: u32, c: u32, src: &dyn Fn(u32) -> Option<u32>| {
        let out = shfl_kernel(mode, b, c);
        for t in 0..64u32 {
            let base = t & !31;
            let lane = t % 32;
            let (v, ok) = match src(lane) {
                Some(j) => (val(base + j), 1),
                None => (val(t), 0),
            };
            assert_eq!(
                out[t as usize],
                v | (ok << 16),
                "{mode} b={b} c={c:#x} thread {t}"
            );
        }
    };
    // Full-warp forms (CUDA __shfl_*_sync with width 32).
    check("down", 1, 31, &|l| (l < 31).then_some(l + 1));
    check("down", 16, 31, &|l| (l + 16 <= 31).then_some(l + 16));
    check("up", 1, 0, &|l| l.checked_sub(1));
    check("up", 5, 0, &|l| l.checked_sub(5));
    check("bfly", 1, 31, &|l| Some(l ^ 1));
    check("bfly", 16, 31, &|l| Some(l ^ 16));
    check("idx", 3, 31, &|_| Some(3));
    // Width 8 segments: c = ((32 - 8) << 8) | clamp.
    check("idx", 2, 0x181f, &|l| Some((l & !7) | 2));
    check("down", 3, 0x181f, &|l| ((l % 8) + 3 < 8).then_some(l + 3));
    check("up", 3, 0x1800, &|l| (l % 8 >= 3).then(|| l - 3));
    check("bfly", 4, 0x181f, &|l| Some(l ^ 4));
    // idx with a source index beyond the segment width wraps inside the segment.
    check("idx", 9, 0x181f, &|l| Some((l & !7) | 1));
}

#[test]
fn votes() {
    let body = r#"
    rem.u32 %r2, %r0, 3;
    setp.eq.u32 %p1, %r2, 0;
    vote.sync.ballot.b32 %r3, %p1, -1;
    vote.sync.any.pred %p2, %p1, -1;
    vote.sync.all.pred %p3, %p1, -1;
    setp.lt.u32 %p5, %r0, 1000;
    vote.sync.all.pred %p4, %p5, -1;
    vote.sync.uni.pred %p6, %p1, -1;
    vote.sync.uni.pred %p7, %p5, -1;
    selp.u32 %r4, 1, 0, %p2;
    selp.u32 %r5, 2, 0, %p3;
    selp.u32 %r6, 4, 0, %p4;
    selp.u32 %r7, 8, 0, %p6;
    selp.u32 %r8, 16, 0, %p7;
    or.b32 %r9, %r4, %r5;
    or.b32 %r9, %r9, %r6;
    or.b32 %r9, %r9, %r7;
    or.b32 %r9, %r9, %r8;
    setp.eq.u32 %p8, %r0, 5;
    selp.b32 %r1, %r3, %r9, %p8;
"#;
    let out = run_unary(body, 64, 64);
    let ballot: u32 = (0..32).filter(|l| l % 3 == 0).map(|l| 1u32 << l).sum();
    assert_eq!(out[5], ballot);
    for (t, v) in out.iter().enumerate() {
        if t != 5 {
            assert_eq!(*v, 1 | 4 | 16, "thread {t}");
        }
    }
}

#[test]
fn match_and_redux() {
    let body = r#"
    and.b32 %r2, %r0, 3;
    match.any.sync.b32 %r3, %r2, -1;
    redux.sync.add.u32 %r4, %r0, -1;
    redux.sync.max.s32 %r5, %r2, -1;
    setp.lt.u32 %p1, %r0, 32;
    selp.u32 %r1, %r3, %r4, %p1;
    add.u32 %r1, %r1, %r5;
"#;
    let out = run_unary(body, 64, 64);
    for t in 0..64u32 {
        let want = if t < 32 {
            (0..32u32)
                .filter(|k| k % 4 == t % 4)
                .map(|k| 1u32 << k)
                .sum::<u32>()
        } else {
            (32..64u32).sum::<u32>()
        };
        assert_eq!(out[t as usize], want.wrapping_add(3), "thread {t}");
    }
}

#[test]
fn calls_to_device_functions() {
    let text = module(
        r#"
.func (.param .b32 ret) square_plus(.param .b32 x, .param .b32 y)
{
    .reg .b32 %r<4>;
    ld.param.b32 %r1, [x];
    ld.param.b32 %r2, [y];
    mul.lo.s32 %r3, %r1, %r1;
    add.s32 %r3, %r3, %r2;
    st.param.b32 [ret], %r3;
    ret;
}
.func (.param .b32 ret2) twice(.param .b32 a)
{
    .reg .b32 %r<4>;
    .reg .pred %p1;
    ld.param.b32 %r1, [a];
    setp.gt.s32 %p1, %r1, 10;
    @%p1 bra BIG;
    {
        .param .b32 p0;
        .param .b32 p1;
        .param .b32 rv;
        st.param.b32 [p0], %r1;
        st.param.b32 [p1], 1;
        call.uni (rv), square_plus, (p0, p1);
        ld.param.b32 %r2, [rv];
    }
    st.param.b32 [ret2], %r2;
    ret;
BIG:
    st.param.b32 [ret2], -1;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    mov.u32 %r0, %tid.x;
    {
        .param .b32 a0;
        .param .b32 r0;
        st.param.b32 [a0], %r0;
        call.uni (r0), twice, (a0);
        ld.param.b32 %r1, [r0];
    }
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r0, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
"#,
    );
    let out = run_bufs(&text, "k", [1, 1, 1], [32, 1, 1], &[vec![0; 32]], 1).unwrap();
    for t in 0..32u32 {
        let want = if t > 10 { u32::MAX } else { t * t + 1 };
        assert_eq!(out[0][t as usize], want, "thread {t}");
    }
}

#[test]
fn barrier_deadlock_is_an_error() {
    // Threads 64.. exit before the barrier the others wait at.
    let body = r#"
    mov.u32 %r1, 0;
    setp.ge.u32 %p1, %r0, 64;
    @%p1 exit;
    bar.sync 0;
"#;
    let text = unary_kernel(body);
    let err = run_bufs(&text, "k", [1, 1, 1], [128, 1, 1], &[vec![0; 128]], 1).unwrap_err();
    match &err {
        EmuError::BarrierDeadlock { at, message } => {
            assert_eq!(at.kernel, "k");
            assert!(at.instruction.starts_with("bar.sync"), "{err}");
            assert!(message.contains("64 of 128"), "{err}");
            assert!(
                message.contains("64 threads of the CTA have exited"),
                "{err}"
            );
        }
        e => panic!("wrong error {e}"),
    }
    // A barrier only some warps reach, while the others wait at a different one.
    let body = r#"
    mov.u32 %r1, 0;
    setp.ge.u32 %p1, %r0, 32;
    @%p1 bra OTHER;
    bar.sync 1;
    bra DONE;
OTHER:
    bar.sync 2;
DONE:
"#;
    let text = unary_kernel(body);
    let err = run_bufs(&text, "k", [1, 1, 1], [64, 1, 1], &[vec![0; 64]], 1).unwrap_err();
    assert!(matches!(err, EmuError::BarrierDeadlock { .. }), "{err}");
}

#[test]
fn barrier_with_count_and_arrive() {
    // Warp 0 produces and arrives; warp 1 waits (bar.sync 1, 64) then reads.
    let text = module(
        r#"
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b32 s[32];
    mov.u32 %r0, %tid.x;
    and.b32 %r1, %r0, 31;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, s;
    add.u32 %r3, %r3, %r2;
    setp.ge.u32 %p1, %r0, 32;
    @%p1 bra CONSUMER;
    mul.lo.u32 %r4, %r0, 3;
    st.shared.u32 [%r3], %r4;
    bar.arrive 1, 64;
    bra END;
CONSUMER:
    bar.sync 1, 64;
    ld.shared.u32 %r5, [%r3];
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
END:
    ret;
}
"#,
    );
    let out = run_bufs(&text, "k", [1, 1, 1], [64, 1, 1], &[vec![0; 32]], 1).unwrap();
    for t in 0..32u32 {
        assert_eq!(out[0][t as usize], t * 3);
    }
}

#[test]
fn spin_wait_on_another_warp_makes_progress() {
    // Warp 0 spins on a shared flag that warp 1 sets after some work (no barrier).
    let text = module(
        r#"
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b32 flag;
    mov.u32 %r0, %tid.x;
    setp.lt.u32 %p1, %r0, 32;
    @%p1 bra WAIT;
    mov.u32 %r1, 0;
WORK:
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p2, %r1, 100000;
    @%p2 bra WORK;
    st.volatile.shared.u32 [flag], %r1;
    bra END;
WAIT:
    ld.volatile.shared.u32 %r2, [flag];
    setp.eq.u32 %p3, %r2, 0;
    @%p3 bra WAIT;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r0, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
END:
    ret;
}
"#,
    );
    let out = run_bufs(&text, "k", [1, 1, 1], [64, 1, 1], &[vec![0; 32]], 1).unwrap();
    assert!(out[0].iter().all(|&v| v == 100000), "{:?}", &out[0][..4]);
}
