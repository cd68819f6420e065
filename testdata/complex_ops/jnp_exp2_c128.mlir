module @jit_exp2 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<48xcomplex<f64>>) -> (tensor<48xcomplex<f64>> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<(0.69314718055994529,0.000000e+00)> : tensor<complex<f64>>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<48xcomplex<f64>>
    %1 = stablehlo.multiply %0, %arg0 : tensor<48xcomplex<f64>>
    %2 = stablehlo.exponential %1 : tensor<48xcomplex<f64>>
    return %2 : tensor<48xcomplex<f64>>
  }
}
