//! Shared helpers of the emulator tests: launch specs (`NAME.launch.json`) and small kernels.
#![allow(dead_code)]
use ptx::emu::{self, DevicePtr, LaunchOptions, LaunchStats, LoadedModule, Memory, ParamValue};
use ptx::LaunchSpec;
use serde_json::Value;

/// Runs a launch spec against PTX text; returns mismatch descriptions (empty = pass).
pub fn run_spec(
    ptx_text: &str,
    spec: &Value,
    threads: usize,
) -> Result<(Vec<String>, LaunchStats), String> {
    let ast = ptx::parse(ptx_text).map_err(|e| format!("parse: {e}"))?;
    run_spec_ast(
        &ast,
        spec,
        threads,
        LaunchOptions::default().instruction_budget,
    )
}

/// [`run_spec`] on an already parsed module, with an instruction budget: the first 10
/// mismatches over all buffers, through `ptx::run_launch_spec` (the runner `aot ptx-run` uses).
pub fn run_spec_ast(
    ast: &ptx::Module,
    spec: &Value,
    threads: usize,
    budget: u64,
) -> Result<(Vec<String>, LaunchStats), String> {
    run_spec_engine(ast, spec, threads, budget, false)
}

/// [`run_spec_ast`] on the reference engine (`reference`) or the fast one.
pub fn run_spec_engine(
    ast: &ptx::Module,
    spec: &Value,
    threads: usize,
    budget: u64,
    reference: bool,
) -> Result<(Vec<String>, LaunchStats), String> {
    const SHOW: usize = 10;
    let module = LoadedModule::load(ast).map_err(|e| format!("load: {e}"))?;
    let spec = LaunchSpec::from_json(spec).map_err(|e| e.to_string())?;
    let opts = LaunchOptions {
        threads,
        instruction_budget: budget,
        reference_engine: reference,
        ..LaunchOptions::default()
    };
    let outcome = ptx::run_launch_spec(&module, &spec, &opts, SHOW).map_err(|e| e.to_string())?;
    let bad = outcome
        .checks
        .iter()
        .flat_map(|c| {
            c.first.iter().map(move |m| {
                format!(
                    "param {}[{}]: got {} want {}",
                    c.expected.param, m.index, m.got, m.want
                )
            })
        })
        .take(SHOW)
        .collect();
    Ok((bad, outcome.stats))
}

/// Parses and loads PTX text.
pub fn load(text: &str) -> LoadedModule {
    let ast = ptx::parse(text).unwrap_or_else(|e| panic!("parse error: {e}\n{text}"));
    LoadedModule::load(&ast).unwrap_or_else(|e| panic!("load error: {e}"))
}

/// Wraps a kernel body with a standard header.
pub fn module(kernel: &str) -> String {
    format!(".version 8.0\n.target sm_90\n.address_size 64\n{kernel}")
}

/// Allocates and fills a u32 buffer.
pub fn buf_u32(mem: &mut Memory, v: &[u32]) -> DevicePtr {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let p = mem.alloc(b.len() as u64).unwrap();
    mem.write(p, &b).unwrap();
    p
}

/// Reads a u32 buffer.
pub fn read_u32(mem: &mut Memory, p: DevicePtr, n: usize) -> Vec<u32> {
    let b = mem.read_vec(p, n * 4).unwrap();
    b.chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Runs `kernel` with one u32 buffer per entry of `bufs` (passed as pointers, in order),
/// returns the final contents of every buffer.
///
/// Every call is also a differential test of the engines: the launch runs on the reference
/// engine (`LaunchOptions::reference_engine`) and on every build of the fast engine the CPU
/// has (`LaunchOptions::host_isa`; the widest is what it returns), and the buffers, counts or
/// error messages must be identical, else it panics.
pub fn run_bufs(
    text: &str,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    bufs: &[Vec<u32>],
    threads: usize,
) -> Result<Vec<Vec<u32>>, emu::EmuError> {
    let run = |isa: Option<emu::HostIsa>| {
        let m = load(text);
        let mut mem = Memory::new();
        let ptrs: Vec<DevicePtr> = bufs.iter().map(|b| buf_u32(&mut mem, b)).collect();
        let params: Vec<ParamValue> = ptrs.iter().map(|p| ParamValue::ptr(*p)).collect();
        let opts = LaunchOptions {
            threads,
            reference_engine: isa.is_none(),
            host_isa: isa.unwrap_or(emu::HostIsa::Portable),
            ..LaunchOptions::default()
        };
        let stats = emu::launch(&m, kernel, grid, block, 0, &params, &mut mem, &opts)?;
        let out: Vec<Vec<u32>> = ptrs
            .iter()
            .zip(bufs)
            .map(|(p, b)| read_u32(&mut mem, *p, b.len()))
            .collect();
        Ok::<_, emu::EmuError>((out, stats.lane_instructions))
    };
    let reference = run(None);
    let mut fast = None;
    // Every build of the fast engine this CPU has (portable, AVX2, AVX-512), widest last.
    for isa in emu::HostIsa::available() {
        let got = run(Some(isa));
        let same = match (&got, &reference) {
            (Ok(f), Ok(r)) => f == r,
            (Err(f), Err(r)) => f.to_string() == r.to_string(),
            _ => false,
        };
        assert!(
            same,
            "the fast engine ({isa:?}) and the reference engine differ on kernel {kernel}:\nfast: {got:?}\nreference: {reference:?}\n{text}"
        );
        fast = Some(got);
    }
    let fast = fast.unwrap_or(reference);
    fast.map(|(out, _)| out)
}

/// A kernel prologue: `%r0` = global thread index (x), `%rd0` = &out[%r0] (param 0 = out),
/// `%rd1` = param 1 base (or 0 when the kernel has one param).
pub fn prologue() -> &'static str {
    "mov.u32 %r100, %ctaid.x;\n mov.u32 %r101, %ntid.x;\n mov.u32 %r102, %tid.x;\n mad.lo.s32 %r0, %r100, %r101, %r102;\n ld.param.u64 %rd10, [out];\n mul.wide.u32 %rd11, %r0, 4;\n add.s64 %rd0, %rd10, %rd11;\n"
}

/// A one-output kernel `k(out)` whose body computes `%r1` from `%r0` (global thread id); the
/// result is stored to out[tid].
pub fn unary_kernel(body: &str) -> String {
    module(&format!(
        ".visible .entry k(.param .u64 out)\n{{\n .reg .pred %p<16>;\n .reg .b32 %r<128>;\n .reg .b64 %rd<32>;\n .reg .f32 %f<32>;\n .reg .f64 %fd<16>;\n .reg .b16 %h<16>;\n {}\n{body}\n st.global.u32 [%rd0], %r1;\n ret;\n}}\n",
        prologue()
    ))
}

/// Runs a [`unary_kernel`] over `n` threads in blocks of `block` and returns out.
pub fn run_unary(body: &str, n: u32, block: u32) -> Vec<u32> {
    let text = unary_kernel(body);
    let grid = n.div_ceil(block);
    let out = run_bufs(
        &text,
        "k",
        [grid, 1, 1],
        [block, 1, 1],
        &[vec![0; (grid * block) as usize]],
        2,
    )
    .unwrap_or_else(|e| panic!("{e}\n{text}"));
    out[0][..n as usize].to_vec()
}
