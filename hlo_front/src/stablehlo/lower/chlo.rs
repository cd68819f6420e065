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

/// `x = ±1` gives `±inf`; elsewhere the polynomial's value `p * x`.
fn erf_inv_ends(m: &mut Math<'_, '_>, x: V, p: V) -> V {
    let r = m.mul(p, x);
    let ax = m.un(Opcode::Abs, x);
    let one = m.c(1.0);
    let at_end = m.cmp(ax, one, EQ);
    let inf = m.c(f64::INFINITY);
    let xinf = m.mul(x, inf);
    m.sel(at_end, xinf, r)
}

/// `w = -log1p(-x^2)`.
fn erf_inv_w(m: &mut Math<'_, '_>, x: V) -> V {
    let nx = m.un(Opcode::Negate, x);
    let mx2 = m.mul(x, nx);
    let l = m.un(Opcode::Log1p, mx2);
    m.un(Opcode::Negate, l)
}

fn erf_inv32(m: &mut Math<'_, '_>, x: V) -> V {
    const LT5: [f64; 9] = [
        2.81022636e-08,
        3.43273939e-07,
        -3.5233877e-06,
        -4.39150654e-06,
        0.00021858087,
        -0.00125372503,
        -0.00417768164,
        0.246640727,
        1.50140941,
    ];
    const GE5: [f64; 9] = [
        -0.000200214257,
        0.000100950558,
        0.00134934322,
        -0.00367342844,
        0.00573950773,
        -0.0076224613,
        0.00943887047,
        1.00167406,
        2.83297682,
    ];
    let w = erf_inv_w(m, x);
    let five = m.c(5.0);
    let lt = m.cmp(w, five, LT);
    let coefficient = |m: &mut Math<'_, '_>, i: usize| {
        let a = m.c(LT5[i]);
        let b = m.c(GE5[i]);
        m.sel(lt, a, b)
    };
    let c25 = m.c(2.5);
    let a = m.sub(w, c25);
    let s = m.un(Opcode::Sqrt, w);
    let three = m.c(3.0);
    let b = m.sub(s, three);
    let w = m.sel(lt, a, b);
    let mut p = coefficient(m, 0);
    for i in 1..9 {
        let c = coefficient(m, i);
        let pw = m.mul(p, w);
        p = m.add(c, pw);
    }
    erf_inv_ends(m, x, p)
}

fn erf_inv64(m: &mut Math<'_, '_>, x: V) -> V {
    const LT625: [f64; 23] = [
        -3.6444120640178196996e-21,
        -1.685059138182016589e-19,
        1.2858480715256400167e-18,
        1.115787767802518096e-17,
        -1.333171662854620906e-16,
        2.0972767875968561637e-17,
        6.6376381343583238325e-15,
        -4.0545662729752068639e-14,
        -8.1519341976054721522e-14,
        2.6335093153082322977e-12,
        -1.2975133253453532498e-11,
        -5.4154120542946279317e-11,
        1.051212273321532285e-09,
        -4.1126339803469836976e-09,
        -2.9070369957882005086e-08,
        4.2347877827932403518e-07,
        -1.3654692000834678645e-06,
        -1.3882523362786468719e-05,
        0.0001867342080340571352,
        -0.00074070253416626697512,
        -0.0060336708714301490533,
        0.24015818242558961693,
        1.6536545626831027356,
    ];
    const LT16: [f64; 19] = [
        2.2137376921775787049e-09,
        9.0756561938885390979e-08,
        -2.7517406297064545428e-07,
        1.8239629214389227755e-08,
        1.5027403968909827627e-06,
        -4.013867526981545969e-06,
        2.9234449089955446044e-06,
        1.2475304481671778723e-05,
        -4.7318229009055733981e-05,
        6.8284851459573175448e-05,
        2.4031110387097893999e-05,
        -0.0003550375203628474796,
        0.00095328937973738049703,
        -0.0016882755560235047313,
        0.0024914420961078508066,
        -0.0037512085075692412107,
        0.005370914553590063617,
        1.0052589676941592334,
        3.0838856104922207635,
    ];
    const GE16: [f64; 17] = [
        -2.7109920616438573243e-11,
        -2.5556418169965252055e-10,
        1.5076572693500548083e-09,
        -3.7894654401267369937e-09,
        7.6157012080783393804e-09,
        -1.4960026627149240478e-08,
        2.9147953450901080826e-08,
        -6.7711997758452339498e-08,
        2.2900482228026654717e-07,
        -9.9298272942317002539e-07,
        4.5260625972231537039e-06,
        -1.9681778105531670567e-05,
        7.5995277030017761139e-05,
        -0.00021503011930044477347,
        -0.00013871931833623122026,
        1.0103004648645343977,
        4.8499064014085844221,
    ];
    let w = erf_inv_w(m, x);
    let c625 = m.c(6.25);
    let c16 = m.c(16.0);
    let lt625 = m.cmp(w, c625, LT);
    let lt16 = m.cmp(w, c16, LT);
    let coefficient = |m: &mut Math<'_, '_>, i: usize| {
        let mut c = m.c(LT625[i]);
        if i < 19 {
            let o = m.c(LT16[i]);
            c = m.sel(lt625, c, o);
        }
        if i < 17 {
            let o = m.c(GE16[i]);
            c = m.sel(lt16, c, o);
        }
        c
    };
    let sw = m.un(Opcode::Sqrt, w);
    let c3125 = m.c(3.125);
    let a = m.sub(w, c3125);
    let c325 = m.c(3.25);
    let five = m.c(5.0);
    let off = m.sel(lt16, c325, five);
    let b = m.sub(sw, off);
    let w = m.sel(lt625, a, b);
    let mut p = coefficient(m, 0);
    for i in 1..23 {
        let c = coefficient(m, i);
        let pw = m.mul(p, w);
        let next = m.add(c, pw);
        p = match i {
            1..=16 => next,
            17 | 18 => m.sel(lt16, next, p),
            _ => m.sel(lt625, next, p),
        };
    }
    erf_inv_ends(m, x, p)
}

/// Erfc for `|x| >= 1`, f32 (`materializeErfcApproximationF32ForMagnitudeGeOne`).
fn erfc32_ge1(m: &mut Math<'_, '_>, x: V) -> V {
    const P: [f64; 9] = [
        2.326819970068386E-2,
        -1.387039388740657E-1,
        3.687424674597105E-1,
        -5.824733027278666E-1,
        6.210004621745983E-1,
        -4.944515323274145E-1,
        3.404879937665872E-1,
        -2.741127028184656E-1,
        5.638259427386472E-1,
    ];
    const R: [f64; 8] = [
        -1.047766399936249E+1,
        1.297719955372516E+1,
        -7.495518717768503E+0,
        2.921019019210786E+0,
        -1.015265279202700E+0,
        4.218463358204948E-1,
        -2.820767439740514E-1,
        5.641895067754075E-1,
    ];
    let x2 = m.mul(x, x);
    let z = m.un(Opcode::Negate, x2);
    let ax = m.un(Opcode::Abs, x);
    let one = m.c(1.0);
    let rx2 = m.div(one, x2);
    let ez = m.un(Opcode::Exp, z);
    let rax = m.div(one, ax);
    let ez_rax = m.mul(ez, rax);
    let two = m.c(2.0);
    let lt2 = m.cmp(ax, two, LT);
    let pp = m.poly(rx2, &P);
    let pr = m.poly(rx2, &R);
    let p = m.sel(lt2, pp, pr);
    let approx = m.mul(ez_rax, p);
    erfc_tail(m, x, z, approx, 88.72283905206835)
}

/// The end of both erfc approximations for `|x| >= 1`: 0 below `exp(-maxlog)`, `2 - erfc(-x)`
/// for negative `x`.
fn erfc_tail(m: &mut Math<'_, '_>, x: V, z: V, approx: V, maxlog: f64) -> V {
    let neg_maxlog = m.c(-maxlog);
    let tiny = m.cmp(z, neg_maxlog, LT);
    let zero = m.c(0.0);
    let clamped = m.sel(tiny, zero, approx);
    let neg = m.cmp(x, zero, LT);
    let two = m.c(2.0);
    let reflected = m.sub(two, clamped);
    m.sel(neg, reflected, clamped)
}

/// Erf for `|x| <= 1`, f32.
fn erf32_le1(m: &mut Math<'_, '_>, x: V) -> V {
    const T: [f64; 7] = [
        7.853861353153693E-5,
        -8.010193625184903E-4,
        5.188327685732524E-3,
        -2.685381193529856E-2,
        1.128358514861418E-1,
        -3.761262582423300E-1,
        1.128379165726710E+0,
    ];
    let x2 = m.mul(x, x);
    let p = m.poly(x2, &T);
    m.mul(x, p)
}

fn erfc32(m: &mut Math<'_, '_>, x: V) -> V {
    erfc_by_magnitude(m, x, erfc32_ge1, erf32_le1)
}

fn erfc64_ge1(m: &mut Math<'_, '_>, x: V) -> V {
    const P: [f64; 9] = [
        2.46196981473530512524E-10,
        5.64189564831068821977E-1,
        7.46321056442269912687E0,
        4.86371970985681366614E1,
        1.96520832956077098242E2,
        5.26445194995477358631E2,
        9.34528527171957607540E2,
        1.02755188689515710272E3,
        5.57535335369399327526E2,
    ];
    const Q: [f64; 9] = [
        1.00000000000000000000E0,
        1.32281951154744992508E1,
        8.67072140885989742329E1,
        3.54937778887819891062E2,
        9.75708501743205489753E2,
        1.82390916687909736289E3,
        2.24633760818710981792E3,
        1.65666309194161350182E3,
        5.57535340817727675546E2,
    ];
    const R: [f64; 6] = [
        5.64189583547755073984E-1,
        1.27536670759978104416E0,
        5.01905042251180477414E0,
        6.16021097993053585195E0,
        7.40974269950448939160E0,
        2.97886665372100240670E0,
    ];
    const S: [f64; 7] = [
        1.00000000000000000000E0,
        2.26052863220117276590E0,
        9.39603524938001434673E0,
        1.20489539808096656605E1,
        1.70814450747565897222E1,
        9.60896809063285878198E0,
        3.36907645100081516050E0,
    ];
    let x2 = m.mul(x, x);
    let z = m.un(Opcode::Negate, x2);
    let ez = m.un(Opcode::Exp, z);
    let ax = m.un(Opcode::Abs, x);
    let pp = m.poly(ax, &P);
    let ezp = m.mul(ez, pp);
    let pq = m.poly(ax, &Q);
    let a18 = m.div(ezp, pq);
    let pr = m.poly(ax, &R);
    let ezr = m.mul(ez, pr);
    let ps = m.poly(ax, &S);
    let a8 = m.div(ezr, ps);
    let eight = m.c(8.0);
    let lt8 = m.cmp(ax, eight, LT);
    let approx = m.sel(lt8, a18, a8);
    erfc_tail(m, x, z, approx, 7.09782712893383996843E2)
}

fn erf64_le1(m: &mut Math<'_, '_>, x: V) -> V {
    const T: [f64; 5] = [
        9.60497373987051638749E0,
        9.00260197203842689217E1,
        2.23200534594684319226E3,
        7.00332514112805075473E3,
        5.55923013010394962768E4,
    ];
    const U: [f64; 6] = [
        1.00000000000000000000E0,
        3.35617141647503099647E1,
        5.21357949780152679795E2,
        4.59432382970980127987E3,
        2.26290000613890934246E4,
        4.92673942608635921086E4,
    ];
    let x2 = m.mul(x, x);
    let pt = m.poly(x2, &T);
    let xpt = m.mul(x, pt);
    let pu = m.poly(x2, &U);
    m.div(xpt, pu)
}

fn erfc64(m: &mut Math<'_, '_>, x: V) -> V {
    erfc_by_magnitude(m, x, erfc64_ge1, erf64_le1)
}

/// Erfc as both legalizations assemble it: `1 - erf(x)` below magnitude 1, the erfc
/// approximation above.
fn erfc_by_magnitude(
    m: &mut Math<'_, '_>,
    x: V,
    ge1: fn(&mut Math<'_, '_>, V) -> V,
    le1: fn(&mut Math<'_, '_>, V) -> V,
) -> V {
    let above = ge1(m, x);
    let one = m.c(1.0);
    let erf = le1(m, x);
    let below = m.sub(one, erf);
    let ax = m.un(Opcode::Abs, x);
    let lt1 = m.cmp(ax, one, LT);
    m.sel(lt1, below, above)
}

const LANCZOS_GAMMA: f64 = 7.0;
const LANCZOS_BASE: f64 = 0.99999999999980993227684700473478;
const LANCZOS: [f64; 8] = [
    676.520368121885098567009190444019,
    -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,
    -176.61502916214059906584551354,
    12.507343278686904814458936853,
    -0.13857109526572011689554707,
    9.984369578019570859563e-6,
    1.50563273514931155834e-7,
];

/// The reflection test and the shifted argument both gamma functions start from: `x < 1/2`,
/// and `z = -x` there, `x - 1` elsewhere.
fn reflect(m: &mut Math<'_, '_>, x: V) -> (V, V) {
    let half = m.c(0.5);
    let reflect = m.cmp(x, half, LT);
    let nx = m.un(Opcode::Negate, x);
    let one = m.c(1.0);
    let xm1 = m.sub(x, one);
    let z = m.sel(reflect, nx, xm1);
    (reflect, z)
}

/// `log(t)` for `t = g + 1/2 + z`, as `log(g + 1/2) + log1p(z / (g + 1/2))`, and `t`.
fn log_t(m: &mut Math<'_, '_>, z: V) -> (V, V) {
    let gh = m.c(LANCZOS_GAMMA + 0.5);
    let t = m.add(gh, z);
    let log_gh = m.c((LANCZOS_GAMMA + 0.5).ln());
    let q = m.div(z, gh);
    let l1p = m.un(Opcode::Log1p, q);
    (m.add(log_gh, l1p), t)
}

fn lgamma(m: &mut Math<'_, '_>, x: V) -> V {
    let (reflect, z) = reflect(m, x);
    let mut a = m.c(LANCZOS_BASE);
    for (i, &k) in LANCZOS.iter().enumerate() {
        let k = m.c(k);
        let idx = m.c((i + 1) as f64);
        let zi = m.add(z, idx);
        let q = m.div(k, zi);
        a = m.add(a, q);
    }
    let (logt, t) = log_t(m, z);
    let t_div_logt = m.div(t, logt);
    let half = m.c(0.5);
    let zh = m.add(z, half);
    let sum = m.sub(zh, t_div_logt);
    let r = m.mul(sum, logt);
    let loga = m.un(Opcode::Log, a);
    let c = m.c((2f64.ln() + std::f64::consts::PI.ln()) / 2.0);
    let cr = m.add(c, r);
    let lg = m.add(cr, loga);
    let ax = m.un(Opcode::Abs, x);
    let fl = m.un(Opcode::Floor, ax);
    let frac = m.sub(ax, fl);
    let reduce = m.cmp(half, frac, LT);
    let one = m.c(1.0);
    let one_minus = m.sub(one, frac);
    let frac = m.sel(reduce, one_minus, frac);
    let pi = m.c(std::f64::consts::PI);
    let pf = m.mul(pi, frac);
    let s = m.un(Opcode::Sin, pf);
    let denom = m.un(Opcode::Log, s);
    let log_pi = m.c(std::f64::consts::PI.ln());
    let a1 = m.sub(log_pi, denom);
    let refl = m.sub(a1, lg);
    let finite = {
        let shape = m.shape_of(PrimitiveType::Pred);
        m.raw(Opcode::IsFinite, shape, vec![denom], Attrs::default())
    };
    let ndenom = m.un(Opcode::Negate, denom);
    let refl = m.sel(finite, refl, ndenom);
    let lg = m.sel(reflect, refl, lg);
    let inf = m.is_inf(x);
    let pinf = m.c(f64::INFINITY);
    m.sel(inf, pinf, lg)
}

fn digamma(m: &mut Math<'_, '_>, x: V) -> V {
    let (reflect, z) = reflect(m, x);
    let zero = m.c(0.0);
    let mut a = m.c(LANCZOS_BASE);
    let mut a_prime = zero;
    for (i, &k) in LANCZOS.iter().enumerate() {
        let k = m.c(k);
        let idx = m.c((i + 1) as f64);
        let zt = m.add(z, idx);
        let zt2 = m.mul(zt, zt);
        let q2 = m.div(k, zt2);
        a_prime = m.sub(a_prime, q2);
        let q = m.div(k, zt);
        a = m.add(a, q);
    }
    let (logt, t) = log_t(m, z);
    let ap_a = m.div(a_prime, a);
    let g = m.c(LANCZOS_GAMMA);
    let g_t = m.div(g, t);
    let s = m.add(logt, ap_a);
    let dg = m.sub(s, g_t);
    let half = m.c(0.5);
    let xh = m.add(x, half);
    let fl = m.un(Opcode::Floor, xh);
    let afl = m.un(Opcode::Abs, fl);
    let reduced = m.add(x, afl);
    let pi = m.c(std::f64::consts::PI);
    let pr = m.mul(pi, reduced);
    let cos = m.un(Opcode::Cos, pr);
    let sin = m.un(Opcode::Sin, pr);
    let pc = m.mul(pi, cos);
    let q = m.div(pc, sin);
    let refl = m.sub(dg, q);
    let dg = m.sel(reflect, refl, dg);
    let le0 = m.cmp(x, zero, LE);
    let flx = m.un(Opcode::Floor, x);
    let is_int = m.cmp(x, flx, EQ);
    let pole = m.pred(Opcode::And, le0, is_int);
    let nan = m.c(f64::NAN);
    m.sel(pole, nan, dg)
}

/// The smallest positive (denormal) value of the type.
fn smallest(m: &Math<'_, '_>) -> f64 {
    match m.ty {
        PrimitiveType::F64 => f64::from_bits(1),
        _ => f64::from(f32::from_bits(1)),
    }
}

fn zeta(m: &mut Math<'_, '_>, x: V, q: V) -> V {
    const TERMS: usize = 12;
    const ITERS: usize = 9;
    const COEFFS: [f64; TERMS] = [
        -7.1661652561756670113e18,
        1.8152105401943546773e17,
        -4.5979787224074726105e15,
        1.1646782814350067249e14,
        -2.950130727918164224e12,
        7.47242496e10,
        -1.8924375803183791606e9,
        47900160.0,
        -1209600.0,
        30240.0,
        -720.0,
        12.0,
    ];
    let two_terms_minus_one = (2 * TERMS - 1) as f64;
    let zero = m.c(0.0);
    let one = m.c(1.0);
    let mut acc = q;
    let nx = m.un(Opcode::Negate, x);
    let mut power_sum = m.op(Opcode::Power, vec![q, nx]);
    for _ in 0..ITERS {
        acc = m.add(acc, one);
        let qn = m.op(Opcode::Power, vec![acc, nx]);
        power_sum = m.add(power_sum, qn);
    }
    acc = m.add(acc, one);
    let q_neg_power = m.op(Opcode::Power, vec![acc, nx]);
    let qa = m.mul(q_neg_power, acc);
    let xm1 = m.sub(x, one);
    let correction = m.div(qa, xm1);
    let acc2 = m.mul(acc, acc);
    let rsqrt_acc = m.div(one, acc2);
    let mut horner = zero;
    for (i, &k) in COEFFS.iter().take(TERMS - 1).enumerate() {
        let l = m.c(two_terms_minus_one - 1.0 - 2.0 * i as f64);
        let fl = m.add(x, l);
        let r = m.c(two_terms_minus_one - 2.0 - 2.0 * i as f64);
        let fr = m.add(x, r);
        let product = m.mul(fl, fr);
        let inv = m.c(1.0 / k);
        let hs = m.add(horner, inv);
        let t = m.mul(rsqrt_acc, hs);
        horner = m.mul(product, t);
    }
    let half = m.c(0.5);
    let x_acc = m.div(x, acc);
    let last = m.c(1.0 / COEFFS[TERMS - 1]);
    let lh = m.add(last, horner);
    let xl = m.mul(x_acc, lh);
    let hx = m.add(half, xl);
    let tail = m.mul(q_neg_power, hx);
    let ps_c = m.add(power_sum, correction);
    let accurate = m.add(ps_c, tail);
    let aqn = m.un(Opcode::Abs, q_neg_power);
    let aps = m.un(Opcode::Abs, power_sum);
    let tiny = m.c(smallest(m));
    let bound = m.mul(aps, tiny);
    let negligible = m.cmp(aqn, bound, LT);
    let mut out = m.sel(negligible, power_sum, accurate);
    let nan = m.c(f64::NAN);
    let x_lt1 = m.cmp(x, one, LT);
    out = m.sel(x_lt1, nan, out);
    let q_le0 = m.cmp(q, zero, LE);
    let flx = m.un(Opcode::Floor, x);
    let x_not_int = m.cmp(x, flx, NE);
    let domain = m.pred(Opcode::And, q_le0, x_not_int);
    out = m.sel(domain, nan, out);
    let inf = m.c(f64::INFINITY);
    let flq = m.un(Opcode::Floor, q);
    let q_int = m.cmp(q, flq, EQ);
    let at_pole = m.pred(Opcode::And, q_le0, q_int);
    let two = m.c(2.0);
    let x_int = m.cmp(x, flx, EQ);
    let rem = m.op(Opcode::Remainder, vec![x, two]);
    let even = m.cmp(rem, zero, EQ);
    let even_int = m.pred(Opcode::And, x_int, even);
    let pole_value = m.sel(even_int, inf, nan);
    out = m.sel(at_pole, pole_value, out);
    let x_eq1 = m.cmp(x, one, EQ);
    m.sel(x_eq1, inf, out)
}

fn polygamma(m: &mut Math<'_, '_>, n: V, x: V) -> V {
    let one = m.c(1.0);
    let two = m.c(2.0);
    let rem = m.op(Opcode::Remainder, vec![n, two]);
    let twice = m.mul(two, rem);
    let sign = m.sub(twice, one);
    let np1 = m.add(n, one);
    let lg = lgamma(m, np1);
    let e = m.un(Opcode::Exp, lg);
    let z = zeta(m, np1, x);
    let se = m.mul(sign, e);
    let mut result = m.mul(se, z);
    let zero = m.c(0.0);
    let n0 = m.cmp(n, zero, EQ);
    let dg = digamma(m, x);
    result = m.sel(n0, dg, result);
    let fln = m.un(Opcode::Floor, n);
    let non_int = m.cmp(n, fln, NE);
    let negative = m.cmp(n, zero, LT);
    let non_natural = m.pred(Opcode::Or, non_int, negative);
    let nan = m.c(f64::NAN);
    m.sel(non_natural, nan, result)
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
