//! [`ThunkKind::CustomCall`] → `custom_call_thunk`.
use super::*;

fn nullable(v: &[Option<ShapedSlice>]) -> Vec<NullableShapedSliceProto> {
    v.iter()
        .map(|s| NullableShapedSliceProto {
            shaped_slice: s.as_ref().map(shaped),
        })
        .collect()
}

pub(super) fn custom_call(c: &CustomCallThunk) -> Impl {
    Impl::CustomCallThunk(CustomCallThunkProto {
        target_name: c.target_name.clone(),
        operands: nullable(&c.operands),
        results: nullable(&c.results),
        opaque: c.opaque.clone(),
        api_version: c.api_version,
        // The v1 number (6), which every runtime reads; see CustomCallThunkProto.
        attributes: c.attributes.clone(),
        called_computation: c.called_computation.clone(),
        attributes_xyz: Default::default(),
    })
}
