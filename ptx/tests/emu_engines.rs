//! The fast engine (every build the CPU has: `LaunchOptions::host_isa`) against the reference
//! engine (`LaunchOptions::reference_engine`): on every
//! nvcc corpus kernel (`testdata/corpus/ptx/`), and on a kernel that applies every form the fast
//! engine has a whole-row kernel for (the f64/f32 arithmetic, min/max, comparisons and
//! conversions, float → integer included, of the compiler's math library) to all pairs of a table of special values (NaNs
//! with payloads and signs, infinities, signed zeros, subnormals, ties, integer extremes), with
//! some lanes masked off. Every buffer byte, every count and every error message must be
//! identical, with one and with four worker threads. The other emulator tests compare the
//! engines too, through `emu_common::run_bufs`.
mod emu_common;
use libtest_mimic::{Arguments, Failed, Trial};
use ptx::emu::{self, HostIsa, LaunchOptions, LoadedModule, Memory, ParamValue};
use ptx::{LaunchSpec, SpecParam};
use std::path::{Path, PathBuf};

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/ptx");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".launch.json"))
                .map(String::from)
        })
        .collect();
    names.sort();
    let mut trials: Vec<Trial> = names
        .into_iter()
        .map(|name| {
            let dir = dir.clone();
            Trial::test(format!("{name}::fast_equals_reference"), move || {
                compare(&dir, &name)
            })
        })
        .collect();
    trials.push(Trial::test("fast_forms_on_special_values", special_values));
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}

/// Every buffer after the launch and the counts, or the error's message.
type Run = Result<(Vec<Vec<u8>>, emu::LaunchStats), String>;

/// A launch on the reference engine (`isa` None) or on the fast engine's build for `isa`.
fn launch(module: &LoadedModule, spec: &LaunchSpec, threads: usize, isa: Option<HostIsa>) -> Run {
    let mut mem = Memory::new();
    let mut params = Vec::new();
    let mut buffers = Vec::new();
    for p in &spec.params {
        match p {
            SpecParam::Buffer { bytes, .. } => {
                let ptr = mem.alloc(bytes.len() as u64).map_err(|e| e.to_string())?;
                mem.write(ptr, bytes).map_err(|e| e.to_string())?;
                buffers.push((ptr, bytes.len()));
                params.push(ParamValue::ptr(ptr));
            }
            SpecParam::Scalar { bytes, .. } => params.push(ParamValue(bytes.clone())),
        }
    }
    let options = LaunchOptions {
        threads,
        reference_engine: isa.is_none(),
        host_isa: isa.unwrap_or(HostIsa::Portable),
        ..LaunchOptions::default()
    };
    let stats = emu::launch(
        module,
        &spec.kernel,
        spec.grid,
        spec.block,
        spec.dynamic_shared_bytes,
        &params,
        &mut mem,
        &options,
    )
    .map_err(|e| e.to_string())?;
    let out = buffers
        .iter()
        .map(|&(p, n)| mem.read_vec(p, n).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    Ok((out, stats))
}

fn compare(dir: &Path, name: &str) -> Result<(), Failed> {
    let text = std::fs::read_to_string(dir.join(format!("{name}.ptx")))?;
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        dir.join(format!("{name}.launch.json")),
    )?)?;
    let spec = LaunchSpec::from_json(&json).map_err(|e| e.to_string())?;
    let module = LoadedModule::load(&ptx::parse(&text).map_err(|e| e.to_string())?)?;
    for threads in [1, 4] {
        let reference = launch(&module, &spec, threads, None);
        for isa in HostIsa::available() {
            let fast = launch(&module, &spec, threads, Some(isa));
            if fast != reference {
                let show = |r: &Run| match r {
                    Ok((b, s)) => format!(
                        "{s:?}, buffers of {:?} bytes",
                        b.iter().map(Vec::len).collect::<Vec<_>>()
                    ),
                    Err(e) => e.clone(),
                };
                return Err(format!(
                    "threads {threads}: the fast engine ({isa:?}) {} differs from the reference engine {}",
                    show(&fast),
                    show(&reference)
                )
                .into());
            }
        }
        if let Ok((_, stats)) = &reference {
            if stats.lane_instructions == 0 {
                return Err("no instructions executed".into());
            }
        }
    }
    Ok(())
}

/// Bit patterns of f64 values (the low 32 bits double as f32 operands, so some are chosen for
/// their low half: f32 NaN, infinities, subnormals).
const VALUES: [u64; 34] = [
    0x0000_0000_0000_0000, // +0
    0x8000_0000_0000_0000, // -0
    0x3ff0_0000_0000_0000, // 1
    0xbff0_0000_0000_0000, // -1
    0x3fe0_0000_0000_0000, // 0.5
    0x3ff8_0000_0000_0000, // 1.5
    0x4004_0000_0000_0000, // 2.5
    0xc004_0000_0000_0000, // -2.5
    0x7ff0_0000_0000_0000, // inf
    0xfff0_0000_0000_0000, // -inf
    0x7fff_ffff_ffff_ffff, // canonical NaN
    0x7ff8_0000_0000_0001, // quiet NaN with payload
    0xfff8_0000_0000_0000, // negative NaN
    0x7ff0_0000_0000_0001, // signalling NaN
    0x0000_0000_0000_0001, // smallest subnormal
    0x000f_ffff_ffff_ffff, // largest subnormal
    0x0010_0000_0000_0000, // smallest normal
    0x7fef_ffff_ffff_ffff, // largest finite
    0x7e37_e43c_8800_759c, // 1e300
    0x81b0_e7a3_f1a2_6d75, // about -1e-300 (f32 low half)
    0x3fd5_5555_5555_5555, // 1/3
    0x4340_0000_0000_0001, // 2^53 + 2
    0xc3e0_0000_0000_0000, // -2^63
    0x43f0_0000_0000_0000, // 2^64
    0x40fe_240c_9fbe_76c9, // 123456.789
    0x4330_0000_0000_0001, // 2^52 + 1
    0x0000_0000_7fc0_0000, // low half: f32 NaN
    0x0000_0000_ff80_0000, // low half: f32 -inf
    0x0000_0000_0000_0001, // low half: f32 subnormal
    0x0000_0000_8000_0000, // low half: f32 -0
    0x0000_0000_3f80_0000, // low half: f32 1
    0xffff_ffff_ffff_ffff, // all ones: NaN, u64::MAX, -1
    0x8000_0000_0000_0001, // negative subnormal, i64 min + 1
    0x4050_7ae1_47ae_147b, // 65.92
];

/// The operations of the special-values kernel: PTX computing `%rd9` (64-bit result) from
/// `%fd0, %fd1` (the pair as f64), `%f0, %f1` (their low halves as f32), `%rd5, %rd10` (the
/// pair as b64) and `%r4, %r6` (their low halves).
fn forms() -> Vec<String> {
    let mut v: Vec<String> = [
        "add.rn.f64 %fd2, %fd0, %fd1;",
        "sub.rn.f64 %fd2, %fd0, %fd1;",
        "mul.rn.f64 %fd2, %fd0, %fd1;",
        "div.rn.f64 %fd2, %fd0, %fd1;",
        "fma.rn.f64 %fd2, %fd0, %fd1, %fd0;",
        "fma.rn.f64 %fd2, %fd1, %fd1, %fd0;",
        "min.f64 %fd2, %fd0, %fd1;",
        "max.f64 %fd2, %fd0, %fd1;",
        "min.NaN.f64 %fd2, %fd0, %fd1;",
        "max.NaN.f64 %fd2, %fd0, %fd1;",
        "neg.f64 %fd2, %fd0;",
        "abs.f64 %fd2, %fd0;",
        "rcp.rn.f64 %fd2, %fd0;",
        "cvt.rni.f64.f64 %fd2, %fd0;",
        "cvt.rzi.f64.f64 %fd2, %fd0;",
        "cvt.rmi.f64.f64 %fd2, %fd0;",
        "cvt.rpi.f64.f64 %fd2, %fd0;",
        "cvt.f64.f32 %fd2, %f0;",
        "cvt.rn.f64.s64 %fd2, %rd5;",
        "cvt.rn.f64.u64 %fd2, %rd5;",
        "cvt.rn.f64.s32 %fd2, %r4;",
        "cvt.rn.f64.u32 %fd2, %r4;",
    ]
    .iter()
    .map(|s| format!("{s}\n mov.b64 %rd9, %fd2;"))
    .collect();
    for f32form in [
        "cvt.rn.f32.f64 %f2, %fd0;",
        "fma.rn.f32 %f2, %f0, %f1, %f0;",
        "min.f32 %f2, %f0, %f1;",
        "max.f32 %f2, %f0, %f1;",
        "min.NaN.f32 %f2, %f0, %f1;",
        "max.NaN.f32 %f2, %f0, %f1;",
        "add.rn.f32 %f2, %f0, %f1;",
        "sub.rn.f32 %f2, %f0, %f1;",
        "mul.rn.f32 %f2, %f0, %f1;",
        "div.rn.f32 %f2, %f0, %f1;",
        "ex2.approx.f32 %f2, %f0;",
        "cvt.sat.f32.f32 %f2, %f0;",
        // A bit-size operation on float registers (f32 `exp` builds its power of two so).
        "shl.b32 %f2, %f0, 23;",
    ] {
        v.push(format!(
            "{f32form}\n mov.b32 %r9, %f2;\n cvt.u64.u32 %rd9, %r9;"
        ));
    }
    // Float → integer conversions (every rounding, both source formats, 32- and 64-bit
    // destinations: NaN, saturation at both ends, ties, negative to unsigned), the f32 sign
    // operations, and the 64-bit shift.
    for f2i in [
        "cvt.rni.s64.f64 %rd9, %fd0;",
        "cvt.rzi.s64.f64 %rd9, %fd0;",
        "cvt.rmi.u64.f64 %rd9, %fd0;",
        "cvt.rpi.u64.f64 %rd9, %fd0;",
        "cvt.rzi.s64.f32 %rd9, %f0;",
        "cvt.rni.u64.f32 %rd9, %f0;",
        "shl.b64 %rd9, %rd5, %r4;",
    ] {
        v.push(f2i.into());
    }
    for f2i32 in [
        "cvt.rzi.s32.f64 %r9, %fd0;",
        "cvt.rni.u32.f64 %r9, %fd0;",
        "cvt.rmi.s32.f32 %r9, %f0;",
        "cvt.rpi.u32.f32 %r9, %f0;",
        "cvt.rni.s32.f32 %r9, %f0;",
        "neg.f32 %f2, %f0;\n mov.b32 %r9, %f2;",
        "abs.f32 %f2, %f0;\n mov.b32 %r9, %f2;",
    ] {
        v.push(format!("{f2i32}\n cvt.u64.u32 %rd9, %r9;"));
    }
    v.push("mov.b64 %rd9, 7;\n @%p1 cvt.rni.s64.f64 %rd9, %fd0;".into());
    for cmp in [
        "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
    ] {
        for (ty, a, b) in [("f64", "%fd0", "%fd1"), ("f32", "%f0", "%f1")] {
            v.push(format!(
                "setp.{cmp}.{ty} %p2, {a}, {b};\n selp.u64 %rd9, 1, 0, %p2;"
            ));
        }
    }
    // Integer comparisons on the same bits (`%r4, %r6` the low halves of the pair, `%rd5,
    // %rd10` the pair): signed and unsigned, 32 and 64 bits, both orders of the extremes.
    for (ty, a, b) in [
        ("s32", "%r4", "%r6"),
        ("u32", "%r4", "%r6"),
        ("s64", "%rd5", "%rd10"),
        ("u64", "%rd5", "%rd10"),
    ] {
        let unsigned: &[&str] = if ty.starts_with('u') {
            &["lo", "ls", "hi", "hs"]
        } else {
            &[]
        };
        for cmp in ["eq", "ne", "lt", "le", "gt", "ge"].iter().chain(unsigned) {
            v.push(format!(
                "setp.{cmp}.{ty} %p2, {a}, {b};\n selp.u64 %rd9, 1, 0, %p2;"
            ));
        }
    }
    // Masked lanes: odd lanes keep the old value.
    v.push(
        "mov.b64 %rd9, 7;\n @%p1 fma.rn.f64 %fd2, %fd0, %fd1, %fd1;\n @%p1 mov.b64 %rd9, %fd2;"
            .into(),
    );
    // The branch-free min/max blends: masked lanes keep the old bits.
    v.push("mov.b64 %fd2, 7;\n @%p1 max.f64 %fd2, %fd0, %fd1;\n mov.b64 %rd9, %fd2;".into());
    v.push(
        "mov.b32 %f2, 7;\n @%p1 min.f32 %f2, %f0, %f1;\n mov.b32 %r9, %f2;\n cvt.u64.u32 %rd9, %r9;"
            .into(),
    );
    v.push(
        "mov.b64 %rd9, 7;\n @%p1 setp.lt.f64 %p2, %fd0, %fd1;\n @%p1 selp.u64 %rd9, 1, 0, %p2;"
            .into(),
    );
    v
}

fn special_values() -> Result<(), Failed> {
    let forms = forms();
    let n = VALUES.len() * VALUES.len();
    let mut body = String::new();
    for (k, f) in forms.iter().enumerate() {
        body.push_str(&format!(" {f}\n st.global.u64 [%rd7+{}], %rd9;\n", k * 8));
    }
    let text = emu_common::module(&format!(
        ".visible .entry k(.param .u64 out, .param .u64 inp)\n{{\n .reg .pred %p<4>;\n .reg .b32 %r<16>;\n .reg .b64 %rd<16>;\n .reg .f64 %fd<8>;\n .reg .f32 %f<8>;\n mov.u32 %r1, %ctaid.x;\n mov.u32 %r2, %ntid.x;\n mov.u32 %r3, %tid.x;\n mad.lo.s32 %r0, %r1, %r2, %r3;\n setp.ge.u32 %p0, %r0, {n};\n @%p0 ret;\n and.b32 %r5, %r3, 1;\n setp.eq.u32 %p1, %r5, 0;\n ld.param.u64 %rd1, [out];\n ld.param.u64 %rd2, [inp];\n mul.wide.u32 %rd3, %r0, 16;\n add.s64 %rd4, %rd2, %rd3;\n ld.global.f64 %fd0, [%rd4];\n ld.global.f64 %fd1, [%rd4+8];\n ld.global.b64 %rd5, [%rd4];\n ld.global.f32 %f0, [%rd4];\n ld.global.f32 %f1, [%rd4+8];\n ld.global.b32 %r4, [%rd4];\n ld.global.b32 %r6, [%rd4+8];\n ld.global.b64 %rd10, [%rd4+8];\n mul.wide.u32 %rd6, %r0, {};\n add.s64 %rd7, %rd1, %rd6;\n{body} ret;\n}}\n",
        forms.len() * 8
    ));
    let mut inp = Vec::with_capacity(n * 4);
    for &a in &VALUES {
        for &b in &VALUES {
            inp.extend([a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32]);
        }
    }
    let out = vec![0u32; n * forms.len() * 2];
    let block = 128u32;
    let grid = (n as u32).div_ceil(block);
    for threads in [1, 4] {
        // run_bufs panics when the engines differ.
        let got = emu_common::run_bufs(
            &text,
            "k",
            [grid, 1, 1],
            [block, 1, 1],
            &[out.clone(), inp.clone()],
            threads,
        )?;
        // The table exercises what it should: NaN results and both setp outcomes occur.
        let words = &got[0];
        let results: Vec<u64> = words
            .chunks(2)
            .map(|c| c[0] as u64 | (c[1] as u64) << 32)
            .collect();
        if !results.contains(&0x7fff_ffff_ffff_ffff)
            || !results.contains(&1)
            || !results.contains(&7)
        {
            return Err("the special-values kernel produced no canonical NaN, true comparison or masked lane".into());
        }
    }
    Ok(())
}
