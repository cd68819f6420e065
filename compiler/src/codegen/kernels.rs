//! Kernel shapes: loop (one thread per output element, grid-stride), reduction (one block per
//! output element, thread-strided accumulation and a shared-memory tree), sort (one block per
//! row, odd-even transposition sort in the output buffers: stable), scatter (one thread per
//! output element applying every matching update in order: deterministic).
use hlo::ir::{Computation, InstrId, Instruction};
use hlo::{Opcode as H, PrimitiveType as P};
use ptx::ast::{CmpOp, Dim, Opcode as O, SpecialReg, StateSpace, Type};

use super::builder::{Reg, Src, SHARED_NAME};
use super::elemental::{dims_of, elem, unsupported, Ctx, Emitter, Ix, ParamSrc};
use super::scalar::{self, Val};
use super::{CodegenError, EmittedKernel, KernelArg, KernelRequest, LaunchDims};

const BLOCK: u32 = 256;

/// Common kernel scaffolding: parameters, pointers, finishing.
pub(super) struct Frame<'m> {
    pub(super) e: Emitter<'m>,
    params: Vec<String>,
    args: Vec<KernelArg>,
    pub(super) inputs: Vec<Reg>,
    pub(super) outputs: Vec<Reg>,
    name: String,
}

impl<'m> Frame<'m> {
    pub(super) fn new(
        req: &KernelRequest<'m>,
        comp: &Computation,
        name: &str,
        outputs: &[usize],
    ) -> Frame<'m> {
        let mut e = Emitter::new(req.module, name);
        let mut params = Vec::new();
        let mut args = Vec::new();
        for i in 0..comp.params.len() {
            params.push(format!("{name}_param_{i}"));
            args.push(KernelArg::Input(i));
        }
        for &j in outputs {
            params.push(format!("{name}_param_{}", params.len()));
            args.push(KernelArg::Output(j));
        }
        let mut ptrs = Vec::new();
        for p in &params {
            ptrs.push(e.b.param_ptr(p));
        }
        let outputs = ptrs.split_off(comp.params.len());
        Frame {
            e,
            params,
            args,
            inputs: ptrs,
            outputs,
            name: name.to_string(),
        }
    }

    /// Finishes a one-thread-per-element kernel over `work` elements: blocks of `BLOCK` threads
    /// (fewer where the target allows fewer), as many blocks as cover the work (capped: the
    /// kernels loop over the grid stride).
    pub(super) fn finish_1d(
        self,
        req: &KernelRequest<'_>,
        work: u64,
        shared: u64,
    ) -> EmittedKernel {
        let block = block_for(req, BLOCK);
        let grid = grid_for(req, work.div_ceil(u64::from(block)));
        self.finish(
            req,
            LaunchDims {
                grid: [grid, 1, 1],
                block: [block, 1, 1],
            },
            shared,
        )
    }

    pub(super) fn finish(
        self,
        req: &KernelRequest<'_>,
        launch: LaunchDims,
        shared: u64,
    ) -> EmittedKernel {
        let written = self
            .args
            .iter()
            .map(|a| matches!(a, KernelArg::Output(_)))
            .collect();
        let ptx = self
            .e
            .b
            .finish(&self.name, &self.params, self.e.globals, shared, req.target);
        EmittedKernel {
            name: self.name,
            ptx,
            launch,
            dynamic_shared_bytes: 0,
            args: self.args,
            written,
        }
    }
}

pub(super) fn grid_for(req: &KernelRequest<'_>, work: u64) -> u32 {
    let cap = req.target.max_grid[0].clamp(1, 1 << 20);
    work.clamp(1, cap) as u32
}

pub(super) fn block_for(req: &KernelRequest<'_>, want: u32) -> u32 {
    want.min(req.target.max_threads_per_block.max(32))
}

fn check_size(comp: &Computation, instr: &Instruction, n: u64) -> Result<(), CodegenError> {
    if n >= (1u64 << 31) {
        return Err(unsupported(comp, instr, "more than 2^31 elements"));
    }
    Ok(())
}

/// Grid-stride loop over `0..n` (in units of `unit`: threads or blocks).
pub(super) fn grid_stride<'m, F>(
    e: &mut Emitter<'m>,
    per_block: bool,
    n: u64,
    mut body: F,
) -> Result<(), CodegenError>
where
    F: FnMut(&mut Emitter<'m>, Reg) -> Result<(), CodegenError>,
{
    let (start, stride) = if per_block {
        let c = e.b.special(SpecialReg::Ctaid(Dim::X));
        let n = e.b.special(SpecialReg::Nctaid(Dim::X));
        (c, n)
    } else {
        let c = e.b.special(SpecialReg::Ctaid(Dim::X));
        let nt = e.b.special(SpecialReg::Ntid(Dim::X));
        let t = e.b.special(SpecialReg::Tid(Dim::X));
        let g = e.b.op(
            O::Mad,
            vec![ptx::ast::Modifier::Lo, super::builder::t(Type::U32)],
            Type::U32,
            &[c.into(), nt.into(), t.into()],
        );
        let nc = e.b.special(SpecialReg::Nctaid(Dim::X));
        let s = e.b.bin(
            O::Mul,
            &[ptx::ast::Modifier::Lo],
            Type::U32,
            nc.into(),
            nt.into(),
        );
        (g, s)
    };
    let i = e.b.mov(Type::B32, start.into());
    let top = e.b.label();
    let end = e.b.label();
    e.b.place(&top);
    let done = e.b.setp(CmpOp::Ge, Type::U32, i.into(), Src::I(n as i64));
    if per_block {
        e.b.bra(Some((done, false)), &end);
    } else {
        e.b.bra_div(done, false, &end);
    }
    e.push();
    let r = body(e, i);
    e.pop();
    r?;
    e.b.op_to(
        i,
        O::Add,
        vec![super::builder::t(Type::U32)],
        &[i.into(), stride.into()],
    );
    e.b.bra(None, &top);
    e.b.place(&end);
    Ok(())
}

/// Thread-strided loop `for k = tid; k < n; k += blockDim` (divergent).
pub(super) fn thread_loop<'m, F>(
    e: &mut Emitter<'m>,
    start: Reg,
    block: u32,
    n: u64,
    mut body: F,
) -> Result<(), CodegenError>
where
    F: FnMut(&mut Emitter<'m>, Reg) -> Result<(), CodegenError>,
{
    let k = e.b.mov(Type::B32, start.into());
    let top = e.b.label();
    let end = e.b.label();
    e.b.place(&top);
    let done = e.b.setp(CmpOp::Ge, Type::U32, k.into(), Src::I(n as i64));
    e.b.bra_div(done, false, &end);
    e.push();
    let r = body(e, k);
    e.pop();
    r?;
    e.b.op_to(
        k,
        O::Add,
        vec![super::builder::t(Type::U32)],
        &[k.into(), Src::I(i64::from(block))],
    );
    e.b.bra(None, &top);
    e.b.place(&end);
    Ok(())
}

pub(super) fn store_at(
    e: &mut Emitter<'_>,
    base: Reg,
    lin: Ix,
    v: Val,
) -> Result<(), CodegenError> {
    let addr = e.elem_addr(base, lin, v.ty);
    scalar::store(&mut e.b, StateSpace::Global, addr, v).map_err(CodegenError::Invalid)
}

fn load_at(e: &mut Emitter<'_>, base: Reg, lin: Ix, ty: P) -> Result<Val, CodegenError> {
    let addr = e.elem_addr(base, lin, ty);
    scalar::load(&mut e.b, StateSpace::Global, ty, addr).map_err(CodegenError::Invalid)
}

/// A loop kernel computing `targets` (array-shaped instructions of equal dimensions) into
/// outputs (`(instruction, output leaf)`).
pub fn loop_kernel(
    req: &KernelRequest<'_>,
    comp: &Computation,
    name: &str,
    targets: &[(InstrId, usize)],
) -> Result<EmittedKernel, CodegenError> {
    let first = targets
        .first()
        .and_then(|(id, _)| comp.get(*id))
        .ok_or_else(|| CodegenError::Invalid("loop kernel without outputs".into()))?;
    let dims = dims_of(&first.shape);
    let n: u64 = dims.iter().product();
    check_size(comp, first, n)?;
    let outs: Vec<usize> = targets.iter().map(|t| t.1).collect();
    let mut f = Frame::new(req, comp, name, &outs);
    let ctx = Ctx {
        comp,
        params: ParamSrc::Buffers(f.inputs.clone()),
        id: 0,
    };
    let outputs = f.outputs.clone();
    let shared = share_scalar_inputs(&mut f, comp, n)?;
    grid_stride(&mut f.e, false, n, |e, i| {
        let idx = e.delinearize(Ix::R(i), &dims);
        // Every value first, then the stores: an output may alias an input (in-place).
        let mut vals = Vec::with_capacity(targets.len());
        for (id, _) in targets {
            vals.push(e.emit1(&ctx, *id, &idx)?);
        }
        for (k, v) in vals.into_iter().enumerate() {
            store_at(e, outputs[k], Ix::R(i), v)?;
        }
        Ok(())
    })?;
    Ok(f.finish_1d(req, n, shared))
}

/// Scalar inputs of a kernel over `n > 1` elements (a select's predicate once a conditional
/// became one, clamp bounds, ...): thread 0 of each block loads each once into shared memory
/// and, after a barrier, every thread takes it from there, instead of every thread loading the
/// same word from global memory. Returns the shared bytes used.
fn share_scalar_inputs(f: &mut Frame<'_>, comp: &Computation, n: u64) -> Result<u64, CodegenError> {
    let scalars: Vec<(Reg, InstrId, P)> = comp
        .params
        .iter()
        .zip(f.inputs.iter())
        .filter_map(|(&p, &ptr)| {
            let i = comp.get(p)?;
            (i.shape.is_array() && i.shape.rank() == 0)
                .then_some(())
                .and_then(|_| elem(&i.shape))
                .map(|t| (ptr, p, t))
        })
        .collect();
    if n <= 1 || scalars.is_empty() {
        return Ok(0);
    }
    let e = &mut f.e;
    let tid = e.b.special(SpecialReg::Tid(Dim::X));
    let smem = e.b.symbol_addr(SHARED_NAME);
    let first = e.b.setp(CmpOp::Eq, Type::U32, tid.into(), Src::I(0));
    let slots: Vec<Reg> = (0..scalars.len())
        .map(|k| {
            e.b.bin(O::Add, &[], Type::S64, smem.into(), Src::I(8 * k as i64))
        })
        .collect();
    e.when(first, |e| {
        for (&(ptr, _, ty), &slot) in scalars.iter().zip(&slots) {
            let v = load_at(e, ptr, Ix::C(0), ty)?;
            scalar::store(&mut e.b, StateSpace::Shared, slot, v).map_err(CodegenError::Invalid)?;
        }
        Ok(())
    })?;
    e.b.barrier();
    for (&(_, p, ty), &slot) in scalars.iter().zip(&slots) {
        let v =
            scalar::load(&mut e.b, StateSpace::Shared, ty, slot).map_err(CodegenError::Invalid)?;
        e.set_row_value(0, p, vec![v]);
    }
    Ok(8 * scalars.len() as u64)
}

/// What a block reduction needs to know about one `reduce` instruction.
pub(super) struct ReduceSpec {
    inputs: Vec<InstrId>,
    inits: Vec<InstrId>,
    in_dims: Vec<u64>,
    red: Vec<usize>,
    kept: Vec<usize>,
    red_dims: Vec<u64>,
    /// Dimensions of the result (the kept dimensions).
    pub out_dims: Vec<u64>,
    /// Elements reduced into each result element.
    pub total_red: u64,
    f_red: hlo::ComputationId,
    types: Vec<P>,
}

impl ReduceSpec {
    /// Reads and checks reduce `id` of `comp`.
    pub(super) fn new(comp: &Computation, id: InstrId) -> Result<ReduceSpec, CodegenError> {
        let instr = comp
            .get(id)
            .ok_or_else(|| CodegenError::Invalid(format!("no instruction {id:?}")))?;
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
        let red: Vec<usize> = instr
            .attrs
            .dimensions
            .clone()
            .unwrap_or_default()
            .iter()
            .map(|&d| d.max(0) as usize)
            .collect();
        if red.iter().any(|&d| d >= in_dims.len()) {
            return Err(err("reduced dimension out of range"));
        }
        let kept: Vec<usize> = (0..in_dims.len()).filter(|d| !red.contains(d)).collect();
        let out_dims: Vec<u64> = kept.iter().map(|&d| in_dims[d]).collect();
        let red_dims: Vec<u64> = red
            .iter()
            .map(|&d| in_dims.get(d).copied().unwrap_or(1))
            .collect();
        let total_red: u64 = red_dims.iter().product();
        let f_red = instr
            .attrs
            .to_apply
            .ok_or_else(|| err("reduce without to_apply"))?;
        let types: Vec<P> = inits
            .iter()
            .map(|&i| {
                comp.get(i)
                    .and_then(|x| elem(&x.shape))
                    .ok_or_else(|| err("bad init"))
            })
            .collect::<Result<_, _>>()?;
        Ok(ReduceSpec {
            inputs,
            inits,
            in_dims,
            red,
            kept,
            red_dims,
            out_dims,
            total_red,
            f_red,
            types,
        })
    }

    /// Threads per block: a power of two covering the reduced elements, 32 to 256. For
    /// `total_red` up to the block size every thread holds at most one element, so the tree's
    /// result is the same for any larger power-of-two block (the row kernel relies on it).
    pub(super) fn block(&self, req: &KernelRequest<'_>) -> u32 {
        let block = block_for(
            req,
            (self
                .total_red
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
    pub(super) fn shared_bytes(&self, block: u32) -> u64 {
        self.types.len() as u64 * u64::from(block) * 8
    }
}

/// The block's reduction of result element `oidx` of `spec`: thread-strided accumulation, a
/// shared-memory tree and warp shuffles; then `at_thread0` runs in thread 0 with the result
/// components. `my_slot` is this thread's 8-byte slot of the tree's shared memory.
#[allow(clippy::too_many_arguments)]
pub(super) fn block_reduce<'m, F>(
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
    let (total_red, in_dims, kept, red, red_dims) = (
        spec.total_red,
        &spec.in_dims,
        &spec.kept,
        &spec.red,
        &spec.red_dims,
    );
    let mut init_vals = Vec::new();
    for &i in inits {
        init_vals.push(e.emit1(ctx, i, &[])?);
    }
    // Thread 0 starts from the init value; thread t > 0 from element t (so the init value
    // is applied exactly once, whatever it is).
    let acc = e.fresh_copy(&init_vals)?;
    let full_index = |e: &mut Emitter<'_>, k: Reg| -> Vec<Ix> {
        let ridx = e.delinearize(Ix::R(k), red_dims);
        let mut full = vec![Ix::C(0); in_dims.len()];
        for (j, &d) in kept.iter().enumerate() {
            full[d] = oidx[j];
        }
        for (j, &d) in red.iter().enumerate() {
            full[d] = ridx[j];
        }
        full
    };
    let k0 = e.b.mov(Type::B32, tid.into());
    let not_first = e.b.setp(CmpOp::Ne, Type::U32, tid.into(), Src::I(0));
    let has =
        e.b.setp(CmpOp::Lt, Type::U32, tid.into(), Src::I(total_red as i64));
    let own = e.b.pand(not_first, has);
    e.when(own, |e| {
        let full = full_index(e, tid);
        let mut xs = Vec::new();
        for &i in inputs {
            xs.push(e.emit1(ctx, i, &full)?);
        }
        e.update(&acc, &xs)?;
        e.b.op_to(
            k0,
            O::Add,
            vec![super::builder::t(Type::U32)],
            &[tid.into(), Src::I(i64::from(block))],
        );
        Ok(())
    })?;
    thread_loop(e, k0, block, total_red, |e, k| {
        let full = full_index(e, k);
        let mut args = acc.clone();
        for &i in inputs {
            args.push(e.emit1(ctx, i, &full)?);
        }
        let new = e.inline_scalar(f_red, &args)?;
        e.update(&acc, &new)
    })?;
    let nvalid = u64::from(block).min(total_red.max(1));
    // Shared-memory tree.
    let comp_base = |e: &mut Emitter<'_>, c: usize, slot: Reg| -> Reg {
        e.b.bin(
            O::Add,
            &[],
            Type::S64,
            slot.into(),
            Src::I((c as u64 * u64::from(block) * 8) as i64),
        )
    };
    let mut nvalid = nvalid;
    if block > 32 {
        for (c, v) in acc.iter().enumerate() {
            let a = comp_base(e, c, my_slot);
            scalar::store(&mut e.b, StateSpace::Shared, a, *v).map_err(CodegenError::Invalid)?;
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
                            args.push(
                                scalar::load(&mut e.b, StateSpace::Shared, *ty, a)
                                    .map_err(CodegenError::Invalid)?,
                            );
                        }
                    }
                    let new = e.inline_scalar(f_red, &args)?;
                    for (c, v) in new.iter().enumerate() {
                        let a = comp_base(e, c, my_slot);
                        scalar::store(&mut e.b, StateSpace::Shared, a, *v)
                            .map_err(CodegenError::Invalid)?;
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
                vals.push(
                    scalar::load(&mut e.b, StateSpace::Shared, *ty, a)
                        .map_err(CodegenError::Invalid)?,
                );
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
pub(super) fn shared_slot(e: &mut Emitter<'_>, tid: Reg) -> Reg {
    let smem = e.b.symbol_addr(SHARED_NAME);
    let tid_off = e.b.op(
        O::Mul,
        vec![ptx::ast::Modifier::Wide, super::builder::t(Type::U32)],
        Type::U64,
        &[tid.into(), Src::I(8)],
    );
    e.b.bin(O::Add, &[], Type::S64, smem.into(), tid_off.into())
}

/// A reduction kernel for `reduce` instruction `id`; `outputs` maps result components to
/// output leaves.
pub fn reduce_kernel(
    req: &KernelRequest<'_>,
    comp: &Computation,
    name: &str,
    id: InstrId,
    outputs: &[(usize, usize)],
) -> Result<EmittedKernel, CodegenError> {
    let spec = ReduceSpec::new(comp, id)?;
    let block = spec.block(req);
    // (Declared even when the block is a single warp, which never touches it.)
    let shared = spec.shared_bytes(block);
    let outs: Vec<usize> = outputs.iter().map(|o| o.1).collect();
    let mut f = Frame::new(req, comp, name, &outs);
    let ctx = Ctx {
        comp,
        params: ParamSrc::Buffers(f.inputs.clone()),
        id: 0,
    };
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
    let grid = grid_for(req, out_dims.iter().product());
    Ok(f.finish(
        req,
        LaunchDims {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
        },
        shared,
    ))
}

/// `shfl.sync.down` of a value of any carrier (64-bit values in two halves, pred as 0/1).
fn shfl_down(e: &mut Emitter<'_>, v: Val, s: u32) -> Result<Val, CodegenError> {
    let c = scalar::carrier(v.ty).map_err(CodegenError::Invalid)?;
    let shfl = |e: &mut Emitter<'_>, r: Reg| -> Reg {
        let d = e.b.reg(r.kind);
        e.b.op_to(
            d,
            O::Shfl,
            vec![
                ptx::ast::Modifier::Sync,
                ptx::ast::Modifier::Shfl(ptx::ast::ShflMode::Down),
                super::builder::t(Type::B32),
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
                let b = e.b.reg(super::builder::RegKind::B64);
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
                let f = e.b.reg(super::builder::RegKind::F64);
                e.b.mov_to(f, Type::B64, w.into());
                f
            } else {
                w
            }
        }
        _ => shfl(e, v.reg),
    };
    Ok(Val { ty: v.ty, reg })
}

/// A sort kernel for the root `sort` (outputs 0..n are its operands' sorted copies).
pub fn sort_kernel(
    req: &KernelRequest<'_>,
    comp: &Computation,
    name: &str,
    id: InstrId,
) -> Result<EmittedKernel, CodegenError> {
    let instr = comp
        .get(id)
        .ok_or_else(|| CodegenError::Invalid(format!("no instruction {id:?}")))?;
    let err = |e: &str| unsupported(comp, instr, e);
    let ops = instr.operands.clone();
    let first = comp
        .get(*ops.first().ok_or_else(|| err("sort without operands"))?)
        .ok_or_else(|| err("bad operand"))?;
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
        .ok_or_else(|| err("sort dimension out of range"))?;
    let row_dims: Vec<u64> = dims
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != d)
        .map(|(_, &x)| x)
        .collect();
    let rows: u64 = row_dims.iter().product();
    let stride: u64 = dims[d + 1..].iter().product();
    let types: Vec<P> = ops
        .iter()
        .map(|&o| {
            comp.get(o)
                .and_then(|x| elem(&x.shape))
                .ok_or_else(|| err("bad operand"))
        })
        .collect::<Result<_, _>>()?;
    let cmp_fn = instr
        .attrs
        .to_apply
        .ok_or_else(|| err("sort without comparator"))?;
    let block = block_for(
        req,
        (n_sort
            .div_ceil(2)
            .next_power_of_two()
            .clamp(32, u64::from(BLOCK))) as u32,
    );
    let outs: Vec<usize> = (0..ops.len()).collect();
    let mut f = Frame::new(req, comp, name, &outs);
    let ctx = Ctx {
        comp,
        params: ParamSrc::Buffers(f.inputs.clone()),
        id: 0,
    };
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
        let off = e.b.op(
            O::Mul,
            vec![ptx::ast::Modifier::Wide, super::builder::t(Type::U32)],
            Type::U64,
            &[j.into(), Src::I(8)],
        );
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
                    scalar::load(&mut e.b, StateSpace::Shared, ty, a).map_err(CodegenError::Invalid)
                }
                None => load_at(e, out_ptrs[k], lin, ty),
            }
        };
    let store_el =
        |e: &mut Emitter<'_>, k: usize, j: Reg, lin: Ix, v: Val| -> Result<(), CodegenError> {
            match smem {
                Some(base) => {
                    let a = slot(e, base, k, j);
                    scalar::store(&mut e.b, StateSpace::Shared, a, v).map_err(CodegenError::Invalid)
                }
                None => store_at(e, out_ptrs[k], lin, v),
            }
        };
    grid_stride(&mut f.e, true, rows, |e, row| {
        let ridx = e.delinearize(Ix::R(row), &row_dims);
        let mut base_idx = Vec::with_capacity(dims.len());
        let mut it = ridx.iter();
        for k in 0..dims.len() {
            base_idx.push(if k == d {
                Ix::C(0)
            } else {
                *it.next().unwrap_or(&Ix::C(0))
            });
        }
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
                let i = e.b.op(
                    O::Mad,
                    vec![ptx::ast::Modifier::Lo, super::builder::t(Type::U32)],
                    Type::U32,
                    &[t.into(), Src::I(2), phase.into()],
                );
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
    let grid = grid_for(req, rows);
    Ok(f.finish(
        req,
        LaunchDims {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
        },
        if use_smem { smem_bytes } else { 0 },
    ))
}

/// A scatter kernel for the root `scatter` (outputs 0..n).
pub fn scatter_kernel(
    req: &KernelRequest<'_>,
    comp: &Computation,
    name: &str,
    id: InstrId,
) -> Result<EmittedKernel, CodegenError> {
    let instr = comp
        .get(id)
        .ok_or_else(|| CodegenError::Invalid(format!("no instruction {id:?}")))?;
    let err = |e: &str| unsupported(comp, instr, e);
    let nops = instr.operands.len();
    if nops < 3 || nops % 2 == 0 {
        return Err(err("scatter needs n operands, indices and n updates"));
    }
    let n = (nops - 1) / 2;
    let operands = instr.operands[..n].to_vec();
    let indices = instr.operands[n];
    let updates = instr.operands[n + 1..].to_vec();
    let shape_of = |id: InstrId| {
        comp.get(id)
            .map(|i| dims_of(&i.shape))
            .ok_or_else(|| err("bad operand"))
    };
    let odims = shape_of(operands[0])?;
    let idims = shape_of(indices)?;
    let udims = shape_of(updates[0])?;
    check_size(comp, instr, odims.iter().product())?;
    let dn = instr
        .attrs
        .scatter_dimension_numbers
        .clone()
        .ok_or_else(|| err("scatter without dimension numbers"))?;
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
        return Err(err("batching dimension counts or indices differ"));
    }
    let window_operand: Vec<usize> = (0..odims.len())
        .filter(|d| !inserted.contains(d) && !in_batch.contains(d))
        .collect();
    let mut wsize = vec![1u64; odims.len()];
    for (j, &d) in window_operand.iter().enumerate() {
        let wd = *window_dims
            .get(j)
            .ok_or_else(|| err("update_window_dims mismatch"))?;
        wsize[d] = *udims
            .get(wd)
            .ok_or_else(|| err("update_window_dims out of range"))?;
    }
    let scatter_dims: Vec<usize> = (0..udims.len())
        .filter(|d| !window_dims.contains(d))
        .collect();
    let sdims: Vec<u64> = scatter_dims.iter().map(|&d| udims[d]).collect();
    let total_s: u64 = sdims.iter().product();
    let types: Vec<P> = operands
        .iter()
        .map(|&o| {
            comp.get(o)
                .and_then(|x| elem(&x.shape))
                .ok_or_else(|| err("bad operand"))
        })
        .collect::<Result<_, _>>()?;
    let _ = &types;
    let comb = instr
        .attrs
        .to_apply
        .ok_or_else(|| err("scatter without to_apply"))?;
    let total: u64 = odims.iter().product();
    let outs: Vec<usize> = (0..n).collect();
    let mut f = Frame::new(req, comp, name, &outs);
    let ctx = Ctx {
        comp,
        params: ParamSrc::Buffers(f.inputs.clone()),
        id: 0,
    };
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
            let mut coords = Vec::with_capacity(idims.len());
            let mut si = sidx.iter();
            for d in 0..idims.len() {
                coords.push(if d == ivd {
                    Ix::C(0)
                } else {
                    *si.next().unwrap_or(&Ix::C(0))
                });
            }
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
                        scalar::to_index64(&mut e.b, v).map_err(|m| unsupported(comp, instr, m))?
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
                ok = Some(match ok {
                    Some(p) => e.b.pand(p, c),
                    None => c,
                });
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

/// A `topk` kernel for the root `topk` (outputs 0: values, 1: `s32` indices).
///
/// One thread per operand element computes its rank in its row: the number of elements that
/// come before it (greater, or smaller for `largest=false`, in the total order, or equal at a
/// lower index: ties keep index order, as XLA's sort-based top-k). Ranks are a permutation of the
/// row, so each of the `k` output slots is written by exactly one thread and the result is
/// deterministic. The work is `n` comparisons per element: rows are short in practice
/// (vocabularies of experts, beams), and the kernel needs no shared memory or synchronisation.
pub fn topk_kernel(
    req: &KernelRequest<'_>,
    comp: &Computation,
    name: &str,
    id: InstrId,
) -> Result<EmittedKernel, CodegenError> {
    let instr = comp
        .get(id)
        .ok_or_else(|| CodegenError::Invalid(format!("no instruction {id:?}")))?;
    let err = |e: &str| unsupported(comp, instr, e);
    let [x] = instr.operands.as_slice() else {
        return Err(err("topk takes one operand"));
    };
    let x = *x;
    let dims = comp
        .get(x)
        .map(|i| dims_of(&i.shape))
        .ok_or_else(|| err("bad operand"))?;
    let Some((&n, _)) = dims.split_last() else {
        return Err(err("topk needs an operand of rank 1 or more"));
    };
    let k = instr.attrs.k.ok_or_else(|| err("topk without k"))?;
    let k = u64::try_from(k).map_err(|_| err("k is negative"))?;
    if k > n {
        return Err(err("k exceeds the last dimension"));
    }
    let largest = instr.attrs.largest.unwrap_or(true);
    let total: u64 = dims.iter().product();
    check_size(comp, instr, total)?;
    let rank = dims.len();
    let mut f = Frame::new(req, comp, name, &[0, 1]);
    let ctx = Ctx {
        comp,
        params: ParamSrc::Buffers(f.inputs.clone()),
        id: 0,
    };
    let out_ptrs = f.outputs.clone();
    let before = if largest {
        hlo::ir::ComparisonDirection::Gt
    } else {
        hlo::ir::ComparisonDirection::Lt
    };
    let total_order = Some(hlo::ir::ComparisonType::TotalOrder);
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
                .map_err(|m| unsupported(comp, instr, m))?;
            let same = scalar::compare(
                &mut e.b,
                hlo::ir::ComparisonDirection::Eq,
                total_order,
                y,
                me,
            )
            .map_err(|m| unsupported(comp, instr, m))?;
            let lower = e.b.setp(CmpOp::Lt, Type::U32, j.into(), pos.into());
            let tie = e.b.pand(same.reg, lower);
            let first = e.b.por(ahead.reg, tie);
            let inc = e.b.selp(Type::U32, Src::I(1), Src::I(0), first);
            e.b.op_to(
                count,
                O::Add,
                vec![super::builder::t(Type::U32)],
                &[count.into(), inc.into()],
            );
            Ok(())
        })?;
        let kept =
            e.b.setp(CmpOp::Lt, Type::U32, count.into(), Src::I(k as i64));
        e.when(kept, |e| {
            // Output slot: the row's first slot plus the rank.
            let row = e.b.bin(O::Sub, &[], Type::U32, i.into(), pos.into());
            let row =
                e.b.bin(O::Div, &[], Type::U32, row.into(), Src::I(n as i64));
            let slot = e.b.op(
                O::Mad,
                vec![ptx::ast::Modifier::Lo, super::builder::t(Type::U32)],
                Type::U32,
                &[row.into(), Src::I(k as i64), count.into()],
            );
            store_at(e, out_ptrs[0], Ix::R(slot), me)?;
            let at = Val {
                ty: P::S32,
                reg: pos,
            };
            store_at(e, out_ptrs[1], Ix::R(slot), at)
        })
    })?;
    Ok(f.finish_1d(req, total, 0))
}

/// A `select-and-scatter` kernel for the root instruction (the max-pool gradient).
///
/// Gather form, one thread per operand element, so no atomics and a deterministic order: the
/// thread visits every window that covers its element (at most `ceil(size/stride)` per
/// dimension), in increasing window order as XLA's evaluator does, repeats the window's
/// selection (the first element in row-major order, replaced whenever `select(current,
/// candidate)` is false; padding positions are never selected), and when the selection is its
/// own element combines that window's `source` value into its accumulator, which starts at
/// `init_value`. Overlapping windows are therefore exact.
pub fn select_and_scatter_kernel(
    req: &KernelRequest<'_>,
    comp: &Computation,
    name: &str,
    id: InstrId,
) -> Result<EmittedKernel, CodegenError> {
    let instr = comp
        .get(id)
        .ok_or_else(|| CodegenError::Invalid(format!("no instruction {id:?}")))?;
    let err = |e: &str| unsupported(comp, instr, e);
    let [operand, source, init] = instr.operands.as_slice() else {
        return Err(err(
            "select-and-scatter takes operand, source and init_value",
        ));
    };
    let (operand, source, init) = (*operand, *source, *init);
    let shape_of = |id: InstrId| {
        comp.get(id)
            .map(|i| dims_of(&i.shape))
            .ok_or_else(|| err("bad operand"))
    };
    let odims = shape_of(operand)?;
    let sdims = shape_of(source)?;
    let window = instr
        .attrs
        .window
        .clone()
        .ok_or_else(|| err("select-and-scatter without window"))?;
    if window.dims.len() != odims.len() || sdims.len() != odims.len() {
        return Err(err("window, source and operand ranks differ"));
    }
    if window
        .dims
        .iter()
        .any(|w| w.lhs_dilation > 1 || w.rhs_dilation > 1 || w.size < 1 || w.stride < 1)
    {
        return Err(err(
            "select-and-scatter windows need size and stride >= 1 and no dilation",
        ));
    }
    let select = instr
        .attrs
        .select
        .ok_or_else(|| err("select-and-scatter without select"))?;
    let scatter = instr
        .attrs
        .scatter
        .ok_or_else(|| err("select-and-scatter without scatter"))?;
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
    let ctx = Ctx {
        comp,
        params: ParamSrc::Buffers(f.inputs.clone()),
        id: 0,
    };
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
                let ws = e.b.bin(
                    O::Mul,
                    &[ptx::ast::Modifier::Lo],
                    Type::S32,
                    wd.into(),
                    Src::I(w.stride),
                );
                let r = e.b.bin(O::Sub, &[], Type::S32, p.into(), ws.into());
                let c1 = e.b.setp(CmpOp::Ge, Type::S32, wd.into(), Src::I(0));
                let c2 =
                    e.b.setp(CmpOp::Lt, Type::S32, wd.into(), Src::I(sdims[d] as i64));
                let c3 = e.b.setp(CmpOp::Ge, Type::S32, r.into(), Src::I(0));
                let c4 = e.b.setp(CmpOp::Lt, Type::S32, r.into(), Src::I(w.size));
                let c = e.b.pand(c1, c2);
                let c = e.b.pand(c, c3);
                let c = e.b.pand(c, c4);
                ok = Some(match ok {
                    Some(x) => e.b.pand(x, c),
                    None => c,
                });
                win.push(Ix::R(wd));
                rel.push(Ix::R(r));
            }
            let Some(ok) = ok else {
                return Err(err("select-and-scatter of rank 0"));
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
                        let a = e.b.bin(
                            O::Mul,
                            &[ptx::ast::Modifier::Lo],
                            Type::S32,
                            wd.into(),
                            Src::I(w.stride),
                        );
                        let a = e.b.bin(O::Add, &[], Type::S32, a.into(), jd.into());
                        let a = e.b.bin(O::Sub, &[], Type::S32, a.into(), Src::I(w.pad_low));
                        let ge = e.b.setp(CmpOp::Ge, Type::S32, a.into(), Src::I(0));
                        let lt =
                            e.b.setp(CmpOp::Lt, Type::S32, a.into(), Src::I(odims[d] as i64));
                        let c = e.b.pand(ge, lt);
                        inb = Some(match inb {
                            Some(x) => e.b.pand(x, c),
                            None => c,
                        });
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
                        };
                        let nv = scalar::select(&mut e.b, pick, v, sel[0])
                            .map_err(|m| unsupported(comp, instr, m))?;
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

/// True for instructions that need their own kernel shape (not a loop).
pub fn is_special_root(op: H) -> bool {
    matches!(
        op,
        H::Reduce | H::Sort | H::Scatter | H::TopK | H::SelectAndScatter
    )
}
