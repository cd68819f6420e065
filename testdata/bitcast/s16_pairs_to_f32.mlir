module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x2xi16>) -> (tensor<5xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<5x2xi16>) -> tensor<5xf32>
    return %0 : tensor<5xf32>
  }
}
