module @jit_conv attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x6x7x3xcomplex<f64>>, %arg1: tensor<3x3x3x4xcomplex<f64>>) -> (tensor<2x6x4x4xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = stablehlo.real %arg0 : (tensor<2x6x7x3xcomplex<f64>>) -> tensor<2x6x7x3xf64>
    %1 = stablehlo.imag %arg0 : (tensor<2x6x7x3xcomplex<f64>>) -> tensor<2x6x7x3xf64>
    %2 = stablehlo.real %arg1 : (tensor<3x3x3x4xcomplex<f64>>) -> tensor<3x3x3x4xf64>
    %3 = stablehlo.imag %arg1 : (tensor<3x3x3x4xcomplex<f64>>) -> tensor<3x3x3x4xf64>
    %4 = stablehlo.add %0, %1 : tensor<2x6x7x3xf64>
    %5 = stablehlo.convolution(%4, %2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x7x3xf64>, tensor<3x3x3x4xf64>) -> tensor<2x6x4x4xf64>
    %6 = stablehlo.subtract %3, %2 : tensor<3x3x3x4xf64>
    %7 = stablehlo.convolution(%0, %6) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x7x3xf64>, tensor<3x3x3x4xf64>) -> tensor<2x6x4x4xf64>
    %8 = stablehlo.add %2, %3 : tensor<3x3x3x4xf64>
    %9 = stablehlo.convolution(%1, %8) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x7x3xf64>, tensor<3x3x3x4xf64>) -> tensor<2x6x4x4xf64>
    %10 = stablehlo.subtract %5, %9 : tensor<2x6x4x4xf64>
    %11 = stablehlo.add %5, %7 : tensor<2x6x4x4xf64>
    %12 = stablehlo.complex %10, %11 : tensor<2x6x4x4xcomplex<f64>>
    return %12 : tensor<2x6x4x4xcomplex<f64>>
  }
}
