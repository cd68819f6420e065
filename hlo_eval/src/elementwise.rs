//! Elementwise kernels: unary and binary arithmetic, compare, select, clamp, convert.
//!
//! Values are widened to a carrier ([`Wide`]): floats compute in `f64` and are rounded once to
//! the result type (for `+ - * /` and `sqrt` this equals computing in the narrow type; for
//! transcendentals it is at least as accurate). Integers compute in `i64`/`u64` with wrapping
//! arithmetic and are truncated to the result width, which is two's-complement wrapping.
//!
//! Integer corner cases follow XLA's evaluator: `x / 0` is `-1` for signed and the maximum for
//! unsigned types; `INT_MIN / -1` is `INT_MIN`; `x % 0` is `x`; `INT_MIN % -1` is 0; shifts by a
//! negative amount or by at least the bit width give 0 (`shift-left`, `shift-right-logical`) or
//! the sign fill (`shift-right-arithmetic`). Float `maximum`/`minimum` propagate NaN.
use hlo::{Array, DType, Data, Wide};

use super::{invalid, EvalError};

/// Elementwise operations with one operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnaryOp {
    /// `abs`
    Abs,
    /// `negate`
    Negate,
    /// `sign`
    Sign,
    /// `exponential`
    Exp,
    /// `exponential-minus-one`
    Expm1,
    /// `log`
    Log,
    /// `log-plus-one`
    Log1p,
    /// `sqrt`
    Sqrt,
    /// `rsqrt`
    Rsqrt,
    /// `cbrt`
    Cbrt,
    /// `tanh`
    Tanh,
    /// `logistic`
    Logistic,
    /// `sine`
    Sin,
    /// `cosine`
    Cos,
    /// `tan`
    Tan,
    /// `floor`
    Floor,
    /// `ceil`
    Ceil,
    /// `round-nearest-afz`
    RoundNearestAfz,
    /// `round-nearest-even`
    RoundNearestEven,
    /// `is-finite` (result `pred`)
    IsFinite,
    /// `not`
    Not,
    /// `popcnt`
    PopulationCount,
    /// `count-leading-zeros`
    Clz,
    /// `erf`
    Erf,
}

/// Elementwise operations with two operands of the same shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BinaryOp {
    /// `add`
    Add,
    /// `subtract`
    Subtract,
    /// `multiply`
    Multiply,
    /// `divide`
    Divide,
    /// `remainder`
    Remainder,
    /// `maximum`
    Maximum,
    /// `minimum`
    Minimum,
    /// `power`
    Power,
    /// `atan2`
    Atan2,
    /// `and`
    And,
    /// `or`
    Or,
    /// `xor`
    Xor,
    /// `shift-left`
    ShiftLeft,
    /// `shift-right-logical`
    ShiftRightLogical,
    /// `shift-right-arithmetic`
    ShiftRightArithmetic,
}

/// `direction=` of compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `EQ`
    Eq,
    /// `NE`
    Ne,
    /// `LT`
    Lt,
    /// `LE`
    Le,
    /// `GT`
    Gt,
    /// `GE`
    Ge,
}

impl UnaryOp {
    /// The HLO opcode name.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Abs => "abs",
            UnaryOp::Negate => "negate",
            UnaryOp::Sign => "sign",
            UnaryOp::Exp => "exponential",
            UnaryOp::Expm1 => "exponential-minus-one",
            UnaryOp::Log => "log",
            UnaryOp::Log1p => "log-plus-one",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Rsqrt => "rsqrt",
            UnaryOp::Cbrt => "cbrt",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Logistic => "logistic",
            UnaryOp::Sin => "sine",
            UnaryOp::Cos => "cosine",
            UnaryOp::Tan => "tan",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::RoundNearestAfz => "round-nearest-afz",
            UnaryOp::RoundNearestEven => "round-nearest-even",
            UnaryOp::IsFinite => "is-finite",
            UnaryOp::Not => "not",
            UnaryOp::PopulationCount => "popcnt",
            UnaryOp::Clz => "count-leading-zeros",
            UnaryOp::Erf => "erf",
        }
    }
}

impl BinaryOp {
    /// The HLO opcode name.
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Subtract => "subtract",
            BinaryOp::Multiply => "multiply",
            BinaryOp::Divide => "divide",
            BinaryOp::Remainder => "remainder",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
            BinaryOp::Power => "power",
            BinaryOp::Atan2 => "atan2",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Xor => "xor",
            BinaryOp::ShiftLeft => "shift-left",
            BinaryOp::ShiftRightLogical => "shift-right-logical",
            BinaryOp::ShiftRightArithmetic => "shift-right-arithmetic",
        }
    }
}

/// The error function, |error| < 1.2e-7 (Numerical Recipes' `erfc` Chebyshev fit).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    if x >= 0.0 {
        1.0 - erfc
    } else {
        erfc - 1.0
    }
}

fn unary_f(op: UnaryOp, x: f64) -> Option<f64> {
    Some(match op {
        UnaryOp::Abs => x.abs(),
        UnaryOp::Negate => -x,
        UnaryOp::Sign => {
            if x.is_nan() || x == 0.0 {
                x
            } else {
                x.signum()
            }
        }
        UnaryOp::Exp => x.exp(),
        UnaryOp::Expm1 => x.exp_m1(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Log1p => x.ln_1p(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Rsqrt => 1.0 / x.sqrt(),
        UnaryOp::Cbrt => x.cbrt(),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Logistic => 1.0 / (1.0 + (-x).exp()),
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
        UnaryOp::Tan => x.tan(),
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::RoundNearestAfz => x.round(),
        UnaryOp::RoundNearestEven => x.round_ties_even(),
        UnaryOp::Erf => erf(x),
        UnaryOp::IsFinite | UnaryOp::Not | UnaryOp::PopulationCount | UnaryOp::Clz => return None,
    })
}

/// Mask of the low `bits` bits.
fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn unary_s(op: UnaryOp, x: i64, bits: u32) -> Option<i64> {
    Some(match op {
        UnaryOp::Abs => x.wrapping_abs(),
        UnaryOp::Negate => x.wrapping_neg(),
        UnaryOp::Sign => x.signum(),
        UnaryOp::Not => !x,
        UnaryOp::PopulationCount => i64::from((x as u64 & mask(bits)).count_ones()),
        UnaryOp::Clz => i64::from((x as u64 & mask(bits)).leading_zeros() - (64 - bits)),
        _ => return None,
    })
}

fn unary_u(op: UnaryOp, x: u64, bits: u32) -> Option<u64> {
    Some(match op {
        UnaryOp::Abs => x,
        UnaryOp::Negate => x.wrapping_neg(),
        UnaryOp::Sign => u64::from(x != 0),
        UnaryOp::Not => !x,
        UnaryOp::PopulationCount => u64::from((x & mask(bits)).count_ones()),
        UnaryOp::Clz => u64::from((x & mask(bits)).leading_zeros() - (64 - bits)),
        _ => return None,
    })
}

fn unsupported(op: &str, dtype: DType) -> EvalError {
    invalid(op, format!("not defined for element type {dtype}"))
}

/// Applies a unary operation. `is-finite` produces `pred`; everything else keeps the type.
pub fn unary(op: UnaryOp, x: &Array) -> Result<Array, EvalError> {
    let dtype = x.dtype();
    if dtype.is_complex() {
        return super::complex_ops::unary(op, x);
    }
    let bits = dtype.bit_width();
    let err = || unsupported(op.name(), dtype);
    let data = match x.data().to_wide() {
        Wide::F(v) => {
            if op == UnaryOp::IsFinite {
                Data::Pred(v.iter().map(|x| x.is_finite()).collect())
            } else {
                let out: Option<Vec<f64>> = v.iter().map(|x| unary_f(op, *x)).collect();
                Data::from_wide_f(dtype, out.ok_or_else(err)?)
            }
        }
        Wide::S(v) => {
            let out: Option<Vec<i64>> = v.iter().map(|x| unary_s(op, *x, bits)).collect();
            Data::from_wide_s(dtype, out.ok_or_else(err)?)
        }
        Wide::U(v) => {
            let out: Option<Vec<u64>> = v.iter().map(|x| unary_u(op, *x, bits)).collect();
            Data::from_wide_u(dtype, out.ok_or_else(err)?)
        }
        Wide::P(v) => match op {
            UnaryOp::Not => Data::Pred(v.iter().map(|x| !x).collect()),
            UnaryOp::Abs => Data::Pred(v),
            _ => return Err(err()),
        },
        Wide::C(_) => return Err(err()),
    };
    Ok(Array::new(x.dims().to_vec(), data)?)
}

/// A binary operation on two widened floats; `None` when not defined for floats.
pub(crate) fn binary_f(op: BinaryOp, a: f64, b: f64) -> Option<f64> {
    Some(match op {
        BinaryOp::Add => a + b,
        BinaryOp::Subtract => a - b,
        BinaryOp::Multiply => a * b,
        BinaryOp::Divide => a / b,
        BinaryOp::Remainder => a % b,
        BinaryOp::Maximum => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        }
        BinaryOp::Minimum => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.min(b)
            }
        }
        BinaryOp::Power => a.powf(b),
        BinaryOp::Atan2 => a.atan2(b),
        _ => return None,
    })
}

/// Integer power with wrapping, by squaring.
fn ipow(mut base: u64, mut exp: u64) -> u64 {
    let mut acc = 1u64;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    acc
}

/// A binary operation on two sign-extended integers of width `bits`.
pub(crate) fn binary_s(op: BinaryOp, a: i64, b: i64, bits: u32) -> Option<i64> {
    let min = if bits >= 64 {
        i64::MIN
    } else {
        -(1i64 << (bits - 1))
    };
    let out_of_range = b < 0 || b >= i64::from(bits);
    Some(match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Subtract => a.wrapping_sub(b),
        BinaryOp::Multiply => a.wrapping_mul(b),
        BinaryOp::Divide => {
            if b == 0 {
                -1
            } else if b == -1 && a == min {
                a
            } else {
                a.wrapping_div(b)
            }
        }
        BinaryOp::Remainder => {
            if b == 0 {
                a
            } else if b == -1 && a == min {
                0
            } else {
                a.wrapping_rem(b)
            }
        }
        BinaryOp::Maximum => a.max(b),
        BinaryOp::Minimum => a.min(b),
        BinaryOp::Power => {
            if a == 1 || b == 0 {
                1
            } else if b < 0 {
                0
            } else {
                ipow(a as u64, b as u64) as i64
            }
        }
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
        BinaryOp::ShiftLeft => {
            if out_of_range {
                0
            } else {
                a.wrapping_shl(b as u32)
            }
        }
        BinaryOp::ShiftRightArithmetic => {
            if out_of_range {
                if a < 0 {
                    -1
                } else {
                    0
                }
            } else {
                a >> b
            }
        }
        BinaryOp::ShiftRightLogical => {
            if out_of_range {
                0
            } else {
                ((a as u64 & mask(bits)) >> b) as i64
            }
        }
        BinaryOp::Atan2 => return None,
    })
}

/// A binary operation on two unsigned integers of width `bits`.
pub(crate) fn binary_u(op: BinaryOp, a: u64, b: u64, bits: u32) -> Option<u64> {
    let out_of_range = b >= u64::from(bits);
    Some(match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Subtract => a.wrapping_sub(b),
        BinaryOp::Multiply => a.wrapping_mul(b),
        BinaryOp::Divide => a.checked_div(b).unwrap_or(mask(bits)),
        BinaryOp::Remainder => a.checked_rem(b).unwrap_or(a),
        BinaryOp::Maximum => a.max(b),
        BinaryOp::Minimum => a.min(b),
        BinaryOp::Power => {
            if a == 1 || b == 0 {
                1
            } else {
                ipow(a, b)
            }
        }
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
        BinaryOp::ShiftLeft => {
            if out_of_range {
                0
            } else {
                a << b
            }
        }
        BinaryOp::ShiftRightLogical | BinaryOp::ShiftRightArithmetic => {
            // An unsigned value's sign fill is 0 unless the top bit of its width is set.
            let top = (a >> (bits - 1)) & 1 == 1;
            if op == BinaryOp::ShiftRightArithmetic {
                let signed = if top { a | !mask(bits) } else { a } as i64;
                if out_of_range {
                    return Some(if top { u64::MAX } else { 0 });
                }
                (signed >> b) as u64
            } else if out_of_range {
                0
            } else {
                a >> b
            }
        }
        BinaryOp::Atan2 => return None,
    })
}

/// A binary operation on booleans (logical ops, max = or, min = and, add = or, multiply = and).
pub(crate) fn binary_p(op: BinaryOp, a: bool, b: bool) -> Option<bool> {
    Some(match op {
        BinaryOp::And | BinaryOp::Minimum | BinaryOp::Multiply => a & b,
        BinaryOp::Or | BinaryOp::Maximum | BinaryOp::Add => a | b,
        BinaryOp::Xor | BinaryOp::Subtract => a ^ b,
        BinaryOp::Power => a || !b,
        _ => return None,
    })
}

fn same_shape(op: &str, a: &Array, b: &Array) -> Result<(), EvalError> {
    if a.dtype() != b.dtype() || a.dims() != b.dims() {
        return Err(invalid(
            op,
            format!(
                "operands differ: {} vs {}",
                a.shape_string(),
                b.shape_string()
            ),
        ));
    }
    Ok(())
}

/// Applies a binary operation to two arrays of the same type and dimensions.
pub fn binary(op: BinaryOp, a: &Array, b: &Array) -> Result<Array, EvalError> {
    same_shape(op.name(), a, b)?;
    let dtype = a.dtype();
    if dtype.is_complex() {
        return super::complex_ops::binary(op, a, b);
    }
    let bits = dtype.bit_width();
    let err = || unsupported(op.name(), dtype);
    let data = match (a.data().to_wide(), b.data().to_wide()) {
        (Wide::F(x), Wide::F(y)) => {
            let out: Option<Vec<f64>> = x
                .iter()
                .zip(&y)
                .map(|(a, b)| binary_f(op, *a, *b))
                .collect();
            Data::from_wide_f(dtype, out.ok_or_else(err)?)
        }
        (Wide::S(x), Wide::S(y)) => {
            let out: Option<Vec<i64>> = x
                .iter()
                .zip(&y)
                .map(|(a, b)| binary_s(op, *a, *b, bits))
                .collect();
            Data::from_wide_s(dtype, out.ok_or_else(err)?)
        }
        (Wide::U(x), Wide::U(y)) => {
            let out: Option<Vec<u64>> = x
                .iter()
                .zip(&y)
                .map(|(a, b)| binary_u(op, *a, *b, bits))
                .collect();
            Data::from_wide_u(dtype, out.ok_or_else(err)?)
        }
        (Wide::P(x), Wide::P(y)) => {
            let out: Option<Vec<bool>> = x
                .iter()
                .zip(&y)
                .map(|(a, b)| binary_p(op, *a, *b))
                .collect();
            Data::Pred(out.ok_or_else(err)?)
        }
        _ => return Err(err()),
    };
    Ok(Array::new(a.dims().to_vec(), data)?)
}

/// Key of XLA's float total order: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
fn total_order_key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    if b < 0 {
        b ^ i64::MAX
    } else {
        b
    }
}

fn decide<T: PartialOrd>(dir: Direction, a: T, b: T) -> bool {
    match dir {
        Direction::Eq => a == b,
        Direction::Ne => a != b,
        Direction::Lt => a < b,
        Direction::Le => a <= b,
        Direction::Gt => a > b,
        Direction::Ge => a >= b,
    }
}

/// `compare`: a `pred` array. `total_order` selects XLA's `TOTALORDER` for floats.
pub fn compare(
    dir: Direction,
    total_order: bool,
    a: &Array,
    b: &Array,
) -> Result<Array, EvalError> {
    same_shape("compare", a, b)?;
    if a.dtype().is_complex() {
        return super::complex_ops::compare(dir, a, b);
    }
    let out: Vec<bool> = match (a.data().to_wide(), b.data().to_wide()) {
        (Wide::F(x), Wide::F(y)) => {
            if total_order {
                x.iter()
                    .zip(&y)
                    .map(|(a, b)| decide(dir, total_order_key(*a), total_order_key(*b)))
                    .collect()
            } else {
                x.iter().zip(&y).map(|(a, b)| decide(dir, *a, *b)).collect()
            }
        }
        (Wide::S(x), Wide::S(y)) => x.iter().zip(&y).map(|(a, b)| decide(dir, a, b)).collect(),
        (Wide::U(x), Wide::U(y)) => x.iter().zip(&y).map(|(a, b)| decide(dir, a, b)).collect(),
        (Wide::P(x), Wide::P(y)) => x.iter().zip(&y).map(|(a, b)| decide(dir, a, b)).collect(),
        _ => return Err(invalid("compare", "mixed operand types")),
    };
    Ok(Array::new(a.dims().to_vec(), Data::Pred(out))?)
}

/// `select(pred, on_true, on_false)`; `pred` may be a scalar or have the operands' dimensions.
pub fn select(pred: &Array, on_true: &Array, on_false: &Array) -> Result<Array, EvalError> {
    same_shape("select", on_true, on_false)?;
    let Data::Pred(p) = pred.data() else {
        return Err(invalid("select", format!("predicate is {}", pred.dtype())));
    };
    let n = on_true.len();
    if pred.rank() == 0 {
        let chosen = if p.first().copied().unwrap_or(false) {
            on_true
        } else {
            on_false
        };
        return Ok(chosen.clone());
    }
    if pred.dims() != on_true.dims() {
        return Err(invalid(
            "select",
            format!(
                "predicate {} does not match {}",
                pred.shape_string(),
                on_true.shape_string()
            ),
        ));
    }
    // Concatenate [on_true; on_false] and pick per element.
    let both = Data::concat(&[on_true.data(), on_false.data()])
        .ok_or_else(|| invalid("select", "operand types differ"))?;
    let idx: Vec<usize> = p
        .iter()
        .enumerate()
        .map(|(i, t)| if *t { i } else { i + n })
        .collect();
    let data = both
        .take(&idx)
        .ok_or_else(|| invalid("select", "index out of range"))?;
    Ok(Array::new(on_true.dims().to_vec(), data)?)
}

/// `clamp(min, x, max)`; `min` and `max` may be scalars. NaN in any input propagates (XLA).
pub fn clamp(lo: &Array, x: &Array, hi: &Array) -> Result<Array, EvalError> {
    let expand = |b: &Array| -> Result<Array, EvalError> {
        if b.rank() == 0 && x.rank() != 0 {
            let d = b
                .data()
                .splat(0, x.len())
                .ok_or_else(|| invalid("clamp", "empty bound"))?;
            Ok(Array::new(x.dims().to_vec(), d)?)
        } else {
            Ok(b.clone())
        }
    };
    let (lo, hi) = (expand(lo)?, expand(hi)?);
    same_shape("clamp", &lo, x)?;
    same_shape("clamp", &hi, x)?;
    if x.dtype().is_float() {
        let (l, v, h) = (
            lo.data().to_f64_vec(),
            x.data().to_f64_vec(),
            hi.data().to_f64_vec(),
        );
        let out: Vec<f64> = l
            .iter()
            .zip(&v)
            .zip(&h)
            .map(|((l, v), h)| {
                if l.is_nan() {
                    *l
                } else if v.is_nan() {
                    *v
                } else if h.is_nan() {
                    *h
                } else {
                    h.min(v.max(*l))
                }
            })
            .collect();
        return Ok(Array::new(
            x.dims().to_vec(),
            Data::from_wide_f(x.dtype(), out),
        )?);
    }
    let m = binary(BinaryOp::Maximum, x, &lo)?;
    binary(BinaryOp::Minimum, &m, &hi)
}

/// Rounds one float bit pattern (`src_m` mantissa and `src_e` exponent bits) to `m` mantissa
/// and `e` exponent bits, as XLA's `reduce-precision`: round to nearest even, overflow to a
/// signed infinity, underflow (including denormals) to a signed zero; NaN stays NaN unless
/// `m == 0`.
fn reduce_precision_bits(bits: u64, src_m: u32, src_e: u32, e: u32, m: u32) -> u64 {
    let width = 1 + src_e + src_m;
    let abs_mask = mask(width - 1);
    let exp_mask = mask(src_e) << src_m;
    let is_nan = (bits & exp_mask) == exp_mask && (bits & mask(src_m)) != 0;
    let mut v = bits;
    if m < src_m {
        let last = 1u64 << (src_m - m);
        let base_bias = (last >> 1) - 1;
        let x_last = (v & last) >> (src_m - m);
        v = v.wrapping_add(x_last + base_bias) & !(last - 1) & mask(width);
    }
    if e < src_e {
        let sign = bits & !abs_mask & mask(width);
        let bias = (1u64 << (src_e - 1)) - 1;
        let reduced_bias = (1u64 << (e - 1)) - 1;
        let max_exp = bias + reduced_bias;
        let min_exp = bias - reduced_bias;
        let x_exp = v & exp_mask;
        if x_exp > (max_exp << src_m) {
            v = sign | exp_mask;
        } else if x_exp <= (min_exp << src_m) {
            v = sign;
        }
    }
    if is_nan && m > 0 {
        bits
    } else {
        v
    }
}

/// `reduce-precision` to `exponent_bits` and `mantissa_bits` (float arrays only).
pub fn reduce_precision(
    x: &Array,
    exponent_bits: i64,
    mantissa_bits: i64,
) -> Result<Array, EvalError> {
    const OP: &str = "reduce-precision";
    let (src_m, src_e) = match x.dtype() {
        DType::F16 => (10, 5),
        DType::BF16 => (7, 8),
        DType::F32 => (23, 8),
        DType::F64 => (52, 11),
        other => return Err(unsupported(OP, other)),
    };
    let e = u32::try_from(exponent_bits)
        .ok()
        .filter(|e| *e >= 1)
        .ok_or_else(|| invalid(OP, format!("exponent_bits={exponent_bits}")))?;
    let m = u32::try_from(mantissa_bits)
        .map_err(|_| invalid(OP, format!("mantissa_bits={mantissa_bits}")))?;
    let bits: Vec<u64> = x
        .data()
        .to_bits()
        .into_iter()
        .map(|b| reduce_precision_bits(b, src_m, src_e, e, m))
        .collect();
    Ok(Array::new(
        x.dims().to_vec(),
        Data::from_bits(x.dtype(), &bits),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s32(v: Vec<i32>) -> Array {
        Array::new(vec![v.len()], Data::S32(v)).unwrap()
    }

    #[test]
    fn integer_division_semantics() {
        let a = s32(vec![7, -7, 7, i32::MIN, 5, -8]);
        let b = s32(vec![2, 2, 0, -1, -3, 3]);
        let q = binary(BinaryOp::Divide, &a, &b).unwrap();
        assert_eq!(q.data(), &Data::S32(vec![3, -3, -1, i32::MIN, -1, -2]));
        let r = binary(BinaryOp::Remainder, &a, &b).unwrap();
        assert_eq!(r.data(), &Data::S32(vec![1, -1, 7, 0, 2, -2]));
        let u = Array::new(vec![2], Data::U8(vec![7, 200])).unwrap();
        let z = Array::new(vec![2], Data::U8(vec![0, 3])).unwrap();
        assert_eq!(
            binary(BinaryOp::Divide, &u, &z).unwrap().data(),
            &Data::U8(vec![255, 66])
        );
        assert_eq!(
            binary(BinaryOp::Remainder, &u, &z).unwrap().data(),
            &Data::U8(vec![7, 2])
        );
    }

    #[test]
    fn wrapping_and_shifts() {
        let a = s32(vec![i32::MAX, -8, 1, -1]);
        let one = s32(vec![1, 1, 40, -1]);
        assert_eq!(
            binary(BinaryOp::Add, &a, &one).unwrap().data(),
            &Data::S32(vec![i32::MIN, -7, 41, -2])
        );
        let sh = s32(vec![1, 1, 32, 31]);
        assert_eq!(
            binary(BinaryOp::ShiftLeft, &a, &sh).unwrap().data(),
            &Data::S32(vec![-2, -16, 0, i32::MIN])
        );
        assert_eq!(
            binary(BinaryOp::ShiftRightArithmetic, &a, &sh)
                .unwrap()
                .data(),
            &Data::S32(vec![i32::MAX >> 1, -4, 0, -1])
        );
        let big = s32(vec![-8, -8, 1, -1]);
        let amt = s32(vec![1, 33, 0, 28]);
        assert_eq!(
            binary(BinaryOp::ShiftRightLogical, &big, &amt)
                .unwrap()
                .data(),
            &Data::S32(vec![0x7fff_fffc, 0, 1, 15])
        );
        assert_eq!(
            binary(BinaryOp::ShiftRightArithmetic, &big, &amt)
                .unwrap()
                .data(),
            &Data::S32(vec![-4, -1, 1, -1])
        );
        assert_eq!(
            unary(UnaryOp::Clz, &s32(vec![1, 0, -1])).unwrap().data(),
            &Data::S32(vec![31, 32, 0])
        );
        assert_eq!(
            unary(UnaryOp::PopulationCount, &s32(vec![-1, 7]))
                .unwrap()
                .data(),
            &Data::S32(vec![32, 3])
        );
    }

    #[test]
    fn float_semantics() {
        let a = Array::new(vec![4], Data::F32(vec![1.0, f32::NAN, -0.0, 2.5])).unwrap();
        let b = Array::new(vec![4], Data::F32(vec![f32::NAN, 1.0, 0.0, -2.5])).unwrap();
        let m = binary(BinaryOp::Maximum, &a, &b)
            .unwrap()
            .data()
            .to_f64_vec();
        assert!(m[0].is_nan() && m[1].is_nan());
        let s = unary(UnaryOp::Sign, &b).unwrap().data().to_f64_vec();
        assert!(s[0].is_nan());
        assert_eq!(&s[1..], &[1.0, 0.0, -1.0]);
        let r = unary(UnaryOp::RoundNearestEven, &a)
            .unwrap()
            .data()
            .to_f64_vec();
        assert_eq!(r[3], 2.0);
        let r = unary(UnaryOp::RoundNearestAfz, &a)
            .unwrap()
            .data()
            .to_f64_vec();
        assert_eq!(r[3], 3.0);
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 2e-7);
        assert!(unary(UnaryOp::Exp, &s32(vec![1])).is_err());
    }

    #[test]
    fn reduce_precision_to_bf16_and_f16_ranges() {
        let x = Array::new(
            vec![6],
            Data::F32(vec![
                1.0 + 2f32.powi(-8),
                1.0 + 3.0 * 2f32.powi(-8),
                1e30,
                1e-30,
                f32::NAN,
                -70000.0,
            ]),
        )
        .unwrap();
        // bf16: 8 exponent bits, 7 mantissa bits: ties to even, range unchanged.
        let b = reduce_precision(&x, 8, 7).unwrap().data().to_f64_vec();
        assert_eq!(b[0], 1.0);
        assert_eq!(b[1], 1.0 + 4.0 * 2f64.powi(-8));
        assert_eq!(b[2], f64::from(bf16_round(1e30)));
        assert!(b[4].is_nan());
        // f16 range: 5 exponent bits, 10 mantissa bits.
        let h = reduce_precision(&x, 5, 10).unwrap().data().to_f64_vec();
        assert_eq!(h[2], f64::INFINITY);
        assert_eq!(h[3], 0.0);
        assert_eq!(h[5], f64::NEG_INFINITY);
        assert!(h[4].is_nan());
        // No reduction at all is the identity.
        assert_eq!(
            reduce_precision(&x, 8, 23).unwrap().data().to_bits(),
            x.data().to_bits()
        );
        assert!(reduce_precision(&x, 0, 3).is_err());
        assert!(reduce_precision(&s32(vec![1]), 5, 3).is_err());
    }

    fn bf16_round(x: f32) -> f32 {
        half::bf16::from_f32(x).to_f32()
    }

    #[test]
    fn compare_total_order() {
        let a = Array::new(vec![3], Data::F32(vec![-0.0, f32::NAN, 1.0])).unwrap();
        let b = Array::new(vec![3], Data::F32(vec![0.0, 1.0, f32::NAN])).unwrap();
        let ieee = compare(Direction::Lt, false, &a, &b).unwrap();
        assert_eq!(ieee.data(), &Data::Pred(vec![false, false, false]));
        let total = compare(Direction::Lt, true, &a, &b).unwrap();
        assert_eq!(total.data(), &Data::Pred(vec![true, false, true]));
    }

    #[test]
    fn select_and_clamp() {
        let p = Array::new(vec![3], Data::Pred(vec![true, false, true])).unwrap();
        let t = s32(vec![1, 2, 3]);
        let f = s32(vec![4, 5, 6]);
        assert_eq!(
            select(&p, &t, &f).unwrap().data(),
            &Data::S32(vec![1, 5, 3])
        );
        let lo = Array::new(vec![], Data::S32(vec![2])).unwrap();
        let hi = Array::new(vec![], Data::S32(vec![5])).unwrap();
        assert_eq!(
            clamp(&lo, &f, &hi).unwrap().data(),
            &Data::S32(vec![4, 5, 5])
        );
        assert_eq!(
            clamp(&lo, &t, &hi).unwrap().data(),
            &Data::S32(vec![2, 2, 3])
        );
    }
}
