//! `fft_thunk`: a Fourier transform (only with `CompileOptions::emit_fft_thunk`).
use hlo::Shape;
use proto::xla::gpu as pg;
use proto::xla::gpu::thunk_proto::Impl;

use super::{shape_proto, ThunkBuilder};
use crate::error::CompileError;
use crate::lower::Loc;

pub(super) fn thunk(
    tb: &ThunkBuilder<'_>,
    fft_type: i32,
    fft_length: &[i64],
    input: &(Loc, Shape),
    output: &(Loc, Shape),
) -> Result<Impl, CompileError> {
    Ok(Impl::FftThunk(pg::FftThunkProto {
        fft_type,
        fft_length: fft_length.to_vec(),
        input_buffer: Some(tb.asg.slice(input.0)?),
        output_buffer: Some(tb.asg.slice(output.0)?),
        input_shape: Some(shape_proto(&input.1)?),
        output_shape: Some(shape_proto(&output.1)?),
    }))
}
