module @jit_matmul attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x5xcomplex<f32>>, %arg1: tensor<5x7xcomplex<f32>>) -> (tensor<6x7xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x5xcomplex<f32>>, tensor<5x7xcomplex<f32>>) -> tensor<6x7xcomplex<f32>>
    return %0 : tensor<6x7xcomplex<f32>>
  }
}
