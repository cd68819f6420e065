//! The module header's attributes: entry layout, aliasing, frontend attributes, stack frames.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn header_attr(&mut self, c: &mut ModuleConfig) -> Result<()> {
        let (key, loc) = self.expect_word("a module attribute name")?;
        self.expect(&TokenKind::Equal, &format!("'=' after {key}"))?;
        let dup = |p: &Parser<'_>, set: bool| -> Result<()> {
            if set {
                Err(ParseError::new(
                    loc,
                    ParseErrorKind::BadAttribute,
                    format!("module attribute '{key}' written twice"),
                ))
            } else {
                let _ = p;
                Ok(())
            }
        };
        match key.as_str() {
            "is_scheduled" => {
                dup(self, c.is_scheduled.is_some())?;
                c.is_scheduled = Some(self.boolean("is_scheduled")?);
            }
            "entry_computation_layout" => {
                dup(self, c.entry_computation_layout.is_some())?;
                self.expect(&TokenKind::LBrace, "'{' starting entry_computation_layout")?;
                self.expect(&TokenKind::LParen, "'(' starting the parameter layouts")?;
                let mut params = Vec::new();
                if !self.eat(&TokenKind::RParen) {
                    loop {
                        params.push(self.shape()?);
                        if self.eat(&TokenKind::RParen) {
                            break;
                        }
                        self.expect(&TokenKind::Comma, "',' or ')' in parameter layouts")?;
                    }
                }
                self.expect(&TokenKind::Arrow, "'->' in entry_computation_layout")?;
                let result = self.shape()?;
                self.expect(&TokenKind::RBrace, "'}' closing entry_computation_layout")?;
                c.entry_computation_layout = Some(ProgramLayout { params, result });
            }
            "input_output_alias" => {
                dup(self, c.input_output_alias.is_some())?;
                c.input_output_alias = Some(self.io_alias()?);
            }
            "allow_spmd_sharding_propagation_to_parameters" => {
                dup(
                    self,
                    c.allow_spmd_sharding_propagation_to_parameters.is_some(),
                )?;
                c.allow_spmd_sharding_propagation_to_parameters = Some(self.bool_list(&key)?);
            }
            "allow_spmd_sharding_propagation_to_output" => {
                dup(self, c.allow_spmd_sharding_propagation_to_output.is_some())?;
                c.allow_spmd_sharding_propagation_to_output = Some(self.bool_list(&key)?);
            }
            "replica_count" => {
                dup(self, c.replica_count.is_some())?;
                c.replica_count = Some(self.int("replica_count")?);
            }
            "num_partitions" => {
                dup(self, c.num_partitions.is_some())?;
                c.num_partitions = Some(self.int("num_partitions")?);
            }
            "frontend_attributes" => {
                dup(self, c.frontend_attributes.is_some())?;
                c.frontend_attributes = Some(self.string_map()?);
            }
            _ => {
                dup(self, c.raw.iter().any(|(k, _)| *k == key))?;
                let v = self.raw_value(&key)?;
                c.raw.push((key, v));
            }
        }
        Ok(())
    }

    pub(super) fn io_alias(&mut self) -> Result<Vec<IoAlias>> {
        self.braced_list("input_output_alias", |p| {
            let output_index = p.int_list("an output index")?;
            p.expect(&TokenKind::Colon, "':' after the output index")?;
            p.expect(&TokenKind::LParen, "'(' starting an alias")?;
            let param_number = p.int("a parameter number")?;
            p.expect(&TokenKind::Comma, "','")?;
            let param_index = p.int_list("a parameter index")?;
            let kind = if p.eat(&TokenKind::Comma) {
                Some(p.expect_word("an alias kind")?.0)
            } else {
                None
            };
            p.expect(&TokenKind::RParen, "')' closing an alias")?;
            Ok(IoAlias {
                output_index,
                param_number,
                param_index,
                kind,
            })
        })
    }

    /// `{key="value", key2="value2"}`.
    pub(super) fn string_map(&mut self) -> Result<Vec<(String, String)>> {
        self.expect(&TokenKind::LBrace, "'{'")?;
        let mut out = Vec::new();
        if self.eat(&TokenKind::RBrace) {
            return Ok(out);
        }
        loop {
            let k = match self.peek().clone() {
                TokenKind::Word(w) | TokenKind::Str(w) => {
                    self.bump();
                    w
                }
                _ => return self.syntax("an attribute key"),
            };
            self.expect(&TokenKind::Equal, "'='")?;
            let v = match self.peek().clone() {
                TokenKind::Str(s) => {
                    self.bump();
                    s
                }
                _ => self.raw_value("an attribute value")?,
            };
            out.push((k, v));
            if self.eat(&TokenKind::RBrace) {
                return Ok(out);
            }
            self.expect(&TokenKind::Comma, "',' or '}'")?;
        }
    }

    pub(super) fn stack_frame_tables(&mut self, f: &mut StackFrameIndex) -> Result<()> {
        loop {
            let Some(w) = self.peek_word() else {
                return Ok(());
            };
            let table = w.to_string();
            if !matches!(
                table.as_str(),
                "FileNames" | "FunctionNames" | "FileLocations" | "StackFrames"
            ) || matches!(self.peek_at(1), TokenKind::LBrace | TokenKind::LParen)
            {
                return Ok(());
            }
            self.bump();
            while self.peek_word().is_some_and(is_numeric_word) {
                let id = self.int("a table id")?;
                match table.as_str() {
                    "FileNames" => {
                        let s = self.expect_string("a file name")?;
                        f.file_names.push((id, s));
                    }
                    "FunctionNames" => {
                        let s = self.expect_string("a function name")?;
                        f.function_names.push((id, s));
                    }
                    "FileLocations" => {
                        let mut l = FileLocation::default();
                        for (k, v, loc) in self.int_record()? {
                            let slot = match k.as_str() {
                                "file_name_id" => &mut l.file_name_id,
                                "function_name_id" => &mut l.function_name_id,
                                "line" => &mut l.line,
                                "end_line" => &mut l.end_line,
                                "column" => &mut l.column,
                                "end_column" => &mut l.end_column,
                                _ => {
                                    return Err(ParseError::new(
                                        loc,
                                        ParseErrorKind::BadAttribute,
                                        format!("unknown FileLocations field '{k}'"),
                                    ))
                                }
                            };
                            *slot = v;
                        }
                        f.file_locations.push((id, l));
                    }
                    _ => {
                        let mut s = StackFrame::default();
                        for (k, v, loc) in self.int_record()? {
                            match k.as_str() {
                                "file_location_id" => s.file_location_id = v,
                                "parent_frame_id" => s.parent_frame_id = v,
                                _ => {
                                    return Err(ParseError::new(
                                        loc,
                                        ParseErrorKind::BadAttribute,
                                        format!("unknown StackFrames field '{k}'"),
                                    ))
                                }
                            }
                        }
                        f.stack_frames.push((id, s));
                    }
                }
            }
        }
    }

    /// `{a=1 b=2}` (entries separated by spaces or commas).
    pub(super) fn int_record(&mut self) -> Result<Vec<(String, i64, SourceLoc)>> {
        self.expect(&TokenKind::LBrace, "'{'")?;
        let mut out = Vec::new();
        while !self.eat(&TokenKind::RBrace) {
            let (k, loc) = self.expect_word("a field name or '}'")?;
            self.expect(&TokenKind::Equal, "'='")?;
            let v = self.int("an integer")?;
            out.push((k, v, loc));
            self.eat(&TokenKind::Comma);
        }
        Ok(out)
    }
}
