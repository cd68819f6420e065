module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x9x9x4xf32>, %arg1: tensor<3x3x4x6xf32>, %arg2: tensor<6xf32>) -> (tensor<2x9x9x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x9x9x4xf32>, tensor<3x3x4x6xf32>) -> tensor<2x9x9x6xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [3] : (tensor<6xf32>) -> tensor<1x1x1x6xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x1x1x6xf32>) -> tensor<2x9x9x6xf32>
    %3 = stablehlo.add %0, %2 : tensor<2x9x9x6xf32>
    %4 = call @relu(%3) : (tensor<2x9x9x6xf32>) -> tensor<2x9x9x6xf32>
    return %4 : tensor<2x9x9x6xf32>
  }
  func.func private @relu(%arg0: tensor<2x9x9x6xf32>) -> tensor<2x9x9x6xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x9x9x6xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x9x9x6xf32>
    return %1 : tensor<2x9x9x6xf32>
  }
}
