//! The values of instruction attributes: comparison, FFT, RNG, precision, dot algorithm and fusion kinds, windows and dimension numbers, replica groups, constant literals and metadata.
use crate::PrimitiveType;

/// `direction=` of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComparisonDirection {
    /// `EQ`
    Eq,
    /// `NE`
    Ne,
    /// `GE`
    Ge,
    /// `GT`
    Gt,
    /// `LE`
    Le,
    /// `LT`
    Lt,
}

impl ComparisonDirection {
    /// Text form (`"GT"`).
    pub fn name(self) -> &'static str {
        match self {
            ComparisonDirection::Eq => "EQ",
            ComparisonDirection::Ne => "NE",
            ComparisonDirection::Ge => "GE",
            ComparisonDirection::Gt => "GT",
            ComparisonDirection::Le => "LE",
            ComparisonDirection::Lt => "LT",
        }
    }

    /// Parses the text form.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "EQ" => ComparisonDirection::Eq,
            "NE" => ComparisonDirection::Ne,
            "GE" => ComparisonDirection::Ge,
            "GT" => ComparisonDirection::Gt,
            "LE" => ComparisonDirection::Le,
            "LT" => ComparisonDirection::Lt,
            _ => return None,
        })
    }
}

/// `type=` of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComparisonType {
    /// `FLOAT`: IEEE comparison (partial order).
    Float,
    /// `TOTALORDER`: total order on floats.
    TotalOrder,
    /// `SIGNED`
    Signed,
    /// `UNSIGNED`
    Unsigned,
}

impl ComparisonType {
    /// Text form.
    pub fn name(self) -> &'static str {
        match self {
            ComparisonType::Float => "FLOAT",
            ComparisonType::TotalOrder => "TOTALORDER",
            ComparisonType::Signed => "SIGNED",
            ComparisonType::Unsigned => "UNSIGNED",
        }
    }

    /// Parses the text form.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "FLOAT" => ComparisonType::Float,
            "TOTALORDER" => ComparisonType::TotalOrder,
            "SIGNED" => ComparisonType::Signed,
            "UNSIGNED" => ComparisonType::Unsigned,
            _ => return None,
        })
    }
}

/// One dimension of `slice={[start:limit:stride], ...}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SliceDim {
    /// Inclusive start.
    pub start: i64,
    /// Exclusive limit.
    pub limit: i64,
    /// Stride (1 when not written).
    pub stride: i64,
}

/// One dimension of `padding=low_high_interior x ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PadDim {
    /// Edge padding at the start (may be negative).
    pub low: i64,
    /// Edge padding at the end (may be negative).
    pub high: i64,
    /// Padding between elements.
    pub interior: i64,
}

/// One dimension of `window={size=.. stride=.. pad=.. lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WindowDim {
    /// Window size.
    pub size: i64,
    /// Stride (default 1).
    pub stride: i64,
    /// Low padding (default 0).
    pub pad_low: i64,
    /// High padding (default 0).
    pub pad_high: i64,
    /// Base (lhs) dilation (default 1).
    pub lhs_dilation: i64,
    /// Window (rhs) dilation (default 1).
    pub rhs_dilation: i64,
    /// Window reversal (default false).
    pub reversal: bool,
}

impl Default for WindowDim {
    fn default() -> Self {
        WindowDim {
            size: 1,
            stride: 1,
            pad_low: 0,
            pad_high: 0,
            lhs_dilation: 1,
            rhs_dilation: 1,
            reversal: false,
        }
    }
}

/// `window={...}` of convolution, reduce-window and select-and-scatter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Window {
    /// One entry per spatial (or, for reduce-window, per operand) dimension.
    pub dims: Vec<WindowDim>,
}

/// Dot dimension numbers (`lhs_batch_dims`, `lhs_contracting_dims`, `rhs_batch_dims`,
/// `rhs_contracting_dims`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DotDimensionNumbers {
    /// `lhs_batch_dims`
    pub lhs_batch_dims: Vec<i64>,
    /// `lhs_contracting_dims`
    pub lhs_contracting_dims: Vec<i64>,
    /// `rhs_batch_dims`
    pub rhs_batch_dims: Vec<i64>,
    /// `rhs_contracting_dims`
    pub rhs_contracting_dims: Vec<i64>,
}

/// Convolution dimension numbers, from `dim_labels=b01f_01io->b01f`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ConvDimensionNumbers {
    /// Input batch dimension (`b` in the lhs labels).
    pub input_batch_dimension: i64,
    /// Input feature dimension (`f`).
    pub input_feature_dimension: i64,
    /// Input spatial dimensions (`0`, `1`, ... in order).
    pub input_spatial_dimensions: Vec<i64>,
    /// Kernel input feature dimension (`i`).
    pub kernel_input_feature_dimension: i64,
    /// Kernel output feature dimension (`o`).
    pub kernel_output_feature_dimension: i64,
    /// Kernel spatial dimensions (where `0`, `1`, ... are in the rhs labels, in that order).
    pub kernel_spatial_dimensions: Vec<i64>,
    /// Output batch dimension (`b`).
    pub output_batch_dimension: i64,
    /// Output feature dimension (`f`).
    pub output_feature_dimension: i64,
    /// Output spatial dimensions (where `0`, `1`, ... are in the output labels, in that order).
    pub output_spatial_dimensions: Vec<i64>,
}

/// Gather dimension numbers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct GatherDimensionNumbers {
    /// `offset_dims`
    pub offset_dims: Vec<i64>,
    /// `collapsed_slice_dims`
    pub collapsed_slice_dims: Vec<i64>,
    /// `start_index_map`
    pub start_index_map: Vec<i64>,
    /// `index_vector_dim`
    pub index_vector_dim: i64,
    /// `operand_batching_dims`
    pub operand_batching_dims: Vec<i64>,
    /// `start_indices_batching_dims`
    pub start_indices_batching_dims: Vec<i64>,
}

/// Scatter dimension numbers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ScatterDimensionNumbers {
    /// `update_window_dims`
    pub update_window_dims: Vec<i64>,
    /// `inserted_window_dims`
    pub inserted_window_dims: Vec<i64>,
    /// `scatter_dims_to_operand_dims`
    pub scatter_dims_to_operand_dims: Vec<i64>,
    /// `index_vector_dim`
    pub index_vector_dim: i64,
    /// `input_batching_dims`
    pub input_batching_dims: Vec<i64>,
    /// `scatter_indices_batching_dims`
    pub scatter_indices_batching_dims: Vec<i64>,
}

/// `fft_type=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FftType {
    /// Forward complex FFT.
    Fft,
    /// Inverse complex FFT.
    Ifft,
    /// Forward real-to-complex FFT.
    Rfft,
    /// Inverse complex-to-real FFT.
    Irfft,
}

impl FftType {
    /// Text form.
    pub fn name(self) -> &'static str {
        match self {
            FftType::Fft => "FFT",
            FftType::Ifft => "IFFT",
            FftType::Rfft => "RFFT",
            FftType::Irfft => "IRFFT",
        }
    }

    /// Parses the text form.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "FFT" => FftType::Fft,
            "IFFT" => FftType::Ifft,
            "RFFT" => FftType::Rfft,
            "IRFFT" => FftType::Irfft,
            _ => return None,
        })
    }
}

/// How `transpose_a=` of triangular-solve uses `a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transpose {
    /// `NO_TRANSPOSE`: `a` as written.
    NoTranspose,
    /// `TRANSPOSE`: `a` transposed.
    Transpose,
    /// `ADJOINT`: `a` conjugated and transposed (the transpose for real `a`).
    Adjoint,
}

impl Transpose {
    /// Text form (XLA's `TriangularSolveOptions.Transpose` value names).
    pub fn name(self) -> &'static str {
        match self {
            Transpose::NoTranspose => "NO_TRANSPOSE",
            Transpose::Transpose => "TRANSPOSE",
            Transpose::Adjoint => "ADJOINT",
        }
    }

    /// Parses the text form.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "NO_TRANSPOSE" => Transpose::NoTranspose,
            "TRANSPOSE" => Transpose::Transpose,
            "ADJOINT" => Transpose::Adjoint,
            _ => return None,
        })
    }
}

/// The options of triangular-solve (XLA's `TriangularSolveOptions`): solves `op(a) x = b`
/// (`left_side`) or `x op(a) = b`, reading only the named triangle of `a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TriangularSolveOptions {
    /// `left_side=`: `op(a) x = b` when true, `x op(a) = b` when false.
    pub left_side: bool,
    /// `lower=`: `a`'s lower triangle is read when true, its upper when false.
    pub lower: bool,
    /// `unit_diagonal=`: the diagonal is taken to be ones and not read.
    pub unit_diagonal: bool,
    /// `transpose_a=`; `None` when not written (XLA's `TRANSPOSE_INVALID`, which the verifier
    /// refuses).
    pub transpose_a: Option<Transpose>,
}

/// The options of cholesky (XLA's `CholeskyOptions`): which triangle of each matrix is read
/// and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CholeskyOptions {
    /// `lower=`: `a = l lᴴ` with `l` in the lower triangle when true; `a = uᴴ u` with `u` in
    /// the upper triangle when false (XLA's default).
    pub lower: bool,
}

/// `distribution=` of `rng`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RandomDistribution {
    /// `rng_uniform`
    Uniform,
    /// `rng_normal`
    Normal,
}

impl RandomDistribution {
    /// Text form.
    pub fn name(self) -> &'static str {
        match self {
            RandomDistribution::Uniform => "rng_uniform",
            RandomDistribution::Normal => "rng_normal",
        }
    }

    /// Parses the text form.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "rng_uniform" => Some(RandomDistribution::Uniform),
            "rng_normal" => Some(RandomDistribution::Normal),
            _ => None,
        }
    }
}

/// `algorithm=` of `rng-bit-generator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RandomAlgorithm {
    /// `rng_default`: the platform's choice (Philox on GPU, as XLA:GPU's expander is set up).
    Default,
    /// `rng_three_fry`
    ThreeFry,
    /// `rng_philox`
    Philox,
}

impl RandomAlgorithm {
    /// Text form.
    pub fn name(self) -> &'static str {
        match self {
            RandomAlgorithm::Default => "rng_default",
            RandomAlgorithm::ThreeFry => "rng_three_fry",
            RandomAlgorithm::Philox => "rng_philox",
        }
    }

    /// Parses the text form.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "rng_default" => Some(RandomAlgorithm::Default),
            "rng_three_fry" => Some(RandomAlgorithm::ThreeFry),
            "rng_philox" => Some(RandomAlgorithm::Philox),
            _ => None,
        }
    }
}

/// One entry of `operand_precision={default,high}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// `default`
    Default,
    /// `high`
    High,
    /// `highest`
    Highest,
}

impl Precision {
    /// Text form.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Default => "default",
            Precision::High => "high",
            Precision::Highest => "highest",
        }
    }

    /// Parses the text form (case-insensitive, as XLA accepts `DEFAULT`).
    pub fn from_name(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "default" => Some(Precision::Default),
            "high" => Some(Precision::High),
            "highest" => Some(Precision::Highest),
            _ => None,
        }
    }
}

/// `algorithm=` of `dot` (XLA's `PrecisionConfig.Algorithm`): the operands' precision, the
/// accumulator and the number of passes the product is computed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DotAlgorithm {
    /// `dot_any_f8_any_f8_f32`
    AnyF8AnyF8F32,
    /// `dot_any_f8_any_f8_f32_fast_accum`
    AnyF8AnyF8F32FastAccum,
    /// `dot_f16_f16_f16`
    F16F16F16,
    /// `dot_f16_f16_f32`
    F16F16F32,
    /// `dot_bf16_bf16_bf16`
    Bf16Bf16Bf16,
    /// `dot_bf16_bf16_f32`
    Bf16Bf16F32,
    /// `dot_bf16_bf16_f32_x3`
    Bf16Bf16F32X3,
    /// `dot_bf16_bf16_f32_x6`
    Bf16Bf16F32X6,
    /// `dot_bf16_bf16_f32_x9`
    Bf16Bf16F32X9,
    /// `dot_tf32_tf32_f32`
    Tf32Tf32F32,
    /// `dot_tf32_tf32_f32_x3`
    Tf32Tf32F32X3,
    /// `dot_f32_f32_f32`
    F32F32F32,
    /// `dot_f64_f64_f64`
    F64F64F64,
}

impl DotAlgorithm {
    /// Every algorithm, with its text form and its number in XLA's `PrecisionConfig.Algorithm`.
    pub const ALL: [(DotAlgorithm, &'static str, i32); 13] = [
        (DotAlgorithm::AnyF8AnyF8F32, "dot_any_f8_any_f8_f32", 1),
        (
            DotAlgorithm::AnyF8AnyF8F32FastAccum,
            "dot_any_f8_any_f8_f32_fast_accum",
            2,
        ),
        (DotAlgorithm::F16F16F16, "dot_f16_f16_f16", 3),
        (DotAlgorithm::F16F16F32, "dot_f16_f16_f32", 4),
        (DotAlgorithm::Bf16Bf16Bf16, "dot_bf16_bf16_bf16", 5),
        (DotAlgorithm::Bf16Bf16F32, "dot_bf16_bf16_f32", 6),
        (DotAlgorithm::Bf16Bf16F32X3, "dot_bf16_bf16_f32_x3", 7),
        (DotAlgorithm::Bf16Bf16F32X6, "dot_bf16_bf16_f32_x6", 8),
        (DotAlgorithm::Tf32Tf32F32, "dot_tf32_tf32_f32", 9),
        (DotAlgorithm::Tf32Tf32F32X3, "dot_tf32_tf32_f32_x3", 10),
        (DotAlgorithm::F32F32F32, "dot_f32_f32_f32", 11),
        (DotAlgorithm::F64F64F64, "dot_f64_f64_f64", 12),
        (DotAlgorithm::Bf16Bf16F32X9, "dot_bf16_bf16_f32_x9", 13),
    ];

    /// Text form (`dot_bf16_bf16_f32`: XLA's enum name without `ALG_`, lower case).
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(a, ..)| *a == self)
            .map_or("", |(_, name, _)| name)
    }

    /// Parses the text form.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.iter().find(|(_, n, _)| *n == s).map(|(a, ..)| *a)
    }

    /// XLA's enum number (`ALG_UNSET` is 0, no algorithm).
    pub fn number(self) -> i32 {
        Self::ALL
            .iter()
            .find(|(a, ..)| *a == self)
            .map_or(0, |(.., n)| *n)
    }

    /// The algorithm of XLA's enum number (`None` for 0 and unknown numbers).
    pub fn from_number(n: i32) -> Option<Self> {
        Self::ALL.iter().find(|(.., k)| *k == n).map(|(a, ..)| *a)
    }

    /// How the operands are rounded before the product (XLA:GPU's reading of the algorithm for
    /// the storage types it accepts, `algorithm_util.cc`): `Some((exponent, mantissa))` are the
    /// bits a `reduce-precision` keeps (bf16's 8 and 7 for `dot_bf16_bf16_f32` on f32 operands,
    /// TF32's 8 and 10), `None` reads them as stored. The accumulation is f32 (f64 for `dot_f64_f64_f64`) in every
    /// algorithm this accepts, and the multi-pass ones (`_x3`, `_x6`, `_x9`), which split each
    /// f32 into narrower parts to approach an f32 product, are computed as the f32 product.
    pub fn operand_rounding(self, operand: PrimitiveType) -> Option<(i64, i64)> {
        match (self, operand) {
            (DotAlgorithm::Bf16Bf16F32, PrimitiveType::F32) => Some((8, 7)),
            (DotAlgorithm::Tf32Tf32F32, PrimitiveType::F32) => Some((8, 10)),
            _ => None,
        }
    }

    /// Whether XLA:GPU runs the algorithm on operands of `lhs` and `rhs` types giving `out`
    /// (`IsSupportedDotAlgorithmOnGpu` on Ampere and later; the two `any_f8` algorithms on Ada
    /// and later, which this compiler runs on every target: its FP8 dots are f16 gemms), and
    /// so does this compiler.
    pub fn supports(self, lhs: PrimitiveType, rhs: PrimitiveType, out: PrimitiveType) -> bool {
        use PrimitiveType::{Bf16, F16, F32, F64, F8E4M3FN, F8E5M2};
        if let DotAlgorithm::AnyF8AnyF8F32 | DotAlgorithm::AnyF8AnyF8F32FastAccum = self {
            // cuBLASLt's FP8 pairs (e5m2 x e5m2 is not one) and outputs.
            let pair = matches!(
                (lhs, rhs),
                (F8E4M3FN, F8E4M3FN) | (F8E4M3FN, F8E5M2) | (F8E5M2, F8E4M3FN)
            );
            return pair && matches!(out, Bf16 | F16 | F32 | F8E4M3FN | F8E5M2);
        }
        if lhs != rhs {
            return false;
        }
        match self {
            DotAlgorithm::F16F16F32 => lhs == F16 && matches!(out, F16 | F32),
            DotAlgorithm::Bf16Bf16F32 => match lhs {
                Bf16 => matches!(out, Bf16 | F32),
                F32 => out == F32,
                _ => false,
            },
            DotAlgorithm::Bf16Bf16F32X3
            | DotAlgorithm::Bf16Bf16F32X6
            | DotAlgorithm::Bf16Bf16F32X9
            | DotAlgorithm::Tf32Tf32F32
            | DotAlgorithm::Tf32Tf32F32X3
            | DotAlgorithm::F32F32F32 => lhs == F32 && out == F32,
            DotAlgorithm::F64F64F64 => lhs == F64 && out == F64,
            DotAlgorithm::AnyF8AnyF8F32
            | DotAlgorithm::AnyF8AnyF8F32FastAccum
            | DotAlgorithm::F16F16F16
            | DotAlgorithm::Bf16Bf16Bf16 => false,
        }
    }
}

/// `kind=` of `fusion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FusionKind {
    /// `kLoop`
    Loop,
    /// `kInput`
    Input,
    /// `kOutput`
    Output,
    /// `kCustom`
    Custom,
}

impl FusionKind {
    /// Text form (`"kLoop"`).
    pub fn name(self) -> &'static str {
        match self {
            FusionKind::Loop => "kLoop",
            FusionKind::Input => "kInput",
            FusionKind::Output => "kOutput",
            FusionKind::Custom => "kCustom",
        }
    }

    /// Parses the text form.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "kLoop" => FusionKind::Loop,
            "kInput" => FusionKind::Input,
            "kOutput" => FusionKind::Output,
            "kCustom" => FusionKind::Custom,
            _ => return None,
        })
    }
}

/// `replica_groups=`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ReplicaGroups {
    /// Explicit groups: `{}` (empty = all replicas in one group) or `{{0,1},{2,3}}`.
    List(Vec<Vec<i64>>),
    /// Iota form, verbatim: `[2,2]<=[4]` or `[2,2]<=[2,2]T(1,0)`.
    Iota(String),
}

/// A `source_target_pairs=` value (`{{0,1},{1,0}}`, or `{}`) as (source, target) pairs; `None`
/// when it is not that form. The attribute is kept verbatim in `Attrs::raw`.
pub fn parse_source_target_pairs(text: &str) -> Option<Vec<(i64, i64)>> {
    let inner = text.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner
        .split('}')
        .map(|p| p.trim().trim_start_matches(',').trim())
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (s, t) = p.strip_prefix('{')?.split_once(',')?;
            Some((s.trim().parse().ok()?, t.trim().parse().ok()?))
        })
        .collect()
}

/// Pairs as HLO text prints them: `{{0,1},{1,0}}`.
pub fn print_source_target_pairs(pairs: &[(i64, i64)]) -> String {
    let inner: Vec<String> = pairs.iter().map(|(s, t)| format!("{{{s},{t}}}")).collect();
    format!("{{{}}}", inner.join(","))
}

/// One scalar of a constant literal.
///
/// Floats compare by bit pattern so NaN constants keep `parse(print(m)) == m`. For
/// floating-point element types the parser always produces [`LiteralValue::Float`] (an integer
/// written as `1` becomes `1.0`); for integer types [`LiteralValue::Int`]; for `pred`
/// [`LiteralValue::Bool`]; for complex types [`LiteralValue::Complex`].
#[derive(Debug, Clone, Copy)]
pub enum LiteralValue {
    /// `true` / `false`.
    Bool(bool),
    /// Any integer (wide enough for u64 and i64).
    Int(i128),
    /// A real number, including `nan`, `inf`, `-inf`.
    Float(f64),
    /// A complex number `(re, im)`.
    Complex(f64, f64),
}

impl PartialEq for LiteralValue {
    fn eq(&self, other: &Self) -> bool {
        use LiteralValue::*;
        match (self, other) {
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a.to_bits() == b.to_bits(),
            (Complex(a, b), Complex(c, d)) => {
                a.to_bits() == c.to_bits() && b.to_bits() == d.to_bits()
            }
            _ => false,
        }
    }
}

impl Eq for LiteralValue {}

impl LiteralValue {
    /// The value as a complex number `(re, im)` (a real value has imaginary part 0).
    pub fn as_complex(self) -> (f64, f64) {
        match self {
            LiteralValue::Complex(r, i) => (r, i),
            other => (other.as_f64(), 0.0),
        }
    }

    /// The value as f64 (bools 0/1, complex → real part).
    pub fn as_f64(self) -> f64 {
        match self {
            LiteralValue::Bool(b) => f64::from(u8::from(b)),
            LiteralValue::Int(i) => i as f64,
            LiteralValue::Float(f) => f,
            LiteralValue::Complex(r, _) => r,
        }
    }

    /// The value as i128 (floats truncated, bools 0/1, complex → real part).
    pub fn as_i128(self) -> i128 {
        match self {
            LiteralValue::Bool(b) => i128::from(b),
            LiteralValue::Int(i) => i,
            LiteralValue::Float(f) => f as i128,
            LiteralValue::Complex(r, _) => r as i128,
        }
    }

    /// The value as bool (non-zero is true).
    pub fn as_bool(self) -> bool {
        match self {
            LiteralValue::Bool(b) => b,
            LiteralValue::Int(i) => i != 0,
            LiteralValue::Float(f) => f != 0.0,
            LiteralValue::Complex(r, i) => r != 0.0 || i != 0.0,
        }
    }
}

/// The values of an array constant, in row-major (logical index) order; `values.len()` equals
/// the shape's element count.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArrayLiteral {
    /// Values in row-major order, irrespective of layout.
    pub values: Vec<LiteralValue>,
}

/// The literal of a `constant` instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Literal {
    /// An array (or scalar) constant.
    Array(ArrayLiteral),
    /// A tuple constant, one literal per element.
    Tuple(Vec<Literal>),
    /// `{...}`: the values were elided when the text was printed.
    Elided,
}

/// `metadata={...}` of an instruction.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpMetadata {
    /// `op_type`
    pub op_type: Option<String>,
    /// `op_name`
    pub op_name: Option<String>,
    /// `source_file`
    pub source_file: Option<String>,
    /// `source_line`
    pub source_line: Option<i64>,
    /// `source_end_line`
    pub source_end_line: Option<i64>,
    /// `source_column`
    pub source_column: Option<i64>,
    /// `source_end_column`
    pub source_end_column: Option<i64>,
    /// `stack_frame_id` (into [`HloModule::stack_frames`](crate::HloModule::stack_frames)).
    pub stack_frame_id: Option<i64>,
    /// `deduplicated_name`
    pub deduplicated_name: Option<String>,
    /// `scheduling_name`
    pub scheduling_name: Option<String>,
    /// Other `key=value` pairs, value text verbatim, in order.
    pub other: Vec<(String, String)>,
}

/// Quotes and escapes a string the way the HLO text lexer unescapes it.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `{...}` text of a `metadata=` attribute, as the HLO text printer writes it (also
/// used by [`HloSharding`](crate::ir::HloSharding)'s `Display`, hence here in the IR).
pub fn metadata_string(m: &OpMetadata) -> String {
    let mut parts = Vec::new();
    let mut s = |k: &str, v: &Option<String>| {
        if let Some(v) = v {
            parts.push(format!("{k}={}", quote(v)));
        }
    };
    s("op_type", &m.op_type);
    s("op_name", &m.op_name);
    s("source_file", &m.source_file);
    let ints = [
        ("source_line", m.source_line),
        ("source_end_line", m.source_end_line),
        ("source_column", m.source_column),
        ("source_end_column", m.source_end_column),
    ];
    for (k, v) in ints {
        if let Some(v) = v {
            parts.push(format!("{k}={v}"));
        }
    }
    if let Some(v) = &m.deduplicated_name {
        parts.push(format!("deduplicated_name={}", quote(v)));
    }
    for (k, v) in &m.other {
        parts.push(format!("{k}={v}"));
    }
    if let Some(v) = m.stack_frame_id {
        parts.push(format!("stack_frame_id={v}"));
    }
    if let Some(v) = &m.scheduling_name {
        parts.push(format!("scheduling_name={}", quote(v)));
    }
    format!("{{{}}}", parts.join(" "))
}
