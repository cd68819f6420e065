//! The fast engine's load-time forms against the reference engine and against the values the
//! kernels must compute: registers packed into shared rows (`decode/rows.rs`: divergent paths,
//! guarded definitions, loops, values live across them, shuffles after divergence, registers
//! read uninitialized) and load groups (`exec/fast.rs`: unrolled loads from one base, signed,
//! under divergence, and one that runs off its buffer). `run_bufs` compares every build of the
//! fast engine with the reference (buffers, counts, error messages) on each.
mod emu_common;
use emu_common::*;

#[test]
fn divergent_paths_keep_their_values_in_shared_rows() {
    // Each path computes through temporaries of its own; %r0 (defined before the branch) and
    // the merged %r20 are read after it. The odd path's temporaries are dead on the even path
    // and may share rows with the even path's: only the lanes that run an instruction write it.
    let body = r#"
    and.b32 %r2, %r0, 1;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra EVEN;
    add.u32 %r10, %r0, 100;
    mul.lo.u32 %r11, %r10, 3;
    add.u32 %r20, %r11, 7;
    bra JOIN;
EVEN:
    add.u32 %r12, %r0, 200;
    mul.lo.u32 %r13, %r12, 5;
    add.u32 %r14, %r13, 9;
    mov.u32 %r20, %r14;
JOIN:
    add.u32 %r1, %r20, %r0;
"#;
    let out = run_unary(body, 256, 128);
    for (t, v) in out.iter().enumerate() {
        let t = t as u32;
        let want = if t % 2 == 1 {
            (t + 100) * 3 + 7 + t
        } else {
            (t + 200) * 5 + 9 + t
        };
        assert_eq!(*v, want, "thread {t}");
    }
}

#[test]
fn a_guarded_definition_keeps_the_old_value_in_other_lanes() {
    // `@%p1 mov %r5, %r0` writes only the lanes below 7; the others keep 11 through a run of
    // temporaries that would take %r5's row if the guarded write killed it.
    let body = r#"
    mov.u32 %r5, 11;
    and.b32 %r2, %r0, 31;
    setp.lt.u32 %p1, %r2, 7;
    @%p1 mov.u32 %r5, %r0;
    add.u32 %r30, %r0, 1;
    add.u32 %r31, %r30, 2;
    add.u32 %r32, %r31, 3;
    add.u32 %r33, %r32, 4;
    sub.u32 %r34, %r33, %r0;
    add.u32 %r1, %r5, %r34;
"#;
    let out = run_unary(body, 256, 64);
    for (t, v) in out.iter().enumerate() {
        let t = t as u32;
        let r5 = if t % 32 < 7 { t } else { 11 };
        assert_eq!(*v, r5 + 10, "thread {t}");
    }
}

#[test]
fn loops_keep_carried_and_surviving_values() {
    // %r3 is carried around the loop, %r6 is set before it and read after it; the loop body's
    // temporaries are born and die every iteration. Trip counts differ per lane.
    let body = r#"
    mul.lo.u32 %r6, %r0, 7;
    and.b32 %r7, %r0, 7;
    mov.u32 %r3, 0;
    mov.u32 %r2, 0;
LOOP:
    setp.ge.u32 %p0, %r2, %r7;
    @%p0 bra DONE;
    add.u32 %r10, %r2, 3;
    mul.lo.u32 %r11, %r10, %r10;
    add.u32 %r3, %r3, %r11;
    add.u32 %r2, %r2, 1;
    bra LOOP;
DONE:
    add.u32 %r1, %r3, %r6;
"#;
    let out = run_unary(body, 256, 128);
    for (t, v) in out.iter().enumerate() {
        let t = t as u32;
        let sum: u32 = (0..t % 8).map(|i| (i + 3) * (i + 3)).sum();
        assert_eq!(*v, sum + 7 * t, "thread {t}");
    }
}

#[test]
fn shuffles_read_values_merged_after_divergence() {
    // Lanes compute %r20 on two paths, then every lane reads its neighbour's: a row shared by
    // the paths' temporaries must hold each lane's own %r20 at the shuffle.
    let body = r#"
    and.b32 %r2, %r0, 3;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra ZERO;
    mul.lo.u32 %r10, %r0, 5;
    add.u32 %r20, %r10, 1;
    bra JOIN;
ZERO:
    mul.lo.u32 %r11, %r0, 9;
    add.u32 %r20, %r11, 2;
JOIN:
    and.b32 %r21, %r0, 31;
    add.u32 %r22, %r21, 1;
    and.b32 %r23, %r22, 31;
    shfl.sync.idx.b32 %r1, %r20, %r23, 31, -1;
"#;
    let out = run_unary(body, 128, 64);
    let r20 = |t: u32| if t % 4 == 0 { t * 9 + 2 } else { t * 5 + 1 };
    for (t, v) in out.iter().enumerate() {
        let t = t as u32;
        let src = (t & !31) | ((t + 1) & 31);
        assert_eq!(*v, r20(src), "thread {t}");
    }
}

#[test]
fn a_register_read_before_any_write_reads_as_before() {
    // %r40 is never written: packing leaves it a row of its own, so both engines read the
    // same (zero) value whatever the other registers do.
    let body = r#"
    add.u32 %r10, %r0, 5;
    add.u32 %r11, %r10, 5;
    add.u32 %r1, %r40, %r11;
"#;
    let out = run_unary(body, 64, 64);
    for (t, v) in out.iter().enumerate() {
        assert_eq!(*v, t as u32 + 10, "thread {t}");
    }
}

/// `k(out, inp)`: thread `t` loads `inp[4t .. 4t + 4]` through one base with immediate
/// offsets (a load group) and stores their combination `body` leaves in %r1.
fn group_kernel(loads: &str, body: &str) -> String {
    module(&format!(
        r#".visible .entry k(.param .u64 out, .param .u64 inp)
{{
 .reg .pred %p<8>;
 .reg .b32 %r<128>;
 .reg .b64 %rd<16>;
 {}
 ld.param.u64 %rd2, [inp];
 mul.wide.u32 %rd3, %r0, 16;
 add.s64 %rd4, %rd2, %rd3;
{loads}
{body}
 st.global.u32 [%rd0], %r1;
 ret;
}}
"#,
        prologue()
    ))
}

fn inputs(n: usize) -> Vec<u32> {
    (0..4 * n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ 0x8080_8080)
        .collect()
}

/// Runs a [`group_kernel`] over `n` threads (blocks of 128) on `inp`; returns `out`.
fn run_group(text: &str, n: usize, inp: &[u32]) -> Vec<u32> {
    let grid = (n as u32).div_ceil(128);
    let out = run_bufs(
        text,
        "k",
        [grid, 1, 1],
        [128, 1, 1],
        &[vec![0; n], inp.to_vec()],
        2,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    out[0].clone()
}

#[test]
fn load_groups_read_what_loads_one_by_one_read() {
    let n = 256;
    let text = group_kernel(
        " ld.global.u32 %r10, [%rd4];\n ld.global.u32 %r11, [%rd4+4];\n ld.global.u32 %r12, [%rd4+8];\n ld.global.u32 %r13, [%rd4+12];\n ld.global.u32 %r14, [%rd4+4];",
        " xor.b32 %r20, %r10, %r11;\n add.u32 %r21, %r12, %r13;\n mul.lo.u32 %r22, %r21, 3;\n add.u32 %r23, %r20, %r22;\n add.u32 %r1, %r23, %r14;",
    );
    let inp = inputs(n);
    let out = run_group(&text, n, &inp);
    for t in 0..n {
        let v = &inp[4 * t..4 * t + 4];
        let want = (v[0] ^ v[1])
            .wrapping_add(v[2].wrapping_add(v[3]).wrapping_mul(3))
            .wrapping_add(v[1]);
        assert_eq!(out[t], want, "thread {t}");
    }
}

#[test]
fn load_groups_sign_extend_and_run_under_divergence() {
    // Signed byte loads in a group (offsets 0, 1, 3 from one base), only in odd lanes.
    let n = 256;
    let text = group_kernel(
        " mov.u32 %r1, 0;\n and.b32 %r2, %r0, 1;\n setp.eq.u32 %p1, %r2, 0;\n @%p1 bra SKIP;\n ld.global.s8 %r10, [%rd4];\n ld.global.s8 %r11, [%rd4+3];\n ld.global.s8 %r12, [%rd4+1];",
        " add.u32 %r20, %r10, %r11;\n add.u32 %r1, %r20, %r12;\nSKIP:",
    );
    let inp = inputs(n);
    let out = run_group(&text, n, &inp);
    for t in 0..n {
        let b = inp[4 * t].to_le_bytes();
        let s = |i: usize| b[i] as i8 as i32;
        let want = if t % 2 == 1 {
            (s(0) + s(3) + s(1)) as u32
        } else {
            0
        };
        assert_eq!(out[t], want, "thread {t}");
    }
}

#[test]
fn a_load_group_off_its_buffer_faults_as_its_member_does() {
    // The last thread's second load is past the end of `inp`: the group must fall back and
    // report that load's fault, as the reference does (run_bufs compares the messages).
    let n = 64;
    let text = group_kernel(
        " ld.global.u32 %r10, [%rd4+8];\n ld.global.u32 %r11, [%rd4+16];",
        " add.u32 %r1, %r10, %r11;",
    );
    let mut inp = inputs(n);
    inp.truncate(4 * n - 1);
    let err = run_bufs(&text, "k", [1, 1, 1], [64, 1, 1], &[vec![0; n], inp], 1)
        .expect_err("the last lane's load is out of bounds");
    let msg = err.to_string();
    assert!(msg.contains("ld.global.u32 %r11, [%rd4+16]"), "{msg}");
}
