module @jit_block attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x32xbf16>, %arg1: tensor<32x32xbf16>, %arg2: tensor<32x32xbf16>, %arg3: tensor<32x32xbf16>, %arg4: tensor<32x32xbf16>, %arg5: tensor<32x64xbf16>, %arg6: tensor<64x32xbf16>, %arg7: tensor<32xbf16>) -> (tensor<8x32xbf16> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<8x32xbf16>) -> tensor<8x32xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %cst_0 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %4 = stablehlo.divide %2, %3 : tensor<8x1xf32>
    %5 = stablehlo.convert %4 : (tensor<8x1xf32>) -> tensor<8x1xbf16>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0, 1] : (tensor<8x1xbf16>) -> tensor<8x32xbf16>
    %7 = stablehlo.subtract %arg0, %6 : tensor<8x32xbf16>
    %8 = stablehlo.multiply %7, %7 : tensor<8x32xbf16>
    %9 = stablehlo.convert %8 : (tensor<8x32xbf16>) -> tensor<8x32xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.reduce(%9 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %cst_2 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %13 = stablehlo.divide %11, %12 : tensor<8x1xf32>
    %14 = stablehlo.convert %13 : (tensor<8x1xf32>) -> tensor<8x1xbf16>
    %15 = stablehlo.broadcast_in_dim %5, dims = [0, 1] : (tensor<8x1xbf16>) -> tensor<8x32xbf16>
    %16 = stablehlo.subtract %arg0, %15 : tensor<8x32xbf16>
    %cst_3 = stablehlo.constant dense<1.001360e-05> : tensor<bf16>
    %17 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<bf16>) -> tensor<8x1xbf16>
    %18 = stablehlo.add %14, %17 : tensor<8x1xbf16>
    %19 = stablehlo.rsqrt %18 : tensor<8x1xbf16>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<8x1xbf16>) -> tensor<8x32xbf16>
    %21 = stablehlo.multiply %16, %20 : tensor<8x32xbf16>
    %22 = stablehlo.broadcast_in_dim %arg7, dims = [1] : (tensor<32xbf16>) -> tensor<1x32xbf16>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1] : (tensor<1x32xbf16>) -> tensor<8x32xbf16>
    %24 = stablehlo.multiply %21, %23 : tensor<8x32xbf16>
    %25 = stablehlo.dot_general %24, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x32xbf16>, tensor<32x32xbf16>) -> tensor<8x32xbf16>
    %26 = stablehlo.reshape %25 : (tensor<8x32xbf16>) -> tensor<8x4x8xbf16>
    %27 = stablehlo.transpose %26, dims = [1, 0, 2] : (tensor<8x4x8xbf16>) -> tensor<4x8x8xbf16>
    %28 = stablehlo.dot_general %24, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x32xbf16>, tensor<32x32xbf16>) -> tensor<8x32xbf16>
    %29 = stablehlo.reshape %28 : (tensor<8x32xbf16>) -> tensor<8x4x8xbf16>
    %30 = stablehlo.transpose %29, dims = [1, 0, 2] : (tensor<8x4x8xbf16>) -> tensor<4x8x8xbf16>
    %31 = stablehlo.dot_general %24, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x32xbf16>, tensor<32x32xbf16>) -> tensor<8x32xbf16>
    %32 = stablehlo.reshape %31 : (tensor<8x32xbf16>) -> tensor<8x4x8xbf16>
    %33 = stablehlo.transpose %32, dims = [1, 0, 2] : (tensor<8x4x8xbf16>) -> tensor<4x8x8xbf16>
    %34 = stablehlo.transpose %30, dims = [0, 2, 1] : (tensor<4x8x8xbf16>) -> tensor<4x8x8xbf16>
    %35 = stablehlo.dot_general %27, %34, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8x8xbf16>, tensor<4x8x8xbf16>) -> tensor<4x8x8xbf16>
    %cst_4 = stablehlo.constant dense<2.828130e+00> : tensor<bf16>
    %36 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<bf16>) -> tensor<4x8x8xbf16>
    %37 = stablehlo.divide %35, %36 : tensor<4x8x8xbf16>
    %cst_5 = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %38 = stablehlo.reduce(%37 init: %cst_5) applies stablehlo.maximum across dimensions = [2] : (tensor<4x8x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
    %cst_6 = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %39 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<bf16>) -> tensor<4x8xbf16>
    %40 = stablehlo.maximum %39, %38 : tensor<4x8xbf16>
    %41 = stablehlo.broadcast_in_dim %40, dims = [0, 1] : (tensor<4x8xbf16>) -> tensor<4x8x1xbf16>
    %42 = stablehlo.broadcast_in_dim %41, dims = [0, 1, 2] : (tensor<4x8x1xbf16>) -> tensor<4x8x8xbf16>
    %43 = stablehlo.subtract %37, %42 : tensor<4x8x8xbf16>
    %44 = stablehlo.exponential %43 : tensor<4x8x8xbf16>
    %45 = stablehlo.convert %44 : (tensor<4x8x8xbf16>) -> tensor<4x8x8xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %46 = stablehlo.reduce(%45 init: %cst_7) applies stablehlo.add across dimensions = [2] : (tensor<4x8x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %47 = stablehlo.broadcast_in_dim %46, dims = [0, 1] : (tensor<4x8xf32>) -> tensor<4x8x1xf32>
    %48 = stablehlo.convert %47 : (tensor<4x8x1xf32>) -> tensor<4x8x1xbf16>
    %49 = stablehlo.broadcast_in_dim %48, dims = [0, 1, 2] : (tensor<4x8x1xbf16>) -> tensor<4x8x8xbf16>
    %50 = stablehlo.divide %44, %49 : tensor<4x8x8xbf16>
    %51 = stablehlo.dot_general %50, %33, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8x8xbf16>, tensor<4x8x8xbf16>) -> tensor<4x8x8xbf16>
    %52 = stablehlo.transpose %51, dims = [1, 0, 2] : (tensor<4x8x8xbf16>) -> tensor<8x4x8xbf16>
    %53 = stablehlo.reshape %52 : (tensor<8x4x8xbf16>) -> tensor<8x32xbf16>
    %54 = stablehlo.dot_general %53, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x32xbf16>, tensor<32x32xbf16>) -> tensor<8x32xbf16>
    %55 = stablehlo.add %arg0, %54 : tensor<8x32xbf16>
    %56 = stablehlo.convert %55 : (tensor<8x32xbf16>) -> tensor<8x32xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %57 = stablehlo.reduce(%56 init: %cst_8) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %cst_9 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %60 = stablehlo.divide %58, %59 : tensor<8x1xf32>
    %61 = stablehlo.convert %60 : (tensor<8x1xf32>) -> tensor<8x1xbf16>
    %62 = stablehlo.broadcast_in_dim %61, dims = [0, 1] : (tensor<8x1xbf16>) -> tensor<8x32xbf16>
    %63 = stablehlo.subtract %55, %62 : tensor<8x32xbf16>
    %64 = stablehlo.multiply %63, %63 : tensor<8x32xbf16>
    %65 = stablehlo.convert %64 : (tensor<8x32xbf16>) -> tensor<8x32xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %66 = stablehlo.reduce(%65 init: %cst_10) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
    %67 = stablehlo.broadcast_in_dim %66, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %cst_11 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %68 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %69 = stablehlo.divide %67, %68 : tensor<8x1xf32>
    %70 = stablehlo.convert %69 : (tensor<8x1xf32>) -> tensor<8x1xbf16>
    %71 = stablehlo.broadcast_in_dim %61, dims = [0, 1] : (tensor<8x1xbf16>) -> tensor<8x32xbf16>
    %72 = stablehlo.subtract %55, %71 : tensor<8x32xbf16>
    %cst_12 = stablehlo.constant dense<1.001360e-05> : tensor<bf16>
    %73 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<bf16>) -> tensor<8x1xbf16>
    %74 = stablehlo.add %70, %73 : tensor<8x1xbf16>
    %75 = stablehlo.rsqrt %74 : tensor<8x1xbf16>
    %76 = stablehlo.broadcast_in_dim %75, dims = [0, 1] : (tensor<8x1xbf16>) -> tensor<8x32xbf16>
    %77 = stablehlo.multiply %72, %76 : tensor<8x32xbf16>
    %78 = stablehlo.broadcast_in_dim %arg7, dims = [1] : (tensor<32xbf16>) -> tensor<1x32xbf16>
    %79 = stablehlo.broadcast_in_dim %78, dims = [0, 1] : (tensor<1x32xbf16>) -> tensor<8x32xbf16>
    %80 = stablehlo.multiply %77, %79 : tensor<8x32xbf16>
    %81 = stablehlo.dot_general %80, %arg5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x32xbf16>, tensor<32x64xbf16>) -> tensor<8x64xbf16>
    %82 = stablehlo.multiply %81, %81 : tensor<8x64xbf16>
    %83 = stablehlo.multiply %82, %81 : tensor<8x64xbf16>
    %cst_13 = stablehlo.constant dense<4.467770e-02> : tensor<bf16>
    %84 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<bf16>) -> tensor<8x64xbf16>
    %85 = stablehlo.multiply %84, %83 : tensor<8x64xbf16>
    %86 = stablehlo.add %81, %85 : tensor<8x64xbf16>
    %cst_14 = stablehlo.constant dense<7.968750e-01> : tensor<bf16>
    %87 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<bf16>) -> tensor<8x64xbf16>
    %88 = stablehlo.multiply %87, %86 : tensor<8x64xbf16>
    %89 = stablehlo.tanh %88 : tensor<8x64xbf16>
    %cst_15 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %90 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<bf16>) -> tensor<8x64xbf16>
    %91 = stablehlo.add %90, %89 : tensor<8x64xbf16>
    %cst_16 = stablehlo.constant dense<5.000000e-01> : tensor<bf16>
    %92 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<bf16>) -> tensor<8x64xbf16>
    %93 = stablehlo.multiply %92, %91 : tensor<8x64xbf16>
    %94 = stablehlo.multiply %81, %93 : tensor<8x64xbf16>
    %95 = stablehlo.dot_general %94, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xbf16>, tensor<64x32xbf16>) -> tensor<8x32xbf16>
    %96 = stablehlo.add %55, %95 : tensor<8x32xbf16>
    return %96 : tensor<8x32xbf16>
  }
}
