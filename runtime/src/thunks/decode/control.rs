//! Control flow: conditional and while thunks, whose nested sequences are decoded one level
//! deeper.
use super::*;

/// A `conditional_thunk`: a selector its type fits in and at least one branch (two for pred).
pub(super) fn conditional(
    ctx: &mut DecodeContext<'_>,
    c: &mut ConditionalThunkProto,
    path: &str,
    depth: usize,
) -> Result<ThunkKind> {
    let ConditionalThunkProto {
        branch_index_buffer,
        branch_thunks,
        branch_index_is_bool,
    } = c;
    let branch_index_is_bool = *branch_index_is_bool;
    let p2 = format!("{path}.conditional_thunk");
    let selector = shaped(
        ctx,
        branch_index_buffer.as_ref(),
        &format!("{p2}.branch_index_buffer"),
    )?;
    // XLA's ConditionalThunkProto has no field 3: XLA takes a pred selector from the slice's
    // shape (`element_type: PRED`), and so does this runtime when field 3 is unset; a shape that
    // says s32 while field 3 says pred contradicts it.
    let element_type = selector.shape.as_ref().map(|s| s.element_type);
    let (pred, s32) = (
        proto::xla::PrimitiveType::Pred as i32,
        proto::xla::PrimitiveType::S32 as i32,
    );
    if branch_index_is_bool && element_type == Some(s32) {
        return Err(invalid(format!(
            "{p2}.branch_index_is_bool is true, but branch_index_buffer.shape.element_type is S32; a selector is a pred or an s32, not both"
        )));
    }
    let branch_index_is_bool = branch_index_is_bool || element_type == Some(pred);
    let need = if branch_index_is_bool { 1 } else { 4 };
    if selector.slice.size < need {
        return Err(invalid(format!(
            "{p2}.branch_index_buffer.slice.size is {}, smaller than the {need} bytes of the {}",
            selector.slice.size,
            if branch_index_is_bool {
                "pred selector"
            } else {
                "s32 selector"
            }
        )));
    }
    if branch_thunks.is_empty() {
        return Err(invalid(format!(
            "{p2}.branch_thunks is empty; a conditional needs at least one branch"
        )));
    }
    if branch_index_is_bool && branch_thunks.len() != 2 {
        return Err(invalid(format!(
            "{p2}.branch_thunks has {} branches; a pred selector needs exactly 2",
            branch_thunks.len()
        )));
    }
    let mut branches = Vec::with_capacity(branch_thunks.len());
    for (i, b) in branch_thunks.iter_mut().enumerate() {
        branches.push(seq(
            ctx,
            &mut b.thunks,
            &format!("{p2}.branch_thunks[{i}].thunks"),
            depth + 1,
        )?);
    }
    Ok(ThunkKind::Conditional(Box::new(ConditionalThunk {
        selector,
        branches,
        selector_is_bool: branch_index_is_bool,
    })))
}

/// A `while_thunk`: a condition result of at least one byte, the two sequences one level deeper.
pub(super) fn while_loop(
    ctx: &mut DecodeContext<'_>,
    w: &mut WhileThunkProto,
    path: &str,
    depth: usize,
) -> Result<ThunkKind> {
    let WhileThunkProto {
        condition_result_buffer_index,
        condition_thunk_sequence,
        body_thunk_sequence,
        trip_count,
    } = w;
    let p2 = format!("{path}.while_thunk");
    let condition_result = slice(
        ctx,
        condition_result_buffer_index.as_ref(),
        &format!("{p2}.condition_result_buffer_index"),
    )?;
    if condition_result.size < 1 {
        return Err(invalid(format!(
            "{p2}.condition_result_buffer_index.size is 0, smaller than the 1 byte of a pred"
        )));
    }
    let condition = opt_seq(
        ctx,
        condition_thunk_sequence.as_mut(),
        &format!("{p2}.condition_thunk_sequence"),
        depth + 1,
    )?;
    let body = opt_seq(
        ctx,
        body_thunk_sequence.as_mut(),
        &format!("{p2}.body_thunk_sequence"),
        depth + 1,
    )?;
    Ok(ThunkKind::While(WhileThunk {
        condition_result,
        condition,
        body,
        trip_count: *trip_count,
    }))
}
