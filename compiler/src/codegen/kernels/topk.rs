//! Top-k: one thread per operand element computes its rank in its row.
// Every kernel file reads the shared scaffolding and its imports from `mod.rs`.
use super::*;

/// A `topk` kernel for the root `topk` (outputs 0: values, 1: `s32` indices).
///
/// One thread per operand element computes its rank in its row: the number of elements that
/// come before it (greater, or smaller for `largest=false`, in the total order, or equal at a
/// lower index: ties keep index order, as XLA's sort-based top-k). Ranks are a permutation of the
/// row, so each of the `k` output slots is written by exactly one thread and the result is
/// deterministic. The work is `n` comparisons per element: rows are short in practice
/// (vocabularies of experts, beams), and the kernel needs no shared memory or synchronisation.
pub fn topk_kernel(site: KernelSite<'_, '_>) -> Result<EmittedKernel, CodegenError> {
    let KernelSite {
        req, comp, name, ..
    } = site;
    let instr = site.instr()?;
    let [x] = instr.operands.as_slice() else {
        return Err(site.unsupported("topk takes one operand"));
    };
    let x = *x;
    let dims = operand_dims(comp, instr, x)?;
    let Some((&n, _)) = dims.split_last() else {
        return Err(site.unsupported("topk needs an operand of rank 1 or more"));
    };
    let k = instr
        .attrs
        .k
        .ok_or_else(|| site.unsupported("topk without k"))?;
    let k = u64::try_from(k).map_err(|_| site.unsupported("k is negative"))?;
    if k > n {
        return Err(site.unsupported("k exceeds the last dimension"));
    }
    let largest = instr.attrs.largest.unwrap_or(true);
    let total: u64 = dims.iter().product();
    check_size(comp, instr, total)?;
    let rank = dims.len();
    let mut f = Frame::new(req, comp, name, &[0, 1]);
    let ctx = f.ctx(comp);
    let out_ptrs = f.outputs.clone();
    let before = if largest {
        hlo::ComparisonDirection::Gt
    } else {
        hlo::ComparisonDirection::Lt
    };
    let total_order = Some(hlo::ComparisonType::TotalOrder);
    grid_stride(&mut f.e, false, total, |e, i| {
        let idx = e.delinearize(Ix::R(i), &dims);
        let me = e.emit1(&ctx, x, &idx)?;
        let pos = e.ix_reg(idx[rank - 1]);
        let count = e.b.mov(Type::B32, Src::I(0));
        e.counted_loop(n, |e, j| {
            let mut other = idx.clone();
            other[rank - 1] = Ix::R(j);
            let y = e.emit1(&ctx, x, &other)?;
            let ahead = scalar::compare(&mut e.b, before, total_order, y, me)
                .map_err(|m| unsupported(comp, instr, m.to_string()))?;
            let same = scalar::compare(&mut e.b, hlo::ComparisonDirection::Eq, total_order, y, me)
                .map_err(|m| unsupported(comp, instr, m.to_string()))?;
            let lower = e.b.setp(CmpOp::Lt, Type::U32, j.into(), pos.into());
            let tie = e.b.pand(same.reg, lower);
            let first = e.b.por(ahead.reg, tie);
            let inc = e.b.selp(Type::U32, Src::I(1), Src::I(0), first);
            e.b.add_u32_to(count, count.into(), inc.into());
            Ok(())
        })?;
        let kept =
            e.b.setp(CmpOp::Lt, Type::U32, count.into(), Src::I(k as i64));
        e.when(kept, |e| {
            // Output slot: the row's first slot plus the rank.
            let row = e.b.bin(O::Sub, &[], Type::U32, i.into(), pos.into());
            let row =
                e.b.bin(O::Div, &[], Type::U32, row.into(), Src::I(n as i64));
            let slot = e.b.mad_lo_u32(row.into(), Src::I(k as i64), count.into());
            store_at(e, out_ptrs[0], Ix::R(slot), me)?;
            let at = Val {
                ty: P::S32,
                reg: pos,
                im: None,
            };
            store_at(e, out_ptrs[1], Ix::R(slot), at)
        })
    })?;
    Ok(f.finish_1d(req, total, 0))
}
