module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<24xf32>) -> (tensor<24xf32> {jax.result_info = "result[0]"}, tensor<24xf32> {jax.result_info = "result[1]"}, tensor<24xf32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<3.000000e+01> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<24xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<24xf32>
    %2 = chlo.asinh %1 : tensor<24xf32> -> tensor<24xf32>
    %3 = stablehlo.abs %arg0 : tensor<24xf32>
    %cst_0 = stablehlo.constant dense<3.000000e+01> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<24xf32>
    %5 = stablehlo.multiply %3, %4 : tensor<24xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<24xf32>
    %7 = stablehlo.add %5, %6 : tensor<24xf32>
    %8 = call @arccosh(%7) : (tensor<24xf32>) -> tensor<24xf32>
    %9 = chlo.atanh %arg0 : tensor<24xf32> -> tensor<24xf32>
    return %2, %8, %9 : tensor<24xf32>, tensor<24xf32>, tensor<24xf32>
  }
  func.func private @arccosh(%arg0: tensor<24xf32>) -> tensor<24xf32> {
    %0 = chlo.acosh %arg0 : tensor<24xf32> -> tensor<24xf32>
    return %0 : tensor<24xf32>
  }
}
