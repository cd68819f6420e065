//! Real JAX exports that go through `aot check-hlo` on h100_sxm and a100_sxm_80 (compile,
//! serialize, load in a fresh runtime, run on the emulated device, compare with XLA:CPU's outputs
//! in `NAME.io.json`), with default flags. Fifteen suites:
//!
//! - `models`: model pieces for the constructs real models use (`testdata/models/`, made by
//!   `tools/jax_exports/models.py`), each as `NAME.hlo` and `NAME.mlir`;
//! - `jax_exported`: model pieces exported with `jax.export` for CUDA
//!   (`testdata/jax_exported/models/`, made by `tools/jax_exports/exported.py`), each as the
//!   module text `NAME.mlir`, its portable artifact `NAME.mlirbc` and the serialized `Exported`
//!   `NAME.jax_exported` (inputs and outputs in the calling convention's order): all three must
//!   give XLA:CPU's outputs;
//! - `jax_exported_corpus`: the public corpus (`testdata/corpus/hlo/*.mlir`) as a portable
//!   artifact and a serialized `Exported` (`testdata/jax_exported/corpus/`, made by
//!   `tools/jax_exports/corpus_exported.py`), against the corpus io files;
//! - `jax_linalg`: JAX's linear algebra lowered for CUDA (`testdata/jax_linalg/`, made by
//!   `tools/jax_linalg/gen.py`), `NAME.mlir` calling JAX's stable cuSOLVER/cuSPARSE custom calls
//!   and `NAME.hlo`, the same module through XLA's own StableHLO import;
//! - `low_precision`: bf16/f16 reductions (`testdata/low_precision/`, made by
//!   `tools/jax_exports/low_precision.py`) whose expected outputs are the exact sums rounded once
//!   (what XLA:GPU gives by reducing in f32), compared exactly;
//! - `chlo`: every CHLO op JAX emits (`testdata/chlo/`, `tools/jax_exports/chlo.py`): the
//!   `.mlir` keeps `chlo.*` ops, the `.hlo` is XLA's legalization of them (`chlo.mulhi`, of the
//!   Philox PRNGs, stays XLA's HLO opcode `mulhi` there, which the HLO parser expands);
//! - `bitcast`: `bitcast-convert` that changes the element width (`testdata/bitcast/`,
//!   `tools/jax_exports/bitcast.py`);
//! - `rng`: `rng-bit-generator` (ThreeFry, Philox, default; every output width) and
//!   `jax.random` with the `rbg` / `unsafe_rbg` implementations (`testdata/rng/`,
//!   `tools/jax_exports/rng.py`), bit for bit (integers compare exactly);
//! - `complex_dot`: `jnp.matmul` / `einsum` on c64 and c128 (`testdata/complex_dot/`,
//!   `tools/jax_exports/complex_dot.py`);
//! - `complex_ops`: XLA's complex transcendentals (`exponential` ... `tanh`, `power`) as single
//!   ops and the `jnp` functions as JAX lowers them (complex `chlo.asin` ... `chlo.atanh` and
//!   `chlo.square` in the `.mlir`, XLA's import of them in the `.hlo`), on c64 and
//!   c128 with XLA's special-case arguments (`testdata/complex_ops/`,
//!   `tools/jax_exports/complex_ops.py`);
//! - `fft`: `jnp.fft.fft` / `ifft` / `rfft` / `irfft` / `fft2` / `rfftn` on c64 and c128 at
//!   lengths 8, 12, 100 and odd ones (`testdata/fft/`, `tools/jax_exports/fft.py`), in the
//!   default form (dots with twiddle matrices); `fft_thunk.rs` runs them as the FFT thunk;
//! - `cholesky`: `jnp.linalg.cholesky`, `jax.scipy.linalg.cho_factor` (lower and upper),
//!   `cho_solve` and `cholesky(lower=False)`, single and batched, f32/f64/c64/c128, and a batch
//!   with a matrix that is not positive definite (`testdata/cholesky/`,
//!   `tools/jax_exports/cholesky.py`: the `cholesky` op, not LAPACK's custom call), in the
//!   default form (the column loop; `cholesky_potrf.rs` runs them as `cusolver_potrf_ffi`);
//! - `fusion_growth`: associative scans and pad/slice levels whose naive fusion re-emits code
//!   exponentially (`testdata/fusion_growth/`, `tools/jax_exports/fusion_growth.py`);
//! - `programs`: whole programs exported with `jax.export` for CUDA (`testdata/programs/`,
//!   `tools/jax_exports/programs.py`): a GPT block and its Adam training step, a ResNet block's
//!   gradient with batch norm, an LSTM scan, dropout, per-example gradients, a Hessian-vector
//!   product and a rematerialized gradient, in the three forms `jax_exported` has;
//! - `dot_algorithms`: `lax.DotAlgorithmPreset`s and `jax.nn.dot_product_attention` on f16
//!   exported for CUDA (`testdata/dot_algorithms/`, `tools/jax_exports/dot_algorithms.py`),
//!   StableHLO's `algorithm = <...>` on `dot_general`, against numpy's reading of what XLA:GPU
//!   computes (operands rounded to bf16 or TF32 where the algorithm says);
//! - `float8`: FP8 (`f8e4m3fn`, `f8e5m2`) exported for CUDA (`testdata/float8/`,
//!   `tools/jax_exports/float8.py`): conversions at every rounding boundary, scaled FP8 matmuls
//!   (e4m3 x e4m3, e5m2 x e4m3), a quantize-dequantize MLP, f8 arithmetic, f8 parameters and
//!   results, f8 constants and the `ANY_F8_ANY_F8_F32` dot algorithms, in the three forms (the tolerance, 1e-5 + 1e-4 |x|, is far below one f8 ulp, 2^-4
//!   |x| at best, so every f8 result is compared exactly; f32 results of f8 products keep
//!   the summation-order margin);
//! - `approx_top_k`: `jax.lax.approx_max_k` / `approx_min_k` exported for CUDA
//!   (`testdata/approx_top_k/`, `tools/jax_exports/approx_top_k.py`), the `ApproxTopK` custom
//!   call XLA expands while importing StableHLO, as text and portable artifact, compared
//!   exactly (the inputs have no ties).
//!
//! Each suite's `expected_to_fail` names the cases not supported yet, each with the reason. Those
//! trials still run and must fail: a case that starts passing fails its trial until its entry is
//! removed, so the list never hides progress or a regression.
//!
//! `AOT_RUN_FILTER=substring` limits the trials (libtest-mimic's own filter works too).
mod common;
use common::{check, check_exact, root};

use libtest_mimic::{Arguments, Failed, Trial};

/// One directory of exports.
struct Suite {
    /// Trial-name prefix.
    name: &'static str,
    /// Directory under the repository root.
    dir: &'static str,
    /// The module forms each case comes in.
    exts: &'static [&'static str],
    /// The fewest cases the directory must hold (a lost directory must not pass as empty).
    min_cases: usize,
    /// Cases that do not match yet, with why. Remove an entry when its case passes. `NAME`
    /// covers every form of the case; `EXT:NAME` (`mlir:exp_c64`) only that form.
    expected_to_fail: &'static [(&'static str, &'static str)],
    /// Outputs must equal the expected ones exactly (expectations that are the correctly rounded
    /// truth), not only within the dtype's default tolerance.
    exact: bool,
    /// Where the `NAME.io.json` files are, when not beside the modules (forms of the public
    /// corpus, whose io files stay in `testdata/corpus/hlo`).
    io_dir: Option<&'static str>,
}

const SUITES: &[Suite] = &[
    Suite {
        name: "models",
        dir: "testdata/models",
        exts: &["hlo", "mlir"],
        min_cases: 23,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "jax_exported",
        dir: "testdata/jax_exported/models",
        exts: &["mlir", "mlirbc", "jax_exported"],
        min_cases: 8,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "jax_exported_corpus",
        dir: "testdata/jax_exported/corpus",
        exts: &["mlirbc", "jax_exported"],
        min_cases: 43,
        expected_to_fail: &[],
        exact: false,
        io_dir: Some("testdata/corpus/hlo"),
    },
    Suite {
        name: "jax_linalg",
        dir: "testdata/jax_linalg",
        exts: &["hlo", "mlir"],
        min_cases: 21,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "low_precision",
        dir: "testdata/low_precision",
        exts: &["hlo", "mlir"],
        min_cases: 4,
        expected_to_fail: &[],
        exact: true,
        io_dir: None,
    },
    Suite {
        name: "chlo",
        dir: "testdata/chlo",
        exts: &["hlo", "mlir"],
        min_cases: 30,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "bitcast",
        dir: "testdata/bitcast",
        exts: &["hlo", "mlir"],
        min_cases: 5,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "rng",
        dir: "testdata/rng",
        exts: &["hlo", "mlir"],
        min_cases: 5,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "complex_dot",
        dir: "testdata/complex_dot",
        exts: &["hlo", "mlir"],
        min_cases: 6,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "complex_ops",
        dir: "testdata/complex_ops",
        exts: &["hlo", "mlir"],
        min_cases: 88,
        expected_to_fail: &[
            ("op_power_c64", "c64 power: XLA computes in f32, so arg(1e-30 + 3e4i) rounds to f32(pi/2) and cos of it is -4.4e-8, giving re = -1.3e-3 for a true 1e-30; the kernels compute the parts in f64 (1.8e-12)"),
            ("jnp_power_c64", "c64 power: XLA computes in f32, so arg(1e-30 + 3e4i) rounds to f32(pi/2) and cos of it is -4.4e-8, giving re = -1.3e-3 for a true 1e-30; the kernels compute the parts in f64 (1.8e-12)"),
        ],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "fft",
        dir: "testdata/fft",
        exts: &["hlo", "mlir"],
        min_cases: 16,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "cholesky",
        dir: "testdata/cholesky",
        exts: &["hlo", "mlir"],
        min_cases: 24,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "fusion_growth",
        dir: "testdata/fusion_growth",
        exts: &["hlo", "mlir"],
        min_cases: 4,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "programs",
        dir: "testdata/programs",
        exts: &["mlir", "mlirbc", "jax_exported"],
        min_cases: 8,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "dot_algorithms",
        dir: "testdata/dot_algorithms",
        exts: &["mlir"],
        min_cases: 11,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "float8",
        dir: "testdata/float8",
        exts: &["mlir", "mlirbc", "jax_exported"],
        min_cases: 9,
        expected_to_fail: &[],
        exact: false,
        io_dir: None,
    },
    Suite {
        name: "approx_top_k",
        dir: "testdata/approx_top_k",
        exts: &["mlir", "mlirbc"],
        min_cases: 9,
        expected_to_fail: &[],
        exact: true,
        io_dir: None,
    },
];

fn trial(suite: &'static Suite, name: &str, ext: &str, target: &str) -> Trial {
    let dir = root().join(suite.dir);
    let module = dir.join(format!("{name}.{ext}"));
    // A bare module (`.mlir`, `.mlirbc` of an export) takes its own arguments, which may differ
    // from the calling convention's inputs (`NAME.module.io.json` then holds them).
    let module_io = dir.join(format!("{name}.module.io.json"));
    let io_dir = suite.io_dir.map_or_else(|| dir.clone(), |d| root().join(d));
    let io = if ext != "jax_exported" && module_io.exists() {
        module_io
    } else {
        io_dir.join(format!("{name}.io.json"))
    };
    let qualified = format!("{ext}:{name}");
    let expected_failure = suite
        .expected_to_fail
        .iter()
        .find(|(n, _)| *n == name || *n == qualified)
        .map(|(_, why)| *why);
    let t = target.to_owned();
    let label = format!("{}::{ext}::{target}::{name}", suite.name);
    Trial::test(label, move || {
        let checked = if suite.exact {
            check_exact(&module, &io, &t)
        } else {
            check(&module, &io, &t)
        };
        match (checked, expected_failure) {
            (Ok(()), None) => Ok(()),
            (Err(e), None) => Err(e),
            (Err(_), Some(_)) => Ok(()),
            (Ok(()), Some(why)) => Err(Failed::from(format!(
                "passes now: remove it from expected_to_fail (listed as: {why})"
            ))),
        }
    })
}

/// The case names of a suite's directory (one per `NAME.io.json`), sorted.
fn case_names(suite: &Suite) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join(suite.dir))
        .map(|d| {
            let suffix = if suite.io_dir.is_some() {
                format!(".{}", suite.exts[0])
            } else {
                ".io.json".to_owned()
            };
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter_map(|n| n.strip_suffix(suffix.as_str()).map(str::to_owned))
                .filter(|n| !n.ends_with(".module"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The suite's own trials: enough cases, and no expected failure naming a missing case.
fn suite_trials(suite: &'static Suite, names: &[String]) -> Vec<Trial> {
    let count = names.len();
    let unknown: Vec<&str> = suite
        .expected_to_fail
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| {
            let bare = n.split_once(':').map_or(*n, |(_, b)| b);
            !names.iter().any(|m| m == bare)
        })
        .collect();
    let unknown = unknown.join(", ");
    vec![
        Trial::test(format!("{}::present", suite.name), move || {
            if count >= suite.min_cases {
                Ok(())
            } else {
                Err(format!("only {count} cases in {}", suite.dir).into())
            }
        }),
        Trial::test(
            format!("{}::expected_failures_exist", suite.name),
            move || {
                if unknown.is_empty() {
                    Ok(())
                } else {
                    Err(format!("expected_to_fail names cases that do not exist: {unknown}").into())
                }
            },
        ),
    ]
}

fn main() {
    let args = Arguments::from_args();
    let filter = std::env::var("AOT_RUN_FILTER").unwrap_or_default();
    let mut trials = Vec::new();
    for suite in SUITES {
        let names = case_names(suite);
        trials.extend(suite_trials(suite, &names));
        for name in names.iter().filter(|n| n.contains(filter.as_str())) {
            for ext in suite.exts {
                for target in ["h100_sxm", "a100_sxm_80"] {
                    trials.push(trial(suite, name, ext, target));
                }
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
