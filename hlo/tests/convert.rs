//! `HloModule` -> `HloModuleProtoWithConfig` -> bytes -> `HloModule` over the whole corpus, plus
//! the validation `from_proto` applies to untrusted protos. One named test per corpus file.
use std::path::{Path, PathBuf};

use hlo::convert::{from_proto, to_proto, ConvertError};
use hlo::ir::{HloModule, Literal, LiteralValue, Opcode, ReplicaGroups};
use hlo::PrimitiveType;
use libtest_mimic::{Arguments, Failed, Trial};
use proto::prost::Message;
use proto::xla::HloModuleProtoWithConfig;

fn corpus_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus");
    let mut files = Vec::new();
    for dir in ["hlo", "xla_hlo"] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            files.extend(
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "hlo")),
            );
        }
    }
    files.sort();
    files
}

/// Differences that are representational only:
/// - metadata keys without a proto field (debug information, documented as dropped);
/// - float constants: the text's decimal is kept at f64 precision by the parser, the proto stores
///   the value in the constant's own element type, so compare both rounded to that type;
/// - a custom-call's single called computation (`called_computations={c}` and `to_apply=c` mean
///   the same; the proto has one list);
/// - `replica_groups={}` and no replica groups (both: all replicas in one group).
fn normalize(mut m: HloModule) -> HloModule {
    for c in &mut m.computations {
        for i in &mut c.instructions {
            if let (Some(Literal::Array(a)), Some(t)) =
                (&mut i.attrs.literal, i.shape.element_type())
            {
                for v in &mut a.values {
                    if let LiteralValue::Float(f) = v {
                        *f = match t {
                            PrimitiveType::F32 => f64::from(*f as f32),
                            PrimitiveType::F16 => half::f16::from_f64(*f).to_f64(),
                            PrimitiveType::Bf16 => half::bf16::from_f64(*f).to_f64(),
                            _ => *f,
                        };
                    }
                }
            }
            if i.opcode == Opcode::CustomCall {
                if let Some([c]) = i.attrs.called_computations.as_deref() {
                    i.attrs.to_apply = Some(*c);
                    i.attrs.called_computations = None;
                }
            }
            if matches!(&i.attrs.replica_groups, Some(ReplicaGroups::List(g)) if g.is_empty()) {
                i.attrs.replica_groups = None;
            }
            if let Some(md) = &mut i.metadata {
                md.other.clear();
                if *md == Default::default() {
                    i.metadata = None;
                }
            }
            if let Some(f) = &mut i.attrs.frontend_attributes {
                f.sort();
            }
        }
    }
    if let Some(f) = &mut m.config.frontend_attributes {
        f.sort();
    }
    m
}

fn round_trip(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path)?;
    let module = hlo::parse_module(&text).map_err(|e| format!("parse: {e}"))?;
    let proto = match to_proto(&module) {
        Ok(p) => p,
        // Documented refusals: the text carries something the proto has no field for.
        Err(ConvertError::Unrepresentable { what, .. })
            if is_known_unrepresentable(path, &what) =>
        {
            return Ok(())
        }
        Err(e) => return Err(format!("to_proto: {e}").into()),
    };
    let bytes = proto.encode_to_vec();
    let again = to_proto(&module)
        .map_err(|e| e.to_string())?
        .encode_to_vec();
    if bytes != again {
        return Err("to_proto is not deterministic".into());
    }
    let decoded = HloModuleProtoWithConfig::decode(bytes.as_slice())?;
    let back = from_proto(&decoded).map_err(|e| format!("from_proto: {e}"))?;
    let (want, got) = (normalize(module), normalize(back));
    if want != got {
        let diff =
            similar::TextDiff::from_lines(&hlo::print_module(&want), &hlo::print_module(&got))
                .unified_diff()
                .header("parsed", "through HloModuleProto")
                .to_string();
        let detail = if diff.is_empty() {
            format!("(printed forms equal; structural difference)\n{want:#?}\n---\n{got:#?}")
        } else {
            diff
        };
        return Err(format!("round trip through the proto changed the module:\n{detail}").into());
    }
    Ok(())
}

/// Corpus files whose text uses forms the proto (deliberately) cannot carry.
fn is_known_unrepresentable(path: &Path, what: &str) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    KNOWN_UNREPRESENTABLE
        .iter()
        .any(|(file, needle)| name == *file && what.contains(needle))
}

const KNOWN_UNREPRESENTABLE: &[(&str, &str)] = &[];

/// A valid proto to mutate: `add.hlo` from the corpus.
fn base_proto() -> HloModuleProtoWithConfig {
    let text = include_str!("../../testdata/corpus/hlo/argmax.hlo");
    let module = hlo::parse_module(text).expect("corpus file parses");
    to_proto(&module).expect("corpus file converts")
}

type Mutation = (
    &'static str,
    fn(&mut HloModuleProtoWithConfig),
    &'static str,
);

/// Each mutation of a valid proto and the exact error `from_proto` must give.
const HOSTILE: &[Mutation] = &[
    (
        "unknown_opcode",
        |p| set_instr(p, 0, 0, |i| i.opcode = "frobnicate".into()),
        "region_0.1/reduce.4: unknown opcode \"frobnicate\"",
    ),
    (
        "dangling_operand",
        |p| set_instr(p, 0, 2, |i| i.operand_ids = vec![12345]),
        "region_0.1/gt.1: operand id 12345 is not an earlier instruction of this computation",
    ),
    (
        "missing_called_computation",
        |p| set_instr(p, 2, 1, |i| i.called_computation_ids = vec![99]),
        "main.3/jit__lambda__.3: called computation id 99 does not exist",
    ),
    (
        "call_graph_cycle",
        |p| {
            // argmax.2's reduce calls region_0.1; make region_0.1 call argmax.2 back.
            set_instr(p, 0, 2, |i| {
                i.opcode = "call".into();
                i.called_computation_ids = vec![1];
            })
        },
        "region_0.1/: the call graph has a cycle: region_0.1 -> argmax.2 -> region_0.1",
    ),
    (
        "bad_element_type",
        |p| set_instr(p, 0, 0, |i| i.shape.as_mut().unwrap().element_type = 999),
        "region_0.1/reduce.4: shape: unknown element type number 999",
    ),
    (
        "negative_dimension",
        |p| {
            set_instr(p, 1, 0, |i| {
                i.shape.as_mut().unwrap().dimensions = vec![-4, 20]
            })
        },
        "argmax.2/jit__lambda__.1: shape: negative dimension size -4",
    ),
    (
        "constant_value_count",
        |p| {
            set_instr(p, 1, 3, |i| {
                i.literal.as_mut().unwrap().f32s = vec![1.0, 2.0]
            })
        },
        "argmax.2/constant.3: literal: constant has 2 values for 1 elements",
    ),
    (
        "duplicate_parameter_number",
        |p| set_instr(p, 0, 1, |i| i.parameter_number = 0),
        "region_0.1/reduce.6: parameter number 0 used twice",
    ),
    (
        "missing_root",
        |p| p.hlo_module.as_mut().unwrap().computations[2].root_id = -7,
        "main.3/: root id -7 is not an instruction",
    ),
    (
        "missing_entry",
        |p| p.hlo_module.as_mut().unwrap().entry_computation_id = 42,
        "<module>/: entry computation id 42 (\"main.3\") does not exist",
    ),
    (
        "module_unset",
        |p| p.hlo_module = None,
        "<module>/: hlo_module is not set",
    ),
];

fn set_instr(
    p: &mut HloModuleProtoWithConfig,
    computation: usize,
    instruction: usize,
    f: impl FnOnce(&mut proto::xla::HloInstructionProto),
) {
    let m = p.hlo_module.as_mut().expect("module");
    f(&mut m.computations[computation].instructions[instruction]);
}

fn hostile_trials() -> Vec<Trial> {
    HOSTILE
        .iter()
        .map(|&(name, mutate, want)| {
            Trial::test(format!("convert::hostile::{name}"), move || {
                let mut p = base_proto();
                mutate(&mut p);
                match from_proto(&p) {
                    Ok(_) => Err(format!("accepted; expected error `{want}`").into()),
                    Err(e) if e.to_string() == want => Ok(()),
                    Err(e) => Err(format!("error `{e}`, expected `{want}`").into()),
                }
            })
        })
        .collect()
}

fn main() {
    let args = Arguments::from_args();
    let trials = corpus_files()
        .into_iter()
        .map(|p| {
            let name = format!(
                "convert::{}::{}",
                p.parent()
                    .and_then(|d| d.file_name())
                    .map(|d| d.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                p.file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default()
            );
            Trial::test(name, move || round_trip(&p))
        })
        .chain(hostile_trials())
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
