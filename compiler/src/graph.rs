//! Small graph utilities over one computation: topological order, users, and the remapping of
//! old handles to new ones that rebuilding a computation uses ([`crate::passes::rebuild`]).
use hlo::Computation;
use hlo::InstrId;

use crate::error::{CompileError, MalformedModule};

/// Instructions in a deterministic topological order (operands before users), following program
/// order where it allows. Fails on dangling operands and cycles.
pub(crate) fn topo_order(comp: &Computation) -> Result<Vec<InstrId>, CompileError> {
    let n = comp.instructions.len();
    // 0 = unvisited, 1 = on stack, 2 = done.
    let mut state = vec![0u8; n];
    let mut out = Vec::with_capacity(n);
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let instr = &comp.instructions[node];
            if let Some(op) = instr.operands.get(*next) {
                *next += 1;
                let o = op.index();
                match state.get(o) {
                    None => {
                        return Err(CompileError::Malformed(MalformedModule::DanglingOperand {
                            instruction: instr.name.clone(),
                            computation: comp.name.clone(),
                        }))
                    }
                    Some(1) => {
                        return Err(CompileError::Malformed(MalformedModule::Cycle {
                            instruction: instr.name.clone(),
                            computation: comp.name.clone(),
                        }))
                    }
                    Some(0) => {
                        state[o] = 1;
                        stack.push((o, 0));
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                out.push(InstrId(node as u32));
                stack.pop();
            }
        }
    }
    Ok(out)
}

/// For every instruction, its users (each user once, in program order).
pub(crate) fn users(comp: &Computation) -> Vec<Vec<InstrId>> {
    let mut users: Vec<Vec<InstrId>> = vec![Vec::new(); comp.instructions.len()];
    for (id, instr) in comp.iter() {
        for op in &instr.operands {
            if let Some(u) = users.get_mut(op.index()) {
                if u.last() != Some(&id) {
                    u.push(id);
                }
            }
        }
    }
    users
}

/// Maps an old handle through a remapping table.
pub(crate) fn remap(
    map: &[Option<InstrId>],
    id: InstrId,
    comp: &str,
) -> Result<InstrId, CompileError> {
    map.get(id.index())
        .copied()
        .flatten()
        .ok_or_else(|| CompileError::Internal(format!("instruction {id:?} of {comp} not mapped")))
}
