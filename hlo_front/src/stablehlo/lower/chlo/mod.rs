//! CHLO's math ops, decomposed into HLO ops exactly as StableHLO's CHLO legalization does
//! (`stablehlo/transforms/ChloLegalizeToStablehlo.cpp` and the real-typed patterns of
//! `ChloDecompositionPatterns*.td`, openxla/stablehlo): the same approximations, constants and
//! order of operations, so a module gives from `.mlir` what XLA's own import gives from the same
//! module (the `.hlo` that JAX prints is that import's output).
//!
//! JAX 0.10.2 emits these ops: `erf_inv` in every `jax.random.normal` / `truncated_normal`,
//! `lgamma` / `digamma` in `gammaln`, `betainc`, `igamma` and the gamma sampler's gradient,
//! the inverse trigonometric and hyperbolic functions from `jnp`, `bessel_i1e`, `polygamma`,
//! `zeta`, `next_after`, `erfc`. f16 and bf16 operands are computed in f32 and rounded once,
//! as the legalization's `materializeWithUpcast` does. Complex `sinh`, `cosh` and the inverse
//! trigonometric and hyperbolic functions go through [`super::complex`]; the other complex
//! operands are refused by name, as the legalization has no complex pattern for them.
// The coefficients are the legalization's, digit for digit (more digits than an f64 holds).
#![allow(clippy::excessive_precision)]

use super::*;

mod erf;
mod gamma;

use erf::*;
use gamma::*;

/// The CHLO ops this module decomposes.
pub(crate) const MATH_OPS: &[&str] = &[
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "bessel_i1e",
    "cosh",
    "digamma",
    "erf_inv",
    "erfc",
    "lgamma",
    "next_after",
    "polygamma",
    "sinh",
    "zeta",
];

/// Values of one array shape, in one floating-point type: what every decomposition computes on.
pub(super) struct Math<'f, 'a> {
    pub(super) f: &'f mut Front<'a>,
    pub(super) loc: SourceLoc,
    pub(super) dims: Vec<i64>,
    pub(super) ty: PrimitiveType,
}

pub(super) type V = InstrId;

impl Math<'_, '_> {
    pub(super) fn shape(&self) -> Shape {
        Shape::array(self.ty, self.dims.clone())
    }

    pub(super) fn shape_of(&self, ty: PrimitiveType) -> Shape {
        Shape::array(ty, self.dims.clone())
    }

    pub(super) fn raw(
        &mut self,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<V>,
        attrs: Attrs,
    ) -> V {
        self.f.add(opcode, shape, operands, attrs, self.loc)
    }

    /// A constant of type `ty` broadcast to the shape.
    pub(super) fn constant(&mut self, ty: PrimitiveType, v: LiteralValue) -> V {
        let literal = ConstantLiteral::Array(ArrayLiteral { values: vec![v] });
        let a = Attrs {
            literal: Some(literal),
            ..Attrs::default()
        };
        let c = self.raw(Opcode::Constant, Shape::scalar(ty), vec![], a);
        let b = Attrs {
            dimensions: Some(vec![]),
            ..Attrs::default()
        };
        let shape = self.shape_of(ty);
        self.raw(Opcode::Broadcast, shape, vec![c], b)
    }

    /// `getConstantLike(v, x)`.
    pub(super) fn c(&mut self, v: f64) -> V {
        self.constant(self.ty, LiteralValue::Float(v))
    }

    pub(super) fn op(&mut self, opcode: Opcode, operands: Vec<V>) -> V {
        let shape = self.shape();
        self.raw(opcode, shape, operands, Attrs::default())
    }

    pub(super) fn un(&mut self, opcode: Opcode, x: V) -> V {
        self.op(opcode, vec![x])
    }

    pub(super) fn add(&mut self, x: V, y: V) -> V {
        self.op(Opcode::Add, vec![x, y])
    }

    pub(super) fn sub(&mut self, x: V, y: V) -> V {
        self.op(Opcode::Subtract, vec![x, y])
    }

    pub(super) fn mul(&mut self, x: V, y: V) -> V {
        self.op(Opcode::Multiply, vec![x, y])
    }

    pub(super) fn div(&mut self, x: V, y: V) -> V {
        self.op(Opcode::Divide, vec![x, y])
    }

    pub(super) fn cmp(&mut self, x: V, y: V, dir: ComparisonDirection) -> V {
        let a = Attrs {
            comparison_direction: Some(dir),
            ..Attrs::default()
        };
        let shape = self.shape_of(PrimitiveType::Pred);
        self.raw(Opcode::Compare, shape, vec![x, y], a)
    }

    pub(super) fn pred(&mut self, opcode: Opcode, p: V, q: V) -> V {
        let shape = self.shape_of(PrimitiveType::Pred);
        self.raw(opcode, shape, vec![p, q], Attrs::default())
    }

    /// `select(p, a, b)` of values of the shape's type.
    pub(super) fn sel(&mut self, p: V, a: V, b: V) -> V {
        self.op(Opcode::Select, vec![p, a, b])
    }

    /// `materializePolynomialApproximation`: Horner's rule, highest coefficient first.
    pub(super) fn poly(&mut self, x: V, coefficients: &[f64]) -> V {
        let Some((&first, rest)) = coefficients.split_first() else {
            return self.c(0.0);
        };
        let mut p = self.c(first);
        for &k in rest {
            p = self.mul(p, x);
            let k = self.c(k);
            p = self.add(p, k);
        }
        p
    }

    pub(super) fn is_inf(&mut self, x: V) -> V {
        let ax = self.un(Opcode::Abs, x);
        let inf = self.c(f64::INFINITY);
        self.cmp(ax, inf, ComparisonDirection::Eq)
    }

    /// The largest finite value of the type.
    pub(super) fn max_finite(&self) -> f64 {
        match self.ty {
            PrimitiveType::F64 => f64::MAX,
            _ => f64::from(f32::MAX),
        }
    }
}

impl Front<'_> {
    /// Decomposes a CHLO math op, or `None` when `name` is not one of [`MATH_OPS`].
    pub(super) fn lower_chlo_math(&mut self, name: &str, op: &Op) -> Result<Option<Lowered>> {
        if !MATH_OPS.contains(&name) {
            return Ok(None);
        }
        let arity = if matches!(name, "next_after" | "polygamma" | "zeta") {
            2
        } else {
            1
        };
        self.count(op, arity)?;
        let args: Vec<V> = (0..arity)
            .map(|i| self.operand_at(op, i))
            .collect::<Result<_>>()?;
        let shape = self.shape_of(args[0]).clone();
        let (dims, ty) = match shape.element_type() {
            Some(t) if t.is_float() => (shape.dims().to_vec(), t),
            Some(t) if t.is_complex() => {
                let mut m = Math {
                    f: self,
                    loc: op.loc,
                    dims: shape.dims().to_vec(),
                    ty: t.complex_component(),
                };
                return match super::complex::lower_chlo(&mut m, name, args[0]) {
                    Some(r) => Ok(Some(Lowered::One(r))),
                    None => Err(self.bad(op, format!("complex chlo.{name} is not supported"))),
                };
            }
            _ => return Err(self.bad(op, "operand must be floating point")),
        };
        if args
            .iter()
            .any(|&a| self.shape_of(a).dims() != dims.as_slice())
        {
            return Err(self.bad(op, "operands differ in shape"));
        }
        if name == "next_after" {
            let mut m = Math {
                f: self,
                loc: op.loc,
                dims,
                ty,
            };
            return Ok(Some(Lowered::One(next_after(&mut m, args[0], args[1])?)));
        }
        // `materializeWithUpcast`: 16-bit floats are computed in f32.
        let narrow = matches!(ty, PrimitiveType::F16 | PrimitiveType::Bf16);
        let wide = if narrow { PrimitiveType::F32 } else { ty };
        let mut m = Math {
            f: self,
            loc: op.loc,
            dims,
            ty: wide,
        };
        let args: Vec<V> = if narrow {
            args.into_iter().map(|a| m.un(Opcode::Convert, a)).collect()
        } else {
            args
        };
        let r = match name {
            "acos" => acos(&mut m, args[0]),
            "acosh" => acosh(&mut m, args[0]),
            "asin" => asin(&mut m, args[0]),
            "asinh" => asinh(&mut m, args[0]),
            "atan" => {
                let one = m.c(1.0);
                m.op(Opcode::Atan2, vec![args[0], one])
            }
            "atanh" => atanh(&mut m, args[0]),
            "bessel_i1e" => bessel_i1e(&mut m, args[0]),
            "cosh" => cosh(&mut m, args[0]),
            "digamma" => digamma(&mut m, args[0]),
            "erf_inv" if wide == PrimitiveType::F64 => erf_inv64(&mut m, args[0]),
            "erf_inv" => erf_inv32(&mut m, args[0]),
            "erfc" if wide == PrimitiveType::F64 => erfc64(&mut m, args[0]),
            "erfc" => erfc32(&mut m, args[0]),
            "lgamma" => lgamma(&mut m, args[0]),
            "polygamma" => polygamma(&mut m, args[0], args[1]),
            "sinh" => sinh(&mut m, args[0]),
            _ => zeta(&mut m, args[0], args[1]),
        };
        let r = if narrow {
            self.add(Opcode::Convert, shape, vec![r], Attrs::default(), op.loc)
        } else {
            r
        };
        Ok(Some(Lowered::One(r)))
    }
}

use ComparisonDirection::{Eq as EQ, Ge as GE, Gt as GT, Le as LE, Lt as LT, Ne as NE};

fn asin(m: &mut Math<'_, '_>, x: V) -> V {
    // 2 * atan2(x, 1 + sqrt((1 - x) * (1 + x))), the sum written as ta + ta.
    let one = m.c(1.0);
    let a = m.sub(one, x);
    let b = m.add(one, x);
    let prod = m.mul(a, b);
    let s = m.un(Opcode::Sqrt, prod);
    let d = m.add(one, s);
    let ta = m.op(Opcode::Atan2, vec![x, d]);
    m.add(ta, ta)
}

fn acos(m: &mut Math<'_, '_>, x: V) -> V {
    let one = m.c(1.0);
    let a = m.sub(one, x);
    let b = m.add(one, x);
    let prod = m.mul(a, b);
    let s = m.un(Opcode::Sqrt, prod);
    m.op(Opcode::Atan2, vec![s, x])
}

fn acosh(m: &mut Math<'_, '_>, x: V) -> V {
    let big = m.c(m.max_finite());
    let two = m.c(2.0);
    let limit = m.div(big, two);
    let large = m.cmp(x, limit, GE);
    let log2 = m.un(Opcode::Log, two);
    let logx = m.un(Opcode::Log, x);
    let for_large = m.add(log2, logx);
    let one = m.c(1.0);
    let xm1 = m.sub(x, one);
    let s1 = m.un(Opcode::Sqrt, xm1);
    let xp1 = m.add(x, one);
    let s2 = m.un(Opcode::Sqrt, xp1);
    let sum = m.add(s2, s1);
    let prod = m.mul(s1, sum);
    let for_small = m.un(Opcode::Log1p, prod);
    m.sel(large, for_large, for_small)
}

fn asinh(m: &mut Math<'_, '_>, x: V) -> V {
    let sign = m.un(Opcode::Sign, x);
    let ax = m.un(Opcode::Abs, x);
    let big = m.c(m.max_finite());
    let limit = m.un(Opcode::Sqrt, big);
    let large = m.cmp(ax, limit, GE);
    let two = m.c(2.0);
    let log2 = m.un(Opcode::Log, two);
    let logax = m.un(Opcode::Log, ax);
    let for_large = m.add(log2, logax);
    let ax2 = m.mul(ax, ax);
    let one = m.c(1.0);
    let t = m.add(one, ax2);
    let s = m.un(Opcode::Sqrt, t);
    let d = m.add(one, s);
    let q = m.div(ax2, d);
    let y = m.add(ax, q);
    let for_small = m.un(Opcode::Log1p, y);
    let r = m.sel(large, for_large, for_small);
    m.mul(sign, r)
}

fn atanh(m: &mut Math<'_, '_>, x: V) -> V {
    let ax = m.un(Opcode::Abs, x);
    let one = m.c(1.0);
    let out = m.cmp(ax, one, GT);
    let nan = m.c(f64::NAN);
    let a = m.un(Opcode::Log1p, x);
    let nx = m.un(Opcode::Negate, x);
    let b = m.un(Opcode::Log1p, nx);
    let d = m.sub(a, b);
    let half = m.c(0.5);
    let r = m.mul(d, half);
    m.sel(out, nan, r)
}

/// `materializeChebyshevPolynomialApproximation`.
fn chebyshev(m: &mut Math<'_, '_>, x: V, coefficients: &[f64]) -> V {
    let mut b0 = m.c(0.0);
    let mut b1 = m.c(0.0);
    let mut b2 = m.c(0.0);
    for &k in coefficients {
        b2 = b1;
        b1 = b0;
        b0 = m.mul(x, b1);
        b0 = m.sub(b0, b2);
        let k = m.c(k);
        b0 = m.add(b0, k);
    }
    let r = m.sub(b0, b2);
    let half = m.c(0.5);
    m.mul(r, half)
}

const I1E_A_F32: [f64; 17] = [
    9.38153738649577178388E-9,
    -4.44505912879632808065E-8,
    2.00329475355213526229E-7,
    -8.56872026469545474066E-7,
    3.47025130813767847674E-6,
    -1.32731636560394358279E-5,
    4.78156510755005422638E-5,
    -1.61760815825896745588E-4,
    5.12285956168575772895E-4,
    -1.51357245063125314899E-3,
    4.15642294431288815669E-3,
    -1.05640848946261981558E-2,
    2.47264490306265168283E-2,
    -5.29459812080949914269E-2,
    1.02643658689847095384E-1,
    -1.76416518357834055153E-1,
    2.52587186443633654823E-1,
];

const I1E_B_F32: [f64; 7] = [
    -3.83538038596423702205E-9,
    -2.63146884688951950684E-8,
    -2.51223623787020892529E-7,
    -3.88256480887769039346E-6,
    -1.10588938762623716291E-4,
    -9.76109749136146840777E-3,
    7.78576235018280120474E-1,
];

const I1E_A_F64: [f64; 29] = [
    2.77791411276104639959E-18,
    -2.11142121435816608115E-17,
    1.55363195773620046921E-16,
    -1.10559694773538630805E-15,
    7.60068429473540693410E-15,
    -5.04218550472791168711E-14,
    3.22379336594557470981E-13,
    -1.98397439776494371520E-12,
    1.17361862988909016308E-11,
    -6.66348972350202774223E-11,
    3.62559028155211703701E-10,
    -1.88724975172282928790E-9,
    9.38153738649577178388E-9,
    -4.44505912879632808065E-8,
    2.00329475355213526229E-7,
    -8.56872026469545474066E-7,
    3.47025130813767847674E-6,
    -1.32731636560394358279E-5,
    4.78156510755005422638E-5,
    -1.61760815825896745588E-4,
    5.12285956168575772895E-4,
    -1.51357245063125314899E-3,
    4.15642294431288815669E-3,
    -1.05640848946261981558E-2,
    2.47264490306265168283E-2,
    -5.29459812080949914269E-2,
    1.02643658689847095384E-1,
    -1.76416518357834055153E-1,
    2.52587186443633654823E-1,
];

const I1E_B_F64: [f64; 25] = [
    7.51729631084210481353E-18,
    4.41434832307170791151E-18,
    -4.65030536848935832153E-17,
    -3.20952592199342395980E-17,
    2.96262899764595013876E-16,
    3.30820231092092828324E-16,
    -1.88035477551078244854E-15,
    -3.81440307243700780478E-15,
    1.04202769841288027642E-14,
    4.27244001671195135429E-14,
    -2.10154184277266431302E-14,
    -4.08355111109219731823E-13,
    -7.19855177624590851209E-13,
    2.03562854414708950722E-12,
    1.41258074366137813316E-11,
    3.25260358301548823856E-11,
    -1.89749581235054123450E-11,
    -5.58974346219658380687E-10,
    -3.83538038596423702205E-9,
    -2.63146884688951950684E-8,
    -2.51223623787020892529E-7,
    -3.88256480887769039346E-6,
    -1.10588938762623716291E-4,
    -9.76109749136146840777E-3,
    7.78576235018280120474E-1,
];

fn bessel_i1e(m: &mut Math<'_, '_>, x: V) -> V {
    let (a, b): (&[f64], &[f64]) = if m.ty == PrimitiveType::F64 {
        (&I1E_A_F64, &I1E_B_F64)
    } else {
        (&I1E_A_F32, &I1E_B_F32)
    };
    let z = m.un(Opcode::Abs, x);
    let half = m.c(0.5);
    let two = m.c(2.0);
    let thirty_two = m.c(32.0);
    let eight = m.c(8.0);
    let t = m.mul(half, z);
    let t = m.sub(t, two);
    let le8 = chebyshev(m, t, a);
    let le8 = m.mul(z, le8);
    let t = m.div(thirty_two, z);
    let t = m.sub(t, two);
    let gt8 = chebyshev(m, t, b);
    let sz = m.un(Opcode::Sqrt, z);
    let gt8 = m.div(gt8, sz);
    let is_le8 = m.cmp(z, eight, LE);
    let s = m.sel(is_le8, le8, gt8);
    let sign = m.un(Opcode::Sign, x);
    m.mul(sign, s)
}

/// `exp(x + log(1/2)) ± exp(log(1/2) - x)`: cosh (`+`) and sinh for large `|x|` (`-`) without
/// overflowing where the result is finite.
fn exp_pair(m: &mut Math<'_, '_>, x: V, opcode: Opcode) -> V {
    let half = m.c(0.5);
    let log_half = m.un(Opcode::Log, half);
    let a = m.add(x, log_half);
    let ea = m.un(Opcode::Exp, a);
    let b = m.sub(log_half, x);
    let eb = m.un(Opcode::Exp, b);
    m.op(opcode, vec![ea, eb])
}

fn cosh(m: &mut Math<'_, '_>, x: V) -> V {
    exp_pair(m, x, Opcode::Add)
}

fn sinh(m: &mut Math<'_, '_>, x: V) -> V {
    let large = exp_pair(m, x, Opcode::Subtract);
    let e = m.un(Opcode::Expm1, x);
    let one = m.c(1.0);
    let half = m.c(0.5);
    let ep1 = m.add(e, one);
    let ratio = m.div(e, ep1);
    let sum = m.add(e, ratio);
    let small = m.mul(half, sum);
    let ax = m.un(Opcode::Abs, x);
    let lt1 = m.cmp(ax, one, LT);
    m.sel(lt1, small, large)
}

/// `nextafter(x, y)` on the bit patterns (no upcast: the step is one unit in the last place
/// of the operands' own type).
fn next_after(m: &mut Math<'_, '_>, x: V, y: V) -> Result<V> {
    let bits = m.ty.bit_width();
    let int = match bits {
        16 => PrimitiveType::S16,
        32 => PrimitiveType::S32,
        _ => PrimitiveType::S64,
    };
    let float = m.ty;
    let ishape = m.shape_of(int);
    let fshape = m.shape();
    let bc = |m: &mut Math<'_, '_>, v: V, shape: &Shape| {
        m.raw(
            Opcode::BitcastConvert,
            shape.clone(),
            vec![v],
            Attrs::default(),
        )
    };
    let xi = bc(m, x, &ishape);
    let yi = bc(m, y, &ishape);
    let x_nan = m.cmp(x, x, NE);
    let y_nan = m.cmp(y, y, NE);
    let nan_in = m.pred(Opcode::Or, x_nan, y_nan);
    let nan = m.c(f64::NAN);
    let nan_i = bc(m, nan, &ishape);
    let sign_bit: i128 = -(1i128 << (bits - 1));
    let int_c = |m: &mut Math<'_, '_>, v: i128| m.constant(int, LiteralValue::Int(v));
    let sign_mask = int_c(m, sign_bit);
    let neg_sign_mask = int_c(m, !sign_bit);
    let iop = |m: &mut Math<'_, '_>, opcode: Opcode, a: V, b: V| {
        m.raw(opcode, ishape.clone(), vec![a, b], Attrs::default())
    };
    let x_abs = iop(m, Opcode::And, xi, neg_sign_mask);
    let y_abs = iop(m, Opcode::And, yi, neg_sign_mask);
    let equal = m.cmp(x, y, EQ);
    let zero = int_c(m, 0);
    let x_zero = m.cmp(x_abs, zero, EQ);
    let y_zero = m.cmp(y_abs, zero, EQ);
    let x_sign = iop(m, Opcode::And, xi, sign_mask);
    let y_sign = iop(m, Opcode::And, yi, sign_mask);
    let one = int_c(m, 1);
    let from_zero = iop(m, Opcode::Or, y_sign, one);
    let disagree = m.cmp(x_sign, y_sign, NE);
    let larger = m.cmp(x_abs, y_abs, GT);
    let smaller = m.pred(Opcode::Or, larger, disagree);
    let minus_one = int_c(m, -1);
    let isel = |m: &mut Math<'_, '_>, p: V, a: V, b: V| {
        m.raw(
            Opcode::Select,
            ishape.clone(),
            vec![p, a, b],
            Attrs::default(),
        )
    };
    let adjust = isel(m, smaller, minus_one, one);
    let mut r = iop(m, Opcode::Add, xi, adjust);
    let zero_case = isel(m, y_zero, yi, from_zero);
    r = isel(m, x_zero, zero_case, r);
    r = isel(m, equal, yi, r);
    r = isel(m, nan_in, nan_i, r);
    let _ = float;
    Ok(bc(m, r, &fshape))
}
