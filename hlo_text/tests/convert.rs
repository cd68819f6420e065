//! `HloModule` -> `HloModuleProtoWithConfig` -> bytes -> `HloModule` over the whole corpus, plus
//! the validation `from_proto` applies to untrusted protos and the structural part of it that
//! `check_proto` shares. One named test per corpus file.
use std::path::{Path, PathBuf};

use hlo::{check_proto, check_proto_bytes, from_proto, to_proto, ConvertError};
use hlo::{ConstantLiteral, HloModule, LiteralValue, Opcode, ReplicaGroups};
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
            if let (Some(ConstantLiteral::Array(a)), Some(t)) =
                (&mut i.attrs.literal, i.shape.element_type())
            {
                for v in &mut a.values {
                    if let LiteralValue::Float(f) = v {
                        *f = t.round_float(*f).unwrap_or(*f);
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
    round_trip_text(&std::fs::read_to_string(path)?, path)
}

fn round_trip_text(text: &str, path: &Path) -> Result<(), Failed> {
    let module = hlo_text::parse_module(text).map_err(|e| format!("parse: {e}"))?;
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
    let summary = check_proto(&decoded).map_err(|e| format!("check_proto: {e}"))?;
    let streamed = check_proto_bytes(&bytes).map_err(|e| format!("check_proto_bytes: {e}"))?;
    if streamed != summary {
        return Err(format!("check_proto_bytes gave {streamed:?}, check_proto {summary:?}").into());
    }
    let instructions: usize = back.computations.iter().map(|c| c.instructions.len()).sum();
    if (summary.entry, summary.computations, summary.instructions)
        != (back.entry.index(), back.computations.len(), instructions)
        || summary.replica_count != back.config.replica_count.unwrap_or(0)
        || summary.num_partitions != back.config.num_partitions.unwrap_or(0)
    {
        return Err(format!("check_proto's {summary:?} disagrees with from_proto's module").into());
    }
    let (want, got) = (normalize(module), normalize(back));
    if want != got {
        let diff = similar::TextDiff::from_lines(
            &hlo_text::print_module(&want),
            &hlo_text::print_module(&got),
        )
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
    let module = hlo_text::parse_module(text).expect("corpus file parses");
    to_proto(&module).expect("corpus file converts")
}

/// What `check_proto` must give for a hostile proto.
#[derive(Clone, Copy)]
enum Check {
    /// The error `from_proto` gives, identical (every structural problem).
    Same,
    /// Nothing: an attribute problem only `from_proto` decodes.
    Accepts,
    /// Another error: `from_proto` reports an earlier attribute problem first.
    Other(&'static str),
}

type Mutation = (
    &'static str,
    fn(&mut HloModuleProtoWithConfig),
    &'static str,
    Check,
);

/// Each mutation of a valid proto, the exact error `from_proto` must give and what
/// `check_proto` must give.
const HOSTILE: &[Mutation] = &[
    (
        "unknown_opcode",
        |p| set_instr(p, 0, 0, |i| i.opcode = "frobnicate".into()),
        "region_0.1/reduce.4: unknown opcode \"frobnicate\"",
        Check::Same,
    ),
    (
        "dangling_operand",
        |p| set_instr(p, 0, 2, |i| i.operand_ids = vec![12345]),
        "region_0.1/gt.1: operand id 12345 is not an earlier instruction of this computation",
        Check::Same,
    ),
    (
        "missing_called_computation",
        |p| set_instr(p, 2, 1, |i| i.called_computation_ids = vec![99]),
        "main.3/jit__lambda__.3: called computation id 99 does not exist",
        Check::Same,
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
        Check::Same,
    ),
    (
        "bad_element_type",
        |p| set_instr(p, 0, 0, |i| i.shape.as_mut().unwrap().element_type = 999),
        "region_0.1/reduce.4: shape: unknown element type number 999",
        Check::Same,
    ),
    (
        "negative_dimension",
        |p| {
            set_instr(p, 1, 0, |i| {
                i.shape.as_mut().unwrap().dimensions = vec![-4, 20]
            })
        },
        "argmax.2/jit__lambda__.1: shape: negative dimension size -4",
        Check::Same,
    ),
    (
        "constant_value_count",
        |p| {
            set_instr(p, 1, 3, |i| {
                i.literal.as_mut().unwrap().f32s = vec![1.0, 2.0]
            })
        },
        "argmax.2/constant.3: literal: constant has 2 values for 1 elements",
        Check::Accepts,
    ),
    (
        "duplicate_parameter_number",
        |p| set_instr(p, 0, 1, |i| i.parameter_number = 0),
        "region_0.1/reduce.6: parameter number 0 used twice",
        Check::Same,
    ),
    (
        "missing_root",
        |p| p.hlo_module.as_mut().unwrap().computations[2].root_id = -7,
        "main.3/: root id -7 is not an instruction",
        Check::Same,
    ),
    (
        "missing_entry",
        |p| p.hlo_module.as_mut().unwrap().entry_computation_id = 42,
        "<module>/: entry computation id 42 (\"main.3\") does not exist",
        Check::Same,
    ),
    (
        "module_unset",
        |p| p.hlo_module = None,
        "<module>/: hlo_module is not set",
        Check::Same,
    ),
    (
        "triangular_solve_unknown_transpose",
        |p| {
            set_instr(p, 0, 2, |i| {
                i.opcode = "triangular-solve".into();
                i.triangular_solve_options = Some(proto::xla::TriangularSolveOptions {
                    transpose_a: 7,
                    ..Default::default()
                })
            })
        },
        "region_0.1/gt.1: triangular-solve transpose_a 7",
        Check::Accepts,
    ),
    (
        "compare_without_direction",
        |p| set_instr(p, 0, 2, |i| i.comparison_direction.clear()),
        "region_0.1/gt.1: compare has no comparison_direction",
        Check::Accepts,
    ),
    (
        "attribute_then_structural",
        |p| {
            set_instr(p, 1, 3, |i| {
                i.literal.as_mut().unwrap().f32s = vec![1.0, 2.0]
            });
            p.hlo_module.as_mut().unwrap().computations[2].root_id = -7;
        },
        "argmax.2/constant.3: literal: constant has 2 values for 1 elements",
        Check::Other("main.3/: root id -7 is not an instruction"),
    ),
    (
        "duplicate_instruction_name",
        |p| set_instr(p, 0, 1, |i| i.name = "reduce.4".into()),
        "region_0.1/reduce.4: duplicate instruction name \"reduce.4\"",
        Check::Same,
    ),
    (
        "shape_unset",
        |p| set_instr(p, 1, 1, |i| i.shape = None),
        "argmax.2/iota.2: shape is not set",
        Check::Same,
    ),
    (
        "layout_not_a_permutation",
        |p| {
            set_instr(p, 1, 0, |i| {
                i.shape.as_mut().unwrap().layout.as_mut().unwrap().minor_to_major = vec![0, 0]
            })
        },
        "argmax.2/jit__lambda__.1: shape: layout minor_to_major [0, 0] is not a permutation of rank 2",
        Check::Same,
    ),
    (
        "dynamic_dimension_count",
        |p| {
            set_instr(p, 1, 0, |i| {
                i.shape.as_mut().unwrap().is_dynamic_dimension = vec![true]
            })
        },
        "argmax.2/jit__lambda__.1: shape: is_dynamic_dimension has 1 entries for rank 2",
        Check::Same,
    ),
    (
        "computation_ids_not_unique",
        |p| p.hlo_module.as_mut().unwrap().computations[1].id = 0,
        "<module>/: computation ids are not unique",
        Check::Same,
    ),
    (
        "instruction_id_not_unique",
        |p| {
            let first = p.hlo_module.as_ref().unwrap().computations[0].instructions[0].id;
            set_instr(p, 0, 1, |i| i.id = first)
        },
        "region_0.1/reduce.6: instruction id 1 is not unique",
        Check::Same,
    ),
    (
        "parameter_number_gap",
        |p| set_instr(p, 0, 1, |i| i.parameter_number = 5),
        "region_0.1/: parameter numbers must be 0..4, found 3",
        Check::Same,
    ),
    (
        "negative_parameter_number",
        |p| set_instr(p, 0, 1, |i| i.parameter_number = -1),
        "region_0.1/: parameter numbers must be 0..4, found -1",
        Check::Same,
    ),
    (
        "call_arity",
        |p| set_instr(p, 2, 1, |i| i.called_computation_ids = vec![1, 0]),
        "main.3/jit__lambda__.3: call takes one called computation, got 2",
        Check::Same,
    ),
    (
        "while_arity",
        |p| set_instr(p, 2, 1, |i| i.opcode = "while".into()),
        "main.3/jit__lambda__.3: while takes 2 called computations, got 1",
        Check::Same,
    ),
    (
        "entry_name_mismatch",
        |p| p.hlo_module.as_mut().unwrap().entry_computation_name = "other".into(),
        "<module>/: entry computation id 2 (\"other\") does not exist",
        Check::Same,
    ),
    (
        "entry_layout_without_result",
        |p| {
            let c = p.config.as_mut().unwrap();
            c.entry_computation_layout.as_mut().unwrap().result = None;
        },
        "<module>/: entry_computation_layout: program shape has no result",
        Check::Same,
    ),
    // Issue 19, stage 1: the module's frontend attributes are read at either number, never both
    // (the config's propagation lists next to XLA's 23 and 24 are valid: `xla_config_trial`).
    (
        "frontend_attributes_at_18_and_19",
        |p| {
            let m = p.hlo_module.as_mut().unwrap();
            let attributes = proto::xla::FrontendAttributes {
                map: [("k".to_owned(), "v".to_owned())].into(),
            };
            m.frontend_attributes_legacy = Some(attributes.clone());
            m.frontend_attributes = Some(attributes);
        },
        "<module>/: hlo_module sets both frontend_attributes (19) and its legacy number 18; a module sets one",
        Check::Same,
    ),
];

/// A module with every field that moves to XLA's number (issue 19): the propagation lists, the
/// module's frontend attributes, `f4e2m1fn` / `f8e8m0fnu` shapes (a parameter, a tuple element,
/// the entry layout) and metadata with `deduplicated_name`.
const MOVING: &str = r#"HloModule moving, entry_computation_layout={(f4e2m1fn[4]{0}, f8e8m0fnu[2]{0})->(f4e2m1fn[4]{0}, f8e8m0fnu[2]{0})}, allow_spmd_sharding_propagation_to_parameters={true,false}, allow_spmd_sharding_propagation_to_output={true}, frontend_attributes={xla.sdy.meshes="{}"}

ENTRY main {
  a = f4e2m1fn[4]{0} parameter(0), metadata={op_name="a" deduplicated_name="true"}
  b = f8e8m0fnu[2]{0} parameter(1)
  ROOT t = (f4e2m1fn[4]{0}, f8e8m0fnu[2]{0}) tuple(a, b)
}
"#;

/// Element type numbers of every instruction shape (tuple elements included) and of the entry
/// layout, in order.
fn element_numbers(p: &HloModuleProtoWithConfig) -> Vec<i32> {
    fn walk(s: &proto::xla::ShapeProto, out: &mut Vec<i32>) {
        out.push(s.element_type);
        for t in &s.tuple_shapes {
            walk(t, out);
        }
    }
    let mut out = Vec::new();
    for c in &p.hlo_module.as_ref().unwrap().computations {
        for i in &c.instructions {
            walk(i.shape.as_ref().unwrap(), &mut out);
        }
    }
    let layout = p.config.as_ref().unwrap().entry_computation_layout.as_ref();
    for s in layout
        .iter()
        .flat_map(|l| l.parameters.iter().chain(&l.result))
    {
        walk(s, &mut out);
    }
    out
}

/// Each moving field: by default only the legacy number is written, behind its option only XLA's;
/// either reads back as the same module (and checks the same); `deduplicated_name` is never
/// written, and reading it from an older artifact still works, so a reader loses nothing it used.
fn moves_trial() -> Trial {
    use hlo::{to_proto_with, WriteOptions};
    Trial::test(
        "convert::moves::legacy_by_default_xla_behind_the_options",
        || {
            let module = hlo_text::parse_module(MOVING).map_err(|e| e.to_string())?;
            let legacy = to_proto(&module).map_err(|e| e.to_string())?;
            let mut options = WriteOptions::default();
            options.spmd_propagation_at_xla_numbers = true;
            options.frontend_attributes_at_19 = true;
            options.narrow_floats_at_xla_numbers = true;
            let xla = to_proto_with(&module, &options).map_err(|e| e.to_string())?;
            let (lc, xc) = (
                legacy.config.as_ref().unwrap(),
                xla.config.as_ref().unwrap(),
            );
            let (lm, xm) = (
                legacy.hlo_module.as_ref().unwrap(),
                xla.hlo_module.as_ref().unwrap(),
            );
            let checks = [
                (
                    lc.allow_spmd_sharding_propagation_to_parameters_legacy == [true, false]
                        && lc.allow_spmd_sharding_propagation_to_output_legacy == [true]
                        && lc.allow_spmd_sharding_propagation_to_parameters.is_empty()
                        && lc.allow_spmd_sharding_propagation_to_output.is_empty(),
                    "default: the propagation lists at 23/24 only",
                ),
                (
                    xc.allow_spmd_sharding_propagation_to_parameters == [true, false]
                        && xc.allow_spmd_sharding_propagation_to_output == [true]
                        && xc
                            .allow_spmd_sharding_propagation_to_parameters_legacy
                            .is_empty()
                        && xc
                            .allow_spmd_sharding_propagation_to_output_legacy
                            .is_empty(),
                    "options: the propagation lists at 33/27 only",
                ),
                (
                    lm.frontend_attributes_legacy.is_some() && lm.frontend_attributes.is_none(),
                    "default: frontend attributes at 18 only",
                ),
                (
                    xm.frontend_attributes.is_some() && xm.frontend_attributes_legacy.is_none(),
                    "options: frontend attributes at 19 only",
                ),
                (
                    element_numbers(&legacy) == [30, 31, 13, 30, 31, 30, 31, 13, 30, 31],
                    "default: F4E2M1FN 30, F8E8M0FNU 31",
                ),
                (
                    element_numbers(&xla) == [32, 33, 13, 32, 33, 32, 33, 13, 32, 33],
                    "options: F4E2M1FN 32, F8E8M0FNU 33",
                ),
            ];
            if let Some((_, what)) = checks.iter().find(|(ok, _)| !ok) {
                return Err(format!("{what}: {legacy:?} / {xla:?}").into());
            }
            // Not written, by either: XLA's 12 is a string, this schema's a bool.
            let written = |p: &HloModuleProtoWithConfig| {
                p.hlo_module.as_ref().unwrap().computations[0].instructions[0]
                    .metadata
                    .as_ref()
                    .map(|m| (m.op_name.clone(), m.deduplicated_name))
            };
            for p in [&legacy, &xla] {
                if written(p) != Some(("a".into(), false)) {
                    return Err(format!("metadata written as {:?}", written(p)).into());
                }
            }
            // Both forms read back as one module, and check alike.
            let strip = |mut m: HloModule| {
                for i in &mut m.computations[0].instructions {
                    if let Some(md) = &mut i.metadata {
                        md.deduplicated_name = None;
                    }
                }
                normalize(m)
            };
            let want = strip(module.clone());
            for p in [&legacy, &xla] {
                let back = from_proto(p).map_err(|e| e.to_string())?;
                if normalize(back) != want {
                    return Err(format!("{p:?} reads back as another module").into());
                }
                let checked = check_proto(p).map_err(|e| e.to_string())?;
                let streamed = check_proto_bytes(&p.encode_to_vec()).map_err(|e| e.to_string())?;
                if checked != streamed {
                    return Err(format!("check_proto {checked:?}, streamed {streamed:?}").into());
                }
            }
            // XLA's own form: attributes at 19 and an empty 18 (its `buffer_donor`, no donors) is
            // valid and reads the attributes at 19.
            let mut xla_form = xla.clone();
            xla_form
                .hlo_module
                .as_mut()
                .unwrap()
                .frontend_attributes_legacy = Some(Default::default());
            let back = from_proto(&xla_form).map_err(|e| e.to_string())?;
            check_proto_bytes(&xla_form.encode_to_vec()).map_err(|e| e.to_string())?;
            if normalize(back) != want {
                return Err("attributes at 19 with an empty 18 read as another module".into());
            }
            // An artifact written before 2026-12-01 with the bool still reads it.
            let mut old = legacy.clone();
            old.hlo_module.as_mut().unwrap().computations[0].instructions[0]
                .metadata
                .as_mut()
                .unwrap()
                .deduplicated_name = true;
            let back = from_proto(&old).map_err(|e| e.to_string())?;
            let md = back.computations[0].instructions[0].metadata.as_ref();
            if md.and_then(|m| m.deduplicated_name.as_deref()) != Some("true") {
                return Err(format!("the legacy bool was not read: {md:?}").into());
            }
            Ok(())
        },
    )
}

/// XLA's encoding of `HloModuleConfigProto` 23 (`repeated uint64 memory_space_assignment_config`,
/// packed) and 24 (`repeated BoolList phase_ordering_config`, `BoolList { repeated bool vals = 1 }`,
/// packed): values that exercise every varint length, an empty BoolList, one long enough for a
/// two-byte length and one with its bools unpacked (an older writer's form, also valid).
fn xla_23_and_24() -> Vec<u8> {
    use proto::prost::encoding::{encode_key, encode_varint, WireType};
    let mut packed = Vec::new();
    for v in [0, 1, 127, 128, 300, 1 << 35, u64::MAX] {
        encode_varint(v, &mut packed);
    }
    let mut out = Vec::new();
    encode_key(23, WireType::LengthDelimited, &mut out);
    encode_varint(packed.len() as u64, &mut out);
    out.extend(&packed);
    let bool_list = |vals: &[bool], packed: bool| {
        let mut m = Vec::new();
        if packed && !vals.is_empty() {
            encode_key(1, WireType::LengthDelimited, &mut m);
            encode_varint(vals.len() as u64, &mut m);
            m.extend(vals.iter().map(|&v| u8::from(v)));
        } else if !packed {
            for &v in vals {
                encode_key(1, WireType::Varint, &mut m);
                m.push(u8::from(v));
            }
        }
        m
    };
    let long: Vec<bool> = (0..200).map(|i| i % 3 == 0).collect();
    for m in [
        bool_list(&[true, false, true], true),
        bool_list(&[], true),
        bool_list(&long, true),
        bool_list(&[false, true], false),
    ] {
        encode_key(24, WireType::LengthDelimited, &mut out);
        encode_varint(m.len() as u64, &mut out);
        out.extend(m);
    }
    out
}

/// The encoding of `p` with `extra` appended to its config's encoding (protobuf merges the
/// fields of a message that occurs twice, so this is `p` plus the extra fields).
fn with_config_bytes(p: &HloModuleProtoWithConfig, extra: &[u8]) -> Vec<u8> {
    use proto::prost::encoding::{encode_key, encode_varint, WireType};
    let mut config = p
        .config
        .as_ref()
        .map(Message::encode_to_vec)
        .unwrap_or_default();
    config.extend(extra);
    let mut out = HloModuleProtoWithConfig {
        hlo_module: p.hlo_module.clone(),
        config: None,
    }
    .encode_to_vec();
    encode_key(2, WireType::LengthDelimited, &mut out);
    encode_varint(config.len() as u64, &mut out);
    out.extend(config);
    out
}

/// A config in XLA's schema (its propagation lists at 33/27) may carry XLA's own fields at 23 and
/// 24: they decode (into the legacy `repeated bool` fields), are ignored, and the module checks
/// and reads as without them; a config with no 33 or 27 still reads the legacy lists at 23/24.
fn xla_config_trial() -> Trial {
    use hlo::{to_proto_with, WriteOptions};
    Trial::test("convert::moves::xla_23_and_24_next_to_33_and_27", || {
        let module = hlo_text::parse_module(MOVING).map_err(|e| e.to_string())?;
        let mut options = WriteOptions::default();
        options.spmd_propagation_at_xla_numbers = true;
        let xla = to_proto_with(&module, &options).map_err(|e| e.to_string())?;
        let want = normalize(from_proto(&xla).map_err(|e| e.to_string())?);
        let want_summary = check_proto(&xla).map_err(|e| e.to_string())?;
        // Only 33 set (27 empty) is XLA's schema too: 24 is then not the output list.
        let mut only_33 = xla.clone();
        only_33
            .config
            .as_mut()
            .unwrap()
            .allow_spmd_sharding_propagation_to_output
            .clear();
        let mut want_only_33 = want.clone();
        want_only_33
            .config
            .allow_spmd_sharding_propagation_to_output = None;
        for (p, want) in [(&xla, &want), (&only_33, &want_only_33)] {
            let bytes = with_config_bytes(p, &xla_23_and_24());
            let decoded = HloModuleProtoWithConfig::decode(bytes.as_slice())
                .map_err(|e| format!("XLA's 23/24 do not decode: {e}"))?;
            let c = decoded.config.as_ref().unwrap();
            // The data landed in the legacy fields: a bool per varint (7 uint64s; the BoolLists'
            // tags, lengths and bools, 5 + 0 + 202 + 4).
            let got = (
                c.allow_spmd_sharding_propagation_to_parameters_legacy.len(),
                c.allow_spmd_sharding_propagation_to_output_legacy.len(),
            );
            if got != (7, 211) {
                return Err(format!("23/24 decoded as {got:?} bools").into());
            }
            let checked = check_proto(&decoded).map_err(|e| e.to_string())?;
            let streamed = check_proto_bytes(&bytes).map_err(|e| e.to_string())?;
            if (checked, streamed) != (want_summary, want_summary) {
                return Err(format!("checked {checked:?}, streamed {streamed:?}").into());
            }
            let back = normalize(from_proto(&decoded).map_err(|e| e.to_string())?);
            if &back != want {
                return Err(format!("reads as another module: {:?}", back.config).into());
            }
        }
        // The legacy form: no 33 or 27, the lists at 23/24.
        let legacy = to_proto(&module).map_err(|e| e.to_string())?;
        let back = from_proto(&legacy).map_err(|e| e.to_string())?;
        let lists = (
            back.config.allow_spmd_sharding_propagation_to_parameters,
            back.config.allow_spmd_sharding_propagation_to_output,
        );
        if lists != (Some(vec![true, false]), Some(vec![true])) {
            return Err(format!("the legacy lists read as {lists:?}").into());
        }
        Ok(())
    })
}

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
        .map(|&(name, mutate, want, check)| {
            Trial::test(format!("convert::hostile::{name}"), move || {
                let mut p = base_proto();
                mutate(&mut p);
                let full = from_proto(&p).map(|_| ());
                match &full {
                    Ok(()) => return Err(format!("accepted; expected error `{want}`").into()),
                    Err(e) if e.to_string() == want => {}
                    Err(e) => return Err(format!("error `{e}`, expected `{want}`").into()),
                }
                let checked = check_proto(&p).map(|_| ());
                let agrees = match check {
                    Check::Same => checked == full,
                    Check::Accepts => checked.is_ok(),
                    Check::Other(other) => {
                        checked.as_ref().err().map(ToString::to_string).as_deref() == Some(other)
                    }
                };
                if !agrees {
                    return Err(format!("check_proto gave {checked:?}, from_proto {full:?}").into());
                }
                // Streaming the encoding must give check_proto's result exactly.
                let streamed = check_proto_bytes(&p.encode_to_vec()).map(|_| ());
                if streamed != checked {
                    return Err(format!(
                        "check_proto_bytes gave {streamed:?}, check_proto {checked:?}"
                    )
                    .into());
                }
                Ok(())
            })
        })
        .collect()
}

/// `check_proto_bytes` on encodings prost would not build as one message: bytes that are not
/// protobuf fail naming the part, and a message split over repeated occurrences of its fields
/// (which protobuf merges) checks like the merged message.
fn wire_trial() -> Trial {
    Trial::test("convert::wire::malformed_and_merged", || {
        let e = check_proto_bytes(&[0x0a, 0xff]).unwrap_err().to_string();
        if !e.contains("hlo_module_with_config is not valid protobuf") {
            return Err(format!("unexpected error: {e}").into());
        }
        let p = base_proto();
        let whole = check_proto(&p).map_err(|e| e.to_string())?;
        // The same module as two occurrences of `hlo_module`: the first with the computations,
        // the second with the entry id (merged: the last scalar wins, computations append).
        let mut first = p.clone();
        let mut second = HloModuleProtoWithConfig::default();
        let module = first.hlo_module.as_mut().ok_or("no module")?;
        second.hlo_module = Some(proto::xla::HloModuleProto {
            entry_computation_id: module.entry_computation_id,
            ..Default::default()
        });
        module.entry_computation_id = -1;
        let mut bytes = first.encode_to_vec();
        bytes.extend(second.encode_to_vec());
        let merged = HloModuleProtoWithConfig::decode(bytes.as_slice())?;
        let streamed = check_proto_bytes(&bytes).map_err(|e| e.to_string())?;
        if streamed != whole || check_proto(&merged).map_err(|e| e.to_string())? != whole {
            return Err(
                format!("split encoding checked as {streamed:?}, whole as {whole:?}").into(),
            );
        }
        Ok(())
    })
}

/// `check_shape` must agree with `shape_from_proto` on every shape: valid or not, the same
/// message (layouts past rank 64 take the other permutation check).
fn shape_check_trial() -> Trial {
    use proto::xla::{LayoutProto, PrimitiveType as P, ShapeProto};
    Trial::test("convert::shapes::check_shape_agrees", || {
        let array = |dims: Vec<i64>, minor_to_major: Option<Vec<i64>>| ShapeProto {
            element_type: P::F32 as i32,
            dimensions: dims,
            layout: minor_to_major.map(|m| LayoutProto {
                minor_to_major: m,
                ..Default::default()
            }),
            ..Default::default()
        };
        let tuple = |elems: Vec<ShapeProto>| ShapeProto {
            element_type: P::Tuple as i32,
            tuple_shapes: elems,
            ..Default::default()
        };
        let mut nested = array(vec![2], None);
        for _ in 0..66 {
            nested = tuple(vec![nested]);
        }
        let wide: Vec<i64> = (0..70).collect();
        let mut wide_dup = wide.clone();
        wide_dup[69] = 3;
        let mut wide_out = wide.clone();
        wide_out[0] = 70;
        let cases = vec![
            array(vec![2, 3], None),
            array(vec![2, 3], Some(vec![])),
            array(vec![2, 3], Some(vec![1, 0])),
            array(vec![2, 3], Some(vec![0, 0])),
            array(vec![2, 3], Some(vec![0])),
            array(vec![2, 3], Some(vec![0, 1, 2])),
            array(vec![2, 3], Some(vec![2, 0])),
            array(vec![2, 3], Some(vec![-1, 0])),
            array(vec![-4, 3], None),
            array(vec![i64::MIN, 3], None),
            array(vec![1; 70], Some(wide.iter().rev().copied().collect())),
            array(vec![1; 70], Some(wide_dup)),
            array(vec![1; 70], Some(wide_out)),
            ShapeProto {
                is_dynamic_dimension: vec![true],
                ..array(vec![2, 3], None)
            },
            ShapeProto {
                is_dynamic_dimension: vec![true, false],
                ..array(vec![2, 3], None)
            },
            ShapeProto::default(),
            ShapeProto {
                element_type: 999,
                ..Default::default()
            },
            ShapeProto {
                element_type: P::Token as i32,
                ..Default::default()
            },
            tuple(vec![array(vec![1], None), ShapeProto::default()]),
            nested,
        ];
        for (i, s) in cases.iter().enumerate() {
            let full = hlo::shape_from_proto(s).map(|_| ());
            let checked = hlo::check_shape(s);
            if full != checked {
                return Err(format!(
                    "case {i}: check_shape {checked:?}, shape_from_proto {full:?}"
                )
                .into());
            }
        }
        Ok(())
    })
}

/// 8-bit float constants (`LiteralProto.f8e4m3fns` / `f8e5m2s`, one byte per value) survive
/// the proto as the values the type holds: rounded, NaN past `f8e4m3fn`'s range, infinity kept.
fn f8_constants_trial() -> Trial {
    Trial::test("convert::f8_constants", || {
        let text = "HloModule m\n\nENTRY e {\n  a = f8e4m3fn[3] constant({0.1, -448, 1000})\n  \
                    b = f8e5m2[2] constant({inf, 0.3})\n  \
                    ROOT t = (f8e4m3fn[3], f8e5m2[2]) tuple(a, b)\n}\n";
        round_trip_text(text, Path::new("f8_constants.hlo"))?;
        let module = hlo_text::parse_module(text).map_err(|e| e.to_string())?;
        let proto = to_proto(&module).map_err(|e| e.to_string())?;
        let back = from_proto(&proto).map_err(|e| e.to_string())?;
        let values: Vec<f64> = back.computations[0]
            .instructions
            .iter()
            .filter_map(|i| match &i.attrs.literal {
                Some(ConstantLiteral::Array(a)) => Some(a.values.iter().map(|v| v.as_f64())),
                _ => None,
            })
            .flatten()
            .collect();
        let want = [0.1015625, -448.0, f64::NAN, f64::INFINITY, 0.3125];
        let same = values.len() == want.len()
            && values
                .iter()
                .zip(want)
                .all(|(a, b)| a == &b || (a.is_nan() && b.is_nan()));
        if !same {
            return Err(format!("f8 constants read back as {values:?}, not {want:?}").into());
        }
        Ok(())
    })
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
        .chain([
            f8_constants_trial(),
            shape_check_trial(),
            wire_trial(),
            moves_trial(),
            xla_config_trial(),
        ])
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
