//! Constants of 8-bit float type (`f8e4m3fn`, `f8e5m2`) as f32 constants and a `convert`, in the
//! module the artifact embeds and the thunks run.
//!
//! Runtimes before 2026-12-05 read no 8-bit float literal from the embedded module
//! (`LiteralProto.f8e4m3fns` / `f8e5m2s`: "constant of element type f8e4m3fn"), and they are in
//! the forward window until 2026-12-19. f8 arrays, f8 kernels and everything else an FP8 program
//! compiles to they load and run (checked on the forward check's older runtime, 45e7ae07), so
//! this rewrite is the one thing an FP8 artifact needs to be readable by them. It computes the
//! same values: each literal value is rounded to the f8 type here, so the f32 constant holds
//! exactly the f8 value and the `convert` is exact.
use std::borrow::Cow;

use hlo::PrimitiveType;
use hlo::{ArrayLiteral, Attrs, ConstantLiteral, HloModule, Instruction, LiteralValue, Opcode};

use crate::error::CompileError;
use crate::passes::emit::{retyped, Emit};
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};

/// The module with every f8 array constant as an f32 constant and a convert; borrowed when it
/// has none.
pub fn widened(module: &HloModule) -> Result<Cow<'_, HloModule>, CompileError> {
    let any = module
        .computations
        .iter()
        .any(|c| c.instructions.iter().any(|i| f8_of(i).is_some()));
    if !any {
        return Ok(Cow::Borrowed(module));
    }
    let mut m = module.clone();
    for_each_computation(&mut m, Scope::All, |_, comp| {
        if !comp.instructions.iter().any(|i| f8_of(i).is_some()) {
            return Ok(None);
        }
        let new = rebuild(comp, |r, _, old| {
            let (Some(ty), Some(ConstantLiteral::Array(lit))) = (f8_of(old), &old.attrs.literal)
            else {
                return r.keep(old).map(Some);
            };
            let values = lit
                .values
                .iter()
                .map(|v| LiteralValue::Float(ty.round_float(v.as_f64()).unwrap_or(f64::NAN)))
                .collect();
            let attrs = Attrs {
                literal: Some(ConstantLiteral::Array(ArrayLiteral { values })),
                ..old.attrs.clone()
            };
            let mut push = |i| r.push(i);
            let mut e = Emit::new(old, "f32.", &mut push);
            let wide = e.op(
                Opcode::Constant,
                retyped(&old.shape, PrimitiveType::F32),
                vec![],
                attrs,
            );
            e.next_name = Some(old.name.clone());
            Ok(Some(e.op(
                Opcode::Convert,
                old.shape.clone(),
                vec![wide],
                Attrs::default(),
            )))
        })?;
        Ok(Some(new))
    })?;
    Ok(Cow::Owned(m))
}

/// The f8 element type of an array constant; `None` for anything else.
fn f8_of(i: &Instruction) -> Option<PrimitiveType> {
    let ty = i.shape.element_type()?;
    let f8 = matches!(ty, PrimitiveType::F8E4M3FN | PrimitiveType::F8E5M2);
    (i.opcode == Opcode::Constant
        && f8
        && matches!(i.attrs.literal, Some(ConstantLiteral::Array(_))))
    .then_some(ty)
}
