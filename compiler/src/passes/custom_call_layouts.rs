//! Custom calls that read or write non-default layouts: `operand_layout_constraints` and layouts
//! on the call's own result shape (JAX's cuSOLVER calls take and give column-major matrices,
//! `f32[4,4]{0,1}`). Every other array this compiler lays out row-major, so the bytes move here,
//! as XLA's layout assignment moves them with layout-changing copies:
//!
//! - an operand whose constraint is not row-major becomes `reshape(transpose(x))`: the
//!   transpose lays `x` out in the constraint's major-to-minor order, and the reshape (a bitcast
//!   in row-major memory) gives it back the operand's dimensions, so the call reads bytes that
//!   are `x` in the constrained layout;
//! - a result with a layout is read back through `transpose(reshape(r))`, the inverse.
//!
//! The custom call keeps its constraints and result layouts: lowering writes them into the
//! thunk's shaped slices (`ShapeProto.layout`), so the handler knows how its bytes are laid out.
//! A tuple-shaped call with a laid-out element that is used other than through
//! `get-tuple-element` is refused: its users would read the bytes in the wrong order.
use hlo::{Attrs, Computation};
use hlo::{InstrId, Instruction, Opcode, Shape};

use crate::error::CompileError;
use crate::passes::rebuild::{for_each_computation, permuted, rebuild, transpose, Rebuild, Scope};
use crate::unsupported::UnsupportedCustomCall;

/// Runs the pass on every reachable computation holding a custom call with layouts.
pub fn run(module: &mut hlo::HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::Reachable, |_, comp| {
        if comp.instructions.iter().any(has_layouts) {
            check_users(comp)?;
            rewrite(comp).map(Some)
        } else {
            Ok(None)
        }
    })
}

fn has_layouts(instr: &Instruction) -> bool {
    instr.opcode == Opcode::CustomCall && instr.attrs.operand_layout_constraints.is_some()
}

/// The transpose that lays an array out row-major in `shape`'s layout (its major-to-minor
/// order), or `None` when the layout is absent or already row-major.
fn major_to_minor(shape: &Shape) -> Option<Vec<usize>> {
    let layout = shape.layout()?;
    let perm: Vec<usize> = layout
        .minor_to_major
        .iter()
        .rev()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<_>>()?;
    let identity = perm.iter().enumerate().all(|(i, &p)| i == p);
    (!identity).then_some(perm)
}

fn inverse(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        if let Some(slot) = inv.get_mut(p) {
            *slot = i;
        }
    }
    inv
}

/// Refuses a tuple-shaped call with a laid-out element whose value escapes other than through
/// `get-tuple-element` (as the root, or into a tuple, call or loop).
fn check_users(comp: &Computation) -> Result<(), CompileError> {
    for (id, instr) in comp.instructions.iter().enumerate() {
        let laid_out_tuple = has_layouts(instr)
            && instr
                .shape
                .tuple_shapes()
                .is_some_and(|t| t.iter().any(|s| major_to_minor(s).is_some()));
        if !laid_out_tuple {
            continue;
        }
        let id = InstrId(id as u32);
        let escapes = comp.root == id
            || comp
                .instructions
                .iter()
                .any(|u| u.opcode != Opcode::GetTupleElement && u.operands.contains(&id));
        if escapes {
            return Err(CompileError::unsupported(
                &comp.name,
                instr,
                UnsupportedCustomCall::ResultLayoutUse,
            ));
        }
    }
    Ok(())
}

fn rewrite(comp: &Computation) -> Result<Computation, CompileError> {
    rebuild(comp, |r, _, old| {
        if has_layouts(old) {
            return call(r, &comp.name, old).map(Some);
        }
        if old.opcode == Opcode::GetTupleElement {
            let element = old
                .operands
                .first()
                .and_then(|&o| comp.get(o))
                .filter(|src| has_layouts(src))
                .and_then(|src| src.shape.tuple_shapes())
                .zip(old.attrs.tuple_index.and_then(|i| usize::try_from(i).ok()))
                .and_then(|(elems, i)| elems.get(i));
            if let Some(element) = element {
                if let Some(perm) = major_to_minor(element) {
                    let mut gte = r.remapped(old)?;
                    gte.shape = element.without_layout();
                    let g = r.push(gte);
                    return Ok(Some(to_row_major(r, g, element, &perm, old)));
                }
            }
        }
        r.keep(old).map(Some)
    })
}

/// The call with its operands laid out as constrained; a non-tuple result with a layout is read
/// back row-major.
fn call(r: &mut Rebuild<'_>, comp: &str, old: &Instruction) -> Result<InstrId, CompileError> {
    let mut cc = r.remapped(old)?;
    let constraints = old
        .attrs
        .operand_layout_constraints
        .as_deref()
        .unwrap_or_default();
    if constraints.len() != cc.operands.len() {
        return Err(CompileError::unsupported(
            comp,
            old,
            UnsupportedCustomCall::LayoutConstraintCount {
                constraints: constraints.len(),
                operands: cc.operands.len(),
            },
        ));
    }
    for (k, (o, c)) in cc.operands.iter_mut().zip(constraints).enumerate() {
        let Some(perm) = major_to_minor(c) else {
            continue;
        };
        let shape = r
            .instrs()
            .get(o.index())
            .map(|i| i.shape.without_layout())
            .ok_or_else(|| CompileError::Internal("custom-call operand missing".into()))?;
        if !shape.compatible(&c.without_layout()) {
            return Err(CompileError::unsupported(
                comp,
                old,
                UnsupportedCustomCall::LayoutConstraint {
                    operand: k,
                    shape: Box::new(shape),
                    constraint: Box::new(c.clone()),
                },
            ));
        }
        let name = format!("{}.operand{k}", old.name);
        let t = r.push(transpose(
            format!("{name}.to_layout"),
            *o,
            permuted(&shape, &perm),
            &perm,
            old,
        ));
        *o = r.push(reshape(format!("{name}.laid_out"), t, shape, old));
    }
    let id = r.push(cc);
    Ok(match major_to_minor(&old.shape) {
        Some(perm) if old.shape.is_array() => to_row_major(r, id, &old.shape, &perm, old),
        _ => id,
    })
}

/// The array at `id`, whose bytes are `laid_out` in its layout, as a row-major value.
fn to_row_major(
    r: &mut Rebuild<'_>,
    id: InstrId,
    laid_out: &Shape,
    perm: &[usize],
    like: &Instruction,
) -> InstrId {
    let view = r.push(reshape(
        format!("{}.layout_view", like.name),
        id,
        permuted(laid_out, perm),
        like,
    ));
    r.push(transpose(
        format!("{}.row_major", like.name),
        view,
        laid_out.without_layout(),
        &inverse(perm),
        like,
    ))
}

fn reshape(name: String, operand: InstrId, shape: Shape, like: &Instruction) -> Instruction {
    Instruction {
        name,
        opcode: Opcode::Reshape,
        shape,
        operands: vec![operand],
        attrs: Attrs::default(),
        metadata: like.metadata.clone(),
        loc: like.loc,
    }
}
