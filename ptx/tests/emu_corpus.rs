//! Every nvcc corpus kernel (`testdata/corpus/ptx/`) runs on the emulator and matches its
//! expected buffers. One named test per kernel (libtest-mimic).
mod emu_common;

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/ptx");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
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
    let mut trials = Vec::new();
    for name in names {
        for threads in [1usize, 4] {
            let dir = dir.clone();
            let n = name.clone();
            trials.push(Trial::test(
                format!("{name}::threads{threads}"),
                move || run(&dir, &n, threads),
            ));
        }
    }
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}

fn run(dir: &std::path::Path, name: &str, threads: usize) -> Result<(), Failed> {
    let ptx = std::fs::read_to_string(dir.join(format!("{name}.ptx")))?;
    let spec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        dir.join(format!("{name}.launch.json")),
    )?)?;
    let (bad, stats) = emu_common::run_spec(&ptx, &spec, threads)?;
    if !bad.is_empty() {
        return Err(format!("{} mismatches:\n{}", bad.len(), bad.join("\n")).into());
    }
    if stats.lane_instructions == 0 {
        return Err("no instructions executed".into());
    }
    Ok(())
}
