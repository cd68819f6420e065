module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x6xf32>, %arg1: tensor<6x3xf32>) -> (tensor<6x3xf32> {jax.result_info = "result"}) {
    %0 = call @tril(%arg0) : (tensor<6x6xf32>) -> tensor<6x6xf32>
    %1 = stablehlo.iota dim = 0 : tensor<6x6xi32>
    %2 = stablehlo.iota dim = 1 : tensor<6x6xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<6x6xi32>
    %4 = stablehlo.add %1, %3 : tensor<6x6xi32>
    %5 = stablehlo.compare EQ, %4, %2, SIGNED : (tensor<6x6xi32>, tensor<6x6xi32>) -> tensor<6x6xi1>
    %6 = stablehlo.convert %5 : (tensor<6x6xi1>) -> tensor<6x6xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x6xf32>
    %8 = stablehlo.multiply %7, %6 : tensor<6x6xf32>
    %9 = stablehlo.add %0, %8 : tensor<6x6xf32>
    %10 = call @_solve_triangular(%9, %arg1) : (tensor<6x6xf32>, tensor<6x3xf32>) -> tensor<6x3xf32>
    return %10 : tensor<6x3xf32>
  }
  func.func private @tril(%arg0: tensor<6x6xf32>) -> tensor<6x6xf32> {
    %0 = stablehlo.iota dim = 0 : tensor<6x6xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<6x6xi32>
    %2 = stablehlo.add %0, %1 : tensor<6x6xi32>
    %3 = stablehlo.iota dim = 1 : tensor<6x6xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<6x6xi32>, tensor<6x6xi32>) -> tensor<6x6xi1>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x6xf32>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<6x6xi1>, tensor<6x6xf32>
    return %6 : tensor<6x6xf32>
  }
  func.func private @_solve_triangular(%arg0: tensor<6x6xf32>, %arg1: tensor<6x3xf32>) -> tensor<6x3xf32> {
    %0 = stablehlo.custom_call @lapack_strsm_ffi(%arg0, %arg1) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=6, j=6, k=6, l=3, m=6, n=3}, custom>} : (tensor<6x6xf32>, tensor<6x3xf32>) -> tensor<6x3xf32>
    return %0 : tensor<6x3xf32>
  }
}
