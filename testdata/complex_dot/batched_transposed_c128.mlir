module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4x5xcomplex<f64>>, %arg1: tensor<3x6x5xcomplex<f64>>) -> (tensor<3x4x6xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<3x4x5xcomplex<f64>>, tensor<3x6x5xcomplex<f64>>) -> tensor<3x4x6xcomplex<f64>>
    return %0 : tensor<3x4x6xcomplex<f64>>
  }
}
