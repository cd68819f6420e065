//! Constant literals: nested tuples and arrays of scalars, checked against their shape as they are read.

use super::*;

impl<'a> Parser<'a> {
    // ---- literals ------------------------------------------------------------------------

    pub(super) fn literal(&mut self, shape: &Shape) -> Result<ConstantLiteral> {
        self.enter()?;
        let r = self.literal_inner(shape);
        self.leave();
        r
    }

    pub(super) fn literal_inner(&mut self, shape: &Shape) -> Result<ConstantLiteral> {
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
                Ok(ConstantLiteral::Tuple(out))
            }
            Shape::Token => {
                // XLA prints token constants as `constant(token)`? Accept an empty or word.
                if let Some(w) = self.peek_word() {
                    if w == "token" {
                        self.bump();
                    }
                }
                Ok(ConstantLiteral::Tuple(Vec::new()))
            }
            Shape::Array(a) => {
                if *self.peek() == TokenKind::LBrace
                    && matches!(self.peek_at(1), TokenKind::Word(w) if w == "...")
                    && *self.peek_at(2) == TokenKind::RBrace
                {
                    self.bump();
                    self.bump();
                    self.bump();
                    return Ok(ConstantLiteral::Elided);
                }
                let mut values = Vec::new();
                self.array_values(&a.dims, a.element_type, &mut values)?;
                Ok(ConstantLiteral::Array(ArrayLiteral { values }))
            }
        }
    }

    pub(super) fn array_values(
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

    pub(super) fn scalar(&mut self, ty: PrimitiveType) -> Result<LiteralValue> {
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
