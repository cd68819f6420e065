module @jit_arctanh attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<48xcomplex<f64>>) -> (tensor<48xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = chlo.atanh %arg0 : tensor<48xcomplex<f64>> -> tensor<48xcomplex<f64>>
    return %0 : tensor<48xcomplex<f64>>
  }
}
