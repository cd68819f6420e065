"builtin.module"() <{sym_name = "jit_misc"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xf32>, tensor<4x6xi32>) -> (tensor<4x6xi32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<5xi32>, tensor<6x6xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}, {jax.result_info = "result[6]"}, {jax.result_info = "result[7]"}, {jax.result_info = "result[8]"}, {jax.result_info = "result[9]"}, {jax.result_info = "result[10]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<4x6xf32>, %arg6: tensor<4x6xi32>):
    %9:2 = "stablehlo.sort"(%arg6, %arg5) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg7: tensor<i32>, %arg8: tensor<i32>, %arg9: tensor<f32>, %arg10: tensor<f32>):
      %46 = "stablehlo.compare"(%arg7, %arg8) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%46) : (tensor<i1>) -> ()
    }) : (tensor<4x6xi32>, tensor<4x6xf32>) -> (tensor<4x6xi32>, tensor<4x6xf32>)
    %10:2 = "stablehlo.optimization_barrier"(%arg5, %arg6) : (tensor<4x6xf32>, tensor<4x6xi32>) -> (tensor<4x6xf32>, tensor<4x6xi32>)
    %11 = "stablehlo.bitcast_convert"(%arg5) : (tensor<4x6xf32>) -> tensor<4x6xi32>
    %12 = "stablehlo.reduce_precision"(%arg5) <{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}> : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %13 = "chlo.erf"(%arg5) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %14 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %16 = "stablehlo.multiply"(%arg5, %15) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %17 = "stablehlo.tan"(%16) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %18 = "stablehlo.add"(%13, %17) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %19 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %21 = "stablehlo.divide"(%arg5, %20) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %22 = "func.call"(%21) <{callee = @isinf}> : (tensor<4x6xf32>) -> tensor<4x6xi1>
    %23 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %24 = "stablehlo.broadcast_in_dim"(%23) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %25 = "stablehlo.divide"(%arg5, %24) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %26 = "stablehlo.constant"() <{value = dense<0x7F800000> : tensor<f32>}> : () -> tensor<f32>
    %27 = "stablehlo.broadcast_in_dim"(%26) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %28 = "stablehlo.compare"(%25, %27) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %29 = "stablehlo.and"(%22, %28) : (tensor<4x6xi1>, tensor<4x6xi1>) -> tensor<4x6xi1>
    %30 = "stablehlo.slice"(%arg5) <{limit_indices = array<i64: 1, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<4x6xf32>) -> tensor<1x1xf32>
    %31 = "stablehlo.reshape"(%30) : (tensor<1x1xf32>) -> tensor<f32>
    %32 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %33 = "stablehlo.compare"(%31, %32) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %34 = "stablehlo.convert"(%33) : (tensor<i1>) -> tensor<i32>
    %35 = "stablehlo.case"(%34) ({
      %43 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %44 = "stablehlo.broadcast_in_dim"(%43) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
      %45 = "stablehlo.subtract"(%arg5, %44) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
      "stablehlo.return"(%45) : (tensor<4x6xf32>) -> ()
    }, {
      %40 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %41 = "stablehlo.broadcast_in_dim"(%40) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
      %42 = "stablehlo.multiply"(%arg5, %41) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
      "stablehlo.return"(%42) : (tensor<4x6xf32>) -> ()
    }) : (tensor<i32>) -> tensor<4x6xf32>
    %36 = "func.call"(%arg5) <{callee = @cumsum}> : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %37 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<5xi32>
    %38 = "stablehlo.transpose"(%arg5) <{permutation = array<i64: 1, 0>}> : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %39 = "stablehlo.dot_general"(%38, %arg5) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<6x4xf32>, tensor<4x6xf32>) -> tensor<6x6xf32>
    "func.return"(%9#0, %9#1, %10#0, %11, %12, %18, %29, %35, %36, %37, %39) : (tensor<4x6xi32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<5xi32>, tensor<6x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> tensor<4x6xi1>, res_attrs = [{}], sym_name = "isinf", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<4x6xf32>):
    %5 = "stablehlo.abs"(%arg4) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %6 = "stablehlo.constant"() <{value = dense<0x7F800000> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %8 = "stablehlo.compare"(%5, %7) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    "func.return"(%8) : (tensor<4x6xi1>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> tensor<4x6xf32>, res_attrs = [{}], sym_name = "cumsum", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<4x6xf32>):
    %4 = "func.call"(%arg3) <{callee = @cumsum_0}> : (tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%4) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x6xf32>) -> tensor<4x6xf32>, sym_name = "cumsum_0", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x6xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<f32>
    %2 = "stablehlo.reduce_window"(%arg0, %1) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [5, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 6>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %3 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%3) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<4x6xf32>
    "func.return"(%2) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
