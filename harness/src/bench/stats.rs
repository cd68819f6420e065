//! Timing and summary statistics shared by the sections.
use std::time::{Duration, Instant};

/// Best (smallest) time of `reps` runs of `f`, and its last value.
pub(super) fn best<T>(reps: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed());
        last = Some(v);
    }
    match last {
        Some(v) => (best, v),
        // reps.max(1) >= 1, so the loop ran; kept total without a panic path.
        None => (best, f()),
    }
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub(super) fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

pub(super) fn median(v: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

pub(super) fn geomean(v: &[f64]) -> Option<f64> {
    let v: Vec<f64> = v
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

pub(super) fn max(v: &[f64]) -> Option<f64> {
    v.iter().copied().filter(|x| x.is_finite()).reduce(f64::max)
}

pub(super) fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.digits$}"))
}

/// Least-squares slope of ln(time) against ln(n): the growth exponent.
pub(super) fn exponent(points: &[(f64, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|(n, t)| *n > 0.0 && *t > 0.0)
        .map(|(n, t)| (n.ln(), t.ln()))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let k = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / k, sy / k);
    let (num, den) = pts.iter().fold((0.0, 0.0), |(n, d), (x, y)| {
        (n + (x - mx) * (y - my), d + (x - mx) * (x - mx))
    });
    (den > 0.0).then(|| num / den)
}
