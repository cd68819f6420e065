//! `aot eval` end to end: the built binary on every corpus case (exit 0), on io variants that
//! must mismatch (exit 1) and on inputs it cannot evaluate (exit 2).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/hlo")
}

fn scratch_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("aot_eval");
    let _ = std::fs::create_dir_all(&d);
    d
}

fn aot_eval(module: &Path, io: &Path) -> Result<Output, Failed> {
    Command::new(env!("CARGO_BIN_EXE_aot"))
        .arg("eval")
        .arg(module)
        .arg("--io")
        .arg(io)
        .output()
        .map_err(|e| format!("cannot run aot: {e}").into())
}

fn expect(out: &Output, code: i32, stdout_has: &[&str], stderr_has: &[&str]) -> Result<(), Failed> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let context = || format!("\n--- stdout\n{stdout}--- stderr\n{stderr}");
    if out.status.code() != Some(code) {
        return Err(format!(
            "exit status {:?}, want {code}{}",
            out.status.code(),
            context()
        )
        .into());
    }
    for s in stdout_has {
        if !stdout.contains(s) {
            return Err(format!("stdout lacks {s:?}{}", context()).into());
        }
    }
    for s in stderr_has {
        if !stderr.contains(s) {
            return Err(format!("stderr lacks {s:?}{}", context()).into());
        }
    }
    Ok(())
}

/// Writes a variant of corpus case `name`'s io file, changed by `edit`, into the scratch dir.
fn io_variant(name: &str, variant: &str, edit: impl FnOnce(&mut Value)) -> Result<PathBuf, Failed> {
    let src = corpus_dir().join(format!("{name}.io.json"));
    let text = std::fs::read_to_string(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    let mut v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    edit(&mut v);
    let path = scratch_dir().join(format!("{name}.{variant}.io.json"));
    std::fs::write(&path, v.to_string()).map_err(|e| e.to_string())?;
    Ok(path)
}

fn write_scratch(file: &str, text: &str) -> Result<PathBuf, Failed> {
    let path = scratch_dir().join(file);
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    Ok(path)
}

fn module(name: &str) -> PathBuf {
    corpus_dir().join(format!("{name}.hlo"))
}

fn special_cases() -> Vec<Trial> {
    vec![
        Trial::test("aot_eval::write_outputs", || {
            // A mismatching io file (exit 1): the evaluated outputs are written all the same,
            // with the inputs, and match the corpus case's.
            let io = io_variant("add", "zeros", |v| {
                for o in v["outputs"].as_array_mut().into_iter().flatten() {
                    for x in o["data"].as_array_mut().into_iter().flatten() {
                        *x = Value::from(0);
                    }
                }
            })?;
            let written = scratch_dir().join("add.eval.outputs.io.json");
            let _ = std::fs::remove_file(&written);
            let out = Command::new(env!("CARGO_BIN_EXE_aot"))
                .arg("eval")
                .arg(module("add"))
                .arg("--io")
                .arg(&io)
                .arg("--write-outputs")
                .arg(&written)
                .output()?;
            expect(&out, 1, &["MISMATCH"], &[])?;
            let right = hlo_eval::IoCase::read(&corpus_dir().join("add.io.json"))?;
            let got = hlo_eval::IoCase::read(&written)?;
            if got.inputs != right.inputs || got.outputs.len() != right.outputs.len() {
                return Err(format!("{got:?}").into());
            }
            for (g, w) in got.outputs.iter().zip(&right.outputs) {
                let c = hlo_eval::compare(g, w, hlo_eval::Tolerance::for_dtype(w.dtype()));
                if !c.ok {
                    return Err(format!("{c:?}").into());
                }
            }
            Ok(())
        }),
        Trial::test("aot_eval::mismatch_f32_reports_first_index", || {
            let io = io_variant("add", "mismatch", |v| {
                v["outputs"][0]["data"][3] = Value::from(1000.0);
            })?;
            let out = aot_eval(&module("add"), &io)?;
            expect(
                &out,
                1,
                &["output 0 f32[4,5]: MISMATCH", "first=[0, 3]", "want=1000"],
                &[],
            )
        }),
        Trial::test("aot_eval::mismatch_int_is_exact", || {
            // Output 2 of convert_dtypes is s32: off by one must mismatch, the others still match.
            let io = io_variant("convert_dtypes", "int_off_by_one", |v| {
                if let Some(x) = v["outputs"][2]["data"][0].as_i64() {
                    v["outputs"][2]["data"][0] = Value::from(x + 1);
                }
            })?;
            let out = aot_eval(&module("convert_dtypes"), &io)?;
            expect(
                &out,
                1,
                &[
                    "output 0 bf16[16]: OK",
                    "output 2 s32[16]: MISMATCH",
                    "3 of 4 outputs match",
                ],
                &[],
            )
        }),
        Trial::test("aot_eval::mismatch_nan_vs_number", || {
            let io = io_variant("add", "nan", |v| {
                v["outputs"][0]["data"][0] = Value::from("nan");
            })?;
            let out = aot_eval(&module("add"), &io)?;
            expect(&out, 1, &["MISMATCH", "want=NaN"], &[])
        }),
        Trial::test("aot_eval::error_input_count", || {
            let io = io_variant("add", "one_input", |v| {
                if let Some(a) = v["inputs"].as_array_mut() {
                    a.pop();
                }
            })?;
            let out = aot_eval(&module("add"), &io)?;
            expect(&out, 2, &[], &["takes 2 arguments, got 1"])
        }),
        Trial::test("aot_eval::error_input_dtype_names_parameter", || {
            let io = io_variant("add", "s32_input", |v| {
                let n = v["inputs"][1]["data"]
                    .as_array()
                    .map(|a| a.len())
                    .unwrap_or(0);
                v["inputs"][1] =
                    serde_json::json!({"dtype": "s32", "shape": [4, 5], "data": vec![1; n]});
            })?;
            let out = aot_eval(&module("add"), &io)?;
            expect(
                &out,
                2,
                &[],
                &[
                    "argument 1 (parameter `y.1`)",
                    "expected f32[4,5], got s32[4,5]",
                ],
            )
        }),
        Trial::test("aot_eval::error_output_count", || {
            let io = io_variant("add", "two_outputs", |v| {
                let first = v["outputs"][0].clone();
                if let Some(a) = v["outputs"].as_array_mut() {
                    a.push(first);
                }
            })?;
            let out = aot_eval(&module("add"), &io)?;
            expect(&out, 2, &[], &["produces 1 outputs"])
        }),
        Trial::test("aot_eval::error_bad_io_file", || {
            let io = io_variant("add", "short_data", |v| {
                if let Some(a) = v["inputs"][0]["data"].as_array_mut() {
                    a.pop();
                }
            })?;
            let out = aot_eval(&module("add"), &io)?;
            expect(
                &out,
                2,
                &[],
                &["inputs[0]", "needs 20 elements, data has 19"],
            )
        }),
        Trial::test("aot_eval::error_unimplemented_opcode", || {
            let hlo = write_scratch(
                "custom_call.hlo",
                "HloModule m\n\nENTRY main {\n  x = f32[2]{0} parameter(0)\n  \
                 ROOT c = f32[2]{0} custom-call(x), custom_call_target=\"foo\"\n}\n",
            )?;
            let io = write_scratch(
                "custom_call.io.json",
                r#"{"inputs": [{"dtype": "f32", "shape": [2], "data": [1, 2]}],
                    "outputs": [{"dtype": "f32", "shape": [2], "data": [1, 2]}]}"#,
            )?;
            let out = aot_eval(&hlo, &io)?;
            expect(&out, 2, &[], &["unimplemented opcode `custom-call`"])
        }),
        Trial::test("aot_eval::error_missing_files", || {
            let missing = scratch_dir().join("does_not_exist.hlo");
            let out = aot_eval(&missing, &corpus_dir().join("add.io.json"))?;
            expect(&out, 2, &[], &["cannot read"])?;
            let out = aot_eval(&module("add"), &scratch_dir().join("nope.io.json"))?;
            expect(&out, 2, &[], &["cannot load"])
        }),
    ]
}

fn main() {
    let args = Arguments::from_args();
    let dir = corpus_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.ends_with(".hlo") && !n.ends_with(".opt.hlo"))
                .map(|n| n.trim_end_matches(".hlo").to_string())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let count = names.len();
    let mut trials: Vec<Trial> = names
        .into_iter()
        .map(|name| {
            Trial::test(format!("aot_eval::corpus::{name}"), move || {
                let io = corpus_dir().join(format!("{name}.io.json"));
                let out = aot_eval(&module(&name), &io)?;
                expect(&out, 0, &["OK: "], &[])
            })
        })
        .collect();
    trials.push(Trial::test("aot_eval::corpus_is_present", move || {
        if count >= 40 {
            Ok(())
        } else {
            Err(format!("only {count} corpus cases found").into())
        }
    }));
    trials.extend(special_cases());
    libtest_mimic::run(&args, trials).exit();
}
