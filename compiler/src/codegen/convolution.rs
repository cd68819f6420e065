//! Convolution as a direct kernel: one thread per output element (the loop kernel's
//! grid-stride loop), which walks the window positions and, for each position that falls on a
//! real input element, the input features of its feature group, accumulating in `f32` (`f64` for
//! `f64` operands, the result type for integers) and rounding once at the end.
//!
//! Why direct and not implicit GEMM: it covers every case the evaluator covers (any
//! `dim_labels`, strides, negative padding, lhs and rhs dilation, reversal, feature and batch
//! groups) with one indexing scheme shared with the reference definition
//! ([`hlo_eval::ConvGeometry`], which also validates the attributes, so the compiler
//! refuses exactly what the evaluator refuses, with the same message). Padding and dilation holes
//! are skipped by a predicate per window position, never read, so every load is in bounds. The
//! fusion planner keeps convolution a kernel of its own (`Class::Standalone`); bias and
//! activation around it are ordinary loop fusions.
//!
//! The instruction is emitted elementally (`Emitter::convolution`, called from the elemental
//! emitter's dispatcher), so the loop kernel provides the launch, the output store and the
//! operand loads.
use hlo::{Computation, Instruction};
use hlo::{Opcode as H, PrimitiveType as P};
use hlo_eval::ConvGeometry;
use ptx::{CmpOp, Opcode as O, Type};

use super::builder::{Reg, Src};
use super::elemental::{dims_of, elem, instr_of, unsupported, Ctx, Emitter, Ix};
use super::scalar::{self, Val};
use super::CodegenError;

/// The accumulation type of a convolution producing `out` from `lhs` and `rhs` elements.
fn accumulator(out: P, lhs: P, rhs: P) -> Option<P> {
    if out == P::F64 || lhs == P::F64 || rhs == P::F64 {
        Some(P::F64)
    } else if out.is_float() {
        // f16, bf16 and f32 results accumulate in f32 (XLA's preferred_element_type rule).
        Some(P::F32)
    } else if out.is_pred() || lhs.is_float() || rhs.is_float() {
        None
    } else {
        Some(out)
    }
}

/// Index arithmetic and loop counters are 32-bit: refuse geometries whose positions or loop trip
/// counts could overflow them.
fn fits_i32(comp: &Computation, instr: &Instruction, g: &ConvGeometry) -> Result<(), CodegenError> {
    let taps = g
        .window_sizes()
        .iter()
        .fold(1u128, |n, &s| n.saturating_mul(s as u128));
    let macs = taps.saturating_mul(g.in_features_per_group as u128);
    if macs >= i32::MAX as u128 {
        return Err(unsupported(
            comp,
            instr,
            format!("{macs} products per output element, beyond 32-bit loop counters"),
        ));
    }
    for sd in &g.spatial {
        let w = &sd.window;
        let reach = (sd.out_size as i128) * i128::from(w.stride)
            + i128::from(w.size) * i128::from(w.rhs_dilation)
            + i128::from(w.pad_low).abs()
            + (sd.lhs_size as i128) * i128::from(w.lhs_dilation);
        if reach >= i128::from(i32::MAX) {
            return Err(unsupported(
                comp,
                instr,
                format!("window positions reach {reach}, beyond 32-bit index arithmetic"),
            ));
        }
    }
    Ok(())
}

impl<'m> Emitter<'m> {
    /// `ix / k` for a constant `k >= 1`.
    fn conv_div(&mut self, x: Ix, k: usize) -> Ix {
        match x {
            _ if k <= 1 => x,
            Ix::C(c) => Ix::C(c / k as u32),
            Ix::R(r) => Ix::R(
                self.b
                    .bin(O::Div, &[], Type::U32, r.into(), Src::I(k as i64)),
            ),
        }
    }

    /// The value of convolution `instr` at output index `idx`.
    pub fn convolution(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        let comp = ctx.comp;
        let err = |e: String| unsupported(comp, instr, e);
        let (lhs_id, rhs_id) = match instr.operands.as_slice() {
            [l, r] => (*l, *r),
            ops => return Err(err(format!("takes 2 operands, found {}", ops.len()))),
        };
        let (lhs, rhs) = (instr_of(comp, lhs_id)?, instr_of(comp, rhs_id)?);
        let usize_dims = |i: &Instruction| -> Vec<usize> {
            dims_of(&i.shape).iter().map(|&d| d as usize).collect()
        };
        let a = &instr.attrs;
        let dn = a
            .conv_dimension_numbers
            .as_ref()
            .ok_or_else(|| err("convolution needs dim_labels=".into()))?;
        let g = ConvGeometry::new(
            &usize_dims(lhs),
            &usize_dims(rhs),
            &usize_dims(instr),
            dn,
            a.window.as_ref().map(|w| w.dims.as_slice()),
            a.feature_group_count.unwrap_or(1),
            a.batch_group_count.unwrap_or(1),
        )
        .map_err(|e| err(e.to_string()))?;
        fits_i32(comp, instr, &g)?;
        let (out_ty, lt, rt) = match (elem(&instr.shape), elem(&lhs.shape), elem(&rhs.shape)) {
            (Some(o), Some(l), Some(r)) => (o, l, r),
            _ => return Err(err("tuple-shaped operand or result".into())),
        };
        let acc_ty = accumulator(out_ty, lt, rt).ok_or_else(|| {
            err(format!(
                "{lt} x {rt} -> {out_ty} convolution is not supported (floats, or integers into an integer result)"
            ))
        })?;
        let at = |d: usize| idx.get(d).copied().unwrap_or(Ix::C(0));
        let (ob, of) = (at(g.out_batch), at(g.out_feature));
        // Feature group of this output feature, and the input batch entry its batch group reads.
        let group = self.conv_div(of, g.out_features_per_group);
        let bgroup = self.conv_div(of, g.out_features_per_batch_group);
        let bgroup = self.ix_mul(bgroup, g.batch_per_group as u64);
        let in_batch = self.ix_add(bgroup, ob);
        let first_feature = self.ix_mul(group, g.in_features_per_group as u64);
        let zero = scalar::konst_num(&mut self.b, acc_ty, 0.0)?;
        let acc = self.fresh_copy(&[zero])?;
        let wdims: Vec<u64> = g.window_sizes().iter().map(|&s| s as u64).collect();
        let taps: u64 = wdims.iter().product();
        let rank = g.lhs_dims.len();
        self.counted_loop(taps, |e, k| {
            let widx = e.delinearize(Ix::R(k), &wdims);
            let mut ok: Option<Reg> = None;
            let mut lhs_idx = vec![Ix::C(0); rank];
            let mut rhs_idx = vec![Ix::C(0); rank];
            for (d, sd) in g.spatial.iter().enumerate() {
                let w = &sd.window;
                let s = e.ix_reg(at(sd.out_dim));
                let wi = e.ix_reg(widx.get(d).copied().unwrap_or(Ix::C(0)));
                let u = e.window_tap(s, wi, w);
                let ld = w.lhs_dilation.max(1);
                let ge = e.b.setp(CmpOp::Ge, Type::S32, u.into(), Src::I(0));
                let last = (sd.lhs_size as i64 - 1) * ld;
                let le = e.b.setp(CmpOp::Le, Type::S32, u.into(), Src::I(last));
                let in_range = e.b.pand(ge, le);
                let (c, pos) = e.undilate(u, ld, in_range);
                ok = Some(e.b.pand_acc(ok, c));
                if let Some(slot) = lhs_idx.get_mut(sd.lhs_dim) {
                    *slot = Ix::R(pos);
                }
                let kpos = if w.reversal {
                    let top = e.ix_reg(Ix::C((w.size.max(1) - 1) as u32));
                    Ix::R(e.b.bin(O::Sub, &[], Type::U32, top.into(), wi.into()))
                } else {
                    Ix::R(wi)
                };
                if let Some(slot) = rhs_idx.get_mut(sd.rhs_dim) {
                    *slot = kpos;
                }
            }
            if let Some(slot) = lhs_idx.get_mut(g.lhs_batch) {
                *slot = in_batch;
            }
            if let Some(slot) = rhs_idx.get_mut(g.rhs_out_feature) {
                *slot = of;
            }
            let features = |e: &mut Emitter<'m>| {
                let (mut li, mut ri) = (lhs_idx.clone(), rhs_idx.clone());
                e.counted_loop(g.in_features_per_group as u64, |e, ci| {
                    let c = e.ix_add(first_feature, Ix::R(ci));
                    if let Some(slot) = li.get_mut(g.lhs_feature) {
                        *slot = c;
                    }
                    if let Some(slot) = ri.get_mut(g.rhs_in_feature) {
                        *slot = Ix::R(ci);
                    }
                    let x = e.emit1(ctx, lhs_id, &li)?;
                    let y = e.emit1(ctx, rhs_id, &ri)?;
                    let conv = |e: &mut Emitter<'m>, v: Val| {
                        scalar::convert(&mut e.b, v, acc_ty).map_err(CodegenError::from)
                    };
                    let (x, y) = (conv(e, x)?, conv(e, y)?);
                    let cur = acc.first().copied().ok_or_else(|| {
                        CodegenError::Invalid("convolution accumulator missing".into())
                    })?;
                    let next = if acc_ty.is_float() {
                        let t = if acc_ty == P::F64 {
                            Type::F64
                        } else {
                            Type::F32
                        };
                        let r = e.b.fma(t, x.reg.into(), y.reg.into(), cur.reg.into());
                        Val {
                            ty: acc_ty,
                            reg: r,
                            im: None,
                        }
                    } else {
                        let p = scalar::binary(&mut e.b, H::Multiply, x, y)?;
                        scalar::binary(&mut e.b, H::Add, cur, p)?
                    };
                    e.update(&acc, &[next])
                })
            };
            match ok {
                Some(p) => e.when(p, features),
                None => features(e),
            }
        })?;
        let total = acc
            .first()
            .copied()
            .ok_or_else(|| CodegenError::Invalid("convolution accumulator missing".into()))?;
        let out = scalar::convert(&mut self.b, total, out_ty)?;
        Ok(vec![out])
    }
}
