//! The structural checks shared by [`check_proto`] and [`super::from_proto`]: one walk over
//! the module (decoded or wire form), ids, opcodes, shapes, called computations, parameter
//! numbers and the call graph.

use std::collections::{HashMap, HashSet};

use proto::xla as px;

use crate::ir::*;

use super::error::{ProtoError, ShapeProtoError};
use super::shapes::{check_shape, program_shape_with};
use super::wire::{malformed, Wire};
use super::{invalid, ConvertError};

/// Which IR attributes an instruction's called computations go to (XLA's text format names them
/// per opcode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CalledRoles {
    /// No called computations.
    None,
    /// `while`: condition, body.
    ConditionBody,
    /// A pred `conditional`: true, false.
    TrueFalse,
    /// An index `conditional`: the branches.
    Branches,
    /// `select-and-scatter`: select, scatter.
    SelectScatter,
    /// `fusion`, `async-start`: `calls`.
    Calls,
    /// A single `to_apply`.
    ToApply,
    /// A `custom-call` with other than one called computation.
    CalledComputations,
}

/// The arity and role rules of called computations: how `called` of them map to attributes of
/// `opcode`, or why they cannot.
pub(super) fn called_roles(
    opcode: Opcode,
    called: usize,
    operand0_is_pred: bool,
) -> Result<CalledRoles, ProtoError> {
    use Opcode::*;
    Ok(match opcode {
        _ if called == 0 => CalledRoles::None,
        While if called == 2 => CalledRoles::ConditionBody,
        While => return Err(ProtoError::WhileCallees(called)),
        Conditional if !operand0_is_pred => CalledRoles::Branches,
        Conditional if called == 2 => CalledRoles::TrueFalse,
        Conditional => return Err(ProtoError::PredBranches(called)),
        SelectAndScatter if called == 2 => CalledRoles::SelectScatter,
        SelectAndScatter => return Err(ProtoError::SelectAndScatterCallees(called)),
        Fusion | AsyncStart => CalledRoles::Calls,
        CustomCall if called != 1 => CalledRoles::CalledComputations,
        _ if called == 1 => CalledRoles::ToApply,
        _ => {
            return Err(ProtoError::OneCallee {
                opcode: opcode.name(),
                got: called,
            })
        }
    })
}

/// What [`check_proto`] learns about a structurally valid module: the module-level facts a
/// runtime needs, without the IR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProtoSummary {
    /// `config.replica_count` as in the proto (0: unset).
    pub replica_count: i64,
    /// `config.num_partitions` as in the proto (0: unset).
    pub num_partitions: i64,
    /// Index of the entry computation in `hlo_module.computations`.
    pub entry: usize,
    /// Number of computations.
    pub computations: usize,
    /// Number of instructions over all computations.
    pub instructions: usize,
}

/// Checks the structure of an `HloModuleProtoWithConfig` (from an artifact: untrusted) without
/// building any IR, with exactly the errors `from_proto` gives for the same problems (one
/// implementation: `from_proto` runs the same walk and only adds to it).
///
/// Checked here, in this order (the first problem is the error):
/// - `hlo_module` is set; the module's frontend attributes are not set at both 18 and 19
///   ([`ConvertError::BothNumbers`]; set means non-empty; the config's propagation lists are
///   read at XLA's 33/27 or else the legacy 23/24, never refused: `spmd_propagation_lists`);
///   computation ids are unique;
/// - per computation, per instruction in order: its name is not a duplicate; its opcode is known
///   ([`ConvertError::UnknownOpcode`]); its shape is set and valid ([`check_shape`]); operand ids
///   name earlier instructions of the computation; called computation ids exist, and their
///   number fits the opcode (`while` 2, pred `conditional` 2, `select-and-scatter` 2, most others
///   1); parameter numbers are not reused; the instruction id is unique;
/// - per computation: parameter numbers are exactly `0..n`; the root id is an instruction;
/// - the call graph is acyclic (the error names the cycle);
/// - the entry computation exists (and has `entry_computation_name`, when set);
/// - `config.entry_computation_layout`, when set, has valid shapes and a result.
///
/// Only `from_proto` decodes instruction attributes (`fill_attrs`): literals of constants
/// (value counts against the shape), comparison directions and types, fusion kinds, precision,
/// custom-call API versions, backend config UTF-8, FFT types, RNG distributions, required
/// attributes (`constant` without a literal, `compare` without a direction, `iota` without one
/// dimension). It also converts metadata and stack frames. A runtime needs none of that: it
/// executes the artifact's thunks, never the HLO; the embedded module is checked so that an
/// opcode unknown to this build, or a corrupt module, fails the load. A proto with both an
/// attribute problem and a later structural one gives `from_proto` the attribute error (it
/// comes first in program order) and `check_proto` the structural one.
pub fn check_proto(p: &px::HloModuleProtoWithConfig) -> Result<ProtoSummary, ConvertError> {
    walk_proto(&decoded(p)?, &mut CheckOnly).map(|w| w.summary)
}

/// [`check_proto`] on the encoding of an `HloModuleProtoWithConfig`, without decoding it whole:
/// one computation header and one instruction at a time, so memory stays near the size of the
/// largest instruction however large the module (prost's struct for one instruction is about
/// 2.5 KB; a whole decoded module is many times its encoding). Same checks, same errors, and
/// protobuf's semantics (a repeated singular field: the last wins; a repeated message field:
/// merged), plus an error naming the part that is not valid protobuf.
pub fn check_proto_bytes(bytes: &[u8]) -> Result<ProtoSummary, ConvertError> {
    use proto::decode_except;
    use proto::fields::{MODULE_WITH_CONFIG_CONFIG, MODULE_WITH_CONFIG_HLO_MODULE};
    let split = decode_except::<px::HloModuleProtoWithConfig>(
        bytes,
        usize::MAX,
        &[MODULE_WITH_CONFIG_HLO_MODULE, MODULE_WITH_CONFIG_CONFIG],
    )
    .map_err(|e| malformed("hlo_module_with_config", e))?;
    let module = split
        .payload(MODULE_WITH_CONFIG_HLO_MODULE)
        .ok_or_else(|| invalid("<module>", "", "hlo_module is not set"))?;
    let config = split
        .payload(MODULE_WITH_CONFIG_CONFIG)
        .map(|c| <px::HloModuleConfigProto as proto::prost::Message>::decode(c.as_ref()))
        .transpose()
        .map_err(|e| malformed("config", e))?;
    walk_proto(&Wire::new(&module, config)?, &mut CheckOnly).map(|w| w.summary)
}

/// The decoded source of a module proto (`hlo_module` must be set).
pub(super) fn decoded(p: &px::HloModuleProtoWithConfig) -> Result<Decoded<'_>, ConvertError> {
    let module = p
        .hlo_module
        .as_ref()
        .ok_or_else(|| invalid("<module>", "", "hlo_module is not set"))?;
    Ok(Decoded {
        module,
        config: p.config.as_ref(),
    })
}

/// An instruction that passed its structural checks (all but the parameter-number and id
/// checks, which follow the attribute checks as they always have), as the walk hands it on.
pub(super) struct Checked<'a> {
    pub(super) proto: &'a px::HloInstructionProto,
    pub(super) opcode: Opcode,
    pub(super) roles: CalledRoles,
    /// Operands, as indices into the computation's instructions.
    pub(super) operands: &'a [u32],
    /// Called computations, as indices into the module's computations.
    pub(super) called: &'a [usize],
}

/// What [`walk_proto`] does with what it has checked: nothing ([`check_proto`]) or build the IR
/// ([`from_proto`]).
pub(super) trait Sink {
    type Shape;
    /// Checks (and, building, converts) a shape.
    fn shape(&mut self, p: &px::ShapeProto) -> Result<Self::Shape, ShapeProtoError>;
    /// An instruction whose structure is valid; an error is the instruction's.
    fn instruction(&mut self, i: Checked<'_>, shape: Self::Shape) -> Result<(), ProtoError>;
    /// The end of a valid computation; `root` indexes its instructions.
    fn computation(&mut self, head: &CompHead<'_>, root: u32);
}

pub(super) struct CheckOnly;

impl Sink for CheckOnly {
    type Shape = ();
    fn shape(&mut self, p: &px::ShapeProto) -> Result<(), ShapeProtoError> {
        check_shape(p)
    }
    fn instruction(&mut self, _: Checked<'_>, _: ()) -> Result<(), ProtoError> {
        Ok(())
    }
    fn computation(&mut self, _: &CompHead<'_>, _: u32) {}
}

/// The entry computation layout's parameter and result shapes, as the sink made them.
pub(super) type EntryLayout<T> = Option<(Vec<T>, T)>;

/// What a successful [`walk_proto`] returns.
pub(super) struct Walked<T> {
    pub(super) summary: ProtoSummary,
    pub(super) entry_layout: EntryLayout<T>,
}

/// A computation as the walk needs it besides its instructions.
pub(super) struct CompHead<'p> {
    pub(super) id: i64,
    pub(super) name: &'p str,
    pub(super) root_id: i64,
    pub(super) execution_thread: &'p str,
}

/// Calls back with each instruction of one computation: its name and its proto.
pub(super) type Visit<'v, 'p> =
    dyn FnMut(&'p str, &px::HloInstructionProto) -> Result<(), ConvertError> + 'v;

/// Where [`walk_proto`] reads a module from: decoded structs ([`Decoded`]) or its wire bytes,
/// one instruction decoded at a time ([`Wire`]).
pub(super) trait Source<'p> {
    /// Every computation's header, in order.
    fn heads(&self) -> Result<Vec<CompHead<'p>>, ConvertError>;
    /// Visits the instructions of computation `index` in order.
    fn instructions(&self, index: usize, visit: &mut Visit<'_, 'p>) -> Result<(), ConvertError>;
    /// `entry_computation_id` and `entry_computation_name`.
    fn entry(&self) -> (i64, &str);
    /// The module config, when set.
    fn config(&self) -> Option<&px::HloModuleConfigProto>;
    /// Whether the module carries frontend attributes (a non-empty map) at the legacy 18 and at
    /// XLA's 19. Non-empty, not present: XLA's own artifacts set 19 and an empty 18 (XLA's
    /// `buffer_donor` with no donors, which decodes here as an empty map), and they are valid.
    fn frontend_attributes_set(&self) -> (bool, bool);
}

/// [`Source::frontend_attributes_set`] of the two fields.
pub(super) fn attributes_set(
    legacy: Option<&px::FrontendAttributes>,
    xla: Option<&px::FrontendAttributes>,
) -> (bool, bool) {
    let set = |f: Option<&px::FrontendAttributes>| f.is_some_and(|f| !f.map.is_empty());
    (set(legacy), set(xla))
}

/// Refuses a module that sets its frontend attributes at both numbers (`super::WriteOptions`):
/// every writer sets one, and a reader taking either could not say which one is meant.
///
/// The config's propagation lists are not checked here: a config in XLA's schema (see
/// [`spmd_propagation_lists`]) may carry data at 23 and 24 as well, which is then XLA's
/// `memory_space_assignment_config` and `phase_ordering_config`, not the legacy lists.
fn check_moved_fields<'p>(src: &impl Source<'p>) -> Result<(), ConvertError> {
    if src.frontend_attributes_set() == (true, true) {
        return Err(ConvertError::BothNumbers {
            message: "hlo_module",
            field: "frontend_attributes",
            number: 19,
            legacy: 18,
        });
    }
    Ok(())
}

/// The config's `allow_spmd_sharding_propagation_to_parameters` and `_output` lists, from XLA's
/// numbers 33 and 27 or the legacy 23 and 24 (empty: unset).
///
/// A config that sets either of 33 and 27 was written in XLA's schema (no writer of this project
/// writes a legacy list next to XLA's numbers: `to_proto_with` writes one pair), so both lists are
/// read there and whatever 23 and 24 hold is XLA's `memory_space_assignment_config` (repeated
/// uint64) and `phase_ordering_config` (repeated BoolList), which mean nothing to this reader and
/// are ignored. Only a config with neither 33 nor 27 carries the legacy lists at 23 and 24. (One
/// that XLA wrote with both of its lists empty and a non-empty 23 or 24 would be misread as
/// legacy lists; XLA writes its lists whenever it writes a config, `{false}` by default.) XLA's
/// data at 23 and 24 always decodes into the legacy `repeated bool` fields: a packed uint64 is a
/// run of complete varints, and so is a BoolList's encoding (one-byte tags, a length varint,
/// one-byte bools), each read as a bool.
/// Can be removed in June 2027 (6 months backward compatibility window), with the legacy fields.
pub(super) fn spmd_propagation_lists(c: &px::HloModuleConfigProto) -> (&[bool], &[bool]) {
    let (parameters, output) = (
        &c.allow_spmd_sharding_propagation_to_parameters,
        &c.allow_spmd_sharding_propagation_to_output,
    );
    if parameters.is_empty() && output.is_empty() {
        (
            &c.allow_spmd_sharding_propagation_to_parameters_legacy,
            &c.allow_spmd_sharding_propagation_to_output_legacy,
        )
    } else {
        (parameters, output)
    }
}

/// A decoded `HloModuleProtoWithConfig` (whose `hlo_module` is set).
pub(super) struct Decoded<'p> {
    pub(super) module: &'p px::HloModuleProto,
    pub(super) config: Option<&'p px::HloModuleConfigProto>,
}

impl<'p> Source<'p> for Decoded<'p> {
    fn heads(&self) -> Result<Vec<CompHead<'p>>, ConvertError> {
        Ok(self
            .module
            .computations
            .iter()
            .map(|c| CompHead {
                id: c.id,
                name: &c.name,
                root_id: c.root_id,
                execution_thread: &c.execution_thread,
            })
            .collect())
    }
    fn instructions(&self, index: usize, visit: &mut Visit<'_, 'p>) -> Result<(), ConvertError> {
        for ip in self
            .module
            .computations
            .get(index)
            .map_or(&[][..], |c| &c.instructions)
        {
            visit(&ip.name, ip)?;
        }
        Ok(())
    }
    fn entry(&self) -> (i64, &str) {
        (
            self.module.entry_computation_id,
            &self.module.entry_computation_name,
        )
    }
    fn config(&self) -> Option<&px::HloModuleConfigProto> {
        self.config
    }
    fn frontend_attributes_set(&self) -> (bool, bool) {
        attributes_set(
            self.module.frontend_attributes_legacy.as_ref(),
            self.module.frontend_attributes.as_ref(),
        )
    }
}

/// The structural checks of [`check_proto`], reading the module from `src` and feeding `sink`
/// as it goes. Allocates a handful of maps, reused across computations, and nothing per
/// instruction on the success path.
pub(super) fn walk_proto<'p, S: Sink>(
    src: &impl Source<'p>,
    sink: &mut S,
) -> Result<Walked<S::Shape>, ConvertError> {
    const M: &str = "<module>";
    check_moved_fields(src)?;
    let heads = src.heads()?;
    let mut comp_index: HashMap<i64, usize> = HashMap::with_capacity(heads.len());
    for (i, c) in heads.iter().enumerate() {
        if comp_index.insert(c.id, i).is_some() {
            return Err(invalid(M, "", "computation ids are not unique"));
        }
    }
    // Per computation, cleared and reused: names, id -> index, parameter numbers, operands,
    // whether each instruction is a pred.
    let mut names: HashSet<&'p str> = HashSet::new();
    let mut local: HashMap<i64, u32> = HashMap::new();
    let mut params: HashSet<i64> = HashSet::new();
    let mut operands: Vec<u32> = Vec::new();
    let mut is_pred: Vec<bool> = Vec::new();
    // The call graph: computation i calls callees[ends[i - 1]..ends[i]].
    let mut callees: Vec<usize> = Vec::new();
    let mut ends: Vec<usize> = Vec::with_capacity(heads.len());
    let mut instructions = 0;
    for (ci, head) in heads.iter().enumerate() {
        let cname = head.name;
        names.clear();
        local.clear();
        params.clear();
        is_pred.clear();
        src.instructions(ci, &mut |iname: &'p str, ip: &px::HloInstructionProto| {
            let index = is_pred.len();
            let err = |m: String| invalid(cname, iname, m);
            if !names.insert(iname) {
                return Err(err(format!("duplicate instruction name \"{iname}\"")));
            }
            let opcode =
                Opcode::from_name(&ip.opcode).ok_or_else(|| ConvertError::UnknownOpcode {
                    computation: cname.to_owned(),
                    instruction: iname.to_owned(),
                    opcode: ip.opcode.clone(),
                })?;
            let shape_proto = ip
                .shape
                .as_ref()
                .ok_or_else(|| err("shape is not set".into()))?;
            let shape = sink
                .shape(shape_proto)
                .map_err(|m| err(format!("shape: {m}")))?;
            operands.clear();
            for o in &ip.operand_ids {
                operands.push(local.get(o).copied().ok_or_else(|| {
                    err(format!(
                        "operand id {o} is not an earlier instruction of this computation"
                    ))
                })?);
            }
            let first_called = callees.len();
            for c in &ip.called_computation_ids {
                callees.push(
                    comp_index
                        .get(c)
                        .copied()
                        .ok_or_else(|| err(format!("called computation id {c} does not exist")))?,
                );
            }
            let called = callees.get(first_called..).unwrap_or_default();
            let operand0_is_pred = operands
                .first()
                .and_then(|&o| is_pred.get(o as usize))
                .copied()
                .unwrap_or(false);
            let roles = called_roles(opcode, called.len(), operand0_is_pred)
                .map_err(|e| err(e.to_string()))?;
            let checked = Checked {
                proto: ip,
                opcode,
                roles,
                operands: &operands,
                called,
            };
            sink.instruction(checked, shape)
                .map_err(|e| err(e.to_string()))?;
            if opcode == Opcode::Parameter && !params.insert(ip.parameter_number) {
                return Err(err(format!(
                    "parameter number {} used twice",
                    ip.parameter_number
                )));
            }
            if local.insert(ip.id, index as u32).is_some() {
                return Err(err(format!("instruction id {} is not unique", ip.id)));
            }
            is_pred.push(shape_proto.element_type == px::PrimitiveType::Pred as i32);
            Ok(())
        })?;
        check_parameter_numbers(&params).map_err(|m| invalid(cname, "", m.to_string()))?;
        let root = local.get(&head.root_id).copied().ok_or_else(|| {
            invalid(
                cname,
                "",
                format!("root id {} is not an instruction", head.root_id),
            )
        })?;
        sink.computation(head, root);
        ends.push(callees.len());
        instructions += is_pred.len();
    }
    let names: Vec<&str> = heads.iter().map(|h| h.name).collect();
    check_acyclic(&names, &callees, &ends)?;
    let (entry_id, entry_name) = src.entry();
    let entry = comp_index
        .get(&entry_id)
        .copied()
        .filter(|&i| entry_name.is_empty() || names.get(i).is_some_and(|&n| n == entry_name))
        .ok_or_else(|| {
            invalid(
                M,
                "",
                format!("entry computation id {entry_id} (\"{entry_name}\") does not exist"),
            )
        })?;
    let config = src.config();
    let entry_layout = config
        .and_then(|c| c.entry_computation_layout.as_ref())
        .map(|l| program_shape_with(l, |s| sink.shape(s)))
        .transpose()
        .map_err(|m| invalid(M, "", format!("entry_computation_layout: {m}")))?;
    let summary = ProtoSummary {
        replica_count: config.map_or(0, |c| c.replica_count),
        num_partitions: config.map_or(0, |c| c.num_partitions),
        entry,
        computations: heads.len(),
        instructions,
    };
    Ok(Walked {
        summary,
        entry_layout,
    })
}

/// Parameter numbers, already unique, must be exactly `0..n`. Allocates only to name the error.
pub(super) fn check_parameter_numbers(params: &HashSet<i64>) -> Result<(), ProtoError> {
    let n = params.len();
    if params
        .iter()
        .all(|&x| usize::try_from(x).is_ok_and(|x| x < n))
    {
        return Ok(());
    }
    let mut sorted: Vec<i64> = params.iter().copied().collect();
    sorted.sort_unstable();
    let found = sorted
        .iter()
        .zip(0..)
        .find(|&(&x, expected)| x != expected)
        .map_or(0, |(&x, _)| x);
    Err(ProtoError::ParameterNumbers { n, found })
}

/// Refuses call graphs with cycles (a computation calling itself, directly or not): evaluating
/// or compiling them would never end.
pub(super) fn check_acyclic(
    comps: &[&str],
    callees: &[usize],
    ends: &[usize],
) -> Result<(), ConvertError> {
    // Computation i calls callees[ends[i - 1]..ends[i]].
    let callee = |node: usize, pos: usize| {
        let first = node
            .checked_sub(1)
            .map_or(Some(0), |i| ends.get(i).copied())?;
        let end = ends.get(node).copied()?;
        callees.get(first..end)?.get(pos).copied()
    };
    // 0 = unvisited, 1 = on the stack, 2 = done.
    let mut state = vec![0u8; ends.len()];
    let mut stack = Vec::new();
    for start in 0..ends.len() {
        if state.get(start) != Some(&0) {
            continue;
        }
        stack.clear();
        stack.push((start, 0usize));
        if let Some(s) = state.get_mut(start) {
            *s = 1;
        }
        while let Some(&mut (node, ref mut pos)) = stack.last_mut() {
            let next = callee(node, *pos);
            *pos += 1;
            match next {
                None => {
                    if let Some(s) = state.get_mut(node) {
                        *s = 2;
                    }
                    stack.pop();
                }
                Some(n) => match state.get(n) {
                    Some(0) => {
                        if let Some(s) = state.get_mut(n) {
                            *s = 1;
                        }
                        stack.push((n, 0));
                    }
                    Some(1) => {
                        let name = |i: usize| comps.get(i).copied().unwrap_or("?");
                        let from = stack.iter().position(|&(s, _)| s == n).unwrap_or(0);
                        let mut path: Vec<&str> =
                            stack.iter().skip(from).map(|&(s, _)| name(s)).collect();
                        path.push(name(n));
                        return Err(invalid(
                            name(n),
                            "",
                            format!("the call graph has a cycle: {}", path.join(" -> ")),
                        ));
                    }
                    _ => {}
                },
            }
        }
    }
    Ok(())
}
