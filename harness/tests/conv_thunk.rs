//! The JAX convolution pieces of `testdata/models` and `testdata/stablehlo` (issue 32), and a
//! complex convolution of `testdata/complex_ops` (issue 31), in both
//! forms of the staged rollout, compiled and run on the emulated device: the default (a
//! convolution kernel, one thread per output element: what runtimes before 2026-12-04 run) and
//! with `CompileOptions::emit_convolution_thunk` (convolution thunks, classified as XLA's conv
//! rewriter does, run by the runtime's implicit GEMM). Both must match XLA:CPU's outputs at the
//! project's per-type tolerance, and the thunks must be the kinds XLA:GPU would call cuDNN with.
use harness::census_of;
use harness::cmd::run::ToleranceRule;
use harness::repo_root;
use harness::run_artifact;
use hlo_eval::{compare, IoCase};
use proto::prost::Message;
use proto::stream_executor::dnn::ConvolutionKind;
use proto::xla::gpu::thunk_proto::Impl;

const CONV_THUNK: &str = "xla.gpu.ThunkProto.convolution_thunk";

fn spec(name: &str) -> std::path::PathBuf {
    repo_root().join(format!("testdata/target_specs/{name}.txtpb"))
}

/// The kinds of the convolution thunks of an entry sequence, sorted by name.
fn kinds(exe: &proto::xla::gpu::GpuExecutableProto) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = exe
        .thunks
        .iter()
        .filter_map(|t| match &t.r#impl {
            Some(Impl::ConvolutionThunk(c)) => c.conv_descriptor.as_ref(),
            _ => None,
        })
        .map(|d| ConvolutionKind::try_from(d.kind).map_or("?", |k| k.as_str_name()))
        .collect();
    v.sort_unstable();
    v
}

/// Each piece, and the kinds XLA's conv rewriter makes of its convolutions.
const PIECES: &[(&str, &[&str])] = &[
    ("models/conv2d_bias_relu", &["FORWARD"]),
    ("models/conv2d_depthwise", &["FORWARD"]),
    // The input gradient of a grouped convolution stays forward in XLA (no grouped backward
    // input); the filter gradient is batch-grouped: a backward filter with 6 groups.
    (
        "models/conv2d_depthwise_grads",
        &["BACKWARD_FILTER", "FORWARD", "FORWARD"],
    ),
    // Base and window dilation with a plain filter: forward (XLA would pad the input first).
    ("models/conv2d_dilated", &["FORWARD"]),
    ("models/conv2d_grad_input", &["BACKWARD_DATA", "FORWARD"]),
    ("models/conv2d_grad_weight", &["BACKWARD_FILTER", "FORWARD"]),
    ("models/conv2d_grouped", &["FORWARD"]),
    (
        "models/conv2d_grouped_grad_weight",
        &["BACKWARD_FILTER", "FORWARD"],
    ),
    ("models/conv2d_nchw", &["FORWARD"]),
    ("models/conv2d_strided", &["FORWARD"]),
    ("stablehlo/conv2d", &["FORWARD"]),
    // A complex convolution: the complex-dot pass splits it into four real ones (XLA:GPU
    // refuses complex convolutions; JAX expands them before XLA).
    (
        "complex_ops/op_conv2d_c64",
        &["FORWARD", "FORWARD", "FORWARD", "FORWARD"],
    ),
    (
        "complex_ops/op_conv2d_c128",
        &["FORWARD", "FORWARD", "FORWARD", "FORWARD"],
    ),
];

#[test]
fn every_conv_piece_runs_in_both_forms() {
    let target = compiler::Target::load(&spec("h100_sxm")).unwrap();
    let config = proto::load_target_config(&spec("h100_sxm")).unwrap();
    let device = runtime::DeviceDescription::from_target_config(&config).unwrap();
    for (name, want_kinds) in PIECES {
        let path = repo_root().join(format!("testdata/{name}.hlo"));
        let module = hlo_front::read_module(&path).unwrap();
        let want = IoCase::read(&path.with_extension("io.json")).unwrap();
        for native in [false, true] {
            let mut o = compiler::CompileOptions::default();
            o.emit_convolution_thunk = native;
            let bytes = compiler::compile_to_bytes(&module, &target, &o).unwrap();
            let exe = proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice()).unwrap();
            assert_eq!(census_of(&exe).contains(CONV_THUNK), native, "{name}");
            if native {
                assert_eq!(&kinds(&exe), want_kinds, "{name}");
            }
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

/// A convolution the thunk does not run (mixed element types) stays a kernel with the option
/// on, and still matches.
#[test]
fn mixed_precision_convolutions_stay_kernels() {
    let target = compiler::Target::load(&spec("h100_sxm")).unwrap();
    let config = proto::load_target_config(&spec("h100_sxm")).unwrap();
    let device = runtime::DeviceDescription::from_target_config(&config).unwrap();
    let path = repo_root().join("testdata/models/conv1d_bf16.hlo");
    let module = hlo_front::read_module(&path).unwrap();
    let want = IoCase::read(&path.with_extension("io.json")).unwrap();
    let mut o = compiler::CompileOptions::default();
    o.emit_convolution_thunk = true;
    let bytes = compiler::compile_to_bytes(&module, &target, &o).unwrap();
    let exe = proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice()).unwrap();
    assert!(!census_of(&exe).contains(CONV_THUNK));
    let got = run_artifact(&bytes, &device, std::slice::from_ref(&want)).unwrap();
    for (g, w) in got[0].outputs.iter().zip(&want.outputs) {
        assert!(compare(g, w, ToleranceRule::PerDtype.tolerance(w)).ok);
    }
}

/// Hand-written v9 wrote the convolution thunk's slices bare (`BufferAllocationSliceProto`, this
/// schema's form until 2026-12-04, and zml/xla's of November 2025), v10 in XLA's current form
/// (`ShapedSliceProto`, each slice with its shape): today's runtime replays both against the
/// recorded outputs, and both decode to the same slices.
#[test]
fn both_forms_of_the_hand_written_convolution_replay() {
    use harness::replay::{backward_compat, GoldenCase};
    use harness::GoldenStore;
    let compiled = GoldenStore::in_repo();
    let store = GoldenStore::handwritten(compiled.root());
    for target in ["h100_sxm", "a100_sxm_80"] {
        let slices = [9, 10].map(|v| {
            let case = GoldenCase::read(&store, target, v, "convolution_thunk").unwrap();
            backward_compat(&case).unwrap_or_else(|e| panic!("{}: {e}", case.label()));
            let exe = proto::xla::gpu::GpuExecutableProto::decode(case.bytes.as_slice()).unwrap();
            exe.thunks
                .iter()
                .filter_map(|t| match &t.r#impl {
                    Some(Impl::ConvolutionThunk(c)) => Some(c.clone()),
                    _ => None,
                })
                .collect::<Vec<_>>()
        });
        let [old, new] = slices;
        assert_eq!(old.len(), 3, "{target}");
        assert_eq!(new.len(), 3, "{target}");
        for (o, n) in old.iter().zip(&new) {
            assert_eq!(o.conv_descriptor, n.conv_descriptor, "{target}");
            let (o_all, n_all) = (
                o.operand_buffers.iter().chain(&o.result_buffers),
                n.operand_buffers.iter().chain(&n.result_buffers),
            );
            for (a, b) in o_all.zip(n_all) {
                assert_eq!(a.slice, b.slice, "{target}: the same slice in both forms");
                assert!(a.shape.is_none(), "{target}: a bare slice has no shape");
                assert!(b.shape.is_some(), "{target}: XLA's form carries the shape");
            }
        }
    }
}
