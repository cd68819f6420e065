//! How each instruction is partitioned once its operands lie on the devices (sharded `jit`):
//!
//! | op | operands | result |
//! | --- | --- | --- |
//! | any | replicated or manual | the instruction as written; manual when an operand is |
//! | tuple, get-tuple-element | any | per element |
//! | elementwise (unary, binary, compare, select, clamp, convert) | tiled | every operand moved to the first tiled operand's sharding, the op on the tiles |
//! | broadcast | tiled | the tiles broadcast, the result split where the operand's dimensions went |
//! | dot | lhs split on batch/free dims, rhs whole (or the reverse) | the local dot, split where those dims went |
//! | dot | both split alike on one contracting dim | the local dot, then an all-reduce (sum) over the groups along it: replicated |
//! | reduce | split dims all reduced, or none | the local reduce, then an all-reduce with the same reducer over the split dims (XLA's rule; the init must be the reducer's identity, as JAX writes it) |
//! | slice | split dims not sliced | the local slice |
//!
//! Anything else with a tiled operand is refused with the op and the sharding.
use hlo::{Attrs, Computation, HloSharding, ReplicaGroups, ShardingKind, TileAssignment, Tiling};
use hlo::{InstrId, Instruction, Opcode, Shape};

use super::error::SpmdError;
use super::partition::{rebuilt, Operands};
use super::reshard::{Builder, Place};

fn tiled(p: &Place) -> bool {
    match p {
        Place::Tiled(..) => true,
        Place::Tuple(ps) => ps.iter().any(tiled),
        _ => false,
    }
}

fn elementwise(op: Opcode) -> bool {
    op.is_elementwise_unary()
        || op.is_elementwise_binary()
        || matches!(
            op,
            Opcode::Compare | Opcode::Select | Opcode::Clamp | Opcode::Convert
        )
}

/// The instruction on the devices.
pub(crate) fn rule(
    b: &mut Builder,
    comp: &Computation,
    old: &Instruction,
    ops: Operands,
) -> Result<(InstrId, Place), SpmdError> {
    match old.opcode {
        Opcode::Tuple => {
            let shapes = ops.ids.iter().map(|&i| b.shape(i)).collect();
            let id = b.push(rebuilt(old, ops.ids, Shape::Tuple(shapes)));
            return Ok((id, Place::Tuple(ops.places)));
        }
        Opcode::GetTupleElement => {
            let i = old.attrs.tuple_index.unwrap_or(0) as usize;
            let (&t, p) = ops
                .ids
                .first()
                .zip(ops.places.first())
                .ok_or(SpmdError::NoOperand)?;
            let shape = b
                .shape(t)
                .tuple_shapes()
                .and_then(|s| s.get(i))
                .cloned()
                .ok_or(SpmdError::NoSuchElement)?;
            let place = match p {
                Place::Tuple(ps) => ps.get(i).cloned().ok_or(SpmdError::NoSuchElement)?,
                other => other.clone(),
            };
            return Ok((b.push(rebuilt(old, ops.ids, shape)), place));
        }
        _ => {}
    }
    if !ops.places.iter().any(tiled) {
        let manual = ops.places.contains(&Place::Manual);
        let id = b.push(rebuilt(old, ops.ids, old.shape.clone()));
        return Ok((
            id,
            if manual {
                Place::Manual
            } else {
                Place::Replicated
            },
        ));
    }
    let operand = |i: usize| -> Shape {
        old.operands
            .get(i)
            .and_then(|&o| comp.get(o))
            .map_or(Shape::Tuple(Vec::new()), |o| o.shape.clone())
    };
    let refuse = || {
        Err(SpmdError::NotPartitioned {
            opcode: old.opcode,
            shardings: ops.places.iter().map(Place::describe).collect(),
        })
    };
    match old.opcode {
        op if elementwise(op) => {
            let Some(target) = ops
                .places
                .iter()
                .find(|p| matches!(p, Place::Tiled(..)))
                .cloned()
            else {
                return refuse();
            };
            let mut ids = Vec::new();
            for (i, (&x, p)) in ops.ids.iter().zip(&ops.places).enumerate() {
                ids.push(b.reshard(&old.name, x, &operand(i), p, &target)?);
            }
            let shape = target.local_shape(&old.shape)?;
            Ok((b.push(rebuilt(old, ids, shape)), target))
        }
        Opcode::Broadcast => broadcast(b, old, &ops),
        Opcode::Dot => dot(b, old, &ops),
        Opcode::Reduce => reduce(b, old, &ops),
        Opcode::Slice => slice(b, old, &ops),
        // A reshape that keeps the dimensions (JAX writes them around results) keeps the tiles.
        Opcode::Reshape if operand(0).dims() == old.shape.dims() => {
            let place = ops.places[0].clone();
            let shape = place.local_shape(&old.shape)?;
            Ok((b.push(rebuilt(old, ops.ids, shape)), place))
        }
        _ => refuse(),
    }
}

/// A sharding of a value of rank `rank` whose dimension `map[i]` takes the tile count of the
/// source's data dimension `i` (other dimensions whole), with the source's devices and
/// subgroups. `None` when the split dimensions would change order (the device list would need
/// a transpose).
fn moved(src: &HloSharding, map: &[Option<usize>], rank: usize, partitions: i64) -> Option<Place> {
    let t = src.tiling()?;
    let data = t.data_dims();
    let mut dims = vec![1i64; rank];
    let mut last = None;
    for (i, &k) in data.iter().enumerate() {
        if k == 1 {
            continue;
        }
        let to = map.get(i).copied().flatten()?;
        if last.is_some_and(|l| l >= to) {
            return None;
        }
        last = Some(to);
        dims[to] = k;
    }
    dims.extend(&t.assignment.dims()[t.data_rank()..]);
    let s = HloSharding::from(ShardingKind::Tiled(Tiling {
        assignment: TileAssignment::Devices {
            dims,
            devices: t.assignment.devices(),
        },
        subgroups: t.subgroups.clone(),
    }));
    Place::of(
        &s,
        &Shape::array(hlo::PrimitiveType::F32, vec![1; rank]),
        partitions,
    )
    .ok()
}

fn sharding(p: &Place) -> Option<&HloSharding> {
    match p {
        Place::Tiled(s, _) => Some(s),
        _ => None,
    }
}

fn broadcast(
    b: &mut Builder,
    old: &Instruction,
    ops: &Operands,
) -> Result<(InstrId, Place), SpmdError> {
    let dims = old.attrs.dimensions.clone().unwrap_or_default();
    let src = sharding(&ops.places[0]).ok_or(SpmdError::BroadcastOfTuple)?;
    let map: Vec<Option<usize>> = dims.iter().map(|&d| usize::try_from(d).ok()).collect();
    let place = moved(src, &map, old.shape.dims().len(), b.partitions).ok_or_else(|| {
        SpmdError::BroadcastReorders {
            dimensions: dims.clone(),
            sharding: Box::new(src.clone()),
        }
    })?;
    let shape = place.local_shape(&old.shape)?;
    Ok((b.push(rebuilt(old, ops.ids.clone(), shape)), place))
}

fn dot(b: &mut Builder, old: &Instruction, ops: &Operands) -> Result<(InstrId, Place), SpmdError> {
    let dn = old.attrs.dot_dimension_numbers.clone().unwrap_or_default();
    let (lp, rp) = (&ops.places[0], &ops.places[1]);
    let lrank = b.shape(ops.ids[0]).dims().len();
    let rrank = b.shape(ops.ids[1]).dims().len();
    let free = |rank: usize, batch: &[i64], contract: &[i64]| -> Vec<usize> {
        (0..rank)
            .filter(|d| !batch.contains(&(*d as i64)) && !contract.contains(&(*d as i64)))
            .collect()
    };
    let lfree = free(lrank, &dn.lhs_batch_dims, &dn.lhs_contracting_dims);
    let rfree = free(rrank, &dn.rhs_batch_dims, &dn.rhs_contracting_dims);
    let nb = dn.lhs_batch_dims.len();
    let out_rank = old.shape.dims().len();
    let split = |p: &Place| -> Vec<usize> {
        match p {
            Place::Tiled(_, t) => (0..t.data.len()).filter(|&d| t.data[d] > 1).collect(),
            _ => Vec::new(),
        }
    };
    let contracting = |d: usize, c: &[i64]| c.contains(&(d as i64));
    let (ls, rs) = (split(lp), split(rp));
    // One side split only on batch/free dims, the other whole: the local dot.
    let one_sided = |side: &Place,
                     splits: &[usize],
                     other: &Place,
                     contract: &[i64],
                     batch: &[i64],
                     free: &[usize],
                     offset: usize| {
        if !matches!(other, Place::Replicated) || splits.iter().any(|&d| contracting(d, contract)) {
            return None;
        }
        let mut map = vec![None; splits.iter().max().map_or(0, |m| m + 1).max(1)];
        let rank = match side {
            Place::Tiled(_, t) => t.data.len(),
            _ => 0,
        };
        map.resize(rank, None);
        for (i, &d) in batch.iter().enumerate() {
            map[d as usize] = Some(i);
        }
        for (i, &d) in free.iter().enumerate() {
            map[d] = Some(offset + i);
        }
        moved(sharding(side)?, &map, out_rank, b.partitions)
    };
    let place = if rs.is_empty() {
        one_sided(
            lp,
            &ls,
            rp,
            &dn.lhs_contracting_dims,
            &dn.lhs_batch_dims,
            &lfree,
            nb,
        )
    } else if ls.is_empty() && dn.rhs_batch_dims.is_empty() {
        one_sided(
            rp,
            &rs,
            lp,
            &dn.rhs_contracting_dims,
            &dn.rhs_batch_dims,
            &rfree,
            nb + lfree.len(),
        )
    } else {
        None
    };
    if let Some(place) = place {
        let shape = place.local_shape(&old.shape)?;
        return Ok((b.push(rebuilt(old, ops.ids.clone(), shape)), place));
    }
    // Both split on one matching contracting dimension, alike: local dot + all-reduce.
    if let (Place::Tiled(_, lt), Place::Tiled(_, rt), [l], [r]) =
        (lp, rp, ls.as_slice(), rs.as_slice())
    {
        let pos = dn.lhs_contracting_dims.iter().position(|&c| c == *l as i64);
        let matches = pos.is_some_and(|p| dn.rhs_contracting_dims.get(p) == Some(&(*r as i64)));
        if matches && lt.groups_along(*l) == rt.groups_along(*r) && lt.data[*l] == rt.data[*r] {
            let partial = b.push(rebuilt(old, ops.ids.clone(), old.shape.clone()));
            let groups = lt.groups_along(*l);
            return Ok((all_reduce_add(b, old, partial, groups)?, Place::Replicated));
        }
    }
    Err(SpmdError::Dot {
        lhs: lp.describe(),
        rhs: rp.describe(),
    })
}

fn all_reduce_add(
    b: &mut Builder,
    old: &Instruction,
    x: InstrId,
    groups: Vec<Vec<i64>>,
) -> Result<InstrId, SpmdError> {
    let ty = old.shape.element_type().ok_or(SpmdError::NonArrayResult)?;
    let add = b.reducer(ty);
    all_reduce(b, old, x, groups, add)
}

fn all_reduce(
    b: &mut Builder,
    old: &Instruction,
    x: InstrId,
    groups: Vec<Vec<i64>>,
    to_apply: hlo::ComputationId,
) -> Result<InstrId, SpmdError> {
    let channel = b.next_channel;
    b.next_channel += 1;
    let attrs = Attrs {
        channel_id: Some(channel),
        replica_groups: Some(ReplicaGroups::List(groups)),
        use_global_device_ids: Some(true),
        to_apply: Some(to_apply),
        ..Attrs::default()
    };
    let shape = b.shape(x);
    Ok(b.op(&old.name, Opcode::AllReduce, shape, vec![x], attrs))
}

fn reduce(
    b: &mut Builder,
    old: &Instruction,
    ops: &Operands,
) -> Result<(InstrId, Place), SpmdError> {
    let [x, init] = ops.ids.as_slice() else {
        return Err(SpmdError::VariadicReduce);
    };
    let Place::Tiled(src, t) = &ops.places[0] else {
        return Err(SpmdError::ReduceInitSplit);
    };
    if ops.places[1] != Place::Replicated {
        return Err(SpmdError::ReduceInitSplit);
    }
    let reduced = old.attrs.dimensions.clone().unwrap_or_default();
    let split: Vec<usize> = (0..t.data.len()).filter(|&d| t.data[d] > 1).collect();
    let to_apply = old.attrs.to_apply.ok_or(SpmdError::NoReducer)?;
    if split.iter().all(|d| !reduced.contains(&(*d as i64))) {
        let kept: Vec<usize> = (0..t.data.len())
            .filter(|d| !reduced.contains(&(*d as i64)))
            .collect();
        let map: Vec<Option<usize>> = (0..t.data.len())
            .map(|d| kept.iter().position(|&k| k == d))
            .collect();
        let place = moved(src, &map, old.shape.dims().len(), b.partitions)
            .ok_or_else(|| SpmdError::ReduceReorders(Box::new(src.clone())))?;
        let shape = place.local_shape(&old.shape)?;
        return Ok((b.push(rebuilt(old, vec![*x, *init], shape)), place));
    }
    if split.iter().all(|d| reduced.contains(&(*d as i64))) {
        let mut value = b.push(rebuilt(old, vec![*x, *init], old.shape.clone()));
        for &d in &split {
            value = all_reduce(b, old, value, t.groups_along(d), to_apply)?;
        }
        return Ok((value, Place::Replicated));
    }
    Err(SpmdError::ReduceMixed {
        reduced,
        sharding: Box::new(src.clone()),
    })
}

fn slice(
    b: &mut Builder,
    old: &Instruction,
    ops: &Operands,
) -> Result<(InstrId, Place), SpmdError> {
    let Place::Tiled(src, t) = &ops.places[0] else {
        return Err(SpmdError::SliceOfTuple);
    };
    let global = b.shape(ops.ids[0]);
    let mut dims = old.attrs.slice.clone().unwrap_or_default();
    for (d, s) in dims.iter_mut().enumerate() {
        if t.data.get(d).copied().unwrap_or(1) > 1 {
            let whole_dim = global.dims().get(d).copied().unwrap_or(0) * t.data[d];
            if s.start != 0 || s.limit != whole_dim || s.stride != 1 {
                return Err(SpmdError::SliceCutsSplit {
                    sharding: Box::new(src.clone()),
                    dimension: d,
                });
            }
            s.limit = global.dims()[d];
        }
    }
    let place = ops.places[0].clone();
    let shape = place.local_shape(&old.shape)?;
    let mut instr = rebuilt(old, ops.ids.clone(), shape);
    instr.attrs.slice = Some(dims);
    Ok((b.push(instr), place))
}
