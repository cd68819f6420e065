//! Why the SPMD partitioner refuses an instruction of the entry. [`CompileError::Partitioning`]
//! names the instruction; this says what about it (the message after `SPMD partitioning: `).
//!
//! [`CompileError::Partitioning`]: crate::CompileError::Partitioning
use hlo::HloSharding;
use hlo::{Opcode, Shape};

/// What the SPMD partitioner cannot do with one instruction. Shardings and shapes are boxed:
/// the error stays small in every `Result` of the pass.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SpmdError {
    /// A tuple sharding whose element count differs from the tuple's.
    #[error("tuple sharding {sharding} has {elements} elements for {values} values")]
    TupleArity {
        /// The sharding.
        sharding: Box<HloSharding>,
        /// Its element count.
        elements: usize,
        /// The tuple's element count.
        values: usize,
    },
    /// A tuple sharding (or place) on an array value.
    #[error("a tuple sharding on a value that is not a tuple")]
    TupleOnArray,
    /// No rule moves a value between these two places.
    #[error("cannot move a value from {from} to {to}")]
    CannotMove {
        /// Where the value lies (`{replicated}`, `{manual}`, the sharding).
        from: String,
        /// Where it should lie.
        to: String,
    },
    /// A maximal, unknown or unreduced sharding on a value the pass must split.
    #[error("sharding {0} is not tiled or replicated")]
    NotTiled(Box<HloSharding>),
    /// A tiled sharding with a manual or unreduced subgroup.
    #[error(
        "sharding {sharding}: a {subgroup} subgroup (a partly manual value) cannot be partitioned"
    )]
    PartlyManual {
        /// The sharding.
        sharding: Box<HloSharding>,
        /// The subgroup's kind as HLO text spells it (`manual`).
        subgroup: &'static str,
    },
    /// A sharding that tiles a different number of dimensions than the value has.
    #[error("sharding {sharding} tiles {tiled} dimensions of a rank-{rank} value")]
    TiledRank {
        /// The sharding.
        sharding: Box<HloSharding>,
        /// The dimensions it tiles.
        tiled: usize,
        /// The value's rank.
        rank: usize,
    },
    /// A sharding whose devices are not the partitions, each once.
    #[error("sharding {sharding} does not name each of the {partitions} partitions once")]
    Devices {
        /// The sharding.
        sharding: Box<HloSharding>,
        /// The module's partition count.
        partitions: i64,
    },
    /// A split dimension that the tile count does not divide.
    #[error("dimension of size {size} split in {parts} does not divide evenly (XLA pads; this partitioner does not)")]
    Uneven {
        /// The dimension's size.
        size: i64,
        /// Its tile count.
        parts: i64,
    },
    /// An operand defined after its use (the walk is in topological order, so a cycle).
    #[error("an operand defined after its use")]
    UseBeforeDefinition,
    /// An instruction the walk reached without its operand.
    #[error("no operand")]
    NoOperand,
    /// A `get-tuple-element` of an element the tuple does not have.
    #[error("no such element")]
    NoSuchElement,
    /// An op with split operands that no rule of the pass partitions (docs/sharding.md).
    #[error("{opcode} with operands sharded {} is not partitioned (docs/sharding.md lists what is)", .shardings.join(", "))]
    NotPartitioned {
        /// The op.
        opcode: Opcode,
        /// Where each operand lies (`{replicated}`, `{manual}`, the sharding).
        shardings: Vec<String>,
    },
    /// A broadcast whose operand is a tuple.
    #[error("a broadcast of a tuple")]
    BroadcastOfTuple,
    /// A broadcast that would change the order of the split dimensions.
    #[error("broadcast dimensions {dimensions:?} reorder the split dimensions of {sharding}")]
    BroadcastReorders {
        /// The broadcast's `dimensions`.
        dimensions: Vec<i64>,
        /// The operand's sharding.
        sharding: Box<HloSharding>,
    },
    /// A dot whose operands are split in a way no rule handles.
    #[error("dot with lhs {lhs} and rhs {rhs} is not partitioned (one side split on batch or free dimensions with the other whole, or both split alike on one contracting dimension, are)")]
    Dot {
        /// Where the lhs lies.
        lhs: String,
        /// Where the rhs lies.
        rhs: String,
    },
    /// An all-reduce asked for over a tuple result.
    #[error("a non-array result")]
    NonArrayResult,
    /// A reduce of several split values.
    #[error("a variadic reduce of a split value")]
    VariadicReduce,
    /// A reduce whose init value is split (or whose input is not tiled).
    #[error("a reduce whose init value is split")]
    ReduceInitSplit,
    /// A reduce without `to_apply`.
    #[error("a reduce without a reducer")]
    NoReducer,
    /// A reduce that would change the order of the split dimensions.
    #[error("reduce of {0} reorders its split dimensions")]
    ReduceReorders(Box<HloSharding>),
    /// A reduce over some split dimensions but not all.
    #[error("reduce over {reduced:?} of a value split {sharding} on reduced and kept dimensions")]
    ReduceMixed {
        /// The reduce's `dimensions`.
        reduced: Vec<i64>,
        /// The operand's sharding.
        sharding: Box<HloSharding>,
    },
    /// A slice whose operand is a tuple.
    #[error("a slice of a tuple")]
    SliceOfTuple,
    /// A slice that cuts a split dimension.
    #[error("slice of {sharding} cuts split dimension {dimension}")]
    SliceCutsSplit {
        /// The operand's sharding.
        sharding: Box<HloSharding>,
        /// The dimension.
        dimension: usize,
    },
    /// A `Sharding` custom call without its sharding.
    #[error("a Sharding custom call without a sharding")]
    ShardingCallUnsharded,
    /// An `SPMDShardToFullShape` without its sharding.
    #[error("an SPMDShardToFullShape without a sharding")]
    ShardToFullUnsharded,
    /// An `SPMDFullToShardShape` whose result is not its operand's shard.
    #[error("the shard of {full} under {place} is {shard}, the call says {call}")]
    FullToShard {
        /// The operand's (whole) shape.
        full: Box<Shape>,
        /// Where the operand lies.
        place: String,
        /// The shard shape that gives.
        shard: Box<Shape>,
        /// The call's result shape.
        call: Box<Shape>,
    },
    /// An `SPMDShardToFullShape` whose operand is not the shard of its result.
    #[error("the shard of {full} under {place} is {shard}, the operand is {operand}")]
    ShardToFull {
        /// The call's (whole) result shape.
        full: Box<Shape>,
        /// The call's sharding.
        place: String,
        /// The shard shape that gives.
        shard: Box<Shape>,
        /// The operand's shape.
        operand: Box<Shape>,
    },
    /// An annotation custom call without exactly one operand.
    #[error("an annotation takes one operand, this one has {0}")]
    AnnotationArity(usize),
    /// An instruction's own sharding that does not fit its value.
    #[error("{error} (on {instruction})")]
    OwnSharding {
        /// What is wrong with the sharding.
        error: Box<SpmdError>,
        /// The instruction that carries it.
        instruction: String,
    },
}

#[cfg(test)]
mod tests {
    use super::SpmdError;

    #[test]
    fn messages_are_exact() {
        assert_eq!(
            SpmdError::NotPartitioned {
                opcode: hlo::Opcode::Transpose,
                shardings: vec!["{replicated}".into(), "{manual}".into()],
            }
            .to_string(),
            "transpose with operands sharded {replicated}, {manual} is not partitioned (docs/sharding.md lists what is)"
        );
        assert_eq!(
            SpmdError::OwnSharding {
                error: Box::new(SpmdError::Uneven { size: 5, parts: 2 }),
                instruction: "a".into(),
            }
            .to_string(),
            "dimension of size 5 split in 2 does not divide evenly (XLA pads; this partitioner does not) (on a)"
        );
        assert_eq!(
            SpmdError::CannotMove {
                from: "{manual}".into(),
                to: "{replicated}".into(),
            }
            .to_string(),
            "cannot move a value from {manual} to {replicated}"
        );
        assert_eq!(
            SpmdError::AnnotationArity(2).to_string(),
            "an annotation takes one operand, this one has 2"
        );
        assert_eq!(
            SpmdError::ReduceMixed {
                reduced: vec![0],
                sharding: Box::new(hlo::HloSharding::from(hlo::ShardingKind::Replicated)),
            }
            .to_string(),
            "reduce over [0] of a value split {replicated} on reduced and kept dimensions"
        );
    }
}
