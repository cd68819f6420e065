//! The pretty op forms JAX prints (`stablehlo.add %a, %b : tensor<4xf32>`, reduce and while with their regions), read into the same [`Op`] as the generic form.

use super::*;

impl<'a> Front<'a> {
    /// The pretty forms.
    pub(super) fn pretty(&mut self, op: &mut Op) -> Result<()> {
        let short = op
            .name
            .strip_prefix("stablehlo.")
            .unwrap_or(&op.name)
            .to_string();
        match short.as_str() {
            "constant" if op.name == "stablehlo.constant" => {
                if self.c.peek() == Some(b'{') {
                    let d = self.c.dict()?;
                    op.attrs.extend(d);
                }
                let v = self.c.attr()?;
                if let Attr::Dense(_, ty) = &v {
                    op.result_types = vec![ty.clone()];
                } else {
                    return Err(self.c.error(
                        ParseErrorKind::BadLiteral,
                        "expected a dense<...> : type literal",
                    ));
                }
                op.attrs.push(("value".into(), v));
                Ok(())
            }
            "return" | "func.return" | "sdy.return" => {
                if self.c.peek() == Some(b'%') {
                    loop {
                        let v = self.operand()?;
                        op.operands.push(v);
                        if !self.c.eat(b',') {
                            break;
                        }
                    }
                    self.c.expect(b':')?;
                    self.type_sig(op)?;
                }
                Ok(())
            }
            "call" | "func.call" => {
                let Some(sym) = self.c.symbol()? else {
                    return Err(self.c.expected("a callee '@name'"));
                };
                op.callee = Some(sym);
                self.operand_list_paren(op)?;
                if self.c.peek() == Some(b'{') {
                    let d = self.c.dict()?;
                    op.attrs.extend(d);
                }
                self.c.expect(b':')?;
                op.result_types = self.type_sig(op)?.1;
                Ok(())
            }
            "custom_call" if op.name == "stablehlo.custom_call" => {
                let Some(sym) = self.c.symbol()? else {
                    return Err(self.c.expected("a call target '@name'"));
                };
                op.attrs.push(("call_target_name".into(), Attr::Str(sym)));
                self.operand_list_paren(op)?;
                if self.c.peek() == Some(b'{') {
                    let d = self.c.dict()?;
                    op.attrs.extend(d);
                }
                self.c.expect(b':')?;
                op.result_types = self.type_sig(op)?.1;
                Ok(())
            }
            "reduce" if op.name == "stablehlo.reduce" && self.c.peek() == Some(b'(') => {
                self.pretty_reduce(op)
            }
            "while" if op.name == "stablehlo.while" => self.pretty_while(op),
            "sdy.sharding_constraint" => self.pretty_sharding_constraint(op),
            "sdy.manual_computation" => self.pretty_manual_computation(op),
            s if s.starts_with("sdy.") => {
                Err(self.err_at(op.loc, ParseErrorKind::UnknownOpcode, super::SHARDY))
            }
            "convolution" if op.name == "stablehlo.convolution" => {
                self.operand_list_paren(op)?;
                self.c.expect_kw("dim_numbers")?;
                self.c.expect(b'=')?;
                let d = self.c.conv_labels()?;
                op.attrs.push(("dimension_numbers".into(), d));
                self.c.expect(b',')?;
                self.c.expect_kw("window")?;
                self.c.expect(b'=')?;
                let w = self.c.attr_bare()?;
                op.attrs.push(("window".into(), w));
                if self.c.peek() == Some(b'{') {
                    let d = self.c.dict()?;
                    op.attrs.extend(d);
                }
                self.c.expect(b':')?;
                op.result_types = self.type_sig(op)?.1;
                Ok(())
            }
            "chlo.top_k" => {
                // `chlo.top_k(%x, k = 3) : T -> (T, U)`
                self.c.expect(b'(')?;
                op.operands.push(self.operand()?);
                self.c.expect(b',')?;
                self.c.expect_kw("k")?;
                self.c.expect(b'=')?;
                let k = self.c.attr_bare()?;
                op.attrs.push(("k".into(), k));
                self.c.expect(b')')?;
                if self.c.peek() == Some(b'{') {
                    let d = self.c.dict()?;
                    op.attrs.extend(d);
                }
                self.c.expect(b':')?;
                op.result_types = self.type_sig(op)?.1;
                Ok(())
            }
            "composite" if op.name == "stablehlo.composite" => {
                let n = self.c.string()?;
                op.attrs.push(("name".into(), Attr::Str(n)));
                self.pretty_default(op)
            }
            _ => self.pretty_default(op),
        }
    }

    /// The common pretty shape: operands, `key = value` keywords, bare keywords, `[...]` slice
    /// or index suffixes and an attribute dictionary, in any order, then `:` and the types.
    pub(super) fn pretty_default(&mut self, op: &mut Op) -> Result<()> {
        loop {
            match self.c.peek() {
                Some(b':') => break,
                Some(b'%') => {
                    let v = self.operand()?;
                    op.operands.push(v);
                    if self.c.peek() == Some(b'[') {
                        self.bracket_suffix(op)?;
                    }
                }
                Some(b'{') => {
                    let d = self.c.dict()?;
                    op.attrs.extend(d);
                    continue;
                }
                _ => {
                    let Some(word) = self.c.ident() else {
                        return Err(self.c.expected("':' and the op's types"));
                    };
                    if self.c.eat(b'=') {
                        let mut v = self.c.attr_bare()?;
                        if self.c.eat_kw("x") {
                            let w = self.c.attr_bare()?;
                            v = Attr::Pair(Box::new(v), Box::new(w));
                        }
                        op.attrs.push((word.to_string(), v));
                    } else {
                        op.positional.push(word.to_string());
                    }
                }
            }
            if !self.c.eat(b',') && !matches!(self.c.peek(), Some(b':' | b'{')) {
                return Err(self.c.expected("',' or ':'"));
            }
        }
        self.c.expect(b':')?;
        op.result_types = self.type_sig(op)?.1;
        Ok(())
    }

    /// `[1:5, 0:8:2]` (slice) or `[0]` (get_tuple_element index).
    pub(super) fn bracket_suffix(&mut self, op: &mut Op) -> Result<()> {
        self.c.expect(b'[')?;
        let (mut starts, mut limits, mut strides) = (Vec::new(), Vec::new(), Vec::new());
        let mut ranged = false;
        if !self.c.eat(b']') {
            loop {
                let s = self.c.integer("a start index")?;
                starts.push(s);
                if self.c.eat(b':') {
                    ranged = true;
                    limits.push(self.c.integer("a limit index")?);
                    strides.push(if self.c.eat(b':') {
                        self.c.integer("a stride")?
                    } else {
                        1
                    });
                }
                if self.c.eat(b']') {
                    break;
                }
                self.c.expect(b',')?;
            }
        }
        if ranged {
            if limits.len() != starts.len() {
                return Err(self.c.error(
                    ParseErrorKind::BadAttribute,
                    "every slice dimension needs start:limit",
                ));
            }
            op.attrs
                .push(("start_indices".into(), Attr::IntArray(starts)));
            op.attrs
                .push(("limit_indices".into(), Attr::IntArray(limits)));
            op.attrs.push(("strides".into(), Attr::IntArray(strides)));
        } else {
            match starts.as_slice() {
                [i] => op.attrs.push(("index".into(), Attr::Int(i128::from(*i)))),
                _ => op
                    .attrs
                    .push(("start_indices".into(), Attr::IntArray(starts))),
            }
        }
        Ok(())
    }

    /// `stablehlo.reduce(%a init: %i), ... applies OP across dimensions = [..] : types` or with
    /// `reducer(%acc: T, %x: T) ... { body }`.
    pub(super) fn pretty_reduce(&mut self, op: &mut Op) -> Result<()> {
        let mut inputs = Vec::new();
        let mut inits = Vec::new();
        loop {
            self.c.expect(b'(')?;
            inputs.push(self.operand()?);
            self.c.expect_kw("init")?;
            self.c.expect(b':')?;
            inits.push(self.operand()?);
            self.c.expect(b')')?;
            if !self.c.eat(b',') {
                break;
            }
        }
        op.operands.extend(inputs);
        op.operands.extend(inits);
        if self.c.eat_kw("applies") {
            let Some(name) = self.c.ident() else {
                return Err(self.c.expected("the op a reduce applies"));
            };
            op.applies = Some(name.to_string());
        }
        self.c.expect_kw("across")?;
        self.c.expect_kw("dimensions")?;
        self.c.expect(b'=')?;
        let d = self.c.attr_bare()?;
        op.attrs.push(("dimensions".into(), d));
        if self.c.peek() == Some(b'{') {
            let d = self.c.dict()?;
            op.attrs.extend(d);
        }
        self.c.expect(b':')?;
        op.result_types = self.type_sig(op)?.1;
        if op.applies.is_none() {
            self.c.expect_kw("reducer")?;
            let mut accs = Vec::new();
            let mut xs = Vec::new();
            while self.c.eat(b'(') {
                let mut pair = Vec::new();
                for k in 0..2 {
                    if k == 1 {
                        self.c.expect(b',')?;
                    }
                    let aloc = self.c.loc();
                    let Some(name) = self.c.value_name()? else {
                        return Err(self.c.expected("a reducer argument '%name: type'"));
                    };
                    self.c.expect(b':')?;
                    let ty = self.c.ty()?;
                    self.c.opt_loc()?;
                    pair.push((name.to_string(), ty, aloc));
                }
                self.c.expect(b')')?;
                let mut it = pair.into_iter();
                accs.extend(it.next());
                xs.extend(it.next());
            }
            accs.extend(xs);
            let r = self.region(RegionKind::Plain, Some(accs))?;
            op.regions.push(r);
        }
        Ok(())
    }

    /// `stablehlo.while(%iterArg = %init, ...) : types cond { ... } do { ... }`.
    pub(super) fn pretty_while(&mut self, op: &mut Op) -> Result<()> {
        self.c.expect(b'(')?;
        let mut names = Vec::new();
        if !self.c.eat(b')') {
            loop {
                let aloc = self.c.loc();
                let Some(name) = self.c.value_name()? else {
                    return Err(self.c.expected("'%iterArg = %init'"));
                };
                self.c.expect(b'=')?;
                op.operands.push(self.operand()?);
                names.push((name.to_string(), aloc));
                if self.c.eat(b')') {
                    break;
                }
                self.c.expect(b',')?;
            }
        }
        self.c.expect(b':')?;
        let mut types = Vec::new();
        if !names.is_empty() {
            loop {
                types.push(self.c.ty()?);
                if !self.c.eat(b',') {
                    break;
                }
            }
        }
        if types.len() != names.len() {
            return Err(self.err_at(
                op.loc,
                ParseErrorKind::Syntax,
                format!("{} loop values, {} types", names.len(), types.len()),
            ));
        }
        if self.c.eat_kw("attributes") {
            let d = self.c.dict()?;
            op.attrs.extend(d);
        }
        let args: Vec<(String, Shape, SourceLoc)> = names
            .into_iter()
            .zip(types.iter().cloned())
            .map(|((n, l), t)| (n, t, l))
            .collect();
        self.c.expect_kw("cond")?;
        let cond = self.region(RegionKind::LoopCond, Some(args.clone()))?;
        self.c.expect_kw("do")?;
        let body = self.region(RegionKind::LoopBody, Some(args))?;
        op.regions.push(cond);
        op.regions.push(body);
        op.result_types = types;
        Ok(())
    }

    /// The reduction XLA's `BuildReductionComputation` makes of a sort comparator over
    /// `scalars` (one element type per operand): parameters `lhs.0..lhs.n-1, rhs.0..rhs.n-1`,
    /// the comparator called on `lhs.0, rhs.0, lhs.1, rhs.1, ...`, and per operand `select(pred,
    /// lhs.i, rhs.i)`, as a tuple (the scalar itself for one operand).
    pub fn comparator_reduction(
        &mut self,
        comparator: ComputationId,
        scalars: &[Shape],
        loc: SourceLoc,
    ) -> Result<ComputationId> {
        self.push_frame(RegionKind::Plain, loc);
        let args: Vec<(String, Shape, SourceLoc)> = ["lhs", "rhs"]
            .into_iter()
            .flat_map(|side| {
                let named = scalars.iter().enumerate();
                named.map(move |(i, s)| (format!("{side}.{i}"), s.clone(), loc))
            })
            .collect();
        self.bind_args(&args)?;
        let params = self.top().params.clone();
        let (lhs, rhs) = params.split_at(scalars.len());
        let interleaved = lhs.iter().zip(rhs).flat_map(|(&l, &r)| [l, r]).collect();
        let call = Attrs {
            to_apply: Some(comparator),
            ..Attrs::default()
        };
        let pred = Shape::scalar(PrimitiveType::Pred);
        let pred = self.add(Opcode::Call, pred, interleaved, call, loc);
        let mut picked = Vec::with_capacity(scalars.len());
        for ((&l, &r), s) in lhs.iter().zip(rhs).zip(scalars) {
            let select = vec![pred, l, r];
            picked.push(self.add(Opcode::Select, s.clone(), select, Attrs::default(), loc));
        }
        // One operand: the reduce's computation returns the scalar itself, as HLO's reduce of
        // one operand takes.
        let root = match picked.as_slice() {
            [one] => *one,
            _ => self.add(
                Opcode::Tuple,
                Shape::Tuple(scalars.to_vec()),
                picked,
                Attrs::default(),
                loc,
            ),
        };
        let id = self.reserve_comp();
        let n = self.next_id();
        self.finish_frame(id, &format!("ReductionFn_{n}"), root)?;
        Ok(id)
    }

    /// A computation built directly (the body of `reduce ... applies OP`).
    pub fn binary_region(
        &mut self,
        opcode: Opcode,
        scalar: Shape,
        loc: SourceLoc,
    ) -> Result<RegionOut> {
        self.push_frame(RegionKind::Plain, loc);
        let args = vec![
            ("lhs".to_string(), scalar.clone(), loc),
            ("rhs".to_string(), scalar.clone(), loc),
        ];
        self.bind_args(&args)?;
        let params = self.top().params.clone();
        let root = self.add(opcode, scalar.clone(), params, Attrs::default(), loc);
        let id = self.reserve_comp();
        let n = self.next_id();
        self.finish_frame(id, &format!("region_{n}"), root)?;
        Ok(RegionOut {
            comp: id,
            captures: Vec::new(),
            arg_shapes: vec![scalar.clone(), scalar],
            tuple_param: None,
            loc,
        })
    }
}
