//! [`ThunkKind::Memzero`], [`ThunkKind::Memset32`] and [`ThunkKind::Memset8`] → `memzero_thunk`,
//! `memset32bit_value_thunk`, `memset8bit_value_thunk`.
use super::*;

pub(super) fn memzero(s: &ShapedSlice) -> Impl {
    Impl::MemzeroThunk(MemzeroThunkProto {
        dest_buffer: Some(shaped(s)),
    })
}

pub(super) fn memset32(destination: &Slice, value: u32) -> Impl {
    Impl::Memset32bitValueThunk(Memset32BitValueThunkProto {
        dest_buffer: Some(sl(destination)),
        value,
    })
}

pub(super) fn memset8(destination: &Slice, value: u8) -> Impl {
    Impl::Memset8bitValueThunk(Memset8BitValueThunkProto {
        dest_buffer: Some(sl(destination)),
        value: u32::from(value),
    })
}
