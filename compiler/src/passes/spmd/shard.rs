//! Where each device's piece of a sharded value lies: the shard shape, each device's tile index,
//! and the device groups that differ only along one tile dimension (the replica groups of the
//! all-gather that undoes that dimension's split).
use hlo::Shape;
use hlo::{HloSharding, ShardingKind, SubgroupKind, Tiling};

use super::error::SpmdError;

/// A tiled sharding of an array over `n` partitions, ready for arithmetic: the tile array's
/// dimensions (data, then subgroups) and its devices in row-major tile order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tiles {
    /// Tile counts of the value's dimensions.
    pub data: Vec<i64>,
    /// All tile dimensions (data, then replicated subgroups).
    pub dims: Vec<i64>,
    /// Device of each tile, row-major over `dims`.
    pub devices: Vec<i64>,
}

impl Tiles {
    /// The tiling of a sharding, when it splits the value (replicated subgroups allowed; a
    /// manual or unreduced subgroup is not a split this pass handles).
    pub fn of(s: &HloSharding, rank: usize, partitions: i64) -> Result<Option<Tiles>, SpmdError> {
        let t: &Tiling = match &s.kind {
            ShardingKind::Tiled(t) => t,
            ShardingKind::Replicated => return Ok(None),
            _ => return Err(SpmdError::NotTiled(Box::new(s.clone()))),
        };
        if let Some(k) = t.subgroups.iter().find(|&&k| k != SubgroupKind::Replicated) {
            return Err(SpmdError::PartlyManual {
                sharding: Box::new(s.clone()),
                subgroup: k.name(),
            });
        }
        if t.data_rank() != rank {
            return Err(SpmdError::TiledRank {
                sharding: Box::new(s.clone()),
                tiled: t.data_rank(),
                rank,
            });
        }
        let devices = t.assignment.devices();
        if devices.len() as i64 != partitions || devices.iter().any(|&d| d < 0 || d >= partitions) {
            return Err(SpmdError::Devices {
                sharding: Box::new(s.clone()),
                partitions,
            });
        }
        if s.is_replicated() {
            return Ok(None);
        }
        Ok(Some(Tiles {
            data: t.data_dims().to_vec(),
            dims: t.assignment.dims().to_vec(),
            devices,
        }))
    }

    /// The shard shape of `global` (every split dimension must divide evenly).
    pub fn local_dims(&self, global: &[i64]) -> Result<Vec<i64>, SpmdError> {
        global
            .iter()
            .zip(&self.data)
            .map(|(&g, &k)| {
                if g % k == 0 {
                    Ok(g / k)
                } else {
                    Err(SpmdError::Uneven { size: g, parts: k })
                }
            })
            .collect()
    }

    /// The tile index (all tile dimensions) of each device, by device id.
    pub fn index_of_device(&self) -> Vec<Vec<i64>> {
        let mut out = vec![Vec::new(); self.devices.len()];
        for (flat, &d) in self.devices.iter().enumerate() {
            let mut rest = flat as i64;
            let mut idx = vec![0; self.dims.len()];
            for k in (0..self.dims.len()).rev() {
                idx[k] = rest % self.dims[k];
                rest /= self.dims[k];
            }
            if let Some(slot) = out.get_mut(d as usize) {
                *slot = idx;
            }
        }
        out
    }

    /// The groups of devices that differ only in tile dimension `dim`, each in tile order.
    pub fn groups_along(&self, dim: usize) -> Vec<Vec<i64>> {
        // (the other tile indices, [(position along `dim`, device)])
        type Group = (Vec<i64>, Vec<(i64, i64)>);
        let mut groups: Vec<Group> = Vec::new();
        for (device, idx) in self.index_of_device().into_iter().enumerate() {
            let mut key = idx.clone();
            let pos = key.get(dim).copied().unwrap_or(0);
            if let Some(k) = key.get_mut(dim) {
                *k = 0;
            }
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, members)) => members.push((pos, device as i64)),
                None => groups.push((key, vec![(pos, device as i64)])),
            }
        }
        groups
            .into_iter()
            .map(|(_, mut members)| {
                members.sort_unstable();
                members.into_iter().map(|(_, d)| d).collect()
            })
            .collect()
    }
}

/// `shape` with `dims` as its dimensions (element type, layout kept).
pub(crate) fn with_dims(shape: &Shape, dims: Vec<i64>) -> Shape {
    match shape {
        Shape::Array(a) => {
            let mut a = a.clone();
            a.dynamic = vec![false; dims.len()];
            a.dims = dims;
            Shape::Array(a)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiles(text: &str, rank: usize, n: i64) -> Tiles {
        Tiles::of(&hlo_text::parse_sharding(text).unwrap(), rank, n)
            .unwrap()
            .unwrap()
    }

    #[test]
    fn groups_follow_the_tile_array() {
        let t = tiles("{devices=[2,1]<=[2]}", 2, 2);
        assert_eq!(t.local_dims(&[4, 2]).unwrap(), vec![2, 2]);
        assert_eq!(t.groups_along(0), vec![vec![0, 1]]);
        let t = tiles("{devices=[2,2]<=[2,2]T(1,0)}", 2, 4);
        assert_eq!(t.index_of_device()[2], vec![0, 1]);
        assert_eq!(t.groups_along(0), vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(t.groups_along(1), vec![vec![0, 2], vec![1, 3]]);
        let t = tiles("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", 2, 4);
        assert_eq!(t.groups_along(0), vec![vec![0, 2], vec![1, 3]]);
        assert!(t.local_dims(&[3, 2]).is_err());
    }

    #[test]
    fn refuses_what_it_cannot_split() {
        let s = hlo_text::parse_sharding("{devices=[2,2]<=[4] last_tile_dims={manual}}").unwrap();
        assert_eq!(
            Tiles::of(&s, 1, 4).unwrap_err().to_string(),
            "sharding {devices=[2,2]<=[4] last_tile_dims={manual}}: a manual subgroup (a partly manual value) cannot be partitioned"
        );
        let s = hlo_text::parse_sharding("{devices=[2]<=[2]}").unwrap();
        assert_eq!(
            Tiles::of(&s, 1, 4).unwrap_err().to_string(),
            "sharding {devices=[2]<=[2]} does not name each of the 4 partitions once"
        );
        assert_eq!(
            Tiles::of(&s, 2, 2).unwrap_err().to_string(),
            "sharding {devices=[2]<=[2]} tiles 1 dimensions of a rank-2 value"
        );
    }
}
