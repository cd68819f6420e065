module @jit_log10 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<48xcomplex<f32>>) -> (tensor<48xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.log %arg0 : tensor<48xcomplex<f32>>
    %1 = stablehlo.real %0 : (tensor<48xcomplex<f32>>) -> tensor<48xf32>
    %2 = stablehlo.imag %0 : (tensor<48xcomplex<f32>>) -> tensor<48xf32>
    %cst = stablehlo.constant dense<0.434294492> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<48xf32>
    %4 = stablehlo.multiply %1, %3 : tensor<48xf32>
    %cst_0 = stablehlo.constant dense<0.434294492> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<48xf32>
    %6 = stablehlo.multiply %2, %5 : tensor<48xf32>
    %7 = stablehlo.complex %4, %6 : tensor<48xcomplex<f32>>
    return %7 : tensor<48xcomplex<f32>>
  }
}
