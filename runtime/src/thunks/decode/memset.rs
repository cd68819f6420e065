//! `memzero_thunk`, `memset32bit_value_thunk` and `memset8bit_value_thunk`: fills of one slice.
use super::*;

pub(super) fn memzero(
    ctx: &DecodeContext<'_>,
    t: &MemzeroThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let MemzeroThunkProto { dest_buffer } = t;
    Ok(ThunkKind::Memzero(shaped(
        ctx,
        dest_buffer.as_ref(),
        &format!("{path}.memzero_thunk.dest_buffer"),
    )?))
}

pub(super) fn memset32(
    ctx: &DecodeContext<'_>,
    t: &Memset32BitValueThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let Memset32BitValueThunkProto { dest_buffer, value } = t;
    let p2 = format!("{path}.memset32bit_value_thunk.dest_buffer");
    let destination = slice(ctx, dest_buffer.as_ref(), &p2)?;
    if destination.size % 4 != 0 {
        return Err(invalid(format!(
            "{p2}.size is {}, not a multiple of 4",
            destination.size
        )));
    }
    Ok(ThunkKind::Memset32 {
        destination,
        value: *value,
    })
}

pub(super) fn memset8(
    ctx: &DecodeContext<'_>,
    t: &Memset8BitValueThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let Memset8BitValueThunkProto { dest_buffer, value } = t;
    let p2 = format!("{path}.memset8bit_value_thunk");
    let destination = slice(ctx, dest_buffer.as_ref(), &format!("{p2}.dest_buffer"))?;
    // The wire type is uint32 (as memset32's); only one byte is meaningful, and a larger
    // value would be silently truncated by a device memset: refuse it.
    let value = u8::try_from(*value)
        .map_err(|_| invalid(format!("{p2}.value is {}, larger than 255", value)))?;
    Ok(ThunkKind::Memset8 { destination, value })
}
