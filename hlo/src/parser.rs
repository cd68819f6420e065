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
use crate::ir::*;
use crate::lexer::{tokenize, Token, TokenKind};
use crate::shape::{
    ArrayShape, Layout, PrimitiveType, Shape, Tile, TILE_COMBINE_DIM, UNBOUNDED_DIM,
};

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

fn is_numeric_word(w: &str) -> bool {
    let w = w.strip_prefix('-').unwrap_or(w);
    w.chars().next().is_some_and(|c| c.is_ascii_digit())
}

/// Parses an integer word: decimal or `0x` hex, optional leading `-`.
fn parse_int_word(w: &str) -> Option<i128> {
    let (neg, body) = match w.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, w),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()?
    } else {
        if !body.chars().all(|c| c.is_ascii_digit()) || body.is_empty() {
            return None;
        }
        body.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

fn parse_hex_float(body: &str) -> Option<f64> {
    // body: hex digits [. hex digits] p [+-] decimal
    let (mant, exp) = match body.find(['p', 'P']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (int_part, frac_part) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int_part.chars() {
        v = v * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        v += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(v * 2f64.powi(exp))
}

/// Parses a float word: decimal, exponent, `inf`, `nan`, hex float (`0x1.8p3`).
fn parse_float_word(w: &str) -> Option<f64> {
    let lower = w.to_ascii_lowercase();
    let (neg, body) = match lower.strip_prefix('-') {
        Some(b) => (true, b.to_string()),
        None => (false, lower.strip_prefix('+').unwrap_or(&lower).to_string()),
    };
    let v = match body.as_str() {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => {
            if let Some(h) = body.strip_prefix("0x") {
                if h.contains(['p', '.']) {
                    parse_hex_float(h)?
                } else {
                    // An integer in hex.
                    u64::from_str_radix(h, 16).ok()? as f64
                }
            } else {
                if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
                    return None;
                }
                body.parse::<f64>().ok()?
            }
        }
    };
    Some(if neg { -v } else { v })
}

fn canonical_nan(neg: bool, payload: Option<u64>) -> f64 {
    let exp_bits = 0x7ff0_0000_0000_0000u64;
    let sign = if neg { 1u64 << 63 } else { 0 };
    let mant = payload.unwrap_or(0x8_0000_0000_0000) & 0xf_ffff_ffff_ffff;
    let mant = if mant == 0 { 0x8_0000_0000_0000 } else { mant };
    f64::from_bits(sign | exp_bits | mant)
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

    /// `{1,2,3}` (or `{}`).
    fn int_list(&mut self, what: &str) -> Result<Vec<i64>> {
        self.expect(&TokenKind::LBrace, &format!("'{{' starting {what}"))?;
        let mut out = Vec::new();
        if self.eat(&TokenKind::RBrace) {
            return Ok(out);
        }
        loop {
            out.push(self.int(&format!("integer in {what}"))?);
            if self.eat(&TokenKind::RBrace) {
                return Ok(out);
            }
            self.expect(&TokenKind::Comma, &format!("',' or '}}' in {what}"))?;
        }
    }

    fn bool_list(&mut self, what: &str) -> Result<Vec<bool>> {
        self.expect(&TokenKind::LBrace, &format!("'{{' starting {what}"))?;
        let mut out = Vec::new();
        if self.eat(&TokenKind::RBrace) {
            return Ok(out);
        }
        loop {
            out.push(self.boolean(what)?);
            if self.eat(&TokenKind::RBrace) {
                return Ok(out);
            }
            self.expect(&TokenKind::Comma, &format!("',' or '}}' in {what}"))?;
        }
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

    // ---- shapes --------------------------------------------------------------------------

    fn shape(&mut self) -> Result<Shape> {
        self.enter()?;
        let r = self.shape_inner();
        self.leave();
        r
    }

    fn shape_inner(&mut self) -> Result<Shape> {
        if self.eat(&TokenKind::LParen) {
            let mut elems = Vec::new();
            if self.eat(&TokenKind::RParen) {
                return Ok(Shape::Tuple(elems));
            }
            loop {
                elems.push(self.shape()?);
                if self.eat(&TokenKind::RParen) {
                    return Ok(Shape::Tuple(elems));
                }
                self.expect(&TokenKind::Comma, "',' or ')' in tuple shape")?;
            }
        }
        let loc = self.loc();
        let (w, _) = self.expect_word("a shape")?;
        if w == "token" {
            self.expect(&TokenKind::LBracket, "'[' after token")?;
            self.expect(&TokenKind::RBracket, "']' after token[")?;
            return Ok(Shape::Token);
        }
        let Some(ty) = PrimitiveType::from_name(&w) else {
            return Err(ParseError::new(
                loc,
                ParseErrorKind::BadShape,
                format!("unknown element type '{w}'"),
            ));
        };
        self.expect(&TokenKind::LBracket, "'[' starting the dimensions")?;
        let mut dims = Vec::new();
        let mut dynamic = Vec::new();
        if !self.eat(&TokenKind::RBracket) {
            loop {
                if dims.len() >= MAX_RANK {
                    return self.err(
                        ParseErrorKind::BadShape,
                        format!("rank larger than {MAX_RANK}"),
                    );
                }
                if self.eat(&TokenKind::Question) {
                    dims.push(UNBOUNDED_DIM);
                    dynamic.push(true);
                } else {
                    let is_dyn = self.eat(&TokenKind::LessEq);
                    let dloc = self.loc();
                    let d = self.int("a dimension size")?;
                    if d < 0 {
                        return Err(ParseError::new(
                            dloc,
                            ParseErrorKind::BadShape,
                            format!("negative dimension size {d}"),
                        ));
                    }
                    dims.push(d);
                    dynamic.push(is_dyn);
                }
                if self.eat(&TokenKind::RBracket) {
                    break;
                }
                self.expect(&TokenKind::Comma, "',' or ']' in dimensions")?;
            }
        }
        let starts_layout = match self.peek_at(1) {
            TokenKind::Word(w) => is_numeric_word(w),
            TokenKind::Colon | TokenKind::RBrace => true,
            _ => false,
        };
        let layout = if *self.peek() == TokenKind::LBrace && starts_layout {
            Some(self.layout(dims.len())?)
        } else {
            None
        };
        Ok(Shape::Array(ArrayShape {
            element_type: ty,
            dims,
            dynamic,
            layout,
        }))
    }

    fn layout(&mut self, rank: usize) -> Result<Layout> {
        let loc = self.loc();
        self.expect(&TokenKind::LBrace, "'{' starting a layout")?;
        let mut l = Layout::default();
        if !matches!(self.peek(), TokenKind::Colon | TokenKind::RBrace) {
            loop {
                l.minor_to_major.push(self.int("a layout dimension")?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        if self.eat(&TokenKind::Colon) {
            loop {
                match self.peek() {
                    TokenKind::RBrace => break,
                    TokenKind::Word(w) if w == "T" && l.other.is_empty() => {
                        self.bump();
                        while self.eat(&TokenKind::LParen) {
                            let mut dims = Vec::new();
                            if !self.eat(&TokenKind::RParen) {
                                loop {
                                    if self.eat(&TokenKind::Star) {
                                        dims.push(TILE_COMBINE_DIM);
                                    } else {
                                        dims.push(self.int("a tile dimension")?);
                                    }
                                    if self.eat(&TokenKind::RParen) {
                                        break;
                                    }
                                    self.expect(&TokenKind::Comma, "',' or ')' in a tile")?;
                                }
                            }
                            l.tiles.push(Tile { dims });
                        }
                    }
                    TokenKind::Word(w) if (w == "E" || w == "S") && l.other.is_empty() => {
                        let is_e = w == "E";
                        self.bump();
                        self.expect(&TokenKind::LParen, "'('")?;
                        let v = self.int("an integer")?;
                        self.expect(&TokenKind::RParen, "')'")?;
                        if is_e {
                            l.element_size_in_bits = v;
                        } else {
                            l.memory_space = v;
                        }
                    }
                    _ => {
                        // Anything else: keep verbatim up to the closing brace.
                        let start = self.tok(0).start;
                        let mut depth = 0usize;
                        let mut end = start;
                        loop {
                            match self.peek() {
                                TokenKind::Eof => return self.syntax("'}' closing the layout"),
                                TokenKind::RBrace if depth == 0 => break,
                                TokenKind::LParen | TokenKind::LBrace => depth += 1,
                                TokenKind::RParen | TokenKind::RBrace => {
                                    depth = depth.saturating_sub(1)
                                }
                                _ => {}
                            }
                            if depth > MAX_NESTING {
                                return self.err(ParseErrorKind::TooDeep, "layout nested too deep");
                            }
                            end = self.bump().end;
                        }
                        l.other = self.src.get(start..end).unwrap_or_default().to_string();
                    }
                }
            }
        }
        self.expect(&TokenKind::RBrace, "'}' closing the layout")?;
        if !l.minor_to_major.is_empty() || rank == 0 {
            let mut seen = vec![false; rank];
            let ok = l.minor_to_major.len() == rank
                && l.minor_to_major.iter().all(|&d| {
                    usize::try_from(d)
                        .ok()
                        .and_then(|d| seen.get_mut(d))
                        .is_some_and(|s| !std::mem::replace(s, true))
                });
            if !ok {
                return Err(ParseError::new(
                    loc,
                    ParseErrorKind::BadShape,
                    format!(
                        "layout {:?} is not a permutation of 0..{rank}",
                        l.minor_to_major
                    ),
                ));
            }
        }
        Ok(l)
    }

    /// True when the next tokens start a shape (`f32[`, `token[`, `(`).
    fn at_shape(&self) -> bool {
        match self.peek() {
            TokenKind::LParen => true,
            TokenKind::Word(_) => *self.peek_at(1) == TokenKind::LBracket,
            _ => false,
        }
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

    fn header_attr(&mut self, c: &mut ModuleConfig) -> Result<()> {
        let (key, loc) = self.expect_word("a module attribute name")?;
        self.expect(&TokenKind::Equal, &format!("'=' after {key}"))?;
        let dup = |p: &Parser, set: bool| -> Result<()> {
            if set {
                Err(ParseError::new(
                    loc,
                    ParseErrorKind::BadAttribute,
                    format!("module attribute '{key}' written twice"),
                ))
            } else {
                let _ = p;
                Ok(())
            }
        };
        match key.as_str() {
            "is_scheduled" => {
                dup(self, c.is_scheduled.is_some())?;
                c.is_scheduled = Some(self.boolean("is_scheduled")?);
            }
            "entry_computation_layout" => {
                dup(self, c.entry_computation_layout.is_some())?;
                self.expect(&TokenKind::LBrace, "'{' starting entry_computation_layout")?;
                self.expect(&TokenKind::LParen, "'(' starting the parameter layouts")?;
                let mut params = Vec::new();
                if !self.eat(&TokenKind::RParen) {
                    loop {
                        params.push(self.shape()?);
                        if self.eat(&TokenKind::RParen) {
                            break;
                        }
                        self.expect(&TokenKind::Comma, "',' or ')' in parameter layouts")?;
                    }
                }
                self.expect(&TokenKind::Arrow, "'->' in entry_computation_layout")?;
                let result = self.shape()?;
                self.expect(&TokenKind::RBrace, "'}' closing entry_computation_layout")?;
                c.entry_computation_layout = Some(ProgramLayout { params, result });
            }
            "input_output_alias" => {
                dup(self, c.input_output_alias.is_some())?;
                c.input_output_alias = Some(self.io_alias()?);
            }
            "allow_spmd_sharding_propagation_to_parameters" => {
                dup(
                    self,
                    c.allow_spmd_sharding_propagation_to_parameters.is_some(),
                )?;
                c.allow_spmd_sharding_propagation_to_parameters = Some(self.bool_list(&key)?);
            }
            "allow_spmd_sharding_propagation_to_output" => {
                dup(self, c.allow_spmd_sharding_propagation_to_output.is_some())?;
                c.allow_spmd_sharding_propagation_to_output = Some(self.bool_list(&key)?);
            }
            "replica_count" => {
                dup(self, c.replica_count.is_some())?;
                c.replica_count = Some(self.int("replica_count")?);
            }
            "num_partitions" => {
                dup(self, c.num_partitions.is_some())?;
                c.num_partitions = Some(self.int("num_partitions")?);
            }
            "frontend_attributes" => {
                dup(self, c.frontend_attributes.is_some())?;
                c.frontend_attributes = Some(self.string_map()?);
            }
            _ => {
                dup(self, c.raw.iter().any(|(k, _)| *k == key))?;
                let v = self.raw_value(&key)?;
                c.raw.push((key, v));
            }
        }
        Ok(())
    }

    fn io_alias(&mut self) -> Result<Vec<IoAlias>> {
        self.expect(&TokenKind::LBrace, "'{' starting input_output_alias")?;
        let mut out = Vec::new();
        if self.eat(&TokenKind::RBrace) {
            return Ok(out);
        }
        loop {
            let output_index = self.int_list("an output index")?;
            self.expect(&TokenKind::Colon, "':' after the output index")?;
            self.expect(&TokenKind::LParen, "'(' starting an alias")?;
            let param_number = self.int("a parameter number")?;
            self.expect(&TokenKind::Comma, "','")?;
            let param_index = self.int_list("a parameter index")?;
            let kind = if self.eat(&TokenKind::Comma) {
                Some(self.expect_word("an alias kind")?.0)
            } else {
                None
            };
            self.expect(&TokenKind::RParen, "')' closing an alias")?;
            out.push(IoAlias {
                output_index,
                param_number,
                param_index,
                kind,
            });
            if self.eat(&TokenKind::RBrace) {
                return Ok(out);
            }
            self.expect(&TokenKind::Comma, "',' or '}' in input_output_alias")?;
        }
    }

    /// `{key="value", key2="value2"}`.
    fn string_map(&mut self) -> Result<Vec<(String, String)>> {
        self.expect(&TokenKind::LBrace, "'{'")?;
        let mut out = Vec::new();
        if self.eat(&TokenKind::RBrace) {
            return Ok(out);
        }
        loop {
            let k = match self.peek().clone() {
                TokenKind::Word(w) | TokenKind::Str(w) => {
                    self.bump();
                    w
                }
                _ => return self.syntax("an attribute key"),
            };
            self.expect(&TokenKind::Equal, "'='")?;
            let v = match self.peek().clone() {
                TokenKind::Str(s) => {
                    self.bump();
                    s
                }
                _ => self.raw_value("an attribute value")?,
            };
            out.push((k, v));
            if self.eat(&TokenKind::RBrace) {
                return Ok(out);
            }
            self.expect(&TokenKind::Comma, "',' or '}'")?;
        }
    }

    fn stack_frame_tables(&mut self, f: &mut StackFrameIndex) -> Result<()> {
        loop {
            let Some(w) = self.peek_word() else {
                return Ok(());
            };
            let table = w.to_string();
            if !matches!(
                table.as_str(),
                "FileNames" | "FunctionNames" | "FileLocations" | "StackFrames"
            ) || matches!(self.peek_at(1), TokenKind::LBrace | TokenKind::LParen)
            {
                return Ok(());
            }
            self.bump();
            while self.peek_word().is_some_and(is_numeric_word) {
                let id = self.int("a table id")?;
                match table.as_str() {
                    "FileNames" => {
                        let s = self.expect_string("a file name")?;
                        f.file_names.push((id, s));
                    }
                    "FunctionNames" => {
                        let s = self.expect_string("a function name")?;
                        f.function_names.push((id, s));
                    }
                    "FileLocations" => {
                        let mut l = FileLocation::default();
                        for (k, v, loc) in self.int_record()? {
                            let slot = match k.as_str() {
                                "file_name_id" => &mut l.file_name_id,
                                "function_name_id" => &mut l.function_name_id,
                                "line" => &mut l.line,
                                "end_line" => &mut l.end_line,
                                "column" => &mut l.column,
                                "end_column" => &mut l.end_column,
                                _ => {
                                    return Err(ParseError::new(
                                        loc,
                                        ParseErrorKind::BadAttribute,
                                        format!("unknown FileLocations field '{k}'"),
                                    ))
                                }
                            };
                            *slot = v;
                        }
                        f.file_locations.push((id, l));
                    }
                    _ => {
                        let mut s = StackFrame::default();
                        for (k, v, loc) in self.int_record()? {
                            match k.as_str() {
                                "file_location_id" => s.file_location_id = v,
                                "parent_frame_id" => s.parent_frame_id = v,
                                _ => {
                                    return Err(ParseError::new(
                                        loc,
                                        ParseErrorKind::BadAttribute,
                                        format!("unknown StackFrames field '{k}'"),
                                    ))
                                }
                            }
                        }
                        f.stack_frames.push((id, s));
                    }
                }
            }
        }
    }

    /// `{a=1 b=2}` (entries separated by spaces or commas).
    fn int_record(&mut self) -> Result<Vec<(String, i64, SourceLoc)>> {
        self.expect(&TokenKind::LBrace, "'{'")?;
        let mut out = Vec::new();
        while !self.eat(&TokenKind::RBrace) {
            let (k, loc) = self.expect_word("a field name or '}'")?;
            self.expect(&TokenKind::Equal, "'='")?;
            let v = self.int("an integer")?;
            out.push((k, v, loc));
            self.eat(&TokenKind::Comma);
        }
        Ok(out)
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
            pending.push(self.instruction()?);
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
                    let s = crate::verify::infer_shape(p.opcode, &op_shapes, &p.attrs, None, None)
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

    fn instruction(&mut self) -> Result<PendingInstr> {
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
            _ => {
                if !self.eat(&TokenKind::RParen) {
                    loop {
                        if self.at_shape() {
                            self.shape()?;
                        }
                        let (op, oloc) = self.expect_word("an operand name")?;
                        operands.push((op, oloc));
                        if self.eat(&TokenKind::RParen) {
                            break;
                        }
                        self.expect(&TokenKind::Comma, "',' or ')' in the operand list")?;
                    }
                }
            }
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
        Ok(PendingInstr {
            name,
            loc,
            is_root,
            opcode,
            shape,
            operands,
            attrs,
            metadata,
        })
    }

    fn enum_word<T>(&mut self, what: &str, f: impl Fn(&str) -> Option<T>) -> Result<T> {
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

    fn attr(&mut self, opcode: Opcode, key: &str, kloc: SourceLoc, a: &mut Attrs) -> Result<()> {
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
            "frontend_attributes" => a.frontend_attributes = Some(self.string_map()?),
            "sharding" => a.sharding = Some(self.raw_value(key)?),
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
            "fft_type" => a.fft_type = Some(self.enum_word("fft type", FftType::from_name)?),
            "fft_length" => a.fft_length = Some(self.int_list(key)?),
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

    fn slice_attr(&mut self) -> Result<Vec<SliceDim>> {
        self.expect(&TokenKind::LBrace, "'{' starting slice")?;
        let mut out = Vec::new();
        if self.eat(&TokenKind::RBrace) {
            return Ok(out);
        }
        loop {
            self.expect(&TokenKind::LBracket, "'[' starting a slice dimension")?;
            let start = self.int("slice start")?;
            self.expect(&TokenKind::Colon, "':' in a slice dimension")?;
            let limit = self.int("slice limit")?;
            let stride = if self.eat(&TokenKind::Colon) {
                self.int("slice stride")?
            } else {
                1
            };
            self.expect(&TokenKind::RBracket, "']' closing a slice dimension")?;
            out.push(SliceDim {
                start,
                limit,
                stride,
            });
            if self.eat(&TokenKind::RBrace) {
                return Ok(out);
            }
            self.expect(&TokenKind::Comma, "',' or '}' in slice")?;
        }
    }

    /// Splits a `AxB...` word into per-dimension parts and parses each with `f`.
    fn x_separated<T>(
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

    fn padding(&mut self) -> Result<Vec<PadDim>> {
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

    fn window(&mut self) -> Result<Window> {
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

    fn dim_labels(&mut self) -> Result<ConvDimensionNumbers> {
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

    fn metadata(&mut self) -> Result<OpMetadata> {
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

    // ---- literals ------------------------------------------------------------------------

    fn literal(&mut self, shape: &Shape) -> Result<Literal> {
        self.enter()?;
        let r = self.literal_inner(shape);
        self.leave();
        r
    }

    fn literal_inner(&mut self, shape: &Shape) -> Result<Literal> {
        match shape {
            Shape::Tuple(elems) => {
                self.expect(&TokenKind::LParen, "'(' starting a tuple literal")?;
                let mut out = Vec::new();
                for (i, s) in elems.iter().enumerate() {
                    if i > 0 {
                        self.expect(&TokenKind::Comma, "',' in a tuple literal")?;
                    }
                    out.push(self.literal(s)?);
                }
                self.expect(&TokenKind::RParen, "')' closing a tuple literal")?;
                Ok(Literal::Tuple(out))
            }
            Shape::Token => {
                // XLA prints token constants as `constant(token)`? Accept an empty or word.
                if let Some(w) = self.peek_word() {
                    if w == "token" {
                        self.bump();
                    }
                }
                Ok(Literal::Tuple(Vec::new()))
            }
            Shape::Array(a) => {
                if *self.peek() == TokenKind::LBrace
                    && matches!(self.peek_at(1), TokenKind::Word(w) if w == "...")
                    && *self.peek_at(2) == TokenKind::RBrace
                {
                    self.bump();
                    self.bump();
                    self.bump();
                    return Ok(Literal::Elided);
                }
                let mut values = Vec::new();
                self.array_values(&a.dims, a.element_type, &mut values)?;
                Ok(Literal::Array(ArrayLiteral { values }))
            }
        }
    }

    fn array_values(
        &mut self,
        dims: &[i64],
        ty: PrimitiveType,
        out: &mut Vec<LiteralValue>,
    ) -> Result<()> {
        let Some((&n, rest)) = dims.split_first() else {
            out.push(self.scalar(ty)?);
            return Ok(());
        };
        self.enter()?;
        let loc = self.loc();
        self.expect(
            &TokenKind::LBrace,
            "'{' starting an array literal dimension",
        )?;
        let mut count = 0i64;
        if !self.eat(&TokenKind::RBrace) {
            loop {
                self.array_values(rest, ty, out)?;
                count += 1;
                if self.eat(&TokenKind::RBrace) {
                    break;
                }
                self.expect(&TokenKind::Comma, "',' or '}' in an array literal")?;
            }
        }
        self.leave();
        if count != n {
            return Err(ParseError::new(
                loc,
                ParseErrorKind::BadLiteral,
                format!("literal dimension has {count} elements, the shape says {n}"),
            ));
        }
        Ok(())
    }

    fn scalar(&mut self, ty: PrimitiveType) -> Result<LiteralValue> {
        let loc = self.loc();
        let bad = |w: &str| {
            ParseError::new(
                loc,
                ParseErrorKind::BadLiteral,
                format!("invalid {} literal value {w}", ty.name()),
            )
        };
        if ty.is_complex() {
            self.expect(&TokenKind::LParen, "'(' starting a complex value")?;
            let (re, _) = self.expect_word("the real part")?;
            self.expect(&TokenKind::Comma, "',' in a complex value")?;
            let (im, _) = self.expect_word("the imaginary part")?;
            self.expect(&TokenKind::RParen, "')' closing a complex value")?;
            let re = parse_float_word(&re).ok_or_else(|| bad(&re))?;
            let im = parse_float_word(&im).ok_or_else(|| bad(&im))?;
            return Ok(LiteralValue::Complex(re, im));
        }
        let (w, _) = self.expect_word(&format!("a {} value", ty.name()))?;
        if ty.is_pred() {
            return match w.as_str() {
                "true" => Ok(LiteralValue::Bool(true)),
                "false" => Ok(LiteralValue::Bool(false)),
                "1" => Ok(LiteralValue::Bool(true)),
                "0" => Ok(LiteralValue::Bool(false)),
                _ => Err(bad(&w)),
            };
        }
        if ty.is_int() {
            return parse_int_word(&w)
                .map(LiteralValue::Int)
                .ok_or_else(|| bad(&w));
        }
        // Floating point (and opaque, which has no values).
        let lower = w.to_ascii_lowercase();
        if (lower == "nan" || lower == "-nan") && *self.peek() == TokenKind::LParen {
            self.bump();
            let (p, _) = self.expect_word("a NaN payload")?;
            self.expect(&TokenKind::RParen, "')' closing a NaN payload")?;
            let payload = parse_int_word(&p)
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(|| bad(&p))?;
            return Ok(LiteralValue::Float(canonical_nan(
                lower.starts_with('-'),
                Some(payload),
            )));
        }
        if lower == "nan" || lower == "-nan" {
            return Ok(LiteralValue::Float(canonical_nan(
                lower.starts_with('-'),
                None,
            )));
        }
        parse_float_word(&w)
            .map(LiteralValue::Float)
            .ok_or_else(|| bad(&w))
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
            Some(Literal::Array(ArrayLiteral {
                values: vec![LiteralValue::Float(1.0), LiteralValue::Float(2.5)]
            }))
        );
    }
}
