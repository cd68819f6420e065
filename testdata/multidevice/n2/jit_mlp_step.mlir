module @jit_mlp_step attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg3: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<6x8xf32> {jax.result_info = "result[0]"}, tensor<8x2xf32> {jax.result_info = "result[1]"}) {
    %0:2 = call @mlp_step(%arg0, %arg1, %arg2, %arg3) : (tensor<6x8xf32>, tensor<8x2xf32>, tensor<8x6xf32>, tensor<8x2xf32>) -> (tensor<6x8xf32>, tensor<8x2xf32>)
    return %0#0, %0#1 : tensor<6x8xf32>, tensor<8x2xf32>
  }
  func.func private @mlp_step(%arg0: tensor<6x8xf32>, %arg1: tensor<8x2xf32>, %arg2: tensor<8x6xf32>, %arg3: tensor<8x2xf32>) -> (tensor<6x8xf32>, tensor<8x2xf32>) {
    %0 = stablehlo.dot_general %arg2, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x6xf32>, tensor<6x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.tanh %0 : tensor<8x8xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %3 = stablehlo.subtract %2, %1 : tensor<8x8xf32>
    %4 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
    %5 = stablehlo.subtract %4, %arg3 : tensor<8x2xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
    %7 = stablehlo.multiply %6, %5 : tensor<8x2xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_2 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %8 = stablehlo.divide %cst_1, %cst_2 : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
    %10 = stablehlo.multiply %9, %7 : tensor<8x2xf32>
    %11 = stablehlo.dot_general %10, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x2xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %12 = stablehlo.transpose %11, dims = [1, 0] : (tensor<2x8xf32>) -> tensor<8x2xf32>
    %13 = stablehlo.dot_general %10, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x8xf32>
    %14 = stablehlo.multiply %13, %3 : tensor<8x8xf32>
    %15 = stablehlo.multiply %14, %1 : tensor<8x8xf32>
    %16 = stablehlo.add %14, %15 : tensor<8x8xf32>
    %17 = stablehlo.dot_general %16, %arg2, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
    %18 = stablehlo.transpose %17, dims = [1, 0] : (tensor<8x6xf32>) -> tensor<6x8xf32>
    %cst_3 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %20 = stablehlo.multiply %19, %18 : tensor<6x8xf32>
    %21 = stablehlo.subtract %arg0, %20 : tensor<6x8xf32>
    %cst_4 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
    %23 = stablehlo.multiply %22, %12 : tensor<8x2xf32>
    %24 = stablehlo.subtract %arg1, %23 : tensor<8x2xf32>
    %25 = sdy.sharding_constraint %21 <@mesh, [{}, {}]> : tensor<6x8xf32>
    %26 = sdy.sharding_constraint %24 <@mesh, [{}, {}]> : tensor<8x2xf32>
    return %25, %26 : tensor<6x8xf32>, tensor<8x2xf32>
  }
}
