//! io files (`NAME.io.json`): a module's inputs and expected outputs, and the tolerance rule
//! that decides whether a computed output matches.
//!
//! Format: `{"inputs": [ARRAY...], "outputs": [ARRAY...]}` where `ARRAY` is
//! `{"dtype": "f32", "shape": [4, 5], "data": [...]}`, data row-major; non-finite floats are the
//! strings `"nan"`, `"inf"`, `"-inf"`; `pred` data is 0/1 (true/false accepted). `f16`/`bf16`
//! values are written as their exact `f32` value and must round-trip exactly.
//!
//! Complex arrays (`c64`, `c128`) give each element as two numbers, real then imaginary part
//! (`"data": [re0, im0, re1, im1, ...]`, twice the element count), each exact in the component
//! type (`f32`, `f64`). [`IoCase`] holds them as `c64`/`c128` [`Array`]s; [`IoFile`] as
//! [`ComplexArray`]s (their parts), [`IoArray::into_array`] and [`IoArray::from_array`] between.
//! A complex element matches when both parts match under its part type's tolerance.
//!
//! Tolerance: a float element matches when `|got - want| <= atol + rtol * |want|`, NaN matches
//! NaN, an infinity matches only the same infinity. Defaults per element type
//! ([`Tolerance::for_dtype`]):
//!
//! | dtype | atol | rtol | why |
//! | --- | --- | --- | --- |
//! | `f64` | 1e-9 | 1e-7 | tighter than f32 |
//! | `f32` | 1e-5 | 1e-4 | reduction order and transcendental approximations differ |
//! | `f16` | 1e-3 | 1e-3 | one f16 ulp is at most 2^-10 ≈ 9.8e-4 relative |
//! | `bf16` | 1e-2 | 1e-2 | one bf16 ulp is at most 2^-7 ≈ 7.8e-3 relative |
//! | `c64`, `c128` | as `f32`, `f64` | | applied to each part |
//! | ints, `pred` | 0 | 0 | exact |
use std::fmt;
use std::path::Path;

use serde_json::Value;
use thiserror::Error;

use hlo::PrimitiveType;
use hlo::{element_count, Array, DType, Data};

mod stream;
use stream::{Elem, Fields};

/// Errors reading an io file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum IoError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The text is not JSON.
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A required key is missing or has the wrong JSON type.
    #[error("{location}: {problem}")]
    Structure {
        /// Where, e.g. `inputs[2].shape`.
        location: String,
        /// What is wrong.
        problem: String,
    },
    /// An unknown dtype name.
    #[error("{location}: unknown dtype {name:?}")]
    DType {
        /// Where.
        location: String,
        /// The name found.
        name: String,
    },
    /// The data length does not match the shape.
    #[error("{location}: shape {shape:?} needs {expected} elements, data has {got}")]
    Count {
        /// Where.
        location: String,
        /// The declared shape.
        shape: Vec<usize>,
        /// Product of the shape.
        expected: usize,
        /// Data length.
        got: usize,
    },
    /// A data list is longer than the module's array can be written with (counted, not read:
    /// the reader keeps at most two numbers per element, a complex element's two parts).
    #[error("{location}: data has {got} numbers, more than the module's array of {elements} elements is written with")]
    TooManyElements {
        /// Where.
        location: String,
        /// The module array's element count.
        elements: usize,
        /// The list's length.
        got: usize,
    },
    /// A complex array's parts do not fit its dtype.
    #[error("{location}: {error}")]
    Complex {
        /// Where.
        location: String,
        /// What does not fit.
        error: ComplexArrayError,
    },
    /// An element is not representable in the dtype.
    #[error("{location}: element {index} ({value}) is not a valid {dtype}")]
    Element {
        /// Where.
        location: String,
        /// Element position (row-major).
        index: usize,
        /// The JSON text of the value.
        value: String,
        /// The declared dtype.
        dtype: DType,
    },
}

/// Why parts do not make a [`ComplexArray`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ComplexArrayError {
    /// The dtype is not `c64` or `c128`.
    #[error("{0} is not a complex type")]
    NotComplex(PrimitiveType),
    /// The parts are not the component type with a trailing dimension of 2.
    #[error("{dtype} parts must be {component}[..., 2], got {got}")]
    Parts {
        /// The complex dtype.
        dtype: PrimitiveType,
        /// Its component type.
        component: DType,
        /// The parts' shape, `f32[4,3]`.
        got: String,
    },
}

/// A parsed io file.
#[derive(Clone, Debug, PartialEq)]
pub struct IoCase {
    /// Entry parameters in order.
    pub inputs: Vec<Array>,
    /// Leaves of the expected result in order (a tuple result flattened).
    pub outputs: Vec<Array>,
}

impl IoCase {
    /// Reads and parses an io file.
    pub fn read(path: &Path) -> Result<IoCase, IoError> {
        IoCase::read_expecting(path, &Expected::default())
    }

    /// Reads and parses an io file whose arrays may hold at most the elements `expected` says
    /// (a module's parameters and results): a longer list is refused when it is counted, before
    /// any of it is converted, so a file far larger than the module needs costs no more memory
    /// than the module's own arrays.
    pub fn read_expecting(path: &Path, expected: &Expected) -> Result<IoCase, IoError> {
        let text = read_text(path)?;
        let (inputs, outputs) = stream::read_lists(&text, array_of, expected.limits())?;
        Ok(IoCase { inputs, outputs })
    }

    /// Parses io-file text.
    pub fn parse(text: &str) -> Result<IoCase, IoError> {
        let none = Expected::default();
        let (inputs, outputs) = stream::read_lists(text, array_of, none.limits())?;
        Ok(IoCase { inputs, outputs })
    }
}

/// The most elements each array of an io file may hold: per input and per output, in order
/// (complex arrays count their elements, not their parts); arrays past either list's end are
/// unbounded. The default bounds nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    /// Per entry parameter.
    pub inputs: Vec<usize>,
    /// Per result leaf.
    pub outputs: Vec<usize>,
}

impl Expected {
    /// The bounds of arrays with these element counts.
    pub fn new(inputs: Vec<usize>, outputs: Vec<usize>) -> Expected {
        Expected { inputs, outputs }
    }

    /// The bounds of `module`'s entry: each parameter's element count (a parameter that is not
    /// an array is unbounded), each result leaf's.
    pub fn for_module(module: &hlo::HloModule) -> Expected {
        let count = |s: &hlo::Shape| match s {
            hlo::Shape::Array(a) => usize::try_from(a.element_count()).unwrap_or(usize::MAX),
            _ => usize::MAX,
        };
        let entry = module.entry_computation();
        let inputs = entry.param_shapes().into_iter().map(count).collect();
        let outputs = entry
            .root_instruction()
            .map(|r| {
                r.shape
                    .leaves()
                    .into_iter()
                    .map(|(_, s)| count(s))
                    .collect()
            })
            .unwrap_or_default();
        Expected::new(inputs, outputs)
    }

    fn limits(&self) -> stream::Limits<'_> {
        stream::Limits {
            inputs: &self.inputs,
            outputs: &self.outputs,
        }
    }
}

/// The largest io file read (4 GiB): bigger inputs belong in `.npz` files.
pub const MAX_IO_FILE_BYTES: u64 = 4 << 30;

/// An io file's text, at most [`MAX_IO_FILE_BYTES`].
fn read_text(path: &Path) -> Result<String, IoError> {
    let error = |source| IoError::Read {
        path: path.display().to_string(),
        source,
    };
    let size = std::fs::metadata(path).map_err(error)?.len();
    if size > MAX_IO_FILE_BYTES {
        return Err(error(std::io::Error::other(format!(
            "{size} bytes, over the io-file limit of {MAX_IO_FILE_BYTES} bytes"
        ))));
    }
    std::fs::read_to_string(path).map_err(error)
}

/// A complex io-file array (`c64` or `c128`), which [`Array`] cannot hold: its values as the
/// component float type with a trailing dimension of 2 (real, imaginary), which has the same
/// row-major little-endian bytes as the complex array.
#[derive(Clone, Debug, PartialEq)]
pub struct ComplexArray {
    /// `C64` or `C128`.
    pub dtype: PrimitiveType,
    /// The complex array's dimensions.
    pub dims: Vec<usize>,
    /// `f32[dims..., 2]` (`c64`) or `f64[dims..., 2]` (`c128`).
    pub parts: Array,
}

impl ComplexArray {
    /// A complex array of `dtype` (`C64`/`C128`) from its parts (`dims` plus a trailing 2, of the
    /// component type).
    pub fn new(dtype: PrimitiveType, parts: Array) -> Result<ComplexArray, ComplexArrayError> {
        let component = match dtype {
            PrimitiveType::C64 => DType::F32,
            PrimitiveType::C128 => DType::F64,
            other => return Err(ComplexArrayError::NotComplex(other)),
        };
        match parts.dims().split_last() {
            Some((2, dims)) if parts.dtype() == component => Ok(ComplexArray {
                dtype,
                dims: dims.to_vec(),
                parts,
            }),
            _ => Err(ComplexArrayError::Parts {
                dtype,
                component,
                got: parts.shape_string(),
            }),
        }
    }

    /// `c64[4,4]`.
    pub fn shape_string(&self) -> String {
        let dims: Vec<String> = self.dims.iter().map(usize::to_string).collect();
        format!("{}[{}]", self.dtype, dims.join(","))
    }
}

/// One io-file array of any dtype.
#[derive(Clone, Debug, PartialEq)]
pub enum IoArray {
    /// A dtype [`Array`] holds.
    Real(Array),
    /// `c64` or `c128`.
    Complex(ComplexArray),
}

impl IoArray {
    /// The array, complex ones as `c64`/`c128` [`Array`]s.
    pub fn into_array(self) -> Array {
        match self {
            IoArray::Real(a) => a,
            IoArray::Complex(c) => {
                hlo::from_parts(&c.parts).expect("ComplexArray::new checked the parts")
            }
        }
    }

    /// An array as an io array: complex ones as [`IoArray::Complex`] (their parts).
    pub fn from_array(a: Array) -> IoArray {
        match hlo::parts_of(&a) {
            Some(parts) => IoArray::Complex(ComplexArray {
                dtype: a.dtype().primitive(),
                dims: a.dims().to_vec(),
                parts,
            }),
            None => IoArray::Real(a),
        }
    }

    /// `f32[4,5]`, `c64[4,4]`.
    pub fn shape_string(&self) -> String {
        match self {
            IoArray::Real(a) => a.shape_string(),
            IoArray::Complex(c) => c.shape_string(),
        }
    }
}

/// An io file of any dtypes (complex included); [`IoCase`] is the same file when every array is
/// an [`Array`].
#[derive(Clone, Debug, PartialEq)]
pub struct IoFile {
    /// Entry parameters in order.
    pub inputs: Vec<IoArray>,
    /// Leaves of the result in order.
    pub outputs: Vec<IoArray>,
}

impl IoFile {
    /// Reads and parses an io file.
    pub fn read(path: &Path) -> Result<IoFile, IoError> {
        IoFile::read_expecting(path, &Expected::default())
    }

    /// [`IoCase::read_expecting`] for any dtypes.
    pub fn read_expecting(path: &Path, expected: &Expected) -> Result<IoFile, IoError> {
        let text = read_text(path)?;
        let (inputs, outputs) = stream::read_lists(&text, io_array_of, expected.limits())?;
        Ok(IoFile { inputs, outputs })
    }

    /// Parses io-file text.
    pub fn parse(text: &str) -> Result<IoFile, IoError> {
        let none = Expected::default();
        let (inputs, outputs) = stream::read_lists(text, io_array_of, none.limits())?;
        Ok(IoFile { inputs, outputs })
    }

    /// The io-file text.
    pub fn to_json(&self) -> String {
        let v = serde_json::json!({
            "inputs": self.inputs.iter().map(io_array_to_json).collect::<Vec<_>>(),
            "outputs": self.outputs.iter().map(io_array_to_json).collect::<Vec<_>>(),
        });
        v.to_string()
    }
}

/// Parses one `ARRAY` object of any dtype; `location` names it in errors.
pub fn parse_io_array(v: &Value, location: &str) -> Result<IoArray, IoError> {
    io_array_of(&fields_of(v), location)
}

/// The fields of a document-tree `ARRAY` (what the streaming reader collects).
fn fields_of(v: &Value) -> Fields {
    let data = v.get("data").and_then(Value::as_array).map(|d| {
        let elems: Vec<Elem> = d.iter().map(Elem::of).collect();
        let len = elems.len();
        (elems, len)
    });
    Fields {
        dtype: v.get("dtype").and_then(Value::as_str).map(str::to_owned),
        shape: v.get("shape").cloned(),
        data,
    }
}

/// One array of any dtype from its fields.
fn io_array_of(fields: &Fields, location: &str) -> Result<IoArray, IoError> {
    let dtype = fields
        .dtype
        .as_deref()
        .and_then(PrimitiveType::from_name)
        .filter(|t| t.is_complex());
    let Some(dtype) = dtype else {
        return array_of(fields, location).map(IoArray::Real);
    };
    let dims = shape_of(fields.shape.as_ref(), location)?;
    let (data, len) = data_of(fields, location)?;
    let count = element_count(&dims);
    if len != 2 * count {
        return Err(IoError::Structure {
            location: location.to_string(),
            problem: format!(
                "shape {dims:?} of {dtype} needs {} numbers (real, imaginary per element), data has {len}",
                2 * count,
            ),
        });
    }
    // The parts are checked (finite or the non-finite strings, exact in the component type) as an
    // array of the component type.
    let mut part_dims = dims.clone();
    part_dims.push(2);
    let component = DType::from_name(dtype.complex_component().name())
        .expect("complex components are real dtypes");
    let parts = array_with_shape(component, part_dims, data, location).map_err(|e| match e {
        IoError::Element {
            location,
            index,
            value,
            ..
        } => IoError::Structure {
            location,
            problem: format!(
                "number {index} ({value}, the {} part of element {}) is not a valid {}",
                if index % 2 == 0 { "real" } else { "imaginary" },
                index / 2,
                dtype.complex_component()
            ),
        },
        e => e,
    })?;
    let complex = ComplexArray::new(dtype, parts).map_err(|error| IoError::Complex {
        location: location.to_string(),
        error,
    })?;
    Ok(IoArray::Complex(complex))
}

/// Renders any io array as an `ARRAY` object (complex: real and imaginary parts interleaved).
pub fn io_array_to_json(a: &IoArray) -> Value {
    match a {
        IoArray::Real(a) => array_to_json(a),
        IoArray::Complex(c) => {
            let mut v = array_to_json(&c.parts);
            v["dtype"] = Value::from(c.dtype.name());
            v["shape"] = serde_json::json!(c.dims);
            v
        }
    }
}

fn shape_of(v: Option<&Value>, location: &str) -> Result<Vec<usize>, IoError> {
    v.and_then(Value::as_array)
        .ok_or_else(|| IoError::Structure {
            location: format!("{location}.shape"),
            problem: "missing or not a list".into(),
        })?
        .iter()
        .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| IoError::Structure {
            location: format!("{location}.shape"),
            problem: "dimensions must be non-negative integers".into(),
        })
}

/// The kept elements and the list's length, or the error of a missing list. A list longer
/// than the reader's limit (kept < length) is refused here, before any element is converted.
fn data_of<'a>(fields: &'a Fields, location: &str) -> Result<(&'a [Elem], usize), IoError> {
    let (data, len) = fields.data.as_ref().ok_or_else(|| IoError::Structure {
        location: format!("{location}.data"),
        problem: "missing or not a list".into(),
    })?;
    if data.len() < *len {
        return Err(IoError::TooManyElements {
            location: location.to_string(),
            elements: data.len() / 2,
            got: *len,
        });
    }
    Ok((data, *len))
}

/// Parses one `ARRAY` object; `location` names it in errors. Complex dtypes are read as
/// [`parse_io_array`] reads them (interleaved parts) into a `c64`/`c128` [`Array`].
pub fn parse_array(v: &Value, location: &str) -> Result<Array, IoError> {
    array_of(&fields_of(v), location)
}

/// One array from its fields (complex ones as `c64`/`c128` arrays).
fn array_of(fields: &Fields, location: &str) -> Result<Array, IoError> {
    let name = fields.dtype.as_deref().ok_or_else(|| IoError::Structure {
        location: format!("{location}.dtype"),
        problem: "missing or not a string".into(),
    })?;
    if PrimitiveType::from_name(name).is_some_and(PrimitiveType::is_complex) {
        // Read (and checked) as parts by `io_array_of`, then held as one complex array.
        return io_array_of(fields, location).map(IoArray::into_array);
    }
    let dtype = DType::from_name(name).ok_or_else(|| IoError::DType {
        location: format!("{location}.dtype"),
        name: name.to_string(),
    })?;
    let shape = shape_of(fields.shape.as_ref(), location)?;
    let (data, _) = data_of(fields, location)?;
    array_with_shape(dtype, shape, data, location)
}

/// The array of `dtype` and `shape` from its elements: the count, then each element.
fn array_with_shape(
    dtype: DType,
    shape: Vec<usize>,
    data: &[Elem],
    location: &str,
) -> Result<Array, IoError> {
    let expected = element_count(&shape);
    if data.len() != expected {
        return Err(IoError::Count {
            location: location.to_string(),
            shape,
            expected,
            got: data.len(),
        });
    }
    let bad = |index: usize| IoError::Element {
        location: format!("{location}.data"),
        index,
        value: data.get(index).map(Elem::text).unwrap_or_default(),
        dtype,
    };
    let num = |x: &Elem| match x {
        Elem::Num(n) => Some(n.clone()),
        _ => None,
    };
    let elements = if dtype.is_float() {
        let mut out = Vec::with_capacity(data.len());
        for (i, x) in data.iter().enumerate() {
            let f = json_float(x).ok_or_else(|| bad(i))?;
            // Narrow types must hold the value exactly (the file writes the stored value).
            // (f8e4m3fn has no infinity: "inf" rounds to NaN and is refused.)
            let narrowed = dtype.primitive().round_float(f).unwrap_or(f);
            // Exact up to decimal-rendering slack of a few f64 ulps.
            let exact = f.is_nan() || narrowed == f || (narrowed - f).abs() <= f.abs() * 1e-15;
            if !exact {
                return Err(bad(i));
            }
            out.push(f);
        }
        Data::from_wide_f(dtype, out)
    } else if dtype == DType::Pred {
        let mut out = Vec::with_capacity(data.len());
        for (i, x) in data.iter().enumerate() {
            out.push(match x {
                Elem::Bool(b) => *b,
                Elem::Num(n) if n.as_u64() == Some(0) => false,
                Elem::Num(n) if n.as_u64() == Some(1) => true,
                _ => return Err(bad(i)),
            });
        }
        Data::Pred(out)
    } else if dtype.is_signed_int() {
        let bits = dtype.bit_width();
        let (lo, hi) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
        let mut out = Vec::with_capacity(data.len());
        for (i, x) in data.iter().enumerate() {
            let n = num(x).and_then(|n| n.as_i64()).ok_or_else(|| bad(i))?;
            if i128::from(n) < lo || i128::from(n) > hi {
                return Err(bad(i));
            }
            out.push(n);
        }
        Data::from_wide_s(dtype, out)
    } else {
        let bits = dtype.bit_width();
        let hi = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut out = Vec::with_capacity(data.len());
        for (i, x) in data.iter().enumerate() {
            let n = num(x)
                .and_then(|n| n.as_u64())
                .filter(|n| *n <= hi)
                .ok_or_else(|| bad(i))?;
            out.push(n);
        }
        Data::from_wide_u(dtype, out)
    };
    Array::new(shape, elements).map_err(|e| IoError::Structure {
        location: location.to_string(),
        problem: e.to_string(),
    })
}

/// A JSON float: a number, or one of the strings `"nan"`, `"inf"`, `"-inf"`.
fn json_float(v: &Elem) -> Option<f64> {
    match v {
        Elem::Num(n) => n.as_f64(),
        Elem::Str(s) => match &**s {
            "nan" | "NaN" | "-nan" => Some(f64::NAN),
            "inf" | "Infinity" => Some(f64::INFINITY),
            "-inf" | "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// Renders an array as an io-file `ARRAY` object (floats as exact decimals, non-finite as strings).
pub fn array_to_json(a: &Array) -> Value {
    if a.dtype().is_complex() {
        return io_array_to_json(&IoArray::from_array(a.clone()));
    }
    let data: Vec<Value> = match a.data() {
        Data::Pred(v) => v.iter().map(|b| Value::from(u8::from(*b))).collect(),
        d if d.dtype().is_float() => d
            .to_f64_vec()
            .into_iter()
            .map(|f| {
                if f.is_nan() {
                    Value::from("nan")
                } else if f == f64::INFINITY {
                    Value::from("inf")
                } else if f == f64::NEG_INFINITY {
                    Value::from("-inf")
                } else {
                    Value::from(f)
                }
            })
            .collect(),
        Data::U64(v) => v.iter().map(|x| Value::from(*x)).collect(),
        d => (0..d.len())
            .map(|i| Value::from(d.get_i64(i).unwrap_or_default()))
            .collect(),
    };
    serde_json::json!({"dtype": a.dtype().name(), "shape": a.dims(), "data": data})
}

/// Renders a whole io case as JSON text.
pub fn case_to_json(case: &IoCase) -> String {
    let v = serde_json::json!({
        "inputs": case.inputs.iter().map(array_to_json).collect::<Vec<_>>(),
        "outputs": case.outputs.iter().map(array_to_json).collect::<Vec<_>>(),
    });
    v.to_string()
}

/// The tolerance rule `|got - want| <= atol + rtol * |want|`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Absolute term.
    pub atol: f64,
    /// Relative term.
    pub rtol: f64,
}

impl Tolerance {
    /// Equal values only (NaN still matches NaN); the tolerance of integer and pred dtypes.
    pub const EXACT: Tolerance = Tolerance {
        atol: 0.0,
        rtol: 0.0,
    };

    /// The default for an element type (see the module docs).
    pub fn for_dtype(dtype: DType) -> Tolerance {
        match dtype {
            // Complex types: the tolerance of their parts, applied to each part.
            DType::F64 | DType::C128 => Tolerance {
                atol: 1e-9,
                rtol: 1e-7,
            },
            DType::F32 | DType::C64 => Tolerance {
                atol: 1e-5,
                rtol: 1e-4,
            },
            DType::F16 => Tolerance {
                atol: 1e-3,
                rtol: 1e-3,
            },
            DType::BF16 => Tolerance {
                atol: 1e-2,
                rtol: 1e-2,
            },
            _ => Tolerance::EXACT,
        }
    }

    /// Whether `got` matches `want` (NaN matches NaN; infinities only themselves).
    pub fn matches(&self, got: f64, want: f64) -> bool {
        if want.is_nan() || got.is_nan() {
            return want.is_nan() && got.is_nan();
        }
        if want.is_infinite() || got.is_infinite() {
            return got == want;
        }
        (got - want).abs() <= self.atol + self.rtol * want.abs()
    }
}

/// The first element that did not match.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Row-major multi-index.
    pub index: Vec<usize>,
    /// Computed value.
    pub got: Scalar,
    /// Expected value.
    pub want: Scalar,
}

/// One element's value as a mismatch reports it: integers exactly (an s64 or u64 above 2^53
/// printed through f64 could show two different values as the same number).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A float (or a complex part).
    Float(f64),
    /// An integer or `pred` (0/1).
    Int(i128),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Float(v) => write!(f, "{v}"),
            Scalar::Int(v) => write!(f, "{v}"),
        }
    }
}

/// Result of comparing one computed array with the expected one.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// True when dtype and shape agree and every element matches.
    pub ok: bool,
    /// A dtype or shape disagreement, if any (then no elements were compared).
    pub structural: Option<String>,
    /// Largest `|got - want|` over finite pairs (0 when none).
    pub max_abs_err: f64,
    /// Number of mismatching elements.
    pub mismatches: usize,
    /// The first mismatching element.
    pub first: Option<Mismatch>,
}

/// Compares `got` with `want` under `tol` (integers and `pred` are compared exactly whatever
/// `tol` says, through their exact `i64`/`u64` values; complex numbers part by part, each part
/// under `tol`, a mismatch reporting the element's index and the first part that differs).
pub fn compare(got: &Array, want: &Array, tol: Tolerance) -> Comparison {
    if let (true, Some(g), Some(w)) = (
        got.dtype() == want.dtype() && got.dims() == want.dims(),
        hlo::parts_of(got),
        hlo::parts_of(want),
    ) {
        let mut c = compare(&g, &w, tol);
        if let Some(m) = &mut c.first {
            m.index.pop();
        }
        return c;
    }
    if got.dtype() != want.dtype() || got.dims() != want.dims() {
        return Comparison {
            ok: false,
            structural: Some(format!(
                "got {}, want {}",
                got.shape_string(),
                want.shape_string()
            )),
            max_abs_err: 0.0,
            mismatches: 0,
            first: None,
        };
    }
    let float = want.dtype().is_float();
    let (g, w) = (got.data().to_wide(), want.data().to_wide());
    let mut max_abs_err = 0.0f64;
    let mut mismatches = 0usize;
    let mut first_at = None;
    let gf = got.data().to_f64_vec();
    let wf = want.data().to_f64_vec();
    for i in 0..want.len() {
        let (a, b) = (
            gf.get(i).copied().unwrap_or(f64::NAN),
            wf.get(i).copied().unwrap_or(0.0),
        );
        let ok = if float {
            tol.matches(a, b)
        } else {
            match (&g, &w) {
                (hlo::Wide::S(x), hlo::Wide::S(y)) => x.get(i) == y.get(i),
                (hlo::Wide::U(x), hlo::Wide::U(y)) => x.get(i) == y.get(i),
                (hlo::Wide::P(x), hlo::Wide::P(y)) => x.get(i) == y.get(i),
                _ => false,
            }
        };
        if a.is_finite() && b.is_finite() {
            max_abs_err = max_abs_err.max((a - b).abs());
        }
        if !ok {
            mismatches += 1;
            if first_at.is_none() {
                first_at = Some(i);
            }
        }
    }
    let scalar = |wide: &hlo::Wide, f: &[f64], i: usize| {
        use hlo::Wide;
        let exact = match wide {
            _ if float => None,
            Wide::S(v) => v.get(i).map(|&x| i128::from(x)),
            Wide::U(v) => v.get(i).map(|&x| i128::from(x)),
            Wide::P(v) => v.get(i).map(|&x| i128::from(u8::from(x))),
            _ => None,
        };
        exact.map_or_else(
            || Scalar::Float(f.get(i).copied().unwrap_or(f64::NAN)),
            Scalar::Int,
        )
    };
    let first = first_at.map(|i| Mismatch {
        index: unravel(i, want.dims()),
        got: scalar(&g, &gf, i),
        want: scalar(&w, &wf, i),
    });
    Comparison {
        ok: mismatches == 0,
        structural: None,
        max_abs_err,
        mismatches,
        first,
    }
}

/// The row-major multi-index of linear position `i` in `dims`.
pub fn unravel(mut i: usize, dims: &[usize]) -> Vec<usize> {
    let mut out = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        let n = dims[d].max(1);
        out[d] = i % n;
        i /= n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_all_kinds() {
        let case = IoCase::parse(
            r#"{"inputs": [{"dtype": "f32", "shape": [3], "data": [1.5, "nan", "-inf"]},
                           {"dtype": "pred", "shape": [2], "data": [0, 1]},
                           {"dtype": "s8", "shape": [], "data": [-128]},
                           {"dtype": "bf16", "shape": [1], "data": [0.57421875]}],
                "outputs": [{"dtype": "u32", "shape": [1, 1], "data": [4294967295]}]}"#,
        )
        .unwrap();
        assert_eq!(case.inputs.len(), 4);
        let f = case.inputs[0].data().to_f64_vec();
        assert_eq!(f[0], 1.5);
        assert!(f[1].is_nan());
        assert_eq!(f[2], f64::NEG_INFINITY);
        assert_eq!(case.inputs[1].data(), &Data::Pred(vec![false, true]));
        assert_eq!(case.inputs[2].data(), &Data::S8(vec![-128]));
        assert_eq!(case.outputs[0].data(), &Data::U32(vec![u32::MAX]));
    }

    #[test]
    fn typed_errors() {
        let e = |t: &str| IoCase::parse(t).unwrap_err();
        assert!(matches!(
            e(r#"{"inputs": [{"dtype": "f33", "shape": [], "data": [1]}], "outputs": []}"#),
            IoError::DType { .. }
        ));
        assert!(matches!(
            e(r#"{"inputs": [{"dtype": "f32", "shape": [2], "data": [1]}], "outputs": []}"#),
            IoError::Count {
                expected: 2,
                got: 1,
                ..
            }
        ));
        assert!(matches!(
            e(r#"{"inputs": [{"dtype": "s8", "shape": [], "data": [300]}], "outputs": []}"#),
            IoError::Element { .. }
        ));
        assert!(matches!(
            e(r#"{"inputs": [{"dtype": "f32", "shape": [], "data": ["nope"]}], "outputs": []}"#),
            IoError::Element { .. }
        ));
        assert!(matches!(e(r#"{"inputs": []}"#), IoError::Structure { .. }));
        assert!(matches!(e("{"), IoError::Json(_)));
    }

    #[test]
    fn tolerance_rule() {
        let t = Tolerance::for_dtype(DType::F32);
        assert!(t.matches(1.0 + 1e-5, 1.0));
        assert!(!t.matches(1.001, 1.0));
        assert!(t.matches(f64::NAN, f64::NAN));
        assert!(!t.matches(0.0, f64::NAN));
        assert!(t.matches(f64::INFINITY, f64::INFINITY));
        assert!(!t.matches(f64::NEG_INFINITY, f64::INFINITY));
        assert!(!t.matches(1e30, f64::INFINITY));
    }

    #[test]
    fn integer_mismatches_print_exactly() {
        // 2^53 + 1 and 2^53 are one f64 value: the mismatch must still show two numbers.
        let big = 9_007_199_254_740_993i64;
        let got = Array::new(vec![1], Data::S64(vec![big])).unwrap();
        let want = Array::new(vec![1], Data::S64(vec![big - 1])).unwrap();
        let c = compare(&got, &want, Tolerance::EXACT);
        let m = c.first.unwrap();
        assert_eq!(
            (m.got.to_string(), m.want.to_string()),
            ("9007199254740993".to_owned(), "9007199254740992".to_owned())
        );
        let u = Array::new(vec![1], Data::U64(vec![u64::MAX])).unwrap();
        let u2 = Array::new(vec![1], Data::U64(vec![u64::MAX - 1])).unwrap();
        let m = compare(&u, &u2, Tolerance::EXACT).first.unwrap();
        assert_eq!(m.got, Scalar::Int(i128::from(u64::MAX)));
    }

    #[test]
    fn comparison_reports_first_mismatch() {
        let want = Array::new(vec![2, 2], Data::F32(vec![1.0, 2.0, 3.0, 4.0])).unwrap();
        let got = Array::new(vec![2, 2], Data::F32(vec![1.0, 2.0, 3.5, 4.0])).unwrap();
        let c = compare(&got, &want, Tolerance::for_dtype(DType::F32));
        assert!(!c.ok);
        assert_eq!(c.mismatches, 1);
        let m = c.first.unwrap();
        assert_eq!(
            (m.index, m.got, m.want),
            (vec![1, 0], Scalar::Float(3.5), Scalar::Float(3.0))
        );
        assert_eq!(c.max_abs_err, 0.5);
        let ints = Array::new(vec![1], Data::S32(vec![1])).unwrap();
        let ints2 = Array::new(vec![1], Data::S32(vec![2])).unwrap();
        assert!(
            !compare(
                &ints,
                &ints2,
                Tolerance {
                    atol: 10.0,
                    rtol: 0.0
                }
            )
            .ok
        );
        assert!(compare(&got, &got, Tolerance::EXACT).ok);
        assert!(compare(&ints, &want, Tolerance::EXACT).structural.is_some());
    }

    #[test]
    fn json_round_trip() {
        let case = IoCase {
            inputs: vec![
                Array::new(vec![3], Data::F32(vec![0.1, f32::NAN, f32::INFINITY])).unwrap(),
            ],
            outputs: vec![Array::new(vec![], Data::S64(vec![-5])).unwrap()],
        };
        let back = IoCase::parse(&case_to_json(&case)).unwrap();
        assert_eq!(back.outputs, case.outputs);
        assert_eq!(back.inputs[0].data().to_f64_vec()[0], f64::from(0.1f32));
    }

    #[test]
    fn complex_arrays_read_and_write_interleaved() {
        let text = r#"{"inputs": [{"dtype": "c64", "shape": [2], "data": [1.5, -2, "nan", "inf"]},
                                   {"dtype": "s32", "shape": [], "data": [7]}],
                       "outputs": [{"dtype": "c128", "shape": [1, 1], "data": [0.1, 0.2]}]}"#;
        let file = IoFile::parse(text).unwrap();
        let IoArray::Complex(c) = &file.inputs[0] else {
            panic!("{:?}", file.inputs[0]);
        };
        assert_eq!((c.dtype, c.dims.as_slice()), (PrimitiveType::C64, &[2][..]));
        assert_eq!(c.parts.dims(), &[2, 2]);
        let f = c.parts.data().to_f64_vec();
        assert_eq!((f[0], f[1]), (1.5, -2.0));
        assert!(f[2].is_nan() && f[3] == f64::INFINITY);
        assert_eq!(file.inputs[0].shape_string(), "c64[2]");
        assert!(matches!(&file.inputs[1], IoArray::Real(a) if a.data() == &Data::S32(vec![7])));
        let IoArray::Complex(o) = &file.outputs[0] else {
            panic!()
        };
        assert_eq!(o.parts.data(), &Data::F64(vec![0.1, 0.2]));
        // Written back interleaved, under the complex dtype and shape, and read back equal.
        let back = IoFile::parse(&file.to_json()).unwrap();
        assert_eq!(back.outputs, file.outputs);
        assert_eq!(
            io_array_to_json(&file.outputs[0]),
            serde_json::json!({"dtype": "c128", "shape": [1, 1], "data": [0.1, 0.2]})
        );
    }

    #[test]
    fn complex_errors_and_the_real_only_reader() {
        let e = |t: &str| IoFile::parse(t).unwrap_err().to_string();
        // One number short: counted in numbers, not elements.
        let short =
            e(r#"{"inputs": [{"dtype": "c64", "shape": [2], "data": [1, 2, 3]}], "outputs": []}"#);
        assert!(short.contains("needs 4 numbers"), "{short}");
        // A part that f32 cannot hold exactly names the part and the element.
        let inexact =
            e(r#"{"inputs": [{"dtype": "c64", "shape": [1], "data": [1, 0.1]}], "outputs": []}"#);
        assert!(inexact.contains("imaginary part of element 0"), "{inexact}");
        // IoCase holds complex arrays as c64/c128 Arrays, written back as the same text; real
        // files read the same through both.
        let complex =
            r#"{"inputs": [], "outputs": [{"dtype": "c128", "shape": [], "data": [1, 2]}]}"#;
        let case = IoCase::parse(complex).unwrap();
        let z = hlo::Complex::new(1.0, 2.0);
        assert_eq!(case.outputs[0].data(), &Data::C128(vec![z]));
        assert_eq!(IoCase::parse(&case_to_json(&case)).unwrap(), case);
        let file = IoFile::parse(complex).unwrap();
        assert_eq!(file.outputs[0].clone().into_array(), case.outputs[0]);
        assert_eq!(
            IoArray::from_array(case.outputs[0].clone()),
            file.outputs[0]
        );
        // Compared part by part: a mismatch names the element and the part's values.
        let off = hlo::from_parts(&Array::new(vec![2], Data::F64(vec![1.0, 2.5])).unwrap())
            .unwrap()
            .reshape(vec![])
            .unwrap()
            .clone();
        let c = compare(&off, &case.outputs[0], Tolerance::EXACT);
        let m = c.first.unwrap();
        assert_eq!(
            (c.mismatches, m.index, m.got, m.want),
            (1, vec![], Scalar::Float(2.5), Scalar::Float(2.0))
        );
        let real = r#"{"inputs": [{"dtype": "f32", "shape": [1], "data": [0.5]}], "outputs": []}"#;
        let (case, file) = (IoCase::parse(real).unwrap(), IoFile::parse(real).unwrap());
        assert_eq!(file.inputs, vec![IoArray::Real(case.inputs[0].clone())]);
        assert_eq!(
            ComplexArray::new(PrimitiveType::C64, case.inputs[0].clone())
                .unwrap_err()
                .to_string(),
            "c64 parts must be f32[..., 2], got f32[1]"
        );
        assert_eq!(
            ComplexArray::new(PrimitiveType::F32, case.inputs[0].clone())
                .unwrap_err()
                .to_string(),
            "f32 is not a complex type"
        );
    }
}
