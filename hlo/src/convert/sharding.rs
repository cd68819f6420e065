//! [`HloSharding`] to and from `xla.OpSharding`, as XLA's `HloSharding::ToProto` / `FromProto`
//! write and read it.
use proto::xla as px;
use px::op_sharding::{ShardGroupType, Type};

use super::error::ProtoError;
use super::from_proto::metadata_from_proto;
use super::to_proto::metadata_to_proto;
use crate::ir::*;

fn subgroup_type(kind: SubgroupKind) -> Type {
    match kind {
        SubgroupKind::Replicated => Type::Replicated,
        SubgroupKind::Manual => Type::Manual,
        SubgroupKind::Maximal => Type::Maximal,
        SubgroupKind::Unreduced => Type::Unreduced,
    }
}

/// XLA's `ToProto`: the type, the tile array (dimensions only for a tiled sharding), the kinds
/// of the trailing tile dimensions, metadata and the shard group.
pub(super) fn sharding_to_proto(s: &HloSharding) -> px::OpSharding {
    let mut p = px::OpSharding::default();
    let ty = match &s.kind {
        ShardingKind::Tuple(elems) => {
            p.tuple_shardings = elems.iter().map(sharding_to_proto).collect();
            Type::Tuple
        }
        ShardingKind::Replicated => Type::Replicated,
        ShardingKind::Manual => Type::Manual,
        ShardingKind::Unknown => Type::Unknown,
        ShardingKind::Unreduced => Type::Unreduced,
        ShardingKind::Maximal(d) => {
            p.tile_assignment_devices = vec![*d];
            Type::Maximal
        }
        ShardingKind::Tiled(t) => {
            match &t.assignment {
                TileAssignment::Devices { dims, devices } => {
                    p.tile_assignment_dimensions = dims.clone();
                    p.tile_assignment_devices = devices.clone();
                }
                TileAssignment::Iota {
                    dims,
                    reshape_dims,
                    transpose_perm,
                } => {
                    p.tile_assignment_dimensions = dims.clone();
                    p.iota_reshape_dims = reshape_dims.clone();
                    p.iota_transpose_perm = transpose_perm.iter().map(|&d| d as i32).collect();
                }
            }
            if t.subgroups == [SubgroupKind::Replicated] {
                p.replicate_on_last_tile_dim = true;
            } else {
                p.last_tile_dims = t
                    .subgroups
                    .iter()
                    .map(|&k| subgroup_type(k) as i32)
                    .collect();
            }
            Type::Other
        }
    };
    p.r#type = ty as i32;
    p.metadata = s.metadata.iter().map(metadata_to_proto).collect();
    if let Some(group) = s.shard_group {
        p.is_shard_group = true;
        let (id, ty) = match group {
            ShardGroup::As(id) => (id, ShardGroupType::As),
            ShardGroup::Like(id) => (id, ShardGroupType::Like),
        };
        p.shard_group_id = id;
        p.shard_group_type = ty as i32;
    }
    p
}

/// XLA's `FromProto`, with its checks: a maximal sharding names one device, a tiled one either
/// lists as many devices as it has tiles or gives an iota of that many, a tuple carries no
/// metadata; every tile assignment is checked ([`HloSharding::check`]). Nesting is bounded by
/// the proto decoder's recursion limit.
pub(super) fn sharding_from_proto(p: &px::OpSharding) -> Result<HloSharding, ProtoError> {
    let bad = |why: String| ProtoError::Sharding(why);
    let metadata: Vec<OpMetadata> = p.metadata.iter().filter_map(metadata_from_proto).collect();
    let kind = match Type::try_from(p.r#type) {
        Ok(Type::Tuple) => {
            if !p.metadata.is_empty() {
                return Err(bad("a tuple sharding with metadata".into()));
            }
            let elems = p
                .tuple_shardings
                .iter()
                .map(sharding_from_proto)
                .collect::<Result<_, _>>()?;
            ShardingKind::Tuple(elems)
        }
        Ok(Type::Replicated) => ShardingKind::Replicated,
        Ok(Type::Manual) => ShardingKind::Manual,
        Ok(Type::Unknown) => ShardingKind::Unknown,
        Ok(Type::Unreduced) => ShardingKind::Unreduced,
        Ok(Type::Maximal) => match p.tile_assignment_devices.as_slice() {
            [d] => ShardingKind::Maximal(*d),
            other => return Err(ProtoError::MaximalSharding(other.to_vec())),
        },
        Ok(Type::Other) => tiled_from_proto(p)?,
        Err(_) => return Err(ProtoError::ShardingType(p.r#type)),
    };
    let group = if p.shard_group_type == ShardGroupType::Like as i32 {
        ShardGroup::Like(p.shard_group_id)
    } else {
        ShardGroup::As(p.shard_group_id)
    };
    let shard_group = p.is_shard_group.then_some(group);
    let s = HloSharding {
        kind,
        shard_group,
        metadata,
    };
    s.check()?;
    Ok(s)
}

fn tiled_from_proto(p: &px::OpSharding) -> Result<ShardingKind, ProtoError> {
    let bad = |why: &str| ProtoError::Sharding(why.to_string());
    let iota = !p.iota_reshape_dims.is_empty();
    if iota && !p.tile_assignment_devices.is_empty() {
        return Err(bad("a tiled sharding with both a device list and an iota"));
    }
    if iota && p.iota_reshape_dims.len() != p.iota_transpose_perm.len() {
        return Err(bad(
            "iota reshape dimensions and transpose of different ranks",
        ));
    }
    if !iota && p.tile_assignment_devices.is_empty() {
        return Err(bad("a tiled sharding without devices"));
    }
    // XLA reads a tiling over one device as replicated.
    let one_device = if iota {
        p.iota_reshape_dims.iter().all(|&d| d == 1)
    } else {
        p.tile_assignment_devices.len() == 1
    };
    if one_device {
        return Ok(ShardingKind::Replicated);
    }
    if p.tile_assignment_dimensions.is_empty() {
        return Err(bad("a tiled sharding without tile dimensions"));
    }
    let assignment = if iota {
        TileAssignment::Iota {
            dims: p.tile_assignment_dimensions.clone(),
            reshape_dims: p.iota_reshape_dims.clone(),
            transpose_perm: p
                .iota_transpose_perm
                .iter()
                .map(|&d| i64::from(d))
                .collect(),
        }
    } else {
        TileAssignment::Devices {
            dims: p.tile_assignment_dimensions.clone(),
            devices: p.tile_assignment_devices.clone(),
        }
    };
    let subgroups = if p.last_tile_dims.is_empty() {
        if p.replicate_on_last_tile_dim {
            vec![SubgroupKind::Replicated]
        } else {
            Vec::new()
        }
    } else {
        if p.replicate_on_last_tile_dim {
            return Err(bad("both replicate_on_last_tile_dim and last_tile_dims"));
        }
        p.last_tile_dims
            .iter()
            .map(|&t| match Type::try_from(t) {
                Ok(Type::Replicated) => Ok(SubgroupKind::Replicated),
                Ok(Type::Manual) => Ok(SubgroupKind::Manual),
                Ok(Type::Maximal) => Ok(SubgroupKind::Maximal),
                Ok(Type::Unreduced) => Ok(SubgroupKind::Unreduced),
                _ => Err(ProtoError::ShardingType(t)),
            })
            .collect::<Result<_, _>>()?
    };
    Ok(ShardingKind::Tiled(Tiling {
        assignment,
        subgroups,
    }))
}
