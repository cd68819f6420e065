//! The module and its functions: location aliases and module attributes, `func.func` with its
//! arguments and results, regions and their blocks, and the finished `HloModule`.
use super::*;

impl<'a> Front<'a> {
    pub fn module(mut self) -> Result<HloModule> {
        // Location aliases (`#loc1 = loc(...)`) may come first.
        while self.c.peek() == Some(b'#') {
            self.c.pos += 1;
            self.c.expect_ident("an alias name")?;
            self.c.expect(b'=')?;
            self.c.attr()?;
        }
        if self.c.rest().starts_with(b"\"builtin.module\"") {
            return self.generic_module();
        }
        let had_module = if self.c.eat_kw("module") {
            if let Some(name) = self.c.symbol()? {
                self.module_name = name;
            }
            if self.c.eat_kw("attributes") {
                let attrs = self.c.dict()?;
                self.module_attrs(&attrs);
            }
            self.c.expect(b'{')?;
            true
        } else {
            false
        };
        loop {
            if had_module && self.c.eat(b'}') {
                self.c.opt_loc()?;
                break;
            }
            if self.c.at_end() {
                if had_module {
                    return Err(self.c.expected("'}' closing the module"));
                }
                break;
            }
            if self.c.peek() == Some(b'#') {
                // `#loc1 = loc(...)` and other attribute aliases.
                self.c.pos += 1;
                self.c.expect_ident("an alias name")?;
                self.c.expect(b'=')?;
                self.c.attr()?;
                continue;
            }
            if self.c.eat_kw("func.func") {
                self.func()?;
                continue;
            }
            if self.c.rest().starts_with(b"\"func.func\"") {
                self.generic_func()?;
                continue;
            }
            self.c.ws();
            let at = self.c.pos;
            if self.c.eat_kw("sdy.mesh") {
                self.mesh(at)?;
                continue;
            }
            if self.c.rest().starts_with(b"sdy.") {
                let e = self.c.error(ParseErrorKind::UnknownOpcode, SHARDY);
                return Err(e);
            }
            return Err(self.c.expected("'func.func'"));
        }
        self.after_module()
    }

    /// What may follow the module in both spellings (pretty and generic): alias definitions
    /// (`#name = ...`, skipped), then the end of the input; then the module is finished.
    pub(super) fn after_module(mut self) -> Result<HloModule> {
        while self.c.peek() == Some(b'#') {
            self.c.pos += 1;
            self.c.expect_ident("an alias name")?;
            self.c.expect(b'=')?;
            self.c.attr()?;
        }
        if !self.c.at_end() {
            return Err(self.c.expected("end of input"));
        }
        self.finish()
    }

    pub(super) fn module_attrs(&mut self, attrs: &[(String, Attr)]) {
        for (k, v) in attrs {
            let n = match v {
                Attr::Int(i) => i64::try_from(*i).ok(),
                _ => None,
            };
            match k.as_str() {
                "mhlo.num_replicas" => self.config.replica_count = n,
                "mhlo.num_partitions" => self.config.num_partitions = n,
                // Everything else (jax.uses_shape_polymorphism, mhlo.frontend_attributes,
                // sharding hints) does not change what the module computes.
                _ => {}
            }
        }
    }

    pub(super) fn finish(mut self) -> Result<HloModule> {
        let mut missing: Vec<(&String, &SourceLoc)> = self
            .funcs
            .iter()
            .filter(|(_, (id, _))| self.comps.get(id.index()).is_none_or(Option::is_none))
            .map(|(n, (_, l))| (n, l))
            .collect();
        missing.sort_by_key(|(_, l)| (l.line, l.column));
        if let Some((name, loc)) = missing.first() {
            return Err(ParseError::new(
                **loc,
                ParseErrorKind::UndefinedComputation,
                format!("call to undefined function @{name}"),
            ));
        }
        let entry = match (self.main, self.publics.as_slice()) {
            (Some(m), _) => m,
            (None, [one]) => *one,
            (None, []) => {
                return Err(ParseError::new(
                    SourceLoc { line: 1, column: 1 },
                    ParseErrorKind::Structure,
                    "no entry function: expected a public func.func @main",
                ))
            }
            (None, _) => {
                return Err(ParseError::new(
                    SourceLoc { line: 1, column: 1 },
                    ParseErrorKind::Structure,
                    "several public functions and none is @main: cannot choose the entry",
                ))
            }
        };
        if self.comps.iter().any(Option::is_none) {
            return Err(ParseError::new(
                SourceLoc::default(),
                ParseErrorKind::Structure,
                "a computation was left unfinished",
            ));
        }
        let computations: Vec<Computation> = self.comps.drain(..).flatten().collect();
        let mut module = HloModule {
            name: self.module_name.clone(),
            computations,
            entry,
            config: std::mem::take(&mut self.config),
            stack_frames: StackFrameIndex::default(),
        };
        let e = module.entry_computation();
        let params = e
            .param_shapes()
            .into_iter()
            .map(with_default_layout)
            .collect();
        let result = e
            .root_instruction()
            .map_or(Shape::Tuple(Vec::new()), |r| with_default_layout(&r.shape));
        module.config.entry_computation_layout = Some(ProgramLayout { params, result });
        Ok(module)
    }

    pub(super) fn func(&mut self) -> Result<()> {
        let loc = self.c.loc();
        let mut public = true;
        if self.c.eat_kw("private") {
            public = false;
        } else if self.c.eat_kw("public") {
        } else if self.c.eat_kw("nested") {
            public = false;
        }
        let Some(sym) = self.c.symbol()? else {
            return Err(self.c.expected("a function name '@...'"));
        };
        let id = self.begin_func(&sym, public, loc)?;
        // Arguments.
        self.c.expect(b'(').map_err(|e| self.named(e))?;
        let mut args = Vec::new();
        let mut arg_shardings = Vec::new();
        let mut result_shardings = Vec::new();
        if !self.c.eat(b')') {
            loop {
                let aloc = self.c.loc();
                let Some(name) = self.c.value_name().map_err(|e| self.named(e))? else {
                    return {
                        let e = self.c.expected("an argument '%name: type'");
                        Err(self.named(e))
                    };
                };
                self.c.expect(b':').map_err(|e| self.named(e))?;
                let ty = self.c.ty().map_err(|e| self.named(e))?;
                let mut sharding = None;
                if self.c.peek() == Some(b'{') {
                    let d = self.c.dict().map_err(|e| self.named(e))?;
                    sharding = self.sharding_of(&d, aloc)?;
                }
                arg_shardings.push(sharding);
                self.c.opt_loc()?;
                args.push((name.to_string(), ty, aloc));
                if self.c.eat(b')') {
                    break;
                }
                self.c.expect(b',').map_err(|e| self.named(e))?;
            }
        }
        // Results (of their attributes only the shardings matter; jax.result_info is a name).
        if self.c.eat_arrow() {
            if self.c.eat(b'(') {
                if !self.c.eat(b')') {
                    loop {
                        let rloc = self.c.loc();
                        self.c.ty().map_err(|e| self.named(e))?;
                        let mut sharding = None;
                        if self.c.peek() == Some(b'{') {
                            let d = self.c.dict().map_err(|e| self.named(e))?;
                            sharding = self.sharding_of(&d, rloc)?;
                        }
                        result_shardings.push(sharding);
                        if self.c.eat(b')') {
                            break;
                        }
                        self.c.expect(b',').map_err(|e| self.named(e))?;
                    }
                }
            } else {
                self.c.ty().map_err(|e| self.named(e))?;
            }
        }
        if self.c.eat_kw("attributes") {
            self.c.dict().map_err(|e| self.named(e))?;
        }
        self.c.opt_loc()?;
        if self.c.peek() != Some(b'{') {
            return {
                let e = self.c.expected("'{' starting the function body (declarations without a body are not supported)");
                Err(self.named(e))
            };
        }
        self.func_body(id, &sym, Some(args), loc)?;
        self.apply_func_shardings(id, arg_shardings, result_shardings);
        self.c.opt_loc()?;
        self.op_name.clear();
        Ok(())
    }

    /// What both spellings of `func.func` (pretty and generic) do once the name is read: name
    /// the op for error messages, reject a second definition of `@sym`, take its computation id
    /// (reserved earlier if a call named it first) and record a public function (and `@main`).
    pub(super) fn begin_func(
        &mut self,
        sym: &str,
        public: bool,
        loc: SourceLoc,
    ) -> Result<ComputationId> {
        self.op_name = format!("func.func @{sym}");
        if self
            .funcs
            .get(sym)
            .is_some_and(|(id, _)| self.comps.get(id.index()).is_some_and(Option::is_some))
        {
            return Err(self.err_at(
                loc,
                ParseErrorKind::DuplicateName,
                format!("function @{sym} defined twice"),
            ));
        }
        let id = self.func_id(sym, loc);
        if public {
            if sym == "main" {
                self.main = Some(id);
            }
            self.publics.push(id);
        }
        Ok(id)
    }

    /// A function's body region, shared by both spellings of `func.func`: reads it (the op
    /// name is restored after nested ops changed it) and finishes computation `id` with the
    /// values it returns.
    pub(super) fn func_body(
        &mut self,
        id: ComputationId,
        sym: &str,
        args: Option<Vec<(String, Shape, SourceLoc)>>,
        loc: SourceLoc,
    ) -> Result<()> {
        let fname = self.op_name.clone();
        let ret = self.region_body(RegionKind::Function, args, loc)?;
        self.op_name = fname;
        let root = self.root_of(RegionKind::Function, &ret, loc);
        self.finish_frame(id, sym, root)?;
        Ok(())
    }

    /// The root for the values a region returns.
    pub(super) fn root_of(&mut self, kind: RegionKind, ret: &[InstrId], loc: SourceLoc) -> InstrId {
        match (kind, ret) {
            (RegionKind::LoopBody, _) | (_, []) => self.tuple(ret.to_vec(), loc),
            (_, [one]) => *one,
            _ => self.tuple(ret.to_vec(), loc),
        }
    }

    pub fn tuple(&mut self, elems: Vec<InstrId>, loc: SourceLoc) -> InstrId {
        let shapes = elems.iter().map(|&e| self.shape_of(e).clone()).collect();
        self.add(
            Opcode::Tuple,
            Shape::Tuple(shapes),
            elems,
            Attrs::default(),
            loc,
        )
    }

    /// `{ ^bb0(args): ops... terminator }`: pushes a frame, reads the body and returns the
    /// returned values; the frame stays open for the caller to finish.
    pub(super) fn region_body(
        &mut self,
        kind: RegionKind,
        preset: Option<Vec<(String, Shape, SourceLoc)>>,
        loc: SourceLoc,
    ) -> Result<Vec<InstrId>> {
        self.c.enter().map_err(|e| self.named(e))?;
        self.c.expect(b'{').map_err(|e| self.named(e))?;
        self.push_frame(kind, loc);
        let mut args = preset;
        if self.c.peek() == Some(b'^') {
            self.c.pos += 1;
            self.c.ident();
            let mut bargs = Vec::new();
            if self.c.eat(b'(') && !self.c.eat(b')') {
                loop {
                    let aloc = self.c.loc();
                    let Some(name) = self.c.value_name()? else {
                        return {
                            let e = self.c.expected("a block argument '%name: type'");
                            Err(self.named(e))
                        };
                    };
                    self.c.expect(b':').map_err(|e| self.named(e))?;
                    let ty = self.c.ty().map_err(|e| self.named(e))?;
                    self.c.opt_loc()?;
                    bargs.push((name.to_string(), ty, aloc));
                    if self.c.eat(b')') {
                        break;
                    }
                    self.c.expect(b',').map_err(|e| self.named(e))?;
                }
            }
            self.c.expect(b':').map_err(|e| self.named(e))?;
            if args.is_some() {
                return Err(self.err_at(
                    loc,
                    ParseErrorKind::Structure,
                    "region arguments written twice",
                ));
            }
            args = Some(bargs);
        }
        self.bind_args(&args.unwrap_or_default())?;
        let outer_op = std::mem::take(&mut self.op_name);
        let ret = loop {
            if self.c.peek() == Some(b'}') {
                let l = self.c.loc();
                self.op_name = outer_op.clone();
                return Err(self.err_at(
                    l,
                    ParseErrorKind::Structure,
                    "region ends without a return",
                ));
            }
            if self.c.at_end() {
                self.op_name = outer_op.clone();
                return {
                    let e = self.c.expected("'}' closing the region");
                    Err(self.named(e))
                };
            }
            if self.c.peek() == Some(b'^') {
                self.op_name = outer_op.clone();
                return {
                    let e = self.c.error(
                        ParseErrorKind::Structure,
                        "regions with several blocks are not supported",
                    );
                    Err(self.named(e))
                };
            }
            if let Some(r) = self.statement()? {
                break r;
            }
        };
        self.op_name = outer_op;
        if self.c.peek() == Some(b'^') {
            let e = self.c.error(
                ParseErrorKind::Structure,
                "regions with several blocks are not supported",
            );
            return Err(self.named(e));
        }
        self.c.expect(b'}').map_err(|e| self.named(e))?;
        self.c.leave();
        Ok(ret)
    }

    /// A region of an op, built into a new computation.
    pub fn region(
        &mut self,
        kind: RegionKind,
        preset: Option<Vec<(String, Shape, SourceLoc)>>,
    ) -> Result<RegionOut> {
        let loc = self.c.loc();
        let ret = self.region_body(kind, preset, loc)?;
        let arg_shapes = match self.top().tuple_param {
            Some(p) if matches!(kind, RegionKind::LoopCond | RegionKind::LoopBody) => {
                let n = self.top().n_args;
                self.top().instrs[p.index()]
                    .shape
                    .tuple_shapes()
                    .map(|t| t[..n.min(t.len())].to_vec())
                    .unwrap_or_default()
            }
            _ => {
                let f = &self.frames[self.frames.len() - 1];
                f.params
                    .iter()
                    .map(|p| f.instrs[p.index()].shape.clone())
                    .collect()
            }
        };
        let root = self.root_of(kind, &ret, loc);
        let tuple_param = self.top().tuple_param;
        let id = self.reserve_comp();
        let n = self.next_id();
        let captures = self.finish_frame(id, &format!("region_{n}"), root)?;
        Ok(RegionOut {
            comp: id,
            captures,
            arg_shapes,
            tuple_param,
            loc,
        })
    }
}
