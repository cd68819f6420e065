//! `erf_inv` and `erfc` in f32 and f64: the legalization's polynomial and rational
//! approximations, piece by piece, with their ends (`±1`, the tails).
use super::*;

/// `x = ±1` gives `±inf`; elsewhere the polynomial's value `p * x`.
pub(super) fn erf_inv_ends(m: &mut Math<'_, '_>, x: V, p: V) -> V {
    let r = m.mul(p, x);
    let ax = m.un(Opcode::Abs, x);
    let one = m.c(1.0);
    let at_end = m.cmp(ax, one, EQ);
    let inf = m.c(f64::INFINITY);
    let xinf = m.mul(x, inf);
    m.sel(at_end, xinf, r)
}

/// `w = -log1p(-x^2)`.
pub(super) fn erf_inv_w(m: &mut Math<'_, '_>, x: V) -> V {
    let nx = m.un(Opcode::Negate, x);
    let mx2 = m.mul(x, nx);
    let l = m.un(Opcode::Log1p, mx2);
    m.un(Opcode::Negate, l)
}

pub(super) fn erf_inv32(m: &mut Math<'_, '_>, x: V) -> V {
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

pub(super) fn erf_inv64(m: &mut Math<'_, '_>, x: V) -> V {
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
pub(super) fn erfc32_ge1(m: &mut Math<'_, '_>, x: V) -> V {
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
pub(super) fn erfc_tail(m: &mut Math<'_, '_>, x: V, z: V, approx: V, maxlog: f64) -> V {
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
pub(super) fn erf32_le1(m: &mut Math<'_, '_>, x: V) -> V {
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

pub(super) fn erfc32(m: &mut Math<'_, '_>, x: V) -> V {
    erfc_by_magnitude(m, x, erfc32_ge1, erf32_le1)
}

pub(super) fn erfc64_ge1(m: &mut Math<'_, '_>, x: V) -> V {
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

pub(super) fn erf64_le1(m: &mut Math<'_, '_>, x: V) -> V {
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

pub(super) fn erfc64(m: &mut Math<'_, '_>, x: V) -> V {
    erfc_by_magnitude(m, x, erfc64_ge1, erf64_le1)
}

/// Erfc as both legalizations assemble it: `1 - erf(x)` below magnitude 1, the erfc
/// approximation above.
pub(super) fn erfc_by_magnitude(
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
