//! The micro-kernels: one `mr x nr` block of `c = a x b` from packed panels, each element its
//! products summed from zero in increasing k order with a separate multiply and add.
//!
//! Every SIMD lane holds a different output element (vectorized across output columns, never
//! across k), so a vector kernel does per element exactly the scalar operations of
//! [`portable`], in the same order, with the same IEEE rounding: `vmulps`/`vaddps` (and their
//! f64 and AVX-512 forms) round like scalar `mulss`/`addss`, under the same MXCSR. No FMA: the
//! reference loop rounds the product before the add, and so do these. The intrinsic kernels are
//! hand-written because LLVM does not keep a 12- or 16-register accumulator block in registers
//! from the portable loop on its own; the tests compare each of them with the portable one and
//! with the reference loop byte for byte.
use super::fast::Compute;
use super::Isa;

/// A block kernel and the block it computes.
#[derive(Clone, Copy)]
pub(super) struct Kernel<T> {
    /// Which kernel it is (`"f32 8x32 avx512"`): the tests check that each ISA gets its own,
    /// which the results cannot show (every kernel gives the same bytes).
    pub name: &'static str,
    /// Rows of the block (rows of an A panel).
    pub mr: usize,
    /// Columns of the block (columns of a B panel).
    pub nr: usize,
    /// `block(a, b, c, ldc)`: with `k = a.len() / mr`, `a` packed `[k][mr]`, `b` packed
    /// `[k][nr]`, sets `c[r * ldc + j] = sum over kk of a[kk * mr + r] * b[kk * nr + j]` for the
    /// block's `r < mr`, `j < nr` (rows of `c` the slice does not reach are left alone).
    pub block: fn(&[T], &[T], &mut [T], usize),
}

/// The portable block loop, the shape every vector kernel reproduces: `acc[r][j]` starts at zero
/// and gains `a[kk][r] * b[kk][j]` for kk = 0, 1, ... in turn.
#[inline(always)]
pub(super) fn portable<T: Compute, const MR: usize, const NR: usize>(
    a: &[T],
    b: &[T],
    c: &mut [T],
    ldc: usize,
) {
    let mut acc = [[T::ZERO; NR]; MR];
    for (av, bv) in a.chunks_exact(MR).zip(b.chunks_exact(NR)) {
        for (acc_r, &x) in acc.iter_mut().zip(av) {
            for (s, &y) in acc_r.iter_mut().zip(bv) {
                *s = *s + x * y;
            }
        }
    }
    write_rows(&acc, c, ldc);
}

/// Stores the accumulator rows at `c[r * ldc..]`.
#[inline(always)]
fn write_rows<T: Copy, const MR: usize, const NR: usize>(
    acc: &[[T; NR]; MR],
    c: &mut [T],
    ldc: usize,
) {
    for (r, acc_r) in acc.iter().enumerate() {
        if let Some(dst) = c.get_mut(r * ldc..r * ldc + NR) {
            dst.copy_from_slice(acc_r);
        }
    }
}

/// The portable 4 x 16 block (the generic kernel of every compute type).
fn portable_4x16<T: Compute>(a: &[T], b: &[T], c: &mut [T], ldc: usize) {
    portable::<T, 4, 16>(a, b, c, ldc);
}

/// The portable loop compiled for AVX2 (s32: `vpmulld`/`vpaddd`, wrapping like the scalar ops).
fn portable_4x16_avx2<T: Compute>(a: &[T], b: &[T], c: &mut [T], ldc: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above), all the target feature requires.
        unsafe { x86::portable_4x16_avx2(a, b, c, ldc) };
        return;
    }
    portable_4x16(a, b, c, ldc);
}

/// The kernel of compute type `T` for `isa` (an ISA the CPU lacks, or one with no kernel of its
/// own for `T`, gets the portable loop: the same results).
pub(super) fn select<T: Compute>(isa: Isa) -> Kernel<T> {
    let isa = if isa.supported() { isa } else { Isa::Portable };
    let own = match isa {
        Isa::Portable => None,
        Isa::Avx2 => T::AVX2,
        Isa::Avx512 => T::AVX512,
    };
    if let Some(k) = own {
        return k;
    }
    match isa {
        Isa::Portable => Kernel {
            name: "4x16 portable",
            mr: 4,
            nr: 16,
            block: portable_4x16::<T>,
        },
        Isa::Avx2 | Isa::Avx512 => Kernel {
            name: "4x16 portable, built for avx2",
            mr: 4,
            nr: 16,
            block: portable_4x16_avx2::<T>,
        },
    }
}

pub(super) const F32_AVX2: Kernel<f32> = Kernel {
    name: "f32 6x16 avx2",
    mr: 6,
    nr: 16,
    block: f32_6x16_avx2,
};

pub(super) const F64_AVX2: Kernel<f64> = Kernel {
    name: "f64 6x8 avx2",
    mr: 6,
    nr: 8,
    block: f64_6x8_avx2,
};

// AVX-512 intrinsics and `target_feature(enable = "avx512f")` are stable from Rust 1.89; the
// workspace's rust-version is 1.85, where these kernels are left out (the AVX2 ones run). They
// are constants rather than functions so that the code of the toolchain not in use is no
// function body (cargo-mutants would mutate it, and no test can see a mutant that is not built).
#[rustversion::since(1.89)]
pub(super) const F32_AVX512: Kernel<f32> = Kernel {
    name: "f32 8x32 avx512",
    mr: 8,
    nr: 32,
    block: f32_8x32_avx512,
};

#[rustversion::before(1.89)]
pub(super) const F32_AVX512: Kernel<f32> = F32_AVX2;

#[rustversion::since(1.89)]
pub(super) const F64_AVX512: Kernel<f64> = Kernel {
    name: "f64 8x16 avx512",
    mr: 8,
    nr: 16,
    block: f64_8x16_avx512,
};

#[rustversion::before(1.89)]
pub(super) const F64_AVX512: Kernel<f64> = F64_AVX2;

fn f32_6x16_avx2(a: &[f32], b: &[f32], c: &mut [f32], ldc: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { x86::f32_6x16_avx2(a, b, c, ldc) };
        return;
    }
    portable::<f32, 6, 16>(a, b, c, ldc);
}

fn f64_6x8_avx2(a: &[f64], b: &[f64], c: &mut [f64], ldc: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { x86::f64_6x8_avx2(a, b, c, ldc) };
        return;
    }
    portable::<f64, 6, 8>(a, b, c, ldc);
}

#[rustversion::since(1.89)]
fn f32_8x32_avx512(a: &[f32], b: &[f32], c: &mut [f32], ldc: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked just above).
        unsafe { x86::avx512::f32_8x32(a, b, c, ldc) };
        return;
    }
    portable::<f32, 8, 32>(a, b, c, ldc);
}

#[rustversion::since(1.89)]
fn f64_8x16_avx512(a: &[f64], b: &[f64], c: &mut [f64], ldc: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked just above).
        unsafe { x86::avx512::f64_8x16(a, b, c, ldc) };
        return;
    }
    portable::<f64, 8, 16>(a, b, c, ldc);
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{portable, Compute};

    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn portable_4x16_avx2<T: Compute>(a: &[T], b: &[T], c: &mut [T], ldc: usize) {
        portable::<T, 4, 16>(a, b, c, ldc);
    }

    /// 6 rows x 16 f32 columns: twelve accumulators, two B vectors and a broadcast A element
    /// fill the sixteen ymm registers.
    ///
    /// # Safety
    /// The CPU must have AVX2. Every access is within the slices (whole chunks, checked stores).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn f32_6x16_avx2(a: &[f32], b: &[f32], c: &mut [f32], ldc: usize) {
        let mut acc = [[_mm256_setzero_ps(); 2]; 6];
        for (av, bv) in a.chunks_exact(6).zip(b.chunks_exact(16)) {
            // SAFETY: `bv` holds 16 f32, the two unaligned 8-lane loads read within it.
            let (b0, b1) = unsafe {
                (
                    _mm256_loadu_ps(bv.as_ptr()),
                    _mm256_loadu_ps(bv.as_ptr().add(8)),
                )
            };
            for (acc_r, &x) in acc.iter_mut().zip(av) {
                let x = _mm256_set1_ps(x);
                acc_r[0] = _mm256_add_ps(acc_r[0], _mm256_mul_ps(x, b0));
                acc_r[1] = _mm256_add_ps(acc_r[1], _mm256_mul_ps(x, b1));
            }
        }
        for (r, acc_r) in acc.iter().enumerate() {
            if let Some(dst) = c.get_mut(r * ldc..r * ldc + 16) {
                // SAFETY: `dst` holds 16 f32, the two stores write within it.
                unsafe {
                    _mm256_storeu_ps(dst.as_mut_ptr(), acc_r[0]);
                    _mm256_storeu_ps(dst.as_mut_ptr().add(8), acc_r[1]);
                }
            }
        }
    }

    /// 6 rows x 8 f64 columns (the f32 kernel's shape at half the lanes).
    ///
    /// # Safety
    /// The CPU must have AVX2. Every access is within the slices.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn f64_6x8_avx2(a: &[f64], b: &[f64], c: &mut [f64], ldc: usize) {
        let mut acc = [[_mm256_setzero_pd(); 2]; 6];
        for (av, bv) in a.chunks_exact(6).zip(b.chunks_exact(8)) {
            // SAFETY: `bv` holds 8 f64, the two 4-lane loads read within it.
            let (b0, b1) = unsafe {
                (
                    _mm256_loadu_pd(bv.as_ptr()),
                    _mm256_loadu_pd(bv.as_ptr().add(4)),
                )
            };
            for (acc_r, &x) in acc.iter_mut().zip(av) {
                let x = _mm256_set1_pd(x);
                acc_r[0] = _mm256_add_pd(acc_r[0], _mm256_mul_pd(x, b0));
                acc_r[1] = _mm256_add_pd(acc_r[1], _mm256_mul_pd(x, b1));
            }
        }
        for (r, acc_r) in acc.iter().enumerate() {
            if let Some(dst) = c.get_mut(r * ldc..r * ldc + 8) {
                // SAFETY: `dst` holds 8 f64, the two stores write within it.
                unsafe {
                    _mm256_storeu_pd(dst.as_mut_ptr(), acc_r[0]);
                    _mm256_storeu_pd(dst.as_mut_ptr().add(4), acc_r[1]);
                }
            }
        }
    }

    #[rustversion::since(1.89)]
    pub(super) mod avx512 {
        use std::arch::x86_64::*;

        /// 8 rows x 32 f32 columns: sixteen zmm accumulators (of 32), two B vectors per k.
        ///
        /// # Safety
        /// The CPU must have AVX-512F. Every access is within the slices.
        #[target_feature(enable = "avx512f")]
        pub(in super::super) unsafe fn f32_8x32(a: &[f32], b: &[f32], c: &mut [f32], ldc: usize) {
            let mut acc = [[_mm512_setzero_ps(); 2]; 8];
            for (av, bv) in a.chunks_exact(8).zip(b.chunks_exact(32)) {
                // SAFETY: `bv` holds 32 f32, the two 16-lane loads read within it.
                let (b0, b1) = unsafe {
                    (
                        _mm512_loadu_ps(bv.as_ptr()),
                        _mm512_loadu_ps(bv.as_ptr().add(16)),
                    )
                };
                for (acc_r, &x) in acc.iter_mut().zip(av) {
                    let x = _mm512_set1_ps(x);
                    acc_r[0] = _mm512_add_ps(acc_r[0], _mm512_mul_ps(x, b0));
                    acc_r[1] = _mm512_add_ps(acc_r[1], _mm512_mul_ps(x, b1));
                }
            }
            for (r, acc_r) in acc.iter().enumerate() {
                if let Some(dst) = c.get_mut(r * ldc..r * ldc + 32) {
                    // SAFETY: `dst` holds 32 f32, the two stores write within it.
                    unsafe {
                        _mm512_storeu_ps(dst.as_mut_ptr(), acc_r[0]);
                        _mm512_storeu_ps(dst.as_mut_ptr().add(16), acc_r[1]);
                    }
                }
            }
        }

        /// 8 rows x 16 f64 columns.
        ///
        /// # Safety
        /// The CPU must have AVX-512F. Every access is within the slices.
        #[target_feature(enable = "avx512f")]
        pub(in super::super) unsafe fn f64_8x16(a: &[f64], b: &[f64], c: &mut [f64], ldc: usize) {
            let mut acc = [[_mm512_setzero_pd(); 2]; 8];
            for (av, bv) in a.chunks_exact(8).zip(b.chunks_exact(16)) {
                // SAFETY: `bv` holds 16 f64, the two 8-lane loads read within it.
                let (b0, b1) = unsafe {
                    (
                        _mm512_loadu_pd(bv.as_ptr()),
                        _mm512_loadu_pd(bv.as_ptr().add(8)),
                    )
                };
                for (acc_r, &x) in acc.iter_mut().zip(av) {
                    let x = _mm512_set1_pd(x);
                    acc_r[0] = _mm512_add_pd(acc_r[0], _mm512_mul_pd(x, b0));
                    acc_r[1] = _mm512_add_pd(acc_r[1], _mm512_mul_pd(x, b1));
                }
            }
            for (r, acc_r) in acc.iter().enumerate() {
                if let Some(dst) = c.get_mut(r * ldc..r * ldc + 16) {
                    // SAFETY: `dst` holds 16 f64, the two stores write within it.
                    unsafe {
                        _mm512_storeu_pd(dst.as_mut_ptr(), acc_r[0]);
                        _mm512_storeu_pd(dst.as_mut_ptr().add(8), acc_r[1]);
                    }
                }
            }
        }
    }
}
