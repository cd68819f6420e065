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
use hlo::{ArrayLiteral, Attrs, ComparisonDirection, Computation, ConstantLiteral, LiteralValue};
use hlo::{ComputationId, HloModule, Instruction, Opcode, PrimitiveType, Shape};

use crate::error::CompileError;
use crate::passes::rebuild::{for_each_computation, rebuild, Rebuild, Scope};

/// Branches with more instructions stay a conditional (computing them all would cost more than
/// the launch it saves).
pub const MAX_BRANCH_INSTRUCTIONS: usize = 16;

/// Runs the pass on every computation.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::All, |module, comp| {
        let qualifies = comp.instructions.iter().any(|i| {
            i.operands
                .first()
                .and_then(|&s| comp.get(s))
                .is_some_and(|s| branches(module, i, s).is_some())
        });
        if qualifies {
            rewrite(module, comp).map(Some)
        } else {
            Ok(None)
        }
    })
}

/// The branch computations of a conditional that qualifies (see the module docs), given its
/// selector operand.
fn branches(
    module: &HloModule,
    instr: &Instruction,
    selector: &Instruction,
) -> Option<Vec<ComputationId>> {
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
    comps.iter().all(|c| cheap(c)).then_some(ids)
}

fn rewrite(module: &HloModule, comp: &Computation) -> Result<Computation, CompileError> {
    let mut counter = 0usize;
    rebuild(comp, |b, _, instr| {
        let selector = instr.operands.first().and_then(|&s| comp.get(s));
        let Some(bs) = selector.and_then(|s| branches(module, instr, s)) else {
            return b.keep(instr).map(Some);
        };
        let operands = b.operands(instr)?;
        let pred = selector.and_then(|s| s.shape.element_type()) == Some(PrimitiveType::Pred);
        let mut results = Vec::new();
        for (k, &branch) in bs.iter().enumerate() {
            // Branch k takes operand k + 1 (`branches` checked there is one per branch).
            let args = operands.get(k + 1).copied().into_iter().collect();
            // A qualifying branch has no calls to expand.
            results.push(b.inline(
                module,
                branch,
                args,
                instr,
                |_| None,
                |name, _| {
                    counter += 1;
                    format!("{name}.csel{counter}")
                },
            )?);
        }
        let Some(&sel) = operands.first() else {
            return Err(CompileError::Internal(format!(
                "{} has no selector",
                instr.name
            )));
        };
        let mut derived = |b: &mut Rebuild<'_>, name: &str, opcode, shape: Shape, ops, attrs| {
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
                    b,
                    "index",
                    Opcode::Constant,
                    Shape::scalar(PrimitiveType::S32),
                    Vec::new(),
                    Attrs {
                        literal: Some(ConstantLiteral::Array(ArrayLiteral {
                            values: vec![LiteralValue::Int(k as i128)],
                        })),
                        ..Attrs::default()
                    },
                );
                derived(
                    b,
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
                b,
                "pick",
                Opcode::Broadcast,
                pred_shape.clone(),
                vec![p],
                bcast.clone(),
            );
            acc = derived(
                b,
                "select",
                Opcode::Select,
                instr.shape.clone(),
                vec![pb, results[k], acc],
                Attrs::default(),
            );
        }
        Ok(Some(acc))
    })
}
