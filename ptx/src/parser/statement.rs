//! Statements of a function body: blocks, body directives and labels.
use crate::ast::*;
use crate::error::ParseError;

use super::{is_var_space, Parser, MAX_DEPTH};
use crate::lexer::TokKind;

impl<'a> Parser<'a> {
    /// Skips a function body after its `{` (see [`outline`]).
    pub(super) fn skip_body(&mut self) -> Result<(), ParseError> {
        // Resume the lexer right after the `{` (nothing past it has been lexed by a peek, but
        // rewinding makes that not matter).
        let at = self.toks.get(self.pos).map(|t| t.start);
        if let Some(at) = at {
            self.lexer.seek(at);
            self.toks.truncate(self.pos);
        }
        match self.lexer.skip_block() {
            Ok(()) => Ok(()),
            Err(Some(e)) => Err(e),
            Err(None) => {
                self.lex_done = true;
                let last = self.lexer.last_token_end();
                Err(ParseError::at(
                    self.src,
                    last,
                    "expected '}' to close the block, found end of input",
                ))
            }
        }
    }

    /// Statements up to and including the closing `}`.
    pub(super) fn block_body(&mut self, depth: usize) -> Result<Vec<Statement>, ParseError> {
        if depth > MAX_DEPTH {
            self.pos = self.pos.saturating_sub(1);
            return Err(self.err_here("blocks nested too deeply"));
        }
        self.reg_scopes.push(Vec::new());
        let mut out = Vec::new();
        loop {
            self.release();
            let s = match self.peek() {
                None => {
                    return Err(self.err_eof("expected '}' to close the block, found end of input"))
                }
                Some(TokKind::Punct('}')) => {
                    self.pos += 1;
                    self.reg_scopes.pop();
                    return Ok(out);
                }
                Some(TokKind::Punct('{')) => {
                    self.pos += 1;
                    Statement::Block(self.block_body(depth + 1)?)
                }
                Some(TokKind::Dot(_)) => self.body_directive()?,
                Some(TokKind::Ident(_)) if self.peek_at(1) == Some(TokKind::Punct(':')) => {
                    self.label_like()?
                }
                Some(TokKind::Ident(_)) | Some(TokKind::Punct('@')) => {
                    Statement::Instruction(self.instruction(true)?)
                }
                Some(_) => return Err(self.expected("a statement")),
            };
            if self.build {
                out.push(s);
            }
        }
    }

    pub(super) fn body_directive(&mut self) -> Result<Statement, ParseError> {
        if self.eat_dot("loc") {
            let file = self.u32("a file index")?;
            let line = self.u32("a line number")?;
            let column = self.u32("a column number")?;
            let inlined_at = if self.eat_punct(',') {
                let w = self.name("`function_name`")?;
                if w != "function_name" {
                    self.pos -= 1;
                    return Err(self.expected("`function_name`"));
                }
                let function_name = self.name("a function name label")?;
                let function_offset = self.opt_offset()?;
                self.expect_punct(',', "before `inlined_at`")?;
                let w = self.name("`inlined_at`")?;
                if w != "inlined_at" {
                    self.pos -= 1;
                    return Err(self.expected("`inlined_at`"));
                }
                Some(InlinedAt {
                    function_name: self.own(function_name),
                    function_offset,
                    file: self.u32("a file index")?,
                    line: self.u32("a line number")?,
                    column: self.u32("a column number")?,
                })
            } else {
                None
            };
            return Ok(Statement::Loc(Loc {
                file,
                line,
                column,
                inlined_at,
            }));
        }
        if self.eat_dot("pragma") {
            return Ok(Statement::Pragma(self.pragma_strings()?));
        }
        let linkage = self.linkage();
        match self.peek_dot() {
            Some(s) if is_var_space(s) || s == "reg" || s == "param" || s == "local" => {
                Ok(Statement::Decl(self.var_decl(linkage)?))
            }
            _ => Err(self.expected("a declaration, `.loc` or `.pragma`")),
        }
    }

    pub(super) fn label_like(&mut self) -> Result<Statement, ParseError> {
        let name = self.name("a label")?;
        self.expect_punct(':', "after label")?;
        if self.eat_dot("branchtargets") {
            let mut labels = vec![self.ident("a label")?];
            while self.eat_punct(',') {
                labels.push(self.ident("a label")?);
            }
            self.expect_punct(';', "after .branchtargets")?;
            return Ok(Statement::BranchTargets {
                name: self.own(name),
                labels,
            });
        }
        if self.eat_dot("callprototype") {
            let return_params = if self.peek() == Some(TokKind::Punct('(')) {
                Some(self.param_list()?)
            } else {
                None
            };
            let u = self.name("`_`")?;
            if u != "_" {
                self.pos -= 1;
                return Err(self.expected("`_`"));
            }
            let params = self.param_list()?;
            let noreturn = self.eat_dot("noreturn");
            self.expect_punct(';', "after .callprototype")?;
            return Ok(Statement::CallPrototype {
                name: self.own(name),
                return_params,
                params,
                noreturn,
            });
        }
        Ok(Statement::Label(self.own(name)))
    }
}
