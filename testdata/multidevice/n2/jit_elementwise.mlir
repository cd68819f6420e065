module @jit_elementwise attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<4x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<4x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x5xf32> {jax.result_info = "result"}) {
    %0 = call @elementwise(%arg0, %arg1) : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
    return %0 : tensor<4x5xf32>
  }
  func.func private @elementwise(%arg0: tensor<4x5xf32>, %arg1: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<4x5xf32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<4x5xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %3 = stablehlo.add %1, %2 : tensor<4x5xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{"x"}, {}]> : tensor<4x5xf32>
    return %4 : tensor<4x5xf32>
  }
}
