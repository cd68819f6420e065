//! One test per load check of a typed-FFI target's schema (attributes, operand and result count,
//! element type, dimensions, layout, slice size), asserting the exact message.
use std::collections::BTreeMap;

use proto::prost::Message;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use proto::xla::{LayoutProto, PrimitiveType, ShapeProto};
use runtime::{Registry, RuntimeFlags};

use crate::common::*;

fn arg(
    allocation: i64,
    size: i64,
    ty: PrimitiveType,
    dims: &[i64],
    m2m: &[i64],
) -> NullableShapedSliceProto {
    NullableShapedSliceProto {
        shaped_slice: Some(ShapedSliceProto {
            slice: Some(sl(allocation, 0, size)),
            shape: Some(ShapeProto {
                element_type: ty as i32,
                dimensions: dims.to_vec(),
                layout: Some(LayoutProto {
                    minor_to_major: m2m.to_vec(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        }),
    }
}

/// `cusolver_potrf_ffi` on an f32[2,2] column-major matrix, as JAX emits it.
fn potrf() -> (GpuExecutableProto, CustomCallThunkProto) {
    let call = CustomCallThunkProto {
        target_name: "cusolver_potrf_ffi".into(),
        api_version: 4,
        attributes: [("lower".to_owned(), "true".to_owned())]
            .into_iter()
            .collect(),
        operands: vec![arg(0, 16, PrimitiveType::F32, &[2, 2], &[0, 1])],
        results: vec![
            arg(2, 16, PrimitiveType::F32, &[2, 2], &[0, 1]),
            arg(1, 4, PrimitiveType::S32, &[], &[]),
        ],
        ..Default::default()
    };
    (vadd(), call)
}

fn with(mut p: GpuExecutableProto, c: CustomCallThunkProto) -> GpuExecutableProto {
    p.thunks[0].r#impl = Some(Impl::CustomCallThunk(c));
    p
}

#[test]
fn a_well_formed_jax_call_loads() {
    let (p, c) = potrf();
    let bytes = with(p, c).encode_to_vec();
    runtime::validate(
        &bytes,
        &h100(),
        &RuntimeFlags::default(),
        &Registry::builtin(),
    )
    .unwrap();
}

#[test]
fn a_legacy_api_call_of_a_typed_ffi_handler_is_refused() {
    let (p, mut c) = potrf();
    c.api_version = 1;
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.api_version: cusolver_potrf_ffi is a typed-FFI handler (API_VERSION_TYPED_FFI), the artifact calls it with API_VERSION_ORIGINAL"
    );
}

#[test]
fn a_missing_attribute_is_refused() {
    let (p, mut c) = potrf();
    c.attributes = BTreeMap::new();
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.attributes: cusolver_potrf_ffi needs the attribute lower (bool), the artifact does not set it"
    );
}

#[test]
fn an_unknown_attribute_is_refused() {
    let (p, mut c) = potrf();
    c.attributes.insert("upper".into(), "false".into());
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.attributes[\"upper\"]: cusolver_potrf_ffi has no attribute \"upper\" (it takes lower: bool)"
    );
}

#[test]
fn a_mistyped_attribute_is_refused() {
    let (p, mut c) = potrf();
    c.attributes.insert("lower".into(), "1 : i32".into());
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.attributes[\"lower\"]: cusolver_potrf_ffi takes lower as a bool (true or false), the artifact has \"1 : i32\" (not true or false)"
    );
}

#[test]
fn an_integer_attribute_of_another_width_is_refused() {
    let (p, mut c) = potrf();
    c.target_name = "cusolver_syevd_ffi".into();
    c.attributes.insert("algorithm".into(), "0 : i32".into());
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.attributes[\"algorithm\"]: cusolver_syevd_ffi takes algorithm as an ui8 (\"1 : ui8\"), the artifact has \"0 : i32\" (type i32)"
    );
}

#[test]
fn a_wrong_operand_count_is_refused() {
    let (p, mut c) = potrf();
    c.operands.push(c.operands[0].clone());
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.operands: cusolver_potrf_ffi takes 1 operand, the artifact has 2"
    );
}

#[test]
fn a_wrong_element_type_is_refused() {
    let (p, mut c) = potrf();
    c.operands[0] = arg(0, 16, PrimitiveType::S32, &[2, 2], &[0, 1]);
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.operands[0].shaped_slice.shape.element_type: cusolver_potrf_ffi takes F32, F64, C64 or C128 for operand 0, the artifact has S32"
    );
}

#[test]
fn a_row_major_matrix_is_refused() {
    let (p, mut c) = potrf();
    c.operands[0] = arg(0, 16, PrimitiveType::F32, &[2, 2], &[1, 0]);
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.operands[0].shaped_slice.shape.layout.minor_to_major: cusolver_potrf_ffi needs operand 0 laid out [0, 1] (column-major matrices, batch dimensions major), the artifact has [1, 0]"
    );
}

#[test]
fn a_wrong_result_dimension_is_refused() {
    let (p, mut c) = potrf();
    c.results[1] = arg(1, 4, PrimitiveType::S32, &[1], &[0]);
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.results[1].shaped_slice.shape.dimensions: cusolver_potrf_ffi needs result 1 of dimensions [] (operand 0's batch dimensions), the artifact has [1]"
    );
}

#[test]
fn a_slice_smaller_than_its_shape_is_refused() {
    let (p, mut c) = potrf();
    c.results[1] = arg(1, 2, PrimitiveType::S32, &[], &[]);
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.results[1].shaped_slice.slice.size is 2 bytes, its shape S32[] needs 4"
    );
}

#[test]
fn a_null_result_is_refused() {
    let (p, mut c) = potrf();
    c.results[1] = NullableShapedSliceProto { shaped_slice: None };
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.results[1].shaped_slice: cusolver_potrf_ffi needs result 1 with a shape"
    );
}

#[test]
fn gesvd_refuses_a_wide_matrix_not_passed_transposed() {
    let (p, mut c) = potrf();
    c.target_name = "cusolver_gesvd_ffi".into();
    c.attributes = [
        ("compute_uv", "false"),
        ("full_matrices", "false"),
        ("transposed", "false"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    c.operands = vec![arg(0, 8, PrimitiveType::F32, &[1, 2], &[0, 1])];
    c.results = vec![
        arg(2, 8, PrimitiveType::F32, &[1, 2], &[0, 1]),
        arg(1, 4, PrimitiveType::F32, &[2], &[0]),
        arg(2, 4, PrimitiveType::F32, &[], &[]),
        arg(2, 4, PrimitiveType::F32, &[], &[]),
        arg(1, 4, PrimitiveType::S32, &[], &[]),
    ];
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.operands[0].shaped_slice.shape.dimensions: cusolver_gesvd_ffi needs m >= n (a wide matrix is passed transposed), operand 0 is 1x2 as read with transposed = false"
    );
}

#[test]
fn the_executor_gives_the_handler_its_shapes() {
    // potrf through load and execute: [[4, 2], [2, 3]] = L Lᵀ, L = [[2, 0], [1, √2]]; the upper
    // triangle keeps the input's 2.
    let (p, c) = potrf();
    let a = f32s(&[4.0, 2.0, 2.0, 3.0]);
    let r = run(&with(p, c), &RuntimeFlags::default(), &[&a, &[0u8; 16]]);
    assert_eq!(to_f32s(&r.outputs[0]), vec![2.0, 1.0, 2.0, 2f32.sqrt()]);
}

/// A batch of 2^62 + 1 matrices of 2x2 f32 is 2^64 + 4 elements: a wrapping product made it 4,
/// so a 16-byte slice passed the size check (issue 33's misleading success, in the runtime).
#[test]
fn a_shape_whose_size_wraps_past_2_pow_64_is_refused() {
    let (p, mut c) = potrf();
    let b = (1i64 << 62) + 1;
    c.operands[0] = arg(0, 16, PrimitiveType::F32, &[b, 2, 2], &[1, 2, 0]);
    c.results[0] = arg(2, 16, PrimitiveType::F32, &[b, 2, 2], &[1, 2, 0]);
    c.results[1] = arg(1, 4, PrimitiveType::S32, &[b], &[0]);
    assert_eq!(
        load_err(&with(p, c)),
        "INVALID_ARGUMENT: thunks[0].custom_call_thunk.operands[0].shaped_slice.shape F32[4611686018427387905, 2, 2] has a negative dimension or a size past 2^64 bytes"
    );
}
