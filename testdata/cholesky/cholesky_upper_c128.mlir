module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x6x6xcomplex<f64>>) -> (tensor<3x6x6xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = call @_cholesky(%arg0) : (tensor<3x6x6xcomplex<f64>>) -> tensor<3x6x6xcomplex<f64>>
    return %0 : tensor<3x6x6xcomplex<f64>>
  }
  func.func private @_cholesky(%arg0: tensor<3x6x6xcomplex<f64>>) -> tensor<3x6x6xcomplex<f64>> {
    %0 = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<3x6x6xcomplex<f64>>) -> tensor<3x6x6xcomplex<f64>>
    %1 = stablehlo.real %0 : (tensor<3x6x6xcomplex<f64>>) -> tensor<3x6x6xf64>
    %2 = stablehlo.imag %0 : (tensor<3x6x6xcomplex<f64>>) -> tensor<3x6x6xf64>
    %3 = stablehlo.negate %2 : tensor<3x6x6xf64>
    %4 = stablehlo.complex %1, %3 : tensor<3x6x6xcomplex<f64>>
    %5 = stablehlo.cholesky %4, lower = true : tensor<3x6x6xcomplex<f64>>
    %6 = stablehlo.iota dim = 0 : tensor<6x6xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %7 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<6x6xi64>
    %8 = stablehlo.add %6, %7 : tensor<6x6xi64>
    %9 = stablehlo.iota dim = 1 : tensor<6x6xi64>
    %10 = stablehlo.compare GE, %8, %9, SIGNED : (tensor<6x6xi64>, tensor<6x6xi64>) -> tensor<6x6xi1>
    %11 = stablehlo.broadcast_in_dim %10, dims = [1, 2] : (tensor<6x6xi1>) -> tensor<3x6x6xi1>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %12 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<3x6x6xcomplex<f64>>
    %13 = stablehlo.select %11, %5, %12 : tensor<3x6x6xi1>, tensor<3x6x6xcomplex<f64>>
    %14 = stablehlo.transpose %13, dims = [0, 2, 1] : (tensor<3x6x6xcomplex<f64>>) -> tensor<3x6x6xcomplex<f64>>
    %15 = stablehlo.real %14 : (tensor<3x6x6xcomplex<f64>>) -> tensor<3x6x6xf64>
    %16 = stablehlo.imag %14 : (tensor<3x6x6xcomplex<f64>>) -> tensor<3x6x6xf64>
    %17 = stablehlo.negate %16 : tensor<3x6x6xf64>
    %18 = stablehlo.complex %15, %17 : tensor<3x6x6xcomplex<f64>>
    return %18 : tensor<3x6x6xcomplex<f64>>
  }
}
