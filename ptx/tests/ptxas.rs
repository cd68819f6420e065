//! Cross-check: every corpus kernel, parsed and re-printed by this crate, is accepted by NVIDIA's
//! `ptxas --gpu-name sm_90` and assembles to a cubin byte-identical to the original file's
//! (ptxas found by `ptx::ptxas::find`: `$PTXAS`, `PATH`, or the `nvidia-cuda-nvcc-cu12` pip
//! wheel).
//!
//! When no `ptxas` is found each test prints "skipped: ..." and passes. When the `ptxas` found
//! is older than the corpus's `.version` (the pip wheel's 12.x assembler accepts PTX ISA up to
//! 8.8; the corpus is 9.5 from nvcc 13.5), the printed module is assembled with `.version`
//! lowered to the newest one ptxas reports supporting, and a note says so.

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use ptx::ptxas::{self, PtxasError};

const GPU: &str = "sm_90";
/// Debug sections would embed the PTX text itself in the cubin; keep them out of the comparison.
const CUBIN_ARGS: &[&str] = &["-lineinfo", "--suppress-debug-info"];
const SKIP: &str = "skipped: ptxas not found (set PTXAS or pip install nvidia-cuda-nvcc-cu12)";

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/ptx")
}

/// `.ptx` files of a directory, sorted; empty when it is unreadable.
fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Test inputs with their test-name prefixes: the nvcc corpus (`testdata/corpus/ptx`), this
/// crate's own files (`ptx/tests/data`: hand-written features and libnvvm 12.9 output), and any
/// directories in `$PTX_EXTRA_CORPUS` (colon-separated) for ad-hoc checks.
fn inputs() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for p in ptx_files(&corpus_dir()) {
        out.push((stem(&p), p));
    }
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for p in ptx_files(&data) {
        out.push((format!("data::{}", stem(&p)), p));
    }
    if let Some(extra) = std::env::var_os("PTX_EXTRA_CORPUS") {
        for dir in std::env::split_paths(&extra) {
            for p in ptx_files(&dir) {
                out.push((format!("extra::{}", stem(&p)), p));
            }
        }
    }
    out
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn check(exe: Option<&Path>, path: &Path) -> Result<(), Failed> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    check_text(exe, &path.display().to_string(), &src)
}

fn check_text(exe: Option<&Path>, name: &str, src: &str) -> Result<(), Failed> {
    let Some(exe) = exe else {
        println!("{SKIP}");
        return Ok(());
    };
    let mut module = ptx::parse(src).map_err(|e| format!("{name}:{e}"))?;
    let mut original = src.to_string();
    let mut printed = ptx::print(&module);
    let printed_cubin = match ptxas::cubin_with(exe, &printed, GPU, CUBIN_ARGS) {
        Ok(c) => c,
        Err(PtxasError::Rejected { stderr, .. }) => {
            let Some((major, minor)) = ptxas::supported_version_from_diagnostic(&stderr) else {
                return Err(format!("ptxas rejected the printed PTX:\n{stderr}\n{printed}").into());
            };
            let from = module.version;
            if (major, minor) >= (from.major, from.minor) {
                return Err(format!("ptxas rejected the printed PTX:\n{stderr}").into());
            }
            module.version = ptx::Version { major, minor };
            printed = ptx::print(&module);
            original = lower_version(src, major, minor);
            let c = ptxas::cubin_with(exe, &printed, GPU, CUBIN_ARGS).map_err(|e| {
                format!("ptxas rejected the printed PTX (.version lowered to {major}.{minor}): {e}\n{printed}")
            })?;
            println!(
                "note: this ptxas accepts PTX ISA up to {major}.{minor}; assembled with .version \
                 lowered from {}.{}",
                from.major, from.minor
            );
            c
        }
        Err(e) => return Err(e.to_string().into()),
    };
    // The printed module must assemble to exactly the same cubin as the source it came from.
    let original_cubin = ptxas::cubin_with(exe, &original, GPU, CUBIN_ARGS)
        .map_err(|e| format!("ptxas rejected the original PTX: {e}"))?;
    if original_cubin != printed_cubin {
        return Err(format!(
            "printed PTX assembles to a different cubin than the original ({} vs {} bytes)",
            printed_cubin.len(),
            original_cubin.len()
        )
        .into());
    }
    Ok(())
}

/// `src` with its `.version` directive replaced by `major.minor`.
fn lower_version(src: &str, major: u32, minor: u32) -> String {
    src.lines()
        .map(|l| {
            if l.trim_start().starts_with(".version") {
                format!(".version {major}.{minor}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn main() {
    let args = Arguments::from_args();
    let exe = ptxas::find();
    match &exe {
        Some(p) => eprintln!("ptxas: {}", p.display()),
        None => eprintln!("{SKIP}"),
    }
    let mut trials: Vec<Trial> = inputs()
        .into_iter()
        .map(|(name, p)| {
            let exe = exe.clone();
            Trial::test(format!("ptxas::{name}"), move || check(exe.as_deref(), &p))
        })
        .collect();
    let exe4 = exe.clone();
    trials.push(Trial::test("ptxas::max_ptx_version", move || {
        let Some(exe) = exe4 else {
            println!("{SKIP}");
            return Ok(());
        };
        match ptxas::max_ptx_version(&exe) {
            Some((major, minor)) if major >= 7 => {
                println!("ptxas accepts PTX ISA up to {major}.{minor}");
                Ok(())
            }
            other => Err(format!("could not probe the PTX ISA version: {other:?}").into()),
        }
    }));
    let exe5 = exe.clone();
    // Negative control for the cubin comparison: a one-opcode change is visible.
    trials.push(Trial::test("ptxas::cubin_detects_changes", move || {
        let Some(exe) = exe5 else {
            println!("{SKIP}");
            return Ok(());
        };
        let path = corpus_dir().join("vadd.ptx");
        let src = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let mut m = ptx::parse(&src).map_err(|e| e.to_string())?;
        let version = ptxas::max_ptx_version(&exe).ok_or("cannot probe ptxas version")?;
        let v = (m.version.major, m.version.minor).min(version);
        m.version = ptx::Version {
            major: v.0,
            minor: v.1,
        };
        let before = ptxas::cubin_with(&exe, &ptx::print(&m), GPU, CUBIN_ARGS)?;
        let mut changed = false;
        for d in &mut m.directives {
            if let ptx::Directive::Function(f) = d {
                for s in f.body.iter_mut().flatten() {
                    if let ptx::Statement::Instruction(i) = s {
                        if i.op == ptx::Opcode::Add && i.ty() == Some(ptx::Type::F32) {
                            i.op = ptx::Opcode::Sub;
                            changed = true;
                        }
                    }
                }
            }
        }
        if !changed {
            return Err("vadd.ptx has no add.f32".into());
        }
        let after = ptxas::cubin_with(&exe, &ptx::print(&m), GPU, CUBIN_ARGS)?;
        if before == after {
            return Err("changing add.f32 to sub.f32 did not change the cubin".into());
        }
        Ok(())
    }));
    let exe2 = exe.clone();
    // Negative control: the check is not vacuous.
    trials.push(Trial::test("ptxas::rejects_invalid_ptx", move || {
        let Some(exe) = exe2 else {
            println!("{SKIP}");
            return Ok(());
        };
        let bad = ".version 8.0\n.target sm_90\n.address_size 64\n\
                   .visible .entry k()\n{\n\tadd.s32 \t%r1, %r2, %r3;\n\tret;\n}\n";
        match ptxas::assemble_with(&exe, bad, GPU) {
            Err(PtxasError::Rejected { .. }) => Ok(()),
            Ok(_) => Err("ptxas accepted undeclared registers".into()),
            Err(e) => Err(e.to_string().into()),
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
