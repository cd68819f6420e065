//! The `xla_compile` binary: XLA's flags, clear messages and non-zero exits on bad input.
mod common;

use std::path::PathBuf;
use std::process::Command;

use proto::prost::Message;

fn xla_compile(args: &[String]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xla_compile"))
        .args(args)
        .output()
        .expect("run xla_compile");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xla_compile_test_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir.join(name)
}

fn spec(name: &str) -> String {
    common::root()
        .join(format!("testdata/target_specs/{name}.txtpb"))
        .display()
        .to_string()
}

fn module(name: &str) -> String {
    common::root()
        .join(format!("testdata/corpus/hlo/{name}.hlo"))
        .display()
        .to_string()
}

/// Compiles `module_file` for h100_sxm with `extra` flags into `tmp(out_name)`; the bytes.
fn compile_ok(module_file: &str, out_name: &str, extra: &[&str]) -> Vec<u8> {
    let out = tmp(out_name);
    let mut args = vec![
        format!("--module_file={module_file}"),
        format!("--output_file={}", out.display()),
        "--platform=gpu".into(),
        format!("--gpu_target_config={}", spec("h100_sxm")),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let (ok, err) = xla_compile(&args);
    assert!(ok, "{err}");
    std::fs::read(&out).expect("output")
}

/// Errors exit with status 2, as every binary of the project does (README, "Exit status").
#[test]
fn an_error_exits_with_status_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_xla_compile"))
        .args([
            format!("--module_file={}", module("no_such_module")),
            format!("--output_file={}", tmp("none.pb").display()),
            "--platform=gpu".into(),
            format!("--gpu_target_config={}", spec("h100_sxm")),
        ])
        .output()
        .expect("run xla_compile");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn compiles_text_and_binary_modules() {
    let out = tmp("softmax.pb");
    let (ok, err) = xla_compile(&[
        format!("--module_file={}", module("softmax")),
        format!("--output_file={}", out.display()),
        "--platform=gpu".into(),
        format!("--gpu_target_config={}", spec("h100_sxm")),
    ]);
    assert!(ok, "{err}");
    let bytes = std::fs::read(&out).expect("output");
    let exe = proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice()).expect("decode");
    assert!(!exe.thunks.is_empty());
    // Same module as a binary HloModuleProto gives the same executable.
    let text = std::fs::read_to_string(module("softmax")).expect("read");
    let m = hlo_text::parse_module(&text).expect("parse");
    let pb = tmp("softmax.module.pb");
    let proto = hlo::to_proto(&m)
        .expect("to proto")
        .hlo_module
        .expect("module");
    std::fs::write(&pb, proto.encode_to_vec()).expect("write");
    let out2 = tmp("softmax2.pb");
    let (ok, err) = xla_compile(&[
        format!("--module_file={}", pb.display()),
        format!("--output_file={}", out2.display()),
        "--platform=gpu".into(),
        format!("--gpu_target_config={}", spec("h100_sxm")),
    ]);
    assert!(ok, "{err}");
    let exe2 =
        proto::xla::gpu::GpuExecutableProto::decode(std::fs::read(&out2).expect("out").as_slice())
            .expect("decode");
    assert_eq!(exe2.thunks.len(), exe.thunks.len());
}

#[test]
fn missing_flag_fails_with_a_message() {
    let (ok, err) = xla_compile(&[
        format!("--module_file={}", module("add")),
        "--platform=gpu".into(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("--output_file") && err.contains("--gpu_target_config"),
        "{err}"
    );
}

#[test]
fn repeated_flag_is_a_conflict() {
    let (ok, err) = xla_compile(&[
        format!("--module_file={}", module("add")),
        format!("--module_file={}", module("sort")),
        format!("--output_file={}", tmp("x.pb").display()),
        "--platform=gpu".into(),
        format!("--gpu_target_config={}", spec("h100_sxm")),
    ]);
    assert!(!ok);
    assert!(err.contains("--module_file"), "{err}");
}

#[test]
fn unknown_platform_fails() {
    let (ok, err) = xla_compile(&[
        format!("--module_file={}", module("add")),
        format!("--output_file={}", tmp("y.pb").display()),
        "--platform=tpu".into(),
        format!("--gpu_target_config={}", spec("h100_sxm")),
    ]);
    assert!(!ok);
    assert!(
        err.contains("unknown platform") && err.contains("tpu"),
        "{err}"
    );
}

#[test]
fn unreadable_module_and_rocm_config_fail() {
    let (ok, err) = xla_compile(&[
        "--module_file=/nonexistent/m.hlo".into(),
        format!("--output_file={}", tmp("z.pb").display()),
        "--platform=gpu".into(),
        format!("--gpu_target_config={}", spec("h100_sxm")),
    ]);
    assert!(!ok);
    assert!(err.contains("/nonexistent/m.hlo"), "{err}");
    let bad = tmp("bad.hlo");
    std::fs::write(&bad, "HloModule broken\nENTRY e { ROOT x = f32[] bogus() }").expect("write");
    let (ok, err) = xla_compile(&[
        format!("--module_file={}", bad.display()),
        format!("--output_file={}", tmp("z.pb").display()),
        "--platform=gpu".into(),
        format!("--gpu_target_config={}", spec("h100_sxm")),
    ]);
    assert!(!ok);
    assert!(err.contains("bad.hlo"), "{err}");
    let (ok, err) = xla_compile(&[
        format!("--module_file={}", module("add")),
        format!("--output_file={}", tmp("z.pb").display()),
        "--platform=gpu".into(),
        format!("--gpu_target_config={}", spec("mi200")),
    ]);
    assert!(!ok);
    assert!(err.contains("ROCM") && err.contains("mi200.txtpb"), "{err}");
}

#[test]
fn separate_processes_give_identical_bytes() {
    let mut outputs = Vec::new();
    for run in 0..2 {
        let out = tmp(&format!("attention{run}.pb"));
        let (ok, err) = xla_compile(&[
            format!("--module_file={}", module("attention")),
            format!("--output_file={}", out.display()),
            "--platform=gpu".into(),
            format!("--gpu_target_config={}", spec("a100_sxm_80")),
        ]);
        assert!(ok, "{err}");
        outputs.push(std::fs::read(&out).expect("output"));
    }
    assert_eq!(outputs[0], outputs[1]);
}

#[test]
fn xla_allow_excess_precision_is_on_by_default_and_can_be_turned_off() {
    let hlo = common::root()
        .join("testdata/models/transformer_block_bf16.hlo")
        .display()
        .to_string();
    let compile = |name: &str, extra: &[&str]| compile_ok(&hlo, name, extra);
    let default = compile("tb_default.pb", &[]);
    let on = compile("tb_on.pb", &["--xla_allow_excess_precision=true"]);
    let off = compile("tb_off.pb", &["--xla_allow_excess_precision=false"]);
    assert_eq!(default, on);
    assert_ne!(on, off, "the flag must change the kernels of a bf16 block");
    let (ok, err) = xla_compile(&[
        format!("--module_file={hlo}"),
        format!("--output_file={}", tmp("tb_bad.pb").display()),
        "--platform=gpu".into(),
        format!("--gpu_target_config={}", spec("h100_sxm")),
        "--xla_allow_excess_precision=maybe".into(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("invalid value 'maybe' for '--xla_allow_excess_precision <BOOL>'"),
        "{err}"
    );
}

/// A target config that does not parse is named once, with the line and column (issue 16: the
/// message used to say `target config F: target config F:2:28: …`).
#[test]
fn a_config_parse_error_names_the_file_once() {
    let bad = tmp("bad_config.txtpb");
    std::fs::write(
        &bad,
        "gpu_device_info {\n  threads_per_block_limit: \"x\"\n}\n",
    )
    .expect("write");
    let (ok, err) = xla_compile(&[
        format!("--module_file={}", module("add")),
        format!("--output_file={}", tmp("z.pb").display()),
        "--platform=gpu".into(),
        format!("--gpu_target_config={}", bad.display()),
    ]);
    assert!(!ok);
    assert_eq!(
        err.trim_end(),
        format!(
            "xla_compile: error: target config {}:2:28: expected an integer, but found '\"x\"' (parsing stream_executor.GpuTargetConfigProto)",
            bad.display()
        )
    );
}

/// `--after_staged_flips` compiles as the defaults will be after every flip: an fft becomes an
/// FFT thunk (by default, dots with twiddle-factor matrices).
#[test]
fn after_staged_flips_emits_the_staged_constructs() {
    let fft = common::root()
        .join("testdata/fft/fft_8_c64.hlo")
        .display()
        .to_string();
    let has_fft_thunk = |extra: &[&str]| {
        let bytes = compile_ok(&fft, &format!("fft_8{}.pb", extra.len()), extra);
        let exe = proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice()).expect("decode");
        exe.thunks.iter().any(|t| {
            matches!(
                t.r#impl,
                Some(proto::xla::gpu::thunk_proto::Impl::FftThunk(_))
            )
        })
    };
    assert!(!has_fft_thunk(&[]));
    assert!(has_fft_thunk(&["--after_staged_flips"]));
}

/// A module JAX lowered on a CPU host calls XLA:CPU's LAPACK targets: the compiler says so,
/// with what to do, in both forms JAX prints (`testdata/wrong_platform/`, real JAX 0.10.2
/// output), instead of emitting a custom-call thunk no GPU runtime loads.
#[test]
fn a_module_lowered_for_the_cpu_is_refused_with_what_to_do() {
    let dir = common::root().join("testdata/wrong_platform");
    let text = std::fs::read_to_string(dir.join("targets.json")).expect("targets.json");
    let targets: std::collections::BTreeMap<String, String> =
        serde_json::from_str(&text).expect("targets.json parses");
    assert_eq!(targets.len(), 4);
    for (case, target) in &targets {
        for ext in ["hlo", "mlir"] {
            let file = dir.join(format!("{case}.{ext}"));
            let (ok, err) = xla_compile(&[
                format!("--module_file={}", file.display()),
                format!(
                    "--output_file={}",
                    tmp(&format!("{case}.{ext}.pb")).display()
                ),
                "--platform=gpu".into(),
                format!("--gpu_target_config={}", spec("h100_sxm")),
            ]);
            assert!(!ok, "{case}.{ext} compiled");
            let want = format!(
                "\"{target}\" is an XLA:CPU target (LAPACK): the module was lowered for the CPU; \
                 lower it for the GPU"
            );
            assert!(err.contains(&want), "{case}.{ext}: {err}");
            assert_eq!(err.matches("XLA:CPU target").count(), 1, "{err}");
        }
    }
}
