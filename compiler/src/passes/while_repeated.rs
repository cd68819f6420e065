//! Repeated loop state (XLA's `WhileLoopSimplifier`, "repeated while tuple indices"): two
//! elements `i < j` of a while loop's state tuple that start from the same instruction, and that
//! the body updates by the same computation (equal when the body's reads of element `i` and of
//! element `j` are taken to be equal), hold equal values on every iteration. JAX's `fori_loop`
//! carries its counter twice (the loop's own, and the body's argument), so every fori_loop has
//! such a pair.
//!
//! The rewrite: the body returns element `i`'s new value for element `j` too, and the body and
//! condition read element `i` wherever they read element `j`. Element `j`'s own update then
//! dies (dce), and lowering keeps both elements in one buffer (one initial copy, no update
//! copy), because their initial values and body results are the same locations
//! (`lower/control.rs`).
//!
//! Why it is sound, by induction over the iterations of the loop as written: at entry the two
//! elements are one instruction's value; if they are equal when an iteration starts, the two
//! results are computed by the same deterministic instructions from equal inputs, so they are
//! equal when it ends. Replacing a value by one that is provably equal to it changes nothing.
//! The comparison is structural: same opcode, shape and attributes (reducers by structure, as
//! [`super::cse`] compares them), operands pairwise equal, and only instructions CSE would
//! merge (no side effects, random numbers, custom calls, collectives or nested control flow).
//! A pair whose comparison needs more than [`MAX_COMPARED_PAIRS`] instruction pairs is left
//! alone, and one loop's comparisons together visit at most [`MAX_COMPARED_PAIRS`] plus
//! [`PAIRS_PER_BODY_INSTRUCTION`] per body instruction (then its remaining elements repeat
//! nothing), so the pass stays linear in the module however many elements start alike. The body and condition must belong to this loop alone (another loop calling them has
//! other initial values); the state must be a flat tuple built by a `tuple` instruction.
use std::collections::BTreeSet;

use hlo::Computation;
use hlo::{ComputationId, HloModule, InstrId, Instruction, Opcode};

use crate::error::CompileError;
use crate::passes::cse::{mergeable, same_attrs};

/// The most instruction pairs one comparison of two body results visits before it gives up
/// (and the pair stays as it is): keeps the pass linear on bodies of any size.
pub const MAX_COMPARED_PAIRS: usize = 4096;

/// What each instruction of a loop's body adds to the pairs all of that loop's comparisons may
/// visit together (on top of [`MAX_COMPARED_PAIRS`]).
pub const PAIRS_PER_BODY_INSTRUCTION: usize = 4;

/// One loop to rewrite: its body and condition, and for each state element the element whose
/// value it repeats (itself when none).
struct Plan {
    body: ComputationId,
    cond: ComputationId,
    repeats: Vec<usize>,
}

/// Runs the pass on every while loop of the module.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    // How many instructions call each computation: a body or condition shared by two loops is
    // left alone.
    let mut callers = vec![0usize; module.computations.len()];
    for comp in &module.computations {
        for instr in &comp.instructions {
            for c in instr.called_computations() {
                if let Some(n) = callers.get_mut(c.index()) {
                    *n += 1;
                }
            }
        }
    }
    let mut plans = Vec::new();
    for comp in &module.computations {
        for instr in &comp.instructions {
            if let Some(plan) = plan(module, comp, instr, &callers) {
                plans.push(plan);
            }
        }
    }
    for plan in plans {
        if let Some(body) = module.computations.get_mut(plan.body.index()) {
            redirect_reads(body, &plan.repeats);
            let root = body.root;
            if let Some(r) = body.instructions.get_mut(root.index()) {
                let first: Vec<InstrId> = r.operands.clone();
                for (j, &i) in plan.repeats.iter().enumerate() {
                    if let (Some(slot), Some(&v)) = (r.operands.get_mut(j), first.get(i)) {
                        *slot = v;
                    }
                }
            }
        }
        if let Some(cond) = module.computations.get_mut(plan.cond.index()) {
            redirect_reads(cond, &plan.repeats);
        }
    }
    Ok(())
}

/// The repeated elements of one while loop, when there are any and the loop qualifies.
fn plan(
    module: &HloModule,
    comp: &Computation,
    instr: &Instruction,
    callers: &[usize],
) -> Option<Plan> {
    if instr.opcode != Opcode::While {
        return None;
    }
    let (cond, body) = (instr.attrs.condition?, instr.attrs.body?);
    let only_caller = |c: ComputationId| callers.get(c.index()) == Some(&1);
    if cond == body || !only_caller(cond) || !only_caller(body) {
        return None;
    }
    let elems = instr.shape.tuple_shapes()?;
    if elems.iter().any(|e| e.is_tuple()) {
        return None;
    }
    let init = comp.get(*instr.operands.first()?)?;
    let body_comp = module.get(body)?;
    let root = body_comp.get(body_comp.root)?;
    let [param] = body_comp.params.as_slice() else {
        return None;
    };
    if init.opcode != Opcode::Tuple
        || root.opcode != Opcode::Tuple
        || init.operands.len() != elems.len()
        || root.operands.len() != elems.len()
    {
        return None;
    }
    // Each element (init operand, shape, body result) is compared with the earlier ones that
    // repeat no other element.
    let elements: Vec<(InstrId, &hlo::Shape, InstrId)> = init
        .operands
        .iter()
        .zip(elems)
        .zip(&root.operands)
        .map(|((&start, shape), &result)| (start, shape, result))
        .collect();
    let mut budget = MAX_COMPARED_PAIRS
        .saturating_add(PAIRS_PER_BODY_INSTRUCTION.saturating_mul(body_comp.instructions.len()));
    let mut repeats: Vec<usize> = Vec::with_capacity(elements.len());
    for (j, &(start, shape, result)) in elements.iter().enumerate() {
        let first = elements.iter().zip(&repeats).enumerate().find(
            |&(i, (&(start_i, shape_i, result_i), &rep))| {
                rep == i
                    && start_i == start
                    && shape_i == shape
                    && equal_if_state_equal(
                        module,
                        body_comp,
                        *param,
                        (i, j),
                        (result_i, result),
                        &mut budget,
                    )
            },
        );
        let at = first.map_or(j, |(i, _)| i);
        repeats.push(at);
    }
    repeats
        .iter()
        .enumerate()
        .any(|(j, &i)| i != j)
        .then_some(Plan {
            body,
            cond,
            repeats,
        })
}

/// True when `a` and `b` compute equal values whenever state elements `i` and `j` of the
/// computation's parameter `param` are equal. Every pair visited takes one from `budget`; an
/// empty budget answers false.
fn equal_if_state_equal(
    module: &HloModule,
    comp: &Computation,
    param: InstrId,
    (i, j): (usize, usize),
    (a, b): (InstrId, InstrId),
    budget: &mut usize,
) -> bool {
    let state_read = |x: &Instruction| -> Option<usize> {
        (x.opcode == Opcode::GetTupleElement && x.operands.first() == Some(&param))
            .then_some(x.attrs.tuple_index)
            .flatten()
            .and_then(|k| usize::try_from(k).ok())
    };
    let mut todo = vec![(a, b)];
    let mut seen = BTreeSet::new();
    while let Some((a, b)) = todo.pop() {
        if a == b || !seen.insert((a, b)) {
            continue;
        }
        if seen.len() > MAX_COMPARED_PAIRS || *budget == 0 {
            return false;
        }
        *budget -= 1;
        let (Some(x), Some(y)) = (comp.get(a), comp.get(b)) else {
            return false;
        };
        if let (Some(p), Some(q)) = (state_read(x), state_read(y)) {
            if p == q || (p.min(q), p.max(q)) == (i, j) {
                continue;
            }
            return false;
        }
        if !mergeable(x)
            || x.opcode != y.opcode
            || x.shape != y.shape
            || x.operands.len() != y.operands.len()
            || !same_attrs(module, x, y)
        {
            return false;
        }
        todo.extend(x.operands.iter().copied().zip(y.operands.iter().copied()));
    }
    true
}

/// Makes every read of a repeated state element (`get-tuple-element` of the parameter) read the
/// element it repeats.
fn redirect_reads(comp: &mut Computation, repeats: &[usize]) {
    let Some(&param) = comp.params.first() else {
        return;
    };
    for instr in &mut comp.instructions {
        if instr.opcode != Opcode::GetTupleElement || instr.operands.first() != Some(&param) {
            continue;
        }
        let to = instr
            .attrs
            .tuple_index
            .and_then(|k| usize::try_from(k).ok())
            .and_then(|k| repeats.get(k));
        if let Some(&to) = to {
            instr.attrs.tuple_index = Some(to as i64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loop whose elements 0 and 1 start from one constant and are each updated by a chain of
    /// `n` negations (element 1's chain reading element 1).
    fn chains(n: usize) -> HloModule {
        let mut body = String::from("body {\n  s = (f32[], f32[]) parameter(0)\n");
        for e in 0..2 {
            body += &format!("  x{e}_0 = f32[] get-tuple-element(s), index={e}\n");
            for k in 1..=n {
                body += &format!("  x{e}_{k} = f32[] negate(x{e}_{})\n", k - 1);
            }
        }
        body += &format!("  ROOT t = (f32[], f32[]) tuple(x0_{n}, x1_{n})\n}}\n");
        let text = format!(
            "HloModule m\n{body}\ncond {{\n  s = (f32[], f32[]) parameter(0)\n  ROOT f = pred[] constant(false)\n}}\n\nENTRY e {{\n  z = f32[] constant(0)\n  i = (f32[], f32[]) tuple(z, z)\n  ROOT w = (f32[], f32[]) while(i), condition=cond, body=body\n}}\n"
        );
        hlo_text::parse_module(&text).expect("parse")
    }

    fn root_operands(module: &HloModule) -> Vec<InstrId> {
        let body = module
            .find("body")
            .and_then(|c| module.get(c))
            .expect("body");
        body.get(body.root).expect("root").operands.clone()
    }

    /// Equal chains are proven equal while the comparison stays within MAX_COMPARED_PAIRS
    /// pairs; a longer one is left alone rather than compared without bound.
    #[test]
    fn the_comparison_gives_up_past_its_bound() {
        let mut short = chains(100);
        run(&mut short).expect("pass");
        let ops = root_operands(&short);
        assert_eq!(ops[0], ops[1], "chains of 100 are merged");

        let mut long = chains(MAX_COMPARED_PAIRS + 10);
        let before = root_operands(&long);
        run(&mut long).expect("pass");
        assert_eq!(root_operands(&long), before, "a chain past the bound stays");
    }

    /// `n` elements from one constant, each updated by `add(its read, c_e)` under a chain of
    /// `chain` negations, `c_e` telling the elements apart except the last two.
    fn alike_starts(n: usize, chain: usize) -> HloModule {
        let tuple = vec!["f32[]"; n].join(", ");
        let mut body = format!("body {{\n  s = ({tuple}) parameter(0)\n");
        for e in 0..n {
            let c = e.min(n - 2);
            body += &format!("  r{e} = f32[] get-tuple-element(s), index={e}\n");
            body += &format!("  c{e} = f32[] constant({c})\n  x{e}_0 = f32[] add(r{e}, c{e})\n");
            for k in 1..=chain {
                body += &format!("  x{e}_{k} = f32[] negate(x{e}_{})\n", k - 1);
            }
        }
        let ys: Vec<String> = (0..n).map(|e| format!("x{e}_{chain}")).collect();
        body += &format!("  ROOT t = ({tuple}) tuple({})\n}}\n", ys.join(", "));
        let zs = vec!["z"; n].join(", ");
        let text = format!(
            "HloModule m\n{body}\ncond {{\n  s = ({tuple}) parameter(0)\n  ROOT f = pred[] constant(false)\n}}\n\nENTRY e {{\n  z = f32[] constant(0)\n  i = ({tuple}) tuple({zs})\n  ROOT w = ({tuple}) while(i), condition=cond, body=body\n}}\n"
        );
        hlo_text::parse_module(&text).expect("parse")
    }

    /// One loop's comparisons share a budget: with 4 elements the last two are found equal;
    /// with 40, each comparison walks its whole chain before the constants differ, the
    /// budget runs out, and the last two are left alone (the pass stays linear).
    #[test]
    fn one_loops_comparisons_share_a_budget() {
        let mut few = alike_starts(4, 1000);
        run(&mut few).expect("pass");
        let ops = root_operands(&few);
        assert_eq!(ops[3], ops[2], "the last two of 4 elements are merged");
        assert_ne!(ops[1], ops[0]);

        let mut many = alike_starts(40, 1000);
        let before = root_operands(&many);
        run(&mut many).expect("pass");
        assert_eq!(
            root_operands(&many),
            before,
            "the budget ran out before the last pair"
        );
    }
}
