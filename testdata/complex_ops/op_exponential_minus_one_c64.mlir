module @complex_exponential_minus_one {
  func.func public @main(%arg0: tensor<48xcomplex<f32>>) -> (tensor<48xcomplex<f32>>) {
    %0 = stablehlo.exponential_minus_one %arg0 : tensor<48xcomplex<f32>>
    return %0 : tensor<48xcomplex<f32>>
  }
}
