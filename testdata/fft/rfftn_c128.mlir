module @jit_rfftn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x8xf64>) -> (tensor<6x5xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<6x8xf64>) -> tensor<6x5xcomplex<f64>>
    return %0 : tensor<6x5xcomplex<f64>>
  }
  func.func private @fft(%arg0: tensor<6x8xf64>) -> tensor<6x5xcomplex<f64>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [6, 8] : (tensor<6x8xf64>) -> tensor<6x5xcomplex<f64>>
    return %0 : tensor<6x5xcomplex<f64>>
  }
}
