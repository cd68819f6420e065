//! Which allocations an executable's thunks may write.
//!
//! XLA:GPU binds an entry parameter's allocation to the caller's argument buffer itself rather
//! than to a copy; [`crate::Executable::execute_with`] does the same for a device-resident
//! argument when nothing writes the allocation. This walk is what "nothing writes it" rests on:
//! every slice a thunk of any kind may write, nested sequences, loops, branches and command
//! buffers included. Where a kind's writes are not known exactly (custom calls, library
//! kernels), every slice it is given counts as written.

use super::{Slice, Thunk, ThunkKind};

/// Per allocation (index `0..count`): whether some thunk of `thunks` may write into it.
pub fn written_allocations(thunks: &[Thunk], count: usize) -> Vec<bool> {
    let mut written = vec![false; count];
    let mut mark = |s: &Slice| {
        if let Some(w) = written.get_mut(s.allocation) {
            *w |= s.size > 0;
        }
    };
    super::walk(thunks, &mut |t, _| writes(t, &mut mark));
    written
}

/// Calls `mark` on every slice `t` itself may write (not its nested thunks: [`super::walk`]
/// visits those).
fn writes(t: &Thunk, mark: &mut dyn FnMut(&Slice)) {
    match &t.kind {
        // Containers: their nested thunks are visited on their own.
        ThunkKind::Sequential(_) | ThunkKind::CommandBuffer(_) | ThunkKind::Conditional(_) => {}
        ThunkKind::While(w) => mark(&w.condition_result),
        ThunkKind::Copy { destination, .. } => mark(destination),
        ThunkKind::Kernel(k) => {
            for (slice, written) in k.args.iter().zip(&k.written) {
                if *written {
                    mark(slice);
                }
            }
            // Arguments past the flags (the loader checks they agree) count as written.
            for slice in k.args.iter().skip(k.written.len()) {
                mark(slice);
            }
        }
        ThunkKind::Gemm(g) => {
            mark(&g.output);
            if let Some(w) = &g.workspace {
                mark(w);
            }
        }
        ThunkKind::Fft(f) => mark(&f.output),
        ThunkKind::Convolution(c) => {
            mark(&c.result);
            if let Some(s) = &c.scratch {
                mark(s);
            }
        }
        ThunkKind::ReplicaId(s) | ThunkKind::PartitionId(s) => mark(s),
        ThunkKind::Memzero(s) => mark(&s.slice),
        ThunkKind::Memset32 { destination, .. } | ThunkKind::Memset8 { destination, .. } => {
            mark(destination)
        }
        // A handler is given its operands' addresses too: count them as written.
        ThunkKind::CustomCall(c) => {
            for s in c.operands.iter().chain(&c.results).flatten() {
                mark(&s.slice);
            }
        }
        ThunkKind::CustomKernel(k) => {
            for s in &k.args {
                mark(&s.slice);
            }
        }
        ThunkKind::Collective(c) => {
            for b in &c.buffers {
                mark(&b.destination);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thunks::{ThunkInfo, WhileThunk};

    fn slice(allocation: usize) -> Slice {
        Slice {
            allocation,
            offset: 0,
            size: 4,
        }
    }

    fn thunk(kind: ThunkKind) -> Thunk {
        Thunk {
            info: ThunkInfo::default(),
            kind,
        }
    }

    fn copy(from: usize, to: usize) -> Thunk {
        thunk(ThunkKind::Copy {
            source: slice(from),
            destination: slice(to),
            size: 4,
        })
    }

    #[test]
    fn a_copy_writes_its_destination_only() {
        assert_eq!(written_allocations(&[copy(0, 1)], 3), [false, true, false]);
    }

    #[test]
    fn writes_inside_loops_and_sequences_count() {
        let body = vec![thunk(ThunkKind::Sequential(vec![copy(0, 2)]))];
        let w = thunk(ThunkKind::While(WhileThunk {
            condition_result: slice(3),
            condition: vec![copy(0, 1)],
            body,
            trip_count: None,
        }));
        assert_eq!(
            written_allocations(&[w], 5),
            [false, true, true, true, false]
        );
    }

    #[test]
    fn an_empty_slice_writes_nothing_and_a_stray_index_is_ignored() {
        let mut t = copy(0, 1);
        if let ThunkKind::Copy { destination, .. } = &mut t.kind {
            destination.size = 0;
        }
        assert_eq!(written_allocations(&[t, copy(0, 9)], 2), [false, false]);
    }
}
