//! bf16, f16 and f8 (`f8e4m3fn`, `f8e5m2`) reductions compute in f32 and round once, as XLA:GPU's
//! `FloatNormalization` with `GpuFloatSupport` does: `reduce` and `reduce-window` are not among
//! the ops XLA:GPU runs in a 16-bit (or 8-bit) float type, so their narrow inputs are converted
//! to f32, the reducer runs
//! in f32 (an f32 twin of the reducer computation), and each result is converted back once.
//! Rounding after every add instead (what the 16-bit reducer computes when run as written)
//! loses a bit per step: a bf16 column sum of 16 rows misses the rounded truth on more than half
//! of its elements.
//!
//! What stays in the 16-bit type, as in XLA:GPU: elementwise ops (the code generator computes
//! each in f32 and rounds its result, which is the op's own rounding), data movement, dots
//! (the gemm accumulates in f32), `scatter` and `select-and-scatter` (each update is one op of
//! the reducer: nothing accumulates), and the collectives (NCCL reduces in the element type).
//! docs/precision.md lists which op computes in which type.
//!
//! A reducer is widened only when every instruction in it is one whose f32 result, rounded to
//! the 16-bit type, is what the 16-bit op gives (arithmetic, min/max, compare, select,
//! logic, tuples, converts, constants); a reduction whose reducer does anything else is left as
//! written.
use std::collections::HashMap;

use hlo::{Attrs, Computation};
use hlo::{ComputationId, HloModule, InstrId, Instruction, Opcode, PrimitiveType, Shape};

use crate::error::CompileError;
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};

/// Runs the pass over every computation.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    let twins = add_twins(module);
    if twins.is_empty() {
        return Ok(());
    }
    for_each_computation(module, Scope::All, |_, comp| {
        let todo = |i: &Instruction| reducer_of(i).is_some_and(|c| twins.contains_key(&c));
        if !comp.instructions.iter().any(todo) {
            return Ok(None);
        }
        let new = rebuild(comp, |r, _, old| {
            let Some(twin) = reducer_of(old).and_then(|c| twins.get(&c)) else {
                return r.keep(old).map(Some);
            };
            let operands: Vec<(InstrId, Shape)> = r
                .operands(old)?
                .into_iter()
                .map(|o| {
                    let shape = r.instrs().get(o.index()).map(|i| i.shape.clone());
                    shape.map(|s| (o, s)).ok_or_else(|| {
                        CompileError::Internal(format!("{}: operand {o:?} missing", old.name))
                    })
                })
                .collect::<Result<_, _>>()?;
            let mut push = |i| r.push(i);
            Ok(Some(widen_reduction(old, &operands, *twin, &mut push)))
        })?;
        Ok(Some(new))
    })
}

/// The reducer of a `reduce` or `reduce-window` that has a 16-bit float operand.
fn reducer_of(i: &Instruction) -> Option<ComputationId> {
    if !matches!(i.opcode, Opcode::Reduce | Opcode::ReduceWindow) {
        return None;
    }
    let narrow = |s: &Shape| s.leaves().iter().any(|(_, l)| is_narrow(l.element_type()));
    narrow(&i.shape).then_some(i.attrs.to_apply).flatten()
}

fn is_narrow(ty: Option<PrimitiveType>) -> bool {
    matches!(
        ty,
        Some(
            PrimitiveType::Bf16
                | PrimitiveType::F16
                | PrimitiveType::F8E4M3FN
                | PrimitiveType::F8E5M2
        )
    )
}

/// The shape with every narrow (16- or 8-bit) float element type made f32 (layouts kept).
fn widened(shape: &Shape) -> Shape {
    match shape {
        Shape::Tuple(parts) => Shape::Tuple(parts.iter().map(widened).collect()),
        Shape::Array(a) if is_narrow(Some(a.element_type)) => {
            let mut a = a.clone();
            a.element_type = PrimitiveType::F32;
            Shape::Array(a)
        }
        other => other.clone(),
    }
}

/// Adds an f32 twin of every reducer that a 16-bit reduction uses and that can be widened;
/// returns reducer -> twin. Each reducer gets one twin however many reductions share it.
fn add_twins(module: &mut HloModule) -> HashMap<ComputationId, ComputationId> {
    let mut reducers: Vec<ComputationId> = module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().filter_map(reducer_of))
        .collect();
    reducers.sort_unstable();
    reducers.dedup();
    let mut twins = HashMap::new();
    for cid in reducers {
        let Some(twin) = module.get(cid).and_then(twin_of) else {
            continue;
        };
        let mut name = format!("{}.f32", twin.name);
        let mut k = 0;
        while module.find(&name).is_some() {
            k += 1;
            name = format!("{}.f32.{k}", twin.name);
        }
        module.computations.push(Computation { name, ..twin });
        twins.insert(cid, ComputationId((module.computations.len() - 1) as u32));
    }
    twins
}

/// Whether an instruction of a reducer gives, computed in f32 and rounded once to the 16-bit
/// type, what it gives in the 16-bit type (or does not compute at all).
fn widens_exactly(opcode: Opcode) -> bool {
    use Opcode::*;
    matches!(
        opcode,
        Parameter
            | Constant
            | Add
            | Subtract
            | Multiply
            | Divide
            | Maximum
            | Minimum
            | Negate
            | Abs
            | Compare
            | Select
            | And
            | Or
            | Not
            | Xor
            | Convert
            | Tuple
            | GetTupleElement
    )
}

/// The reducer with every 16-bit float value made f32, or `None` when it holds an instruction
/// that does not widen exactly.
fn twin_of(comp: &Computation) -> Option<Computation> {
    if !comp.instructions.iter().all(|i| widens_exactly(i.opcode)) {
        return None;
    }
    let instructions = comp
        .instructions
        .iter()
        .map(|i| Instruction {
            // Constants keep their values: every bf16/f16 value is an f32 value.
            shape: widened(&i.shape),
            ..i.clone()
        })
        .collect();
    Some(Computation {
        instructions,
        ..comp.clone()
    })
}

/// The reduction in f32: 16-bit inputs and initial values (`operands`, new handles with their
/// shapes) converted up, the reducer's twin, each 16-bit result converted down. Returns the
/// value that replaces `old`.
fn widen_reduction(
    old: &Instruction,
    operands: &[(InstrId, Shape)],
    twin: ComputationId,
    push: &mut dyn FnMut(Instruction) -> InstrId,
) -> InstrId {
    let mut emit = |name: String, opcode, shape, operands, attrs| {
        push(Instruction {
            name,
            opcode,
            shape,
            operands,
            attrs,
            metadata: old.metadata.clone(),
            loc: old.loc,
        })
    };
    let ups: Vec<InstrId> = operands
        .iter()
        .enumerate()
        .map(|(k, (o, shape))| {
            if is_narrow(shape.element_type()) {
                let name = format!("{}.up{k}", old.name);
                emit(
                    name,
                    Opcode::Convert,
                    widened(shape),
                    vec![*o],
                    Attrs::default(),
                )
            } else {
                *o
            }
        })
        .collect();
    let attrs = Attrs {
        to_apply: Some(twin),
        ..old.attrs.clone()
    };
    let name = format!("{}.f32", old.name);
    let wide = emit(name, old.opcode, widened(&old.shape), ups, attrs);
    let Shape::Tuple(results) = &old.shape else {
        let shape = old.shape.clone();
        return emit(
            old.name.clone(),
            Opcode::Convert,
            shape,
            vec![wide],
            Attrs::default(),
        );
    };
    let mut parts = Vec::with_capacity(results.len());
    for (k, s) in results.iter().enumerate() {
        let index = Attrs {
            tuple_index: Some(k as i64),
            ..Attrs::default()
        };
        let name = format!("{}.part{k}", old.name);
        let gte = emit(name, Opcode::GetTupleElement, widened(s), vec![wide], index);
        parts.push(if is_narrow(s.element_type()) {
            let name = format!("{}.down{k}", old.name);
            emit(
                name,
                Opcode::Convert,
                s.clone(),
                vec![gte],
                Attrs::default(),
            )
        } else {
            gte
        });
    }
    let tuple = Attrs::default();
    emit(
        old.name.clone(),
        Opcode::Tuple,
        old.shape.clone(),
        parts,
        tuple,
    )
}
