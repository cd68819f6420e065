//! Inlines `call` instructions, and `fusion` instructions of modules that arrive already fused
//! (the compiler makes its own fusion decisions), into their callers.
//!
//! Only the computations that something other than a call still reaches afterwards are
//! rewritten: the entry, and every computation used as a loop body or condition, a branch, a
//! reducer or the like (from anywhere a call reaches). A computation reached only through calls
//! is copied into its callers and left as it was: nothing reaches it after the pass. Each call
//! site is expanded to its full depth at once (`Rebuild::inline`), so a chain of N nested
//! calls costs memory and time linear in N (rewriting every level in turn kept a flattened copy
//! per level, and a name grown by one suffix per level: quadratic).
//!
//! An inlined instruction is named as inlining each level on its own, callees first, names it:
//! `<name>.inl<i>.inl<j>...`, one suffix per call level, each level's count of the instructions
//! it took from its callees. Past [`MAX_NAMED_LEVELS`](crate::passes::rebuild::MAX_NAMED_LEVELS) levels, only the outermost suffix is kept
//! (still unique in the computation): one suffix per level made names, and memory, grow with
//! the square of the depth of a chain.
//!
//! A call graph that repeats its callees grows exponentially with its
//! depth when inlined (each level calling the next twice doubles it): the size each
//! computation would reach is counted first, in time linear in the module, and a computation
//! that would exceed [`MAX_INLINED_INSTRUCTIONS`] is refused before anything is copied.
use hlo::Computation;
use hlo::{ComputationId, HloModule, Instruction, Opcode};

use crate::error::{CompileError, MalformedModule};
use crate::passes::rebuild::{for_each_computation, rebuild, Rebuild, Scope};

/// The computation an instruction is replaced by, when it is inlined.
fn callee(instr: &Instruction) -> Option<ComputationId> {
    match instr.opcode {
        Opcode::Call => instr.attrs.to_apply,
        Opcode::Fusion => instr.attrs.calls.as_ref().and_then(|c| c.first().copied()),
        _ => None,
    }
}

/// Which computations are still reached after inlining: the entry, and those an instruction
/// that stays (not a call) refers to, from any computation the entry reaches.
fn kept(module: &HloModule) -> Vec<bool> {
    let n = module.computations.len();
    let mut kept = vec![false; n];
    let mut seen = vec![false; n];
    let mut stack = Vec::new();
    if let Some(flag) = kept.get_mut(module.entry.index()) {
        *flag = true;
        stack.push(module.entry);
    }
    while let Some(cid) = stack.pop() {
        match seen.get_mut(cid.index()) {
            Some(flag) if !*flag => *flag = true,
            _ => continue,
        }
        let Some(comp) = module.get(cid) else {
            continue;
        };
        for instr in &comp.instructions {
            match callee(instr) {
                // The callee's body is copied here; what it refers to stays.
                Some(c) => stack.push(c),
                None => {
                    for c in instr.called_computations() {
                        if let Some(flag) = kept.get_mut(c.index()) {
                            *flag = true;
                        }
                        stack.push(c);
                    }
                }
            }
        }
    }
    kept
}

/// The most instructions one computation may hold after inlining its calls: far past real
/// models (the largest export in the corpus has a few thousand instructions), and small enough
/// (an instruction is a few hundred bytes) that a call graph that repeats its callees, where
/// each level calling the next twice doubles the size, fails with a message instead of
/// exhausting memory.
pub const MAX_INLINED_INSTRUCTIONS: usize = 1 << 20;

/// Refuses a module where inlining would make a computation that `kept` says stays larger
/// than [`MAX_INLINED_INSTRUCTIONS`]. `order` is callees first, so each callee's inlined size
/// is known when its callers count it (a callee still open in a recursion counts 0: the
/// inlining refuses recursion itself).
fn check_size(
    module: &HloModule,
    order: &[ComputationId],
    kept: &[bool],
) -> Result<(), CompileError> {
    // Per computation, the instructions inlining copies of it: all but its parameters.
    let mut body = vec![0u64; module.computations.len()];
    for &cid in order {
        let Some(comp) = module.get(cid) else {
            continue;
        };
        let n = comp
            .instructions
            .iter()
            .filter(|i| i.opcode != Opcode::Parameter)
            .map(|i| match callee(i) {
                Some(c) => body.get(c.index()).copied().unwrap_or(0),
                None => 1,
            })
            .fold(0u64, u64::saturating_add);
        if let Some(slot) = body.get_mut(cid.index()) {
            *slot = n;
        }
        let total = n.saturating_add(comp.params.len() as u64);
        if total > MAX_INLINED_INSTRUCTIONS as u64 && kept.get(cid.index()) == Some(&true) {
            return Err(CompileError::Malformed(MalformedModule::InlineLimit {
                computation: comp.name.clone(),
                total,
                limit: MAX_INLINED_INSTRUCTIONS,
            }));
        }
    }
    Ok(())
}

/// Runs the pass on every computation that stays reachable, callees first.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    let kept = kept(module);
    let post_order = module.post_order();
    check_size(module, &post_order, &kept)?;
    let order = post_order
        .into_iter()
        .filter(|c| kept.get(c.index()) == Some(&true))
        .collect();
    for_each_computation(module, Scope::Listed(order), |module, comp| {
        if comp.instructions.iter().any(|i| callee(i).is_some()) {
            inline_into(module, comp).map(Some)
        } else {
            Ok(None)
        }
    })
}

/// Inlines every call of one computation, to any depth.
pub fn inline_into(module: &HloModule, comp: &Computation) -> Result<Computation, CompileError> {
    let mut counter = 0usize;
    rebuild(comp, |r: &mut Rebuild<'_>, _, instr| {
        let Some(c) = callee(instr) else {
            return r.keep(instr).map(Some);
        };
        let args = r.operands(instr)?;
        r.inline(module, c, args, instr, callee, |name, levels| {
            counter += 1;
            let mut name = name.to_owned();
            for k in levels.unwrap_or_default() {
                name.push_str(&format!(".inl{k}"));
            }
            name.push_str(&format!(".inl{counter}"));
            name
        })
        .map(Some)
    })
}
