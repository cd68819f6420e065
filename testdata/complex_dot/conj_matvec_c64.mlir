module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x6xcomplex<f32>>, %arg1: tensor<8xcomplex<f32>>) -> (tensor<6xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.real %arg0 : (tensor<8x6xcomplex<f32>>) -> tensor<8x6xf32>
    %1 = stablehlo.imag %arg0 : (tensor<8x6xcomplex<f32>>) -> tensor<8x6xf32>
    %2 = stablehlo.negate %1 : tensor<8x6xf32>
    %3 = stablehlo.complex %0, %2 : tensor<8x6xcomplex<f32>>
    %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<8x6xcomplex<f32>>) -> tensor<6x8xcomplex<f32>>
    %5 = stablehlo.dot_general %4, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x8xcomplex<f32>>, tensor<8xcomplex<f32>>) -> tensor<6xcomplex<f32>>
    return %5 : tensor<6xcomplex<f32>>
  }
}
