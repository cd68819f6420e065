//! The gamma family: `lgamma` (Lanczos, with the reflection for negative arguments),
//! `digamma`, Hurwitz `zeta` and `polygamma`, as the legalization writes them.
use super::*;

pub(super) const LANCZOS_GAMMA: f64 = 7.0;
pub(super) const LANCZOS_BASE: f64 = 0.99999999999980993227684700473478;
pub(super) const LANCZOS: [f64; 8] = [
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
pub(super) fn reflect(m: &mut Math<'_, '_>, x: V) -> (V, V) {
    let half = m.c(0.5);
    let reflect = m.cmp(x, half, LT);
    let nx = m.un(Opcode::Negate, x);
    let one = m.c(1.0);
    let xm1 = m.sub(x, one);
    let z = m.sel(reflect, nx, xm1);
    (reflect, z)
}

/// `log(t)` for `t = g + 1/2 + z`, as `log(g + 1/2) + log1p(z / (g + 1/2))`, and `t`.
pub(super) fn log_t(m: &mut Math<'_, '_>, z: V) -> (V, V) {
    let gh = m.c(LANCZOS_GAMMA + 0.5);
    let t = m.add(gh, z);
    let log_gh = m.c((LANCZOS_GAMMA + 0.5).ln());
    let q = m.div(z, gh);
    let l1p = m.un(Opcode::Log1p, q);
    (m.add(log_gh, l1p), t)
}

pub(super) fn lgamma(m: &mut Math<'_, '_>, x: V) -> V {
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

pub(super) fn digamma(m: &mut Math<'_, '_>, x: V) -> V {
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
pub(super) fn smallest(m: &Math<'_, '_>) -> f64 {
    match m.ty {
        PrimitiveType::F64 => f64::from_bits(1),
        _ => f64::from(f32::from_bits(1)),
    }
}

pub(super) fn zeta(m: &mut Math<'_, '_>, x: V, q: V) -> V {
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

pub(super) fn polygamma(m: &mut Math<'_, '_>, n: V, x: V) -> V {
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
