//! `cholesky` (issues 27 and 31) in both forms of the staged rollout, compiled and run on the
//! emulated device: the default (a column loop of ops, no custom call: what runtimes before
//! 2026-12-03 run) and with `CompileOptions::emit_cusolver_potrf` (one `cusolver_potrf_ffi`
//! call per cholesky, as XLA:GPU does). The JAX pieces of `testdata/cholesky/` must match
//! XLA:CPU's outputs in both; raw `cholesky` ops (no `tril` after them, lower and upper, a
//! matrix that is not positive definite) must give the evaluator's answer in both, which keeps
//! XLA:GPU's meaning: the other triangle holds the operand's values and a failed matrix is all
//! NaN (`NaN + NaN i` for complex).
use harness::census_of;
use harness::cmd::run::ToleranceRule;
use harness::repo_root;
use harness::run_artifact;
use hlo::{Array, Data};
use hlo_eval::{compare, IoCase};
use proto::prost::Message;

const POTRF: &str = "registry:cusolver_potrf_ffi";

fn spec(name: &str) -> std::path::PathBuf {
    repo_root().join(format!("testdata/target_specs/{name}.txtpb"))
}

fn device() -> runtime::DeviceDescription {
    let config = proto::load_target_config(&spec("h100_sxm")).unwrap();
    runtime::DeviceDescription::from_target_config(&config).unwrap()
}

/// Compiles `module` in one form, checks the form by the census, and runs it on `case`.
fn run(module: &hlo::HloModule, native: bool, case: &IoCase) -> Vec<Array> {
    let target = compiler::Target::load(&spec("h100_sxm")).unwrap();
    let mut o = compiler::CompileOptions::default();
    o.emit_cusolver_potrf = native;
    o.verify_between_passes = true;
    let bytes = compiler::compile_to_bytes(module, &target, &o).unwrap();
    let exe = proto::xla::gpu::GpuExecutableProto::decode(bytes.as_slice()).unwrap();
    assert_eq!(census_of(&exe).contains(POTRF), native);
    let mut got = run_artifact(&bytes, &device(), std::slice::from_ref(case)).unwrap();
    got.remove(0).outputs
}

fn check(name: &str, got: &[Array], want: &[Array]) {
    assert_eq!(got.len(), want.len(), "{name}");
    for (g, w) in got.iter().zip(want) {
        let c = compare(g, w, ToleranceRule::PerDtype.tolerance(w));
        assert!(
            c.ok,
            "{name}: {} mismatches, max_abs_err {:e}, first {:?}",
            c.mismatches, c.max_abs_err, c.first
        );
    }
}

#[test]
fn every_cholesky_piece_runs_in_both_forms() {
    let dir = repo_root().join("testdata/cholesky");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.ok()?.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".hlo").map(str::to_owned)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 24, "{names:?}");
    for name in &names {
        let module = hlo_front::read_module(&dir.join(format!("{name}.hlo"))).unwrap();
        let want = IoCase::read(&dir.join(format!("{name}.io.json"))).unwrap();
        for native in [false, true] {
            let got = run(&module, native, &want);
            check(&format!("{name} native={native}"), &got, &want.outputs);
        }
    }
}

/// Two 3x3 matrices as one batch: a Hermitian positive definite one (the other triangle
/// holding values the factorization must not read: 100 + 7i), and one whose second leading
/// minor is negative.
fn operand(ty: &str) -> Array {
    #[rustfmt::skip]
    let good = [
        (4.0, 0.0), (100.0, 7.0), (100.0, 7.0),
        (2.0, 1.0), (5.0, 0.0), (100.0, 7.0),
        (-1.0, 2.0), (1.0, -1.0), (6.0, 0.0),
    ];
    #[rustfmt::skip]
    let bad = [
        (1.0, 0.0), (0.0, 0.0), (0.0, 0.0),
        (3.0, 0.0), (1.0, 0.0), (0.0, 0.0),
        (0.0, 0.0), (0.0, 0.0), (1.0, 0.0),
    ];
    let all: Vec<(f64, f64)> = good.iter().chain(&bad).copied().collect();
    let data = match ty {
        "f32" => Data::F32(all.iter().map(|z| z.0 as f32).collect()),
        "f64" => Data::F64(all.iter().map(|z| z.0).collect()),
        "c64" => Data::C64(
            all.iter()
                .map(|z| hlo::Complex::new(z.0 as f32, z.1 as f32))
                .collect(),
        ),
        _ => Data::C128(all.iter().map(|z| hlo::Complex::new(z.0, z.1)).collect()),
    };
    Array::new(vec![2, 3, 3], data).unwrap()
}

#[test]
fn raw_cholesky_keeps_xla_gpus_meaning_in_both_forms() {
    for ty in ["f32", "f64", "c64", "c128"] {
        for lower in [true, false] {
            let a = if lower {
                operand(ty)
            } else {
                // The same matrices with the triangles swapped.
                conj_transpose(operand(ty))
            };
            let text = format!(
                "HloModule chol\n\nENTRY e {{\n  a = {ty}[2,3,3] parameter(0)\n  ROOT c = {ty}[2,3,3] cholesky(a), lower={lower}\n}}\n"
            );
            let module = hlo_text::parse_module(&text).unwrap();
            let want = hlo_eval::evaluate_flat(&module, std::slice::from_ref(&a)).unwrap();
            let nan = match want[0].data() {
                Data::F32(v) => v[9..].iter().all(|x| x.is_nan()),
                Data::F64(v) => v[9..].iter().all(|x| x.is_nan()),
                Data::C64(v) => v[9..].iter().all(|z| z.re.is_nan() && z.im.is_nan()),
                Data::C128(v) => v[9..].iter().all(|z| z.re.is_nan() && z.im.is_nan()),
                _ => false,
            };
            assert!(nan, "{ty} lower={lower}: the failed matrix is all NaN");
            let case = IoCase {
                inputs: vec![a],
                outputs: want.clone(),
            };
            for native in [false, true] {
                let got = run(&module, native, &case);
                check(&format!("{ty} lower={lower} native={native}"), &got, &want);
            }
        }
    }
}

/// `a`'s 3x3 matrices conjugated and transposed.
fn conj_transpose(a: Array) -> Array {
    let dims = a.dims().to_vec();
    let from = |k: usize| (k / 9) * 9 + (k % 3) * 3 + (k % 9) / 3;
    let conj = |z: hlo::Complex<f64>| hlo::Complex::new(z.re, -z.im);
    let data = match a.data() {
        Data::F32(v) => Data::F32((0..18).map(|k| v[from(k)]).collect()),
        Data::F64(v) => Data::F64((0..18).map(|k| v[from(k)]).collect()),
        Data::C64(v) => Data::C64(
            (0..18)
                .map(|k| hlo::Complex::new(v[from(k)].re, -v[from(k)].im))
                .collect(),
        ),
        Data::C128(v) => Data::C128((0..18).map(|k| conj(v[from(k)])).collect()),
        other => panic!("{other:?}"),
    };
    Array::new(dims, data).unwrap()
}
