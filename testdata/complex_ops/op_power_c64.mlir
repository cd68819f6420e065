module @complex_power {
  func.func public @main(%arg0: tensor<48xcomplex<f32>>, %arg1: tensor<48xcomplex<f32>>) -> (tensor<48xcomplex<f32>>) {
    %0 = stablehlo.power %arg0, %arg1 : tensor<48xcomplex<f32>>
    return %0 : tensor<48xcomplex<f32>>
  }
}
