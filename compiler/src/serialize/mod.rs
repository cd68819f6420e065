//! Serialization: assembles the `GpuExecutableProto` from the lowered program and the buffer
//! assignment (see docs/artifact.md for the meaning of every field).
use hlo::{HloModule, Layout, Shape};
use proto::xla::gpu as pg;
use proto::xla::gpu::gpu_executable_proto as gep;

use crate::buffers::{Assignment, CONSTANT_ALIGNMENT};
use crate::error::{CompileError, MalformedModule};
use crate::lower::{Lowered, Op};
use crate::target::Target;

mod collective;
mod control;
mod conv;
mod copy;
mod custom_call;
mod device_id;
mod fft;
mod gemm;
mod kernel;
mod memset;

/// A shape with the default row-major layout on every array.
pub fn row_major(shape: &Shape) -> Shape {
    match shape {
        Shape::Array(a) => {
            let mut a = a.clone();
            a.layout = Some(Layout::default_for_rank(a.dims.len()));
            Shape::Array(a)
        }
        Shape::Tuple(t) => Shape::Tuple(t.iter().map(row_major).collect()),
        Shape::Token => Shape::Token,
    }
}

fn shape_proto(shape: &Shape) -> Result<proto::xla::ShapeProto, CompileError> {
    hlo::shape_to_proto(&row_major(shape))
        .map_err(|e| CompileError::Embed(format!("shape {shape}: {e}")))
}

/// A custom call's operand or result leaves as shaped slices. A layout the target asked for
/// (column-major LAPACK operands) is kept; every other shape is written row-major.
fn shaped_slices(
    asg: &Assignment,
    leaves: &[(crate::lower::Loc, Shape)],
) -> Result<Vec<pg::NullableShapedSliceProto>, CompileError> {
    let laid_out = |s: &Shape| match s.layout() {
        Some(_) => {
            hlo::shape_to_proto(s).map_err(|e| CompileError::Embed(format!("shape {s}: {e}")))
        }
        None => shape_proto(s),
    };
    leaves
        .iter()
        .map(|(loc, s)| {
            Ok(pg::NullableShapedSliceProto {
                shaped_slice: Some(pg::ShapedSliceProto {
                    slice: Some(asg.slice(*loc)?),
                    shape: Some(laid_out(s)?),
                }),
            })
        })
        .collect()
}

/// Emits the thunks of a lowered sequence: the dispatch on the op's kind, each kind written by
/// a module of its own (`kernel`, `gemm`, `memset`, `copy`, `control`, `fft`, `conv`, `device_id`,
/// `custom_call`, `collective`).
struct ThunkBuilder<'a> {
    asg: &'a Assignment,
    next_id: i64,
    /// `CompileOptions::emit_launch_dims_at_1000`.
    launch_dims_at_1000: bool,
    /// `CompileOptions::emit_copy_slices_at_1000`.
    copy_slices_at_1000: bool,
    /// `CompileOptions::emit_group_mode_at_1001`.
    group_mode_at_1001: bool,
    /// `CompileOptions::emit_gemm_config_at_1000`.
    gemm_config_at_1000: bool,
    /// `CompileOptions::emit_collective_slices_at_1000`.
    collective_slices_at_1000: bool,
    /// `CompileOptions::emit_op_id_at_1000`.
    op_id_at_1000: bool,
    /// What each kernel's PTX header is held to.
    target: &'a Target,
}

impl ThunkBuilder<'_> {
    fn info(&mut self, name: &str) -> Option<pg::ThunkInfoProto> {
        let id = self.next_id;
        self.next_id += 1;
        Some(pg::ThunkInfoProto {
            profile_annotation: name.to_owned(),
            thunk_id: id,
            execution_stream_id: 0,
            concurrent_region_id: None,
        })
    }

    fn sequence(&mut self, ops: &[Op]) -> Result<Vec<pg::ThunkProto>, CompileError> {
        ops.iter().map(|op| self.thunk(op)).collect()
    }

    /// One op's thunk. Its id is taken before those of the thunks nested in it (a loop's
    /// condition and body, a conditional's branches).
    fn thunk(&mut self, op: &Op) -> Result<pg::ThunkProto, CompileError> {
        let thunk_info = self.info(op.name());
        let imp = match op {
            Op::Kernel {
                name: _,
                kernel,
                args,
            } => kernel::thunk(self, kernel, args)?,
            Op::Gemm {
                name: _,
                config,
                lhs,
                rhs,
                out,
            } => gemm::thunk(self, config, [*lhs, *rhs, *out])?,
            Op::Memset8 {
                name: _,
                dst,
                value,
            } => memset::memset8(self, *dst, *value)?,
            Op::Fill32 {
                name: _,
                dst,
                shape,
                word,
            } => memset::fill32(self, *dst, shape, *word)?,
            Op::Copy { name: _, src, dst } => copy::thunk(self, *src, *dst)?,
            Op::While {
                name: _,
                pred,
                cond,
                body,
                trip_count,
            } => control::while_loop(self, *pred, cond, body, *trip_count)?,
            Op::Conditional {
                name: _,
                index,
                index_shape,
                is_bool,
                branches,
            } => control::conditional(self, *index, index_shape, *is_bool, branches)?,
            Op::Convolution { .. } => {
                pg::thunk_proto::Impl::ConvolutionThunk(conv::convolution_thunk(self.asg, op)?)
            }
            Op::Fft {
                name: _,
                fft_type,
                fft_length,
                input,
                output,
            } => fft::thunk(self, *fft_type, fft_length, input, output)?,
            Op::DeviceId {
                name: _,
                partition,
                dst,
            } => device_id::thunk(self, *partition, *dst)?,
            Op::CustomCall {
                name: _,
                target,
                operands,
                results,
                opaque,
                attributes,
                api_version,
            } => custom_call::thunk(
                self,
                target,
                [operands, results],
                opaque,
                attributes,
                *api_version,
            )?,
            Op::Collective {
                name: _,
                kind,
                reduction,
                config,
                buffers,
                source_target_pairs,
            } => collective::thunk(
                self,
                collective::Collective {
                    kind: *kind,
                    reduction: *reduction,
                    config,
                    buffers,
                    source_target_pairs,
                },
            )?,
        };
        Ok(pg::ThunkProto {
            thunk_info,
            r#impl: Some(imp),
        })
    }
}

/// Builds the executable proto.
pub fn build(
    input: &HloModule,
    lowered: &Lowered,
    asg: &Assignment,
    target: &Target,
    options: &crate::CompileOptions,
) -> Result<pg::GpuExecutableProto, CompileError> {
    let mut write = hlo::WriteOptions::default();
    write.spmd_propagation_at_xla_numbers = options.emit_spmd_propagation_xla;
    write.frontend_attributes_at_19 = options.emit_module_frontend_attributes_19;
    write.narrow_floats_at_xla_numbers = options.emit_narrow_floats_xla;
    write.omit_dot_algorithm = !options.emit_dot_algorithm;
    let embedded =
        hlo::to_proto_with(input, &write).map_err(|e| CompileError::Embed(e.to_string()))?;
    let entry = input.entry_computation();
    let params = entry.param_shapes();
    let result = entry
        .root_instruction()
        .map(|r| r.shape.clone())
        .ok_or(CompileError::Malformed(MalformedModule::EmptyEntry))?;
    let program_shape = proto::xla::ProgramShapeProto {
        parameters: params
            .iter()
            .map(|s| shape_proto(s))
            .collect::<Result<_, _>>()?,
        result: Some(shape_proto(&result)?),
        parameter_names: entry
            .params
            .iter()
            .filter_map(|&p| entry.get(p))
            .map(|i| i.name.clone())
            .collect(),
    };
    let mut allocations = asg.allocations.clone();
    let mut output_info_map = Vec::new();
    for out in &lowered.outputs {
        let slice = asg.slice(out.loc)?;
        if slice.offset != 0 {
            return Err(CompileError::Internal(
                "an output does not start its allocation".into(),
            ));
        }
        if let Some(a) = allocations.get_mut(slice.buffer_allocation_index as usize) {
            a.maybe_live_out = true;
        }
        let alias_config =
            out.alias.as_ref().map(
                |a| proto::xla::hlo_input_output_alias_proto::AliasEntryProto {
                    output_shape_index: a.output_index.clone(),
                    parameter_number: a.param_number,
                    parameter_shape_index: a.param_index.clone(),
                    kind: match a.kind.as_deref() {
                        Some("must-alias") => proto::xla::Kind::MustAlias as i32,
                        _ => proto::xla::Kind::MayAlias as i32,
                    },
                },
            );
        output_info_map.push(gep::OutputInfoMapEntry {
            shape_index: Some(proto::xla::ShapeIndexProto {
                indices: out.index.clone(),
            }),
            output_info: Some(gep::OutputInfoProto {
                allocation_index: slice.buffer_allocation_index,
                passthrough: out.passthrough,
                alias_config,
            }),
        });
    }
    let mut binary = Vec::new();
    let mut constants = Vec::new();
    for (symbol, alloc, bytes) in &asg.constants {
        while binary.len() % CONSTANT_ALIGNMENT != 0 {
            binary.push(0);
        }
        constants.push(gep::ConstantInfoProto {
            symbol_name: symbol.clone(),
            offset_in_binary: binary.len() as i64,
            size: bytes.len() as i64,
            allocation_index: *alloc,
        });
        binary.extend_from_slice(bytes);
    }
    let mut tb = ThunkBuilder {
        asg,
        next_id: 1,
        launch_dims_at_1000: options.emit_launch_dims_at_1000,
        copy_slices_at_1000: options.emit_copy_slices_at_1000,
        group_mode_at_1001: options.emit_group_mode_at_1001,
        gemm_config_at_1000: options.emit_gemm_config_at_1000,
        collective_slices_at_1000: options.emit_collective_slices_at_1000,
        op_id_at_1000: options.emit_op_id_at_1000,
        target,
    };
    let thunks = tb.sequence(&lowered.ops)?;
    let mut exe = pg::GpuExecutableProto {
        hlo_module_with_config: Some(embedded),
        binary,
        gpu_compute_capability: Some(target.compute_capability_proto()),
        module_name: input.name.clone(),
        program_shape: Some(program_shape),
        buffer_allocations: Some(gep::RepeatedBufferAllocations {
            values: allocations,
        }),
        output_info_map,
        constants,
        thunks,
        executable_abi_version: Some(target.abi_version()),
    };
    if options.emit_narrow_floats_xla {
        // The module is written at XLA's numbers already (`write`); the element types outside it
        // are everywhere a `ShapeProto` or a bare `xla.PrimitiveType` appears (`program_shape`,
        // custom-call and conditional shaped slices, kernel `args_shape`, gemm layouts and compute
        // types, collective operand types), so one reflective walk over the whole executable
        // renumbers them all, and any such field added to the schema later, where per-field code
        // would miss the next one.
        proto::map_enum_values(
            &mut exe,
            "xla.PrimitiveType",
            hlo::element_type_at_xla_number,
        )
        .map_err(|e| CompileError::Internal(format!("narrow float numbers: {e}")))?;
    }
    Ok(exe)
}
