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
            | ThunkKind::Memzero(_)
            | ThunkKind::Gemm(_)
    )
}

/// Converts a sequence (recursively).
pub fn convert(thunks: Vec<Thunk>, min_thunks: usize) -> Vec<Thunk> {
    let min = min_thunks.max(1);
    let mut out = Vec::with_capacity(thunks.len());
    let mut run: Vec<Thunk> = Vec::new();
    let flush = |run: &mut Vec<Thunk>, out: &mut Vec<Thunk>| {
        if run.len() >= min {
            let commands = std::mem::take(run);
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
        } else {
            out.append(run);
        }
    };
    for t in thunks {
        let t = nested(t, min);
        if eligible(&t) {
            let same_stream = run
                .first()
                .is_none_or(|f| f.info.execution_stream_id == t.info.execution_stream_id);
            if !same_stream {
                flush(&mut run, &mut out);
            }
            run.push(t);
        } else {
            flush(&mut run, &mut out);
            out.push(t);
        }
    }
    flush(&mut run, &mut out);
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
        ThunkKind::Conditional(c) => ThunkKind::Conditional(ConditionalThunk {
            branches: c.branches.into_iter().map(|b| convert(b, min)).collect(),
            ..c
        }),
        other => other,
    };
    Thunk { info, kind }
}
