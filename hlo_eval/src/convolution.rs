//! `convolution` with general dimension numbers, as the StableHLO spec defines it: any
//! `dim_labels` (batch, feature and spatial dimensions anywhere, any number of spatial
//! dimensions), window strides, low/high padding (negative too), lhs (base) dilation, rhs
//! (window) dilation, window reversal, `feature_group_count` (grouped and depthwise) and
//! `batch_group_count` (weight gradients of grouped convolutions).
//!
//! [`ConvGeometry`] is the validated description of one convolution; the compiler's kernel
//! generator uses the same type, so the evaluator and the kernels agree on what every attribute
//! means and refuse the same malformed ones with the same message.
//!
//! Output element `out[b, f, s...]`:
//! - feature group `g = f / (O / feature_group_count)` reads input features
//!   `g * I .. (g + 1) * I` (`I` = the kernel's input-feature size);
//! - batch group `h = f / (O / batch_group_count)` reads input batch `h * (N / batch_group_count) + b`;
//! - spatial position `s` with window offset `k` reads dilated input position
//!   `u = s * stride - pad_low + k * rhs_dilation`, which exists only where `u >= 0`,
//!   `u % lhs_dilation == 0` and `u / lhs_dilation` is inside the input (everything else is
//!   padding or a hole of the dilation and contributes zero); the kernel is read at `k`, or at
//!   `size - 1 - k` where the window is reversed.
//!
//! Accumulation follows [`super::dot`]: `f32`/`f64` results in `f64`, `f16`/`bf16` results in
//! `f32` rounded once at the end, integers in wrapping 64-bit arithmetic truncated to the result
//! width, `pred` as or-of-ands.
use hlo::{Array, DType, Data};
use hlo::{ConvDimensionNumbers, WindowDim};

use super::{invalid, EvalError};

/// One spatial dimension of a validated convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpatialDim {
    /// Input (lhs) dimension number and size.
    pub lhs_dim: usize,
    /// Input size along it.
    pub lhs_size: usize,
    /// Kernel (rhs) dimension number.
    pub rhs_dim: usize,
    /// Output dimension number.
    pub out_dim: usize,
    /// Output size along it.
    pub out_size: usize,
    /// The window: size, stride, padding, dilations, reversal.
    pub window: WindowDim,
}

/// A convolution whose shapes, dimension numbers, window and group counts were checked against
/// each other: every index the definition computes from it is in bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Input dimensions.
    pub lhs_dims: Vec<usize>,
    /// Kernel dimensions.
    pub rhs_dims: Vec<usize>,
    /// Output dimensions.
    pub out_dims: Vec<usize>,
    /// Input batch dimension number.
    pub lhs_batch: usize,
    /// Input feature dimension number.
    pub lhs_feature: usize,
    /// Kernel input-feature dimension number.
    pub rhs_in_feature: usize,
    /// Kernel output-feature dimension number.
    pub rhs_out_feature: usize,
    /// Output batch dimension number.
    pub out_batch: usize,
    /// Output feature dimension number.
    pub out_feature: usize,
    /// Spatial dimensions, in `0, 1, ...` label order.
    pub spatial: Vec<SpatialDim>,
    /// Input features per feature group (the kernel's input-feature size).
    pub in_features_per_group: usize,
    /// Output features per feature group.
    pub out_features_per_group: usize,
    /// Output features per batch group.
    pub out_features_per_batch_group: usize,
    /// Input batch entries per batch group (the output batch size).
    pub batch_per_group: usize,
}

/// Why a convolution's attributes do not fit its operand and result dimensions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvError {
    /// Operand, kernel or result rank other than the spatial dimensions plus two.
    #[error("ranks do not match dim_labels: input {lhs:?}, kernel {rhs:?}, output {out:?}, {spatial} spatial dimension(s)")]
    Ranks {
        lhs: Vec<usize>,
        rhs: Vec<usize>,
        out: Vec<usize>,
        spatial: usize,
    },
    /// A `dim_labels` dimension outside `0..rank`.
    #[error("{what} dimension {dim} is out of range for rank {rank}")]
    Dimension {
        what: &'static str,
        dim: i64,
        rank: usize,
    },
    /// A group count below 1.
    #[error("feature_group_count ({feature}) and batch_group_count ({batch}) must be >= 1")]
    GroupCount { feature: i64, batch: i64 },
    /// Feature and batch groups together.
    #[error("feature_group_count ({feature}) and batch_group_count ({batch}) cannot both be > 1")]
    BothGroups { feature: i64, batch: i64 },
    /// A size that does not fit the integer type it is converted to.
    #[error(transparent)]
    Conversion(#[from] std::num::TryFromIntError),
    /// Input features other than kernel input features times the feature group count.
    #[error("input features ({input}) != kernel input features ({kernel}) x feature_group_count ({groups})")]
    InputFeatures {
        input: usize,
        kernel: usize,
        groups: usize,
    },
    /// Kernel output features not divisible into the feature groups.
    #[error(
        "kernel output features ({features}) are not a multiple of feature_group_count ({groups})"
    )]
    OutputFeatures { features: usize, groups: usize },
    /// Batch or output features not divisible into the batch groups.
    #[error("input batch ({batch}) and kernel output features ({features}) must be multiples of batch_group_count ({groups})")]
    BatchGroups {
        batch: usize,
        features: usize,
        groups: usize,
    },
    /// A result whose batch or feature size is not what the operands give.
    #[error("output {out:?} needs batch {batch} (dimension {batch_dim}) and features {features} (dimension {feature_dim})")]
    Output {
        out: Vec<usize>,
        batch: usize,
        batch_dim: usize,
        features: usize,
        feature_dim: usize,
    },
    /// A window with other than one dimension per spatial dimension.
    #[error("window has {window} dimension(s), the convolution {spatial} spatial")]
    WindowRank { window: usize, spatial: usize },
    /// A stride or dilation below 1.
    #[error("window dimension {dim}: stride ({stride}), lhs_dilate ({lhs_dilation}) and rhs_dilate ({rhs_dilation}) must be >= 1")]
    Dilation {
        dim: usize,
        stride: i64,
        lhs_dilation: i64,
        rhs_dilation: i64,
    },
    /// A window size other than the kernel's spatial size.
    #[error("window dimension {dim}: size {size} differs from the kernel's spatial size {kernel}")]
    WindowSize {
        dim: usize,
        size: i64,
        kernel: usize,
    },
    /// Window arithmetic that overflows.
    #[error("window dimension {0}: sizes overflow")]
    Overflow(usize),
    /// A result spatial size other than the window gives.
    #[error("output spatial dimension {dim} is {size}, the window gives {want}")]
    OutputSpatial {
        dim: usize,
        size: usize,
        want: usize,
    },
}

fn dim(what: &'static str, d: i64, rank: usize) -> Result<usize, ConvError> {
    usize::try_from(d)
        .ok()
        .filter(|&d| d < rank)
        .ok_or(ConvError::Dimension { what, dim: d, rank })
}

fn size_of(dims: &[usize], d: usize) -> usize {
    dims.get(d).copied().unwrap_or(0)
}

/// Output size of one spatial dimension (XLA's `WindowOutputDimension`, 0 when the window does
/// not fit).
fn window_out(input: usize, w: &WindowDim) -> Option<usize> {
    let input = i64::try_from(input).ok()?;
    let dilated_in = if input == 0 {
        0
    } else {
        (input - 1).checked_mul(w.lhs_dilation)?.checked_add(1)?
    };
    let padded = dilated_in.checked_add(w.pad_low)?.checked_add(w.pad_high)?;
    let dilated_window = if w.size == 0 {
        0
    } else {
        (w.size - 1).checked_mul(w.rhs_dilation)?.checked_add(1)?
    };
    if padded < dilated_window {
        return Some(0);
    }
    usize::try_from((padded - dilated_window) / w.stride + 1).ok()
}

impl ConvGeometry {
    /// Checks a convolution of `lhs_dims` by `rhs_dims` producing `out_dims`. `window` has one
    /// entry per spatial dimension (`None`: size from the kernel, no stride, padding or
    /// dilation). The error says which attribute is wrong and by how much.
    pub fn new(
        lhs_dims: &[usize],
        rhs_dims: &[usize],
        out_dims: &[usize],
        dn: &ConvDimensionNumbers,
        window: Option<&[WindowDim]>,
        feature_group_count: i64,
        batch_group_count: i64,
    ) -> Result<ConvGeometry, ConvError> {
        let rank = lhs_dims.len();
        let n_spatial = dn.input_spatial_dimensions.len();
        if rhs_dims.len() != rank
            || out_dims.len() != rank
            || rank != n_spatial + 2
            || dn.kernel_spatial_dimensions.len() != n_spatial
            || dn.output_spatial_dimensions.len() != n_spatial
        {
            return Err(ConvError::Ranks {
                lhs: lhs_dims.to_vec(),
                rhs: rhs_dims.to_vec(),
                out: out_dims.to_vec(),
                spatial: n_spatial,
            });
        }
        let lhs_batch = dim("input batch", dn.input_batch_dimension, rank)?;
        let lhs_feature = dim("input feature", dn.input_feature_dimension, rank)?;
        let rhs_in_feature = dim(
            "kernel input feature",
            dn.kernel_input_feature_dimension,
            rank,
        )?;
        let rhs_out_feature = dim(
            "kernel output feature",
            dn.kernel_output_feature_dimension,
            rank,
        )?;
        let out_batch = dim("output batch", dn.output_batch_dimension, rank)?;
        let out_feature = dim("output feature", dn.output_feature_dimension, rank)?;
        if feature_group_count < 1 || batch_group_count < 1 {
            return Err(ConvError::GroupCount {
                feature: feature_group_count,
                batch: batch_group_count,
            });
        }
        if feature_group_count > 1 && batch_group_count > 1 {
            return Err(ConvError::BothGroups {
                feature: feature_group_count,
                batch: batch_group_count,
            });
        }
        // Both are >= 1 here and at most i64::MAX, which fits usize on 64-bit targets.
        let fgc = usize::try_from(feature_group_count)?;
        let bgc = usize::try_from(batch_group_count)?;
        let n = size_of(lhs_dims, lhs_batch);
        let c = size_of(lhs_dims, lhs_feature);
        let ci = size_of(rhs_dims, rhs_in_feature);
        let o = size_of(rhs_dims, rhs_out_feature);
        if ci.checked_mul(fgc) != Some(c) {
            return Err(ConvError::InputFeatures {
                input: c,
                kernel: ci,
                groups: fgc,
            });
        }
        if o % fgc != 0 {
            return Err(ConvError::OutputFeatures {
                features: o,
                groups: fgc,
            });
        }
        if o % bgc != 0 || n % bgc != 0 {
            return Err(ConvError::BatchGroups {
                batch: n,
                features: o,
                groups: bgc,
            });
        }
        if size_of(out_dims, out_batch) != n / bgc || size_of(out_dims, out_feature) != o {
            return Err(ConvError::Output {
                out: out_dims.to_vec(),
                batch: n / bgc,
                batch_dim: out_batch,
                features: o,
                feature_dim: out_feature,
            });
        }
        if let Some(ws) = window.filter(|ws| ws.len() != n_spatial) {
            return Err(ConvError::WindowRank {
                window: ws.len(),
                spatial: n_spatial,
            });
        }
        let mut spatial = Vec::with_capacity(n_spatial);
        for i in 0..n_spatial {
            let lhs_dim = dim("input spatial", dn.input_spatial_dimensions[i], rank)?;
            let rhs_dim = dim("kernel spatial", dn.kernel_spatial_dimensions[i], rank)?;
            let out_dim = dim("output spatial", dn.output_spatial_dimensions[i], rank)?;
            let ksize = size_of(rhs_dims, rhs_dim);
            let w = match window.and_then(|ws| ws.get(i)) {
                Some(w) => *w,
                None => WindowDim {
                    size: i64::try_from(ksize)?,
                    ..WindowDim::default()
                },
            };
            if w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1 {
                return Err(ConvError::Dilation {
                    dim: i,
                    stride: w.stride,
                    lhs_dilation: w.lhs_dilation,
                    rhs_dilation: w.rhs_dilation,
                });
            }
            if usize::try_from(w.size).ok() != Some(ksize) {
                return Err(ConvError::WindowSize {
                    dim: i,
                    size: w.size,
                    kernel: ksize,
                });
            }
            let lhs_size = size_of(lhs_dims, lhs_dim);
            let out_size = size_of(out_dims, out_dim);
            let want = window_out(lhs_size, &w).ok_or(ConvError::Overflow(i))?;
            if want != out_size {
                return Err(ConvError::OutputSpatial {
                    dim: out_dim,
                    size: out_size,
                    want,
                });
            }
            spatial.push(SpatialDim {
                lhs_dim,
                lhs_size,
                rhs_dim,
                out_dim,
                out_size,
                window: w,
            });
        }
        Ok(ConvGeometry {
            lhs_dims: lhs_dims.to_vec(),
            rhs_dims: rhs_dims.to_vec(),
            out_dims: out_dims.to_vec(),
            lhs_batch,
            lhs_feature,
            rhs_in_feature,
            rhs_out_feature,
            out_batch,
            out_feature,
            spatial,
            in_features_per_group: ci,
            out_features_per_group: o / fgc,
            out_features_per_batch_group: o / bgc,
            batch_per_group: n / bgc,
        })
    }

    /// The window's size along each spatial dimension (the kernel's spatial sizes: checked to
    /// be equal).
    pub fn window_sizes(&self) -> Vec<usize> {
        self.spatial
            .iter()
            .map(|s| size_of(&self.rhs_dims, s.rhs_dim))
            .collect()
    }

    /// Input position along spatial dimension `d` for output position `s` and window offset
    /// `k`, or `None` where that falls on padding or a dilation hole.
    pub fn input_position(&self, d: usize, s: usize, k: usize) -> Option<usize> {
        let sd = self.spatial.get(d)?;
        let w = &sd.window;
        // Checked: strides and dilations come from the input and may be huge.
        let u = i64::try_from(s)
            .ok()?
            .checked_mul(w.stride)?
            .checked_sub(w.pad_low)?
            .checked_add(i64::try_from(k).ok()?.checked_mul(w.rhs_dilation)?)?;
        if u < 0 || u % w.lhs_dilation != 0 {
            return None;
        }
        let i = usize::try_from(u / w.lhs_dilation).ok()?;
        (i < sd.lhs_size).then_some(i)
    }

    /// Kernel position along spatial dimension `d` for window offset `k` (reversal applied).
    pub fn kernel_position(&self, d: usize, k: usize) -> usize {
        match self.spatial.get(d) {
            Some(sd) if sd.window.reversal => (sd.window.size.max(1) as usize) - 1 - k,
            _ => k,
        }
    }
}

fn strides(dims: &[usize]) -> Vec<usize> {
    hlo::strides(dims)
}

/// A complex convolution as four real ones on the parts, `(ar + i ai) * (br + i bi) =
/// (ar*br - ai*bi) + i (ar*bi + ai*br)`, each rounded to the part type: what the compiler's
/// `complex-dot` pass makes of it (XLA:GPU refuses complex convolutions; JAX expands them
/// itself before XLA sees them). Operands and result must all be complex.
fn complex_convolution(
    lhs: &Array,
    rhs: &Array,
    g: &ConvGeometry,
    out: DType,
) -> Result<Array, EvalError> {
    if !(lhs.dtype().is_complex() && rhs.dtype().is_complex() && out.is_complex()) {
        return Err(invalid(
            "convolution",
            format!(
                "mixes complex and real element types ({}, {} -> {out})",
                lhs.dtype(),
                rhs.dtype()
            ),
        ));
    }
    use super::complex_ops::{make, part};
    use super::elementwise::{binary, BinaryOp};
    let (ar, ai) = (part(lhs, false)?, part(lhs, true)?);
    let (br, bi) = (part(rhs, false)?, part(rhs, true)?);
    let real = |a: &Array, b: &Array| convolution(a, b, g, out.component());
    let re = binary(BinaryOp::Subtract, &real(&ar, &br)?, &real(&ai, &bi)?)?;
    let im = binary(BinaryOp::Add, &real(&ar, &bi)?, &real(&ai, &br)?)?;
    make(&re, &im)
}

/// `convolution(lhs, rhs)` producing `out` elements of shape `out_dims`.
pub fn convolution(
    lhs: &Array,
    rhs: &Array,
    geometry: &ConvGeometry,
    out: DType,
) -> Result<Array, EvalError> {
    if [lhs.dtype(), rhs.dtype(), out]
        .into_iter()
        .any(|t| t.is_complex())
    {
        return complex_convolution(lhs, rhs, geometry, out);
    }
    let g = geometry;
    if lhs.dims() != g.lhs_dims.as_slice() || rhs.dims() != g.rhs_dims.as_slice() {
        return Err(invalid(
            "convolution",
            format!(
                "operands {:?} and {:?} differ from the checked shapes {:?} and {:?}",
                lhs.dims(),
                rhs.dims(),
                g.lhs_dims,
                g.rhs_dims
            ),
        ));
    }
    let total = super::movement::checked_count("convolution", &g.out_dims)?;
    let (ls, rs, os) = (
        strides(&g.lhs_dims),
        strides(&g.rhs_dims),
        strides(&g.out_dims),
    );
    let window = g.window_sizes();
    let window_count: usize = window.iter().product();
    // (lhs offset, rhs offset) pairs of one output element, or None for the whole product
    // when a window position falls outside the input.
    let taps = |o: usize| -> Vec<(usize, usize)> {
        let at = |d: usize| (o / os[d]) % g.out_dims[d].max(1);
        let (b, f) = (at(g.out_batch), at(g.out_feature));
        let group = f / g.out_features_per_group.max(1);
        let batch_group = f / g.out_features_per_batch_group.max(1);
        let in_b = batch_group * g.batch_per_group + b;
        let lhs_base = in_b * ls[g.lhs_batch];
        let rhs_base = f * rs[g.rhs_out_feature];
        let mut out = Vec::with_capacity(window_count * g.in_features_per_group);
        let mut k = vec![0usize; window.len()];
        'window: for _ in 0..window_count {
            let mut lo = lhs_base;
            let mut ro = rhs_base;
            let mut inside = true;
            for (d, sd) in g.spatial.iter().enumerate() {
                match g.input_position(d, at(sd.out_dim), k[d]) {
                    Some(i) => lo += i * ls[sd.lhs_dim],
                    None => inside = false,
                }
                ro += g.kernel_position(d, k[d]) * rs[sd.rhs_dim];
            }
            if inside {
                for ci in 0..g.in_features_per_group {
                    let c = group * g.in_features_per_group + ci;
                    out.push((lo + c * ls[g.lhs_feature], ro + ci * rs[g.rhs_in_feature]));
                }
            }
            // Next window position (row-major over the spatial dimensions).
            for d in (0..k.len()).rev() {
                k[d] += 1;
                if k[d] < window[d] {
                    continue 'window;
                }
                k[d] = 0;
            }
        }
        out
    };
    let (l, r) = (lhs.data(), rhs.data());
    let data = if out.is_float() || lhs.dtype().is_float() {
        let (a, b) = (l.to_f64_vec(), r.to_f64_vec());
        let narrow = matches!(
            out,
            DType::F16 | DType::BF16 | DType::F8E4M3FN | DType::F8E5M2
        );
        let acc: Vec<f64> = (0..total)
            .map(|o| {
                let t = taps(o);
                if narrow {
                    let s: f32 = t.iter().map(|&(i, j)| a[i] as f32 * b[j] as f32).sum();
                    f64::from(s)
                } else {
                    t.iter().map(|&(i, j)| a[i] * b[j]).sum()
                }
            })
            .collect();
        Data::from_wide_f(out, acc)
    } else if out == DType::Pred {
        let acc = (0..total)
            .map(|o| {
                taps(o)
                    .iter()
                    .any(|&(i, j)| l.get_bool(i).unwrap_or(false) && r.get_bool(j).unwrap_or(false))
            })
            .collect();
        Data::Pred(acc)
    } else {
        let acc = (0..total)
            .map(|o| {
                taps(o).iter().fold(0i64, |s, &(i, j)| {
                    s.wrapping_add(
                        l.get_i64(i)
                            .unwrap_or(0)
                            .wrapping_mul(r.get_i64(j).unwrap_or(0)),
                    )
                })
            })
            .collect();
        Data::from_wide_s(out, acc)
    };
    Ok(Array::new(g.out_dims.clone(), data)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hlo::ConvDimensionNumbers;

    /// `b0f_0io->b0f` (1-D, NWC).
    fn nwc() -> ConvDimensionNumbers {
        ConvDimensionNumbers {
            input_batch_dimension: 0,
            input_feature_dimension: 2,
            input_spatial_dimensions: vec![1],
            kernel_input_feature_dimension: 1,
            kernel_output_feature_dimension: 2,
            kernel_spatial_dimensions: vec![0],
            output_batch_dimension: 0,
            output_feature_dimension: 2,
            output_spatial_dimensions: vec![1],
        }
    }

    fn f32s(dims: &[usize], v: &[f32]) -> Array {
        Array::new(dims.to_vec(), Data::F32(v.to_vec())).unwrap()
    }

    #[test]
    fn one_d_with_padding_dilation_and_reversal_matches_the_definition() {
        // x = [1 2 3 4], w = [1 10 100]; lhs_dilate 2 gives [1 0 2 0 3 0 4], pad 1 each side.
        let x = f32s(&[1, 4, 1], &[1., 2., 3., 4.]);
        let w = f32s(&[3, 1, 1], &[1., 10., 100.]);
        let win = WindowDim {
            size: 3,
            pad_low: 1,
            pad_high: 1,
            lhs_dilation: 2,
            ..WindowDim::default()
        };
        let g = ConvGeometry::new(
            &[1, 4, 1],
            &[3, 1, 1],
            &[1, 7, 1],
            &nwc(),
            Some(&[win]),
            1,
            1,
        )
        .unwrap();
        let y = convolution(&x, &w, &g, DType::F32).unwrap();
        // padded: [0 1 0 2 0 3 0 4 0]
        assert_eq!(
            y.data().to_f64_vec(),
            vec![10., 1. + 200., 20., 2. + 300., 30., 3. + 400., 40.]
        );
        let rev = WindowDim {
            reversal: true,
            ..win
        };
        let g = ConvGeometry::new(
            &[1, 4, 1],
            &[3, 1, 1],
            &[1, 7, 1],
            &nwc(),
            Some(&[rev]),
            1,
            1,
        )
        .unwrap();
        let y = convolution(&x, &w, &g, DType::F32).unwrap();
        assert_eq!(
            y.data().to_f64_vec(),
            vec![10., 100. + 2., 20., 200. + 3., 30., 300. + 4., 40.]
        );
    }

    #[test]
    fn negative_padding_and_stride_drop_elements() {
        let x = f32s(&[1, 5, 1], &[1., 2., 3., 4., 5.]);
        let w = f32s(&[1, 1, 1], &[1.]);
        let win = WindowDim {
            size: 1,
            stride: 2,
            pad_low: -1,
            pad_high: 0,
            ..WindowDim::default()
        };
        let g = ConvGeometry::new(
            &[1, 5, 1],
            &[1, 1, 1],
            &[1, 2, 1],
            &nwc(),
            Some(&[win]),
            1,
            1,
        )
        .unwrap();
        let y = convolution(&x, &w, &g, DType::F32).unwrap();
        assert_eq!(y.data().to_f64_vec(), vec![2., 4.]);
    }

    #[test]
    fn feature_and_batch_groups_pick_their_slices() {
        // Two feature groups of one input feature each; kernel [1, 1, 2] = [2, 3].
        let x = f32s(&[1, 1, 2], &[5., 7.]);
        let w = f32s(&[1, 1, 2], &[2., 3.]);
        let g = ConvGeometry::new(&[1, 1, 2], &[1, 1, 2], &[1, 1, 2], &nwc(), None, 2, 1).unwrap();
        let y = convolution(&x, &w, &g, DType::F32).unwrap();
        assert_eq!(y.data().to_f64_vec(), vec![10., 21.]);
        // Two batch groups: batch entry h feeds output feature h.
        let x = f32s(&[2, 1, 1], &[5., 7.]);
        let w = f32s(&[1, 1, 2], &[2., 3.]);
        let g = ConvGeometry::new(&[2, 1, 1], &[1, 1, 2], &[1, 1, 2], &nwc(), None, 1, 2).unwrap();
        let y = convolution(&x, &w, &g, DType::F32).unwrap();
        assert_eq!(y.data().to_f64_vec(), vec![10., 21.]);
    }

    #[test]
    fn integer_convolution_wraps_to_the_result_width() {
        let x = Array::new(vec![1, 2, 1], Data::S8(vec![100, 100])).unwrap();
        let w = Array::new(vec![2, 1, 1], Data::S8(vec![1, 2])).unwrap();
        let g = ConvGeometry::new(&[1, 2, 1], &[2, 1, 1], &[1, 1, 1], &nwc(), None, 1, 1).unwrap();
        let y = convolution(&x, &w, &g, DType::S8).unwrap();
        assert_eq!(y.data(), &Data::S8(vec![300i32 as i8]));
    }

    #[test]
    fn group_count_mismatch_is_refused() {
        let e = ConvGeometry::new(&[1, 1, 3], &[1, 1, 2], &[1, 1, 2], &nwc(), None, 2, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "input features (3) != kernel input features (1) x feature_group_count (2)"
        );
    }

    #[test]
    fn both_group_counts_above_one_are_refused() {
        let e = ConvGeometry::new(&[2, 1, 2], &[1, 1, 2], &[1, 1, 2], &nwc(), None, 2, 2)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "feature_group_count (2) and batch_group_count (2) cannot both be > 1"
        );
    }

    #[test]
    fn batch_groups_must_divide_the_batch() {
        let e = ConvGeometry::new(&[3, 1, 1], &[1, 1, 2], &[1, 1, 2], &nwc(), None, 1, 2)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "input batch (3) and kernel output features (2) must be multiples of batch_group_count (2)"
        );
    }

    #[test]
    fn a_wrong_output_size_is_refused() {
        let e = ConvGeometry::new(&[1, 4, 1], &[3, 1, 1], &[1, 4, 1], &nwc(), None, 1, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "output spatial dimension 1 is 4, the window gives 2");
    }

    #[test]
    fn a_window_size_that_differs_from_the_kernel_is_refused() {
        let win = WindowDim {
            size: 2,
            ..WindowDim::default()
        };
        let e = ConvGeometry::new(
            &[1, 4, 1],
            &[3, 1, 1],
            &[1, 3, 1],
            &nwc(),
            Some(&[win]),
            1,
            1,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "window dimension 0: size 2 differs from the kernel's spatial size 3"
        );
    }

    #[test]
    fn a_zero_stride_is_refused() {
        let win = WindowDim {
            size: 3,
            stride: 0,
            ..WindowDim::default()
        };
        let e = ConvGeometry::new(
            &[1, 4, 1],
            &[3, 1, 1],
            &[1, 2, 1],
            &nwc(),
            Some(&[win]),
            1,
            1,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "window dimension 0: stride (0), lhs_dilate (1) and rhs_dilate (1) must be >= 1"
        );
    }
}
