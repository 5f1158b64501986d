// RUN: dyno-opt %s --dyno-cpu-lowering-pipeline | FileCheck %s --check-prefix=BLOCKED
// RUN: dyno-opt %s '--dyno-cpu-lowering-pipeline=block-long-sums=false' | FileCheck %s --check-prefix=UNBLOCKED
// RUN: dyno-opt %s --dyno-triton-lowering-pipeline | FileCheck %s --check-prefix=TRITON-BLOCKED
// RUN: dyno-opt %s '--dyno-triton-lowering-pipeline=block-long-sums=false' | FileCheck %s --check-prefix=TRITON-UNBLOCKED
// RUN: not dyno-opt %s '--dyno-cpu-lowering-pipeline=block-long-sum=false' 2>&1 | FileCheck %s --check-prefix=BAD

// `block-long-sums=false` leaves long float sums to one accumulator per lane (to measure
// what the blocks cost); by default an f32 row of 100000 is summed in blocks of 512.
// BLOCKED-LABEL: llvm.func @kernel_0
// BLOCKED: llvm.mlir.constant(512 : index)
// UNBLOCKED-LABEL: llvm.func @kernel_0
// UNBLOCKED-NOT: llvm.mlir.constant(512 : index)
// UNBLOCKED: llvm.mlir.constant(100000 : index)
// TRITON-BLOCKED: tl.rnumel = 512
// TRITON-UNBLOCKED-NOT: tl.rnumel = 512
// TRITON-UNBLOCKED: tl.rnumel = 100000
// TRITON-UNBLOCKED-NOT: tl.rnumel = 512
// BAD: no such option block-long-sum

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
module {
  func.func @main(%x: tensor<4x100000xf32>) -> tensor<4xf32> {
    %0 = dyno.launch @kernels::@kernel_0(%x) : (tensor<4x100000xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  module @kernels {
    func.func @kernel_0(%x: tensor<4x100000xf32>) -> tensor<4xf32> {
      %zero = arith.constant 0.0 : f32
      %empty = tensor.empty() : tensor<4xf32>
      %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
      %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
          ins(%x : tensor<4x100000xf32>) outs(%init : tensor<4xf32>) {
      ^bb0(%in: f32, %acc: f32):
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      } -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
}
