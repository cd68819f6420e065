//! `aot ptx-run KERNEL.ptx --launch KERNEL.launch.json`: run one kernel on the emulator and
//! compare the expected buffers.
//!
//! The launch spec is described in `testdata/corpus/README.md`: `buffer` params are copied to
//! fresh device allocations and passed as 64-bit addresses, `scalar` params are passed by value
//! (sized by their dtype); each `expected` entry is compared element-wise with
//! `|got - want| <= abs_tol + rel_tol * |want|`, bit-exact when both tolerances are 0, NaN
//! matching NaN.
use std::io::Write;
use std::path::Path;

use anyhow::{anyhow, bail, Context};
use ptx::emu::numeric::Fmt;
use ptx::emu::{self, DevicePtr, LaunchOptions, LoadedModule, Memory, ParamValue};
use serde_json::Value;

/// How many mismatching elements are printed per buffer.
const SHOW: usize = 5;

/// Element size in bytes of a dtype name.
fn dtype_size(dtype: &str) -> anyhow::Result<usize> {
    Ok(match dtype {
        "f64" | "s64" | "u64" => 8,
        "f32" | "s32" | "u32" => 4,
        "f16" | "bf16" | "s16" | "u16" => 2,
        "s8" | "u8" | "pred" => 1,
        _ => bail!("unknown dtype `{dtype}`"),
    })
}

fn json_f64(v: &Value) -> anyhow::Result<f64> {
    Ok(match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| anyhow!("bad number {n}"))?,
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            _ => bail!("bad value {s:?}"),
        },
        Value::Bool(b) => *b as u8 as f64,
        _ => bail!("bad value {v}"),
    })
}

/// Encodes one value as `dtype` little-endian bytes.
fn encode(dtype: &str, v: &Value) -> anyhow::Result<Vec<u8>> {
    let f = json_f64(v)?;
    let int = || -> anyhow::Result<i128> {
        if let Some(i) = v.as_i64() {
            Ok(i as i128)
        } else if let Some(u) = v.as_u64() {
            Ok(u as i128)
        } else if f.fract() == 0.0 && f.is_finite() {
            Ok(f as i128)
        } else {
            bail!("{v} is not an integer")
        }
    };
    Ok(match dtype {
        "f32" => (f as f32).to_le_bytes().to_vec(),
        "f64" => f.to_le_bytes().to_vec(),
        "f16" => (Fmt::F16.from_f64_rn(f) as u16).to_le_bytes().to_vec(),
        "bf16" => (Fmt::Bf16.from_f64_rn(f) as u16).to_le_bytes().to_vec(),
        "s8" | "u8" | "pred" => vec![int()? as u8],
        "s16" | "u16" => (int()? as u16).to_le_bytes().to_vec(),
        "s32" | "u32" => (int()? as u32).to_le_bytes().to_vec(),
        "s64" | "u64" => (int()? as u64).to_le_bytes().to_vec(),
        _ => bail!("unknown dtype `{dtype}`"),
    })
}

/// Decodes one element into (value for comparison, raw bits).
fn decode(dtype: &str, b: &[u8]) -> (f64, u64) {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[..n].copy_from_slice(&b[..n]);
    let bits = u64::from_le_bytes(w);
    let v = match dtype {
        "f32" => f32::from_bits(bits as u32) as f64,
        "f64" => f64::from_bits(bits),
        "f16" => Fmt::F16.to_f64(bits),
        "bf16" => Fmt::Bf16.to_f64(bits),
        "s8" => bits as u8 as i8 as f64,
        "s16" => bits as u16 as i16 as f64,
        "s32" => bits as u32 as i32 as f64,
        "s64" => bits as i64 as f64,
        _ => bits as f64,
    };
    (v, bits)
}

fn dims(spec: &Value, key: &str) -> anyhow::Result<[u32; 3]> {
    let a = spec[key]
        .as_array()
        .ok_or_else(|| anyhow!("launch spec: `{key}` must be an array"))?;
    if a.is_empty() || a.len() > 3 {
        bail!("launch spec: `{key}` must have 1 to 3 elements");
    }
    let mut d = [1u32; 3];
    for (i, x) in a.iter().enumerate() {
        d[i] = x
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| {
                anyhow!("launch spec: `{key}[{i}]` must be a non-negative 32-bit integer")
            })?;
    }
    Ok(d)
}

/// Runs the launch, printing a per-buffer verdict to `out`. `Ok(true)`: every expected buffer
/// matches; `Ok(false)`: at least one mismatch; `Err`: the launch could not run at all.
pub fn run(ptx: &Path, launch: &Path, out: &mut dyn Write) -> anyhow::Result<bool> {
    let text =
        std::fs::read_to_string(ptx).with_context(|| format!("reading {}", ptx.display()))?;
    let spec_text =
        std::fs::read_to_string(launch).with_context(|| format!("reading {}", launch.display()))?;
    let spec: Value = serde_json::from_str(&spec_text)
        .with_context(|| format!("parsing {}", launch.display()))?;
    let ast = ptx::parse(&text).map_err(|e| anyhow!("{}: {e}", ptx.display()))?;
    let module = LoadedModule::load(&ast).with_context(|| format!("loading {}", ptx.display()))?;
    let kernel = spec["kernel"]
        .as_str()
        .ok_or_else(|| anyhow!("launch spec: `kernel` must be a string"))?;
    let grid = dims(&spec, "grid")?;
    let block = dims(&spec, "block")?;
    let dyn_shared = match &spec["dynamic_shared_bytes"] {
        Value::Null => 0,
        v => v
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| {
                anyhow!("launch spec: `dynamic_shared_bytes` must be a 32-bit integer")
            })?,
    };
    let sizes = module.param_sizes(kernel).ok_or_else(|| {
        anyhow!(
            "no kernel `{kernel}` in {} (kernels: {})",
            ptx.display(),
            module.kernel_names().join(", ")
        )
    })?;
    let params_json = spec["params"]
        .as_array()
        .ok_or_else(|| anyhow!("launch spec: `params` must be an array"))?;
    if params_json.len() != sizes.len() {
        bail!(
            "kernel `{kernel}` takes {} parameters, the launch spec gives {}",
            sizes.len(),
            params_json.len()
        );
    }
    let mut mem = Memory::new();
    let mut params = Vec::new();
    let mut buffers: Vec<Option<(DevicePtr, usize)>> = Vec::new();
    for (i, p) in params_json.iter().enumerate() {
        let dtype = p["dtype"]
            .as_str()
            .ok_or_else(|| anyhow!("param {i}: `dtype` must be a string"))?;
        dtype_size(dtype).with_context(|| format!("param {i}"))?;
        match p["kind"].as_str() {
            Some("buffer") => {
                let data = p["data"]
                    .as_array()
                    .ok_or_else(|| anyhow!("param {i}: `data` must be an array"))?;
                let mut bytes = Vec::with_capacity(data.len() * 4);
                for (k, v) in data.iter().enumerate() {
                    bytes.extend(encode(dtype, v).with_context(|| format!("param {i}[{k}]"))?);
                }
                let ptr = mem.alloc(bytes.len() as u64)?;
                mem.write(ptr, &bytes)?;
                buffers.push(Some((ptr, bytes.len())));
                params.push(ParamValue::ptr(ptr));
            }
            Some("scalar") => {
                let bytes = encode(dtype, &p["value"]).with_context(|| format!("param {i}"))?;
                buffers.push(None);
                params.push(ParamValue(bytes));
            }
            _ => bail!("param {i}: `kind` must be \"buffer\" or \"scalar\""),
        }
    }
    let stats = emu::launch(
        &module,
        kernel,
        grid,
        block,
        dyn_shared,
        &params,
        &mut mem,
        // The runtime's limits, so a launch spec gets what an artifact gets.
        &LaunchOptions {
            instruction_budget: runtime::RuntimeFlags::default().emulator_instruction_budget,
            wall_time_limit: Some(std::time::Duration::from_secs(
                runtime::RuntimeFlags::default().max_execution_secs,
            )),
            ..LaunchOptions::default()
        },
    )
    .with_context(|| format!("launching `{kernel}`"))?;
    writeln!(
        out,
        "{kernel}: grid {grid:?} block {block:?}: {} lane-instructions ({} warp-instructions), {} B read, {} B written",
        stats.lane_instructions, stats.warp_instructions, stats.global_bytes_read, stats.global_bytes_written
    )?;
    let expected = spec["expected"]
        .as_array()
        .ok_or_else(|| anyhow!("launch spec: `expected` must be an array"))?;
    let mut all_ok = true;
    for (ei, e) in expected.iter().enumerate() {
        let pi = e["param"]
            .as_u64()
            .ok_or_else(|| anyhow!("expected {ei}: `param` must be an index"))?
            as usize;
        let dtype = e["dtype"]
            .as_str()
            .ok_or_else(|| anyhow!("expected {ei}: `dtype` must be a string"))?;
        let size = dtype_size(dtype).with_context(|| format!("expected {ei}"))?;
        let (ptr, len) = buffers
            .get(pi)
            .copied()
            .flatten()
            .ok_or_else(|| anyhow!("expected {ei}: param {pi} is not a buffer param"))?;
        let want = e["data"]
            .as_array()
            .ok_or_else(|| anyhow!("expected {ei}: `data` must be an array"))?;
        if want.len() * size != len {
            bail!(
                "expected {ei}: {} {dtype} elements ({} bytes) but param {pi} holds {len} bytes",
                want.len(),
                want.len() * size
            );
        }
        let at = e["abs_tol"].as_f64().unwrap_or(0.0);
        let rt = e["rel_tol"].as_f64().unwrap_or(0.0);
        let got = mem.read_vec(ptr, len)?;
        let mut bad = Vec::new();
        let mut nbad = 0usize;
        for (k, w) in want.iter().enumerate() {
            let g = got.get(k * size..(k + 1) * size).unwrap_or(&[]);
            let (gv, gbits) = decode(dtype, g);
            let wbytes = encode(dtype, w).with_context(|| format!("expected {ei}[{k}]"))?;
            let (wv, wbits) = decode(dtype, &wbytes);
            let ok = if gv.is_nan() || wv.is_nan() {
                gv.is_nan() && wv.is_nan()
            } else if at == 0.0 && rt == 0.0 {
                gbits == wbits
            } else {
                (gv - wv).abs() <= at + rt * wv.abs()
            };
            if !ok {
                nbad += 1;
                if bad.len() < SHOW {
                    bad.push(format!("  [{k}] got {gv} want {wv}"));
                }
            }
        }
        if nbad == 0 {
            writeln!(
                out,
                "param {pi} ({dtype}[{}]): OK (abs_tol {at}, rel_tol {rt})",
                want.len()
            )?;
        } else {
            all_ok = false;
            writeln!(
                out,
                "param {pi} ({dtype}[{}]): MISMATCH in {nbad} elements (abs_tol {at}, rel_tol {rt}); first:",
                want.len()
            )?;
            for b in bad {
                writeln!(out, "{b}")?;
            }
        }
    }
    Ok(all_ok)
}
