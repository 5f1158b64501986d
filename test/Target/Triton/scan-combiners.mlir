// RUN: dyno-opt %s --dyno-triton-lowering-pipeline -o %t.mlir
// RUN: dyno-translate --mlir-to-triton %t.mlir | FileCheck %s

// Scans with combiners of their own (cummax's: the later of the larger, NaN first) get
// a @triton.jit combine function printed before their kernel, with the kernel's
// constants as literals; an integer maximum scans with the prelude's function.
// CHECK:       def _dyno_scan_int_max(a, b):
// CHECK-LABEL: def _dyno_combine_kernel_0_0_0(a, b):
// CHECK:         (b >= a)
// CHECK:         return v{{[0-9]+}}
// CHECK-LABEL: def kernel_0_0(
// CHECK:         tl.associative_scan(v{{[0-9]+}}, 1, _dyno_combine_kernel_0_0_0)
// CHECK-LABEL: def kernel_0_1(
// CHECK:         tl.associative_scan(v{{[0-9]+}}, 1, _dyno_scan_int_max)
func.func @main(%x: tensor<3x10xf32>, %i: tensor<3x10xi64>) -> (tensor<3x10xf32>, tensor<3x10xi64>) {
  %r:2 = dyno.launch @kernels::@kernel_0(%x, %i) : (tensor<3x10xf32>, tensor<3x10xi64>) -> (tensor<3x10xf32>, tensor<3x10xi64>)
  return %r#0, %r#1 : tensor<3x10xf32>, tensor<3x10xi64>
}
module @kernels {
  func.func @kernel_0(%x: tensor<3x10xf32>, %i: tensor<3x10xi64>) -> (tensor<3x10xf32>, tensor<3x10xi64>) {
    %zero = arith.constant 0.0 : f32
    %zi = arith.constant 0 : i64
    %e = tensor.empty() : tensor<3x10xf32>
    %a = tensor.empty() : tensor<3xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%a : tensor<3xf32>) -> tensor<3xf32>
    %s:2 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<3x10xf32>)
        outs(%e, %acc : tensor<3x10xf32>, tensor<3xf32>) {
    ^bb0(%p: f32, %in: f32):
      %ge = arith.cmpf oge, %in, %p : f32
      %nan = arith.cmpf uno, %in, %in : f32
      %pnan = arith.cmpf uno, %p, %p : f32
      %true = arith.constant true
      %ok = arith.xori %pnan, %true : i1
      %beyond = arith.andi %ok, %ge : i1
      %moves = arith.ori %nan, %beyond : i1
      %t = arith.select %moves, %in, %p : f32
      dyno.yield %t : f32
    } -> tensor<3x10xf32>, tensor<3xf32>
    %ie = tensor.empty() : tensor<3x10xi64>
    %ia = tensor.empty() : tensor<3xi64>
    %iacc = linalg.fill ins(%zi : i64) outs(%ia : tensor<3xi64>) -> tensor<3xi64>
    %t:2 = dyno.scan dimension(1) inclusive(true) ins(%i : tensor<3x10xi64>)
        outs(%ie, %iacc : tensor<3x10xi64>, tensor<3xi64>) {
    ^bb0(%p: i64, %in: i64):
      %m = arith.maxsi %p, %in : i64
      dyno.yield %m : i64
    } -> tensor<3x10xi64>, tensor<3xi64>
    return %s#0, %t#0 : tensor<3x10xf32>, tensor<3x10xi64>
  }
}
