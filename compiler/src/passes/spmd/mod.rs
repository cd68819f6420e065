//! The SPMD partitioner: a program written for N devices (shardings on its values, `shard_map`
//! bodies between `SPMDFullToShardShape` / `SPMDShardToFullShape`) becomes the program one
//! device runs, with `num_partitions = N`, collectives and `partition-id`, as XLA's
//! `SpmdPartitioner` makes it. One concern per file:
//!
//! - `sdy_import`: JAX's HLO text in Shardy's form (`xla.sdy.*`) into GSPMD shardings and
//!   custom calls (the StableHLO front end writes that form directly);
//! - `shard`: shard shapes, tile indices and device groups of a sharding;
//! - `reshard`: moving a value between shardings (`dynamic-slice` by partition id,
//!   `all-gather`);
//! - `partition`: the walk over the entry (parameters, annotations, manual regions);
//! - `ops`: the rules for ops on split values (sharded `jit`).
//!
//! A module is partitioned when it says it is for several devices (`num_partitions`, a Shardy
//! mesh, or a sharding that names several devices) and carries something to partition (a
//! sharding that splits a value or marks it manual, an SPMD custom call, or a Shardy mesh of
//! several devices). A module that already is one device's program (`num_partitions` alone)
//! is left as it is. Whatever the
//! pass cannot partition is refused naming the instruction and the sharding; docs/sharding.md
//! lists what partitions.
//!
//! The per-device program keeps no shardings: what runs on each device is fixed by now.
use hlo::{Attrs, Computation, ConstantLiteral, HloSharding, ShardingKind};
use hlo::{HloModule, InstrId, Instruction, Opcode, PrimitiveType, Shape};

use crate::error::CompileError;
use crate::unsupported::UnsupportedSharding;

mod error;
mod ops;
mod partition;
mod reshard;
pub(crate) mod sdy_import;
pub use error::SpmdError;
pub use sdy_import::MeshesError;
mod shard;

/// The custom calls XLA's partitioner consumes.
const SPMD_CALLS: &[&str] = &["Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"];

/// Whether a sharding splits a value or marks it manual.
fn splits(s: &HloSharding) -> bool {
    match &s.kind {
        ShardingKind::Manual => true,
        ShardingKind::Tiled(_) => !s.is_replicated(),
        ShardingKind::Tuple(e) => e.iter().any(splits),
        _ => false,
    }
}

fn spmd_call(i: &Instruction) -> bool {
    i.opcode == Opcode::CustomCall
        && i.attrs
            .custom_call_target
            .as_deref()
            .is_some_and(|t| SPMD_CALLS.contains(&t))
}

/// The partition count when the module needs partitioning.
pub fn partitions(module: &HloModule) -> Result<Option<i64>, CompileError> {
    let shardy = sdy_import::uses_shardy(module);
    // Only what runs (see `sdy_import::uses_shardy`).
    let reachable = module.post_order();
    let annotated = shardy
        || reachable.iter().filter_map(|&id| module.get(id)).any(|c| {
            c.instructions
                .iter()
                .any(|i| spmd_call(i) || i.attrs.sharding.as_ref().is_some_and(splits))
        });
    let mesh = sdy_import::meshes(module)?
        .iter()
        .map(|(_, m)| m.devices())
        .max()
        .unwrap_or(1);
    // A Shardy mesh of several devices is a program for them, replicated where nothing says
    // otherwise.
    if !annotated && mesh <= 1 {
        return Ok(None);
    }
    let span = module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter())
        .filter_map(|i| i.attrs.sharding.as_ref())
        .map(HloSharding::device_span)
        .max()
        .unwrap_or(1);
    let n = match module.config.num_partitions {
        Some(n) if n > 1 => n,
        _ => mesh.max(span),
    };
    Ok((n > 1).then_some(n))
}

/// Partitions the module for one device when it is written for several (see the module docs).
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    partition_module(module).map(|_| ())
}

/// A `conditional` whose branch index (or predicate) is a constant runs one branch: it becomes a
/// `call` of that branch, which `inline_calls` then inlines. A multi-platform export's
/// `stablehlo.case` on its platform index, fixed to cuda's when the export is read, is such a
/// conditional; over sharded operands the partitioner would refuse it. XLA's rule for an index
/// out of range: the last branch.
fn fold_known_branches(module: &mut HloModule) -> bool {
    let mut folded = false;
    for comp in &mut module.computations {
        for i in 0..comp.instructions.len() {
            let instr = &comp.instructions[i];
            if instr.opcode != Opcode::Conditional {
                continue;
            }
            let Some(known) = instr
                .operands
                .first()
                .and_then(|o| comp.instructions.get(o.index()))
                .filter(|c| c.opcode == Opcode::Constant && c.shape.element_count() == 1)
                .and_then(|c| match &c.attrs.literal {
                    Some(ConstantLiteral::Array(a)) => a.values.first().copied(),
                    _ => None,
                })
            else {
                continue;
            };
            let a = &instr.attrs;
            let taken = match (
                &a.branch_computations,
                a.true_computation,
                a.false_computation,
            ) {
                (Some(branches), _, _) if !branches.is_empty() => {
                    let last = branches.len() - 1;
                    let b = usize::try_from(known.as_i128()).map_or(last, |b| b.min(last));
                    Some((b, branches[b]))
                }
                (None, Some(t), Some(f)) => Some(if known.as_bool() { (0, t) } else { (1, f) }),
                _ => None,
            };
            let Some((b, callee)) = taken else { continue };
            let Some(&operand) = instr.operands.get(1 + b) else {
                continue;
            };
            let instr = &mut comp.instructions[i];
            instr.opcode = Opcode::Call;
            instr.operands = vec![operand];
            instr.attrs = Attrs {
                to_apply: Some(callee),
                sharding: instr.attrs.sharding.take(),
                ..Attrs::default()
            };
            folded = true;
        }
    }
    folded
}

/// How a program for several devices splits its entry: per parameter and per result leaf, the
/// sharding whose tile each device holds (`{replicated}`: the whole value; `{manual}`: a value
/// each device has its own of). What a harness needs to split one global io case per device.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryShardings {
    /// The devices (partitions) the program is for.
    pub devices: i64,
    /// Per parameter number.
    pub params: Vec<HloSharding>,
    /// Per leaf of the result, depth first.
    pub results: Vec<HloSharding>,
}

/// The entry shardings of `module` as the partitioner places them (Shardy's attributes
/// imported, and the result where the partitioned program leaves it), `None` when the module is
/// not for several devices.
pub fn entry_shardings(module: &HloModule) -> Result<Option<EntryShardings>, CompileError> {
    let mut m = module.clone();
    let Some((devices, places)) = partition_module(&mut m)? else {
        return Ok(None);
    };
    let params = places.params.iter().map(place_sharding).collect();
    let mut results = Vec::new();
    flatten_place(&places.result, &mut results);
    Ok(Some(EntryShardings {
        devices,
        params,
        results,
    }))
}

fn place_sharding(p: &reshard::Place) -> HloSharding {
    match p {
        reshard::Place::Replicated => HloSharding::replicated(),
        reshard::Place::Manual => HloSharding::manual(),
        reshard::Place::Tiled(s, _) => s.clone(),
        reshard::Place::Tuple(elems) => {
            ShardingKind::Tuple(elems.iter().map(place_sharding).collect()).into()
        }
    }
}

fn flatten_place(p: &reshard::Place, out: &mut Vec<HloSharding>) {
    match p {
        reshard::Place::Tuple(elems) => elems.iter().for_each(|e| flatten_place(e, out)),
        other => out.push(place_sharding(other)),
    }
}

/// [`run`], with the device count and where the entry's values lie (`None`: not partitioned).
fn partition_module(
    module: &mut HloModule,
) -> Result<Option<(i64, partition::EntryPlaces)>, CompileError> {
    let Some(n) = partitions(module)? else {
        return Ok(None);
    };
    sdy_import::run(module)?;
    // Inlining a folded branch can make another conditional's index a constant (JAX's
    // platform-dependent lowering maps the platform index to a branch index by a `case` first):
    // fold and inline until nothing folds, at most once per conditional.
    while {
        let folded = fold_known_branches(module);
        crate::passes::inline_calls::run(module)?;
        folded
    } {}
    refuse_outside_entry(module)?;
    let next_channel = module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter())
        .filter_map(|i| i.attrs.channel_id)
        .max()
        .unwrap_or(0)
        + 1;
    let first_new = u32::try_from(module.computations.len()).unwrap_or(u32::MAX);
    let entry = module.entry_computation().clone();
    let builder = reshard::Builder::new(n, next_channel, first_new);
    let (per_device, b, places) = partition::partition_entry(&entry, builder)?;
    if let Some(slot) = module.computations.get_mut(module.entry.index()) {
        *slot = per_device;
    }
    for ty in b.reducers {
        let name = format!("spmd.add.{}", ty.name());
        module.computations.push(add_computation(&name, ty));
    }
    for comp in &mut module.computations {
        for i in &mut comp.instructions {
            i.attrs.sharding = None;
        }
    }
    module.config.num_partitions = Some(n);
    // The meshes were for partitioning; the per-device program has none.
    if let Some(attrs) = module.config.frontend_attributes.as_mut() {
        attrs.retain(|(k, _)| k != "xla.sdy.meshes");
        if attrs.is_empty() {
            module.config.frontend_attributes = None;
        }
    }
    relayout_entry(module);
    Ok(Some((n, places)))
}

/// Shardings that split values, and SPMD custom calls, only partition in the entry (calls are
/// inlined first); in a loop body, branch or reducer the entry reaches they are refused.
fn refuse_outside_entry(module: &HloModule) -> Result<(), CompileError> {
    // Computations only calls reached are copies now, and nothing reaches them.
    for id in module.post_order() {
        if id == module.entry {
            continue;
        }
        let Some(comp) = module.get(id) else {
            continue;
        };
        for instr in &comp.instructions {
            let split = instr.attrs.sharding.as_ref().filter(|s| splits(s));
            if spmd_call(instr) || split.is_some() {
                return Err(CompileError::unsupported(
                    &comp.name,
                    instr,
                    UnsupportedSharding::InCalledComputation(split.cloned()),
                ));
            }
        }
    }
    Ok(())
}

/// `add` over two scalars of `ty`, the reducer of the all-reduces a dot or reduce needs.
fn add_computation(name: &str, ty: PrimitiveType) -> Computation {
    let scalar = Shape::scalar(ty);
    let param = |n: i64| Instruction {
        name: format!("{name}.p{n}"),
        opcode: Opcode::Parameter,
        shape: scalar.clone(),
        operands: vec![],
        attrs: Attrs {
            parameter_number: Some(n),
            ..Attrs::default()
        },
        metadata: None,
        loc: Default::default(),
    };
    let add = Instruction {
        name: format!("{name}.sum"),
        opcode: Opcode::Add,
        shape: scalar.clone(),
        operands: vec![InstrId(0), InstrId(1)],
        attrs: Attrs::default(),
        metadata: None,
        loc: Default::default(),
    };
    Computation {
        name: name.to_string(),
        instructions: vec![param(0), param(1), add],
        params: vec![InstrId(0), InstrId(1)],
        root: InstrId(2),
        execution_thread: None,
        loc: Default::default(),
    }
}

/// The entry layout with the per-device shapes (each keeps its layout).
fn relayout_entry(module: &mut HloModule) {
    let entry = module.entry_computation();
    let params: Vec<Shape> = entry.param_shapes().into_iter().cloned().collect();
    let result = entry
        .root_instruction()
        .map_or(Shape::Tuple(Vec::new()), |r| r.shape.clone());
    if let Some(layout) = module.config.entry_computation_layout.as_mut() {
        for (old, new) in layout.params.iter_mut().zip(params) {
            *old = keep_layout(old, &new);
        }
        layout.result = keep_layout(&layout.result, &result);
    }
}

fn keep_layout(old: &Shape, new: &Shape) -> Shape {
    match (old, new) {
        (Shape::Array(o), Shape::Array(n)) => {
            let mut a = o.clone();
            a.dims = n.dims.clone();
            a.dynamic = n.dynamic.clone();
            Shape::Array(a)
        }
        (Shape::Tuple(o), Shape::Tuple(n)) if o.len() == n.len() => {
            Shape::Tuple(o.iter().zip(n).map(|(a, b)| keep_layout(a, b)).collect())
        }
        _ => new.clone(),
    }
}
