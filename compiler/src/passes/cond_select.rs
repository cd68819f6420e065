//! Conditionals whose branches are cheap and side-effect free become selects: every branch is
//! inlined and the result picked per element, so the whole thing fuses into one loop kernel
//! instead of a conditional thunk with a kernel per branch (XLA:GPU turns `jnp.where`-like
//! `lax.cond`s into one fusion the same way).
//!
//! A conditional qualifies when its result is an array and every branch takes array parameters
//! and holds at most [`MAX_BRANCH_INSTRUCTIONS`] instructions, each a parameter, a scalar
//! constant, an elementwise operation, compare, select, clamp, convert or broadcast: computing
//! a branch that is not taken then costs no more than a few element operations, and can
//! neither fault nor have an effect (integer division by zero is defined in HLO).
//!
//! Branch choice keeps the conditional's semantics: a `pred` selector takes branch 0 when true;
//! an `s32` index `i` takes branch `i`, and branch N-1 when `i` is out of range.
use hlo::ir::{ArrayLiteral, Attrs, ComparisonDirection, Computation, Literal, LiteralValue};
use hlo::{HloModule, InstrId, Instruction, Opcode, PrimitiveType, Shape};

use crate::error::CompileError;
use crate::graph::{remap, topo_order, Rebuilder};

/// Branches with more instructions stay a conditional (computing them all would cost more than
/// the launch it saves).
pub const MAX_BRANCH_INSTRUCTIONS: usize = 16;

/// Runs the pass on every computation.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for c in 0..module.computations.len() {
        let comp = &module.computations[c];
        if !comp.instructions.iter().any(|i| {
            i.operands
                .first()
                .and_then(|&s| comp.get(s))
                .is_some_and(|s| branches(module, i, s).is_some())
        }) {
            continue;
        }
        let new = rewrite(module, comp)?;
        module.computations[c] = new;
    }
    Ok(())
}

/// The branch computations of a conditional that qualifies (see the module docs), given its
/// selector operand.
fn branches<'m>(
    module: &'m HloModule,
    instr: &Instruction,
    selector: &Instruction,
) -> Option<Vec<&'m Computation>> {
    if instr.opcode != Opcode::Conditional || !instr.shape.is_array() {
        return None;
    }
    let ids: Vec<_> = match (
        &instr.attrs.branch_computations,
        instr.attrs.true_computation,
    ) {
        (Some(b), _) => b.clone(),
        (None, Some(t)) => vec![t, instr.attrs.false_computation?],
        _ => return None,
    };
    let selector = &selector.shape;
    let pred = selector.element_type()? == PrimitiveType::Pred;
    if selector.rank() != 0
        || ids.is_empty()
        || (pred && ids.len() != 2)
        || (!pred && selector.element_type()? != PrimitiveType::S32)
        || instr.operands.len() != ids.len() + 1
    {
        return None;
    }
    let comps: Vec<&Computation> = ids.iter().map(|&c| module.get(c)).collect::<Option<_>>()?;
    let cheap = |c: &Computation| {
        c.instructions.len() <= MAX_BRANCH_INSTRUCTIONS
            && c.params.len() == 1
            && c.root_instruction()
                .is_some_and(|r| r.shape.dims() == instr.shape.dims() && r.shape.is_array())
            && c.instructions.iter().all(|i| {
                let op = i.opcode;
                i.shape.is_array()
                    && (op.is_elementwise_unary()
                        || op.is_elementwise_binary()
                        || matches!(
                            op,
                            Opcode::Parameter
                                | Opcode::Compare
                                | Opcode::Select
                                | Opcode::Clamp
                                | Opcode::Convert
                                | Opcode::Broadcast
                        )
                        || (op == Opcode::Constant && i.shape.rank() == 0))
            })
    };
    comps.iter().all(|c| cheap(c)).then_some(comps)
}

fn rewrite(module: &HloModule, comp: &Computation) -> Result<Computation, CompileError> {
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
        let selector = instr.operands.first().and_then(|&s| comp.get(s));
        let chosen = selector.and_then(|s| branches(module, instr, s));
        let Some(bs) = chosen else {
            let mut new = instr.clone();
            new.operands = operands;
            map[id.index()] = Some(b.push(new));
            continue;
        };
        let pred = selector.and_then(|s| s.shape.element_type()) == Some(PrimitiveType::Pred);
        let mut results = Vec::new();
        for (k, branch) in bs.iter().enumerate() {
            let mut inner: Vec<Option<InstrId>> = vec![None; branch.instructions.len()];
            if let (Some(&p), Some(&arg)) = (branch.params.first(), operands.get(k + 1)) {
                inner[p.index()] = Some(arg);
            }
            for bid in topo_order(branch)? {
                if inner[bid.index()].is_some() {
                    continue;
                }
                let bi = &branch[bid];
                let mut new = bi.clone();
                new.operands = bi
                    .operands
                    .iter()
                    .map(|&o| remap(&inner, o, &branch.name))
                    .collect::<Result<Vec<_>, _>>()?;
                counter += 1;
                new.name = format!("{}.csel{counter}", bi.name);
                inner[bid.index()] = Some(b.push(new));
            }
            results.push(remap(&inner, branch.root, &branch.name)?);
        }
        let sel = operands[0];
        let mut derived = |b: &mut Rebuilder, name: &str, opcode, shape: Shape, ops, attrs| {
            counter += 1;
            b.push(Instruction {
                name: format!("{}.{name}{counter}", instr.name),
                opcode,
                shape,
                operands: ops,
                attrs,
                metadata: instr.metadata.clone(),
                loc: instr.loc,
            })
        };
        let pred_shape = Shape::array(PrimitiveType::Pred, instr.shape.dims().to_vec());
        let bcast = Attrs {
            dimensions: Some(Vec::new()),
            ..Attrs::default()
        };
        let Some(&last) = results.last() else {
            return Err(CompileError::Internal(format!(
                "{} has no branches",
                instr.name
            )));
        };
        let mut acc = last;
        for k in (0..results.len() - 1).rev() {
            let p = if pred {
                sel
            } else {
                let c = derived(
                    &mut b,
                    "index",
                    Opcode::Constant,
                    Shape::scalar(PrimitiveType::S32),
                    Vec::new(),
                    Attrs {
                        literal: Some(Literal::Array(ArrayLiteral {
                            values: vec![LiteralValue::Int(k as i128)],
                        })),
                        ..Attrs::default()
                    },
                );
                derived(
                    &mut b,
                    "is",
                    Opcode::Compare,
                    Shape::scalar(PrimitiveType::Pred),
                    vec![sel, c],
                    Attrs {
                        comparison_direction: Some(ComparisonDirection::Eq),
                        ..Attrs::default()
                    },
                )
            };
            let pb = derived(
                &mut b,
                "pick",
                Opcode::Broadcast,
                pred_shape.clone(),
                vec![p],
                bcast.clone(),
            );
            acc = derived(
                &mut b,
                "select",
                Opcode::Select,
                instr.shape.clone(),
                vec![pb, results[k], acc],
                Attrs::default(),
            );
        }
        map[id.index()] = Some(acc);
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
