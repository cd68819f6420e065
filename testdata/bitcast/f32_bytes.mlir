module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf32>) -> (tensor<16x4xui8> {jax.result_info = "result[0]"}, tensor<16xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<16xf32>) -> tensor<16x4xui8>
    %1 = stablehlo.bitcast_convert %arg0 : (tensor<16xf32>) -> tensor<16x4xui8>
    %c = stablehlo.constant dense<1> : tensor<ui8>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui8>) -> tensor<16x4xui8>
    %3 = stablehlo.xor %1, %2 : tensor<16x4xui8>
    %4 = stablehlo.bitcast_convert %3 : (tensor<16x4xui8>) -> tensor<16xf32>
    return %0, %4 : tensor<16x4xui8>, tensor<16xf32>
  }
}
