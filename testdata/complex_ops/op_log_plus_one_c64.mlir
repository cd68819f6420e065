module @complex_log_plus_one {
  func.func public @main(%arg0: tensor<48xcomplex<f32>>) -> (tensor<48xcomplex<f32>>) {
    %0 = stablehlo.log_plus_one %arg0 : tensor<48xcomplex<f32>>
    return %0 : tensor<48xcomplex<f32>>
  }
}
