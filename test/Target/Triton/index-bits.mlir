// RUN: dyno-opt %s --dyno-triton-lowering-pipeline -o %t.mlir
// RUN: FileCheck %s --check-prefix=LEVEL < %t.mlir
// RUN: dyno-translate --mlir-to-triton %t.mlir | FileCheck %s

// Tensors of 2**31 elements and more take 64-bit indices, and then every offset is
// computed in int64. Triton's ranges are int32: a row index from tl.arange times the row
// length 800000000 wrapped past 2**31 (on an H100 the sum below read the wrong rows and
// returned NaN; the max and the scan ended in an illegal address). Integer arguments
// (dynamic sizes) are cast too: Triton passes a value below 2**31 as int32, and a
// product of two sizes may pass 2**31.
// LEVEL-LABEL: func.func @kernel_0(
// LEVEL-SAME:      tl.index_bits = 64
// LEVEL-LABEL: func.func @kernel_1(
// LEVEL-SAME:      tl.index_bits = 32
// CHECK-LABEL: def kernel_0(arg0, arg1, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
// CHECK:         tl.cast(tl.program_id(0), tl.int64)
// CHECK:         v[[ROWS:[0-9]+]] = tl.cast(tl.arange(0, RBLOCK), tl.int64)[None, :]
// CHECK:         = (v[[ROWS]] * 800000000)
// Below 2**31 elements, indices stay int32.
// CHECK-LABEL: def kernel_1(arg0, arg1, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
// CHECK:         = tl.program_id(0)
// CHECK:         = tl.arange(0, RBLOCK)[None, :]
// CHECK-NOT:     tl.int64
// CHECK-LABEL: def kernel_2(arg0, arg1, arg2, arg3, arg4, arg5, XBLOCK: tl.constexpr
// CHECK-NEXT:    arg2 = tl.cast(arg2, tl.int64)
// CHECK-NEXT:    arg3 = tl.cast(arg3, tl.int64)
// CHECK-NEXT:    arg4 = tl.cast(arg4, tl.int64)
// CHECK-NEXT:    arg5 = tl.cast(arg5, tl.int64)
// CHECK-NEXT:    v0 = (arg4 * arg5)

module {
  module @kernels {
    func.func @kernel_0(%x: tensor<4x800000000xf32>) -> tensor<800000000xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<800000000xf32>
      %init = linalg.fill ins(%zero : f32) outs(%e : tensor<800000000xf32>) -> tensor<800000000xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x800000000xf32>) outs(%init : tensor<800000000xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %s = arith.addf %a, %acc : f32
        linalg.yield %s : f32
      } -> tensor<800000000xf32>
      return %r : tensor<800000000xf32>
    }
    func.func @kernel_1(%x: tensor<4x8000xf32>) -> tensor<8000xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<8000xf32>
      %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8000xf32>) -> tensor<8000xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8000xf32>) outs(%init : tensor<8000xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %s = arith.addf %a, %acc : f32
        linalg.yield %s : f32
      } -> tensor<8000xf32>
      return %r : tensor<8000xf32>
    }
    func.func @kernel_2(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
      %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
      %e = tensor.empty(%d0, %d1) : tensor<?x?xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
      ^bb0(%a: f32, %o: f32):
        %n = math.exp %a : f32
        linalg.yield %n : f32
      } -> tensor<?x?xf32>
      return %r : tensor<?x?xf32>
    }
  }
}
