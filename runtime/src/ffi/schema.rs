//! Typed attribute schemas and the load-time checks of a call's operands and results.
//!
//! A typed-FFI custom call carries its attributes as MLIR attribute text, one entry per element of
//! the StableHLO op's `mhlo.backend_config` dictionary (`true`, `0 : ui8`, `5 : i64`, `"text"`,
//! `1.5 : f32`). XLA's FFI decodes each into the type the handler binds (`Attr<bool>("lower")`)
//! and fails the call on a mismatch; here the same check runs at load, so a missing, unknown or
//! mistyped attribute is a load error naming it, never a wrong answer.
use std::collections::BTreeMap;

use proto::xla::{PrimitiveType, ShapeProto};

/// The type of an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrType {
    /// `true` or `false` (MLIR `i1`).
    Bool,
    /// An integer of `bits` bits, signed (`iN`, `siN`) or unsigned (`uiN`). A bare integer
    /// (no `: type`) is MLIR's `i64`.
    Int {
        /// Width in bits: 8, 16, 32 or 64.
        bits: u8,
        /// Signed (`iN`/`siN`) or unsigned (`uiN`).
        signed: bool,
    },
    /// A float of `bits` bits (`f32`, `f64`); a bare float is `f64`.
    Float {
        /// 32 or 64.
        bits: u8,
    },
    /// A quoted string.
    Str,
}

impl std::fmt::Display for AttrType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttrType::Bool => write!(f, "bool"),
            AttrType::Int { bits, signed: true } => write!(f, "i{bits}"),
            AttrType::Int {
                bits,
                signed: false,
            } => write!(f, "ui{bits}"),
            AttrType::Float { bits } => write!(f, "f{bits}"),
            AttrType::Str => write!(f, "string"),
        }
    }
}

/// One declared attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttrSpec {
    /// The attribute's name (a key of `mhlo.backend_config`).
    pub name: &'static str,
    /// Its type.
    pub ty: AttrType,
    /// `None`: required. `Some(text)`: optional, with this MLIR text as the default.
    pub default: Option<&'static str>,
}

impl AttrSpec {
    /// A required attribute.
    pub const fn required(name: &'static str, ty: AttrType) -> AttrSpec {
        AttrSpec {
            name,
            ty,
            default: None,
        }
    }

    /// The schema's printed form: `bool`, `ui8`, or `optional ui8 = 0 : ui8`.
    pub fn describe(&self) -> String {
        match self.default {
            None => self.ty.to_string(),
            Some(d) => format!("optional {} = {d}", self.ty),
        }
    }
}

/// A decoded attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A bool.
    Bool(bool),
    /// An integer (range-checked against its declared width).
    Int(i128),
    /// A float.
    Float(f64),
    /// A string (unescaped).
    Str(String),
}

/// Decoded attributes by name: every declared attribute, defaults filled in.
pub type Attributes = BTreeMap<String, AttrValue>;

/// A load-time check of a call's shapes (and attribute-dependent shapes).
pub type LoadCheck = fn(&CallShapes<'_>) -> Result<(), ShapeError>;

/// What a load-time check is given.
#[derive(Debug)]
pub struct CallShapes<'a> {
    /// The operands' shapes (`None`: null or shapeless).
    pub operands: &'a [Option<ArrayShape>],
    /// The results' shapes.
    pub results: &'a [Option<ArrayShape>],
    /// The decoded attributes.
    pub attributes: &'a Attributes,
}

/// A refused shape: the field it is about, relative to the custom-call thunk
/// (`operands[0].shaped_slice.shape.element_type`), and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError {
    /// The field, relative to `custom_call_thunk`.
    pub field: String,
    /// What the handler takes and what the artifact has.
    pub message: String,
}

/// The shape of one array operand or result, as a handler reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayShape {
    /// The `xla.PrimitiveType` number (see [`ArrayShape::ty`]).
    pub element_type: i32,
    /// The dimensions, major-to-minor in the logical order.
    pub dimensions: Vec<i64>,
    /// The layout: dimension numbers from the fastest-varying; the artifact's, or the default
    /// descending order when it gave no layout.
    pub minor_to_major: Vec<i64>,
}

impl ArrayShape {
    /// The shape of a `ShapeProto` (no layout: the default, row-major).
    pub fn from_proto(s: &ShapeProto) -> ArrayShape {
        let minor_to_major = match &s.layout {
            Some(l) if !l.minor_to_major.is_empty() || s.dimensions.is_empty() => {
                l.minor_to_major.clone()
            }
            _ => (0..s.dimensions.len() as i64).rev().collect(),
        };
        ArrayShape {
            element_type: s.element_type,
            dimensions: s.dimensions.clone(),
            minor_to_major,
        }
    }

    /// A shape with the default (row-major) layout.
    pub fn row_major(ty: PrimitiveType, dimensions: &[i64]) -> ArrayShape {
        ArrayShape {
            element_type: ty as i32,
            dimensions: dimensions.to_vec(),
            minor_to_major: (0..dimensions.len() as i64).rev().collect(),
        }
    }

    /// A shape with JAX's column-major matrix layout (`[r-2, r-1, r-3, ..., 0]`).
    pub fn column_major(ty: PrimitiveType, dimensions: &[i64]) -> ArrayShape {
        ArrayShape {
            element_type: ty as i32,
            dimensions: dimensions.to_vec(),
            minor_to_major: column_major_layout(dimensions.len()),
        }
    }

    /// The element type, if it is a known one.
    pub fn ty(&self) -> Option<PrimitiveType> {
        PrimitiveType::try_from(self.element_type).ok()
    }

    /// The number of elements, with checked arithmetic: `None` when a dimension is negative or
    /// the product overflows 64 bits (an artifact's `[3, 6148914691236517212]` wrapped to 20
    /// elements and passed the slice-size check).
    pub fn elements(&self) -> Option<u64> {
        self.dimensions
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(u64::try_from(d).ok()?))
    }

    /// The byte size at `width` bytes per element, checked as [`ArrayShape::elements`].
    pub fn byte_size(&self, width: u64) -> Option<u64> {
        self.elements()?.checked_mul(width)
    }
}

/// JAX's `_column_major_matrix_layout`: each matrix column-major, batch dimensions major.
pub fn column_major_layout(rank: usize) -> Vec<i64> {
    if rank < 2 {
        return (0..rank as i64).rev().collect();
    }
    let r = rank as i64;
    let mut v = vec![r - 2, r - 1];
    v.extend((0..r - 2).rev());
    v
}

/// Decodes and checks `attrs` against `specs`: the error names the attribute (relative field,
/// message).
pub fn check_attributes(
    target: &str,
    specs: &[AttrSpec],
    attrs: &BTreeMap<String, String>,
) -> Result<Attributes, ShapeError> {
    let takes = || {
        if specs.is_empty() {
            "it takes none".to_owned()
        } else {
            let list: Vec<String> = specs
                .iter()
                .map(|s| format!("{}: {}", s.name, s.describe()))
                .collect();
            format!("it takes {}", list.join(", "))
        }
    };
    if let Some(unknown) = attrs.keys().find(|k| !specs.iter().any(|s| s.name == *k)) {
        return Err(ShapeError {
            field: format!("attributes[\"{}\"]", unknown.escape_debug()),
            message: format!("{target} has no attribute {unknown:?} ({})", takes()),
        });
    }
    let mut out = Attributes::new();
    for spec in specs {
        let text = match (attrs.get(spec.name), spec.default) {
            (Some(t), _) => t.as_str(),
            (None, Some(d)) => d,
            (None, None) => {
                return Err(ShapeError {
                    field: "attributes".to_owned(),
                    message: format!(
                        "{target} needs the attribute {} ({}), the artifact does not set it",
                        spec.name, spec.ty
                    ),
                })
            }
        };
        let value = parse_attribute(text, spec.ty).map_err(|why| ShapeError {
            field: format!("attributes[\"{}\"]", spec.name),
            message: format!(
                "{target} takes {} as {}, the artifact has {text:?} ({why})",
                spec.name,
                spec.ty.with_example()
            ),
        })?;
        out.insert(spec.name.to_owned(), value);
    }
    Ok(out)
}

impl AttrType {
    fn with_example(&self) -> String {
        match self {
            AttrType::Bool => "a bool (true or false)".to_owned(),
            AttrType::Int { .. } => format!("an {self} (\"1 : {self}\")"),
            AttrType::Float { .. } => format!("an {self} (\"1.0 : {self}\")"),
            AttrType::Str => "a string (\"\\\"text\\\"\")".to_owned(),
        }
    }
}

/// Why attribute text does not parse as the type it must have; `Display` completes the load
/// error's `the artifact has "TEXT" (...)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AttrParseError {
    /// A bool that is neither `true` nor `false`.
    #[error("not true or false")]
    NotBool,
    /// A type suffix other than the attribute's (`: i32` for an `i64`).
    #[error("type {0}")]
    Type(String),
    /// A float value that does not parse.
    #[error("not a number")]
    NotANumber,
    /// An integer value that does not parse.
    #[error("not an integer")]
    NotAnInteger,
    /// An integer outside its type's range.
    #[error("out of range for {0}")]
    OutOfRange(String),
    /// A string without its quotes.
    #[error("not a quoted string")]
    NotQuoted,
    /// A string ending inside an escape.
    #[error("a cut escape")]
    CutEscape,
    /// A `\XX` escape that is not hexadecimal.
    #[error("a bad escape")]
    BadEscape,
}

/// Parses MLIR attribute text as `ty`.
pub fn parse_attribute(text: &str, ty: AttrType) -> Result<AttrValue, AttrParseError> {
    let text = text.trim();
    let (value, suffix) = match text.rsplit_once(" : ") {
        Some((v, t)) if !text.starts_with('"') => (v.trim(), Some(t.trim())),
        _ => (text, None),
    };
    match ty {
        AttrType::Bool => match (value, suffix) {
            ("true", None | Some("i1")) => Ok(AttrValue::Bool(true)),
            ("false", None | Some("i1")) => Ok(AttrValue::Bool(false)),
            _ => Err(AttrParseError::NotBool),
        },
        AttrType::Int { bits, signed } => parse_int(value, suffix.unwrap_or("i64"), bits, signed),
        AttrType::Float { bits } => {
            let t = suffix.unwrap_or("f64");
            if t != format!("f{bits}") {
                return Err(AttrParseError::Type(t.to_owned()));
            }
            value
                .parse::<f64>()
                .map(AttrValue::Float)
                .map_err(|_| AttrParseError::NotANumber)
        }
        AttrType::Str => parse_string(text),
    }
}

fn parse_int(value: &str, t: &str, bits: u8, signed: bool) -> Result<AttrValue, AttrParseError> {
    let want_signed = [format!("i{bits}"), format!("si{bits}")];
    let ok = if signed {
        want_signed.iter().any(|w| w == t)
    } else {
        t == format!("ui{bits}")
    };
    if !ok {
        return Err(AttrParseError::Type(t.to_owned()));
    }
    let v: i128 = value.parse().map_err(|_| AttrParseError::NotAnInteger)?;
    let (lo, hi) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    if v < lo || v > hi {
        return Err(AttrParseError::OutOfRange(t.to_owned()));
    }
    Ok(AttrValue::Int(v))
}

fn parse_string(text: &str) -> Result<AttrValue, AttrParseError> {
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or(AttrParseError::NotQuoted)?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(h1) => {
                let h2 = chars.next().ok_or(AttrParseError::CutEscape)?;
                let b = u8::from_str_radix(&format!("{h1}{h2}"), 16)
                    .map_err(|_| AttrParseError::BadEscape)?;
                out.push(b as char);
            }
            None => return Err(AttrParseError::CutEscape),
        }
    }
    Ok(AttrValue::Str(out))
}

/// Reads a decoded bool attribute (as the load check left it; `attrs` raw text at run time).
pub fn bool_attr(
    attrs: &BTreeMap<String, String>,
    name: &str,
) -> Result<bool, super::HandlerError> {
    match attrs.get(name).map(|t| parse_attribute(t, AttrType::Bool)) {
        Some(Ok(AttrValue::Bool(b))) => Ok(b),
        Some(_) => Err(super::HandlerError::NotABool(name.to_owned())),
        None => Err(super::HandlerError::MissingAttribute(name.to_owned())),
    }
}

/// A decoded bool from load-checked attributes.
pub fn decoded_bool(attrs: &Attributes, name: &str) -> bool {
    matches!(attrs.get(name), Some(AttrValue::Bool(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each way attribute text fails, with the words the load error puts in its parentheses.
    #[test]
    fn each_attribute_parse_error_has_its_message() {
        let i8 = AttrType::Int {
            bits: 8,
            signed: true,
        };
        let cases: [(&str, AttrType, &str); 8] = [
            ("1 : i32", AttrType::Bool, "not true or false"),
            ("1.0 : f64", AttrType::Float { bits: 32 }, "type f64"),
            ("x : f32", AttrType::Float { bits: 32 }, "not a number"),
            ("x : i8", i8, "not an integer"),
            ("300 : i8", i8, "out of range for i8"),
            ("text", AttrType::Str, "not a quoted string"),
            ("\"a\\4\"", AttrType::Str, "a cut escape"),
            ("\"a\\zz\"", AttrType::Str, "a bad escape"),
        ];
        for (text, ty, want) in cases {
            let got = parse_attribute(text, ty).map_err(|e| e.to_string());
            assert_eq!(got, Err(want.to_owned()), "{text:?} as {ty}");
        }
    }
}
