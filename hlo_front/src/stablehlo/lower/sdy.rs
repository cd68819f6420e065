//! Shardy's ops, lowered as XLA's Shardy export writes them for its SPMD partitioner:
//! `sdy.sharding_constraint` is a `Sharding` custom call; `sdy.manual_computation` (a
//! `shard_map`) is, per operand, a `Sharding` custom call with the operand's global sharding and
//! an `SPMDFullToShardShape` to the local shape with the manual sharding, then a `call` of the
//! body (already one device's program), then per result a `Sharding` custom call with the manual
//! sharding and an `SPMDShardToFullShape` back to the global shape with the result's sharding.

use super::*;

impl<'a> Front<'a> {
    fn annotation(
        &mut self,
        target: &str,
        operand: InstrId,
        shape: Shape,
        sharding: HloSharding,
        loc: SourceLoc,
    ) -> InstrId {
        let attrs = Attrs {
            custom_call_target: Some(target.to_string()),
            sharding: Some(sharding),
            ..Attrs::default()
        };
        self.add(Opcode::CustomCall, shape, vec![operand], attrs, loc)
    }

    fn opaque<'o>(&self, op: &'o Op, key: &str) -> Result<&'o str> {
        match op.get(&[key]) {
            Some(Attr::Opaque(t)) => Ok(t),
            _ => Err(self.err_at(
                op.loc,
                ParseErrorKind::BadAttribute,
                format!("expected a Shardy `{key}` attribute"),
            )),
        }
    }

    pub(super) fn lower_sharding_constraint(&mut self, op: &Op) -> Result<Lowered> {
        self.count(op, 1)?;
        let text = self.opaque(op, "sharding")?;
        let sharding = self
            .sdy_sharding(text, &[])
            .map_err(|e| self.err_at(op.loc, ParseErrorKind::BadAttribute, e.to_string()))?;
        let shape = self.result_shape(op);
        let id = self.annotation("Sharding", op.operands[0], shape, sharding, op.loc);
        Ok(Lowered::One(id))
    }

    pub(super) fn lower_manual_computation(&mut self, op: &Op) -> Result<Lowered> {
        let bad = |s: &Self, m: String| s.err_at(op.loc, ParseErrorKind::BadAttribute, m);
        let manual = crate::sdy::parse_manual_axes(self.opaque(op, "manual_axes")?)
            .map_err(|m| bad(self, format!("manual_axes: {m}")))?;
        let per_value = |s: &Self, key: &str| -> Result<Vec<crate::sdy::TensorSharding>> {
            crate::sdy::parse_per_value(s.opaque(op, key)?, &s.meshes)
                .map_err(|m| bad(s, format!("{key}: {m}")))
        };
        let ins = per_value(self, "in_shardings")?;
        let outs = per_value(self, "out_shardings")?;
        let body = self.region_at(op, 0)?.clone();
        if ins.len() != op.operands.len() || outs.len() != op.result_types.len() {
            return Err(bad(
                self,
                format!(
                    "{} in_shardings for {} operands, {} out_shardings for {} results",
                    ins.len(),
                    op.operands.len(),
                    outs.len(),
                    op.result_types.len()
                ),
            ));
        }
        if body.arg_shapes.len() != op.operands.len() {
            return Err(bad(
                self,
                format!(
                    "the body takes {} arguments for {} operands",
                    body.arg_shapes.len(),
                    op.operands.len()
                ),
            ));
        }
        let convert = |s: &Self, t: &crate::sdy::TensorSharding, axes: &[String]| {
            crate::sdy::to_hlo_sharding(t, axes).map_err(|e| bad(s, e.to_string()))
        };
        let mut locals = Vec::new();
        for (i, (&operand, t)) in op.operands.iter().zip(&ins).enumerate() {
            let global = self.shape_of(operand).clone();
            let full = convert(self, t, &[])?;
            let shard = convert(self, t, &manual)?;
            let s = self.annotation("Sharding", operand, global, full, op.loc);
            let local = body.arg_shapes[i].clone();
            locals.push(self.annotation("SPMDFullToShardShape", s, local, shard, op.loc));
        }
        let root_shape = self
            .comps
            .get(body.comp.index())
            .and_then(Option::as_ref)
            .and_then(|c| c.get(c.root).map(|r| r.shape.clone()))
            .ok_or_else(|| bad(self, "the body is empty".into()))?;
        let attrs = Attrs {
            to_apply: Some(body.comp),
            ..Attrs::default()
        };
        let call = self.add(Opcode::Call, root_shape.clone(), locals, attrs, op.loc);
        let n = op.result_types.len();
        let mut fulls = Vec::new();
        for (j, t) in outs.iter().enumerate() {
            let (value, local) = if n == 1 {
                (call, root_shape.clone())
            } else {
                let shape = root_shape
                    .tuple_shapes()
                    .and_then(|e| e.get(j))
                    .cloned()
                    .ok_or_else(|| bad(self, format!("the body has no result {j}")))?;
                let attrs = Attrs {
                    tuple_index: Some(j as i64),
                    ..Attrs::default()
                };
                let gte = self.add(
                    Opcode::GetTupleElement,
                    shape.clone(),
                    vec![call],
                    attrs,
                    op.loc,
                );
                (gte, shape)
            };
            let shard = convert(self, t, &manual)?;
            let full = convert(self, t, &[])?;
            let m = self.annotation("Sharding", value, local, shard, op.loc);
            let global = op.result_types[j].clone();
            fulls.push(self.annotation("SPMDShardToFullShape", m, global, full, op.loc));
        }
        Ok(match fulls.as_slice() {
            [one] => Lowered::One(*one),
            _ => {
                let t = self.tuple(fulls, op.loc);
                Lowered::Tuple(t, n)
            }
        })
    }
}
