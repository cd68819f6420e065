//! The comparison of outputs with their expectations: one verdict per output leaf, in `aot eval`'s
//! format as text or JSON, and the first replica that differs.
use std::io::Write;

use anyhow::bail;
use hlo::Array;
use hlo_eval::{compare, IoCase, Tolerance};

use super::*;

/// The report (as [`report`] prints it) of the first replica whose outputs differ from its
/// expectations, or `None` when every replica matches.
pub fn first_mismatch(got: &[IoCase], want: &[IoCase]) -> anyhow::Result<Option<String>> {
    for (r, (got, want)) in got.iter().zip(want).enumerate() {
        let mut text = Vec::new();
        let matched = report(
            &format!("replica {r} "),
            &got.outputs,
            &want.outputs,
            ToleranceRule::PerDtype,
            &mut text,
        )?;
        if matched != want.outputs.len() {
            return Ok(Some(String::from_utf8_lossy(&text).into_owned()));
        }
    }
    Ok(None)
}

/// Prints one verdict line per output (`prefix` names the replica) and returns how many match.
pub fn report(
    prefix: &str,
    got: &[Array],
    want: &[Array],
    rule: ToleranceRule,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    let got: Vec<Output<'_>> = got.iter().map(Output::Read).collect();
    let verdicts = verdicts(prefix, &got, want, rule)?;
    for v in &verdicts {
        writeln!(out, "{}", v.line())?;
    }
    Ok(verdicts.iter().filter(|v| v.comparison.ok).count())
}

/// One output's comparison with its expectation.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// Which device's output, as verdict lines name it (`replica 1 `, `device 3 `; empty with
    /// one device).
    pub prefix: String,
    /// The output's index.
    pub index: usize,
    /// The expected shape (`f32[2,3]`).
    pub shape: String,
    /// What the comparison found.
    pub comparison: hlo_eval::Comparison,
    /// The tolerance it was held to.
    pub tolerance: Tolerance,
}

/// One output of a device as [`verdicts`] compares it.
#[derive(Debug, Clone, Copy)]
pub enum Output<'a> {
    /// Read back.
    Read(&'a Array),
    /// Not read back because its shape (`f32[2,3]`) differs from the expected one
    /// (`outputs_to_read`).
    NotRead(&'a str),
}

/// The comparison of each of `got` with `want` (one device's outputs; `prefix` names it).
pub fn verdicts(
    prefix: &str,
    got: &[Output<'_>],
    want: &[Array],
    rule: ToleranceRule,
) -> anyhow::Result<Vec<Verdict>> {
    if got.len() != want.len() {
        bail!(
            "{prefix}the executable produces {} outputs, the io file lists {}",
            got.len(),
            want.len()
        );
    }
    Ok(got
        .iter()
        .zip(want)
        .enumerate()
        .map(|(index, (g, w))| {
            let tolerance = rule.tolerance(w);
            Verdict {
                prefix: prefix.to_owned(),
                index,
                shape: w.shape_string(),
                comparison: match g {
                    Output::Read(g) => compare(g, w, tolerance),
                    Output::NotRead(shape) => hlo_eval::Comparison {
                        ok: false,
                        structural: Some(format!("got {shape}, want {}", w.shape_string())),
                        max_abs_err: 0.0,
                        mismatches: 0,
                        first: None,
                    },
                },
                tolerance,
            }
        })
        .collect())
}

impl Verdict {
    /// The verdict line: `output 0 f32[2]: OK max_abs_err=...` or `...: MISMATCH ...`.
    pub fn line(&self) -> String {
        let (prefix, i, shape, c) = (&self.prefix, self.index, &self.shape, &self.comparison);
        if let Some(s) = &c.structural {
            format!("{prefix}output {i} {shape}: MISMATCH {s}")
        } else if c.ok {
            format!(
                "{prefix}output {i} {shape}: OK max_abs_err={:e}",
                c.max_abs_err
            )
        } else {
            let first = c
                .first
                .as_ref()
                .map(|m| format!(" first={:?} got={} want={}", m.index, m.got, m.want))
                .unwrap_or_default();
            format!(
                "{prefix}output {i} {shape}: MISMATCH max_abs_err={:e} mismatches={}{first} (atol={:e} rtol={:e})",
                c.max_abs_err, c.mismatches, self.tolerance.atol, self.tolerance.rtol
            )
        }
    }

    /// The verdict as `aot run --format json` lists it.
    pub(super) fn json(&self) -> serde_json::Value {
        let c = &self.comparison;
        let device = self.prefix.trim();
        serde_json::json!({
            "device": (!device.is_empty()).then_some(device),
            "output": self.index,
            "shape": self.shape,
            "ok": c.ok,
            "structural": c.structural,
            "max_abs_err": json_f64(c.max_abs_err),
            "mismatches": c.mismatches,
            "first": c.first.as_ref().map(|m| serde_json::json!({
                "index": m.index,
                "got": json_scalar(m.got),
                "want": json_scalar(m.want),
            })),
            "atol": json_f64(self.tolerance.atol),
            "rtol": json_f64(self.tolerance.rtol),
        })
    }
}

/// A float as JSON: a number when finite, else `"nan"`, `"inf"` or `"-inf"` (JSON has no
/// such numbers).
pub(super) fn json_f64(v: f64) -> serde_json::Value {
    match serde_json::Number::from_f64(v) {
        Some(n) => serde_json::Value::Number(n),
        None => serde_json::Value::String(format!("{v}").to_lowercase()),
    }
}

/// An element's value as JSON: integers exactly (as a string beyond 64 bits).
pub(super) fn json_scalar(v: hlo_eval::Scalar) -> serde_json::Value {
    match v {
        hlo_eval::Scalar::Float(f) => json_f64(f),
        hlo_eval::Scalar::Int(i) => match (i64::try_from(i), u64::try_from(i)) {
            (Ok(i), _) => i.into(),
            (_, Ok(u)) => u.into(),
            _ => i.to_string().into(),
        },
    }
}
