//! `memset8bit_value_thunk`, `memset32bit_value_thunk` and `memzero_thunk`: fills of a whole
//! buffer.
use proto::xla::gpu as pg;
use proto::xla::gpu::thunk_proto::Impl;

use super::ThunkBuilder;
use crate::error::CompileError;
use crate::lower::Loc;

pub(super) fn memset8(tb: &ThunkBuilder<'_>, dst: Loc, value: u8) -> Result<Impl, CompileError> {
    Ok(Impl::Memset8bitValueThunk(pg::Memset8BitValueThunkProto {
        dest_buffer: Some(tb.asg.slice(dst)?),
        value: u32::from(value),
    }))
}

/// A fill with the repeated 32-bit `word`: `memzero_thunk` (its slice carries `shape`) when it
/// is 0, as XLA writes a zero initializer, else `memset32bit_value_thunk`.
pub(super) fn fill32(
    tb: &ThunkBuilder<'_>,
    dst: Loc,
    shape: &hlo::Shape,
    word: u32,
) -> Result<Impl, CompileError> {
    let slice = tb.asg.slice(dst)?;
    if word == 0 {
        return Ok(Impl::MemzeroThunk(pg::MemzeroThunkProto {
            dest_buffer: Some(pg::ShapedSliceProto {
                slice: Some(slice),
                shape: Some(super::shape_proto(shape)?),
            }),
        }));
    }
    Ok(Impl::Memset32bitValueThunk(
        pg::Memset32BitValueThunkProto {
            dest_buffer: Some(slice),
            value: word,
        },
    ))
}
