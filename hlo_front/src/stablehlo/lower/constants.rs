//! Constants: `dense<...>` attributes (splats, lists, hex) as literals of the result type,
//! each element read and rounded as the type holds it.
use super::*;

impl Front<'_> {
    /// The literal of `dense<...> : type`.
    pub(super) fn dense_literal(&self, op: &Op, d: &Dense, ty: &Shape) -> Result<ConstantLiteral> {
        let Some(arr) = ty.as_array() else {
            return Err(self.err_at(
                op.loc,
                ParseErrorKind::BadLiteral,
                "dense literal of a non-tensor type",
            ));
        };
        let n = arr.element_count();
        if n > MAX_CONSTANT_ELEMENTS {
            return Err(self.err_at(
                op.loc,
                ParseErrorKind::BadLiteral,
                format!("constant of {n} elements exceeds the limit of {MAX_CONSTANT_ELEMENTS}"),
            ));
        }
        let n = n as usize;
        let et = arr.element_type;
        let bad = |m: String| self.err_at(op.loc, ParseErrorKind::BadLiteral, m);
        let elems: Vec<Elem> = match d {
            Dense::Elems(v) => v.clone(),
            Dense::Bytes(b) => {
                let size = match et {
                    PrimitiveType::Pred => 1,
                    t if t.bit_width() % 8 == 0 => (t.bit_width() / 8) as usize,
                    t => {
                        return Err(bad(format!(
                            "hex dense literal of {} (sub-byte) is not supported",
                            t.name()
                        )))
                    }
                };
                if b.len() != size * n && b.len() != size {
                    return Err(bad(format!(
                        "hex dense literal has {} bytes; {} of {} needs {}",
                        b.len(),
                        n,
                        et.name(),
                        size * n
                    )));
                }
                b.chunks(size)
                    .map(|c| {
                        let word = |c: &[u8]| {
                            c.iter()
                                .rev()
                                .fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
                        };
                        if et.is_complex() {
                            let h = size / 2;
                            let (re, im) = c.split_at(h);
                            let f = |w: u64| {
                                if h == 4 {
                                    f64::from(f32::from_bits(w as u32))
                                } else {
                                    f64::from_bits(w)
                                }
                            };
                            Elem::Complex(f(word(re)), f(word(im)))
                        } else {
                            Elem::Bits(word(c))
                        }
                    })
                    .collect()
            }
        };
        if elems.len() != n && elems.len() != 1 {
            return Err(bad(format!(
                "dense literal has {} elements, its type {} needs {n}",
                elems.len(),
                show(ty)
            )));
        }
        let mut values = Vec::with_capacity(n);
        let first = match elems.first() {
            Some(e) => Some(self.literal_value(op, et, *e)?),
            None => None,
        };
        if elems.len() == 1 && n != 1 {
            if let Some(v) = first {
                values.resize(n, v);
            }
        } else {
            for e in &elems {
                values.push(self.literal_value(op, et, *e)?);
            }
        }
        Ok(ConstantLiteral::Array(ArrayLiteral { values }))
    }

    pub(super) fn literal_value(
        &self,
        op: &Op,
        et: PrimitiveType,
        e: Elem,
    ) -> Result<LiteralValue> {
        let bad = || {
            self.err_at(
                op.loc,
                ParseErrorKind::BadLiteral,
                format!("element {e:?} does not fit {}", et.name()),
            )
        };
        Ok(match et {
            PrimitiveType::Pred => match e {
                Elem::Bool(b) => LiteralValue::Bool(b),
                Elem::Int(i) => LiteralValue::Bool(i != 0),
                Elem::Bits(b) => LiteralValue::Bool(b != 0),
                _ => return Err(bad()),
            },
            t if t.is_int() => {
                let bits = t.bit_width() as u32;
                match e {
                    Elem::Int(i) => LiteralValue::Int(i),
                    Elem::Bool(b) => LiteralValue::Int(i128::from(b)),
                    Elem::Bits(b) => {
                        let v = i128::from(b);
                        if t.is_signed_int()
                            && bits < 128
                            && (v >> (bits - 1)) & 1 == 1
                            && bits <= 64
                        {
                            LiteralValue::Int(v - (1i128 << bits))
                        } else {
                            LiteralValue::Int(v)
                        }
                    }
                    _ => return Err(bad()),
                }
            }
            t if t.is_complex() => match e {
                Elem::Complex(r, i) => LiteralValue::Complex(r, i),
                Elem::ComplexParts(r, i) => {
                    let single = t == PrimitiveType::C64;
                    let part = |p: Part| match p {
                        Part::Value(v) => Ok(v),
                        Part::Bits(b) if single && b <= u64::from(u32::MAX) => {
                            Ok(f64::from(f32::from_bits(b as u32)))
                        }
                        Part::Bits(b) if !single => Ok(f64::from_bits(b)),
                        Part::Bits(b) => Err(self.err_at(
                            op.loc,
                            ParseErrorKind::BadLiteral,
                            format!("complex part 0x{b:X} is wider than the f32 parts of c64"),
                        )),
                    };
                    LiteralValue::Complex(part(r)?, part(i)?)
                }
                Elem::Float(f) => LiteralValue::Complex(f, 0.0),
                Elem::Int(i) => LiteralValue::Complex(i as f64, 0.0),
                _ => return Err(bad()),
            },
            t => match e {
                // MLIR reads a float literal into its element type: round it there.
                Elem::Float(f) => LiteralValue::Float(round_to(t, f)),
                Elem::Int(i) => LiteralValue::Float(round_to(t, i as f64)),
                Elem::Bits(b) => LiteralValue::Float(match t {
                    PrimitiveType::F16 => f64::from(half::f16::from_bits(b as u16)),
                    PrimitiveType::Bf16 => f64::from(half::bf16::from_bits(b as u16)),
                    PrimitiveType::F32 => f64::from(f32::from_bits(b as u32)),
                    PrimitiveType::F64 => f64::from_bits(b),
                    PrimitiveType::F8E4M3FN => hlo::F8E4M3FN::from_bits(b as u8).to_f64(),
                    PrimitiveType::F8E5M2 => hlo::F8E5M2::from_bits(b as u8).to_f64(),
                    other => {
                        return Err(self.err_at(
                            op.loc,
                            ParseErrorKind::BadLiteral,
                            format!("hex elements of {} are not supported", other.name()),
                        ));
                    }
                }),
                _ => return Err(bad()),
            },
        })
    }
}

/// `f` rounded to the nearest value of element type `t` (the types with an exact f64 form).
fn round_to(t: PrimitiveType, f: f64) -> f64 {
    t.round_float(f).unwrap_or(f)
}
