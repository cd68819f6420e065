//! The generic form: `"builtin.module"() ({...})`, `"func.func"` and `"stablehlo.add"(%a, %b) : (...) -> ...`.

use super::*;

impl<'a> Front<'a> {
    pub(super) fn operand_list_paren(&mut self, op: &mut Op) -> Result<()> {
        self.c.expect(b'(')?;
        if !self.c.eat(b')') {
            loop {
                let v = self.operand()?;
                op.operands.push(v);
                if self.c.eat(b')') {
                    break;
                }
                self.c.expect(b',')?;
            }
        }
        Ok(())
    }

    /// The generic form after the quoted name.
    pub(super) fn generic(&mut self, op: &mut Op) -> Result<()> {
        self.operand_list_paren(op)?;
        if self.c.peek() == Some(b'[') {
            return Err(self.c.error(
                ParseErrorKind::Structure,
                "successor blocks are not supported",
            ));
        }
        if self.c.peek() == Some(b'<') {
            self.c.pos += 1;
            let props = self.c.dict()?;
            op.attrs.extend(props);
            self.c.expect(b'>')?;
        }
        if self.c.peek() == Some(b'(') {
            self.c.pos += 1;
            let mut i = 0;
            loop {
                let kind = region_kind(&op.name, i);
                let r = self.region(kind, None)?;
                op.regions.push(r);
                i += 1;
                if self.c.eat(b')') {
                    break;
                }
                self.c.expect(b',')?;
            }
        }
        if self.c.peek() == Some(b'{') {
            let d = self.c.dict()?;
            op.attrs.extend(d);
        }
        self.c.expect(b':')?;
        let (_, results) = self.type_sig(op)?;
        op.result_types = results;
        Ok(())
    }

    /// The types after `:`: `(A, B) -> R`, `(A) -> (R, S)`, `A -> R`, `T`, or `T, U`.
    pub(super) fn type_sig(&mut self, op: &Op) -> Result<(Option<Vec<Shape>>, Vec<Shape>)> {
        let list = |s: &mut Self| -> Result<Vec<Shape>> {
            let mut v = Vec::new();
            s.c.expect(b'(')?;
            if !s.c.eat(b')') {
                loop {
                    v.push(s.c.ty()?);
                    if s.c.eat(b')') {
                        break;
                    }
                    s.c.expect(b',')?;
                }
            }
            Ok(v)
        };
        let operands = if self.c.peek() == Some(b'(') {
            list(self)?
        } else {
            let mut v = vec![self.c.ty()?];
            while self.c.eat(b',') {
                v.push(self.c.ty()?);
            }
            if !self.c.eat_arrow() {
                return Ok((None, self.plain_results(op, v)?));
            }
            return Ok((Some(v), self.results_after_arrow(&list)?));
        };
        if !self.c.eat_arrow() {
            return Err(self.c.expected("'->' after the operand types"));
        }
        Ok((Some(operands), self.results_after_arrow(&list)?))
    }

    pub(super) fn results_after_arrow(
        &mut self,
        list: &dyn Fn(&mut Self) -> Result<Vec<Shape>>,
    ) -> Result<Vec<Shape>> {
        if self.c.peek() == Some(b'(') {
            list(self)
        } else {
            Ok(vec![self.c.ty()?])
        }
    }

    /// Result types of a signature written without `->`.
    pub(super) fn plain_results(&mut self, op: &Op, v: Vec<Shape>) -> Result<Vec<Shape>> {
        let short = op.name.rsplit_once('.').map_or(op.name.as_str(), |x| x.1);
        if is_terminator(&op.name) || short == "optimization_barrier" {
            return Ok(v);
        }
        if short == "select" {
            return Ok(v.last().cloned().into_iter().collect());
        }
        if v.len() == 1 {
            return Ok(v);
        }
        Err(self.err_at(
            op.loc,
            ParseErrorKind::Syntax,
            format!("expected one result type, found {}", v.len()),
        ))
    }

    /// `"builtin.module"() <{sym_name = "m"}> ({ "func.func"() ... }) {attrs} : () -> ()`.
    pub(super) fn generic_module(mut self) -> Result<HloModule> {
        self.c.string()?;
        self.c.expect(b'(')?;
        self.c.expect(b')')?;
        if self.c.eat(b'<') {
            let props = self.c.dict()?;
            if let Some((_, Attr::Str(n))) = props.iter().find(|(k, _)| k == "sym_name") {
                self.module_name = n.clone();
            }
            self.c.expect(b'>')?;
        }
        self.c.expect(b'(')?;
        self.c.expect(b'{')?;
        loop {
            if self.c.eat(b'}') {
                break;
            }
            if self.c.rest().starts_with(b"\"func.func\"") {
                self.generic_func()?;
                continue;
            }
            return Err(self.c.expected("'\"func.func\"' or '}'"));
        }
        self.c.expect(b')')?;
        if self.c.peek() == Some(b'{') {
            let attrs = self.c.dict()?;
            self.module_attrs(&attrs);
        }
        self.c.expect(b':')?;
        self.function_type()?;
        self.c.opt_loc()?;
        self.after_module()
    }

    /// `(T, ...) -> (R, ...)` or `(T) -> R`, skipped.
    pub(super) fn function_type(&mut self) -> Result<()> {
        if self.c.peek() != Some(b'(') {
            return Err(self.c.expected("a function type '(...) -> ...'"));
        }
        self.c.skip_balanced()?;
        if !self.c.eat_arrow() {
            return Err(self.c.expected("'->'"));
        }
        if self.c.peek() == Some(b'(') {
            self.c.skip_balanced()?;
        } else {
            self.c.ty()?;
        }
        Ok(())
    }

    /// The sharding of each dictionary of `arg_attrs` / `res_attrs` (`[{...}, {}]`).
    fn dict_list_shardings(
        &self,
        a: &Attr,
        loc: SourceLoc,
    ) -> Result<Vec<Option<hlo::HloSharding>>> {
        let Attr::List(dicts) = a else {
            return Err(self.err_at(
                loc,
                ParseErrorKind::BadAttribute,
                "not a list of dictionaries",
            ));
        };
        dicts
            .iter()
            .map(|d| match d {
                Attr::Dict(entries, _) => self.sharding_of(entries, loc),
                _ => Err(self.err_at(loc, ParseErrorKind::BadAttribute, "not a dictionary")),
            })
            .collect()
    }

    /// `"func.func"() <{sym_name = "f", sym_visibility = "private", function_type = ...}>
    /// ({ ^bb0(args): ... }) : () -> ()`.
    pub(super) fn generic_func(&mut self) -> Result<()> {
        let loc = self.c.loc();
        self.c.string()?;
        self.op_name = "func.func".into();
        self.c.expect(b'(').map_err(|e| self.named(e))?;
        self.c.expect(b')').map_err(|e| self.named(e))?;
        let mut sym = None;
        let mut public = true;
        // Per argument and result: the attribute dictionaries' shardings, as the pretty form's
        // `%arg0: tensor<...> {mhlo.sharding = ...}` gives them.
        let (mut arg_shardings, mut result_shardings) = (Vec::new(), Vec::new());
        if self.c.eat(b'<') {
            self.c.expect(b'{').map_err(|e| self.named(e))?;
            if !self.c.eat(b'}') {
                loop {
                    let key = self
                        .c
                        .expect_ident("a property name")
                        .map_err(|e| self.named(e))?;
                    self.c.expect(b'=').map_err(|e| self.named(e))?;
                    match key {
                        "function_type" => self.function_type().map_err(|e| self.named(e))?,
                        "sym_name" => sym = Some(self.c.string().map_err(|e| self.named(e))?),
                        "sym_visibility" => {
                            public = self.c.string().map_err(|e| self.named(e))? == "public"
                        }
                        "arg_attrs" | "res_attrs" => {
                            let at = self.c.loc();
                            let a = self.c.attr().map_err(|e| self.named(e))?;
                            let shardings = self.dict_list_shardings(&a, at)?;
                            if key == "arg_attrs" {
                                arg_shardings = shardings;
                            } else {
                                result_shardings = shardings;
                            }
                        }
                        _ => {
                            self.c.attr().map_err(|e| self.named(e))?;
                        }
                    }
                    if self.c.eat(b'}') {
                        break;
                    }
                    self.c.expect(b',').map_err(|e| self.named(e))?;
                }
            }
            self.c.expect(b'>').map_err(|e| self.named(e))?;
        }
        let Some(sym) = sym else {
            return Err(self.err_at(loc, ParseErrorKind::Syntax, "func.func without sym_name"));
        };
        let id = self.begin_func(&sym, public, loc)?;
        self.c.expect(b'(').map_err(|e| self.named(e))?;
        self.func_body(id, &sym, None, loc)?;
        self.c.expect(b')').map_err(|e| self.named(e))?;
        self.apply_func_shardings(id, arg_shardings, result_shardings);
        if self.c.peek() == Some(b'{') {
            self.c.dict().map_err(|e| self.named(e))?;
        }
        self.c.expect(b':').map_err(|e| self.named(e))?;
        self.function_type().map_err(|e| self.named(e))?;
        self.c.opt_loc()?;
        self.op_name.clear();
        Ok(())
    }
}
