//! `bitcast-convert` that changes the element width: to a narrower type, the output's minor
//! index picks a part of the operand's element (least significant first); to a wider type,
//! the operand's minor dimension is joined into one element (XLA's rule).

use super::*;

impl Emitter<'_> {
    /// Whether a `bitcast-convert` changes the element width (and so the rank by one).
    pub(super) fn bitcast_resizes(ctx: &Ctx<'_>, instr: &Instruction) -> bool {
        let from = instr
            .operands
            .first()
            .and_then(|&o| ctx.comp.get(o))
            .and_then(|o| o.shape.element_type());
        match (from, instr.shape.element_type()) {
            (Some(a), Some(b)) => a.bit_width() != b.bit_width(),
            _ => false,
        }
    }

    /// The value of a width-changing `bitcast-convert` to `to` at `idx`.
    pub(super) fn bitcast_resize(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        idx: &[Ix],
        to: P,
    ) -> Result<Val, CodegenError> {
        let err = |e: String| unsupported(ctx.comp, instr, e);
        let x_id = Self::operand(ctx, instr, 0)?;
        let from = ctx.comp.get(x_id).and_then(|x| x.shape.element_type());
        let from = from.ok_or_else(|| err("tuple operand".into()))?;
        let r = if from.bit_width() > to.bit_width() {
            let (k, outer) = idx.split_last().ok_or_else(|| err("rank 0".into()))?;
            let x = self.emit1(ctx, x_id, outer)?;
            scalar::bitcast_part(&mut self.b, x, to, k.src())
        } else {
            let ratio = to.bit_width() / from.bit_width();
            let mut parts = Vec::with_capacity(ratio as usize);
            for k in 0..ratio {
                let mut at = idx.to_vec();
                at.push(Ix::C(k as u32));
                parts.push(self.emit1(ctx, x_id, &at)?);
            }
            scalar::bitcast_join(&mut self.b, &parts, to)
        };
        r.map_err(|e| err(e.to_string()))
    }
}
