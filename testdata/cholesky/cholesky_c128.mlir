module @jit_cholesky attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x5xcomplex<f64>>) -> (tensor<5x5xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = call @cholesky(%arg0) : (tensor<5x5xcomplex<f64>>) -> tensor<5x5xcomplex<f64>>
    return %0 : tensor<5x5xcomplex<f64>>
  }
  func.func private @cholesky(%arg0: tensor<5x5xcomplex<f64>>) -> tensor<5x5xcomplex<f64>> {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<5x5xcomplex<f64>>) -> tensor<5x5xcomplex<f64>>
    %1 = stablehlo.real %0 : (tensor<5x5xcomplex<f64>>) -> tensor<5x5xf64>
    %2 = stablehlo.imag %0 : (tensor<5x5xcomplex<f64>>) -> tensor<5x5xf64>
    %3 = stablehlo.negate %2 : tensor<5x5xf64>
    %4 = stablehlo.complex %1, %3 : tensor<5x5xcomplex<f64>>
    %5 = stablehlo.add %arg0, %4 : tensor<5x5xcomplex<f64>>
    %cst = stablehlo.constant dense<(2.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<5x5xcomplex<f64>>
    %7 = stablehlo.divide %5, %6 : tensor<5x5xcomplex<f64>>
    %8 = stablehlo.cholesky %7, lower = true : tensor<5x5xcomplex<f64>>
    %9 = stablehlo.iota dim = 0 : tensor<5x5xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %10 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<5x5xi64>
    %11 = stablehlo.add %9, %10 : tensor<5x5xi64>
    %12 = stablehlo.iota dim = 1 : tensor<5x5xi64>
    %13 = stablehlo.compare GE, %11, %12, SIGNED : (tensor<5x5xi64>, tensor<5x5xi64>) -> tensor<5x5xi1>
    %cst_0 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %14 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f64>>) -> tensor<5x5xcomplex<f64>>
    %15 = stablehlo.select %13, %8, %14 : tensor<5x5xi1>, tensor<5x5xcomplex<f64>>
    return %15 : tensor<5x5xcomplex<f64>>
  }
}
