module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x128xbf16>) -> (tensor<128xbf16> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<16x128xbf16>, tensor<bf16>) -> tensor<128xbf16>
    %1 = stablehlo.reshape %0 : (tensor<128xbf16>) -> tensor<1x128xbf16>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<1x128xbf16>, tensor<bf16>) -> tensor<128xbf16>
    return %2 : tensor<128xbf16>
  }
}
