//! The attribute values: `dense<...>` (hex included), `array<i64: ...>`, lists, dictionaries,
//! `#stablehlo.*<...>` attributes with their labels, enums, symbols and complex numbers.
use super::*;

impl Cursor<'_> {
    /// An attribute value, with an optional `: type` suffix (`1 : i64`).
    pub fn attr(&mut self) -> Result<Attr> {
        self.enter()?;
        let r = self.attr_inner(true);
        self.leave();
        r
    }

    /// An attribute value of a pretty op's keyword (`dim = 1 : tensor<...>`): the `:` that
    /// follows starts the op's types, not the value's.
    pub fn attr_bare(&mut self) -> Result<Attr> {
        self.enter()?;
        let r = self.attr_inner(false);
        self.leave();
        r
    }

    pub(super) fn attr_inner(&mut self, typed: bool) -> Result<Attr> {
        self.ws();
        let v = match self.peek() {
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.attr()?);
                        if self.eat(b']') {
                            break;
                        }
                        self.expect(b',')?;
                    }
                }
                Attr::List(items)
            }
            Some(b'{') => {
                let start = self.pos;
                let entries = self.dict()?;
                let text = self.src.get(start..self.pos).unwrap_or_default().to_owned();
                Attr::Dict(entries, text)
            }
            Some(b'"') => Attr::Str(self.string()?),
            Some(b'@') => Attr::Symbol(self.symbol()?.unwrap_or_default()),
            Some(b'#') => self.hash_attr()?,
            Some(b'<') => {
                // `algorithm = <...>` of the pretty dot_general: a struct without a name.
                self.pos += 1;
                let fields = self.struct_fields()?;
                Attr::Struct(String::new(), fields)
            }
            Some(b'(') => {
                let (re, im) = self.complex_pair()?;
                Attr::List(vec![Attr::Float(re), Attr::Float(im)])
            }
            Some(c) if c.is_ascii_digit() || c == b'-' || c == b'+' => match self.number()? {
                Some(Num::Int(i)) => Attr::Int(i),
                Some(Num::Float(f)) => Attr::Float(f),
                Some(Num::Hex(h)) => Attr::Hex(h),
                None => return Err(self.expected("an attribute value")),
            },
            _ => {
                let save = self.pos;
                let Some(word) = self.ident() else {
                    return Err(self.expected("an attribute value"));
                };
                match word {
                    "true" => Attr::Bool(true),
                    "false" => Attr::Bool(false),
                    "unit" => Attr::Unit,
                    "dense" => self.dense()?,
                    "array" => self.array()?,
                    "dense_resource" => {
                        return Err(self.error(
                            ParseErrorKind::BadLiteral,
                            "dense_resource constants are not supported: their data is not in the text (print with large elements inline)",
                        ));
                    }
                    "loc" | "affine_map" | "affine_set" | "strided" | "distinct" => {
                        let text = self.skip_balanced()?;
                        Attr::Opaque(format!("{word}{text}"))
                    }
                    _ => {
                        self.pos = save;
                        if self.at_type() {
                            Attr::Type(self.ty()?)
                        } else {
                            let w = self.ident().unwrap_or_default();
                            Attr::Enum(w.to_string())
                        }
                    }
                }
            }
        };
        // An optional `: type` (`1 : i64`, `1.0 : f32`); dense literals read theirs already.
        if typed && !matches!(v, Attr::Dense(..)) {
            let save = self.pos;
            if self.eat(b':') {
                if self.at_type() {
                    self.ty()?;
                } else {
                    self.pos = save;
                }
            }
        }
        Ok(v)
    }

    /// `{k = v, k2, ...}`.
    pub fn dict(&mut self) -> Result<Vec<(String, Attr)>> {
        self.enter()?;
        self.expect(b'{')?;
        let mut out = Vec::new();
        if !self.eat(b'}') {
            loop {
                let key = if self.peek() == Some(b'"') {
                    self.string()?
                } else {
                    self.expect_ident("an attribute name")?.to_string()
                };
                let v = if self.eat(b'=') {
                    self.attr()?
                } else {
                    Attr::Unit
                };
                out.push((key, v));
                if self.eat(b'}') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        self.leave();
        Ok(out)
    }

    pub(super) fn complex_pair(&mut self) -> Result<(f64, f64)> {
        self.expect(b'(')?;
        let re = self.float_value()?;
        self.expect(b',')?;
        let im = self.float_value()?;
        self.expect(b')')?;
        Ok((re, im))
    }

    /// `(re, im)` in a dense literal, each part a number or a hex bit pattern.
    pub(super) fn complex_elem(&mut self) -> Result<Elem> {
        self.expect(b'(')?;
        let re = self.complex_part()?;
        self.expect(b',')?;
        let im = self.complex_part()?;
        self.expect(b')')?;
        Ok(match (re, im) {
            (Part::Value(re), Part::Value(im)) => Elem::Complex(re, im),
            (re, im) => Elem::ComplexParts(re, im),
        })
    }

    pub(super) fn complex_part(&mut self) -> Result<Part> {
        match self.number()? {
            Some(Num::Int(i)) => Ok(Part::Value(i as f64)),
            Some(Num::Float(f)) => Ok(Part::Value(f)),
            Some(Num::Hex(h)) => u64::from_str_radix(&h, 16)
                .map(Part::Bits)
                .map_err(|_| self.error(ParseErrorKind::BadLiteral, "hex literal out of range")),
            None => Err(self.expected("a number or a hex bit pattern (complex part)")),
        }
    }

    pub(super) fn float_value(&mut self) -> Result<f64> {
        match self.number()? {
            Some(Num::Int(i)) => Ok(i as f64),
            Some(Num::Float(f)) => Ok(f),
            _ => Err(self.expected("a number")),
        }
    }

    /// `#stablehlo<kind VALUE>`, `#stablehlo.name<...>`, `#loc...` aliases, unknown dialects.
    pub(super) fn hash_attr(&mut self) -> Result<Attr> {
        self.pos += 1;
        let loc = self.loc();
        let Some(name) = self.ident() else {
            return Err(self.expected("an attribute name after '#'"));
        };
        let (dialect, rest) = name.split_once('.').unwrap_or((name, ""));
        if !matches!(dialect, "stablehlo" | "mhlo" | "chlo") {
            // An alias (`#loc1`) or another dialect's attribute: skip its body.
            let text = if self.peek() == Some(b'<') {
                self.skip_balanced()?
            } else {
                ""
            };
            return Ok(Attr::Opaque(format!("#{name}{text}")));
        }
        if rest.is_empty() {
            // `#stablehlo<comparison_direction GT>`
            self.expect(b'<')?;
            self.expect_ident("an enum kind")?;
            let v = self.expect_ident("an enum value")?.to_string();
            self.expect(b'>')?;
            return Ok(Attr::Enum(v));
        }
        if !self.eat(b'<') {
            return Err(ParseError::new(
                loc,
                ParseErrorKind::Syntax,
                format!("expected '<' after #{name}"),
            ));
        }
        if rest == "conv" {
            if self.eat_kw("raw") {
                let fields = self.struct_fields()?;
                return Ok(Attr::Struct("conv_raw".into(), fields));
            }
            let c = self.conv_labels()?;
            self.expect(b'>')?;
            return Ok(c);
        }
        let fields = self.struct_fields()?;
        Ok(Attr::Struct(rest.to_string(), fields))
    }

    /// The body of `#stablehlo.name<...>` after `<`, through `>`: `k = v, ...` fields, or one bare
    /// value (`#stablehlo.result_accuracy_mode<DEFAULT>`), or nothing.
    pub(super) fn struct_fields(&mut self) -> Result<Vec<(String, Attr)>> {
        self.enter()?;
        let mut out = Vec::new();
        if !self.eat(b'>') {
            loop {
                let save = self.pos;
                let key = self.ident();
                match key {
                    Some(k) if self.eat(b'=') => {
                        let v = self.attr()?;
                        out.push((k.to_string(), v));
                    }
                    _ => {
                        self.pos = save;
                        let v = self.attr()?;
                        out.push((String::new(), v));
                    }
                }
                if self.eat(b'>') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        self.leave();
        Ok(out)
    }

    /// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`.
    pub fn conv_labels(&mut self) -> Result<Attr> {
        let lhs = self.label_list()?;
        if !self.eat_kw("x") {
            return Err(self.expected("'x' between convolution dimension labels"));
        }
        let rhs = self.label_list()?;
        if !self.eat_arrow() {
            return Err(self.expected("'->' before the output dimension labels"));
        }
        let out = self.label_list()?;
        Ok(Attr::Conv(lhs, rhs, out))
    }

    pub(super) fn label_list(&mut self) -> Result<Vec<String>> {
        self.expect(b'[')?;
        let mut out = Vec::new();
        if !self.eat(b']') {
            loop {
                self.ws();
                let start = self.pos;
                while self.b.get(self.pos).is_some_and(u8::is_ascii_alphanumeric) {
                    self.pos += 1;
                }
                if self.pos == start {
                    return Err(self.expected("a dimension label"));
                }
                out.push(self.src.get(start..self.pos).unwrap_or("").to_string());
                if self.eat(b']') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        Ok(out)
    }

    /// `array<i64: 1, 2>` after the word `array`.
    pub(super) fn array(&mut self) -> Result<Attr> {
        self.expect(b'<')?;
        let et = self.element_type()?;
        let mut out = Vec::new();
        if self.eat(b':') {
            loop {
                let v = match self.attr()? {
                    Attr::Int(i) => i64::try_from(i).map_err(|_| {
                        self.error(ParseErrorKind::BadAttribute, "array element out of range")
                    })?,
                    Attr::Bool(b) => i64::from(b),
                    _ => {
                        return Err(self.error(
                            ParseErrorKind::BadAttribute,
                            format!("array<{}> elements must be integers", et.name()),
                        ))
                    }
                };
                out.push(v);
                if self.peek() == Some(b'>') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        self.expect(b'>')?;
        Ok(Attr::IntArray(out))
    }

    /// `dense<...> : type` after the word `dense`.
    pub(super) fn dense(&mut self) -> Result<Attr> {
        self.expect(b'<')?;
        let body = if self.peek() == Some(b'"') {
            let loc = self.loc();
            let s = self.string()?;
            let hex = s
                .strip_prefix("0x")
                .or_else(|| s.strip_prefix("0X"))
                .ok_or_else(|| {
                    ParseError::new(
                        loc,
                        ParseErrorKind::BadLiteral,
                        "dense string literal is not hex (\"0x...\")",
                    )
                })?;
            Dense::Bytes(decode_hex(hex).ok_or_else(|| {
                ParseError::new(
                    loc,
                    ParseErrorKind::BadLiteral,
                    "bad hex digits in dense literal",
                )
            })?)
        } else if self.peek() == Some(b'>') {
            Dense::Elems(Vec::new())
        } else {
            let mut elems = Vec::new();
            self.dense_elems(&mut elems)?;
            Dense::Elems(elems)
        };
        self.expect(b'>')?;
        self.expect(b':')?;
        self.in_dense_type = true;
        let ty = self.ty();
        self.in_dense_type = false;
        Ok(Attr::Dense(body, ty?))
    }

    pub(super) fn dense_elems(&mut self, out: &mut Vec<Elem>) -> Result<()> {
        self.enter()?;
        if self.eat(b'[') {
            if !self.eat(b']') {
                loop {
                    self.dense_elems(out)?;
                    if self.eat(b']') {
                        break;
                    }
                    self.expect(b',')?;
                }
            }
        } else {
            let e = match self.peek() {
                Some(b'(') => self.complex_elem()?,
                _ if self.eat_kw("true") => Elem::Bool(true),
                _ if self.eat_kw("false") => Elem::Bool(false),
                _ => {
                    let loc = self.loc();
                    match self.number()? {
                        Some(Num::Int(i)) => Elem::Int(i),
                        Some(Num::Float(f)) => Elem::Float(f),
                        Some(Num::Hex(h)) => {
                            Elem::Bits(u64::from_str_radix(&h, 16).map_err(|_| {
                                ParseError::new(
                                    loc,
                                    ParseErrorKind::BadLiteral,
                                    format!("hex element 0x{h} wider than 64 bits"),
                                )
                            })?)
                        }
                        None => return Err(self.expected("a dense element")),
                    }
                }
            };
            out.push(e);
        }
        self.leave();
        Ok(())
    }
}

fn decode_hex(h: &str) -> Option<Vec<u8>> {
    if h.len() % 2 != 0 {
        return None;
    }
    h.as_bytes()
        .chunks(2)
        .map(|p| {
            let hi = (p.first().copied()? as char).to_digit(16)?;
            let lo = (p.get(1).copied()? as char).to_digit(16)?;
            Some((hi * 16 + lo) as u8)
        })
        .collect()
}
