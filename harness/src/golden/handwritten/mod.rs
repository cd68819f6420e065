//! Hand-written golden cases: artifacts built directly with the proto types, for constructs the
//! runtime executes but today's compiler does not emit by default (memset32, memset8, memzero, FFT and
//! convolution thunks, sequential thunks, XLA's device-to-device copies, every registered custom-call name and legacy alias), so a change to their semantics
//! fails the backward suite like any other break.
//!
//! Each case's expected outputs are written here by hand (`io_json`), worked out from the thunk
//! semantics the case's comment states, never by running the runtime: recording what the code
//! under test produces would pin a bug as readily as a behaviour. [`write_version`] writes the
//! cases as `goldens/executables/<target>/handwritten/v<N>/` (same layout and manifest as compiled
//! versions, `compiler_version` = [`HANDWRITTEN_COMPILER`]); like every version it is immutable
//! once committed, so a changed or added case is a new version.
//!
//! The execution environment (compute capability, ABI versions) and the target config come from
//! the target's newest compiled version, so a hand-written artifact differs from a compiled one
//! only in its thunks.
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use proto::prost::Message;
use proto::xla::buffer_assignment::BufferAllocationSliceProto;
use proto::xla::gpu::gpu_executable_proto::{
    OutputInfoMapEntry, OutputInfoProto, RepeatedBufferAllocations,
};
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::{
    matrix_layout_proto, CollectiveBufferProto, CollectiveConfigProto, CollectiveOpGroupModeProto,
    CollectivePermuteStartThunkProto, CustomCallThunkProto, DeviceToDeviceCopyThunkProto,
    FftThunkProto, GemmConfigProto, GemmThunkProto, GpuExecutableProto, MatrixLayoutProto,
    Memset32BitValueThunkProto, Memset8BitValueThunkProto, MemzeroThunkProto,
    NullableShapedSliceProto, SequentialThunkProto, ShapedCopyThunkProto, ShapedSliceProto,
    ThunkInfoProto, ThunkProto,
};
use proto::xla::{
    BufferAllocationProto, CustomCallApiVersion, FftType, PrimitiveType, ProgramShapeProto,
    ShapeIndexProto,
};

use super::census_of;
use super::manifest::{hash_files, Manifest, MANIFEST_FILE, MANIFEST_FORMAT_VERSION};
use super::regen::{EXECUTABLE_FILE, MODULE_FILE, TARGET_FILE};
use super::store::{GoldenError, GoldenStore};

mod conv;
mod jax_ffi;

/// `compiler_version` and `compiler_commit` of a hand-written version's manifest.
pub const HANDWRITTEN_COMPILER: &str = "hand-written (harness/src/golden/handwritten.rs)";

/// One hand-written case.
#[derive(Debug, Clone, Copy)]
pub struct HandCase {
    /// Case directory name.
    pub name: &'static str,
    /// The embedded module (checked structurally by the runtime; the reference evaluator's
    /// oracle when it has no custom call).
    pub module: &'static str,
    /// Inputs and the hand-computed expected outputs.
    pub io_json: &'static str,
    /// The thunks and allocations, on top of [`skeleton`].
    pub build: fn(&mut GpuExecutableProto),
}

/// out = [1.5, 1.5, 0.0, -2.5]: a sequential thunk runs, in order, memset32 of the whole f32[4]
/// output with 0x3FC00000 (1.5), memzero of element 2 (bytes 8..12), memset32 of element 3 with
/// 0xC0200000 (-2.5). The parameter is not read.
const MEMSET_MODULE: &str =
    "HloModule memset_memzero_sequential, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

// What the thunks compute: a constant (the parameter is unused).
ENTRY main {
  p = f32[4]{0} parameter(0)
  ROOT out = f32[4]{0} constant({1.5, 1.5, 0, -2.5})
}
";

const MEMSET_IO: &str = r#"{"inputs": [{"dtype": "f32", "shape": [4], "data": [7.0, 7.0, 7.0, 7.0]}], "outputs": [{"dtype": "f32", "shape": [4], "data": [1.5, 1.5, 0.0, -2.5]}]}
"#;

fn build_memset(p: &mut GpuExecutableProto) {
    set_allocations(p, &[(16, Some(0), false), (16, None, true)]);
    p.output_info_map = vec![output(1)];
    p.thunks = vec![thunk(
        1,
        Impl::SequentialThunk(SequentialThunkProto {
            thunks: vec![
                thunk(
                    2,
                    Impl::Memset32bitValueThunk(Memset32BitValueThunkProto {
                        dest_buffer: Some(slice(1, 0, 16)),
                        value: 0x3FC0_0000,
                    }),
                ),
                thunk(
                    3,
                    Impl::MemzeroThunk(MemzeroThunkProto {
                        dest_buffer: Some(ShapedSliceProto {
                            slice: Some(slice(1, 8, 4)),
                            shape: None,
                        }),
                    }),
                ),
                thunk(
                    4,
                    Impl::Memset32bitValueThunk(Memset32BitValueThunkProto {
                        dest_buffer: Some(slice(1, 12, 4)),
                        value: 0xC020_0000,
                    }),
                ),
            ],
        }),
    )];
}

/// out = [7, 7, 7, 7, 171, 171] (u8[6]): a sequential thunk runs memset8 of the whole 6-byte
/// output with 0xAB (171; 6 bytes, not a whole number of words: the byte fill), then memset8 of
/// bytes 0..4 with 7 (a whole word: the word fill). The parameter is not read. The compiler emits
/// this thunk only behind `CompileOptions::emit_memset8` (staged rollout, docs/compatibility.md),
/// so this case pins its semantics inside the window whatever the default emits.
const MEMSET8_MODULE: &str =
    "HloModule memset8_fill, entry_computation_layout={(u8[6]{0})->u8[6]{0}}

// What the thunks compute: a constant (the parameter is unused).
ENTRY main {
  p = u8[6]{0} parameter(0)
  ROOT out = u8[6]{0} constant({7, 7, 7, 7, 171, 171})
}
";

const MEMSET8_IO: &str = r#"{"inputs": [{"dtype": "u8", "shape": [6], "data": [1, 2, 3, 4, 5, 6]}], "outputs": [{"dtype": "u8", "shape": [6], "data": [7, 7, 7, 7, 171, 171]}]}
"#;

fn build_memset8(p: &mut GpuExecutableProto) {
    set_allocations(p, &[(6, Some(0), false), (6, None, true)]);
    p.output_info_map = vec![output(1)];
    p.thunks = vec![thunk(
        1,
        Impl::SequentialThunk(SequentialThunkProto {
            thunks: vec![
                thunk(
                    2,
                    Impl::Memset8bitValueThunk(Memset8BitValueThunkProto {
                        dest_buffer: Some(slice(1, 0, 6)),
                        value: 0xAB,
                    }),
                ),
                thunk(
                    3,
                    Impl::Memset8bitValueThunk(Memset8BitValueThunkProto {
                        dest_buffer: Some(slice(1, 0, 4)),
                        value: 7,
                    }),
                ),
            ],
        }),
    )];
}

/// out = 3 * p for p = [1, 2, -3, 0.5], i.e. [3, 6, -9, 1.5] (exact in f32): a chain of custom
/// calls through every registered name and legacy alias — `Memcpy` p → a, `__xla_memcpy` a → b,
/// `xla.runtime.memcpy` b → c, `xla.runtime.axpy_f32` (typed FFI, attribute alpha = 2)
/// out = 2 * c + p, then `xla.runtime.noop` and `__xla_noop` on out (results keep their contents).
/// `__xla_saxpy` (the legacy opaque form) is the compiled `custom_call_axpy` case. The attribute
/// is at `CustomCallThunkProto.attributes_xyz` (1000) from v3 on, at `attributes` (6) in v1, v2.
const CUSTOM_CALL_MODULE: &str =
    "HloModule custom_call_registry, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

// The buffers of the hand-written thunks, one custom call each.
ENTRY main {
  p = f32[4]{0} parameter(0)
  a = f32[4]{0} custom-call(p), custom_call_target=\"Memcpy\"
  b = f32[4]{0} custom-call(a), custom_call_target=\"__xla_memcpy\"
  c = f32[4]{0} custom-call(b), custom_call_target=\"xla.runtime.memcpy\"
  d = f32[4]{0} custom-call(c, p), custom_call_target=\"xla.runtime.axpy_f32\"
  e = f32[4]{0} custom-call(d), custom_call_target=\"xla.runtime.noop\"
  ROOT out = f32[4]{0} custom-call(e), custom_call_target=\"__xla_noop\"
}
";

const CUSTOM_CALL_IO: &str = r#"{"inputs": [{"dtype": "f32", "shape": [4], "data": [1.0, 2.0, -3.0, 0.5]}], "outputs": [{"dtype": "f32", "shape": [4], "data": [3.0, 6.0, -9.0, 1.5]}]}
"#;

fn build_custom_calls(p: &mut GpuExecutableProto) {
    // 0: p, 1: a, 2: b, 3: c, 4: out.
    set_allocations(
        p,
        &[
            (16, Some(0), false),
            (16, None, false),
            (16, None, false),
            (16, None, false),
            (16, None, true),
        ],
    );
    p.output_info_map = vec![output(4)];
    let call = |id: i64, target: &str, operands: &[i64], results: &[i64], alpha: Option<&str>| {
        let nullable = |allocs: &[i64]| {
            allocs
                .iter()
                .map(|&a| NullableShapedSliceProto {
                    shaped_slice: Some(ShapedSliceProto {
                        slice: Some(slice(a, 0, 16)),
                        shape: None,
                    }),
                })
                .collect()
        };
        thunk(
            id,
            Impl::CustomCallThunk(CustomCallThunkProto {
                target_name: target.to_owned(),
                operands: nullable(operands),
                results: nullable(results),
                api_version: CustomCallApiVersion::ApiVersionTypedFfi as i32,
                // At 1000 since v3 (2026-12-01); v1 and v2 carry the attributes at 6, XLA's
                // number for its `AttributesMapProto` (CustomCallThunkProto).
                attributes_xyz: alpha
                    .map(|a| [("alpha".to_owned(), a.to_owned())].into_iter().collect())
                    .unwrap_or_default(),
                ..Default::default()
            }),
        )
    };
    p.thunks = vec![
        call(1, "Memcpy", &[0], &[1], None),
        call(2, "__xla_memcpy", &[1], &[2], None),
        call(3, "xla.runtime.memcpy", &[2], &[3], None),
        call(4, "xla.runtime.axpy_f32", &[3, 0], &[4], Some("2")),
        call(5, "xla.runtime.noop", &[4], &[4], None),
        call(6, "__xla_noop", &[], &[4], None),
    ];
}

/// out = (a, a @ b) for a = [[1, 2], [3, 4]], b = [[5, 6], [7, 8]]: element 0 is the parameter
/// passed through unchanged (`OutputInfoProto.passthrough`, its allocation the parameter's, no
/// copy), element 1 a gemm with `deterministic = false`, what XLA writes unless
/// `xla_gpu_deterministic_ops` is set: [[1*5 + 2*7, 1*6 + 2*8], [3*5 + 4*7, 3*6 + 4*8]] =
/// [[19, 22], [43, 50]] (exact in f32). Today's compiler writes `deterministic = true` always and
/// `passthrough = true` only for an output that is a whole parameter, so each boolean's other side
/// is pinned here (the value classes of `coverage::runtime`).
const GEMM_PASSTHROUGH_MODULE: &str = "HloModule gemm_passthrough, entry_computation_layout={(f32[2,2]{1,0}, f32[2,2]{1,0})->(f32[2,2]{1,0}, f32[2,2]{1,0})}

ENTRY main {
  a = f32[2,2]{1,0} parameter(0)
  b = f32[2,2]{1,0} parameter(1)
  d = f32[2,2]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (f32[2,2]{1,0}, f32[2,2]{1,0}) tuple(a, d)
}
";

const GEMM_PASSTHROUGH_IO: &str = r#"{"inputs": [{"dtype": "f32", "shape": [2, 2], "data": [1.0, 2.0, 3.0, 4.0]}, {"dtype": "f32", "shape": [2, 2], "data": [5.0, 6.0, 7.0, 8.0]}], "outputs": [{"dtype": "f32", "shape": [2, 2], "data": [1.0, 2.0, 3.0, 4.0]}, {"dtype": "f32", "shape": [2, 2], "data": [19.0, 22.0, 43.0, 50.0]}]}
"#;

fn build_gemm_passthrough(p: &mut GpuExecutableProto) {
    // 0: a (also output 0), 1: b, 2: d (output 1).
    set_allocations(
        p,
        &[(16, Some(0), true), (16, Some(1), false), (16, None, true)],
    );
    p.output_info_map = vec![output_leaf(&[0], 0, true), output_leaf(&[1], 2, false)];
    let layout = || MatrixLayoutProto {
        order: matrix_layout_proto::Order::RowMajor as i32,
        num_rows: 2,
        num_cols: 2,
        batch_size: 1,
        leading_dim_stride: 2,
        batch_stride: 4,
        transpose: false,
        dtype: PrimitiveType::F32 as i32,
    };
    p.thunks = vec![thunk(
        1,
        Impl::GemmThunk(GemmThunkProto {
            gemm_config: Some(GemmConfigProto {
                lhs_layout: Some(layout()),
                rhs_layout: Some(layout()),
                output_layout: Some(layout()),
                alpha_real: 1.0,
                alpha_imag: 0.0,
                beta: 0.0,
                compute_type: PrimitiveType::F32 as i32,
                operand_precisions: vec![],
            }),
            lhs_buffer: Some(slice(0, 0, 16)),
            rhs_buffer: Some(slice(1, 0, 16)),
            output_buffer: Some(slice(2, 0, 16)),
            deterministic: false,
            ..Default::default()
        }),
    )];
}

/// out = [3, 4, 1, 2] for p = [1, 2, 3, 4]: two of XLA's `device_to_device_copy_thunk`s (ThunkProto
/// 13, slices in XLA's ShapedSliceProto form) in a sequential thunk, p's second half to out's
/// first and p's first half to out's second. XLA:GPU emits this thunk for its entry copies (a
/// while loop's initial state); today's compiler emits copy_thunk instead, so this case pins its
/// semantics inside the window.
const D2D_COPY_MODULE: &str =
    "HloModule device_to_device_copy, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

// What the copies compute: the halves of p swapped.
ENTRY main {
  p = f32[4]{0} parameter(0)
  lo = f32[2]{0} slice(p), slice={[0:2]}
  hi = f32[2]{0} slice(p), slice={[2:4]}
  ROOT out = f32[4]{0} concatenate(hi, lo), dimensions={0}
}
";

const D2D_COPY_IO: &str = r#"{"inputs": [{"dtype": "f32", "shape": [4], "data": [1.0, 2.0, 3.0, 4.0]}], "outputs": [{"dtype": "f32", "shape": [4], "data": [3.0, 4.0, 1.0, 2.0]}]}
"#;

fn build_d2d_copy(p: &mut GpuExecutableProto) {
    set_allocations(p, &[(16, Some(0), false), (16, None, true)]);
    p.output_info_map = vec![output(1)];
    let copy = |id: i64, src: i64, dst: i64| {
        let shaped = |offset: i64| ShapedSliceProto {
            slice: Some(slice(0, offset, 8)),
            shape: None,
        };
        let mut destination = shaped(dst);
        if let Some(s) = destination.slice.as_mut() {
            s.buffer_allocation_index = 1;
        }
        thunk(
            id,
            Impl::DeviceToDeviceCopyThunk(DeviceToDeviceCopyThunkProto {
                copy_thunk: Some(ShapedCopyThunkProto {
                    source_buffer: Some(shaped(src)),
                    destination_buffer: Some(destination),
                    mem_size: 8,
                }),
            }),
        )
    };
    p.thunks = vec![thunk(
        1,
        Impl::SequentialThunk(SequentialThunkProto {
            thunks: vec![copy(2, 8, 0), copy(3, 0, 8)],
        }),
    )];
}

/// One device (one replica, one partition): `own` is a cross-replica collective permute whose
/// pair (0, 0) sends the device's x to itself; `none`, a cross-partition one without pairs,
/// leaves zeros (XLA's semantics for a device no pair targets). Issue 30: the kind executes
/// since 2026-12-04 and no compiler emits it by default yet (`emit_collective_permute`).
const PERMUTE_MODULE: &str = "HloModule collective_permute_self, entry_computation_layout={(f32[4]{0})->(f32[4]{0}, f32[4]{0})}

ENTRY main {
  x = f32[4]{0} parameter(0)
  own = f32[4]{0} collective-permute(x), source_target_pairs={{0,0}}
  none = f32[4]{0} collective-permute(x), channel_id=1, source_target_pairs={}
  ROOT out = (f32[4]{0}, f32[4]{0}) tuple(own, none)
}
";

const PERMUTE_IO: &str = r#"{"inputs": [{"dtype": "f32", "shape": [4], "data": [1.5, -2.0, 3.0, 4.25]}], "outputs": [{"dtype": "f32", "shape": [4], "data": [1.5, -2.0, 3.0, 4.25]}, {"dtype": "f32", "shape": [4], "data": [0.0, 0.0, 0.0, 0.0]}]}
"#;

fn build_permute(p: &mut GpuExecutableProto) {
    set_allocations(
        p,
        &[(16, Some(0), false), (16, None, true), (16, None, true)],
    );
    p.output_info_map = vec![output_leaf(&[0], 1, false), output_leaf(&[1], 2, false)];
    let permute = |id: i64, dst: i64, mode: CollectiveOpGroupModeProto, pairs: &[(i64, i64)]| {
        thunk(
            id,
            Impl::CollectivePermuteStartThunk(CollectivePermuteStartThunkProto {
                buffers: vec![CollectiveBufferProto {
                    element_count: 4,
                    source_buffer: Some(slice(0, 0, 16)),
                    destination_buffer: Some(slice(dst, 0, 16)),
                    ..Default::default()
                }],
                collective_config: Some(CollectiveConfigProto {
                    operand_element_type: vec![PrimitiveType::F32 as i32],
                    group_mode: mode as i32,
                    op_id: i64::from(
                        mode == CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossPartition,
                    ),
                    ..Default::default()
                }),
                source_target_pairs: pairs
                    .iter()
                    .map(|&(source, target)| proto::xla::SourceTarget { source, target })
                    .collect(),
            }),
        )
    };
    p.thunks = vec![
        permute(
            1,
            1,
            CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossReplica,
            &[(0, 0)],
        ),
        permute(
            2,
            2,
            CollectiveOpGroupModeProto::CollectiveOpGroupModeCrossPartition,
            &[],
        ),
    ];
}

/// out = (FFT of x, RFFT of r) with x = [1, 2, 3, 4] (c64) and r = [1, 2, 3, 4] (f32): sums
/// over e^{-2πi jk/4} ∈ {1, -i, -1, i}, so X = [10, -2+2i, -2, -2-2i] exactly and the RFFT keeps
/// its first 4/2+1 = 3. Issue 31: the kind executes since 2026-12-04 and no compiler emits it by
/// default yet (`emit_fft_thunk`).
const FFT_MODULE: &str =
    "HloModule fft_thunk, entry_computation_layout={(c64[4]{0}, f32[4]{0})->(c64[4]{0}, c64[3]{0})}

ENTRY main {
  x = c64[4]{0} parameter(0)
  r = f32[4]{0} parameter(1)
  a = c64[4]{0} fft(x), fft_type=FFT, fft_length={4}
  b = c64[3]{0} fft(r), fft_type=RFFT, fft_length={4}
  ROOT out = (c64[4]{0}, c64[3]{0}) tuple(a, b)
}
";

const FFT_IO: &str = r#"{"inputs": [{"dtype": "c64", "shape": [4], "data": [1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0, 0.0]}, {"dtype": "f32", "shape": [4], "data": [1.0, 2.0, 3.0, 4.0]}], "outputs": [{"dtype": "c64", "shape": [4], "data": [10.0, 0.0, -2.0, 2.0, -2.0, 0.0, -2.0, -2.0]}, {"dtype": "c64", "shape": [3], "data": [10.0, 0.0, -2.0, 2.0, -2.0, 0.0]}]}
"#;

fn build_fft(p: &mut GpuExecutableProto) {
    set_allocations(
        p,
        &[
            (32, Some(0), false),
            (16, Some(1), false),
            (32, None, true),
            (24, None, true),
        ],
    );
    p.output_info_map = vec![output_leaf(&[0], 2, false), output_leaf(&[1], 3, false)];
    let shape = |t: PrimitiveType, n: i64| proto::xla::ShapeProto {
        element_type: t as i32,
        dimensions: vec![n],
        ..Default::default()
    };
    let fft = |id: i64, t: FftType, src: i64, dst: i64, shapes: [(PrimitiveType, i64); 2]| {
        thunk(
            id,
            Impl::FftThunk(FftThunkProto {
                fft_type: t as i32,
                fft_length: vec![4],
                input_buffer: Some(slice(src, 0, shapes[0].1 * byte_size(shapes[0].0))),
                output_buffer: Some(slice(dst, 0, shapes[1].1 * byte_size(shapes[1].0))),
                input_shape: Some(shape(shapes[0].0, shapes[0].1)),
                output_shape: Some(shape(shapes[1].0, shapes[1].1)),
            }),
        )
    };
    p.thunks = vec![
        fft(
            1,
            FftType::Fft,
            0,
            2,
            [(PrimitiveType::C64, 4), (PrimitiveType::C64, 4)],
        ),
        fft(
            2,
            FftType::Rfft,
            1,
            3,
            [(PrimitiveType::F32, 4), (PrimitiveType::C64, 3)],
        ),
    ];
}

fn byte_size(t: PrimitiveType) -> i64 {
    if t == PrimitiveType::C64 {
        8
    } else {
        4
    }
}

/// Every hand-written case, sorted by name: [`CASES`] and JAX's typed-FFI calls.
pub fn all_cases() -> Vec<&'static HandCase> {
    let mut v: Vec<&'static HandCase> = CASES
        .iter()
        .chain(jax_ffi::CASES)
        .chain(conv::CASES)
        .collect();
    v.sort_by_key(|c| c.name);
    v
}

/// The hand-written cases of the runtime's own constructs, sorted by name.
pub const CASES: &[HandCase] = &[
    HandCase {
        name: "collective_permute_self",
        module: PERMUTE_MODULE,
        io_json: PERMUTE_IO,
        build: build_permute,
    },
    HandCase {
        name: "custom_call_registry",
        module: CUSTOM_CALL_MODULE,
        io_json: CUSTOM_CALL_IO,
        build: build_custom_calls,
    },
    HandCase {
        name: "device_to_device_copy",
        module: D2D_COPY_MODULE,
        io_json: D2D_COPY_IO,
        build: build_d2d_copy,
    },
    HandCase {
        name: "fft_thunk",
        module: FFT_MODULE,
        io_json: FFT_IO,
        build: build_fft,
    },
    HandCase {
        name: "gemm_passthrough",
        module: GEMM_PASSTHROUGH_MODULE,
        io_json: GEMM_PASSTHROUGH_IO,
        build: build_gemm_passthrough,
    },
    HandCase {
        name: "memset8_fill",
        module: MEMSET8_MODULE,
        io_json: MEMSET8_IO,
        build: build_memset8,
    },
    HandCase {
        name: "memset_memzero_sequential",
        module: MEMSET_MODULE,
        io_json: MEMSET_IO,
        build: build_memset,
    },
];

fn slice(allocation: i64, offset: i64, size: i64) -> BufferAllocationSliceProto {
    BufferAllocationSliceProto {
        offset,
        size,
        buffer_allocation_index: allocation,
    }
}

fn thunk(id: i64, imp: Impl) -> ThunkProto {
    ThunkProto {
        thunk_info: Some(ThunkInfoProto {
            profile_annotation: format!("hand-written thunk {id}"),
            thunk_id: id,
            execution_stream_id: 0,
            concurrent_region_id: None,
        }),
        r#impl: Some(imp),
    }
}

/// `(size, parameter number, maybe_live_out)` per allocation, in index order.
fn set_allocations(p: &mut GpuExecutableProto, allocs: &[(i64, Option<i64>, bool)]) {
    p.buffer_allocations = Some(RepeatedBufferAllocations {
        values: allocs
            .iter()
            .enumerate()
            .map(|(i, &(size, param, live_out))| BufferAllocationProto {
                index: i as i64,
                size,
                is_entry_computation_parameter: param.is_some(),
                parameter_number: param.unwrap_or(0),
                maybe_live_out: live_out,
                ..Default::default()
            })
            .collect(),
    });
}

/// The whole (non-tuple) result lives in `allocation`.
fn output(allocation: i64) -> OutputInfoMapEntry {
    output_leaf(&[], allocation, false)
}

/// The result leaf at `indices` lives in `allocation` (`passthrough`: it is that parameter).
fn output_leaf(indices: &[i64], allocation: i64, passthrough: bool) -> OutputInfoMapEntry {
    OutputInfoMapEntry {
        shape_index: Some(ShapeIndexProto {
            indices: indices.to_vec(),
        }),
        output_info: Some(OutputInfoProto {
            allocation_index: allocation,
            passthrough,
            alias_config: None,
        }),
    }
}

/// An artifact with the case's embedded module and program shape, and the environment (compute
/// capability, ABI versions) of `environment`; no allocations or thunks.
pub fn skeleton(
    case: &HandCase,
    environment: &GpuExecutableProto,
) -> anyhow::Result<GpuExecutableProto> {
    let module = hlo_text::parse_module(case.module)
        .map_err(|e| anyhow::anyhow!("{}/{MODULE_FILE}: {e}", case.name))?;
    let with_config = hlo::to_proto(&module).map_err(|e| anyhow::anyhow!("{}: {e}", case.name))?;
    let entry = module.entry_computation();
    let parameters = entry
        .param_shapes()
        .iter()
        .map(|s| hlo::shape_to_proto(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{}: {e}", case.name))?;
    let root = entry
        .root_instruction()
        .with_context(|| format!("{}: the entry computation is empty", case.name))?;
    let result =
        hlo::shape_to_proto(&root.shape).map_err(|e| anyhow::anyhow!("{}: {e}", case.name))?;
    Ok(GpuExecutableProto {
        hlo_module_with_config: Some(with_config),
        gpu_compute_capability: environment.gpu_compute_capability.clone(),
        executable_abi_version: environment.executable_abi_version.clone(),
        module_name: module.name.clone(),
        program_shape: Some(ProgramShapeProto {
            parameters,
            result: Some(result),
            parameter_names: vec![],
        }),
        ..Default::default()
    })
}

/// The artifact of a case for the environment of `environment`.
pub fn artifact(
    case: &HandCase,
    environment: &GpuExecutableProto,
) -> anyhow::Result<GpuExecutableProto> {
    let mut p = skeleton(case, environment)?;
    (case.build)(&mut p);
    Ok(p)
}

/// Writes every case as the next hand-written version of `target`, with the environment and
/// target config of the target's newest compiled version in `compiled`. Refuses when the newest
/// hand-written version already holds exactly these files (nothing to pin).
pub fn write_version(
    compiled: &GoldenStore,
    handwritten: &GoldenStore,
    target: &str,
    created: &str,
) -> anyhow::Result<PathBuf> {
    let newest_compiled = *compiled
        .versions(target)?
        .last()
        .context("no compiled version")?;
    let compiled_dir = compiled.version_dir(target, newest_compiled);
    let manifest = Manifest::read(&compiled_dir).map_err(anyhow::Error::msg)?;
    let first = manifest
        .cases
        .first()
        .context("the newest compiled version has no case")?;
    let env_bytes = crate::golden::read_store_file(compiled_dir.join(first).join(EXECUTABLE_FILE))?;
    let environment: GpuExecutableProto = proto::decode_limited(&env_bytes, usize::MAX)?;
    let target_config = crate::golden::read_store_file(compiled_dir.join(TARGET_FILE))?;

    let newest = match handwritten.versions(target) {
        Ok(v) => v.last().copied(),
        Err(GoldenError::NoVersions { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let version = newest.map_or(1, |n| n + 1);
    let dir = handwritten.version_dir(target, version);
    let tmp = dir.with_file_name(format!(".v{version}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let result = write_into(&tmp, &environment, &target_config, target, version, created);
    let written = match result {
        Ok(m) => m,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    if let Some(n) = newest {
        let previous =
            Manifest::read(&handwritten.version_dir(target, n)).map_err(anyhow::Error::msg)?;
        if previous.files == written.files {
            let _ = std::fs::remove_dir_all(&tmp);
            bail!(
                "{target}/{}/v{n} already holds these cases",
                super::HANDWRITTEN_DIR
            );
        }
    }
    std::fs::rename(&tmp, &dir)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), dir.display()))?;
    Ok(dir)
}

/// The behaviour classes a case reaches (`behaviour:custom_call.TARGET.api_version_N`, ...),
/// which the coverage gate reads from the census as it does for compiled versions. The run
/// only observes: its outputs must be bit-identical to the hand-worked ones, or nothing is
/// written (a disagreement is a wrong case or a runtime bug, to be settled, never recorded).
fn behaviours(
    case: &HandCase,
    bytes: &[u8],
    description: &runtime::DeviceDescription,
) -> anyhow::Result<Vec<String>> {
    let io = hlo_eval::IoCase::parse(case.io_json)
        .map_err(|e| anyhow::anyhow!("{}/io.json: {e}", case.name))?;
    let exercised = super::regen::exercise_artifact(bytes, description, std::slice::from_ref(&io))
        .with_context(|| format!("hand-written case {}", case.name))?;
    for (i, (got, want)) in exercised
        .io
        .iter()
        .flat_map(|r| &r.outputs)
        .zip(&io.outputs)
        .enumerate()
    {
        super::replay::bit_identical(got, want).map_err(|m| {
            anyhow::anyhow!(
                "hand-written case {}: output {i} disagrees with its hand-worked value: {m}",
                case.name
            )
        })?;
    }
    Ok(exercised
        .behaviours
        .iter()
        .map(runtime::Behaviour::census_name)
        .collect())
}

fn write_into(
    dir: &Path,
    environment: &GpuExecutableProto,
    target_config: &[u8],
    target: &str,
    version: u32,
    created: &str,
) -> anyhow::Result<Manifest> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(TARGET_FILE), target_config)?;
    let config_text = std::str::from_utf8(target_config)
        .with_context(|| format!("{target}/{TARGET_FILE} is not UTF-8"))?;
    let config = proto::parse_target_config(config_text, &format!("{target}/{TARGET_FILE}"))?;
    let description = runtime::DeviceDescription::from_target_config(&config)?;
    let mut census = std::collections::BTreeMap::new();
    let cases = all_cases();
    for case in &cases {
        let exe = artifact(case, environment)?;
        let case_dir = dir.join(case.name);
        std::fs::create_dir_all(&case_dir)?;
        let bytes = exe.encode_to_vec();
        std::fs::write(case_dir.join(EXECUTABLE_FILE), &bytes)?;
        std::fs::write(case_dir.join(MODULE_FILE), case.module)?;
        std::fs::write(case_dir.join("io.json"), case.io_json)?;
        let mut constructs = census_of(&exe);
        constructs.extend(behaviours(case, &bytes, &description)?);
        census.insert(case.name.to_owned(), constructs);
    }
    let manifest = Manifest {
        format_version: MANIFEST_FORMAT_VERSION,
        version,
        target: target.to_owned(),
        created: created.to_owned(),
        compiler_version: HANDWRITTEN_COMPILER.to_owned(),
        compiler_commit: HANDWRITTEN_COMPILER.to_owned(),
        cases: cases.iter().map(|c| c.name.to_owned()).collect(),
        files: hash_files(dir)?,
        census,
    };
    std::fs::write(dir.join(MANIFEST_FILE), manifest.to_json())?;
    Ok(manifest)
}
