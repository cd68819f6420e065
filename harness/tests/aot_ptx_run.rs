//! `aot ptx-run` end to end: every corpus kernel exits 0; a wrong expectation exits 1 and prints
//! the mismatch; a broken launch spec exits 2.
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/ptx")
}

fn aot(ptx: &Path, launch: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_aot"))
        .arg("ptx-run")
        .arg(ptx)
        .arg("--launch")
        .arg(launch)
        .output()
        .expect("running aot");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("aot_ptx_run_{tag}_{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn corpus_case(name: &str) -> Result<(), Failed> {
    let dir = corpus();
    let (code, stdout, stderr) = aot(
        &dir.join(format!("{name}.ptx")),
        &dir.join(format!("{name}.launch.json")),
    );
    if code != 0 {
        return Err(format!("exit {code}\nstdout:\n{stdout}\nstderr:\n{stderr}").into());
    }
    if !stdout.contains("OK") {
        return Err(format!("no OK verdict in:\n{stdout}").into());
    }
    Ok(())
}

fn mismatch_exits_1() -> Result<(), Failed> {
    let dir = corpus();
    let mut spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("vadd.launch.json"))?)?;
    let data = spec["expected"][0]["data"]
        .as_array_mut()
        .ok_or("no expected data")?;
    data[3] = serde_json::json!(12345.0);
    let tmp = temp_dir("mismatch");
    let launch = tmp.join("vadd.launch.json");
    std::fs::write(&launch, serde_json::to_string(&spec)?)?;
    let (code, stdout, stderr) = aot(&dir.join("vadd.ptx"), &launch);
    let _ = std::fs::remove_dir_all(&tmp);
    if code != 1 {
        return Err(format!("expected exit 1, got {code}\n{stdout}\n{stderr}").into());
    }
    if !stdout.contains("MISMATCH in 1 elements")
        || !stdout.contains("[3] got")
        || !stdout.contains("want 12345")
    {
        return Err(format!("mismatch not reported:\n{stdout}").into());
    }
    Ok(())
}

fn errors_exit_2() -> Result<(), Failed> {
    let dir = corpus();
    let tmp = temp_dir("errors");
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("vadd.launch.json"))?)?;
    let mut cases: Vec<(&str, String, &str)> = Vec::new();
    cases.push(("bad_json", "{ not json".into(), "parsing"));
    let mut s = spec.clone();
    s["kernel"] = serde_json::json!("no_such_kernel");
    cases.push((
        "missing_kernel",
        s.to_string(),
        "no kernel `no_such_kernel`",
    ));
    let mut s = spec.clone();
    s["params"].as_array_mut().ok_or("params")?.pop();
    cases.push(("param_count", s.to_string(), "takes 4 parameters"));
    let mut s = spec.clone();
    s["params"][3]["dtype"] = serde_json::json!("s64");
    cases.push(("param_size", s.to_string(), "parameter 3 is 4 bytes"));
    let mut failures = Vec::new();
    for (tag, text, needle) in cases {
        let launch = tmp.join(format!("{tag}.launch.json"));
        std::fs::write(&launch, text)?;
        let (code, stdout, stderr) = aot(&dir.join("vadd.ptx"), &launch);
        if code != 2 || !stderr.contains(needle) {
            failures.push(format!("{tag}: exit {code}, wanted 2 with `{needle}`\nstdout:\n{stdout}\nstderr:\n{stderr}"));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n").into())
    }
}

fn main() {
    let mut names: Vec<String> = std::fs::read_dir(corpus())
        .expect("corpus dir")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".launch.json"))
                .map(String::from)
        })
        .collect();
    names.sort();
    let mut trials: Vec<Trial> = names
        .into_iter()
        .map(|n| Trial::test(format!("corpus::{n}"), move || corpus_case(&n)))
        .collect();
    trials.push(Trial::test("mismatch_exits_1", mismatch_exits_1));
    trials.push(Trial::test("errors_exit_2", errors_exit_2));
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}
