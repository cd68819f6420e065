//! Instructions that read their operand at other indices (broadcast, reshape, transpose,
//! slices, reverse, dynamic-slice), and parameters: where an element comes from.
use hlo::Instruction;
use hlo::Opcode as H;
use ptx::{Opcode as O, StateSpace, Type};

use super::*;

impl Emitter<'_> {
    /// A parameter: loaded from its buffer, taken from the values given, or the caller's operand.
    pub(super) fn parameter(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        let err = |e: String| unsupported(ctx.comp, instr, e);
        let out_ty = elem(&instr.shape);
        let one = |v: Val| Ok(vec![v]);
        let n = instr.parameter_number().unwrap_or(-1);
        let n = usize::try_from(n).map_err(|_| err("bad parameter number".into()))?;
        match &ctx.params {
            ParamSrc::Buffers(ptrs) => {
                let base = *ptrs
                    .get(n)
                    .ok_or_else(|| err(format!("no buffer for parameter {n}")))?;
                let ty = out_ty.ok_or_else(|| err("tuple parameters are not supported".into()))?;
                let dims = dims_of(&instr.shape);
                let lin = self.linearize(idx, &dims);
                let addr = self.elem_addr(base, lin, ty);
                one(scalar::load(&mut self.b, StateSpace::Global, ty, addr)
                    .map_err(|e| err(e.to_string()))?)
            }
            ParamSrc::Values(vals) => vals
                .get(n)
                .cloned()
                .ok_or_else(|| err(format!("no value for parameter {n}"))),
            ParamSrc::Caller(parent, ops) => {
                let o = *ops
                    .get(n)
                    .ok_or_else(|| err(format!("no operand for parameter {n}")))?;
                self.emit(parent, o, idx)
            }
        }
    }

    /// An instruction that reads its operand at other indices (broadcast, reshape, transpose,
    /// slices, reverse): computes the operand's index for `idx` and emits the operand there.
    pub(super) fn index_mapped(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        let err = |e: String| unsupported(ctx.comp, instr, e);
        match instr.opcode {
            H::Broadcast => {
                let dims = instr.attrs.dimensions.clone().unwrap_or_default();
                let mut sub = Vec::with_capacity(dims.len());
                for d in dims {
                    let d = usize::try_from(d).map_err(|_| err("bad dimension".into()))?;
                    sub.push(
                        *idx.get(d)
                            .ok_or_else(|| err("dimension out of range".into()))?,
                    );
                }
                self.emit(ctx, Self::operand(ctx, instr, 0)?, &sub)
            }
            H::Reshape | H::Bitcast => {
                let o = Self::operand(ctx, instr, 0)?;
                let in_dims = dims_of(Self::shape_of(ctx, o)?);
                let out_dims = dims_of(&instr.shape);
                if in_dims == out_dims {
                    return self.emit(ctx, o, idx);
                }
                let lin = self.linearize(idx, &out_dims);
                let sub = self.delinearize(lin, &in_dims);
                self.emit(ctx, o, &sub)
            }
            H::Transpose => {
                let perm = instr.attrs.dimensions.clone().unwrap_or_default();
                let mut sub = vec![Ix::C(0); perm.len()];
                for (k, &p) in perm.iter().enumerate() {
                    let p = usize::try_from(p).map_err(|_| err("bad permutation".into()))?;
                    let slot = sub
                        .get_mut(p)
                        .ok_or_else(|| err("bad permutation".into()))?;
                    *slot = *idx.get(k).ok_or_else(|| err("rank mismatch".into()))?;
                }
                self.emit(ctx, Self::operand(ctx, instr, 0)?, &sub)
            }
            H::Slice => {
                let spec = instr.attrs.slice.clone().unwrap_or_default();
                let mut sub = Vec::with_capacity(spec.len());
                for (k, s) in spec.iter().enumerate() {
                    let i = *idx.get(k).ok_or_else(|| err("rank mismatch".into()))?;
                    let m = self.ix_mul(i, s.stride.max(1) as u64);
                    sub.push(self.ix_add(m, Ix::C(s.start.max(0) as u32)));
                }
                self.emit(ctx, Self::operand(ctx, instr, 0)?, &sub)
            }
            H::Reverse => {
                let dims = instr.attrs.dimensions.clone().unwrap_or_default();
                let shape = dims_of(&instr.shape);
                let mut sub = idx.to_vec();
                for d in dims {
                    let d = usize::try_from(d).map_err(|_| err("bad dimension".into()))?;
                    let n = *shape
                        .get(d)
                        .ok_or_else(|| err("dimension out of range".into()))?;
                    let i = *idx.get(d).ok_or_else(|| err("rank mismatch".into()))?;
                    sub[d] = match i {
                        Ix::C(c) => Ix::C((n as u32).wrapping_sub(1).wrapping_sub(c)),
                        Ix::R(r) => Ix::R(self.b.bin(
                            O::Sub,
                            &[],
                            Type::U32,
                            Src::I(n as i64 - 1),
                            r.into(),
                        )),
                    };
                }
                self.emit(ctx, Self::operand(ctx, instr, 0)?, &sub)
            }
            H::DynamicSlice => {
                let o = Self::operand(ctx, instr, 0)?;
                let in_dims = dims_of(Self::shape_of(ctx, o)?);
                let out_dims = dims_of(&instr.shape);
                let mut sub = Vec::with_capacity(in_dims.len());
                for (k, &dim) in in_dims.iter().enumerate() {
                    let s = Self::operand(ctx, instr, k + 1)?;
                    let max = dim.saturating_sub(out_dims.get(k).copied().unwrap_or(0));
                    let st = self.start_index(ctx, instr, s, max)?;
                    let i = *idx.get(k).ok_or_else(|| err("rank mismatch".into()))?;
                    sub.push(self.ix_add(i, st));
                }
                self.emit(ctx, o, &sub)
            }
            other => Err(err(format!(
                "{} does not map indices (an internal dispatch error)",
                other.name()
            ))),
        }
    }
}
