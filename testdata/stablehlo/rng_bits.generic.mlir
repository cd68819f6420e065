"builtin.module"() <{sym_name = "jit_rng"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4xui32>) -> tensor<8xui32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xui32>):
    %0 = "stablehlo.reshape"(%arg0) : (tensor<4xui32>) -> tensor<2x2xui32>
    %1 = "stablehlo.bitcast_convert"(%0) : (tensor<2x2xui32>) -> tensor<2xui64>
    %2:2 = "stablehlo.rng_bit_generator"(%1) <{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<8xui32>)
    %3 = "stablehlo.bitcast_convert"(%2#0) : (tensor<2xui64>) -> tensor<2x2xui32>
    %4 = "stablehlo.reshape"(%3) : (tensor<2x2xui32>) -> tensor<4xui32>
    "func.return"(%2#1) : (tensor<8xui32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
