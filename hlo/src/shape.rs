//! Shapes: element types, array shapes with optional layouts, tuples and tokens.
//!
//! A [`Shape`] is what an HLO instruction produces. Array shapes carry their element type, their
//! dimension sizes (with a per-dimension "dynamic" flag for bounded-dynamic `<=N` and unbounded
//! `?` dimensions) and an optional [`Layout`]. Layouts are `None` when the text did not write one.

use std::fmt;

/// The most elements one array may have, one number for the whole pipeline: the compiler
/// refuses a module with a larger array (`CompileOptions::max_array_elements`,
/// `xla_compile --max_array_elements`), the runtime an artifact whose entry parameters or result
/// have one (`RuntimeFlags::max_array_elements`, `aot run --max-array-elements`), and the
/// reference evaluator an array it would compute past it. 2^28 elements: 1 GiB of `f32`, what
/// an emulated device runs in bounded time and memory. A module broadcasting to 500M elements
/// (109 bytes of HLO) used to take 47 s and 3.9 GB to compile and run; each component now
/// refuses it where its shapes enter, with [`SizeError::TooManyElements`] naming the shape.
pub const MAX_ELEMENTS: u64 = 1 << 28;

/// An element type of an array (`f32`, `s8`, `pred`, ...).
///
/// `token` and tuples are not element types: they are [`Shape::Token`] and [`Shape::Tuple`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum PrimitiveType {
    /// `pred`: boolean.
    Pred,
    /// `s1`: 1-bit signed integer.
    S1,
    /// `s2`: 2-bit signed integer.
    S2,
    /// `s4`: 4-bit signed integer.
    S4,
    /// `s8`.
    S8,
    /// `s16`.
    S16,
    /// `s32`.
    S32,
    /// `s64`.
    S64,
    /// `u1`: 1-bit unsigned integer.
    U1,
    /// `u2`: 2-bit unsigned integer.
    U2,
    /// `u4`: 4-bit unsigned integer.
    U4,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `f16`: IEEE half.
    F16,
    /// `bf16`: bfloat16.
    Bf16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `c64`: complex of two f32.
    C64,
    /// `c128`: complex of two f64.
    C128,
    /// `f4e2m1fn`.
    F4E2M1FN,
    /// `f8e3m4`.
    F8E3M4,
    /// `f8e4m3`.
    F8E4M3,
    /// `f8e4m3fn`.
    F8E4M3FN,
    /// `f8e4m3b11fnuz`.
    F8E4M3B11FNUZ,
    /// `f8e4m3fnuz`.
    F8E4M3FNUZ,
    /// `f8e5m2`.
    F8E5M2,
    /// `f8e5m2fnuz`.
    F8E5M2FNUZ,
    /// `f8e8m0fnu`.
    F8E8M0FNU,
    /// `opaque`: an opaque handle (opaque shapes are written `opaque[]`).
    Opaque,
}

/// Every primitive type with its text name, in declaration order.
const PRIMITIVE_NAMES: &[(PrimitiveType, &str)] = &[
    (PrimitiveType::Pred, "pred"),
    (PrimitiveType::S1, "s1"),
    (PrimitiveType::S2, "s2"),
    (PrimitiveType::S4, "s4"),
    (PrimitiveType::S8, "s8"),
    (PrimitiveType::S16, "s16"),
    (PrimitiveType::S32, "s32"),
    (PrimitiveType::S64, "s64"),
    (PrimitiveType::U1, "u1"),
    (PrimitiveType::U2, "u2"),
    (PrimitiveType::U4, "u4"),
    (PrimitiveType::U8, "u8"),
    (PrimitiveType::U16, "u16"),
    (PrimitiveType::U32, "u32"),
    (PrimitiveType::U64, "u64"),
    (PrimitiveType::F16, "f16"),
    (PrimitiveType::Bf16, "bf16"),
    (PrimitiveType::F32, "f32"),
    (PrimitiveType::F64, "f64"),
    (PrimitiveType::C64, "c64"),
    (PrimitiveType::C128, "c128"),
    (PrimitiveType::F4E2M1FN, "f4e2m1fn"),
    (PrimitiveType::F8E3M4, "f8e3m4"),
    (PrimitiveType::F8E4M3, "f8e4m3"),
    (PrimitiveType::F8E4M3FN, "f8e4m3fn"),
    (PrimitiveType::F8E4M3B11FNUZ, "f8e4m3b11fnuz"),
    (PrimitiveType::F8E4M3FNUZ, "f8e4m3fnuz"),
    (PrimitiveType::F8E5M2, "f8e5m2"),
    (PrimitiveType::F8E5M2FNUZ, "f8e5m2fnuz"),
    (PrimitiveType::F8E8M0FNU, "f8e8m0fnu"),
    (PrimitiveType::Opaque, "opaque"),
];

impl PrimitiveType {
    /// The lower-case text name (`"f32"`, `"pred"`, ...).
    pub fn name(self) -> &'static str {
        PRIMITIVE_NAMES
            .iter()
            .find(|(t, _)| *t == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }

    /// Looks a type up by its text name; `None` when unknown (`token` is not a primitive type).
    pub fn from_name(name: &str) -> Option<PrimitiveType> {
        PRIMITIVE_NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(t, _)| *t)
    }

    /// Size of one element in bits (`pred` is 8 bits, as XLA stores it).
    pub fn bit_width(self) -> u64 {
        use PrimitiveType::*;
        match self {
            Pred => 8,
            S1 | U1 => 1,
            S2 | U2 => 2,
            S4 | U4 | F4E2M1FN => 4,
            S8 | U8 | F8E3M4 | F8E4M3 | F8E4M3FN | F8E4M3B11FNUZ | F8E4M3FNUZ | F8E5M2
            | F8E5M2FNUZ | F8E8M0FNU => 8,
            S16 | U16 | F16 | Bf16 => 16,
            S32 | U32 | F32 => 32,
            S64 | U64 | F64 | C64 => 64,
            C128 => 128,
            Opaque => 64,
        }
    }

    /// The integer type of twice the width and the same signedness, for the 8-, 16- and 32-bit
    /// integers (where a product of two values fits whole: `mulhi`'s lowering); `None` for the
    /// rest.
    pub fn double_width_int(self) -> Option<PrimitiveType> {
        use PrimitiveType::*;
        Some(match self {
            S8 => S16,
            S16 => S32,
            S32 => S64,
            U8 => U16,
            U16 => U32,
            U32 => U64,
            _ => return None,
        })
    }

    /// Size of one element in bytes, rounding sub-byte types up to one byte.
    pub fn byte_size(self) -> u64 {
        self.bit_width().div_ceil(8)
    }

    /// True for `pred`.
    pub fn is_pred(self) -> bool {
        self == PrimitiveType::Pred
    }

    /// True for signed integer types.
    pub fn is_signed_int(self) -> bool {
        use PrimitiveType::*;
        matches!(self, S1 | S2 | S4 | S8 | S16 | S32 | S64)
    }

    /// True for unsigned integer types.
    pub fn is_unsigned_int(self) -> bool {
        use PrimitiveType::*;
        matches!(self, U1 | U2 | U4 | U8 | U16 | U32 | U64)
    }

    /// True for any integer type (signed or unsigned, not `pred`).
    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    /// True for real floating-point types (including all f8/f4 variants).
    pub fn is_float(self) -> bool {
        use PrimitiveType::*;
        matches!(
            self,
            F16 | Bf16
                | F32
                | F64
                | F4E2M1FN
                | F8E3M4
                | F8E4M3
                | F8E4M3FN
                | F8E4M3B11FNUZ
                | F8E4M3FNUZ
                | F8E5M2
                | F8E5M2FNUZ
                | F8E8M0FNU
        )
    }

    /// `x` converted to this float type (XLA `convert`: correctly rounded to nearest even, as
    /// the evaluator's `Data` conversions round; `half`'s own `from_f64` rounds f16 and bf16
    /// through f32, twice, and misses ties) and widened back exactly; `None` for types without
    /// host float values.
    pub fn round_float(self, x: f64) -> Option<f64> {
        use PrimitiveType::*;
        Some(match self {
            F64 => x,
            F32 => f64::from(x as f32),
            F16 => crate::f16_from_f64(x).to_f64(),
            Bf16 => crate::bf16_from_f64(x).to_f64(),
            F8E4M3FN => crate::F8E4M3FN::from_f64(x).to_f64(),
            F8E5M2 => crate::F8E5M2::from_f64(x).to_f64(),
            _ => return None,
        })
    }

    /// The stored bits of `x` converted to this float type ([`Self::round_float`]'s value),
    /// zero-extended; `None` for types without host float values.
    pub fn float_bits(self, x: f64) -> Option<u64> {
        use PrimitiveType::*;
        Some(match self {
            F64 => x.to_bits(),
            F32 => u64::from((x as f32).to_bits()),
            F16 => u64::from(crate::f16_from_f64(x).to_bits()),
            Bf16 => u64::from(crate::bf16_from_f64(x).to_bits()),
            F8E4M3FN => u64::from(crate::F8E4M3FN::from_f64(x).to_bits()),
            F8E5M2 => u64::from(crate::F8E5M2::from_f64(x).to_bits()),
            _ => return None,
        })
    }

    /// True for complex types.
    pub fn is_complex(self) -> bool {
        matches!(self, PrimitiveType::C64 | PrimitiveType::C128)
    }

    /// The component type of a complex type (`c64` -> `f32`); other types map to themselves.
    pub fn complex_component(self) -> PrimitiveType {
        match self {
            PrimitiveType::C64 => PrimitiveType::F32,
            PrimitiveType::C128 => PrimitiveType::F64,
            t => t,
        }
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Tile dimension value that XLA prints as `*` (combine dimensions).
pub const TILE_COMBINE_DIM: i64 = i64::MIN;

/// Dimension size used for unbounded dynamic dimensions, written `?`.
pub const UNBOUNDED_DIM: i64 = i64::MIN;

/// One tile of a tiled layout: `T(8,128)` is `Tile { dims: vec![8, 128] }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tile {
    /// Tile dimension sizes, major to minor; [`TILE_COMBINE_DIM`] for `*`.
    pub dims: Vec<i64>,
}

/// An array layout, `{1,0:T(8,128)S(1)}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Layout {
    /// Dimension numbers from most minor to most major.
    pub minor_to_major: Vec<i64>,
    /// Tiles (`T(...)(...)`), outermost first.
    pub tiles: Vec<Tile>,
    /// Element size in bits (`E(n)`), 0 when not written.
    pub element_size_in_bits: i64,
    /// Memory space (`S(n)`), 0 (the default space) when not written.
    pub memory_space: i64,
    /// Any other layout items after the `:` (`D(...)`, `L(n)`, `#(..)`, `*(..)`, `SC(..)`,
    /// `P(..)`, `M(n)`), verbatim, in their printed order. Empty when none.
    pub other: String,
}

impl Layout {
    /// A layout with only a minor-to-major order.
    pub fn from_minor_to_major(minor_to_major: Vec<i64>) -> Layout {
        Layout {
            minor_to_major,
            ..Layout::default()
        }
    }

    /// The default (row-major, descending) layout for `rank` dimensions: `{rank-1,...,0}`.
    pub fn default_for_rank(rank: usize) -> Layout {
        Layout::from_minor_to_major((0..rank as i64).rev().collect())
    }

    /// True when the layout has only a minor-to-major order.
    pub fn is_plain(&self) -> bool {
        self.tiles.is_empty()
            && self.element_size_in_bits == 0
            && self.memory_space == 0
            && self.other.is_empty()
    }
}

/// An array shape: element type, dimensions, dynamic flags and optional layout.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArrayShape {
    /// Element type (tuples and tokens are other [`Shape`]s, not element types).
    pub element_type: PrimitiveType,
    /// Dimension sizes (the bound for bounded-dynamic dims; [`UNBOUNDED_DIM`] for `?`).
    pub dims: Vec<i64>,
    /// Per-dimension dynamic flag (same length as `dims`).
    pub dynamic: Vec<bool>,
    /// The layout when one was written or assigned.
    pub layout: Option<Layout>,
}

impl ArrayShape {
    /// A static array shape without layout.
    pub fn new(element_type: PrimitiveType, dims: Vec<i64>) -> ArrayShape {
        let dynamic = vec![false; dims.len()];
        ArrayShape {
            element_type,
            dims,
            dynamic,
            layout: None,
        }
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of elements (product of the dimension sizes / bounds; unbounded dims count as 0).
    /// Saturates instead of overflowing.
    pub fn element_count(&self) -> u64 {
        self.dims.iter().fold(1u64, |acc, &d| {
            acc.saturating_mul(u64::try_from(d).unwrap_or(0))
        })
    }

    /// Number of elements with checked arithmetic (negative dimensions count as 0, as in
    /// [`ArrayShape::element_count`]); `None` when the product overflows 64 bits. Sizes that
    /// allocate, index or compare buffers use this or [`ArrayShape::checked_byte_size`]:
    /// `f32[3,6148914691236517212]` has 2^64 + 20 elements, and a wrapping product made it 20.
    pub fn checked_element_count(&self) -> Option<u64> {
        self.dims.iter().try_fold(1u64, |acc, &d| {
            acc.checked_mul(u64::try_from(d).unwrap_or(0))
        })
    }

    /// The element count when it is at most `limit` (checked arithmetic), else
    /// [`SizeError::TooManyElements`] naming the shape and the limit.
    pub fn check_elements(&self, limit: u64) -> Result<u64, SizeError> {
        match self.checked_element_count() {
            Some(n) if n <= limit => Ok(n),
            count => Err(SizeError::TooManyElements {
                shape: Box::new(self.clone()),
                count,
                limit,
            }),
        }
    }

    /// Byte size of the data (sub-byte types packed to whole bytes) with checked arithmetic;
    /// `None` past `i64::MAX` bytes, the limit of XLA's `ShapeUtil::ValidateShape` and of every
    /// signed size the compiler, the artifact and the runtime carry.
    pub fn checked_byte_size(&self) -> Option<u64> {
        let bits = u128::from(self.checked_element_count()?)
            .checked_mul(u128::from(self.element_type.bit_width()))?;
        u64::try_from(bits.div_ceil(8))
            .ok()
            .filter(|&b| b <= i64::MAX as u64)
    }

    /// True when any dimension is dynamic.
    pub fn is_dynamic(&self) -> bool {
        self.dynamic.iter().any(|&d| d)
    }

    /// True when the shapes have equal element types and dims, ignoring layouts.
    pub fn compatible(&self, other: &ArrayShape) -> bool {
        self.element_type == other.element_type && self.dims == other.dims
    }
}

/// The shape of an HLO value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A dense array (rank 0 = scalar).
    Array(ArrayShape),
    /// A tuple of shapes (possibly empty, possibly nested).
    Tuple(Vec<Shape>),
    /// `token[]`.
    Token,
}

impl Shape {
    /// A static array shape without layout.
    pub fn array(element_type: PrimitiveType, dims: Vec<i64>) -> Shape {
        Shape::Array(ArrayShape::new(element_type, dims))
    }

    /// A scalar (rank-0) shape.
    pub fn scalar(element_type: PrimitiveType) -> Shape {
        Shape::array(element_type, Vec::new())
    }

    /// The array part when this is an array.
    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Mutable array part when this is an array.
    pub fn as_array_mut(&mut self) -> Option<&mut ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The tuple elements when this is a tuple.
    pub fn tuple_shapes(&self) -> Option<&[Shape]> {
        match self {
            Shape::Tuple(t) => Some(t),
            _ => None,
        }
    }

    pub fn is_tuple(&self) -> bool {
        matches!(self, Shape::Tuple(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Shape::Array(_))
    }

    pub fn is_token(&self) -> bool {
        matches!(self, Shape::Token)
    }

    /// The element type of an array; `None` for tuples and tokens.
    pub fn element_type(&self) -> Option<PrimitiveType> {
        self.as_array().map(|a| a.element_type)
    }

    /// The dimensions of an array; empty for tuples and tokens.
    pub fn dims(&self) -> &[i64] {
        match self {
            Shape::Array(a) => &a.dims,
            _ => &[],
        }
    }

    /// Rank of an array; 0 for tuples and tokens.
    pub fn rank(&self) -> usize {
        self.dims().len()
    }

    /// Element count of an array; 0 for tuples and tokens.
    pub fn element_count(&self) -> u64 {
        self.as_array().map_or(0, ArrayShape::element_count)
    }

    /// Byte size of the array data (element count × element byte size, sub-byte types packed
    /// to whole bytes); for tuples, the size of the pointer table (8 bytes per element); 0 for
    /// tokens. Saturates instead of overflowing.
    pub fn byte_size(&self) -> u64 {
        match self {
            Shape::Array(a) => {
                let bits = a.element_count().saturating_mul(a.element_type.bit_width());
                bits.div_ceil(8)
            }
            Shape::Tuple(t) => 8 * t.len() as u64,
            Shape::Token => 0,
        }
    }

    /// [`Shape::byte_size`] with checked arithmetic: the typed error names the first array
    /// (the shape itself or a tuple element) whose size overflows or passes `i64::MAX` bytes.
    pub fn checked_byte_size(&self) -> Result<u64, SizeError> {
        match self {
            Shape::Array(a) => a
                .checked_byte_size()
                .ok_or_else(|| SizeError::TooLarge(Box::new(a.clone()))),
            Shape::Tuple(t) => {
                t.iter().try_for_each(|s| s.checked_byte_size().map(drop))?;
                Ok(8 * t.len() as u64)
            }
            Shape::Token => Ok(0),
        }
    }

    /// [`ArrayShape::check_elements`] of every array of the shape (a tuple's elements,
    /// depth first): the first over `limit` is the error.
    pub fn check_elements(&self, limit: u64) -> Result<(), SizeError> {
        match self {
            Shape::Array(a) => a.check_elements(limit).map(drop),
            Shape::Tuple(t) => t.iter().try_for_each(|s| s.check_elements(limit)),
            Shape::Token => Ok(()),
        }
    }

    /// The layout of an array, when present.
    pub fn layout(&self) -> Option<&Layout> {
        self.as_array().and_then(|a| a.layout.as_ref())
    }

    /// The subshape at a tuple index path; `None` when the path does not exist.
    pub fn subshape(&self, index: &[i64]) -> Option<&Shape> {
        let mut s = self;
        for &i in index {
            s = s.tuple_shapes()?.get(usize::try_from(i).ok()?)?;
        }
        Some(s)
    }

    /// The array leaves, depth-first, each with its tuple index path (`[]` for an array shape;
    /// tokens have none). The one listing of leaves the compiler's buffer assignment and the
    /// runtime's output checks both follow, so they agree on leaf order.
    pub fn leaves(&self) -> Vec<(Vec<i64>, &Shape)> {
        fn go<'a>(s: &'a Shape, prefix: &mut Vec<i64>, out: &mut Vec<(Vec<i64>, &'a Shape)>) {
            match s {
                Shape::Array(_) => out.push((prefix.clone(), s)),
                Shape::Tuple(t) => {
                    for (i, e) in (0i64..).zip(t) {
                        prefix.push(i);
                        go(e, prefix, out);
                        prefix.pop();
                    }
                }
                Shape::Token => {}
            }
        }
        let mut out = Vec::new();
        go(self, &mut Vec::new(), &mut out);
        out
    }

    /// Equality ignoring layouts (element types, dims, dynamic flags, tuple structure).
    pub fn compatible(&self, other: &Shape) -> bool {
        match (self, other) {
            (Shape::Array(a), Shape::Array(b)) => a.compatible(b),
            (Shape::Tuple(a), Shape::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible(y))
            }
            (Shape::Token, Shape::Token) => true,
            _ => false,
        }
    }

    /// A copy of this shape with all layouts removed.
    pub fn without_layout(&self) -> Shape {
        match self {
            Shape::Array(a) => Shape::Array(ArrayShape {
                layout: None,
                ..a.clone()
            }),
            Shape::Tuple(t) => Shape::Tuple(t.iter().map(Shape::without_layout).collect()),
            Shape::Token => Shape::Token,
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, d) in self.minor_to_major.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        if !self.is_plain() {
            f.write_str(":")?;
            if !self.tiles.is_empty() {
                f.write_str("T")?;
                for t in &self.tiles {
                    f.write_str("(")?;
                    for (i, d) in t.dims.iter().enumerate() {
                        if i > 0 {
                            f.write_str(",")?;
                        }
                        if *d == TILE_COMBINE_DIM {
                            f.write_str("*")?;
                        } else {
                            write!(f, "{d}")?;
                        }
                    }
                    f.write_str(")")?;
                }
            }
            if self.element_size_in_bits != 0 {
                write!(f, "E({})", self.element_size_in_bits)?;
            }
            if self.memory_space != 0 {
                write!(f, "S({})", self.memory_space)?;
            }
            f.write_str(&self.other)?;
        }
        f.write_str("}")
    }
}

impl fmt::Display for ArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.element_type)?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let dynamic = self.dynamic.get(i).copied().unwrap_or(false);
            if *d == UNBOUNDED_DIM {
                f.write_str("?")?;
            } else if dynamic {
                write!(f, "<={d}")?;
            } else {
                write!(f, "{d}")?;
            }
        }
        f.write_str("]")?;
        if let Some(l) = &self.layout {
            write!(f, "{l}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Shape {
    /// XLA's text form: `f32[2,3]{1,0}`, `(f32[], s32[4])`, `token[]`. Like XLA, elements
    /// 5, 10, ... of a tuple are preceded by an `/*index=N*/` comment.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Array(a) => write!(f, "{a}"),
            Shape::Token => f.write_str("token[]"),
            Shape::Tuple(t) => {
                f.write_str("(")?;
                for (i, s) in t.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    if i > 0 && i % 5 == 0 {
                        // XLA marks every fifth element of long tuples.
                        write!(f, "/*index={i}*/")?;
                    }
                    write!(f, "{s}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// A declared shape whose size does not fit the 64-bit sizes every consumer computes with: as
/// XLA's `ShapeUtil::ValidateShape`, an array's byte size must fit `int64`. Without this an
/// element count past 2^64 wraps (3 x 6148914691236517212 is 2^64 + 20), and a module over such
/// a shape compiles and runs as if it had 20 elements.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SizeError {
    /// The product of the dimensions, times the element width, exceeds `i64::MAX` bytes.
    #[error("shape {0} is larger than 2^63-1 bytes (its element count times its element size overflows a 64-bit size)")]
    TooLarge(Box<ArrayShape>),
    /// The array has more elements than the limit of the component reading it
    /// ([`MAX_ELEMENTS`] by default, in the compiler, the runtime and the evaluator alike).
    #[error("shape {shape} has {}, more than the limit of {limit} elements", count_text(*.count))]
    TooManyElements {
        /// The array.
        shape: Box<ArrayShape>,
        /// Its element count (`None`: past 2^64).
        count: Option<u64>,
        /// The limit it exceeds.
        limit: u64,
    },
}

fn count_text(count: Option<u64>) -> String {
    match count {
        Some(n) => format!("{n} elements"),
        None => "more than 2^64 elements".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_sizes() {
        let mut a = ArrayShape::new(PrimitiveType::F32, vec![2, 3]);
        a.layout = Some(Layout::default_for_rank(2));
        let s = Shape::Tuple(vec![Shape::Array(a), Shape::scalar(PrimitiveType::Pred)]);
        assert_eq!(s.to_string(), "(f32[2,3]{1,0}, pred[])");
        assert_eq!(s.tuple_shapes().map(|t| t[0].byte_size()), Some(24));
        assert_eq!(PrimitiveType::from_name("bf16"), Some(PrimitiveType::Bf16));
    }

    #[test]
    fn checked_sizes_refuse_what_wraps_past_2_pow_64() {
        let wraps = ArrayShape::new(PrimitiveType::F32, vec![3, 6148914691236517212]);
        assert_eq!(wraps.checked_element_count(), None);
        assert_eq!(wraps.checked_byte_size(), None);
        let s = Shape::Tuple(vec![Shape::scalar(PrimitiveType::F32), Shape::Array(wraps)]);
        assert_eq!(
            s.checked_byte_size().map_err(|e| e.to_string()),
            Err("shape f32[3,6148914691236517212] is larger than 2^63-1 bytes (its element count times its element size overflows a 64-bit size)".to_string())
        );
        // Fits u64 but not i64 bytes: 2^61 f32 elements are 2^63 bytes.
        let big = ArrayShape::new(PrimitiveType::F32, vec![1 << 61]);
        assert_eq!(big.checked_element_count(), Some(1 << 61));
        assert_eq!(big.checked_byte_size(), None);
        let s4 = ArrayShape::new(PrimitiveType::S4, vec![1 << 62]);
        assert_eq!(
            s4.checked_byte_size(),
            Some(1 << 61),
            "sub-byte bits in 128 bits"
        );
        assert_eq!(
            Shape::array(PrimitiveType::F32, vec![2, 3]).checked_byte_size(),
            Ok(24)
        );
    }

    #[test]
    fn leaves_are_the_arrays_depth_first_with_their_indices() {
        let f32s = |n| Shape::Array(ArrayShape::new(PrimitiveType::F32, vec![n]));
        let s = Shape::Tuple(vec![
            f32s(1),
            Shape::Tuple(vec![Shape::Token, f32s(2), Shape::Tuple(vec![])]),
            f32s(3),
        ]);
        let leaves: Vec<(Vec<i64>, String)> = s
            .leaves()
            .into_iter()
            .map(|(i, l)| (i, l.to_string()))
            .collect();
        assert_eq!(
            leaves,
            [
                (vec![0], "f32[1]".to_owned()),
                (vec![1, 1], "f32[2]".to_owned()),
                (vec![2], "f32[3]".to_owned()),
            ]
        );
        assert_eq!(f32s(4).leaves(), [(vec![], &f32s(4))]);
        assert!(Shape::Token.leaves().is_empty());
    }
}
