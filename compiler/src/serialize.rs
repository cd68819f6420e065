//! Serialization: assembles the `GpuExecutableProto` from the lowered program and the buffer
//! assignment (see docs/artifact.md for the meaning of every field).
use hlo::{HloModule, Layout, Shape};
use proto::xla::gpu as pg;
use proto::xla::gpu::gpu_executable_proto as gep;

use crate::buffers::{Assignment, CONSTANT_ALIGNMENT};
use crate::error::CompileError;
use crate::lower::{Lowered, Op};
use crate::target::Target;

mod conv;

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
    hlo::convert::shape_to_proto(&row_major(shape))
        .map_err(|e| CompileError::Embed(format!("shape {shape}: {e}")))
}

/// A custom call's operand or result leaves as shaped slices. A layout the target asked for
/// (column-major LAPACK operands) is kept; every other shape is written row-major.
fn shaped_slices(
    asg: &Assignment,
    leaves: &[(crate::lower::Loc, Shape)],
) -> Result<Vec<pg::NullableShapedSliceProto>, CompileError> {
    let laid_out = |s: &Shape| match s.layout() {
        Some(_) => hlo::convert::shape_to_proto(s)
            .map_err(|e| CompileError::Embed(format!("shape {s}: {e}"))),
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

struct ThunkBuilder<'a> {
    asg: &'a Assignment,
    next_id: i64,
    /// `CompileOptions::emit_launch_dims_xyz`.
    launch_dims_xyz: bool,
    /// `CompileOptions::emit_copy_slices_xyz`.
    copy_slices_xyz: bool,
    /// `CompileOptions::emit_group_mode_xyz`.
    group_mode_xyz: bool,
    /// `CompileOptions::emit_gemm_config_xyz`.
    gemm_config_xyz: bool,
    /// `CompileOptions::emit_collective_slices_xyz`.
    collective_slices_xyz: bool,
    /// `CompileOptions::emit_op_id_xyz`.
    op_id_xyz: bool,
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

    fn thunk(&mut self, op: &Op) -> Result<pg::ThunkProto, CompileError> {
        use pg::thunk_proto::Impl;
        let asg = self.asg;
        Ok(match op {
            Op::Kernel { name, kernel, args } => {
                self.target.check_kernel_ptx(&kernel.name, &kernel.ptx)?;
                let thunk_info = self.info(name);
                let l = kernel.launch;
                let dim = |v: [u32; 3]| pg::Dim3DProto {
                    x: v[0].into(),
                    y: v[1].into(),
                    z: v[2].into(),
                };
                pg::ThunkProto {
                    thunk_info,
                    r#impl: Some(Impl::KernelThunk(pg::KernelThunkProto {
                        args: args
                            .iter()
                            .map(|&a| asg.slice(a))
                            .collect::<Result<_, _>>()?,
                        written: kernel.written.clone(),
                        kernel_name: kernel.name.clone(),
                        launch_dimensions: Some(if self.launch_dims_xyz {
                            pg::LaunchDimensionsProto {
                                block_counts_xyz: Some(dim(l.grid)),
                                thread_counts_per_block_xyz: Some(dim(l.block)),
                                ..Default::default()
                            }
                        } else {
                            pg::LaunchDimensionsProto {
                                block_counts: Some(dim(l.grid)),
                                thread_counts_per_block: Some(dim(l.block)),
                                ..Default::default()
                            }
                        }),
                        shmem_bytes: kernel.dynamic_shared_bytes.into(),
                        args_shape: Vec::new(),
                        kernel_binary: Some(pg::KernelBinaryProto {
                            ptx: kernel.ptx.clone(),
                            cubin: Vec::new(),
                        }),
                    })),
                }
            }
            Op::Gemm {
                name,
                config,
                lhs,
                rhs,
                out,
            } => pg::ThunkProto {
                thunk_info: self.info(name),
                r#impl: Some(Impl::GemmThunk(pg::GemmThunkProto {
                    // Behind the flag the config moves to 1000 and 1 stays unset.
                    gemm_config: (!self.gemm_config_xyz).then(|| config.clone()),
                    gemm_config_xyz: self.gemm_config_xyz.then(|| config.into()),
                    lhs_buffer: Some(asg.slice(*lhs)?),
                    rhs_buffer: Some(asg.slice(*rhs)?),
                    output_buffer: Some(asg.slice(*out)?),
                    workspace: None,
                    deterministic: true,
                })),
            },
            Op::Memset8 { name, dst, value } => pg::ThunkProto {
                thunk_info: self.info(name),
                r#impl: Some(Impl::Memset8bitValueThunk(pg::Memset8BitValueThunkProto {
                    dest_buffer: Some(asg.slice(*dst)?),
                    value: u32::from(*value),
                })),
            },
            Op::Copy { name, src, dst } => pg::ThunkProto {
                thunk_info: self.info(name),
                r#impl: Some(Impl::CopyThunk(if self.copy_slices_xyz {
                    pg::CopyThunkProto {
                        source_buffer_xyz: Some(asg.slice(*src)?),
                        destination_buffer_xyz: Some(asg.slice(*dst)?),
                        mem_size: src.size.min(dst.size) as i64,
                        ..Default::default()
                    }
                } else {
                    pg::CopyThunkProto {
                        source_buffer: Some(asg.slice(*src)?),
                        destination_buffer: Some(asg.slice(*dst)?),
                        mem_size: src.size.min(dst.size) as i64,
                        ..Default::default()
                    }
                })),
            },
            Op::While {
                name,
                pred,
                cond,
                body,
                trip_count,
            } => {
                let thunk_info = self.info(name);
                let cond = self.sequence(cond)?;
                let body = self.sequence(body)?;
                pg::ThunkProto {
                    thunk_info,
                    r#impl: Some(Impl::WhileThunk(pg::WhileThunkProto {
                        condition_result_buffer_index: Some(asg.slice(*pred)?),
                        condition_thunk_sequence: Some(pg::ThunkSequenceProto { thunks: cond }),
                        body_thunk_sequence: Some(pg::ThunkSequenceProto { thunks: body }),
                        trip_count: *trip_count,
                    })),
                }
            }
            Op::Conditional {
                name,
                index,
                index_shape,
                is_bool,
                branches,
            } => {
                let thunk_info = self.info(name);
                let mut seqs = Vec::new();
                for b in branches {
                    seqs.push(pg::ThunkSequenceProto {
                        thunks: self.sequence(b)?,
                    });
                }
                pg::ThunkProto {
                    thunk_info,
                    r#impl: Some(Impl::ConditionalThunk(pg::ConditionalThunkProto {
                        branch_index_buffer: Some(pg::ShapedSliceProto {
                            slice: Some(asg.slice(*index)?),
                            shape: Some(shape_proto(index_shape)?),
                        }),
                        branch_thunks: seqs,
                        branch_index_is_bool: *is_bool,
                    })),
                }
            }
            Op::Convolution { name, .. } => pg::ThunkProto {
                thunk_info: self.info(name),
                r#impl: Some(Impl::ConvolutionThunk(conv::convolution_thunk(asg, op)?)),
            },
            Op::Fft {
                name,
                fft_type,
                fft_length,
                input,
                output,
            } => pg::ThunkProto {
                thunk_info: self.info(name),
                r#impl: Some(Impl::FftThunk(pg::FftThunkProto {
                    fft_type: *fft_type,
                    fft_length: fft_length.clone(),
                    input_buffer: Some(asg.slice(input.0)?),
                    output_buffer: Some(asg.slice(output.0)?),
                    input_shape: Some(shape_proto(&input.1)?),
                    output_shape: Some(shape_proto(&output.1)?),
                })),
            },
            Op::DeviceId {
                name,
                partition,
                dst,
            } => {
                let thunk_info = self.info(name);
                let dest_buffer = Some(asg.slice(*dst)?);
                pg::ThunkProto {
                    thunk_info,
                    r#impl: Some(if *partition {
                        Impl::PartitionIdThunk(pg::PartitionIdThunkProto { dest_buffer })
                    } else {
                        Impl::ReplicaIdThunk(pg::ReplicaIdThunkProto { dest_buffer })
                    }),
                }
            }
            Op::CustomCall {
                name,
                target,
                operands,
                results,
                opaque,
                attributes,
                api_version,
            } => pg::ThunkProto {
                thunk_info: self.info(name),
                r#impl: Some(Impl::CustomCallThunk(pg::CustomCallThunkProto {
                    target_name: target.clone(),
                    operands: shaped_slices(asg, operands)?,
                    results: shaped_slices(asg, results)?,
                    opaque: opaque.clone(),
                    api_version: *api_version,
                    // The typed FFI's attributes at 6, the number every runtime reads (1000 is
                    // read only by runtimes from 2026-12-01 on: the move waits for 2026-12-15,
                    // docs/artifact.md). Legacy calls keep their config in `opaque` and fill
                    // neither.
                    attributes: attributes.clone().into_iter().collect(),
                    called_computation: None,
                    attributes_xyz: Default::default(),
                })),
            },
            Op::Collective {
                name,
                kind,
                reduction,
                config,
                buffers,
                source_target_pairs,
            } => {
                let thunk_info = self.info(name);
                let buffers = buffers
                    .iter()
                    .map(|(count, src, dst)| {
                        let (src, dst) = (asg.slice(*src)?, asg.slice(*dst)?);
                        // Behind the flag the slices move to 1000/1001 and 2, 3 stay unset.
                        let xyz = self.collective_slices_xyz;
                        Ok(pg::CollectiveBufferProto {
                            element_count: *count,
                            source_buffer: (!xyz).then_some(src),
                            destination_buffer: (!xyz).then_some(dst),
                            source_memory_space: 0,
                            destination_memory_space: 0,
                            source_buffer_xyz: xyz.then_some(src),
                            destination_buffer_xyz: xyz.then_some(dst),
                        })
                    })
                    .collect::<Result<Vec<_>, CompileError>>()?;
                let mut config = config.clone();
                if self.group_mode_xyz {
                    // Behind the flag the mode moves to 1001 and 3 stays unset (UNSPECIFIED).
                    config.group_mode_xyz = Some(std::mem::take(&mut config.group_mode));
                }
                if self.op_id_xyz {
                    // Behind the flag the channel id moves to 1000 and 4 stays unset (0).
                    config.op_id_xyz = Some(std::mem::take(&mut config.op_id));
                }
                let collective_config = Some(config);
                let imp = collective_impl(
                    *kind,
                    *reduction,
                    collective_config,
                    buffers,
                    source_target_pairs,
                );
                pg::ThunkProto {
                    thunk_info,
                    r#impl: Some(imp),
                }
            }
        })
    }
}

/// The thunk of a collective: its kind's oneof case with the config, buffers and (a
/// collective-permute's) pairs.
fn collective_impl(
    kind: hlo::Opcode,
    reduction: pg::ReductionKindProto,
    collective_config: Option<pg::CollectiveConfigProto>,
    buffers: Vec<pg::CollectiveBufferProto>,
    source_target_pairs: &[(i64, i64)],
) -> pg::thunk_proto::Impl {
    use pg::thunk_proto::Impl;
    match kind {
        hlo::Opcode::AllReduce => Impl::AllReduceStartThunk(pg::AllReduceStartThunkProto {
            collective_config,
            buffers,
            reduction_kind: reduction as i32,
        }),
        hlo::Opcode::AllGather => Impl::AllGatherStartThunk(pg::AllGatherStartThunkProto {
            collective_config,
            buffers,
        }),
        hlo::Opcode::CollectivePermute => {
            Impl::CollectivePermuteStartThunk(pg::CollectivePermuteStartThunkProto {
                buffers,
                collective_config,
                source_target_pairs: source_target_pairs
                    .iter()
                    .map(|&(source, target)| proto::xla::SourceTarget { source, target })
                    .collect(),
            })
        }
        _ => Impl::ReduceScatterThunk(pg::ReduceScatterThunkProto {
            collective_config,
            buffers,
            reduction_kind: reduction as i32,
        }),
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
    let mut write = hlo::convert::WriteOptions::default();
    write.spmd_propagation_at_xla_numbers = options.emit_spmd_propagation_xla;
    write.frontend_attributes_at_19 = options.emit_module_frontend_attributes_19;
    write.narrow_floats_at_xla_numbers = options.emit_narrow_floats_xla;
    let embedded = hlo::convert::to_proto_with(input, &write)
        .map_err(|e| CompileError::Embed(e.to_string()))?;
    let entry = input.entry_computation();
    let params = entry.param_shapes();
    let result = entry
        .root_instruction()
        .map(|r| r.shape.clone())
        .ok_or_else(|| CompileError::InvalidModule("the entry computation is empty".into()))?;
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
        launch_dims_xyz: options.emit_launch_dims_xyz,
        copy_slices_xyz: options.emit_copy_slices_xyz,
        group_mode_xyz: options.emit_group_mode_xyz,
        gemm_config_xyz: options.emit_gemm_config_xyz,
        collective_slices_xyz: options.emit_collective_slices_xyz,
        op_id_xyz: options.emit_op_id_xyz,
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
            hlo::convert::element_type_at_xla_number,
        )
        .map_err(|e| CompileError::Internal(format!("narrow float numbers: {e}")))?;
    }
    Ok(exe)
}
