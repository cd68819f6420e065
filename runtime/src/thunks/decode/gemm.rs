//! The gemm thunk: matrix layouts, their spans and the buffers that must hold them.
use super::*;

const GEMM_TYPES: &str = "f16, bf16, f32, f64, s8, s32";

/// `layout_type` names the layout's message in errors (the two forms of the gemm config have
/// one each, with the same fields).
fn layout(p: Option<&MatrixLayoutProto>, path: &str, layout_type: &str) -> Result<MatrixLayout> {
    let p = p.ok_or_else(|| invalid(format!("{path} is not set")))?;
    let MatrixLayoutProto {
        order,
        num_rows,
        num_cols,
        batch_size,
        leading_dim_stride,
        batch_stride,
        transpose,
        dtype,
    } = *p;
    let order = match matrix_layout_proto::Order::try_from(order) {
        Ok(matrix_layout_proto::Order::RowMajor) => Order::RowMajor,
        Ok(matrix_layout_proto::Order::ColumnMajor) => Order::ColumnMajor,
        Err(_) => {
            return Err(invalid(format!(
                "{path}.order is {}, not a known {layout_type}.Order",
                order
            )))
        }
    };
    let dtype = ElemType::from_proto(dtype)
        .filter(|t| {
            matches!(
                *t,
                ElemType::F16
                    | ElemType::BF16
                    | ElemType::F32
                    | ElemType::F64
                    | ElemType::S8
                    | ElemType::S32
            )
        })
        .ok_or_else(|| {
            Error::unimplemented(format!(
                "{path}.dtype is {}; this runtime's gemm supports {GEMM_TYPES}",
                type_name(dtype)
            ))
        })?;
    Ok(MatrixLayout {
        order,
        num_rows: nonneg(num_rows, &format!("{path}.num_rows"))?,
        num_cols: nonneg(num_cols, &format!("{path}.num_cols"))?,
        batch_size: nonneg(batch_size, &format!("{path}.batch_size"))?,
        leading_dim_stride: nonneg(leading_dim_stride, &format!("{path}.leading_dim_stride"))?,
        batch_stride: nonneg(batch_stride, &format!("{path}.batch_stride"))?,
        transpose,
        dtype,
    })
}

/// Bytes spanned by a layout's elements (0 when empty), or `None` on overflow.
fn span(l: &MatrixLayout, batch: u64) -> Option<u64> {
    if l.num_rows == 0 || l.num_cols == 0 || batch == 0 {
        return Some(0);
    }
    let (r, c) = (l.num_rows - 1, l.num_cols - 1);
    let b = batch - 1;
    let last = match l.order {
        Order::RowMajor => b
            .checked_mul(l.batch_stride)?
            .checked_add(r.checked_mul(l.leading_dim_stride)?)?
            .checked_add(c)?,
        Order::ColumnMajor => b
            .checked_mul(l.batch_stride)?
            .checked_add(c.checked_mul(l.leading_dim_stride)?)?
            .checked_add(r)?,
    };
    last.checked_add(1)?.checked_mul(l.dtype.size())
}

pub(super) fn gemm(ctx: &DecodeContext<'_>, g: &GemmThunkProto, path: &str) -> Result<GemmThunk> {
    let GemmThunkProto {
        gemm_config,
        lhs_buffer,
        rhs_buffer,
        output_buffer,
        workspace,
        deterministic,
        gemm_config_xyz,
    } = g;
    // Which field carries the config: `gemm_config_xyz` (1000) when set, else the v1 number 1.
    // Both at once would leave the product ambiguous. The two forms have the same fields, so the
    // project form is read through the v1 type.
    let (c, field, layout_type) = match gemm_config_xyz {
        Some(x) => {
            if gemm_config.is_some() {
                return Err(invalid(format!(
                    "{path} sets both gemm_config (1) and gemm_config_xyz (1000); an artifact sets one"
                )));
            }
            (
                std::borrow::Cow::Owned(GemmConfigProto::from(x)),
                "gemm_config_xyz",
                "MatrixLayoutXyzProto",
            )
        }
        None => legacy_gemm_config(gemm_config.as_ref(), path)?,
    };
    let cp = format!("{path}.{field}");
    let GemmConfigProto {
        lhs_layout,
        rhs_layout,
        output_layout,
        alpha_real,
        alpha_imag,
        beta,
        compute_type,
        operand_precisions,
    } = &*c;
    let lhs_l = layout(
        lhs_layout.as_ref(),
        &format!("{cp}.lhs_layout"),
        layout_type,
    )?;
    let rhs_l = layout(
        rhs_layout.as_ref(),
        &format!("{cp}.rhs_layout"),
        layout_type,
    )?;
    let out_l = layout(
        output_layout.as_ref(),
        &format!("{cp}.output_layout"),
        layout_type,
    )?;
    let (m, k) = lhs_l.op_dims();
    let (k2, n) = rhs_l.op_dims();
    let (m2, n2) = out_l.op_dims();
    if k != k2 || m != m2 || n != n2 {
        return Err(invalid(format!(
            "{cp}: op(lhs) is {m}x{k}, op(rhs) is {k2}x{n}, output is {m2}x{n2}; need MxK, KxN and MxN"
        )));
    }
    let batch = out_l.batch_size.max(1);
    for (l, name) in [(&lhs_l, "lhs_layout"), (&rhs_l, "rhs_layout")] {
        if l.batch_size.max(1) != batch {
            return Err(invalid(format!(
                "{cp}.{name}.batch_size is {}, output_layout.batch_size is {}; they must be equal",
                l.batch_size, out_l.batch_size
            )));
        }
    }
    let compute_type = ElemType::from_proto(*compute_type)
        .filter(|t| matches!(*t, ElemType::F32 | ElemType::F64 | ElemType::S32))
        .ok_or_else(|| {
            Error::unimplemented(format!(
                "{cp}.compute_type is {}; this runtime's gemm accumulates in F32, F64 or S32",
                type_name(*compute_type)
            ))
        })?;
    if *alpha_imag != 0.0 {
        return Err(Error::unimplemented(format!(
            "{cp}.alpha_imag is {}; this runtime has no complex gemm",
            alpha_imag
        )));
    }
    let lhs = slice(ctx, lhs_buffer.as_ref(), &format!("{path}.lhs_buffer"))?;
    let rhs = slice(ctx, rhs_buffer.as_ref(), &format!("{path}.rhs_buffer"))?;
    let output = slice(
        ctx,
        output_buffer.as_ref(),
        &format!("{path}.output_buffer"),
    )?;
    for (l, s, lname, sname) in [
        (&lhs_l, &lhs, "lhs_layout", "lhs_buffer"),
        (&rhs_l, &rhs, "rhs_layout", "rhs_buffer"),
        (&out_l, &output, "output_layout", "output_buffer"),
    ] {
        match span(l, batch) {
            Some(need) if need <= s.size => {}
            need => {
                return Err(invalid(format!(
                "{path}.{sname}.size is {}, smaller than the {} bytes {field}.{lname} addresses",
                s.size,
                need.map_or_else(|| "overflowing".to_owned(), |n| n.to_string())
            )))
            }
        }
    }
    let workspace = match workspace {
        Some(w) => Some(slice(ctx, Some(w), &format!("{path}.workspace"))?),
        None => None,
    };
    Ok(GemmThunk {
        config: GemmConfig {
            lhs: lhs_l,
            rhs: rhs_l,
            output: out_l,
            alpha_real: *alpha_real,
            alpha_imag: *alpha_imag,
            beta: *beta,
            compute_type,
            operand_precisions: operand_precisions.clone(),
            m,
            n,
            k,
            batch,
        },
        lhs,
        rhs,
        output,
        workspace,
        deterministic: *deterministic,
    })
}

/// A gemm's config at the v1 number 1, which the compiler writes by default until the stage-2
/// date of the move to 1000 ([`proto::rollout::GEMM_CONFIG`]); artifacts written before then
/// carry only it.
// Can be removed in June 2027 (6 months backward compatibility window).
fn legacy_gemm_config<'a>(
    gemm_config: Option<&'a GemmConfigProto>,
    path: &str,
) -> Result<(
    std::borrow::Cow<'a, GemmConfigProto>,
    &'static str,
    &'static str,
)> {
    let c = gemm_config.ok_or_else(|| invalid(format!("{path}.gemm_config is not set")))?;
    Ok((
        std::borrow::Cow::Borrowed(c),
        "gemm_config",
        "MatrixLayoutProto",
    ))
}
