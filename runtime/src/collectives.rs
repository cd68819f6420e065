//! Collectives across several devices of one process. The replicas of a replicated execution
//! share a [`Clique`]: at each collective every participant deposits its contribution under the
//! collective's sequence number and group, waits for the whole group, and computes its own result
//! from the contributions taken in rank order (the order of the replica group's list), so every
//! run reduces in the same order and gives bit-identical results.
use std::collections::{BTreeMap, HashMap};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use half::{bf16, f16};

use crate::error::{Cause, Error, Result};
use crate::thunks::{ElemType, ElemTypeExt, ReductionKind};

#[derive(Debug, Default)]
struct State {
    /// (sequence number, first replica of the group) → replica id → contribution.
    slots: HashMap<(u64, i64), Slot>,
    failed: Option<String>,
    /// Devices whose execution ended: a group waiting for one of them waits in vain.
    finished: std::collections::BTreeSet<i64>,
}

#[derive(Debug, Default)]
struct Slot {
    contributions: BTreeMap<i64, Vec<u8>>,
    taken: usize,
}

/// The rendezvous point of the replicas of one execution.
#[derive(Debug)]
pub struct Clique {
    state: Mutex<State>,
    cv: Condvar,
    timeout: Duration,
}

/// When a participant's wait at a collective ends: the execution's own deadline
/// (`RuntimeFlags::max_execution_secs`), so a rendezvous never outlasts the execution.
#[derive(Debug, Clone, Copy)]
pub struct WaitBound {
    /// The instant the execution runs out of time (`None`: past the clock's range).
    pub deadline: Option<Instant>,
    /// `RuntimeFlags::max_execution_secs`, for the message.
    pub max_execution_secs: u64,
}

impl Clique {
    /// A clique that waits at most `timeout` at each collective
    /// (`RuntimeFlags::collective_timeout_secs`); each collective names its participants.
    pub fn new(timeout: Duration) -> Clique {
        Clique {
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
            timeout,
        }
    }

    /// Device `me` finished its execution: a participant waiting for it at a collective it has
    /// not reached fails at once instead of waiting out the timeout (the devices issued
    /// different collectives, e.g. one only replica 0's branch of a conditional holds).
    pub fn finish(&self, me: i64) {
        if let Ok(mut s) = self.state.lock() {
            s.finished.insert(me);
        }
        self.cv.notify_all();
    }

    /// Marks the clique failed (a replica hit an error) and wakes everyone waiting.
    pub fn abort(&self, why: &str) {
        if let Ok(mut s) = self.state.lock() {
            if s.failed.is_none() {
                s.failed = Some(why.to_owned());
            }
        }
        self.cv.notify_all();
    }

    /// Deposits `data` for replica `me` of `group` at collective `seq` and returns every
    /// member's contribution in the group's order. The wait ends at the clique's timeout or the
    /// execution's deadline (`bound`), whichever comes first, each with its own error:
    /// `UNAVAILABLE` naming `collective_timeout_secs`, `RESOURCE_EXHAUSTED` naming
    /// `max_execution_secs`; and at once with `INVALID_ARGUMENT` when a member of the group
    /// finished its execution without contributing.
    pub fn exchange(
        &self,
        seq: u64,
        group: &[i64],
        me: i64,
        data: Vec<u8>,
        bound: WaitBound,
    ) -> Result<Vec<Vec<u8>>> {
        let key = (seq, group.first().copied().unwrap_or(0));
        let lock_err = || Error::internal("clique lock poisoned");
        let mut s = self.state.lock().map_err(|_| lock_err())?;
        s.slots
            .entry(key)
            .or_default()
            .contributions
            .insert(me, data);
        self.cv.notify_all();
        let timeout_at = Instant::now().checked_add(self.timeout);
        let (deadline, by_execution) = match (timeout_at, bound.deadline) {
            (Some(t), Some(d)) if d < t => (Some(d), true),
            (None, Some(d)) => (Some(d), true),
            (t, _) => (t, false),
        };
        loop {
            if let Some(f) = &s.failed {
                return Err(Error::unavailable(format!(
                    "collective {seq}: another replica failed: {f}"
                ))
                .with_cause(Cause::PeerFailed));
            }
            let ready = s
                .slots
                .get(&key)
                .is_some_and(|slot| slot.contributions.len() >= group.len());
            if ready {
                break;
            }
            let absent = group.iter().find(|id| {
                s.finished.contains(id)
                    && !s
                        .slots
                        .get(&key)
                        .is_some_and(|slot| slot.contributions.contains_key(id))
            });
            if let Some(absent) = absent {
                return Err(Error::invalid_argument(format!(
                    "collective {seq}: replica {me} waits for {absent} of the group {group:?}, which finished its execution without reaching it (the devices issue different collectives)"
                )));
            }
            let now = Instant::now();
            match deadline {
                Some(d) if now >= d && by_execution => {
                    return Err(Error::resource_exhausted(format!(
                        "collective {seq}: replica {me} waited for the group {group:?} until the execution ran longer than the wall-time limit of {} s (RuntimeFlags::max_execution_secs, aot run --max-execution-secs)",
                        bound.max_execution_secs
                    )));
                }
                Some(d) if now >= d => {
                    return Err(Error::unavailable(format!(
                        "collective {seq}: replica {me} waited {:?} for the group {group:?} (RuntimeFlags::collective_timeout_secs, aot run --collective-timeout-secs)",
                        self.timeout
                    )));
                }
                Some(d) => s = self.cv.wait_timeout(s, d - now).map_err(|_| lock_err())?.0,
                None => s = self.cv.wait(s).map_err(|_| lock_err())?,
            }
        }
        let slot = s
            .slots
            .get_mut(&key)
            .ok_or_else(|| Error::internal("clique slot vanished"))?;
        let mut out = Vec::with_capacity(group.len());
        for id in group {
            out.push(
                slot.contributions
                    .get(id)
                    .cloned()
                    .ok_or_else(|| Error::internal(format!("no contribution from replica {id}")))?,
            );
        }
        slot.taken += 1;
        if slot.taken >= group.len() {
            s.slots.remove(&key);
        }
        Ok(out)
    }
}

/// What device `me` of a collective permute receives: the contribution of the source that
/// `pairs` sends to it (`parts` in domain order: replica or partition id), or `bytes` zeros when
/// no pair targets it, as XLA's collective-permute leaves a device that receives nothing.
pub fn permuted(
    pairs: &[(i64, i64)],
    me: i64,
    parts: Vec<Vec<u8>>,
    bytes: usize,
) -> Result<Vec<u8>> {
    let Some(&(source, _)) = pairs.iter().find(|&&(_, target)| target == me) else {
        return Ok(vec![0; bytes]);
    };
    let mut parts = parts;
    let part = usize::try_from(source)
        .ok()
        .filter(|&s| s < parts.len())
        .map(|s| std::mem::take(&mut parts[s]))
        .ok_or_else(|| {
            Error::internal(format!("collective permute source {source} took no part"))
        })?;
    if part.len() < bytes {
        return Err(Error::internal("collective buffer too short"));
    }
    Ok(part)
}

macro_rules! fold {
    ($acc:expr, $parts:expr, $n:expr, $t:ty, $from:expr, $to:expr, $op:expr) => {{
        let sz = std::mem::size_of::<$t>();
        for i in 0..$n {
            let lo = i * sz;
            let hi = lo + sz;
            let mut a = match $acc.get(lo..hi) {
                Some(b) => $from(b),
                None => return Err(Error::internal("collective buffer too short")),
            };
            for p in $parts {
                let b = match p.get(lo..hi) {
                    Some(b) => $from(b),
                    None => return Err(Error::internal("collective buffer too short")),
                };
                a = $op(a, b);
            }
            if let Some(dst) = $acc.get_mut(lo..hi) {
                dst.copy_from_slice(&$to(a));
            }
        }
    }};
}

fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

/// Reduces `count` elements of `parts` (in order) elementwise.
pub fn reduce(
    kind: ReductionKind,
    t: ElemType,
    count: usize,
    parts: &[Vec<u8>],
) -> Result<Vec<u8>> {
    let Some((first, rest)) = parts.split_first() else {
        return Ok(Vec::new());
    };
    let bytes = count * t.size() as usize;
    let mut acc = first
        .get(..bytes)
        .ok_or_else(|| Error::internal("collective buffer too short"))?
        .to_vec();
    macro_rules! num {
        ($t:ty) => {{
            let op = |a: $t, b: $t| -> $t {
                match kind {
                    ReductionKind::Sum => a + b,
                    ReductionKind::Product => a * b,
                    ReductionKind::Min => {
                        if b < a {
                            b
                        } else {
                            a
                        }
                    }
                    ReductionKind::Max => {
                        if b > a {
                            b
                        } else {
                            a
                        }
                    }
                }
            };
            fold!(
                acc,
                rest,
                count,
                $t,
                |b: &[u8]| <$t>::from_le_bytes(arr(b)),
                |v: $t| v.to_le_bytes(),
                op
            )
        }};
    }
    macro_rules! int {
        ($t:ty) => {{
            let op = |a: $t, b: $t| -> $t {
                match kind {
                    ReductionKind::Sum => a.wrapping_add(b),
                    ReductionKind::Product => a.wrapping_mul(b),
                    ReductionKind::Min => a.min(b),
                    ReductionKind::Max => a.max(b),
                }
            };
            fold!(
                acc,
                rest,
                count,
                $t,
                |b: &[u8]| <$t>::from_le_bytes(arr(b)),
                |v: $t| v.to_le_bytes(),
                op
            )
        }};
    }
    macro_rules! half {
        ($t:ty) => {{
            let op = |a: $t, b: $t| -> $t {
                let (x, y) = (a.to_f32(), b.to_f32());
                <$t>::from_f32(match kind {
                    ReductionKind::Sum => x + y,
                    ReductionKind::Product => x * y,
                    ReductionKind::Min => {
                        if y < x {
                            y
                        } else {
                            x
                        }
                    }
                    ReductionKind::Max => {
                        if y > x {
                            y
                        } else {
                            x
                        }
                    }
                })
            };
            fold!(
                acc,
                rest,
                count,
                $t,
                |b: &[u8]| <$t>::from_le_bytes(arr(b)),
                |v: $t| v.to_le_bytes(),
                op
            )
        }};
    }
    match t {
        ElemType::Pred => {
            for p in rest {
                for (a, b) in acc.iter_mut().zip(p) {
                    let (x, y) = (*a != 0, *b != 0);
                    *a = u8::from(match kind {
                        ReductionKind::Sum | ReductionKind::Max => x || y,
                        ReductionKind::Product | ReductionKind::Min => x && y,
                    });
                }
            }
        }
        ElemType::S8 => int!(i8),
        ElemType::S16 => int!(i16),
        ElemType::S32 => int!(i32),
        ElemType::S64 => int!(i64),
        ElemType::U8 => int!(u8),
        ElemType::U16 => int!(u16),
        ElemType::U32 => int!(u32),
        ElemType::U64 => int!(u64),
        ElemType::F16 => half!(f16),
        ElemType::BF16 => half!(bf16),
        ElemType::F8E4M3FN => half!(hlo::F8E4M3FN),
        ElemType::F8E5M2 => half!(hlo::F8E5M2),
        ElemType::F32 => num!(f32),
        ElemType::F64 => num!(f64),
        // A complex sum is the sum of each part: the parts are `2 * count` floats.
        ElemType::C64 | ElemType::C128 => {
            if kind != ReductionKind::Sum {
                return Err(Error::unimplemented(format!(
                    "{kind:?} all-reduce of {t} (only a sum is defined on complex numbers here)"
                )));
            }
            return reduce(kind, t.component(), 2 * count, parts);
        }
    }
    Ok(acc)
}

/// Pins the reductions (every element type and kind, hand-computed, including wrap-around,
/// signed zeros and NaN order) and the rendezvous (group order, groups kept apart, slots
/// recycled, timeout and abort).
#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// No execution deadline: only the clique's own timeout ends a wait.
    const NB: WaitBound = WaitBound {
        deadline: None,
        max_execution_secs: 0,
    };

    fn le<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }

    const KINDS: [ReductionKind; 4] = [
        ReductionKind::Sum,
        ReductionKind::Product,
        ReductionKind::Min,
        ReductionKind::Max,
    ];

    /// Three replicas' contributions of two elements: [3, -2], [5, 4], [-1, 6].
    /// Sum [7, 8], product [-15, -48], min [-1, -2], max [5, 6].
    const SIGNED: [[i64; 2]; 3] = [[3, -2], [5, 4], [-1, 6]];
    const SIGNED_EXPECT: [[i64; 2]; 4] = [[7, 8], [-15, -48], [-1, -2], [5, 6]];

    macro_rules! check_signed {
        ($t:ty, $e:expr) => {
            for (kind, want) in KINDS.iter().zip(SIGNED_EXPECT) {
                let parts: Vec<Vec<u8>> = SIGNED
                    .iter()
                    .map(|p| le(&p.map(|v| v as $t), <$t>::to_le_bytes))
                    .collect();
                let got = reduce(*kind, $e, 2, &parts).expect("reduces");
                assert_eq!(
                    got,
                    le(&want.map(|v| v as $t), <$t>::to_le_bytes),
                    "{:?} {kind:?}",
                    $e
                );
            }
        };
    }

    #[test]
    fn signed_and_float_reductions_of_every_kind() {
        check_signed!(i8, ElemType::S8);
        check_signed!(i16, ElemType::S16);
        check_signed!(i32, ElemType::S32);
        check_signed!(i64, ElemType::S64);
        check_signed!(f32, ElemType::F32);
        check_signed!(f64, ElemType::F64);
        for (kind, want) in KINDS.iter().zip(SIGNED_EXPECT) {
            let parts: Vec<Vec<u8>> = SIGNED
                .iter()
                .map(|p| le(&p.map(|v| f16::from_f64(v as f64)), f16::to_le_bytes))
                .collect();
            let got = reduce(*kind, ElemType::F16, 2, &parts).expect("reduces");
            assert_eq!(
                got,
                le(&want.map(|v| f16::from_f64(v as f64)), f16::to_le_bytes),
                "f16 {kind:?}"
            );
            let parts: Vec<Vec<u8>> = SIGNED
                .iter()
                .map(|p| le(&p.map(|v| bf16::from_f64(v as f64)), bf16::to_le_bytes))
                .collect();
            let got = reduce(*kind, ElemType::BF16, 2, &parts).expect("reduces");
            assert_eq!(
                got,
                le(&want.map(|v| bf16::from_f64(v as f64)), bf16::to_le_bytes),
                "bf16 {kind:?}"
            );
        }
    }

    /// Unsigned: [3, 200], [5, 2], [1, 6]: sum [9, 208], product [15, 2400], min [1, 2], max
    /// [5, 200] (u8 wraps: 2400 mod 256 = 96).
    macro_rules! check_unsigned {
        ($t:ty, $e:expr, $prod:expr) => {
            let parts: Vec<Vec<u8>> = [[3u64, 200], [5, 2], [1, 6]]
                .iter()
                .map(|p| le(&p.map(|v| v as $t), <$t>::to_le_bytes))
                .collect();
            for (kind, want) in KINDS
                .iter()
                .zip([[9u64, 208], [15, $prod], [1, 2], [5, 200]])
            {
                let got = reduce(*kind, $e, 2, &parts).expect("reduces");
                assert_eq!(
                    got,
                    le(&want.map(|v| v as $t), <$t>::to_le_bytes),
                    "{:?} {kind:?}",
                    $e
                );
            }
        };
    }

    #[test]
    fn unsigned_reductions_of_every_kind_wrap() {
        check_unsigned!(u8, ElemType::U8, 96);
        check_unsigned!(u16, ElemType::U16, 2400);
        check_unsigned!(u32, ElemType::U32, 2400);
        check_unsigned!(u64, ElemType::U64, 2400);
        // s8 sum wraps too: 100 + 100 = 200 -> -56.
        let got =
            reduce(ReductionKind::Sum, ElemType::S8, 1, &[vec![100], vec![100]]).expect("reduces");
        assert_eq!(got, [(-56i8) as u8]);
    }

    #[test]
    fn pred_reductions_are_or_and_and() {
        let parts = vec![vec![0, 1, 0, 1], vec![0, 0, 1, 1]];
        let or = [0, 1, 1, 1];
        let and = [0, 0, 0, 1];
        for (kind, want) in KINDS.iter().zip([or, and, and, or]) {
            assert_eq!(
                reduce(*kind, ElemType::Pred, 4, &parts).expect("reduces"),
                want,
                "{kind:?}"
            );
        }
        // Any non-zero byte is true; the result is 0/1.
        assert_eq!(
            reduce(ReductionKind::Max, ElemType::Pred, 1, &[vec![0], vec![7]]).expect("reduces"),
            [1]
        );
    }

    #[test]
    fn float_min_max_keep_the_first_on_ties_and_nan() {
        // min(0.0, -0.0): -0.0 < 0.0 is false, so the accumulated 0.0 stays (bits matter).
        let z = |v: f32| v.to_le_bytes().to_vec();
        let parts = vec![z(0.0), z(-0.0)];
        assert_eq!(
            reduce(ReductionKind::Min, ElemType::F32, 1, &parts).expect("reduces"),
            z(0.0)
        );
        assert_eq!(
            reduce(ReductionKind::Max, ElemType::F32, 1, &parts).expect("reduces"),
            z(0.0)
        );
        let parts = vec![z(-0.0), z(0.0)];
        assert_eq!(
            reduce(ReductionKind::Min, ElemType::F32, 1, &parts).expect("reduces"),
            z(-0.0)
        );
        assert_eq!(
            reduce(ReductionKind::Max, ElemType::F32, 1, &parts).expect("reduces"),
            z(-0.0)
        );
        // A NaN contributed after the first replica is never taken (the comparison is false).
        let parts = vec![z(1.0), z(f32::NAN)];
        assert_eq!(
            reduce(ReductionKind::Min, ElemType::F32, 1, &parts).expect("reduces"),
            z(1.0)
        );
        assert_eq!(
            reduce(ReductionKind::Max, ElemType::F32, 1, &parts).expect("reduces"),
            z(1.0)
        );
        let h = |v: f32| f16::from_f32(v).to_le_bytes().to_vec();
        let parts = vec![h(0.0), h(-0.0)];
        assert_eq!(
            reduce(ReductionKind::Min, ElemType::F16, 1, &parts).expect("reduces"),
            h(0.0)
        );
        assert_eq!(
            reduce(ReductionKind::Max, ElemType::F16, 1, &parts).expect("reduces"),
            h(0.0)
        );
        let parts = vec![h(2.0), h(f32::NAN)];
        assert_eq!(
            reduce(ReductionKind::Min, ElemType::F16, 1, &parts).expect("reduces"),
            h(2.0)
        );
        assert_eq!(
            reduce(ReductionKind::Max, ElemType::F16, 1, &parts).expect("reduces"),
            h(2.0)
        );
    }

    #[test]
    fn half_sums_round_in_f32_then_to_the_half_type() {
        // f16: 2048 + 1 = 2049 rounds (ties to even) to 2048; the next 1 again gives 2048:
        // the sum is taken pairwise in rank order, rounded each time.
        let h = |v: f32| f16::from_f32(v).to_le_bytes().to_vec();
        let parts = vec![h(2048.0), h(1.0), h(1.0)];
        assert_eq!(
            reduce(ReductionKind::Sum, ElemType::F16, 1, &parts).expect("reduces"),
            h(2048.0)
        );
        let parts = vec![h(1.0), h(1.0), h(2048.0)];
        assert_eq!(
            reduce(ReductionKind::Sum, ElemType::F16, 1, &parts).expect("reduces"),
            h(2050.0)
        );
    }

    #[test]
    fn short_buffers_are_internal_errors_and_no_parts_give_nothing() {
        let err = Err(Error::internal("collective buffer too short"));
        assert_eq!(
            reduce(ReductionKind::Sum, ElemType::F32, 2, &[vec![0; 4]]),
            err
        );
        assert_eq!(
            reduce(
                ReductionKind::Sum,
                ElemType::F32,
                2,
                &[vec![0; 8], vec![0; 4]]
            ),
            err
        );
        assert_eq!(
            reduce(
                ReductionKind::Sum,
                ElemType::S32,
                2,
                &[vec![0; 8], vec![0; 7]]
            ),
            err
        );
        assert_eq!(
            reduce(
                ReductionKind::Sum,
                ElemType::F16,
                2,
                &[vec![0; 4], vec![0; 2]]
            ),
            err
        );
        assert_eq!(
            reduce(ReductionKind::Sum, ElemType::F32, 2, &[]),
            Ok(Vec::new())
        );
        // Extra bytes beyond `count` elements are not part of the result.
        assert_eq!(
            reduce(
                ReductionKind::Sum,
                ElemType::U8,
                1,
                &[vec![1, 9], vec![2, 9]]
            ),
            Ok(vec![3])
        );
    }

    #[test]
    fn exchange_returns_contributions_in_group_order_and_keeps_groups_apart() {
        let clique = Arc::new(Clique::new(Duration::from_secs(10)));
        // Two groups at the same sequence number, listed out of id order.
        let groups: [&[i64]; 2] = [&[1, 0], &[3, 2]];
        let handles: Vec<_> = (0..4i64)
            .map(|me| {
                let c = Arc::clone(&clique);
                let group = if me < 2 { groups[0] } else { groups[1] };
                std::thread::spawn(move || c.exchange(7, group, me, vec![me as u8 * 10], NB))
            })
            .collect();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("no panic").expect("exchanges"))
            .collect();
        assert_eq!(results[0], [vec![10], vec![0]]);
        assert_eq!(results[1], [vec![10], vec![0]]);
        assert_eq!(results[2], [vec![30], vec![20]]);
        assert_eq!(results[3], [vec![30], vec![20]]);
    }

    #[test]
    fn a_finished_collective_frees_its_slot() {
        let clique = Arc::new(Clique::new(Duration::from_millis(50)));
        let c = Arc::clone(&clique);
        let other = std::thread::spawn(move || c.exchange(0, &[0, 1], 1, vec![1], NB));
        assert_eq!(
            clique.exchange(0, &[0, 1], 0, vec![0], NB),
            Ok(vec![vec![0], vec![1]])
        );
        assert_eq!(other.join().expect("no panic"), Ok(vec![vec![0], vec![1]]));
        // The same key again starts empty: replica 0 alone must wait (and time out), not see
        // replica 1's old contribution.
        assert_eq!(
            clique.exchange(0, &[0, 1], 0, vec![5], NB),
            Err(Error::unavailable(
                "collective 0: replica 0 waited 50ms for the group [0, 1] (RuntimeFlags::collective_timeout_secs, aot run --collective-timeout-secs)"
            ))
        );
    }

    #[test]
    fn a_group_of_one_does_not_wait() {
        let clique = Clique::new(Duration::from_secs(10));
        assert_eq!(
            clique.exchange(3, &[0], 0, vec![9, 8], NB),
            Ok(vec![vec![9, 8]])
        );
        assert_eq!(clique.exchange(3, &[0], 0, vec![7], NB), Ok(vec![vec![7]]));
    }

    #[test]
    fn abort_wakes_the_waiting_replicas_with_the_first_reason() {
        let clique = Arc::new(Clique::new(Duration::from_secs(30)));
        let c = Arc::clone(&clique);
        let waiting = std::thread::spawn(move || c.exchange(4, &[0, 1], 0, vec![0], NB));
        std::thread::sleep(Duration::from_millis(50));
        clique.abort("replica 1: out of memory");
        clique.abort("a later reason");
        let want = Err(Error::unavailable(
            "collective 4: another replica failed: replica 1: out of memory",
        )
        .with_cause(Cause::PeerFailed));
        assert_eq!(waiting.join().expect("no panic"), want);
        // Later collectives fail at once.
        assert_eq!(
            clique.exchange(5, &[0, 1], 1, vec![0], NB),
            Err(Error::unavailable(
                "collective 5: another replica failed: replica 1: out of memory"
            )
            .with_cause(Cause::PeerFailed))
        );
    }

    /// Replica 1 finished without reaching the collective: replica 0 fails at once, not after
    /// the 30 s timeout.
    #[test]
    fn a_member_that_finished_without_contributing_ends_the_wait_at_once() {
        let clique = Arc::new(Clique::new(Duration::from_secs(30)));
        let c = Arc::clone(&clique);
        let start = Instant::now();
        let waiting = std::thread::spawn(move || c.exchange(2, &[0, 1], 0, vec![0], NB));
        std::thread::sleep(Duration::from_millis(20));
        clique.finish(1);
        assert_eq!(
            waiting.join().expect("no panic"),
            Err(Error::invalid_argument(
                "collective 2: replica 0 waits for 1 of the group [0, 1], which finished its execution without reaching it (the devices issue different collectives)"
            ))
        );
        assert!(start.elapsed() < Duration::from_secs(5));
        // A member that contributed before finishing is no reason to fail.
        let clique = Clique::new(Duration::from_millis(200));
        let c = &clique;
        std::thread::scope(|s| {
            let first = s.spawn(move || {
                let r = c.exchange(0, &[0, 1], 1, vec![1], NB);
                c.finish(1);
                r
            });
            assert_eq!(
                c.exchange(0, &[0, 1], 0, vec![0], NB),
                Ok(vec![vec![0], vec![1]])
            );
            assert_eq!(first.join().expect("no panic"), Ok(vec![vec![0], vec![1]]));
        });
    }

    /// The execution's deadline bounds the wait when it comes before the clique's timeout.
    #[test]
    fn the_execution_deadline_bounds_the_rendezvous() {
        let clique = Clique::new(Duration::from_secs(120));
        let start = Instant::now();
        let bound = WaitBound {
            deadline: Instant::now().checked_add(Duration::from_millis(50)),
            max_execution_secs: 1,
        };
        assert_eq!(
            clique.exchange(6, &[0, 1], 0, vec![0], bound),
            Err(Error::resource_exhausted(
                "collective 6: replica 0 waited for the group [0, 1] until the execution ran longer than the wall-time limit of 1 s (RuntimeFlags::max_execution_secs, aot run --max-execution-secs)"
            ))
        );
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
