//! [`ThunkKind::Copy`] → `copy_thunk`.
use super::*;

pub(super) fn copy(source: &Slice, destination: &Slice, size: u64) -> Impl {
    Impl::CopyThunk(CopyThunkProto {
        // The v1 numbers (1, 2), which every runtime reads; see CopyThunkProto.
        source_buffer: Some(sl(source)),
        destination_buffer: Some(sl(destination)),
        mem_size: size as i64,
        ..Default::default()
    })
}
