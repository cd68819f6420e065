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
//!
//! Rows of at most 16 elements per thread (4,096 at 256 threads: softmax, attention and
//! layernorm rows) are *held*: each thread's elements are its chunks `t + j * block`, unrolled,
//! and the reductions and the root compute them in one cache scope, so what several of them
//! read (softmax's `exp`, attention's scaled scores) is computed once per element, not once per
//! phase. The sums are taken in the strided loop's order, so the results are the same.
use hlo::Opcode as H;
use hlo::{Computation, InstrId};
use ptx::{CmpOp, Dim, Opcode as O, SpecialReg, StateSpace, Type};

use super::builder::Src;
use super::elemental::{dims_of, elem, Ix};
use super::kernels::{
    block_reduce, check_size, grid_stride, held_reduce, shared_slot, store_at, thread_loop_by4,
    Frame, HeldChunk, ReduceSpec, ROW_TILE,
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
    let held = held_chunks(&mut f.e, &reduces, &root_dims, &col_dims, tid, block);
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
            let to_slot = |e: &mut super::elemental::Emitter<'_>, acc: &[scalar::Val]| {
                let v = *acc
                    .first()
                    .ok_or_else(|| CodegenError::Invalid("reduce without a result".into()))?;
                scalar::store(&mut e.b, StateSpace::Shared, slot, v).map_err(CodegenError::from)
            };
            match &held {
                Some(chunks) => {
                    held_reduce(e, &ctx, spec, &ridx, chunks, tid, my_slot, block, to_slot)?
                }
                None => block_reduce(e, &ctx, spec, &ridx, tid, my_slot, block, to_slot)?,
            }
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
        match &held {
            // The row's elements this thread holds: what the reductions computed at them is
            // reused.
            Some(chunks) => {
                for chunk in chunks {
                    let mut full = ridx.clone();
                    full.extend(chunk.idx.iter().copied());
                    let v = e.emit1(&ctx, comp.root, &full)?;
                    let store = |e: &mut super::elemental::Emitter<'_>| {
                        let lin =
                            e.b.bin(O::Add, &[], Type::U32, base.into(), chunk.col.into());
                        store_at(e, out, Ix::R(lin), v)
                    };
                    match chunk.valid {
                        Some(p) => e.when(p, store)?,
                        None => store(e)?,
                    }
                }
            }
            None => thread_loop_by4(e, tid, block, n_cols, |e, c| {
                let cidx = e.delinearize(Ix::R(c), &col_dims);
                let mut full = ridx.clone();
                full.extend(cidx);
                let v = e.emit1(&ctx, comp.root, &full)?;
                let lin = e.b.bin(O::Add, &[], Type::U32, base.into(), c.into());
                store_at(e, out, Ix::R(lin), v)
            })?,
        }
        e.clear_row_values();
        // Every thread is done with this row's shared slots before the next row writes them.
        e.b.barrier();
        Ok(())
    })?;
    Ok(f.finish_blocks(req, n_rows, block, shared))
}

/// The chunks of a row each thread holds, when the row is short enough (at most
/// [`ROW_TILE`] elements per thread, XLA's tile: a softmax or layernorm row of up to 4,096)
/// and every reduction reduces the root's columns: thread `t`'s chunk `j` is column
/// `t + j * block`, the order the strided loop takes them in. The row's reductions and its
/// output are then computed chunk by chunk in one cache scope, so a value the output and a
/// reduction both read (softmax's `exp`, a layernorm's centered input) is computed once per
/// element instead of once per reading phase. Column registers are computed once per kernel.
fn held_chunks(
    e: &mut super::elemental::Emitter<'_>,
    reduces: &[(InstrId, ReduceSpec)],
    root_dims: &[u64],
    col_dims: &[u64],
    tid: super::builder::Reg,
    block: u32,
) -> Option<Vec<HeldChunk>> {
    let n_cols: u64 = col_dims.iter().product();
    let chunks = n_cols.div_ceil(u64::from(block));
    let fits = reduces
        .iter()
        .all(|(_, s)| s.total_red == n_cols && s.reduces_suffix_of(root_dims));
    if n_cols == 0 || chunks > ROW_TILE || !fits {
        return None;
    }
    let mut out = Vec::new();
    for j in 0..chunks {
        let first = j * u64::from(block);
        let col = if j == 0 {
            tid
        } else {
            e.b.bin(O::Add, &[], Type::U32, tid.into(), Src::I(first as i64))
        };
        let (col, valid) = if first + u64::from(block) > n_cols {
            let valid =
                e.b.setp(CmpOp::Lt, Type::U32, col.into(), Src::I(n_cols as i64));
            let last = Src::I(n_cols as i64 - 1);
            (
                e.b.bin(O::Min, &[], Type::U32, col.into(), last),
                Some(valid),
            )
        } else {
            (col, None)
        };
        let idx = e.delinearize(Ix::R(col), col_dims);
        out.push(HeldChunk { col, idx, valid });
    }
    Some(out)
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
