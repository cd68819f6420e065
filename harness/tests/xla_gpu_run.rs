//! XLA:GPU's own executables run whole on the emulated device with the PTX XLA dumped for them
//! (testdata/xla_gpu/<target>/NAME.gpuexe beside NAME.KERNEL.ptx, made by
//! tools/xla_artifacts/ptx_dump.py), matching XLA:CPU's outputs (testdata/corpus/hlo) within the
//! XLA:GPU tolerance; and each way supplied PTX can fail to fit, by its exact message.
use std::path::{Path, PathBuf};

use harness::cmd::run::{RunArgs, ToleranceRule};
use harness::{run_xla_executable, xla_ptx_files};

const TARGETS: [&str; 2] = ["h100_sxm", "a100_sxm_80"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn dir(target: &str) -> PathBuf {
    root().join("testdata/xla_gpu").join(target)
}

fn spec(target: &str) -> PathBuf {
    root().join(format!("testdata/target_specs/{target}.txtpb"))
}

/// XLA:CPU's outputs: the corpus's, or those of tools/xla_artifacts/modules.py (convolutions).
fn io(module: &str) -> PathBuf {
    let corpus = root().join(format!("testdata/corpus/hlo/{module}.io.json"));
    if corpus.exists() {
        return corpus;
    }
    root().join(format!("testdata/xla_gpu/modules/{module}.io.json"))
}

/// The modules of `target` that have PTX beside their executable.
fn kept(target: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir(target))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let module = name.strip_suffix(".gpuexe")?.to_owned();
            let has_ptx = !xla_ptx_files(&dir(target), &module).unwrap().is_empty();
            has_ptx.then_some(module)
        })
        .collect();
    out.sort();
    out
}

/// `aot run`'s exit code and output for one artifact with the given PTX files.
fn aot_run(artifact: &Path, target: &str, module: &str, ptx: Vec<PathBuf>) -> (u8, String) {
    let args = RunArgs {
        kernel_ptx: ptx,
        ..RunArgs::new(artifact.to_owned(), spec(target), vec![io(module)])
    };
    let mut out = Vec::new();
    match harness::cmd::run::run(&args, &mut out) {
        Ok(code) => (code, String::from_utf8_lossy(&out).into_owned()),
        Err(e) => (2, format!("{:#}", e.root_cause())),
    }
}

#[test]
fn kept_executables_run_to_a_match() {
    let mut ran = Vec::new();
    for t in TARGETS {
        let modules = kept(t);
        assert!(modules.len() >= 11, "{t}: only {modules:?} have PTX");
        for m in modules {
            let ptx = xla_ptx_files(&dir(t), &m).unwrap();
            let r =
                run_xla_executable(&dir(t).join(format!("{m}.gpuexe")), &ptx, &spec(t), &io(&m))
                    .unwrap_or_else(|e| panic!("{t}/{m}: {e:#}"));
            assert!(r.ok(), "{t}/{m}: {r:?}");
            assert!(r.launches > 0, "{t}/{m}: {r:?}");
            // The PjRt form, where committed, gives the same verdict through `aot run`.
            let pjrt = dir(t).join(format!("{m}.pjrt"));
            if pjrt.exists() {
                let (code, out) = aot_run(&pjrt, t, &m, ptx);
                assert_eq!(code, 0, "{t}/{m}.pjrt: {out}");
                assert!(out.starts_with("tolerance: XLA:GPU vs XLA:CPU"), "{out}");
            }
            ran.push(format!("{t}/{m}"));
        }
    }
    assert_eq!(ran.len(), 22, "{ran:?}");
}

/// XLA:GPU's convolutions are cuDNN calls: its executables of tools/xla_artifacts/modules.py
/// hold `convolution_thunk`s of all three kinds (with slices in XLA's `ShapedSliceProto` form,
/// shapes included), which run above through the runtime's implicit GEMM.
#[test]
fn xla_convolution_executables_hold_the_three_kinds() {
    use proto::prost::Message;
    use proto::xla::gpu::thunk_proto::Impl;
    for t in TARGETS {
        let mut kinds = Vec::new();
        for m in ["conv_nhwc", "conv_grads"] {
            let bytes = std::fs::read(dir(t).join(format!("{m}.gpuexe"))).unwrap();
            let exe = proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice()).unwrap();
            for th in &exe.thunks {
                if let Some(Impl::ConvolutionThunk(c)) = &th.r#impl {
                    let d = c.conv_descriptor.as_ref().unwrap();
                    let k = proto::stream_executor::dnn::ConvolutionKind::try_from(d.kind);
                    kinds.push(format!("{m}:{}", k.map_or("?", |k| k.as_str_name())));
                    assert!(
                        c.operand_buffers
                            .iter()
                            .chain(&c.result_buffers)
                            .all(|s| s.shape.is_some()),
                        "{t}/{m}: XLA's slices carry their shapes"
                    );
                }
            }
        }
        kinds.sort();
        assert_eq!(
            kinds,
            [
                "conv_grads:BACKWARD_DATA",
                "conv_grads:BACKWARD_FILTER",
                "conv_grads:FORWARD",
                "conv_nhwc:FORWARD"
            ],
            "{t}"
        );
    }
}

#[test]
fn aot_run_says_which_tolerance_it_used() {
    let t = "a100_sxm_80";
    let ptx = |m: &str| xla_ptx_files(&dir(t), m).unwrap();
    let (code, out) = aot_run(
        &dir(t).join("gelu_mlp.gpuexe"),
        t,
        "gelu_mlp",
        ptx("gelu_mlp"),
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out.lines().next(),
        Some(ToleranceRule::XlaGpu { tf32: true }.describe())
    );
    let (code, out) = aot_run(&dir(t).join("softmax.gpuexe"), t, "softmax", ptx("softmax"));
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out.lines().next(),
        Some("tolerance: XLA:GPU vs XLA:CPU, transcendentals differ in the last bits (f32 atol=1e-4 rtol=1e-4; other dtypes per dtype)")
    );
}

/// The first PTX file of a kept module, as text.
fn ptx_text(target: &str, module: &str) -> (PathBuf, String) {
    let p = xla_ptx_files(&dir(target), module).unwrap().remove(0);
    let text = std::fs::read_to_string(&p).unwrap();
    (p, text)
}

/// `text` written to a file of the test's own under the target dir.
fn scratch(name: &str, text: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("xla_gpu_run");
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_kernel_in_no_supplied_file_is_not_found() {
    let t = "a100_sxm_80";
    let (p, _) = ptx_text(t, "softmax");
    let (code, out) = aot_run(&dir(t).join("add.gpuexe"), t, "add", vec![p]);
    assert_eq!(code, 2);
    assert_eq!(
        out,
        "NOT_FOUND: thunks[0].custom_kernel_thunk.custom_kernel: kernel `wrapped_add` carries only an sm_80 cubin (2856 bytes), no PTX, and none of the 1 supplied PTX files defines .entry wrapped_add (entries: triton_softmax_2)"
    );
}

#[test]
fn ptx_whose_parameters_do_not_fit_is_refused() {
    let t = "a100_sxm_80";
    let (_, text) = ptx_text(t, "add");
    // One parameter fewer than the thunk's three arguments.
    let fewer = text.replace(",\n\t.param .u64 .ptr .align 256 wrapped_add_param_2", "");
    assert_ne!(fewer, text);
    let (code, out) = aot_run(
        &dir(t).join("add.gpuexe"),
        t,
        "add",
        vec![scratch("fewer.ptx", &fewer)],
    );
    assert_eq!(code, 2);
    assert!(
        out.starts_with("INVALID_ARGUMENT: thunks[0].custom_kernel_thunk.args has 3 entries, .entry wrapped_add of the supplied PTX "),
        "{out}"
    );
    assert!(out.ends_with("fewer.ptx takes 2 parameters"), "{out}");
    // A parameter that is not a 64-bit address.
    let narrow = text.replace(
        ".param .u64 .ptr .align 16 wrapped_add_param_1",
        ".param .u32 wrapped_add_param_1",
    );
    assert_ne!(narrow, text);
    let (code, out) = aot_run(
        &dir(t).join("add.gpuexe"),
        t,
        "add",
        vec![scratch("narrow.ptx", &narrow)],
    );
    assert_eq!(code, 2);
    assert!(out.starts_with("INVALID_ARGUMENT: thunks[0].custom_kernel_thunk.args[1]: parameter 1 (wrapped_add_param_1) of .entry wrapped_add in the supplied PTX "), "{out}");
    assert!(
        out.ends_with(
            "narrow.ptx is 4 bytes; XLA passes every kernel argument as a 64-bit device address"
        ),
        "{out}"
    );
}

#[test]
fn ptx_for_another_architecture_is_refused() {
    // h100's PTX (.target sm_90a) for the a100 executable.
    let (p, _) = ptx_text("h100_sxm", "add");
    let t = "a100_sxm_80";
    let (code, out) = aot_run(&dir(t).join("add.gpuexe"), t, "add", vec![p.clone()]);
    assert_eq!(code, 2);
    let want = format!(
        "INVALID_ARGUMENT: thunks[0].custom_kernel_thunk.custom_kernel: supplied PTX {}: kernel \"wrapped_add\" has .target sm_90a, but gpu_compute_capability is sm_80 (8.0); ",
        p.display()
    );
    assert!(out.starts_with(&want), "{out}");
}

#[test]
fn an_entry_in_two_supplied_files_is_refused() {
    let t = "a100_sxm_80";
    let (p, text) = ptx_text(t, "add");
    let copy = scratch("add_again.ptx", &text);
    let (code, out) = aot_run(&dir(t).join("add.gpuexe"), t, "add", vec![p.clone(), copy]);
    assert_eq!(code, 2);
    assert!(
        out.starts_with("INVALID_ARGUMENT: supplied PTX ")
            && out.ends_with(&format!(
                "add_again.ptx defines .entry wrapped_add, which {} defines too; each kernel must come from one file",
                p.display()
            )),
        "{out}"
    );
}

/// Every corpus module on both targets, from a folder `ptx_dump.py OUT` wrote (too large to
/// commit): `XLA_GPU_PTX_DIR=OUT cargo test -p harness --test xla_gpu_run -- --ignored
/// --nocapture` prints the table (module, target, launches, emulator time, max error).
#[test]
#[ignore = "needs XLA_GPU_PTX_DIR from tools/xla_artifacts/ptx_dump.py OUT"]
fn every_corpus_module_runs_to_a_match() {
    let Some(base) = std::env::var_os("XLA_GPU_PTX_DIR").map(PathBuf::from) else {
        panic!("set XLA_GPU_PTX_DIR to the folder tools/xla_artifacts/ptx_dump.py OUT wrote");
    };
    let mut failures = Vec::new();
    let mut rows = 0;
    println!("| module | target | launches | emulator ms | max abs error | tolerance |");
    println!("| --- | --- | ---: | ---: | ---: | --- |");
    for t in TARGETS {
        let d = base.join(t);
        let mut modules: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .filter_map(|e| {
                let n = e.unwrap().file_name().into_string().ok()?;
                n.strip_suffix(".gpuexe").map(str::to_owned)
            })
            .collect();
        modules.sort();
        for m in modules {
            let ptx = xla_ptx_files(&d, &m).unwrap();
            match run_xla_executable(&d.join(format!("{m}.gpuexe")), &ptx, &spec(t), &io(&m)) {
                Ok(r) => {
                    let tol = match r.tolerance {
                        ToleranceRule::XlaGpu { tf32: true } => "tf32",
                        _ => "transcendental",
                    };
                    println!(
                        "| {m} | {t} | {} | {:.1} | {:.2e} | {tol} |",
                        r.launches, r.millis, r.max_abs_err
                    );
                    if !r.ok() {
                        failures.push(format!("{t}/{m}: {r:?}"));
                    }
                }
                Err(e) => {
                    println!("| {m} | {t} | - | - | - | {e:#} |");
                    failures.push(format!("{t}/{m}: {e:#}"));
                }
            }
            rows += 1;
        }
    }
    assert_eq!(rows, 86, "expected 43 modules x 2 targets");
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn a_read_constant_allocation_with_non_zero_arrays_supplied_is_refused() {
    // fori_loop copies its constant allocation (a2, the loop counter's 0) into the loop state;
    // XLA's constants module leaves the array zero, so the zeroed allocation is right. With the
    // array initialized to 7, which allocation it belongs to cannot be told here: refused.
    let t = "a100_sxm_80";
    let mut ptx = xla_ptx_files(&dir(t), "fori_loop").unwrap();
    let consts = ptx
        .iter()
        .position(|p| p.to_string_lossy().ends_with("fori_loop.constants.ptx"))
        .unwrap();
    let text = std::fs::read_to_string(&ptx[consts]).unwrap();
    let seven = text.replace(
        "buffer_for_constant_9_0[64];",
        "buffer_for_constant_9_0[64] = {7, 0, 0, 0};",
    );
    assert_ne!(seven, text);
    let edited = scratch("constants_seven.ptx", &seven);
    ptx[consts] = edited.clone();
    let (code, out) = aot_run(&dir(t).join("fori_loop.gpuexe"), t, "fori_loop", ptx);
    assert_eq!(code, 2);
    assert_eq!(
        out,
        format!(
            "UNIMPLEMENTED: buffer_allocations.values[2] is a constant allocation that a thunk reads and no constants entry fills, and the supplied PTX {} initializes .global buffer_for_constant_9_0 with non-zero bytes; which array holds which constant is recorded only in the buffer assignment (GpuExecutableProto field 2), which this runtime does not read",
            edited.display()
        )
    );
}
