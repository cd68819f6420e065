//! Behaviour classes: the equivalence classes of the values that decide what an execution does,
//! as the executor observes them while it reads those values.
//!
//! Coverage of thunk kinds says that a conditional golden exists; it does not say whether any
//! golden runs a conditional on a `pred` that is false, on a negative branch index, inside a loop,
//! or whether a collective's group lists its replicas out of id order. A change to one of those
//! readings (true runs branch 1; a negative index clamped to 0; contributions concatenated in
//! replica-id order) passes every golden that never reaches the class. So the executor records,
//! per execution, each class it reaches ([`crate::ExecutionStats::behaviours`]); the golden
//! census records them per case, and the coverage gate fails when a class of [`Behaviour::FIXED`]
//! (or a registered name at the API version it is called with) is reached by no
//! golden inside the 6-month window (docs/goldens.md, "Behavioural coverage").
//!
//! A class is named `behaviour:<reader>.<value class>` in the census. Adding a class is adding a
//! variant here and a call where the executor reads the value; the coverage gate then asks for a
//! golden that reaches it.
use std::collections::BTreeSet;
use std::fmt;

/// One equivalence class of an execution-relevant value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Behaviour {
    /// A `pred` conditional whose predicate is true (runs branch 0, `true_computation`).
    ConditionalPredTrue,
    /// A `pred` conditional whose predicate is false (runs branch 1, `false_computation`).
    ConditionalPredFalse,
    /// An `s32` conditional whose index is a branch (runs that branch).
    ConditionalIndexInRange,
    /// An `s32` conditional whose index is negative (HLO runs the last branch).
    ConditionalIndexNegative,
    /// An `s32` conditional whose index is past the last branch (HLO runs the last branch).
    ConditionalIndexPastEnd,
    /// A conditional executed inside a while body: its branch is chosen again every iteration.
    ConditionalInLoop,
    /// A collective executed inside a while body: one rendezvous per iteration.
    CollectiveInLoop,
    /// An order-sensitive collective (all-gather, reduce-scatter) whose group lists its replicas
    /// in ascending id order (or has no groups: every replica in id order).
    CollectiveGroupAscending,
    /// An order-sensitive collective whose group lists its replicas out of id order: the result
    /// follows the group's order, not the ids'.
    CollectiveGroupPermuted,
    /// A command buffer replayed (recorded by an earlier iteration or execution of the same
    /// loaded executable), not recorded.
    CommandBufferReplayed,
    /// A command buffer executed inside a while body.
    CommandBufferInLoop,
    /// An execution of a loaded executable that already executed: state kept between executions
    /// (recorded command buffers, loaded kernels) is reused.
    ExecutableReexecuted,
    /// A custom call of a registered target at an API version (`CustomCallApiVersion` value).
    CustomCall {
        /// The registration's current name (a call by a legacy alias counts for it).
        target: String,
        /// The `api_version` field's value.
        api_version: i32,
    },
}

impl Behaviour {
    /// Every class without data, in declaration order: each must be reached by a golden.
    pub const FIXED: &'static [Behaviour] = &[
        Behaviour::ConditionalPredTrue,
        Behaviour::ConditionalPredFalse,
        Behaviour::ConditionalIndexInRange,
        Behaviour::ConditionalIndexNegative,
        Behaviour::ConditionalIndexPastEnd,
        Behaviour::ConditionalInLoop,
        Behaviour::CollectiveInLoop,
        Behaviour::CollectiveGroupAscending,
        Behaviour::CollectiveGroupPermuted,
        Behaviour::CommandBufferReplayed,
        Behaviour::CommandBufferInLoop,
        Behaviour::ExecutableReexecuted,
    ];

    /// The census name: `behaviour:<reader>.<class>`.
    pub fn census_name(&self) -> String {
        format!("behaviour:{self}")
    }
}

impl fmt::Display for Behaviour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Behaviour::ConditionalPredTrue => "conditional.pred_true",
            Behaviour::ConditionalPredFalse => "conditional.pred_false",
            Behaviour::ConditionalIndexInRange => "conditional.index_in_range",
            Behaviour::ConditionalIndexNegative => "conditional.index_negative",
            Behaviour::ConditionalIndexPastEnd => "conditional.index_past_end",
            Behaviour::ConditionalInLoop => "conditional.in_loop",
            Behaviour::CollectiveInLoop => "collective.in_loop",
            Behaviour::CollectiveGroupAscending => "collective.group_ascending",
            Behaviour::CollectiveGroupPermuted => "collective.group_permuted",
            Behaviour::CommandBufferReplayed => "command_buffer.replayed",
            Behaviour::CommandBufferInLoop => "command_buffer.in_loop",
            Behaviour::ExecutableReexecuted => "executable.reexecuted",
            Behaviour::CustomCall {
                target,
                api_version,
            } => {
                return write!(f, "custom_call.{target}.api_version_{api_version}");
            }
        };
        f.write_str(name)
    }
}

/// The classes one execution reached.
pub type Behaviours = BTreeSet<Behaviour>;

/// The class of an `s32` branch index among `branches` branches.
pub fn index_class(index: i32, branches: usize) -> Behaviour {
    match usize::try_from(index) {
        Err(_) => Behaviour::ConditionalIndexNegative,
        Ok(i) if i >= branches => Behaviour::ConditionalIndexPastEnd,
        Ok(_) => Behaviour::ConditionalIndexInRange,
    }
}

/// The class of a collective's group order (`group` as the artifact lists it).
pub fn group_class(group: &[i64]) -> Behaviour {
    if group.windows(2).all(|w| w[0] < w[1]) {
        Behaviour::CollectiveGroupAscending
    } else {
        Behaviour::CollectiveGroupPermuted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn census_names_are_distinct_and_prefixed() {
        let names: BTreeSet<String> = Behaviour::FIXED
            .iter()
            .map(Behaviour::census_name)
            .collect();
        assert_eq!(names.len(), Behaviour::FIXED.len());
        assert!(names.contains("behaviour:conditional.index_negative"));
        assert_eq!(
            Behaviour::CustomCall {
                target: "xla.runtime.axpy".into(),
                api_version: 1
            }
            .census_name(),
            "behaviour:custom_call.xla.runtime.axpy.api_version_1"
        );
    }

    #[test]
    fn index_classes_follow_hlo_semantics() {
        assert_eq!(index_class(-1, 3), Behaviour::ConditionalIndexNegative);
        assert_eq!(
            index_class(i32::MIN, 3),
            Behaviour::ConditionalIndexNegative
        );
        assert_eq!(index_class(0, 3), Behaviour::ConditionalIndexInRange);
        assert_eq!(index_class(2, 3), Behaviour::ConditionalIndexInRange);
        assert_eq!(index_class(3, 3), Behaviour::ConditionalIndexPastEnd);
    }

    #[test]
    fn group_order_classes() {
        assert_eq!(group_class(&[]), Behaviour::CollectiveGroupAscending);
        assert_eq!(group_class(&[0, 1, 3]), Behaviour::CollectiveGroupAscending);
        assert_eq!(group_class(&[1, 0]), Behaviour::CollectiveGroupPermuted);
        assert_eq!(group_class(&[0, 2, 1]), Behaviour::CollectiveGroupPermuted);
    }
}
