module @jit_linear_recurrence attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<128xf32>, %arg1: tensor<128xf32>) -> (tensor<128xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:127:2] : (tensor<128xf32>) -> tensor<64xf32>
    %1 = stablehlo.slice %arg1 [0:127:2] : (tensor<128xf32>) -> tensor<64xf32>
    %2 = stablehlo.slice %arg0 [1:128:2] : (tensor<128xf32>) -> tensor<64xf32>
    %3 = stablehlo.slice %arg1 [1:128:2] : (tensor<128xf32>) -> tensor<64xf32>
    %4 = stablehlo.multiply %0, %2 : tensor<64xf32>
    %5 = stablehlo.multiply %2, %1 : tensor<64xf32>
    %6 = stablehlo.add %5, %3 : tensor<64xf32>
    %7 = stablehlo.slice %4 [0:63:2] : (tensor<64xf32>) -> tensor<32xf32>
    %8 = stablehlo.slice %6 [0:63:2] : (tensor<64xf32>) -> tensor<32xf32>
    %9 = stablehlo.slice %4 [1:64:2] : (tensor<64xf32>) -> tensor<32xf32>
    %10 = stablehlo.slice %6 [1:64:2] : (tensor<64xf32>) -> tensor<32xf32>
    %11 = stablehlo.multiply %7, %9 : tensor<32xf32>
    %12 = stablehlo.multiply %9, %8 : tensor<32xf32>
    %13 = stablehlo.add %12, %10 : tensor<32xf32>
    %14 = stablehlo.slice %11 [0:31:2] : (tensor<32xf32>) -> tensor<16xf32>
    %15 = stablehlo.slice %13 [0:31:2] : (tensor<32xf32>) -> tensor<16xf32>
    %16 = stablehlo.slice %11 [1:32:2] : (tensor<32xf32>) -> tensor<16xf32>
    %17 = stablehlo.slice %13 [1:32:2] : (tensor<32xf32>) -> tensor<16xf32>
    %18 = stablehlo.multiply %14, %16 : tensor<16xf32>
    %19 = stablehlo.multiply %16, %15 : tensor<16xf32>
    %20 = stablehlo.add %19, %17 : tensor<16xf32>
    %21 = stablehlo.slice %18 [0:15:2] : (tensor<16xf32>) -> tensor<8xf32>
    %22 = stablehlo.slice %20 [0:15:2] : (tensor<16xf32>) -> tensor<8xf32>
    %23 = stablehlo.slice %18 [1:16:2] : (tensor<16xf32>) -> tensor<8xf32>
    %24 = stablehlo.slice %20 [1:16:2] : (tensor<16xf32>) -> tensor<8xf32>
    %25 = stablehlo.multiply %21, %23 : tensor<8xf32>
    %26 = stablehlo.multiply %23, %22 : tensor<8xf32>
    %27 = stablehlo.add %26, %24 : tensor<8xf32>
    %28 = stablehlo.slice %25 [0:7:2] : (tensor<8xf32>) -> tensor<4xf32>
    %29 = stablehlo.slice %27 [0:7:2] : (tensor<8xf32>) -> tensor<4xf32>
    %30 = stablehlo.slice %25 [1:8:2] : (tensor<8xf32>) -> tensor<4xf32>
    %31 = stablehlo.slice %27 [1:8:2] : (tensor<8xf32>) -> tensor<4xf32>
    %32 = stablehlo.multiply %28, %30 : tensor<4xf32>
    %33 = stablehlo.multiply %30, %29 : tensor<4xf32>
    %34 = stablehlo.add %33, %31 : tensor<4xf32>
    %35 = stablehlo.slice %32 [0:3:2] : (tensor<4xf32>) -> tensor<2xf32>
    %36 = stablehlo.slice %34 [0:3:2] : (tensor<4xf32>) -> tensor<2xf32>
    %37 = stablehlo.slice %32 [1:4:2] : (tensor<4xf32>) -> tensor<2xf32>
    %38 = stablehlo.slice %34 [1:4:2] : (tensor<4xf32>) -> tensor<2xf32>
    %39 = stablehlo.multiply %35, %37 : tensor<2xf32>
    %40 = stablehlo.multiply %37, %36 : tensor<2xf32>
    %41 = stablehlo.add %40, %38 : tensor<2xf32>
    %42 = stablehlo.slice %41 [0:1:2] : (tensor<2xf32>) -> tensor<1xf32>
    %43 = stablehlo.slice %39 [1:2:2] : (tensor<2xf32>) -> tensor<1xf32>
    %44 = stablehlo.slice %41 [1:2:2] : (tensor<2xf32>) -> tensor<1xf32>
    %45 = stablehlo.multiply %43, %42 : tensor<1xf32>
    %46 = stablehlo.add %45, %44 : tensor<1xf32>
    %47 = stablehlo.slice %46 [0:0] : (tensor<1xf32>) -> tensor<0xf32>
    %48 = stablehlo.slice %39 [2:2:2] : (tensor<2xf32>) -> tensor<0xf32>
    %49 = stablehlo.slice %41 [2:2:2] : (tensor<2xf32>) -> tensor<0xf32>
    %50 = stablehlo.multiply %48, %47 : tensor<0xf32>
    %51 = stablehlo.add %50, %49 : tensor<0xf32>
    %52 = stablehlo.slice %41 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %53 = stablehlo.concatenate %52, %51, dim = 0 : (tensor<1xf32>, tensor<0xf32>) -> tensor<1xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %54 = stablehlo.pad %53, %cst, low = [0], high = [1], interior = [1] : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %55 = stablehlo.pad %46, %cst_0, low = [1], high = [0], interior = [1] : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %56 = stablehlo.add %54, %55 : tensor<2xf32>
    %57 = stablehlo.slice %56 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %58 = stablehlo.slice %32 [2:4:2] : (tensor<4xf32>) -> tensor<1xf32>
    %59 = stablehlo.slice %34 [2:4:2] : (tensor<4xf32>) -> tensor<1xf32>
    %60 = stablehlo.multiply %58, %57 : tensor<1xf32>
    %61 = stablehlo.add %60, %59 : tensor<1xf32>
    %62 = stablehlo.slice %34 [0:1] : (tensor<4xf32>) -> tensor<1xf32>
    %63 = stablehlo.concatenate %62, %61, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %64 = stablehlo.pad %63, %cst_1, low = [0], high = [1], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %65 = stablehlo.pad %56, %cst_2, low = [1], high = [0], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %66 = stablehlo.add %64, %65 : tensor<4xf32>
    %67 = stablehlo.slice %66 [0:3] : (tensor<4xf32>) -> tensor<3xf32>
    %68 = stablehlo.slice %25 [2:8:2] : (tensor<8xf32>) -> tensor<3xf32>
    %69 = stablehlo.slice %27 [2:8:2] : (tensor<8xf32>) -> tensor<3xf32>
    %70 = stablehlo.multiply %68, %67 : tensor<3xf32>
    %71 = stablehlo.add %70, %69 : tensor<3xf32>
    %72 = stablehlo.slice %27 [0:1] : (tensor<8xf32>) -> tensor<1xf32>
    %73 = stablehlo.concatenate %72, %71, dim = 0 : (tensor<1xf32>, tensor<3xf32>) -> tensor<4xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %74 = stablehlo.pad %73, %cst_3, low = [0], high = [1], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %75 = stablehlo.pad %66, %cst_4, low = [1], high = [0], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %76 = stablehlo.add %74, %75 : tensor<8xf32>
    %77 = stablehlo.slice %76 [0:7] : (tensor<8xf32>) -> tensor<7xf32>
    %78 = stablehlo.slice %18 [2:16:2] : (tensor<16xf32>) -> tensor<7xf32>
    %79 = stablehlo.slice %20 [2:16:2] : (tensor<16xf32>) -> tensor<7xf32>
    %80 = stablehlo.multiply %78, %77 : tensor<7xf32>
    %81 = stablehlo.add %80, %79 : tensor<7xf32>
    %82 = stablehlo.slice %20 [0:1] : (tensor<16xf32>) -> tensor<1xf32>
    %83 = stablehlo.concatenate %82, %81, dim = 0 : (tensor<1xf32>, tensor<7xf32>) -> tensor<8xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %84 = stablehlo.pad %83, %cst_5, low = [0], high = [1], interior = [1] : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %85 = stablehlo.pad %76, %cst_6, low = [1], high = [0], interior = [1] : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>
    %86 = stablehlo.add %84, %85 : tensor<16xf32>
    %87 = stablehlo.slice %86 [0:15] : (tensor<16xf32>) -> tensor<15xf32>
    %88 = stablehlo.slice %11 [2:32:2] : (tensor<32xf32>) -> tensor<15xf32>
    %89 = stablehlo.slice %13 [2:32:2] : (tensor<32xf32>) -> tensor<15xf32>
    %90 = stablehlo.multiply %88, %87 : tensor<15xf32>
    %91 = stablehlo.add %90, %89 : tensor<15xf32>
    %92 = stablehlo.slice %13 [0:1] : (tensor<32xf32>) -> tensor<1xf32>
    %93 = stablehlo.concatenate %92, %91, dim = 0 : (tensor<1xf32>, tensor<15xf32>) -> tensor<16xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %94 = stablehlo.pad %93, %cst_7, low = [0], high = [1], interior = [1] : (tensor<16xf32>, tensor<f32>) -> tensor<32xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %95 = stablehlo.pad %86, %cst_8, low = [1], high = [0], interior = [1] : (tensor<16xf32>, tensor<f32>) -> tensor<32xf32>
    %96 = stablehlo.add %94, %95 : tensor<32xf32>
    %97 = stablehlo.slice %96 [0:31] : (tensor<32xf32>) -> tensor<31xf32>
    %98 = stablehlo.slice %4 [2:64:2] : (tensor<64xf32>) -> tensor<31xf32>
    %99 = stablehlo.slice %6 [2:64:2] : (tensor<64xf32>) -> tensor<31xf32>
    %100 = stablehlo.multiply %98, %97 : tensor<31xf32>
    %101 = stablehlo.add %100, %99 : tensor<31xf32>
    %102 = stablehlo.slice %6 [0:1] : (tensor<64xf32>) -> tensor<1xf32>
    %103 = stablehlo.concatenate %102, %101, dim = 0 : (tensor<1xf32>, tensor<31xf32>) -> tensor<32xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %104 = stablehlo.pad %103, %cst_9, low = [0], high = [1], interior = [1] : (tensor<32xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %105 = stablehlo.pad %96, %cst_10, low = [1], high = [0], interior = [1] : (tensor<32xf32>, tensor<f32>) -> tensor<64xf32>
    %106 = stablehlo.add %104, %105 : tensor<64xf32>
    %107 = stablehlo.slice %106 [0:63] : (tensor<64xf32>) -> tensor<63xf32>
    %108 = stablehlo.slice %arg0 [2:128:2] : (tensor<128xf32>) -> tensor<63xf32>
    %109 = stablehlo.slice %arg1 [2:128:2] : (tensor<128xf32>) -> tensor<63xf32>
    %110 = stablehlo.multiply %108, %107 : tensor<63xf32>
    %111 = stablehlo.add %110, %109 : tensor<63xf32>
    %112 = stablehlo.slice %arg1 [0:1] : (tensor<128xf32>) -> tensor<1xf32>
    %113 = stablehlo.concatenate %112, %111, dim = 0 : (tensor<1xf32>, tensor<63xf32>) -> tensor<64xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %114 = stablehlo.pad %113, %cst_11, low = [0], high = [1], interior = [1] : (tensor<64xf32>, tensor<f32>) -> tensor<128xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %115 = stablehlo.pad %106, %cst_12, low = [1], high = [0], interior = [1] : (tensor<64xf32>, tensor<f32>) -> tensor<128xf32>
    %116 = stablehlo.add %114, %115 : tensor<128xf32>
    return %116 : tensor<128xf32>
  }
}
