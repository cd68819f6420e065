//! The evaluator's dispatch, by opcode family: [`Interp::instruction`](super) hands each
//! instruction to the family function that evaluates it. A family function reads the operands
//! through [`Step`] and calls the kernels of the sibling modules.

use super::elementwise::{self, Direction};
use super::reduce::{self, Reducer};
use super::{
    arr, array_shape, attr, bitcast, builtin_reducer, convolution, dot, fft, gather, invalid,
    leaves_to_literal, linalg, movement, pred_result, sort, EvalError, Interp,
};
use hlo::{
    self, ComparisonDirection, ComparisonType, ComputationId, Instruction, Opcode, RandomAlgorithm,
};
use hlo::{Array, DType, Data, Literal};

/// One instruction being evaluated: where it is, the values computed so far, and the call depth.
pub(super) struct Step<'s, 'm> {
    pub(super) interp: &'s Interp<'m>,
    pub(super) comp: &'s hlo::Computation,
    pub(super) instr: &'s Instruction,
    pub(super) values: &'s [Option<Literal>],
    pub(super) depth: usize,
}

impl<'s> Step<'s, '_> {
    /// Operand `k`'s value.
    pub(super) fn operand(&self, k: usize) -> Result<&'s Literal, EvalError> {
        let (instr, op) = (self.instr, self.instr.opcode);
        let id = instr
            .operands
            .get(k)
            .ok_or_else(|| invalid(op.name(), format!("missing operand {k}")))?;
        self.values
            .get(id.index())
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                EvalError::Malformed(format!("operand {k} of {} is not evaluated", instr.name))
            })
    }

    /// Operand `k`, which must be an array.
    pub(super) fn array(&self, k: usize) -> Result<&'s Array, EvalError> {
        arr(self.operand(k)?, self.instr.opcode.name())
    }

    /// Operands `from..`, which must be arrays.
    pub(super) fn arrays(&self, from: usize) -> Result<Vec<&'s Array>, EvalError> {
        (from..self.instr.operands.len())
            .map(|k| self.array(k))
            .collect()
    }

    /// Fails unless the instruction has exactly `n` operands.
    pub(super) fn nops(&self, n: usize) -> Result<(), EvalError> {
        if self.instr.operands.len() == n {
            Ok(())
        } else {
            Err(invalid(
                self.instr.opcode.name(),
                format!("takes {n} operands, got {}", self.instr.operands.len()),
            ))
        }
    }

    /// The called computation in attribute `c` (spelled `name` in the text format).
    pub(super) fn called(
        &self,
        c: &Option<ComputationId>,
        name: &str,
    ) -> Result<ComputationId, EvalError> {
        c.ok_or_else(|| {
            invalid(
                self.instr.opcode.name(),
                format!("missing attribute `{name}`"),
            )
        })
    }
}

/// An array result.
pub(super) fn one(v: Array) -> Result<Literal, EvalError> {
    Ok(Literal::Array(v))
}

/// Copies, tuples and the device ids (the evaluator is one device).
pub(super) fn values(s: &Step<'_, '_>) -> Result<Literal, EvalError> {
    let Step { instr, .. } = *s;
    let op = instr.opcode;
    let a = &instr.attrs;
    let operand = |k: usize| s.operand(k);
    let nops = |n: usize| s.nops(n);
    match op {
        Opcode::Copy | Opcode::OptimizationBarrier => {
            nops(1)?;
            Ok(operand(0)?.clone())
        }
        Opcode::Tuple => Ok(Literal::Tuple(
            (0..instr.operands.len())
                .map(|k| operand(k).cloned())
                .collect::<Result<_, _>>()?,
        )),
        Opcode::GetTupleElement => {
            nops(1)?;
            let idx = *attr(&a.tuple_index, op, "index")?;
            let t = operand(0)?
                .as_tuple()
                .map_err(|_| invalid(op.name(), "operand is not a tuple"))?;
            usize::try_from(idx)
                .ok()
                .and_then(|i| t.get(i))
                .cloned()
                .ok_or_else(|| {
                    invalid(
                        op.name(),
                        format!("index {idx} out of range for a tuple of {}", t.len()),
                    )
                })
        }
        // The evaluator is one device: replica 0 of partition 0. (Collectives, which need
        // several replicas, stay unimplemented.)
        Opcode::ReplicaId | Opcode::PartitionId => {
            nops(0)?;
            let (dtype, dims) = array_shape(&instr.shape, op)?;
            if dtype != DType::U32 || !dims.is_empty() {
                return Err(invalid(op.name(), "must produce a u32 scalar"));
            }
            one(Array::scalar(Data::U32(vec![0]))?)
        }
        other => Err(EvalError::Unimplemented {
            opcode: other.name().to_string(),
        }),
    }
}

/// The elementwise opcodes with attributes or their own type rules: compare, select, clamp, reduce-precision and the conversions.
pub(super) fn elementwise(s: &Step<'_, '_>) -> Result<Literal, EvalError> {
    let Step { instr, .. } = *s;
    let op = instr.opcode;
    let a = &instr.attrs;
    let array = |k: usize| s.array(k);
    let nops = |n: usize| s.nops(n);
    match op {
        Opcode::Compare => {
            nops(2)?;
            let dir = match attr(&a.comparison_direction, op, "direction")? {
                ComparisonDirection::Eq => Direction::Eq,
                ComparisonDirection::Ne => Direction::Ne,
                ComparisonDirection::Lt => Direction::Lt,
                ComparisonDirection::Le => Direction::Le,
                ComparisonDirection::Gt => Direction::Gt,
                ComparisonDirection::Ge => Direction::Ge,
            };
            let total = a.comparison_type == Some(ComparisonType::TotalOrder);
            one(elementwise::compare(dir, total, array(0)?, array(1)?)?)
        }
        Opcode::Select => {
            nops(3)?;
            one(elementwise::select(array(0)?, array(1)?, array(2)?)?)
        }
        Opcode::Clamp => {
            nops(3)?;
            one(elementwise::clamp(array(0)?, array(1)?, array(2)?)?)
        }
        Opcode::ReducePrecision => {
            nops(1)?;
            let e = *attr(&a.exponent_bits, op, "exponent_bits")?;
            let m = *attr(&a.mantissa_bits, op, "mantissa_bits")?;
            one(elementwise::reduce_precision(array(0)?, e, m)?)
        }
        Opcode::Convert => {
            nops(1)?;
            let (dtype, _) = array_shape(&instr.shape, op)?;
            one(array(0)?.convert(dtype))
        }
        Opcode::BitcastConvert => {
            nops(1)?;
            let (dtype, _) = array_shape(&instr.shape, op)?;
            one(array(0)?.bitcast_convert(dtype)?)
        }
        other => Err(EvalError::Unimplemented {
            opcode: other.name().to_string(),
        }),
    }
}

/// Data movement: broadcast, reshape, bitcast, transpose, slice, reverse, concatenate, pad, iota, dynamic slices and gather.
pub(super) fn movement(s: &Step<'_, '_>) -> Result<Literal, EvalError> {
    let Step { instr, comp, .. } = *s;
    let op = instr.opcode;
    let a = &instr.attrs;
    let array = |k: usize| s.array(k);
    let arrays = |from: usize| s.arrays(from);
    let nops = |n: usize| s.nops(n);
    match op {
        Opcode::Broadcast => {
            nops(1)?;
            let (_, dims) = array_shape(&instr.shape, op)?;
            let bd = a.dimensions.as_deref().unwrap_or(&[]);
            one(movement::broadcast(array(0)?, dims, bd)?)
        }
        Opcode::Reshape => {
            nops(1)?;
            let (dtype, dims) = array_shape(&instr.shape, op)?;
            let x = array(0)?;
            if x.dtype() != dtype {
                return Err(invalid(op.name(), "changes the element type"));
            }
            one(movement::reshape(x, dims)?)
        }
        Opcode::Bitcast => {
            nops(1)?;
            let x = array(0)?;
            let from = instr
                .operands
                .first()
                .and_then(|id| comp.get(*id))
                .map(|i| &i.shape)
                .ok_or_else(|| invalid(op.name(), "missing operand"))?;
            one(bitcast(x, from, &instr.shape)?)
        }
        Opcode::Transpose => {
            nops(1)?;
            one(movement::transpose(
                array(0)?,
                attr(&a.dimensions, op, "dimensions")?,
            )?)
        }
        Opcode::Slice => {
            nops(1)?;
            let spec: Vec<(i64, i64, i64)> = attr(&a.slice, op, "slice")?
                .iter()
                .map(|s| (s.start, s.limit, s.stride))
                .collect();
            one(movement::slice(array(0)?, &spec)?)
        }
        Opcode::Reverse => {
            nops(1)?;
            one(movement::reverse(
                array(0)?,
                attr(&a.dimensions, op, "dimensions")?,
            )?)
        }
        Opcode::Concatenate => {
            let dims = attr(&a.dimensions, op, "dimensions")?;
            let d = match dims.as_slice() {
                [d] => *d,
                _ => return Err(invalid(op.name(), "needs exactly one dimension")),
            };
            one(movement::concatenate(&arrays(0)?, d)?)
        }
        Opcode::Pad => {
            nops(2)?;
            let cfg: Vec<(i64, i64, i64)> = attr(&a.padding, op, "padding")?
                .iter()
                .map(|p| (p.low, p.high, p.interior))
                .collect();
            one(movement::pad(array(0)?, array(1)?, &cfg)?)
        }
        Opcode::Iota => {
            nops(0)?;
            let (dtype, dims) = array_shape(&instr.shape, op)?;
            one(movement::iota(
                dtype,
                dims,
                *attr(&a.iota_dimension, op, "iota_dimension")?,
            )?)
        }
        Opcode::DynamicSlice => {
            let starts = arrays(1)?;
            let sizes = attr(&a.dynamic_slice_sizes, op, "dynamic_slice_sizes")?;
            one(movement::dynamic_slice(array(0)?, &starts, sizes)?)
        }
        Opcode::DynamicUpdateSlice => {
            let starts = arrays(2)?;
            one(movement::dynamic_update_slice(
                array(0)?,
                array(1)?,
                &starts,
            )?)
        }
        Opcode::Gather => {
            nops(2)?;
            let dn = attr(&a.gather_dimension_numbers, op, "gather dimension numbers")?;
            let sizes = attr(&a.gather_slice_sizes, op, "slice_sizes")?;
            one(gather::gather(array(0)?, array(1)?, dn, sizes)?)
        }
        other => Err(EvalError::Unimplemented {
            opcode: other.name().to_string(),
        }),
    }
}

/// Dot and convolution.
pub(super) fn contraction(s: &Step<'_, '_>) -> Result<Literal, EvalError> {
    let Step { instr, .. } = *s;
    let op = instr.opcode;
    let a = &instr.attrs;
    let array = |k: usize| s.array(k);
    let nops = |n: usize| s.nops(n);
    match op {
        Opcode::Dot => {
            nops(2)?;
            let (dtype, _) = array_shape(&instr.shape, op)?;
            let dn = a.dot_dimension_numbers.clone().unwrap_or_default();
            let dims = dot::DotDims {
                lhs_batch: dn.lhs_batch_dims,
                rhs_batch: dn.rhs_batch_dims,
                lhs_contracting: dn.lhs_contracting_dims,
                rhs_contracting: dn.rhs_contracting_dims,
            };
            // `algorithm=dot_bf16_bf16_f32` / `dot_tf32_tf32_f32` round f32 operands first (as
            // the compiler's `dot-algorithm` pass does); every other algorithm reads them as
            // they are.
            let round = |x: &Array| -> Result<Option<Array>, EvalError> {
                let bits = a
                    .dot_algorithm
                    .filter(|_| x.dtype() == DType::F32)
                    .and_then(|alg| alg.operand_rounding(hlo::PrimitiveType::F32));
                bits.map(|(e, m)| elementwise::reduce_precision(x, e, m))
                    .transpose()
            };
            let (l, r) = (array(0)?, array(1)?);
            let (lr, rr) = (round(l)?, round(r)?);
            let (l, r) = (lr.as_ref().unwrap_or(l), rr.as_ref().unwrap_or(r));
            one(dot::dot(l, r, &dims, dtype)?)
        }
        Opcode::Convolution => {
            nops(2)?;
            let (dtype, dims) = array_shape(&instr.shape, op)?;
            let out_dims = dims
                .iter()
                .map(|&d| usize::try_from(d))
                .collect::<Result<Vec<usize>, _>>()
                .map_err(|_| invalid(op.name(), format!("negative dimension in {dims:?}")))?;
            let (lhs, rhs) = (array(0)?, array(1)?);
            let geometry = convolution::ConvGeometry::new(
                lhs.dims(),
                rhs.dims(),
                &out_dims,
                attr(&a.conv_dimension_numbers, op, "dim_labels")?,
                a.window.as_ref().map(|w| w.dims.as_slice()),
                a.feature_group_count.unwrap_or(1),
                a.batch_group_count.unwrap_or(1),
            )
            .map_err(|m| invalid(op.name(), m.to_string()))?;
            one(convolution::convolution(lhs, rhs, &geometry, dtype)?)
        }
        Opcode::Fft => {
            nops(1)?;
            let t = attr(&a.fft_type, op, "fft_type")?;
            let len = attr(&a.fft_length, op, "fft_length")?;
            one(fft::fft(array(0)?, *t, len)?)
        }
        Opcode::TriangularSolve => {
            nops(2)?;
            let o = attr(&a.triangular_solve, op, "transpose_a")?;
            one(linalg::triangular_solve(array(0)?, array(1)?, o)?)
        }
        Opcode::Cholesky => {
            nops(1)?;
            let o = a.cholesky.unwrap_or_default();
            one(linalg::cholesky(array(0)?, &o)?)
        }
        other => Err(EvalError::Unimplemented {
            opcode: other.name().to_string(),
        }),
    }
}

/// Opcodes that apply a reducer or comparator: reduce, reduce-window, scatter, sort, top-k and select-and-scatter.
pub(super) fn reduction(s: &Step<'_, '_>) -> Result<Literal, EvalError> {
    let Step {
        instr,
        interp,
        depth,
        ..
    } = *s;
    let op = instr.opcode;
    let a = &instr.attrs;
    let array = |k: usize| s.array(k);
    let arrays = |from: usize| s.arrays(from);
    let nops = |n: usize| s.nops(n);
    let called = |c: &Option<ComputationId>, name: &str| s.called(c, name);
    match op {
        Opcode::Reduce | Opcode::ReduceWindow => {
            let all = arrays(0)?;
            if all.len() % 2 != 0 || all.is_empty() {
                return Err(invalid(
                    op.name(),
                    "needs operands and init values in pairs",
                ));
            }
            let (inputs, inits) = all.split_at(all.len() / 2);
            let comp = called(&a.to_apply, "to_apply")?;
            let mut cb = |xs: &[Array]| interp.call_arrays(comp, xs, depth);
            let reducer = match builtin_reducer(interp.module, comp) {
                Some(r) if inputs.len() == 1 => r,
                _ => Reducer::Custom(&mut cb),
            };
            let out = if op == Opcode::Reduce {
                reduce::reduce(
                    inputs,
                    inits,
                    attr(&a.dimensions, op, "dimensions")?,
                    reducer,
                )?
            } else {
                let w = attr(&a.window, op, "window")?.dims.clone();
                reduce::reduce_window(inputs, inits, &w, reducer)?
            };
            Ok(leaves_to_literal(out, &instr.shape))
        }
        Opcode::Scatter => {
            let all = arrays(0)?;
            if all.len() < 3 || all.len() % 2 == 0 {
                return Err(invalid(op.name(), "needs operands, indices and updates"));
            }
            let n = (all.len() - 1) / 2;
            let (operands, rest) = all.split_at(n);
            let (indices, updates) = rest.split_at(1);
            let dn = attr(
                &a.scatter_dimension_numbers,
                op,
                "scatter dimension numbers",
            )?;
            let comp = called(&a.to_apply, "to_apply")?;
            let mut cb = |xs: &[Array]| interp.call_arrays(comp, xs, depth);
            let combiner = match builtin_reducer(interp.module, comp) {
                Some(r) if n == 1 => r,
                _ => Reducer::Custom(&mut cb),
            };
            let out = gather::scatter(operands, indices[0], updates, dn, combiner)?;
            Ok(leaves_to_literal(out, &instr.shape))
        }
        Opcode::Sort => {
            let inputs = arrays(0)?;
            let dims = attr(&a.dimensions, op, "dimensions")?;
            let d = match dims.as_slice() {
                [d] => *d,
                _ => return Err(invalid(op.name(), "needs exactly one dimension")),
            };
            let comp = called(&a.to_apply, "to_apply")?;
            let mut less = |xs: &[Array]| -> Result<bool, EvalError> {
                pred_result(op, interp.call_arrays(comp, xs, depth)?)
            };
            let out = sort::sort(&inputs, d, &mut less)?;
            Ok(leaves_to_literal(out, &instr.shape))
        }
        Opcode::TopK => {
            nops(1)?;
            let k = attr(&a.k, op, "k")?;
            let k = usize::try_from(*k).map_err(|_| invalid(op.name(), "k is negative"))?;
            let (values, indices) = sort::top_k(array(0)?, k, a.largest.unwrap_or(true))?;
            Ok(Literal::Tuple(vec![
                Literal::Array(values),
                Literal::Array(indices),
            ]))
        }
        Opcode::SelectAndScatter => {
            nops(3)?;
            let select = called(&a.select, "select")?;
            let scatter = called(&a.scatter, "scatter")?;
            let w = attr(&a.window, op, "window")?.dims.clone();
            let mut sel = |xs: &[Array]| -> Result<bool, EvalError> {
                pred_result(op, interp.call_arrays(select, xs, depth)?)
            };
            let mut cb = |xs: &[Array]| interp.call_arrays(scatter, xs, depth);
            let combiner =
                builtin_reducer(interp.module, scatter).unwrap_or(Reducer::Custom(&mut cb));
            one(reduce::select_and_scatter(
                array(0)?,
                array(1)?,
                array(2)?,
                &w,
                &mut sel,
                combiner,
            )?)
        }
        other => Err(EvalError::Unimplemented {
            opcode: other.name().to_string(),
        }),
    }
}

/// Opcodes that run called computations as a whole: map, fusion, call, while and conditional.
/// `rng-bit-generator` (the generators are in [`super::rng`]).
pub(super) fn random(s: &Step<'_, '_>) -> Result<Literal, EvalError> {
    let instr = s.instr;
    let op = instr.opcode;
    let a = &instr.attrs;
    let array = |k: usize| s.array(k);
    let nops = |n: usize| s.nops(n);
    nops(1)?;
    let state = array(0)?;
    let Data::U64(words) = state.data() else {
        return Err(invalid(op.name(), "the state must be u64"));
    };
    let parts = instr.shape.tuple_shapes().unwrap_or(&[]);
    let Some(out) = parts.get(1).and_then(hlo::Shape::as_array) else {
        return Err(invalid(op.name(), "the result must be (state, bits)"));
    };
    let dims: Vec<usize> = out.dims.iter().map(|&d| d.max(0) as usize).collect();
    let dtype = DType::from_primitive(out.element_type)
        .ok_or_else(|| invalid(op.name(), "unsupported bits type"))?;
    let algorithm = a.rng_algorithm.unwrap_or(RandomAlgorithm::Default);
    let (new_state, bits) = super::rng::generate(algorithm, words, dtype, &dims)?;
    let state = Array::new(vec![new_state.len()], Data::U64(new_state))?;
    Ok(Literal::Tuple(vec![
        Literal::Array(state),
        Literal::Array(bits),
    ]))
}

pub(super) fn control(s: &Step<'_, '_>) -> Result<Literal, EvalError> {
    let Step {
        instr,
        interp,
        depth,
        ..
    } = *s;
    let op = instr.opcode;
    let a = &instr.attrs;
    let operand = |k: usize| s.operand(k);
    let array = |k: usize| s.array(k);
    let arrays = |from: usize| s.arrays(from);
    let nops = |n: usize| s.nops(n);
    let called = |c: &Option<ComputationId>, name: &str| s.called(c, name);
    match op {
        Opcode::Map => {
            let inputs = arrays(0)?;
            let comp = called(&a.to_apply, "to_apply")?;
            let (dtype, dims) = array_shape(&instr.shape, op)?;
            let first = inputs
                .first()
                .ok_or_else(|| invalid("map", "no operands"))?;
            if inputs.iter().any(|x| x.dims() != first.dims()) {
                return Err(invalid("map", "operands have different dimensions"));
            }
            let mut parts = Vec::with_capacity(first.len());
            for i in 0..first.len() {
                let xs: Vec<Array> = inputs
                    .iter()
                    .map(|x| reduce::element("map", x, i))
                    .collect::<Result<_, _>>()?;
                let r = interp.call_arrays(comp, &xs, depth)?;
                match r.into_iter().next() {
                    Some(s) if s.rank() == 0 && s.dtype() == dtype => parts.push(s),
                    _ => {
                        return Err(invalid(
                            "map",
                            "computation must return a scalar of the result type",
                        ))
                    }
                }
            }
            let data_refs: Vec<&Data> = parts.iter().map(|p| p.data()).collect();
            let data = if data_refs.is_empty() {
                Data::zeros(dtype, 0)
            } else {
                Data::concat(&data_refs).ok_or_else(|| invalid("map", "result types differ"))?
            };
            one(Array::new(movement::sizes("map", dims)?, data)?)
        }
        Opcode::Fusion => {
            let comp = match a.calls.as_deref() {
                Some([c]) => *c,
                _ => return Err(invalid(op.name(), "needs exactly one called computation")),
            };
            let xs = (0..instr.operands.len())
                .map(|k| operand(k).cloned())
                .collect::<Result<Vec<_>, _>>()?;
            interp.run(comp, xs, depth + 1)
        }
        Opcode::Call => {
            let comp = called(&a.to_apply, "to_apply")?;
            let xs = (0..instr.operands.len())
                .map(|k| operand(k).cloned())
                .collect::<Result<Vec<_>, _>>()?;
            interp.run(comp, xs, depth + 1)
        }
        Opcode::While => {
            nops(1)?;
            let cond = called(&a.condition, "condition")?;
            let body = called(&a.body, "body")?;
            let mut state = operand(0)?.clone();
            let mut iterations = 0u64;
            loop {
                let c = interp.run(cond, vec![state.clone()], depth + 1)?;
                let go = match &c {
                    Literal::Array(p) if p.rank() == 0 && p.dtype() == DType::Pred => {
                        p.data().get_bool(0).unwrap_or(false)
                    }
                    _ => return Err(invalid("while", "condition must return a pred scalar")),
                };
                if !go {
                    return Ok(state);
                }
                if let Some(limit) = interp.options.max_while_iterations {
                    if iterations >= limit {
                        return Err(EvalError::WhileLimit { limit });
                    }
                }
                iterations += 1;
                state = interp.run(body, vec![state], depth + 1)?;
            }
        }
        Opcode::Conditional => {
            let selector = array(0)?;
            if selector.rank() != 0 {
                return Err(invalid(op.name(), "branch selector must be a scalar"));
            }
            let branch = if let Some(branches) = &a.branch_computations {
                if selector.dtype() != DType::S32 {
                    return Err(invalid(op.name(), "branch index must be s32"));
                }
                let n = branches.len();
                if n == 0 {
                    return Err(invalid(op.name(), "no branch computations"));
                }
                let i = selector.data().get_i64(0).unwrap_or(-1);
                // Out of range (including negative) runs the last branch, as XLA does.
                let k = usize::try_from(i).ok().filter(|k| *k < n).unwrap_or(n - 1);
                (branches[k], k)
            } else {
                if selector.dtype() != DType::Pred {
                    return Err(invalid(op.name(), "predicate must be pred"));
                }
                if selector.data().get_bool(0).unwrap_or(false) {
                    (called(&a.true_computation, "true_computation")?, 0)
                } else {
                    (called(&a.false_computation, "false_computation")?, 1)
                }
            };
            let arg = operand(branch.1 + 1)?.clone();
            interp.run(branch.0, vec![arg], depth + 1)
        }
        other => Err(EvalError::Unimplemented {
            opcode: other.name().to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{evaluate, SUPPORTED_OPCODES};
    use super::*;

    /// `Interp::instruction` and the family functions each list their opcodes, and
    /// `SUPPORTED_OPCODES` lists them a third time: every opcode, put alone in an entry
    /// computation with no operands, must reach a family that handles it (an error about its
    /// operands or attributes, or a value) exactly when it is listed as supported, and be
    /// `Unimplemented` otherwise, so the lists cannot drift apart.
    #[test]
    fn every_opcode_reaches_the_family_that_handles_it() {
        let text = "HloModule m\n\nENTRY e {\n  ROOT r = f32[] constant(0)\n}\n";
        let mut drifted = Vec::new();
        for &op in Opcode::ALL {
            let mut m = match hlo_text::parse_module(text) {
                Ok(m) => m,
                Err(e) => panic!("test module does not parse: {e}"),
            };
            let e = m.entry.index();
            for instr in &mut m.computations[e].instructions {
                instr.opcode = op;
            }
            let unimplemented = matches!(
                evaluate(&m, &[]).as_ref().map_err(EvalError::root_cause),
                Err(EvalError::Unimplemented { opcode }) if opcode == op.name()
            );
            if unimplemented == SUPPORTED_OPCODES.contains(&op) {
                drifted.push(op.name());
            }
        }
        assert_eq!(drifted, Vec::<&str>::new());
    }
}
