//! The custom-call thunk.
use super::*;

/// A `custom_call_thunk`: a registered target and slices that fit their allocations.
pub(super) fn custom_call(
    ctx: &DecodeContext<'_>,
    c: &CustomCallThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let p2 = format!("{path}.custom_call_thunk");
    let handler = ctx.registry.resolve(&c.target_name).cloned().ok_or_else(|| {
        Error::not_found(format!(
            "{p2}.target_name \"{}\" is not registered (no custom-call target or FFI handler has that name or legacy alias)",
            elide(&c.target_name.escape_debug().to_string())
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
    let operands = nullable(&c.operands, "operands")?;
    let results = nullable(&c.results, "results")?;
    Ok(ThunkKind::CustomCall(Box::new(CustomCallThunk {
        target_name: c.target_name.clone(),
        handler,
        operands,
        results,
        opaque: c.opaque.clone(),
        api_version: c.api_version,
        attributes: c.attributes.clone(),
        called_computation: c.called_computation.clone(),
    })))
}
