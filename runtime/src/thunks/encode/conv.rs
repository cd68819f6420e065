//! [`ThunkKind::Convolution`] → `convolution_thunk`: the descriptor as the artifact wrote it.
use super::*;

pub(super) fn conv(c: &ConvThunk) -> Impl {
    Impl::ConvolutionThunk(ConvolutionThunkProto {
        conv_descriptor: Some(c.descriptor.clone()),
        operand_buffers: c.operands.iter().map(sl).collect(),
        result_buffers: vec![sl(&c.result)],
        scratch_buffer: c.scratch.as_ref().map(sl),
    })
}
