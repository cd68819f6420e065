module @jit_cholesky attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4x4xcomplex<f32>>) -> (tensor<2x3x4x4xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = call @cholesky(%arg0) : (tensor<2x3x4x4xcomplex<f32>>) -> tensor<2x3x4x4xcomplex<f32>>
    return %0 : tensor<2x3x4x4xcomplex<f32>>
  }
  func.func private @cholesky(%arg0: tensor<2x3x4x4xcomplex<f32>>) -> tensor<2x3x4x4xcomplex<f32>> {
    %0 = stablehlo.transpose %arg0, dims = [0, 1, 3, 2] : (tensor<2x3x4x4xcomplex<f32>>) -> tensor<2x3x4x4xcomplex<f32>>
    %1 = stablehlo.real %0 : (tensor<2x3x4x4xcomplex<f32>>) -> tensor<2x3x4x4xf32>
    %2 = stablehlo.imag %0 : (tensor<2x3x4x4xcomplex<f32>>) -> tensor<2x3x4x4xf32>
    %3 = stablehlo.negate %2 : tensor<2x3x4x4xf32>
    %4 = stablehlo.complex %1, %3 : tensor<2x3x4x4xcomplex<f32>>
    %5 = stablehlo.add %arg0, %4 : tensor<2x3x4x4xcomplex<f32>>
    %cst = stablehlo.constant dense<(2.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<2x3x4x4xcomplex<f32>>
    %7 = stablehlo.divide %5, %6 : tensor<2x3x4x4xcomplex<f32>>
    %8 = stablehlo.cholesky %7, lower = true : tensor<2x3x4x4xcomplex<f32>>
    %9 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %10 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %11 = stablehlo.add %9, %10 : tensor<4x4xi64>
    %12 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %13 = stablehlo.compare GE, %11, %12, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %14 = stablehlo.broadcast_in_dim %13, dims = [2, 3] : (tensor<4x4xi1>) -> tensor<2x3x4x4xi1>
    %cst_0 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %15 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f32>>) -> tensor<2x3x4x4xcomplex<f32>>
    %16 = stablehlo.select %14, %8, %15 : tensor<2x3x4x4xi1>, tensor<2x3x4x4xcomplex<f32>>
    return %16 : tensor<2x3x4x4xcomplex<f32>>
  }
}
