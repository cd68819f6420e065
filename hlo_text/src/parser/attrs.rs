//! Instruction attributes: one key=value at a time, and the structured values (slices, padding, windows, dim_labels, metadata).

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn enum_word<T>(&mut self, what: &str, f: impl Fn(&str) -> Option<T>) -> Result<T> {
        let loc = self.loc();
        let (w, _) = self.expect_word(what)?;
        f(&w).ok_or_else(|| {
            ParseError::new(
                loc,
                ParseErrorKind::BadAttribute,
                format!("invalid {what} '{w}'"),
            )
        })
    }

    pub(super) fn attr(
        &mut self,
        opcode: Opcode,
        key: &str,
        kloc: SourceLoc,
        a: &mut Attrs,
    ) -> Result<()> {
        let _ = kloc;
        match key {
            "dimensions" => a.dimensions = Some(self.int_list(key)?),
            "slice" => a.slice = Some(self.slice_attr()?),
            "padding" => a.padding = Some(self.padding()?),
            "window" => a.window = Some(self.window()?),
            "dim_labels" => a.conv_dimension_numbers = Some(self.dim_labels()?),
            "feature_group_count" => a.feature_group_count = Some(self.int(key)?),
            "batch_group_count" => a.batch_group_count = Some(self.int(key)?),
            "lhs_batch_dims"
            | "lhs_contracting_dims"
            | "rhs_batch_dims"
            | "rhs_contracting_dims" => {
                let v = self.int_list(key)?;
                let d = a.dot_dimension_numbers.get_or_insert_with(Default::default);
                match key {
                    "lhs_batch_dims" => d.lhs_batch_dims = v,
                    "lhs_contracting_dims" => d.lhs_contracting_dims = v,
                    "rhs_batch_dims" => d.rhs_batch_dims = v,
                    _ => d.rhs_contracting_dims = v,
                }
            }
            "operand_precision" => {
                self.expect(&TokenKind::LBrace, "'{'")?;
                let mut v = Vec::new();
                if !self.eat(&TokenKind::RBrace) {
                    loop {
                        v.push(self.enum_word("precision", Precision::from_name)?);
                        if self.eat(&TokenKind::RBrace) {
                            break;
                        }
                        self.expect(&TokenKind::Comma, "',' or '}'")?;
                    }
                }
                a.operand_precision = Some(v);
            }
            "direction" => {
                a.comparison_direction =
                    Some(self.enum_word("comparison direction", ComparisonDirection::from_name)?)
            }
            "type" if opcode == Opcode::Compare => {
                a.comparison_type =
                    Some(self.enum_word("comparison type", ComparisonType::from_name)?)
            }
            "to_apply" => a.to_apply = Some(self.comp_ref()?),
            "calls" => {
                a.calls = Some(if *self.peek() == TokenKind::LBrace {
                    self.comp_list()?
                } else {
                    vec![self.comp_ref()?]
                })
            }
            "condition" => a.condition = Some(self.comp_ref()?),
            "body" => a.body = Some(self.comp_ref()?),
            "true_computation" => a.true_computation = Some(self.comp_ref()?),
            "false_computation" => a.false_computation = Some(self.comp_ref()?),
            "branch_computations" => a.branch_computations = Some(self.comp_list()?),
            "called_computations" => a.called_computations = Some(self.comp_list()?),
            "select" if opcode == Opcode::SelectAndScatter => a.select = Some(self.comp_ref()?),
            "scatter" if opcode == Opcode::SelectAndScatter => a.scatter = Some(self.comp_ref()?),
            "kind" if opcode == Opcode::Fusion => {
                a.fusion_kind = Some(self.enum_word("fusion kind", FusionKind::from_name)?)
            }
            "iota_dimension" => a.iota_dimension = Some(self.int(key)?),
            "index" => a.tuple_index = Some(self.int(key)?),
            "offset_dims"
            | "collapsed_slice_dims"
            | "start_index_map"
            | "operand_batching_dims"
            | "start_indices_batching_dims" => {
                let v = self.int_list(key)?;
                let d = a
                    .gather_dimension_numbers
                    .get_or_insert_with(Default::default);
                match key {
                    "offset_dims" => d.offset_dims = v,
                    "collapsed_slice_dims" => d.collapsed_slice_dims = v,
                    "start_index_map" => d.start_index_map = v,
                    "operand_batching_dims" => d.operand_batching_dims = v,
                    _ => d.start_indices_batching_dims = v,
                }
            }
            "update_window_dims"
            | "inserted_window_dims"
            | "scatter_dims_to_operand_dims"
            | "input_batching_dims"
            | "scatter_indices_batching_dims" => {
                let v = self.int_list(key)?;
                let d = a
                    .scatter_dimension_numbers
                    .get_or_insert_with(Default::default);
                match key {
                    "update_window_dims" => d.update_window_dims = v,
                    "inserted_window_dims" => d.inserted_window_dims = v,
                    "scatter_dims_to_operand_dims" => d.scatter_dims_to_operand_dims = v,
                    "input_batching_dims" => d.input_batching_dims = v,
                    _ => d.scatter_indices_batching_dims = v,
                }
            }
            "index_vector_dim" => {
                let v = self.int(key)?;
                if opcode == Opcode::Scatter {
                    a.scatter_dimension_numbers
                        .get_or_insert_with(Default::default)
                        .index_vector_dim = v;
                } else {
                    a.gather_dimension_numbers
                        .get_or_insert_with(Default::default)
                        .index_vector_dim = v;
                }
            }
            "slice_sizes" => a.gather_slice_sizes = Some(self.int_list(key)?),
            "indices_are_sorted" => a.indices_are_sorted = Some(self.boolean(key)?),
            "unique_indices" => a.unique_indices = Some(self.boolean(key)?),
            "dynamic_slice_sizes" => a.dynamic_slice_sizes = Some(self.int_list(key)?),
            "is_stable" => a.is_stable = Some(self.boolean(key)?),
            "k" if opcode == Opcode::TopK => a.k = Some(self.int(key)?),
            "largest" => a.largest = Some(self.boolean(key)?),
            "custom_call_target" => a.custom_call_target = Some(self.expect_string(key)?),
            "api_version" => a.api_version = Some(self.expect_word(key)?.0),
            "custom_call_has_side_effect" => {
                a.custom_call_has_side_effect = Some(self.boolean(key)?)
            }
            "backend_config" => {
                a.backend_config = Some(match self.peek().clone() {
                    TokenKind::Str(s) => {
                        self.bump();
                        s
                    }
                    _ => self.raw_value(key)?,
                })
            }
            "operand_layout_constraints" => {
                a.operand_layout_constraints = Some(self.braced_list(key, |p| p.shape())?)
            }
            "output_to_operand_aliasing" => {
                a.output_to_operand_aliasing = Some(self.output_operand_aliasing()?)
            }
            "frontend_attributes" => a.frontend_attributes = Some(self.string_map()?),
            "sharding" => a.sharding = Some(self.sharding()?),
            "replica_groups" => {
                a.replica_groups = Some(if *self.peek() == TokenKind::LBrace {
                    self.expect(&TokenKind::LBrace, "'{'")?;
                    let mut groups = Vec::new();
                    if !self.eat(&TokenKind::RBrace) {
                        loop {
                            groups.push(self.int_list("a replica group")?);
                            if self.eat(&TokenKind::RBrace) {
                                break;
                            }
                            self.expect(&TokenKind::Comma, "',' or '}' in replica_groups")?;
                        }
                    }
                    ReplicaGroups::List(groups)
                } else {
                    ReplicaGroups::Iota(self.raw_value(key)?)
                })
            }
            "channel_id" => a.channel_id = Some(self.int(key)?),
            "use_global_device_ids" => a.use_global_device_ids = Some(self.boolean(key)?),
            "left_side" | "lower" | "unit_diagonal" | "transpose_a"
                if opcode == Opcode::TriangularSolve =>
            {
                self.triangular_solve_attr(
                    key,
                    a.triangular_solve.get_or_insert_with(Default::default),
                )?
            }
            "lower" if opcode == Opcode::Cholesky => {
                a.cholesky = Some(CholeskyOptions {
                    lower: self.boolean(key)?,
                })
            }
            "fft_type" => a.fft_type = Some(self.enum_word("fft type", FftType::from_name)?),
            "fft_length" => a.fft_length = Some(self.int_list(key)?),
            "algorithm" if opcode == Opcode::RngBitGenerator => {
                a.rng_algorithm = Some(self.enum_word("rng algorithm", RandomAlgorithm::from_name)?)
            }
            "algorithm" if opcode == Opcode::Dot => {
                a.dot_algorithm = Some(self.enum_word("dot algorithm", DotAlgorithm::from_name)?)
            }
            "distribution" => {
                a.distribution =
                    Some(self.enum_word("distribution", RandomDistribution::from_name)?)
            }
            "exponent_bits" => a.exponent_bits = Some(self.int(key)?),
            "mantissa_bits" => a.mantissa_bits = Some(self.int(key)?),
            "delta" => a.delta = Some(self.int(key)?),
            "epsilon" => {
                let v = self.enum_word("epsilon", parse_float_word)?;
                a.epsilon = Some(LiteralValue::Float(v));
            }
            "feature_index" => a.feature_index = Some(self.int(key)?),
            _ => {
                let v = self.raw_value(key)?;
                a.raw.push((key.to_string(), v));
            }
        }
        Ok(())
    }

    /// One of triangular-solve's options (XLA parses them as the fields of
    /// `TriangularSolveOptions`: each optional, in any order).
    fn triangular_solve_attr(&mut self, key: &str, o: &mut TriangularSolveOptions) -> Result<()> {
        match key {
            "left_side" => o.left_side = self.boolean(key)?,
            "lower" => o.lower = self.boolean(key)?,
            "unit_diagonal" => o.unit_diagonal = self.boolean(key)?,
            _ => o.transpose_a = Some(self.enum_word("transpose_a", Transpose::from_name)?),
        }
        Ok(())
    }

    /// `{{0}: (0, {}), {1}: (1, {0})}`: output index path, operand number, operand index path.
    pub(super) fn output_operand_aliasing(&mut self) -> Result<Vec<OutputOperandAlias>> {
        self.braced_list("output_to_operand_aliasing", |p| {
            let output_index = p.int_list("an output index")?;
            p.expect(&TokenKind::Colon, "':' after an output index")?;
            p.expect(&TokenKind::LParen, "'(' starting an aliased operand")?;
            let operand = p.int("an operand number")?;
            p.expect(&TokenKind::Comma, "',' after the operand number")?;
            let operand_index = p.int_list("an operand index")?;
            p.expect(&TokenKind::RParen, "')' closing an aliased operand")?;
            Ok(OutputOperandAlias {
                output_index,
                operand,
                operand_index,
            })
        })
    }

    pub(super) fn slice_attr(&mut self) -> Result<Vec<SliceDim>> {
        self.braced_list("slice", |p| {
            p.expect(&TokenKind::LBracket, "'[' starting a slice dimension")?;
            let start = p.int("slice start")?;
            p.expect(&TokenKind::Colon, "':' in a slice dimension")?;
            let limit = p.int("slice limit")?;
            let stride = if p.eat(&TokenKind::Colon) {
                p.int("slice stride")?
            } else {
                1
            };
            p.expect(&TokenKind::RBracket, "']' closing a slice dimension")?;
            Ok(SliceDim {
                start,
                limit,
                stride,
            })
        })
    }

    /// Splits a `AxB...` word into per-dimension parts and parses each with `f`.
    pub(super) fn x_separated<T>(
        &self,
        word: &str,
        loc: SourceLoc,
        what: &str,
        f: impl Fn(&str) -> Option<T>,
    ) -> Result<Vec<T>> {
        word.split('x')
            .map(|part| {
                f(part).ok_or_else(|| {
                    ParseError::new(
                        loc,
                        ParseErrorKind::BadAttribute,
                        format!("invalid {what} '{word}'"),
                    )
                })
            })
            .collect()
    }

    pub(super) fn padding(&mut self) -> Result<Vec<PadDim>> {
        let (w, loc) = self.expect_word("a padding (low_high[_interior]x...)")?;
        self.x_separated(&w, loc, "padding", |part| {
            let v: Vec<i64> = part
                .split('_')
                .map(|n| n.parse::<i64>().ok())
                .collect::<Option<Vec<_>>>()?;
            match v.as_slice() {
                [l, h] => Some(PadDim {
                    low: *l,
                    high: *h,
                    interior: 0,
                }),
                [l, h, i] => Some(PadDim {
                    low: *l,
                    high: *h,
                    interior: *i,
                }),
                _ => None,
            }
        })
    }

    pub(super) fn window(&mut self) -> Result<Window> {
        self.expect(&TokenKind::LBrace, "'{' starting window")?;
        let mut fields: Vec<(String, String, SourceLoc)> = Vec::new();
        while !self.eat(&TokenKind::RBrace) {
            let (k, loc) = self.expect_word("a window field (size, stride, pad, ...) or '}'")?;
            self.expect(&TokenKind::Equal, "'=' in window")?;
            let (v, _) = self.expect_word("a window field value")?;
            fields.push((k, v, loc));
        }
        let mut dims: Vec<WindowDim> = Vec::new();
        let mut rank: Option<usize> = None;
        for (k, v, loc) in &fields {
            let parts: Vec<&str> = v.split('x').collect();
            match rank {
                None => {
                    rank = Some(parts.len());
                    dims = vec![WindowDim::default(); parts.len()];
                }
                Some(r) if r != parts.len() => {
                    return Err(ParseError::new(
                        *loc,
                        ParseErrorKind::BadAttribute,
                        format!(
                            "window field {k}={v} has {} dimensions, expected {r}",
                            parts.len()
                        ),
                    ))
                }
                _ => {}
            }
            let bad = || {
                ParseError::new(
                    *loc,
                    ParseErrorKind::BadAttribute,
                    format!("invalid window field {k}={v}"),
                )
            };
            for (d, part) in dims.iter_mut().zip(&parts) {
                let num = || part.parse::<i64>().map_err(|_| bad());
                match k.as_str() {
                    "size" => d.size = num()?,
                    "stride" => d.stride = num()?,
                    "lhs_dilate" => d.lhs_dilation = num()?,
                    "rhs_dilate" => d.rhs_dilation = num()?,
                    "rhs_reversal" => d.reversal = num()? != 0,
                    "pad" => {
                        let (l, h) = part.split_once('_').ok_or_else(bad)?;
                        d.pad_low = l.parse().map_err(|_| bad())?;
                        d.pad_high = h.parse().map_err(|_| bad())?;
                    }
                    _ => {
                        return Err(ParseError::new(
                            *loc,
                            ParseErrorKind::BadAttribute,
                            format!("unknown window field '{k}'"),
                        ))
                    }
                }
            }
        }
        Ok(Window { dims })
    }

    pub(super) fn dim_labels(&mut self) -> Result<ConvDimensionNumbers> {
        let (lhs, loc) = self.expect_word("convolution dim_labels")?;
        let (lhs, rhs) = lhs
            .split_once('_')
            .map_or((lhs.clone(), String::new()), |(a, b)| {
                (a.to_string(), b.to_string())
            });
        self.expect(&TokenKind::Arrow, "'->' in dim_labels")?;
        let (out, _) = self.expect_word("output dim_labels")?;
        let bad = |m: &str| ParseError::new(loc, ParseErrorKind::BadAttribute, m.to_string());
        if lhs.len() != rhs.len() || lhs.len() != out.len() || lhs.len() < 2 {
            return Err(bad(&format!(
                "dim_labels {lhs}_{rhs}->{out}: the three label sets need equal ranks >= 2"
            )));
        }
        let nspatial = lhs.len() - 2;
        let decode = |labels: &str, a: char, b: char| -> Option<(i64, i64, Vec<i64>)> {
            let mut first = None;
            let mut second = None;
            let mut spatial = vec![None; nspatial];
            for (i, c) in labels.chars().enumerate() {
                let i = i as i64;
                if c == a && first.is_none() {
                    first = Some(i);
                } else if c == b && second.is_none() {
                    second = Some(i);
                } else {
                    let s = c.to_digit(10)? as usize;
                    let slot = spatial.get_mut(s)?;
                    if slot.is_some() {
                        return None;
                    }
                    *slot = Some(i);
                }
            }
            Some((
                first?,
                second?,
                spatial.into_iter().collect::<Option<Vec<_>>>()?,
            ))
        };
        let msg = format!("invalid dim_labels {lhs}_{rhs}->{out}");
        let (ib, if_, isp) = decode(&lhs, 'b', 'f').ok_or_else(|| bad(&msg))?;
        let (ki, ko, ksp) = decode(&rhs, 'i', 'o').ok_or_else(|| bad(&msg))?;
        let (ob, of, osp) = decode(&out, 'b', 'f').ok_or_else(|| bad(&msg))?;
        Ok(ConvDimensionNumbers {
            input_batch_dimension: ib,
            input_feature_dimension: if_,
            input_spatial_dimensions: isp,
            kernel_input_feature_dimension: ki,
            kernel_output_feature_dimension: ko,
            kernel_spatial_dimensions: ksp,
            output_batch_dimension: ob,
            output_feature_dimension: of,
            output_spatial_dimensions: osp,
        })
    }

    pub(super) fn metadata(&mut self) -> Result<OpMetadata> {
        self.expect(&TokenKind::LBrace, "'{' starting metadata")?;
        let mut m = OpMetadata::default();
        while !self.eat(&TokenKind::RBrace) {
            let (k, _) = self.expect_word("a metadata field or '}'")?;
            self.expect(&TokenKind::Equal, "'=' in metadata")?;
            match k.as_str() {
                "op_type" => m.op_type = Some(self.expect_string(&k)?),
                "op_name" => m.op_name = Some(self.expect_string(&k)?),
                "source_file" => m.source_file = Some(self.expect_string(&k)?),
                "deduplicated_name" => m.deduplicated_name = Some(self.expect_string(&k)?),
                "scheduling_name" => m.scheduling_name = Some(self.expect_string(&k)?),
                "source_line" => m.source_line = Some(self.int(&k)?),
                "source_end_line" => m.source_end_line = Some(self.int(&k)?),
                "source_column" => m.source_column = Some(self.int(&k)?),
                "source_end_column" => m.source_end_column = Some(self.int(&k)?),
                "stack_frame_id" => m.stack_frame_id = Some(self.int(&k)?),
                _ => {
                    let v = self.raw_value(&k)?;
                    m.other.push((k, v));
                }
            }
            self.eat(&TokenKind::Comma);
        }
        Ok(m)
    }
}
