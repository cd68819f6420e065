//! Hand-written cases for JAX's typed-FFI CUDA targets (`cusolver_*_ffi`, `cusparse_gtsv2_ffi`,
//! `cu_lu_pivots_to_permutation`, `cu_threefry2x32_ffi`; docs/custom_calls.md): one call each,
//! from the entry parameters to the outputs, as JAX's modules make them (typed FFI, the
//! `mhlo.backend_config` entries as attributes, column-major matrices).
//!
//! Every expected output is worked out below from LAPACK's definition of the routine, on inputs
//! small and round enough that the result is exact in f32 (or is the f32 nearest to a value
//! stated here). Matrices are listed in memory order: column by column for a `{0,1}` layout. The
//! square inputs are symmetric, so the parameter's row-major bytes read column-major are the same
//! matrix the module's `custom-call` names. Eigen- and singular vectors carry the runtime's phase
//! convention (the leading largest entry real and positive, docs/custom_calls.md); `s` below is
//! 1/sqrt(2), whose nearest f32 is 0x3F3504F3. The io files write each f32 as the shortest decimal
//! of its exact value (0.7071067690849304 for `s`, 1.600000023841858 for 1.6), which the io reader
//! requires.
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::{
    CustomCallThunkProto, GpuExecutableProto, NullableShapedSliceProto, ShapedSliceProto,
};
use proto::xla::{CustomCallApiVersion, LayoutProto, PrimitiveType, ShapeProto};

use super::{output, output_leaf, set_allocations, slice, thunk, HandCase};

/// One array of a call: element type, dimensions, minor-to-major.
struct Arg(PrimitiveType, &'static [i64], &'static [i64]);

impl Arg {
    fn bytes(&self) -> i64 {
        let width = match self.0 {
            PrimitiveType::F64 => 8,
            _ => 4,
        };
        self.1.iter().product::<i64>() * width
    }

    fn shaped(&self, allocation: i64) -> NullableShapedSliceProto {
        NullableShapedSliceProto {
            shaped_slice: Some(ShapedSliceProto {
                slice: Some(slice(allocation, 0, self.bytes())),
                shape: Some(ShapeProto {
                    element_type: self.0 as i32,
                    dimensions: self.1.to_vec(),
                    layout: Some(LayoutProto {
                        minor_to_major: self.2.to_vec(),
                        ..Default::default()
                    }),
                    is_dynamic_dimension: vec![false; self.1.len()],
                    ..Default::default()
                }),
            }),
        }
    }
}

const F32: PrimitiveType = PrimitiveType::F32;
const S32: PrimitiveType = PrimitiveType::S32;
const U32: PrimitiveType = PrimitiveType::U32;
const MATRIX: &[i64] = &[0, 1];
const VECTOR: &[i64] = &[0];
const SCALAR: &[i64] = &[];

/// The entry parameters (allocations 0..) feed one typed-FFI call of `target` whose results
/// (the allocations after them) are the outputs: the whole output for one result, tuple element
/// `j` for several. Attributes at 1000, where hand-written versions write them since v3.
fn ffi_call(
    p: &mut GpuExecutableProto,
    target: &str,
    attributes: &[(&str, &str)],
    params: &[Arg],
    results: &[Arg],
) {
    let mut allocs: Vec<(i64, Option<i64>, bool)> = params
        .iter()
        .enumerate()
        .map(|(i, a)| (a.bytes(), Some(i as i64), false))
        .collect();
    allocs.extend(results.iter().map(|a| (a.bytes(), None, true)));
    set_allocations(p, &allocs);
    let first = params.len() as i64;
    p.output_info_map = match results {
        [_] => vec![output(first)],
        _ => (0..results.len() as i64)
            .map(|j| output_leaf(&[j], first + j, false))
            .collect(),
    };
    p.thunks = vec![thunk(
        1,
        Impl::CustomCallThunk(CustomCallThunkProto {
            target_name: target.to_owned(),
            operands: params
                .iter()
                .enumerate()
                .map(|(i, a)| a.shaped(i as i64))
                .collect(),
            results: results
                .iter()
                .enumerate()
                .map(|(j, a)| a.shaped(first + j as i64))
                .collect(),
            api_version: CustomCallApiVersion::ApiVersionTypedFfi as i32,
            attributes_xyz: attributes
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..Default::default()
        }),
    )];
}

/// potrf (lower) of [[4, 2], [2, 5]]: L = [[2, 0], [1, 2]] (2*2 = 4, 1*2 = 2, 1 + 2*2 = 5) in
/// the lower triangle, the upper element keeps the input's 2; `info` 0.
fn build_potrf(p: &mut GpuExecutableProto) {
    let a = || Arg(F32, &[2, 2], MATRIX);
    let results = [a(), Arg(S32, &[], SCALAR)];
    ffi_call(
        p,
        "cusolver_potrf_ffi",
        &[("lower", "true")],
        &[a()],
        &results,
    );
}

/// getrf of [[1, 4], [4, 4]]: column 0's largest entry is row 1's 4, so rows swap
/// (`ipiv[0] = 2`, 1-based), l = 1/4, u = 4 - 1/4 * 4 = 3; the last step pivots on itself
/// (`ipiv[1] = 2`). LU = [[4, 4], [0.25, 3]], `info` 0.
fn build_getrf(p: &mut GpuExecutableProto) {
    let a = || Arg(F32, &[2, 2], MATRIX);
    let results = [a(), Arg(S32, &[2], VECTOR), Arg(S32, &[], SCALAR)];
    ffi_call(p, "cusolver_getrf_ffi", &[], &[a()], &results);
}

/// 0-based pivots [1, 1] applied in order to the identity of size 3: swap 0 and 1, then 1 with
/// itself: [1, 0, 2].
fn build_pivots(p: &mut GpuExecutableProto) {
    let results = [Arg(S32, &[3], VECTOR)];
    let params = [Arg(S32, &[2], VECTOR)];
    ffi_call(p, "cu_lu_pivots_to_permutation", &[], &params, &results);
}

/// geqrf of the column [3, 4]: LAPACK's dlarfg with alpha = 3, ||x|| = 4: beta = -5,
/// tau = (beta - alpha) / beta = 1.6, v = 4 / (alpha - beta) = 0.5. Out = [-5, 0.5], tau = [1.6].
fn build_geqrf(p: &mut GpuExecutableProto) {
    let a = || Arg(F32, &[2, 1], MATRIX);
    let results = [a(), Arg(F32, &[1], VECTOR)];
    ffi_call(p, "cusolver_geqrf_ffi", &[], &[a()], &results);
}

/// orgqr of geqrf's output above: Q's column = (I - tau v vᵀ) e0 with v = [1, 0.5], tau = 1.6:
/// [1 - 1.6, -1.6 * 0.5] = [-0.6, -0.8] (and -5 * Q = [3, 4], the input).
fn build_orgqr(p: &mut GpuExecutableProto) {
    let params = [Arg(F32, &[2, 1], MATRIX), Arg(F32, &[1], VECTOR)];
    let results = [Arg(F32, &[2, 1], MATRIX)];
    ffi_call(p, "cusolver_orgqr_ffi", &[], &params, &results);
}

/// syevd of [[2, 1], [1, 2]]: eigenvalues 1 and 3 (ascending), eigenvectors [s, -s] and [s, s].
fn build_syevd(p: &mut GpuExecutableProto) {
    let a = || Arg(F32, &[2, 2], MATRIX);
    let results = [a(), Arg(F32, &[2], VECTOR), Arg(S32, &[], SCALAR)];
    let attrs = [("algorithm", "0 : ui8"), ("lower", "true")];
    ffi_call(p, "cusolver_syevd_ffi", &attrs, &[a()], &results);
}

/// gesvd (full, not transposed) of [[2, 1], [1, 2]]: symmetric positive definite, so its SVD is
/// its eigen-decomposition in descending order: s = [3, 1], U = V = [[s, s], [s, -s]] (columns
/// [s, s] and [s, -s]); `vt` = Vᵀ, which is V again. `out` is a copy of the input.
fn build_gesvd(p: &mut GpuExecutableProto) {
    let a = || Arg(F32, &[2, 2], MATRIX);
    let results = [a(), Arg(F32, &[2], VECTOR), a(), a(), Arg(S32, &[], SCALAR)];
    let attrs = [
        ("compute_uv", "true"),
        ("full_matrices", "true"),
        ("transposed", "false"),
    ];
    ffi_call(p, "cusolver_gesvd_ffi", &attrs, &[a()], &results);
}

/// gesvdj of the same matrix: the same s and U, and V itself (not Vᵀ; equal here).
fn build_gesvdj(p: &mut GpuExecutableProto) {
    let a = || Arg(F32, &[2, 2], MATRIX);
    let results = [a(), Arg(F32, &[2], VECTOR), a(), a(), Arg(S32, &[], SCALAR)];
    let attrs = [("compute_uv", "true"), ("full_matrices", "true")];
    ffi_call(p, "cusolver_gesvdj_ffi", &attrs, &[a()], &results);
}

/// sytrd (lower) of [[1, 2], [2, 3]]: already tridiagonal; LAPACK's dsytd2 makes one reflector
/// of length 1, which dlarfg returns as tau = 0. So `a` is unchanged, d = [1, 3], e = [2],
/// tau = [0], `info` 0.
fn build_sytrd(p: &mut GpuExecutableProto) {
    let a = || Arg(F32, &[2, 2], MATRIX);
    let v = |n: &'static [i64]| Arg(F32, n, VECTOR);
    let results = [a(), v(&[2]), v(&[1]), v(&[1]), Arg(S32, &[], SCALAR)];
    ffi_call(
        p,
        "cusolver_sytrd_ffi",
        &[("lower", "true")],
        &[a()],
        &results,
    );
}

/// gtsv2 of [[2, 1], [1, 2]] x = [3, 3] (dl = [0, 1], d = [2, 2], du = [1, 0]): no pivoting
/// (|2| >= |1|), l = 0.5, d1 = 2 - 0.5 = 1.5, b1 = 3 - 1.5 = 1.5, so x1 = 1, x0 = (3 - 1) / 2 = 1.
fn build_gtsv2(p: &mut GpuExecutableProto) {
    let v = || Arg(F32, &[2], VECTOR);
    let params = [v(), v(), v(), Arg(F32, &[2, 1], MATRIX)];
    let results = [Arg(F32, &[2, 1], MATRIX)];
    ffi_call(p, "cusparse_gtsv2_ffi", &[], &params, &results);
}

/// Threefry-2x32 (20 rounds) on Random123's known-answer vectors: key and counter all zeros give
/// (0x6b200159, 0x99ba4efe); all ones give (0x1cb996fc, 0xbb002be7).
fn build_threefry(p: &mut GpuExecutableProto) {
    let v = || Arg(U32, &[2], VECTOR);
    let params = [v(), v(), v(), v()];
    let results = [v(), v()];
    ffi_call(p, "cu_threefry2x32_ffi", &[], &params, &results);
}

/// JAX's typed-FFI targets, one case each, sorted by name.
pub const CASES: &[HandCase] = &[
    HandCase {
        name: "jax_ffi_geqrf",
        module: "HloModule jax_ffi_geqrf, entry_computation_layout={(f32[2,1]{1,0})->(f32[2,1]{0,1}, f32[1]{0})}

ENTRY main {
  a = f32[2,1]{1,0} parameter(0)
  ROOT r = (f32[2,1]{0,1}, f32[1]{0}) custom-call(a), custom_call_target=\"cusolver_geqrf_ffi\", operand_layout_constraints={f32[2,1]{0,1}}, api_version=API_VERSION_TYPED_FFI
}
",
        io_json: r#"{"inputs": [{"dtype": "f32", "shape": [2, 1], "data": [3.0, 4.0]}], "outputs": [{"dtype": "f32", "shape": [2, 1], "data": [-5.0, 0.5]}, {"dtype": "f32", "shape": [1], "data": [1.600000023841858]}]}
"#,
        build: build_geqrf,
    },
    HandCase {
        name: "jax_ffi_gesvd",
        module: "HloModule jax_ffi_gesvd, entry_computation_layout={(f32[2,2]{1,0})->(f32[2,2]{0,1}, f32[2]{0}, f32[2,2]{0,1}, f32[2,2]{0,1}, s32[])}

ENTRY main {
  a = f32[2,2]{1,0} parameter(0)
  ROOT r = (f32[2,2]{0,1}, f32[2]{0}, f32[2,2]{0,1}, f32[2,2]{0,1}, s32[]) custom-call(a), custom_call_target=\"cusolver_gesvd_ffi\", operand_layout_constraints={f32[2,2]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={compute_uv = true, full_matrices = true, transposed = false}
}
",
        io_json: concat!(
            r#"{"inputs": [{"dtype": "f32", "shape": [2, 2], "data": [2.0, 1.0, 1.0, 2.0]}], "outputs": [{"dtype": "f32", "shape": [2, 2], "data": [2.0, 1.0, 1.0, 2.0]}, {"dtype": "f32", "shape": [2], "data": [3.0, 1.0]}, "#,
            r#"{"dtype": "f32", "shape": [2, 2], "data": [0.7071067690849304, 0.7071067690849304, 0.7071067690849304, -0.7071067690849304]}, {"dtype": "f32", "shape": [2, 2], "data": [0.7071067690849304, 0.7071067690849304, 0.7071067690849304, -0.7071067690849304]}, {"dtype": "s32", "shape": [], "data": [0]}]}"#,
            "\n"
        ),
        build: build_gesvd,
    },
    HandCase {
        name: "jax_ffi_gesvdj",
        module: "HloModule jax_ffi_gesvdj, entry_computation_layout={(f32[2,2]{1,0})->(f32[2,2]{0,1}, f32[2]{0}, f32[2,2]{0,1}, f32[2,2]{0,1}, s32[])}

ENTRY main {
  a = f32[2,2]{1,0} parameter(0)
  ROOT r = (f32[2,2]{0,1}, f32[2]{0}, f32[2,2]{0,1}, f32[2,2]{0,1}, s32[]) custom-call(a), custom_call_target=\"cusolver_gesvdj_ffi\", operand_layout_constraints={f32[2,2]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={compute_uv = true, full_matrices = true}
}
",
        io_json: concat!(
            r#"{"inputs": [{"dtype": "f32", "shape": [2, 2], "data": [2.0, 1.0, 1.0, 2.0]}], "outputs": [{"dtype": "f32", "shape": [2, 2], "data": [2.0, 1.0, 1.0, 2.0]}, {"dtype": "f32", "shape": [2], "data": [3.0, 1.0]}, "#,
            r#"{"dtype": "f32", "shape": [2, 2], "data": [0.7071067690849304, 0.7071067690849304, 0.7071067690849304, -0.7071067690849304]}, {"dtype": "f32", "shape": [2, 2], "data": [0.7071067690849304, 0.7071067690849304, 0.7071067690849304, -0.7071067690849304]}, {"dtype": "s32", "shape": [], "data": [0]}]}"#,
            "\n"
        ),
        build: build_gesvdj,
    },
    HandCase {
        name: "jax_ffi_getrf",
        module: "HloModule jax_ffi_getrf, entry_computation_layout={(f32[2,2]{1,0})->(f32[2,2]{0,1}, s32[2]{0}, s32[])}

ENTRY main {
  a = f32[2,2]{1,0} parameter(0)
  ROOT r = (f32[2,2]{0,1}, s32[2]{0}, s32[]) custom-call(a), custom_call_target=\"cusolver_getrf_ffi\", operand_layout_constraints={f32[2,2]{0,1}}, api_version=API_VERSION_TYPED_FFI
}
",
        io_json: r#"{"inputs": [{"dtype": "f32", "shape": [2, 2], "data": [1.0, 4.0, 4.0, 4.0]}], "outputs": [{"dtype": "f32", "shape": [2, 2], "data": [4.0, 0.25, 4.0, 3.0]}, {"dtype": "s32", "shape": [2], "data": [2, 2]}, {"dtype": "s32", "shape": [], "data": [0]}]}
"#,
        build: build_getrf,
    },
    HandCase {
        name: "jax_ffi_gtsv2",
        module: "HloModule jax_ffi_gtsv2, entry_computation_layout={(f32[2]{0}, f32[2]{0}, f32[2]{0}, f32[2,1]{1,0})->f32[2,1]{0,1}}

ENTRY main {
  dl = f32[2]{0} parameter(0)
  d = f32[2]{0} parameter(1)
  du = f32[2]{0} parameter(2)
  b = f32[2,1]{1,0} parameter(3)
  ROOT x = f32[2,1]{0,1} custom-call(dl, d, du, b), custom_call_target=\"cusparse_gtsv2_ffi\", operand_layout_constraints={f32[2]{0}, f32[2]{0}, f32[2]{0}, f32[2,1]{0,1}}, api_version=API_VERSION_TYPED_FFI
}
",
        io_json: r#"{"inputs": [{"dtype": "f32", "shape": [2], "data": [0.0, 1.0]}, {"dtype": "f32", "shape": [2], "data": [2.0, 2.0]}, {"dtype": "f32", "shape": [2], "data": [1.0, 0.0]}, {"dtype": "f32", "shape": [2, 1], "data": [3.0, 3.0]}], "outputs": [{"dtype": "f32", "shape": [2, 1], "data": [1.0, 1.0]}]}
"#,
        build: build_gtsv2,
    },
    HandCase {
        name: "jax_ffi_orgqr",
        module: "HloModule jax_ffi_orgqr, entry_computation_layout={(f32[2,1]{1,0}, f32[1]{0})->f32[2,1]{0,1}}

ENTRY main {
  a = f32[2,1]{1,0} parameter(0)
  tau = f32[1]{0} parameter(1)
  ROOT q = f32[2,1]{0,1} custom-call(a, tau), custom_call_target=\"cusolver_orgqr_ffi\", operand_layout_constraints={f32[2,1]{0,1}, f32[1]{0}}, api_version=API_VERSION_TYPED_FFI
}
",
        io_json: r#"{"inputs": [{"dtype": "f32", "shape": [2, 1], "data": [-5.0, 0.5]}, {"dtype": "f32", "shape": [1], "data": [1.600000023841858]}], "outputs": [{"dtype": "f32", "shape": [2, 1], "data": [-0.6000000238418579, -0.800000011920929]}]}
"#,
        build: build_orgqr,
    },
    HandCase {
        name: "jax_ffi_pivots_to_permutation",
        module: "HloModule jax_ffi_pivots_to_permutation, entry_computation_layout={(s32[2]{0})->s32[3]{0}}

ENTRY main {
  pivots = s32[2]{0} parameter(0)
  ROOT perm = s32[3]{0} custom-call(pivots), custom_call_target=\"cu_lu_pivots_to_permutation\", api_version=API_VERSION_TYPED_FFI
}
",
        io_json: r#"{"inputs": [{"dtype": "s32", "shape": [2], "data": [1, 1]}], "outputs": [{"dtype": "s32", "shape": [3], "data": [1, 0, 2]}]}
"#,
        build: build_pivots,
    },
    HandCase {
        name: "jax_ffi_potrf",
        module: "HloModule jax_ffi_potrf, entry_computation_layout={(f32[2,2]{1,0})->(f32[2,2]{0,1}, s32[])}

ENTRY main {
  a = f32[2,2]{1,0} parameter(0)
  ROOT r = (f32[2,2]{0,1}, s32[]) custom-call(a), custom_call_target=\"cusolver_potrf_ffi\", operand_layout_constraints={f32[2,2]{0,1}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={lower = true}
}
",
        io_json: r#"{"inputs": [{"dtype": "f32", "shape": [2, 2], "data": [4.0, 2.0, 2.0, 5.0]}], "outputs": [{"dtype": "f32", "shape": [2, 2], "data": [2.0, 1.0, 2.0, 2.0]}, {"dtype": "s32", "shape": [], "data": [0]}]}
"#,
        build: build_potrf,
    },
    HandCase {
        name: "jax_ffi_syevd",
        module: "HloModule jax_ffi_syevd, entry_computation_layout={(f32[2,2]{1,0})->(f32[2,2]{0,1}, f32[2]{0}, s32[])}

ENTRY main {
  a = f32[2,2]{1,0} parameter(0)
  ROOT r = (f32[2,2]{0,1}, f32[2]{0}, s32[]) custom-call(a), custom_call_target=\"cusolver_syevd_ffi\", operand_layout_constraints={f32[2,2]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={algorithm = 0 : ui8, lower = true}
}
",
        io_json: r#"{"inputs": [{"dtype": "f32", "shape": [2, 2], "data": [2.0, 1.0, 1.0, 2.0]}], "outputs": [{"dtype": "f32", "shape": [2, 2], "data": [0.7071067690849304, -0.7071067690849304, 0.7071067690849304, 0.7071067690849304]}, {"dtype": "f32", "shape": [2], "data": [1.0, 3.0]}, {"dtype": "s32", "shape": [], "data": [0]}]}
"#,
        build: build_syevd,
    },
    HandCase {
        name: "jax_ffi_sytrd",
        module: "HloModule jax_ffi_sytrd, entry_computation_layout={(f32[2,2]{1,0})->(f32[2,2]{0,1}, f32[2]{0}, f32[1]{0}, f32[1]{0}, s32[])}

ENTRY main {
  a = f32[2,2]{1,0} parameter(0)
  ROOT r = (f32[2,2]{0,1}, f32[2]{0}, f32[1]{0}, f32[1]{0}, s32[]) custom-call(a), custom_call_target=\"cusolver_sytrd_ffi\", operand_layout_constraints={f32[2,2]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={lower = true}
}
",
        io_json: r#"{"inputs": [{"dtype": "f32", "shape": [2, 2], "data": [1.0, 2.0, 2.0, 3.0]}], "outputs": [{"dtype": "f32", "shape": [2, 2], "data": [1.0, 2.0, 2.0, 3.0]}, {"dtype": "f32", "shape": [2], "data": [1.0, 3.0]}, {"dtype": "f32", "shape": [1], "data": [2.0]}, {"dtype": "f32", "shape": [1], "data": [0.0]}, {"dtype": "s32", "shape": [], "data": [0]}]}
"#,
        build: build_sytrd,
    },
    HandCase {
        name: "jax_ffi_threefry",
        module: "HloModule jax_ffi_threefry, entry_computation_layout={(u32[2]{0}, u32[2]{0}, u32[2]{0}, u32[2]{0})->(u32[2]{0}, u32[2]{0})}

ENTRY main {
  k0 = u32[2]{0} parameter(0)
  k1 = u32[2]{0} parameter(1)
  x0 = u32[2]{0} parameter(2)
  x1 = u32[2]{0} parameter(3)
  ROOT r = (u32[2]{0}, u32[2]{0}) custom-call(k0, k1, x0, x1), custom_call_target=\"cu_threefry2x32_ffi\", api_version=API_VERSION_TYPED_FFI
}
",
        io_json: r#"{"inputs": [{"dtype": "u32", "shape": [2], "data": [0, 4294967295]}, {"dtype": "u32", "shape": [2], "data": [0, 4294967295]}, {"dtype": "u32", "shape": [2], "data": [0, 4294967295]}, {"dtype": "u32", "shape": [2], "data": [0, 4294967295]}], "outputs": [{"dtype": "u32", "shape": [2], "data": [1797259609, 481924860]}, {"dtype": "u32", "shape": [2], "data": [2579123966, 3137350631]}]}
"#,
        build: build_threefry,
    },
];

#[cfg(test)]
mod tests {

    /// The phase constant in the docs is what the io files hold.
    #[test]
    fn s_is_the_f32_nearest_one_over_sqrt_two() {
        let s: f32 = "0.70710677".parse().unwrap();
        assert_eq!(s, std::f32::consts::FRAC_1_SQRT_2);
        assert_eq!(s.to_bits(), 0x3F35_04F3);
    }

    #[test]
    fn threefry_known_answers_are_the_hex_in_the_comment() {
        assert_eq!(1_797_259_609u32, 0x6b20_0159);
        assert_eq!(2_579_123_966u32, 0x99ba_4efe);
        assert_eq!(481_924_860u32, 0x1cb9_96fc);
        assert_eq!(3_137_350_631u32, 0xbb00_2be7);
    }
}
