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
    checked_copy(source, destination, *mem_size, &p2, names)
}

/// `mem_size` against both slices, and the two ranges apart.
fn checked_copy(
    source: Slice,
    destination: Slice,
    mem_size: i64,
    p2: &str,
    names: [&str; 2],
) -> Result<ThunkKind> {
    let size = nonneg(mem_size, &format!("{p2}.mem_size"))?;
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

/// XLA's `device_to_device_copy_thunk`: the same copy, its slices in XLA's ShapedSliceProto form
/// (the shapes are informational: `mem_size` is what is copied).
pub(super) fn device_to_device(
    ctx: &DecodeContext<'_>,
    c: &DeviceToDeviceCopyThunkProto,
    path: &str,
) -> Result<ThunkKind> {
    let DeviceToDeviceCopyThunkProto { copy_thunk } = c;
    let p2 = format!("{path}.device_to_device_copy_thunk.copy_thunk");
    let ShapedCopyThunkProto {
        source_buffer,
        destination_buffer,
        mem_size,
    } = copy_thunk
        .as_ref()
        .ok_or_else(|| invalid(format!("{p2} is not set")))?;
    let source = shaped(ctx, source_buffer.as_ref(), &format!("{p2}.source_buffer"))?.slice;
    let destination = shaped(
        ctx,
        destination_buffer.as_ref(),
        &format!("{p2}.destination_buffer"),
    )?
    .slice;
    checked_copy(
        source,
        destination,
        *mem_size,
        &p2,
        ["source_buffer", "destination_buffer"],
    )
}
