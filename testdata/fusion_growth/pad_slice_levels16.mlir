module @jit_shifts attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<256xf32>) -> (tensor<256xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad(%0, %c) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %2 = stablehlo.add %arg0, %1 : tensor<256xf32>
    %3 = stablehlo.slice %2 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %4 = call @_pad(%3, %c_0) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %5 = stablehlo.add %2, %4 : tensor<256xf32>
    %6 = stablehlo.slice %5 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %7 = call @_pad(%6, %c_1) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %8 = stablehlo.add %5, %7 : tensor<256xf32>
    %9 = stablehlo.slice %8 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %10 = call @_pad(%9, %c_2) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %11 = stablehlo.add %8, %10 : tensor<256xf32>
    %12 = stablehlo.slice %11 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %13 = call @_pad(%12, %c_3) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %14 = stablehlo.add %11, %13 : tensor<256xf32>
    %15 = stablehlo.slice %14 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %16 = call @_pad(%15, %c_4) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %17 = stablehlo.add %14, %16 : tensor<256xf32>
    %18 = stablehlo.slice %17 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %19 = call @_pad(%18, %c_5) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %20 = stablehlo.add %17, %19 : tensor<256xf32>
    %21 = stablehlo.slice %20 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %22 = call @_pad(%21, %c_6) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %23 = stablehlo.add %20, %22 : tensor<256xf32>
    %24 = stablehlo.slice %23 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %25 = call @_pad(%24, %c_7) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %26 = stablehlo.add %23, %25 : tensor<256xf32>
    %27 = stablehlo.slice %26 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_8 = stablehlo.constant dense<0> : tensor<i32>
    %28 = call @_pad(%27, %c_8) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %29 = stablehlo.add %26, %28 : tensor<256xf32>
    %30 = stablehlo.slice %29 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_9 = stablehlo.constant dense<0> : tensor<i32>
    %31 = call @_pad(%30, %c_9) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %32 = stablehlo.add %29, %31 : tensor<256xf32>
    %33 = stablehlo.slice %32 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_10 = stablehlo.constant dense<0> : tensor<i32>
    %34 = call @_pad(%33, %c_10) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %35 = stablehlo.add %32, %34 : tensor<256xf32>
    %36 = stablehlo.slice %35 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_11 = stablehlo.constant dense<0> : tensor<i32>
    %37 = call @_pad(%36, %c_11) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %38 = stablehlo.add %35, %37 : tensor<256xf32>
    %39 = stablehlo.slice %38 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_12 = stablehlo.constant dense<0> : tensor<i32>
    %40 = call @_pad(%39, %c_12) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %41 = stablehlo.add %38, %40 : tensor<256xf32>
    %42 = stablehlo.slice %41 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_13 = stablehlo.constant dense<0> : tensor<i32>
    %43 = call @_pad(%42, %c_13) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %44 = stablehlo.add %41, %43 : tensor<256xf32>
    %45 = stablehlo.slice %44 [1:256] : (tensor<256xf32>) -> tensor<255xf32>
    %c_14 = stablehlo.constant dense<0> : tensor<i32>
    %46 = call @_pad(%45, %c_14) : (tensor<255xf32>, tensor<i32>) -> tensor<256xf32>
    %47 = stablehlo.add %44, %46 : tensor<256xf32>
    return %47 : tensor<256xf32>
  }
  func.func private @_pad(%arg0: tensor<255xf32>, %arg1: tensor<i32>) -> tensor<256xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0], high = [1], interior = [0] : (tensor<255xf32>, tensor<f32>) -> tensor<256xf32>
    return %1 : tensor<256xf32>
  }
}
