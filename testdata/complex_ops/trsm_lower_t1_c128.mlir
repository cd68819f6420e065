module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x5x5xcomplex<f64>>, %arg1: tensor<2x5x3xcomplex<f64>>) -> (tensor<2x5x3xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = call @_solve_triangular(%arg0, %arg1) : (tensor<2x5x5xcomplex<f64>>, tensor<2x5x3xcomplex<f64>>) -> tensor<2x5x3xcomplex<f64>>
    return %0 : tensor<2x5x3xcomplex<f64>>
  }
  func.func private @_solve_triangular(%arg0: tensor<2x5x5xcomplex<f64>>, %arg1: tensor<2x5x3xcomplex<f64>>) -> tensor<2x5x3xcomplex<f64>> {
    %0 = "stablehlo.triangular_solve"(%arg0, %arg1) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose TRANSPOSE>, unit_diagonal = false}> : (tensor<2x5x5xcomplex<f64>>, tensor<2x5x3xcomplex<f64>>) -> tensor<2x5x3xcomplex<f64>>
    return %0 : tensor<2x5x3xcomplex<f64>>
  }
}
