//! Contractions: dot and convolution.

use std::collections::HashSet;

use super::error::ShapeError;
use super::infer::*;
use hlo::*;
use hlo::{ArrayShape, Shape};

/// Dot and convolution.
pub(super) fn infer(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst { opcode, ops, a, .. } = *cx;
    let out = match opcode {
        Dot => {
            count(ops, 2, opcode)?;
            let (l, r) = (arr(ops, 0)?, arr(ops, 1)?);
            let default = DotDimensionNumbers::default();
            let dn = a.dot_dimension_numbers.as_ref().unwrap_or(&default);
            if dn.lhs_batch_dims.len() != dn.rhs_batch_dims.len()
                || dn.lhs_contracting_dims.len() != dn.rhs_contracting_dims.len()
            {
                return fail(ShapeError::DotDimsLength);
            }
            let mut used_l = HashSet::new();
            let mut used_r = HashSet::new();
            for (pairs, what) in [
                ((&dn.lhs_batch_dims, &dn.rhs_batch_dims), "batch"),
                (
                    (&dn.lhs_contracting_dims, &dn.rhs_contracting_dims),
                    "contracting",
                ),
            ] {
                for (&ld, &rd) in pairs.0.iter().zip(pairs.1) {
                    let li = idx(ld, l.rank(), &format!("lhs {what} dimension"))?;
                    let ri = idx(rd, r.rank(), &format!("rhs {what} dimension"))?;
                    if !used_l.insert(li) || !used_r.insert(ri) {
                        return fail(ShapeError::DotDimTwice {
                            what,
                            lhs: ld,
                            rhs: rd,
                        });
                    }
                    if l.dims.get(li) != r.dims.get(ri) {
                        return fail(ShapeError::DotDimSize {
                            what,
                            lhs_dim: ld,
                            lhs: l.clone(),
                            rhs_dim: rd,
                            rhs: r.clone(),
                        });
                    }
                }
            }
            let mut out: Vec<i64> = dn
                .lhs_batch_dims
                .iter()
                .filter_map(|&d| usize::try_from(d).ok().and_then(|d| l.dims.get(d)).copied())
                .collect();
            out.extend(
                l.dims
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !used_l.contains(i))
                    .map(|(_, &d)| d),
            );
            out.extend(
                r.dims
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !used_r.contains(i))
                    .map(|(_, &d)| d),
            );
            array(cx.declared_ty().unwrap_or(l.element_type), out)
        }
        Convolution => {
            count(ops, 2, opcode)?;
            let (l, k) = (arr(ops, 0)?, arr(ops, 1)?);
            let c = required(a.conv_dimension_numbers.as_ref(), opcode, "dim_labels=")?;
            let fgc = a.feature_group_count.unwrap_or(1).max(1);
            let bgc = a.batch_group_count.unwrap_or(1).max(1);
            let get = |s: &ArrayShape, d: i64, what: &str| -> R<i64> {
                let i = idx(d, s.rank(), what)?;
                Ok(s.dims.get(i).copied().unwrap_or(0))
            };
            if l.rank() != k.rank() || c.input_spatial_dimensions.len() + 2 != l.rank() {
                return fail(ShapeError::ConvolutionRanks {
                    lhs: l.clone(),
                    kernel: k.clone(),
                });
            }
            let in_f = get(l, c.input_feature_dimension, "input feature dimension")?;
            let k_in = get(k, c.kernel_input_feature_dimension, "kernel input feature")?;
            if in_f != k_in.saturating_mul(fgc) {
                return fail(ShapeError::ConvolutionFeatures {
                    input: in_f,
                    kernel: k_in,
                    groups: fgc,
                });
            }
            let default_window = Window {
                dims: c
                    .kernel_spatial_dimensions
                    .iter()
                    .map(|&d| WindowDim {
                        size: get(k, d, "kernel spatial").unwrap_or(1),
                        ..WindowDim::default()
                    })
                    .collect(),
            };
            let w = a.window.as_ref().unwrap_or(&default_window);
            if w.dims.len() != c.input_spatial_dimensions.len() {
                return fail(ShapeError::ConvolutionWindowRank {
                    window: w.dims.len(),
                    spatial: c.input_spatial_dimensions.len(),
                });
            }
            let mut out = vec![0i64; l.rank()];
            let mut put = |d: i64, v: i64| -> R<()> {
                let i = idx(d, out.len(), "output dimension")?;
                if let Some(s) = out.get_mut(i) {
                    *s = v;
                }
                Ok(())
            };
            put(
                c.output_batch_dimension,
                get(l, c.input_batch_dimension, "input batch")? / bgc,
            )?;
            put(
                c.output_feature_dimension,
                get(
                    k,
                    c.kernel_output_feature_dimension,
                    "kernel output feature",
                )?,
            )?;
            for (i, wd) in w.dims.iter().enumerate() {
                let isd = c.input_spatial_dimensions.get(i).copied().unwrap_or(0);
                let ksd = c.kernel_spatial_dimensions.get(i).copied().unwrap_or(0);
                let osd = c.output_spatial_dimensions.get(i).copied().unwrap_or(0);
                if get(k, ksd, "kernel spatial")? != wd.size {
                    return fail(ShapeError::ConvolutionWindowSize {
                        size: wd.size,
                        dim: ksd,
                        kernel: k.clone(),
                    });
                }
                put(osd, window_out(get(l, isd, "input spatial")?, wd)?)?;
            }
            array(cx.declared_ty().unwrap_or(l.element_type), out)
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}
