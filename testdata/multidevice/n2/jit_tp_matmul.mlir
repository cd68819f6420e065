module @jit_tp_matmul attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x3xf32> {jax.result_info = "result"}) {
    %0 = call @tp_matmul(%arg0, %arg1) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
  func.func private @tp_matmul(%arg0: tensor<4x8xf32>, %arg1: tensor<8x3xf32>) -> tensor<4x3xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {}]> : tensor<4x3xf32>
    return %1 : tensor<4x3xf32>
  }
}
