module @jit_cholesky attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x5xf64>) -> (tensor<5x5xf64> {jax.result_info = "result"}) {
    %0 = call @cholesky(%arg0) : (tensor<5x5xf64>) -> tensor<5x5xf64>
    return %0 : tensor<5x5xf64>
  }
  func.func private @cholesky(%arg0: tensor<5x5xf64>) -> tensor<5x5xf64> {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<5x5xf64>) -> tensor<5x5xf64>
    %1 = stablehlo.add %arg0, %0 : tensor<5x5xf64>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f64>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<5x5xf64>
    %3 = stablehlo.divide %1, %2 : tensor<5x5xf64>
    %4 = stablehlo.cholesky %3, lower = true : tensor<5x5xf64>
    %5 = stablehlo.iota dim = 0 : tensor<5x5xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %6 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<5x5xi64>
    %7 = stablehlo.add %5, %6 : tensor<5x5xi64>
    %8 = stablehlo.iota dim = 1 : tensor<5x5xi64>
    %9 = stablehlo.compare GE, %7, %8, SIGNED : (tensor<5x5xi64>, tensor<5x5xi64>) -> tensor<5x5xi1>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %10 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f64>) -> tensor<5x5xf64>
    %11 = stablehlo.select %9, %4, %10 : tensor<5x5xi1>, tensor<5x5xf64>
    return %11 : tensor<5x5xf64>
  }
}
