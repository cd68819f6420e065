//! Kernel shapes: loop (one thread per output element, grid-stride), reduction (one block per
//! output element, thread-strided accumulation and a shared-memory tree), sort (one block per
//! row, odd-even transposition sort in the output buffers: stable), scatter (one thread per
//! output element applying every matching update in order: deterministic).
mod reduce;
mod reduce_serial;
mod scatter;
mod select_and_scatter;
mod sort;
mod topk;

pub use reduce::reduce_kernel;
pub(super) use reduce::{block_reduce, held_reduce, shared_slot, HeldChunk, ReduceSpec, ROW_TILE};
pub use reduce_serial::reduction_kernel;
pub use scatter::scatter_kernel;
pub use select_and_scatter::select_and_scatter_kernel;
pub use sort::sort_kernel;
pub use topk::topk_kernel;

use hlo::{Computation, InstrId, Instruction};
use hlo::{Opcode as H, PrimitiveType as P};
use ptx::{CmpOp, Dim, Opcode as O, SpecialReg, StateSpace, Type};

use super::elemental::{
    dims_of, elem, instr_of, unsupported, Ctx, Emitter, Ix, ParamSrc, ReduceAxes,
};
use super::scalar::{self, Val};
use super::{CodegenError, EmittedKernel, KernelArg, KernelRequest, LaunchDims};
use crate::codegen::builder::{Reg, Src, SHARED_NAME};

const BLOCK: u32 = 256;

/// One kernel to emit: the request, the fused computation, the kernel's name, and the
/// instruction the kernel is built around (its root; a gemm's dot). One value, so that every
/// kernel entry reads its instruction and names it in errors the same way.
#[derive(Clone, Copy)]
pub struct KernelSite<'s, 'm> {
    /// The request the fused computation came in.
    pub req: &'s KernelRequest<'m>,
    /// The fused computation.
    pub comp: &'s Computation,
    /// The kernel's name (unique in the executable).
    pub name: &'s str,
    /// The instruction of `comp` the kernel is built around.
    pub id: InstrId,
}

impl<'s, 'm> KernelSite<'s, 'm> {
    /// The site of instruction `id` of `comp`, as kernel `name`.
    pub fn new(
        req: &'s KernelRequest<'m>,
        comp: &'s Computation,
        name: &'s str,
        id: InstrId,
    ) -> KernelSite<'s, 'm> {
        KernelSite {
            req,
            comp,
            name,
            id,
        }
    }

    /// The site's instruction (an internal error when the id is not in the computation: ids
    /// come from the computation itself, see [`instr_of`]).
    pub fn instr(&self) -> Result<&'s Instruction, CodegenError> {
        instr_of(self.comp, self.id)
    }

    /// The error for a construct of the site's instruction that the kernel does not support.
    pub fn unsupported(&self, reason: impl Into<String>) -> CodegenError {
        match self.instr() {
            Ok(instr) => unsupported(self.comp, instr, reason),
            Err(missing) => missing,
        }
    }
}

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
        e.b.nan_minmax = req.target.sm >= 80;
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

    /// The emitter context of `comp` (the computation the frame was made for): its parameters
    /// read from the kernel's input buffers.
    pub(super) fn ctx<'c>(&self, comp: &'c Computation) -> Ctx<'c> {
        Ctx {
            comp,
            params: ParamSrc::Buffers(self.inputs.clone()),
            id: 0,
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
        self.finish_blocks(req, work.div_ceil(u64::from(block)), block, shared)
    }

    /// Finishes a kernel of `block` threads per block and one block per item (a row, a
    /// result element), as many blocks as cover the items (capped by [`grid_for`]: the kernels
    /// loop over the grid stride).
    pub(super) fn finish_blocks(
        self,
        req: &KernelRequest<'_>,
        items: u64,
        block: u32,
        shared: u64,
    ) -> EmittedKernel {
        let grid = grid_for(req, items);
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

/// Kernels index elements with 32-bit registers: `n` elements must fit (an error naming the
/// instruction otherwise).
pub(super) fn check_size(
    comp: &Computation,
    instr: &Instruction,
    n: u64,
) -> Result<(), CodegenError> {
    if n >= (1u64 << 31) {
        return Err(unsupported(comp, instr, "more than 2^31 elements"));
    }
    Ok(())
}

/// The dimensions of `id`, an operand of kernel root `instr` (an error naming `instr` when the
/// operand is missing).
pub(super) fn operand_dims(
    comp: &Computation,
    instr: &Instruction,
    id: InstrId,
) -> Result<Vec<u64>, CodegenError> {
    comp.get(id)
        .map(|i| dims_of(&i.shape))
        .ok_or_else(|| unsupported(comp, instr, "bad operand"))
}

/// The element types of `ids` (operands or init values of kernel root `instr`); `error` is the
/// reason given for one that is missing or tuple-shaped.
pub(super) fn elem_types(
    comp: &Computation,
    instr: &Instruction,
    ids: &[InstrId],
    error: &str,
) -> Result<Vec<P>, CodegenError> {
    ids.iter()
        .map(|&o| {
            comp.get(o)
                .and_then(|x| elem(&x.shape))
                .ok_or_else(|| unsupported(comp, instr, error))
        })
        .collect()
}

/// An index of `rank` entries: `rest` in order, with 0 at position `at` (a row's start along
/// the sorted dimension; scatter indices' index-vector dimension, filled in per component).
/// Entries past the end of `rest` are 0.
pub(super) fn with_zero_at(rest: &[Ix], rank: usize, at: usize) -> Vec<Ix> {
    let mut it = rest.iter();
    (0..rank)
        .map(|k| {
            if k == at {
                Ix::C(0)
            } else {
                *it.next().unwrap_or(&Ix::C(0))
            }
        })
        .collect()
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
        let g = e.b.mad_lo_u32(c.into(), nt.into(), t.into());
        let nc = e.b.special(SpecialReg::Nctaid(Dim::X));
        let s = e.b.mul_lo(Type::U32, nc.into(), nt.into());
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
    e.b.add_u32_to(i, i.into(), stride.into());
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
    e.b.add_u32_to(k, k.into(), Src::I(i64::from(block)));
    e.b.bra(None, &top);
    e.b.place(&end);
    Ok(())
}

/// [`thread_loop`] with its body emitted four times while a thread has four more elements
/// (`k + 3 * block < n`), then the plain loop for the rest: each thread still takes its
/// elements in the same order (a reduction's result is unchanged), with one bound check and
/// branch per four elements instead of per element.
pub(in crate::codegen) fn thread_loop_by4<'m, F>(
    e: &mut Emitter<'m>,
    start: Reg,
    block: u32,
    n: u64,
    mut body: F,
) -> Result<(), CodegenError>
where
    F: FnMut(&mut Emitter<'m>, Reg) -> Result<(), CodegenError>,
{
    let span = 3 * u64::from(block);
    if n <= span {
        return thread_loop(e, start, block, n, body);
    }
    let k = e.b.mov(Type::B32, start.into());
    let top = e.b.label();
    let rest = e.b.label();
    e.b.place(&top);
    let done =
        e.b.setp(CmpOp::Ge, Type::U32, k.into(), Src::I((n - span) as i64));
    e.b.bra_div(done, false, &rest);
    for _ in 0..4 {
        e.push();
        let r = body(e, k);
        e.pop();
        r?;
        e.b.add_u32_to(k, k.into(), Src::I(i64::from(block)));
    }
    e.b.bra(None, &top);
    e.b.place(&rest);
    thread_loop(e, k, block, n, body)
}

pub(super) fn store_at(
    e: &mut Emitter<'_>,
    base: Reg,
    lin: Ix,
    v: Val,
) -> Result<(), CodegenError> {
    let addr = e.elem_addr(base, lin, v.ty);
    scalar::store(&mut e.b, StateSpace::Global, addr, v).map_err(CodegenError::from)
}

pub(super) fn load_at(e: &mut Emitter<'_>, base: Reg, lin: Ix, ty: P) -> Result<Val, CodegenError> {
    let addr = e.elem_addr(base, lin, ty);
    scalar::load(&mut e.b, StateSpace::Global, ty, addr).map_err(CodegenError::from)
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
    let ctx = f.ctx(comp);
    let outputs = f.outputs.clone();
    let shared = share_scalar_inputs(&mut f, comp, n)?;
    let unroll = unroll_factor(&dims, n);
    grid_stride(&mut f.e, false, n / unroll, |e, i| {
        let first = match unroll {
            1 => Ix::R(i),
            u => Ix::R(e.b.bin(
                O::Shl,
                &[],
                Type::B32,
                i.into(),
                Src::I(i64::from(u.trailing_zeros())),
            )),
        };
        let idx0 = e.delinearize(first, &dims);
        // Every value first, then the stores: an output may alias an input (in-place).
        let mut vals = Vec::with_capacity(targets.len() * unroll as usize);
        for k in 0..unroll as u32 {
            let (lin, idx) = unrolled_index(e, first, &idx0, &dims, k);
            for (id, _) in targets {
                vals.push((lin, e.emit1(&ctx, *id, &idx)?));
            }
        }
        for (k, (lin, v)) in vals.into_iter().enumerate() {
            store_at(e, outputs[k % targets.len()], lin, v)?;
        }
        Ok(())
    })?;
    Ok(f.finish_1d(req, n / unroll, shared))
}

/// Consecutive elements per thread of a loop kernel: XLA's unroll factor for loop fusions (4,
/// when the minor-most dimension is a multiple of it, so that a thread's elements differ only
/// in their last index component, and the kernel is large enough to keep the device busy with
/// a quarter of the threads). Each element is still computed and stored on its own; the thread
/// setup and the loop's bound check and branch are shared by four elements instead of paid per
/// element (in an elementwise kernel they were half the instructions).
fn unroll_factor(dims: &[u64], n: u64) -> u64 {
    const UNROLL: u64 = 4;
    let minor = dims.last().copied().unwrap_or(1);
    if n >= UNROLL * 4096 && minor % UNROLL == 0 {
        UNROLL
    } else {
        1
    }
}

/// The linear and multi-index of element `first + k` of a loop kernel's thread, from those of
/// `first` (`idx0`): `k` added to the last component (it does not wrap: see [`unroll_factor`]).
/// The pair is recorded with the emitter, so that an operand of the kernel's shape reads
/// element `first + k` without re-linearizing its index.
fn unrolled_index(
    e: &mut Emitter<'_>,
    first: Ix,
    idx0: &[Ix],
    dims: &[u64],
    k: u32,
) -> (Ix, Vec<Ix>) {
    if k == 0 {
        return (first, idx0.to_vec());
    }
    let lin = e.ix_add(first, Ix::C(k));
    let mut idx = idx0.to_vec();
    if let Some(last) = idx.len().checked_sub(1) {
        idx[last] = match idx.len() {
            1 => lin,
            _ => e.ix_add(idx0[last], Ix::C(k)),
        };
        e.note_linear(&idx, dims, lin);
    }
    (lin, idx)
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
            scalar::store(&mut e.b, StateSpace::Shared, slot, v)?;
        }
        Ok(())
    })?;
    e.b.barrier();
    for (&(_, p, ty), &slot) in scalars.iter().zip(&slots) {
        let v = scalar::load(&mut e.b, StateSpace::Shared, ty, slot)?;
        e.set_row_value(0, p, vec![v]);
    }
    Ok(8 * scalars.len() as u64)
}
