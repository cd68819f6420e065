module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x6x6xf32>) -> (tensor<3x6x6xf32> {jax.result_info = "result"}) {
    %0 = call @_cholesky(%arg0) : (tensor<3x6x6xf32>) -> tensor<3x6x6xf32>
    return %0 : tensor<3x6x6xf32>
  }
  func.func private @_cholesky(%arg0: tensor<3x6x6xf32>) -> tensor<3x6x6xf32> {
    %0 = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<3x6x6xf32>) -> tensor<3x6x6xf32>
    %1 = stablehlo.cholesky %0, lower = true : tensor<3x6x6xf32>
    %2 = stablehlo.iota dim = 0 : tensor<6x6xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<6x6xi64>
    %4 = stablehlo.add %2, %3 : tensor<6x6xi64>
    %5 = stablehlo.iota dim = 1 : tensor<6x6xi64>
    %6 = stablehlo.compare GE, %4, %5, SIGNED : (tensor<6x6xi64>, tensor<6x6xi64>) -> tensor<6x6xi1>
    %7 = stablehlo.broadcast_in_dim %6, dims = [1, 2] : (tensor<6x6xi1>) -> tensor<3x6x6xi1>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x6x6xf32>
    %9 = stablehlo.select %7, %1, %8 : tensor<3x6x6xi1>, tensor<3x6x6xf32>
    %10 = stablehlo.transpose %9, dims = [0, 2, 1] : (tensor<3x6x6xf32>) -> tensor<3x6x6xf32>
    return %10 : tensor<3x6x6xf32>
  }
}
