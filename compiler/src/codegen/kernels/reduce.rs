//! Reductions: one block per output element, thread-strided accumulation and a shared-memory
//! tree (warp shuffles for the last steps). The tree holds one 8-byte slot per thread and
//! component, two for a `c128` component (see `lanes`).
// Every kernel file reads the shared scaffolding and its imports from `mod.rs`.
use super::*;

/// Elements of a row each thread reduces before the tree, as XLA's `GetReductionTiling`
/// tiles a row reduction (`{1, 1, 16}`); the block shrinks to fit (see [`ReduceSpec::block`]).
const ROW_TILE: u64 = 16;

/// What a block reduction needs to know about one `reduce` instruction.
pub(in crate::codegen) struct ReduceSpec {
    inputs: Vec<InstrId>,
    inits: Vec<InstrId>,
    axes: ReduceAxes,
    /// Dimensions of the result (the kept dimensions).
    pub out_dims: Vec<u64>,
    /// Elements reduced into each result element.
    pub total_red: u64,
    f_red: hlo::ComputationId,
    types: Vec<P>,
}

impl ReduceSpec {
    /// Reads and checks reduce `id` of `comp`.
    pub(in crate::codegen) fn new(
        comp: &Computation,
        id: InstrId,
    ) -> Result<ReduceSpec, CodegenError> {
        let instr = instr_of(comp, id)?;
        let err = |e: &str| unsupported(comp, instr, e);
        let n = instr.operands.len() / 2;
        if n == 0 {
            return Err(err("reduce without operands"));
        }
        let inputs: Vec<InstrId> = instr.operands[..n].to_vec();
        let inits: Vec<InstrId> = instr.operands[n..].to_vec();
        let in_shape = &comp.get(inputs[0]).ok_or_else(|| err("bad operand"))?.shape;
        let in_dims = dims_of(in_shape);
        check_size(comp, instr, in_dims.iter().product())?;
        let axes = ReduceAxes::new(instr, in_dims);
        if axes.red.iter().any(|&d| d >= axes.in_dims.len()) {
            return Err(err("reduced dimension out of range"));
        }
        let out_dims: Vec<u64> = axes
            .kept
            .iter()
            .filter_map(|&d| axes.in_dims.get(d).copied())
            .collect();
        let total_red = axes.total;
        let f_red = instr
            .attrs
            .to_apply
            .ok_or_else(|| err("reduce without to_apply"))?;
        let types = elem_types(comp, instr, &inits, "bad init")?;
        Ok(ReduceSpec {
            inputs,
            inits,
            axes,
            out_dims,
            total_red,
            f_red,
            types,
        })
    }

    /// Threads per block: a power of two covering the reduced elements at [`ROW_TILE`] per
    /// thread, 32 to 256 (XLA's reduction tiling: a row reduction gives each thread 16
    /// elements along the row, so a row of 512 is one warp's, reduced by shuffles alone,
    /// instead of 256 threads holding two elements each and a shared-memory tree). The row
    /// kernel uses the largest block of its reductions: the same block, and so the same
    /// summation order, as each one's own kernel whenever they reduce rows of one length.
    pub(in crate::codegen) fn block(&self, req: &KernelRequest<'_>) -> u32 {
        let block = block_for(
            req,
            (self
                .total_red
                .div_ceil(ROW_TILE)
                .next_power_of_two()
                .clamp(32, u64::from(BLOCK))) as u32,
        );
        if block.is_power_of_two() {
            block
        } else {
            32
        }
    }

    /// Shared memory bytes the tree needs for `block` threads.
    pub(in crate::codegen) fn shared_bytes(&self, block: u32) -> u64 {
        let lanes: u64 = self.types.iter().map(|&t| lanes(t)).sum();
        lanes * u64::from(block) * 8
    }
}

/// The 8-byte shared-memory regions (of one slot per thread each) a component of type `ty`
/// takes in the tree: 2 for `c128` (real parts, then imaginary parts, each an `f64`), 1 for
/// the rest. A `c64` element fits one 8-byte slot as it is in memory.
fn lanes(ty: P) -> u64 {
    if ty == P::C128 {
        2
    } else {
        1
    }
}

/// The first region of each component (the running sum of [`lanes`]).
fn regions(types: &[P]) -> Vec<u64> {
    types
        .iter()
        .scan(0, |next, &t| {
            let r = *next;
            *next += lanes(t);
            Some(r)
        })
        .collect()
}

/// Stores component value `v` in the tree at `addr` (its slot in its first region); a `c128`
/// value's imaginary part goes to the next region, `region` bytes further.
fn store_slot(e: &mut Emitter<'_>, addr: Reg, region: i64, v: Val) -> Result<(), CodegenError> {
    match (v.ty, v.im) {
        (P::C128, Some(im)) => {
            let part = |reg| Val {
                ty: P::F64,
                reg,
                im: None,
            };
            scalar::store(&mut e.b, StateSpace::Shared, addr, part(v.reg))?;
            let next = e.b.bin(O::Add, &[], Type::S64, addr.into(), Src::I(region));
            scalar::store(&mut e.b, StateSpace::Shared, next, part(im))?;
            Ok(())
        }
        _ => Ok(scalar::store(&mut e.b, StateSpace::Shared, addr, v)?),
    }
}

/// Loads a component value of type `ty` stored by [`store_slot`].
fn load_slot(e: &mut Emitter<'_>, addr: Reg, region: i64, ty: P) -> Result<Val, CodegenError> {
    if ty != P::C128 {
        return Ok(scalar::load(&mut e.b, StateSpace::Shared, ty, addr)?);
    }
    let re = scalar::load(&mut e.b, StateSpace::Shared, P::F64, addr)?.reg;
    let next = e.b.bin(O::Add, &[], Type::S64, addr.into(), Src::I(region));
    let im = scalar::load(&mut e.b, StateSpace::Shared, P::F64, next)?.reg;
    Ok(crate::codegen::complex::make(ty, re, im))
}

/// The block's reduction of result element `oidx` of `spec`: thread-strided accumulation, a
/// shared-memory tree and warp shuffles; then `at_thread0` runs in thread 0 with the result
/// components. `my_slot` is this thread's 8-byte slot of the tree's shared memory (in the first
/// region; see [`lanes`]).
#[allow(clippy::too_many_arguments)]
pub(in crate::codegen) fn block_reduce<'m, F>(
    e: &mut Emitter<'m>,
    ctx: &Ctx<'_>,
    spec: &ReduceSpec,
    oidx: &[Ix],
    tid: Reg,
    my_slot: Reg,
    block: u32,
    mut at_thread0: F,
) -> Result<(), CodegenError>
where
    F: FnMut(&mut Emitter<'m>, &[Val]) -> Result<(), CodegenError>,
{
    let (inputs, inits, types, f_red) = (&spec.inputs, &spec.inits, &spec.types, spec.f_red);
    let total_red = spec.total_red;
    let mut init_vals = Vec::new();
    for &i in inits {
        init_vals.push(e.emit1(ctx, i, &[])?);
    }
    // Thread 0 starts from the init value; thread t > 0 from element t (so the init value
    // is applied exactly once, whatever it is).
    let acc = e.fresh_copy(&init_vals)?;
    let full_index = |e: &mut Emitter<'_>, k: Reg| -> Result<Vec<Ix>, CodegenError> {
        spec.axes
            .input_index(e, oidx, k)
            .ok_or_else(|| CodegenError::Invalid("reduce result index of the wrong rank".into()))
    };
    let k0 = e.b.mov(Type::B32, tid.into());
    let not_first = e.b.setp(CmpOp::Ne, Type::U32, tid.into(), Src::I(0));
    let has =
        e.b.setp(CmpOp::Lt, Type::U32, tid.into(), Src::I(total_red as i64));
    let own = e.b.pand(not_first, has);
    e.when(own, |e| {
        let full = full_index(e, tid)?;
        let mut xs = Vec::new();
        for &i in inputs {
            xs.push(e.emit1(ctx, i, &full)?);
        }
        e.update(&acc, &xs)?;
        e.b.add_u32_to(k0, tid.into(), Src::I(i64::from(block)));
        Ok(())
    })?;
    thread_loop_by4(e, k0, block, total_red, |e, k| {
        let full = full_index(e, k)?;
        let mut args = acc.clone();
        for &i in inputs {
            args.push(e.emit1(ctx, i, &full)?);
        }
        let new = e.inline_scalar(f_red, &args)?;
        e.update(&acc, &new)
    })?;
    let nvalid = u64::from(block).min(total_red.max(1));
    // Shared-memory tree.
    // Component c's slots start at region `first[c]`; a region is `block` slots of 8 bytes.
    let first = regions(types);
    let region = i64::from(block) * 8;
    let comp_base = |e: &mut Emitter<'_>, c: usize, slot: Reg| -> Reg {
        e.b.bin(
            O::Add,
            &[],
            Type::S64,
            slot.into(),
            Src::I(first[c] as i64 * region),
        )
    };
    let mut nvalid = nvalid;
    if block > 32 {
        for (c, v) in acc.iter().enumerate() {
            let a = comp_base(e, c, my_slot);
            store_slot(e, a, region, *v)?;
        }
        let mut s = block / 2;
        while s >= 32 {
            e.b.barrier();
            let lim = u64::from(s).min(nvalid.saturating_sub(u64::from(s)));
            if lim > 0 {
                let active =
                    e.b.setp(CmpOp::Lt, Type::U32, tid.into(), Src::I(lim as i64));
                e.when(active, |e| {
                    let mut args = Vec::new();
                    for off in [0u64, u64::from(s) * 8] {
                        for (c, ty) in types.iter().enumerate() {
                            let a = comp_base(e, c, my_slot);
                            let a =
                                e.b.bin(O::Add, &[], Type::S64, a.into(), Src::I(off as i64));
                            args.push(load_slot(e, a, region, *ty)?);
                        }
                    }
                    let new = e.inline_scalar(f_red, &args)?;
                    for (c, v) in new.iter().enumerate() {
                        let a = comp_base(e, c, my_slot);
                        store_slot(e, a, region, *v)?;
                    }
                    Ok(())
                })?;
            }
            nvalid = nvalid.min(u64::from(s));
            s /= 2;
        }
        e.b.barrier();
    }
    // Warp 0 finishes with shuffles (all 32 lanes execute every shfl.sync).
    let warp0 = e.b.setp(CmpOp::Lt, Type::U32, tid.into(), Src::I(32));
    e.when(warp0, |e| {
        if block > 32 {
            let mut vals = Vec::new();
            for (c, ty) in types.iter().enumerate() {
                let a = comp_base(e, c, my_slot);
                vals.push(load_slot(e, a, region, *ty)?);
            }
            e.update(&acc, &vals)?;
        }
        let mut s = 16u32;
        while s > 0 {
            let lim = u64::from(s).min(nvalid.saturating_sub(u64::from(s)));
            if lim > 0 {
                let mut partner = Vec::new();
                for v in &acc {
                    partner.push(shfl_down(e, *v, s)?);
                }
                let active =
                    e.b.setp(CmpOp::Lt, Type::U32, tid.into(), Src::I(lim as i64));
                e.when(active, |e| {
                    let mut args = acc.clone();
                    args.extend(partner.iter().copied());
                    let new = e.inline_scalar(f_red, &args)?;
                    e.update(&acc, &new)
                })?;
            }
            nvalid = nvalid.min(u64::from(s));
            s /= 2;
        }
        let first = e.b.setp(CmpOp::Eq, Type::U32, tid.into(), Src::I(0));
        e.when(first, |e| at_thread0(e, &acc))
    })
}

/// This thread's 8-byte slot of the kernel's shared memory (`smem + 8 * tid`).
pub(in crate::codegen) fn shared_slot(e: &mut Emitter<'_>, tid: Reg) -> Reg {
    let smem = e.b.symbol_addr(SHARED_NAME);
    let tid_off = e.b.mul_wide_u32(tid.into(), Src::I(8));
    e.b.bin(O::Add, &[], Type::S64, smem.into(), tid_off.into())
}

/// A reduction kernel for `reduce` instruction `id`; `outputs` maps result components to
/// output leaves.
pub fn reduce_kernel(
    site: KernelSite<'_, '_>,
    outputs: &[(usize, usize)],
) -> Result<EmittedKernel, CodegenError> {
    let KernelSite {
        req,
        comp,
        name,
        id,
    } = site;
    let spec = ReduceSpec::new(comp, id)?;
    let block = spec.block(req);
    // (Declared even when the block is a single warp, which never touches it.)
    let shared = spec.shared_bytes(block);
    let outs: Vec<usize> = outputs.iter().map(|o| o.1).collect();
    let mut f = Frame::new(req, comp, name, &outs);
    let ctx = f.ctx(comp);
    let out_ptrs = f.outputs.clone();
    let tid = f.e.b.special(SpecialReg::Tid(Dim::X));
    let my_slot = shared_slot(&mut f.e, tid);
    let out_dims = spec.out_dims.clone();
    grid_stride(&mut f.e, true, out_dims.iter().product(), |e, o| {
        let oidx = e.delinearize(Ix::R(o), &out_dims);
        block_reduce(e, &ctx, &spec, &oidx, tid, my_slot, block, |e, acc| {
            for (k, &(c, _)) in outputs.iter().enumerate() {
                let v = *acc
                    .get(c)
                    .ok_or_else(|| CodegenError::Invalid("bad component".into()))?;
                store_at(e, out_ptrs[k], Ix::R(o), v)?;
            }
            Ok(())
        })?;
        e.b.barrier();
        Ok(())
    })?;
    Ok(f.finish_blocks(req, out_dims.iter().product(), block, shared))
}

/// `shfl.sync.down` of a value of any carrier (64-bit values in two halves, pred as 0/1).
fn shfl_down(e: &mut Emitter<'_>, v: Val, s: u32) -> Result<Val, CodegenError> {
    // A complex value: each part on its own.
    if let (Some(pt), Some(im)) = (crate::codegen::complex::part_type(v.ty), v.im) {
        let part = |reg| Val {
            ty: pt,
            reg,
            im: None,
        };
        let re = shfl_down(e, part(v.reg), s)?.reg;
        let im = shfl_down(e, part(im), s)?.reg;
        return Ok(crate::codegen::complex::make(v.ty, re, im));
    }
    let c = scalar::carrier(v.ty)?;
    let shfl = |e: &mut Emitter<'_>, r: Reg| -> Reg {
        let d = e.b.reg(r.kind);
        e.b.op_to(
            d,
            O::Shfl,
            vec![
                ptx::Modifier::Sync,
                ptx::Modifier::Shfl(ptx::ShflMode::Down),
                crate::codegen::builder::t(Type::B32),
            ],
            &[
                r.into(),
                Src::I(i64::from(s)),
                Src::I(0x1f),
                Src::I(0xffff_ffff),
            ],
        );
        d
    };
    let reg = match c {
        Type::Pred => {
            let u = e.b.selp(Type::U32, Src::I(1), Src::I(0), v.reg);
            let r = shfl(e, u);
            e.b.setp(CmpOp::Ne, Type::U32, r.into(), Src::I(0))
        }
        Type::S64 | Type::U64 | Type::F64 => {
            let bits = if c == Type::F64 {
                let b = e.b.reg(crate::codegen::builder::RegKind::B64);
                e.b.mov_to(b, Type::B64, v.reg.into());
                b
            } else {
                v.reg
            };
            let lo = e.b.cvt(None, Type::U32, Type::U64, bits.into());
            let hi = e.b.bin(O::Shr, &[], Type::U64, bits.into(), Src::I(32));
            let hi = e.b.cvt(None, Type::U32, Type::U64, hi.into());
            let lo = shfl(e, lo);
            let hi = shfl(e, hi);
            let lo = e.b.cvt(None, Type::U64, Type::U32, lo.into());
            let hi = e.b.cvt(None, Type::U64, Type::U32, hi.into());
            let hi = e.b.bin(O::Shl, &[], Type::B64, hi.into(), Src::I(32));
            let w = e.b.bin(O::Or, &[], Type::B64, hi.into(), lo.into());
            if c == Type::F64 {
                let f = e.b.reg(crate::codegen::builder::RegKind::F64);
                e.b.mov_to(f, Type::B64, w.into());
                f
            } else {
                w
            }
        }
        _ => shfl(e, v.reg),
    };
    // `carrier` above refused complex values, the only ones with an `im` part.
    Ok(Val {
        ty: v.ty,
        reg,
        im: None,
    })
}
