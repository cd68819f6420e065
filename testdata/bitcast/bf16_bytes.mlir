module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xbf16>) -> (tensor<12xi64> {jax.result_info = "result"}) {
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<12xbf16>) -> tensor<12x2xui8>
    %1 = stablehlo.convert %0 : (tensor<12x2xui8>) -> tensor<12x2xi32>
    %2 = stablehlo.convert %1 : (tensor<12x2xi32>) -> tensor<12x2xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %3 = stablehlo.reduce(%2 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<12x2xi64>, tensor<i64>) -> tensor<12xi64>
    return %3 : tensor<12xi64>
  }
}
