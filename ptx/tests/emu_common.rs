//! Shared helpers of the emulator tests: launch specs (`NAME.launch.json`) and small kernels.
#![allow(dead_code)]
use half::{bf16, f16};
use ptx::emu::{self, DevicePtr, LaunchOptions, LaunchStats, LoadedModule, Memory, ParamValue};
use serde_json::Value;

/// Encodes one JSON number (or "nan"/"inf"/"-inf") as `dtype` little-endian bytes.
pub fn encode(dtype: &str, v: &Value) -> Result<Vec<u8>, String> {
    let f = match v {
        Value::Number(n) => n.as_f64().ok_or("bad number")?,
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            _ => return Err(format!("bad value {s}")),
        },
        Value::Bool(b) => *b as u8 as f64,
        _ => return Err(format!("bad value {v}")),
    };
    let i = v.as_i64().unwrap_or(f as i64);
    Ok(match dtype {
        "f32" => (f as f32).to_le_bytes().to_vec(),
        "f64" => f.to_le_bytes().to_vec(),
        "f16" => f16::from_f64(f).to_le_bytes().to_vec(),
        "bf16" => bf16::from_f64(f).to_le_bytes().to_vec(),
        "s8" | "u8" | "pred" => vec![i as u8],
        "s16" | "u16" => (i as u16).to_le_bytes().to_vec(),
        "s32" | "u32" => (i as u32).to_le_bytes().to_vec(),
        "s64" => i.to_le_bytes().to_vec(),
        "u64" => v.as_u64().unwrap_or(i as u64).to_le_bytes().to_vec(),
        _ => return Err(format!("unknown dtype {dtype}")),
    })
}

/// Element size of a dtype.
pub fn dsize(dtype: &str) -> usize {
    match dtype {
        "f64" | "s64" | "u64" => 8,
        "f32" | "s32" | "u32" => 4,
        "f16" | "bf16" | "s16" | "u16" => 2,
        _ => 1,
    }
}

/// Decodes an element to f64 (for comparison) plus its raw bits.
pub fn decode(dtype: &str, b: &[u8]) -> (f64, u64) {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    let bits = u64::from_le_bytes(w);
    let v = match dtype {
        "f32" => f32::from_bits(bits as u32) as f64,
        "f64" => f64::from_bits(bits),
        "f16" => f16::from_bits(bits as u16).to_f64(),
        "bf16" => bf16::from_bits(bits as u16).to_f64(),
        "s8" => bits as u8 as i8 as f64,
        "s16" => bits as u16 as i16 as f64,
        "s32" => bits as u32 as i32 as f64,
        "s64" => bits as i64 as f64,
        _ => bits as f64,
    };
    (v, bits)
}

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

/// [`run_spec`] on an already parsed module, with an instruction budget.
pub fn run_spec_ast(
    ast: &ptx::Module,
    spec: &Value,
    threads: usize,
    budget: u64,
) -> Result<(Vec<String>, LaunchStats), String> {
    let module = LoadedModule::load(ast).map_err(|e| format!("load: {e}"))?;
    let dims = |k: &str| -> Result<[u32; 3], String> {
        let a = spec[k].as_array().ok_or(format!("missing {k}"))?;
        let mut d = [1u32; 3];
        for (i, x) in a.iter().take(3).enumerate() {
            d[i] = x.as_u64().ok_or("bad dim")? as u32;
        }
        Ok(d)
    };
    let (grid, block) = (dims("grid")?, dims("block")?);
    let mut mem = Memory::new();
    let mut params = Vec::new();
    let mut bufs: Vec<Option<(DevicePtr, usize)>> = Vec::new();
    for p in spec["params"].as_array().ok_or("params")? {
        let dtype = p["dtype"].as_str().ok_or("dtype")?;
        if p["kind"] == "buffer" {
            let mut bytes = Vec::new();
            for v in p["data"].as_array().ok_or("data")? {
                bytes.extend(encode(dtype, v)?);
            }
            let ptr = mem.alloc(bytes.len() as u64).map_err(|e| e.to_string())?;
            mem.write(ptr, &bytes).map_err(|e| e.to_string())?;
            bufs.push(Some((ptr, bytes.len())));
            params.push(ParamValue::ptr(ptr));
        } else {
            bufs.push(None);
            params.push(ParamValue(encode(dtype, &p["value"])?));
        }
    }
    let kernel = spec["kernel"].as_str().ok_or("kernel")?;
    let opts = LaunchOptions {
        threads,
        instruction_budget: budget,
        ..LaunchOptions::default()
    };
    let stats = emu::launch(
        &module,
        kernel,
        grid,
        block,
        spec["dynamic_shared_bytes"].as_u64().unwrap_or(0) as u32,
        &params,
        &mut mem,
        &opts,
    )
    .map_err(|e| format!("launch: {e}"))?;
    let mut bad = Vec::new();
    for e in spec["expected"].as_array().ok_or("expected")? {
        let pi = e["param"].as_u64().ok_or("param")? as usize;
        let dtype = e["dtype"].as_str().ok_or("dtype")?;
        let (ptr, len) = bufs
            .get(pi)
            .copied()
            .flatten()
            .ok_or("expected param is not a buffer")?;
        let got = mem.read_vec(ptr, len).map_err(|e| e.to_string())?;
        let (at, rt) = (
            e["abs_tol"].as_f64().unwrap_or(0.0),
            e["rel_tol"].as_f64().unwrap_or(0.0),
        );
        let sz = dsize(dtype);
        for (i, want) in e["data"].as_array().ok_or("data")?.iter().enumerate() {
            let Some(g) = got.get(i * sz..(i + 1) * sz) else {
                bad.push(format!("param {pi}[{i}]: missing"));
                continue;
            };
            let (gv, gbits) = decode(dtype, g);
            let wb = encode(dtype, want)?;
            let (wv, wbits) = decode(dtype, &wb);
            let ok = if gv.is_nan() || wv.is_nan() {
                gv.is_nan() && wv.is_nan()
            } else if at == 0.0 && rt == 0.0 {
                gbits == wbits
            } else {
                (gv - wv).abs() <= at + rt * wv.abs()
            };
            if !ok && bad.len() < 10 {
                bad.push(format!("param {pi}[{i}]: got {gv} want {wv}"));
            }
        }
    }
    Ok((bad, stats))
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
pub fn run_bufs(
    text: &str,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    bufs: &[Vec<u32>],
    threads: usize,
) -> Result<Vec<Vec<u32>>, emu::EmuError> {
    let m = load(text);
    let mut mem = Memory::new();
    let ptrs: Vec<DevicePtr> = bufs.iter().map(|b| buf_u32(&mut mem, b)).collect();
    let params: Vec<ParamValue> = ptrs.iter().map(|p| ParamValue::ptr(*p)).collect();
    let opts = LaunchOptions {
        threads,
        ..LaunchOptions::default()
    };
    emu::launch(&m, kernel, grid, block, 0, &params, &mut mem, &opts)?;
    Ok(ptrs
        .iter()
        .zip(bufs)
        .map(|(p, b)| read_u32(&mut mem, *p, b.len()))
        .collect())
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
