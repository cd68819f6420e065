module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<24xf32>) -> (tensor<24xf32> {jax.result_info = "result[0]"}, tensor<24xf32> {jax.result_info = "result[1]"}, tensor<24xf32> {jax.result_info = "result[2]"}) {
    %0 = chlo.asin %arg0 : tensor<24xf32> -> tensor<24xf32>
    %1 = chlo.acos %arg0 : tensor<24xf32> -> tensor<24xf32>
    %cst = stablehlo.constant dense<4.000000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<24xf32>
    %3 = stablehlo.multiply %arg0, %2 : tensor<24xf32>
    %4 = chlo.atan %3 : tensor<24xf32> -> tensor<24xf32>
    return %0, %1, %4 : tensor<24xf32>, tensor<24xf32>, tensor<24xf32>
  }
}
