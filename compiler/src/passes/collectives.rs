//! Collectives along a non-leading dimension: the runtime's all-gather and reduce-scatter work
//! on the leading dimension (docs/artifact.md), so `all-gather(x), dimensions={d}` becomes
//! `transpose(all-gather(transpose(x)), dimensions={0})` (and likewise for reduce-scatter)
//! unless every dimension before `d` has size 1, where the two layouts coincide.
use hlo::Computation;
use hlo::{HloModule, Instruction, Opcode};

use crate::error::CompileError;
use crate::passes::rebuild::{for_each_computation, permuted, rebuild, transpose, Scope};

/// Runs the pass on every reachable computation that has a collective to rewrite.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::Reachable, |_, comp| {
        if comp.instructions.iter().any(needs_rewrite) {
            rewrite(comp).map(Some)
        } else {
            Ok(None)
        }
    })
}

fn gather_dim(instr: &Instruction) -> Option<usize> {
    match instr.attrs.dimensions.as_deref() {
        Some([d]) => usize::try_from(*d).ok(),
        _ => None,
    }
}

fn needs_rewrite(instr: &Instruction) -> bool {
    if !matches!(instr.opcode, Opcode::AllGather | Opcode::ReduceScatter) || !instr.shape.is_array()
    {
        return false;
    }
    match gather_dim(instr) {
        Some(d) => instr.shape.dims().iter().take(d).any(|&n| n != 1),
        None => false,
    }
}

fn rewrite(comp: &Computation) -> Result<Computation, CompileError> {
    rebuild(comp, |r, _, old| {
        let instr = r.remapped(old)?;
        let operand = match (needs_rewrite(&instr), instr.operands.as_slice()) {
            (true, &[operand]) => operand,
            _ => return Ok(Some(r.push(instr))),
        };
        let d = gather_dim(&instr).unwrap_or(0);
        let rank = instr.shape.rank();
        let mut perm: Vec<usize> = vec![d];
        perm.extend((0..rank).filter(|&i| i != d));
        let mut inverse = vec![0usize; rank];
        for (i, &p) in perm.iter().enumerate() {
            if let Some(slot) = inverse.get_mut(p) {
                *slot = i;
            }
        }
        let operand_shape = r
            .instrs()
            .get(operand.index())
            .map(|o| o.shape.clone())
            .ok_or_else(|| CompileError::Internal("collective operand missing".into()))?;
        let t_in = r.push(transpose(
            format!("{}.lead_in", instr.name),
            operand,
            permuted(&operand_shape, &perm),
            &perm,
            &instr,
        ));
        let mut coll = instr.clone();
        coll.operands = vec![t_in];
        coll.shape = permuted(&instr.shape, &perm);
        coll.attrs.dimensions = Some(vec![0]);
        coll.name = format!("{}.lead", instr.name);
        let c = r.push(coll);
        Ok(Some(r.push(transpose(
            instr.name.clone(),
            c,
            instr.shape.clone(),
            &inverse,
            &instr,
        ))))
    })
}
