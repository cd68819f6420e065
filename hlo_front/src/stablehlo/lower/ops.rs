//! `stablehlo.*` ops by family: [`Front::lower_stablehlo`](super) hands each op name to the
//! family function that lowers it; each builds the HLO attributes and emits one instruction.

use super::*;

impl Front<'_> {
    /// Constants, compare, and the ops that move data or build tuples, tokens and ids.
    pub(super) fn lower_data(&mut self, s: &str, op: &Op) -> Result<Lowered> {
        let mut a = Attrs::default();
        let opcode = match s {
            "constant" => {
                let Some(Attr::Dense(d, ty)) = op.get(&["value"]) else {
                    return Err(self.bad(op, "constant needs value = dense<...>"));
                };
                a.literal = Some(self.dense_literal(op, d, ty)?);
                Opcode::Constant
            }
            "compare" => {
                let dir = match op.get(&["comparison_direction"]) {
                    Some(Attr::Enum(e)) => Some(e.clone()),
                    _ => op.positional.first().cloned(),
                };
                let dir = dir.ok_or_else(|| self.bad(op, "missing comparison_direction"))?;
                a.comparison_direction =
                    Some(ComparisonDirection::from_name(&dir).ok_or_else(|| {
                        self.bad(op, format!("unknown comparison_direction {dir}"))
                    })?);
                let ty = match op.get(&["compare_type"]) {
                    Some(Attr::Enum(e)) => Some(e.clone()),
                    _ => op.positional.get(1).cloned(),
                };
                if let Some(ty) = ty {
                    let t = ComparisonType::from_name(&ty)
                        .ok_or_else(|| self.bad(op, format!("unknown compare_type {ty}")))?;
                    let et = self.shape_of(self.operand_at(op, 0)?).element_type();
                    // XLA prints (and stores) only a type that differs from the element type's default.
                    let default = match et {
                        Some(t) if t.is_float() || t.is_complex() => ComparisonType::Float,
                        Some(t) if t.is_signed_int() => ComparisonType::Signed,
                        _ => ComparisonType::Unsigned,
                    };
                    if t != default {
                        a.comparison_type = Some(t);
                    }
                }
                Opcode::Compare
            }
            "broadcast_in_dim" => return self.lower_broadcast(op),
            "iota" => {
                a.iota_dimension = Some(self.req_int(op, &["dim", "iota_dimension"])?);
                Opcode::Iota
            }
            "transpose" => {
                a.dimensions = Some(self.req_ints(op, &["dims", "permutation"])?);
                Opcode::Transpose
            }
            "reverse" => {
                a.dimensions = Some(self.req_ints(op, &["dims", "dimensions"])?);
                Opcode::Reverse
            }
            "concatenate" => {
                a.dimensions = Some(vec![self.req_int(op, &["dim", "dimension"])?]);
                Opcode::Concatenate
            }
            "slice" => {
                let st = self.req_ints(op, &["start_indices"])?;
                let li = self.req_ints(op, &["limit_indices"])?;
                let sd = self
                    .ints_attr(op, &["strides"])?
                    .unwrap_or_else(|| vec![1; st.len()]);
                if li.len() != st.len() || sd.len() != st.len() {
                    return Err(self.bad(
                        op,
                        "start_indices, limit_indices and strides differ in length",
                    ));
                }
                a.slice = Some(
                    st.iter()
                        .zip(&li)
                        .zip(&sd)
                        .map(|((&start, &limit), &stride)| SliceDim {
                            start,
                            limit,
                            stride,
                        })
                        .collect(),
                );
                Opcode::Slice
            }
            "dynamic_slice" => {
                a.dynamic_slice_sizes = Some(self.req_ints(op, &["sizes", "slice_sizes"])?);
                Opcode::DynamicSlice
            }
            "dynamic_update_slice" => Opcode::DynamicUpdateSlice,
            "pad" => {
                let lo = self.req_ints(op, &["low", "edge_padding_low"])?;
                let hi = self.req_ints(op, &["high", "edge_padding_high"])?;
                let it = self
                    .ints_attr(op, &["interior", "interior_padding"])?
                    .unwrap_or_else(|| vec![0; lo.len()]);
                if hi.len() != lo.len() || it.len() != lo.len() {
                    return Err(self.bad(op, "low, high and interior padding differ in length"));
                }
                a.padding = Some(
                    lo.iter()
                        .zip(&hi)
                        .zip(&it)
                        .map(|((&low, &high), &interior)| PadDim {
                            low,
                            high,
                            interior,
                        })
                        .collect(),
                );
                Opcode::Pad
            }
            "get_tuple_element" => {
                a.tuple_index = Some(self.req_int(op, &["index"])?);
                Opcode::GetTupleElement
            }
            "tuple" => Opcode::Tuple,
            "after_all" => Opcode::AfterAll,
            "replica_id" => Opcode::ReplicaId,
            "partition_id" => Opcode::PartitionId,
            _ => {
                return Err(self.err_at(
                    op.loc,
                    ParseErrorKind::UnknownOpcode,
                    format!("unsupported operation \"stablehlo.{s}\""),
                ));
            }
        };
        Ok(self.emit(op, opcode, op.operands.clone(), a))
    }

    /// Dots, reductions, sort, gather and scatter: the ops with dimension numbers or regions.
    pub(super) fn lower_indexed(&mut self, s: &str, op: &Op) -> Result<Lowered> {
        let mut a = Attrs::default();
        let opcode = match s {
            "dot_general" => {
                let mut d = DotDimensionNumbers::default();
                if let Some(Attr::Struct(_, f)) = op.get(&["dot_dimension_numbers"]) {
                    let g = |n: &str| field(f, n).and_then(ints).unwrap_or_default();
                    d.lhs_batch_dims = g("lhs_batching_dimensions");
                    d.rhs_batch_dims = g("rhs_batching_dimensions");
                    d.lhs_contracting_dims = g("lhs_contracting_dimensions");
                    d.rhs_contracting_dims = g("rhs_contracting_dimensions");
                } else {
                    let pair =
                        |names: &[&str]| -> Result<(Vec<i64>, Vec<i64>)> {
                            match op.get(names) {
                                None => Ok((Vec::new(), Vec::new())),
                                Some(Attr::Pair(l, r)) => {
                                    Ok((ints(l).unwrap_or_default(), ints(r).unwrap_or_default()))
                                }
                                Some(_) => Err(self
                                    .bad(op, format!("{} must be written [..] x [..]", names[0]))),
                            }
                        };
                    (d.lhs_batch_dims, d.rhs_batch_dims) = pair(&["batching_dims"])?;
                    (d.lhs_contracting_dims, d.rhs_contracting_dims) = pair(&["contracting_dims"])?;
                }
                a.dot_algorithm = self.dot_algorithm(op)?;
                a.dot_dimension_numbers = Some(d);
                a.operand_precision = self.precision(op)?;
                Opcode::Dot
            }
            "dot" => {
                let lhs_rank = self.shape_of(self.operand_at(op, 0)?).rank();
                a.dot_dimension_numbers = Some(DotDimensionNumbers {
                    lhs_contracting_dims: vec![lhs_rank.saturating_sub(1) as i64],
                    rhs_contracting_dims: vec![0],
                    ..DotDimensionNumbers::default()
                });
                a.operand_precision = self.precision(op)?;
                Opcode::Dot
            }
            "reduce" => {
                a.dimensions = Some(self.req_ints(op, &["dimensions"])?);
                if op.operands.len() % 2 != 0 || op.operands.is_empty() {
                    return Err(self.err_at(
                        op.loc,
                        ParseErrorKind::Structure,
                        "reduce needs inputs and as many init values",
                    ));
                }
                a.to_apply = Some(match &op.applies {
                    Some(f) => {
                        let short = f.strip_prefix("stablehlo.").unwrap_or(f);
                        let opc = ELEMENTWISE
                            .iter()
                            .find(|(n, _)| *n == short)
                            .map(|x| x.1)
                            .filter(|o| o.is_elementwise_binary())
                            .ok_or_else(|| {
                                self.bad(
                                    op,
                                    format!("reduce applies {f}: not a binary element-wise op"),
                                )
                            })?;
                        let init = self.operand_at(op, op.operands.len() / 2)?;
                        let et = self
                            .shape_of(init)
                            .element_type()
                            .ok_or_else(|| self.bad(op, "init value is not an array"))?;
                        self.binary_region(opc, Shape::scalar(et), op.loc)?.comp
                    }
                    None => self.region_at(op, 0)?.comp,
                });
                Opcode::Reduce
            }
            "reduce_window" => {
                let sizes = self.req_ints(op, &["window_dimensions"])?;
                a.window = Some(self.window(
                    op,
                    &sizes,
                    &["window_strides"],
                    &["padding"],
                    &["base_dilations"],
                    &["window_dilations"],
                    &[],
                )?);
                a.to_apply = Some(self.region_at(op, 0)?.comp);
                Opcode::ReduceWindow
            }
            "select_and_scatter" => {
                let sizes = self.req_ints(op, &["window_dimensions"])?;
                a.window = Some(self.window(
                    op,
                    &sizes,
                    &["window_strides"],
                    &["padding"],
                    &[],
                    &[],
                    &[],
                )?);
                a.select = Some(self.region_at(op, 0)?.comp);
                a.scatter = Some(self.region_at(op, 1)?.comp);
                Opcode::SelectAndScatter
            }
            "sort" => {
                let rank = self.shape_of(self.operand_at(op, 0)?).rank() as i64;
                let d = self.int_attr(op, &["dimension"])?.unwrap_or(-1);
                a.dimensions = Some(vec![if d < 0 { d + rank } else { d }]);
                a.is_stable = self.bool_attr(op, &["is_stable"])?.filter(|&b| b);
                a.to_apply = Some(self.region_at(op, 0)?.comp);
                Opcode::Sort
            }
            "gather" => {
                let Some(Attr::Struct(_, f)) = op.get(&["dimension_numbers"]) else {
                    return Err(self.bad(
                        op,
                        "gather needs dimension_numbers = #stablehlo.gather<...>",
                    ));
                };
                let g = |n: &str| field(f, n).and_then(ints).unwrap_or_default();
                a.gather_dimension_numbers = Some(GatherDimensionNumbers {
                    offset_dims: g("offset_dims"),
                    collapsed_slice_dims: g("collapsed_slice_dims"),
                    start_index_map: g("start_index_map"),
                    index_vector_dim: field(f, "index_vector_dim")
                        .and_then(ints)
                        .and_then(|v| v.first().copied())
                        .unwrap_or(0),
                    operand_batching_dims: g("operand_batching_dims"),
                    start_indices_batching_dims: g("start_indices_batching_dims"),
                });
                a.gather_slice_sizes = Some(self.req_ints(op, &["slice_sizes"])?);
                a.indices_are_sorted = self.bool_attr(op, &["indices_are_sorted"])?.filter(|&b| b);
                Opcode::Gather
            }
            "scatter" => {
                let Some(Attr::Struct(_, f)) = op.get(&["scatter_dimension_numbers"]) else {
                    return Err(self.bad(
                        op,
                        "scatter needs scatter_dimension_numbers = #stablehlo.scatter<...>",
                    ));
                };
                let g = |n: &str| field(f, n).and_then(ints).unwrap_or_default();
                a.scatter_dimension_numbers = Some(ScatterDimensionNumbers {
                    update_window_dims: g("update_window_dims"),
                    inserted_window_dims: g("inserted_window_dims"),
                    scatter_dims_to_operand_dims: g("scatter_dims_to_operand_dims"),
                    index_vector_dim: field(f, "index_vector_dim")
                        .and_then(ints)
                        .and_then(|v| v.first().copied())
                        .unwrap_or(0),
                    input_batching_dims: g("input_batching_dims"),
                    scatter_indices_batching_dims: g("scatter_indices_batching_dims"),
                });
                a.indices_are_sorted = self.bool_attr(op, &["indices_are_sorted"])?.filter(|&b| b);
                a.unique_indices = self.bool_attr(op, &["unique_indices"])?.filter(|&b| b);
                a.to_apply = Some(self.region_at(op, 0)?.comp);
                Opcode::Scatter
            }
            _ => {
                return Err(self.err_at(
                    op.loc,
                    ParseErrorKind::UnknownOpcode,
                    format!("unsupported operation \"stablehlo.{s}\""),
                ));
            }
        };
        Ok(self.emit(op, opcode, op.operands.clone(), a))
    }

    /// Optimization barriers, composites, map, reduce-precision and the RNG.
    pub(super) fn lower_misc(&mut self, s: &str, op: &Op) -> Result<Lowered> {
        let mut a = Attrs::default();
        let opcode = match s {
            "optimization_barrier" => {
                let t = self.tuple(op.operands.clone(), op.loc);
                let shape = self.shape_of(t).clone();
                let id = self.add(
                    Opcode::OptimizationBarrier,
                    shape,
                    vec![t],
                    Attrs::default(),
                    op.loc,
                );
                return Ok(Lowered::Tuple(id, op.operands.len()));
            }
            "composite" => {
                let Some(Attr::Symbol(f)) = op.get(&["decomposition"]) else {
                    return Err(self.bad(op, "composite needs decomposition = @function"));
                };
                // XLA inlines a composite's decomposition; a call computes the same.
                a.to_apply = Some(self.func_id(&f.clone(), op.loc));
                Opcode::Call
            }
            "map" => {
                a.dimensions = Some(self.req_ints(op, &["dimensions"])?);
                a.to_apply = Some(self.region_at(op, 0)?.comp);
                Opcode::Map
            }
            "fft" => {
                // `type = FFT, length = [8]` (pretty) or `fft_type = #stablehlo<fft_type FFT>,
                // fft_length = array<i64: 8>` (generic).
                self.count(op, 1)?;
                a.fft_type = Some(match op.get(&["fft_type", "type"]) {
                    Some(Attr::Enum(e)) => FftType::from_name(e)
                        .ok_or_else(|| self.bad(op, format!("unknown fft_type {e}")))?,
                    _ => return Err(self.bad(op, "fft needs fft_type FFT, IFFT, RFFT or IRFFT")),
                });
                a.fft_length = Some(self.req_ints(op, &["fft_length", "length"])?);
                Opcode::Fft
            }
            "cholesky" => {
                // `lower = true`; absent means false, as in the proto (XLA's default).
                self.count(op, 1)?;
                a.cholesky = Some(CholeskyOptions {
                    lower: self.bool_attr(op, &["lower"])?.unwrap_or(false),
                });
                Opcode::Cholesky
            }
            "triangular_solve" => {
                a.triangular_solve = Some(self.triangular_solve_options(op)?);
                Opcode::TriangularSolve
            }
            "reduce_precision" => {
                match op.get(&["format"]) {
                    Some(Attr::Enum(f)) => {
                        let parsed = f
                            .strip_prefix('e')
                            .and_then(|r| r.split_once('m'))
                            .and_then(|(e, m)| Some((e.parse().ok()?, m.parse().ok()?)));
                        let (e, m) = parsed.ok_or_else(|| {
                            self.bad(op, format!("bad format {f} (expected eXmY)"))
                        })?;
                        a.exponent_bits = Some(e);
                        a.mantissa_bits = Some(m);
                    }
                    _ => {
                        a.exponent_bits = Some(self.req_int(op, &["exponent_bits"])?);
                        a.mantissa_bits = Some(self.req_int(op, &["mantissa_bits"])?);
                    }
                }
                Opcode::ReducePrecision
            }
            "rng_bit_generator" => {
                let alg = match op.get(&["rng_algorithm", "algorithm"]) {
                    Some(Attr::Enum(e)) => e.clone(),
                    None => "DEFAULT".into(),
                    Some(_) => {
                        return Err(
                            self.bad(op, "rng_algorithm must be DEFAULT, THREE_FRY or PHILOX")
                        )
                    }
                };
                a.rng_algorithm = Some(match alg.as_str() {
                    "DEFAULT" => RandomAlgorithm::Default,
                    "THREE_FRY" => RandomAlgorithm::ThreeFry,
                    "PHILOX" => RandomAlgorithm::Philox,
                    other => return Err(self.bad(op, format!("unknown rng_algorithm {other}"))),
                });
                Opcode::RngBitGenerator
            }
            _ => {
                return Err(self.err_at(
                    op.loc,
                    ParseErrorKind::UnknownOpcode,
                    format!("unsupported operation \"stablehlo.{s}\""),
                ));
            }
        };
        Ok(self.emit(op, opcode, op.operands.clone(), a))
    }

    /// `left_side = true, lower = true, unit_diagonal = false, transpose_a = NO_TRANSPOSE`
    /// (`#stablehlo<transpose NO_TRANSPOSE>` in the generic form); the booleans default to
    /// false as in the proto, `transpose_a` is required.
    fn triangular_solve_options(&self, op: &Op) -> Result<TriangularSolveOptions> {
        self.count(op, 2)?;
        let t = match op.get(&["transpose_a"]) {
            Some(Attr::Enum(e)) => Transpose::from_name(e)
                .ok_or_else(|| self.bad(op, format!("unknown transpose_a {e}")))?,
            _ => return Err(self.bad(op, "triangular_solve needs transpose_a")),
        };
        Ok(TriangularSolveOptions {
            left_side: self.bool_attr(op, &["left_side"])?.unwrap_or(false),
            lower: self.bool_attr(op, &["lower"])?.unwrap_or(false),
            unit_diagonal: self.bool_attr(op, &["unit_diagonal"])?.unwrap_or(false),
            transpose_a: Some(t),
        })
    }
}
