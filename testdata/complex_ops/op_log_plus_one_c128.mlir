module @complex_log_plus_one {
  func.func public @main(%arg0: tensor<48xcomplex<f64>>) -> (tensor<48xcomplex<f64>>) {
    %0 = stablehlo.log_plus_one %arg0 : tensor<48xcomplex<f64>>
    return %0 : tensor<48xcomplex<f64>>
  }
}
