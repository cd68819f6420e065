//! `stablehlo.convolution`: its window (strides, padding, dilations, reversal) and its
//! dimension labels (`[b, 0, f]x[0, i, o]->[b, 0, f]`) as HLO writes them.
use super::*;

impl Front<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn window(
        &self,
        op: &Op,
        sizes: &[i64],
        strides: &[&str],
        padding: &[&str],
        lhs: &[&str],
        rhs: &[&str],
        rev: &[&str],
    ) -> Result<Window> {
        let n = sizes.len();
        let list = |names: &[&str], default: i64| -> Result<Vec<i64>> {
            if names.is_empty() {
                return Ok(vec![default; n]);
            }
            let v = self
                .ints_attr(op, names)?
                .unwrap_or_else(|| vec![default; n]);
            if v.len() != n {
                return Err(self.bad(
                    op,
                    format!(
                        "{} has {} entries, the window has {n} dimensions",
                        names[0],
                        v.len()
                    ),
                ));
            }
            Ok(v)
        };
        let st = list(strides, 1)?;
        let ld = list(lhs, 1)?;
        let rd = list(rhs, 1)?;
        let rv = list(rev, 0)?;
        let pads = match padding.iter().find_map(|p| op.get(&[p])) {
            None => vec![vec![0, 0]; n],
            Some(a) => int_rows(a)
                .ok_or_else(|| self.bad(op, "padding must be pairs [[low, high], ...]"))?,
        };
        if pads.len() != n || pads.iter().any(|p| p.len() != 2) {
            return Err(self.bad(op, format!("padding must have {n} [low, high] pairs")));
        }
        Ok(Window {
            dims: (0..n)
                .map(|i| WindowDim {
                    size: sizes[i],
                    stride: st[i],
                    pad_low: pads[i][0],
                    pad_high: pads[i][1],
                    lhs_dilation: ld[i],
                    rhs_dilation: rd[i],
                    reversal: rv[i] != 0,
                })
                .collect(),
        })
    }

    pub(super) fn lower_convolution(&mut self, op: &Op) -> Result<Lowered> {
        self.count(op, 2)?;
        let mut a = Attrs::default();
        let dn = match op.get(&["dimension_numbers"]) {
            Some(Attr::Conv(l, r, o)) => self.conv_labels(op, l, r, o)?,
            Some(Attr::Struct(_, f)) => {
                let one = |n: &str| {
                    field(f, n)
                        .and_then(ints)
                        .and_then(|v| v.first().copied())
                        .unwrap_or(0)
                };
                let many = |n: &str| field(f, n).and_then(ints).unwrap_or_default();
                ConvDimensionNumbers {
                    input_batch_dimension: one("input_batch_dimension"),
                    input_feature_dimension: one("input_feature_dimension"),
                    input_spatial_dimensions: many("input_spatial_dimensions"),
                    kernel_input_feature_dimension: one("kernel_input_feature_dimension"),
                    kernel_output_feature_dimension: one("kernel_output_feature_dimension"),
                    kernel_spatial_dimensions: many("kernel_spatial_dimensions"),
                    output_batch_dimension: one("output_batch_dimension"),
                    output_feature_dimension: one("output_feature_dimension"),
                    output_spatial_dimensions: many("output_spatial_dimensions"),
                }
            }
            _ => return Err(self.bad(op, "convolution needs dimension_numbers")),
        };
        let kernel = self.shape_of(self.operand_at(op, 1)?).clone();
        let sizes: Vec<i64> = dn
            .kernel_spatial_dimensions
            .iter()
            .map(|&d| {
                usize::try_from(d)
                    .ok()
                    .and_then(|d| kernel.dims().get(d))
                    .copied()
            })
            .collect::<Option<_>>()
            .ok_or_else(|| self.bad(op, "kernel spatial dimension out of range"))?;
        let window = if let Some(Attr::Dict(w, _)) = op.get(&["window"]) {
            // The pretty form: window = {stride = [..], pad = [[..]], lhs_dilate = [..], ...}.
            let sub = Op {
                attrs: w.clone(),
                ..op.clone()
            };
            self.window(
                &sub,
                &sizes,
                &["stride"],
                &["pad"],
                &["lhs_dilate"],
                &["rhs_dilate"],
                &["reverse"],
            )?
        } else {
            self.window(
                op,
                &sizes,
                &["window_strides"],
                &["padding"],
                &["lhs_dilation"],
                &["rhs_dilation"],
                &["window_reversal"],
            )?
        };
        a.window = Some(window);
        a.conv_dimension_numbers = Some(dn);
        // XLA writes group counts only when they are not 1.
        a.feature_group_count = self
            .int_attr(op, &["feature_group_count"])?
            .filter(|&g| g != 1);
        a.batch_group_count = self
            .int_attr(op, &["batch_group_count"])?
            .filter(|&g| g != 1);
        a.operand_precision = self.precision(op)?;
        Ok(self.emit(op, Opcode::Convolution, op.operands.clone(), a))
    }

    pub(super) fn conv_labels(
        &self,
        op: &Op,
        l: &[String],
        r: &[String],
        o: &[String],
    ) -> Result<ConvDimensionNumbers> {
        let split = |labels: &[String], a: &str, b: &str| -> Result<(i64, i64, Vec<i64>)> {
            let (mut x, mut y) = (None, None);
            let mut spatial: Vec<Option<i64>> = vec![None; labels.len()];
            let mut n_spatial = 0;
            for (pos, lab) in labels.iter().enumerate() {
                let pos = pos as i64;
                if lab == a && x.is_none() {
                    x = Some(pos);
                } else if lab == b && y.is_none() {
                    y = Some(pos);
                } else if let Some(slot) = lab
                    .parse::<usize>()
                    .ok()
                    .and_then(|d| spatial.get_mut(d))
                    .filter(|s| s.is_none())
                {
                    *slot = Some(pos);
                    n_spatial += 1;
                } else {
                    return Err(self.bad(op, format!("bad convolution dimension label '{lab}'")));
                }
            }
            let sp: Option<Vec<i64>> = spatial.into_iter().take(n_spatial).collect();
            match (x, y, sp) {
                (Some(x), Some(y), Some(sp)) => Ok((x, y, sp)),
                _ => Err(self.bad(
                    op,
                    format!("convolution labels need '{a}', '{b}' and spatial dimensions 0..n"),
                )),
            }
        };
        let (ib, if_, is) = split(l, "b", "f")?;
        let (ki, ko, ks) = split(r, "i", "o")?;
        let (ob, of, os) = split(o, "b", "f")?;
        Ok(ConvDimensionNumbers {
            input_batch_dimension: ib,
            input_feature_dimension: if_,
            input_spatial_dimensions: is,
            kernel_input_feature_dimension: ki,
            kernel_output_feature_dimension: ko,
            kernel_spatial_dimensions: ks,
            output_batch_dimension: ob,
            output_feature_dimension: of,
            output_spatial_dimensions: os,
        })
    }
}
