//! The scaling section: compile and load time against module size, with the fitted exponent.
use runtime::RuntimeFlags;

use super::report::{Report, Section};
use super::stats::{best, exponent, ms, opt};
use super::Env;

/// An elementwise chain of about `n` instructions over one f32\[256\] parameter (one fusion up to
/// `compiler::MAX_FUSION_DEPTH` levels, a kernel per 256 levels beyond).
pub fn chain_module(n: usize) -> String {
    let mut s = String::from("HloModule chain\n\nENTRY main {\n  x0 = f32[256]{0} parameter(0)\n");
    let last = n.max(2) - 1;
    for i in 1..=last {
        let op = match i % 4 {
            0 => format!("tanh(x{})", i - 1),
            1 => format!("add(x{}, x0)", i - 1),
            2 => format!("multiply(x{}, x0)", i - 1),
            _ => format!("subtract(x{}, x0)", i - 1),
        };
        let root = if i == last { "ROOT " } else { "" };
        s.push_str(&format!("  {root}x{i} = f32[256]{{0}} {op}\n"));
    }
    s.push_str("}\n");
    s
}

/// About `n` instructions: `n/2` pairs of an 8x8 dot and a tanh (a gemm and a kernel each).
pub fn dot_tanh_module(n: usize) -> String {
    let mut s = String::from(
        "HloModule dots\n\nENTRY main {\n  t0 = f32[8,8]{1,0} parameter(0)\n  w = f32[8,8]{1,0} parameter(1)\n",
    );
    let pairs = (n / 2).max(1);
    for i in 1..=pairs {
        let root = if i == pairs { "ROOT " } else { "" };
        s.push_str(&format!(
            "  d{i} = f32[8,8]{{1,0}} dot(t{}, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n  {root}t{i} = f32[8,8]{{1,0}} tanh(d{i})\n",
            i - 1
        ));
    }
    s.push_str("}\n");
    s
}

pub(super) fn scaling(env: &Env, report: &mut Report) -> anyhow::Result<()> {
    let sizes: &[usize] = if env.quick {
        &[500, 1000, 2000]
    } else {
        &[1000, 2000, 5000, 10000, 20000]
    };
    let reps = if env.quick { 1 } else { 3 };
    let flags = RuntimeFlags::default();
    let options = compiler::CompileOptions::default();
    let mut rows = Vec::new();
    for (shape, make) in [
        ("fused chain", chain_module as fn(usize) -> String),
        ("dot+tanh pairs", dot_tanh_module),
    ] {
        let (mut cpts, mut lpts) = (Vec::new(), Vec::new());
        let mut cells = vec![shape.to_owned()];
        for &n in sizes {
            let module = hlo_text::parse_module(&make(n))
                .map_err(|e| anyhow::anyhow!("{shape} {n}: {e}"))?;
            let (c, bytes) = best(reps, || {
                compiler::compile_to_bytes(&module, &env.target, &options)
            });
            let bytes = bytes.map_err(|e| anyhow::anyhow!("{shape} {n}: {e}"))?;
            let device = env.device();
            let (l, loaded) = best(reps.max(3), || runtime::load(&bytes, &device, &flags));
            loaded?;
            cpts.push((n as f64, c.as_secs_f64()));
            lpts.push((n as f64, l.as_secs_f64()));
            cells.push(format!("{:.1} / {:.2}", ms(c), ms(l)));
        }
        let (ce, le) = (exponent(&cpts), exponent(&lpts));
        cells.push(opt(ce, 2));
        cells.push(opt(le, 2));
        rows.push(cells);
        report.line(
            &format!("compile growth exponent, {shape}"),
            opt(ce, 2),
            "≤ 1.1",
            ce.map(|e| e <= 1.1),
        );
        report.line(
            &format!("load growth exponent, {shape}"),
            opt(le, 2),
            "≤ 1.1",
            le.map(|e| e <= 1.1),
        );
    }
    let mut headers = vec!["shape".to_owned()];
    headers.extend(sizes.iter().map(|n| format!("N={n}: compile / load ms")));
    headers.push("compile exponent".into());
    headers.push("load exponent".into());
    report.sections.push(Section {
        title: "Compile and load growth".into(),
        note: format!(
            "generated modules of N instructions (best of {reps} compiles, {} loads); exponent = least-squares slope of ln(time) over ln(N)",
            reps.max(3)
        ),
        headers,
        rows,
    });
    Ok(())
}
