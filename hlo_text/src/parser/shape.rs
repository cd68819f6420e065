//! Shapes and layouts.

use super::*;

impl<'a> Parser<'a> {
    // ---- shapes --------------------------------------------------------------------------

    pub(super) fn shape(&mut self) -> Result<Shape> {
        self.enter()?;
        let r = self.shape_inner();
        self.leave();
        r
    }

    pub(super) fn shape_inner(&mut self) -> Result<Shape> {
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

    pub(super) fn layout(&mut self, rank: usize) -> Result<Layout> {
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
    pub(super) fn at_shape(&self) -> bool {
        match self.peek() {
            TokenKind::LParen => true,
            TokenKind::Word(_) => *self.peek_at(1) == TokenKind::LBracket,
            _ => false,
        }
    }
}
