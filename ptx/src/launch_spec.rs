//! Launch specs (`NAME.launch.json`, described in `testdata/corpus/README.md`): one kernel
//! launch, its parameters and the buffers it must leave behind, run on the emulator and
//! compared. The one runner behind `aot ptx-run` and the emulator's corpus tests.
//!
//! ```json
//! {"kernel": "vadd", "grid": [4,1,1], "block": [256,1,1], "dynamic_shared_bytes": 0,
//!  "params": [{"kind": "buffer", "dtype": "f32", "data": [1.0, "nan"]},
//!             {"kind": "scalar", "dtype": "s32", "value": 1000}],
//!  "expected": [{"param": 0, "dtype": "f32", "data": [2.0, "nan"], "abs_tol": 0, "rel_tol": 0}]}
//! ```
//!
//! `buffer` params are copied to fresh device allocations and passed as 64-bit addresses,
//! `scalar` params are passed by value (sized by their dtype); each `expected` entry is compared
//! element-wise with `|got - want| <= abs_tol + rel_tol * |want|`, bit-exact when both
//! tolerances are 0, NaN matching NaN. Values are JSON numbers, booleans, or `"nan"`, `"inf"`,
//! `"-inf"`; integer dtypes take only integral values.
use half::{bf16, f16};
use serde_json::Value;

use crate::emu::{
    self, DevicePtr, EmuError, LaunchOptions, LaunchStats, LoadedModule, Memory, ParamValue,
};

/// Why a JSON value does not encode as a [`Dtype`] element.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// A JSON number that is not an `f64`.
    #[error("bad number {0}")]
    Number(String),
    /// A string other than `nan`, `inf` and `-inf`.
    #[error("bad value {0:?}")]
    Word(String),
    /// Neither a number, a string nor a bool (its JSON text).
    #[error("bad value {0}")]
    Json(String),
    /// A fraction or non-finite value for an integer dtype (its JSON text).
    #[error("{0} is not an integer")]
    NotAnInteger(String),
}

/// What is wrong with a launch spec, or why its launch could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// A field is missing or has the wrong JSON type or range.
    #[error("{at}: `{field}` must be {what}")]
    Field {
        /// Whose field: `launch spec`, `param 2`, `expected 0`.
        at: String,
        /// Which, e.g. `grid[1]` or `data`.
        field: String,
        /// What it must be.
        what: &'static str,
    },
    /// A launch dimension out of the emulator's range (as on every NVIDIA GPU).
    #[error("launch spec: `{field}` is {value}, out of range [1, {max}]")]
    Range {
        /// `grid[0]`, `block[2]`, or `block` (the threads of the whole block).
        field: String,
        /// The value given (for `block`, the product of its dimensions).
        value: u64,
        /// The largest accepted.
        max: u64,
    },
    /// A dtype name this runner does not know.
    #[error("{at}: unknown dtype `{dtype}`")]
    Dtype {
        /// Where it was given.
        at: String,
        /// The name given.
        dtype: String,
    },
    /// A value that does not encode as its dtype.
    #[error("{at}: {error}")]
    Value {
        /// Which value (`param 0[3]`, `expected 1[0]`).
        at: String,
        /// Why.
        error: ValueError,
    },
    /// The module has no such kernel.
    #[error("no kernel `{kernel}` (kernels: {})", kernels.join(", "))]
    UnknownKernel {
        /// The kernel asked for.
        kernel: String,
        /// The kernels the module has.
        kernels: Vec<String>,
    },
    /// The spec gives another number of parameters than the kernel takes.
    #[error("kernel `{kernel}` takes {takes} parameters, the launch spec gives {gives}")]
    ParamCount {
        /// The spec's `kernel`.
        kernel: String,
        /// Parameters of the kernel.
        takes: usize,
        /// Parameters in the spec.
        gives: usize,
    },
    /// An expectation names a parameter that is not a buffer.
    #[error("expected {index}: param {param} is not a buffer param")]
    NotABuffer {
        /// Which expectation.
        index: usize,
        /// The parameter it names.
        param: usize,
    },
    /// An expectation's length differs from its buffer's.
    #[error("expected {index}: {elements} {dtype} elements ({bytes} bytes) but param {param} holds {held} bytes")]
    Length {
        /// Which expectation.
        index: usize,
        /// Elements expected.
        elements: usize,
        /// Their dtype.
        dtype: Dtype,
        /// Their size.
        bytes: usize,
        /// The parameter.
        param: usize,
        /// The parameter buffer's size.
        held: usize,
    },
    /// The emulator refused or stopped the launch.
    // The emulator's error is part of this message and deliberately not a `#[source]` (a
    // field named `source` would be one): chain printers (anyhow's `{:#}`) said it twice.
    #[error("launching `{kernel}`: {error}")]
    Launch {
        /// The spec's `kernel`.
        kernel: String,
        /// Why.
        error: EmuError,
    },
    /// Emulated memory could not hold or give back a buffer.
    #[error("device memory: {0}")]
    Memory(EmuError),
}

/// An element type of a launch spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Dtype {
    F64,
    F32,
    F16,
    Bf16,
    S64,
    U64,
    S32,
    U32,
    S16,
    U16,
    S8,
    U8,
    Pred,
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Dtype {
    /// The dtype a spec names `name`.
    pub fn from_name(name: &str) -> Option<Dtype> {
        use Dtype::*;
        Some(match name {
            "f64" => F64,
            "f32" => F32,
            "f16" => F16,
            "bf16" => Bf16,
            "s64" => S64,
            "u64" => U64,
            "s32" => S32,
            "u32" => U32,
            "s16" => S16,
            "u16" => U16,
            "s8" => S8,
            "u8" => U8,
            "pred" => Pred,
            _ => return None,
        })
    }

    /// The name a spec uses.
    pub fn name(self) -> &'static str {
        use Dtype::*;
        match self {
            F64 => "f64",
            F32 => "f32",
            F16 => "f16",
            Bf16 => "bf16",
            S64 => "s64",
            U64 => "u64",
            S32 => "s32",
            U32 => "u32",
            S16 => "s16",
            U16 => "u16",
            S8 => "s8",
            U8 => "u8",
            Pred => "pred",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        use Dtype::*;
        match self {
            F64 | S64 | U64 => 8,
            F32 | S32 | U32 => 4,
            F16 | Bf16 | S16 | U16 => 2,
            S8 | U8 | Pred => 1,
        }
    }

    /// Encodes one JSON value as little-endian bytes of this dtype.
    pub fn encode(self, v: &Value) -> Result<Vec<u8>, ValueError> {
        let f = match v {
            Value::Number(n) => n
                .as_f64()
                .ok_or_else(|| ValueError::Number(n.to_string()))?,
            Value::String(s) => match s.as_str() {
                "nan" => f64::NAN,
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                _ => return Err(ValueError::Word(s.clone())),
            },
            Value::Bool(b) => f64::from(u8::from(*b)),
            _ => return Err(ValueError::Json(v.to_string())),
        };
        // Integers wrap to the dtype's width, as a C cast would.
        let int = || -> Result<i128, ValueError> {
            if let Some(i) = v.as_i64() {
                Ok(i128::from(i))
            } else if let Some(u) = v.as_u64() {
                Ok(i128::from(u))
            } else if f.fract() == 0.0 && f.is_finite() {
                Ok(f as i128)
            } else {
                Err(ValueError::NotAnInteger(v.to_string()))
            }
        };
        use Dtype::*;
        Ok(match self {
            F32 => (f as f32).to_le_bytes().to_vec(),
            F64 => f.to_le_bytes().to_vec(),
            F16 => f16::from_f64(f).to_le_bytes().to_vec(),
            Bf16 => bf16::from_f64(f).to_le_bytes().to_vec(),
            S8 | U8 | Pred => vec![int()? as u8],
            S16 | U16 => (int()? as u16).to_le_bytes().to_vec(),
            S32 | U32 => (int()? as u32).to_le_bytes().to_vec(),
            S64 | U64 => (int()? as u64).to_le_bytes().to_vec(),
        })
    }

    /// Decodes one element (little-endian, at most 8 bytes) into (value for comparison, raw
    /// bits).
    pub fn decode(self, b: &[u8]) -> (f64, u64) {
        let mut w = [0u8; 8];
        let n = b.len().min(8);
        w[..n].copy_from_slice(&b[..n]);
        let bits = u64::from_le_bytes(w);
        use Dtype::*;
        let v = match self {
            F32 => f64::from(f32::from_bits(bits as u32)),
            F64 => f64::from_bits(bits),
            F16 => f16::from_bits(bits as u16).to_f64(),
            Bf16 => bf16::from_bits(bits as u16).to_f64(),
            S8 => f64::from(bits as u8 as i8),
            S16 => f64::from(bits as u16 as i16),
            S32 => f64::from(bits as u32 as i32),
            S64 => bits as i64 as f64,
            U64 => bits as f64,
            U32 | U16 | U8 | Pred => bits as f64,
        };
        (v, bits)
    }
}

/// One parameter of the launch, encoded.
#[derive(Debug, Clone, PartialEq)]
pub enum SpecParam {
    /// Copied to a fresh allocation, passed as its address.
    Buffer {
        /// Element type.
        dtype: Dtype,
        /// The contents.
        bytes: Vec<u8>,
    },
    /// Passed by value.
    Scalar {
        /// Element type.
        dtype: Dtype,
        /// The value.
        bytes: Vec<u8>,
    },
}

/// What one buffer must hold after the launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// The parameter (a buffer).
    pub param: usize,
    /// How to read it.
    pub dtype: Dtype,
    /// The expected elements, encoded.
    pub bytes: Vec<u8>,
    /// Absolute tolerance.
    pub abs_tol: f64,
    /// Relative tolerance.
    pub rel_tol: f64,
}

impl Expected {
    /// How many elements are expected.
    pub fn elements(&self) -> usize {
        self.bytes.len() / self.dtype.size()
    }
}

/// A launch spec, checked and encoded.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchSpec {
    /// The `.entry` to launch.
    pub kernel: String,
    /// Grid dimensions (missing ones are 1).
    pub grid: [u32; 3],
    /// Block dimensions (missing ones are 1).
    pub block: [u32; 3],
    /// Dynamic shared memory in bytes.
    pub dynamic_shared_bytes: u32,
    /// The kernel's parameters, in order.
    pub params: Vec<SpecParam>,
    /// The buffers to compare afterwards.
    pub expected: Vec<Expected>,
}

const TOP: &str = "launch spec";

fn field(at: &str, field: impl Into<String>, what: &'static str) -> SpecError {
    SpecError::Field {
        at: at.to_owned(),
        field: field.into(),
        what,
    }
}

fn dtype_at(v: &Value, at: &str) -> Result<Dtype, SpecError> {
    let name = v["dtype"]
        .as_str()
        .ok_or_else(|| field(at, "dtype", "a string"))?;
    Dtype::from_name(name).ok_or_else(|| SpecError::Dtype {
        at: at.to_owned(),
        dtype: name.to_owned(),
    })
}

/// Encodes the array `v[key]` as `dtype` elements.
fn elements(v: &Value, key: &str, dtype: Dtype, at: &str) -> Result<Vec<u8>, SpecError> {
    let data = v[key]
        .as_array()
        .ok_or_else(|| field(at, key, "an array"))?;
    let mut bytes = Vec::with_capacity(data.len().saturating_mul(dtype.size()));
    for (k, x) in data.iter().enumerate() {
        bytes.extend(dtype.encode(x).map_err(|error| SpecError::Value {
            at: format!("{at}[{k}]"),
            error,
        })?);
    }
    Ok(bytes)
}

fn dims(spec: &Value, key: &str) -> Result<[u32; 3], SpecError> {
    let a = spec[key]
        .as_array()
        .filter(|a| (1..=3).contains(&a.len()))
        .ok_or_else(|| field(TOP, key, "an array of 1 to 3 elements"))?;
    let mut d = [1u32; 3];
    for (slot, (i, x)) in d.iter_mut().zip(a.iter().enumerate()) {
        *slot = x
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| field(TOP, format!("{key}[{i}]"), "a non-negative 32-bit integer"))?;
    }
    Ok(d)
}

impl LaunchSpec {
    /// Reads and checks a spec.
    pub fn from_json(spec: &Value) -> Result<LaunchSpec, SpecError> {
        let kernel = spec["kernel"]
            .as_str()
            .ok_or_else(|| field(TOP, "kernel", "a string"))?
            .to_owned();
        let grid = dims(spec, "grid")?;
        let block = dims(spec, "block")?;
        // The emulator's launch limits, checked here too so a bad spec is named by its field
        // before any buffer is allocated for it.
        for (i, (&g, max)) in grid.iter().zip(emu::MAX_GRID).enumerate() {
            if g == 0 || g > max {
                return Err(SpecError::Range {
                    field: format!("grid[{i}]"),
                    value: u64::from(g),
                    max: u64::from(max),
                });
            }
        }
        for (i, &b) in block.iter().enumerate() {
            if b == 0 || b > emu::MAX_THREADS_PER_BLOCK {
                return Err(SpecError::Range {
                    field: format!("block[{i}]"),
                    value: u64::from(b),
                    max: u64::from(emu::MAX_THREADS_PER_BLOCK),
                });
            }
        }
        let threads = block.iter().map(|&b| u64::from(b)).product::<u64>();
        if threads > u64::from(emu::MAX_THREADS_PER_BLOCK) {
            return Err(SpecError::Range {
                field: "block".into(),
                value: threads,
                max: u64::from(emu::MAX_THREADS_PER_BLOCK),
            });
        }
        let dynamic_shared_bytes = match &spec["dynamic_shared_bytes"] {
            Value::Null => 0,
            v => v
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| field(TOP, "dynamic_shared_bytes", "a 32-bit integer"))?,
        };
        let mut params = Vec::new();
        for (i, p) in spec["params"]
            .as_array()
            .ok_or_else(|| field(TOP, "params", "an array"))?
            .iter()
            .enumerate()
        {
            let at = format!("param {i}");
            let dtype = dtype_at(p, &at)?;
            params.push(match p["kind"].as_str() {
                Some("buffer") => SpecParam::Buffer {
                    dtype,
                    bytes: elements(p, "data", dtype, &at)?,
                },
                Some("scalar") => SpecParam::Scalar {
                    dtype,
                    bytes: dtype
                        .encode(&p["value"])
                        .map_err(|error| SpecError::Value {
                            at: at.clone(),
                            error,
                        })?,
                },
                _ => return Err(field(&at, "kind", "\"buffer\" or \"scalar\"")),
            });
        }
        let mut expected = Vec::new();
        for (i, e) in spec["expected"]
            .as_array()
            .ok_or_else(|| field(TOP, "expected", "an array"))?
            .iter()
            .enumerate()
        {
            let at = format!("expected {i}");
            let param = e["param"]
                .as_u64()
                .and_then(|p| usize::try_from(p).ok())
                .ok_or_else(|| field(&at, "param", "an index"))?;
            let dtype = dtype_at(e, &at)?;
            expected.push(Expected {
                param,
                dtype,
                bytes: elements(e, "data", dtype, &at)?,
                abs_tol: e["abs_tol"].as_f64().unwrap_or(0.0),
                rel_tol: e["rel_tol"].as_f64().unwrap_or(0.0),
            });
        }
        Ok(LaunchSpec {
            kernel,
            grid,
            block,
            dynamic_shared_bytes,
            params,
            expected,
        })
    }
}

/// One element that did not match.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mismatch {
    /// Element index.
    pub index: usize,
    /// What the kernel left.
    pub got: f64,
    /// What the spec expects.
    pub want: f64,
}

/// The comparison of one expected buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The expectation compared.
    pub expected: Expected,
    /// How many elements differ.
    pub mismatches: usize,
    /// The first of them (as many as the caller asked to keep).
    pub first: Vec<Mismatch>,
}

/// A launch's statistics and each expected buffer's comparison.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// What the emulator counted.
    pub stats: LaunchStats,
    /// One per expectation, in order.
    pub checks: Vec<Check>,
}

impl Outcome {
    /// Whether every expected buffer matches.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.mismatches == 0)
    }
}

/// Runs `spec` on `module` with `options`, keeping the first `keep` mismatches of each buffer,
/// on an emulated memory of 64 GiB.
pub fn run(
    module: &LoadedModule,
    spec: &LaunchSpec,
    options: &LaunchOptions,
    keep: usize,
) -> Result<Outcome, SpecError> {
    run_limited(module, spec, options, keep, Memory::new().limit())
}

/// [`run`] on an emulated memory that refuses allocations beyond `memory_bytes` in total (the
/// spec's buffers and the module's variables).
pub fn run_limited(
    module: &LoadedModule,
    spec: &LaunchSpec,
    options: &LaunchOptions,
    keep: usize,
    memory_bytes: u64,
) -> Result<Outcome, SpecError> {
    let kernel = &spec.kernel;
    let sizes = module
        .param_sizes(kernel)
        .ok_or_else(|| SpecError::UnknownKernel {
            kernel: kernel.clone(),
            kernels: module
                .kernel_names()
                .into_iter()
                .map(str::to_owned)
                .collect(),
        })?;
    if sizes.len() != spec.params.len() {
        return Err(SpecError::ParamCount {
            kernel: kernel.clone(),
            takes: sizes.len(),
            gives: spec.params.len(),
        });
    }
    let mut mem = Memory::with_limit(memory_bytes);
    let mut params = Vec::with_capacity(spec.params.len());
    let mut buffers: Vec<Option<(DevicePtr, usize)>> = Vec::with_capacity(spec.params.len());
    for p in &spec.params {
        match p {
            SpecParam::Buffer { bytes, .. } => {
                let ptr = mem.alloc(bytes.len() as u64).map_err(SpecError::Memory)?;
                mem.write(ptr, bytes).map_err(SpecError::Memory)?;
                buffers.push(Some((ptr, bytes.len())));
                params.push(ParamValue::ptr(ptr));
            }
            SpecParam::Scalar { bytes, .. } => {
                buffers.push(None);
                params.push(ParamValue(bytes.clone()));
            }
        }
    }
    let stats = emu::launch(
        module,
        kernel,
        spec.grid,
        spec.block,
        spec.dynamic_shared_bytes,
        &params,
        &mut mem,
        options,
    )
    .map_err(|error| SpecError::Launch {
        kernel: kernel.clone(),
        error,
    })?;
    let mut checks = Vec::with_capacity(spec.expected.len());
    for (index, e) in spec.expected.iter().enumerate() {
        let (ptr, held) = buffers
            .get(e.param)
            .copied()
            .flatten()
            .ok_or(SpecError::NotABuffer {
                index,
                param: e.param,
            })?;
        if e.bytes.len() != held {
            return Err(SpecError::Length {
                index,
                elements: e.elements(),
                dtype: e.dtype,
                bytes: e.bytes.len(),
                param: e.param,
                held,
            });
        }
        let got = mem.read_vec(ptr, held).map_err(SpecError::Memory)?;
        checks.push(compare(e, &got, keep));
    }
    Ok(Outcome { stats, checks })
}

/// Compares `got` (as long as the expectation) element by element.
fn compare(e: &Expected, got: &[u8], keep: usize) -> Check {
    let size = e.dtype.size();
    let (at, rt) = (e.abs_tol, e.rel_tol);
    let mut check = Check {
        expected: e.clone(),
        mismatches: 0,
        first: Vec::new(),
    };
    for (index, (g, w)) in got
        .chunks_exact(size)
        .zip(e.bytes.chunks_exact(size))
        .enumerate()
    {
        let (gv, gbits) = e.dtype.decode(g);
        let (wv, wbits) = e.dtype.decode(w);
        let ok = if gv.is_nan() || wv.is_nan() {
            gv.is_nan() && wv.is_nan()
        } else if at == 0.0 && rt == 0.0 {
            gbits == wbits
        } else {
            (gv - wv).abs() <= at + rt * wv.abs()
        };
        if !ok {
            check.mismatches += 1;
            if check.first.len() < keep {
                check.first.push(Mismatch {
                    index,
                    got: gv,
                    want: wv,
                });
            }
        }
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(v: Value) -> Result<LaunchSpec, SpecError> {
        LaunchSpec::from_json(&v)
    }

    #[test]
    fn malformed_specs_say_which_field() {
        let ok = serde_json::json!({"kernel": "k", "grid": [1], "block": [32],
            "params": [{"kind": "buffer", "dtype": "u32", "data": [1, 2]}],
            "expected": [{"param": 0, "dtype": "u32", "data": [1, 2]}]});
        assert!(spec(ok.clone()).is_ok());
        let cases: [(&str, Value, &str); 11] = [
            (
                "grid",
                serde_json::json!([0]),
                "launch spec: `grid[0]` is 0, out of range [1, 2147483647]",
            ),
            (
                "grid",
                serde_json::json!([1, 65536]),
                "launch spec: `grid[1]` is 65536, out of range [1, 65535]",
            ),
            (
                "block",
                serde_json::json!([32, 1, 2048]),
                "launch spec: `block[2]` is 2048, out of range [1, 1024]",
            ),
            (
                "block",
                serde_json::json!([64, 32]),
                "launch spec: `block` is 2048, out of range [1, 1024]",
            ),
            (
                "kernel",
                serde_json::json!(3),
                "launch spec: `kernel` must be a string",
            ),
            (
                "grid",
                serde_json::json!([1, 1, 1, 1]),
                "launch spec: `grid` must be an array of 1 to 3 elements",
            ),
            (
                "block",
                serde_json::json!([32, -1]),
                "launch spec: `block[1]` must be a non-negative 32-bit integer",
            ),
            (
                "dynamic_shared_bytes",
                serde_json::json!(1u64 << 40),
                "launch spec: `dynamic_shared_bytes` must be a 32-bit integer",
            ),
            (
                "params",
                serde_json::json!([{"kind": "buffer", "dtype": "c64", "data": []}]),
                "param 0: unknown dtype `c64`",
            ),
            (
                "params",
                serde_json::json!([{"kind": "buffer", "dtype": "s32", "data": [1.5]}]),
                "param 0[0]: 1.5 is not an integer",
            ),
            (
                "expected",
                serde_json::json!([{"param": "x", "dtype": "u32", "data": []}]),
                "expected 0: `param` must be an index",
            ),
        ];
        for (key, value, message) in cases {
            let mut s = ok.clone();
            s[key] = value;
            assert_eq!(spec(s).expect_err(key).to_string(), message);
        }
    }

    #[test]
    fn values_encode_and_decode_by_dtype() {
        let v = |x: Value, d: Dtype| d.decode(&d.encode(&x).expect("encodes")).0;
        assert_eq!(v(serde_json::json!(-3), Dtype::S8), -3.0);
        assert_eq!(v(serde_json::json!(300), Dtype::U8), 44.0);
        assert_eq!(v(serde_json::json!(1.5), Dtype::F16), 1.5);
        assert_eq!(v(serde_json::json!(true), Dtype::Pred), 1.0);
        assert_eq!(v(serde_json::json!("-inf"), Dtype::Bf16), f64::NEG_INFINITY);
        assert!(v(serde_json::json!("nan"), Dtype::F32).is_nan());
        assert_eq!(v(serde_json::json!(u64::MAX), Dtype::U64), u64::MAX as f64);
        assert_eq!(
            Dtype::S32
                .encode(&serde_json::json!("two"))
                .unwrap_err()
                .to_string(),
            "bad value \"two\""
        );
        assert_eq!(
            Dtype::F32
                .encode(&serde_json::json!([1]))
                .unwrap_err()
                .to_string(),
            "bad value [1]"
        );
        assert_eq!(
            Dtype::U8
                .encode(&serde_json::json!(0.5))
                .unwrap_err()
                .to_string(),
            "0.5 is not an integer"
        );
    }

    #[test]
    fn comparison_is_bit_exact_without_tolerances_and_nan_matches_nan() {
        let e = |data: Value, abs_tol: f64| Expected {
            param: 0,
            dtype: Dtype::F32,
            bytes: elements(&serde_json::json!({ "d": data }), "d", Dtype::F32, "t")
                .expect("encodes"),
            abs_tol,
            rel_tol: 0.0,
        };
        let got: Vec<u8> = [1.0f32, f32::NAN, 3.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let c = compare(&e(serde_json::json!([1.0, "nan", 3.0]), 0.0), &got, 5);
        assert_eq!((c.mismatches, c.first.len()), (0, 0));
        let c = compare(&e(serde_json::json!([1.0, "nan", 3.0001]), 0.0), &got, 5);
        assert_eq!(c.mismatches, 1);
        assert_eq!(c.first[0].index, 2);
        let c = compare(&e(serde_json::json!([1.0, "nan", 3.0001]), 0.001), &got, 5);
        assert_eq!(c.mismatches, 0);
        let c = compare(&e(serde_json::json!([2.0, 0.0, 4.0]), 0.0), &got, 1);
        assert_eq!((c.mismatches, c.first.len()), (3, 1));
    }
}
