module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<20xf32>, %arg1: tensor<20xf32>) -> (tensor<20xf32> {jax.result_info = "result[0]"}, tensor<20xf32> {jax.result_info = "result[1]"}) {
    %0 = chlo.lgamma %arg0 : tensor<20xf32> -> tensor<20xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %2 = stablehlo.add %arg0, %1 : tensor<20xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %4 = stablehlo.compare EQ, %arg0, %3, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %cst_1 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %6 = stablehlo.compare EQ, %2, %5, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %7 = stablehlo.or %4, %6 : tensor<20xi1>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %9 = stablehlo.compare EQ, %2, %8, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %cst_3 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %11 = stablehlo.compare EQ, %arg0, %10, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %12 = stablehlo.or %9, %11 : tensor<20xi1>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %14 = stablehlo.compare EQ, %arg1, %13, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %16 = stablehlo.compare EQ, %arg1, %15, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %17 = stablehlo.not %14 : tensor<20xi1>
    %18 = stablehlo.not %16 : tensor<20xi1>
    %19 = stablehlo.compare NE, %arg0, %arg0, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %20 = stablehlo.compare NE, %2, %2, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %21 = stablehlo.or %19, %20 : tensor<20xi1>
    %22 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %23 = stablehlo.or %21, %22 : tensor<20xi1>
    %24 = stablehlo.and %12, %18 : tensor<20xi1>
    %25 = stablehlo.and %7, %14 : tensor<20xi1>
    %26 = stablehlo.or %24, %25 : tensor<20xi1>
    %27 = stablehlo.and %7, %17 : tensor<20xi1>
    %28 = stablehlo.and %12, %16 : tensor<20xi1>
    %29 = stablehlo.or %27, %28 : tensor<20xi1>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %31 = stablehlo.compare LT, %arg0, %30, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %32 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %33 = stablehlo.compare LT, %2, %32, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %34 = stablehlo.or %31, %33 : tensor<20xi1>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %35 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %36 = stablehlo.compare LT, %arg1, %35, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %37 = stablehlo.or %34, %36 : tensor<20xi1>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %38 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %39 = stablehlo.compare GT, %arg1, %38, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %40 = stablehlo.or %37, %39 : tensor<20xi1>
    %41 = stablehlo.and %7, %12 : tensor<20xi1>
    %42 = stablehlo.or %41, %23 : tensor<20xi1>
    %43 = stablehlo.or %40, %42 : tensor<20xi1>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %44 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %45 = stablehlo.add %arg0, %44 : tensor<20xf32>
    %46 = stablehlo.add %arg0, %2 : tensor<20xf32>
    %cst_11 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %47 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %48 = stablehlo.add %46, %47 : tensor<20xf32>
    %49 = stablehlo.divide %45, %48 : tensor<20xf32>
    %50 = stablehlo.compare LT, %arg1, %49, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %51 = stablehlo.select %50, %arg0, %2 : tensor<20xi1>, tensor<20xf32>
    %52 = stablehlo.select %50, %2, %arg0 : tensor<20xi1>, tensor<20xf32>
    %cst_12 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %53 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %54 = stablehlo.subtract %53, %arg1 : tensor<20xf32>
    %55 = stablehlo.select %50, %arg1, %54 : tensor<20xi1>, tensor<20xf32>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %56 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<20xi64>
    %c_13 = stablehlo.constant dense<0> : tensor<i64>
    %57 = stablehlo.broadcast_in_dim %c_13, dims = [] : (tensor<i64>) -> tensor<20xi64>
    %58 = stablehlo.compare EQ, %56, %57, SIGNED : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi1>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %cst_15 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %60 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %61 = stablehlo.select %58, %59, %60 : tensor<20xi1>, tensor<20xf32>
    %62 = stablehlo.abs %61 : tensor<20xf32>
    %cst_16 = stablehlo.constant dense<5.96046448E-8> : tensor<f32>
    %63 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %64 = stablehlo.compare LT, %62, %63, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %cst_17 = stablehlo.constant dense<5.96046448E-8> : tensor<f32>
    %65 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %66 = stablehlo.select %64, %65, %61 : tensor<20xi1>, tensor<20xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %67 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %c_19 = stablehlo.constant dense<1> : tensor<i64>
    %c_20 = stablehlo.constant dense<true> : tensor<i1>
    %68:8 = stablehlo.while(%iterArg = %51, %iterArg_26 = %52, %iterArg_27 = %55, %iterArg_28 = %c_19, %iterArg_29 = %c_20, %iterArg_30 = %66, %iterArg_31 = %67, %iterArg_32 = %66) : tensor<20xf32>, tensor<20xf32>, tensor<20xf32>, tensor<i64>, tensor<i1>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>
    cond {
      %c_33 = stablehlo.constant dense<200> : tensor<i64>
      %102 = stablehlo.compare LT, %iterArg_28, %c_33, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %103 = stablehlo.and %102, %iterArg_29 : tensor<i1>
      stablehlo.return %103 : tensor<i1>
    } do {
      %102 = stablehlo.broadcast_in_dim %iterArg_28, dims = [] : (tensor<i64>) -> tensor<20xi64>
      %c_33 = stablehlo.constant dense<2> : tensor<i64>
      %103 = stablehlo.broadcast_in_dim %c_33, dims = [] : (tensor<i64>) -> tensor<20xi64>
      %104 = func.call @remainder(%102, %103) : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi64>
      %c_34 = stablehlo.constant dense<0> : tensor<i64>
      %105 = stablehlo.broadcast_in_dim %c_34, dims = [] : (tensor<i64>) -> tensor<20xi64>
      %106 = stablehlo.compare EQ, %104, %105, SIGNED : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi1>
      %c_35 = stablehlo.constant dense<1> : tensor<i64>
      %107 = stablehlo.broadcast_in_dim %c_35, dims = [] : (tensor<i64>) -> tensor<20xi64>
      %108 = stablehlo.compare EQ, %102, %107, SIGNED : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi1>
      %c_36 = stablehlo.constant dense<1> : tensor<i64>
      %109 = stablehlo.broadcast_in_dim %c_36, dims = [] : (tensor<i64>) -> tensor<20xi64>
      %110 = stablehlo.subtract %102, %109 : tensor<20xi64>
      %c_37 = stablehlo.constant dense<2> : tensor<i64>
      %111 = stablehlo.broadcast_in_dim %c_37, dims = [] : (tensor<i64>) -> tensor<20xi64>
      %112 = func.call @floor_divide(%110, %111) : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi64>
      %c_38 = stablehlo.constant dense<0> : tensor<i64>
      %113 = stablehlo.broadcast_in_dim %c_38, dims = [] : (tensor<i64>) -> tensor<20xi64>
      %114 = stablehlo.compare EQ, %112, %113, SIGNED : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi1>
      %115 = stablehlo.convert %112 : (tensor<20xi64>) -> tensor<20xf32>
      %cst_39 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %116 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<20xf32>
      %cst_40 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %117 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<f32>) -> tensor<20xf32>
      %118 = stablehlo.add %iterArg, %iterArg_26 : tensor<20xf32>
      %119 = stablehlo.negate %118 : tensor<20xf32>
      %120 = stablehlo.multiply %119, %iterArg_27 : tensor<20xf32>
      %121 = stablehlo.add %iterArg, %116 : tensor<20xf32>
      %122 = stablehlo.divide %120, %121 : tensor<20xf32>
      %123 = stablehlo.add %iterArg, %115 : tensor<20xf32>
      %124 = stablehlo.negate %123 : tensor<20xf32>
      %125 = stablehlo.add %iterArg, %iterArg_26 : tensor<20xf32>
      %126 = stablehlo.add %125, %115 : tensor<20xf32>
      %127 = stablehlo.multiply %124, %126 : tensor<20xf32>
      %128 = stablehlo.multiply %127, %iterArg_27 : tensor<20xf32>
      %129 = stablehlo.multiply %117, %115 : tensor<20xf32>
      %130 = stablehlo.add %iterArg, %129 : tensor<20xf32>
      %131 = stablehlo.multiply %117, %115 : tensor<20xf32>
      %132 = stablehlo.add %iterArg, %131 : tensor<20xf32>
      %133 = stablehlo.add %132, %116 : tensor<20xf32>
      %134 = stablehlo.multiply %130, %133 : tensor<20xf32>
      %135 = stablehlo.divide %128, %134 : tensor<20xf32>
      %136 = stablehlo.select %114, %122, %135 : tensor<20xi1>, tensor<20xf32>
      %137 = stablehlo.subtract %iterArg_26, %115 : tensor<20xf32>
      %138 = stablehlo.multiply %115, %137 : tensor<20xf32>
      %139 = stablehlo.multiply %138, %iterArg_27 : tensor<20xf32>
      %140 = stablehlo.multiply %117, %115 : tensor<20xf32>
      %141 = stablehlo.add %iterArg, %140 : tensor<20xf32>
      %142 = stablehlo.subtract %141, %116 : tensor<20xf32>
      %143 = stablehlo.multiply %117, %115 : tensor<20xf32>
      %144 = stablehlo.add %iterArg, %143 : tensor<20xf32>
      %145 = stablehlo.multiply %142, %144 : tensor<20xf32>
      %146 = stablehlo.divide %139, %145 : tensor<20xf32>
      %cst_41 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %147 = stablehlo.broadcast_in_dim %cst_41, dims = [] : (tensor<f32>) -> tensor<20xf32>
      %148 = stablehlo.select %106, %136, %146 : tensor<20xi1>, tensor<20xf32>
      %149 = stablehlo.select %108, %147, %148 : tensor<20xi1>, tensor<20xf32>
      %150 = stablehlo.broadcast_in_dim %iterArg_28, dims = [] : (tensor<i64>) -> tensor<20xi64>
      %c_42 = stablehlo.constant dense<0> : tensor<i64>
      %151 = stablehlo.broadcast_in_dim %c_42, dims = [] : (tensor<i64>) -> tensor<20xi64>
      %152 = stablehlo.compare EQ, %150, %151, SIGNED : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi1>
      %cst_43 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %153 = stablehlo.broadcast_in_dim %cst_43, dims = [] : (tensor<f32>) -> tensor<20xf32>
      %cst_44 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %154 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<20xf32>
      %155 = stablehlo.select %152, %153, %154 : tensor<20xi1>, tensor<20xf32>
      %156 = stablehlo.divide %149, %iterArg_30 : tensor<20xf32>
      %157 = stablehlo.add %155, %156 : tensor<20xf32>
      %cst_45 = stablehlo.constant dense<5.96046448E-8> : tensor<f32>
      %158 = stablehlo.broadcast_in_dim %cst_45, dims = [] : (tensor<f32>) -> tensor<20xf32>
      %159 = stablehlo.abs %157 : tensor<20xf32>
      %160 = stablehlo.compare LT, %159, %158, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
      %161 = stablehlo.select %160, %158, %157 : tensor<20xi1>, tensor<20xf32>
      %162 = stablehlo.multiply %149, %iterArg_31 : tensor<20xf32>
      %163 = stablehlo.add %155, %162 : tensor<20xf32>
      %164 = stablehlo.abs %163 : tensor<20xf32>
      %165 = stablehlo.compare LT, %164, %158, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
      %166 = stablehlo.select %165, %158, %163 : tensor<20xi1>, tensor<20xf32>
      %cst_46 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %167 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<f32>) -> tensor<20xf32>
      %168 = stablehlo.divide %167, %166 : tensor<20xf32>
      %169 = stablehlo.multiply %161, %168 : tensor<20xf32>
      %170 = stablehlo.multiply %iterArg_32, %169 : tensor<20xf32>
      %c_47 = stablehlo.constant dense<1> : tensor<i64>
      %171 = stablehlo.add %iterArg_28, %c_47 : tensor<i64>
      %cst_48 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %172 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<f32>) -> tensor<20xf32>
      %173 = stablehlo.subtract %169, %172 : tensor<20xf32>
      %174 = stablehlo.abs %173 : tensor<20xf32>
      %cst_49 = stablehlo.constant dense<5.96046448E-8> : tensor<f32>
      %175 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<f32>) -> tensor<20xf32>
      %176 = stablehlo.compare GE, %174, %175, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
      %c_50 = stablehlo.constant dense<false> : tensor<i1>
      %177 = stablehlo.reduce(%176 init: %c_50) applies stablehlo.or across dimensions = [0] : (tensor<20xi1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %iterArg, %iterArg_26, %iterArg_27, %171, %177, %161, %168, %170 : tensor<20xf32>, tensor<20xf32>, tensor<20xf32>, tensor<i64>, tensor<i1>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>
    }
    %69 = chlo.lgamma %52 : tensor<20xf32> -> tensor<20xf32>
    %70 = stablehlo.add %51, %52 : tensor<20xf32>
    %71 = chlo.lgamma %70 : tensor<20xf32> -> tensor<20xf32>
    %72 = stablehlo.subtract %69, %71 : tensor<20xf32>
    %73 = chlo.lgamma %51 : tensor<20xf32> -> tensor<20xf32>
    %74 = stablehlo.add %73, %72 : tensor<20xf32>
    %cst_21 = stablehlo.constant dense<2.3509887E-38> : tensor<f32>
    %75 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %76 = stablehlo.compare LT, %51, %75, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %77 = stablehlo.negate %55 : tensor<20xf32>
    %78 = stablehlo.log_plus_one %77 : tensor<20xf32>
    %79 = stablehlo.multiply %78, %52 : tensor<20xf32>
    %80 = stablehlo.subtract %79, %72 : tensor<20xf32>
    %81 = stablehlo.exponential %80 : tensor<20xf32>
    %82 = stablehlo.log %55 : tensor<20xf32>
    %83 = stablehlo.multiply %82, %51 : tensor<20xf32>
    %84 = stablehlo.negate %55 : tensor<20xf32>
    %85 = stablehlo.log_plus_one %84 : tensor<20xf32>
    %86 = stablehlo.multiply %85, %52 : tensor<20xf32>
    %87 = stablehlo.add %83, %86 : tensor<20xf32>
    %88 = stablehlo.subtract %87, %74 : tensor<20xf32>
    %89 = stablehlo.exponential %88 : tensor<20xf32>
    %90 = stablehlo.divide %89, %51 : tensor<20xf32>
    %91 = stablehlo.select %76, %81, %90 : tensor<20xi1>, tensor<20xf32>
    %92 = stablehlo.multiply %68#7, %91 : tensor<20xf32>
    %cst_22 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %93 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %94 = stablehlo.subtract %93, %92 : tensor<20xf32>
    %95 = stablehlo.select %50, %92, %94 : tensor<20xi1>, tensor<20xf32>
    %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %96 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %97 = stablehlo.select %26, %96, %95 : tensor<20xi1>, tensor<20xf32>
    %cst_24 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %98 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %99 = stablehlo.select %29, %98, %97 : tensor<20xi1>, tensor<20xf32>
    %cst_25 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %100 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %101 = stablehlo.select %43, %100, %99 : tensor<20xi1>, tensor<20xf32>
    return %0, %101 : tensor<20xf32>, tensor<20xf32>
  }
  func.func private @remainder(%arg0: tensor<20xi64>, %arg1: tensor<20xi64>) -> tensor<20xi64> {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<20xi64>
    %1 = stablehlo.compare EQ, %arg1, %0, SIGNED : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i64>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i64>) -> tensor<20xi64>
    %3 = call @_where(%1, %2, %arg1) : (tensor<20xi1>, tensor<20xi64>, tensor<20xi64>) -> tensor<20xi64>
    %4 = stablehlo.remainder %arg0, %3 : tensor<20xi64>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i64>) -> tensor<20xi64>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i64>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i64>) -> tensor<20xi64>
    %8 = stablehlo.compare LT, %4, %7, SIGNED : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i64>
    %9 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i64>) -> tensor<20xi64>
    %10 = stablehlo.compare LT, %3, %9, SIGNED : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<20xi1>, tensor<20xi1>) -> tensor<20xi1>
    %12 = stablehlo.and %11, %6 : tensor<20xi1>
    %13 = stablehlo.add %4, %3 : tensor<20xi64>
    %14 = stablehlo.select %12, %13, %4 : tensor<20xi1>, tensor<20xi64>
    return %14 : tensor<20xi64>
  }
  func.func private @_where(%arg0: tensor<20xi1>, %arg1: tensor<20xi64>, %arg2: tensor<20xi64>) -> tensor<20xi64> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<20xi1>, tensor<20xi64>
    return %0 : tensor<20xi64>
  }
  func.func private @floor_divide(%arg0: tensor<20xi64>, %arg1: tensor<20xi64>) -> tensor<20xi64> {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<20xi64>
    %1 = stablehlo.sign %arg0 : tensor<20xi64>
    %2 = stablehlo.sign %arg1 : tensor<20xi64>
    %3 = stablehlo.compare NE, %1, %2, SIGNED : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi1>
    %4 = stablehlo.remainder %arg0, %arg1 : tensor<20xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %5 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<20xi64>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<20xi64>, tensor<20xi64>) -> tensor<20xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %7 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<20xi1>
    %8 = stablehlo.compare NE, %3, %7, UNSIGNED : (tensor<20xi1>, tensor<20xi1>) -> tensor<20xi1>
    %9 = stablehlo.convert %8 : tensor<20xi1>
    %c_1 = stablehlo.constant dense<false> : tensor<i1>
    %10 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i1>) -> tensor<20xi1>
    %11 = stablehlo.compare NE, %6, %10, UNSIGNED : (tensor<20xi1>, tensor<20xi1>) -> tensor<20xi1>
    %12 = stablehlo.convert %11 : tensor<20xi1>
    %13 = stablehlo.and %9, %12 : tensor<20xi1>
    %c_2 = stablehlo.constant dense<1> : tensor<i64>
    %14 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i64>) -> tensor<20xi64>
    %15 = stablehlo.subtract %0, %14 : tensor<20xi64>
    %16 = call @_where_0(%13, %15, %0) : (tensor<20xi1>, tensor<20xi64>, tensor<20xi64>) -> tensor<20xi64>
    return %16 : tensor<20xi64>
  }
  func.func private @_where_0(%arg0: tensor<20xi1>, %arg1: tensor<20xi64>, %arg2: tensor<20xi64>) -> tensor<20xi64> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<20xi1>, tensor<20xi64>
    return %0 : tensor<20xi64>
  }
}
