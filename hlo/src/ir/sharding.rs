//! `HloSharding`: how a value is laid out over the devices of an SPMD program, XLA's
//! `sharding={...}` attribute (`xla/hlo/ir/hlo_sharding.h`), printed exactly as XLA prints it.
//!
//! | text | meaning |
//! | --- | --- |
//! | `{replicated}` | every device holds the whole value |
//! | `{maximal device=k}` | only device `k` holds (and computes) the value |
//! | `{devices=[2,1]0,1}` | tiled: dimension 0 split in 2, tile `i` on the listed device |
//! | `{devices=[2,2]<=[2,2]T(1,0)}` | the same with the device list in XLA's iota form |
//! | `{devices=[2,1,2]<=[4] last_tile_dim_replicate}` | the last tile dimension replicates |
//! | `{devices=[2,2]<=[4] last_tile_dims={manual}}` | trailing tile dimensions of other kinds |
//! | `{manual}` | each device holds its own value (inside a `shard_map` body) |
//! | `{unknown}`, `{unreduced}` | XLA's placeholders for propagation / pending reductions |
//! | `{{replicated}, {manual}}` | one sharding per tuple element |
//!
//! A sharding may carry a shard group (`shard_as 1`, `shard_like 1`) and `metadata={...}`.

use std::fmt;

use super::OpMetadata;

/// Largest device count a tile assignment may name: expanding an iota assignment allocates one
/// entry per device, so the parser and the proto reader refuse larger ones.
pub const MAX_SHARDING_DEVICES: i64 = 1 << 16;

/// Why a sharding's parts do not fit together ([`TileAssignment::check`],
/// [`HloSharding::check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShardingError {
    /// Tile dimensions that are not positive or multiply to more than
    /// [`MAX_SHARDING_DEVICES`].
    #[error("tile dimensions {0:?} are not positive or too many devices (at most {MAX_SHARDING_DEVICES})")]
    TileDims(Vec<i64>),
    /// A device list whose length is not the tile count.
    #[error("{listed} devices listed for a tile array of {tiles}")]
    DeviceCount {
        /// The devices listed.
        listed: usize,
        /// The tiles.
        tiles: i64,
    },
    /// A device list that names a device twice or a negative one.
    #[error("device list {0:?} repeats or has a negative id")]
    DeviceList(Vec<i64>),
    /// Iota dimensions that are not positive or too large.
    #[error("iota dimensions {0:?} are not positive or too large")]
    IotaDims(Vec<i64>),
    /// An iota whose device count is not the tile count.
    #[error("iota of {devices} devices for a tile array of {tiles}")]
    IotaCount {
        /// The iota's device count.
        devices: i64,
        /// The tiles.
        tiles: i64,
    },
    /// An iota transpose that is not a permutation of its dimensions.
    #[error("transpose {perm:?} is not a permutation of {rank} dimensions")]
    NotAPermutation {
        /// The transpose.
        perm: Vec<i64>,
        /// The iota's rank.
        rank: usize,
    },
    /// More subgroup kinds than tile dimensions.
    #[error("{subgroups} last_tile_dims for {dims} tile dimensions")]
    SubgroupCount {
        /// The subgroup kinds.
        subgroups: usize,
        /// The tile dimensions.
        dims: usize,
    },
    /// A maximal sharding on a device out of range.
    #[error("maximal device {0} is out of range")]
    MaximalDevice(i64),
}

/// The kind of a trailing tile dimension (`last_tile_dims={...}`), XLA's `OpSharding::Type`
/// values that may appear there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubgroupKind {
    /// `replicated`: the devices along it hold the same tile.
    Replicated,
    /// `manual`: the devices along it hold their own values.
    Manual,
    /// `maximal`
    Maximal,
    /// `unreduced`: partial values still to be summed.
    Unreduced,
}

impl SubgroupKind {
    /// The text name.
    pub fn name(self) -> &'static str {
        match self {
            SubgroupKind::Replicated => "replicated",
            SubgroupKind::Manual => "manual",
            SubgroupKind::Maximal => "maximal",
            SubgroupKind::Unreduced => "unreduced",
        }
    }

    /// Parses the text name.
    pub fn from_name(s: &str) -> Option<SubgroupKind> {
        Some(match s {
            "replicated" => SubgroupKind::Replicated,
            "manual" => SubgroupKind::Manual,
            "maximal" => SubgroupKind::Maximal,
            "unreduced" => SubgroupKind::Unreduced,
            _ => return None,
        })
    }
}

/// Which devices hold which tile: an array of device ids shaped `dims`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TileAssignment {
    /// `devices=[d0,d1]a,b,c,d`: the ids listed in row-major order.
    Devices {
        /// The tile array's dimensions.
        dims: Vec<i64>,
        /// One device id per tile, row-major.
        devices: Vec<i64>,
    },
    /// `devices=[d0,d1]<=[r0,r1]T(p0,p1)`: `iota(r0*r1)` reshaped to `reshape_dims`,
    /// transposed by `transpose_perm`, reshaped to `dims` (no `T(...)`: the identity).
    Iota {
        /// The tile array's dimensions.
        dims: Vec<i64>,
        /// The iota's shape before the transpose.
        reshape_dims: Vec<i64>,
        /// The transpose permutation (same rank as `reshape_dims`).
        transpose_perm: Vec<i64>,
    },
}

impl TileAssignment {
    /// The tile array's dimensions (data dimensions, then any subgroup dimensions).
    pub fn dims(&self) -> &[i64] {
        match self {
            TileAssignment::Devices { dims, .. } | TileAssignment::Iota { dims, .. } => dims,
        }
    }

    /// The number of tiles (the product of the dimensions).
    pub fn num_tiles(&self) -> i64 {
        self.dims().iter().product()
    }

    /// Every device id in row-major tile order (the iota form expanded).
    pub fn devices(&self) -> Vec<i64> {
        match self {
            TileAssignment::Devices { devices, .. } => devices.clone(),
            TileAssignment::Iota {
                reshape_dims,
                transpose_perm,
                ..
            } => iota_devices(reshape_dims, transpose_perm),
        }
    }

    /// Checks the assignment's internal consistency: positive dimensions, the device count
    /// equal to the number of tiles and at most [`MAX_SHARDING_DEVICES`], a permutation of the
    /// right rank, and (for a list) every device named once.
    pub fn check(&self) -> Result<(), ShardingError> {
        let count = checked_product(self.dims())
            .ok_or_else(|| ShardingError::TileDims(self.dims().to_vec()))?;
        match self {
            TileAssignment::Devices { devices, .. } => {
                if devices.len() as i64 != count {
                    return Err(ShardingError::DeviceCount {
                        listed: devices.len(),
                        tiles: count,
                    });
                }
                let mut seen = devices.clone();
                seen.sort_unstable();
                seen.dedup();
                if seen.len() != devices.len() || seen.first().is_some_and(|&d| d < 0) {
                    return Err(ShardingError::DeviceList(devices.clone()));
                }
            }
            TileAssignment::Iota {
                reshape_dims,
                transpose_perm,
                ..
            } => {
                let n = checked_product(reshape_dims)
                    .ok_or_else(|| ShardingError::IotaDims(reshape_dims.clone()))?;
                if n != count {
                    return Err(ShardingError::IotaCount {
                        devices: n,
                        tiles: count,
                    });
                }
                let mut perm = transpose_perm.clone();
                perm.sort_unstable();
                if perm != (0..reshape_dims.len() as i64).collect::<Vec<_>>() {
                    return Err(ShardingError::NotAPermutation {
                        perm: transpose_perm.clone(),
                        rank: reshape_dims.len(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// The product of positive dimensions when it is at most [`MAX_SHARDING_DEVICES`].
fn checked_product(dims: &[i64]) -> Option<i64> {
    dims.iter().try_fold(1i64, |acc, &d| {
        (d > 0)
            .then(|| acc.checked_mul(d))
            .flatten()
            .filter(|&p| p <= MAX_SHARDING_DEVICES)
    })
}

/// `iota(prod(reshape))` reshaped to `reshape`, transposed by `perm`, flattened.
fn iota_devices(reshape: &[i64], perm: &[i64]) -> Vec<i64> {
    let n: i64 = reshape.iter().product();
    // Row-major strides of the iota array, permuted: output dimension k walks input `perm[k]`.
    let mut strides = vec![1i64; reshape.len()];
    for i in (0..reshape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * reshape[i + 1];
    }
    let out_dims: Vec<i64> = perm.iter().map(|&p| reshape[p as usize]).collect();
    let out_strides: Vec<i64> = perm.iter().map(|&p| strides[p as usize]).collect();
    let mut index = vec![0i64; out_dims.len()];
    let mut out = Vec::with_capacity(n.max(0) as usize);
    for _ in 0..n {
        out.push(index.iter().zip(&out_strides).map(|(i, s)| i * s).sum());
        for k in (0..index.len()).rev() {
            index[k] += 1;
            if index[k] < out_dims[k] {
                break;
            }
            index[k] = 0;
        }
    }
    out
}

/// A tiled sharding: the tile array, and the kinds of its trailing non-data dimensions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tiling {
    /// Which device holds which tile.
    pub assignment: TileAssignment,
    /// The kinds of the last `subgroups.len()` tile dimensions (`last_tile_dim_replicate` is
    /// `[Replicated]`, printed in that short form as XLA does).
    pub subgroups: Vec<SubgroupKind>,
}

impl Tiling {
    /// How many tile dimensions split the value's dimensions (the rest are subgroups).
    pub fn data_rank(&self) -> usize {
        self.assignment
            .dims()
            .len()
            .saturating_sub(self.subgroups.len())
    }

    /// The tile counts of the value's dimensions.
    pub fn data_dims(&self) -> &[i64] {
        &self.assignment.dims()[..self.data_rank()]
    }
}

/// XLA's shard groups: `shard_as N` / `shard_like N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShardGroup {
    /// `shard_as N`: members get the same sharding.
    As(i64),
    /// `shard_like N`: members get similar shardings.
    Like(i64),
}

/// What kind of sharding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShardingKind {
    /// `{replicated}`
    Replicated,
    /// `{manual}`
    Manual,
    /// `{unknown}`
    Unknown,
    /// `{unreduced}`
    Unreduced,
    /// `{maximal device=k}`
    Maximal(i64),
    /// `{devices=...}`
    Tiled(Tiling),
    /// `{{...}, {...}}`: one sharding per tuple element (`{}` for an empty tuple).
    Tuple(Vec<HloSharding>),
}

/// An instruction's sharding (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HloSharding {
    /// The kind, with its devices.
    pub kind: ShardingKind,
    /// `shard_as` / `shard_like`.
    pub shard_group: Option<ShardGroup>,
    /// `metadata={...}`: where the sharding came from.
    pub metadata: Vec<OpMetadata>,
}

impl From<ShardingKind> for HloSharding {
    fn from(kind: ShardingKind) -> Self {
        HloSharding {
            kind,
            shard_group: None,
            metadata: Vec::new(),
        }
    }
}

impl HloSharding {
    /// `{replicated}`
    pub fn replicated() -> HloSharding {
        ShardingKind::Replicated.into()
    }

    /// `{manual}`
    pub fn manual() -> HloSharding {
        ShardingKind::Manual.into()
    }

    /// A tiled sharding over an explicit device list.
    pub fn tiled(dims: Vec<i64>, devices: Vec<i64>, subgroups: Vec<SubgroupKind>) -> HloSharding {
        ShardingKind::Tiled(Tiling {
            assignment: TileAssignment::Devices { dims, devices },
            subgroups,
        })
        .into()
    }

    /// Whether every device holds the whole value (`{replicated}`, or a tiling that splits no
    /// dimension and only replicates).
    pub fn is_replicated(&self) -> bool {
        match &self.kind {
            ShardingKind::Replicated => true,
            ShardingKind::Tiled(t) => {
                t.data_dims().iter().all(|&d| d == 1)
                    && t.subgroups.iter().all(|&s| s == SubgroupKind::Replicated)
            }
            _ => false,
        }
    }

    /// Whether this is `{manual}`.
    pub fn is_manual(&self) -> bool {
        self.kind == ShardingKind::Manual
    }

    /// The tiling, for a tiled sharding.
    pub fn tiling(&self) -> Option<&Tiling> {
        match &self.kind {
            ShardingKind::Tiled(t) => Some(t),
            _ => None,
        }
    }

    /// The largest device id plus one that the sharding names (1 for replicated and manual).
    pub fn device_span(&self) -> i64 {
        match &self.kind {
            ShardingKind::Maximal(d) => d + 1,
            ShardingKind::Tiled(t) => t.assignment.devices().into_iter().max().unwrap_or(0) + 1,
            ShardingKind::Tuple(elems) => elems.iter().map(Self::device_span).max().unwrap_or(1),
            _ => 1,
        }
    }

    /// Checks every tile assignment in the sharding ([`TileAssignment::check`]).
    pub fn check(&self) -> Result<(), ShardingError> {
        match &self.kind {
            ShardingKind::Tiled(t) => {
                t.assignment.check()?;
                if t.subgroups.len() > t.assignment.dims().len() {
                    return Err(ShardingError::SubgroupCount {
                        subgroups: t.subgroups.len(),
                        dims: t.assignment.dims().len(),
                    });
                }
                Ok(())
            }
            ShardingKind::Maximal(d) if *d < 0 || *d >= MAX_SHARDING_DEVICES => {
                Err(ShardingError::MaximalDevice(*d))
            }
            ShardingKind::Tuple(elems) => elems.iter().try_for_each(Self::check),
            _ => Ok(()),
        }
    }

    /// The text XLA prints, with `metadata={...}` when `include_metadata` (XLA's
    /// `HloSharding::ToString(include_metadata)`).
    pub fn print(&self, include_metadata: bool) -> String {
        let mut out = String::new();
        self.print_into(&mut out, include_metadata);
        out
    }

    fn print_into(&self, out: &mut String, include_metadata: bool) {
        use std::fmt::Write as _;
        let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        match &self.kind {
            ShardingKind::Tuple(elems) => {
                out.push('{');
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 && i % 5 == 0 {
                        let _ = write!(out, ", /*index={i}*/");
                    } else if i > 0 {
                        out.push_str(", ");
                    }
                    e.print_into(out, include_metadata);
                }
                out.push('}');
                return;
            }
            ShardingKind::Replicated => out.push_str("{replicated"),
            ShardingKind::Manual => out.push_str("{manual"),
            ShardingKind::Unknown => out.push_str("{unknown"),
            ShardingKind::Unreduced => out.push_str("{unreduced"),
            ShardingKind::Maximal(d) => {
                let _ = write!(out, "{{maximal device={d}");
            }
            ShardingKind::Tiled(t) => {
                match &t.assignment {
                    TileAssignment::Devices { dims, devices } => {
                        let _ = write!(out, "{{devices=[{}]{}", join(dims), join(devices));
                    }
                    TileAssignment::Iota {
                        dims,
                        reshape_dims,
                        transpose_perm,
                    } => {
                        let _ = write!(out, "{{devices=[{}]<=[{}]", join(dims), join(reshape_dims));
                        if reshape_dims.len() > 1 {
                            let _ = write!(out, "T({})", join(transpose_perm));
                        }
                    }
                }
                if t.subgroups == [SubgroupKind::Replicated] {
                    out.push_str(" last_tile_dim_replicate");
                } else if !t.subgroups.is_empty() {
                    let names: Vec<&str> = t.subgroups.iter().map(|s| s.name()).collect();
                    let _ = write!(out, " last_tile_dims={{{}}}", names.join(", "));
                }
            }
        }
        match self.shard_group {
            Some(ShardGroup::As(id)) => {
                let _ = write!(out, " shard_as {id}");
            }
            Some(ShardGroup::Like(id)) => {
                let _ = write!(out, " shard_like {id}");
            }
            None => {}
        }
        if include_metadata && !self.metadata.is_empty() {
            // `metadata_string` writes the braces of one entry.
            let items: Vec<String> = self.metadata.iter().map(super::metadata_string).collect();
            if let [one] = items.as_slice() {
                let _ = write!(out, " metadata={one}");
            } else {
                let _ = write!(out, " metadata={{{}}}", items.join(", "));
            }
        }
        out.push('}');
    }
}

impl fmt::Display for HloSharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.print(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iota_expands_with_transpose() {
        assert_eq!(iota_devices(&[4], &[0]), vec![0, 1, 2, 3]);
        assert_eq!(iota_devices(&[2, 2], &[1, 0]), vec![0, 2, 1, 3]);
        assert_eq!(iota_devices(&[2, 3], &[1, 0]), vec![0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn checks_counts_and_permutations() {
        let iota = |dims: Vec<i64>, r: Vec<i64>, p: Vec<i64>| TileAssignment::Iota {
            dims,
            reshape_dims: r,
            transpose_perm: p,
        };
        assert!(iota(vec![2, 2], vec![4], vec![0]).check().is_ok());
        assert_eq!(
            iota(vec![2, 2], vec![2], vec![0])
                .check()
                .unwrap_err()
                .to_string(),
            "iota of 2 devices for a tile array of 4"
        );
        assert_eq!(
            iota(vec![4], vec![2, 2], vec![0, 0])
                .check()
                .unwrap_err()
                .to_string(),
            "transpose [0, 0] is not a permutation of 2 dimensions"
        );
        let list = TileAssignment::Devices {
            dims: vec![2],
            devices: vec![1, 1],
        };
        assert_eq!(
            list.check().unwrap_err().to_string(),
            "device list [1, 1] repeats or has a negative id"
        );
        let huge = TileAssignment::Iota {
            dims: vec![1 << 20],
            reshape_dims: vec![1 << 20],
            transpose_perm: vec![0],
        };
        assert_eq!(
            huge.check().unwrap_err().to_string(),
            "tile dimensions [1048576] are not positive or too many devices (at most 65536)"
        );
        let short = TileAssignment::Devices {
            dims: vec![2, 2],
            devices: vec![0, 1],
        };
        assert_eq!(
            short.check().unwrap_err().to_string(),
            "2 devices listed for a tile array of 4"
        );
        let wide = TileAssignment::Iota {
            dims: vec![0],
            reshape_dims: vec![0],
            transpose_perm: vec![0],
        };
        assert_eq!(
            wide.check().unwrap_err().to_string(),
            "tile dimensions [0] are not positive or too many devices (at most 65536)"
        );
        assert_eq!(
            HloSharding::from(ShardingKind::Maximal(-1))
                .check()
                .unwrap_err()
                .to_string(),
            "maximal device -1 is out of range"
        );
    }
}
