//! `copy_thunk`: a device-to-device copy.
use proto::xla::gpu as pg;
use proto::xla::gpu::thunk_proto::Impl;

use super::ThunkBuilder;
use crate::error::CompileError;
use crate::lower::Loc;

pub(super) fn thunk(tb: &ThunkBuilder<'_>, src: Loc, dst: Loc) -> Result<Impl, CompileError> {
    let asg = tb.asg;
    Ok(Impl::CopyThunk(if tb.copy_slices_at_1000 {
        pg::CopyThunkProto {
            source_buffer_xyz: Some(asg.slice(src)?),
            destination_buffer_xyz: Some(asg.slice(dst)?),
            mem_size: src.size.min(dst.size) as i64,
            ..Default::default()
        }
    } else {
        pg::CopyThunkProto {
            source_buffer: Some(asg.slice(src)?),
            destination_buffer: Some(asg.slice(dst)?),
            mem_size: src.size.min(dst.size) as i64,
            ..Default::default()
        }
    }))
}
