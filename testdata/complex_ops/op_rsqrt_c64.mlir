module @complex_rsqrt {
  func.func public @main(%arg0: tensor<48xcomplex<f32>>) -> (tensor<48xcomplex<f32>>) {
    %0 = stablehlo.rsqrt %arg0 : tensor<48xcomplex<f32>>
    return %0 : tensor<48xcomplex<f32>>
  }
}
