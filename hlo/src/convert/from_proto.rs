//! `HloModuleProtoWithConfig` (untrusted) to the IR: the structural walk of [`super::checks`],
//! plus decoding every instruction's attributes.

use proto::xla as px;

use crate::ir::*;
use crate::shape::Shape;

use super::checks::{
    decoded, spmd_propagation_lists, walk_proto, CalledRoles, Checked, CompHead, Sink, Walked,
};
use super::dims;
use super::error::{ProtoError, ShapeProtoError};
use super::literals::literal_from_proto;
use super::shapes::shape_from_proto;
use super::types::API_VERSIONS;
use super::ConvertError;

pub(super) fn metadata_from_proto(p: &px::OpMetadata) -> Option<OpMetadata> {
    fn s(v: &str) -> Option<String> {
        (!v.is_empty()).then(|| v.to_owned())
    }
    fn n(v: i32) -> Option<i64> {
        (v != 0).then_some(i64::from(v))
    }
    let m = OpMetadata {
        op_type: s(&p.op_type),
        op_name: s(&p.op_name),
        source_file: s(&p.source_file),
        source_line: n(p.source_line),
        source_end_line: n(p.source_end_line),
        source_column: n(p.source_column),
        source_end_column: n(p.source_end_column),
        stack_frame_id: n(p.stack_frame_id),
        // Read from artifacts written before 2026-12-01 (no writer sets it since) until 12 is
        // retired after 2027-06-01.
        deduplicated_name: p.deduplicated_name.then(|| "true".to_owned()),
        scheduling_name: s(&p.scheduling_name),
        other: Vec::new(),
    };
    (m != OpMetadata::default()).then_some(m)
}

fn non_empty(v: &[bool]) -> Option<Vec<bool>> {
    (!v.is_empty()).then(|| v.to_vec())
}

pub(super) fn window_from_proto(w: &px::Window) -> Window {
    Window {
        dims: w
            .dimensions
            .iter()
            .map(|d| WindowDim {
                size: d.size,
                stride: d.stride,
                pad_low: d.padding_low,
                pad_high: d.padding_high,
                lhs_dilation: d.base_dilation,
                rhs_dilation: d.window_dilation,
                reversal: d.window_reversal,
            })
            .collect(),
    }
}

pub(super) fn precision_from_proto(p: i32) -> Result<Precision, ProtoError> {
    match px::precision_config::Precision::try_from(p) {
        Ok(px::precision_config::Precision::Default) => Ok(Precision::Default),
        Ok(px::precision_config::Precision::High) => Ok(Precision::High),
        Ok(px::precision_config::Precision::Highest) => Ok(Precision::Highest),
        _ => Err(ProtoError::Precision(p)),
    }
}

pub(super) fn frontend_from_proto(p: &px::FrontendAttributes) -> Vec<(String, String)> {
    p.map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Assigns the called computations of a proto instruction back to the IR attribute XLA's text
/// format uses for its opcode; `roles` comes from [`called_roles`] for the same list.
pub(super) fn assign_called(attrs: &mut Attrs, roles: CalledRoles, called: Vec<ComputationId>) {
    match (roles, called.as_slice()) {
        (CalledRoles::ConditionBody, &[c, b]) => {
            attrs.condition = Some(c);
            attrs.body = Some(b);
        }
        (CalledRoles::TrueFalse, &[t, f]) => {
            attrs.true_computation = Some(t);
            attrs.false_computation = Some(f);
        }
        (CalledRoles::SelectScatter, &[s, c]) => {
            attrs.select = Some(s);
            attrs.scatter = Some(c);
        }
        (CalledRoles::ToApply, &[c]) => attrs.to_apply = Some(c),
        (CalledRoles::Branches, _) => attrs.branch_computations = Some(called),
        (CalledRoles::Calls, _) => attrs.calls = Some(called),
        (CalledRoles::CalledComputations, _) => attrs.called_computations = Some(called),
        _ => {}
    }
}

/// Builds the IR of [`from_proto`] from what the walk has checked.
#[derive(Default)]
pub(super) struct Builder {
    instructions: Vec<Instruction>,
    /// (parameter number, instruction) of the current computation.
    params: Vec<(i64, InstrId)>,
    computations: Vec<Computation>,
}

impl Sink for Builder {
    type Shape = Shape;
    fn shape(&mut self, p: &px::ShapeProto) -> Result<Shape, ShapeProtoError> {
        shape_from_proto(p)
    }
    fn instruction(&mut self, i: Checked<'_>, shape: Shape) -> Result<(), ProtoError> {
        let mut attrs = Attrs::default();
        assign_called(
            &mut attrs,
            i.roles,
            i.called.iter().map(|&c| ComputationId(c as u32)).collect(),
        );
        fill_attrs(&mut attrs, i.opcode, i.proto, &shape)?;
        let id = InstrId(self.instructions.len() as u32);
        if i.opcode == Opcode::Parameter {
            self.params.push((i.proto.parameter_number, id));
        }
        self.instructions.push(Instruction {
            name: i.proto.name.clone(),
            opcode: i.opcode,
            shape,
            operands: i.operands.iter().map(|&o| InstrId(o)).collect(),
            attrs,
            metadata: i.proto.metadata.as_ref().and_then(metadata_from_proto),
            loc: SourceLoc::default(),
        });
        Ok(())
    }
    fn computation(&mut self, p: &CompHead<'_>, root: u32) {
        self.params.sort_unstable_by_key(|&(number, _)| number);
        self.computations.push(Computation {
            name: p.name.to_owned(),
            instructions: std::mem::take(&mut self.instructions),
            params: self.params.drain(..).map(|(_, id)| id).collect(),
            root: InstrId(root),
            execution_thread: (!p.execution_thread.is_empty())
                .then(|| p.execution_thread.to_owned()),
            loc: SourceLoc::default(),
        });
    }
}

/// Converts an `HloModuleProtoWithConfig` (from an artifact: untrusted) to the IR: the checks of
/// `check_proto` (the same walk), plus decoding and checking every instruction's attributes.
pub fn from_proto(p: &px::HloModuleProtoWithConfig) -> Result<HloModule, ConvertError> {
    let mut builder = Builder::default();
    let src = decoded(p)?;
    let hm = src.module;
    let Walked {
        summary,
        entry_layout,
    } = walk_proto(&src, &mut builder)?;
    let default_config = px::HloModuleConfigProto::default();
    let cfg = p.config.as_ref().unwrap_or(&default_config);
    let spmd = spmd_propagation_lists(cfg);
    let config = ModuleConfig {
        is_scheduled: hm.schedule.as_ref().map(|_| true),
        entry_computation_layout: entry_layout
            .map(|(params, result)| ProgramLayout { params, result }),
        input_output_alias: hm.input_output_alias.as_ref().map(|a| {
            a.entries
                .iter()
                .map(|e| IoAlias {
                    output_index: e.output_shape_index.clone(),
                    param_number: e.parameter_number,
                    param_index: e.parameter_shape_index.clone(),
                    kind: match px::Kind::try_from(e.kind) {
                        Ok(px::Kind::MayAlias) => Some("may-alias".into()),
                        Ok(px::Kind::MustAlias) => Some("must-alias".into()),
                        _ => None,
                    },
                })
                .collect()
        }),
        // XLA's numbers (33, 27) when the config uses either, else the legacy ones (23, 24).
        allow_spmd_sharding_propagation_to_parameters: non_empty(spmd.0),
        allow_spmd_sharding_propagation_to_output: non_empty(spmd.1),
        replica_count: (summary.replica_count != 0).then_some(summary.replica_count),
        num_partitions: (summary.num_partitions != 0).then_some(summary.num_partitions),
        // XLA's 19 or the legacy 18 (the walk refused both non-empty): the one with attributes,
        // else whichever is present, 19 first (XLA's artifacts set an empty 18, its
        // `buffer_donor`).
        // Can be removed in June 2027 (6 months backward compatibility window).
        frontend_attributes: {
            let (legacy, xla) = (
                hm.frontend_attributes_legacy.as_ref(),
                hm.frontend_attributes.as_ref(),
            );
            match super::checks::attributes_set(legacy, xla) {
                (true, false) => legacy,
                _ => xla.or(legacy),
            }
            .map(frontend_from_proto)
        },
        raw: Vec::new(),
    };
    let stack_frames = hm
        .stack_frame_index
        .as_ref()
        .map(|s| {
            fn ids<T>(v: impl IntoIterator<Item = T>) -> Vec<(i64, T)> {
                v.into_iter()
                    .enumerate()
                    .map(|(i, x)| (i as i64 + 1, x))
                    .collect()
            }
            StackFrameIndex {
                file_names: ids(s.file_names.iter().cloned()),
                function_names: ids(s.function_names.iter().cloned()),
                file_locations: ids(s.file_locations.iter().map(|l| FileLocation {
                    file_name_id: i64::from(l.file_name_id),
                    function_name_id: i64::from(l.function_name_id),
                    line: i64::from(l.line),
                    end_line: i64::from(l.end_line),
                    column: i64::from(l.column),
                    end_column: i64::from(l.end_column),
                })),
                stack_frames: ids(s.stack_frames.iter().map(|f| StackFrame {
                    file_location_id: i64::from(f.file_location_id),
                    parent_frame_id: i64::from(f.parent_frame_id),
                })),
            }
        })
        .unwrap_or_default();
    Ok(HloModule {
        name: hm.name.clone(),
        computations: builder.computations,
        entry: ComputationId(summary.entry as u32),
        config,
        stack_frames,
    })
}

pub(super) fn fill_attrs(
    a: &mut Attrs,
    opcode: Opcode,
    p: &px::HloInstructionProto,
    shape: &Shape,
) -> Result<(), ProtoError> {
    use Opcode::*;
    if opcode == Parameter {
        a.parameter_number = Some(p.parameter_number);
    }
    if let Some(l) = &p.literal {
        a.literal =
            Some(literal_from_proto(l, shape).map_err(|m| ProtoError::Literal(Box::new(m)))?);
    } else if opcode == Constant {
        return Err(ProtoError::NoLiteral);
    }
    if opcode == Iota {
        match p.dimensions.as_slice() {
            [d] => a.iota_dimension = Some(*d),
            other => return Err(ProtoError::IotaDimensions(other.to_vec())),
        }
    } else if !p.dimensions.is_empty()
        || matches!(
            opcode,
            Broadcast | Transpose | Reduce | Reverse | Concatenate
        )
    {
        a.dimensions = Some(p.dimensions.clone());
    }
    if !p.slice_dimensions.is_empty() {
        a.slice = Some(
            p.slice_dimensions
                .iter()
                .map(|d| SliceDim {
                    start: d.start,
                    limit: d.limit,
                    stride: d.stride,
                })
                .collect(),
        );
    }
    if let Some(pc) = &p.padding_config {
        a.padding = Some(
            pc.dimensions
                .iter()
                .map(|d| PadDim {
                    low: d.edge_padding_low,
                    high: d.edge_padding_high,
                    interior: d.interior_padding,
                })
                .collect(),
        );
    }
    a.window = p.window.as_ref().map(window_from_proto);
    a.dot_dimension_numbers = p.dot_dimension_numbers.as_ref().map(dims::dot_from_proto);
    a.conv_dimension_numbers = p
        .convolution_dimension_numbers
        .as_ref()
        .map(dims::conv_from_proto);
    a.feature_group_count = (p.feature_group_count != 0).then_some(p.feature_group_count);
    a.batch_group_count = (p.batch_group_count != 0).then_some(p.batch_group_count);
    if let Some(pc) = &p.precision_config {
        let precision: Vec<Precision> = pc
            .operand_precision
            .iter()
            .map(|&x| precision_from_proto(x))
            .collect::<Result<_, _>>()?;
        // XLA writes a config for the algorithm alone; no operand precisions then means none.
        a.operand_precision = (!precision.is_empty() || pc.algorithm == 0).then_some(precision);
        // XLA reads an algorithm on dots only; on another instruction (a convolution shares
        // the config) it would be dropped unseen, so it is refused.
        a.dot_algorithm = match pc.algorithm {
            0 => None,
            n if opcode != Dot => return Err(ProtoError::DotAlgorithmOn(opcode.name(), n)),
            n => Some(DotAlgorithm::from_number(n).ok_or(ProtoError::DotAlgorithm(n))?),
        };
    }
    if !p.comparison_direction.is_empty() {
        a.comparison_direction = Some(
            ComparisonDirection::from_name(&p.comparison_direction)
                .ok_or_else(|| ProtoError::ComparisonDirection(p.comparison_direction.clone()))?,
        );
    } else if opcode == Compare {
        return Err(ProtoError::NoComparisonDirection);
    }
    if !p.comparison_type.is_empty() {
        a.comparison_type = Some(
            ComparisonType::from_name(&p.comparison_type)
                .ok_or_else(|| ProtoError::ComparisonType(p.comparison_type.clone()))?,
        );
    }
    if !p.fusion_kind.is_empty() {
        a.fusion_kind = Some(
            FusionKind::from_name(&p.fusion_kind)
                .ok_or_else(|| ProtoError::FusionKind(p.fusion_kind.clone()))?,
        );
    }
    if opcode == GetTupleElement {
        a.tuple_index = Some(p.tuple_index);
    }
    a.gather_dimension_numbers = p
        .gather_dimension_numbers
        .as_ref()
        .map(dims::gather_from_proto);
    if !p.gather_slice_sizes.is_empty() || opcode == Gather {
        a.gather_slice_sizes = Some(p.gather_slice_sizes.clone());
    }
    a.scatter_dimension_numbers = p
        .scatter_dimension_numbers
        .as_ref()
        .map(dims::scatter_from_proto);
    a.indices_are_sorted = p.indices_are_sorted.then_some(true);
    a.unique_indices = p.unique_indices.then_some(true);
    if !p.dynamic_slice_sizes.is_empty() || opcode == DynamicSlice {
        a.dynamic_slice_sizes = Some(p.dynamic_slice_sizes.clone());
    }
    a.is_stable = p.is_stable.then_some(true);
    a.k = (p.k != 0).then_some(p.k);
    a.largest = p.largest.then_some(true);
    if !p.custom_call_target.is_empty() || opcode == CustomCall {
        a.custom_call_target = Some(p.custom_call_target.clone());
    }
    if p.custom_call_api_version != 0 {
        let v = API_VERSIONS
            .iter()
            .find(|(_, e)| *e as i32 == p.custom_call_api_version)
            .map(|(name, _)| (*name).to_owned())
            .ok_or(ProtoError::ApiVersion(p.custom_call_api_version))?;
        a.api_version = Some(v);
    }
    a.custom_call_has_side_effect = p.custom_call_has_side_effect.then_some(true);
    if !p.operand_shapes_with_layout.is_empty() {
        a.operand_layout_constraints = Some(
            p.operand_shapes_with_layout
                .iter()
                .map(shape_from_proto)
                .collect::<Result<_, _>>()?,
        );
    }
    if !p.output_operand_aliasing.is_empty() {
        a.output_to_operand_aliasing = Some(
            p.output_operand_aliasing
                .iter()
                .map(|x| OutputOperandAlias {
                    output_index: x.output_shape_index.clone(),
                    operand: x.operand_index,
                    operand_index: x.operand_shape_index.clone(),
                })
                .collect(),
        );
    }
    if !p.backend_config.is_empty() {
        a.backend_config = Some(
            String::from_utf8(p.backend_config.clone())
                .map_err(|_| ProtoError::BackendConfigUtf8)?,
        );
    }
    a.frontend_attributes = p.frontend_attributes.as_ref().map(frontend_from_proto);
    a.sharding = p
        .sharding
        .as_ref()
        .map(super::sharding::sharding_from_proto)
        .transpose()?;
    if !p.replica_groups.is_empty() {
        a.replica_groups = Some(ReplicaGroups::List(
            p.replica_groups
                .iter()
                .map(|g| g.replica_ids.clone())
                .collect(),
        ));
    }
    a.channel_id = (p.channel_id != 0).then_some(p.channel_id);
    if !p.source_target_pairs.is_empty() || opcode == CollectivePermute {
        let pairs: Vec<(i64, i64)> = p
            .source_target_pairs
            .iter()
            .map(|px::SourceTarget { source, target }| (*source, *target))
            .collect();
        a.raw.push((
            "source_target_pairs".into(),
            print_source_target_pairs(&pairs),
        ));
    }
    a.use_global_device_ids = p.use_global_device_ids.then_some(true);
    if opcode == Fft {
        a.fft_type = Some(match px::FftType::try_from(p.fft_type) {
            Ok(px::FftType::Fft) => FftType::Fft,
            Ok(px::FftType::Ifft) => FftType::Ifft,
            Ok(px::FftType::Rfft) => FftType::Rfft,
            Ok(px::FftType::Irfft) => FftType::Irfft,
            Err(_) => return Err(ProtoError::FftType(p.fft_type)),
        });
        a.fft_length = Some(p.fft_length.clone());
    }
    if let (TriangularSolve, Some(o)) = (opcode, &p.triangular_solve_options) {
        a.triangular_solve = Some(triangular_solve_from_proto(o)?);
    }
    if let (Cholesky, Some(o)) = (opcode, &p.cholesky_options) {
        a.cholesky = Some(CholeskyOptions { lower: o.lower });
    }
    if opcode == RngBitGenerator {
        a.rng_algorithm = Some(match px::RandomAlgorithm::try_from(p.rng_algorithm) {
            Ok(px::RandomAlgorithm::RngDefault) => RandomAlgorithm::Default,
            Ok(px::RandomAlgorithm::RngThreeFry) => RandomAlgorithm::ThreeFry,
            Ok(px::RandomAlgorithm::RngPhilox) => RandomAlgorithm::Philox,
            Err(_) => return Err(ProtoError::RngAlgorithm(p.rng_algorithm)),
        });
    }
    if opcode == Rng {
        a.distribution = Some(match px::RandomDistribution::try_from(p.distribution) {
            Ok(px::RandomDistribution::RngUniform) => RandomDistribution::Uniform,
            Ok(px::RandomDistribution::RngNormal) => RandomDistribution::Normal,
            _ => return Err(ProtoError::RngDistribution(p.distribution)),
        });
    }
    a.exponent_bits = (p.exponent_bits != 0).then_some(i64::from(p.exponent_bits));
    a.mantissa_bits = (p.mantissa_bits != 0).then_some(i64::from(p.mantissa_bits));
    a.delta = (p.delta != 0).then_some(p.delta);
    a.epsilon = (p.epsilon != 0.0).then_some(LiteralValue::Float(f64::from(p.epsilon)));
    a.feature_index = (p.feature_index != 0).then_some(p.feature_index);
    Ok(())
}

fn triangular_solve_from_proto(
    o: &px::TriangularSolveOptions,
) -> Result<TriangularSolveOptions, ProtoError> {
    use px::triangular_solve_options::Transpose as P;
    Ok(TriangularSolveOptions {
        left_side: o.left_side,
        lower: o.lower,
        unit_diagonal: o.unit_diagonal,
        transpose_a: match P::try_from(o.transpose_a) {
            Ok(P::Invalid) => None,
            Ok(P::NoTranspose) => Some(Transpose::NoTranspose),
            Ok(P::Transpose) => Some(Transpose::Transpose),
            Ok(P::Adjoint) => Some(Transpose::Adjoint),
            Err(_) => return Err(ProtoError::Transpose(o.transpose_a)),
        },
    })
}
