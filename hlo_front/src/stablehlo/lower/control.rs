//! Control flow: `stablehlo.while` (condition and body over the loop state) and
//! `stablehlo.if` / `stablehlo.case` (branches as computations).
use super::*;

impl Front<'_> {
    /// `while`: one tuple of (iteration values, captured values) through condition and body.
    pub(super) fn lower_while(&mut self, op: &Op) -> Result<Lowered> {
        let cond = self.region_at(op, 0)?.clone();
        let body = self.region_at(op, 1)?.clone();
        let n = op.operands.len();
        if cond.arg_shapes.len() != n || body.arg_shapes.len() != n {
            return Err(self.err_at(
                op.loc,
                ParseErrorKind::Structure,
                format!(
                    "while has {n} operands; its regions take {} and {}",
                    cond.arg_shapes.len(),
                    body.arg_shapes.len()
                ),
            ));
        }
        // Captured values of both regions, in first-use order.
        let mut all: Vec<(InstrId, Shape)> = Vec::new();
        for c in cond.captures.iter().chain(&body.captures) {
            if !all.iter().any(|(o, _)| *o == c.outer) {
                all.push((c.outer, c.shape.clone()));
            }
        }
        let mut state: Vec<Shape> = op
            .operands
            .iter()
            .map(|&o| self.shape_of(o).clone())
            .collect();
        state.extend(all.iter().map(|(_, s)| s.clone()));
        let state = Shape::Tuple(state);
        for r in [&cond, &body] {
            let is_body = r.comp == body.comp;
            let Some(p) = r.tuple_param else {
                return Err(self.err_at(
                    r.loc,
                    ParseErrorKind::Structure,
                    "loop region without its parameter",
                ));
            };
            let Some(comp) = self.comp_mut(r.comp) else {
                continue;
            };
            comp.instructions[p.index()].shape = state.clone();
            for c in &r.captures {
                let pos = all.iter().position(|(o, _)| *o == c.outer).unwrap_or(0);
                comp.instructions[c.inner.index()].attrs.tuple_index = Some((n + pos) as i64);
            }
            if is_body {
                // The body hands captured values on unchanged.
                let mut extra = Vec::new();
                for (pos, (outer, shape)) in all.iter().enumerate() {
                    let existing = r
                        .captures
                        .iter()
                        .find(|c| c.outer == *outer)
                        .map(|c| c.inner);
                    let id = match existing {
                        Some(id) => id,
                        None => {
                            let id = InstrId(comp.instructions.len() as u32);
                            comp.instructions.push(Instruction {
                                name: format!(
                                    "get-tuple-element.capture.{pos}.{}",
                                    comp.instructions.len()
                                ),
                                opcode: Opcode::GetTupleElement,
                                shape: shape.clone(),
                                operands: vec![p],
                                attrs: Attrs {
                                    tuple_index: Some((n + pos) as i64),
                                    ..Attrs::default()
                                },
                                metadata: None,
                                loc: r.loc,
                            });
                            id
                        }
                    };
                    extra.push(id);
                }
                let root = comp.root;
                let ri = &mut comp.instructions[root.index()];
                if ri.opcode == Opcode::Tuple {
                    ri.operands.extend(extra);
                    ri.shape = state.clone();
                }
            }
        }
        let mut init = op.operands.clone();
        init.extend(all.iter().map(|(o, _)| *o));
        let t = self.tuple(init, op.loc);
        let a = Attrs {
            condition: Some(cond.comp),
            body: Some(body.comp),
            ..Attrs::default()
        };
        let id = self.add(Opcode::While, state, vec![t], a, op.loc);
        Ok(Lowered::Tuple(id, n))
    }

    /// `if` / `case`: each branch gets its captured values as its operand.
    pub(super) fn lower_branches(&mut self, s: &str, op: &Op) -> Result<Lowered> {
        self.count(op, 1)?;
        let mut operands = vec![self.operand_at(op, 0)?];
        let mut comps = Vec::new();
        for r in &op.regions {
            let operand = match r.captures.as_slice() {
                [one] => one.outer,
                many => {
                    let elems = many.iter().map(|c| c.outer).collect();
                    self.tuple(elems, op.loc)
                }
            };
            operands.push(operand);
            comps.push(r.comp);
        }
        let mut a = Attrs::default();
        if s == "if" {
            let [t, f] = comps.as_slice() else {
                return Err(self.err_at(
                    op.loc,
                    ParseErrorKind::Structure,
                    format!("if needs 2 regions, found {}", comps.len()),
                ));
            };
            a.true_computation = Some(*t);
            a.false_computation = Some(*f);
        } else {
            if comps.is_empty() {
                return Err(self.err_at(
                    op.loc,
                    ParseErrorKind::Structure,
                    "case needs at least one branch",
                ));
            }
            a.branch_computations = Some(comps);
        }
        Ok(self.emit(op, Opcode::Conditional, operands, a))
    }
}
