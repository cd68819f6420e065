//! The two forms of a gemm thunk's config while it moves off XLA's `GemmThunkProto.gemm_config =
//! 1` (issue 19, stage 1 since 2026-12-01; docs/artifact.md, "Fidelity to XLA's schema"):
//! `GemmConfigProto` at 1 and `GemmConfigXyzProto` at 1000 are the same config, field for field,
//! so each converts to the other without loss. The destructurings below have no `..`: a field
//! added to one form and not handled here is a compile error.
use crate::xla::gpu::{
    GemmConfigProto, GemmConfigXyzProto, MatrixLayoutProto, MatrixLayoutXyzProto,
};

impl From<&MatrixLayoutXyzProto> for MatrixLayoutProto {
    fn from(l: &MatrixLayoutXyzProto) -> Self {
        let MatrixLayoutXyzProto {
            order,
            num_rows,
            num_cols,
            batch_size,
            leading_dim_stride,
            batch_stride,
            transpose,
            dtype,
        } = *l;
        // `Order` has the same values in both forms; an unknown one stays unknown (the runtime
        // refuses it by number).
        MatrixLayoutProto {
            order,
            num_rows,
            num_cols,
            batch_size,
            leading_dim_stride,
            batch_stride,
            transpose,
            dtype,
        }
    }
}

impl From<&MatrixLayoutProto> for MatrixLayoutXyzProto {
    fn from(l: &MatrixLayoutProto) -> Self {
        let MatrixLayoutProto {
            order,
            num_rows,
            num_cols,
            batch_size,
            leading_dim_stride,
            batch_stride,
            transpose,
            dtype,
        } = *l;
        MatrixLayoutXyzProto {
            order,
            num_rows,
            num_cols,
            batch_size,
            leading_dim_stride,
            batch_stride,
            transpose,
            dtype,
        }
    }
}

impl From<&GemmConfigXyzProto> for GemmConfigProto {
    fn from(c: &GemmConfigXyzProto) -> Self {
        let GemmConfigXyzProto {
            lhs_layout,
            rhs_layout,
            output_layout,
            alpha_real,
            alpha_imag,
            beta,
            compute_type,
            operand_precisions,
        } = c;
        GemmConfigProto {
            lhs_layout: lhs_layout.as_ref().map(Into::into),
            rhs_layout: rhs_layout.as_ref().map(Into::into),
            output_layout: output_layout.as_ref().map(Into::into),
            alpha_real: *alpha_real,
            alpha_imag: *alpha_imag,
            beta: *beta,
            compute_type: *compute_type,
            operand_precisions: operand_precisions.clone(),
        }
    }
}

impl From<&GemmConfigProto> for GemmConfigXyzProto {
    fn from(c: &GemmConfigProto) -> Self {
        let GemmConfigProto {
            lhs_layout,
            rhs_layout,
            output_layout,
            alpha_real,
            alpha_imag,
            beta,
            compute_type,
            operand_precisions,
        } = c;
        GemmConfigXyzProto {
            lhs_layout: lhs_layout.as_ref().map(Into::into),
            rhs_layout: rhs_layout.as_ref().map(Into::into),
            output_layout: output_layout.as_ref().map(Into::into),
            alpha_real: *alpha_real,
            alpha_imag: *alpha_imag,
            beta: *beta,
            compute_type: *compute_type,
            operand_precisions: operand_precisions.clone(),
        }
    }
}
