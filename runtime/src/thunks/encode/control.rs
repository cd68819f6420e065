//! [`ThunkKind::Conditional`] and [`ThunkKind::While`] → `conditional_thunk`, `while_thunk`.
use super::*;

pub(super) fn conditional(c: &ConditionalThunk) -> Impl {
    Impl::ConditionalThunk(ConditionalThunkProto {
        branch_index_buffer: Some(shaped(&c.selector)),
        branch_thunks: c.branches.iter().map(|b| seq(b)).collect(),
        branch_index_is_bool: c.selector_is_bool,
    })
}

pub(super) fn while_loop(w: &WhileThunk) -> Impl {
    Impl::WhileThunk(WhileThunkProto {
        condition_result_buffer_index: Some(sl(&w.condition_result)),
        condition_thunk_sequence: Some(seq(&w.condition)),
        body_thunk_sequence: Some(seq(&w.body)),
        trip_count: w.trip_count,
    })
}
