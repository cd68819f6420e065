//! Sort: one block per row, odd-even transposition sort in the output buffers (stable).
// Every kernel file reads the shared scaffolding and its imports from `mod.rs`.
use super::*;

/// A sort kernel for the root `sort` (outputs 0..n are its operands' sorted copies).
pub fn sort_kernel(site: KernelSite<'_, '_>) -> Result<EmittedKernel, CodegenError> {
    let KernelSite {
        req, comp, name, ..
    } = site;
    let instr = site.instr()?;
    let ops = instr.operands.clone();
    let first = comp
        .get(
            *ops.first()
                .ok_or_else(|| site.unsupported("sort without operands"))?,
        )
        .ok_or_else(|| site.unsupported("bad operand"))?;
    let dims = dims_of(&first.shape);
    check_size(comp, instr, dims.iter().product())?;
    let d = instr
        .attrs
        .dimensions
        .as_ref()
        .and_then(|v| v.first().copied())
        .unwrap_or(dims.len() as i64 - 1)
        .max(0) as usize;
    let n_sort = *dims
        .get(d)
        .ok_or_else(|| site.unsupported("sort dimension out of range"))?;
    let row_dims: Vec<u64> = dims
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != d)
        .map(|(_, &x)| x)
        .collect();
    let rows: u64 = row_dims.iter().product();
    let stride: u64 = dims[d + 1..].iter().product();
    let types = elem_types(comp, instr, &ops, "bad operand")?;
    let cmp_fn = instr
        .attrs
        .to_apply
        .ok_or_else(|| site.unsupported("sort without comparator"))?;
    let block = block_for(
        req,
        (n_sort
            .div_ceil(2)
            .next_power_of_two()
            .clamp(32, u64::from(BLOCK))) as u32,
    );
    let outs: Vec<usize> = (0..ops.len()).collect();
    let mut f = Frame::new(req, comp, name, &outs);
    let ctx = f.ctx(comp);
    let out_ptrs = f.outputs.clone();
    let tid = f.e.b.special(SpecialReg::Tid(Dim::X));
    // Rows that fit are sorted in shared memory (8-byte slots per element and operand): the
    // row is read once and written once. Longer rows are sorted in place in the outputs.
    let smem_bytes = n_sort * types.len() as u64 * 8;
    let use_smem = smem_bytes > 0 && smem_bytes <= 32 * 1024;
    let smem = if use_smem {
        Some(f.e.b.symbol_addr(SHARED_NAME))
    } else {
        None
    };
    // Address of element `j` of operand `k` in shared memory.
    let slot = |e: &mut Emitter<'_>, base: Reg, k: usize, j: Reg| -> Reg {
        let off = e.b.mul_wide_u32(j.into(), Src::I(8));
        let a = e.b.bin(O::Add, &[], Type::S64, base.into(), off.into());
        e.b.bin(
            O::Add,
            &[],
            Type::S64,
            a.into(),
            Src::I((k as u64 * n_sort * 8) as i64),
        )
    };
    let load_el =
        |e: &mut Emitter<'_>, k: usize, j: Reg, lin: Ix, ty: P| -> Result<Val, CodegenError> {
            match smem {
                Some(base) => {
                    let a = slot(e, base, k, j);
                    scalar::load(&mut e.b, StateSpace::Shared, ty, a).map_err(CodegenError::from)
                }
                None => load_at(e, out_ptrs[k], lin, ty),
            }
        };
    let store_el =
        |e: &mut Emitter<'_>, k: usize, j: Reg, lin: Ix, v: Val| -> Result<(), CodegenError> {
            match smem {
                Some(base) => {
                    let a = slot(e, base, k, j);
                    scalar::store(&mut e.b, StateSpace::Shared, a, v).map_err(CodegenError::from)
                }
                None => store_at(e, out_ptrs[k], lin, v),
            }
        };
    grid_stride(&mut f.e, true, rows, |e, row| {
        let ridx = e.delinearize(Ix::R(row), &row_dims);
        let base_idx = with_zero_at(&ridx, dims.len(), d);
        let base_lin = e.linearize(&base_idx, &dims);
        let base_lin = e.ix_reg(base_lin);
        // Copy the row into the outputs.
        thread_loop(e, tid, block, n_sort, |e, j| {
            let mut idx = base_idx.clone();
            idx[d] = Ix::R(j);
            let off = e.ix_mul(Ix::R(j), stride);
            let lin = e.ix_add(Ix::R(base_lin), off);
            for (k, &o) in ops.iter().enumerate() {
                let v = e.emit1(&ctx, o, &idx)?;
                store_el(e, k, j, lin, v)?;
            }
            Ok(())
        })?;
        e.b.barrier();
        e.counted_loop(n_sort, |e, r| {
            let phase = e.b.bin(O::And, &[], Type::B32, r.into(), Src::I(1));
            let pairs = n_sort / 2;
            thread_loop(e, tid, block, pairs, |e, t| {
                let i = e.b.mad_lo_u32(t.into(), Src::I(2), phase.into());
                let i1 = e.b.bin(O::Add, &[], Type::U32, i.into(), Src::I(1));
                let ok =
                    e.b.setp(CmpOp::Lt, Type::U32, i1.into(), Src::I(n_sort as i64));
                e.when(ok, |e| {
                    let o0 = e.ix_mul(Ix::R(i), stride);
                    let l0 = e.ix_add(Ix::R(base_lin), o0);
                    let o1 = e.ix_mul(Ix::R(i1), stride);
                    let l1 = e.ix_add(Ix::R(base_lin), o1);
                    let mut a = Vec::new();
                    let mut bvals = Vec::new();
                    for (k, ty) in types.iter().enumerate() {
                        a.push(load_el(e, k, i, l0, *ty)?);
                        bvals.push(load_el(e, k, i1, l1, *ty)?);
                    }
                    let mut args = Vec::new();
                    for k in 0..types.len() {
                        args.push(bvals[k]);
                        args.push(a[k]);
                    }
                    let less = e.inline_scalar(cmp_fn, &args)?;
                    let less = *less
                        .first()
                        .ok_or_else(|| CodegenError::Invalid("empty comparator".into()))?;
                    if less.ty != P::Pred {
                        return Err(CodegenError::Invalid(
                            "comparator does not return pred".into(),
                        ));
                    }
                    e.when(less.reg, |e| {
                        for k in 0..types.len() {
                            store_el(e, k, i, l0, bvals[k])?;
                            store_el(e, k, i1, l1, a[k])?;
                        }
                        Ok(())
                    })
                })
            })?;
            e.b.barrier();
            Ok(())
        })?;
        if use_smem {
            // Write the sorted row out, then let the block reuse the shared memory.
            thread_loop(e, tid, block, n_sort, |e, j| {
                let off = e.ix_mul(Ix::R(j), stride);
                let lin = e.ix_add(Ix::R(base_lin), off);
                for (k, ty) in types.iter().enumerate() {
                    let v = load_el(e, k, j, lin, *ty)?;
                    store_at(e, out_ptrs[k], lin, v)?;
                }
                Ok(())
            })?;
            e.b.barrier();
        }
        Ok(())
    })?;
    Ok(f.finish_blocks(req, rows, block, if use_smem { smem_bytes } else { 0 }))
}
