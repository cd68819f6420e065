//! Select-and-scatter (the max-pool gradient): one thread per operand element, visiting every
//! window that covers it.
// Every kernel file reads the shared scaffolding and its imports from `mod.rs`.
use super::*;

/// A `select-and-scatter` kernel for the root instruction (the max-pool gradient).
///
/// Gather form, one thread per operand element, so no atomics and a deterministic order: the
/// thread visits every window that covers its element (at most `ceil(size/stride)` per
/// dimension), in increasing window order as XLA's evaluator does, repeats the window's
/// selection (the first element in row-major order, replaced whenever `select(current,
/// candidate)` is false; padding positions are never selected), and when the selection is its
/// own element combines that window's `source` value into its accumulator, which starts at
/// `init_value`. Overlapping windows are therefore exact.
pub fn select_and_scatter_kernel(site: KernelSite<'_, '_>) -> Result<EmittedKernel, CodegenError> {
    let KernelSite {
        req, comp, name, ..
    } = site;
    let instr = site.instr()?;
    let [operand, source, init] = instr.operands.as_slice() else {
        return Err(site.unsupported("select-and-scatter takes operand, source and init_value"));
    };
    let (operand, source, init) = (*operand, *source, *init);
    let shape_of = |id: InstrId| operand_dims(comp, instr, id);
    let odims = shape_of(operand)?;
    let sdims = shape_of(source)?;
    let window = instr
        .attrs
        .window
        .clone()
        .ok_or_else(|| site.unsupported("select-and-scatter without window"))?;
    if window.dims.len() != odims.len() || sdims.len() != odims.len() {
        return Err(site.unsupported("window, source and operand ranks differ"));
    }
    if window
        .dims
        .iter()
        .any(|w| w.lhs_dilation > 1 || w.rhs_dilation > 1 || w.size < 1 || w.stride < 1)
    {
        return Err(site
            .unsupported("select-and-scatter windows need size and stride >= 1 and no dilation"));
    }
    let select = instr
        .attrs
        .select
        .ok_or_else(|| site.unsupported("select-and-scatter without select"))?;
    let scatter = instr
        .attrs
        .scatter
        .ok_or_else(|| site.unsupported("select-and-scatter without scatter"))?;
    let total: u64 = odims.iter().product();
    check_size(comp, instr, total)?;
    let sizes: Vec<u64> = window.dims.iter().map(|w| w.size as u64).collect();
    let wtotal: u64 = sizes.iter().product();
    // Windows covering one position along a dimension.
    let cover: Vec<u64> = window
        .dims
        .iter()
        .map(|w| (w.size as u64).div_ceil(w.stride as u64))
        .collect();
    let ctotal: u64 = cover.iter().product();
    let mut f = Frame::new(req, comp, name, &[0]);
    let ctx = f.ctx(comp);
    let out = f.outputs.clone();
    grid_stride(&mut f.e, false, total, |e, i| {
        let idx = e.delinearize(Ix::R(i), &odims);
        let init_v = e.emit1(&ctx, init, &[])?;
        let acc = e.fresh_copy(&[init_v])?;
        e.counted_loop(ctotal, |e, t| {
            let tidx = e.delinearize(Ix::R(t), &cover);
            let mut ok: Option<Reg> = None;
            let mut win = Vec::with_capacity(odims.len());
            let mut rel = Vec::with_capacity(odims.len());
            for (d, w) in window.dims.iter().enumerate() {
                // w_d = (o + pad_low) / stride - (cover - 1 - t): the covering windows in
                // increasing order; rel = o + pad_low - w_d * stride is the position inside it.
                let o = e.ix_reg(idx[d]);
                let p = e.b.bin(O::Add, &[], Type::S32, o.into(), Src::I(w.pad_low));
                let q = e.b.bin(O::Div, &[], Type::S32, p.into(), Src::I(w.stride));
                let tt = e.ix_reg(tidx[d]);
                let back = e.b.bin(
                    O::Sub,
                    &[],
                    Type::S32,
                    Src::I(cover[d] as i64 - 1),
                    tt.into(),
                );
                let wd = e.b.bin(O::Sub, &[], Type::S32, q.into(), back.into());
                let ws = e.b.mul_lo(Type::S32, wd.into(), Src::I(w.stride));
                let r = e.b.bin(O::Sub, &[], Type::S32, p.into(), ws.into());
                let c1 = e.b.setp(CmpOp::Ge, Type::S32, wd.into(), Src::I(0));
                let c2 =
                    e.b.setp(CmpOp::Lt, Type::S32, wd.into(), Src::I(sdims[d] as i64));
                let c3 = e.b.setp(CmpOp::Ge, Type::S32, r.into(), Src::I(0));
                let c4 = e.b.setp(CmpOp::Lt, Type::S32, r.into(), Src::I(w.size));
                let c = e.b.pand(c1, c2);
                let c = e.b.pand(c, c3);
                let c = e.b.pand(c, c4);
                ok = Some(e.b.pand_acc(ok, c));
                win.push(Ix::R(wd));
                rel.push(Ix::R(r));
            }
            let Some(ok) = ok else {
                return Err(site.unsupported("select-and-scatter of rank 0"));
            };
            e.when(ok, |e| {
                let have = e.b.mov(Type::B32, Src::I(0));
                let chosen = e.b.mov(Type::B32, Src::I(0));
                let sel = e.fresh_copy(&[init_v])?;
                e.counted_loop(wtotal, |e, j| {
                    let jdx = e.delinearize(Ix::R(j), &sizes);
                    let mut inb: Option<Reg> = None;
                    let mut pos = Vec::with_capacity(odims.len());
                    for (d, w) in window.dims.iter().enumerate() {
                        let wd = e.ix_reg(win[d]);
                        let jd = e.ix_reg(jdx[d]);
                        let a = e.b.mul_lo(Type::S32, wd.into(), Src::I(w.stride));
                        let a = e.b.bin(O::Add, &[], Type::S32, a.into(), jd.into());
                        let a = e.b.bin(O::Sub, &[], Type::S32, a.into(), Src::I(w.pad_low));
                        let ge = e.b.setp(CmpOp::Ge, Type::S32, a.into(), Src::I(0));
                        let lt =
                            e.b.setp(CmpOp::Lt, Type::S32, a.into(), Src::I(odims[d] as i64));
                        let c = e.b.pand(ge, lt);
                        inb = Some(e.b.pand_acc(inb, c));
                        pos.push(Ix::R(a));
                    }
                    let Some(inb) = inb else { return Ok(()) };
                    e.when(inb, |e| {
                        let v = e.emit1(&ctx, operand, &pos)?;
                        let keep = e.inline_scalar(select, &[sel[0], v])?;
                        let [keep] = keep.as_slice() else {
                            return Err(unsupported(comp, instr, "select must return a pred"));
                        };
                        let first = e.b.setp(CmpOp::Eq, Type::U32, have.into(), Src::I(0));
                        let replace = e.b.pnot(keep.reg);
                        let take = e.b.por(first, replace);
                        let pick = Val {
                            ty: P::Pred,
                            reg: take,
                            im: None,
                        };
                        let nv = scalar::select(&mut e.b, pick, v, sel[0])
                            .map_err(|m| unsupported(comp, instr, m.to_string()))?;
                        e.update(&sel, &[nv])?;
                        let nj = e.b.selp(Type::U32, j.into(), chosen.into(), take);
                        e.b.mov_to(chosen, Type::B32, nj.into());
                        e.b.mov_to(have, Type::B32, Src::I(1));
                        Ok(())
                    })
                })?;
                let mine = e.linearize(&rel, &sizes);
                let mine = e.ix_reg(mine);
                let hit = e.b.setp(CmpOp::Eq, Type::U32, chosen.into(), mine.into());
                let any = e.b.setp(CmpOp::Ne, Type::U32, have.into(), Src::I(0));
                let hit = e.b.pand(hit, any);
                e.when(hit, |e| {
                    let sv = e.emit1(&ctx, source, &win)?;
                    let new = e.inline_scalar(scatter, &[acc[0], sv])?;
                    e.update(&acc, &new)
                })
            })
        })?;
        store_at(e, out[0], Ix::R(i), acc[0])
    })?;
    Ok(f.finish_1d(req, total, 0))
}
