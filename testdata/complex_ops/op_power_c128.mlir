module @complex_power {
  func.func public @main(%arg0: tensor<48xcomplex<f64>>, %arg1: tensor<48xcomplex<f64>>) -> (tensor<48xcomplex<f64>>) {
    %0 = stablehlo.power %arg0, %arg1 : tensor<48xcomplex<f64>>
    return %0 : tensor<48xcomplex<f64>>
  }
}
