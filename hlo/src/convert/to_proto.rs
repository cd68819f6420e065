//! IR to `HloModuleProtoWithConfig`: deterministic (instruction ids in program order across
//! the module, computation ids are computation indices), refusing what the proto cannot carry.

use proto::xla as px;

use super::dims;
use super::error::Unrepresentable;
use super::literals::literal_to_proto;
use super::shapes::{program_shape_to_proto, shape_to_proto};
use super::types::{element_type_at_xla_number, API_VERSIONS};
use super::{ConvertError, WriteOptions};
use crate::ir::*;

pub(super) fn metadata_to_proto(m: &OpMetadata) -> px::OpMetadata {
    px::OpMetadata {
        op_type: m.op_type.clone().unwrap_or_default(),
        op_name: m.op_name.clone().unwrap_or_default(),
        source_file: m.source_file.clone().unwrap_or_default(),
        source_line: m.source_line.unwrap_or(0) as i32,
        source_end_line: m.source_end_line.unwrap_or(0) as i32,
        source_column: m.source_column.unwrap_or(0) as i32,
        source_end_column: m.source_end_column.unwrap_or(0) as i32,
        // Never written since 2026-12-01 (issue 19): XLA's field 12 is the deduplicated name as
        // a string, where this schema still declares a bool. Metadata is debug information no
        // reader gives meaning to, so a reader loses nothing; `from_proto` still reads the bool
        // from older artifacts until 12 is retired.
        deduplicated_name: false,
        stack_frame_id: m.stack_frame_id.unwrap_or(0) as i32,
        scheduling_name: m.scheduling_name.clone().unwrap_or_default(),
    }
}

pub(super) fn window_to_proto(w: &Window) -> px::Window {
    px::Window {
        dimensions: w
            .dims
            .iter()
            .map(|d| px::WindowDimension {
                size: d.size,
                stride: d.stride,
                padding_low: d.pad_low,
                padding_high: d.pad_high,
                window_dilation: d.rhs_dilation,
                base_dilation: d.lhs_dilation,
                window_reversal: d.reversal,
            })
            .collect(),
    }
}

pub(super) fn precision_to_proto(p: Precision) -> px::precision_config::Precision {
    match p {
        Precision::Default => px::precision_config::Precision::Default,
        Precision::High => px::precision_config::Precision::High,
        Precision::Highest => px::precision_config::Precision::Highest,
    }
}

pub(super) fn frontend_to_proto(attrs: &[(String, String)]) -> px::FrontendAttributes {
    px::FrontendAttributes {
        map: attrs.iter().cloned().collect(),
    }
}

pub(super) fn replica_groups_to_proto(
    g: &ReplicaGroups,
) -> Result<Vec<px::ReplicaGroup>, Unrepresentable> {
    match g {
        ReplicaGroups::List(groups) => Ok(groups
            .iter()
            .map(|ids| px::ReplicaGroup {
                replica_ids: ids.clone(),
            })
            .collect()),
        ReplicaGroups::Iota(text) => Err(Unrepresentable::IotaReplicaGroups(text.clone())),
    }
}

pub(super) struct ModuleIds {
    /// Per computation, the global id of each instruction.
    instr: Vec<Vec<i64>>,
}

pub(super) fn instruction_to_proto(
    module: &HloModule,
    comp: &Computation,
    comp_index: usize,
    ids: &ModuleIds,
    id: InstrId,
    instr: &Instruction,
) -> Result<px::HloInstructionProto, ConvertError> {
    let bad = |what: String| ConvertError::Unrepresentable {
        computation: comp.name.clone(),
        instruction: instr.name.clone(),
        what,
    };
    let a = &instr.attrs;
    // `source_target_pairs` is kept verbatim by the parser; the proto has a field for it.
    let pairs_text = a.raw("source_target_pairs");
    if let Some((key, value)) = a.raw.iter().find(|(k, _)| k != "source_target_pairs") {
        return Err(bad(format!("attribute `{key}={value}`")));
    }
    let source_target_pairs = match pairs_text {
        None => Vec::new(),
        Some(t) => parse_source_target_pairs(t)
            .ok_or_else(|| bad(format!("attribute `source_target_pairs={t}`")))?
            .into_iter()
            .map(|(source, target)| px::SourceTarget { source, target })
            .collect(),
    };
    let global = |c: usize, i: InstrId| -> i64 {
        ids.instr
            .get(c)
            .and_then(|v| v.get(i.index()))
            .copied()
            .unwrap_or(-1)
    };
    let mut p = px::HloInstructionProto {
        name: instr.name.clone(),
        opcode: instr.opcode.name().to_owned(),
        shape: Some(shape_to_proto(&instr.shape).map_err(|e| bad(e.to_string()))?),
        id: global(comp_index, id),
        operand_ids: instr
            .operands
            .iter()
            .map(|&o| global(comp_index, o))
            .collect(),
        called_computation_ids: instr
            .called_computations()
            .iter()
            .map(|c| i64::from(c.0))
            .collect(),
        metadata: instr.metadata.as_ref().map(metadata_to_proto),
        ..Default::default()
    };
    if let Some(n) = a.parameter_number {
        p.parameter_number = n;
    }
    if let Some(lit) = &a.literal {
        p.literal = Some(literal_to_proto(lit, &instr.shape).map_err(|e| bad(e.to_string()))?);
    }
    if let Some(d) = &a.dimensions {
        p.dimensions = d.clone();
    }
    if let Some(d) = a.iota_dimension {
        p.dimensions = vec![d];
    }
    if let Some(s) = &a.slice {
        p.slice_dimensions = s
            .iter()
            .map(|d| px::hlo_instruction_proto::SliceDimensions {
                start: d.start,
                limit: d.limit,
                stride: d.stride,
            })
            .collect();
    }
    if let Some(pad) = &a.padding {
        p.padding_config = Some(px::PaddingConfig {
            dimensions: pad
                .iter()
                .map(|d| px::padding_config::PaddingConfigDimension {
                    edge_padding_low: d.low,
                    edge_padding_high: d.high,
                    interior_padding: d.interior,
                })
                .collect(),
        });
    }
    if let Some(w) = &a.window {
        p.window = Some(window_to_proto(w));
    }
    p.dot_dimension_numbers = a.dot_dimension_numbers.as_ref().map(dims::dot_to_proto);
    p.convolution_dimension_numbers = a.conv_dimension_numbers.as_ref().map(dims::conv_to_proto);
    p.feature_group_count = a.feature_group_count.unwrap_or(0);
    p.batch_group_count = a.batch_group_count.unwrap_or(0);
    let algorithm = a.dot_algorithm;
    if a.operand_precision.is_some() || algorithm.is_some() {
        let ps = a.operand_precision.iter().flatten();
        p.precision_config = Some(px::PrecisionConfig {
            operand_precision: ps.map(|&x| precision_to_proto(x) as i32).collect(),
            algorithm: algorithm.map_or(0, DotAlgorithm::number),
        });
    }
    if let Some(d) = a.comparison_direction {
        p.comparison_direction = d.name().to_owned();
    }
    if let Some(t) = a.comparison_type {
        p.comparison_type = t.name().to_owned();
    }
    if let Some(k) = a.fusion_kind {
        p.fusion_kind = k.name().to_owned();
    }
    if let Some(i) = a.tuple_index {
        p.tuple_index = i;
    }
    p.gather_dimension_numbers = a
        .gather_dimension_numbers
        .as_ref()
        .map(dims::gather_to_proto);
    if let Some(s) = &a.gather_slice_sizes {
        p.gather_slice_sizes = s.clone();
    }
    p.scatter_dimension_numbers = a
        .scatter_dimension_numbers
        .as_ref()
        .map(dims::scatter_to_proto);
    p.indices_are_sorted = a.indices_are_sorted.unwrap_or(false);
    p.unique_indices = a.unique_indices.unwrap_or(false);
    if let Some(s) = &a.dynamic_slice_sizes {
        p.dynamic_slice_sizes = s.clone();
    }
    p.is_stable = a.is_stable.unwrap_or(false);
    p.k = a.k.unwrap_or(0);
    p.largest = a.largest.unwrap_or(false);
    if let Some(t) = &a.custom_call_target {
        p.custom_call_target = t.clone();
    }
    if let Some(v) = &a.api_version {
        let (_, e) = API_VERSIONS
            .iter()
            .find(|(name, _)| name == v)
            .ok_or_else(|| bad(format!("custom-call api_version `{v}`")))?;
        p.custom_call_api_version = *e as i32;
    }
    p.custom_call_has_side_effect = a.custom_call_has_side_effect.unwrap_or(false);
    if let Some(shapes) = &a.operand_layout_constraints {
        // XLA sets `constrain_layout` together with the operand shapes it constrains.
        p.constrain_layout = true;
        p.operand_shapes_with_layout = shapes
            .iter()
            .map(|s| shape_to_proto(s).map_err(|e| bad(e.to_string())))
            .collect::<Result<_, _>>()?;
    }
    if let Some(aliases) = &a.output_to_operand_aliasing {
        p.output_operand_aliasing = aliases
            .iter()
            .map(|x| px::OutputOperandAliasing {
                output_shape_index: x.output_index.clone(),
                operand_index: x.operand,
                operand_shape_index: x.operand_index.clone(),
            })
            .collect();
    }
    if let Some(b) = &a.backend_config {
        p.backend_config = b.clone().into_bytes();
    }
    if let Some(f) = &a.frontend_attributes {
        p.frontend_attributes = Some(frontend_to_proto(f));
    }
    if let Some(s) = &a.sharding {
        p.sharding = Some(super::sharding::sharding_to_proto(s));
    }
    if let Some(g) = &a.replica_groups {
        p.replica_groups = replica_groups_to_proto(g).map_err(|e| bad(e.to_string()))?;
    }
    p.channel_id = a.channel_id.unwrap_or(0);
    p.source_target_pairs = source_target_pairs;
    p.use_global_device_ids = a.use_global_device_ids.unwrap_or(false);
    if let Some(t) = a.fft_type {
        p.fft_type = match t {
            FftType::Fft => px::FftType::Fft,
            FftType::Ifft => px::FftType::Ifft,
            FftType::Rfft => px::FftType::Rfft,
            FftType::Irfft => px::FftType::Irfft,
        } as i32;
    }
    if let Some(o) = &a.triangular_solve {
        p.triangular_solve_options = Some(triangular_solve_to_proto(o));
    }
    if let Some(o) = &a.cholesky {
        p.cholesky_options = Some(px::CholeskyOptions { lower: o.lower });
    }
    if let Some(l) = &a.fft_length {
        p.fft_length = l.clone();
    }
    if let Some(r) = a.rng_algorithm {
        p.rng_algorithm = match r {
            RandomAlgorithm::Default => px::RandomAlgorithm::RngDefault,
            RandomAlgorithm::ThreeFry => px::RandomAlgorithm::RngThreeFry,
            RandomAlgorithm::Philox => px::RandomAlgorithm::RngPhilox,
        } as i32;
    }
    if let Some(d) = a.distribution {
        p.distribution = match d {
            RandomDistribution::Uniform => px::RandomDistribution::RngUniform,
            RandomDistribution::Normal => px::RandomDistribution::RngNormal,
        } as i32;
    }
    p.exponent_bits = a.exponent_bits.unwrap_or(0) as i32;
    p.mantissa_bits = a.mantissa_bits.unwrap_or(0) as i32;
    p.delta = a.delta.unwrap_or(0);
    if let Some(e) = a.epsilon {
        p.epsilon = e.as_f64() as f32;
    }
    p.feature_index = a.feature_index.unwrap_or(0);
    let _ = module;
    Ok(p)
}

/// Converts a module to `HloModuleProtoWithConfig`, with every moving field at its legacy number
/// (`to_proto_with` and `WriteOptions::default()`).
pub fn to_proto(module: &HloModule) -> Result<px::HloModuleProtoWithConfig, ConvertError> {
    to_proto_with(module, &WriteOptions::default())
}

/// Converts a module to `HloModuleProtoWithConfig`, writing the fields that move to XLA's numbers
/// where `options` says.
pub fn to_proto_with(
    module: &HloModule,
    options: &WriteOptions,
) -> Result<px::HloModuleProtoWithConfig, ConvertError> {
    if let Some((k, v)) = module.config.raw.first() {
        return Err(module_bad(format!("module attribute `{k}={v}`")));
    }
    let mut next = 0i64;
    let ids = ModuleIds {
        instr: module
            .computations
            .iter()
            .map(|c| {
                c.instructions
                    .iter()
                    .map(|_| {
                        next += 1;
                        next
                    })
                    .collect()
            })
            .collect(),
    };
    let mut computations = Vec::with_capacity(module.computations.len());
    for (ci, comp) in module.computations.iter().enumerate() {
        computations.push(computation_to_proto(module, &ids, ci, comp)?);
    }
    let cfg = &module.config;
    let entry_layout = cfg
        .entry_computation_layout
        .as_ref()
        .map(program_shape_to_proto)
        .transpose()
        .map_err(|e| module_bad(e.to_string()))?;
    let schedule = (cfg.is_scheduled == Some(true)).then(|| px::HloScheduleProto {
        sequences: computations
            .iter()
            .map(|c| {
                (
                    c.id,
                    px::hlo_schedule_proto::InstructionSequence {
                        instruction_ids: c.instructions.iter().map(|i| i.id).collect(),
                    },
                )
            })
            .collect(),
    });
    let input_output_alias = cfg
        .input_output_alias
        .as_deref()
        .map(alias_to_proto)
        .transpose()?;
    let stack_frame_index = stack_frames_to_proto(&module.stack_frames)?;
    let entry = module
        .get(module.entry)
        .ok_or_else(|| module_bad("entry computation is missing".into()))?;
    let mut hlo_module = px::HloModuleProto {
        name: module.name.clone(),
        entry_computation_name: entry.name.clone(),
        entry_computation_id: i64::from(module.entry.0),
        host_program_shape: computations
            .get(module.entry.index())
            .and_then(|c| c.program_shape.clone()),
        computations,
        id: 0,
        schedule,
        input_output_alias,
        is_dynamic: false,
        stack_frame_index,
        frontend_attributes_legacy: None,
        frontend_attributes: None,
    };
    // Exactly one number of each moving field is written: the readers refuse frontend
    // attributes at both, and a config with XLA's 33 or 27 is read in XLA's schema (its 23 and 24
    // would be ignored).
    let attributes = cfg.frontend_attributes.as_deref().map(frontend_to_proto);
    if options.frontend_attributes_at_19 {
        hlo_module.frontend_attributes = attributes;
    } else {
        hlo_module.frontend_attributes_legacy = attributes;
    }
    let mut config = px::HloModuleConfigProto {
        entry_computation_layout: entry_layout,
        replica_count: cfg.replica_count.unwrap_or(0),
        num_partitions: cfg.num_partitions.unwrap_or(0),
        ..Default::default()
    };
    let parameters = cfg
        .allow_spmd_sharding_propagation_to_parameters
        .clone()
        .unwrap_or_default();
    let output = cfg
        .allow_spmd_sharding_propagation_to_output
        .clone()
        .unwrap_or_default();
    if options.spmd_propagation_at_xla_numbers {
        config.allow_spmd_sharding_propagation_to_parameters = parameters;
        config.allow_spmd_sharding_propagation_to_output = output;
    } else {
        config.allow_spmd_sharding_propagation_to_parameters_legacy = parameters;
        config.allow_spmd_sharding_propagation_to_output_legacy = output;
    }
    let mut out = px::HloModuleProtoWithConfig {
        hlo_module: Some(hlo_module),
        config: Some(config),
    };
    if options.narrow_floats_at_xla_numbers {
        element_types_at_xla_numbers(&mut out);
    }
    if options.omit_dot_algorithm {
        omit_dot_algorithms(&mut out);
    }
    Ok(out)
}

/// What `WriteOptions::omit_dot_algorithm` does: each instruction's `PrecisionConfig.algorithm`
/// cleared, and the config dropped where it held nothing else (as a dot without an algorithm
/// is written).
fn omit_dot_algorithms(out: &mut px::HloModuleProtoWithConfig) {
    let comps = out
        .hlo_module
        .iter_mut()
        .flat_map(|m| m.computations.iter_mut());
    for instr in comps.flat_map(|c| c.instructions.iter_mut()) {
        if let Some(config) = instr.precision_config.as_mut().filter(|c| c.algorithm != 0) {
            config.algorithm = 0;
            if config.operand_precision.is_empty() {
                instr.precision_config = None;
            }
        }
    }
}

/// One computation: its instructions in post order (operands before their users), its root and
/// program shape.
fn computation_to_proto(
    module: &HloModule,
    ids: &ModuleIds,
    ci: usize,
    comp: &Computation,
) -> Result<px::HloComputationProto, ConvertError> {
    // Operands before their users, as XLA writes a module and as a runtime checks it: the
    // text parser accepts operands defined later in the text, and writing the text order
    // made artifacts the runtime refuses ("operand id 3 is not an earlier instruction").
    // For text already in that order (everything XLA and JAX print) the order is the same.
    let instructions = comp
        .post_order()
        .into_iter()
        .filter_map(|id| comp.get(id).map(|instr| (id, instr)))
        .map(|(id, instr)| instruction_to_proto(module, comp, ci, ids, id, instr))
        .collect::<Result<Vec<_>, _>>()?;
    let root_id = ids
        .instr
        .get(ci)
        .and_then(|v| v.get(comp.root.index()))
        .copied()
        .ok_or_else(|| module_bad(format!("computation {} has no root", comp.name)))?;
    let program_shape = {
        let params = comp
            .param_shapes()
            .into_iter()
            .map(shape_to_proto)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| module_bad(e.to_string()))?;
        let result = comp
            .root_instruction()
            .map(|r| shape_to_proto(&r.shape))
            .transpose()
            .map_err(|e| module_bad(e.to_string()))?;
        px::ProgramShapeProto {
            parameters: params,
            result,
            parameter_names: comp
                .params
                .iter()
                .filter_map(|&p| comp.get(p).map(|i| i.name.clone()))
                .collect(),
        }
    };
    Ok(px::HloComputationProto {
        name: comp.name.clone(),
        instructions,
        program_shape: Some(program_shape),
        id: ci as i64,
        root_id,
        is_fusion_computation: false,
        execution_thread: comp.execution_thread.clone().unwrap_or_default(),
    })
}

/// `input_output_alias`, each entry with its kind.
fn alias_to_proto(aliases: &[IoAlias]) -> Result<px::HloInputOutputAliasProto, ConvertError> {
    aliases
        .iter()
        .map(|a| {
            let kind = match a.kind.as_deref() {
                None => px::Kind::UndefinedAlias,
                Some("may-alias") => px::Kind::MayAlias,
                Some("must-alias") => px::Kind::MustAlias,
                Some(other) => return Err(module_bad(format!("alias kind `{other}`"))),
            };
            Ok(px::hlo_input_output_alias_proto::AliasEntryProto {
                output_shape_index: a.output_index.clone(),
                parameter_number: a.param_number,
                parameter_shape_index: a.param_index.clone(),
                kind: kind as i32,
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|entries| px::HloInputOutputAliasProto { entries })
}

/// The stack frame index, when the module has one: each table dense from id 1, as the proto
/// addresses entries by position.
fn stack_frames_to_proto(
    sf: &StackFrameIndex,
) -> Result<Option<px::StackFrameIndexProto>, ConvertError> {
    if sf.is_empty() {
        return Ok(None);
    }
    fn dense<T: Clone>(v: &[(i64, T)], what: &'static str) -> Result<Vec<T>, Unrepresentable> {
        v.iter()
            .enumerate()
            .map(|(i, (id, x))| {
                if *id == i as i64 + 1 {
                    Ok(x.clone())
                } else {
                    Err(Unrepresentable::StackFrameIds {
                        what,
                        id: *id,
                        position: i + 1,
                    })
                }
            })
            .collect()
    }
    Ok(Some(px::StackFrameIndexProto {
        file_names: dense(&sf.file_names, "file name").map_err(|e| module_bad(e.to_string()))?,
        function_names: dense(&sf.function_names, "function name")
            .map_err(|e| module_bad(e.to_string()))?,
        file_locations: dense(&sf.file_locations, "file location")
            .map_err(|e| module_bad(e.to_string()))?
            .into_iter()
            .map(|l| px::stack_frame_index_proto::FileLocation {
                file_name_id: l.file_name_id as i32,
                function_name_id: l.function_name_id as i32,
                line: l.line as i32,
                end_line: l.end_line as i32,
                column: l.column as i32,
                end_column: l.end_column as i32,
            })
            .collect(),
        stack_frames: dense(&sf.stack_frames, "stack frame")
            .map_err(|e| module_bad(e.to_string()))?
            .into_iter()
            .map(|f| px::stack_frame_index_proto::StackFrame {
                file_location_id: f.file_location_id as i32,
                parent_frame_id: f.parent_frame_id as i32,
            })
            .collect(),
    }))
}

/// A module-level field the proto cannot hold.
fn module_bad(what: String) -> ConvertError {
    ConvertError::Unrepresentable {
        computation: "<module>".into(),
        instruction: String::new(),
        what,
    }
}

/// Rewrites every element type of `p` that has a legacy number (`F4E2M1FN`, `F8E8M0FNU`) to
/// XLA's number: every instruction's shape, every literal's, every program shape and the entry
/// layout (the places `to_proto_with` writes shapes).
pub(super) fn element_types_at_xla_numbers(p: &mut px::HloModuleProtoWithConfig) {
    if let Some(m) = &mut p.hlo_module {
        for c in &mut m.computations {
            for i in &mut c.instructions {
                if let Some(s) = &mut i.shape {
                    shape_at_xla_numbers(s);
                }
                if let Some(l) = &mut i.literal {
                    literal_at_xla_numbers(l);
                }
            }
            if let Some(ps) = &mut c.program_shape {
                program_shape_at_xla_numbers(ps);
            }
        }
        if let Some(ps) = &mut m.host_program_shape {
            program_shape_at_xla_numbers(ps);
        }
    }
    if let Some(ps) = p
        .config
        .as_mut()
        .and_then(|c| c.entry_computation_layout.as_mut())
    {
        program_shape_at_xla_numbers(ps);
    }
}

/// What `WriteOptions::narrow_floats_at_xla_numbers` does to the module's shapes, for one program
/// shape outside the module (the executable's own `program_shape`, which a runtime reads too).
pub fn program_shape_at_xla_numbers(p: &mut px::ProgramShapeProto) {
    for s in p.parameters.iter_mut().chain(p.result.as_mut()) {
        shape_at_xla_numbers(s);
    }
}

/// [`element_types_at_xla_numbers`] for one shape and its tuple elements. Iterative: an artifact
/// a reader accepted bounds the nesting, but this must not recurse on anything.
pub(super) fn shape_at_xla_numbers(s: &mut px::ShapeProto) {
    let mut stack = vec![s];
    while let Some(s) = stack.pop() {
        s.element_type = element_type_at_xla_number(s.element_type);
        stack.extend(s.tuple_shapes.iter_mut());
    }
}

fn literal_at_xla_numbers(l: &mut px::LiteralProto) {
    let mut stack = vec![l];
    while let Some(l) = stack.pop() {
        if let Some(s) = &mut l.shape {
            shape_at_xla_numbers(s);
        }
        stack.extend(l.tuple_literals.iter_mut());
    }
}

fn triangular_solve_to_proto(o: &TriangularSolveOptions) -> px::TriangularSolveOptions {
    use px::triangular_solve_options::Transpose as P;
    px::TriangularSolveOptions {
        left_side: o.left_side,
        lower: o.lower,
        unit_diagonal: o.unit_diagonal,
        transpose_a: match o.transpose_a {
            None => P::Invalid,
            Some(Transpose::NoTranspose) => P::NoTranspose,
            Some(Transpose::Transpose) => P::Transpose,
            Some(Transpose::Adjoint) => P::Adjoint,
        } as i32,
    }
}
