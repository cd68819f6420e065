//! The custom-call thunk.
use std::collections::BTreeMap;

use super::*;
use crate::ffi::check::byte_width;
use crate::ffi::schema::{check_attributes, ArrayShape, CallShapes, ShapeError};
use crate::registry::Registration;

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
        attributes_xyz,
    } = c;
    let p2 = format!("{path}.custom_call_thunk");
    // Which field carries the attributes: `attributes_xyz` (1000) when it has any, else the v1
    // number 6. A map has no presence on the wire, so "set" means non-empty; both at once would
    // leave a handler's arguments ambiguous.
    let attributes = if attributes_xyz.is_empty() {
        legacy_attributes(attributes)
    } else {
        if !attributes.is_empty() {
            return Err(invalid(format!(
                "{p2} sets both attributes (6) and attributes_xyz (1000); an artifact sets one"
            )));
        }
        attributes_xyz
    };
    let handler = ctx.registry.resolve(target_name).cloned().ok_or_else(|| {
        let name = elide(&target_name.escape_debug().to_string());
        Error::not_found(match proto::cpu_custom_call_library(target_name) {
            Some(library) => format!(
                "{p2}.target_name \"{name}\" is an XLA:CPU target ({library}), not registered here: {}",
                proto::CPU_TARGET_ADVICE
            ),
            None => format!(
                "{p2}.target_name \"{name}\" is not registered (no custom-call target or FFI handler has that name or legacy alias)"
            ),
        })
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
    check_api_version(&handler, target_name, *api_version, &p2)?;
    let operands = nullable(operands, "operands")?;
    let results = nullable(results, "results")?;
    let (operand_shapes, result_shapes) = (array_shapes(&operands), array_shapes(&results));
    let call = Signature {
        operands: &operands,
        results: &results,
        operand_shapes: &operand_shapes,
        result_shapes: &result_shapes,
    };
    check_signature(&handler, attributes, &call, &p2)?;
    Ok(ThunkKind::CustomCall(Box::new(CustomCallThunk {
        target_name: target_name.clone(),
        handler,
        operands,
        results,
        opaque: opaque.clone(),
        api_version: *api_version,
        attributes: attributes.clone(),
        called_computation: called_computation.clone(),
        operand_shapes,
        result_shapes,
    })))
}

/// A handler with an attribute schema is a typed-FFI handler (JAX's targets): it reads its
/// arguments from the attributes and its buffers' shapes, so a call through a legacy API (whose
/// arguments are in `opaque`) would hand it nothing it can read. Handlers without a schema (the
/// `xla.runtime.*` builtins) take either.
fn check_api_version(
    handler: &Registration,
    target_name: &str,
    api_version: i32,
    p2: &str,
) -> Result<()> {
    let typed_ffi = proto::xla::CustomCallApiVersion::ApiVersionTypedFfi;
    if handler.attributes.is_none() || api_version == typed_ffi as i32 {
        return Ok(());
    }
    let written = proto::xla::CustomCallApiVersion::try_from(api_version)
        .map_or_else(|_| api_version.to_string(), |v| v.as_str_name().to_owned());
    Err(invalid(format!(
        "{p2}.api_version: {} is a typed-FFI handler ({}), the artifact calls it with {written}",
        elide(&target_name.escape_debug().to_string()),
        typed_ffi.as_str_name()
    )))
}

/// Attributes at the v1 number 6, where the hand-written goldens v1 and v2 (2026-12-01) carry
/// them and where today's compiler writes a typed-FFI call's attributes (until the stage-2 date of
/// [`proto::rollout::CUSTOM_CALL_ATTRIBUTES`]: runtimes older than its stage 1 read only 6);
/// hand-written versions from v3 on write them at 1000. The
/// last artifacts with attributes at 6 are the compiler's of 2026-12-14: 6 months later, in June
/// 2027, this reading may go.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_attributes(attributes: &BTreeMap<String, String>) -> &BTreeMap<String, String> {
    attributes
}

/// A target that declares a schema: its attributes decode to their declared types, and its
/// operands and results are what the handler takes (count, element types, dimensions, layouts,
/// and slices the size of their shapes).
/// Each slice's shape as a handler reads it (`None` for a null slice or one without a shape).
fn array_shapes(slices: &[Option<ShapedSlice>]) -> Vec<Option<ArrayShape>> {
    slices
        .iter()
        .map(|s| s.as_ref()?.shape.as_ref().map(ArrayShape::from_proto))
        .collect()
}

/// A call's slices with their shapes, as decoded once at load.
struct Signature<'a> {
    operands: &'a [Option<ShapedSlice>],
    results: &'a [Option<ShapedSlice>],
    operand_shapes: &'a [Option<ArrayShape>],
    result_shapes: &'a [Option<ArrayShape>],
}

fn check_signature(
    handler: &Registration,
    attributes: &BTreeMap<String, String>,
    call: &Signature<'_>,
    p2: &str,
) -> Result<()> {
    let Some(specs) = handler.attributes else {
        return Ok(());
    };
    let refuse = |e: ShapeError| invalid(format!("{p2}.{}: {}", e.field, e.message));
    let decoded = check_attributes(handler.name, specs, attributes).map_err(refuse)?;
    let Some(check) = handler.check else {
        return Ok(());
    };
    check(&CallShapes {
        operands: call.operand_shapes,
        results: call.result_shapes,
        attributes: &decoded,
    })
    .map_err(refuse)?;
    for (field, word, slices, shapes) in [
        ("operands", "operand", call.operands, call.operand_shapes),
        ("results", "result", call.results, call.result_shapes),
    ] {
        for (i, (s, shape)) in slices.iter().zip(shapes).enumerate() {
            let (Some(s), Some(shape)) = (s, shape) else {
                return Err(invalid(format!(
                    "{p2}.{field}[{i}].shaped_slice: {} needs {word} {i}, a slice with a shape; the artifact's is null or has no shape",
                    handler.name
                )));
            };
            let width = shape.ty().and_then(byte_width).unwrap_or(0);
            let Some(want) = shape.byte_size(width) else {
                return Err(invalid(format!(
                    "{p2}.{field}[{i}].shaped_slice.shape {}{:?} has a negative dimension or a size past 2^64 bytes",
                    type_name(shape.element_type),
                    shape.dimensions
                )));
            };
            if s.slice.size != want {
                return Err(invalid(format!(
                    "{p2}.{field}[{i}].shaped_slice.slice.size is {} bytes, its shape {}{:?} needs {want}",
                    s.slice.size,
                    type_name(shape.element_type),
                    shape.dimensions
                )));
            }
        }
    }
    Ok(())
}
