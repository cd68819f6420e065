//! `memset8bit_value_thunk`: a byte fill of a whole buffer.
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
