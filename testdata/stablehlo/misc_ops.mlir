module @jit_misc attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>, %arg1: tensor<4x6xi32>) -> (tensor<4x6xi32> {jax.result_info = "result[0]"}, tensor<4x6xf32> {jax.result_info = "result[1]"}, tensor<4x6xf32> {jax.result_info = "result[2]"}, tensor<4x6xi32> {jax.result_info = "result[3]"}, tensor<4x6xf32> {jax.result_info = "result[4]"}, tensor<4x6xf32> {jax.result_info = "result[5]"}, tensor<4x6xi1> {jax.result_info = "result[6]"}, tensor<4x6xf32> {jax.result_info = "result[7]"}, tensor<4x6xf32> {jax.result_info = "result[8]"}, tensor<5xi32> {jax.result_info = "result[9]"}, tensor<6x6xf32> {jax.result_info = "result[10]"}) {
    %0:2 = "stablehlo.sort"(%arg1, %arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<f32>, %arg5: tensor<f32>):
      %26 = stablehlo.compare LT, %arg2, %arg3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %26 : tensor<i1>
    }) : (tensor<4x6xi32>, tensor<4x6xf32>) -> (tensor<4x6xi32>, tensor<4x6xf32>)
    %1:2 = stablehlo.optimization_barrier %arg0, %arg1 : tensor<4x6xf32>, tensor<4x6xi32>
    %2 = stablehlo.bitcast_convert %arg0 : (tensor<4x6xf32>) -> tensor<4x6xi32>
    %3 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<4x6xf32>
    %4 = chlo.erf %arg0 : tensor<4x6xf32> -> tensor<4x6xf32>
    %cst = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %6 = stablehlo.multiply %arg0, %5 : tensor<4x6xf32>
    %7 = stablehlo.tan %6 : tensor<4x6xf32>
    %8 = stablehlo.add %4, %7 : tensor<4x6xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %10 = stablehlo.divide %arg0, %9 : tensor<4x6xf32>
    %11 = call @isinf(%10) : (tensor<4x6xf32>) -> tensor<4x6xi1>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %13 = stablehlo.divide %arg0, %12 : tensor<4x6xf32>
    %cst_2 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %15 = stablehlo.compare EQ, %13, %14, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %16 = stablehlo.and %11, %15 : tensor<4x6xi1>
    %17 = stablehlo.slice %arg0 [0:1, 0:1] : (tensor<4x6xf32>) -> tensor<1x1xf32>
    %18 = stablehlo.reshape %17 : (tensor<1x1xf32>) -> tensor<f32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.compare GT, %18, %cst_3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %20 = stablehlo.convert %19 : (tensor<i1>) -> tensor<i32>
    %21 = "stablehlo.case"(%20) ({
      %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %26 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
      %27 = stablehlo.subtract %arg0, %26 : tensor<4x6xf32>
      stablehlo.return %27 : tensor<4x6xf32>
    }, {
      %cst_4 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %26 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
      %27 = stablehlo.multiply %arg0, %26 : tensor<4x6xf32>
      stablehlo.return %27 : tensor<4x6xf32>
    }) : (tensor<i32>) -> tensor<4x6xf32>
    %22 = call @cumsum(%arg0) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %23 = stablehlo.iota dim = 0 : tensor<5xi32>
    %24 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %25 = stablehlo.dot_general %24, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x4xf32>, tensor<4x6xf32>) -> tensor<6x6xf32>
    return %0#0, %0#1, %1#0, %2, %3, %8, %16, %21, %22, %23, %25 : tensor<4x6xi32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<5xi32>, tensor<6x6xf32>
  }
  func.func private @isinf(%arg0: tensor<4x6xf32>) -> tensor<4x6xi1> {
    %0 = stablehlo.abs %arg0 : tensor<4x6xf32>
    %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %2 = stablehlo.compare EQ, %0, %1, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    return %2 : tensor<4x6xi1>
  }
  func.func private @cumsum(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {
    %0 = call @cumsum_0(%arg0) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
  func.func private @cumsum_0(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [5, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 6>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<4x6xf32>
    return %1 : tensor<4x6xf32>
  }
}
