// RUN: dyno-opt %s --dyno-cpu-pipeline | FileCheck %s
// RUN: dyno-opt %s --dyno-kernel-formation-pipeline | FileCheck %s --check-prefix=FORMED

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A softmax-like row pipeline feeding a matmul: one fused kernel, one library call.
// FORMED-LABEL: func.func @main
// FORMED:         %[[K:.*]] = dyno.launch @kernels::@kernel_0(%arg0)
// FORMED:         dyno.contraction "matmul"(%[[K]], %arg1)
// FORMED:       module @kernels
// FORMED:         func.func @kernel_0
// FORMED-COUNT-3:   linalg.generic

// CHECK-LABEL: func.func @main
// CHECK:         dyno.launch @kernels::@kernel_0
// CHECK:         dyno.contraction "matmul"
// CHECK:       module @kernels
// Bare-pointer ABI: one pointer per input and per result.
// CHECK:         llvm.func @kernel_0(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT:       llvm.call @malloc
// CHECK:           omp.parallel
// CHECK:             omp.wsloop
// Each row block's intermediates live on the stack, released every iteration.
// CHECK:               llvm.intr.stacksave
// CHECK:               llvm.alloca
// CHECK:               llvm.intr.stackrestore
// CHECK-NOT:       llvm.call @malloc
// CHECK-NOT:     func.func
func.func @main(%x: tensor<256x1024xf32>, %w: tensor<1024x64xf32>) -> tensor<256x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<256xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<256x1024xf32>) outs(%fm : tensor<256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<256xf32>
  %e = tensor.empty() : tensor<256x1024xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<256x1024xf32>, tensor<256xf32>) outs(%e : tensor<256x1024xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %q = math.exp %d : f32
    linalg.yield %q : f32
  } -> tensor<256x1024xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<256x1024xf32>) outs(%fs : tensor<256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<256xf32>
  %soft = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<256x1024xf32>, tensor<256xf32>) outs(%e : tensor<256x1024xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  } -> tensor<256x1024xf32>
  %e2 = tensor.empty() : tensor<256x64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %mm = linalg.matmul ins(%soft, %w : tensor<256x1024xf32>, tensor<1024x64xf32>) outs(%f2 : tensor<256x64xf32>) -> tensor<256x64xf32>
  return %mm : tensor<256x64xf32>
}
