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
    // Which pair carries the slices: the project numbers (1000, 1001) when either is
    // set, else the v1 numbers (1, 2). Both at once would leave the copy ambiguous.
    let xyz = source_buffer_xyz.is_some() || destination_buffer_xyz.is_some();
    let (source, destination, names) = if xyz {
        if source_buffer.is_some() || destination_buffer.is_some() {
            return Err(invalid(format!(
                "{p2} sets both source_buffer/destination_buffer (1, 2) and source_buffer_xyz/destination_buffer_xyz (1000, 1001); an artifact sets one pair"
            )));
        }
        (
            source_buffer_xyz.as_ref(),
            destination_buffer_xyz.as_ref(),
            ["source_buffer_xyz", "destination_buffer_xyz"],
        )
    } else {
        legacy_copy_slices(source_buffer.as_ref(), destination_buffer.as_ref())
    };
    let source = slice(ctx, source, &format!("{p2}.{}", names[0]))?;
    let destination = slice(ctx, destination, &format!("{p2}.{}", names[1]))?;
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

/// A copy's slices at the v1 numbers 1 and 2, which the compiler writes by default until the
/// stage-2 date of the move to 1000/1001 (2026-12-15); artifacts written before then carry only
/// these.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_copy_slices<'a>(
    source_buffer: Option<&'a BufferAllocationSliceProto>,
    destination_buffer: Option<&'a BufferAllocationSliceProto>,
) -> (
    Option<&'a BufferAllocationSliceProto>,
    Option<&'a BufferAllocationSliceProto>,
    [&'static str; 2],
) {
    (
        source_buffer,
        destination_buffer,
        ["source_buffer", "destination_buffer"],
    )
}
