module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<24xf64>) -> (tensor<24xf64> {jax.result_info = "result[0]"}, tensor<24xf64> {jax.result_info = "result[1]"}, tensor<24xf64> {jax.result_info = "result[2]"}, tensor<24xf64> {jax.result_info = "result[3]"}) {
    %0 = chlo.asin %arg0 : tensor<24xf64> -> tensor<24xf64>
    %1 = chlo.acos %arg0 : tensor<24xf64> -> tensor<24xf64>
    %cst = stablehlo.constant dense<1.000000e+03> : tensor<f64>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<24xf64>
    %3 = stablehlo.multiply %arg0, %2 : tensor<24xf64>
    %4 = chlo.asinh %3 : tensor<24xf64> -> tensor<24xf64>
    %5 = chlo.atanh %arg0 : tensor<24xf64> -> tensor<24xf64>
    return %0, %1, %4, %5 : tensor<24xf64>, tensor<24xf64>, tensor<24xf64>, tensor<24xf64>
  }
}
