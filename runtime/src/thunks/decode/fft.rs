//! The FFT thunk: the transform type, the lengths, and shapes that must agree with them and
//! with the slices' sizes (XLA's `fft` shape rule, checked here because the runtime trusts
//! nothing in the artifact).
use proto::xla::{FftType, PrimitiveType, ShapeProto};

use super::*;

/// Element types of (input, output) for each transform, single then double precision.
fn types(kind: FftKind) -> [(PrimitiveType, PrimitiveType); 2] {
    use PrimitiveType::{C128, C64, F32, F64};
    match kind {
        FftKind::Fft | FftKind::Ifft => [(C64, C64), (C128, C128)],
        FftKind::Rfft => [(F32, C64), (F64, C128)],
        FftKind::Irfft => [(C64, F32), (C128, F64)],
    }
}

/// The dimensions of an array shape, non-negative and in row-major layout (or none).
fn dims(s: Option<&ShapeProto>, path: &str) -> Result<(PrimitiveType, Vec<u64>)> {
    let s = s.ok_or_else(|| invalid(format!("{path} is not set")))?;
    let t = PrimitiveType::try_from(s.element_type).map_err(|_| {
        invalid(format!(
            "{path}.element_type is {}, not a known xla.PrimitiveType",
            s.element_type
        ))
    })?;
    let d = s
        .dimensions
        .iter()
        .enumerate()
        .map(|(i, &v)| nonneg(v, &format!("{path}.dimensions[{i}]")))
        .collect::<Result<Vec<u64>>>()?;
    if let Some(l) = &s.layout {
        let row_major: Vec<i64> = (0..d.len() as i64).rev().collect();
        if !l.minor_to_major.is_empty() && l.minor_to_major != row_major {
            return Err(invalid(format!(
                "{path}.layout.minor_to_major is {:?}, not the row-major {row_major:?} the FFT thunk reads",
                l.minor_to_major
            )));
        }
    }
    Ok((t, d))
}

/// Bytes of `d` elements of `t`, or an error naming `path` on overflow.
fn bytes(t: PrimitiveType, d: &[u64], path: &str) -> Result<u64> {
    let size = match t {
        PrimitiveType::F32 => 4,
        PrimitiveType::F64 | PrimitiveType::C64 => 8,
        _ => 16,
    };
    d.iter()
        .try_fold(size, |a: u64, &x| a.checked_mul(x))
        .ok_or_else(|| invalid(format!("{path}: the array's byte size overflows")))
}

pub(super) fn fft(ctx: &DecodeContext<'_>, f: &FftThunkProto, path: &str) -> Result<FftThunk> {
    let kind = match FftType::try_from(f.fft_type) {
        Ok(FftType::Fft) => FftKind::Fft,
        Ok(FftType::Ifft) => FftKind::Ifft,
        Ok(FftType::Rfft) => FftKind::Rfft,
        Ok(FftType::Irfft) => FftKind::Irfft,
        Err(_) => {
            return Err(invalid(format!(
                "{path}.fft_type is {}, not a known xla.FftType",
                f.fft_type
            )))
        }
    };
    let n = f.fft_length.len();
    if !(1..=3).contains(&n) {
        return Err(invalid(format!(
            "{path}.fft_length has {n} entries; an FFT transforms 1 to 3 dimensions"
        )));
    }
    let mut lengths = Vec::with_capacity(n);
    for (i, &l) in f.fft_length.iter().enumerate() {
        match u64::try_from(l) {
            Ok(v) if v > 0 => lengths.push(v),
            _ => {
                return Err(invalid(format!(
                    "{path}.fft_length[{i}] is {l}, must be > 0"
                )))
            }
        }
    }
    let (in_path, out_path) = (
        format!("{path}.input_shape"),
        format!("{path}.output_shape"),
    );
    let (in_t, in_d) = dims(f.input_shape.as_ref(), &in_path)?;
    let (out_t, out_d) = dims(f.output_shape.as_ref(), &out_path)?;
    let [single, wide] = types(kind);
    let double = match (in_t, out_t) {
        p if p == single => false,
        p if p == wide => true,
        _ => {
            return Err(invalid(format!(
                "{path}: an {} takes {} to {} or {} to {}, not {} to {}",
                kind.name(),
                single.0.as_str_name(),
                single.1.as_str_name(),
                wide.0.as_str_name(),
                wide.1.as_str_name(),
                in_t.as_str_name(),
                out_t.as_str_name()
            )))
        }
    };
    if in_d.len() < n || out_d.len() != in_d.len() {
        return Err(invalid(format!(
            "{path}: input_shape has rank {}, output_shape rank {}; both must be the same and at least the {n} of fft_length",
            in_d.len(),
            out_d.len()
        )));
    }
    let first = in_d.len() - n;
    for (d, (&i, &o)) in in_d.iter().zip(&out_d).enumerate() {
        let (want_in, want_out) = match d.checked_sub(first).and_then(|k| lengths.get(k)) {
            None => (i, i),
            Some(&l) if d + 1 < in_d.len() => (l, l),
            Some(&l) => match kind {
                FftKind::Fft | FftKind::Ifft => (l, l),
                FftKind::Rfft => (l, l / 2 + 1),
                FftKind::Irfft => (l / 2 + 1, l),
            },
        };
        if (i, o) != (want_in, want_out) {
            return Err(invalid(format!(
                "{path}: dimension {d} is {i} in input_shape and {o} in output_shape; fft_length {:?} needs {want_in} and {want_out}",
                f.fft_length
            )));
        }
    }
    let input = slice(
        ctx,
        f.input_buffer.as_ref(),
        &format!("{path}.input_buffer"),
    )?;
    let output = slice(
        ctx,
        f.output_buffer.as_ref(),
        &format!("{path}.output_buffer"),
    )?;
    for (s, t, d, name) in [
        (input, in_t, &in_d, "input"),
        (output, out_t, &out_d, "output"),
    ] {
        let need = bytes(t, d, &format!("{path}.{name}_shape"))?;
        if s.size != need {
            return Err(invalid(format!(
                "{path}.{name}_buffer.size is {}, but {name}_shape needs {need} bytes",
                s.size
            )));
        }
    }
    Ok(FftThunk {
        kind,
        batch: in_d[..first].iter().product(),
        lengths,
        double,
        input,
        output,
        input_shape: f.input_shape.clone().unwrap_or_default(),
        output_shape: f.output_shape.clone().unwrap_or_default(),
    })
}
