//! StableHLO through the whole pipeline: every corpus `NAME.mlir` goes through `aot check-hlo`
//! (read by `hlo_front::read_module`, compiled for h100_sxm and a100_sxm_80, serialized, loaded in a fresh
//! runtime on the emulated device, run, compared with `NAME.io.json`), `aot eval`, and the
//! format checks every entry point shares: HLO text named `.mlir` and StableHLO named `.hlo` are
//! refused with both formats named; a StableHLO golden case is recorded as its HLO conversion.
//! The project's own exports in `testdata/stablehlo` that the compiler supports (all but
//! `conv2d` today) go through check-hlo too, in the pretty and the generic form.
//!
//! `AOT_RUN_FILTER=substring` limits the corpus trials (libtest-mimic's own filter works too).
use std::path::PathBuf;

mod common;
use common::{check, root, spec};

use libtest_mimic::{Arguments, Failed, Trial};

fn corpus() -> PathBuf {
    root().join("testdata/corpus/hlo")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("stablehlo_pipeline_{}", std::process::id()));
    std::fs::create_dir_all(&d).ok();
    d.join(name)
}

/// The artifact compiled from `NAME.mlir` embeds exactly the module the StableHLO front end
/// converted (what check-hlo ran is what a serving host's runtime parses).
fn embeds_conversion(name: &str) -> Result<(), Failed> {
    let mlir = corpus().join(format!("{name}.mlir"));
    let bytes = harness::cmd::check::compile_file(&mlir, &spec("h100_sxm"))?;
    let exe: proto::xla::gpu::GpuExecutableProto = proto::decode_limited(&bytes, usize::MAX)?;
    let embedded = exe
        .hlo_module_with_config
        .as_ref()
        .ok_or("no embedded module")?;
    let got = hlo::from_proto(embedded)?;
    let want = hlo_front::read_module(&mlir)?;
    if got != want {
        return Err(format!(
            "embedded module differs from the conversion:\n{}\nvs\n{}",
            hlo_text::print_module(&got),
            hlo_text::print_module(&want)
        )
        .into());
    }
    Ok(())
}

fn format_trials() -> Vec<Trial> {
    vec![
        Trial::test("format::hlo_text_named_mlir", || {
            let p = tmp("add_hlo_as.mlir");
            std::fs::copy(corpus().join("add.hlo"), &p)?;
            let e = harness::cmd::check::compile_file(&p, &spec("h100_sxm"))
                .err()
                .ok_or("accepted")?;
            let want = format!(
                "{}: expected StableHLO (MLIR text) (from the extension), found HLO text: name the file .hlo to read it as HLO text",
                p.display()
            );
            if format!("{e:#}") != want {
                return Err(format!("got {e:#}\nwant {want}").into());
            }
            Ok(())
        }),
        Trial::test("format::mlir_named_hlo", || {
            let p = tmp("add_mlir_as.hlo");
            std::fs::copy(corpus().join("add.mlir"), &p)?;
            let mut out = Vec::new();
            let e = harness::cmd::eval::run(&p, &corpus().join("add.io.json"), &mut out)
                .err()
                .ok_or("accepted")?;
            let want = format!(
                "{}: expected HLO text (from the extension), found StableHLO (MLIR text): name the file .mlir to read it as StableHLO (MLIR text)",
                p.display()
            );
            if format!("{e:#}") != want {
                return Err(format!("got {e:#}\nwant {want}").into());
            }
            Ok(())
        }),
        Trial::test("format::mlir_parse_error_is_located", || {
            let p = tmp("bad.mlir");
            let text = std::fs::read_to_string(corpus().join("add.mlir"))?
                .replace("stablehlo.add %arg0, %arg1", "stablehlo.add %arg0, %nope");
            std::fs::write(&p, text)?;
            let e = harness::cmd::check::compile_file(&p, &spec("h100_sxm"))
                .err()
                .ok_or("accepted")?;
            let want = format!(
                "{}:3:31: stablehlo.add: use of undefined value %nope",
                p.display()
            );
            if format!("{e:#}") != want {
                return Err(format!("got {e:#}\nwant {want}").into());
            }
            Ok(())
        }),
        Trial::test("golden::mlir_case_recorded_as_hlo", || {
            // A directory holding only NAME.mlir makes a case; NAME.hlo beside it wins.
            let d = tmp("cases");
            std::fs::create_dir_all(&d)?;
            for f in [
                "softmax.mlir",
                "softmax.io.json",
                "add.mlir",
                "add.hlo",
                "add.io.json",
            ] {
                std::fs::copy(corpus().join(f), d.join(f))?;
            }
            let cases = harness::cases_in(&d)?;
            let names: Vec<(&str, String)> = cases
                .iter()
                .map(|c| {
                    (
                        c.name.as_str(),
                        c.module
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                    )
                })
                .collect();
            if names
                != [
                    ("add", "add.hlo".to_string()),
                    ("softmax", "softmax.mlir".to_string()),
                ]
            {
                return Err(format!("cases: {names:?}").into());
            }
            Ok(())
        }),
    ]
}

fn main() {
    let args = Arguments::from_args();
    let filter = std::env::var("AOT_RUN_FILTER").unwrap_or_default();
    let mut trials = format_trials();
    let mut names: Vec<String> = std::fs::read_dir(corpus())
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter_map(|n| n.strip_suffix(".mlir").map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let count = names.len();
    trials.push(Trial::test("check_mlir::corpus_is_present", move || {
        if count >= 43 {
            Ok(())
        } else {
            Err(format!("only {count} .mlir cases found").into())
        }
    }));
    for name in names.iter().filter(|n| n.contains(filter.as_str())) {
        for target in ["h100_sxm", "a100_sxm_80"] {
            let module = corpus().join(format!("{name}.mlir"));
            let io = corpus().join(format!("{name}.io.json"));
            let t = target.to_owned();
            trials.push(Trial::test(
                format!("check_mlir::{target}::{name}"),
                move || check(&module, &io, &t),
            ));
        }
        let n = name.clone();
        trials.push(Trial::test(format!("embedded::{name}"), move || {
            embeds_conversion(&n)
        }));
    }
    // This project's own exports whose constructs the compiler supports, pretty and generic.
    let exports = root().join("testdata/stablehlo");
    for name in [
        "conv2d",
        "misc_ops",
        "scatter_add",
        "maxpool_grad",
        "top_k",
        "batched_gather",
    ] {
        for form in ["mlir", "generic.mlir"] {
            for target in ["h100_sxm", "a100_sxm_80"] {
                let module = exports.join(format!("{name}.{form}"));
                let io = exports.join(format!("{name}.io.json"));
                let t = target.to_owned();
                trials.push(Trial::test(
                    format!("check_export::{target}::{name}.{form}"),
                    move || check(&module, &io, &t),
                ));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
