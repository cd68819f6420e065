//! The copy thunk.
use super::*;

/// A `copy_thunk`: its slices (at the v1 or the project numbers) and a size both hold.
pub(super) fn copy(ctx: &DecodeContext<'_>, c: &CopyThunkProto, path: &str) -> Result<ThunkKind> {
    let CopyThunkProto {
        source_buffer,
        destination_buffer,
        mem_size,
        source_buffer_xyz,
        destination_buffer_xyz,
    } = c;
    let p2 = format!("{path}.copy_thunk");
    let (source, destination, names) = slice_pair(
        ctx,
        &p2,
        "1, 2",
        [source_buffer.as_ref(), destination_buffer.as_ref()],
        [source_buffer_xyz.as_ref(), destination_buffer_xyz.as_ref()],
    )?;
    let size = nonneg(*mem_size, &format!("{p2}.mem_size"))?;
    for (s, name) in [(&source, names[0]), (&destination, names[1])] {
        if size > s.size {
            return Err(invalid(format!(
                "{p2}.mem_size is {size}, larger than {name}.size {}",
                s.size
            )));
        }
    }
    let a = Slice { size, ..source };
    let b = Slice {
        size,
        ..destination
    };
    if a.overlaps(&b) {
        return Err(invalid(format!(
            "{p2}: source_buffer and destination_buffer overlap in allocation {}",
            a.allocation
        )));
    }
    Ok(ThunkKind::Copy {
        source,
        destination,
        size,
    })
}
