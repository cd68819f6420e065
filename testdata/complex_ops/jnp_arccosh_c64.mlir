module @jit_arccosh attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<48xcomplex<f32>>) -> (tensor<48xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = call @arccosh(%arg0) : (tensor<48xcomplex<f32>>) -> tensor<48xcomplex<f32>>
    return %0 : tensor<48xcomplex<f32>>
  }
  func.func private @arccosh(%arg0: tensor<48xcomplex<f32>>) -> tensor<48xcomplex<f32>> {
    %0 = chlo.acosh %arg0 : tensor<48xcomplex<f32>> -> tensor<48xcomplex<f32>>
    %1 = stablehlo.real %0 : (tensor<48xcomplex<f32>>) -> tensor<48xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<48xf32>
    %3 = stablehlo.compare LT, %1, %2, FLOAT : (tensor<48xf32>, tensor<48xf32>) -> tensor<48xi1>
    %4 = stablehlo.negate %0 : tensor<48xcomplex<f32>>
    %5 = call @_where(%3, %4, %0) : (tensor<48xi1>, tensor<48xcomplex<f32>>, tensor<48xcomplex<f32>>) -> tensor<48xcomplex<f32>>
    return %5 : tensor<48xcomplex<f32>>
  }
  func.func private @_where(%arg0: tensor<48xi1>, %arg1: tensor<48xcomplex<f32>>, %arg2: tensor<48xcomplex<f32>>) -> tensor<48xcomplex<f32>> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<48xi1>, tensor<48xcomplex<f32>>
    return %0 : tensor<48xcomplex<f32>>
  }
}
