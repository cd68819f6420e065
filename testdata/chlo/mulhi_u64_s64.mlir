module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<31xui64>, %arg1: tensor<31xui64>, %arg2: tensor<32xi64>, %arg3: tensor<32xi64>) -> (tensor<31xui64> {jax.result_info = "result[0]"}, tensor<32xi64> {jax.result_info = "result[1]"}) {
    %0 = chlo.mulhi %arg0, %arg1 : tensor<31xui64>, tensor<31xui64> -> tensor<31xui64>
    %1 = chlo.mulhi %arg2, %arg3 : tensor<32xi64>, tensor<32xi64> -> tensor<32xi64>
    return %0, %1 : tensor<31xui64>, tensor<32xi64>
  }
}
