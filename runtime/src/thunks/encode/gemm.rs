//! [`ThunkKind::Gemm`] → `gemm_thunk`.
use super::*;

fn layout(l: &MatrixLayout) -> MatrixLayoutProto {
    MatrixLayoutProto {
        order: match l.order {
            Order::RowMajor => matrix_layout_proto::Order::RowMajor as i32,
            Order::ColumnMajor => matrix_layout_proto::Order::ColumnMajor as i32,
        },
        num_rows: l.num_rows as i64,
        num_cols: l.num_cols as i64,
        batch_size: l.batch_size as i64,
        leading_dim_stride: l.leading_dim_stride as i64,
        batch_stride: l.batch_stride as i64,
        transpose: l.transpose,
        dtype: l.dtype.to_proto(),
    }
}

pub(super) fn gemm(g: &GemmThunk) -> Impl {
    Impl::GemmThunk(GemmThunkProto {
        gemm_config: Some(GemmConfigProto {
            lhs_layout: Some(layout(&g.config.lhs)),
            rhs_layout: Some(layout(&g.config.rhs)),
            output_layout: Some(layout(&g.config.output)),
            alpha_real: g.config.alpha_real,
            alpha_imag: g.config.alpha_imag,
            beta: g.config.beta,
            compute_type: g.config.compute_type.to_proto(),
            operand_precisions: g.config.operand_precisions.clone(),
        }),
        lhs_buffer: Some(sl(&g.lhs)),
        rhs_buffer: Some(sl(&g.rhs)),
        output_buffer: Some(sl(&g.output)),
        workspace: g.workspace.as_ref().map(sl),
        deterministic: g.deterministic,
        // The config stays at the v1 number (1), which every runtime reads; see
        // GemmThunkProto.
        gemm_config_xyz: None,
    })
}
