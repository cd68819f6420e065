//! Command-buffer conversion: runs of at least `min_thunks` consecutive kernel / copy / memset /
//! memzero / gemm thunks on one stream become one in-memory [`CommandBufferThunk`], recorded on
//! its first execution and replayed afterwards (on the emulated device a recorded command list;
//! the CUDA device replays the same list — see docs/runtime.md). Control-flow bodies are
//! converted too. Never serialized: encoding inlines the commands again.
use std::sync::Mutex;

use crate::thunks::{
    CommandBufferThunk, ConditionalThunk, Thunk, ThunkInfo, ThunkKind, WhileThunk,
};

fn eligible(t: &Thunk) -> bool {
    matches!(
        t.kind,
        ThunkKind::Kernel(_)
            | ThunkKind::Copy { .. }
            | ThunkKind::Memset32 { .. }
            | ThunkKind::Memset8 { .. }
            | ThunkKind::Memzero(_)
            | ThunkKind::Gemm(_)
    )
}

/// Converts a sequence (recursively).
pub fn convert(thunks: Vec<Thunk>, min_thunks: usize) -> Vec<Thunk> {
    let min = min_thunks.max(1);
    // Converting nested sequences reuses this vector's buffer (same element type).
    let thunks: Vec<Thunk> = thunks.into_iter().map(|t| nested(t, min)).collect();
    // Maximal runs of eligible thunks on one stream: [start, end).
    let mut runs = Vec::new();
    let mut i = 0;
    while i < thunks.len() {
        let stream = thunks[i].info.execution_stream_id;
        let mut end = i;
        while end < thunks.len()
            && eligible(&thunks[end])
            && thunks[end].info.execution_stream_id == stream
        {
            end += 1;
        }
        if end - i >= min {
            runs.push((i, end));
            i = end;
        } else {
            i = end.max(i + 1);
        }
    }
    if runs.is_empty() {
        return thunks;
    }
    let grouped: usize = runs.iter().map(|(a, b)| b - a - 1).sum();
    let mut out = Vec::with_capacity(thunks.len() - grouped);
    let mut rest = thunks.into_iter();
    let mut at = 0;
    for (start, end) in runs {
        out.extend(rest.by_ref().take(start - at));
        let commands: Vec<Thunk> = rest.by_ref().take(end - start).collect();
        let stream = commands.first().map_or(0, |t| t.info.execution_stream_id);
        out.push(Thunk {
            info: ThunkInfo {
                profile_annotation: format!("command_buffer[{} commands]", commands.len()),
                thunk_id: 0,
                execution_stream_id: stream,
            },
            kind: ThunkKind::CommandBuffer(CommandBufferThunk {
                commands,
                recordings: Mutex::new(0),
                replays: Mutex::new(0),
            }),
        });
        at = end;
    }
    out.extend(rest);
    out
}

fn nested(t: Thunk, min: usize) -> Thunk {
    let Thunk { info, kind } = t;
    let kind = match kind {
        ThunkKind::Sequential(v) => ThunkKind::Sequential(convert(v, min)),
        ThunkKind::While(w) => ThunkKind::While(WhileThunk {
            condition: convert(w.condition, min),
            body: convert(w.body, min),
            ..w
        }),
        ThunkKind::Conditional(c) => ThunkKind::Conditional(Box::new(ConditionalThunk {
            branches: c.branches.into_iter().map(|b| convert(b, min)).collect(),
            ..*c
        })),
        other => other,
    };
    Thunk { info, kind }
}
