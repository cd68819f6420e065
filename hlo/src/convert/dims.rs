//! The dimension-number attributes (dot, convolution, gather, scatter), in both directions from
//! one field list each, so that the IR-to-proto and proto-to-IR conversions cannot drift apart
//! (before, each direction listed the fields again). Both struct literals name every field: a
//! field added to either side and not listed here is a compile error.
//!
//! Hand-written (a small `macro_rules!`) rather than a derive crate: the pairs differ in field
//! names (`lhs_batch_dims` against `lhs_batch_dimensions`) and the proto types are prost's.

use proto::xla as px;

use crate::ir::{
    ConvDimensionNumbers, DotDimensionNumbers, GatherDimensionNumbers, ScatterDimensionNumbers,
};

/// `mirror!(from_fn, to_fn, Ir, Proto { ir_field: proto_field by how, ... })` defines
/// `from_fn(&Proto) -> Ir` and `to_fn(&Ir) -> Proto`; `how` is `copy` for scalars, `clone` for
/// lists.
macro_rules! mirror {
    ($from:ident, $to:ident, $ir:ident, $px:ident { $($i:ident : $p:ident by $how:ident),* $(,)? }) => {
        #[doc = concat!("`", stringify!($px), "` to the IR's `", stringify!($ir), "`.")]
        pub(super) fn $from(d: &px::$px) -> $ir {
            $ir { $($i: mirror!(@$how d.$p)),* }
        }

        #[doc = concat!("The IR's `", stringify!($ir), "` to `", stringify!($px), "`.")]
        pub(super) fn $to(d: &$ir) -> px::$px {
            px::$px { $($p: mirror!(@$how d.$i)),* }
        }
    };
    (@copy $e:expr) => {
        $e
    };
    (@clone $e:expr) => {
        $e.clone()
    };
}

mirror!(dot_from_proto, dot_to_proto, DotDimensionNumbers, DotDimensionNumbers {
    lhs_batch_dims: lhs_batch_dimensions by clone,
    lhs_contracting_dims: lhs_contracting_dimensions by clone,
    rhs_batch_dims: rhs_batch_dimensions by clone,
    rhs_contracting_dims: rhs_contracting_dimensions by clone,
});

mirror!(conv_from_proto, conv_to_proto, ConvDimensionNumbers, ConvolutionDimensionNumbers {
    input_batch_dimension: input_batch_dimension by copy,
    input_feature_dimension: input_feature_dimension by copy,
    input_spatial_dimensions: input_spatial_dimensions by clone,
    kernel_input_feature_dimension: kernel_input_feature_dimension by copy,
    kernel_output_feature_dimension: kernel_output_feature_dimension by copy,
    kernel_spatial_dimensions: kernel_spatial_dimensions by clone,
    output_batch_dimension: output_batch_dimension by copy,
    output_feature_dimension: output_feature_dimension by copy,
    output_spatial_dimensions: output_spatial_dimensions by clone,
});

mirror!(gather_from_proto, gather_to_proto, GatherDimensionNumbers, GatherDimensionNumbers {
    offset_dims: offset_dims by clone,
    collapsed_slice_dims: collapsed_slice_dims by clone,
    start_index_map: start_index_map by clone,
    index_vector_dim: index_vector_dim by copy,
    operand_batching_dims: operand_batching_dims by clone,
    start_indices_batching_dims: start_indices_batching_dims by clone,
});

mirror!(scatter_from_proto, scatter_to_proto, ScatterDimensionNumbers, ScatterDimensionNumbers {
    update_window_dims: update_window_dims by clone,
    inserted_window_dims: inserted_window_dims by clone,
    scatter_dims_to_operand_dims: scatter_dims_to_operand_dims by clone,
    index_vector_dim: index_vector_dim by copy,
    input_batching_dims: input_batching_dims by clone,
    scatter_indices_batching_dims: scatter_indices_batching_dims by clone,
});
