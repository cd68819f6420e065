module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f32>>, %arg1: tensor<4x3xcomplex<f32>>) -> (tensor<4x3xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = chlo.conj %arg0 : tensor<4x4xcomplex<f32>> -> tensor<4x4xcomplex<f32>>
    %1 = "stablehlo.triangular_solve"(%0, %arg1) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<4x4xcomplex<f32>>, tensor<4x3xcomplex<f32>>) -> tensor<4x3xcomplex<f32>>
    return %1 : tensor<4x3xcomplex<f32>>
  }
}
