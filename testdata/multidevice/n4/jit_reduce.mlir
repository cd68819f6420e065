module @jit_reduce_sharded attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<8xf32> {jax.result_info = "result[1]"}) {
    %0:2 = call @reduce_sharded(%arg0) : (tensor<8x3xf32>) -> (tensor<3xf32>, tensor<8xf32>)
    return %0#0, %0#1 : tensor<3xf32>, tensor<8xf32>
  }
  func.func private @reduce_sharded(%arg0: tensor<8x3xf32>) -> (tensor<3xf32>, tensor<8xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<8x3xf32>, tensor<f32>) -> tensor<3xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<8x3xf32>, tensor<f32>) -> tensor<8xf32>
    %2 = sdy.sharding_constraint %0 <@mesh, [{}]> : tensor<3xf32>
    %3 = sdy.sharding_constraint %1 <@mesh, [{"x"}]> : tensor<8xf32>
    return %2, %3 : tensor<3xf32>, tensor<8xf32>
  }
}
