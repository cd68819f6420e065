//! Which worker thread runs which CTAs of a launch.
//!
//! Workers claim **runs of consecutive CTA indices**, not one index at a time. Neighbouring
//! CTAs touch neighbouring memory in most kernels (CTA `i` owns tile `i`; a grid-stride loop's
//! CTA `i` writes the `i`-th kilobyte of every megabyte), so two workers taking alternate
//! indices wrote alternate kilobytes of the same pages at the same time: each core's
//! prefetchers pulled in lines the other core was writing, and the lines went back and forth.
//! The SAXPY of `aot bench` (1,024 CTAs over 8 M floats) took 36-37 ms at best on two workers
//! claiming one CTA at a time and 31-33 ms claiming runs of 4-16 (one worker: 60-64 ms), the
//! difference between a 1 → 2 thread speedup of 1.7 and of 1.9.
//!
//! Runs are guided: a quarter of each worker's fair share of what is left, at most
//! [`MAX_RUN`], so they shrink to single CTAs at the end and no worker is left running a long
//! run while the others idle (a launch of 64 CTAs still spreads over every worker).
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// The longest run one claim takes: long enough that two workers' runs cover whole pages
/// (16 CTAs of a 256-thread grid-stride loop write 16 KiB contiguous per step), short enough
/// that a claim is a small share of any launch worth splitting.
const MAX_RUN: u64 = 16;

/// The CTA indices `0..ncta` of one launch, handed out to `workers` threads.
pub(crate) struct CtaQueue {
    next: AtomicU64,
    ncta: u64,
    workers: u64,
}

impl CtaQueue {
    pub(crate) fn new(ncta: u64, workers: usize) -> CtaQueue {
        CtaQueue {
            next: AtomicU64::new(0),
            ncta,
            workers: (workers as u64).max(1),
        }
    }

    /// The next run of consecutive CTA indices, `None` once every index is claimed. Each index
    /// is in exactly one run.
    pub(crate) fn claim(&self) -> Option<Range<u64>> {
        let mut start = self.next.load(Ordering::Relaxed);
        loop {
            if start >= self.ncta {
                return None;
            }
            let len = run_len(self.ncta - start, self.workers);
            match self.next.compare_exchange_weak(
                start,
                start + len,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(start..start + len),
                Err(now) => start = now,
            }
        }
    }
}

/// How many of the `remaining` CTAs one claim takes: a quarter of a worker's fair share,
/// between 1 and [`MAX_RUN`].
fn run_len(remaining: u64, workers: u64) -> u64 {
    (remaining / (4 * workers)).clamp(1, MAX_RUN).min(remaining)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &CtaQueue) -> Vec<Range<u64>> {
        std::iter::from_fn(|| q.claim()).collect()
    }

    #[test]
    fn one_worker_claims_every_cta_in_order() {
        let runs = drain(&CtaQueue::new(1000, 1));
        let order: Vec<u64> = runs.iter().cloned().flatten().collect();
        assert_eq!(order, (0..1000).collect::<Vec<u64>>());
        assert_eq!(runs[0], 0..16);
    }

    #[test]
    fn runs_shrink_to_single_ctas_at_the_end() {
        let runs = drain(&CtaQueue::new(1024, 2));
        let lens: Vec<u64> = runs.iter().map(|r| r.end - r.start).collect();
        assert_eq!(lens[0], MAX_RUN);
        assert!(lens.windows(2).all(|w| w[1] <= w[0]), "{lens:?}");
        assert_eq!(lens[lens.len() - 8..], [1; 8]);
        // A small launch still spreads: its first run is a fraction of it.
        assert_eq!(drain(&CtaQueue::new(64, 2))[0], 0..8);
        assert_eq!(drain(&CtaQueue::new(3, 8)), [0..1, 1..2, 2..3]);
        assert!(drain(&CtaQueue::new(0, 2)).is_empty());
    }

    #[test]
    fn concurrent_workers_claim_each_cta_exactly_once() {
        let q = CtaQueue::new(100_003, 4);
        let mut seen: Vec<u64> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4).map(|_| s.spawn(|| drain(&q))).collect();
            hs.into_iter()
                .flat_map(|h| h.join().expect("worker"))
                .flatten()
                .collect()
        });
        seen.sort_unstable();
        assert_eq!(seen, (0..100_003).collect::<Vec<u64>>());
    }
}
