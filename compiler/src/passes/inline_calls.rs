//! Inlines `call` instructions, and `fusion` instructions of modules that arrive already fused
//! (the compiler makes its own fusion decisions), into their callers.
use hlo::ir::Computation;
use hlo::{ComputationId, HloModule, Instruction, Opcode};

use crate::error::CompileError;
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};

/// The computation an instruction is replaced by, when it is inlined.
fn callee(instr: &Instruction) -> Option<ComputationId> {
    match instr.opcode {
        Opcode::Call => instr.attrs.to_apply,
        Opcode::Fusion => instr.attrs.calls.as_ref().and_then(|c| c.first().copied()),
        _ => None,
    }
}

/// Runs the pass on every reachable computation, callees first.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::Reachable, |module, comp| {
        if comp.instructions.iter().any(|i| callee(i).is_some()) {
            inline_into(module, comp).map(Some)
        } else {
            Ok(None)
        }
    })
}

/// Inlines the calls of one computation (its callees were rewritten before it).
fn inline_into(module: &HloModule, comp: &Computation) -> Result<Computation, CompileError> {
    let mut counter = 0usize;
    rebuild(comp, |r, _, instr| {
        let Some(c) = callee(instr) else {
            return r.keep(instr).map(Some);
        };
        let args = r.operands(instr)?;
        r.inline(
            module,
            c,
            args,
            instr,
            |_| None,
            |name| {
                counter += 1;
                format!("{name}.inl{counter}")
            },
        )
        .map(Some)
    })
}
