//! Gemm on a CUDA device through cuBLAS (`cublasGemmStridedBatchedEx`), loaded dynamically like
//! the driver. Translates docs/artifact.md's layouts (row- or column-major, leading-dimension and
//! batch strides, `transpose` on any operand, the output included) into cuBLAS's column-major
//! arguments. Covers f16, bf16, f32 and f64 operands accumulated in f32 / f64; [`plan`] returns
//! `None` for the rest (integer gemms, dimensions past `i32`), which the caller runs natively.
use std::ffi::{c_int, c_longlong, c_void};

use cudarc::cublas::{result, sys};

use crate::thunks::{ElemType, GemmConfig, MatrixLayout, Order};

/// How a logical matrix (an operand after its `transpose`) is laid out: column-major (element
/// `(r, c)` at `r + c * ld`) or row-major (`r * ld + c`), and the strides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Logical {
    column_major: bool,
    ld: u64,
    batch_stride: u64,
    dtype: ElemType,
}

fn logical(l: &MatrixLayout) -> Logical {
    // offset(r, c) is r*ld + c (row-major) or c*ld + r (column-major); `transpose` swaps r and c.
    let stored_column_major = l.order == Order::ColumnMajor;
    Logical {
        column_major: stored_column_major != l.transpose,
        ld: l.leading_dim_stride,
        batch_stride: l.batch_stride,
        dtype: l.dtype,
    }
}

/// The arguments of one `cublasGemmStridedBatchedEx` call (operands by role in the call, which
/// swaps lhs and rhs when the output is row-major).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Plan {
    pub transa: bool,
    pub transb: bool,
    pub m: c_int,
    pub n: c_int,
    pub k: c_int,
    /// The call's A is the gemm's rhs (output row-major: C^T = op(B)^T op(A)^T).
    pub swapped: bool,
    pub a_type: sys::cudaDataType,
    pub lda: c_int,
    pub stride_a: c_longlong,
    pub b_type: sys::cudaDataType,
    pub ldb: c_int,
    pub stride_b: c_longlong,
    pub c_type: sys::cudaDataType,
    pub ldc: c_int,
    pub stride_c: c_longlong,
    pub batch: c_int,
    pub compute_f64: bool,
}

fn data_type(t: ElemType) -> Option<sys::cudaDataType> {
    Some(match t {
        ElemType::F16 => sys::cudaDataType::CUDA_R_16F,
        ElemType::BF16 => sys::cudaDataType::CUDA_R_16BF,
        ElemType::F32 => sys::cudaDataType::CUDA_R_32F,
        ElemType::F64 => sys::cudaDataType::CUDA_R_64F,
        _ => None?,
    })
}

/// The cuBLAS call for `cfg`, or `None` when cuBLAS cannot run it as docs/artifact.md says.
pub(super) fn plan(cfg: &GemmConfig) -> Option<Plan> {
    let compute_f64 = match cfg.compute_type {
        ElemType::F32 => false,
        ElemType::F64 => true,
        _ => return None,
    };
    let int = |v: u64| c_int::try_from(v).ok();
    let long = |v: u64| c_longlong::try_from(v).ok();
    let (lhs, rhs, out) = (logical(&cfg.lhs), logical(&cfg.rhs), logical(&cfg.output));
    // Column-major output C (m x n): C = op(A) op(B) with A = lhs, B = rhs. Row-major output:
    // C^T (n x m) = op(rhs)^T op(lhs)^T, and transposing a logical matrix flips its layout.
    let (first, second, m, n, swapped) = if out.column_major {
        (lhs, rhs, cfg.m, cfg.n, false)
    } else {
        (
            Logical {
                column_major: !rhs.column_major,
                ..rhs
            },
            Logical {
                column_major: !lhs.column_major,
                ..lhs
            },
            cfg.n,
            cfg.m,
            true,
        )
    };
    Some(Plan {
        // A logical column-major operand is cuBLAS's N; row-major is the transpose (T) of the
        // column-major matrix with the same leading dimension.
        transa: !first.column_major,
        transb: !second.column_major,
        m: int(m)?,
        n: int(n)?,
        k: int(cfg.k)?,
        swapped,
        a_type: data_type(first.dtype)?,
        lda: int(first.ld.max(1))?,
        stride_a: long(first.batch_stride)?,
        b_type: data_type(second.dtype)?,
        ldb: int(second.ld.max(1))?,
        stride_b: long(second.batch_stride)?,
        c_type: data_type(out.dtype)?,
        ldc: int(out.ld.max(1))?,
        stride_c: long(out.batch_stride)?,
        batch: int(cfg.batch)?,
        compute_f64,
    })
}

/// Whether the cuBLAS library can be loaded.
pub(super) fn present() -> bool {
    // SAFETY: only tries to open the shared library.
    unsafe { sys::is_culib_present() }
}

/// Why [`run`] did not complete.
#[derive(Debug)]
pub(super) enum Failure {
    /// cuBLAS refused the arguments before running (`NOT_SUPPORTED`, `INVALID_VALUE`): nothing
    /// was written, the native gemm can run instead.
    Refused,
    /// Anything else.
    Failed(String),
}

/// Runs `plan` on device addresses (`lhs`, `rhs`, `out` are the gemm's operands, not the call's).
///
/// # Safety
/// The addresses are live device allocations of this context, large enough for the layouts
/// (checked at load), and `handle` (a `CudaBlas`'s) belongs to the current context.
pub(super) unsafe fn run(
    handle: sys::cublasHandle_t,
    plan: &Plan,
    cfg: &GemmConfig,
    lhs: u64,
    rhs: u64,
    out: u64,
) -> Result<(), Failure> {
    let (a, b) = if plan.swapped { (rhs, lhs) } else { (lhs, rhs) };
    let op = |t: bool| {
        if t {
            sys::cublasOperation_t::CUBLAS_OP_T
        } else {
            sys::cublasOperation_t::CUBLAS_OP_N
        }
    };
    // alpha and beta in the compute type.
    let (alpha32, beta32) = (cfg.alpha_real as f32, cfg.beta as f32);
    let (alpha64, beta64) = (cfg.alpha_real, cfg.beta);
    let (alpha, beta, compute) = if plan.compute_f64 {
        (
            &alpha64 as *const f64 as *const c_void,
            &beta64 as *const f64 as *const c_void,
            sys::cublasComputeType_t::CUBLAS_COMPUTE_64F,
        )
    } else {
        (
            &alpha32 as *const f32 as *const c_void,
            &beta32 as *const f32 as *const c_void,
            sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
        )
    };
    // SAFETY: the caller's contract; alpha/beta point at locals that outlive the call.
    unsafe {
        result::gemm_strided_batched_ex(
            handle,
            op(plan.transa),
            op(plan.transb),
            plan.m,
            plan.n,
            plan.k,
            alpha,
            a as *const c_void,
            plan.a_type,
            plan.lda,
            plan.stride_a,
            b as *const c_void,
            plan.b_type,
            plan.ldb,
            plan.stride_b,
            beta,
            out as *mut c_void,
            plan.c_type,
            plan.ldc,
            plan.stride_c,
            plan.batch,
            compute,
            sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        )
    }
    .map_err(|e| {
        let message = format!("cublasGemmStridedBatchedEx: {e:?}");
        match e.0 {
            sys::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED
            | sys::cublasStatus_t::CUBLAS_STATUS_INVALID_VALUE => Failure::Refused,
            _ => Failure::Failed(message),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(order: Order, rows: u64, cols: u64, ld: u64, transpose: bool) -> MatrixLayout {
        MatrixLayout {
            order,
            num_rows: rows,
            num_cols: cols,
            batch_size: 1,
            leading_dim_stride: ld,
            batch_stride: rows * cols,
            transpose,
            dtype: ElemType::F32,
        }
    }

    fn config(lhs: MatrixLayout, rhs: MatrixLayout, out: MatrixLayout) -> GemmConfig {
        GemmConfig {
            lhs,
            rhs,
            output: out,
            alpha_real: 1.0,
            alpha_imag: 0.0,
            beta: 0.0,
            compute_type: ElemType::F32,
            operand_precisions: Vec::new(),
            m: 2,
            n: 4,
            k: 3,
            batch: 1,
        }
    }

    /// Evaluates a plan on the host the way cuBLAS defines it (column-major, op per flag) and
    /// compares with the native gemm for every combination of orders and transposes.
    #[test]
    fn plans_compute_what_the_native_gemm_computes() {
        use Order::*;
        for lo in [RowMajor, ColumnMajor] {
            for lt in [false, true] {
                for ro in [RowMajor, ColumnMajor] {
                    for rt in [false, true] {
                        for oo in [RowMajor, ColumnMajor] {
                            // op(lhs) is 2x3, op(rhs) 3x4, out 2x4; stored shapes follow the flags.
                            let shape = |o: Order, r: u64, c: u64, t: bool| {
                                let (sr, sc) = if t { (c, r) } else { (r, c) };
                                let ld = if o == RowMajor { sc } else { sr };
                                layout(o, sr, sc, ld, t)
                            };
                            let cfg = config(
                                shape(lo, 2, 3, lt),
                                shape(ro, 3, 4, rt),
                                shape(oo, 2, 4, false),
                            );
                            let a: Vec<f32> = (0..6).map(|v| v as f32 + 1.0).collect();
                            let b: Vec<f32> = (0..12).map(|v| (v as f32) * 0.5 - 2.0).collect();
                            let bytes = |v: &[f32]| -> Vec<u8> {
                                v.iter().flat_map(|x| x.to_le_bytes()).collect()
                            };
                            let mut want = vec![0u8; 32];
                            crate::gemm::gemm(&cfg, &bytes(&a), &bytes(&b), &mut want).unwrap();
                            let p = plan(&cfg).unwrap();
                            let (x, y) = if p.swapped { (&b, &a) } else { (&a, &b) };
                            let at = |m: &[f32], t: bool, ld: i32, r: i32, c: i32| {
                                let i = if t { c + r * ld } else { r + c * ld };
                                m[i as usize]
                            };
                            let mut c = vec![0f32; 8];
                            for i in 0..p.m {
                                for j in 0..p.n {
                                    let mut acc = 0f32;
                                    for l in 0..p.k {
                                        acc += at(x, p.transa, p.lda, i, l)
                                            * at(y, p.transb, p.ldb, l, j);
                                    }
                                    c[(i + j * p.ldc) as usize] = acc;
                                }
                            }
                            assert_eq!(
                                bytes(&c),
                                want,
                                "lhs {lo:?} t={lt}, rhs {ro:?} t={rt}, out {oo:?}: {p:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn integer_gemms_stay_native() {
        let mut cfg = config(
            layout(Order::RowMajor, 2, 3, 3, false),
            layout(Order::RowMajor, 3, 4, 4, false),
            layout(Order::RowMajor, 2, 4, 4, false),
        );
        cfg.compute_type = ElemType::S32;
        assert!(plan(&cfg).is_none());
    }
}
