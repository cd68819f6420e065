//! Shardings in StableHLO: `sdy.mesh`, `mhlo.sharding = "{...}"` (GSPMD text) and
//! `sdy.sharding = #sdy.sharding<...>` on function arguments, results and ops, and the pretty
//! forms of `sdy.sharding_constraint` and `sdy.manual_computation`. Each becomes the
//! [`HloSharding`] of the instruction XLA's StableHLO-to-HLO conversion puts it on.

use super::*;
use crate::sdy;

impl<'a> Front<'a> {
    /// After `sdy.mesh`: `@name = <["a"=2, ...]>` and an optional dictionary.
    pub(super) fn mesh(&mut self, start: usize) -> Result<()> {
        self.c.ws();
        let Some(name) = self.c.symbol()? else {
            return Err(self.c.expected("a mesh name '@...'"));
        };
        self.c.expect(b'=')?;
        let body = self.c.skip_balanced()?;
        if self.c.peek() == Some(b'{') {
            self.c.dict()?;
        }
        self.c.opt_loc()?;
        let mesh = sdy::parse_mesh(body).map_err(|m| {
            ParseError::new(
                self.c.loc_at(start),
                ParseErrorKind::BadAttribute,
                format!("sdy.mesh @{name}: {m}"),
            )
        })?;
        self.meshes.push((name, mesh));
        Ok(())
    }

    /// The sharding an attribute dictionary gives a value: `mhlo.sharding` (GSPMD text) or
    /// `sdy.sharding` (`#sdy.sharding<...>`, or per value for an op).
    pub(super) fn sharding_of(
        &self,
        attrs: &[(String, Attr)],
        loc: SourceLoc,
    ) -> Result<Option<HloSharding>> {
        let bad = |m: String| self.err_at(loc, ParseErrorKind::BadAttribute, m);
        for (k, v) in attrs {
            match (k.as_str(), v) {
                ("mhlo.sharding", Attr::Str(text)) => {
                    let s = hlo_text::parse_sharding(text)
                        .map_err(|e| bad(format!("mhlo.sharding \"{text}\": {}", e.message)))?;
                    return Ok(Some(s));
                }
                ("sdy.sharding", Attr::Opaque(text)) => {
                    // Over a mesh of one device a sharding splits nothing (and XLA reads a
                    // tiling of one device as replicated): no sharding.
                    if self
                        .meshes
                        .iter()
                        .all(|(_, m)| m.devices() == 1 && m.device_ids.is_empty())
                    {
                        return Ok(None);
                    }
                    return self
                        .sdy_sharding(text, &[])
                        .map(Some)
                        .map_err(|e| bad(e.to_string()));
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// A Shardy sharding (one, or one per value: a tuple sharding) as an HLO sharding.
    pub(crate) fn sdy_sharding(
        &self,
        text: &str,
        manual_axes: &[String],
    ) -> std::result::Result<HloSharding, SdyShardingError> {
        let convert = |t: &sdy::TensorSharding| sdy::to_hlo_sharding(t, manual_axes);
        let wrap = |cause: sdy::SdyError| SdyShardingError {
            text: text.to_owned(),
            cause,
        };
        if text.starts_with("#sdy.sharding_per_value") {
            let values = sdy::parse_per_value(text, &self.meshes).map_err(wrap)?;
            let mut elems: Vec<HloSharding> = values
                .iter()
                .map(convert)
                .collect::<std::result::Result<_, _>>()
                .map_err(wrap)?;
            return Ok(if elems.len() == 1 {
                elems.remove(0)
            } else {
                ShardingKind::Tuple(elems).into()
            });
        }
        let t = sdy::parse_tensor_sharding(text, &self.meshes).map_err(wrap)?;
        convert(&t).map_err(wrap)
    }

    /// Puts the function's argument and result shardings on its parameters and root, as XLA's
    /// conversion does (several results: a tuple sharding, unannotated elements replicated).
    /// A root that already carries another sharding, or is a parameter, gets a `copy` to hold
    /// the result's.
    pub(super) fn apply_func_shardings(
        &mut self,
        id: ComputationId,
        args: Vec<Option<HloSharding>>,
        results: Vec<Option<HloSharding>>,
    ) {
        let Some(Some(comp)) = self.comps.get_mut(id.index()) else {
            return;
        };
        for (i, s) in args.into_iter().enumerate() {
            if let (Some(s), Some(&p)) = (s, comp.params.get(i)) {
                comp.instructions[p.index()].attrs.sharding = Some(s);
            }
        }
        if results.iter().all(Option::is_none) {
            return;
        }
        let sharding = match results.as_slice() {
            [one] => one.clone().unwrap_or_else(HloSharding::replicated),
            many => ShardingKind::Tuple(
                many.iter()
                    .map(|s| s.clone().unwrap_or_else(HloSharding::replicated))
                    .collect(),
            )
            .into(),
        };
        let root = comp.root;
        let old = &comp.instructions[root.index()];
        let taken = old.opcode == Opcode::Parameter
            || old.attrs.sharding.as_ref().is_some_and(|s| *s != sharding);
        if taken {
            let copy = Instruction {
                name: format!("{}.result", old.name),
                opcode: Opcode::Copy,
                shape: old.shape.clone(),
                operands: vec![root],
                attrs: Attrs::default(),
                metadata: None,
                loc: old.loc,
            };
            comp.instructions.push(copy);
            comp.root = InstrId(u32::try_from(comp.instructions.len() - 1).unwrap_or(u32::MAX));
        }
        let r = comp.root.index();
        comp.instructions[r].attrs.sharding = Some(sharding);
    }

    /// Puts an op's sharding on the instruction it became.
    pub(super) fn set_sharding(&mut self, lowered: &Lowered, sharding: HloSharding) {
        let id = match lowered {
            Lowered::One(id) | Lowered::Tuple(id, _) => *id,
        };
        if let Some(i) = self.top().instrs.get_mut(id.index()) {
            i.attrs.sharding = Some(sharding);
        }
    }

    /// `sdy.sharding_constraint %x <@mesh, [...]> {attrs} : type`.
    pub(super) fn pretty_sharding_constraint(&mut self, op: &mut Op) -> Result<()> {
        op.operands.push(self.operand()?);
        let s = self.c.skip_balanced()?;
        op.attrs
            .push(("sharding".into(), Attr::Opaque(s.to_string())));
        if self.c.peek() == Some(b'{') {
            let d = self.c.dict()?;
            op.attrs.extend(d);
        }
        self.c.expect(b':')?;
        op.result_types = self.type_sig(op)?.1;
        Ok(())
    }

    /// `sdy.manual_computation(%a, ...) in_shardings=[...] out_shardings=[...]
    /// manual_axes={"x"} (%b: T, ...) { body } : (A, ...) -> R`.
    pub(super) fn pretty_manual_computation(&mut self, op: &mut Op) -> Result<()> {
        self.operand_list_paren(op)?;
        for key in ["in_shardings", "out_shardings", "manual_axes"] {
            self.c.expect_kw(key)?;
            self.c.expect(b'=')?;
            let text = self.c.skip_balanced()?;
            op.attrs.push((key.into(), Attr::Opaque(text.to_string())));
        }
        self.c.expect(b'(')?;
        let mut args = Vec::new();
        if !self.c.eat(b')') {
            loop {
                let aloc = self.c.loc();
                let Some(name) = self.c.value_name()? else {
                    return Err(self.c.expected("a block argument '%name: type'"));
                };
                self.c.expect(b':')?;
                let ty = self.c.ty()?;
                self.c.opt_loc()?;
                args.push((name.to_string(), ty, aloc));
                if self.c.eat(b')') {
                    break;
                }
                self.c.expect(b',')?;
            }
        }
        let name = self.op_name.clone();
        let body = self.region(RegionKind::Plain, Some(args))?;
        self.op_name = name;
        op.regions.push(body);
        if self.c.peek() == Some(b'{') {
            let d = self.c.dict()?;
            op.attrs.extend(d);
        }
        self.c.expect(b':')?;
        op.result_types = self.type_sig(op)?.1;
        Ok(())
    }
}

/// A Shardy sharding attribute that does not parse or convert: its text and why. The front end
/// reports it as a [`ParseErrorKind::BadAttribute`] at the attribute.
#[derive(Debug, thiserror::Error)]
#[error("sdy sharding {text}: {cause}")]
pub(crate) struct SdyShardingError {
    text: String,
    cause: sdy::SdyError,
}
