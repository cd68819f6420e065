//! Numeric semantics: integer ops, cvt rounding/saturation, setp (unordered comparisons),
//! directed rounding, f16/bf16 arithmetic.
#![allow(
    clippy::type_complexity,
    clippy::manual_checked_ops,
    clippy::neg_cmp_op_on_partial_ord
)]
mod emu_common;
use emu_common::*;
use half::{bf16, f16};

/// A kernel `k(out, in)`: `%r2` = in[tid] (32 raw bits), `%f2` the same bits as f32; the body
/// sets `%r1`, stored to out[tid].
fn map(body: &str, input: &[u32]) -> Vec<u32> {
    let text = module(&format!(
        r#"
.visible .entry k(.param .u64 out, .param .u64 inp)
{{
    .reg .pred %p<16>;
    .reg .b32 %r<128>;
    .reg .b64 %rd<32>;
    .reg .f32 %f<32>;
    .reg .f64 %fd<16>;
    .reg .b16 %h<16>;
    {}
    ld.param.u64 %rd20, [inp];
    add.s64 %rd21, %rd20, %rd11;
    ld.global.u32 %r2, [%rd21];
    mov.b32 %f2, %r2;
{body}
    st.global.u32 [%rd0], %r1;
    ret;
}}
"#,
        prologue()
    ));
    let n = input.len() as u32;
    let block = 64u32;
    let grid = n.div_ceil(block);
    let mut inp = input.to_vec();
    inp.resize((grid * block) as usize, 0);
    let out = run_bufs(
        &text,
        "k",
        [grid, 1, 1],
        [block, 1, 1],
        &[vec![0; inp.len()], inp],
        2,
    )
    .unwrap_or_else(|e| panic!("{e}\n{text}"));
    out[0][..n as usize].to_vec()
}

fn fbits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn integer_ops() {
    let xs: Vec<u32> = vec![
        0,
        1,
        2,
        3,
        7,
        0x8000_0000,
        0xffff_ffff,
        0x1234_5678,
        0xdead_beef,
        100,
        0x7fff_ffff,
        // Shift counts at and next to the 32- and 64-bit widths.
        31,
        32,
        63,
        64,
    ];
    let cases: Vec<(&str, Box<dyn Fn(u32) -> u32>)> = vec![
        (
            "mul.hi.s32 %r1, %r2, -7;",
            Box::new(|x| ((x as i32 as i64 * -7) >> 32) as u32),
        ),
        (
            "mul.hi.u32 %r1, %r2, 3000000000;",
            Box::new(|x| ((x as u64 * 3_000_000_000) >> 32) as u32),
        ),
        (
            "mul.wide.s32 %rd1, %r2, -3; shr.u64 %rd2, %rd1, 16; cvt.u32.u64 %r1, %rd2;",
            Box::new(|x| ((x as i32 as i64 * -3) as u64 >> 16) as u32),
        ),
        (
            "mad.lo.s32 %r1, %r2, 5, 9;",
            Box::new(|x| x.wrapping_mul(5).wrapping_add(9)),
        ),
        (
            "mad.hi.u32 %r1, %r2, %r2, 1;",
            Box::new(|x| (((x as u64 * x as u64) >> 32) as u32).wrapping_add(1)),
        ),
        (
            "div.u32 %r1, 1000, %r2;",
            Box::new(|x| if x == 0 { u32::MAX } else { 1000 / x }),
        ),
        (
            "rem.u32 %r1, 1000, %r2;",
            Box::new(|x| if x == 0 { 1000 } else { 1000 % x }),
        ),
        (
            "div.s32 %r1, %r2, -3;",
            Box::new(|x| (x as i32).wrapping_div(-3) as u32),
        ),
        (
            "div.s32 %r1, -2147483648, %r2;",
            Box::new(|x| match x as i32 {
                0 => u32::MAX,
                d => (i32::MIN).wrapping_div(d) as u32,
            }),
        ),
        (
            "rem.s32 %r1, %r2, 7;",
            Box::new(|x| ((x as i32) % 7) as u32),
        ),
        ("popc.b32 %r1, %r2;", Box::new(|x| x.count_ones())),
        ("clz.b32 %r1, %r2;", Box::new(|x| x.leading_zeros())),
        ("brev.b32 %r1, %r2;", Box::new(|x| x.reverse_bits())),
        (
            "bfind.u32 %r1, %r2;",
            Box::new(|x| {
                if x == 0 {
                    u32::MAX
                } else {
                    31 - x.leading_zeros()
                }
            }),
        ),
        (
            "bfind.s32 %r1, %r2;",
            Box::new(|x| {
                let v = if (x as i32) < 0 { !x } else { x };
                if v == 0 {
                    u32::MAX
                } else {
                    31 - v.leading_zeros()
                }
            }),
        ),
        ("bfe.u32 %r1, %r2, 4, 8;", Box::new(|x| (x >> 4) & 0xff)),
        (
            "bfe.s32 %r1, %r2, 24, 8;",
            Box::new(|x| ((x as i32) >> 24) as u32),
        ),
        (
            "bfe.s32 %r1, %r2, 28, 8;",
            Box::new(|x| ((x as i32) >> 28) as u32),
        ),
        (
            "bfi.b32 %r1, %r2, 0xf0f0f0f0, 8, 12;",
            Box::new(|x| (0xf0f0_f0f0 & !(0xfff << 8)) | ((x & 0xfff) << 8)),
        ),
        (
            "prmt.b32 %r1, %r2, 0x01020304, 0x7531;",
            Box::new(|x| {
                let bytes = ((0x0102_0304u64) << 32) | x as u64;
                let b = |i: u64| ((bytes >> (i * 8)) & 0xff) as u32;
                b(1) | b(3) << 8 | b(5) << 16 | b(7) << 24
            }),
        ),
        (
            "prmt.b32 %r1, %r2, 0, 0x8880;",
            Box::new(|x| {
                let s = if x & 0x80 != 0 { 0xff } else { 0 };
                (x & 0xff) | s << 8 | s << 16 | s << 24
            }),
        ),
        (
            "prmt.b32.f4e %r1, %r2, 0xaabbccdd, 1;",
            Box::new(|x| {
                let bytes = ((0xaabb_ccddu64) << 32) | x as u64;
                (bytes >> 8) as u32
            }),
        ),
        (
            "prmt.b32.rc16 %r1, %r2, 0, 1;",
            Box::new(|x| (x >> 16) | (x & 0xffff_0000)),
        ),
        (
            "lop3.b32 %r1, %r2, 0xff00ff00, 0x0ff00ff0, 0x96;",
            Box::new(|x| x ^ 0xff00_ff00 ^ 0x0ff0_0ff0),
        ),
        (
            "lop3.b32 %r1, %r2, 0xff00ff00, 0x0ff00ff0, 0xe8;",
            Box::new(|x| {
                let (a, b, c) = (x, 0xff00_ff00u32, 0x0ff0_0ff0u32);
                (a & b) | (a & c) | (b & c)
            }),
        ),
        (
            "shf.l.wrap.b32 %r1, %r2, 0x12345678, 36;",
            Box::new(|x| (((0x1234_5678u64 << 32 | x as u64) << 4) >> 32) as u32),
        ),
        ("shf.r.clamp.b32 %r1, 0x9abcdef0, %r2, 40;", Box::new(|x| x)),
        (
            "shf.r.wrap.b32 %r1, %r2, 0x11111111, 8;",
            Box::new(|x| ((0x1111_1111u64 << 32 | x as u64) >> 8) as u32),
        ),
        ("shl.b32 %r1, %r2, 33;", Box::new(|_| 0)),
        (
            "shr.s32 %r1, %r2, 40;",
            Box::new(|x| ((x as i32) >> 31) as u32),
        ),
        ("shr.u32 %r1, %r2, 3;", Box::new(|x| x >> 3)),
        // Register shift counts (the input as the count: 0, in range, at and past the width,
        // with high bits set) on the row forms of `shr` at 32 and 64 bits.
        (
            "shr.u32 %r1, 0x80000001, %r2;",
            Box::new(|x| if x >= 32 { 0 } else { 0x8000_0001 >> x }),
        ),
        (
            "shr.s32 %r1, 0x80000001, %r2;",
            Box::new(|x| ((i32::MIN + 1) >> x.min(31)) as u32),
        ),
        (
            "mov.b64 %rd1, 0x8000000180000000; shr.u64 %rd2, %rd1, %r2; xor.b64 %rd3, %rd2, %rd1; cvt.u32.u64 %r1, %rd3; shr.u64 %rd2, %rd2, 32; cvt.u32.u64 %r3, %rd2; xor.b32 %r1, %r1, %r3;",
            Box::new(|x| {
                let v = 0x8000_0001_8000_0000u64;
                let r = if x >= 64 { 0 } else { v >> x };
                (r ^ v) as u32 ^ (r >> 32) as u32
            }),
        ),
        (
            "mov.b64 %rd1, 0x8000000180000000; shr.s64 %rd2, %rd1, %r2; xor.b64 %rd3, %rd2, %rd1; cvt.u32.u64 %r1, %rd3; shr.u64 %rd2, %rd2, 32; cvt.u32.u64 %r3, %rd2; xor.b32 %r1, %r1, %r3;",
            Box::new(|x| {
                let v = 0x8000_0001_8000_0000u64;
                let r = ((v as i64) >> x.min(63)) as u64;
                (r ^ v) as u32 ^ (r >> 32) as u32
            }),
        ),
        // The row forms of `sub`, `and`, `or` and `xor` at 32 and 64 bits.
        ("sub.u32 %r1, 5, %r2;", Box::new(|x| 5u32.wrapping_sub(x))),
        ("and.b32 %r1, %r2, 0xf0f0f0f0;", Box::new(|x| x & 0xf0f0_f0f0)),
        ("or.b32 %r1, %r2, 0x80000001;", Box::new(|x| x | 0x8000_0001)),
        ("xor.b32 %r1, %r2, 0xffff0000;", Box::new(|x| x ^ 0xffff_0000)),
        (
            "cvt.u64.u32 %rd1, %r2; sub.s64 %rd2, 3, %rd1; and.b64 %rd3, %rd2, 0xff00ff00ff00ff00; or.b64 %rd3, %rd3, 1; xor.b64 %rd3, %rd3, %rd1; cvt.u32.u64 %r1, %rd3; shr.u64 %rd3, %rd3, 32; cvt.u32.u64 %r3, %rd3; xor.b32 %r1, %r1, %r3;",
            Box::new(|x| {
                let v = ((3u64.wrapping_sub(x as u64) & 0xff00_ff00_ff00_ff00) | 1) ^ x as u64;
                v as u32 ^ (v >> 32) as u32
            }),
        ),
        (
            "min.s32 %r1, %r2, 5;",
            Box::new(|x| (x as i32).min(5) as u32),
        ),
        ("max.u32 %r1, %r2, 5;", Box::new(|x| x.max(5))),
        (
            "abs.s32 %r1, %r2;",
            Box::new(|x| (x as i32).wrapping_abs() as u32),
        ),
        ("neg.s32 %r1, %r2;", Box::new(|x| x.wrapping_neg())),
        ("not.b32 %r1, %r2;", Box::new(|x| !x)),
        ("cnot.b32 %r1, %r2;", Box::new(|x| (x == 0) as u32)),
        (
            "add.sat.s32 %r1, %r2, 2147483647;",
            Box::new(|x| (x as i32).saturating_add(i32::MAX) as u32),
        ),
        (
            "sub.sat.s32 %r1, %r2, 10;",
            Box::new(|x| (x as i32).saturating_sub(10) as u32),
        ),
    ];
    let mut cases = cases;
    let more: Vec<(&str, Box<dyn Fn(u32) -> u32>)> = vec![
        ("mul24.lo.u32 %r1, %r2, 0x1000003;", Box::new(|x| (x & 0xff_ffff).wrapping_mul(3))),
        (
            "mul24.hi.s32 %r1, %r2, 0x800001;",
            Box::new(|x| {
                let sx = ((x << 8) as i32 >> 8) as i64;
                ((sx * -8388607) >> 16) as u32
            }),
        ),
        (
            "mad24.lo.u32 %r1, %r2, 5, 7;",
            Box::new(|x| (x & 0xff_ffff).wrapping_mul(5).wrapping_add(7)),
        ),
        ("sad.u32 %r1, %r2, 100, 5;", Box::new(|x| x.abs_diff(100).wrapping_add(5))),
        ("sad.s32 %r1, %r2, -100, 5;", Box::new(|x| ((x as i32 as i64) + 100).unsigned_abs() as u32 + 5)),
        ("slct.u32.s32 %r1, 11, 22, %r2;", Box::new(|x| if (x as i32) >= 0 { 11 } else { 22 })),
        ("slct.u32.f32 %r1, 11, 22, %r2;", Box::new(|x| if f32::from_bits(x) >= 0.0 { 11 } else { 22 })),
        (
            "add.cc.u32 %r3, %r2, 0xffffffff; addc.u32 %r4, 7, 0; shl.b32 %r5, %r4, 16; xor.b32 %r1, %r5, %r3;",
            Box::new(|x| ((7 + (x != 0) as u32) << 16) ^ x.wrapping_add(u32::MAX)),
        ),
        (
            "sub.cc.u32 %r3, %r2, 5; subc.u32 %r4, 10, 0; shl.b32 %r5, %r4, 16; xor.b32 %r1, %r5, %r3;",
            Box::new(|x| ((10 - (x < 5) as u32) << 16) ^ x.wrapping_sub(5)),
        ),
        (
            "mad.lo.cc.u32 %r3, %r2, 3, 0xfffffff0; madc.hi.u32 %r4, %r2, 3, 0; xor.b32 %r1, %r4, %r3;",
            Box::new(|x| {
                let p = x as u64 * 3;
                let lo = (p & 0xffff_ffff) + 0xffff_fff0;
                ((p >> 32) as u32 + (lo >> 32) as u32) ^ (lo as u32)
            }),
        ),
    ];
    cases.extend(more);
    for (body, f) in &cases {
        let out = map(body, &xs);
        for (i, x) in xs.iter().enumerate() {
            assert_eq!(out[i], f(*x), "`{body}` on {x:#x}: got {:#x}", out[i]);
        }
    }
}

#[test]
fn cvt_float_to_int_rounding_and_saturation() {
    let xs = [
        1.5f32,
        2.5,
        -1.5,
        -2.5,
        0.49999997,
        f32::NAN,
        3e9,
        -3e9,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.7,
        1e-40,
    ];
    let sat_i32 = |v: f64| -> u32 {
        if v.is_nan() {
            0
        } else {
            v.clamp(i32::MIN as f64, i32::MAX as f64) as i32 as u32
        }
    };
    let modes: [(&str, fn(f64) -> f64); 4] = [
        ("rni", |v| v.round_ties_even()),
        ("rzi", |v| v.trunc()),
        ("rmi", |v| v.floor()),
        ("rpi", |v| v.ceil()),
    ];
    for (m, f) in modes {
        let out = map(&format!("cvt.{m}.s32.f32 %r1, %f2;"), &fbits(&xs));
        for (i, x) in xs.iter().enumerate() {
            assert_eq!(out[i], sat_i32(f(*x as f64)), "cvt.{m}.s32.f32 {x}");
        }
        let out = map(&format!("cvt.{m}.u32.f32 %r1, %f2;"), &fbits(&xs));
        for (i, x) in xs.iter().enumerate() {
            let v = f(*x as f64);
            let want = if v.is_nan() {
                0
            } else {
                v.clamp(0.0, u32::MAX as f64) as u32
            };
            assert_eq!(out[i], want, "cvt.{m}.u32.f32 {x}");
        }
        // Float → integral float.
        let out = map(
            &format!("cvt.{m}.f32.f32 %f3, %f2; mov.b32 %r1, %f3;"),
            &fbits(&xs),
        );
        for (i, x) in xs.iter().enumerate() {
            let want = f(*x as f64) as f32;
            assert!(
                out[i] == want.to_bits() || (want.is_nan() && f32::from_bits(out[i]).is_nan()),
                "cvt.{m}.f32.f32 {x}"
            );
        }
    }
    // Integer saturation.
    let ints = [0u32, 5, 300, 70000, 0xffff_ffff, 0x8000_0000];
    let out = map("cvt.sat.u16.s32 %h1, %r2; cvt.u32.u16 %r1, %h1;", &ints);
    for (i, x) in ints.iter().enumerate() {
        assert_eq!(
            out[i],
            (*x as i32).clamp(0, 65535) as u32,
            "cvt.sat.u16.s32 {x}"
        );
    }
    let out = map("cvt.s16.s32 %h1, %r2; cvt.s32.s16 %r1, %h1;", &ints);
    for (i, x) in ints.iter().enumerate() {
        assert_eq!(out[i], *x as u16 as i16 as i32 as u32, "cvt.s16.s32 {x}");
    }
    // cvt.sat.f32.f32 clamps to [0, 1], NaN → 0.
    let out = map("cvt.sat.f32.f32 %f3, %f2; mov.b32 %r1, %f3;", &fbits(&xs));
    for (i, x) in xs.iter().enumerate() {
        let want = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
        assert_eq!(out[i], want.to_bits(), "cvt.sat.f32.f32 {x}");
    }
}

#[test]
fn cvt_int_to_float_and_f64_to_f32_directed() {
    let ints = [16777217u32, 16777219, 0xffff_ffff, 0x8000_0001];
    let exp = |m: &str, x: u32| -> u32 {
        // Exact neighbours computed independently: x as f64 is exact for u32.
        let v = x as f64;
        let lo = {
            let r = v as f32;
            if r as f64 > v {
                f32::from_bits(r.to_bits() - 1)
            } else {
                r
            }
        };
        let hi = if lo as f64 == v {
            lo
        } else {
            f32::from_bits(lo.to_bits() + 1)
        };
        match m {
            "rn" => (v as f32).to_bits(),
            "rz" | "rm" => lo.to_bits(),
            _ => hi.to_bits(),
        }
    };
    for m in ["rn", "rz", "rm", "rp"] {
        let out = map(
            &format!("cvt.{m}.f32.u32 %f3, %r2; mov.b32 %r1, %f3;"),
            &ints,
        );
        for (i, x) in ints.iter().enumerate() {
            assert_eq!(out[i], exp(m, *x), "cvt.{m}.f32.u32 {x}");
        }
    }
    // f64 → f32: 1 + 2^-52 and -(1 + 2^-52).
    let body = |m: &str| {
        format!("cvt.f64.f32 %fd1, %f2; mul.f64 %fd2, %fd1, 0d3FF0000000000001; cvt.{m}.f32.f64 %f3, %fd2; mov.b32 %r1, %f3;")
    };
    let xs = fbits(&[1.0, -1.0]);
    assert_eq!(map(&body("rn"), &xs), vec![0x3f80_0000, 0xbf80_0000]);
    assert_eq!(map(&body("rz"), &xs), vec![0x3f80_0000, 0xbf80_0000]);
    assert_eq!(map(&body("rm"), &xs), vec![0x3f80_0000, 0xbf80_0001]);
    assert_eq!(map(&body("rp"), &xs), vec![0x3f80_0001, 0xbf80_0000]);
    // Overflow: rz saturates to MAX, rn gives inf.
    let big = fbits(&[f32::MAX]);
    let ov = |m: &str| {
        format!("cvt.f64.f32 %fd1, %f2; mul.f64 %fd2, %fd1, 0d3FF0000100000000; cvt.{m}.f32.f64 %f3, %fd2; mov.b32 %r1, %f3;")
    };
    assert_eq!(map(&ov("rz"), &big), vec![f32::MAX.to_bits()]);
    assert_eq!(map(&ov("rm"), &big), vec![f32::MAX.to_bits()]);
    assert_eq!(map(&ov("rp"), &big), vec![f32::INFINITY.to_bits()]);
}

#[test]
fn directed_rounding_arithmetic() {
    let one = fbits(&[1.0, -1.0]);
    assert_eq!(
        map("add.rp.f32 %f3, %f2, 0f0DA24260; mov.b32 %r1, %f3;", &one),
        vec![0x3f80_0001, 0xbf7f_ffff]
    );
    assert_eq!(
        map("add.rm.f32 %f3, %f2, 0f0DA24260; mov.b32 %r1, %f3;", &one),
        vec![0x3f80_0000, 0xbf80_0000]
    );
    assert_eq!(
        map("sub.rm.f32 %f3, %f2, 0f0DA24260; mov.b32 %r1, %f3;", &one),
        vec![0x3f7f_ffff, 0xbf80_0001]
    );
    assert_eq!(
        map("sub.rz.f32 %f3, %f2, 0f0DA24260; mov.b32 %r1, %f3;", &one),
        vec![0x3f7f_ffff, 0xbf80_0000]
    );
    let x = fbits(&[f32::from_bits(0x3f80_0001)]);
    assert_eq!(
        map("mul.rn.f32 %f3, %f2, %f2; mov.b32 %r1, %f3;", &x),
        vec![0x3f80_0002]
    );
    assert_eq!(
        map("mul.rp.f32 %f3, %f2, %f2; mov.b32 %r1, %f3;", &x),
        vec![0x3f80_0003]
    );
    assert_eq!(
        map("mul.rz.f32 %f3, %f2, %f2; mov.b32 %r1, %f3;", &x),
        vec![0x3f80_0002]
    );
    let three = fbits(&[3.0]);
    assert_eq!(
        map("div.rn.f32 %f3, 0f3F800000, %f2; mov.b32 %r1, %f3;", &three),
        vec![0x3eaa_aaab]
    );
    assert_eq!(
        map("div.rz.f32 %f3, 0f3F800000, %f2; mov.b32 %r1, %f3;", &three),
        vec![0x3eaa_aaaa]
    );
    assert_eq!(
        map("div.rp.f32 %f3, 0f3F800000, %f2; mov.b32 %r1, %f3;", &three),
        vec![0x3eaa_aaab]
    );
    assert_eq!(
        map("rcp.rm.f32 %f3, %f2; mov.b32 %r1, %f3;", &three),
        vec![0x3eaa_aaaa]
    );
    let two = fbits(&[2.0]);
    assert_eq!(
        map("sqrt.rn.f32 %f3, %f2; mov.b32 %r1, %f3;", &two),
        vec![0x3fb5_04f3]
    );
    assert_eq!(
        map("sqrt.rp.f32 %f3, %f2; mov.b32 %r1, %f3;", &two),
        vec![0x3fb5_04f4]
    );
    assert_eq!(
        map("sqrt.rm.f32 %f3, %f2; mov.b32 %r1, %f3;", &two),
        vec![0x3fb5_04f3]
    );
    // fma: 1 * 1 + 2^-30 rounds up only with .rp.
    assert_eq!(
        map(
            "fma.rp.f32 %f3, %f2, %f2, 0f30800000; mov.b32 %r1, %f3;",
            &one
        ),
        vec![0x3f80_0001, 0x3f80_0001]
    );
    assert_eq!(
        map(
            "fma.rz.f32 %f3, %f2, %f2, 0f30800000; mov.b32 %r1, %f3;",
            &one
        ),
        vec![0x3f80_0000, 0x3f80_0000]
    );
    // ftz: subnormal inputs flush to zero.
    let sub = fbits(&[1e-40]);
    assert_eq!(
        map("add.ftz.f32 %f3, %f2, 0f00000000; mov.b32 %r1, %f3;", &sub),
        vec![0]
    );
    assert_eq!(
        map("add.f32 %f3, %f2, 0f00000000; mov.b32 %r1, %f3;", &sub),
        sub
    );
    // .sat clamps.
    assert_eq!(
        map("mul.sat.f32 %f3, %f2, 0f40000000; mov.b32 %r1, %f3;", &one),
        vec![0x3f80_0000, 0]
    );
}

#[test]
fn float_min_max_copysign_testp() {
    let nan = f32::NAN;
    let xs = fbits(&[nan, 1.0, -0.0, 0.0]);
    let out = map("min.f32 %f3, %f2, 0f40000000; mov.b32 %r1, %f3;", &xs);
    assert_eq!(out, fbits(&[2.0, 1.0, -0.0, 0.0]));
    let out = map("min.NaN.f32 %f3, %f2, 0f40000000; mov.b32 %r1, %f3;", &xs);
    assert_eq!(out[0], 0x7fff_ffff);
    let out = map("max.f32 %f3, %f2, 0f80000000; mov.b32 %r1, %f3;", &xs);
    assert_eq!(out, fbits(&[-0.0, 1.0, -0.0, 0.0]));
    let out = map("min.f32 %f3, %f2, 0f00000000; mov.b32 %r1, %f3;", &xs);
    assert_eq!(out[2], (-0.0f32).to_bits());
    let out = map(
        "copysign.f32 %f3, %f2, 0f40400000; mov.b32 %r1, %f3;",
        &fbits(&[-1.0, 1.0]),
    );
    assert_eq!(out, fbits(&[-3.0, 3.0]));
    let ys = fbits(&[nan, f32::INFINITY, 1e-40, 1.0, 0.0]);
    let classes = [
        "finite",
        "infinite",
        "number",
        "notanumber",
        "normal",
        "subnormal",
    ];
    let want: [[u32; 5]; 6] = [
        [0, 0, 1, 1, 1],
        [0, 1, 0, 0, 0],
        [0, 1, 1, 1, 1],
        [1, 0, 0, 0, 0],
        [0, 0, 0, 1, 0],
        [0, 0, 1, 0, 0],
    ];
    for (c, w) in classes.iter().zip(want) {
        let out = map(
            &format!("testp.{c}.f32 %p1, %f2; selp.u32 %r1, 1, 0, %p1;"),
            &ys,
        );
        assert_eq!(out, w.to_vec(), "testp.{c}");
    }
}

#[test]
fn setp_ordered_and_unordered() {
    let pairs: [(f32, f32); 5] = [
        (f32::NAN, 1.0),
        (1.0, 2.0),
        (2.0, 1.0),
        (1.0, 1.0),
        (1.0, f32::NAN),
    ];
    // Input word i holds a; b comes from a second lookup: encode b as index into a table.
    let a: Vec<u32> = pairs.iter().map(|p| p.0.to_bits()).collect();
    let b: Vec<u32> = pairs.iter().map(|p| p.1.to_bits()).collect();
    let cmps: [(&str, fn(f32, f32) -> bool); 14] = [
        ("eq", |a, b| a == b),
        ("ne", |a, b| !a.is_nan() && !b.is_nan() && a != b),
        ("lt", |a, b| a < b),
        ("le", |a, b| a <= b),
        ("gt", |a, b| a > b),
        ("ge", |a, b| a >= b),
        ("equ", |a, b| a.is_nan() || b.is_nan() || a == b),
        ("neu", |a, b| a != b),
        ("ltu", |a, b| !(a >= b)),
        ("leu", |a, b| !(a > b)),
        ("gtu", |a, b| !(a <= b)),
        ("geu", |a, b| !(a < b)),
        ("num", |a, b| !a.is_nan() && !b.is_nan()),
        ("nan", |a, b| a.is_nan() || b.is_nan()),
    ];
    for (c, f) in cmps {
        // b values are baked in per lane with selp chains: simpler to run one kernel per pair.
        for (i, (x, y)) in pairs.iter().enumerate() {
            let body = format!(
                "mov.b32 %f4, 0f{:08X}; setp.{c}.f32 %p1|%p2, %f2, %f4; selp.u32 %r3, 1, 0, %p1; selp.u32 %r4, 2, 0, %p2; or.b32 %r1, %r3, %r4;",
                b[i]
            );
            let out = map(&body, &[a[i]]);
            let want = if f(*x, *y) { 1 } else { 2 };
            assert_eq!(out[0], want, "setp.{c}.f32 {x} {y}");
        }
    }
    // Integer: signed vs unsigned, and the .and combination.
    let xs = [0xffff_ffffu32, 1];
    assert_eq!(
        map("setp.lt.s32 %p1, %r2, 0; selp.u32 %r1, 1, 0, %p1;", &xs),
        vec![1, 0]
    );
    assert_eq!(
        map("setp.lo.u32 %p1, %r2, 5; selp.u32 %r1, 1, 0, %p1;", &xs),
        vec![0, 1]
    );
    assert_eq!(
        map("setp.lt.u32 %p1, %r2, 5; selp.u32 %r1, 1, 0, %p1;", &xs),
        vec![0, 1]
    );
    assert_eq!(
        map(
            "setp.ne.u32 %p3, %r2, 1; setp.gt.s32.and %p1, %r2, -5, %p3; selp.u32 %r1, 1, 0, %p1;",
            &xs
        ),
        vec![1, 0]
    );
    assert_eq!(
        map("set.lt.u32.s32 %r1, %r2, 0;", &xs),
        vec![0xffff_ffff, 0]
    );
}

#[test]
fn half_and_bfloat16_arithmetic() {
    let vals = [1.0f32, 0.333, -2.5, 65504.0, 1e-5, 3.25159, -0.0, 1000.0];
    let mut words = Vec::new();
    let mut pairs = Vec::new();
    for a in vals {
        for b in vals {
            let (ha, hb) = (f16::from_f32(a), f16::from_f32(b));
            words.push(ha.to_bits() as u32 | (hb.to_bits() as u32) << 16);
            pairs.push((a, b));
        }
    }
    let h = |x: f64| f16::from_f64(x);
    let out = map("mov.b32 {%h1, %h2}, %r2; add.rn.f16 %h3, %h1, %h2; mul.rn.f16 %h4, %h1, %h2; mov.b32 %r1, {%h3, %h4};", &words);
    for (i, w) in words.iter().enumerate() {
        let (a, b) = (
            f16::from_bits(*w as u16).to_f64(),
            f16::from_bits((*w >> 16) as u16).to_f64(),
        );
        let want = h(a + b).to_bits() as u32 | (h(a * b).to_bits() as u32) << 16;
        assert_eq!(out[i], want, "f16 {a} {b}");
    }
    // Packed f16x2 fma: d = a * b + a per half, with a = b = the word's halves swapped.
    let out = map("mov.b32 %r3, %r2; fma.rn.f16x2 %r1, %r2, %r3, %r2;", &words);
    for (i, w) in words.iter().enumerate() {
        let lo = f16::from_bits(*w as u16).to_f64();
        let hi = f16::from_bits((*w >> 16) as u16).to_f64();
        let f = |x: f64| {
            let r = h(x * x + x);
            if r.is_nan() {
                0x7fff
            } else {
                r.to_bits() as u32
            }
        };
        assert_eq!(out[i], f(lo) | f(hi) << 16, "f16x2 fma {lo} {hi}");
    }
    // bf16: convert from f32 and multiply.
    let fx = fbits(&vals);
    let out = map("cvt.rn.bf16.f32 %h1, %f2; mul.rn.bf16 %h2, %h1, %h1; cvt.f32.bf16 %f3, %h2; mov.b32 %r1, %f3;", &fx);
    for (i, x) in vals.iter().enumerate() {
        let b = bf16::from_f32(*x).to_f64();
        let want = bf16::from_f64(b * b).to_f32();
        assert_eq!(out[i], want.to_bits(), "bf16 {x}");
    }
    // cvt.rn.f16.f32 with rz/rm/rp.
    let ys = fbits(&[1.0 + 1.0 / 4096.0, -(1.0 + 1.0 / 4096.0), 70000.0]);
    assert_eq!(
        map("cvt.rz.f16.f32 %h1, %f2; cvt.u32.u16 %r1, %h1;", &ys),
        vec![0x3c00, 0xbc00, 0x7bff]
    );
    assert_eq!(
        map("cvt.rp.f16.f32 %h1, %f2; cvt.u32.u16 %r1, %h1;", &ys),
        vec![0x3c01, 0xbc00, 0x7c00]
    );
    assert_eq!(
        map("cvt.rm.f16.f32 %h1, %f2; cvt.u32.u16 %r1, %h1;", &ys),
        vec![0x3c00, 0xbc01, 0x7bff]
    );
    assert_eq!(
        map("cvt.rn.f16.f32 %h1, %f2; cvt.u32.u16 %r1, %h1;", &ys),
        vec![0x3c00, 0xbc00, 0x7c00]
    );
    let out = map("cvt.rn.f16x2.f32 %r1, %f2, 0f40000000;", &fbits(&[1.5]));
    assert_eq!(out, vec![(0x3e00 << 16) | 0x4000]);
}

#[test]
fn approximations_are_close() {
    let xs = [0.5f32, 1.0, 2.0, 3.7, 10.0, 0.01];
    let fns: [(&str, fn(f64) -> f64); 8] = [
        ("rcp.approx.f32", |x| 1.0 / x),
        ("sqrt.approx.f32", |x| x.sqrt()),
        ("rsqrt.approx.f32", |x| 1.0 / x.sqrt()),
        ("ex2.approx.f32", |x| x.exp2()),
        ("lg2.approx.f32", |x| x.log2()),
        ("sin.approx.f32", |x| x.sin()),
        ("cos.approx.f32", |x| x.cos()),
        ("tanh.approx.f32", |x| x.tanh()),
    ];
    for (op, f) in fns {
        let out = map(&format!("{op} %f3, %f2; mov.b32 %r1, %f3;"), &fbits(&xs));
        for (i, x) in xs.iter().enumerate() {
            let got = f32::from_bits(out[i]) as f64;
            let want = f(*x as f64);
            assert!(
                (got - want).abs() <= 1e-6 * want.abs().max(1.0),
                "{op} {x}: {got} vs {want}"
            );
        }
    }
    let out = map("div.approx.f32 %f3, %f2, 0f40400000; div.full.f32 %f4, %f2, 0f40400000; sub.f32 %f5, %f3, %f4; mov.b32 %r1, %f5;", &fbits(&xs));
    assert!(out.iter().all(|&v| f32::from_bits(v).abs() < 1e-6));
}

#[test]
fn f64_arithmetic() {
    let xs = fbits(&[1.5, -2.25, 1e30]);
    let out = map(
        "cvt.f64.f32 %fd1, %f2; mul.f64 %fd2, %fd1, %fd1; fma.rn.f64 %fd3, %fd2, 0d4000000000000000, %fd1; sqrt.rn.f64 %fd4, %fd2; add.f64 %fd5, %fd3, %fd4; cvt.rn.f32.f64 %f3, %fd5; mov.b32 %r1, %f3;",
        &xs,
    );
    for (i, x) in [1.5f64, -2.25, 1e30f32 as f64].iter().enumerate() {
        let want = ((x * x).mul_add(2.0, *x) + (x * x).sqrt()) as f32;
        assert_eq!(out[i], want.to_bits(), "f64 {x}");
    }
}
