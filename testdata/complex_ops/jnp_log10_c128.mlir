module @jit_log10 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<48xcomplex<f64>>) -> (tensor<48xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = stablehlo.log %arg0 : tensor<48xcomplex<f64>>
    %1 = stablehlo.real %0 : (tensor<48xcomplex<f64>>) -> tensor<48xf64>
    %2 = stablehlo.imag %0 : (tensor<48xcomplex<f64>>) -> tensor<48xf64>
    %cst = stablehlo.constant dense<0.43429448190325182> : tensor<f64>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<48xf64>
    %4 = stablehlo.multiply %1, %3 : tensor<48xf64>
    %cst_0 = stablehlo.constant dense<0.43429448190325182> : tensor<f64>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f64>) -> tensor<48xf64>
    %6 = stablehlo.multiply %2, %5 : tensor<48xf64>
    %7 = stablehlo.complex %4, %6 : tensor<48xcomplex<f64>>
    return %7 : tensor<48xcomplex<f64>>
  }
}
