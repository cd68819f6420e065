module @jit__fun attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg1: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x2x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x2x4xf32>, tensor<1xi32>) {
    %1 = stablehlo.reshape %arg1 : (tensor<1x4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %25 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %25 : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %4 = "stablehlo.all_gather"(%3) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> : (tensor<1x4xf32>) -> tensor<2x4xf32>
    %5 = "stablehlo.collective_permute"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    %6 = stablehlo.reshape %1 : (tensor<4xf32>) -> tensor<1x4xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<2x4xf32>
    %8 = stablehlo.reshape %7 : (tensor<2x4xf32>) -> tensor<8xf32>
    %9 = "stablehlo.reduce_scatter"(%8) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, scatter_dimension = 0 : i64, use_global_device_ids}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %25 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %25 : tensor<f32>
    }) : (tensor<8xf32>) -> tensor<4xf32>
    %10 = stablehlo.reshape %1 : (tensor<4xf32>) -> tensor<1x4xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<2x4xf32>
    %12 = stablehlo.reshape %11 : (tensor<2x4xf32>) -> tensor<8xf32>
    %13 = stablehlo.reshape %12 : (tensor<8xf32>) -> tensor<2x4xf32>
    %14 = "stablehlo.all_to_all"(%13) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}> : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %c = stablehlo.constant dense<1> : tensor<ui32>
    %c_0 = stablehlo.constant dense<2> : tensor<ui32>
    %15 = stablehlo.partition_id : tensor<ui32>
    %16 = stablehlo.divide %15, %c : tensor<ui32>
    %17 = stablehlo.remainder %16, %c_0 : tensor<ui32>
    %18 = stablehlo.convert %17 : (tensor<ui32>) -> tensor<i32>
    %19 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %20 = stablehlo.broadcast_in_dim %4, dims = [1, 2] : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
    %21 = stablehlo.broadcast_in_dim %5, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %22 = stablehlo.broadcast_in_dim %9, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %23 = stablehlo.broadcast_in_dim %14, dims = [1, 2] : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
    %24 = stablehlo.broadcast_in_dim %18, dims = [] : (tensor<i32>) -> tensor<1xi32>
    return %19, %20, %21, %22, %23, %24 : tensor<1x4xf32>, tensor<1x2x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x2x4xf32>, tensor<1xi32>
  }
}
