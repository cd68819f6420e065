//! The entry computation, rewritten for one device: each instruction (in topological order)
//! gets its operands on the device, a [`Place`] for its result, and the shape a device holds.
//!
//! - `parameter`: the shard of its sharding (no sharding: replicated).
//! - `Sharding` custom call: its operand moved to the call's sharding ([`Builder::reshard`]).
//! - `SPMDFullToShardShape` / `SPMDShardToFullShape`: the operand itself, once its shape is
//!   checked to be the shard the call names (a `shard_map` body is already per-device).
//! - values that are replicated or manual: the instruction as written (in a manual region its
//!   collectives keep their replica groups and channel ids).
//! - tiled values: the rules of [`super::ops`]; anything else is refused, naming the
//!   instruction and the sharding.
//! - an instruction that carries its own sharding has its result moved there.
use hlo::Computation;
use hlo::{InstrId, Instruction, Opcode, Shape};

use super::error::SpmdError;
use super::reshard::{Builder, Place};
use crate::error::{CompileError, MalformedModule};

/// What the walk hands each rule: the new operands and where each lies.
pub(crate) struct Operands {
    pub ids: Vec<InstrId>,
    pub places: Vec<Place>,
}

/// Where the entry's parameters and result lie across the devices.
pub(crate) struct EntryPlaces {
    /// Per parameter number.
    pub params: Vec<Place>,
    /// The result (a tuple result per element).
    pub result: Place,
}

/// The entry rewritten for one device, with where its parameters and result lie.
pub(crate) fn partition_entry(
    comp: &Computation,
    mut b: Builder,
) -> Result<(Computation, Builder, EntryPlaces), CompileError> {
    // Only what the result needs (and side effects): JAX leaves dead annotated values behind.
    let live = live(comp);
    let order: Vec<InstrId> = comp
        .post_order()
        .into_iter()
        .filter(|id| live.get(id.index()).copied().unwrap_or(false))
        .collect();
    let mut map: Vec<Option<(InstrId, Place)>> = vec![None; comp.instructions.len()];
    let mut params = vec![InstrId(0); comp.params.len()];
    let mut param_places = vec![Place::Replicated; comp.params.len()];
    for id in order {
        let old = &comp[id];
        let refuse = |error: SpmdError| CompileError::partitioning(&comp.name, old, error);
        let mut ops = Operands {
            ids: Vec::new(),
            places: Vec::new(),
        };
        for &o in &old.operands {
            let (nid, place) = map
                .get(o.index())
                .cloned()
                .flatten()
                .ok_or_else(|| refuse(SpmdError::UseBeforeDefinition))?;
            ops.ids.push(nid);
            ops.places.push(place);
        }
        let (new, place) = instruction(&mut b, comp, old, ops).map_err(refuse)?;
        if old.opcode == Opcode::Parameter {
            let n = old.attrs.parameter_number.unwrap_or(0) as usize;
            if let Some(slot) = params.get_mut(n) {
                *slot = new;
            }
            if let Some(slot) = param_places.get_mut(n) {
                *slot = place.clone();
            }
        }
        map[id.index()] = Some((new, place));
    }
    let (root, result) = map
        .get(comp.root.index())
        .cloned()
        .flatten()
        .ok_or_else(|| CompileError::Malformed(MalformedModule::NoRoot(comp.name.clone())))?;
    let instructions = std::mem::take(&mut b.instrs);
    let new = Computation {
        name: comp.name.clone(),
        instructions,
        params,
        root,
        execution_thread: comp.execution_thread.clone(),
        loc: comp.loc,
    };
    let places = EntryPlaces {
        params: param_places,
        result,
    };
    Ok((new, b, places))
}

/// Instructions the root reaches, parameters, and those with side effects.
fn live(comp: &Computation) -> Vec<bool> {
    let mut live = vec![false; comp.instructions.len()];
    let mut stack = vec![comp.root];
    for (id, i) in comp.iter() {
        let effect = i.opcode == Opcode::Parameter
            || i.attrs.custom_call_has_side_effect == Some(true)
            || matches!(i.opcode, Opcode::Outfeed | Opcode::Send | Opcode::SendDone);
        if effect {
            stack.push(id);
        }
    }
    while let Some(id) = stack.pop() {
        match live.get_mut(id.index()) {
            Some(l) if !*l => *l = true,
            _ => continue,
        }
        if let Some(i) = comp.get(id) {
            stack.extend(i.operands.iter().copied());
        }
    }
    live
}

/// The target of an annotation custom call, when `old` is one.
fn target(old: &Instruction) -> Option<&str> {
    (old.opcode == Opcode::CustomCall)
        .then_some(old.attrs.custom_call_target.as_deref())
        .flatten()
}

fn instruction(
    b: &mut Builder,
    comp: &Computation,
    old: &Instruction,
    ops: Operands,
) -> Result<(InstrId, Place), SpmdError> {
    let n = b.partitions;
    let own = old
        .attrs
        .sharding
        .as_ref()
        .map(|s| Place::of(s, &old.shape, n))
        .transpose()
        .map_err(|error| SpmdError::OwnSharding {
            error: Box::new(error),
            instruction: old.name.clone(),
        })?;
    let operand_shape = |i: usize| -> Shape {
        old.operands
            .get(i)
            .and_then(|&o| comp.get(o))
            .map_or(Shape::Tuple(Vec::new()), |o| o.shape.clone())
    };
    match (old.opcode, target(old)) {
        (Opcode::Parameter, _) => {
            let place = own.unwrap_or(Place::Replicated);
            let mut instr = stripped(old);
            instr.shape = place.local_shape(&old.shape)?;
            Ok((b.push(instr), place))
        }
        (_, Some("Sharding")) => {
            let (x, from) = one(&ops)?;
            let to = own.ok_or(SpmdError::ShardingCallUnsharded)?;
            let moved = b.reshard(&old.name, x, &operand_shape(0), &from, &to)?;
            Ok((moved, to))
        }
        (_, Some("SPMDFullToShardShape")) => {
            let (x, from) = one(&ops)?;
            let local = from.local_shape(&operand_shape(0))?;
            if !local.compatible(&old.shape) {
                return Err(SpmdError::FullToShard {
                    full: Box::new(operand_shape(0)),
                    place: from.describe(),
                    shard: Box::new(local),
                    call: Box::new(old.shape.clone()),
                });
            }
            Ok((x, own.unwrap_or(Place::Manual)))
        }
        (_, Some("SPMDShardToFullShape")) => {
            let (x, _) = one(&ops)?;
            let to = own.ok_or(SpmdError::ShardToFullUnsharded)?;
            let local = to.local_shape(&old.shape)?;
            if !local.compatible(&b.shape(x)) {
                return Err(SpmdError::ShardToFull {
                    full: Box::new(old.shape.clone()),
                    place: to.describe(),
                    shard: Box::new(local),
                    operand: Box::new(b.shape(x)),
                });
            }
            Ok((x, to))
        }
        _ => {
            let (id, place) = super::ops::rule(b, comp, old, ops)?;
            match own {
                Some(to) if to != place && place != Place::Manual => {
                    let moved = b.reshard(&old.name, id, &old.shape, &place, &to)?;
                    Ok((moved, to))
                }
                _ => Ok((id, place)),
            }
        }
    }
}

fn one(ops: &Operands) -> Result<(InstrId, Place), SpmdError> {
    match (ops.ids.as_slice(), ops.places.as_slice()) {
        ([x], [p]) => Ok((*x, p.clone())),
        _ => Err(SpmdError::AnnotationArity(ops.ids.len())),
    }
}

/// A copy of `old` without its sharding and Shardy's attributes (the per-device program has
/// neither).
pub(crate) fn stripped(old: &Instruction) -> Instruction {
    let mut i = old.clone();
    i.attrs.sharding = None;
    if let Some(f) = i.attrs.frontend_attributes.as_mut() {
        f.retain(|(k, _)| !k.starts_with("xla.sdy."));
        if f.is_empty() {
            i.attrs.frontend_attributes = None;
        }
    }
    i
}

/// `old` with new operands and shape.
pub(crate) fn rebuilt(old: &Instruction, operands: Vec<InstrId>, shape: Shape) -> Instruction {
    let mut i = stripped(old);
    i.operands = operands;
    i.shape = shape;
    i
}
