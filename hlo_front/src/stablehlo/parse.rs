//! The StableHLO syntax: module, `func.func`, regions and blocks, and every op in both its
//! generic form (`"stablehlo.add"(%a, %b) : (...) -> ...`) and the pretty forms JAX prints.
//! Each op is read into one [`Op`] (operands resolved to instructions, attributes under their
//! generic names or the pretty keywords, regions already built as computations) and handed to
//! the lowering in `lower.rs`.

mod generic;
mod module;
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
