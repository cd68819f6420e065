//! [`ThunkKind::Convolution`] → `convolution_thunk`: the descriptor and the slices' shapes as the
//! artifact wrote them (XLA's `ShapedSliceProto` form, whichever form was read).
use super::*;

pub(super) fn conv(c: &ConvThunk) -> Impl {
    Impl::ConvolutionThunk(ConvolutionThunkProto {
        conv_descriptor: Some(c.descriptor.clone()),
        operand_buffers: vec![
            with_shape(&c.operands[0], &c.shapes[0]),
            with_shape(&c.operands[1], &c.shapes[1]),
        ],
        result_buffers: vec![with_shape(&c.result, &c.shapes[2])],
        scratch_buffer: c.scratch.as_ref().map(sl),
    })
}

fn with_shape(s: &Slice, shape: &Option<proto::xla::ShapeProto>) -> ShapedSliceProto {
    shaped(&ShapedSlice {
        slice: *s,
        shape: shape.clone(),
    })
}
