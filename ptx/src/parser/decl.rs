//! Declarations: variables with their array dimensions and initializers, and immediates.
use crate::ast::*;
use crate::error::ParseError;

use super::{Parser, MAX_DEPTH};
use crate::lexer::TokKind;

impl<'a> Parser<'a> {
    pub(super) fn var_decl(&mut self, linkage: Option<Linkage>) -> Result<VarDecl, ParseError> {
        let space = match self.peek_dot().and_then(StateSpace::from_str) {
            Some(s) => s,
            None => return Err(self.expected("a state space")),
        };
        self.pos += 1;
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        while let Some(w) = self.peek_dot() {
            self.pos += 1;
            if w == "align" {
                align = Some(self.u32("an alignment")?);
            } else if let Some(v) = VectorWidth::from_str(w) {
                vector = Some(v);
            } else if let Some(t) = Type::from_str(w) {
                if ty.is_some() {
                    self.pos -= 1;
                    return Err(self.expected("a variable name"));
                }
                ty = Some(t);
            } else {
                self.pos -= 1;
                return Err(self.expected("a variable type, `.align`, or `.v2`/`.v4`"));
            }
        }
        let Some(ty) = ty else {
            return Err(self.expected("a variable type such as `.b32`"));
        };
        let mut declarators = Vec::new();
        loop {
            let name = self.name("a variable name")?;
            if space == StateSpace::Reg && !name.starts_with('%') {
                if let Some(s) = self.reg_scopes.last_mut() {
                    s.push(name);
                }
            }
            let range = if self.eat_punct('<') {
                let n = self.u32("a register count")?;
                self.expect_punct('>', "to close `<N>`")?;
                Some(n)
            } else {
                None
            };
            let array = self.array_dims()?;
            let init = if self.eat_punct('=') {
                Some(self.initializer(0)?)
            } else {
                None
            };
            if self.build {
                declarators.push(Declarator {
                    name: name.to_owned(),
                    range,
                    array,
                    init,
                });
            }
            if self.eat_punct(';') {
                break;
            }
            self.expect_punct(',', "or ';' after a declaration")?;
        }
        Ok(VarDecl {
            linkage,
            space,
            align,
            vector,
            ty,
            declarators,
        })
    }

    pub(super) fn initializer(&mut self, depth: usize) -> Result<Initializer, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.err_here("initializer nested too deeply"));
        }
        if self.eat_punct('{') {
            let mut v = Vec::new();
            if self.eat_punct('}') {
                return Ok(Initializer::List(v));
            }
            loop {
                let item = self.initializer(depth + 1)?;
                if self.build {
                    v.push(item);
                }
                if self.eat_punct('}') {
                    return Ok(Initializer::List(v));
                }
                self.expect_punct(',', "or '}' in initializer list")?;
            }
        }
        if let Some(TokKind::Ident(s)) = self.peek() {
            self.pos += 1;
            if s == "generic" && self.eat_punct('(') {
                let name = self.name("a symbol inside generic()")?;
                self.expect_punct(')', "to close generic(")?;
                let offset = self.opt_offset()?;
                return Ok(Initializer::Generic {
                    name: self.own(name),
                    offset,
                });
            }
            let offset = self.opt_offset()?;
            return Ok(Initializer::Symbol {
                name: self.own(s),
                offset,
            });
        }
        match self.immediate()? {
            Some(i) => Ok(Initializer::Imm(i)),
            None => Err(self.expected("an initializer value")),
        }
    }

    /// `+N`, `+-N` or `-N` after a symbol; 0 when absent.
    pub(super) fn opt_offset(&mut self) -> Result<i64, ParseError> {
        if self.eat_punct('+') || self.peek() == Some(TokKind::Punct('-')) {
            self.int("an offset")
        } else {
            Ok(0)
        }
    }

    /// An optional-sign numeric literal; `None` (consuming nothing) if the next token is not one.
    pub(super) fn immediate(&mut self) -> Result<Option<Immediate>, ParseError> {
        let neg = self.peek() == Some(TokKind::Punct('-'));
        let k = if neg { self.peek_at(1) } else { self.peek() };
        let here = self.pos;
        let imm = match k {
            Some(TokKind::Int(v, unsigned)) => {
                if neg {
                    if unsigned || v > i64::MAX as u64 + 1 {
                        self.pos += 1;
                        return Err(self.err_here("negative integer literal is out of range"));
                    }
                    Immediate::Int((v as i64).wrapping_neg())
                } else if unsigned || v > i64::MAX as u64 {
                    Immediate::UInt(v)
                } else {
                    Immediate::Int(v as i64)
                }
            }
            Some(TokKind::F32(b)) => Immediate::F32(if neg { b ^ 0x8000_0000 } else { b }),
            Some(TokKind::F64(b)) => Immediate::F64(if neg { b ^ (1 << 63) } else { b }),
            _ => return Ok(None),
        };
        self.pos = here + 1 + usize::from(neg);
        Ok(Some(imm))
    }
}
