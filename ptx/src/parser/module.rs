//! Module level: the header, directives, sections, functions and their parameters.
use crate::ast::*;
use crate::error::ParseError;

use super::{is_var_space, Parser};
use crate::lexer::TokKind;

impl<'a> Parser<'a> {
    pub(super) fn module(&mut self) -> Result<Module, ParseError> {
        self.expect_dot("version")?;
        let version = self.version()?;
        self.expect_dot("target")?;
        let arch = self.ident("a target architecture such as `sm_90`")?;
        let mut options = Vec::new();
        while self.eat_punct(',') {
            options.push(self.ident("a target option")?);
        }
        let target = Target { arch, options };
        let address_size = if self.eat_dot("address_size") {
            let here = self.pos;
            let v = self.u32("an address size")?;
            if v != 32 && v != 64 {
                self.pos = here;
                return Err(self.err_here(format!("address size must be 32 or 64, found {v}")));
            }
            Some(v)
        } else {
            None
        };
        let mut directives = Vec::new();
        loop {
            self.release();
            if self.peek().is_none() {
                break;
            }
            let d = self.directive()?;
            if self.build || matches!(d, Directive::Function(_)) {
                directives.push(d);
            }
        }
        Ok(Module {
            version,
            target,
            address_size,
            directives,
        })
    }

    pub(super) fn version(&mut self) -> Result<Version, ParseError> {
        let Some(t) = self.tok(0).copied() else {
            return Err(self.expected("a version number such as `9.5`"));
        };
        let text = self.src.get(t.start..t.end).unwrap_or("");
        let parsed = match t.kind {
            TokKind::F64(_) => text
                .split_once('.')
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?))),
            _ => None,
        };
        match parsed {
            Some((major, minor)) => {
                self.pos += 1;
                Ok(Version { major, minor })
            }
            None => Err(self.expected("a version number such as `9.5`")),
        }
    }

    pub(super) fn linkage(&mut self) -> Option<Linkage> {
        let l = match self.peek_dot()? {
            "visible" => Linkage::Visible,
            "extern" => Linkage::Extern,
            "weak" => Linkage::Weak,
            "common" => Linkage::Common,
            _ => return None,
        };
        self.pos += 1;
        Some(l)
    }

    pub(super) fn directive(&mut self) -> Result<Directive, ParseError> {
        if self.eat_dot("file") {
            let index = self.u32("a file index")?;
            let path = self.string("a file path string")?;
            let timestamp_size = if self.eat_punct(',') {
                let ts = self.uint("a timestamp")?;
                self.expect_punct(',', "between timestamp and file size")?;
                Some((ts, self.uint("a file size")?))
            } else {
                None
            };
            return Ok(Directive::File(FileDirective {
                index,
                path,
                timestamp_size,
            }));
        }
        if self.eat_dot("pragma") {
            return Ok(Directive::Pragma(self.pragma_strings()?));
        }
        if self.eat_dot("section") {
            return Ok(Directive::Section(self.section()?));
        }
        let linkage = self.linkage();
        match self.peek_dot() {
            Some("entry") | Some("func") => Ok(Directive::Function(self.function(linkage)?)),
            Some(s) if is_var_space(s) => Ok(Directive::Variable(self.var_decl(linkage)?)),
            _ => Err(self.expected(
                "a module directive (`.entry`, `.func`, `.global`, `.const`, `.shared`, `.file`)",
            )),
        }
    }

    pub(super) fn section(&mut self) -> Result<Section, ParseError> {
        let name = match self.peek_dot() {
            Some(n) => n.to_string(),
            None => return Err(self.expected("a section name such as `.debug_str`")),
        };
        self.pos += 1;
        self.expect_punct('{', "to open the section")?;
        let mut items = Vec::new();
        loop {
            self.release();
            match self.peek() {
                Some(TokKind::Punct('}')) => {
                    self.pos += 1;
                    return Ok(Section { name, items });
                }
                Some(TokKind::Ident(_)) if self.peek_at(1) == Some(TokKind::Punct(':')) => {
                    let label = self.name("a label")?;
                    self.pos += 1;
                    if self.build {
                        items.push(SectionItem::Label(label.to_owned()));
                    }
                }
                Some(TokKind::Dot(d)) => {
                    let Some(ty) = Type::from_str(d).filter(|t| t.is_bits()) else {
                        return Err(self.expected("`.b8`, `.b16`, `.b32` or `.b64` section data"));
                    };
                    self.pos += 1;
                    let mut values = vec![self.section_value()?];
                    while self.eat_punct(',') {
                        let v = self.section_value()?;
                        if self.build {
                            values.push(v);
                        }
                    }
                    self.eat_punct(';');
                    if self.build {
                        items.push(SectionItem::Data { ty, values });
                    }
                }
                None => {
                    return Err(
                        self.err_eof("expected '}' to close the section, found end of input")
                    )
                }
                Some(_) => return Err(self.expected("a label, section data or '}'")),
            }
        }
    }

    pub(super) fn section_value(&mut self) -> Result<SectionValue, ParseError> {
        match self.peek() {
            Some(TokKind::Dot(d)) => {
                self.pos += 1;
                Ok(SectionValue::Section(self.own(d)))
            }
            Some(TokKind::Ident(_)) => {
                let name = self.name("a label")?;
                if self.peek() == Some(TokKind::Punct('-'))
                    && matches!(self.peek_at(1), Some(TokKind::Ident(_)))
                {
                    self.pos += 1;
                    let b = self.name("a label")?;
                    return Ok(SectionValue::Diff(self.own(name), self.own(b)));
                }
                let offset = self.opt_offset()?;
                Ok(SectionValue::Symbol {
                    name: self.own(name),
                    offset,
                })
            }
            _ => Ok(SectionValue::Int(self.int("a section data value")?)),
        }
    }

    pub(super) fn function(&mut self, linkage: Option<Linkage>) -> Result<Function, ParseError> {
        let kind = if self.eat_dot("entry") {
            FunctionKind::Entry
        } else {
            self.expect_dot("func")?;
            FunctionKind::Func
        };
        let return_params =
            if kind == FunctionKind::Func && self.peek() == Some(TokKind::Punct('(')) {
                Some(self.param_list()?)
            } else {
                None
            };
        let name = self.ident("a function name")?;
        let params = if self.peek() == Some(TokKind::Punct('(')) {
            Some(self.param_list()?)
        } else {
            None
        };
        let mut perf = Vec::new();
        while let Some(d) = self.peek_dot() {
            let item = match d {
                "maxntid" | "reqntid" | "reqnctapercluster" => {
                    self.pos += 1;
                    let mut v = vec![self.u32("a dimension")?];
                    while self.eat_punct(',') {
                        if v.len() == 3 {
                            return Err(self.err_here("at most 3 dimensions are allowed"));
                        }
                        v.push(self.u32("a dimension")?);
                    }
                    match d {
                        "maxntid" => PerfDirective::MaxNtid(v),
                        "reqntid" => PerfDirective::ReqNtid(v),
                        _ => PerfDirective::ReqNctaPerCluster(v),
                    }
                }
                "minnctapersm" | "maxnctapersm" | "maxnreg" | "maxclusterrank" => {
                    self.pos += 1;
                    let n = self.u32("a count")?;
                    match d {
                        "minnctapersm" => PerfDirective::MinNctaPerSm(n),
                        "maxnctapersm" => PerfDirective::MaxNctaPerSm(n),
                        "maxnreg" => PerfDirective::MaxNreg(n),
                        _ => PerfDirective::MaxClusterRank(n),
                    }
                }
                "explicitcluster" => {
                    self.pos += 1;
                    PerfDirective::ExplicitCluster
                }
                "noreturn" => {
                    self.pos += 1;
                    PerfDirective::NoReturn
                }
                "pragma" => {
                    self.pos += 1;
                    PerfDirective::Pragma(self.pragma_strings()?)
                }
                _ => break,
            };
            perf.push(item);
        }
        let body = if self.eat_punct(';') {
            None
        } else if self.peek() == Some(TokKind::Punct('{')) {
            self.pos += 1;
            // `.reg` parameters of a `.func` are registers inside its body.
            self.reg_params = return_params
                .iter()
                .chain(params.iter())
                .flatten()
                .filter(|p| p.space == StateSpace::Reg && !p.name.starts_with('%'))
                .map(|p| p.name.clone())
                .collect();
            self.reg_scopes.clear();
            let b = if self.skip_bodies {
                self.skip_body()?;
                Vec::new()
            } else {
                self.block_body(1)?
            };
            self.reg_params.clear();
            Some(b)
        } else {
            return Err(self.expected("'{' or ';' after the function signature"));
        };
        Ok(Function {
            linkage,
            kind,
            return_params,
            name,
            params,
            perf,
            body,
        })
    }

    pub(super) fn pragma_strings(&mut self) -> Result<Vec<String>, ParseError> {
        let mut v = vec![self.string("a pragma string")?];
        while self.eat_punct(',') {
            v.push(self.string("a pragma string")?);
        }
        self.expect_punct(';', "after .pragma")?;
        Ok(v)
    }

    pub(super) fn param_list(&mut self) -> Result<Vec<Param>, ParseError> {
        self.expect_punct('(', "to open a parameter list")?;
        let mut v = Vec::new();
        if self.eat_punct(')') {
            return Ok(v);
        }
        loop {
            // Nothing backtracks into an earlier parameter.
            self.release();
            v.push(self.param()?);
            if self.eat_punct(')') {
                return Ok(v);
            }
            self.expect_punct(',', "or ')' in parameter list")?;
        }
    }

    pub(super) fn param(&mut self) -> Result<Param, ParseError> {
        let space = match self.peek_dot() {
            Some("param") => StateSpace::Param,
            Some("reg") => StateSpace::Reg,
            _ => return Err(self.expected("`.param` or `.reg`")),
        };
        self.pos += 1;
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        let mut ptr: Option<PtrAttr> = None;
        while let Some(w) = self.peek_dot() {
            self.pos += 1;
            if w == "align" {
                let a = Some(self.u32("an alignment")?);
                match ptr.as_mut() {
                    Some(p) => p.align = a,
                    None => align = a,
                }
            } else if w == "ptr" {
                ptr = Some(PtrAttr {
                    space: None,
                    align: None,
                });
            } else if let (Some(p), Some(sp)) = (ptr.as_mut(), StateSpace::from_str(w)) {
                p.space = Some(sp);
            } else if let Some(v) = VectorWidth::from_str(w) {
                vector = Some(v);
            } else if let Some(t) = Type::from_str(w) {
                ty = Some(t);
            } else {
                self.pos -= 1;
                return Err(self.expected("a parameter type, `.align`, or `.ptr`"));
            }
        }
        let Some(ty) = ty else {
            return Err(self.expected("a parameter type such as `.u64`"));
        };
        let name = self.ident("a parameter name")?;
        let array = self.array_dims()?;
        Ok(Param {
            space,
            align,
            vector,
            ty,
            ptr,
            name,
            array,
        })
    }

    pub(super) fn array_dims(&mut self) -> Result<Vec<Option<u64>>, ParseError> {
        let mut dims = Vec::new();
        while self.eat_punct('[') {
            if dims.len() >= 8 {
                return Err(self.err_here("too many array dimensions"));
            }
            if self.eat_punct(']') {
                dims.push(None);
            } else {
                dims.push(Some(self.uint("an array size")?));
                self.expect_punct(']', "to close the array size")?;
            }
        }
        Ok(dims)
    }
}
