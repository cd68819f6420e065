//! `while_thunk` and `conditional_thunk`: control flow over nested thunk sequences.
use hlo::Shape;
use proto::xla::gpu as pg;
use proto::xla::gpu::thunk_proto::Impl;

use super::{shape_proto, ThunkBuilder};
use crate::error::CompileError;
use crate::lower::{Loc, Op};

/// A while loop; its condition's thunks take ids before its body's.
pub(super) fn while_loop(
    tb: &mut ThunkBuilder<'_>,
    pred: Loc,
    cond: &[Op],
    body: &[Op],
    trip_count: Option<i64>,
) -> Result<Impl, CompileError> {
    let cond = tb.sequence(cond)?;
    let body = tb.sequence(body)?;
    Ok(Impl::WhileThunk(pg::WhileThunkProto {
        condition_result_buffer_index: Some(tb.asg.slice(pred)?),
        condition_thunk_sequence: Some(pg::ThunkSequenceProto { thunks: cond }),
        body_thunk_sequence: Some(pg::ThunkSequenceProto { thunks: body }),
        trip_count,
    }))
}

/// A conditional; its branches' thunks take ids in branch order.
pub(super) fn conditional(
    tb: &mut ThunkBuilder<'_>,
    index: Loc,
    index_shape: &Shape,
    is_bool: bool,
    branches: &[Vec<Op>],
) -> Result<Impl, CompileError> {
    let mut seqs = Vec::new();
    for b in branches {
        seqs.push(pg::ThunkSequenceProto {
            thunks: tb.sequence(b)?,
        });
    }
    Ok(Impl::ConditionalThunk(pg::ConditionalThunkProto {
        branch_index_buffer: Some(pg::ShapedSliceProto {
            slice: Some(tb.asg.slice(index)?),
            shape: Some(shape_proto(index_shape)?),
        }),
        branch_thunks: seqs,
        branch_index_is_bool: is_bool,
    }))
}
