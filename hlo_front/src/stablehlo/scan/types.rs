//! The builtin types: element types (`f32`, `complex<f32>`, `f8E4M3FN`), `tensor<4x5xf32>`
//! with bounds and encodings, `tuple<...>` and `!stablehlo.token`.
use super::*;

impl Cursor<'_> {
    /// An element type name (`f32`, `i1`, `ui8`, `bf16`, `complex<f32>`, `f8E4M3FN`).
    pub fn element_type(&mut self) -> Result<PrimitiveType> {
        let loc = self.loc();
        let Some(name) = self.ident() else {
            return Err(self.expected("an element type"));
        };
        if name == "complex" {
            self.expect(b'<')?;
            let inner = self.element_type()?;
            self.expect(b'>')?;
            return match inner {
                PrimitiveType::F32 => Ok(PrimitiveType::C64),
                PrimitiveType::F64 => Ok(PrimitiveType::C128),
                other => Err(ParseError::new(
                    loc,
                    ParseErrorKind::BadShape,
                    format!("complex<{}> has no XLA element type", other.name()),
                )),
            };
        }
        if name == "index" && self.in_dense_type {
            return Ok(PrimitiveType::S64);
        }
        element_type_named(name).ok_or_else(|| {
            ParseError::new(
                loc,
                ParseErrorKind::BadShape,
                format!("unsupported element type '{name}'"),
            )
        })
    }

    /// A type: `tensor<...>`, `tuple<...>`, `!stablehlo.token`, or a bare element type (a
    /// scalar).
    pub fn ty(&mut self) -> Result<Shape> {
        self.ws();
        let loc = self.loc();
        if self.peek() == Some(b'!') {
            self.pos += 1;
            let name = self.expect_ident("a dialect type name")?;
            return match name {
                "stablehlo.token" | "mhlo.token" => Ok(Shape::Token),
                other => Err(ParseError::new(
                    loc,
                    ParseErrorKind::BadShape,
                    format!("unsupported type '!{other}'"),
                )),
            };
        }
        if self.eat_kw("tensor") {
            self.expect(b'<')?;
            let mut dims = Vec::new();
            loop {
                self.ws();
                if self.b.get(self.pos) == Some(&b'?') {
                    return Err(self.error(
                        ParseErrorKind::BadShape,
                        "dynamic dimension '?': only static shapes can be compiled ahead of time",
                    ));
                }
                if !self.b.get(self.pos).is_some_and(u8::is_ascii_digit) {
                    break;
                }
                // Decimal digits only: `0xf32` is a zero dimension of f32, not hex.
                let start = self.pos;
                while self.b.get(self.pos).is_some_and(u8::is_ascii_digit) {
                    self.pos += 1;
                }
                let d: i64 = self
                    .src
                    .get(start..self.pos)
                    .and_then(|t| t.parse().ok())
                    .ok_or_else(|| {
                        let loc = self.loc_at(start);
                        ParseError::new(
                            loc,
                            ParseErrorKind::BadShape,
                            "dimension size out of range",
                        )
                    })?;
                if dims.len() >= MAX_RANK {
                    return Err(self.error(
                        ParseErrorKind::BadShape,
                        format!("rank larger than {MAX_RANK}"),
                    ));
                }
                dims.push(d);
                if self.b.get(self.pos) != Some(&b'x') {
                    return Err(self.expected("'x' after a dimension size"));
                }
                self.pos += 1;
            }
            let et = self.element_type()?;
            if self.eat(b',') {
                return Err(self.error(
                    ParseErrorKind::BadShape,
                    "tensor encodings (bounds, sparsity) are not supported",
                ));
            }
            self.expect(b'>')?;
            return Ok(Shape::array(et, dims));
        }
        if self.eat_kw("tuple") {
            self.enter()?;
            self.expect(b'<')?;
            let mut elems = Vec::new();
            if !self.eat(b'>') {
                loop {
                    elems.push(self.ty()?);
                    if self.eat(b'>') {
                        break;
                    }
                    self.expect(b',')?;
                }
            }
            self.leave();
            return Ok(Shape::Tuple(elems));
        }
        let et = self.element_type()?;
        Ok(Shape::scalar(et))
    }

    /// True when a type starts here.
    pub fn at_type(&mut self) -> bool {
        match self.peek() {
            Some(b'!') => true,
            _ => self.peek_ident().is_some_and(|w| {
                w == "tensor" || w == "tuple" || w == "complex" || element_type_named(w).is_some()
            }),
        }
    }
}
