//! An instruction outside any fusion: forwarding, constants, gemms, control flow, replica and
//! partition ids, custom calls and collectives (dispatched to their own files).
use hlo::Computation;
use hlo::{InstrId, Instruction, Opcode, PrimitiveType, Shape};
use proto::xla::gpu as pg;

use crate::error::{CompileError, MalformedModule};
use crate::fusion::{self};
use crate::passes::gemm_operands;
use crate::unsupported::{Unsupported, UnsupportedCustomCall, UnsupportedGemm};

use super::*;

impl Lowerer<'_> {
    pub(super) fn lower_single(
        &mut self,
        comp: &Computation,
        id: InstrId,
        env: &mut [Option<Vec<Loc>>],
        ops: &mut Vec<Op>,
    ) -> Result<(), CompileError> {
        let instr = comp[id].clone();
        let set = |env: &mut [Option<Vec<Loc>>], locs: Vec<Loc>| {
            if let Some(slot) = env.get_mut(id.index()) {
                *slot = Some(locs);
            }
        };
        let operand = |i: usize| -> Result<InstrId, CompileError> {
            instr.operands.get(i).copied().ok_or_else(|| {
                CompileError::unsupported(&comp.name, &instr, Unsupported::MissingOperand(i))
            })
        };
        match instr.opcode {
            Opcode::Parameter => {
                if env.get(id.index()).is_none_or(Option::is_none) {
                    return Err(CompileError::Malformed(
                        MalformedModule::ParameterNotListed {
                            parameter: instr.name.clone(),
                            computation: comp.name.clone(),
                        },
                    ));
                }
            }
            Opcode::Constant => {}
            Opcode::AfterAll => set(env, Vec::new()),
            Opcode::Tuple => {
                let mut all = Vec::new();
                for &o in &instr.operands {
                    all.extend(self.locs(comp, o, env)?);
                }
                set(env, all);
            }
            Opcode::GetTupleElement => {
                let src = operand(0)?;
                let locs = self.locs(comp, src, env)?;
                let shape = &comp[src].shape;
                let idx = instr
                    .attrs
                    .tuple_index
                    .and_then(|i| usize::try_from(i).ok());
                let elems = shape.tuple_shapes().unwrap_or(&[]);
                let Some(idx) = idx.filter(|&i| i < elems.len()) else {
                    return Err(CompileError::unsupported(
                        &comp.name,
                        &instr,
                        Unsupported::TupleIndexOutOfRange,
                    ));
                };
                let start: usize = elems[..idx].iter().map(leaf_count).sum();
                let n = leaf_count(&elems[idx]);
                let sub = locs
                    .get(start..start + n)
                    .map(<[Loc]>::to_vec)
                    .ok_or_else(|| {
                        CompileError::Internal(format!("{}: tuple leaves out of range", instr.name))
                    })?;
                set(env, sub);
            }
            Opcode::Bitcast | Opcode::Reshape => {
                let src = self.one_loc(comp, operand(0)?, env)?;
                let size = instr.shape.byte_size();
                if size > src.size {
                    return Err(CompileError::unsupported(
                        &comp.name,
                        &instr,
                        Unsupported::BitcastToLargerShape,
                    ));
                }
                set(env, vec![Loc { size, ..src }]);
            }
            Opcode::Slice => {
                let o = operand(0)?;
                let src = self.one_loc(comp, o, env)?;
                let off = fusion::slice_offset(&instr, &comp[o]);
                set(
                    env,
                    vec![Loc {
                        value: src.value,
                        offset: src.offset + off,
                        size: instr.shape.byte_size(),
                    }],
                );
            }
            Opcode::OptimizationBarrier | Opcode::AddDependency => {
                let l = self.locs(comp, operand(0)?, env)?;
                set(env, l);
            }
            Opcode::Dot => {
                let op = self.lower_dot(comp, &instr, env)?;
                let out = match &op {
                    Op::Gemm { out, .. } => *out,
                    _ => return Err(CompileError::Internal("dot did not lower to a gemm".into())),
                };
                ops.push(op);
                set(env, vec![out]);
            }
            Opcode::While => {
                let locs = self.lower_while(comp, &instr, env, ops)?;
                set(env, locs);
            }
            Opcode::Conditional => {
                let locs = self.lower_conditional(comp, &instr, env, ops)?;
                set(env, locs);
            }
            Opcode::Convolution => {
                let locs = self.lower_convolution(comp, &instr, env, ops)?;
                set(env, locs);
            }
            Opcode::Fft => {
                let src = operand(0)?;
                let input = self.one_loc(comp, src, env)?;
                let t = self.tick();
                self.use_loc(input, t);
                let out_shape = instr.shape.without_layout();
                let dst = self.temp(&out_shape, &instr.name, t);
                let fft_type = match instr.attrs.fft_type {
                    Some(hlo::FftType::Fft) | None => proto::xla::FftType::Fft,
                    Some(hlo::FftType::Ifft) => proto::xla::FftType::Ifft,
                    Some(hlo::FftType::Rfft) => proto::xla::FftType::Rfft,
                    Some(hlo::FftType::Irfft) => proto::xla::FftType::Irfft,
                } as i32;
                ops.push(Op::Fft {
                    name: instr.name.clone(),
                    fft_type,
                    fft_length: instr.attrs.fft_length.clone().unwrap_or_default(),
                    input: (input, comp[src].shape.without_layout()),
                    output: (dst, out_shape),
                });
                set(env, vec![dst]);
            }
            Opcode::ReplicaId | Opcode::PartitionId => {
                let t = self.tick();
                let dst = self.temp(&instr.shape, &instr.name, t);
                ops.push(Op::DeviceId {
                    name: instr.name.clone(),
                    partition: instr.opcode == Opcode::PartitionId,
                    dst,
                });
                set(env, vec![dst]);
            }
            Opcode::CustomCall => {
                let locs = self.lower_custom_call(comp, &instr, env, ops)?;
                set(env, locs);
            }
            Opcode::AllReduce
            | Opcode::AllGather
            | Opcode::ReduceScatter
            | Opcode::CollectivePermute => {
                let locs = self.lower_collective(comp, &instr, env, ops)?;
                set(env, locs);
            }
            _ => {
                return Err(CompileError::unsupported(
                    &comp.name,
                    &instr,
                    Unsupported::NoLowering,
                ))
            }
        }
        Ok(())
    }

    pub(super) fn lower_dot(
        &mut self,
        comp: &Computation,
        instr: &Instruction,
        env: &mut [Option<Vec<Loc>>],
    ) -> Result<Op, CompileError> {
        let bad = |why: UnsupportedGemm| CompileError::unsupported(&comp.name, instr, why);
        let (ll, rl) = gemm_operands::dot_layouts(comp, instr)
            .ok_or_else(|| bad(UnsupportedGemm::DimensionNumbers))?;
        let lt =
            gemm_operands::in_place(&ll, true).ok_or_else(|| bad(UnsupportedGemm::LhsLayout))?;
        let rt =
            gemm_operands::in_place(&rl, false).ok_or_else(|| bad(UnsupportedGemm::RhsLayout))?;
        let (&l_id, &r_id) = match instr.operands.as_slice() {
            [l, r] => (l, r),
            _ => return Err(bad(UnsupportedGemm::Operands)),
        };
        let (ls, rs) = (&comp[l_id].shape, &comp[r_id].shape);
        let prod = |s: &Shape, dims: &[usize]| -> i64 {
            dims.iter()
                .map(|&d| s.dims().get(d).copied().unwrap_or(1))
                .product()
        };
        let batch = prod(ls, &ll.batch);
        if batch != prod(rs, &rl.batch) {
            return Err(bad(UnsupportedGemm::BatchSizes));
        }
        let m = prod(ls, &ll.free);
        let k = prod(ls, &ll.contracting);
        if k != prod(rs, &rl.contracting) {
            return Err(bad(UnsupportedGemm::ContractingSizes));
        }
        let n = prod(rs, &rl.free);
        let ty = |s: &Shape| -> Result<(PrimitiveType, i32), CompileError> {
            let t = s
                .element_type()
                .ok_or_else(|| bad(UnsupportedGemm::NotAnArray))?;
            let p =
                hlo::element_type_to_proto(t).ok_or_else(|| bad(UnsupportedGemm::ElementType))?;
            Ok((t, p as i32))
        };
        let (lty, lp) = ty(ls)?;
        let (rty, rp) = ty(rs)?;
        let (_, op) = ty(&instr.shape)?;
        use PrimitiveType as P;
        let compute = match (lty, rty) {
            (P::F32 | P::F16 | P::Bf16, P::F32 | P::F16 | P::Bf16) => {
                proto::xla::PrimitiveType::F32
            }
            (P::F64, P::F64) => proto::xla::PrimitiveType::F64,
            (P::S8 | P::S32, P::S8 | P::S32) => proto::xla::PrimitiveType::S32,
            _ => return Err(bad(UnsupportedGemm::Types { lhs: lty, rhs: rty })),
        } as i32;
        let layout = |rows: i64, cols: i64, transpose: bool, dtype: i32| pg::MatrixLayoutProto {
            order: pg::matrix_layout_proto::Order::RowMajor as i32,
            num_rows: rows,
            num_cols: cols,
            batch_size: batch,
            leading_dim_stride: cols,
            batch_stride: rows * cols,
            transpose,
            dtype,
        };
        let lhs_layout = if lt {
            layout(k, m, true, lp)
        } else {
            layout(m, k, false, lp)
        };
        let rhs_layout = if rt {
            layout(n, k, true, rp)
        } else {
            layout(k, n, false, rp)
        };
        let precision = instr
            .attrs
            .operand_precision
            .iter()
            .flatten()
            .map(|p| match p {
                hlo::Precision::Default => proto::xla::precision_config::Precision::Default as i32,
                hlo::Precision::High => proto::xla::precision_config::Precision::High as i32,
                hlo::Precision::Highest => proto::xla::precision_config::Precision::Highest as i32,
            })
            .collect();
        let config = pg::GemmConfigProto {
            lhs_layout: Some(lhs_layout),
            rhs_layout: Some(rhs_layout),
            output_layout: Some(layout(m, n, false, op)),
            alpha_real: 1.0,
            alpha_imag: 0.0,
            beta: 0.0,
            compute_type: compute,
            operand_precisions: precision,
        };
        let lhs = self.one_loc(comp, l_id, env)?;
        let rhs = self.one_loc(comp, r_id, env)?;
        let t = self.tick();
        self.use_loc(lhs, t);
        self.use_loc(rhs, t);
        let out = self.temp(&instr.shape, &instr.name, t);
        Ok(Op::Gemm {
            name: instr.name.clone(),
            config,
            lhs,
            rhs,
            out,
        })
    }
}

impl Lowerer<'_> {
    /// A custom call: its operands with the layouts the target reads (the custom-call-layouts
    /// pass laid the bytes out so), fresh results, the API version, and the backend config as
    /// opaque bytes or, for the typed FFI, as its attribute dictionary.
    fn lower_custom_call(
        &mut self,
        comp: &Computation,
        instr: &Instruction,
        env: &mut [Option<Vec<Loc>>],
        ops: &mut Vec<Op>,
    ) -> Result<Vec<Loc>, CompileError> {
        let target = instr
            .attrs
            .custom_call_target
            .as_deref()
            .unwrap_or_default();
        if let Some(library) = proto::cpu_custom_call_library(target) {
            let cpu = UnsupportedCustomCall::CpuTarget {
                target: target.to_owned(),
                library,
            };
            return Err(CompileError::unsupported(&comp.name, instr, cpu));
        }
        // The thunk's shapes keep the layouts the target reads and writes (the
        // custom-call-layouts pass laid the bytes out so): the handler is told.
        let constraints = instr.attrs.operand_layout_constraints.as_deref();
        let mut operands = Vec::new();
        for (k, &o) in instr.operands.iter().enumerate() {
            let locs = self.locs(comp, o, env)?;
            let laid_out = constraints.and_then(|c| c.get(k)).filter(|c| c.is_array());
            for (loc, (_, shape)) in locs.into_iter().zip(leaves(&comp[o].shape)) {
                operands.push((loc, laid_out.cloned().unwrap_or(shape)));
            }
        }
        let t = self.tick();
        for (l, _) in &operands {
            self.use_loc(*l, t);
        }
        let mut results = Vec::new();
        let mut locs = Vec::new();
        for (_, shape) in instr.shape.leaves() {
            let l = self.temp(&shape.without_layout(), &instr.name, t);
            locs.push(l);
            results.push((l, shape.clone()));
        }
        let api_version = match instr.attrs.api_version.as_deref() {
            None => crate::DEFAULT_CUSTOM_CALL_API_VERSION,
            Some("API_VERSION_ORIGINAL") => proto::xla::CustomCallApiVersion::ApiVersionOriginal,
            Some("API_VERSION_STATUS_RETURNING") => {
                proto::xla::CustomCallApiVersion::ApiVersionStatusReturning
            }
            Some("API_VERSION_STATUS_RETURNING_UNIFIED") => {
                proto::xla::CustomCallApiVersion::ApiVersionStatusReturningUnified
            }
            Some("API_VERSION_TYPED_FFI") => proto::xla::CustomCallApiVersion::ApiVersionTypedFfi,
            Some(other) => {
                return Err(CompileError::unsupported(
                    &comp.name,
                    instr,
                    UnsupportedCustomCall::ApiVersion(other.to_owned()),
                ))
            }
        } as i32;
        let config = instr.attrs.backend_config.clone().unwrap_or_default();
        // The typed FFI's backend config is its attribute dictionary: the handler gets
        // the entries by name, nothing in `opaque`.
        let (opaque, attributes) =
            if api_version == proto::xla::CustomCallApiVersion::ApiVersionTypedFfi as i32 {
                let map = super::ffi_attributes::parse(&config).map_err(|e| {
                    CompileError::unsupported(
                        &comp.name,
                        instr,
                        UnsupportedCustomCall::FfiAttributes {
                            config: config.clone(),
                            error: e,
                        },
                    )
                })?;
                (Vec::new(), map)
            } else {
                (config.into_bytes(), Default::default())
            };
        ops.push(Op::CustomCall {
            name: instr.name.clone(),
            target: instr.attrs.custom_call_target.clone().unwrap_or_default(),
            operands,
            results,
            opaque,
            attributes,
            api_version,
        });
        Ok(locs)
    }
}
