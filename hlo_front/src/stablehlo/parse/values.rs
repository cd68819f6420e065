//! Uses of SSA values: a name resolved in the region that uses it, through the regions around
//! it (a loop or branch region captures the value as an extra tuple element; a called region
//! copies a constant in and refuses anything else), as XLA's MLIR-to-HLO export does.

use super::*;

impl Front<'_> {
    /// The instruction for a use of `%name` or `%name#index` in the innermost region.
    pub fn use_value(
        &mut self,
        name: &str,
        index: Option<usize>,
        loc: SourceLoc,
    ) -> Result<InstrId> {
        let level = self.frames.len() - 1;
        self.resolve(level, name, index, loc)
    }

    pub(super) fn resolve(
        &mut self,
        level: usize,
        name: &str,
        index: Option<usize>,
        loc: SourceLoc,
    ) -> Result<InstrId> {
        if let Some(&def) = self.frames[level].values.get(name) {
            return match (def, index) {
                (ValDef::One(id), None | Some(0)) => Ok(id),
                (ValDef::One(_), Some(i)) => Err(self.err_at(
                    loc,
                    ParseErrorKind::UndefinedOperand,
                    format!("%{name}#{i}: %{name} is a single value"),
                )),
                (
                    ValDef::Multi {
                        tuple,
                        first,
                        count,
                    },
                    i,
                ) => {
                    let i = match i {
                        Some(i) if i < count => i,
                        None if count == 1 => 0,
                        None => {
                            return Err(self.err_at(
                                loc,
                                ParseErrorKind::UndefinedOperand,
                                format!(
                                    "%{name} names {count} results: use %{name}#0 .. %{name}#{}",
                                    count - 1
                                ),
                            ))
                        }
                        Some(i) => {
                            return Err(self.err_at(
                                loc,
                                ParseErrorKind::UndefinedOperand,
                                format!("%{name}#{i}: %{name} has {count} results"),
                            ))
                        }
                    };
                    Ok(self.gte_at(level, tuple, first + i, loc))
                }
            };
        }
        let kind = self.frames[level].kind;
        let shown = match index {
            Some(i) => format!("%{name}#{i}"),
            None => format!("%{name}"),
        };
        let defined_outside = (0..level).any(|l| self.frames[l].values.contains_key(name));
        match kind {
            RegionKind::Function => Err(self.err_at(loc, ParseErrorKind::UndefinedOperand, format!("use of undefined value {shown}"))),
            RegionKind::Plain if defined_outside => match self.sink_constant(level, name, index, loc) {
                Some(c) => Ok(c),
                None => Err(self.err_at(loc, ParseErrorKind::UndefinedOperand,
                    format!("{shown} is defined outside this region: the computations of reduce, sort, scatter and the other called regions cannot capture values (only constants, which are copied in)"))),
            },
            RegionKind::Plain => Err(self.err_at(loc, ParseErrorKind::UndefinedOperand, format!("use of undefined value {shown}"))),
            RegionKind::LoopCond | RegionKind::LoopBody | RegionKind::Branch => {
                let key = (name.to_string(), index);
                if let Some(&k) = self.frames[level].capture_keys.get(&key) {
                    return Ok(self.frames[level].captures[k].inner);
                }
                if level == 0 || !defined_outside {
                    return Err(self.err_at(loc, ParseErrorKind::UndefinedOperand, format!("use of undefined value {shown}")));
                }
                let outer = self.resolve(level - 1, name, index, loc)?;
                let shape = self.frames[level - 1].instrs[outer.index()].shape.clone();
                let param = match self.frames[level].tuple_param {
                    Some(p) => p,
                    None => {
                        let attrs = Attrs { parameter_number: Some(0), ..Attrs::default() };
                        let p = self.add_at(level, Opcode::Parameter, Shape::Tuple(Vec::new()), vec![], attrs, loc);
                        self.frames[level].params.push(p);
                        self.frames[level].tuple_param = Some(p);
                        p
                    }
                };
                let f = &self.frames[level];
                let index_in_tuple = f.n_args + f.captures.len();
                let attrs = Attrs { tuple_index: Some(index_in_tuple as i64), ..Attrs::default() };
                let inner = self.add_at(level, Opcode::GetTupleElement, shape.clone(), vec![param], attrs, loc);
                let f = &mut self.frames[level];
                f.capture_keys.insert(key, f.captures.len());
                f.captures.push(Capture { outer, inner, shape });
                Ok(inner)
            }
        }
    }

    /// A constant defined in an enclosing region, copied into the called region at `level` that
    /// uses it, as XLA's MLIR-to-HLO export sinks constants into the regions that use them
    /// (MLIR lets `sort`, `reduce`, ... regions read values from above; HLO's called
    /// computations cannot). StableHLO's serializer hoists a comparator's constants out of
    /// it, so portable artifacts have them. `None` when the value is not a constant.
    fn sink_constant(
        &mut self,
        level: usize,
        name: &str,
        index: Option<usize>,
        loc: SourceLoc,
    ) -> Option<InstrId> {
        let outer = (0..level)
            .rev()
            .find(|&l| self.frames[l].values.contains_key(name))?;
        let ValDef::One(id) = *self.frames[outer].values.get(name)? else {
            return None;
        };
        if index.is_some_and(|i| i != 0) {
            return None;
        }
        let def = self.frames[outer].instrs.get(id.index())?;
        if def.opcode != Opcode::Constant {
            return None;
        }
        let (shape, attrs) = (def.shape.clone(), def.attrs.clone());
        let c = self.add_at(level, Opcode::Constant, shape, vec![], attrs, loc);
        self.frames[level]
            .values
            .insert(name.to_string(), ValDef::One(c));
        Some(c)
    }
}
