module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xi32>) -> (tensor<4x8xf32> {jax.result_info = "result[0]"}, tensor<4x8xf32> {jax.result_info = "result[1]"}, tensor<4x8xi32> {jax.result_info = "result[2]"}, tensor<4x8xi32> {jax.result_info = "result[3]"}, tensor<4x8xf32> {jax.result_info = "result[4]"}, tensor<4x8xf32> {jax.result_info = "result[5]"}, tensor<4x8xf32> {jax.result_info = "result[6]"}, tensor<4x8xf32> {jax.result_info = "result[7]"}, tensor<4x8xf32> {jax.result_info = "result[8]"}, tensor<4x8xi1> {jax.result_info = "result[9]"}) {
    %0 = stablehlo.cbrt %arg0 : tensor<4x8xf32>
    %1 = chlo.erf %arg0 : tensor<4x8xf32> -> tensor<4x8xf32>
    %2 = stablehlo.count_leading_zeros %arg1 : tensor<4x8xi32>
    %3 = stablehlo.popcnt %arg1 : tensor<4x8xi32>
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %5 = stablehlo.multiply %arg0, %4 : tensor<4x8xf32>
    %6 = call @round(%5) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %7 = stablehlo.reduce_precision %arg0, format = e8m7 : tensor<4x8xf32>
    %8 = stablehlo.sign %arg0 : tensor<4x8xf32>
    %9 = stablehlo.exponential_minus_one %arg0 : tensor<4x8xf32>
    %10 = stablehlo.abs %arg0 : tensor<4x8xf32>
    %11 = stablehlo.log_plus_one %10 : tensor<4x8xf32>
    %12 = stablehlo.slice %arg0 [0:1, 0:1] : (tensor<4x8xf32>) -> tensor<1x1xf32>
    %13 = stablehlo.reshape %12 : (tensor<1x1xf32>) -> tensor<f32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %15 = stablehlo.subtract %arg0, %14 : tensor<4x8xf32>
    %16 = stablehlo.divide %arg0, %15 : tensor<4x8xf32>
    %17 = stablehlo.is_finite %16 : (tensor<4x8xf32>) -> tensor<4x8xi1>
    return %0, %1, %2, %3, %6, %7, %8, %9, %11, %17 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi1>
  }
  func.func private @round(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}
