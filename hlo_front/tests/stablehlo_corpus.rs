//! StableHLO corpus: every `testdata/corpus/hlo/NAME.mlir` (JAX's StableHLO export of the same
//! function as `NAME.hlo`) is converted by the StableHLO front end and evaluated on
//! `NAME.io.json`'s inputs; it must match the io file's outputs within the io tolerance
//! (`mlir::NAME`) and what the `.hlo` twin computes on the same inputs (`twin::NAME`).
//!
//! `testdata/stablehlo/` holds this project's own JAX 0.10.2 exports (`gen.py`) of constructs
//! the public corpus lacks (convolution, select-and-scatter, top-k, batched gather, scatter,
//! collectives, rng_bit_generator):
//! each key instruction converted from `NAME.mlir` must equal, in shape and attributes, the one
//! in JAX's HLO export `NAME.hlo` (`export_attrs::NAME`), and the ones the evaluator runs must
//! match their io file (`export_eval::NAME`). Each also comes in MLIR's generic form
//! (`NAME.generic.mlir`), which must convert to the same module (`generic::NAME`).
use std::path::{Path, PathBuf};

use hlo::Array;
use hlo::{HloModule, Opcode};
use hlo_eval::evaluate_flat;
use hlo_eval::{compare, IoCase, Tolerance};
use libtest_mimic::{Arguments, Failed, Trial};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/hlo")
}

fn exports_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/stablehlo")
}

/// Opcodes whose instructions `export_attrs` compares (the constructs the exports exist for).
const KEY_OPCODES: &[Opcode] = &[
    Opcode::Convolution,
    Opcode::SelectAndScatter,
    Opcode::ReduceWindow,
    Opcode::TopK,
    Opcode::Gather,
    Opcode::Scatter,
    Opcode::Dot,
    Opcode::AllReduce,
    Opcode::AllGather,
    Opcode::CollectivePermute,
    Opcode::ReduceScatter,
    Opcode::AllToAll,
    Opcode::PartitionId,
    Opcode::ReplicaId,
    Opcode::RngBitGenerator,
    Opcode::Sort,
];

/// Every instruction with a key opcode: opcode, shape without layout, attributes without the
/// computation handles (numbered differently by the two front ends), sorted (the two order
/// their computations differently).
fn key_instructions(m: &HloModule) -> Vec<String> {
    let mut out = Vec::new();
    for c in &m.computations {
        for i in &c.instructions {
            if KEY_OPCODES.contains(&i.opcode) {
                let mut a = i.attrs.clone();
                a.to_apply = None;
                a.select = None;
                a.scatter = None;
                out.push(format!("{} {} {:?}", i.opcode, i.shape.without_layout(), a));
            }
        }
    }
    out.sort();
    out
}

fn export_attrs(name: &str) -> Result<(), Failed> {
    let dir = exports_dir();
    let mlir = std::fs::read_to_string(dir.join(format!("{name}.mlir")))?;
    // `collectives_per_device.mlir` is the per-device body of JAX's Shardy export
    // `collectives.mlir`; its collectives are those of that export's HLO.
    let hlo_name = name.strip_suffix("_per_device").unwrap_or(name);
    let mut hlo_text = std::fs::read_to_string(dir.join(format!("{hlo_name}.hlo")))?;
    if let (Some(header), Some(rest)) = (hlo_text.lines().next(), hlo_text.split_once('\n')) {
        // The HLO text parser does not read `frontend_attributes={xla.sdy.meshes={mesh =
        // #sdy.mesh<...>}}` in Shardy exports' headers; the header carries no instruction.
        if header.contains("#sdy.") {
            hlo_text = format!("HloModule {hlo_name}\n{}", rest.1);
        }
    }
    let got = key_instructions(
        &hlo_front::parse_stablehlo(&mlir).map_err(|e| format!("{name}.mlir:{e}"))?,
    );
    let want = key_instructions(
        &hlo_text::parse_module(&hlo_text).map_err(|e| format!("{hlo_name}.hlo:{e}"))?,
    );
    if got.is_empty() || got != want {
        return Err(format!(
            "converted:\n{}\nJAX's HLO:\n{}",
            got.join("\n"),
            want.join("\n")
        )
        .into());
    }
    Ok(())
}

fn export_eval(name: &str) -> Result<(), Failed> {
    let dir = exports_dir();
    let text = std::fs::read_to_string(dir.join(format!("{name}.mlir")))?;
    let module = hlo_front::parse_stablehlo(&text).map_err(|e| format!("{name}.mlir:{e}"))?;
    let case = IoCase::read(&dir.join(format!("{name}.io.json")))?;
    let got = evaluate_flat(&module, &case.inputs).map_err(|e| format!("evaluate: {e}"))?;
    check(&got, &case.outputs, "the io file")
}

/// Exports the reference evaluator runs (it has no top-k).
const EVALUATED_EXPORTS: &[&str] = &[
    "batched_gather",
    "conv2d",
    "maxpool_grad",
    "misc_ops",
    "scatter_add",
];

/// `NAME.generic.mlir` (MLIR's generic op form of the same module, module and functions
/// included) converts to exactly the module `NAME.mlir` converts to.
fn generic_equals_pretty(name: &str) -> Result<(), Failed> {
    let dir = exports_dir();
    let pretty = std::fs::read_to_string(dir.join(format!("{name}.mlir")))?;
    let Ok(generic) = std::fs::read_to_string(dir.join(format!("{name}.generic.mlir"))) else {
        return Err(format!("{name}.generic.mlir is missing").into());
    };
    let a = hlo_front::parse_stablehlo(&pretty).map_err(|e| format!("{name}.mlir:{e}"))?;
    let b = hlo_front::parse_stablehlo(&generic).map_err(|e| format!("{name}.generic.mlir:{e}"))?;
    if a != b {
        let diff =
            similar::TextDiff::from_lines(&hlo_text::print_module(&a), &hlo_text::print_module(&b))
                .unified_diff()
                .header("pretty", "generic")
                .to_string();
        return Err(diff.into());
    }
    Ok(())
}

fn eval_mlir(name: &str) -> Result<(Vec<Array>, IoCase), Failed> {
    let dir = corpus_dir();
    let text = std::fs::read_to_string(dir.join(format!("{name}.mlir")))
        .map_err(|e| format!("read: {e}"))?;
    let module = hlo_front::parse_stablehlo(&text).map_err(|e| format!("{name}.mlir:{e}"))?;
    let case =
        IoCase::read(&dir.join(format!("{name}.io.json"))).map_err(|e| format!("io file: {e}"))?;
    let got = evaluate_flat(&module, &case.inputs).map_err(|e| format!("evaluate: {e}"))?;
    Ok((got, case))
}

fn check(got: &[Array], want: &[Array], what: &str) -> Result<(), Failed> {
    if got.len() != want.len() {
        return Err(format!("{} outputs computed, {what} has {}", got.len(), want.len()).into());
    }
    let mut problems = Vec::new();
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let c = compare(g, w, Tolerance::for_dtype(w.dtype()));
        if !c.ok {
            match (&c.structural, &c.first) {
                (Some(s), _) => problems.push(format!("output {i}: {s}")),
                (None, Some(m)) => problems.push(format!(
                    "output {i} {} vs {what}: {} mismatches, max abs err {:e}, first at {:?}: got {} want {}",
                    w.shape_string(),
                    c.mismatches,
                    c.max_abs_err,
                    m.index,
                    m.got,
                    m.want
                )),
                (None, None) => problems.push(format!("output {i}: mismatch with {what}")),
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn against_io(name: &str) -> Result<(), Failed> {
    let (got, case) = eval_mlir(name)?;
    check(&got, &case.outputs, "the io file")
}

fn against_twin(name: &str) -> Result<(), Failed> {
    let (got, case) = eval_mlir(name)?;
    let text = std::fs::read_to_string(corpus_dir().join(format!("{name}.hlo")))
        .map_err(|e| format!("read: {e}"))?;
    let twin = hlo_text::parse_module(&text).map_err(|e| format!("{name}.hlo:{e}"))?;
    let want =
        evaluate_flat(&twin, &case.inputs).map_err(|e| format!("evaluate {name}.hlo: {e}"))?;
    check(&got, &want, "the .hlo twin")
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter_map(|n| n.strip_suffix(".mlir").map(str::to_string))
                .filter(|n| !n.ends_with(".generic"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn main() {
    let args = Arguments::from_args();
    let names = names_in(&corpus_dir());
    let mut trials: Vec<Trial> = Vec::new();
    for name in &names {
        let n = name.clone();
        trials.push(Trial::test(format!("mlir::{name}"), move || against_io(&n)));
        let n = name.clone();
        trials.push(Trial::test(format!("twin::{name}"), move || {
            against_twin(&n)
        }));
    }
    let exports = names_in(&exports_dir());
    for name in &exports {
        if name == "collectives" {
            // JAX's Shardy export: the manual computation becomes XLA's GSPMD form (its
            // partitioning is compiler/tests/spmd.rs's).
            trials.push(Trial::test("export_sharded::collectives", || {
                let text = std::fs::read_to_string(exports_dir().join("collectives.mlir"))?;
                let m = hlo_front::parse_stablehlo(&text)?;
                let entry = m.entry_computation();
                let count = |t: &str| {
                    entry
                        .instructions
                        .iter()
                        .filter(|i| i.attrs.custom_call_target.as_deref() == Some(t))
                        .count()
                };
                let got = (
                    count("SPMDFullToShardShape"),
                    count("SPMDShardToFullShape"),
                    entry.instructions[entry.params[0].index()]
                        .attrs
                        .sharding
                        .as_ref()
                        .map(ToString::to_string),
                    m.config.num_partitions,
                );
                let want = (1, 6, Some("{devices=[2,1]<=[2]}".to_string()), Some(2));
                if got != want {
                    return Err(format!("got {got:?}\nwant {want:?}").into());
                }
                Ok(())
            }));
            continue;
        }
        let n = name.clone();
        trials.push(Trial::test(format!("export_attrs::{name}"), move || {
            export_attrs(&n)
        }));
        if exports_dir().join(format!("{name}.generic.mlir")).exists() {
            let n = name.clone();
            trials.push(Trial::test(format!("generic::{name}"), move || {
                generic_equals_pretty(&n)
            }));
        }
        if EVALUATED_EXPORTS.contains(&name.as_str()) {
            let n = name.clone();
            trials.push(Trial::test(format!("export_eval::{name}"), move || {
                export_eval(&n)
            }));
        }
    }
    let n_exports = exports.len();
    trials.push(Trial::test(
        "export_attrs::exports_are_present",
        move || {
            if n_exports >= 5 {
                Ok(())
            } else {
                Err(format!(
                    "only {n_exports} exports found in {}",
                    exports_dir().display()
                )
                .into())
            }
        },
    ));
    let count = names.len();
    trials.push(Trial::test("mlir::corpus_is_present", move || {
        if count >= 43 {
            Ok(())
        } else {
            Err(format!(
                "only {count} .mlir cases found in {}",
                corpus_dir().display()
            )
            .into())
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
