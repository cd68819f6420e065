//! The warp-level matrix instructions XLA's Triton kernels use (`ldmatrix`, `stmatrix`, `mma.sync`,
//! `cp.async`, `cvt.rna.tf32.f32`), each against a scalar reference written here from the PTX
//! ISA's description: fragment layouts from "Matrix Fragments for mma.m16n8k16 / mma.m16n8k8"
//! and "ldmatrix", rounding from "cvt". Every kernel runs on both engines (`run_bufs`).
mod emu_common;

use emu_common::{module, run_bufs};
use ptx::emu::{self, EmuError};

// ---------------------------------------------------------------- ldmatrix

/// Shared slot (16 bytes) that holds row `r` of matrix `j`: a permutation, so that a lane
/// reading its own row address is what is tested, not a contiguous layout.
fn slot(j: usize, r: usize) -> usize {
    ((8 * j + r) * 5) % 32
}

/// Element (r, c) of matrix j: distinct in every matrix, row and column.
fn elem(j: usize, r: usize, c: usize) -> u16 {
    (0x1000 * (j + 1) + 0x10 * r + c) as u16
}

/// The kernel: 32 threads copy the 512-byte input to shared memory, lane L passes the address
/// of row L%8 of matrix L/8 (or, for lanes whose address the form ignores, an address outside
/// shared memory), then `ldmatrix` and every destination register to `out[4 * L + j]`.
fn ldmatrix_kernel(form: &str, n: usize) -> String {
    let dests: Vec<String> = (0..n).map(|j| format!("%r{}", 10 + j)).collect();
    let stores: String = (0..n)
        .map(|j| format!("    st.global.u32 [%rd5+{}], %r{};\n", 4 * j, 10 + j))
        .collect();
    module(&format!(
        ".visible .entry k(.param .u64 input, .param .u64 out) {{
    .reg .b32 %r<20>; .reg .b64 %rd<10>; .reg .pred %p<2>;
    .shared .align 16 .b8 sm[512];
    ld.param.u64 %rd1, [input]; ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.v4.u32 {{%r2, %r3, %r4, %r5}}, [%rd4];
    mov.u64 %rd6, sm;
    add.s64 %rd7, %rd6, %rd3;
    st.shared.v4.u32 [%rd7], {{%r2, %r3, %r4, %r5}};
    bar.sync 0;
    mul.lo.u32 %r6, %r1, 5;
    and.b32 %r6, %r6, 31;
    mul.wide.u32 %rd8, %r6, 16;
    add.s64 %rd8, %rd6, %rd8;
    setp.ge.u32 %p1, %r1, {used};
    @%p1 mov.u64 %rd8, 1048576;
    ldmatrix.sync.aligned.m8n8.{form}.shared.b16 {{{dests}}}, [%rd8];
    mul.wide.u32 %rd9, %r1, 16;
    add.s64 %rd5, %rd2, %rd9;
{stores}    ret;
}}",
        used = 8 * n,
        dests = dests.join(", "),
    ))
}

fn ldmatrix_input(n: usize) -> Vec<u32> {
    let mut bytes = vec![0u16; 256];
    for j in 0..n {
        for r in 0..8 {
            for c in 0..8 {
                bytes[slot(j, r) * 8 + c] = elem(j, r, c);
            }
        }
    }
    bytes
        .chunks(2)
        .map(|p| p[0] as u32 | (p[1] as u32) << 16)
        .collect()
}

/// The ISA: without `.trans` lane L receives, for matrix j, row L/4, columns 2(L%4) and
/// 2(L%4)+1 (lower column in the lower half); with `.trans` the same positions of the
/// transposed matrix: rows 2(L%4), 2(L%4)+1 of column L/4.
fn ldmatrix_reference(n: usize, trans: bool) -> Vec<u32> {
    let mut out = vec![0u32; 128];
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        for j in 0..n {
            let (lo, hi) = if trans {
                (elem(j, 2 * t, g), elem(j, 2 * t + 1, g))
            } else {
                (elem(j, g, 2 * t), elem(j, g, 2 * t + 1))
            };
            out[4 * lane + j] = lo as u32 | (hi as u32) << 16;
        }
    }
    out
}

#[test]
fn ldmatrix_gives_each_lane_its_isa_fragment_in_every_form() {
    for (n, count) in [(1, "x1"), (2, "x2"), (4, "x4")] {
        for trans in [false, true] {
            let form = if trans {
                format!("{count}.trans")
            } else {
                count.to_string()
            };
            let out = run_bufs(
                &ldmatrix_kernel(&form, n),
                "k",
                [1, 1, 1],
                [32, 1, 1],
                &[ldmatrix_input(n), vec![0; 128]],
                1,
            )
            .unwrap_or_else(|e| panic!("ldmatrix .{form}: {e}"));
            assert_eq!(out[1], ldmatrix_reference(n, trans), "ldmatrix .{form}");
        }
    }
}

#[test]
fn ldmatrix_with_a_lane_missing_traps() {
    // Lane 31 exits first: the .sync.aligned instruction runs with 31 lanes.
    let text = ldmatrix_kernel("x4", 4).replace(
        "    bar.sync 0;\n",
        "    bar.sync 0;\n    setp.eq.u32 %p1, %r1, 31;\n    @%p1 exit;\n",
    );
    let err = run_bufs(
        &text,
        "k",
        [1, 1, 1],
        [32, 1, 1],
        &[ldmatrix_input(4), vec![0; 128]],
        1,
    )
    .unwrap_err();
    let EmuError::Trap { message, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(
        message,
        "ldmatrix is .sync.aligned: all 32 lanes of the warp must execute it, 31 did (lane 31 did not)"
    );
}

#[test]
fn ldmatrix_forms_the_emulator_does_not_execute_are_refused() {
    let text = module(
        ".visible .entry k() { .reg .b32 %r<4>; .shared .align 16 .b8 sm[256];
         ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1}, [sm]; ret; }",
    );
    let err = emu::LoadedModule::load(&ptx::parse(&text).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot load function `k`: `ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8` is not supported (the `ptx::emu` docs list the supported matrix forms)"
    );
}

// ---------------------------------------------------------------- stmatrix

/// The kernel: shared memory zeroed, lane L loads its fragment of matrix j from `frag[4 * L +
/// j]`, passes the address of row L%8 of matrix L/8 (the `slot` permutation; lanes whose address
/// the form ignores pass one outside shared memory), `stmatrix`, then the 512 shared bytes are
/// copied to `out`.
fn stmatrix_kernel(form: &str, n: usize) -> String {
    let srcs: Vec<String> = (0..n).map(|j| format!("%r{}", 10 + j)).collect();
    let loads: String = (0..n)
        .map(|j| format!("    ld.global.u32 %r{}, [%rd4+{}];\n", 10 + j, 4 * j))
        .collect();
    module(&format!(
        ".visible .entry k(.param .u64 frag, .param .u64 out) {{
    .reg .b32 %r<20>; .reg .b64 %rd<12>; .reg .pred %p<2>;
    .shared .align 16 .b8 sm[512];
    ld.param.u64 %rd1, [frag]; ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd1, %rd3;
    mov.u64 %rd6, sm;
    add.s64 %rd7, %rd6, %rd3;
    mov.u32 %r9, 0;
    st.shared.v4.u32 [%rd7], {{%r9, %r9, %r9, %r9}};
    bar.sync 0;
{loads}    mul.lo.u32 %r6, %r1, 5;
    and.b32 %r6, %r6, 31;
    mul.wide.u32 %rd8, %r6, 16;
    add.s64 %rd8, %rd6, %rd8;
    setp.ge.u32 %p1, %r1, {used};
    @%p1 mov.u64 %rd8, 1048576;
    stmatrix.sync.aligned.m8n8.{form}.shared.b16 [%rd8], {{{srcs}}};
    bar.sync 0;
    ld.shared.v4.u32 {{%r2, %r3, %r4, %r5}}, [%rd7];
    add.s64 %rd5, %rd2, %rd3;
    st.global.v4.u32 [%rd5], {{%r2, %r3, %r4, %r5}};
    ret;
}}",
        used = 8 * n,
        srcs = srcs.join(", "),
    ))
}

/// `stmatrix` is `ldmatrix` in reverse (the ISA gives both the same fragment layout): the
/// fragments `ldmatrix` hands each lane, stored back, rebuild the matrices it read, in every
/// form.
#[test]
fn stmatrix_stores_each_lane_s_isa_fragment_in_every_form() {
    for (n, count) in [(1, "x1"), (2, "x2"), (4, "x4")] {
        for trans in [false, true] {
            let form = if trans {
                format!("{count}.trans")
            } else {
                count.to_string()
            };
            let out = run_bufs(
                &stmatrix_kernel(&form, n),
                "k",
                [1, 1, 1],
                [32, 1, 1],
                &[ldmatrix_reference(n, trans), vec![0; 128]],
                1,
            )
            .unwrap_or_else(|e| panic!("stmatrix .{form}: {e}"));
            assert_eq!(out[1], ldmatrix_input(n), "stmatrix .{form}");
        }
    }
}

#[test]
fn stmatrix_with_a_lane_missing_traps() {
    let text = stmatrix_kernel("x2", 2).replace(
        "    bar.sync 0;\n    ld.global",
        "    bar.sync 0;\n    setp.eq.u32 %p1, %r1, 31;\n    @%p1 exit;\n    ld.global",
    );
    let err = run_bufs(
        &text,
        "k",
        [1, 1, 1],
        [32, 1, 1],
        &[ldmatrix_reference(2, false), vec![0; 128]],
        1,
    )
    .unwrap_err();
    let EmuError::Trap { message, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(
        message,
        "stmatrix is .sync.aligned: all 32 lanes of the warp must execute it, 31 did (lane 31 did not)"
    );
}

#[test]
fn stmatrix_forms_the_emulator_does_not_execute_are_refused() {
    let text = module(
        ".visible .entry k() { .reg .b32 %r<4>; .shared .align 16 .b8 sm[256];
         stmatrix.sync.aligned.m16n16.x1.trans.shared.b8 [sm], {%r1}; ret; }",
    );
    let err = emu::LoadedModule::load(&ptx::parse(&text).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot load function `k`: `stmatrix.sync.aligned.m16n16.x1.trans.shared.b8` is not supported (the `ptx::emu` docs list the supported matrix forms)"
    );
}

// ---------------------------------------------------------------- mma

/// One supported form: its PTX suffix, K, how its A/B elements are encoded, and the ISA's
/// fragment layout (which element of A or B each register half of each lane holds).
#[derive(Clone, Copy)]
struct Form {
    ptx: &'static str,
    k: usize,
    ty: Elem,
    a_regs: usize,
    b_regs: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Elem {
    F16,
    Bf16,
    Tf32,
}

const FORMS: [Form; 5] = [
    Form {
        ptx: "m16n8k16.row.col.f32.bf16.bf16.f32",
        k: 16,
        ty: Elem::Bf16,
        a_regs: 4,
        b_regs: 2,
    },
    Form {
        ptx: "m16n8k16.row.col.f32.f16.f16.f32",
        k: 16,
        ty: Elem::F16,
        a_regs: 4,
        b_regs: 2,
    },
    Form {
        ptx: "m16n8k8.row.col.f32.tf32.tf32.f32",
        k: 8,
        ty: Elem::Tf32,
        a_regs: 4,
        b_regs: 2,
    },
    Form {
        ptx: "m16n8k8.row.col.f32.bf16.bf16.f32",
        k: 8,
        ty: Elem::Bf16,
        a_regs: 2,
        b_regs: 1,
    },
    Form {
        ptx: "m16n8k8.row.col.f32.f16.f16.f32",
        k: 8,
        ty: Elem::F16,
        a_regs: 2,
        b_regs: 1,
    },
];

/// The ISA's A layout: (row, col) of element i of lane `lane` (two per register for 16-bit
/// types, i = 2 * register + half; one per register for tf32, i = register).
fn a_pos(f: Form, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    match (f.ty, f.k) {
        (Elem::Tf32, _) => (
            if i == 0 || i == 2 { g } else { g + 8 },
            if i < 2 { t } else { t + 4 },
        ),
        (_, 16) => (
            if i < 2 || (4..6).contains(&i) {
                g
            } else {
                g + 8
            },
            t * 2 + (i & 1) + if i >= 4 { 8 } else { 0 },
        ),
        _ => (if i < 2 { g } else { g + 8 }, t * 2 + (i & 1)),
    }
}

/// The ISA's B layout: (row, col) of element i of lane `lane`.
fn b_pos(f: Form, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    match (f.ty, f.k) {
        (Elem::Tf32, _) => (if i == 0 { t } else { t + 4 }, g),
        (_, 16) => ((t * 2) + (i & 1) + if i >= 2 { 8 } else { 0 }, g),
        _ => (t * 2 + (i & 1), g),
    }
}

/// The ISA's C/D layout (f32): (row, col) of element i of lane `lane`.
fn c_pos(lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    (if i < 2 { g } else { g + 8 }, t * 2 + (i & 1))
}

/// Encodes a small integer (exact in every input type) as the element type.
fn encode(ty: Elem, v: f32) -> u32 {
    match ty {
        Elem::F16 => half::f16::from_f32(v).to_bits() as u32,
        Elem::Bf16 => half::bf16::from_f32(v).to_bits() as u32,
        // tf32 uses the top 19 bits only: garbage in the low 13 must not change the result.
        Elem::Tf32 => v.to_bits() | 0x0000_1a5b,
    }
}

fn mma_kernel(f: Form) -> String {
    let a: Vec<String> = (0..f.a_regs).map(|r| format!("%a{r}")).collect();
    let b: Vec<String> = (0..f.b_regs).map(|r| format!("%b{r}")).collect();
    let loads: String = (0..4)
        .map(|r| {
            let mut s = String::new();
            if r < f.a_regs {
                s += &format!("    ld.global.u32 %a{r}, [%rd6+{}];\n", 4 * r);
            }
            if r < f.b_regs {
                s += &format!("    ld.global.u32 %b{r}, [%rd7+{}];\n", 4 * r);
            }
            s + &format!("    ld.global.u32 %c{r}, [%rd8+{}];\n", 4 * r)
        })
        .collect();
    module(&format!(
        ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd) {{
    .reg .b32 %r<4>; .reg .b32 %a<4>; .reg .b32 %b<2>; .reg .b32 %c<4>; .reg .f32 %d<4>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pb]; ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd5, %r1, 16;
    mul.wide.u32 %rd9, %r1, {bstride};
    add.s64 %rd6, %rd1, %rd5; add.s64 %rd7, %rd2, %rd9; add.s64 %rd8, %rd3, %rd5;
{loads}    mma.sync.aligned.{ptx} {{%d0, %d1, %d2, %d3}}, {{{a}}}, {{{b}}}, {{%c0, %c1, %c2, %c3}};
    add.s64 %rd10, %rd4, %rd5;
    st.global.v4.f32 [%rd10], {{%d0, %d1, %d2, %d3}};
    ret;
}}",
        bstride = 4 * f.b_regs,
        ptx = f.ptx,
        a = a.join(", "),
        b = b.join(", "),
    ))
}

#[test]
fn mma_computes_a_times_b_plus_c_through_the_isa_fragment_layouts() {
    for f in FORMS {
        // Distinct small integers: every product and sum exact in f32, so the reference is
        // exact and any misplaced element changes the result.
        let a = |i: usize, k: usize| (i * f.k + k) as f32 - 60.0;
        let b = |k: usize, j: usize| (k * 8 + j) as f32 - 30.0;
        let c = |i: usize, j: usize| (i * 8 + j) as f32 * 0.5;
        let per = if f.ty == Elem::Tf32 { 1 } else { 2 };
        let (mut fa, mut fb, mut fc) = (vec![0u32; 128], vec![0u32; 32 * f.b_regs], vec![0; 128]);
        for lane in 0..32 {
            for r in 0..f.a_regs {
                for h in 0..per {
                    let (row, col) = a_pos(f, lane, r * per + h);
                    fa[lane * 4 + r] |= encode(f.ty, a(row, col)) << (16 * h);
                }
            }
            for r in 0..f.b_regs {
                for h in 0..per {
                    let (row, col) = b_pos(f, lane, r * per + h);
                    fb[lane * f.b_regs + r] |= encode(f.ty, b(row, col)) << (16 * h);
                }
            }
            for r in 0..4 {
                let (row, col) = c_pos(lane, r);
                fc[lane * 4 + r] = c(row, col).to_bits();
            }
        }
        let out = run_bufs(
            &mma_kernel(f),
            "k",
            [1, 1, 1],
            [32, 1, 1],
            &[fa, fb, fc, vec![0; 128]],
            1,
        )
        .unwrap_or_else(|e| panic!("mma.{}: {e}", f.ptx));
        for lane in 0..32 {
            for r in 0..4 {
                let (row, col) = c_pos(lane, r);
                let want: f32 = c(row, col) + (0..f.k).map(|k| a(row, k) * b(k, col)).sum::<f32>();
                assert_eq!(
                    f32::from_bits(out[3][lane * 4 + r]),
                    want,
                    "mma.{} D[{row}][{col}] (lane {lane}, register {r})",
                    f.ptx
                );
            }
        }
    }
}

#[test]
fn mma_rounds_the_exact_sum_once_to_f32() {
    // The ISA leaves the accumulation order and precision open; the emulator's documented
    // choice (exec/matrix.rs) is the exact sum rounded once. C[0][0] = 2^24 and two products
    // of 1: exactly 2^24 + 2, representable; an f32 running sum would round 2^24 + 1 back to
    // 2^24 twice.
    let f = FORMS[0];
    let (mut fa, mut fb) = (vec![0u32; 128], vec![0u32; 64]);
    let b = |k: usize, j: usize| if j == 0 && k < 2 { 1.0f32 } else { 0.0 };
    for lane in 0..32 {
        for r in 0..4 {
            for h in 0..2 {
                fa[lane * 4 + r] |= encode(f.ty, 1.0) << (16 * h);
            }
        }
        for r in 0..2 {
            for h in 0..2 {
                let (row, col) = b_pos(f, lane, r * 2 + h);
                fb[lane * 2 + r] |= encode(f.ty, b(row, col)) << (16 * h);
            }
        }
    }
    let mut fc = vec![0u32; 128];
    fc[0] = 16777216.0f32.to_bits(); // lane 0, register 0: C[0][0]
    let out = run_bufs(
        &mma_kernel(f),
        "k",
        [1, 1, 1],
        [32, 1, 1],
        &[fa, fb, fc, vec![0; 128]],
        1,
    )
    .unwrap();
    assert_eq!(f32::from_bits(out[3][0]), 16777218.0);
}

#[test]
fn mma_forms_the_emulator_does_not_execute_are_refused() {
    let text = module(
        ".visible .entry k() { .reg .b32 %r<16>;
         mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r0, %r1}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r8, %r9};
         ret; }",
    );
    let err = emu::LoadedModule::load(&ptx::parse(&text).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot load function `k`: `mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16` is not supported (the `ptx::emu` docs list the supported matrix forms)"
    );
}

#[test]
fn mma_with_the_wrong_fragment_size_is_refused() {
    let text = module(
        ".visible .entry k() { .reg .b32 %r<16>; .reg .f32 %f<4>;
         mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r2, %r3}, {%r6, %r7}, {%f0, %f1, %f2, %f3};
         ret; }",
    );
    let err = emu::LoadedModule::load(&ptx::parse(&text).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot load function `k`: mma operand 1 of this form must be a vector of 4 registers"
    );
}

#[test]
fn mma_in_a_partial_warp_traps() {
    let f = FORMS[2];
    let err = run_bufs(
        &mma_kernel(f),
        "k",
        [1, 1, 1],
        [16, 1, 1],
        &[vec![0; 128], vec![0; 64], vec![0; 128], vec![0; 128]],
        1,
    )
    .unwrap_err();
    let EmuError::Trap { message, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(
        message,
        "mma is .sync.aligned: all 32 lanes of the warp must execute it, 16 did (lane 16 did not)"
    );
}

// ---------------------------------------------------------------- cp.async

/// Each of 32 lanes copies `size` bytes from `src + 16 * lane` into shared `16 * lane`, with
/// src-size `n[lane]` (an operand register), waits, and copies its 16 shared bytes to `out`.
/// Shared memory starts filled with 0xEE so zero-filling is visible.
fn cp_async_kernel(form: &str, size: u32) -> String {
    module(&format!(
        ".visible .entry k(.param .u64 src, .param .u64 sizes, .param .u64 out) {{
    .reg .b32 %r<12>; .reg .b64 %rd<12>;
    .shared .align 16 .b8 sm[512];
    ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [sizes]; ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 16;
    mov.u64 %rd5, sm;
    add.s64 %rd6, %rd5, %rd4;
    mov.u32 %r2, -286331154;
    st.shared.v4.u32 [%rd6], {{%r2, %r2, %r2, %r2}};
    cvt.u32.u64 %r3, %rd6;
    add.s64 %rd7, %rd1, %rd4;
    mul.wide.u32 %rd8, %r1, 4;
    add.s64 %rd9, %rd2, %rd8;
    ld.global.u32 %r4, [%rd9];
    cp.async.{form}.shared.global [%r3], [%rd7], {size}, %r4;
    cp.async.commit_group;
    cp.async.wait_group 0;
    bar.sync 0;
    ld.shared.v4.u32 {{%r5, %r6, %r7, %r8}}, [%rd6];
    add.s64 %rd10, %rd3, %rd4;
    st.global.v4.u32 [%rd10], {{%r5, %r6, %r7, %r8}};
    ret;
}}"
    ))
}

/// The ISA: `src-size` bytes come from the source, the rest of `cp-size` is zero; bytes past
/// `cp-size` in the destination are untouched.
fn cp_async_reference(src: &[u8], sizes: &[u32], size: usize) -> Vec<u32> {
    let mut out = vec![0xEEu8; 512];
    for lane in 0..32 {
        for b in 0..size {
            out[16 * lane + b] = if b < sizes[lane] as usize {
                src[16 * lane + b]
            } else {
                0
            };
        }
    }
    out.chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn cp_async_copies_src_size_bytes_and_zero_fills_the_rest() {
    let src: Vec<u8> = (0..512u32).map(|i| (i * 7 + 3) as u8).collect();
    let src_words: Vec<u32> = src
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for (form, size) in [("cg", 16u32), ("ca", 16), ("ca", 8), ("ca", 4)] {
        let sizes: Vec<u32> = (0..32u32).map(|l| l % (size + 1)).collect();
        let out = run_bufs(
            &cp_async_kernel(form, size),
            "k",
            [1, 1, 1],
            [32, 1, 1],
            &[src_words.clone(), sizes.clone(), vec![0; 128]],
            1,
        )
        .unwrap_or_else(|e| panic!("cp.async.{form} {size}: {e}"));
        assert_eq!(
            out[2],
            cp_async_reference(&src, &sizes, size as usize),
            "cp.async.{form} {size}"
        );
    }
}

#[test]
fn cp_async_with_src_size_zero_does_not_read_its_source() {
    // Every lane's source address is far outside any allocation; src-size 0 reads nothing.
    let text = cp_async_kernel("cg", 16).replace(
        "add.s64 %rd7, %rd1, %rd4;",
        "add.s64 %rd7, %rd1, 1099511627776;",
    );
    let out = run_bufs(
        &text,
        "k",
        [1, 1, 1],
        [32, 1, 1],
        &[vec![0; 128], vec![0; 32], vec![0; 128]],
        1,
    )
    .unwrap();
    assert_eq!(out[2], vec![0u32; 128]);
}

#[test]
fn cp_async_with_src_size_above_cp_size_traps() {
    let err = run_bufs(
        &cp_async_kernel("ca", 8),
        "k",
        [1, 1, 1],
        [32, 1, 1],
        &[vec![0; 128], vec![9; 32], vec![0; 128]],
        1,
    )
    .unwrap_err();
    let EmuError::Trap { message, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(message, "cp.async src-size 9 is larger than its cp-size 8");
}

#[test]
fn cp_async_cg_with_a_cp_size_other_than_16_is_refused() {
    let text = cp_async_kernel("cg", 8);
    let err = emu::LoadedModule::load(&ptx::parse(&text).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot load function `k`: cp.async.cg with cp-size 8 (.cg: 16; .ca: 4, 8, 16)"
    );
}

#[test]
fn cp_async_with_an_ignore_src_predicate_is_refused() {
    let text = cp_async_kernel("cg", 16).replace(
        "    cp.async.cg.shared.global [%r3], [%rd7], 16, %r4;",
        "    .reg .pred %q;\n    setp.eq.u32 %q, %r4, 0;\n    cp.async.cg.shared.global [%r3], [%rd7], 16, %q;",
    );
    let err = emu::LoadedModule::load(&ptx::parse(&text).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot load function `k`: cp.async with an ignore-src predicate is not supported"
    );
}

// ---------------------------------------------------------------- cvt.rna.tf32.f32

#[test]
fn cvt_rna_tf32_rounds_to_ten_mantissa_bits_ties_away_from_zero() {
    // (input bits, tf32 bits), from the ISA's `.rna` (nearest, ties away from zero) on a
    // 10-bit mantissa: the low 13 bits of the f32 are dropped.
    let cases: [(u32, u32); 10] = [
        (0x3f80_0000, 0x3f80_0000), // 1.0
        (0x3f80_1000, 0x3f80_2000), // 1 + 2^-11: a tie, away from zero
        (0xbf80_1000, 0xbf80_2000), // -(1 + 2^-11): a tie, away from zero
        (0x3f80_0fff, 0x3f80_0000), // just below the tie
        (0x3f80_3000, 0x3f80_4000), // 1 + 3 * 2^-11: a tie, away from zero (not to even)
        (0x3fff_f000, 0x4000_0000), // rounds up into the next binade
        (0x7f7f_ffff, 0x7f80_0000), // the largest f32 rounds to infinity
        (0xff80_0000, 0xff80_0000), // -infinity stays
        (0x0000_1000, 0x0000_2000), // a subnormal tie, away from zero
        (0x7fc0_0001, 0x7fff_e000), // NaN: the canonical NaN, low bits clear
    ];
    let text = module(
        ".visible .entry k(.param .u64 io) {
    .reg .b32 %r<4>; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [io];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.f32 %r2, [%rd3];
    cvt.rna.tf32.f32 %r3, %r2;
    st.global.b32 [%rd3], %r3;
    ret;
}",
    );
    let input: Vec<u32> = cases.iter().map(|c| c.0).collect();
    let out = run_bufs(&text, "k", [1, 1, 1], [10, 1, 1], &[input], 1).unwrap();
    for (k, (x, want)) in cases.iter().enumerate() {
        assert_eq!(out[0][k], *want, "cvt.rna.tf32.f32 of {x:#010x}");
    }
}

#[test]
fn cvt_tf32_forms_other_than_rna_are_refused() {
    let text = module(".visible .entry k() { .reg .b32 %r<4>; cvt.rn.tf32.f32 %r1, %r2; ret; }");
    let err = emu::LoadedModule::load(&ptx::parse(&text).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot load function `k`: unsupported conversion .tf32.f32"
    );
}
