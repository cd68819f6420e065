//! Scatter: one thread per output element applying every matching update in order
//! (deterministic).
// Every kernel file reads the shared scaffolding and its imports from `mod.rs`.
use super::*;

/// A scatter kernel for the root `scatter` (outputs 0..n).
pub fn scatter_kernel(site: KernelSite<'_, '_>) -> Result<EmittedKernel, CodegenError> {
    let KernelSite {
        req, comp, name, ..
    } = site;
    let instr = site.instr()?;
    let nops = instr.operands.len();
    if nops < 3 || nops % 2 == 0 {
        return Err(site.unsupported("scatter needs n operands, indices and n updates"));
    }
    let n = (nops - 1) / 2;
    let operands = instr.operands[..n].to_vec();
    let indices = instr.operands[n];
    let updates = instr.operands[n + 1..].to_vec();
    let shape_of = |id: InstrId| operand_dims(comp, instr, id);
    let odims = shape_of(operands[0])?;
    let idims = shape_of(indices)?;
    let udims = shape_of(updates[0])?;
    check_size(comp, instr, odims.iter().product())?;
    let dn = instr
        .attrs
        .scatter_dimension_numbers
        .clone()
        .ok_or_else(|| site.unsupported("scatter without dimension numbers"))?;
    let to_u = |v: &[i64]| -> Vec<usize> { v.iter().map(|&x| x.max(0) as usize).collect() };
    let window_dims = to_u(&dn.update_window_dims);
    let inserted = to_u(&dn.inserted_window_dims);
    let to_operand = to_u(&dn.scatter_dims_to_operand_dims);
    let ivd = dn.index_vector_dim.max(0) as usize;
    // Batching dimensions (HLO spec): operand dimension `input_batching_dims[k]` is addressed at
    // the update's position along index dimension `scatter_indices_batching_dims[k]`, with window
    // size 1, like an inserted window dimension.
    let in_batch = to_u(&dn.input_batching_dims);
    let idx_batch = to_u(&dn.scatter_indices_batching_dims);
    if in_batch.len() != idx_batch.len() || idx_batch.iter().any(|&d| d >= idims.len()) {
        return Err(site.unsupported("batching dimension counts or indices differ"));
    }
    let window_operand: Vec<usize> = (0..odims.len())
        .filter(|d| !inserted.contains(d) && !in_batch.contains(d))
        .collect();
    let mut wsize = vec![1u64; odims.len()];
    for (j, &d) in window_operand.iter().enumerate() {
        let wd = *window_dims
            .get(j)
            .ok_or_else(|| site.unsupported("update_window_dims mismatch"))?;
        wsize[d] = *udims
            .get(wd)
            .ok_or_else(|| site.unsupported("update_window_dims out of range"))?;
    }
    let scatter_dims: Vec<usize> = (0..udims.len())
        .filter(|d| !window_dims.contains(d))
        .collect();
    let sdims: Vec<u64> = scatter_dims.iter().map(|&d| udims[d]).collect();
    let total_s: u64 = sdims.iter().product();
    // Only checked: every operand is an array (the combiner reads the types from the values).
    elem_types(comp, instr, &operands, "bad operand")?;
    let comb = instr
        .attrs
        .to_apply
        .ok_or_else(|| site.unsupported("scatter without to_apply"))?;
    let total: u64 = odims.iter().product();
    let outs: Vec<usize> = (0..n).collect();
    let mut f = Frame::new(req, comp, name, &outs);
    let ctx = f.ctx(comp);
    let out_ptrs = f.outputs.clone();
    grid_stride(&mut f.e, false, total, |e, i| {
        let idx = e.delinearize(Ix::R(i), &odims);
        let mut cur = Vec::new();
        for &o in &operands {
            cur.push(e.emit1(&ctx, o, &idx)?);
        }
        let acc = e.fresh_copy(&cur)?;
        e.counted_loop(total_s, |e, s| {
            let sidx = e.delinearize(Ix::R(s), &sdims);
            let coords = with_zero_at(&sidx, idims.len(), ivd);
            let mut ok: Option<Reg> = None;
            let mut rel = Vec::with_capacity(odims.len());
            for (d, &od) in odims.iter().enumerate() {
                let start = match to_operand.iter().position(|&x| x == d) {
                    Some(k) => {
                        let mut c = coords.clone();
                        if ivd < c.len() {
                            c[ivd] = Ix::C(k as u32);
                        }
                        let v = e.emit1(&ctx, indices, &c)?;
                        scalar::to_index64(&mut e.b, v)
                            .map_err(|m| unsupported(comp, instr, m.to_string()))?
                    }
                    None => match in_batch.iter().position(|&x| x == d) {
                        Some(k) => {
                            let c = e.ix_reg(coords[idx_batch[k]]);
                            e.b.cvt(None, Type::U64, Type::U32, c.into())
                        }
                        None => e.b.mov(Type::B64, Src::I(0)),
                    },
                };
                let fits = e.b.setp(
                    CmpOp::Le,
                    Type::U64,
                    start.into(),
                    Src::I(od.saturating_sub(wsize[d]) as i64),
                );
                let fits = if wsize[d] > od {
                    e.b.setp(CmpOp::Lt, Type::U64, start.into(), Src::I(0))
                } else {
                    fits
                };
                let ir = e.ix_reg(idx[d]);
                let i64v = e.b.cvt(None, Type::U64, Type::U32, ir.into());
                let r = e.b.bin(O::Sub, &[], Type::S64, i64v.into(), start.into());
                let inw =
                    e.b.setp(CmpOp::Lt, Type::U64, r.into(), Src::I(wsize[d] as i64));
                let c = e.b.pand(fits, inw);
                ok = Some(e.b.pand_acc(ok, c));
                rel.push(e.b.cvt(None, Type::U32, Type::U64, r.into()));
            }
            let Some(ok) = ok else { return Ok(()) };
            e.when(ok, |e| {
                let mut u = vec![Ix::C(0); udims.len()];
                for (j, &d) in scatter_dims.iter().enumerate() {
                    u[d] = sidx[j];
                }
                for (j, &d) in window_operand.iter().enumerate() {
                    u[window_dims[j]] = Ix::R(rel[d]);
                }
                let mut args = acc.clone();
                for &up in &updates {
                    args.push(e.emit1(&ctx, up, &u)?);
                }
                let new = e.inline_scalar(comb, &args)?;
                e.update(&acc, &new)
            })
        })?;
        for (k, v) in acc.iter().enumerate() {
            store_at(e, out_ptrs[k], Ix::R(i), *v)?;
        }
        Ok(())
    })?;
    Ok(f.finish_1d(req, total, 0))
}
