//! Every module of testdata/corpus/hlo compiles for h100_sxm and a100_sxm_80: the executable
//! follows docs/artifact.md structurally, compiling twice gives byte-identical bytes, and
//! every kernel assembles with NVIDIA's ptxas for the target's SM (when ptxas is installed;
//! the tests say so when it is not).
//!
//! Cases that cannot compile yet because a kernel emitter is still missing are listed in
//! [`KNOWN_UNSUPPORTED`] and show up as ignored, with the reason; the list shrinks as code
//! generation lands.
mod common;

use std::path::Path;

use libtest_mimic::{Arguments, Failed, Trial};
use proto::xla::gpu::thunk_proto::Impl;

/// Cases expected not to compile yet, with the reason.
const KNOWN_UNSUPPORTED: &[(&str, &str)] = &[];

const TARGETS: &[&str] = &["h100_sxm", "a100_sxm_80"];

fn check(path: &Path, target_name: &str) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let module = hlo_text::parse_module(&text).map_err(|e| format!("parse: {e}"))?;
    let target = common::target(target_name);
    let exe = compiler::compile(&module, &target, &common::options())
        .map_err(|e| format!("compile: {e}"))?;
    let errs = common::check_executable(&exe);
    if !errs.is_empty() {
        return Err(errs.join("\n").into());
    }
    let a = compiler::compile_to_bytes(&module, &target, &common::options())
        .map_err(|e| e.to_string())?;
    let b = compiler::compile_to_bytes(&module, &target, &common::options())
        .map_err(|e| e.to_string())?;
    if a != b {
        return Err("compiling twice gave different bytes".into());
    }
    if ptx::ptxas::find().is_some() {
        // Every kernel assembles (ptxas --gpu-name <target>), and with `cubin` on the executable
        // embeds those cubins and is otherwise the same.
        let mut options = common::options();
        options.cubin = true;
        let mut with = compiler::compile(&module, &target, &options).map_err(|e| e.to_string())?;
        let sm = target.codegen.sm;
        for t in common::all_thunks(&with) {
            if let Some(Impl::KernelThunk(k)) = &t.r#impl {
                let cubin = k.kernel_binary.as_ref().map_or(&[][..], |b| &b.cubin);
                let got = ptx::ptxas::cubin_arch(cubin)
                    .map(|a| a.sm)
                    .map_err(|e| format!("kernel {}: cubin: {e}", k.kernel_name))?;
                if got != sm {
                    return Err(format!(
                        "kernel {}: cubin for sm_{got}, not sm_{sm}",
                        k.kernel_name
                    )
                    .into());
                }
            }
        }
        clear_cubins(&mut with.thunks);
        // Compared as bytes: the embedded HLO may hold NaN literals, and NaN != NaN.
        use proto::prost::Message;
        if with.encode_to_vec() != exe.encode_to_vec() {
            let (a, b) = (format!("{exe:#?}"), format!("{with:#?}"));
            let diff = similar::TextDiff::from_lines(&a, &b)
                .unified_diff()
                .context_radius(2)
                .to_string();
            return Err(
                format!("compiling with cubins changed more than the cubins:\n{diff}").into(),
            );
        }
    }
    Ok(())
}

fn clear_cubins(thunks: &mut [proto::xla::gpu::ThunkProto]) {
    for k in proto::kernel_thunks_mut(thunks) {
        if let Some(b) = k.kernel_binary.as_mut() {
            b.cubin.clear();
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    if ptx::ptxas::find().is_none() {
        eprintln!("note: ptxas not found (set PTXAS): kernels are not assembled in this run");
    }
    let dir = common::root().join("testdata/corpus/hlo");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "hlo") && !p.to_string_lossy().ends_with(".opt.hlo")
        })
        .collect();
    cases.sort();
    let mut trials = Vec::new();
    for path in cases {
        let case = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?")
            .to_owned();
        let known = KNOWN_UNSUPPORTED.iter().find(|(c, _)| *c == case);
        for &t in TARGETS {
            let p = path.clone();
            let mut trial = Trial::test(format!("compile::{case}::{t}"), move || check(&p, t));
            if let Some((_, reason)) = known {
                trial = trial
                    .with_ignored_flag(true)
                    .with_kind(format!("unsupported: {reason}"));
            }
            trials.push(trial);
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
