//! Inlines `call` instructions, and `fusion` instructions of modules that arrive already fused
//! (the compiler makes its own fusion decisions), into their callers.
use hlo::ir::Computation;
use hlo::{HloModule, InstrId, Opcode};

use crate::error::CompileError;
use crate::graph::{remap, topo_order, Rebuilder};

/// Runs the pass on every reachable computation, callees first.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for cid in module.post_order() {
        let Some(comp) = module.get(cid) else {
            continue;
        };
        let needs = comp
            .instructions
            .iter()
            .any(|i| matches!(i.opcode, Opcode::Call | Opcode::Fusion));
        if !needs {
            continue;
        }
        let new = inline_into(module, comp)?;
        module.computations[cid.index()] = new;
    }
    Ok(())
}

fn inline_into(module: &HloModule, comp: &Computation) -> Result<Computation, CompileError> {
    let order = topo_order(comp)?;
    let mut map: Vec<Option<InstrId>> = vec![None; comp.instructions.len()];
    let mut b = Rebuilder::default();
    let mut counter = 0usize;
    for id in order {
        let instr = &comp[id];
        let operands = instr
            .operands
            .iter()
            .map(|&o| remap(&map, o, &comp.name))
            .collect::<Result<Vec<_>, _>>()?;
        let callee = match instr.opcode {
            Opcode::Call => instr.attrs.to_apply,
            Opcode::Fusion => instr.attrs.calls.as_ref().and_then(|c| c.first().copied()),
            _ => None,
        };
        let Some(callee) = callee else {
            let mut new = instr.clone();
            new.operands = operands;
            map[id.index()] = Some(b.push(new));
            continue;
        };
        let callee_comp = module.get(callee).ok_or_else(|| {
            CompileError::InvalidModule(format!(
                "{} calls a computation that does not exist",
                instr.name
            ))
        })?;
        if callee_comp.params.len() != operands.len() {
            return Err(CompileError::InvalidModule(format!(
                "{} passes {} operands to {}, which has {} parameters",
                instr.name,
                operands.len(),
                callee_comp.name,
                callee_comp.params.len()
            )));
        }
        let mut inner: Vec<Option<InstrId>> = vec![None; callee_comp.instructions.len()];
        for (n, &p) in callee_comp.params.iter().enumerate() {
            if let Some(slot) = inner.get_mut(p.index()) {
                *slot = operands.get(n).copied();
            }
        }
        for cid in topo_order(callee_comp)? {
            if inner[cid.index()].is_some() {
                continue;
            }
            let ci = &callee_comp[cid];
            if ci.opcode == Opcode::Parameter {
                return Err(CompileError::InvalidModule(format!(
                    "parameter {} of {} is not in its parameter list",
                    ci.name, callee_comp.name
                )));
            }
            let mut new = ci.clone();
            new.operands = ci
                .operands
                .iter()
                .map(|&o| remap(&inner, o, &callee_comp.name))
                .collect::<Result<Vec<_>, _>>()?;
            counter += 1;
            new.name = format!("{}.inl{}", ci.name, counter);
            inner[cid.index()] = Some(b.push(new));
        }
        map[id.index()] = Some(remap(&inner, callee_comp.root, &callee_comp.name)?);
    }
    let params = comp
        .params
        .iter()
        .map(|&p| remap(&map, p, &comp.name))
        .collect::<Result<Vec<_>, _>>()?;
    let root = remap(&map, comp.root, &comp.name)?;
    let mut out = comp.clone();
    b.finish(&mut out, params, root);
    Ok(out)
}
