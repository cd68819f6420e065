//! Elementwise operations on complex arrays (`c64`, `c128`), and `real`, `imag`, `complex`.
//!
//! Unlike the real kernels in [`super::elementwise`], arithmetic computes in the element's own
//! precision (`c64` in `f32`), with the formulas of [`hlo::complex`], which are the ones the
//! compiler's kernels emit: the evaluator is the oracle the device is compared with, and a wider
//! intermediate would turn an `f32` overflow the device sees into a finite number. The
//! transcendentals (and `power`) are XLA's formulas of [`hlo::complex_math`], computed in `f64`
//! and rounded once, as the kernels compute them.
use hlo::complex_math as cm;
use hlo::{Array, DType, Data};
use hlo::{Complex, Real};

use super::elementwise::{BinaryOp, Direction, UnaryOp};
use super::{invalid, EvalError};

fn unsupported(op: &str, dtype: DType) -> EvalError {
    invalid(op, format!("not defined for element type {dtype}"))
}

/// One complex unary operation, `None` where XLA defines none on complex numbers.
fn unary_one<T: Real>(op: UnaryOp, z: Complex<T>) -> Option<Complex<T>> {
    Some(match op {
        UnaryOp::Negate => -z,
        UnaryOp::Sign => z.sign(),
        UnaryOp::Exp => z.map_c128(cm::exp),
        UnaryOp::Expm1 => z.map_c128(cm::expm1),
        UnaryOp::Log => z.map_c128(cm::log),
        UnaryOp::Log1p => z.map_c128(cm::log1p),
        UnaryOp::Sqrt => z.map_c128(cm::sqrt),
        UnaryOp::Rsqrt => z.map_c128(cm::rsqrt),
        UnaryOp::Sin => z.map_c128(|z| cm::sin_cos(z, false)),
        UnaryOp::Cos => z.map_c128(|z| cm::sin_cos(z, true)),
        UnaryOp::Tan => z.map_c128(|z| cm::tanh_tan(z, true)),
        UnaryOp::Tanh => z.map_c128(|z| cm::tanh_tan(z, false)),
        _ => return None,
    })
}

/// One complex binary operation, `None` where XLA defines none on complex numbers.
pub(crate) fn binary_one<T: Real>(
    op: BinaryOp,
    a: Complex<T>,
    b: Complex<T>,
) -> Option<Complex<T>> {
    Some(match op {
        BinaryOp::Add => a + b,
        BinaryOp::Subtract => a - b,
        BinaryOp::Multiply => a * b,
        BinaryOp::Divide => a / b,
        BinaryOp::Power => Complex::from_c128(cm::pow(a.to_c128(), b.to_c128())),
        _ => return None,
    })
}

fn map<T: Real, U>(v: &[Complex<T>], f: impl Fn(Complex<T>) -> Option<U>) -> Option<Vec<U>> {
    v.iter().map(|z| f(*z)).collect()
}

/// A unary operation on a complex array: `abs` gives the real type of the parts, `is-finite`
/// `pred` (both parts finite), the rest keep the type.
pub fn unary(op: UnaryOp, x: &Array) -> Result<Array, EvalError> {
    let err = || unsupported(op.name(), x.dtype());
    let data = match (op, x.data()) {
        (UnaryOp::Abs, Data::C64(v)) => Data::F32(v.iter().map(|z| z.abs()).collect()),
        (UnaryOp::Abs, Data::C128(v)) => Data::F64(v.iter().map(|z| z.abs()).collect()),
        (UnaryOp::IsFinite, Data::C64(v)) => Data::Pred(
            v.iter()
                .map(|z| z.re.is_finite() && z.im.is_finite())
                .collect(),
        ),
        (UnaryOp::IsFinite, Data::C128(v)) => Data::Pred(
            v.iter()
                .map(|z| z.re.is_finite() && z.im.is_finite())
                .collect(),
        ),
        (_, Data::C64(v)) => Data::C64(map(v, |z| unary_one(op, z)).ok_or_else(err)?),
        (_, Data::C128(v)) => Data::C128(map(v, |z| unary_one(op, z)).ok_or_else(err)?),
        _ => return Err(err()),
    };
    Ok(Array::new(x.dims().to_vec(), data)?)
}

/// A binary operation on two complex arrays of the same type and dimensions.
pub fn binary(op: BinaryOp, a: &Array, b: &Array) -> Result<Array, EvalError> {
    let err = || unsupported(op.name(), a.dtype());
    fn zip<T: Real>(op: BinaryOp, x: &[Complex<T>], y: &[Complex<T>]) -> Option<Vec<Complex<T>>> {
        x.iter()
            .zip(y)
            .map(|(a, b)| binary_one(op, *a, *b))
            .collect()
    }
    let data = match (a.data(), b.data()) {
        (Data::C64(x), Data::C64(y)) => Data::C64(zip(op, x, y).ok_or_else(err)?),
        (Data::C128(x), Data::C128(y)) => Data::C128(zip(op, x, y).ok_or_else(err)?),
        _ => return Err(invalid(op.name(), "mixed operand types")),
    };
    Ok(Array::new(a.dims().to_vec(), data)?)
}

/// `compare` of complex arrays: only `EQ` and `NE` are defined (both parts compared, NaN
/// unequal to everything), as in XLA.
pub fn compare(dir: Direction, a: &Array, b: &Array) -> Result<Array, EvalError> {
    let eq = dir == Direction::Eq;
    if !eq && dir != Direction::Ne {
        return Err(invalid(
            "compare",
            format!(
                "direction {dir:?} is not defined for element type {}",
                a.dtype()
            ),
        ));
    }
    let out: Vec<bool> = match (a.data(), b.data()) {
        (Data::C64(x), Data::C64(y)) => x.iter().zip(y).map(|(p, q)| (p == q) == eq).collect(),
        (Data::C128(x), Data::C128(y)) => x.iter().zip(y).map(|(p, q)| (p == q) == eq).collect(),
        _ => return Err(invalid("compare", "mixed operand types")),
    };
    Ok(Array::new(a.dims().to_vec(), Data::Pred(out))?)
}

/// `real` (`imag` when `imag`): one part of a complex array; of a real array, `real` is the
/// array itself and `imag` zeros, as XLA defines them.
pub fn part(x: &Array, imag: bool) -> Result<Array, EvalError> {
    let data = match x.data() {
        Data::C64(v) => Data::F32(v.iter().map(|z| if imag { z.im } else { z.re }).collect()),
        Data::C128(v) => Data::F64(v.iter().map(|z| if imag { z.im } else { z.re }).collect()),
        d if d.dtype().is_float() && imag => Data::zeros(d.dtype(), d.len()),
        d if d.dtype().is_float() => d.clone(),
        d => {
            let op = if imag { "imag" } else { "real" };
            return Err(unsupported(op, d.dtype()));
        }
    };
    Ok(Array::new(x.dims().to_vec(), data)?)
}

/// `complex(re, im)`: `f32` parts make `c64`, `f64` parts `c128`.
pub fn make(re: &Array, im: &Array) -> Result<Array, EvalError> {
    if re.dims() != im.dims() {
        return Err(invalid(
            "complex",
            format!(
                "operands {} and {} differ in shape",
                re.shape_string(),
                im.shape_string()
            ),
        ));
    }
    let data = match (re.data(), im.data()) {
        (Data::F32(x), Data::F32(y)) => {
            Data::C64(x.iter().zip(y).map(|(a, b)| Complex::new(*a, *b)).collect())
        }
        (Data::F64(x), Data::F64(y)) => {
            Data::C128(x.iter().zip(y).map(|(a, b)| Complex::new(*a, *b)).collect())
        }
        _ => {
            return Err(invalid(
                "complex",
                format!(
                    "needs two f32 or two f64 operands, got {} and {}",
                    re.dtype(),
                    im.dtype()
                ),
            ))
        }
    };
    Ok(Array::new(re.dims().to_vec(), data)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c64(v: &[(f32, f32)]) -> Array {
        let data = v.iter().map(|(a, b)| Complex::new(*a, *b)).collect();
        Array::new(vec![v.len()], Data::C64(data)).unwrap()
    }

    #[test]
    fn arithmetic_parts_and_compare() {
        let a = c64(&[(5.0, 5.0), (0.0, 1.0)]);
        let b = c64(&[(1.0, 2.0), (0.0, 1.0)]);
        assert_eq!(
            binary(BinaryOp::Multiply, &a, &b).unwrap(),
            c64(&[(-5.0, 15.0), (-1.0, 0.0)])
        );
        let q = binary(BinaryOp::Divide, &a, &b).unwrap();
        assert_eq!(q, c64(&[(3.0, -1.0), (1.0, 0.0)]));
        assert_eq!(
            unary(UnaryOp::Abs, &c64(&[(3.0, 4.0)])).unwrap(),
            Array::new(vec![1], Data::F32(vec![5.0])).unwrap()
        );
        let re = part(&a, false).unwrap();
        let im = part(&a, true).unwrap();
        assert_eq!(re.data(), &Data::F32(vec![5.0, 0.0]));
        assert_eq!(make(&re, &im).unwrap(), a);
        let ne = compare(Direction::Ne, &a, &b).unwrap();
        assert_eq!(ne.data(), &Data::Pred(vec![true, false]));
        let err = compare(Direction::Lt, &a, &b).unwrap_err().to_string();
        assert!(
            err.contains("direction Lt is not defined for element type c64"),
            "{err}"
        );
        let err = binary(BinaryOp::Maximum, &a, &b).unwrap_err().to_string();
        assert!(err.contains("not defined for element type c64"), "{err}");
    }
}
