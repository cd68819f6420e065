//! Collectives across several devices of one process. The replicas of a replicated execution
//! share a [`Clique`]: at each collective every participant deposits its contribution under the
//! collective's sequence number and group, waits for the whole group, and computes its own result
//! from the contributions taken in rank order (the order of the replica group's list), so every
//! run reduces in the same order and gives bit-identical results.
use std::collections::{BTreeMap, HashMap};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use half::{bf16, f16};

use crate::error::{Error, Result};
use crate::thunks::{ElemType, ReductionKind};

#[derive(Debug, Default)]
struct State {
    /// (sequence number, first replica of the group) → replica id → contribution.
    slots: HashMap<(u64, i64), Slot>,
    failed: Option<String>,
}

#[derive(Debug, Default)]
struct Slot {
    contributions: BTreeMap<i64, Vec<u8>>,
    taken: usize,
}

/// The rendezvous point of the replicas of one execution.
#[derive(Debug)]
pub struct Clique {
    replicas: usize,
    state: Mutex<State>,
    cv: Condvar,
    timeout: Duration,
}

impl Clique {
    /// A clique of `replicas` participants that waits at most `timeout` at each collective.
    pub fn new(replicas: usize, timeout: Duration) -> Clique {
        Clique {
            replicas,
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
            timeout,
        }
    }

    /// Number of participants.
    pub fn replicas(&self) -> usize {
        self.replicas
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
    /// member's contribution in the group's order.
    pub fn exchange(
        &self,
        seq: u64,
        group: &[i64],
        me: i64,
        data: Vec<u8>,
    ) -> Result<Vec<Vec<u8>>> {
        let key = (seq, group.first().copied().unwrap_or(0));
        let lock_err = || Error::Internal("clique lock poisoned".into());
        let mut s = self.state.lock().map_err(|_| lock_err())?;
        s.slots
            .entry(key)
            .or_default()
            .contributions
            .insert(me, data);
        self.cv.notify_all();
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some(f) = &s.failed {
                return Err(Error::Unavailable(format!(
                    "collective {seq}: another replica failed: {f}"
                )));
            }
            let ready = s
                .slots
                .get(&key)
                .is_some_and(|slot| slot.contributions.len() >= group.len());
            if ready {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Unavailable(format!(
                    "collective {seq}: replica {me} waited {:?} for the group {group:?} (RuntimeFlags::collective_timeout_secs)",
                    self.timeout
                )));
            }
            s = self
                .cv
                .wait_timeout(s, deadline - now)
                .map_err(|_| lock_err())?
                .0;
        }
        let slot = s
            .slots
            .get_mut(&key)
            .ok_or_else(|| Error::Internal("clique slot vanished".into()))?;
        let mut out = Vec::with_capacity(group.len());
        for id in group {
            out.push(
                slot.contributions
                    .get(id)
                    .cloned()
                    .ok_or_else(|| Error::Internal(format!("no contribution from replica {id}")))?,
            );
        }
        slot.taken += 1;
        if slot.taken >= group.len() {
            s.slots.remove(&key);
        }
        Ok(out)
    }
}

macro_rules! fold {
    ($acc:expr, $parts:expr, $n:expr, $t:ty, $from:expr, $to:expr, $op:expr) => {{
        let sz = std::mem::size_of::<$t>();
        for i in 0..$n {
            let lo = i * sz;
            let hi = lo + sz;
            let mut a = match $acc.get(lo..hi) {
                Some(b) => $from(b),
                None => return Err(Error::Internal("collective buffer too short".into())),
            };
            for p in $parts {
                let b = match p.get(lo..hi) {
                    Some(b) => $from(b),
                    None => return Err(Error::Internal("collective buffer too short".into())),
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
        .ok_or_else(|| Error::Internal("collective buffer too short".into()))?
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
        ElemType::Bf16 => half!(bf16),
        ElemType::F32 => num!(f32),
        ElemType::F64 => num!(f64),
    }
    Ok(acc)
}
