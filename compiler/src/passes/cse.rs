//! Common subexpression elimination: an instruction equal to an earlier one (same opcode,
//! shape, operands and attributes; reducers compared by structure, not by name) is replaced by
//! it. Instructions with side effects, parameters and random-number generators are never merged.
use std::collections::BTreeMap;

use hlo::Computation;
use hlo::{ComputationId, HloModule, InstrId, Instruction, Opcode};

use crate::error::CompileError;
use crate::passes::dce::has_side_effect;
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};

/// Runs the pass on every reachable computation.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::Reachable, |module, comp| {
        cse(module, comp).map(Some)
    })
}

/// True when two computations compute the same function (instruction by instruction, names
/// ignored).
pub(crate) fn equivalent(module: &HloModule, a: ComputationId, b: ComputationId) -> bool {
    if a == b {
        return true;
    }
    let (Some(x), Some(y)) = (module.get(a), module.get(b)) else {
        return false;
    };
    x.instructions.len() == y.instructions.len()
        && x.params == y.params
        && x.root == y.root
        && x.instructions.iter().zip(&y.instructions).all(|(i, j)| {
            i.opcode == j.opcode
                && i.shape == j.shape
                && i.operands == j.operands
                && i.attrs == j.attrs
        })
}

fn same(module: &HloModule, a: &Instruction, b: &Instruction) -> bool {
    a.opcode == b.opcode
        && a.shape == b.shape
        && a.operands == b.operands
        && same_attrs(module, a, b)
}

/// Attributes equal, a reducer (`to_apply`) compared by structure, not by name: two
/// instructions whose reducers were cloned under different names still merge (CSE here, and
/// `while-repeated`'s comparison of two state elements).
pub(crate) fn same_attrs(module: &HloModule, a: &Instruction, b: &Instruction) -> bool {
    if a.attrs == b.attrs {
        return true;
    }
    match (a.attrs.to_apply, b.attrs.to_apply) {
        (Some(x), Some(y)) if equivalent(module, x, y) => {
            let mut aa = a.attrs.clone();
            aa.to_apply = b.attrs.to_apply;
            aa == b.attrs
        }
        _ => false,
    }
}

pub(crate) fn mergeable(i: &Instruction) -> bool {
    !has_side_effect(i)
        && !matches!(
            i.opcode,
            Opcode::Parameter
                | Opcode::Rng
                | Opcode::RngBitGenerator
                | Opcode::RngGetAndUpdateState
                | Opcode::CustomCall
                | Opcode::AllReduce
                | Opcode::AllGather
                | Opcode::ReduceScatter
                | Opcode::AfterAll
                | Opcode::While
                | Opcode::Conditional
        )
}

/// CSE of one computation.
pub fn cse(module: &HloModule, comp: &Computation) -> Result<Computation, CompileError> {
    let mut seen: BTreeMap<(Opcode, Vec<InstrId>), Vec<InstrId>> = BTreeMap::new();
    rebuild(comp, |r, _, old| {
        let instr = r.remapped(old)?;
        if !mergeable(&instr) {
            return Ok(Some(r.push(instr)));
        }
        let key = (instr.opcode, instr.operands.clone());
        let found = seen.get(&key).and_then(|c| {
            c.iter().copied().find(|&e| {
                r.instrs()
                    .get(e.index())
                    .is_some_and(|x| same(module, x, &instr))
            })
        });
        if let Some(e) = found {
            return Ok(Some(e));
        }
        let new = r.push(instr);
        seen.entry(key).or_default().push(new);
        Ok(Some(new))
    })
}
