module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64xf32>, %arg1: tensor<64xf32>) -> (tensor<64xf32> {jax.result_info = "result[0]"}, tensor<64xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.slice %arg0 [0:63:2] : (tensor<64xf32>) -> tensor<32xf32>
    %1 = stablehlo.slice %arg1 [0:63:2] : (tensor<64xf32>) -> tensor<32xf32>
    %2 = stablehlo.slice %arg0 [1:64:2] : (tensor<64xf32>) -> tensor<32xf32>
    %3 = stablehlo.slice %arg1 [1:64:2] : (tensor<64xf32>) -> tensor<32xf32>
    %4 = stablehlo.multiply %0, %2 : tensor<32xf32>
    %5 = stablehlo.multiply %1, %2 : tensor<32xf32>
    %6 = stablehlo.multiply %0, %3 : tensor<32xf32>
    %7 = stablehlo.add %5, %6 : tensor<32xf32>
    %8 = stablehlo.slice %4 [0:31:2] : (tensor<32xf32>) -> tensor<16xf32>
    %9 = stablehlo.slice %7 [0:31:2] : (tensor<32xf32>) -> tensor<16xf32>
    %10 = stablehlo.slice %4 [1:32:2] : (tensor<32xf32>) -> tensor<16xf32>
    %11 = stablehlo.slice %7 [1:32:2] : (tensor<32xf32>) -> tensor<16xf32>
    %12 = stablehlo.multiply %8, %10 : tensor<16xf32>
    %13 = stablehlo.multiply %9, %10 : tensor<16xf32>
    %14 = stablehlo.multiply %8, %11 : tensor<16xf32>
    %15 = stablehlo.add %13, %14 : tensor<16xf32>
    %16 = stablehlo.slice %12 [0:15:2] : (tensor<16xf32>) -> tensor<8xf32>
    %17 = stablehlo.slice %15 [0:15:2] : (tensor<16xf32>) -> tensor<8xf32>
    %18 = stablehlo.slice %12 [1:16:2] : (tensor<16xf32>) -> tensor<8xf32>
    %19 = stablehlo.slice %15 [1:16:2] : (tensor<16xf32>) -> tensor<8xf32>
    %20 = stablehlo.multiply %16, %18 : tensor<8xf32>
    %21 = stablehlo.multiply %17, %18 : tensor<8xf32>
    %22 = stablehlo.multiply %16, %19 : tensor<8xf32>
    %23 = stablehlo.add %21, %22 : tensor<8xf32>
    %24 = stablehlo.slice %20 [0:7:2] : (tensor<8xf32>) -> tensor<4xf32>
    %25 = stablehlo.slice %23 [0:7:2] : (tensor<8xf32>) -> tensor<4xf32>
    %26 = stablehlo.slice %20 [1:8:2] : (tensor<8xf32>) -> tensor<4xf32>
    %27 = stablehlo.slice %23 [1:8:2] : (tensor<8xf32>) -> tensor<4xf32>
    %28 = stablehlo.multiply %24, %26 : tensor<4xf32>
    %29 = stablehlo.multiply %25, %26 : tensor<4xf32>
    %30 = stablehlo.multiply %24, %27 : tensor<4xf32>
    %31 = stablehlo.add %29, %30 : tensor<4xf32>
    %32 = stablehlo.slice %28 [0:3:2] : (tensor<4xf32>) -> tensor<2xf32>
    %33 = stablehlo.slice %31 [0:3:2] : (tensor<4xf32>) -> tensor<2xf32>
    %34 = stablehlo.slice %28 [1:4:2] : (tensor<4xf32>) -> tensor<2xf32>
    %35 = stablehlo.slice %31 [1:4:2] : (tensor<4xf32>) -> tensor<2xf32>
    %36 = stablehlo.multiply %32, %34 : tensor<2xf32>
    %37 = stablehlo.multiply %33, %34 : tensor<2xf32>
    %38 = stablehlo.multiply %32, %35 : tensor<2xf32>
    %39 = stablehlo.add %37, %38 : tensor<2xf32>
    %40 = stablehlo.slice %36 [0:1:2] : (tensor<2xf32>) -> tensor<1xf32>
    %41 = stablehlo.slice %39 [0:1:2] : (tensor<2xf32>) -> tensor<1xf32>
    %42 = stablehlo.slice %36 [1:2:2] : (tensor<2xf32>) -> tensor<1xf32>
    %43 = stablehlo.slice %39 [1:2:2] : (tensor<2xf32>) -> tensor<1xf32>
    %44 = stablehlo.multiply %40, %42 : tensor<1xf32>
    %45 = stablehlo.multiply %41, %42 : tensor<1xf32>
    %46 = stablehlo.multiply %40, %43 : tensor<1xf32>
    %47 = stablehlo.add %45, %46 : tensor<1xf32>
    %48 = stablehlo.slice %44 [0:0] : (tensor<1xf32>) -> tensor<0xf32>
    %49 = stablehlo.slice %47 [0:0] : (tensor<1xf32>) -> tensor<0xf32>
    %50 = stablehlo.slice %36 [2:2:2] : (tensor<2xf32>) -> tensor<0xf32>
    %51 = stablehlo.slice %39 [2:2:2] : (tensor<2xf32>) -> tensor<0xf32>
    %52 = stablehlo.multiply %48, %50 : tensor<0xf32>
    %53 = stablehlo.multiply %49, %50 : tensor<0xf32>
    %54 = stablehlo.multiply %48, %51 : tensor<0xf32>
    %55 = stablehlo.add %53, %54 : tensor<0xf32>
    %56 = stablehlo.slice %36 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %57 = stablehlo.slice %39 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %58 = stablehlo.concatenate %56, %52, dim = 0 : (tensor<1xf32>, tensor<0xf32>) -> tensor<1xf32>
    %59 = stablehlo.concatenate %57, %55, dim = 0 : (tensor<1xf32>, tensor<0xf32>) -> tensor<1xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %60 = stablehlo.pad %58, %cst, low = [0], high = [1], interior = [1] : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %61 = stablehlo.pad %59, %cst_0, low = [0], high = [1], interior = [1] : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %62 = stablehlo.pad %44, %cst_1, low = [1], high = [0], interior = [1] : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %63 = stablehlo.pad %47, %cst_2, low = [1], high = [0], interior = [1] : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %64 = stablehlo.add %60, %62 : tensor<2xf32>
    %65 = stablehlo.add %61, %63 : tensor<2xf32>
    %66 = stablehlo.slice %64 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %67 = stablehlo.slice %65 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %68 = stablehlo.slice %28 [2:4:2] : (tensor<4xf32>) -> tensor<1xf32>
    %69 = stablehlo.slice %31 [2:4:2] : (tensor<4xf32>) -> tensor<1xf32>
    %70 = stablehlo.multiply %66, %68 : tensor<1xf32>
    %71 = stablehlo.multiply %67, %68 : tensor<1xf32>
    %72 = stablehlo.multiply %66, %69 : tensor<1xf32>
    %73 = stablehlo.add %71, %72 : tensor<1xf32>
    %74 = stablehlo.slice %28 [0:1] : (tensor<4xf32>) -> tensor<1xf32>
    %75 = stablehlo.slice %31 [0:1] : (tensor<4xf32>) -> tensor<1xf32>
    %76 = stablehlo.concatenate %74, %70, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
    %77 = stablehlo.concatenate %75, %73, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %78 = stablehlo.pad %76, %cst_3, low = [0], high = [1], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %79 = stablehlo.pad %77, %cst_4, low = [0], high = [1], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %80 = stablehlo.pad %64, %cst_5, low = [1], high = [0], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %81 = stablehlo.pad %65, %cst_6, low = [1], high = [0], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %82 = stablehlo.add %78, %80 : tensor<4xf32>
    %83 = stablehlo.add %79, %81 : tensor<4xf32>
    %84 = stablehlo.slice %82 [0:3] : (tensor<4xf32>) -> tensor<3xf32>
    %85 = stablehlo.slice %83 [0:3] : (tensor<4xf32>) -> tensor<3xf32>
    %86 = stablehlo.slice %20 [2:8:2] : (tensor<8xf32>) -> tensor<3xf32>
    %87 = stablehlo.slice %23 [2:8:2] : (tensor<8xf32>) -> tensor<3xf32>
    %88 = stablehlo.multiply %84, %86 : tensor<3xf32>
    %89 = stablehlo.multiply %85, %86 : tensor<3xf32>
    %90 = stablehlo.multiply %84, %87 : tensor<3xf32>
    %91 = stablehlo.add %89, %90 : tensor<3xf32>
    %92 = stablehlo.slice %20 [0:1] : (tensor<8xf32>) -> tensor<1xf32>
    %93 = stablehlo.slice %23 [0:1] : (tensor<8xf32>) -> tensor<1xf32>
    %94 = stablehlo.concatenate %92, %88, dim = 0 : (tensor<1xf32>, tensor<3xf32>) -> tensor<4xf32>
    %95 = stablehlo.concatenate %93, %91, dim = 0 : (tensor<1xf32>, tensor<3xf32>) -> tensor<4xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %96 = stablehlo.pad %94, %cst_7, low = [0], high = [1], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %97 = stablehlo.pad %95, %cst_8, low = [0], high = [1], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %98 = stablehlo.pad %82, %cst_9, low = [1], high = [0], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %99 = stablehlo.pad %83, %cst_10, low = [1], high = [0], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %100 = stablehlo.add %96, %98 : tensor<8xf32>
    %101 = stablehlo.add %97, %99 : tensor<8xf32>
    %102 = stablehlo.slice %100 [0:7] : (tensor<8xf32>) -> tensor<7xf32>
    %103 = stablehlo.slice %101 [0:7] : (tensor<8xf32>) -> tensor<7xf32>
    %104 = stablehlo.slice %12 [2:16:2] : (tensor<16xf32>) -> tensor<7xf32>
    %105 = stablehlo.slice %15 [2:16:2] : (tensor<16xf32>) -> tensor<7xf32>
    %106 = stablehlo.multiply %102, %104 : tensor<7xf32>
    %107 = stablehlo.multiply %103, %104 : tensor<7xf32>
    %108 = stablehlo.multiply %102, %105 : tensor<7xf32>
    %109 = stablehlo.add %107, %108 : tensor<7xf32>
    %110 = stablehlo.slice %12 [0:1] : (tensor<16xf32>) -> tensor<1xf32>
    %111 = stablehlo.slice %15 [0:1] : (tensor<16xf32>) -> tensor<1xf32>
    %112 = stablehlo.concatenate %110, %106, dim = 0 : (tensor<1xf32>, tensor<7xf32>) -> tensor<8xf32>
    %113 = stablehlo.concatenate %111, %109, dim = 0 : (tensor<1xf32>, tensor<7xf32>) -> tensor<8xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %114 = stablehlo.pad %112, %cst_11, low = [0], high = [1], interior = [1] : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %115 = stablehlo.pad %113, %cst_12, low = [0], high = [1], interior = [1] : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %116 = stablehlo.pad %100, %cst_13, low = [1], high = [0], interior = [1] : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %117 = stablehlo.pad %101, %cst_14, low = [1], high = [0], interior = [1] : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>
    %118 = stablehlo.add %114, %116 : tensor<16xf32>
    %119 = stablehlo.add %115, %117 : tensor<16xf32>
    %120 = stablehlo.slice %118 [0:15] : (tensor<16xf32>) -> tensor<15xf32>
    %121 = stablehlo.slice %119 [0:15] : (tensor<16xf32>) -> tensor<15xf32>
    %122 = stablehlo.slice %4 [2:32:2] : (tensor<32xf32>) -> tensor<15xf32>
    %123 = stablehlo.slice %7 [2:32:2] : (tensor<32xf32>) -> tensor<15xf32>
    %124 = stablehlo.multiply %120, %122 : tensor<15xf32>
    %125 = stablehlo.multiply %121, %122 : tensor<15xf32>
    %126 = stablehlo.multiply %120, %123 : tensor<15xf32>
    %127 = stablehlo.add %125, %126 : tensor<15xf32>
    %128 = stablehlo.slice %4 [0:1] : (tensor<32xf32>) -> tensor<1xf32>
    %129 = stablehlo.slice %7 [0:1] : (tensor<32xf32>) -> tensor<1xf32>
    %130 = stablehlo.concatenate %128, %124, dim = 0 : (tensor<1xf32>, tensor<15xf32>) -> tensor<16xf32>
    %131 = stablehlo.concatenate %129, %127, dim = 0 : (tensor<1xf32>, tensor<15xf32>) -> tensor<16xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %132 = stablehlo.pad %130, %cst_15, low = [0], high = [1], interior = [1] : (tensor<16xf32>, tensor<f32>) -> tensor<32xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %133 = stablehlo.pad %131, %cst_16, low = [0], high = [1], interior = [1] : (tensor<16xf32>, tensor<f32>) -> tensor<32xf32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %134 = stablehlo.pad %118, %cst_17, low = [1], high = [0], interior = [1] : (tensor<16xf32>, tensor<f32>) -> tensor<32xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %135 = stablehlo.pad %119, %cst_18, low = [1], high = [0], interior = [1] : (tensor<16xf32>, tensor<f32>) -> tensor<32xf32>
    %136 = stablehlo.add %132, %134 : tensor<32xf32>
    %137 = stablehlo.add %133, %135 : tensor<32xf32>
    %138 = stablehlo.slice %136 [0:31] : (tensor<32xf32>) -> tensor<31xf32>
    %139 = stablehlo.slice %137 [0:31] : (tensor<32xf32>) -> tensor<31xf32>
    %140 = stablehlo.slice %arg0 [2:64:2] : (tensor<64xf32>) -> tensor<31xf32>
    %141 = stablehlo.slice %arg1 [2:64:2] : (tensor<64xf32>) -> tensor<31xf32>
    %142 = stablehlo.multiply %138, %140 : tensor<31xf32>
    %143 = stablehlo.multiply %139, %140 : tensor<31xf32>
    %144 = stablehlo.multiply %138, %141 : tensor<31xf32>
    %145 = stablehlo.add %143, %144 : tensor<31xf32>
    %146 = stablehlo.slice %arg0 [0:1] : (tensor<64xf32>) -> tensor<1xf32>
    %147 = stablehlo.slice %arg1 [0:1] : (tensor<64xf32>) -> tensor<1xf32>
    %148 = stablehlo.concatenate %146, %142, dim = 0 : (tensor<1xf32>, tensor<31xf32>) -> tensor<32xf32>
    %149 = stablehlo.concatenate %147, %145, dim = 0 : (tensor<1xf32>, tensor<31xf32>) -> tensor<32xf32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %150 = stablehlo.pad %148, %cst_19, low = [0], high = [1], interior = [1] : (tensor<32xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %151 = stablehlo.pad %149, %cst_20, low = [0], high = [1], interior = [1] : (tensor<32xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_21 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %152 = stablehlo.pad %136, %cst_21, low = [1], high = [0], interior = [1] : (tensor<32xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_22 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %153 = stablehlo.pad %137, %cst_22, low = [1], high = [0], interior = [1] : (tensor<32xf32>, tensor<f32>) -> tensor<64xf32>
    %154 = stablehlo.add %150, %152 : tensor<64xf32>
    %155 = stablehlo.add %151, %153 : tensor<64xf32>
    return %154, %155 : tensor<64xf32>, tensor<64xf32>
  }
}
