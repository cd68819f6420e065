module @complex_rsqrt {
  func.func public @main(%arg0: tensor<48xcomplex<f64>>) -> (tensor<48xcomplex<f64>>) {
    %0 = stablehlo.rsqrt %arg0 : tensor<48xcomplex<f64>>
    return %0 : tensor<48xcomplex<f64>>
  }
}
