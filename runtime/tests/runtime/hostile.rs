//! Hostile inputs: random bytes, truncations, bit flips, huge sizes, deep nesting. Loading must
//! return an error (or a valid executable), never panic or hang.
use proto::prost::Message;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use runtime::{Registry, RuntimeFlags};

use crate::common::*;

fn try_load(bytes: &[u8]) {
    let _ = runtime::validate(
        bytes,
        &h100(),
        &RuntimeFlags::default(),
        &Registry::builtin(),
    );
}

/// xorshift: deterministic pseudo-random bytes.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    for len in [0usize, 1, 2, 7, 64, 1000, 10_000] {
        for _ in 0..50 {
            let b: Vec<u8> = (0..len).map(|_| r.next() as u8).collect();
            try_load(&b);
        }
    }
}

#[test]
fn every_truncation_of_an_artifact_fails_cleanly() {
    let mut p = crate::common::gemm_artifact(false);
    p.thunks.push(kernel(
        2,
        "vadd",
        vec![sl(0, 0, 16), sl(1, 0, 16), sl(2, 0, 16)],
        4,
    ));
    let bytes = p.encode_to_vec();
    for n in 0..bytes.len() {
        try_load(&bytes[..n]);
    }
}

#[test]
fn bit_flips_never_panic() {
    let bytes = vadd().encode_to_vec();
    let mut r = Rng(42);
    for _ in 0..2000 {
        let mut b = bytes.clone();
        let i = (r.next() as usize) % b.len();
        b[i] ^= 1 << (r.next() % 8);
        try_load(&b);
    }
}

/// The load streams the embedded HLO and the thunks (`proto::decode_except`); on every
/// bit-flipped artifact it must accept exactly what decoding the whole message with prost and
/// validating that accepts.
#[test]
fn streamed_load_agrees_with_whole_decode() {
    let flags = RuntimeFlags::default();
    let registry = Registry::builtin();
    let d = h100();
    let mut r = Rng(7);
    for p in [vadd(), crate::common::gemm_artifact(false)] {
        let bytes = p.encode_to_vec();
        for _ in 0..1500 {
            let mut b = bytes.clone();
            let i = (r.next() as usize) % b.len();
            b[i] ^= 1 << (r.next() % 8);
            let streamed = runtime::validate(&b, &d, &flags, &registry).map(|_| ());
            let whole = GpuExecutableProto::decode(b.as_slice())
                .map_err(|e| e.to_string())
                .and_then(|p| {
                    runtime::decode_executable(p, &d, &flags, &registry)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                });
            assert_eq!(
                streamed.is_ok(),
                whole.is_ok(),
                "flip at byte {i}: streamed {streamed:?}, whole {whole:?}"
            );
        }
    }
}

#[test]
fn huge_sizes_and_counts_are_refused() {
    let mut p = vadd();
    allocs(&mut p)[2].size = i64::MAX;
    assert!(load_err(&p).starts_with("RESOURCE_EXHAUSTED: buffer_allocations need"));
    let mut p = vadd();
    p.thunks = vec![copy(1, sl(0, i64::MAX, i64::MAX), sl(2, 0, 16), 16)];
    assert_eq!(
        load_err(&p),
        format!("INVALID_ARGUMENT: thunks[0].copy_thunk.source_buffer: offset {} + size {} exceeds the size 16 of buffer_allocations[0]", i64::MAX, i64::MAX)
    );
    let mut p = crate::common::gemm_artifact(false);
    if let Some(Impl::GemmThunk(g)) = p.thunks[0].r#impl.as_mut() {
        let l = g.gemm_config.as_mut().unwrap().lhs_layout.as_mut().unwrap();
        l.leading_dim_stride = i64::MAX / 2;
    }
    assert_eq!(
        load_err(&p),
        "INVALID_ARGUMENT: thunks[0].gemm_thunk.lhs_buffer.size is 24, smaller than the overflowing bytes gemm_config.lhs_layout addresses"
    );
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    // Deeper than prost's recursion limit: a decode error.
    let mut t = memset(1, sl(0, 0, 4), 0);
    for i in 0..200 {
        t = thunk(
            10 + i,
            Impl::SequentialThunk(SequentialThunkProto { thunks: vec![t] }),
        );
    }
    let mut p = vadd();
    p.thunks = vec![t];
    let e = load_err(&p);
    assert!(
        e.starts_with("INVALID_ARGUMENT: the artifact is not a valid GpuExecutableProto"),
        "{e}"
    );
    // Within prost's limit but past the runtime's.
    let mut t = memset(1, sl(0, 0, 4), 0);
    for i in 0..40 {
        t = thunk(
            10 + i,
            Impl::SequentialThunk(SequentialThunkProto { thunks: vec![t] }),
        );
    }
    p.thunks = vec![t];
    assert!(load_err(&p).contains("thunk nesting depth 33 exceeds the limit of 32"));
}

#[test]
fn infinite_loop_is_bounded() {
    let mut p = artifact(SCALAR_HLO, &[], "s32[]");
    *allocs(&mut p) = vec![alloc(0, 4, None, true), alloc(1, 1, None, false)];
    p.output_info_map = vec![out(vec![], 0)];
    p.thunks = vec![thunk(
        1,
        Impl::WhileThunk(WhileThunkProto {
            condition_result_buffer_index: Some(sl(1, 0, 1)),
            condition_thunk_sequence: Some(ThunkSequenceProto {
                thunks: vec![kernel(2, "forever", vec![sl(1, 0, 1)], 1)],
            }),
            body_thunk_sequence: Some(ThunkSequenceProto { thunks: vec![] }),
            trip_count: None,
        }),
    )];
    let d = device();
    let flags = RuntimeFlags {
        max_while_iterations: 1000,
        ..RuntimeFlags::default()
    };
    let exe = runtime::load(&p.encode_to_vec(), &d, &flags).unwrap();
    let e = exe.execute(&d, &[]).unwrap_err();
    assert_eq!(e.code(), runtime::Code::ResourceExhausted);
}

/// A `replica_count` of 2^63-1 once made the collective decode allocate one flag per replica
/// (9223372036854775807 bytes: an abort, exit 134). It is now refused at step 4, before any
/// count sizes an allocation.
#[test]
fn huge_replica_count_is_refused_before_it_sizes_an_allocation() {
    let mut p = crate::common::collective_artifact(
        Impl::AllReduceStartThunk(AllReduceStartThunkProto {
            collective_config: crate::common::config(vec![vec![0, 1]]),
            buffers: crate::common::cbuf(4, 4),
            reduction_kind: ReductionKindProto::ReductionKindSum as i32,
        }),
        4,
    );
    let hlo = "HloModule ar, replica_count=9223372036854775807\n\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT c = s32[] constant(0)\n}\n";
    p.hlo_module_with_config = artifact(hlo, &[], "s32[]").hlo_module_with_config;
    assert_eq!(
        load_err(&p),
        "RESOURCE_EXHAUSTED: hlo_module_with_config.config.replica_count is 9223372036854775807, over the limit of 1024 replicas (RuntimeFlags::max_replicas, aot run --max-replicas)"
    );
}

/// A loop whose condition never changes ran 10^8 iterations (hours) before the iteration limit;
/// the wall-time limit stops it, naming the flag to raise.
#[test]
fn endless_loop_stops_at_the_wall_time_limit() {
    let mut p = artifact(SCALAR_HLO, &[], "s32[]");
    *allocs(&mut p) = vec![alloc(0, 4, None, true), alloc(1, 1, None, false)];
    p.output_info_map = vec![out(vec![], 0)];
    p.thunks = vec![thunk(
        1,
        Impl::WhileThunk(WhileThunkProto {
            condition_result_buffer_index: Some(sl(1, 0, 1)),
            condition_thunk_sequence: Some(ThunkSequenceProto {
                thunks: vec![kernel(2, "forever", vec![sl(1, 0, 1)], 1)],
            }),
            body_thunk_sequence: Some(ThunkSequenceProto { thunks: vec![] }),
            trip_count: None,
        }),
    )];
    let flags = RuntimeFlags {
        max_while_iterations: u64::MAX,
        max_execution_secs: 1,
        ..RuntimeFlags::default()
    };
    let d = device().with_flags(&flags);
    let exe = runtime::load(&p.encode_to_vec(), &d, &flags).unwrap();
    let start = std::time::Instant::now();
    let e = exe.execute(&d, &[]).unwrap_err();
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(
        e.to_string(),
        "RESOURCE_EXHAUSTED: while_thunk 1 (t1): the execution ran longer than the wall-time limit of 1 s (RuntimeFlags::max_execution_secs, aot run --max-execution-secs)"
    );
}

/// Peak resident memory of this process (Linux; `None` elsewhere).
fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A 629-byte artifact declaring a 4 GiB buffer made the emulated device commit 4.2 GB of host
/// memory (14 s) before anything ran: allocations are now committed as they are touched, so an
/// untouched 4 GiB temporary costs nothing; past the host-memory budget an allocation fails.
#[test]
fn declared_buffers_cost_nothing_until_touched_and_the_budget_is_enforced() {
    let mut p = vadd();
    allocs(&mut p).push(alloc(3, 4 << 30, None, false));
    let d = device();
    let flags = RuntimeFlags::default();
    let exe = runtime::load(&p.encode_to_vec(), &d, &flags).unwrap();
    let before = peak_rss_bytes();
    let r = exe
        .execute(
            &d,
            &[&f32s(&[1., 2., 3., 4.]), &f32s(&[10., 20., 30., 40.])],
        )
        .unwrap();
    assert_eq!(to_f32s(&r.outputs[0]), vec![11., 22., 33., 44.]);
    if let (Some(a), Some(b)) = (before, peak_rss_bytes()) {
        assert!(b - a < 1 << 30, "peak RSS grew by {} bytes", b - a);
    }
    let mut p = vadd();
    allocs(&mut p).push(alloc(3, 9 << 30, None, false));
    let exe = runtime::load(&p.encode_to_vec(), &d, &flags).unwrap();
    let e = exe
        .execute(
            &d,
            &[&f32s(&[1., 2., 3., 4.]), &f32s(&[10., 20., 30., 40.])],
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "RESOURCE_EXHAUSTED: emulated device: allocating 9663676416 bytes exceeds the device limit of 8589934592 bytes (48 in use) (the smaller of the target's device_memory_size and RuntimeFlags::emulator_host_memory_bytes, aot run --emulator-host-memory-bytes)"
    );
}
