module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<31xui16>, %arg1: tensor<31xui16>, %arg2: tensor<32xi16>, %arg3: tensor<32xi16>) -> (tensor<31xui16> {jax.result_info = "result[0]"}, tensor<32xi16> {jax.result_info = "result[1]"}) {
    %0 = chlo.mulhi %arg0, %arg1 : tensor<31xui16>, tensor<31xui16> -> tensor<31xui16>
    %1 = chlo.mulhi %arg2, %arg3 : tensor<32xi16>, tensor<32xi16> -> tensor<32xi16>
    return %0, %1 : tensor<31xui16>, tensor<32xi16>
  }
}
