//! The FFT pieces of `testdata/fft/` (issue 31) in both forms of the staged rollout, compiled
//! and run on the emulated device: the default (dots with twiddle matrices, no `fft_thunk`: what
//! runtimes before 2026-12-04 run) and with `CompileOptions::emit_fft_thunk` (one `fft_thunk`
//! per fft, the runtime's host FFT). Both must match XLA:CPU's outputs at the project's
//! per-type tolerance; the models suite runs the default form through `aot check-hlo` too.
use harness::census_of;
use harness::cmd::run::ToleranceRule;
use harness::repo_root;
use harness::run_artifact;
use hlo_eval::{compare, IoCase};
use proto::prost::Message;

const FFT_THUNK: &str = "xla.gpu.ThunkProto.fft_thunk";

fn spec(name: &str) -> std::path::PathBuf {
    repo_root().join(format!("testdata/target_specs/{name}.txtpb"))
}

#[test]
fn every_fft_piece_runs_in_both_forms() {
    let target = compiler::Target::load(&spec("h100_sxm")).unwrap();
    let config = proto::load_target_config(&spec("h100_sxm")).unwrap();
    let device = runtime::DeviceDescription::from_target_config(&config).unwrap();
    let dir = repo_root().join("testdata/fft");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.ok()?.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".hlo").map(str::to_owned)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 16, "{names:?}");
    for name in &names {
        let module = hlo_front::read_module(&dir.join(format!("{name}.hlo"))).unwrap();
        let want = IoCase::read(&dir.join(format!("{name}.io.json"))).unwrap();
        for native in [false, true] {
            let mut o = compiler::CompileOptions::default();
            o.emit_fft_thunk = native;
            let bytes = compiler::compile_to_bytes(&module, &target, &o).unwrap();
            let exe = proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice()).unwrap();
            assert_eq!(census_of(&exe).contains(FFT_THUNK), native, "{name}");
            let got = run_artifact(&bytes, &device, std::slice::from_ref(&want)).unwrap();
            for (g, w) in got[0].outputs.iter().zip(&want.outputs) {
                let c = compare(g, w, ToleranceRule::PerDtype.tolerance(w));
                assert!(
                    c.ok,
                    "{name} native={native}: max_abs_err {:e}",
                    c.max_abs_err
                );
            }
        }
    }
}

/// The fallback refuses a length whose twiddle matrix is too large, naming the option.
#[test]
fn the_fallback_refuses_huge_lengths_and_names_the_option() {
    let target = compiler::Target::load(&spec("h100_sxm")).unwrap();
    let text = "HloModule big\n\nENTRY e {\n  x = c64[4096] parameter(0)\n  ROOT f = c64[4096] fft(x), fft_type=FFT, fft_length={4096}\n}\n";
    let module = hlo_text::parse_module(text).unwrap();
    let err = compiler::compile_to_bytes(&module, &target, &compiler::CompileOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("fft_length 4096 needs a 4096x4096 twiddle matrix"),
        "{err}"
    );
    assert!(err.contains("emit_fft_thunk"), "{err}");
    let mut native = compiler::CompileOptions::default();
    native.emit_fft_thunk = true;
    assert!(compiler::compile_to_bytes(&module, &target, &native).is_ok());
}
