//! Streams and events. Every thunk carries an `execution_stream_id`; a thunk on stream `s` must
//! wait for every earlier thunk on another stream that writes what it reads or writes, or reads
//! what it writes. [`plan`] computes those waits once at load time (one event per producer); the
//! executor records an event after each producer and waits on it before each consumer.
//!
//! Both devices of this runtime issue operations synchronously in program order, which already
//! satisfies every wait; the plan is still computed, counted and checked so that an asynchronous
//! device can use it unchanged.
use std::collections::BTreeMap;

use crate::thunks::{walk, Slice, Thunk, ThunkKind};

/// One cross-stream dependency: `waiter` (a thunk id) waits for `producer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventWait {
    /// The waiting thunk's id.
    pub waiter: i64,
    /// The waiter's `execution_stream_id`, never `producer_stream` (same-stream order needs no
    /// event).
    pub waiter_stream: i64,
    /// The thunk it waits for.
    pub producer: i64,
    /// The producer's `execution_stream_id`. A waiter has at most one wait per producer stream:
    /// on the latest conflicting thunk there, which orders the earlier ones too.
    pub producer_stream: i64,
}

/// Slices a thunk (and everything nested in it) reads and writes.
pub fn accesses(t: &Thunk) -> (Vec<Slice>, Vec<Slice>) {
    let mut r = Vec::new();
    let mut w = Vec::new();
    walk(std::slice::from_ref(t), &mut |t, _| match &t.kind {
        ThunkKind::Copy {
            source,
            destination,
            ..
        } => {
            r.push(*source);
            w.push(*destination);
        }
        ThunkKind::Conditional(c) => r.push(c.selector.slice),
        ThunkKind::While(x) => r.push(x.condition_result),
        ThunkKind::Kernel(k) => {
            for (j, a) in k.args.iter().enumerate() {
                r.push(*a);
                if k.written.get(j).copied().unwrap_or(true) {
                    w.push(*a);
                }
            }
        }
        ThunkKind::Gemm(g) => {
            r.push(g.lhs);
            r.push(g.rhs);
            r.push(g.output);
            w.push(g.output);
            if let Some(ws) = g.workspace {
                w.push(ws);
            }
        }
        ThunkKind::Convolution(c) => {
            r.extend(c.operands);
            w.push(c.result);
            w.extend(c.scratch);
        }
        ThunkKind::Fft(f) => {
            r.push(f.input);
            w.push(f.output);
        }
        ThunkKind::ReplicaId(s) | ThunkKind::PartitionId(s) => w.push(*s),
        ThunkKind::Memzero(s) => w.push(s.slice),
        ThunkKind::Memset32 { destination, .. } | ThunkKind::Memset8 { destination, .. } => {
            w.push(*destination)
        }
        ThunkKind::CustomCall(c) => {
            r.extend(c.operands.iter().flatten().map(|s| s.slice));
            w.extend(c.results.iter().flatten().map(|s| s.slice));
        }
        ThunkKind::CustomKernel(k) => {
            for s in &k.args {
                r.push(s.slice);
                w.push(s.slice);
            }
        }
        ThunkKind::Collective(c) => {
            for b in &c.buffers {
                r.push(b.source);
                w.push(b.destination);
            }
        }
        ThunkKind::Sequential(_) | ThunkKind::CommandBuffer(_) => {}
    });
    (r, w)
}

fn any_overlap(a: &[Slice], b: &[Slice]) -> bool {
    a.iter().any(|x| b.iter().any(|y| x.overlaps(y)))
}

/// The cross-stream waits of a sequence (nested sequences are planned separately, inside
/// their parent's position).
pub fn plan(thunks: &[Thunk]) -> Vec<EventWait> {
    let mut out = Vec::new();
    plan_into(thunks, &mut out);
    out
}

fn plan_into(thunks: &[Thunk], out: &mut Vec<EventWait>) {
    let acc: Vec<(Vec<Slice>, Vec<Slice>)> = thunks.iter().map(accesses).collect();
    // The earlier thunks of each stream, in order. A thunk is compared only with earlier thunks of
    // *other* streams, latest first, stopping at the first conflict per stream: the same waits as
    // scanning every earlier thunk, but a single-stream sequence (the usual one) costs nothing
    // per pair, where the full scan made load quadratic in the number of thunks.
    let mut by_stream: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (i, t) in thunks.iter().enumerate() {
        let s = t.info.execution_stream_id;
        // The latest conflicting producer per other stream.
        let mut latest: BTreeMap<i64, i64> = BTreeMap::new();
        if let Some((tr, tw)) = acc.get(i) {
            for (&us, earlier) in &by_stream {
                if us == s {
                    continue;
                }
                for &u in earlier.iter().rev() {
                    let (Some(ut), Some((ur, uw))) = (thunks.get(u), acc.get(u)) else {
                        continue;
                    };
                    if any_overlap(uw, tr) || any_overlap(uw, tw) || any_overlap(ur, tw) {
                        latest.insert(us, ut.info.thunk_id);
                        break;
                    }
                }
            }
        }
        by_stream.entry(s).or_default().push(i);
        for (ps, pid) in latest {
            out.push(EventWait {
                waiter: t.info.thunk_id,
                waiter_stream: s,
                producer: pid,
                producer_stream: ps,
            });
        }
        match &t.kind {
            ThunkKind::Sequential(v) => plan_into(v, out),
            ThunkKind::CommandBuffer(cb) => plan_into(&cb.commands, out),
            ThunkKind::While(w) => {
                plan_into(&w.condition, out);
                plan_into(&w.body, out);
            }
            ThunkKind::Conditional(c) => {
                for b in &c.branches {
                    plan_into(b, out);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thunks::ThunkInfo;

    /// The planner before it grouped thunks by stream: every earlier thunk of another stream,
    /// the last conflicting one kept. The reference the grouped planner must equal.
    fn plan_by_full_scan(thunks: &[Thunk]) -> Vec<EventWait> {
        let acc: Vec<(Vec<Slice>, Vec<Slice>)> = thunks.iter().map(accesses).collect();
        let mut out = Vec::new();
        for (i, t) in thunks.iter().enumerate() {
            let s = t.info.execution_stream_id;
            let mut latest: BTreeMap<i64, i64> = BTreeMap::new();
            for (u, (ur, uw)) in thunks.iter().zip(&acc).take(i) {
                let us = u.info.execution_stream_id;
                let (tr, tw) = &acc[i];
                if us != s && (any_overlap(uw, tr) || any_overlap(uw, tw) || any_overlap(ur, tw)) {
                    latest.insert(us, u.info.thunk_id);
                }
            }
            for (ps, pid) in latest {
                out.push(EventWait {
                    waiter: t.info.thunk_id,
                    waiter_stream: s,
                    producer: pid,
                    producer_stream: ps,
                });
            }
        }
        out
    }

    fn copy(id: i64, stream: i64, src: (usize, u64), dst: (usize, u64)) -> Thunk {
        let slice = |(allocation, offset): (usize, u64)| Slice {
            allocation,
            offset,
            size: 8,
        };
        Thunk {
            info: ThunkInfo {
                profile_annotation: String::new(),
                thunk_id: id,
                execution_stream_id: stream,
            },
            kind: ThunkKind::Copy {
                source: slice(src),
                destination: slice(dst),
                size: 8,
            },
        }
    }

    /// Pseudo-random copies over 3 streams and a few overlapping slices: the grouped planner
    /// gives exactly the full scan's waits, in the same order, and some waits exist at all.
    #[test]
    fn grouping_by_stream_gives_the_full_scans_waits() {
        let mut seed = 5u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for len in [0usize, 1, 2, 7, 40, 200] {
            let thunks: Vec<Thunk> = (0..len)
                .map(|i| {
                    copy(
                        i as i64 + 1,
                        next(3) as i64,
                        (next(3) as usize, next(4) * 4),
                        (next(3) as usize, next(4) * 4),
                    )
                })
                .collect();
            let want = plan_by_full_scan(&thunks);
            assert_eq!(plan(&thunks), want, "{len} thunks");
            if len >= 40 {
                assert!(
                    want.len() > 3,
                    "{len} thunks make only {} waits",
                    want.len()
                );
            }
        }
    }
}
