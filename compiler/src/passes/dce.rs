//! Dead code elimination: keeps the parameters, the root, instructions with side effects and
//! everything they use; the survivors are renumbered in topological order.
use hlo::Computation;
use hlo::{HloModule, InstrId, Instruction, Opcode};

use crate::error::{CompileError, MalformedModule};
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};

/// True for instructions that must run even when nobody uses their value.
pub fn has_side_effect(instr: &Instruction) -> bool {
    match instr.opcode {
        Opcode::CustomCall => instr.attrs.custom_call_has_side_effect == Some(true),
        Opcode::Outfeed
        | Opcode::Infeed
        | Opcode::Send
        | Opcode::SendDone
        | Opcode::Recv
        | Opcode::RecvDone => true,
        _ => false,
    }
}

/// Runs the pass on every reachable computation.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::Reachable, |_, comp| dce(comp).map(Some))
}

/// Dead code elimination of one computation.
pub fn dce(comp: &Computation) -> Result<Computation, CompileError> {
    let n = comp.instructions.len();
    let mut live = vec![false; n];
    let mut stack: Vec<InstrId> = Vec::new();
    stack.push(comp.root);
    stack.extend(comp.params.iter().copied());
    stack.extend(
        comp.iter()
            .filter(|(_, i)| has_side_effect(i))
            .map(|(id, _)| id),
    );
    while let Some(id) = stack.pop() {
        let Some(flag) = live.get_mut(id.index()) else {
            return Err(CompileError::Malformed(
                MalformedModule::DanglingInstruction(comp.name.clone()),
            ));
        };
        if *flag {
            continue;
        }
        *flag = true;
        stack.extend(comp[id].operands.iter().copied());
    }
    rebuild(comp, |r, id, old| {
        if live.get(id.index()) == Some(&true) {
            r.keep(old).map(Some)
        } else {
            Ok(None)
        }
    })
}
