module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xui32>) -> (tensor<64xf32> {jax.result_info = "result[0]"}, tensor<16xui32> {jax.result_info = "result[1]"}) {
    %0 = call @_normal(%arg0) : (tensor<2xui32>) -> tensor<64xf32>
    %1 = stablehlo.slice %arg0 [0:1] : (tensor<2xui32>) -> tensor<1xui32>
    %2 = stablehlo.reshape %1 : (tensor<1xui32>) -> tensor<ui32>
    %3 = stablehlo.slice %arg0 [1:2] : (tensor<2xui32>) -> tensor<1xui32>
    %4 = stablehlo.reshape %3 : (tensor<1xui32>) -> tensor<ui32>
    %5 = stablehlo.iota dim = 0 : tensor<16xui64>
    %c = stablehlo.constant dense<1> : tensor<ui64>
    %6 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui64>) -> tensor<16xui64>
    %7 = stablehlo.multiply %6, %5 : tensor<16xui64>
    %c_0 = stablehlo.constant dense<32> : tensor<ui64>
    %8 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui64>) -> tensor<16xui64>
    %9 = stablehlo.shift_right_logical %7, %8 : tensor<16xui64>
    %10 = stablehlo.convert %7 : (tensor<16xui64>) -> tensor<16xui32>
    %11 = stablehlo.convert %9 : (tensor<16xui64>) -> tensor<16xui32>
    %c_1 = stablehlo.constant dense<0> : tensor<ui32>
    %12 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %13:4 = call @philox4x32_0(%2, %4, %11, %10, %12, %12) : (tensor<ui32>, tensor<ui32>, tensor<16xui32>, tensor<16xui32>, tensor<16xui32>, tensor<16xui32>) -> (tensor<16xui32>, tensor<16xui32>, tensor<16xui32>, tensor<16xui32>)
    %14 = stablehlo.xor %13#0, %13#1 : tensor<16xui32>
    %15 = stablehlo.xor %14, %13#2 : tensor<16xui32>
    %16 = stablehlo.xor %15, %13#3 : tensor<16xui32>
    return %0, %16 : tensor<64xf32>, tensor<16xui32>
  }
  func.func private @_normal(%arg0: tensor<2xui32>) -> tensor<64xf32> {
    %0 = call @_normal_real(%arg0) : (tensor<2xui32>) -> tensor<64xf32>
    return %0 : tensor<64xf32>
  }
  func.func private @_normal_real(%arg0: tensor<2xui32>) -> tensor<64xf32> {
    %cst = stablehlo.constant dense<-0.99999994> : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = call @_uniform(%arg0, %cst, %cst_0) : (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<64xf32>
    %1 = chlo.erf_inv %0 : tensor<64xf32> -> tensor<64xf32>
    %cst_1 = stablehlo.constant dense<1.41421354> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %3 = stablehlo.multiply %2, %1 : tensor<64xf32>
    return %3 : tensor<64xf32>
  }
  func.func private @_uniform(%arg0: tensor<2xui32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<64xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %2 = stablehlo.slice %arg0 [0:1] : (tensor<2xui32>) -> tensor<1xui32>
    %3 = stablehlo.reshape %2 : (tensor<1xui32>) -> tensor<ui32>
    %4 = stablehlo.slice %arg0 [1:2] : (tensor<2xui32>) -> tensor<1xui32>
    %5 = stablehlo.reshape %4 : (tensor<1xui32>) -> tensor<ui32>
    %6 = stablehlo.iota dim = 0 : tensor<64xui64>
    %c = stablehlo.constant dense<1> : tensor<ui64>
    %7 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui64>) -> tensor<64xui64>
    %8 = stablehlo.multiply %7, %6 : tensor<64xui64>
    %c_0 = stablehlo.constant dense<32> : tensor<ui64>
    %9 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui64>) -> tensor<64xui64>
    %10 = stablehlo.shift_right_logical %8, %9 : tensor<64xui64>
    %11 = stablehlo.convert %8 : (tensor<64xui64>) -> tensor<64xui32>
    %12 = stablehlo.convert %10 : (tensor<64xui64>) -> tensor<64xui32>
    %c_1 = stablehlo.constant dense<0> : tensor<ui32>
    %13 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %14:4 = call @philox4x32(%3, %5, %12, %11, %13, %13) : (tensor<ui32>, tensor<ui32>, tensor<64xui32>, tensor<64xui32>, tensor<64xui32>, tensor<64xui32>) -> (tensor<64xui32>, tensor<64xui32>, tensor<64xui32>, tensor<64xui32>)
    %15 = stablehlo.xor %14#0, %14#1 : tensor<64xui32>
    %16 = stablehlo.xor %15, %14#2 : tensor<64xui32>
    %17 = stablehlo.xor %16, %14#3 : tensor<64xui32>
    %c_2 = stablehlo.constant dense<9> : tensor<ui32>
    %18 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %19 = stablehlo.shift_right_logical %17, %18 : tensor<64xui32>
    %c_3 = stablehlo.constant dense<1065353216> : tensor<ui32>
    %20 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %21 = stablehlo.or %19, %20 : tensor<64xui32>
    %22 = stablehlo.bitcast_convert %21 : (tensor<64xui32>) -> tensor<64xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %24 = stablehlo.subtract %22, %23 : tensor<64xf32>
    %25 = stablehlo.subtract %1, %0 : tensor<1xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0] : (tensor<1xf32>) -> tensor<64xf32>
    %27 = stablehlo.multiply %24, %26 : tensor<64xf32>
    %28 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<1xf32>) -> tensor<64xf32>
    %29 = stablehlo.add %27, %28 : tensor<64xf32>
    %30 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<1xf32>) -> tensor<64xf32>
    %31 = stablehlo.maximum %30, %29 : tensor<64xf32>
    return %31 : tensor<64xf32>
  }
  func.func private @philox4x32(%arg0: tensor<ui32>, %arg1: tensor<ui32>, %arg2: tensor<64xui32>, %arg3: tensor<64xui32>, %arg4: tensor<64xui32>, %arg5: tensor<64xui32>) -> (tensor<64xui32>, tensor<64xui32>, tensor<64xui32>, tensor<64xui32>) {
    %c = stablehlo.constant dense<3528531795> : tensor<ui32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %1 = stablehlo.multiply %0, %arg2 : tensor<64xui32>
    %c_0 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %3 = chlo.mulhi %2, %arg2 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %c_1 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %4 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %5 = stablehlo.multiply %4, %arg4 : tensor<64xui32>
    %c_2 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %7 = chlo.mulhi %6, %arg4 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %8 = stablehlo.xor %7, %arg3 : tensor<64xui32>
    %9 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %10 = stablehlo.xor %8, %9 : tensor<64xui32>
    %11 = stablehlo.xor %3, %arg5 : tensor<64xui32>
    %12 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %13 = stablehlo.xor %11, %12 : tensor<64xui32>
    %c_3 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %14 = stablehlo.add %arg0, %c_3 : tensor<ui32>
    %c_4 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %15 = stablehlo.add %arg1, %c_4 : tensor<ui32>
    %c_5 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %16 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %17 = stablehlo.multiply %16, %10 : tensor<64xui32>
    %c_6 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %18 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %19 = chlo.mulhi %18, %10 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %c_7 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %20 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %21 = stablehlo.multiply %20, %13 : tensor<64xui32>
    %c_8 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %22 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %23 = chlo.mulhi %22, %13 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %24 = stablehlo.xor %23, %5 : tensor<64xui32>
    %25 = stablehlo.broadcast_in_dim %14, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %26 = stablehlo.xor %24, %25 : tensor<64xui32>
    %27 = stablehlo.xor %19, %1 : tensor<64xui32>
    %28 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %29 = stablehlo.xor %27, %28 : tensor<64xui32>
    %c_9 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %30 = stablehlo.add %14, %c_9 : tensor<ui32>
    %c_10 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %31 = stablehlo.add %15, %c_10 : tensor<ui32>
    %c_11 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %32 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %33 = stablehlo.multiply %32, %26 : tensor<64xui32>
    %c_12 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %34 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %35 = chlo.mulhi %34, %26 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %c_13 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %36 = stablehlo.broadcast_in_dim %c_13, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %37 = stablehlo.multiply %36, %29 : tensor<64xui32>
    %c_14 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %38 = stablehlo.broadcast_in_dim %c_14, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %39 = chlo.mulhi %38, %29 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %40 = stablehlo.xor %39, %21 : tensor<64xui32>
    %41 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %42 = stablehlo.xor %40, %41 : tensor<64xui32>
    %43 = stablehlo.xor %35, %17 : tensor<64xui32>
    %44 = stablehlo.broadcast_in_dim %31, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %45 = stablehlo.xor %43, %44 : tensor<64xui32>
    %c_15 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %46 = stablehlo.add %30, %c_15 : tensor<ui32>
    %c_16 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %47 = stablehlo.add %31, %c_16 : tensor<ui32>
    %c_17 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %48 = stablehlo.broadcast_in_dim %c_17, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %49 = stablehlo.multiply %48, %42 : tensor<64xui32>
    %c_18 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %50 = stablehlo.broadcast_in_dim %c_18, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %51 = chlo.mulhi %50, %42 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %c_19 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %52 = stablehlo.broadcast_in_dim %c_19, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %53 = stablehlo.multiply %52, %45 : tensor<64xui32>
    %c_20 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %54 = stablehlo.broadcast_in_dim %c_20, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %55 = chlo.mulhi %54, %45 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %56 = stablehlo.xor %55, %37 : tensor<64xui32>
    %57 = stablehlo.broadcast_in_dim %46, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %58 = stablehlo.xor %56, %57 : tensor<64xui32>
    %59 = stablehlo.xor %51, %33 : tensor<64xui32>
    %60 = stablehlo.broadcast_in_dim %47, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %61 = stablehlo.xor %59, %60 : tensor<64xui32>
    %c_21 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %62 = stablehlo.add %46, %c_21 : tensor<ui32>
    %c_22 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %63 = stablehlo.add %47, %c_22 : tensor<ui32>
    %c_23 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %64 = stablehlo.broadcast_in_dim %c_23, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %65 = stablehlo.multiply %64, %58 : tensor<64xui32>
    %c_24 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %66 = stablehlo.broadcast_in_dim %c_24, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %67 = chlo.mulhi %66, %58 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %c_25 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %68 = stablehlo.broadcast_in_dim %c_25, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %69 = stablehlo.multiply %68, %61 : tensor<64xui32>
    %c_26 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %70 = stablehlo.broadcast_in_dim %c_26, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %71 = chlo.mulhi %70, %61 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %72 = stablehlo.xor %71, %53 : tensor<64xui32>
    %73 = stablehlo.broadcast_in_dim %62, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %74 = stablehlo.xor %72, %73 : tensor<64xui32>
    %75 = stablehlo.xor %67, %49 : tensor<64xui32>
    %76 = stablehlo.broadcast_in_dim %63, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %77 = stablehlo.xor %75, %76 : tensor<64xui32>
    %c_27 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %78 = stablehlo.add %62, %c_27 : tensor<ui32>
    %c_28 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %79 = stablehlo.add %63, %c_28 : tensor<ui32>
    %c_29 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %80 = stablehlo.broadcast_in_dim %c_29, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %81 = stablehlo.multiply %80, %74 : tensor<64xui32>
    %c_30 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %82 = stablehlo.broadcast_in_dim %c_30, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %83 = chlo.mulhi %82, %74 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %c_31 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %84 = stablehlo.broadcast_in_dim %c_31, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %85 = stablehlo.multiply %84, %77 : tensor<64xui32>
    %c_32 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %86 = stablehlo.broadcast_in_dim %c_32, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %87 = chlo.mulhi %86, %77 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %88 = stablehlo.xor %87, %69 : tensor<64xui32>
    %89 = stablehlo.broadcast_in_dim %78, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %90 = stablehlo.xor %88, %89 : tensor<64xui32>
    %91 = stablehlo.xor %83, %65 : tensor<64xui32>
    %92 = stablehlo.broadcast_in_dim %79, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %93 = stablehlo.xor %91, %92 : tensor<64xui32>
    %c_33 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %94 = stablehlo.add %78, %c_33 : tensor<ui32>
    %c_34 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %95 = stablehlo.add %79, %c_34 : tensor<ui32>
    %c_35 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %96 = stablehlo.broadcast_in_dim %c_35, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %97 = stablehlo.multiply %96, %90 : tensor<64xui32>
    %c_36 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %98 = stablehlo.broadcast_in_dim %c_36, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %99 = chlo.mulhi %98, %90 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %c_37 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %100 = stablehlo.broadcast_in_dim %c_37, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %101 = stablehlo.multiply %100, %93 : tensor<64xui32>
    %c_38 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %102 = stablehlo.broadcast_in_dim %c_38, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %103 = chlo.mulhi %102, %93 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %104 = stablehlo.xor %103, %85 : tensor<64xui32>
    %105 = stablehlo.broadcast_in_dim %94, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %106 = stablehlo.xor %104, %105 : tensor<64xui32>
    %107 = stablehlo.xor %99, %81 : tensor<64xui32>
    %108 = stablehlo.broadcast_in_dim %95, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %109 = stablehlo.xor %107, %108 : tensor<64xui32>
    %c_39 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %110 = stablehlo.add %94, %c_39 : tensor<ui32>
    %c_40 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %111 = stablehlo.add %95, %c_40 : tensor<ui32>
    %c_41 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %112 = stablehlo.broadcast_in_dim %c_41, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %113 = stablehlo.multiply %112, %106 : tensor<64xui32>
    %c_42 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %114 = stablehlo.broadcast_in_dim %c_42, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %115 = chlo.mulhi %114, %106 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %c_43 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %116 = stablehlo.broadcast_in_dim %c_43, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %117 = stablehlo.multiply %116, %109 : tensor<64xui32>
    %c_44 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %118 = stablehlo.broadcast_in_dim %c_44, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %119 = chlo.mulhi %118, %109 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %120 = stablehlo.xor %119, %101 : tensor<64xui32>
    %121 = stablehlo.broadcast_in_dim %110, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %122 = stablehlo.xor %120, %121 : tensor<64xui32>
    %123 = stablehlo.xor %115, %97 : tensor<64xui32>
    %124 = stablehlo.broadcast_in_dim %111, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %125 = stablehlo.xor %123, %124 : tensor<64xui32>
    %c_45 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %126 = stablehlo.add %110, %c_45 : tensor<ui32>
    %c_46 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %127 = stablehlo.add %111, %c_46 : tensor<ui32>
    %c_47 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %128 = stablehlo.broadcast_in_dim %c_47, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %129 = stablehlo.multiply %128, %122 : tensor<64xui32>
    %c_48 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %130 = stablehlo.broadcast_in_dim %c_48, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %131 = chlo.mulhi %130, %122 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %c_49 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %132 = stablehlo.broadcast_in_dim %c_49, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %133 = stablehlo.multiply %132, %125 : tensor<64xui32>
    %c_50 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %134 = stablehlo.broadcast_in_dim %c_50, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %135 = chlo.mulhi %134, %125 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %136 = stablehlo.xor %135, %117 : tensor<64xui32>
    %137 = stablehlo.broadcast_in_dim %126, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %138 = stablehlo.xor %136, %137 : tensor<64xui32>
    %139 = stablehlo.xor %131, %113 : tensor<64xui32>
    %140 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %141 = stablehlo.xor %139, %140 : tensor<64xui32>
    %c_51 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %142 = stablehlo.add %126, %c_51 : tensor<ui32>
    %c_52 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %143 = stablehlo.add %127, %c_52 : tensor<ui32>
    %c_53 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %144 = stablehlo.broadcast_in_dim %c_53, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %145 = stablehlo.multiply %144, %138 : tensor<64xui32>
    %c_54 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %146 = stablehlo.broadcast_in_dim %c_54, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %147 = chlo.mulhi %146, %138 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %c_55 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %148 = stablehlo.broadcast_in_dim %c_55, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %149 = stablehlo.multiply %148, %141 : tensor<64xui32>
    %c_56 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %150 = stablehlo.broadcast_in_dim %c_56, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %151 = chlo.mulhi %150, %141 : tensor<64xui32>, tensor<64xui32> -> tensor<64xui32>
    %152 = stablehlo.xor %151, %133 : tensor<64xui32>
    %153 = stablehlo.broadcast_in_dim %142, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %154 = stablehlo.xor %152, %153 : tensor<64xui32>
    %155 = stablehlo.xor %147, %129 : tensor<64xui32>
    %156 = stablehlo.broadcast_in_dim %143, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %157 = stablehlo.xor %155, %156 : tensor<64xui32>
    return %154, %149, %157, %145 : tensor<64xui32>, tensor<64xui32>, tensor<64xui32>, tensor<64xui32>
  }
  func.func private @philox4x32_0(%arg0: tensor<ui32>, %arg1: tensor<ui32>, %arg2: tensor<16xui32>, %arg3: tensor<16xui32>, %arg4: tensor<16xui32>, %arg5: tensor<16xui32>) -> (tensor<16xui32>, tensor<16xui32>, tensor<16xui32>, tensor<16xui32>) {
    %c = stablehlo.constant dense<3528531795> : tensor<ui32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %1 = stablehlo.multiply %0, %arg2 : tensor<16xui32>
    %c_0 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %3 = chlo.mulhi %2, %arg2 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %c_1 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %4 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %5 = stablehlo.multiply %4, %arg4 : tensor<16xui32>
    %c_2 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %7 = chlo.mulhi %6, %arg4 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %8 = stablehlo.xor %7, %arg3 : tensor<16xui32>
    %9 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %10 = stablehlo.xor %8, %9 : tensor<16xui32>
    %11 = stablehlo.xor %3, %arg5 : tensor<16xui32>
    %12 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %13 = stablehlo.xor %11, %12 : tensor<16xui32>
    %c_3 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %14 = stablehlo.add %arg0, %c_3 : tensor<ui32>
    %c_4 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %15 = stablehlo.add %arg1, %c_4 : tensor<ui32>
    %c_5 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %16 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %17 = stablehlo.multiply %16, %10 : tensor<16xui32>
    %c_6 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %18 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %19 = chlo.mulhi %18, %10 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %c_7 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %20 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %21 = stablehlo.multiply %20, %13 : tensor<16xui32>
    %c_8 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %22 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %23 = chlo.mulhi %22, %13 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %24 = stablehlo.xor %23, %5 : tensor<16xui32>
    %25 = stablehlo.broadcast_in_dim %14, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %26 = stablehlo.xor %24, %25 : tensor<16xui32>
    %27 = stablehlo.xor %19, %1 : tensor<16xui32>
    %28 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %29 = stablehlo.xor %27, %28 : tensor<16xui32>
    %c_9 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %30 = stablehlo.add %14, %c_9 : tensor<ui32>
    %c_10 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %31 = stablehlo.add %15, %c_10 : tensor<ui32>
    %c_11 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %32 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %33 = stablehlo.multiply %32, %26 : tensor<16xui32>
    %c_12 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %34 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %35 = chlo.mulhi %34, %26 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %c_13 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %36 = stablehlo.broadcast_in_dim %c_13, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %37 = stablehlo.multiply %36, %29 : tensor<16xui32>
    %c_14 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %38 = stablehlo.broadcast_in_dim %c_14, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %39 = chlo.mulhi %38, %29 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %40 = stablehlo.xor %39, %21 : tensor<16xui32>
    %41 = stablehlo.broadcast_in_dim %30, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %42 = stablehlo.xor %40, %41 : tensor<16xui32>
    %43 = stablehlo.xor %35, %17 : tensor<16xui32>
    %44 = stablehlo.broadcast_in_dim %31, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %45 = stablehlo.xor %43, %44 : tensor<16xui32>
    %c_15 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %46 = stablehlo.add %30, %c_15 : tensor<ui32>
    %c_16 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %47 = stablehlo.add %31, %c_16 : tensor<ui32>
    %c_17 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %48 = stablehlo.broadcast_in_dim %c_17, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %49 = stablehlo.multiply %48, %42 : tensor<16xui32>
    %c_18 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %50 = stablehlo.broadcast_in_dim %c_18, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %51 = chlo.mulhi %50, %42 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %c_19 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %52 = stablehlo.broadcast_in_dim %c_19, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %53 = stablehlo.multiply %52, %45 : tensor<16xui32>
    %c_20 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %54 = stablehlo.broadcast_in_dim %c_20, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %55 = chlo.mulhi %54, %45 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %56 = stablehlo.xor %55, %37 : tensor<16xui32>
    %57 = stablehlo.broadcast_in_dim %46, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %58 = stablehlo.xor %56, %57 : tensor<16xui32>
    %59 = stablehlo.xor %51, %33 : tensor<16xui32>
    %60 = stablehlo.broadcast_in_dim %47, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %61 = stablehlo.xor %59, %60 : tensor<16xui32>
    %c_21 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %62 = stablehlo.add %46, %c_21 : tensor<ui32>
    %c_22 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %63 = stablehlo.add %47, %c_22 : tensor<ui32>
    %c_23 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %64 = stablehlo.broadcast_in_dim %c_23, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %65 = stablehlo.multiply %64, %58 : tensor<16xui32>
    %c_24 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %66 = stablehlo.broadcast_in_dim %c_24, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %67 = chlo.mulhi %66, %58 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %c_25 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %68 = stablehlo.broadcast_in_dim %c_25, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %69 = stablehlo.multiply %68, %61 : tensor<16xui32>
    %c_26 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %70 = stablehlo.broadcast_in_dim %c_26, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %71 = chlo.mulhi %70, %61 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %72 = stablehlo.xor %71, %53 : tensor<16xui32>
    %73 = stablehlo.broadcast_in_dim %62, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %74 = stablehlo.xor %72, %73 : tensor<16xui32>
    %75 = stablehlo.xor %67, %49 : tensor<16xui32>
    %76 = stablehlo.broadcast_in_dim %63, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %77 = stablehlo.xor %75, %76 : tensor<16xui32>
    %c_27 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %78 = stablehlo.add %62, %c_27 : tensor<ui32>
    %c_28 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %79 = stablehlo.add %63, %c_28 : tensor<ui32>
    %c_29 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %80 = stablehlo.broadcast_in_dim %c_29, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %81 = stablehlo.multiply %80, %74 : tensor<16xui32>
    %c_30 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %82 = stablehlo.broadcast_in_dim %c_30, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %83 = chlo.mulhi %82, %74 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %c_31 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %84 = stablehlo.broadcast_in_dim %c_31, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %85 = stablehlo.multiply %84, %77 : tensor<16xui32>
    %c_32 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %86 = stablehlo.broadcast_in_dim %c_32, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %87 = chlo.mulhi %86, %77 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %88 = stablehlo.xor %87, %69 : tensor<16xui32>
    %89 = stablehlo.broadcast_in_dim %78, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %90 = stablehlo.xor %88, %89 : tensor<16xui32>
    %91 = stablehlo.xor %83, %65 : tensor<16xui32>
    %92 = stablehlo.broadcast_in_dim %79, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %93 = stablehlo.xor %91, %92 : tensor<16xui32>
    %c_33 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %94 = stablehlo.add %78, %c_33 : tensor<ui32>
    %c_34 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %95 = stablehlo.add %79, %c_34 : tensor<ui32>
    %c_35 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %96 = stablehlo.broadcast_in_dim %c_35, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %97 = stablehlo.multiply %96, %90 : tensor<16xui32>
    %c_36 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %98 = stablehlo.broadcast_in_dim %c_36, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %99 = chlo.mulhi %98, %90 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %c_37 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %100 = stablehlo.broadcast_in_dim %c_37, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %101 = stablehlo.multiply %100, %93 : tensor<16xui32>
    %c_38 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %102 = stablehlo.broadcast_in_dim %c_38, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %103 = chlo.mulhi %102, %93 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %104 = stablehlo.xor %103, %85 : tensor<16xui32>
    %105 = stablehlo.broadcast_in_dim %94, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %106 = stablehlo.xor %104, %105 : tensor<16xui32>
    %107 = stablehlo.xor %99, %81 : tensor<16xui32>
    %108 = stablehlo.broadcast_in_dim %95, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %109 = stablehlo.xor %107, %108 : tensor<16xui32>
    %c_39 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %110 = stablehlo.add %94, %c_39 : tensor<ui32>
    %c_40 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %111 = stablehlo.add %95, %c_40 : tensor<ui32>
    %c_41 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %112 = stablehlo.broadcast_in_dim %c_41, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %113 = stablehlo.multiply %112, %106 : tensor<16xui32>
    %c_42 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %114 = stablehlo.broadcast_in_dim %c_42, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %115 = chlo.mulhi %114, %106 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %c_43 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %116 = stablehlo.broadcast_in_dim %c_43, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %117 = stablehlo.multiply %116, %109 : tensor<16xui32>
    %c_44 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %118 = stablehlo.broadcast_in_dim %c_44, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %119 = chlo.mulhi %118, %109 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %120 = stablehlo.xor %119, %101 : tensor<16xui32>
    %121 = stablehlo.broadcast_in_dim %110, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %122 = stablehlo.xor %120, %121 : tensor<16xui32>
    %123 = stablehlo.xor %115, %97 : tensor<16xui32>
    %124 = stablehlo.broadcast_in_dim %111, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %125 = stablehlo.xor %123, %124 : tensor<16xui32>
    %c_45 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %126 = stablehlo.add %110, %c_45 : tensor<ui32>
    %c_46 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %127 = stablehlo.add %111, %c_46 : tensor<ui32>
    %c_47 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %128 = stablehlo.broadcast_in_dim %c_47, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %129 = stablehlo.multiply %128, %122 : tensor<16xui32>
    %c_48 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %130 = stablehlo.broadcast_in_dim %c_48, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %131 = chlo.mulhi %130, %122 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %c_49 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %132 = stablehlo.broadcast_in_dim %c_49, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %133 = stablehlo.multiply %132, %125 : tensor<16xui32>
    %c_50 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %134 = stablehlo.broadcast_in_dim %c_50, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %135 = chlo.mulhi %134, %125 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %136 = stablehlo.xor %135, %117 : tensor<16xui32>
    %137 = stablehlo.broadcast_in_dim %126, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %138 = stablehlo.xor %136, %137 : tensor<16xui32>
    %139 = stablehlo.xor %131, %113 : tensor<16xui32>
    %140 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %141 = stablehlo.xor %139, %140 : tensor<16xui32>
    %c_51 = stablehlo.constant dense<2654435769> : tensor<ui32>
    %142 = stablehlo.add %126, %c_51 : tensor<ui32>
    %c_52 = stablehlo.constant dense<3144134277> : tensor<ui32>
    %143 = stablehlo.add %127, %c_52 : tensor<ui32>
    %c_53 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %144 = stablehlo.broadcast_in_dim %c_53, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %145 = stablehlo.multiply %144, %138 : tensor<16xui32>
    %c_54 = stablehlo.constant dense<3528531795> : tensor<ui32>
    %146 = stablehlo.broadcast_in_dim %c_54, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %147 = chlo.mulhi %146, %138 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %c_55 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %148 = stablehlo.broadcast_in_dim %c_55, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %149 = stablehlo.multiply %148, %141 : tensor<16xui32>
    %c_56 = stablehlo.constant dense<3449720151> : tensor<ui32>
    %150 = stablehlo.broadcast_in_dim %c_56, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %151 = chlo.mulhi %150, %141 : tensor<16xui32>, tensor<16xui32> -> tensor<16xui32>
    %152 = stablehlo.xor %151, %133 : tensor<16xui32>
    %153 = stablehlo.broadcast_in_dim %142, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %154 = stablehlo.xor %152, %153 : tensor<16xui32>
    %155 = stablehlo.xor %147, %129 : tensor<16xui32>
    %156 = stablehlo.broadcast_in_dim %143, dims = [] : (tensor<ui32>) -> tensor<16xui32>
    %157 = stablehlo.xor %155, %156 : tensor<16xui32>
    return %154, %149, %157, %145 : tensor<16xui32>, tensor<16xui32>, tensor<16xui32>, tensor<16xui32>
  }
}
