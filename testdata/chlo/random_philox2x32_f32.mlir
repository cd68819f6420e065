module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1xui32>) -> (tensor<64xf32> {jax.result_info = "result[0]"}, tensor<16xui32> {jax.result_info = "result[1]"}) {
    %0 = call @_normal(%arg0) : (tensor<1xui32>) -> tensor<64xf32>
    %1 = stablehlo.iota dim = 0 : tensor<16xui64>
    %c = stablehlo.constant dense<1> : tensor<ui64>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui64>) -> tensor<16xui64>
    %3 = stablehlo.multiply %2, %1 : tensor<16xui64>
    %c_0 = stablehlo.constant dense<32> : tensor<ui64>
    %4 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui64>) -> tensor<16xui64>
    %5 = stablehlo.shift_right_logical %3, %4 : tensor<16xui64>
    %6 = stablehlo.convert %3 : (tensor<16xui64>) -> tensor<16xui32>
    %7 = stablehlo.convert %5 : (tensor<16xui64>) -> tensor<16xui32>
    %8 = stablehlo.reshape %arg0 : (tensor<1xui32>) -> tensor<ui32>
    %9:2 = call @philox2x32_0(%8, %7, %6) : (tensor<ui32>, tensor<16xui32>, tensor<16xui32>) -> (tensor<16xui32>, tensor<16xui32>)
    %10 = stablehlo.xor %9#0, %9#1 : tensor<16xui32>
    return %0, %10 : tensor<64xf32>, tensor<16xui32>
  }
  func.func private @_normal(%arg0: tensor<1xui32>) -> tensor<64xf32> {
    %0 = call @_normal_real(%arg0) : (tensor<1xui32>) -> tensor<64xf32>
    return %0 : tensor<64xf32>
  }
  func.func private @_normal_real(%arg0: tensor<1xui32>) -> tensor<64xf32> {
    %cst = stablehlo.constant dense<-0.99999994> : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = call @_uniform(%arg0, %cst, %cst_0) : (tensor<1xui32>, tensor<f32>, tensor<f32>) -> tensor<64xf32>
    %1 = chlo.erf_inv %0 : tensor<64xf32> -> tensor<64xf32>
    %cst_1 = stablehlo.constant dense<1.41421354> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %3 = stablehlo.multiply %2, %1 : tensor<64xf32>
    return %3 : tensor<64xf32>
  }
  func.func private @_uniform(%arg0: tensor<1xui32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<64xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %2 = stablehlo.iota dim = 0 : tensor<64xui64>
    %c = stablehlo.constant dense<1> : tensor<ui64>
    %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui64>) -> tensor<64xui64>
    %4 = stablehlo.multiply %3, %2 : tensor<64xui64>
    %c_0 = stablehlo.constant dense<32> : tensor<ui64>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui64>) -> tensor<64xui64>
    %6 = stablehlo.shift_right_logical %4, %5 : tensor<64xui64>
    %7 = stablehlo.convert %4 : (tensor<64xui64>) -> tensor<64xui32>
    %8 = stablehlo.convert %6 : (tensor<64xui64>) -> tensor<64xui32>
    %9 = stablehlo.reshape %arg0 : (tensor<1xui32>) -> tensor<ui32>
    %10:2 = call @philox2x32(%9, %8, %7) : (tensor<ui32>, tensor<64xui32>, tensor<64xui32>) -> (tensor<64xui32>, tensor<64xui32>)
    %11 = stablehlo.xor %10#0, %10#1 : tensor<64xui32>
    %c_1 = stablehlo.constant dense<9> : tensor<ui32>
    %12 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %13 = stablehlo.shift_right_logical %11, %12 : tensor<64xui32>
    %c_2 = stablehlo.constant dense<1065353216> : tensor<ui32>
    %14 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %15 = stablehlo.or %13, %14 : tensor<64xui32>
    %16 = stablehlo.bitcast_convert %15 : (tensor<64xui32>) -> tensor<64xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %18 = stablehlo.subtract %16, %17 : tensor<64xf32>
    %19 = stablehlo.subtract %1, %0 : tensor<1xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0] : (tensor<1xf32>) -> tensor<64xf32>
    %21 = stablehlo.multiply %18, %20 : tensor<64xf32>
    %22 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<1xf32>) -> tensor<64xf32>
    %23 = stablehlo.add %21, %22 : tensor<64xf32>
    %24 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<1xf32>) -> tensor<64xf32>
    %25 = stablehlo.maximum %24, %23 : tensor<64xf32>
    return %25 : tensor<64xf32>
  }
  func.func private @philox2x32(%arg0: tensor<ui32>, %arg1: tensor<64xui32>, %arg2: tensor<64xui32>) -> (tensor<64xui32>, tensor<64xui32>) {
    %c = stablehlo.constant dense<3528905107> : tensor<ui32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<64xui32>
    %c_0 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %3 = chlo.mulhi %2, %arg1 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %4 = stablehlo.xor %3, %arg2 : tensor<64xui32>
    %5 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %6 = stablehlo.xor %4, %5 : tensor<64xui32>
    %c_1 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %7 = stablehlo.add %arg0, %c_1 : tensor<ui32>
    %c_2 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %8 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %9 = stablehlo.multiply %8, %6 : tensor<64xui32>
    %c_3 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %10 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %11 = chlo.mulhi %10, %6 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %12 = stablehlo.xor %11, %1 : tensor<64xui32>
    %13 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %14 = stablehlo.xor %12, %13 : tensor<64xui32>
    %c_4 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %15 = stablehlo.add %7, %c_4 : tensor<ui32>
    %c_5 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %16 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %17 = stablehlo.multiply %16, %14 : tensor<64xui32>
    %c_6 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %18 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %19 = chlo.mulhi %18, %14 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %20 = stablehlo.xor %19, %9 : tensor<64xui32>
    %21 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %22 = stablehlo.xor %20, %21 : tensor<64xui32>
    %c_7 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %23 = stablehlo.add %15, %c_7 : tensor<ui32>
    %c_8 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %24 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %25 = stablehlo.multiply %24, %22 : tensor<64xui32>
    %c_9 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %26 = stablehlo.broadcast_in_dim %c_9, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %27 = chlo.mulhi %26, %22 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %28 = stablehlo.xor %27, %17 : tensor<64xui32>
    %29 = stablehlo.broadcast_in_dim %23, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %30 = stablehlo.xor %28, %29 : tensor<64xui32>
    %c_10 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %31 = stablehlo.add %23, %c_10 : tensor<ui32>
    %c_11 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %32 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %33 = stablehlo.multiply %32, %30 : tensor<64xui32>
    %c_12 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %34 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %35 = chlo.mulhi %34, %30 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %36 = stablehlo.xor %35, %25 : tensor<64xui32>
    %37 = stablehlo.broadcast_in_dim %31, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %38 = stablehlo.xor %36, %37 : tensor<64xui32>
    %c_13 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %39 = stablehlo.add %31, %c_13 : tensor<ui32>
    %c_14 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %40 = stablehlo.broadcast_in_dim %c_14, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %41 = stablehlo.multiply %40, %38 : tensor<64xui32>
    %c_15 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %42 = stablehlo.broadcast_in_dim %c_15, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %43 = chlo.mulhi %42, %38 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %44 = stablehlo.xor %43, %33 : tensor<64xui32>
    %45 = stablehlo.broadcast_in_dim %39, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %46 = stablehlo.xor %44, %45 : tensor<64xui32>
    %c_16 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %47 = stablehlo.add %39, %c_16 : tensor<ui32>
    %c_17 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %48 = stablehlo.broadcast_in_dim %c_17, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %49 = stablehlo.multiply %48, %46 : tensor<64xui32>
    %c_18 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %50 = stablehlo.broadcast_in_dim %c_18, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %51 = chlo.mulhi %50, %46 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %52 = stablehlo.xor %51, %41 : tensor<64xui32>
    %53 = stablehlo.broadcast_in_dim %47, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %54 = stablehlo.xor %52, %53 : tensor<64xui32>
    %c_19 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %55 = stablehlo.add %47, %c_19 : tensor<ui32>
    %c_20 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %56 = stablehlo.broadcast_in_dim %c_20, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %57 = stablehlo.multiply %56, %54 : tensor<64xui32>
    %c_21 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %58 = stablehlo.broadcast_in_dim %c_21, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %59 = chlo.mulhi %58, %54 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %60 = stablehlo.xor %59, %49 : tensor<64xui32>
    %61 = stablehlo.broadcast_in_dim %55, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %62 = stablehlo.xor %60, %61 : tensor<64xui32>
    %c_22 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %63 = stablehlo.add %55, %c_22 : tensor<ui32>
    %c_23 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %64 = stablehlo.broadcast_in_dim %c_23, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %65 = stablehlo.multiply %64, %62 : tensor<64xui32>
    %c_24 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %66 = stablehlo.broadcast_in_dim %c_24, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %67 = chlo.mulhi %66, %62 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %68 = stablehlo.xor %67, %57 : tensor<64xui32>
    %69 = stablehlo.broadcast_in_dim %63, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %70 = stablehlo.xor %68, %69 : tensor<64xui32>
    %c_25 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %71 = stablehlo.add %63, %c_25 : tensor<ui32>
    %c_26 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %72 = stablehlo.broadcast_in_dim %c_26, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %73 = stablehlo.multiply %72, %70 : tensor<64xui32>
    %c_27 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %74 = stablehlo.broadcast_in_dim %c_27, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %75 = chlo.mulhi %74, %70 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %76 = stablehlo.xor %75, %65 : tensor<64xui32>
    %77 = stablehlo.broadcast_in_dim %71, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %78 = stablehlo.xor %76, %77 : tensor<64xui32>
    return %78, %73 : tensor<64xui32>, tensor<64xui32>
  }
  func.func private @philox2x32_0(%arg0: tensor<ui32>, %arg1: tensor<16xui32>, %arg2: tensor<16xui32>) -> (tensor<16xui32>, tensor<16xui32>) {
    %c = stablehlo.constant dense<3528905107> : tensor<ui32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<16xui32>
    %c_0 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %3 = chlo.mulhi %2, %arg1 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %4 = stablehlo.xor %3, %arg2 : tensor<16xui32>
    %5 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %6 = stablehlo.xor %4, %5 : tensor<16xui32>
    %c_1 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %7 = stablehlo.add %arg0, %c_1 : tensor<ui32>
    %c_2 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %8 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %9 = stablehlo.multiply %8, %6 : tensor<16xui32>
    %c_3 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %10 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %11 = chlo.mulhi %10, %6 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %12 = stablehlo.xor %11, %1 : tensor<16xui32>
    %13 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %14 = stablehlo.xor %12, %13 : tensor<16xui32>
    %c_4 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %15 = stablehlo.add %7, %c_4 : tensor<ui32>
    %c_5 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %16 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %17 = stablehlo.multiply %16, %14 : tensor<16xui32>
    %c_6 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %18 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %19 = chlo.mulhi %18, %14 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %20 = stablehlo.xor %19, %9 : tensor<16xui32>
    %21 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %22 = stablehlo.xor %20, %21 : tensor<16xui32>
    %c_7 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %23 = stablehlo.add %15, %c_7 : tensor<ui32>
    %c_8 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %24 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %25 = stablehlo.multiply %24, %22 : tensor<16xui32>
    %c_9 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %26 = stablehlo.broadcast_in_dim %c_9, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %27 = chlo.mulhi %26, %22 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %28 = stablehlo.xor %27, %17 : tensor<16xui32>
    %29 = stablehlo.broadcast_in_dim %23, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %30 = stablehlo.xor %28, %29 : tensor<16xui32>
    %c_10 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %31 = stablehlo.add %23, %c_10 : tensor<ui32>
    %c_11 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %32 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %33 = stablehlo.multiply %32, %30 : tensor<16xui32>
    %c_12 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %34 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %35 = chlo.mulhi %34, %30 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %36 = stablehlo.xor %35, %25 : tensor<16xui32>
    %37 = stablehlo.broadcast_in_dim %31, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %38 = stablehlo.xor %36, %37 : tensor<16xui32>
    %c_13 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %39 = stablehlo.add %31, %c_13 : tensor<ui32>
    %c_14 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %40 = stablehlo.broadcast_in_dim %c_14, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %41 = stablehlo.multiply %40, %38 : tensor<16xui32>
    %c_15 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %42 = stablehlo.broadcast_in_dim %c_15, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %43 = chlo.mulhi %42, %38 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %44 = stablehlo.xor %43, %33 : tensor<16xui32>
    %45 = stablehlo.broadcast_in_dim %39, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %46 = stablehlo.xor %44, %45 : tensor<16xui32>
    %c_16 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %47 = stablehlo.add %39, %c_16 : tensor<ui32>
    %c_17 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %48 = stablehlo.broadcast_in_dim %c_17, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %49 = stablehlo.multiply %48, %46 : tensor<16xui32>
    %c_18 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %50 = stablehlo.broadcast_in_dim %c_18, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %51 = chlo.mulhi %50, %46 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %52 = stablehlo.xor %51, %41 : tensor<16xui32>
    %53 = stablehlo.broadcast_in_dim %47, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %54 = stablehlo.xor %52, %53 : tensor<16xui32>
    %c_19 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %55 = stablehlo.add %47, %c_19 : tensor<ui32>
    %c_20 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %56 = stablehlo.broadcast_in_dim %c_20, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %57 = stablehlo.multiply %56, %54 : tensor<16xui32>
    %c_21 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %58 = stablehlo.broadcast_in_dim %c_21, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %59 = chlo.mulhi %58, %54 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %60 = stablehlo.xor %59, %49 : tensor<16xui32>
    %61 = stablehlo.broadcast_in_dim %55, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %62 = stablehlo.xor %60, %61 : tensor<16xui32>
    %c_22 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %63 = stablehlo.add %55, %c_22 : tensor<ui32>
    %c_23 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %64 = stablehlo.broadcast_in_dim %c_23, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %65 = stablehlo.multiply %64, %62 : tensor<16xui32>
    %c_24 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %66 = stablehlo.broadcast_in_dim %c_24, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %67 = chlo.mulhi %66, %62 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %68 = stablehlo.xor %67, %57 : tensor<16xui32>
    %69 = stablehlo.broadcast_in_dim %63, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %70 = stablehlo.xor %68, %69 : tensor<16xui32>
    %c_25 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %71 = stablehlo.add %63, %c_25 : tensor<ui32>
    %c_26 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %72 = stablehlo.broadcast_in_dim %c_26, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %73 = stablehlo.multiply %72, %70 : tensor<16xui32>
    %c_27 = stablehlo.constant dense<3528905107> : tensor<ui32>
    %74 = stablehlo.broadcast_in_dim %c_27, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %75 = chlo.mulhi %74, %70 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %76 = stablehlo.xor %75, %65 : tensor<16xui32>
    %77 = stablehlo.broadcast_in_dim %71, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %78 = stablehlo.xor %76, %77 : tensor<16xui32>
    return %78, %73 : tensor<16xui32>, tensor<16xui32>
  }
}
