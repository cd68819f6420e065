//! The custom-call thunk.
use super::*;

/// A `custom_call_thunk`: a registered target and slices that fit their allocations.
pub(super) fn custom_call(
    ctx: &DecodeContext<'_>,
    c: &CustomCallThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let CustomCallThunkProto {
        target_name,
        operands,
        results,
        opaque,
        api_version,
        attributes,
        called_computation,
    } = c;
    let p2 = format!("{path}.custom_call_thunk");
    let handler = ctx.registry.resolve(target_name).cloned().ok_or_else(|| {
        Error::not_found(format!(
            "{p2}.target_name \"{}\" is not registered (no custom-call target or FFI handler has that name or legacy alias)",
            elide(&target_name.escape_debug().to_string())
        ))
    })?;
    let nullable = |list: &[proto::xla::gpu::NullableShapedSliceProto],
                    field: &str|
     -> Result<Vec<Option<ShapedSlice>>> {
        list.iter()
            .enumerate()
            .map(|(i, n)| match &n.shaped_slice {
                None => Ok(None),
                Some(s) => {
                    shaped(ctx, Some(s), &format!("{p2}.{field}[{i}].shaped_slice")).map(Some)
                }
            })
            .collect()
    };
    let operands = nullable(operands, "operands")?;
    let results = nullable(results, "results")?;
    Ok(ThunkKind::CustomCall(Box::new(CustomCallThunk {
        target_name: target_name.clone(),
        handler,
        operands,
        results,
        opaque: opaque.clone(),
        api_version: *api_version,
        attributes: attributes.clone(),
        called_computation: called_computation.clone(),
    })))
}
