//! Row kernels: reductions along the trailing dimensions fused with their elementwise producers
//! and consumers, one block per row (XLA's row-reduction fusion; softmax, layernorm and
//! logsumexp become one kernel each).
//!
//! The fusion planner forms the group ([`crate::fusion::row_dims`] says when one is valid). For
//! each row the block computes the group's reductions in topological order, each exactly as the
//! reduction kernel does (thread-strided accumulation, shared-memory tree, warp shuffles: the
//! same numerics, see `super::kernels::ReduceSpec::block`); thread 0 puts the result in a
//! shared slot of its own, and after a barrier every thread reads it and the emitter uses it
//! wherever the reduce is read (only ever at the current row). Then the threads compute the
//! root's elements of the row. Nothing but the root's output is written to global memory.
use hlo::Opcode as H;
use hlo::{Computation, InstrId};
use ptx::{Dim, Opcode as O, SpecialReg, StateSpace, Type};

use super::builder::Src;
use super::elemental::{dims_of, elem, Ix};
use super::kernels::{
    block_reduce, check_size, grid_stride, shared_slot, store_at, thread_loop_by4, Frame,
    ReduceSpec,
};
use super::scalar;
use super::{CodegenError, EmittedKernel, KernelRequest};

/// The row dimensions when `comp` is a row fusion: an array root that is not itself the only
/// reduce, and a valid row group (see [`crate::fusion::row_dims`]).
pub fn detect(comp: &Computation) -> Option<Vec<i64>> {
    let root = comp.root_instruction()?;
    if !root.shape.is_array() || matches!(root.opcode, H::Sort | H::Scatter | H::Tuple) {
        return None;
    }
    let members: Vec<InstrId> = comp
        .iter()
        .filter(|(_, i)| i.opcode != H::Parameter)
        .map(|(id, _)| id)
        .collect();
    let reduces = members
        .iter()
        .filter(|&&id| comp.get(id).is_some_and(|i| i.opcode == H::Reduce))
        .count();
    let lone_reduce = reduces == 1 && root.opcode == H::Reduce;
    if reduces == 0 || lone_reduce {
        return None;
    }
    crate::fusion::row_dims(comp, &members, comp.root)
}

/// The row kernel of `comp` for row dimensions `rows` (from [`detect`]).
pub fn row_kernel(
    req: &KernelRequest<'_>,
    comp: &Computation,
    name: &str,
    rows: &[i64],
) -> Result<EmittedKernel, CodegenError> {
    let root = comp
        .root_instruction()
        .ok_or_else(|| CodegenError::Invalid(format!("computation {} is empty", comp.name)))?;
    let row_dims: Vec<u64> = rows.iter().map(|&d| d.max(0) as u64).collect();
    let root_dims = dims_of(&root.shape);
    let col_dims: Vec<u64> = root_dims.get(row_dims.len()..).unwrap_or(&[]).to_vec();
    let n_rows: u64 = row_dims.iter().product();
    let n_cols: u64 = col_dims.iter().product();
    check_size(comp, root, n_rows.saturating_mul(n_cols))?;
    // The reductions in topological order (the outlined computation lists its members so).
    let reduces: Vec<(InstrId, ReduceSpec)> = comp
        .iter()
        .filter(|(_, i)| i.opcode == H::Reduce)
        .map(|(id, _)| ReduceSpec::new(comp, id).map(|s| (id, s)))
        .collect::<Result<_, _>>()?;
    // One block size for all: the largest any reduction would get on its own, which gives each
    // the same result as its own kernel would when their rows have one length (softmax,
    // layernorm, logsumexp).
    let block = reduces
        .iter()
        .map(|(_, s)| s.block(req))
        .max()
        .unwrap_or(32);
    let tree_bytes = reduces
        .iter()
        .map(|(_, s)| s.shared_bytes(block))
        .max()
        .unwrap_or(0);
    // After the tree: one 8-byte broadcast slot per reduction.
    let shared = tree_bytes + 8 * reduces.len() as u64;
    let mut f = Frame::new(req, comp, name, &[0]);
    let ctx = f.ctx(comp);
    let out = f
        .outputs
        .first()
        .copied()
        .ok_or_else(|| CodegenError::Invalid(format!("row kernel {name} without an output")))?;
    let tid = f.e.b.special(SpecialReg::Tid(Dim::X));
    let my_slot = shared_slot(&mut f.e, tid);
    let smem = f.e.b.symbol_addr(super::builder::SHARED_NAME);
    let row_broadcasts: Vec<(InstrId, usize)> = row_broadcasts(comp, &row_dims)
        .into_iter()
        .filter_map(|b| Some((b, comp.get(b)?.shape.rank())))
        .collect();
    grid_stride(&mut f.e, true, n_rows, |e, r| {
        let ridx = e.delinearize(Ix::R(r), &row_dims);
        // A parameter with one value per row, broadcast along the columns (logsumexp's row
        // maximum from the kernel before): loaded once per row, not once per element.
        for &(b, rank) in &row_broadcasts {
            let mut at_row = ridx.clone();
            at_row.resize(rank, Ix::C(0));
            let v = e.emit1(&ctx, b, &at_row)?;
            e.set_row_value(ctx.id, b, vec![v]);
        }
        for (k, (id, spec)) in reduces.iter().enumerate() {
            let ty = comp
                .get(*id)
                .and_then(|i| elem(&i.shape))
                .ok_or_else(|| CodegenError::Invalid("reduce without an element type".into()))?;
            let slot = e.b.bin(
                O::Add,
                &[],
                Type::S64,
                smem.into(),
                Src::I((tree_bytes + 8 * k as u64) as i64),
            );
            block_reduce(e, &ctx, spec, &ridx, tid, my_slot, block, |e, acc| {
                let v = *acc
                    .first()
                    .ok_or_else(|| CodegenError::Invalid("reduce without a result".into()))?;
                scalar::store(&mut e.b, StateSpace::Shared, slot, v).map_err(CodegenError::from)
            })?;
            e.b.barrier();
            let v = scalar::load(&mut e.b, StateSpace::Shared, ty, slot)?;
            e.set_row_value(ctx.id, *id, vec![v]);
        }
        let base = e.b.op(
            O::Mul,
            vec![ptx::Modifier::Lo, super::builder::t(Type::U32)],
            Type::U32,
            &[r.into(), Src::I(n_cols as i64)],
        );
        thread_loop_by4(e, tid, block, n_cols, |e, c| {
            let cidx = e.delinearize(Ix::R(c), &col_dims);
            let mut full = ridx.clone();
            full.extend(cidx);
            let v = e.emit1(&ctx, comp.root, &full)?;
            let lin = e.b.bin(O::Add, &[], Type::U32, base.into(), c.into());
            store_at(e, out, Ix::R(lin), v)
        })?;
        e.clear_row_values();
        // Every thread is done with this row's shared slots before the next row writes them.
        e.b.barrier();
        Ok(())
    })?;
    Ok(f.finish_blocks(req, n_rows, block, shared))
}

/// The broadcasts of `comp` that give each row one value: arrays whose leading dimensions are
/// the rows, with every operand dimension mapped into them, of a parameter (through
/// reshapes). A row kernel reads every such array at its current row only, so the
/// broadcast's value is the same at every other index there.
fn row_broadcasts(comp: &Computation, row_dims: &[u64]) -> Vec<InstrId> {
    let n_row_dims = row_dims.len();
    let from_parameter = |mut id: InstrId| loop {
        match comp.get(id) {
            Some(i) if i.opcode == H::Parameter => return true,
            Some(i) if matches!(i.opcode, H::Reshape | H::Bitcast) => match i.operands.first() {
                Some(&o) => id = o,
                None => return false,
            },
            _ => return false,
        }
    };
    comp.iter()
        .filter(|(_, i)| {
            i.opcode == H::Broadcast
                && dims_of(&i.shape).get(..n_row_dims) == Some(row_dims)
                && i.attrs
                    .dimensions
                    .as_ref()
                    .is_some_and(|d| d.iter().all(|&d| (0..n_row_dims as i64).contains(&d)))
                && i.operands.first().is_some_and(|&o| from_parameter(o))
        })
        .map(|(id, _)| id)
        .collect()
}
