//! `aot run`, `aot check-hlo` and `aot inspect`: every corpus HLO case compiled for h100_sxm and
//! a100_sxm_80, serialized, loaded in a fresh runtime on the emulated device and compared with its
//! io file; plus the CLI's exit codes and inspect's summary.
//!
//! `AOT_RUN_FILTER=substring` limits the corpus trials (libtest-mimic's own filter works too).
use std::path::{Path, PathBuf};

mod common;
use common::{check, root, spec};

use libtest_mimic::{Arguments, Trial};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("aot_run_test_{}", std::process::id()));
    std::fs::create_dir_all(&d).ok();
    d.join(name)
}

fn corpus_case(name: &str) -> (PathBuf, PathBuf) {
    let d = root().join("testdata/corpus/hlo");
    (
        d.join(format!("{name}.hlo")),
        d.join(format!("{name}.io.json")),
    )
}

/// The corpus's `add` compiled for h100_sxm and written to `tmp(file)`; with its io file.
fn add_artifact(file: &str) -> Result<(PathBuf, PathBuf), Box<dyn std::error::Error>> {
    let (hlo, io) = corpus_case("add");
    let bytes = harness::cmd::check::compile_file(&hlo, &spec("h100_sxm"))?;
    let artifact = tmp(file);
    std::fs::write(&artifact, &bytes)?;
    Ok((artifact, io))
}

fn run_cli(artifact: &Path, target: &str, io: &Path) -> (Result<u8, String>, String) {
    let args = harness::cmd::run::RunArgs {
        profile: true,
        ..harness::cmd::run::RunArgs::new(artifact.to_owned(), spec(target), vec![io.to_owned()])
    };
    let mut out = Vec::new();
    let r = harness::cmd::run::run(&args, &mut out).map_err(|e| format!("{e:#}"));
    (r, String::from_utf8_lossy(&out).into_owned())
}

/// `aot run --profile` on the softmax corpus case, times masked.
const PROFILE_SOFTMAX: &str = "\
kernel fusion_div_7 grid=8x1x1 block=32x1x1 lane_instructions=39696 time_us=* lane_instructions_per_s=* bytes=8192 bandwidth_gbps=*
largest kernel fusion_div_7 grid=8x1x1 block=32x1x1 lane_instructions=39696 time_us=* lane_instructions_per_s=* bytes=8192 bandwidth_gbps=*
output 0 f32[8,128]: OK max_abs_err=1.4901161193847656e-8
OK: 1 of 1 outputs match";

/// Runs the built `aot` binary; its exit status and what it printed.
fn aot(args: &[&std::ffi::OsStr]) -> Result<(Option<i32>, String), String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aot"))
        .args(args)
        .output()
        .map_err(|e| format!("cannot run aot: {e}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((out.status.code(), text))
}

/// `add`'s io file with every expected output zeroed (so the command exits 1).
fn wrong_add_io(file: &str) -> Result<(PathBuf, hlo_eval::IoCase), String> {
    let (_, io) = corpus_case("add");
    let case = hlo_eval::IoCase::read(&io).map_err(|e| e.to_string())?;
    let mut wrong = case.clone();
    for o in &mut wrong.outputs {
        *o = hlo::Array::zeros(o.dtype(), o.dims().to_vec());
    }
    let path = tmp(file);
    std::fs::write(&path, hlo_eval::case_to_json(&wrong)).map_err(|e| e.to_string())?;
    Ok((path, case))
}

/// The io file `--write-outputs` wrote holds the io file's inputs and outputs that match the
/// right ones.
fn written_outputs_match(written: &Path, right: &hlo_eval::IoCase) -> Result<(), String> {
    let got = hlo_eval::IoCase::read(written).map_err(|e| format!("{e}"))?;
    if got.inputs != right.inputs || got.outputs.len() != right.outputs.len() {
        return Err(format!(
            "{}: inputs or output count differ",
            written.display()
        ));
    }
    for (g, w) in got.outputs.iter().zip(&right.outputs) {
        let c = hlo_eval::compare(g, w, hlo_eval::Tolerance::for_dtype(w.dtype()));
        if !c.ok {
            return Err(format!("{}: {c:?}", written.display()));
        }
    }
    Ok(())
}

/// `aot run`'s timing and JSON output.
fn timing_trials() -> Vec<Trial> {
    vec![
        Trial::test("cli::run_timing", || {
            let (artifact, io) = add_artifact("add.timing.pb")?;
            let spec = spec("h100_sxm");
            let (code, text) = aot(&[
                "run".as_ref(),
                artifact.as_os_str(),
                "--target-config".as_ref(),
                spec.as_os_str(),
                "--io".as_ref(),
                io.as_os_str(),
                "--repeat".as_ref(),
                "3".as_ref(),
            ])?;
            if code != Some(0) {
                return Err(format!("exit {code:?}\n{text}").into());
            }
            // `timing: load_ms=F execute_ms=F repeats=3`, before the verdicts.
            let line = text
                .lines()
                .find(|l| l.starts_with("timing: "))
                .ok_or(format!("no timing line in\n{text}"))?;
            let fields: Vec<(&str, &str)> = line["timing: ".len()..]
                .split(' ')
                .filter_map(|kv| kv.split_once('='))
                .collect();
            let names: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
            if names != ["load_ms", "execute_ms", "repeats"]
                || fields[..2].iter().any(|(_, v)| v.parse::<f64>().is_err())
                || fields[2].1 != "3"
            {
                return Err(format!("bad timing line {line:?}").into());
            }
            Ok(())
        }),
        Trial::test("cli::run_timing_resident_inputs", || {
            let (artifact, io) = add_artifact("add.resident.pb")?;
            let spec = spec("h100_sxm");
            let run = |format: &str| {
                aot(&[
                    "run".as_ref(),
                    artifact.as_os_str(),
                    "--target-config".as_ref(),
                    spec.as_os_str(),
                    "--io".as_ref(),
                    io.as_os_str(),
                    "--resident-inputs".as_ref(),
                    "--format".as_ref(),
                    format.as_ref(),
                ])
            };
            // Implies --timing (5 repeats); the verdicts are the compared run's, as without it.
            let (code, text) = run("text")?;
            let line = text.lines().find(|l| l.starts_with("timing: "));
            if code != Some(0)
                // Both parameters of `add` are only read: bound in place, not copied.
                || !line.is_some_and(|l| l.ends_with(" repeats=5 inputs=device in_place=2/2"))
                || !text.contains("OK: 1 of 1 outputs match")
            {
                return Err(format!("exit {code:?}\n{text}").into());
            }
            let (_, text) = run("json")?;
            let v: serde_json::Value = serde_json::from_str(&text)?;
            if v["timing"]["inputs"] != "device"
                || v["timing"]["arguments_in_place"] != 2
                || !v["timing"]["execute_ms"].is_f64()
            {
                return Err(format!("bad timing {v}").into());
            }
            Ok(())
        }),
        Trial::test("cli::run_resident_inputs_refuses_several_devices", || {
            let case = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../goldens/executables/h100_sxm/v11/all_gather_mixed");
            let spec = spec("h100_sxm");
            let (code, text) = aot(&[
                "run".as_ref(),
                case.join("executable.pb").as_os_str(),
                "--target-config".as_ref(),
                spec.as_os_str(),
                "--io".as_ref(),
                case.join("replica0.io.json").as_os_str(),
                "--io".as_ref(),
                case.join("replica1.io.json").as_os_str(),
                "--resident-inputs".as_ref(),
            ])?;
            let want = "--resident-inputs times one device; the executable runs on 2";
            if code != Some(2) || !text.contains(want) {
                return Err(format!("exit {code:?}\n{text}").into());
            }
            Ok(())
        }),
        Trial::test("cli::run_format_json", || {
            let (artifact, _) = add_artifact("add.json.pb")?;
            // Expected outputs zeroed: a mismatch, reported with its first element.
            let (wrong, _) = wrong_add_io("add.zeros.json.io.json")?;
            let spec = spec("h100_sxm");
            let (code, text) = aot(&[
                "run".as_ref(),
                artifact.as_os_str(),
                "--target-config".as_ref(),
                spec.as_os_str(),
                "--io".as_ref(),
                wrong.as_os_str(),
                "--repeat".as_ref(),
                "3".as_ref(),
                "--profile".as_ref(),
                "--format".as_ref(),
                "json".as_ref(),
            ])?;
            if code != Some(1) {
                return Err(format!("exit {code:?}\n{text}").into());
            }
            // The whole output is one JSON object.
            let v: serde_json::Value = serde_json::from_str(&text)?;
            let timing = &v["timing"];
            if !timing["load_ms"].is_f64()
                || !timing["execute_ms"].is_f64()
                || timing["repeats"] != 3
                || timing["inputs"] != "host"
            {
                return Err(format!("bad timing {timing}").into());
            }
            let output = &v["outputs"][0];
            let summary = (&v["ok"], &v["matched"], &v["total"], &output["ok"]);
            if summary != (&false.into(), &0.into(), &1.into(), &false.into())
                || output["shape"] != "f32[4,5]"
                || output["first"]["index"].as_array().map(Vec::len) != Some(2)
                || !output["mismatches"].is_u64()
            {
                return Err(format!("bad verdict {v}").into());
            }
            let kernel = &v["kernels"][0];
            if !kernel["kernel"].is_string() || !kernel["lane_instructions"].is_u64() {
                return Err(format!("bad kernels {v}").into());
            }
            // Without --timing and --profile: null and empty.
            let (_, text) = aot(&[
                "run".as_ref(),
                artifact.as_os_str(),
                "--target-config".as_ref(),
                spec.as_os_str(),
                "--io".as_ref(),
                wrong.as_os_str(),
                "--format=json".as_ref(),
            ])?;
            let v: serde_json::Value = serde_json::from_str(&text)?;
            if !v["timing"].is_null() || v["kernels"] != serde_json::json!([]) {
                return Err(format!("timing or kernels without asking: {v}").into());
            }
            Ok(())
        }),
    ]
}

/// The CLI's other behaviours: written outputs, exit codes, unknown thunk kinds, the profile,
/// inspect.
fn cli_trials() -> Vec<Trial> {
    let mut trials = timing_trials();
    trials.extend([
        Trial::test("cli::run_write_outputs", || {
            let (artifact, _) = add_artifact("add.write.pb")?;
            let (wrong, right) = wrong_add_io("add.zeros.run.io.json")?;
            let written = tmp("add.run.outputs.io.json");
            let _ = std::fs::remove_file(&written);
            let spec = spec("h100_sxm");
            let (code, text) = aot(&[
                "run".as_ref(),
                artifact.as_os_str(),
                "--target-config".as_ref(),
                spec.as_os_str(),
                "--io".as_ref(),
                wrong.as_os_str(),
                "--write-outputs".as_ref(),
                written.as_os_str(),
            ])?;
            // A mismatch (exit 1), and the outputs are written all the same.
            if code != Some(1) {
                return Err(format!("exit {code:?}\n{text}").into());
            }
            Ok(written_outputs_match(&written, &right)?)
        }),
        Trial::test("cli::check_hlo_write_outputs", || {
            let (hlo, io) = corpus_case("add");
            let right = hlo_eval::IoCase::read(&io)?;
            let written = tmp("add.check.outputs.io.json");
            let _ = std::fs::remove_file(&written);
            let spec = spec("a100_sxm_80");
            let (code, text) = aot(&[
                "check-hlo".as_ref(),
                hlo.as_os_str(),
                "--io".as_ref(),
                io.as_os_str(),
                "--target-config".as_ref(),
                spec.as_os_str(),
                "--write-outputs".as_ref(),
                written.as_os_str(),
            ])?;
            if code != Some(0) {
                return Err(format!("exit {code:?}\n{text}").into());
            }
            written_outputs_match(&written, &right)?;
            // An unwritable path is an error (exit 2) naming it.
            let bad = tmp("no_such_dir/out.io.json");
            let (code, text) = aot(&[
                "check-hlo".as_ref(),
                hlo.as_os_str(),
                "--io".as_ref(),
                io.as_os_str(),
                "--target-config".as_ref(),
                spec.as_os_str(),
                "--write-outputs".as_ref(),
                bad.as_os_str(),
            ])?;
            let want = format!("cannot write {}", bad.display());
            if code != Some(2) || !text.contains(&want) {
                return Err(format!("exit {code:?}, want 2 and {want:?}\n{text}").into());
            }
            Ok(())
        }),
        Trial::test("cli::check_hlo_complex_io", || {
            // c64 in and out: io data interleaved (re, im), each part held to f32's tolerance.
            let hlo = tmp("complex.hlo");
            std::fs::write(
                &hlo,
                "HloModule m\n\nENTRY e {\n  x = c64[2] parameter(0)\n  y = c64[2] parameter(1)\n  \
                 d = c64[2] divide(x, y)\n  a = f32[2] abs(x)\n  \
                 ROOT t = (c64[2], f32[2]) tuple(d, a)\n}\n",
            )?;
            let io_text = |d_im: &str| {
                format!(
                    r#"{{"inputs": [{{"dtype": "c64", "shape": [2], "data": [3, 4, 0, -2]}},
                        {{"dtype": "c64", "shape": [2], "data": [1, 0, 0, 1]}}],
                       "outputs": [{{"dtype": "c64", "shape": [2], "data": [3, 4, -2, {d_im}]}},
                        {{"dtype": "f32", "shape": [2], "data": [5, 2]}}]}}"#
                )
            };
            let spec = spec("h100_sxm");
            let check = |io: &std::path::Path| {
                aot(&[
                    "check-hlo".as_ref(),
                    hlo.as_os_str(),
                    "--io".as_ref(),
                    io.as_os_str(),
                    "--target-config".as_ref(),
                    spec.as_os_str(),
                ])
            };
            let right = tmp("complex.io.json");
            std::fs::write(&right, io_text("0"))?;
            let (code, text) = check(&right)?;
            if code != Some(0) || !text.contains("output 0 c64[2]: OK") {
                return Err(format!("exit {code:?}\n{text}").into());
            }
            let wrong = tmp("complex.wrong.io.json");
            std::fs::write(&wrong, io_text("0.5"))?;
            let (code, text) = check(&wrong)?;
            let want =
                "output 0 c64[2]: MISMATCH max_abs_err=5e-1 mismatches=1 first=[1] got=-0 want=0.5";
            if code != Some(1) || !text.contains(want) {
                return Err(format!("exit {code:?}, want 1 and {want:?}\n{text}").into());
            }
            Ok(())
        }),
        Trial::test("cli::run_exit_codes", || {
            let (artifact, io) = add_artifact("add.h100.pb")?;
            let (r, text) = run_cli(&artifact, "h100_sxm", &io);
            if r != Ok(0) || !text.contains("OK: 1 of 1 outputs match") {
                return Err(format!("{r:?}\n{text}").into());
            }
            // A wrong expectation: exit 1.
            let case = hlo_eval::IoCase::read(&io)?;
            let mut wrong = case.clone();
            wrong.outputs[0] = wrong.outputs[0].convert(hlo::DType::F32);
            let zeros = hlo::Array::zeros(
                wrong.outputs[0].dtype(),
                wrong.outputs[0].dims().to_vec(),
            );
            wrong.outputs[0] = zeros;
            let wrong_io = tmp("add.wrong.io.json");
            std::fs::write(&wrong_io, hlo_eval::case_to_json(&wrong))?;
            let (r, text) = run_cli(&artifact, "h100_sxm", &wrong_io);
            if r != Ok(1) || !text.contains("MISMATCH") {
                return Err(format!("{r:?}\n{text}").into());
            }
            // A target config out of range: the error names the config file, not the artifact.
            let h100 = std::fs::read_to_string(spec("h100_sxm"))?;
            let bad = tmp("cc_major_minus_one.txtpb");
            std::fs::write(&bad, h100.replacen("    major: 9\n", "    major: -1\n", 1))?;
            let args =
                harness::cmd::run::RunArgs::new(artifact.clone(), bad.clone(), vec![io.clone()]);
            let e = harness::cmd::run::run(&args, &mut Vec::new()).map_err(|e| format!("{e:#}"));
            let want = format!("{}: INVALID_ARGUMENT: target config: cuda_compute_capability -1.0 is not a CUDA compute capability", bad.display());
            if e != Err(want.clone()) {
                return Err(format!("{e:?}\nwanted {want:?}").into());
            }
            // An sm_90 executable on an sm_80 device: an error (exit 2) naming both.
            let (r, _) = run_cli(&artifact, "a100_sxm_40", &io);
            match r {
                Err(e) if e.contains("FAILED_PRECONDITION: gpu_compute_capability is sm_90 (9.0), the device is sm_80 (8.0)") => Ok(()),
                other => Err(format!("{other:?}").into()),
            }
        }),
        Trial::test("cli::run_unknown_thunk_kind_names_it", || {
            // `add` with one more entry thunk whose only field is ThunkProto oneof number 42
            // (XLA's ragged_all_to_all_thunk, absent from this schema), as a newer compiler's.
            use proto::prost::Message;
            let (hlo, io) = corpus_case("add");
            let mut bytes = harness::cmd::check::compile_file(&hlo, &spec("h100_sxm"))?;
            let n = proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice())?
                .thunks
                .len();
            // thunks = 13, 3 bytes: field 42 (key 0xd2 0x02), length-delimited, empty.
            bytes.extend_from_slice(&[0x6a, 0x03, 0xd2, 0x02, 0x00]);
            let artifact = tmp("add.unknown_kind.pb");
            std::fs::write(&artifact, &bytes)?;
            let (r, _) = run_cli(&artifact, "h100_sxm", &io);
            let want = format!(
                "{}: the thunks use ThunkProto oneof field 42 (XLA's ragged_all_to_all_thunk), which this runtime's schema does not declare: UNIMPLEMENTED: thunks[{n}].impl is not set: the thunk was made by a newer compiler; this runtime does not know that thunk kind",
                artifact.display()
            );
            if r != Err(want.clone()) {
                return Err(format!("{r:?}\nwanted {want:?}").into());
            }
            Ok(())
        }),
        Trial::test("cli::run_profile_counts_lane_instructions", || {
            // softmax: one row-reduction launch. Times vary; everything else is deterministic.
            let (hlo, io) = corpus_case("softmax");
            let bytes = harness::cmd::check::compile_file(&hlo, &spec("h100_sxm"))?;
            let artifact = tmp("softmax.profile.h100.pb");
            std::fs::write(&artifact, &bytes)?;
            let (r, text) = run_cli(&artifact, "h100_sxm", &io);
            let masked: Vec<String> = text
                .lines()
                .map(|l| {
                    l.split(' ')
                        .map(|f| match f.split_once('=') {
                            Some((
                                k @ ("time_us" | "lane_instructions_per_s" | "bandwidth_gbps"),
                                _,
                            )) => {
                                format!("{k}=*")
                            }
                            _ => f.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            let want = PROFILE_SOFTMAX;
            if r != Ok(0) || masked.join("\n") != want {
                return Err(format!("{r:?}\ngot:\n{}\nwant:\n{want}", masked.join("\n")).into());
            }
            Ok(())
        }),
        Trial::test("cli::inspect_summary", || {
            let (hlo, _) = corpus_case("add");
            let bytes = harness::cmd::check::compile_file(&hlo, &spec("h100_sxm"))?;
            let mut out = Vec::new();
            harness::cmd::inspect::inspect(&bytes, false, &mut out)?;
            let text = String::from_utf8_lossy(&out);
            for needle in [
                "thunks: [{",
                "# ---- PTX module 0",
                ".entry",
                "# ---- summary ----",
                "allocations:",
                "kernels:",
                "thunks:",
            ] {
                if !text.contains(needle) {
                    return Err(format!("inspect output lacks {needle:?}:\n{text}").into());
                }
            }
            Ok(())
        }),
    ]);
    trials
}

fn main() {
    let args = Arguments::from_args();
    let filter = std::env::var("AOT_RUN_FILTER").unwrap_or_default();
    let mut trials = cli_trials();
    let dir = root().join("testdata/corpus/hlo");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    cases.sort();
    for target in ["h100_sxm", "a100_sxm_80"] {
        for hlo in &cases {
            let name = hlo.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let Some(stem) = name.strip_suffix(".hlo") else {
                continue;
            };
            if stem.ends_with(".opt") || !stem.contains(filter.as_str()) {
                continue;
            }
            let io = dir.join(format!("{stem}.io.json"));
            if !io.exists() {
                continue;
            }
            let (hlo, target) = (hlo.clone(), target.to_owned());
            trials.push(Trial::test(
                format!("check_hlo::{target}::{stem}"),
                move || check(&hlo, &io, &target),
            ));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
