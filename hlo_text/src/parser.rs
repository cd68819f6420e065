//! HLO text parser: turns the text XLA and JAX print into an [`HloModule`].
//!
//! Accepts modules with or without the `HloModule` header, `%` sigils, computation signatures,
//! `ENTRY` and `ROOT` markers (the last computation / instruction is used when missing), the
//! stack-frame tables, layouts with tiles and memory spaces, shapes on operands, comments, and
//! every attribute form XLA prints. Unknown attributes are kept verbatim. Every failure is a
//! [`ParseError`] with a line and column; nesting is bounded so no input overflows the stack.
//!
//! Instruction operands may refer to instructions defined later in the same computation, and
//! called computations may be defined after their callers.

use std::collections::{HashMap, HashSet};

use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::{tokenize, Token, TokenKind};
use hlo::*;
use hlo::{ArrayShape, Layout, PrimitiveType, Shape, Tile, TILE_COMBINE_DIM, UNBOUNDED_DIM};

mod attrs;
mod header;
mod literal;
mod mulhi;
mod numbers;
mod shape;
mod sharding;

use numbers::{canonical_nan, is_numeric_word, parse_float_word, parse_int_word};

/// Deepest nesting (tuple shapes, literal braces, attribute values) the parser accepts.
pub const MAX_NESTING: usize = 64;

/// Largest rank the parser accepts for an array shape.
pub const MAX_RANK: usize = 64;

type Result<T> = std::result::Result<T, ParseError>;

/// Parses a whole module.
pub fn parse_module(text: &str) -> Result<HloModule> {
    let mut p = Parser::new(text)?;
    p.module()
}

/// Parses a sharding as XLA prints it (`{devices=[2,1]<=[2]}`), the text of StableHLO's
/// `mhlo.sharding` attributes.
pub fn parse_sharding(text: &str) -> Result<HloSharding> {
    let mut p = Parser::new(text)?;
    let s = p.sharding()?;
    p.expect(&TokenKind::Eof, "end of input")?;
    Ok(s)
}

/// Parses a single shape such as `(f32[2,3]{1,0}, s32[])`.
pub fn parse_shape(text: &str) -> Result<Shape> {
    let mut p = Parser::new(text)?;
    let s = p.shape()?;
    p.expect(&TokenKind::Eof, "end of input")?;
    Ok(s)
}

struct PendingInstr {
    name: String,
    loc: SourceLoc,
    is_root: bool,
    opcode: Opcode,
    shape: Option<Shape>,
    operands: Vec<(String, SourceLoc)>,
    attrs: Attrs,
    metadata: Option<OpMetadata>,
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
    comp_ids: HashMap<String, ComputationId>,
    comp_slots: Vec<Option<Computation>>,
    comp_first_ref: Vec<SourceLoc>,
    comp_def_order: Vec<ComputationId>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Result<Parser<'a>> {
        Ok(Parser {
            src,
            toks: tokenize(src)?,
            pos: 0,
            depth: 0,
            comp_ids: HashMap::new(),
            comp_slots: Vec::new(),
            comp_first_ref: Vec::new(),
            comp_def_order: Vec::new(),
        })
    }

    // ---- token helpers -------------------------------------------------------------------

    fn tok(&self, n: usize) -> &Token {
        let i = (self.pos + n).min(self.toks.len().saturating_sub(1));
        // tokenize always appends Eof, so the vector is never empty.
        &self.toks[i]
    }

    fn peek(&self) -> &TokenKind {
        &self.tok(0).kind
    }

    fn peek_at(&self, n: usize) -> &TokenKind {
        &self.tok(n).kind
    }

    fn loc(&self) -> SourceLoc {
        self.tok(0).loc
    }

    fn bump(&mut self) -> Token {
        let t = self.tok(0).clone();
        if self.pos < self.toks.len().saturating_sub(1) {
            self.pos += 1;
        }
        t
    }

    fn err<T>(&self, kind: ParseErrorKind, msg: impl Into<String>) -> Result<T> {
        Err(ParseError::new(self.loc(), kind, msg))
    }

    fn syntax<T>(&self, expected: &str) -> Result<T> {
        self.err(
            ParseErrorKind::Syntax,
            format!("expected {expected}, found {}", self.peek().describe()),
        )
    }

    fn eat(&mut self, k: &TokenKind) -> bool {
        if self.peek() == k {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, k: &TokenKind, what: &str) -> Result<Token> {
        if self.peek() == k {
            Ok(self.bump())
        } else {
            self.syntax(what)
        }
    }

    fn peek_word(&self) -> Option<&str> {
        match self.peek() {
            TokenKind::Word(w) => Some(w),
            _ => None,
        }
    }

    fn is_word(&self, w: &str) -> bool {
        self.peek_word() == Some(w)
    }

    fn expect_word(&mut self, what: &str) -> Result<(String, SourceLoc)> {
        match self.peek() {
            TokenKind::Word(w) => {
                let w = w.clone();
                let t = self.bump();
                Ok((w, t.loc))
            }
            _ => self.syntax(what),
        }
    }

    fn expect_string(&mut self, what: &str) -> Result<String> {
        match self.peek() {
            TokenKind::Str(s) => {
                let s = s.clone();
                self.bump();
                Ok(s)
            }
            _ => self.syntax(what),
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return self.err(
                ParseErrorKind::TooDeep,
                format!("nesting deeper than {MAX_NESTING} levels"),
            );
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn int(&mut self, what: &str) -> Result<i64> {
        let loc = self.loc();
        let (w, _) = self.expect_word(what)?;
        parse_int_word(&w)
            .and_then(|v| i64::try_from(v).ok())
            .ok_or_else(|| {
                ParseError::new(
                    loc,
                    ParseErrorKind::Syntax,
                    format!("expected {what}, found '{w}'"),
                )
            })
    }

    fn boolean(&mut self, what: &str) -> Result<bool> {
        let loc = self.loc();
        let (w, _) = self.expect_word(what)?;
        match w.as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(ParseError::new(
                loc,
                ParseErrorKind::BadAttribute,
                format!("expected {what} (true or false), found '{w}'"),
            )),
        }
    }

    /// `{item, item, ...}` (or `{}`): the braced, comma-separated list of int and bool lists,
    /// slices and `input_output_alias`, one item read by `item`; `what` names the list in the
    /// errors for its braces and commas.
    fn braced_list<T>(
        &mut self,
        what: &str,
        mut item: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.expect(&TokenKind::LBrace, &format!("'{{' starting {what}"))?;
        let mut out = Vec::new();
        if self.eat(&TokenKind::RBrace) {
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat(&TokenKind::RBrace) {
                return Ok(out);
            }
            self.expect(&TokenKind::Comma, &format!("',' or '}}' in {what}"))?;
        }
    }

    /// `{1,2,3}` (or `{}`).
    fn int_list(&mut self, what: &str) -> Result<Vec<i64>> {
        self.braced_list(what, |p| p.int(&format!("integer in {what}")))
    }

    fn bool_list(&mut self, what: &str) -> Result<Vec<bool>> {
        self.braced_list(what, |p| p.boolean(what))
    }

    /// Captures an attribute value verbatim: tokens up to a top-level `,`, an unmatched closing
    /// bracket, or the start of the next instruction (`name =`, `ROOT`).
    fn raw_value(&mut self, what: &str) -> Result<String> {
        let start_loc = self.loc();
        let start = self.tok(0).start;
        let mut end = start;
        let mut stack: Vec<TokenKind> = Vec::new();
        let mut prev: Option<TokenKind> = None;
        loop {
            let k = self.peek().clone();
            if stack.is_empty() {
                if let Some(p) = &prev {
                    // At the top level a value is one token or bracket group, joined only by
                    // `<=` / `->` (`[2,2]<=[4]T(1,0)`, `a->b`); anything else (`,`, a closing
                    // bracket, the next instruction) ends it.
                    let after_join = matches!(p, TokenKind::LessEq | TokenKind::Arrow);
                    let join = matches!(k, TokenKind::LessEq | TokenKind::Arrow);
                    let tile = *p == TokenKind::RBracket
                        && matches!(&k, TokenKind::Word(w) if w == "T")
                        && *self.peek_at(1) == TokenKind::LParen;
                    let call = matches!(p, TokenKind::Word(_)) && k == TokenKind::LParen;
                    if !(after_join || join || tile || call) {
                        break;
                    }
                }
            }
            match &k {
                TokenKind::Eof => {
                    if !stack.is_empty() {
                        return Err(ParseError::new(
                            start_loc,
                            ParseErrorKind::Syntax,
                            format!("unbalanced brackets in {what} (reached end of input)"),
                        ));
                    }
                    break;
                }
                TokenKind::LBrace => stack.push(TokenKind::RBrace),
                TokenKind::LBracket => stack.push(TokenKind::RBracket),
                TokenKind::LParen => stack.push(TokenKind::RParen),
                TokenKind::RBrace | TokenKind::RBracket | TokenKind::RParen => match stack.last() {
                    None => break,
                    Some(c) if *c == k => {
                        stack.pop();
                    }
                    Some(c) => {
                        return self.syntax(&format!("{} in {what}", c.describe()));
                    }
                },
                TokenKind::Comma if stack.is_empty() => break,
                _ => {}
            }
            if stack.len() > MAX_NESTING {
                return self.err(
                    ParseErrorKind::TooDeep,
                    format!("nesting deeper than {MAX_NESTING} levels in {what}"),
                );
            }
            let t = self.bump();
            end = t.end;
            prev = Some(t.kind);
        }
        if prev.is_none() {
            return self.syntax(&format!("a value for {what}"));
        }
        Ok(self.src.get(start..end).unwrap_or_default().to_string())
    }

    // ---- module --------------------------------------------------------------------------

    fn module(&mut self) -> Result<HloModule> {
        let mut name = "_".to_string();
        let mut config = ModuleConfig::default();
        if self.is_word("HloModule") {
            self.bump();
            name = self.expect_word("the module name")?.0;
            while self.eat(&TokenKind::Comma) {
                self.header_attr(&mut config)?;
            }
        }
        let mut frames = StackFrameIndex::default();
        self.stack_frame_tables(&mut frames)?;
        let mut entry: Option<(ComputationId, SourceLoc)> = None;
        let mut last: Option<ComputationId> = None;
        while *self.peek() != TokenKind::Eof {
            let (id, is_entry, loc) = self.computation()?;
            if is_entry {
                if let Some((_, first)) = entry {
                    return Err(ParseError::new(
                        loc,
                        ParseErrorKind::Structure,
                        format!("second ENTRY computation (the first is at {first})"),
                    ));
                }
                entry = Some((id, loc));
            }
            last = Some(id);
        }
        let Some(last) = last else {
            return self.err(ParseErrorKind::Structure, "the module has no computations");
        };
        let entry = entry.map_or(last, |(e, _)| e);
        // Every referenced computation must be defined.
        for (i, slot) in self.comp_slots.iter().enumerate() {
            if slot.is_none() {
                let cname = self
                    .comp_ids
                    .iter()
                    .find(|(_, v)| v.index() == i)
                    .map(|(k, _)| k.clone())
                    .unwrap_or_default();
                let loc = self.comp_first_ref.get(i).copied().unwrap_or_default();
                return Err(ParseError::new(
                    loc,
                    ParseErrorKind::UndefinedComputation,
                    format!("computation '{cname}' is referenced but never defined"),
                ));
            }
        }
        // Renumber computations into definition (text) order.
        let mut new_id = vec![ComputationId(0); self.comp_slots.len()];
        for (pos, old) in self.comp_def_order.iter().enumerate() {
            if let Some(slot) = new_id.get_mut(old.index()) {
                *slot = ComputationId(pos as u32);
            }
        }
        let remap = |c: ComputationId| new_id.get(c.index()).copied().unwrap_or(c);
        let mut slots = std::mem::take(&mut self.comp_slots);
        let mut computations = Vec::with_capacity(slots.len());
        for old in &self.comp_def_order {
            if let Some(mut c) = slots.get_mut(old.index()).and_then(Option::take) {
                for instr in &mut c.instructions {
                    remap_attrs(&mut instr.attrs, &remap);
                }
                computations.push(c);
            }
        }
        Ok(HloModule {
            name,
            computations,
            entry: remap(entry),
            config,
            stack_frames: frames,
        })
    }

    // ---- computations --------------------------------------------------------------------

    fn comp_ref_id(&mut self, name: &str, loc: SourceLoc) -> ComputationId {
        if let Some(&id) = self.comp_ids.get(name) {
            return id;
        }
        let id = ComputationId(self.comp_slots.len() as u32);
        self.comp_ids.insert(name.to_string(), id);
        self.comp_slots.push(None);
        self.comp_first_ref.push(loc);
        id
    }

    fn comp_ref(&mut self) -> Result<ComputationId> {
        let (name, loc) = self.expect_word("a computation name")?;
        Ok(self.comp_ref_id(&name, loc))
    }

    fn comp_list(&mut self) -> Result<Vec<ComputationId>> {
        self.expect(&TokenKind::LBrace, "'{' starting a computation list")?;
        let mut out = Vec::new();
        if self.eat(&TokenKind::RBrace) {
            return Ok(out);
        }
        loop {
            out.push(self.comp_ref()?);
            if self.eat(&TokenKind::RBrace) {
                return Ok(out);
            }
            self.expect(&TokenKind::Comma, "',' or '}' in a computation list")?;
        }
    }

    fn computation(&mut self) -> Result<(ComputationId, bool, SourceLoc)> {
        let is_entry = if self.is_word("ENTRY") {
            self.bump();
            true
        } else {
            false
        };
        let (name, loc) = self.expect_word("a computation name (or ENTRY)")?;
        if self.eat(&TokenKind::LParen) {
            // Signature: (name: shape, ...) -> shape. Informational only.
            if !self.eat(&TokenKind::RParen) {
                loop {
                    self.expect_word("a parameter name")?;
                    self.expect(&TokenKind::Colon, "':' after a parameter name")?;
                    self.shape()?;
                    if self.eat(&TokenKind::RParen) {
                        break;
                    }
                    self.expect(&TokenKind::Comma, "',' or ')' in the signature")?;
                }
            }
            self.expect(&TokenKind::Arrow, "'->' in the signature")?;
            self.shape()?;
        }
        self.expect(&TokenKind::LBrace, "'{' starting the computation body")?;
        let mut pending = Vec::new();
        while !self.eat(&TokenKind::RBrace) {
            if *self.peek() == TokenKind::Eof {
                return self.syntax("'}' closing the computation");
            }
            pending.extend(self.instruction()?);
        }
        let mut execution_thread = None;
        if *self.peek() == TokenKind::Comma
            && matches!(self.peek_at(1), TokenKind::Word(w) if w == "execution_thread")
        {
            self.bump();
            self.bump();
            self.expect(&TokenKind::Equal, "'='")?;
            execution_thread = Some(self.expect_string("an execution thread name")?);
        }
        let comp = self.finish_computation(name.clone(), loc, pending, execution_thread)?;
        let id = self.comp_ref_id(&name, loc);
        let slot = self.comp_slots.get_mut(id.index());
        match slot {
            Some(s) if s.is_none() => *s = Some(comp),
            _ => {
                return Err(ParseError::new(
                    loc,
                    ParseErrorKind::DuplicateName,
                    format!("computation '{name}' is defined twice"),
                ))
            }
        }
        self.comp_def_order.push(id);
        Ok((id, is_entry, loc))
    }

    fn finish_computation(
        &mut self,
        name: String,
        loc: SourceLoc,
        pending: Vec<PendingInstr>,
        execution_thread: Option<String>,
    ) -> Result<Computation> {
        if pending.is_empty() {
            return Err(ParseError::new(
                loc,
                ParseErrorKind::Structure,
                format!("computation '{name}' has no instructions"),
            ));
        }
        let mut by_name: HashMap<&str, usize> = HashMap::new();
        for (i, p) in pending.iter().enumerate() {
            if by_name.insert(p.name.as_str(), i).is_some() {
                return Err(ParseError::new(
                    p.loc,
                    ParseErrorKind::DuplicateName,
                    format!(
                        "instruction name '{}' is used twice in computation '{name}'",
                        p.name
                    ),
                ));
            }
        }
        let mut root: Option<(usize, SourceLoc)> = None;
        let mut operands_all = Vec::with_capacity(pending.len());
        for (i, p) in pending.iter().enumerate() {
            if p.is_root {
                if let Some((_, first)) = root {
                    return Err(ParseError::new(
                        p.loc,
                        ParseErrorKind::Structure,
                        format!("second ROOT in computation '{name}' (the first is at {first})"),
                    ));
                }
                root = Some((i, p.loc));
            }
            let mut ops = Vec::with_capacity(p.operands.len());
            for (op, oloc) in &p.operands {
                match by_name.get(op.as_str()) {
                    Some(&j) => ops.push(InstrId(j as u32)),
                    None => {
                        return Err(ParseError::new(
                            *oloc,
                            ParseErrorKind::UndefinedOperand,
                            format!("operand '{op}' is not defined in computation '{name}'"),
                        ))
                    }
                }
            }
            operands_all.push(ops);
        }
        // Parameters by number.
        let mut params: Vec<Option<InstrId>> = Vec::new();
        for (i, p) in pending.iter().enumerate() {
            if let Some(n) = p.attrs.parameter_number {
                let Some(idx) = usize::try_from(n).ok().filter(|&n| n < 1 << 20) else {
                    return Err(ParseError::new(
                        p.loc,
                        ParseErrorKind::Structure,
                        format!("invalid parameter number {n}"),
                    ));
                };
                if params.len() <= idx {
                    params.resize(idx + 1, None);
                }
                if let Some(slot) = params.get_mut(idx) {
                    if slot.is_some() {
                        return Err(ParseError::new(
                            p.loc,
                            ParseErrorKind::Structure,
                            format!("parameter number {n} is used twice in computation '{name}'"),
                        ));
                    }
                    *slot = Some(InstrId(i as u32));
                }
            }
        }
        let mut param_ids = Vec::with_capacity(params.len());
        for (n, p) in params.iter().enumerate() {
            match p {
                Some(id) => param_ids.push(*id),
                None => {
                    return Err(ParseError::new(
                        loc,
                        ParseErrorKind::Structure,
                        format!("computation '{name}' has no parameter number {n}"),
                    ))
                }
            }
        }
        // Build instructions, inferring missing shapes in program order.
        let mut instructions: Vec<Instruction> = Vec::with_capacity(pending.len());
        let mut shapes: Vec<Option<Shape>> = pending.iter().map(|p| p.shape.clone()).collect();
        for (i, (p, ops)) in pending.into_iter().zip(operands_all).enumerate() {
            let shape = match p.shape {
                Some(s) => s,
                None => {
                    let mut op_shapes = Vec::with_capacity(ops.len());
                    for o in &ops {
                        match shapes.get(o.index()).and_then(Option::as_ref) {
                            Some(s) => op_shapes.push(s),
                            None => {
                                return Err(ParseError::new(
                                    p.loc,
                                    ParseErrorKind::Structure,
                                    format!(
                                        "cannot infer the shape of '{}': an operand has no known shape yet; write the shape",
                                        p.name
                                    ),
                                ))
                            }
                        }
                    }
                    let s = hlo_verify::infer_shape(p.opcode, &op_shapes, &p.attrs, None, None)
                        .map_err(|m| {
                            ParseError::new(
                                p.loc,
                                ParseErrorKind::Structure,
                                format!("cannot infer the shape of '{}': {m}", p.name),
                            )
                        })?
                        .ok_or_else(|| {
                            ParseError::new(
                                p.loc,
                                ParseErrorKind::Structure,
                                format!(
                                    "the shape of '{}' ({}) cannot be inferred; write it",
                                    p.name, p.opcode
                                ),
                            )
                        })?;
                    if let Some(slot) = shapes.get_mut(i) {
                        *slot = Some(s.clone());
                    }
                    s
                }
            };
            instructions.push(Instruction {
                name: p.name,
                opcode: p.opcode,
                shape,
                operands: ops,
                attrs: p.attrs,
                metadata: p.metadata,
                loc: p.loc,
            });
        }
        let root = root.map_or(instructions.len() - 1, |(r, _)| r);
        Ok(Computation {
            name,
            instructions,
            params: param_ids,
            root: InstrId(root as u32),
            execution_thread,
            loc,
        })
    }

    // ---- instructions --------------------------------------------------------------------

    /// One written instruction: one [`PendingInstr`], or several where the opcode is expanded
    /// as it is read (XLA's `mulhi`, see [`mulhi`]).
    fn instruction(&mut self) -> Result<Vec<PendingInstr>> {
        let is_root = if self.is_word("ROOT") {
            self.bump();
            true
        } else {
            false
        };
        let (name, loc) = self.expect_word("an instruction name")?;
        self.expect(
            &TokenKind::Equal,
            &format!("'=' after instruction name '{name}'"),
        )?;
        let shape = if self.at_shape() {
            Some(self.shape()?)
        } else {
            None
        };
        let (opname, oploc) = self.expect_word("an opcode")?;
        if opname == "mulhi" {
            return self.mulhi(name, loc, is_root, shape);
        }
        let Some(opcode) = Opcode::from_name(&opname) else {
            return Err(ParseError::new(
                oploc,
                ParseErrorKind::UnknownOpcode,
                format!("unknown opcode '{opname}'"),
            ));
        };
        self.expect(&TokenKind::LParen, &format!("'(' after opcode '{opname}'"))?;
        let mut attrs = Attrs::default();
        let mut operands = Vec::new();
        match opcode {
            Opcode::Parameter => {
                let n = self.int("a parameter number")?;
                attrs.parameter_number = Some(n);
                self.expect(&TokenKind::RParen, "')' after the parameter number")?;
            }
            Opcode::Constant => {
                let Some(s) = shape.as_ref() else {
                    return Err(ParseError::new(
                        oploc,
                        ParseErrorKind::Structure,
                        "a constant needs a declared shape",
                    ));
                };
                let s = s.clone();
                attrs.literal = Some(self.literal(&s)?);
                self.expect(&TokenKind::RParen, "')' closing the constant")?;
            }
            _ => operands = self.operand_list()?,
        }
        let mut metadata = None;
        let mut seen: HashSet<String> = HashSet::new();
        while self.eat(&TokenKind::Comma) {
            let (key, kloc) = self.expect_word("an attribute name")?;
            self.expect(&TokenKind::Equal, &format!("'=' after attribute '{key}'"))?;
            if !seen.insert(key.clone()) {
                return Err(ParseError::new(
                    kloc,
                    ParseErrorKind::BadAttribute,
                    format!("attribute '{key}' written twice"),
                ));
            }
            if key == "metadata" {
                metadata = Some(self.metadata()?);
            } else {
                self.attr(opcode, &key, kloc, &mut attrs)?;
            }
        }
        Ok(vec![PendingInstr {
            name,
            loc,
            is_root,
            opcode,
            shape,
            operands,
            attrs,
            metadata,
        }])
    }

    /// The operands after an opcode's `(`, through the closing `)`; shapes written on operands
    /// are read and dropped.
    fn operand_list(&mut self) -> Result<Vec<(String, SourceLoc)>> {
        let mut operands = Vec::new();
        if !self.eat(&TokenKind::RParen) {
            loop {
                if self.at_shape() {
                    self.shape()?;
                }
                operands.push(self.expect_word("an operand name")?);
                if self.eat(&TokenKind::RParen) {
                    break;
                }
                self.expect(&TokenKind::Comma, "',' or ')' in the operand list")?;
            }
        }
        Ok(operands)
    }

    /// XLA's `mulhi`, after its opcode: the operands and attributes (only `metadata` is
    /// known), expanded into the ops it stands for.
    fn mulhi(
        &mut self,
        name: String,
        loc: SourceLoc,
        is_root: bool,
        shape: Option<Shape>,
    ) -> Result<Vec<PendingInstr>> {
        self.expect(&TokenKind::LParen, "'(' after opcode 'mulhi'")?;
        let operands = self.operand_list()?;
        let mut metadata = None;
        while self.eat(&TokenKind::Comma) {
            let (key, kloc) = self.expect_word("an attribute name")?;
            self.expect(&TokenKind::Equal, &format!("'=' after attribute '{key}'"))?;
            if key != "metadata" || metadata.is_some() {
                return Err(ParseError::new(
                    kloc,
                    ParseErrorKind::BadAttribute,
                    format!("attribute '{key}' on mulhi (it takes metadata only, once)"),
                ));
            }
            metadata = Some(self.metadata()?);
        }
        mulhi::expand(mulhi::MulHi {
            name,
            loc,
            is_root,
            shape,
            operands,
            metadata,
        })
    }
}

/// Applies `f` to every computation handle in `a`.
pub(crate) fn remap_attrs(a: &mut Attrs, f: &impl Fn(ComputationId) -> ComputationId) {
    for c in [
        &mut a.to_apply,
        &mut a.condition,
        &mut a.body,
        &mut a.true_computation,
        &mut a.false_computation,
        &mut a.select,
        &mut a.scatter,
    ]
    .into_iter()
    .flatten()
    {
        *c = f(*c);
    }
    for list in [
        &mut a.calls,
        &mut a.branch_computations,
        &mut a.called_computations,
    ]
    .into_iter()
    .flatten()
    {
        for c in list.iter_mut() {
            *c = f(*c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats() {
        assert_eq!(parse_float_word("0x1.8p1"), Some(3.0));
        assert_eq!(parse_float_word("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_float_word("1e-05"), Some(1e-5));
        assert!(parse_float_word("nan").is_some_and(f64::is_nan));
        assert_eq!(parse_float_word("abc"), None);
    }

    #[test]
    fn small_module() {
        let m = parse_module(
            "HloModule m\nENTRY e {\n p = f32[2]{0} parameter(0)\n c = f32[2] constant({1, 2.5})\n ROOT a = f32[2] add(p, c)\n}\n",
        )
        .unwrap();
        let e = m.entry_computation();
        assert_eq!(e.instructions.len(), 3);
        assert_eq!(e[e.root].opcode, Opcode::Add);
        assert_eq!(
            e.instructions[1].attrs.literal,
            Some(ConstantLiteral::Array(ArrayLiteral {
                values: vec![LiteralValue::Float(1.0), LiteralValue::Float(2.5)]
            }))
        );
    }
}
