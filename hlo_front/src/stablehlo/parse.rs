//! The StableHLO syntax: module, `func.func`, regions and blocks, and every op in both its
//! generic form (`"stablehlo.add"(%a, %b) : (...) -> ...`) and the pretty forms JAX prints.
//! Each op is read into one [`Op`] (operands resolved to instructions, attributes under their
//! generic names or the pretty keywords, regions already built as computations) and handed to
//! the lowering in `lower.rs`.

mod generic;
mod pretty;
mod shardings;
mod values;

use std::collections::HashMap;

use super::scan::{Attr, Cursor, Result};
use hlo::Shape;
use hlo::*;
use hlo_text::{ParseError, ParseErrorKind};

/// How a region's block arguments and the values it uses from outside become HLO parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RegionKind {
    /// `func.func`: arguments are parameters; nothing is visible from outside.
    Function,
    /// Called computations (reduce, sort, scatter, reduce_window, all_reduce, ...): arguments
    /// are parameters; XLA's `to_apply` computations cannot capture outer values.
    Plain,
    /// `while` condition: one tuple parameter (iteration values, then captured values).
    LoopCond,
    /// `while` body: like the condition; the root passes captured values through.
    LoopBody,
    /// `if` / `case` branch: no arguments; captured values become the branch's operand (the
    /// value itself for one, a tuple for none or several, as XLA's exporter does).
    Branch,
}

/// A value a region uses from an enclosing one.
#[derive(Debug, Clone)]
pub(crate) struct Capture {
    /// The value in the enclosing computation.
    pub outer: InstrId,
    /// The `get-tuple-element` (or parameter) standing for it inside the region.
    pub inner: InstrId,
    pub shape: Shape,
}

/// A region, built into a computation.
#[derive(Debug, Clone)]
pub(crate) struct RegionOut {
    pub comp: ComputationId,
    pub captures: Vec<Capture>,
    pub arg_shapes: Vec<Shape>,
    /// The tuple parameter of a loop region.
    pub tuple_param: Option<InstrId>,
    pub loc: SourceLoc,
}

/// What an SSA name stands for.
#[derive(Debug, Clone, Copy)]
enum ValDef {
    One(InstrId),
    /// Results `first..first+count` of a tuple-shaped instruction.
    Multi {
        tuple: InstrId,
        first: usize,
        count: usize,
    },
}

pub(crate) struct Frame {
    pub loc: SourceLoc,
    pub kind: RegionKind,
    pub instrs: Vec<Instruction>,
    pub params: Vec<InstrId>,
    values: HashMap<String, ValDef>,
    gtes: HashMap<(InstrId, usize), InstrId>,
    pub tuple_param: Option<InstrId>,
    pub n_args: usize,
    pub captures: Vec<Capture>,
    capture_keys: HashMap<(String, Option<usize>), usize>,
}

/// One op as read: the common form every syntax is turned into.
#[derive(Debug, Clone)]
pub(crate) struct Op {
    pub name: String,
    pub loc: SourceLoc,
    pub operands: Vec<InstrId>,
    /// Attributes by name (generic names, or the pretty keywords such as `dims`).
    pub attrs: Vec<(String, Attr)>,
    /// Bare keywords of the pretty form, in order (`GT`, `FLOAT` of `compare`).
    pub positional: Vec<String>,
    pub regions: Vec<RegionOut>,
    pub result_types: Vec<Shape>,
    /// `@callee` of `func.call` and `custom_call`.
    pub callee: Option<String>,
    /// `applies stablehlo.add` of the pretty `reduce`.
    pub applies: Option<String>,
}

impl Op {
    fn new(name: String, loc: SourceLoc) -> Op {
        Op {
            name,
            loc,
            operands: Vec::new(),
            attrs: Vec::new(),
            positional: Vec::new(),
            regions: Vec::new(),
            result_types: Vec::new(),
            callee: None,
            applies: None,
        }
    }
}

/// The result of lowering one op.
pub(crate) enum Lowered {
    /// One result.
    One(InstrId),
    /// `n` results, elements of a tuple-shaped instruction.
    Tuple(InstrId, usize),
}

pub(crate) struct Front<'a> {
    pub c: Cursor<'a>,
    pub frames: Vec<Frame>,
    pub comps: Vec<Option<Computation>>,
    funcs: HashMap<String, (ComputationId, SourceLoc)>,
    comp_names: std::collections::HashSet<String>,
    counter: u64,
    /// The op being read, for error messages.
    pub op_name: String,
    pub module_name: String,
    pub config: ModuleConfig,
    main: Option<ComputationId>,
    publics: Vec<ComputationId>,
    /// `sdy.mesh @name = <...>` of the module, for `sdy.sharding` attributes.
    pub meshes: crate::sdy::Meshes,
}

/// Why other Shardy (`sdy`) ops are refused.
pub(crate) const SHARDY: &str = "this Shardy op is not supported (sdy.mesh, sdy.sharding, sdy.sharding_constraint and sdy.manual_computation are)";

fn is_terminator(name: &str) -> bool {
    matches!(
        name,
        "stablehlo.return" | "func.return" | "return" | "mhlo.return" | "sdy.return"
    )
}

impl<'a> Front<'a> {
    pub fn new(text: &'a str) -> Front<'a> {
        Front {
            c: Cursor::new(text),
            frames: Vec::new(),
            comps: Vec::new(),
            funcs: HashMap::new(),
            comp_names: Default::default(),
            counter: 0,
            op_name: String::new(),
            module_name: "main".into(),
            config: ModuleConfig::default(),
            main: None,
            publics: Vec::new(),
            meshes: Vec::new(),
        }
    }

    /// An error at `loc` naming the op being read.
    pub fn err_at(
        &self,
        loc: SourceLoc,
        kind: ParseErrorKind,
        msg: impl Into<String>,
    ) -> ParseError {
        let msg = msg.into();
        if self.op_name.is_empty() {
            ParseError::new(loc, kind, msg)
        } else {
            ParseError::new(loc, kind, format!("{}: {msg}", self.op_name))
        }
    }

    /// Adds the op name to a scanner error.
    fn named(&self, e: ParseError) -> ParseError {
        if self.op_name.is_empty() || e.message.starts_with(&self.op_name) {
            e
        } else {
            ParseError::new(e.loc(), e.kind, format!("{}: {}", self.op_name, e.message))
        }
    }

    fn next_id(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    fn unique_comp_name(&mut self, base: &str) -> String {
        let clean: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let clean = if clean.is_empty() {
            "f".to_string()
        } else {
            clean
        };
        let mut name = clean.clone();
        while self.comp_names.contains(&name) {
            name = format!("{clean}.{}", self.next_id());
        }
        self.comp_names.insert(name.clone());
        name
    }

    fn reserve_comp(&mut self) -> ComputationId {
        self.comps.push(None);
        ComputationId(u32::try_from(self.comps.len() - 1).unwrap_or(u32::MAX))
    }

    /// The computation of function `@sym`, reserved on first reference.
    pub fn func_id(&mut self, sym: &str, loc: SourceLoc) -> ComputationId {
        if let Some(&(id, _)) = self.funcs.get(sym) {
            return id;
        }
        let id = self.reserve_comp();
        self.funcs.insert(sym.to_string(), (id, loc));
        id
    }

    fn top(&mut self) -> &mut Frame {
        // A frame is pushed before any op is read, so this never fails on parser paths.
        let n = self.frames.len();
        &mut self.frames[n - 1]
    }

    /// Adds an instruction to the innermost computation.
    pub fn add(
        &mut self,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attrs: Attrs,
        loc: SourceLoc,
    ) -> InstrId {
        let level = self.frames.len() - 1;
        self.add_at(level, opcode, shape, operands, attrs, loc)
    }

    fn add_at(
        &mut self,
        level: usize,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attrs: Attrs,
        loc: SourceLoc,
    ) -> InstrId {
        let n = self.next_id();
        let name = match opcode {
            Opcode::Parameter => format!("Arg_{}.{n}", attrs.parameter_number.unwrap_or(0)),
            _ => format!("{}.{n}", opcode.name()),
        };
        let f = &mut self.frames[level];
        let id = InstrId(u32::try_from(f.instrs.len()).unwrap_or(u32::MAX));
        f.instrs.push(Instruction {
            name,
            opcode,
            shape,
            operands,
            attrs,
            metadata: None,
            loc,
        });
        id
    }

    pub fn shape_of(&self, id: InstrId) -> &Shape {
        let f = &self.frames[self.frames.len() - 1];
        &f.instrs[id.index()].shape
    }

    fn gte_at(&mut self, level: usize, tuple: InstrId, index: usize, loc: SourceLoc) -> InstrId {
        if let Some(&g) = self.frames[level].gtes.get(&(tuple, index)) {
            return g;
        }
        let shape = self.frames[level].instrs[tuple.index()]
            .shape
            .tuple_shapes()
            .and_then(|t| t.get(index))
            // A custom call's result layouts are the call's; the element is a plain value.
            .map(Shape::without_layout)
            .unwrap_or(Shape::Tuple(Vec::new()));
        let attrs = Attrs {
            tuple_index: Some(index as i64),
            ..Attrs::default()
        };
        let g = self.add_at(
            level,
            Opcode::GetTupleElement,
            shape,
            vec![tuple],
            attrs,
            loc,
        );
        self.frames[level].gtes.insert((tuple, index), g);
        g
    }

    pub fn gte(&mut self, tuple: InstrId, index: usize, loc: SourceLoc) -> InstrId {
        let level = self.frames.len() - 1;
        self.gte_at(level, tuple, index, loc)
    }

    /// Binds the results of an op to the names it declared.
    fn bind(&mut self, names: &[(String, usize, SourceLoc)], lowered: Lowered) -> Result<()> {
        let total: usize = names.iter().map(|n| n.1).sum();
        let (tuple, n) = match lowered {
            Lowered::One(id) => {
                if total != 1 {
                    return Err(self.err_at(
                        names.first().map_or_else(SourceLoc::default, |n| n.2),
                        ParseErrorKind::Structure,
                        format!("op has 1 result, {total} names declared"),
                    ));
                }
                let (name, _, loc) = &names[0];
                return self.define(name, ValDef::One(id), *loc);
            }
            Lowered::Tuple(t, n) => (t, n),
        };
        if total != n {
            return Err(self.err_at(
                names.first().map_or_else(SourceLoc::default, |n| n.2),
                ParseErrorKind::Structure,
                format!("op has {n} results, {total} names declared"),
            ));
        }
        let mut first = 0;
        for (name, count, loc) in names {
            self.define(
                name,
                ValDef::Multi {
                    tuple,
                    first,
                    count: *count,
                },
                *loc,
            )?;
            first += count;
        }
        Ok(())
    }

    fn define(&mut self, name: &str, def: ValDef, loc: SourceLoc) -> Result<()> {
        if self.top().values.insert(name.to_string(), def).is_some() {
            return Err(self.err_at(
                loc,
                ParseErrorKind::DuplicateName,
                format!("value %{name} defined twice"),
            ));
        }
        Ok(())
    }

    fn push_frame(&mut self, kind: RegionKind, loc: SourceLoc) {
        self.frames.push(Frame {
            loc,
            kind,
            instrs: Vec::new(),
            params: Vec::new(),
            values: HashMap::new(),
            gtes: HashMap::new(),
            tuple_param: None,
            n_args: 0,
            captures: Vec::new(),
            capture_keys: HashMap::new(),
        });
    }

    /// Binds block arguments in the innermost frame according to its kind.
    fn bind_args(&mut self, args: &[(String, Shape, SourceLoc)]) -> Result<()> {
        let kind = self.top().kind;
        let loc = self.top().loc;
        match kind {
            RegionKind::Function | RegionKind::Plain => {
                for (i, (name, shape, aloc)) in args.iter().enumerate() {
                    let attrs = Attrs {
                        parameter_number: Some(i as i64),
                        ..Attrs::default()
                    };
                    let p = self.add(Opcode::Parameter, shape.clone(), vec![], attrs, *aloc);
                    self.top().params.push(p);
                    self.define(name, ValDef::One(p), *aloc)?;
                }
            }
            RegionKind::LoopCond | RegionKind::LoopBody => {
                let shapes: Vec<Shape> = args.iter().map(|a| a.1.clone()).collect();
                let attrs = Attrs {
                    parameter_number: Some(0),
                    ..Attrs::default()
                };
                let p = self.add(Opcode::Parameter, Shape::Tuple(shapes), vec![], attrs, loc);
                let f = self.top();
                f.params.push(p);
                f.tuple_param = Some(p);
                f.n_args = args.len();
                for (i, (name, _, aloc)) in args.iter().enumerate() {
                    let g = self.gte(p, i, *aloc);
                    self.define(name, ValDef::One(g), *aloc)?;
                }
            }
            RegionKind::Branch => {
                if let Some((_, _, aloc)) = args.first() {
                    return Err(self.err_at(
                        *aloc,
                        ParseErrorKind::Structure,
                        "a branch region takes no block arguments",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Pops the innermost frame into a computation with root `root`.
    fn finish_frame(
        &mut self,
        id: ComputationId,
        base_name: &str,
        root: InstrId,
    ) -> Result<Vec<Capture>> {
        let Some(mut f) = self.frames.pop() else {
            return Err(ParseError::new(
                SourceLoc::default(),
                ParseErrorKind::Structure,
                "no open region",
            ));
        };
        let mut root = root;
        if f.kind == RegionKind::Branch {
            match f.captures.len() {
                0 => {
                    let n = self.next_id();
                    let attrs = Attrs {
                        parameter_number: Some(0),
                        ..Attrs::default()
                    };
                    let pid = InstrId(u32::try_from(f.instrs.len()).unwrap_or(u32::MAX));
                    f.instrs.push(Instruction {
                        name: format!("Arg_0.{n}"),
                        opcode: Opcode::Parameter,
                        shape: Shape::Tuple(Vec::new()),
                        operands: vec![],
                        attrs,
                        metadata: None,
                        loc: f.loc,
                    });
                    f.params.push(pid);
                }
                1 => {
                    // One captured value is the branch's operand itself: the get-tuple-element
                    // becomes the parameter and the tuple parameter goes.
                    let inner = f.captures[0].inner;
                    let tuple = f.tuple_param.unwrap_or(inner);
                    let n = self.next_id();
                    let i = &mut f.instrs[inner.index()];
                    i.opcode = Opcode::Parameter;
                    i.operands.clear();
                    i.attrs = Attrs {
                        parameter_number: Some(0),
                        ..Attrs::default()
                    };
                    i.name = format!("Arg_0.{n}");
                    let removed = tuple.index();
                    f.instrs.remove(removed);
                    let fix = |x: InstrId| {
                        if x.index() > removed {
                            InstrId(x.0 - 1)
                        } else {
                            x
                        }
                    };
                    for ins in &mut f.instrs {
                        for o in &mut ins.operands {
                            *o = fix(*o);
                        }
                    }
                    root = fix(root);
                    f.params = vec![fix(inner)];
                    f.captures[0].inner = fix(inner);
                    f.tuple_param = None;
                }
                _ => {
                    let shapes = f.captures.iter().map(|c| c.shape.clone()).collect();
                    if let Some(p) = f.tuple_param {
                        f.instrs[p.index()].shape = Shape::Tuple(shapes);
                    }
                }
            }
        }
        let name = self.unique_comp_name(base_name);
        let comp = Computation {
            name,
            instructions: f.instrs,
            params: f.params,
            root,
            execution_thread: None,
            loc: f.loc,
        };
        if let Some(slot) = self.comps.get_mut(id.index()) {
            *slot = Some(comp);
        }
        Ok(f.captures)
    }

    pub fn comp_mut(&mut self, id: ComputationId) -> Option<&mut Computation> {
        self.comps.get_mut(id.index()).and_then(Option::as_mut)
    }

    // ---- module and functions ----------------------------------------------------------

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
    fn after_module(mut self) -> Result<HloModule> {
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

    fn module_attrs(&mut self, attrs: &[(String, Attr)]) {
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

    fn finish(mut self) -> Result<HloModule> {
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

    fn func(&mut self) -> Result<()> {
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
    fn begin_func(&mut self, sym: &str, public: bool, loc: SourceLoc) -> Result<ComputationId> {
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
    fn func_body(
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
    fn root_of(&mut self, kind: RegionKind, ret: &[InstrId], loc: SourceLoc) -> InstrId {
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
    fn region_body(
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

    // ---- ops ----------------------------------------------------------------------------

    /// One statement; `Some(values)` when it was the region's terminator.
    fn statement(&mut self) -> Result<Option<Vec<InstrId>>> {
        let loc = self.c.loc();
        let mut names: Vec<(String, usize, SourceLoc)> = Vec::new();
        if self.c.peek() == Some(b'%') {
            loop {
                let nloc = self.c.loc();
                let Some(name) = self.c.value_name()? else {
                    return Err(self.c.expected("a result name"));
                };
                let mut count = 1;
                if self.c.eat(b':') {
                    let n = self.c.integer("a result count")?;
                    count = usize::try_from(n)
                        .ok()
                        .filter(|&n| n > 0 && n <= 1 << 20)
                        .ok_or_else(|| {
                            ParseError::new(
                                nloc,
                                ParseErrorKind::Syntax,
                                format!("bad result count {n}"),
                            )
                        })?;
                }
                names.push((name.to_string(), count, nloc));
                if !self.c.eat(b',') {
                    break;
                }
            }
            self.c.expect(b'=')?;
        }
        let oploc = self.c.loc();
        let generic = self.c.peek() == Some(b'"');
        let name = if generic {
            self.c.string()?
        } else {
            match self.c.ident() {
                Some(n) => n.to_string(),
                None => return Err(self.c.expected("an operation")),
            }
        };
        self.op_name = name.clone();
        let mut op = Op::new(name, if names.is_empty() { oploc } else { loc });
        let r = if generic {
            self.generic(&mut op)
        } else {
            self.pretty(&mut op)
        };
        r.map_err(|e| self.named(e))?;
        self.c.opt_loc().map_err(|e| self.named(e))?;
        if is_terminator(&op.name) {
            if !names.is_empty() {
                return Err(self.err_at(loc, ParseErrorKind::Syntax, "a return has no results"));
            }
            return Ok(Some(op.operands));
        }
        let sharding = self.sharding_of(&op.attrs, op.loc)?;
        let lowered = self.lower(op)?;
        if let Some(sharding) = sharding {
            self.set_sharding(&lowered, sharding);
        }
        if names.is_empty() {
            // Results nobody names (side effects only) are kept as dead instructions.
            return Ok(None);
        }
        self.bind(&names, lowered)?;
        Ok(None)
    }

    /// `%name` or `%name#N` as an operand.
    pub fn operand(&mut self) -> Result<InstrId> {
        let loc = self.c.loc();
        let Some(name) = self.c.value_name()? else {
            return Err(self.c.expected("an operand '%name'"));
        };
        let mut index = None;
        if self.c.peek_at(0) == Some(b'#') {
            self.c.pos += 1;
            let i = self.c.integer("a result number")?;
            index = Some(
                usize::try_from(i)
                    .map_err(|_| self.err_at(loc, ParseErrorKind::Syntax, "bad result number"))?,
            );
        }
        self.use_value(name, index, loc)
    }
}

/// The kind of region `i` of a generic op.
fn region_kind(name: &str, i: usize) -> RegionKind {
    match (name, i) {
        ("stablehlo.while", 0) => RegionKind::LoopCond,
        ("stablehlo.while", _) => RegionKind::LoopBody,
        ("stablehlo.if" | "stablehlo.case", _) => RegionKind::Branch,
        _ => RegionKind::Plain,
    }
}

fn with_default_layout(s: &Shape) -> Shape {
    match s {
        Shape::Array(a) => {
            let mut a = a.clone();
            a.layout = Some(hlo::Layout::default_for_rank(a.rank()));
            Shape::Array(a)
        }
        Shape::Tuple(t) => Shape::Tuple(t.iter().map(with_default_layout).collect()),
        other => other.clone(),
    }
}
