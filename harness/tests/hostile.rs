//! Replays the hostile-input corpus (`testdata/hostile/manifest.json`, written by
//! `testdata/hostile/gen.rs`): each input must stop at its stage with its exact code and a
//! message containing its fragment, or (code `OK`) be accepted and run within the limits.
//!
//! Codes: the runtime's absl code at `load` and `run`; the `hlo_text::ParseErrorKind` at `parse`; the
//! `compiler::CompileError` variant at `compile`; `ERROR` for `aot ptx-run` and target-config
//! failures, which have no code.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use libtest_mimic::{Arguments, Failed, Trial};
use runtime::{DeviceDescription, EmulatedDevice, RuntimeFlags};
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/hostile")
}

fn spec(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../testdata/target_specs/{name}.txtpb"))
}

/// The stage, code and message an input ended with.
struct Got {
    stage: &'static str,
    code: String,
    message: String,
}

impl Got {
    fn err(stage: &'static str, code: impl Into<String>, message: impl Into<String>) -> Got {
        Got {
            stage,
            code: code.into(),
            message: message.into(),
        }
    }
}

fn flags(manifest: &Value) -> RuntimeFlags {
    let f = &manifest["flags"];
    let d = RuntimeFlags::default();
    RuntimeFlags {
        max_execution_secs: f["max_execution_secs"]
            .as_u64()
            .unwrap_or(d.max_execution_secs),
        max_while_iterations: f["max_while_iterations"]
            .as_u64()
            .unwrap_or(d.max_while_iterations),
        emulator_host_memory_bytes: f["emulator_host_memory_bytes"]
            .as_u64()
            .unwrap_or(d.emulator_host_memory_bytes),
        ..d
    }
}

/// Loads and runs an artifact (zero-filled arguments) on the emulated `target`.
fn load_and_run(bytes: &[u8], target: &str, flags: &RuntimeFlags) -> anyhow::Result<Got> {
    let config = proto::load_target_config(&spec(target))?;
    let device =
        EmulatedDevice::new(DeviceDescription::from_target_config(&config)?).with_flags(flags);
    let exe = match runtime::load(bytes, &device, flags) {
        Ok(exe) => exe,
        Err(e) => return Ok(Got::err("load", e.code().as_str(), e.to_string())),
    };
    let args: Vec<Vec<u8>> = exe
        .parameters
        .iter()
        .map(|(_, leaf)| vec![0u8; leaf.size as usize])
        .collect();
    let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    Ok(match exe.execute(&device, &refs) {
        Ok(_) => Got::err("run", "OK", ""),
        Err(e) => Got::err("run", e.code().as_str(), e.to_string()),
    })
}

fn replay(case: &Value, manifest: &Value) -> anyhow::Result<Got> {
    let file = dir().join(case["file"].as_str().unwrap_or_default());
    let target = case["target"].as_str().unwrap_or("h100_sxm");
    let flags = flags(manifest);
    match case["kind"].as_str() {
        Some("artifact") => load_and_run(&std::fs::read(&file)?, target, &flags),
        Some("hlo") => {
            let text = std::fs::read_to_string(&file)?;
            let module = match hlo_text::parse_module(&text) {
                Ok(m) => m,
                Err(e) => return Ok(Got::err("parse", format!("{:?}", e.kind), e.to_string())),
            };
            let t = compiler::Target::load(&spec(target))?;
            let bytes =
                match compiler::compile_to_bytes(&module, &t, &compiler::CompileOptions::default())
                {
                    Ok(b) => b,
                    Err(e) => {
                        let variant = format!("{e:?}");
                        let variant = variant
                            .split(|c: char| !c.is_alphanumeric())
                            .next()
                            .unwrap_or_default()
                            .to_owned();
                        return Ok(Got::err("compile", variant, e.to_string()));
                    }
                };
            load_and_run(&bytes, target, &flags)
        }
        Some("ptx") => {
            let launch = dir().join(case["launch"].as_str().unwrap_or_default());
            let mut out = Vec::new();
            Ok(match harness::run_ptx(&file, &launch, &mut out) {
                Ok(true) => Got::err("run", "OK", ""),
                Ok(false) => Got::err("run", "MISMATCH", String::from_utf8_lossy(&out)),
                Err(e) => Got::err("run", "ERROR", format!("{e:#}")),
            })
        }
        Some("config") => {
            let text = std::fs::read_to_string(&file)?;
            let parsed = proto::parse_target_config(&text, "config")
                .map_err(|e| e.to_string())
                .and_then(|c| DeviceDescription::from_target_config(&c).map_err(|e| e.to_string()));
            Ok(match parsed {
                Ok(_) => Got::err("parse", "OK", ""),
                Err(m) => Got::err("parse", "ERROR", m),
            })
        }
        other => anyhow::bail!("unknown kind {other:?}"),
    }
}

fn check(case: &Value, manifest: &Value) -> Result<(), Failed> {
    let got = replay(case, manifest).map_err(|e| format!("{e:#}"))?;
    let (stage, code, message) = (
        case["stage"].as_str().unwrap_or_default(),
        case["code"].as_str().unwrap_or_default(),
        case["message"].as_str().unwrap_or_default(),
    );
    if std::env::var_os("XLA_AOT_HOSTILE_SHOW").is_some() {
        println!(
            "{}: {} {}: {}",
            case["file"], got.stage, got.code, got.message
        );
    }
    // An accepted input has no stage that refused it: only the code is compared.
    let stage_ok = code == "OK" || got.stage == stage;
    if !stage_ok || got.code != code || !got.message.contains(message) {
        return Err(format!(
            "expected {stage} {code} containing {message:?}\n     got {} {}: {}",
            got.stage, got.code, got.message
        )
        .into());
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let text = match std::fs::read_to_string(dir().join("manifest.json")) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read testdata/hostile/manifest.json: {e}");
            return ExitCode::from(2);
        }
    };
    let manifest: Value = match serde_json::from_str(&text) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("testdata/hostile/manifest.json: {e}");
            return ExitCode::from(2);
        }
    };
    let cases = manifest["cases"].as_array().cloned().unwrap_or_default();
    let mut trials: Vec<Trial> = cases
        .iter()
        .map(|case| {
            let name = case["file"].as_str().unwrap_or("?").to_owned();
            let (case, manifest) = (case.clone(), manifest.clone());
            Trial::test(format!("hostile::{name}"), move || check(&case, &manifest))
        })
        .collect();
    // Every input file is in the manifest, and every case has a message fragment.
    let listed: Vec<String> = cases
        .iter()
        .flat_map(|c| [c["file"].as_str(), c["launch"].as_str()])
        .flatten()
        .map(str::to_owned)
        .collect();
    trials.push(Trial::test(
        "hostile::manifest_lists_every_file",
        move || {
            let mut missing = Vec::new();
            for entry in std::fs::read_dir(dir())? {
                let name = entry?.file_name().to_string_lossy().into_owned();
                if !["gen.rs", "manifest.json", "README.md"].contains(&name.as_str())
                    && !listed.contains(&name)
                {
                    missing.push(name);
                }
            }
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("files not in manifest.json: {missing:?}").into())
            }
        },
    ));
    libtest_mimic::run(&args, trials).exit_code()
}
