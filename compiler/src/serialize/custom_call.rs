//! `custom_call_thunk`: a call the runtime's registry resolves by target name.
use std::collections::BTreeMap;

use hlo::Shape;
use proto::xla::gpu as pg;
use proto::xla::gpu::thunk_proto::Impl;

use super::{shaped_slices, ThunkBuilder};
use crate::error::CompileError;
use crate::lower::Loc;

pub(super) fn thunk(
    tb: &ThunkBuilder<'_>,
    target: &str,
    [operands, results]: [&[(Loc, Shape)]; 2],
    opaque: &[u8],
    attributes: &BTreeMap<String, String>,
    api_version: i32,
) -> Result<Impl, CompileError> {
    Ok(Impl::CustomCallThunk(pg::CustomCallThunkProto {
        target_name: target.to_owned(),
        operands: shaped_slices(tb.asg, operands)?,
        results: shaped_slices(tb.asg, results)?,
        opaque: opaque.to_vec(),
        api_version,
        // The typed FFI's attributes at 6, the number every runtime reads (1000 is
        // read only by runtimes from 2026-12-01 on: the move waits for 2026-12-15,
        // docs/artifact.md). Legacy calls keep their config in `opaque` and fill
        // neither.
        attributes: attributes.clone().into_iter().collect(),
        called_computation: None,
        attributes_xyz: Default::default(),
    }))
}
