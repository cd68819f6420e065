//! `collective-permute` as ops every runtime in the forward window runs, while
//! `CompileOptions::emit_collective_permute` is off (runtimes older than stage 1 of
//! [`proto::rollout::COLLECTIVE_PERMUTE`] refuse `collective_permute_start_thunk`;
//! docs/compiler.md, "Partitions"):
//!
//! ```text
//! g    = all-gather(reshape(x) -> [1, ...]) over the permute's domain -> [n, ...]
//! id   = partition-id (with a channel id: pairs name partitions) or replica-id (without)
//! src  = dynamic-slice(constant s32[n] {source of each target, 0 if none}, id)
//! has  = dynamic-slice(constant pred[n] {whether a pair targets it}, id)
//! out  = select(broadcast(has), reshape(dynamic-slice(g, src, 0, ...)), broadcast(0))
//! ```
//!
//! The domain is the devices the pairs are read among: the partitions of a device's replica
//! (an all-gather with flattened groups, one per replica) or the replicas of its partition (a
//! cross-replica all-gather); device `i` of the domain is row `i` of `g`. A device no pair
//! targets gets zeros, as XLA's collective-permute leaves it. The exchange moves every operand
//! to every device, `n` times the bytes of the permute: the price of running on older runtimes.
use hlo::{ArrayLiteral, Attrs, ConstantLiteral, LiteralValue, ReplicaGroups};
use hlo::{HloModule, InstrId, Instruction, Opcode, PrimitiveType, Shape};

use crate::error::CompileError;
use crate::passes::emit::{zero, Emit};
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};
use crate::unsupported::UnsupportedPermute;

/// Rewrites every collective-permute of the module.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    let replicas = module.config.replica_count.unwrap_or(1).max(1);
    let partitions = module.config.num_partitions.unwrap_or(1).max(1);
    for_each_computation(module, Scope::All, |_, comp| {
        if !comp
            .instructions
            .iter()
            .any(|i| i.opcode == Opcode::CollectivePermute)
        {
            return Ok(None);
        }
        let new = rebuild(comp, |r, _, old| {
            if old.opcode != Opcode::CollectivePermute {
                return r.keep(old).map(Some);
            }
            let refuse = |why: UnsupportedPermute| CompileError::unsupported(&comp.name, old, why);
            let operands = r.operands(old)?;
            let (&[x], Some(shape)) = (
                operands.as_slice(),
                old.shape.is_array().then(|| old.shape.clone()),
            ) else {
                return Err(refuse(UnsupportedPermute::NotOneArray));
            };
            let cross_partition = old.attrs.channel_id.is_some();
            let n = if cross_partition {
                partitions
            } else {
                replicas
            };
            let pairs = pairs(&comp.name, old, n, n)?;
            let domain = Domain {
                replicas,
                partitions,
                cross_partition,
            };
            let mut push = |i| r.push(i);
            Ok(Some(expand(old, x, &shape, &pairs, domain, &mut push)))
        })?;
        Ok(Some(new))
    })
}

/// Who a permute's pairs are read among.
#[derive(Clone, Copy)]
struct Domain {
    replicas: i64,
    partitions: i64,
    /// Pairs name partitions (a channel id), else replicas.
    cross_partition: bool,
}

fn expand(
    old: &Instruction,
    x: InstrId,
    shape: &Shape,
    pairs: &[(i64, i64)],
    d: Domain,
    push: &mut dyn FnMut(Instruction) -> InstrId,
) -> InstrId {
    let mut e = Emit::new(old, "permute", push);
    let ty = shape.element_type().unwrap_or(PrimitiveType::F32);
    let dims = shape.dims().to_vec();
    let n = if d.cross_partition {
        d.partitions
    } else {
        d.replicas
    };
    let row = Shape::array(ty, [&[1], dims.as_slice()].concat());
    let x1 = e.plain(Opcode::Reshape, row.clone(), vec![x]);
    let gathered = e.op(
        Opcode::AllGather,
        Shape::array(ty, [&[n], dims.as_slice()].concat()),
        vec![x1],
        gather_attrs(old, d),
    );
    let id_op = if d.cross_partition {
        Opcode::PartitionId
    } else {
        Opcode::ReplicaId
    };
    let id = e.plain(id_op, Shape::scalar(PrimitiveType::U32), vec![]);
    let id = e.plain(Opcode::Convert, Shape::scalar(PrimitiveType::S32), vec![id]);
    let source_of = |t: i64| pairs.iter().find(|p| p.1 == t).map(|p| p.0);
    let sources = (0..n).map(|t| LiteralValue::Int(i128::from(source_of(t).unwrap_or(0))));
    let receives = (0..n).map(|t| LiteralValue::Bool(source_of(t).is_some()));
    let src = lookup(&mut e, PrimitiveType::S32, sources.collect(), id);
    let has = lookup(&mut e, PrimitiveType::Pred, receives.collect(), id);
    let z = e.constant(PrimitiveType::S32, LiteralValue::Int(0));
    let starts: Vec<InstrId> = std::iter::once(src).chain(dims.iter().map(|_| z)).collect();
    let slice = e.dynamic_slice(row, gathered, &starts);
    let value = e.plain(Opcode::Reshape, shape.clone(), vec![slice]);
    let mask_shape = Shape::array(PrimitiveType::Pred, dims.clone());
    let mask = e.with_dims(Opcode::Broadcast, mask_shape, has, vec![]);
    let zero = e.constant(ty, zero(ty));
    let zeros = e.with_dims(Opcode::Broadcast, shape.clone(), zero, vec![]);
    e.next_name = Some(old.name.clone());
    e.plain(Opcode::Select, shape.clone(), vec![mask, value, zeros])
}

/// The all-gather over the permute's domain: the partitions of each replica (flattened groups,
/// the permute's channel id) or the replicas of each partition (cross-replica, no groups).
fn gather_attrs(old: &Instruction, d: Domain) -> Attrs {
    let mut attrs = Attrs {
        dimensions: Some(vec![0]),
        ..Attrs::default()
    };
    if d.cross_partition {
        let groups = (0..d.replicas)
            .map(|r| (0..d.partitions).map(|p| r * d.partitions + p).collect())
            .collect();
        attrs.replica_groups = Some(ReplicaGroups::List(groups));
        attrs.channel_id = old.attrs.channel_id;
        attrs.use_global_device_ids = Some(true);
    }
    attrs
}

/// `table[id]` of a constant table, as a scalar.
fn lookup(e: &mut Emit<'_>, ty: PrimitiveType, table: Vec<LiteralValue>, id: InstrId) -> InstrId {
    let n = table.len() as i64;
    let attrs = Attrs {
        literal: Some(ConstantLiteral::Array(ArrayLiteral { values: table })),
        ..Attrs::default()
    };
    let t = e.op(Opcode::Constant, Shape::array(ty, vec![n]), vec![], attrs);
    let one = e.dynamic_slice(Shape::array(ty, vec![1]), t, &[id]);
    e.plain(Opcode::Reshape, Shape::scalar(ty), vec![one])
}

/// A permute's `source_target_pairs`: each source in `[0, sources)` and target in
/// `[0, targets)`, none a source twice or a target twice (XLA's verifier's rules).
pub(crate) fn pairs(
    comp: &str,
    instr: &Instruction,
    sources: i64,
    targets: i64,
) -> Result<Vec<(i64, i64)>, CompileError> {
    let refuse = |why: UnsupportedPermute| CompileError::unsupported(comp, instr, why);
    let text = instr
        .attrs
        .raw("source_target_pairs")
        .ok_or_else(|| refuse(UnsupportedPermute::NoPairs))?;
    let pairs = hlo::parse_source_target_pairs(text)
        .ok_or_else(|| refuse(UnsupportedPermute::PairsSyntax(text.to_owned())))?;
    let mut seen_s = Vec::new();
    let mut seen_t = Vec::new();
    for &(s, t) in &pairs {
        if !(0..sources).contains(&s) || !(0..targets).contains(&t) {
            return Err(refuse(UnsupportedPermute::PairOutside {
                sender: s,
                receiver: t,
                sources,
                targets,
                cross_partition: instr.attrs.channel_id.is_some(),
            }));
        }
        if seen_s.contains(&s) || seen_t.contains(&t) {
            return Err(refuse(UnsupportedPermute::PairRepeated {
                sender: s,
                receiver: t,
            }));
        }
        seen_s.push(s);
        seen_t.push(t);
    }
    Ok(pairs)
}

/// Writes `pairs` as the instruction's `source_target_pairs`.
pub(crate) fn set_pairs(instr: &mut Instruction, pairs: &[(i64, i64)]) {
    let text = hlo::print_source_target_pairs(pairs);
    match instr
        .attrs
        .raw
        .iter_mut()
        .find(|(k, _)| k == "source_target_pairs")
    {
        Some((_, v)) => *v = text,
        None => instr.attrs.raw.push(("source_target_pairs".into(), text)),
    }
}

#[cfg(test)]
mod tests {
    use hlo::{parse_source_target_pairs as parse_pairs, print_source_target_pairs};

    #[test]
    fn pairs_parse_as_xla_prints_them() {
        assert_eq!(parse_pairs("{{0,1},{1,0}}"), Some(vec![(0, 1), (1, 0)]));
        assert_eq!(
            parse_pairs("{ {0, 3} , {2,1} }"),
            Some(vec![(0, 3), (2, 1)])
        );
        assert_eq!(parse_pairs("{}"), Some(vec![]));
        assert_eq!(parse_pairs("{{0}}"), None);
        assert_eq!(parse_pairs("{{a,1}}"), None);
        assert_eq!(parse_pairs("0,1"), None);
        assert_eq!(
            print_source_target_pairs(&[(0, 1), (1, 0)]),
            "{{0,1},{1,0}}"
        );
        assert_eq!(print_source_target_pairs(&[]), "{}");
    }
}
