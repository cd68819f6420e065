//! [`Thunk`] → `ThunkProto`: the inverse of decoding. A command buffer is not a schema kind: its
//! commands are inlined into the enclosing sequence, so encoding after the load-time passes gives
//! back the artifact's thunks.
use proto::xla::buffer_assignment::BufferAllocationSliceProto;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;

use super::*;

/// Encodes a sequence (command buffers inlined).
pub fn encode_sequence(thunks: &[Thunk]) -> Vec<ThunkProto> {
    let mut out = Vec::with_capacity(thunks.len());
    for t in thunks {
        if let ThunkKind::CommandBuffer(cb) = &t.kind {
            out.extend(encode_sequence(&cb.commands));
        } else {
            out.push(encode(t));
        }
    }
    out
}

fn seq(thunks: &[Thunk]) -> ThunkSequenceProto {
    ThunkSequenceProto {
        thunks: encode_sequence(thunks),
    }
}

fn sl(s: &Slice) -> BufferAllocationSliceProto {
    BufferAllocationSliceProto {
        offset: s.offset as i64,
        size: s.size as i64,
        buffer_allocation_index: s.allocation as i64,
    }
}

fn shaped(s: &ShapedSlice) -> ShapedSliceProto {
    ShapedSliceProto {
        slice: Some(sl(&s.slice)),
        shape: s.shape.clone(),
    }
}

fn dim(d: [u32; 3]) -> Dim3DProto {
    Dim3DProto {
        x: d[0].into(),
        y: d[1].into(),
        z: d[2].into(),
    }
}

fn launch(grid: [u32; 3], block: [u32; 3]) -> LaunchDimensionsProto {
    // The v1 numbers (1, 2), which every runtime reads; see LaunchDimensionsProto.
    LaunchDimensionsProto {
        block_counts: Some(dim(grid)),
        thread_counts_per_block: Some(dim(block)),
        ..Default::default()
    }
}

fn layout(l: &MatrixLayout) -> MatrixLayoutProto {
    MatrixLayoutProto {
        order: match l.order {
            Order::RowMajor => matrix_layout_proto::Order::RowMajor as i32,
            Order::ColumnMajor => matrix_layout_proto::Order::ColumnMajor as i32,
        },
        num_rows: l.num_rows as i64,
        num_cols: l.num_cols as i64,
        batch_size: l.batch_size as i64,
        leading_dim_stride: l.leading_dim_stride as i64,
        batch_stride: l.batch_stride as i64,
        transpose: l.transpose,
        dtype: l.dtype.to_proto(),
    }
}

fn reduction(r: ReductionKind) -> i32 {
    (match r {
        ReductionKind::Sum => ReductionKindProto::ReductionKindSum,
        ReductionKind::Product => ReductionKindProto::ReductionKindProduct,
        ReductionKind::Min => ReductionKindProto::ReductionKindMin,
        ReductionKind::Max => ReductionKindProto::ReductionKindMax,
    }) as i32
}

fn nullable(v: &[Option<ShapedSlice>]) -> Vec<NullableShapedSliceProto> {
    v.iter()
        .map(|s| NullableShapedSliceProto {
            shaped_slice: s.as_ref().map(shaped),
        })
        .collect()
}

/// Encodes one thunk. A command buffer encodes as a `sequential_thunk` of its commands (use
/// [`encode_sequence`] to inline it instead).
pub fn encode(t: &Thunk) -> ThunkProto {
    let imp = match &t.kind {
        ThunkKind::Sequential(v) => Impl::SequentialThunk(SequentialThunkProto {
            thunks: encode_sequence(v),
        }),
        ThunkKind::CommandBuffer(cb) => Impl::SequentialThunk(SequentialThunkProto {
            thunks: encode_sequence(&cb.commands),
        }),
        ThunkKind::Copy {
            source,
            destination,
            size,
        } => Impl::CopyThunk(CopyThunkProto {
            // The v1 numbers (1, 2), which every runtime reads; see CopyThunkProto.
            source_buffer: Some(sl(source)),
            destination_buffer: Some(sl(destination)),
            mem_size: *size as i64,
            ..Default::default()
        }),
        ThunkKind::Conditional(c) => Impl::ConditionalThunk(ConditionalThunkProto {
            branch_index_buffer: Some(shaped(&c.selector)),
            branch_thunks: c.branches.iter().map(|b| seq(b)).collect(),
            branch_index_is_bool: c.selector_is_bool,
        }),
        ThunkKind::While(w) => Impl::WhileThunk(WhileThunkProto {
            condition_result_buffer_index: Some(sl(&w.condition_result)),
            condition_thunk_sequence: Some(seq(&w.condition)),
            body_thunk_sequence: Some(seq(&w.body)),
            trip_count: w.trip_count,
        }),
        ThunkKind::Kernel(k) => Impl::KernelThunk(KernelThunkProto {
            args: k.args.iter().map(sl).collect(),
            written: k.written.clone(),
            kernel_name: k.kernel_name.clone(),
            launch_dimensions: Some(launch(k.grid, k.block)),
            shmem_bytes: k.shmem_bytes.into(),
            args_shape: k.args_shape.clone(),
            kernel_binary: Some(KernelBinaryProto {
                ptx: k.module.text.clone(),
                cubin: k.module.cubin.clone(),
            }),
        }),
        ThunkKind::Gemm(g) => Impl::GemmThunk(GemmThunkProto {
            gemm_config: Some(GemmConfigProto {
                lhs_layout: Some(layout(&g.config.lhs)),
                rhs_layout: Some(layout(&g.config.rhs)),
                output_layout: Some(layout(&g.config.output)),
                alpha_real: g.config.alpha_real,
                alpha_imag: g.config.alpha_imag,
                beta: g.config.beta,
                compute_type: g.config.compute_type.to_proto(),
                operand_precisions: g.config.operand_precisions.clone(),
            }),
            lhs_buffer: Some(sl(&g.lhs)),
            rhs_buffer: Some(sl(&g.rhs)),
            output_buffer: Some(sl(&g.output)),
            workspace: g.workspace.as_ref().map(sl),
            deterministic: g.deterministic,
            // The config stays at the v1 number (1), which every runtime reads; see
            // GemmThunkProto.
            gemm_config_xyz: None,
        }),
        ThunkKind::Convolution(c) => Impl::ConvolutionThunk(ConvolutionThunkProto {
            conv_descriptor: Some(c.descriptor.clone()),
            operand_buffers: c.operands.iter().map(sl).collect(),
            result_buffers: vec![sl(&c.result)],
            scratch_buffer: c.scratch.as_ref().map(sl),
        }),
        ThunkKind::Fft(f) => Impl::FftThunk(FftThunkProto {
            fft_type: match f.kind {
                FftKind::Fft => proto::xla::FftType::Fft,
                FftKind::Ifft => proto::xla::FftType::Ifft,
                FftKind::Rfft => proto::xla::FftType::Rfft,
                FftKind::Irfft => proto::xla::FftType::Irfft,
            } as i32,
            // Lengths were validated positive (< 2^63) at decode.
            fft_length: f.lengths.iter().map(|&l| l as i64).collect(),
            input_buffer: Some(sl(&f.input)),
            output_buffer: Some(sl(&f.output)),
            input_shape: Some(f.input_shape.clone()),
            output_shape: Some(f.output_shape.clone()),
        }),
        ThunkKind::ReplicaId(s) => Impl::ReplicaIdThunk(ReplicaIdThunkProto {
            dest_buffer: Some(sl(s)),
        }),
        ThunkKind::PartitionId(s) => Impl::PartitionIdThunk(PartitionIdThunkProto {
            dest_buffer: Some(sl(s)),
        }),
        ThunkKind::Memzero(s) => Impl::MemzeroThunk(MemzeroThunkProto {
            dest_buffer: Some(shaped(s)),
        }),
        ThunkKind::Memset32 { destination, value } => {
            Impl::Memset32bitValueThunk(Memset32BitValueThunkProto {
                dest_buffer: Some(sl(destination)),
                value: *value,
            })
        }
        ThunkKind::Memset8 { destination, value } => {
            Impl::Memset8bitValueThunk(Memset8BitValueThunkProto {
                dest_buffer: Some(sl(destination)),
                value: u32::from(*value),
            })
        }
        ThunkKind::CustomCall(c) => Impl::CustomCallThunk(CustomCallThunkProto {
            target_name: c.target_name.clone(),
            operands: nullable(&c.operands),
            results: nullable(&c.results),
            opaque: c.opaque.clone(),
            api_version: c.api_version,
            // The v1 number (6), which every runtime reads; see CustomCallThunkProto.
            attributes: c.attributes.clone(),
            called_computation: c.called_computation.clone(),
            attributes_xyz: Default::default(),
        }),
        ThunkKind::CustomKernel(k) => {
            use proto::stream_executor::{
                kernel_loader_spec_proto::Payload, BlockDimProto, CudaCubinProto, CudaPtxProto,
                Dim3DProto as SeDim3, InProcessSymbolProto, KernelLoaderSpecProto, ThreadDimProto,
            };
            let d = |v: [u32; 3]| {
                Some(SeDim3 {
                    x: v[0].into(),
                    y: v[1].into(),
                    z: v[2].into(),
                })
            };
            let payload = match &k.code {
                KernelCode::Ptx(p) => Some(Payload::Ptx(CudaPtxProto { data: p.clone() })),
                KernelCode::Cubin(c) => Some(Payload::Cubin(CudaCubinProto { data: c.clone() })),
                KernelCode::Symbol(s) => Some(Payload::InProcessSymbol(InProcessSymbolProto {
                    persistent_name: s.clone(),
                })),
                KernelCode::None => None,
            };
            Impl::CustomKernelThunk(CustomKernelThunkProto {
                args: k.args.iter().map(shaped).collect(),
                written: k.written.clone(),
                custom_kernel: Some(CustomKernelProto {
                    name: k.name.clone(),
                    kernel_spec: Some(KernelLoaderSpecProto {
                        payload,
                        arity: 0,
                        kernel_name: k.name.clone(),
                    }),
                    block_dims: Some(BlockDimProto {
                        coordinates: d(k.grid),
                    }),
                    thread_dims: Some(ThreadDimProto {
                        coordinates: d(k.block),
                    }),
                    cluster_dim: None,
                    shared_memory_bytes: k.shared_memory_bytes.into(),
                }),
            })
        }
        ThunkKind::Collective(c) => {
            let config = Some(CollectiveConfigProto {
                operand_element_type: c
                    .config
                    .element_types
                    .iter()
                    .map(|t| t.to_proto())
                    .collect(),
                replica_groups: c
                    .config
                    .replica_groups
                    .iter()
                    .map(|g| proto::xla::ReplicaGroup {
                        replica_ids: g.clone(),
                    })
                    .collect(),
                // The v1 number (3), which every runtime reads; see CollectiveConfigProto.
                group_mode: c.config.group_mode,
                op_id: c.config.op_id,
                use_symmetric_buffer: c.config.use_symmetric_buffer,
                group_mode_xyz: None,
                op_id_xyz: None,
            });
            let buffers: Vec<CollectiveBufferProto> = c
                .buffers
                .iter()
                .map(|b| CollectiveBufferProto {
                    element_count: b.element_count as i64,
                    source_buffer: Some(sl(&b.source)),
                    destination_buffer: Some(sl(&b.destination)),
                    source_memory_space: b.source_memory_space,
                    destination_memory_space: b.destination_memory_space,
                    // The v1 numbers (2, 3), which every runtime reads; see CollectiveBufferProto.
                    ..Default::default()
                })
                .collect();
            match &c.op {
                CollectiveOp::AllGather => Impl::AllGatherStartThunk(AllGatherStartThunkProto {
                    collective_config: config,
                    buffers,
                }),
                CollectiveOp::AllReduce(r) => Impl::AllReduceStartThunk(AllReduceStartThunkProto {
                    collective_config: config,
                    buffers,
                    reduction_kind: reduction(*r),
                }),
                CollectiveOp::ReduceScatter(r) => {
                    Impl::ReduceScatterThunk(ReduceScatterThunkProto {
                        collective_config: config,
                        buffers,
                        reduction_kind: reduction(*r),
                    })
                }
                CollectiveOp::AllToAll {
                    has_split_dimension,
                } => Impl::AllToAllStartThunk(AllToAllStartThunkProto {
                    collective_config: config,
                    buffers,
                    has_split_dimension: *has_split_dimension,
                }),
                CollectiveOp::CollectivePermute {
                    source_target_pairs,
                } => Impl::CollectivePermuteStartThunk(CollectivePermuteStartThunkProto {
                    buffers,
                    collective_config: config,
                    source_target_pairs: source_target_pairs
                        .iter()
                        .map(|&(source, target)| proto::xla::SourceTarget { source, target })
                        .collect(),
                }),
            }
        }
    };
    ThunkProto {
        thunk_info: Some(ThunkInfoProto {
            profile_annotation: t.info.profile_annotation.clone(),
            thunk_id: t.info.thunk_id,
            execution_stream_id: t.info.execution_stream_id,
            concurrent_region_id: None,
        }),
        r#impl: Some(imp),
    }
}
