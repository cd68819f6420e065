//! Who takes part in a collective, over `replica_count x num_partitions` devices: XLA's
//! `GetParticipatingDevices`. Device `d` is replica `d / partitions`, partition
//! `d % partitions` (XLA's logical device id); what the ids of `replica_groups` name depends on
//! the collective's group mode:
//!
//! | mode | `replica_groups` lists | a device takes part with |
//! | --- | --- | --- |
//! | cross-replica (and unspecified) | replica ids | the replicas of its group, in its own partition |
//! | cross-partition | partition ids | the partitions of its group, in its own replica |
//! | cross-replica-and-partition | replica ids | every partition of every replica of its group |
//! | flattened-id | device ids | the devices of its group |
//!
//! No groups means one group of every id the mode lists. With one partition every mode but
//! cross-partition groups replicas exactly as before partitions existed, so artifacts written
//! for replicas alone keep their meaning.
use proto::xla::gpu::CollectiveOpGroupModeProto as ModeProto;

/// How a collective's `replica_groups` are read (`CollectiveOpGroupModeProto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupMode {
    /// Groups of replica ids, within each partition (also what UNSPECIFIED means).
    CrossReplica,
    /// Groups of partition ids, within each replica.
    CrossPartition,
    /// Groups of replica ids; each takes every partition of its replicas.
    CrossReplicaAndPartition,
    /// Groups of device ids (`replica * partitions + partition`).
    FlattenedId,
}

/// The devices of one execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    /// `replica_count`, at least 1.
    pub replicas: u64,
    /// `num_partitions`, at least 1.
    pub partitions: u64,
}

impl Grid {
    /// Every device: `replicas * partitions`.
    pub fn devices(self) -> u64 {
        self.replicas.saturating_mul(self.partitions)
    }

    /// Device `d`'s (replica, partition).
    pub fn split(self, device: i64) -> (i64, i64) {
        let p = self.partitions.max(1) as i64;
        (device / p, device % p)
    }

    /// The device of (replica, partition).
    pub fn device(self, replica: i64, partition: i64) -> i64 {
        replica * self.partitions as i64 + partition
    }
}

impl GroupMode {
    /// The mode of a `CollectiveOpGroupModeProto` value; `None` for an unknown one.
    pub fn from_proto(v: i32) -> Option<GroupMode> {
        Some(match ModeProto::try_from(v).ok()? {
            ModeProto::CollectiveOpGroupModeUnspecified
            | ModeProto::CollectiveOpGroupModeCrossReplica => GroupMode::CrossReplica,
            ModeProto::CollectiveOpGroupModeCrossPartition => GroupMode::CrossPartition,
            ModeProto::CollectiveOpGroupModeCrossReplicaAndPartition => {
                GroupMode::CrossReplicaAndPartition
            }
            ModeProto::CollectiveOpGroupModeFlattenedId => GroupMode::FlattenedId,
        })
    }

    /// How many ids `replica_groups` may list in this mode: ids are in `[0, id_space)`.
    pub fn id_space(self, grid: Grid) -> u64 {
        match self {
            GroupMode::CrossReplica | GroupMode::CrossReplicaAndPartition => grid.replicas,
            GroupMode::CrossPartition => grid.partitions,
            GroupMode::FlattenedId => grid.devices(),
        }
    }

    /// What an id of `replica_groups` names in this mode, for messages.
    pub fn id_name(self) -> &'static str {
        match self {
            GroupMode::CrossReplica | GroupMode::CrossReplicaAndPartition => "replica",
            GroupMode::CrossPartition => "partition",
            GroupMode::FlattenedId => "device",
        }
    }

    /// The module's count that bounds the ids, for messages.
    pub fn bound_name(self) -> &'static str {
        match self {
            GroupMode::CrossReplica | GroupMode::CrossReplicaAndPartition => "replica_count",
            GroupMode::CrossPartition => "num_partitions",
            GroupMode::FlattenedId => "replica_count * num_partitions",
        }
    }

    /// Devices taking part with each device, given the size of the listed groups (`None`: no
    /// groups, one group of every id).
    pub fn participants_per_group(self, grid: Grid, listed: Option<u64>) -> u64 {
        let ids = listed.unwrap_or_else(|| self.id_space(grid));
        match self {
            GroupMode::CrossReplicaAndPartition => ids.saturating_mul(grid.partitions),
            _ => ids,
        }
    }

    /// The devices `device` takes part with, in rank order (the order of its group's list,
    /// then partition order for cross-replica-and-partition), as device ids. `None` when no
    /// listed group holds the device's id (load checks that every id is in a group).
    pub fn participants(self, groups: &[Vec<i64>], grid: Grid, device: i64) -> Option<Vec<i64>> {
        let (replica, partition) = grid.split(device);
        let mine = match self {
            GroupMode::CrossReplica | GroupMode::CrossReplicaAndPartition => replica,
            GroupMode::CrossPartition => partition,
            GroupMode::FlattenedId => device,
        };
        let all: Vec<i64>;
        let group: &[i64] = if groups.is_empty() {
            all = (0..self.id_space(grid) as i64).collect();
            &all
        } else {
            groups.iter().find(|g| g.contains(&mine))?
        };
        Some(match self {
            GroupMode::CrossReplica => group.iter().map(|&r| grid.device(r, partition)).collect(),
            GroupMode::CrossPartition => group.iter().map(|&p| grid.device(replica, p)).collect(),
            GroupMode::CrossReplicaAndPartition => group
                .iter()
                .flat_map(|&r| (0..grid.partitions as i64).map(move |p| grid.device(r, p)))
                .collect(),
            GroupMode::FlattenedId => group.to_vec(),
        })
    }

    /// A device's own id in the space `replica_groups` and a collective permute's pairs use.
    pub fn own_id(self, grid: Grid, device: i64) -> i64 {
        let (replica, partition) = grid.split(device);
        match self {
            GroupMode::CrossReplica | GroupMode::CrossReplicaAndPartition => replica,
            GroupMode::CrossPartition => partition,
            GroupMode::FlattenedId => device,
        }
    }
}

/// Pins the participant lists of every mode on 2 replicas x 2 partitions against XLA's
/// `GetParticipatingDevices` (worked by hand: device d = 2 r + p).
#[cfg(test)]
mod tests {
    use super::*;

    const G: Grid = Grid {
        replicas: 2,
        partitions: 2,
    };

    fn of(mode: GroupMode, groups: &[Vec<i64>]) -> Vec<Vec<i64>> {
        (0..4)
            .map(|d| mode.participants(groups, G, d).expect("in a group"))
            .collect()
    }

    #[test]
    fn cross_replica_groups_replicas_of_one_partition() {
        let want = [vec![0, 2], vec![1, 3], vec![0, 2], vec![1, 3]];
        assert_eq!(of(GroupMode::CrossReplica, &[]), want);
        assert_eq!(of(GroupMode::CrossReplica, &[vec![0, 1]]), want);
        // Listed out of order: rank order is the list's.
        assert_eq!(of(GroupMode::CrossReplica, &[vec![1, 0]])[0], [2, 0]);
    }

    #[test]
    fn cross_partition_groups_partitions_of_one_replica() {
        let want = [vec![0, 1], vec![0, 1], vec![2, 3], vec![2, 3]];
        assert_eq!(of(GroupMode::CrossPartition, &[]), want);
        assert_eq!(of(GroupMode::CrossPartition, &[vec![0], vec![1]])[1], [1]);
    }

    #[test]
    fn cross_replica_and_partition_takes_every_partition_of_the_replicas() {
        assert_eq!(
            of(GroupMode::CrossReplicaAndPartition, &[vec![0], vec![1]]),
            [vec![0, 1], vec![0, 1], vec![2, 3], vec![2, 3]]
        );
        assert_eq!(
            of(GroupMode::CrossReplicaAndPartition, &[])[3],
            [0, 1, 2, 3]
        );
        assert_eq!(
            GroupMode::CrossReplicaAndPartition.participants_per_group(G, Some(1)),
            2
        );
    }

    #[test]
    fn flattened_ids_are_device_ids() {
        assert_eq!(
            of(GroupMode::FlattenedId, &[vec![3, 0], vec![1, 2]]),
            [vec![3, 0], vec![1, 2], vec![1, 2], vec![3, 0]]
        );
        assert_eq!(GroupMode::FlattenedId.participants(&[vec![0]], G, 1), None);
    }

    #[test]
    fn one_partition_reads_every_replica_mode_as_replicas() {
        let g = Grid {
            replicas: 3,
            partitions: 1,
        };
        for mode in [
            GroupMode::CrossReplica,
            GroupMode::CrossReplicaAndPartition,
            GroupMode::FlattenedId,
        ] {
            assert_eq!(
                mode.participants(&[vec![2, 0], vec![1]], g, 0),
                Some(vec![2, 0])
            );
            assert_eq!(mode.participants(&[], g, 1), Some(vec![0, 1, 2]));
        }
    }

    #[test]
    fn unspecified_is_cross_replica_and_unknown_is_none() {
        assert_eq!(GroupMode::from_proto(0), Some(GroupMode::CrossReplica));
        assert_eq!(GroupMode::from_proto(2), Some(GroupMode::CrossPartition));
        assert_eq!(GroupMode::from_proto(9), None);
    }
}
