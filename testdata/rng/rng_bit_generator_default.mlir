module @jit_shapes attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xui32>) -> (tensor<4xui32> {jax.result_info = "result[0]"}, tensor<3x4xui32> {jax.result_info = "result[1]"}, tensor<4xui32> {jax.result_info = "result[2]"}, tensor<5x3xui32> {jax.result_info = "result[3]"}, tensor<4xui32> {jax.result_info = "result[4]"}, tensor<ui32> {jax.result_info = "result[5]"}, tensor<4xui32> {jax.result_info = "result[6]"}, tensor<7xui64> {jax.result_info = "result[7]"}, tensor<4xui32> {jax.result_info = "result[8]"}, tensor<2x3x5xui8> {jax.result_info = "result[9]"}, tensor<4xui32> {jax.result_info = "result[10]"}, tensor<9xui16> {jax.result_info = "result[11]"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<4xui32>) -> tensor<2x2xui32>
    %1 = stablehlo.bitcast_convert %0 : (tensor<2x2xui32>) -> tensor<2xui64>
    %output_state, %output = stablehlo.rng_bit_generator %1, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x4xui32>)
    %2 = stablehlo.bitcast_convert %output_state : (tensor<2xui64>) -> tensor<2x2xui32>
    %3 = stablehlo.reshape %2 : (tensor<2x2xui32>) -> tensor<4xui32>
    %4 = stablehlo.reshape %3 : (tensor<4xui32>) -> tensor<2x2xui32>
    %5 = stablehlo.bitcast_convert %4 : (tensor<2x2xui32>) -> tensor<2xui64>
    %output_state_0, %output_1 = stablehlo.rng_bit_generator %5, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<5x3xui32>)
    %6 = stablehlo.bitcast_convert %output_state_0 : (tensor<2xui64>) -> tensor<2x2xui32>
    %7 = stablehlo.reshape %6 : (tensor<2x2xui32>) -> tensor<4xui32>
    %8 = stablehlo.reshape %7 : (tensor<4xui32>) -> tensor<2x2xui32>
    %9 = stablehlo.bitcast_convert %8 : (tensor<2x2xui32>) -> tensor<2xui64>
    %output_state_2, %output_3 = stablehlo.rng_bit_generator %9, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<ui32>)
    %10 = stablehlo.bitcast_convert %output_state_2 : (tensor<2xui64>) -> tensor<2x2xui32>
    %11 = stablehlo.reshape %10 : (tensor<2x2xui32>) -> tensor<4xui32>
    %12 = stablehlo.reshape %11 : (tensor<4xui32>) -> tensor<2x2xui32>
    %13 = stablehlo.bitcast_convert %12 : (tensor<2x2xui32>) -> tensor<2xui64>
    %output_state_4, %output_5 = stablehlo.rng_bit_generator %13, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<7xui64>)
    %14 = stablehlo.bitcast_convert %output_state_4 : (tensor<2xui64>) -> tensor<2x2xui32>
    %15 = stablehlo.reshape %14 : (tensor<2x2xui32>) -> tensor<4xui32>
    %16 = stablehlo.reshape %15 : (tensor<4xui32>) -> tensor<2x2xui32>
    %17 = stablehlo.bitcast_convert %16 : (tensor<2x2xui32>) -> tensor<2xui64>
    %output_state_6, %output_7 = stablehlo.rng_bit_generator %17, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3x5xui8>)
    %18 = stablehlo.bitcast_convert %output_state_6 : (tensor<2xui64>) -> tensor<2x2xui32>
    %19 = stablehlo.reshape %18 : (tensor<2x2xui32>) -> tensor<4xui32>
    %20 = stablehlo.reshape %19 : (tensor<4xui32>) -> tensor<2x2xui32>
    %21 = stablehlo.bitcast_convert %20 : (tensor<2x2xui32>) -> tensor<2xui64>
    %output_state_8, %output_9 = stablehlo.rng_bit_generator %21, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<9xui16>)
    %22 = stablehlo.bitcast_convert %output_state_8 : (tensor<2xui64>) -> tensor<2x2xui32>
    %23 = stablehlo.reshape %22 : (tensor<2x2xui32>) -> tensor<4xui32>
    return %3, %output, %7, %output_1, %11, %output_3, %15, %output_5, %19, %output_7, %23, %output_9 : tensor<4xui32>, tensor<3x4xui32>, tensor<4xui32>, tensor<5x3xui32>, tensor<4xui32>, tensor<ui32>, tensor<4xui32>, tensor<7xui64>, tensor<4xui32>, tensor<2x3x5xui8>, tensor<4xui32>, tensor<9xui16>
  }
}
