//! Instructions and their operands.
use crate::ast::*;
use crate::error::ParseError;

use super::Parser;
use crate::lexer::TokKind;

impl<'a> Parser<'a> {
    pub(super) fn instruction(&mut self, require_semi: bool) -> Result<Instruction, ParseError> {
        let guard = if self.eat_punct('@') {
            let negated = self.eat_punct('!');
            let r = self.name("a predicate register after '@'")?;
            if SpecialReg::parse(r).is_some() || !self.is_reg_name(r) {
                self.pos -= 1;
                return Err(self.expected("a predicate register after '@'"));
            }
            Some(Guard {
                negated,
                reg: Register(self.own(r)),
            })
        } else {
            None
        };
        let op_pos = self.pos;
        let word = self.name("an instruction opcode")?;
        let mut words = std::mem::take(&mut self.words);
        words.clear();
        while self.peek_joined() {
            match self.peek() {
                Some(TokKind::Dot(s)) => {
                    words.push((s, self.pos));
                    self.pos += 1;
                }
                _ => break,
            }
        }
        let r = self.finish_instruction(guard, op_pos, word, &words, require_semi);
        self.words = words;
        r
    }

    pub(super) fn finish_instruction(
        &mut self,
        guard: Option<Guard>,
        op_pos: usize,
        word: &'a str,
        words: &[(&'a str, usize)],
        require_semi: bool,
    ) -> Result<Instruction, ParseError> {
        // Longest multi-word opcode first.
        let mut op = None;
        for n in (0..=words.len().min(2)).rev() {
            let found = if n == 0 {
                Opcode::from_str(word)
            } else {
                self.scratch.clear();
                self.scratch.push_str(word);
                for (w, _) in &words[..n] {
                    self.scratch.push('.');
                    self.scratch.push_str(w);
                }
                Opcode::from_str(&self.scratch)
            };
            if let Some(o) = found {
                op = Some((o, n));
                break;
            }
        }
        let Some((op, used)) = op else {
            return Err(self.err_at(op_pos, format!("unknown opcode `{word}`")));
        };
        let mut mods = Vec::new();
        for &(w, p) in &words[used..] {
            match Modifier::parse(op, w) {
                Some(m) if self.build => mods.push(m),
                Some(_) => {}
                None => {
                    return Err(
                        self.err_at(p, format!("unknown modifier `.{w}` for `{}`", op.as_str()))
                    );
                }
            }
        }
        let mut operands = Vec::new();
        if !matches!(self.peek(), None | Some(TokKind::Punct(';'))) {
            let mut count = 0usize;
            loop {
                let o = self.operand(true)?;
                count += 1;
                if self.build {
                    operands.push(o);
                }
                if !self.eat_punct(',') {
                    break;
                }
                if count > 64 {
                    return Err(self.err_here("too many operands"));
                }
            }
        }
        if require_semi || self.peek().is_some() {
            self.expect_punct(';', "after instruction")?;
        }
        Ok(Instruction {
            guard,
            op,
            mods,
            operands,
        })
    }

    pub(super) fn is_reg_name(&self, name: &str) -> bool {
        name.starts_with('%')
            || self.reg_scopes.iter().any(|s| s.contains(&name))
            || self.reg_params.iter().any(|p| p == name)
    }

    /// One operand. `nested` allows vectors and lists (not inside each other).
    pub(super) fn operand(&mut self, nested: bool) -> Result<Operand, ParseError> {
        let op = match self.peek() {
            Some(TokKind::Punct('[')) => {
                self.pos += 1;
                Operand::Address(self.address()?)
            }
            Some(TokKind::Punct('{')) if nested => {
                self.pos += 1;
                let mut v = Vec::new();
                let mut count = 0usize;
                loop {
                    let o = self.operand(false)?;
                    count += 1;
                    if self.build {
                        v.push(o);
                    }
                    if self.eat_punct('}') {
                        break;
                    }
                    self.expect_punct(',', "or '}' in vector operand")?;
                    if count > 8 {
                        return Err(self.err_here("vector operand has too many elements"));
                    }
                }
                Operand::Vector(v)
            }
            Some(TokKind::Punct('(')) if nested => {
                self.pos += 1;
                let mut v = Vec::new();
                if !self.eat_punct(')') {
                    let mut count = 0usize;
                    loop {
                        let o = self.operand(false)?;
                        count += 1;
                        if self.build {
                            v.push(o);
                        }
                        if self.eat_punct(')') {
                            break;
                        }
                        self.expect_punct(',', "or ')' in argument list")?;
                        if count > 1024 {
                            return Err(self.err_here("argument list too long"));
                        }
                    }
                }
                Operand::List(v)
            }
            Some(TokKind::Punct('!')) => {
                self.pos += 1;
                let r = self.name("a predicate register after '!'")?;
                Operand::Not(Register(self.own(r)))
            }
            Some(TokKind::Ident(_)) => {
                let name = self.name("an operand")?;
                if name == "_" {
                    Operand::Sink
                } else if let Some(sr) = self.special(name)? {
                    Operand::Special(sr)
                } else if self.is_reg_name(name) {
                    Operand::Reg(Register(self.own(name)))
                } else {
                    let offset = self.opt_offset()?;
                    Operand::Symbol {
                        name: self.own(name),
                        offset,
                    }
                }
            }
            _ => match self.immediate()? {
                Some(i) => Operand::Imm(i),
                None => return Err(self.expected("an operand")),
            },
        };
        if self.eat_punct('|') {
            let r = self.name("a predicate register after '|'")?;
            return Ok(Operand::Pair(Box::new(op), Register(self.own(r))));
        }
        Ok(op)
    }

    /// Recognises a special register (the identifier was just consumed); merges a joined
    /// `.x`/`.y`/`.z` component.
    pub(super) fn special(&mut self, name: &str) -> Result<Option<SpecialReg>, ParseError> {
        if !name.starts_with('%') {
            return Ok(None);
        }
        if self.peek_joined() {
            if let Some(TokKind::Dot(c)) = self.peek() {
                self.scratch.clear();
                self.scratch.push_str(name);
                self.scratch.push('.');
                self.scratch.push_str(c);
                return match SpecialReg::parse(&self.scratch) {
                    Some(s) => {
                        self.pos += 1;
                        Ok(Some(s))
                    }
                    None => {
                        let full = std::mem::take(&mut self.scratch);
                        Err(self.err_here(format!("unknown special register `{full}`")))
                    }
                };
            }
        }
        Ok(SpecialReg::parse(name))
    }

    pub(super) fn address(&mut self) -> Result<Address, ParseError> {
        let base = match self.peek() {
            Some(TokKind::Ident(_)) => {
                let name = self.name("an address base")?;
                if SpecialReg::parse(name).is_some() {
                    self.pos -= 1;
                    return Err(self.expected("a register or symbol as address base"));
                }
                if self.is_reg_name(name) {
                    AddressBase::Reg(Register(self.own(name)))
                } else {
                    AddressBase::Symbol(self.own(name))
                }
            }
            Some(TokKind::Int(v, _)) => {
                self.pos += 1;
                AddressBase::Imm(v)
            }
            _ => return Err(self.expected("a register, symbol or address inside '[ ]'")),
        };
        let offset = self.opt_offset()?;
        self.expect_punct(']', "to close the address")?;
        Ok(Address { base, offset })
    }
}
