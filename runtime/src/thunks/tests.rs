//! Unit tests of the in-memory thunk types' helpers: exact values, each case chosen so that a
//! changed operator gives a different answer (measured with cargo-mutants, see
//! docs/gate_selftest.md).
use super::*;

fn sl(allocation: usize, offset: u64, size: u64) -> Slice {
    Slice {
        allocation,
        offset,
        size,
    }
}

#[test]
fn overlaps_means_sharing_a_byte() {
    let a = sl(0, 8, 8); // bytes 8..16
    let cases = [
        (sl(0, 8, 8), true, "the same bytes"),
        (sl(0, 0, 8), false, "ends where a starts"),
        (sl(0, 16, 4), false, "starts where a ends"),
        (sl(0, 0, 9), true, "shares a's first byte"),
        (sl(0, 15, 4), true, "shares a's last byte"),
        (sl(0, 10, 2), true, "inside a"),
        (sl(0, 0, 32), true, "contains a"),
        (sl(1, 8, 8), false, "another allocation"),
        (sl(0, 12, 0), false, "empty, inside a"),
        (sl(0, 0, u64::MAX), true, "an end past u64::MAX saturates"),
    ];
    for (b, want, what) in cases {
        assert_eq!(a.overlaps(&b), want, "{what}: {a:?} and {b:?}");
        assert_eq!(b.overlaps(&a), want, "{what}, swapped");
    }
    assert!(
        !sl(0, 12, 0).overlaps(&sl(0, 12, 0)),
        "empty slices share nothing"
    );
}

const ALL: [ElemType; 15] = [
    ElemType::Pred,
    ElemType::S8,
    ElemType::S16,
    ElemType::S32,
    ElemType::S64,
    ElemType::U8,
    ElemType::U16,
    ElemType::U32,
    ElemType::U64,
    ElemType::F16,
    ElemType::BF16,
    ElemType::F32,
    ElemType::F64,
    ElemType::C64,
    ElemType::C128,
];

#[test]
fn element_types_map_to_their_proto_values_and_back() {
    use proto::xla::PrimitiveType as P;
    let protos = [
        P::Pred,
        P::S8,
        P::S16,
        P::S32,
        P::S64,
        P::U8,
        P::U16,
        P::U32,
        P::U64,
        P::F16,
        P::Bf16,
        P::F32,
        P::F64,
        // Complex element types: all-reduce sums them part by part (collectives::reduce).
        P::C64,
        P::C128,
    ];
    assert_eq!(ALL.len(), protos.len());
    for (t, p) in ALL.iter().zip(protos) {
        assert_eq!(t.to_proto(), p as i32, "{t:?}");
        assert_eq!(ElemType::from_proto(p as i32), Some(*t), "{p:?}");
    }
    for p in [P::Tuple, P::Token, P::S4] {
        assert_eq!(ElemType::from_proto(p as i32), None, "{p:?}");
    }
    assert_eq!(ElemType::from_proto(-7), None);
}

#[test]
fn element_sizes() {
    let sizes: Vec<u64> = ALL.iter().map(|t| t.size()).collect();
    assert_eq!(sizes, vec![1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16]);
}

fn layout(order: Order, transpose: bool) -> MatrixLayout {
    MatrixLayout {
        order,
        num_rows: 3,
        num_cols: 7,
        batch_size: 4,
        leading_dim_stride: 10,
        batch_stride: 100,
        transpose,
        dtype: ElemType::F32,
    }
}

#[test]
fn matrix_offsets_in_both_orders() {
    // Batch 2, row 3, column 5: 2*100 + 3*10 + 5 row-major, 2*100 + 5*10 + 3 column-major.
    assert_eq!(layout(Order::RowMajor, false).offset(2, 3, 5), 235);
    assert_eq!(layout(Order::ColumnMajor, false).offset(2, 3, 5), 253);
    assert_eq!(layout(Order::RowMajor, false).offset(0, 0, 6), 6);
    assert_eq!(layout(Order::ColumnMajor, false).offset(0, 2, 0), 2);
}

#[test]
fn op_dims_swap_only_when_transposed() {
    assert_eq!(layout(Order::RowMajor, false).op_dims(), (3, 7));
    assert_eq!(layout(Order::RowMajor, true).op_dims(), (7, 3));
}

#[test]
fn collective_names_are_the_schema_names() {
    let names: Vec<&str> = [
        CollectiveOp::AllGather,
        CollectiveOp::AllReduce(ReductionKind::Sum),
        CollectiveOp::ReduceScatter(ReductionKind::Max),
        CollectiveOp::AllToAll {
            has_split_dimension: false,
        },
        CollectiveOp::CollectivePermute {
            source_target_pairs: vec![],
        },
    ]
    .iter()
    .map(CollectiveOp::proto_name)
    .collect();
    assert_eq!(
        names,
        vec![
            "all_gather_start_thunk",
            "all_reduce_start_thunk",
            "reduce_scatter_thunk",
            "all_to_all_start_thunk",
            "collective_permute_start_thunk"
        ]
    );
}

fn t(id: i64, kind: ThunkKind) -> Thunk {
    Thunk {
        info: ThunkInfo {
            profile_annotation: String::new(),
            thunk_id: id,
            execution_stream_id: 0,
        },
        kind,
    }
}

fn leaf(id: i64) -> Thunk {
    t(id, ThunkKind::PartitionId(sl(0, 0, 4)))
}

#[test]
fn walk_visits_every_nested_thunk_depth_first_with_its_depth() {
    let thunks = vec![
        t(1, ThunkKind::Sequential(vec![leaf(2), leaf(3)])),
        t(
            4,
            ThunkKind::Conditional(Box::new(ConditionalThunk {
                selector: ShapedSlice {
                    slice: sl(0, 0, 4),
                    shape: None,
                },
                branches: vec![vec![leaf(5)], vec![leaf(6)]],
                selector_is_bool: false,
            })),
        ),
        t(
            7,
            ThunkKind::While(WhileThunk {
                condition_result: sl(0, 0, 1),
                condition: vec![leaf(8)],
                body: vec![t(9, ThunkKind::Sequential(vec![leaf(10)]))],
                trip_count: None,
            }),
        ),
        t(
            11,
            ThunkKind::CommandBuffer(CommandBufferThunk {
                commands: vec![leaf(12)],
                recordings: Mutex::new(0),
                replays: Mutex::new(0),
            }),
        ),
        leaf(13),
    ];
    let mut seen = vec![];
    walk(&thunks, &mut |t, depth| seen.push((t.info.thunk_id, depth)));
    assert_eq!(
        seen,
        vec![
            (1, 0),
            (2, 1),
            (3, 1),
            (4, 0),
            (5, 1),
            (6, 1),
            (7, 0),
            (8, 1),
            (9, 1),
            (10, 2),
            (11, 0),
            (12, 1),
            (13, 0)
        ]
    );
}

#[test]
fn a_cloned_command_buffer_keeps_its_commands_and_starts_its_counters_at_zero() {
    let cb = CommandBufferThunk {
        commands: vec![leaf(1), leaf(2)],
        recordings: Mutex::new(3),
        replays: Mutex::new(5),
    };
    let c = cb.clone();
    let ids: Vec<i64> = c.commands.iter().map(|t| t.info.thunk_id).collect();
    assert_eq!(ids, vec![1, 2]);
    assert_eq!(
        (*c.recordings.lock().unwrap(), *c.replays.lock().unwrap()),
        (0, 0)
    );
}

#[test]
fn kind_names_are_the_schema_names() {
    let kinds = [
        (leaf(1).kind, "partition_id_thunk"),
        (ThunkKind::ReplicaId(sl(0, 0, 4)), "replica_id_thunk"),
        (ThunkKind::Sequential(vec![]), "sequential_thunk"),
        (
            ThunkKind::Memset8 {
                destination: sl(0, 0, 4),
                value: 1,
            },
            "memset8bit_value_thunk",
        ),
    ];
    for (k, want) in kinds {
        assert_eq!(k.name(), want);
    }
}

/// A long value is echoed as its first 60 characters (half the 120-character echo limit) and
/// its length; one at the limit is echoed whole (cargo-mutants: `ECHO_LIMIT / 2` → `* 2` in
/// `elide` survived every other test).
#[test]
fn elide_keeps_half_the_echo_limit_of_a_long_value() {
    let long = "k".repeat(10_000);
    assert_eq!(
        decode::elide(&long),
        format!("{}… (10000 characters)", "k".repeat(60))
    );
    let at_limit = "é".repeat(120);
    assert_eq!(decode::elide(&at_limit), at_limit);
    assert_eq!(
        decode::elide(&"é".repeat(121)),
        format!("{}… (121 characters)", "é".repeat(60))
    );
}
