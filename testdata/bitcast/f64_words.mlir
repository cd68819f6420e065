module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf64>) -> (tensor<3x4x2xui32> {jax.result_info = "result[0]"}, tensor<3x4xf64> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<3x4xf64>) -> tensor<3x4x2xui32>
    %1 = stablehlo.bitcast_convert %arg0 : (tensor<3x4xf64>) -> tensor<3x4x2xui32>
    %2 = stablehlo.reverse %1, dims = [2] : tensor<3x4x2xui32>
    %3 = stablehlo.bitcast_convert %2 : (tensor<3x4x2xui32>) -> tensor<3x4xf64>
    return %0, %3 : tensor<3x4x2xui32>, tensor<3x4xf64>
  }
}
