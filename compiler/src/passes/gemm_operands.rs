//! Puts `dot` operands into a layout the gemm thunk reads directly.
//!
//! A gemm operand is a row-major matrix per batch (docs/artifact.md, "Gemm"): its dimensions must
//! be, in storage order, the batch dimensions, then the non-contracting and the contracting
//! dimensions as two contiguous groups (either order: the second order is a transposed matrix).
//! Operands in any other order get a `transpose` to `[batch, non-contracting, contracting]`
//! (lhs) or `[batch, contracting, non-contracting]` (rhs) first, which fusion turns into a kernel
//! (or fuses with the operand's producer). An operand that is itself a `transpose` is read
//! through the transpose's input when that input is readable in place (the gemm's `transpose`
//! flag replaces the kernel).
use hlo::{Computation, DotDimensionNumbers};
use hlo::{HloModule, InstrId, Instruction, Opcode, Shape};

use crate::error::CompileError;
use crate::passes::rebuild::{for_each_computation, permuted, rebuild, transpose, Rebuild, Scope};

/// Runs the pass on every reachable computation that has a dot.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::Reachable, |_, comp| {
        if comp.instructions.iter().any(|i| i.opcode == Opcode::Dot) {
            rewrite(comp).map(Some)
        } else {
            Ok(None)
        }
    })
}

/// How one operand of a dot is laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandLayout {
    /// Batch dimensions (always the leading ones, in order, once canonical).
    pub batch: Vec<usize>,
    /// Non-contracting dimensions in increasing order.
    pub free: Vec<usize>,
    /// Contracting dimensions in pairing order.
    pub contracting: Vec<usize>,
}

impl OperandLayout {
    fn of(rank: usize, batch: &[i64], contracting: &[i64]) -> Option<OperandLayout> {
        let conv = |v: &[i64]| -> Option<Vec<usize>> {
            v.iter()
                .map(|&d| usize::try_from(d).ok().filter(|&d| d < rank))
                .collect()
        };
        let batch = conv(batch)?;
        let contracting = conv(contracting)?;
        let free = (0..rank)
            .filter(|d| !batch.contains(d) && !contracting.contains(d))
            .collect();
        Some(OperandLayout {
            batch,
            free,
            contracting,
        })
    }

    /// `[batch, free, contracting]` (`free_first`) or `[batch, contracting, free]`.
    pub fn order(&self, free_first: bool) -> Vec<usize> {
        let mut v = self.batch.clone();
        if free_first {
            v.extend(&self.free);
            v.extend(&self.contracting);
        } else {
            v.extend(&self.contracting);
            v.extend(&self.free);
        }
        v
    }
}

fn is_identity(v: &[usize]) -> bool {
    v.iter().enumerate().all(|(i, &d)| i == d)
}

/// For a dot operand: `Some(transposed)` when the operand can be read in place
/// (`transposed` = stored as the other orientation), `None` when it needs a transpose.
/// `lhs` selects the lhs orientation (`[M, K]` untransposed) rather than the rhs one (`[K, N]`).
pub fn in_place(layout: &OperandLayout, lhs: bool) -> Option<bool> {
    if is_identity(&layout.order(lhs)) {
        Some(false)
    } else if is_identity(&layout.order(!lhs)) {
        Some(true)
    } else {
        None
    }
}

/// The layouts of both operands of a dot.
pub fn dot_layouts(
    comp: &Computation,
    dot: &Instruction,
) -> Option<(OperandLayout, OperandLayout)> {
    let dn = dot.attrs.dot_dimension_numbers.clone().unwrap_or_default();
    let l = comp.get(*dot.operands.first()?)?;
    let r = comp.get(*dot.operands.get(1)?)?;
    let ll = OperandLayout::of(l.shape.rank(), &dn.lhs_batch_dims, &dn.lhs_contracting_dims)?;
    let rl = OperandLayout::of(r.shape.rank(), &dn.rhs_batch_dims, &dn.rhs_contracting_dims)?;
    Some((ll, rl))
}

/// When the operand is a `transpose` whose input can be read in place with the dimension
/// numbers mapped through the permutation (free dimensions keeping their order), reads the
/// transpose's input directly (the gemm's `transpose` flag does the rest).
fn absorb_transpose(
    instrs: &[Instruction],
    operand: InstrId,
    layout: &OperandLayout,
    lhs: bool,
) -> Option<(InstrId, Vec<usize>, Vec<usize>)> {
    let t = instrs.get(operand.index())?;
    if t.opcode != Opcode::Transpose {
        return None;
    }
    let perm: Vec<usize> = t
        .attrs
        .dimensions
        .as_ref()?
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<_>>()?;
    let src = *t.operands.first()?;
    let map =
        |v: &[usize]| -> Option<Vec<usize>> { v.iter().map(|&d| perm.get(d).copied()).collect() };
    let batch = map(&layout.batch)?;
    let contracting = map(&layout.contracting)?;
    let free = map(&layout.free)?;
    if free.windows(2).any(|w| w[0] > w[1]) {
        return None;
    }
    let mapped = OperandLayout {
        batch: batch.clone(),
        free,
        contracting: contracting.clone(),
    };
    in_place(&mapped, lhs)?;
    Some((src, batch, contracting))
}

/// The operand as the gemm reads it, with its batch and contracting dimensions: in place, read
/// through a transpose in front of it, or through a new transpose to the canonical order.
fn fix(
    r: &mut Rebuild<'_>,
    dot: &Instruction,
    operand: InstrId,
    layout: &OperandLayout,
    lhs: bool,
    suffix: &str,
) -> (InstrId, Vec<usize>, Vec<usize>) {
    if let Some(absorbed) = absorb_transpose(r.instrs(), operand, layout, lhs) {
        return absorbed;
    }
    if in_place(layout, lhs).is_some() {
        return (operand, layout.batch.clone(), layout.contracting.clone());
    }
    let order = layout.order(lhs);
    let shape = r
        .instrs()
        .get(operand.index())
        .map(|o| o.shape.clone())
        .unwrap_or(Shape::Token);
    let t = r.push(transpose(
        format!("{}.{suffix}", dot.name),
        operand,
        permuted(&shape, &order),
        &order,
        dot,
    ));
    let nbatch = layout.batch.len();
    let nc = layout.contracting.len();
    let nf = layout.free.len();
    let contracting = if lhs {
        (nbatch + nf..nbatch + nf + nc).collect()
    } else {
        (nbatch..nbatch + nc).collect()
    };
    (t, (0..nbatch).collect(), contracting)
}

fn rewrite(comp: &Computation) -> Result<Computation, CompileError> {
    rebuild(comp, |r, _, old| {
        let mut instr = r.remapped(old)?;
        let layouts = match (instr.opcode, instr.operands.as_slice()) {
            (Opcode::Dot, &[l, r]) => dot_layouts(comp, old).map(|ls| (l, r, ls)),
            _ => None,
        };
        if let Some((l, rr, (ll, rl))) = layouts {
            let (l, lb, lc) = fix(r, old, l, &ll, true, "lhs_t");
            let (rr, rb, rc) = fix(r, old, rr, &rl, false, "rhs_t");
            let to_i = |v: Vec<usize>| v.into_iter().map(|d| d as i64).collect::<Vec<i64>>();
            instr.operands = vec![l, rr];
            instr.attrs.dot_dimension_numbers = Some(DotDimensionNumbers {
                lhs_batch_dims: to_i(lb),
                lhs_contracting_dims: to_i(lc),
                rhs_batch_dims: to_i(rb),
                rhs_contracting_dims: to_i(rc),
            });
        }
        Ok(Some(r.push(instr)))
    })
}
