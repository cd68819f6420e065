module @jit_reciprocal attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<48xcomplex<f32>>) -> (tensor<48xcomplex<f32>> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<(1.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<48xcomplex<f32>>
    %1 = stablehlo.divide %0, %arg0 : tensor<48xcomplex<f32>>
    return %1 : tensor<48xcomplex<f32>>
  }
}
