//! [`ThunkKind::Fft`] → `fft_thunk`.
use super::*;

pub(super) fn fft(f: &FftThunk) -> Impl {
    Impl::FftThunk(FftThunkProto {
        fft_type: match f.kind {
            FftKind::Fft => proto::xla::FftType::Fft,
            FftKind::Ifft => proto::xla::FftType::Ifft,
            FftKind::Rfft => proto::xla::FftType::Rfft,
            FftKind::Irfft => proto::xla::FftType::Irfft,
        } as i32,
        // Lengths were validated positive (< 2^63) at decode.
        fft_length: f.lengths.iter().map(|&l| l as i64).collect(),
        input_buffer: Some(sl(&f.input)),
        output_buffer: Some(sl(&f.output)),
        input_shape: Some(f.input_shape.clone()),
        output_shape: Some(f.output_shape.clone()),
    })
}
