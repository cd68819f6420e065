"builtin.module"() <{sym_name = "jit__fun"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["i"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "i", size = 2 : i64}]}} : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}], function_type = (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x2x4xf32>, tensor<2xi32>), res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}, {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}, {}]>}, {jax.result_info = "result[2]", sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}, {jax.result_info = "result[3]", sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}, {jax.result_info = "result[4]", sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}, {}]>}, {jax.result_info = "result[5]", sdy.sharding = #sdy.sharding<@mesh, [{"i"}]>}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2x4xf32>):
    %0:6 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"i"}, {}]>]>, manual_axes = #sdy<manual_axes{"i"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"i"}, {}]>, <@mesh, [{"i"}, {}, {}]>, <@mesh, [{"i"}, {}]>, <@mesh, [{"i"}, {}]>, <@mesh, [{"i"}, {}, {}]>, <@mesh, [{"i"}]>]>}> ({
    ^bb0(%arg1: tensor<1x4xf32>):
      %1 = "stablehlo.reshape"(%arg1) : (tensor<1x4xf32>) -> tensor<4xf32>
      %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %28 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%28) : (tensor<f32>) -> ()
      }) : (tensor<4xf32>) -> tensor<4xf32>
      %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
      %4 = "stablehlo.all_gather"(%3) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> : (tensor<1x4xf32>) -> tensor<2x4xf32>
      %5 = "stablehlo.collective_permute"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
      %6 = "stablehlo.reshape"(%1) : (tensor<4xf32>) -> tensor<1x4xf32>
      %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<2x4xf32>
      %8 = "stablehlo.reshape"(%7) : (tensor<2x4xf32>) -> tensor<8xf32>
      %9 = "stablehlo.reduce_scatter"(%8) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, scatter_dimension = 0 : i64, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %27 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%27) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>) -> tensor<4xf32>
      %10 = "stablehlo.reshape"(%1) : (tensor<4xf32>) -> tensor<1x4xf32>
      %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<2x4xf32>
      %12 = "stablehlo.reshape"(%11) : (tensor<2x4xf32>) -> tensor<8xf32>
      %13 = "stablehlo.reshape"(%12) : (tensor<8xf32>) -> tensor<2x4xf32>
      %14 = "stablehlo.all_to_all"(%13) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}> : (tensor<2x4xf32>) -> tensor<2x4xf32>
      %15 = "stablehlo.constant"() <{value = dense<1> : tensor<ui32>}> : () -> tensor<ui32>
      %16 = "stablehlo.constant"() <{value = dense<2> : tensor<ui32>}> : () -> tensor<ui32>
      %17 = "stablehlo.partition_id"() : () -> tensor<ui32>
      %18 = "stablehlo.divide"(%17, %15) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %19 = "stablehlo.remainder"(%18, %16) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %20 = "stablehlo.convert"(%19) : (tensor<ui32>) -> tensor<i32>
      %21 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
      %22 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
      %23 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
      %24 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
      %25 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
      %26 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<1xi32>
      "sdy.return"(%21, %22, %23, %24, %25, %26) : (tensor<1x4xf32>, tensor<1x2x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x2x4xf32>, tensor<1xi32>) -> ()
    }) : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x2x4xf32>, tensor<2xi32>)
    "func.return"(%0#0, %0#1, %0#2, %0#3, %0#4, %0#5) : (tensor<2x4xf32>, tensor<2x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x2x4xf32>, tensor<2xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
