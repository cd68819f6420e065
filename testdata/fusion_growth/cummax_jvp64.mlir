module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64xf32>, %arg1: tensor<64xf32>) -> (tensor<64xf32> {jax.result_info = "result[0]"}, tensor<64xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.slice %arg0 [0:63:2] : (tensor<64xf32>) -> tensor<32xf32>
    %1 = stablehlo.slice %arg1 [0:63:2] : (tensor<64xf32>) -> tensor<32xf32>
    %2 = stablehlo.slice %arg0 [1:64:2] : (tensor<64xf32>) -> tensor<32xf32>
    %3 = stablehlo.slice %arg1 [1:64:2] : (tensor<64xf32>) -> tensor<32xf32>
    %4 = stablehlo.maximum %0, %2 : tensor<32xf32>
    %5 = stablehlo.compare EQ, %0, %4, FLOAT : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xi1>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %8 = stablehlo.select %5, %6, %7 : tensor<32xi1>, tensor<32xf32>
    %9 = stablehlo.compare EQ, %2, %4, FLOAT : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xi1>
    %cst_1 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %12 = stablehlo.select %9, %10, %11 : tensor<32xi1>, tensor<32xf32>
    %13 = stablehlo.divide %8, %12 : tensor<32xf32>
    %14 = stablehlo.multiply %1, %13 : tensor<32xf32>
    %15 = stablehlo.compare EQ, %2, %4, FLOAT : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xi1>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %18 = stablehlo.select %15, %16, %17 : tensor<32xi1>, tensor<32xf32>
    %19 = stablehlo.compare EQ, %0, %4, FLOAT : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xi1>
    %cst_5 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %22 = stablehlo.select %19, %20, %21 : tensor<32xi1>, tensor<32xf32>
    %23 = stablehlo.divide %18, %22 : tensor<32xf32>
    %24 = stablehlo.multiply %3, %23 : tensor<32xf32>
    %25 = stablehlo.add %14, %24 : tensor<32xf32>
    %26 = stablehlo.slice %4 [0:31:2] : (tensor<32xf32>) -> tensor<16xf32>
    %27 = stablehlo.slice %25 [0:31:2] : (tensor<32xf32>) -> tensor<16xf32>
    %28 = stablehlo.slice %4 [1:32:2] : (tensor<32xf32>) -> tensor<16xf32>
    %29 = stablehlo.slice %25 [1:32:2] : (tensor<32xf32>) -> tensor<16xf32>
    %30 = stablehlo.maximum %26, %28 : tensor<16xf32>
    %31 = stablehlo.compare EQ, %26, %30, FLOAT : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %32 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %33 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %34 = stablehlo.select %31, %32, %33 : tensor<16xi1>, tensor<16xf32>
    %35 = stablehlo.compare EQ, %28, %30, FLOAT : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
    %cst_9 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %36 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %37 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %38 = stablehlo.select %35, %36, %37 : tensor<16xi1>, tensor<16xf32>
    %39 = stablehlo.divide %34, %38 : tensor<16xf32>
    %40 = stablehlo.multiply %27, %39 : tensor<16xf32>
    %41 = stablehlo.compare EQ, %28, %30, FLOAT : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
    %cst_11 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %42 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %43 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %44 = stablehlo.select %41, %42, %43 : tensor<16xi1>, tensor<16xf32>
    %45 = stablehlo.compare EQ, %26, %30, FLOAT : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
    %cst_13 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %46 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %cst_14 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %47 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %48 = stablehlo.select %45, %46, %47 : tensor<16xi1>, tensor<16xf32>
    %49 = stablehlo.divide %44, %48 : tensor<16xf32>
    %50 = stablehlo.multiply %29, %49 : tensor<16xf32>
    %51 = stablehlo.add %40, %50 : tensor<16xf32>
    %52 = stablehlo.slice %30 [0:15:2] : (tensor<16xf32>) -> tensor<8xf32>
    %53 = stablehlo.slice %51 [0:15:2] : (tensor<16xf32>) -> tensor<8xf32>
    %54 = stablehlo.slice %30 [1:16:2] : (tensor<16xf32>) -> tensor<8xf32>
    %55 = stablehlo.slice %51 [1:16:2] : (tensor<16xf32>) -> tensor<8xf32>
    %56 = stablehlo.maximum %52, %54 : tensor<8xf32>
    %57 = stablehlo.compare EQ, %52, %56, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_15 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %58 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %60 = stablehlo.select %57, %58, %59 : tensor<8xi1>, tensor<8xf32>
    %61 = stablehlo.compare EQ, %54, %56, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_17 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %62 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_18 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %63 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %64 = stablehlo.select %61, %62, %63 : tensor<8xi1>, tensor<8xf32>
    %65 = stablehlo.divide %60, %64 : tensor<8xf32>
    %66 = stablehlo.multiply %53, %65 : tensor<8xf32>
    %67 = stablehlo.compare EQ, %54, %56, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_19 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %68 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %69 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %70 = stablehlo.select %67, %68, %69 : tensor<8xi1>, tensor<8xf32>
    %71 = stablehlo.compare EQ, %52, %56, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %cst_21 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %cst_22 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %73 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %74 = stablehlo.select %71, %72, %73 : tensor<8xi1>, tensor<8xf32>
    %75 = stablehlo.divide %70, %74 : tensor<8xf32>
    %76 = stablehlo.multiply %55, %75 : tensor<8xf32>
    %77 = stablehlo.add %66, %76 : tensor<8xf32>
    %78 = stablehlo.slice %56 [0:7:2] : (tensor<8xf32>) -> tensor<4xf32>
    %79 = stablehlo.slice %77 [0:7:2] : (tensor<8xf32>) -> tensor<4xf32>
    %80 = stablehlo.slice %56 [1:8:2] : (tensor<8xf32>) -> tensor<4xf32>
    %81 = stablehlo.slice %77 [1:8:2] : (tensor<8xf32>) -> tensor<4xf32>
    %82 = stablehlo.maximum %78, %80 : tensor<4xf32>
    %83 = stablehlo.compare EQ, %78, %82, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %cst_23 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %84 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %cst_24 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %85 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %86 = stablehlo.select %83, %84, %85 : tensor<4xi1>, tensor<4xf32>
    %87 = stablehlo.compare EQ, %80, %82, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %cst_25 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %88 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %cst_26 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %89 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %90 = stablehlo.select %87, %88, %89 : tensor<4xi1>, tensor<4xf32>
    %91 = stablehlo.divide %86, %90 : tensor<4xf32>
    %92 = stablehlo.multiply %79, %91 : tensor<4xf32>
    %93 = stablehlo.compare EQ, %80, %82, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %cst_27 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %94 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %cst_28 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %95 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %96 = stablehlo.select %93, %94, %95 : tensor<4xi1>, tensor<4xf32>
    %97 = stablehlo.compare EQ, %78, %82, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %cst_29 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %98 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %cst_30 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %99 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %100 = stablehlo.select %97, %98, %99 : tensor<4xi1>, tensor<4xf32>
    %101 = stablehlo.divide %96, %100 : tensor<4xf32>
    %102 = stablehlo.multiply %81, %101 : tensor<4xf32>
    %103 = stablehlo.add %92, %102 : tensor<4xf32>
    %104 = stablehlo.slice %82 [0:3:2] : (tensor<4xf32>) -> tensor<2xf32>
    %105 = stablehlo.slice %103 [0:3:2] : (tensor<4xf32>) -> tensor<2xf32>
    %106 = stablehlo.slice %82 [1:4:2] : (tensor<4xf32>) -> tensor<2xf32>
    %107 = stablehlo.slice %103 [1:4:2] : (tensor<4xf32>) -> tensor<2xf32>
    %108 = stablehlo.maximum %104, %106 : tensor<2xf32>
    %109 = stablehlo.compare EQ, %104, %108, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
    %cst_31 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %110 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %cst_32 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %111 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %112 = stablehlo.select %109, %110, %111 : tensor<2xi1>, tensor<2xf32>
    %113 = stablehlo.compare EQ, %106, %108, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
    %cst_33 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %114 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %cst_34 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %115 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %116 = stablehlo.select %113, %114, %115 : tensor<2xi1>, tensor<2xf32>
    %117 = stablehlo.divide %112, %116 : tensor<2xf32>
    %118 = stablehlo.multiply %105, %117 : tensor<2xf32>
    %119 = stablehlo.compare EQ, %106, %108, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
    %cst_35 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %120 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %cst_36 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %121 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %122 = stablehlo.select %119, %120, %121 : tensor<2xi1>, tensor<2xf32>
    %123 = stablehlo.compare EQ, %104, %108, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
    %cst_37 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %124 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %cst_38 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %125 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %126 = stablehlo.select %123, %124, %125 : tensor<2xi1>, tensor<2xf32>
    %127 = stablehlo.divide %122, %126 : tensor<2xf32>
    %128 = stablehlo.multiply %107, %127 : tensor<2xf32>
    %129 = stablehlo.add %118, %128 : tensor<2xf32>
    %130 = stablehlo.slice %108 [0:1:2] : (tensor<2xf32>) -> tensor<1xf32>
    %131 = stablehlo.slice %129 [0:1:2] : (tensor<2xf32>) -> tensor<1xf32>
    %132 = stablehlo.slice %108 [1:2:2] : (tensor<2xf32>) -> tensor<1xf32>
    %133 = stablehlo.slice %129 [1:2:2] : (tensor<2xf32>) -> tensor<1xf32>
    %134 = stablehlo.maximum %130, %132 : tensor<1xf32>
    %135 = stablehlo.compare EQ, %130, %134, FLOAT : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    %cst_39 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %136 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %cst_40 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %137 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %138 = stablehlo.select %135, %136, %137 : tensor<1xi1>, tensor<1xf32>
    %139 = stablehlo.compare EQ, %132, %134, FLOAT : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    %cst_41 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %140 = stablehlo.broadcast_in_dim %cst_41, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %cst_42 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %141 = stablehlo.broadcast_in_dim %cst_42, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %142 = stablehlo.select %139, %140, %141 : tensor<1xi1>, tensor<1xf32>
    %143 = stablehlo.divide %138, %142 : tensor<1xf32>
    %144 = stablehlo.multiply %131, %143 : tensor<1xf32>
    %145 = stablehlo.compare EQ, %132, %134, FLOAT : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    %cst_43 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %146 = stablehlo.broadcast_in_dim %cst_43, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %cst_44 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %147 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %148 = stablehlo.select %145, %146, %147 : tensor<1xi1>, tensor<1xf32>
    %149 = stablehlo.compare EQ, %130, %134, FLOAT : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    %cst_45 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %150 = stablehlo.broadcast_in_dim %cst_45, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %cst_46 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %151 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %152 = stablehlo.select %149, %150, %151 : tensor<1xi1>, tensor<1xf32>
    %153 = stablehlo.divide %148, %152 : tensor<1xf32>
    %154 = stablehlo.multiply %133, %153 : tensor<1xf32>
    %155 = stablehlo.add %144, %154 : tensor<1xf32>
    %156 = stablehlo.slice %134 [0:0] : (tensor<1xf32>) -> tensor<0xf32>
    %157 = stablehlo.slice %155 [0:0] : (tensor<1xf32>) -> tensor<0xf32>
    %158 = stablehlo.slice %108 [2:2:2] : (tensor<2xf32>) -> tensor<0xf32>
    %159 = stablehlo.slice %129 [2:2:2] : (tensor<2xf32>) -> tensor<0xf32>
    %160 = stablehlo.maximum %156, %158 : tensor<0xf32>
    %161 = stablehlo.compare EQ, %156, %160, FLOAT : (tensor<0xf32>, tensor<0xf32>) -> tensor<0xi1>
    %cst_47 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %162 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<0xf32>
    %cst_48 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %163 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<f32>) -> tensor<0xf32>
    %164 = stablehlo.select %161, %162, %163 : tensor<0xi1>, tensor<0xf32>
    %165 = stablehlo.compare EQ, %158, %160, FLOAT : (tensor<0xf32>, tensor<0xf32>) -> tensor<0xi1>
    %cst_49 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %166 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<f32>) -> tensor<0xf32>
    %cst_50 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %167 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<f32>) -> tensor<0xf32>
    %168 = stablehlo.select %165, %166, %167 : tensor<0xi1>, tensor<0xf32>
    %169 = stablehlo.divide %164, %168 : tensor<0xf32>
    %170 = stablehlo.multiply %157, %169 : tensor<0xf32>
    %171 = stablehlo.compare EQ, %158, %160, FLOAT : (tensor<0xf32>, tensor<0xf32>) -> tensor<0xi1>
    %cst_51 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %172 = stablehlo.broadcast_in_dim %cst_51, dims = [] : (tensor<f32>) -> tensor<0xf32>
    %cst_52 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %173 = stablehlo.broadcast_in_dim %cst_52, dims = [] : (tensor<f32>) -> tensor<0xf32>
    %174 = stablehlo.select %171, %172, %173 : tensor<0xi1>, tensor<0xf32>
    %175 = stablehlo.compare EQ, %156, %160, FLOAT : (tensor<0xf32>, tensor<0xf32>) -> tensor<0xi1>
    %cst_53 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %176 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<f32>) -> tensor<0xf32>
    %cst_54 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %177 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<0xf32>
    %178 = stablehlo.select %175, %176, %177 : tensor<0xi1>, tensor<0xf32>
    %179 = stablehlo.divide %174, %178 : tensor<0xf32>
    %180 = stablehlo.multiply %159, %179 : tensor<0xf32>
    %181 = stablehlo.add %170, %180 : tensor<0xf32>
    %182 = stablehlo.slice %108 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %183 = stablehlo.slice %129 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %184 = stablehlo.concatenate %182, %160, dim = 0 : (tensor<1xf32>, tensor<0xf32>) -> tensor<1xf32>
    %185 = stablehlo.concatenate %183, %181, dim = 0 : (tensor<1xf32>, tensor<0xf32>) -> tensor<1xf32>
    %cst_55 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %186 = stablehlo.pad %184, %cst_55, low = [0], high = [1], interior = [1] : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_56 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %187 = stablehlo.pad %185, %cst_56, low = [0], high = [1], interior = [1] : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_57 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %188 = stablehlo.pad %134, %cst_57, low = [1], high = [0], interior = [1] : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_58 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %189 = stablehlo.pad %155, %cst_58, low = [1], high = [0], interior = [1] : (tensor<1xf32>, tensor<f32>) -> tensor<2xf32>
    %190 = stablehlo.add %186, %188 : tensor<2xf32>
    %191 = stablehlo.add %187, %189 : tensor<2xf32>
    %192 = stablehlo.slice %190 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %193 = stablehlo.slice %191 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %194 = stablehlo.slice %82 [2:4:2] : (tensor<4xf32>) -> tensor<1xf32>
    %195 = stablehlo.slice %103 [2:4:2] : (tensor<4xf32>) -> tensor<1xf32>
    %196 = stablehlo.maximum %192, %194 : tensor<1xf32>
    %197 = stablehlo.compare EQ, %192, %196, FLOAT : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    %cst_59 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %198 = stablehlo.broadcast_in_dim %cst_59, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %cst_60 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %199 = stablehlo.broadcast_in_dim %cst_60, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %200 = stablehlo.select %197, %198, %199 : tensor<1xi1>, tensor<1xf32>
    %201 = stablehlo.compare EQ, %194, %196, FLOAT : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    %cst_61 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %202 = stablehlo.broadcast_in_dim %cst_61, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %cst_62 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %203 = stablehlo.broadcast_in_dim %cst_62, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %204 = stablehlo.select %201, %202, %203 : tensor<1xi1>, tensor<1xf32>
    %205 = stablehlo.divide %200, %204 : tensor<1xf32>
    %206 = stablehlo.multiply %193, %205 : tensor<1xf32>
    %207 = stablehlo.compare EQ, %194, %196, FLOAT : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    %cst_63 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %208 = stablehlo.broadcast_in_dim %cst_63, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %cst_64 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %209 = stablehlo.broadcast_in_dim %cst_64, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %210 = stablehlo.select %207, %208, %209 : tensor<1xi1>, tensor<1xf32>
    %211 = stablehlo.compare EQ, %192, %196, FLOAT : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    %cst_65 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %212 = stablehlo.broadcast_in_dim %cst_65, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %cst_66 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %213 = stablehlo.broadcast_in_dim %cst_66, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %214 = stablehlo.select %211, %212, %213 : tensor<1xi1>, tensor<1xf32>
    %215 = stablehlo.divide %210, %214 : tensor<1xf32>
    %216 = stablehlo.multiply %195, %215 : tensor<1xf32>
    %217 = stablehlo.add %206, %216 : tensor<1xf32>
    %218 = stablehlo.slice %82 [0:1] : (tensor<4xf32>) -> tensor<1xf32>
    %219 = stablehlo.slice %103 [0:1] : (tensor<4xf32>) -> tensor<1xf32>
    %220 = stablehlo.concatenate %218, %196, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
    %221 = stablehlo.concatenate %219, %217, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
    %cst_67 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %222 = stablehlo.pad %220, %cst_67, low = [0], high = [1], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_68 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %223 = stablehlo.pad %221, %cst_68, low = [0], high = [1], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_69 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %224 = stablehlo.pad %190, %cst_69, low = [1], high = [0], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_70 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %225 = stablehlo.pad %191, %cst_70, low = [1], high = [0], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %226 = stablehlo.add %222, %224 : tensor<4xf32>
    %227 = stablehlo.add %223, %225 : tensor<4xf32>
    %228 = stablehlo.slice %226 [0:3] : (tensor<4xf32>) -> tensor<3xf32>
    %229 = stablehlo.slice %227 [0:3] : (tensor<4xf32>) -> tensor<3xf32>
    %230 = stablehlo.slice %56 [2:8:2] : (tensor<8xf32>) -> tensor<3xf32>
    %231 = stablehlo.slice %77 [2:8:2] : (tensor<8xf32>) -> tensor<3xf32>
    %232 = stablehlo.maximum %228, %230 : tensor<3xf32>
    %233 = stablehlo.compare EQ, %228, %232, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %cst_71 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %234 = stablehlo.broadcast_in_dim %cst_71, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %cst_72 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %235 = stablehlo.broadcast_in_dim %cst_72, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %236 = stablehlo.select %233, %234, %235 : tensor<3xi1>, tensor<3xf32>
    %237 = stablehlo.compare EQ, %230, %232, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %cst_73 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %238 = stablehlo.broadcast_in_dim %cst_73, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %cst_74 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %239 = stablehlo.broadcast_in_dim %cst_74, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %240 = stablehlo.select %237, %238, %239 : tensor<3xi1>, tensor<3xf32>
    %241 = stablehlo.divide %236, %240 : tensor<3xf32>
    %242 = stablehlo.multiply %229, %241 : tensor<3xf32>
    %243 = stablehlo.compare EQ, %230, %232, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %cst_75 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %244 = stablehlo.broadcast_in_dim %cst_75, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %cst_76 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %245 = stablehlo.broadcast_in_dim %cst_76, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %246 = stablehlo.select %243, %244, %245 : tensor<3xi1>, tensor<3xf32>
    %247 = stablehlo.compare EQ, %228, %232, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %cst_77 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %248 = stablehlo.broadcast_in_dim %cst_77, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %cst_78 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %249 = stablehlo.broadcast_in_dim %cst_78, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %250 = stablehlo.select %247, %248, %249 : tensor<3xi1>, tensor<3xf32>
    %251 = stablehlo.divide %246, %250 : tensor<3xf32>
    %252 = stablehlo.multiply %231, %251 : tensor<3xf32>
    %253 = stablehlo.add %242, %252 : tensor<3xf32>
    %254 = stablehlo.slice %56 [0:1] : (tensor<8xf32>) -> tensor<1xf32>
    %255 = stablehlo.slice %77 [0:1] : (tensor<8xf32>) -> tensor<1xf32>
    %256 = stablehlo.concatenate %254, %232, dim = 0 : (tensor<1xf32>, tensor<3xf32>) -> tensor<4xf32>
    %257 = stablehlo.concatenate %255, %253, dim = 0 : (tensor<1xf32>, tensor<3xf32>) -> tensor<4xf32>
    %cst_79 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %258 = stablehlo.pad %256, %cst_79, low = [0], high = [1], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_80 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %259 = stablehlo.pad %257, %cst_80, low = [0], high = [1], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_81 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %260 = stablehlo.pad %226, %cst_81, low = [1], high = [0], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_82 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %261 = stablehlo.pad %227, %cst_82, low = [1], high = [0], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %262 = stablehlo.add %258, %260 : tensor<8xf32>
    %263 = stablehlo.add %259, %261 : tensor<8xf32>
    %264 = stablehlo.slice %262 [0:7] : (tensor<8xf32>) -> tensor<7xf32>
    %265 = stablehlo.slice %263 [0:7] : (tensor<8xf32>) -> tensor<7xf32>
    %266 = stablehlo.slice %30 [2:16:2] : (tensor<16xf32>) -> tensor<7xf32>
    %267 = stablehlo.slice %51 [2:16:2] : (tensor<16xf32>) -> tensor<7xf32>
    %268 = stablehlo.maximum %264, %266 : tensor<7xf32>
    %269 = stablehlo.compare EQ, %264, %268, FLOAT : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xi1>
    %cst_83 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %270 = stablehlo.broadcast_in_dim %cst_83, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %cst_84 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %271 = stablehlo.broadcast_in_dim %cst_84, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %272 = stablehlo.select %269, %270, %271 : tensor<7xi1>, tensor<7xf32>
    %273 = stablehlo.compare EQ, %266, %268, FLOAT : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xi1>
    %cst_85 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %274 = stablehlo.broadcast_in_dim %cst_85, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %cst_86 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %275 = stablehlo.broadcast_in_dim %cst_86, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %276 = stablehlo.select %273, %274, %275 : tensor<7xi1>, tensor<7xf32>
    %277 = stablehlo.divide %272, %276 : tensor<7xf32>
    %278 = stablehlo.multiply %265, %277 : tensor<7xf32>
    %279 = stablehlo.compare EQ, %266, %268, FLOAT : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xi1>
    %cst_87 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %280 = stablehlo.broadcast_in_dim %cst_87, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %cst_88 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %281 = stablehlo.broadcast_in_dim %cst_88, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %282 = stablehlo.select %279, %280, %281 : tensor<7xi1>, tensor<7xf32>
    %283 = stablehlo.compare EQ, %264, %268, FLOAT : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xi1>
    %cst_89 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %284 = stablehlo.broadcast_in_dim %cst_89, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %cst_90 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %285 = stablehlo.broadcast_in_dim %cst_90, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %286 = stablehlo.select %283, %284, %285 : tensor<7xi1>, tensor<7xf32>
    %287 = stablehlo.divide %282, %286 : tensor<7xf32>
    %288 = stablehlo.multiply %267, %287 : tensor<7xf32>
    %289 = stablehlo.add %278, %288 : tensor<7xf32>
    %290 = stablehlo.slice %30 [0:1] : (tensor<16xf32>) -> tensor<1xf32>
    %291 = stablehlo.slice %51 [0:1] : (tensor<16xf32>) -> tensor<1xf32>
    %292 = stablehlo.concatenate %290, %268, dim = 0 : (tensor<1xf32>, tensor<7xf32>) -> tensor<8xf32>
    %293 = stablehlo.concatenate %291, %289, dim = 0 : (tensor<1xf32>, tensor<7xf32>) -> tensor<8xf32>
    %cst_91 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %294 = stablehlo.pad %292, %cst_91, low = [0], high = [1], interior = [1] : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_92 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %295 = stablehlo.pad %293, %cst_92, low = [0], high = [1], interior = [1] : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_93 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %296 = stablehlo.pad %262, %cst_93, low = [1], high = [0], interior = [1] : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_94 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %297 = stablehlo.pad %263, %cst_94, low = [1], high = [0], interior = [1] : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>
    %298 = stablehlo.add %294, %296 : tensor<16xf32>
    %299 = stablehlo.add %295, %297 : tensor<16xf32>
    %300 = stablehlo.slice %298 [0:15] : (tensor<16xf32>) -> tensor<15xf32>
    %301 = stablehlo.slice %299 [0:15] : (tensor<16xf32>) -> tensor<15xf32>
    %302 = stablehlo.slice %4 [2:32:2] : (tensor<32xf32>) -> tensor<15xf32>
    %303 = stablehlo.slice %25 [2:32:2] : (tensor<32xf32>) -> tensor<15xf32>
    %304 = stablehlo.maximum %300, %302 : tensor<15xf32>
    %305 = stablehlo.compare EQ, %300, %304, FLOAT : (tensor<15xf32>, tensor<15xf32>) -> tensor<15xi1>
    %cst_95 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %306 = stablehlo.broadcast_in_dim %cst_95, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %cst_96 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %307 = stablehlo.broadcast_in_dim %cst_96, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %308 = stablehlo.select %305, %306, %307 : tensor<15xi1>, tensor<15xf32>
    %309 = stablehlo.compare EQ, %302, %304, FLOAT : (tensor<15xf32>, tensor<15xf32>) -> tensor<15xi1>
    %cst_97 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %310 = stablehlo.broadcast_in_dim %cst_97, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %cst_98 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %311 = stablehlo.broadcast_in_dim %cst_98, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %312 = stablehlo.select %309, %310, %311 : tensor<15xi1>, tensor<15xf32>
    %313 = stablehlo.divide %308, %312 : tensor<15xf32>
    %314 = stablehlo.multiply %301, %313 : tensor<15xf32>
    %315 = stablehlo.compare EQ, %302, %304, FLOAT : (tensor<15xf32>, tensor<15xf32>) -> tensor<15xi1>
    %cst_99 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %316 = stablehlo.broadcast_in_dim %cst_99, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %cst_100 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %317 = stablehlo.broadcast_in_dim %cst_100, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %318 = stablehlo.select %315, %316, %317 : tensor<15xi1>, tensor<15xf32>
    %319 = stablehlo.compare EQ, %300, %304, FLOAT : (tensor<15xf32>, tensor<15xf32>) -> tensor<15xi1>
    %cst_101 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %320 = stablehlo.broadcast_in_dim %cst_101, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %cst_102 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %321 = stablehlo.broadcast_in_dim %cst_102, dims = [] : (tensor<f32>) -> tensor<15xf32>
    %322 = stablehlo.select %319, %320, %321 : tensor<15xi1>, tensor<15xf32>
    %323 = stablehlo.divide %318, %322 : tensor<15xf32>
    %324 = stablehlo.multiply %303, %323 : tensor<15xf32>
    %325 = stablehlo.add %314, %324 : tensor<15xf32>
    %326 = stablehlo.slice %4 [0:1] : (tensor<32xf32>) -> tensor<1xf32>
    %327 = stablehlo.slice %25 [0:1] : (tensor<32xf32>) -> tensor<1xf32>
    %328 = stablehlo.concatenate %326, %304, dim = 0 : (tensor<1xf32>, tensor<15xf32>) -> tensor<16xf32>
    %329 = stablehlo.concatenate %327, %325, dim = 0 : (tensor<1xf32>, tensor<15xf32>) -> tensor<16xf32>
    %cst_103 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %330 = stablehlo.pad %328, %cst_103, low = [0], high = [1], interior = [1] : (tensor<16xf32>, tensor<f32>) -> tensor<32xf32>
    %cst_104 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %331 = stablehlo.pad %329, %cst_104, low = [0], high = [1], interior = [1] : (tensor<16xf32>, tensor<f32>) -> tensor<32xf32>
    %cst_105 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %332 = stablehlo.pad %298, %cst_105, low = [1], high = [0], interior = [1] : (tensor<16xf32>, tensor<f32>) -> tensor<32xf32>
    %cst_106 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %333 = stablehlo.pad %299, %cst_106, low = [1], high = [0], interior = [1] : (tensor<16xf32>, tensor<f32>) -> tensor<32xf32>
    %334 = stablehlo.add %330, %332 : tensor<32xf32>
    %335 = stablehlo.add %331, %333 : tensor<32xf32>
    %336 = stablehlo.slice %334 [0:31] : (tensor<32xf32>) -> tensor<31xf32>
    %337 = stablehlo.slice %335 [0:31] : (tensor<32xf32>) -> tensor<31xf32>
    %338 = stablehlo.slice %arg0 [2:64:2] : (tensor<64xf32>) -> tensor<31xf32>
    %339 = stablehlo.slice %arg1 [2:64:2] : (tensor<64xf32>) -> tensor<31xf32>
    %340 = stablehlo.maximum %336, %338 : tensor<31xf32>
    %341 = stablehlo.compare EQ, %336, %340, FLOAT : (tensor<31xf32>, tensor<31xf32>) -> tensor<31xi1>
    %cst_107 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %342 = stablehlo.broadcast_in_dim %cst_107, dims = [] : (tensor<f32>) -> tensor<31xf32>
    %cst_108 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %343 = stablehlo.broadcast_in_dim %cst_108, dims = [] : (tensor<f32>) -> tensor<31xf32>
    %344 = stablehlo.select %341, %342, %343 : tensor<31xi1>, tensor<31xf32>
    %345 = stablehlo.compare EQ, %338, %340, FLOAT : (tensor<31xf32>, tensor<31xf32>) -> tensor<31xi1>
    %cst_109 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %346 = stablehlo.broadcast_in_dim %cst_109, dims = [] : (tensor<f32>) -> tensor<31xf32>
    %cst_110 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %347 = stablehlo.broadcast_in_dim %cst_110, dims = [] : (tensor<f32>) -> tensor<31xf32>
    %348 = stablehlo.select %345, %346, %347 : tensor<31xi1>, tensor<31xf32>
    %349 = stablehlo.divide %344, %348 : tensor<31xf32>
    %350 = stablehlo.multiply %337, %349 : tensor<31xf32>
    %351 = stablehlo.compare EQ, %338, %340, FLOAT : (tensor<31xf32>, tensor<31xf32>) -> tensor<31xi1>
    %cst_111 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %352 = stablehlo.broadcast_in_dim %cst_111, dims = [] : (tensor<f32>) -> tensor<31xf32>
    %cst_112 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %353 = stablehlo.broadcast_in_dim %cst_112, dims = [] : (tensor<f32>) -> tensor<31xf32>
    %354 = stablehlo.select %351, %352, %353 : tensor<31xi1>, tensor<31xf32>
    %355 = stablehlo.compare EQ, %336, %340, FLOAT : (tensor<31xf32>, tensor<31xf32>) -> tensor<31xi1>
    %cst_113 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %356 = stablehlo.broadcast_in_dim %cst_113, dims = [] : (tensor<f32>) -> tensor<31xf32>
    %cst_114 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %357 = stablehlo.broadcast_in_dim %cst_114, dims = [] : (tensor<f32>) -> tensor<31xf32>
    %358 = stablehlo.select %355, %356, %357 : tensor<31xi1>, tensor<31xf32>
    %359 = stablehlo.divide %354, %358 : tensor<31xf32>
    %360 = stablehlo.multiply %339, %359 : tensor<31xf32>
    %361 = stablehlo.add %350, %360 : tensor<31xf32>
    %362 = stablehlo.slice %arg0 [0:1] : (tensor<64xf32>) -> tensor<1xf32>
    %363 = stablehlo.slice %arg1 [0:1] : (tensor<64xf32>) -> tensor<1xf32>
    %364 = stablehlo.concatenate %362, %340, dim = 0 : (tensor<1xf32>, tensor<31xf32>) -> tensor<32xf32>
    %365 = stablehlo.concatenate %363, %361, dim = 0 : (tensor<1xf32>, tensor<31xf32>) -> tensor<32xf32>
    %cst_115 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %366 = stablehlo.pad %364, %cst_115, low = [0], high = [1], interior = [1] : (tensor<32xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_116 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %367 = stablehlo.pad %365, %cst_116, low = [0], high = [1], interior = [1] : (tensor<32xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_117 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %368 = stablehlo.pad %334, %cst_117, low = [1], high = [0], interior = [1] : (tensor<32xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_118 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %369 = stablehlo.pad %335, %cst_118, low = [1], high = [0], interior = [1] : (tensor<32xf32>, tensor<f32>) -> tensor<64xf32>
    %370 = stablehlo.add %366, %368 : tensor<64xf32>
    %371 = stablehlo.add %367, %369 : tensor<64xf32>
    return %370, %371 : tensor<64xf32>, tensor<64xf32>
  }
}
