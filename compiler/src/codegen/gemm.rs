//! Small gemms with their epilogue: a `dot` of two f32 matrices fused with the elementwise
//! instructions that consume it (bias, activation), as one plain kernel: XLA:GPU fuses an MLP
//! layer's bias and activation into its matmul the same way. No gemm thunk and no intermediate
//! buffer; no new construct for the runtime (a kernel thunk like any other).
//!
//! One block: the threads copy both operands into shared memory (each element read from global
//! memory once, as the gemm thunk reads it), then each computes its output elements: the dot
//! product over `k` in order with separately rounded `mul.rn` and `add.rn` (the emulated gemm
//! thunk's f32 arithmetic, so the result is the same), then the epilogue at that element.
//! The fusion planner only forms it when both operands fit in [`MAX_OPERAND_BYTES`]
//! ([`crate::fusion`]).
use hlo::{Computation, InstrId};
use hlo::{Opcode as H, PrimitiveType as P};
use ptx::{Dim, Opcode as O, SpecialReg, StateSpace, Type};

use super::builder::{Src, SHARED_NAME};
use super::elemental::Ix;
use super::kernels::{block_for, store_at, thread_loop, Frame, KernelSite};
use super::scalar;
use super::{CodegenError, EmittedKernel, LaunchDims};

/// Both operands together must fit in this much shared memory (below the 48 KiB every CUDA
/// target gives a block without opting in).
pub const MAX_OPERAND_BYTES: u64 = 32 * 1024;

/// `(dot, M, K, N)` of a gemm row of `[M, K] x [K, N]` f32 matrices that `comp` fuses with an
/// elementwise epilogue: the dot is its only dot, its operands are parameters, and everything
/// that reads it (up to the root) is elementwise with the dot's dimensions, so the epilogue
/// reads it only at the element being computed.
pub fn detect(comp: &Computation) -> Option<(InstrId, u64, u64, u64)> {
    let root = comp.root_instruction()?;
    if !root.shape.is_array() {
        return None;
    }
    let dots: Vec<InstrId> = comp
        .iter()
        .filter(|(_, i)| i.opcode == H::Dot)
        .map(|(id, _)| id)
        .collect();
    let [dot] = dots.as_slice() else {
        return None;
    };
    let (m, k, n) = crate::fusion::small_gemm(comp, *dot)?;
    let d = comp.get(*dot)?;
    if d.operands
        .iter()
        .any(|&o| comp.get(o).is_none_or(|o| o.opcode != H::Parameter))
    {
        return None;
    }
    let members: Vec<InstrId> = comp.iter().map(|(id, _)| id).collect();
    crate::fusion::epilogue_ok(comp, &members, *dot, comp.root).then_some((*dot, m, k, n))
}

/// The gemm-with-epilogue kernel of `comp` (from [`detect`]).
pub fn gemm_kernel(
    site: KernelSite<'_, '_>,
    (m, k, n): (u64, u64, u64),
) -> Result<EmittedKernel, CodegenError> {
    let KernelSite {
        req,
        comp,
        name,
        id: dot,
    } = site;
    let d = site.instr()?;
    let param_index = |o: InstrId| comp.params.iter().position(|&p| p == o);
    let (Some(lhs), Some(rhs)) = (
        d.operands.first().copied().and_then(param_index),
        d.operands.get(1).copied().and_then(param_index),
    ) else {
        return Err(CodegenError::Invalid(format!(
            "{}: the operands of the fused dot must be kernel inputs",
            d.name
        )));
    };
    let block = block_for(req, 256);
    let a_bytes = m * k * 4;
    let shared = a_bytes + k * n * 4;
    let mut f = Frame::new(req, comp, name, &[0]);
    let ctx = f.ctx(comp);
    let out =
        f.outputs.first().copied().ok_or_else(|| {
            CodegenError::Invalid(format!("gemm kernel {name} without an output"))
        })?;
    let (a_ptr, b_ptr) = (f.inputs[lhs], f.inputs[rhs]);
    let e = &mut f.e;
    let tid = e.b.special(SpecialReg::Tid(Dim::X));
    let smem = e.b.symbol_addr(SHARED_NAME);
    let b_base =
        e.b.bin(O::Add, &[], Type::S64, smem.into(), Src::I(a_bytes as i64));
    // Copy both operands to shared memory, each element once.
    for (ptr, base, count) in [(a_ptr, smem, m * k), (b_ptr, b_base, k * n)] {
        thread_loop(e, tid, block, count, |e, t| {
            let addr = e.elem_addr(ptr, Ix::R(t), P::F32);
            let v = scalar::load(&mut e.b, StateSpace::Global, P::F32, addr)?;
            let to = e.elem_addr(base, Ix::R(t), P::F32);
            scalar::store(&mut e.b, StateSpace::Shared, to, v).map_err(CodegenError::from)
        })?;
    }
    e.b.barrier();
    thread_loop(e, tid, block, m * n, |e, o| {
        let idx = e.delinearize(Ix::R(o), &[m, n]);
        let zero = scalar::konst_num(&mut e.b, P::F32, 0.0)?;
        let acc = e.fresh_copy(&[zero])?;
        let row = e.ix_mul(idx[0], k);
        e.counted_loop(k, |e, kk| {
            let ai = e.ix_add(row, Ix::R(kk));
            let a_at = e.elem_addr(smem, ai, P::F32);
            let x = scalar::load(&mut e.b, StateSpace::Shared, P::F32, a_at)?;
            let bi = e.ix_mul(Ix::R(kk), n);
            let bi = e.ix_add(bi, idx[1]);
            let b_at = e.elem_addr(b_base, bi, P::F32);
            let y = scalar::load(&mut e.b, StateSpace::Shared, P::F32, b_at)?;
            let p = scalar::binary(&mut e.b, H::Multiply, x, y)?;
            let s = scalar::binary(&mut e.b, H::Add, acc[0], p)?;
            e.update(&acc, &[s])
        })?;
        e.set_row_value(ctx.id, dot, acc.clone());
        let v = e.emit1(&ctx, comp.root, &idx)?;
        e.clear_row_values();
        store_at(e, out, Ix::R(o), v)
    })?;
    Ok(f.finish(
        req,
        LaunchDims {
            grid: [1, 1, 1],
            block: [block, 1, 1],
        },
        shared,
    ))
}
