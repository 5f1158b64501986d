// RUN: dyno-opt %s --dyno-triton-lowering-pipeline -o %t.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t.mlir
// RUN: dyno-translate --mlir-to-triton %t.mlir | FileCheck %s

// A cumsum feeding a sort, and a scatter_add whose indices are stacked with
// tensor.insert_slice, all in one kernel: each scan, sort and scatter gets a kernel of
// its own; the scatter's result starts as a copy of its original (argument 2). The
// sort's indices start as positions (an iota), which its kernel computes, not loads.
// The stack's two inserts (elementwise selects) share one piece: pieces are runs of ops
// that fit one index space.
// HOST-LABEL: func.func @main
// HOST:         %[[SCAN:.*]] = dyno.launch @kernels::@kernel_0_0(%arg0)
// HOST:         %[[SORT:.*]]:2 = dyno.launch @kernels::@kernel_0_1(%[[SCAN]]) :
// HOST:         %[[STACK:.*]] = dyno.launch @kernels::@kernel_0_2(%arg1, %arg2)
// HOST:         %[[SCATTER:.*]] = dyno.launch @kernels::@kernel_0_3(%arg3, %[[STACK]], %arg4) {initial_values = array<i64: 2>}
// HOST:         return %[[SORT]]#0, %[[SORT]]#1, %[[SCATTER]]

// The prelude's sorting network, then the kernels.
// CHECK:       def _dyno_bitonic_step(x, STAGE: tl.constexpr, J: tl.constexpr):
// CHECK:       def _dyno_sort(x):
// CHECK-LABEL: def kernel_0_0(arg0, arg1, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
// CHECK:         v{{[0-9]+}} = tl.associative_scan(v{{[0-9]+}}, 1, _dyno_sum)
// CHECK-LABEL: def kernel_0_1(arg0, arg1, arg2, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
// CHECK:         v{{[0-9]+}} = _dyno_sort(v{{[0-9]+}})
// CHECK:         [[FROM:v[0-9]+]] = (v{{[0-9]+}} & tl.full([], 4294967295, tl.int64))
// CHECK:         tl.store(arg2 + v{{[0-9]+}}, [[FROM]], mask=v{{[0-9]+}})
// CHECK-LABEL: def kernel_0_2(
// CHECK:         tl.where(
// CHECK-LABEL: def kernel_0_3(arg0, arg1, arg2, arg3, XBLOCK: tl.constexpr):
// CHECK:         tl.atomic_add(arg3 + v{{[0-9]+}}, v{{[0-9]+}}, mask=v{{[0-9]+}})
// CHECK:       KERNELS = {
// CHECK:         "kernel_0_0": {"args": ["float32", "float32"], "xnumel": 3, "rnumel": 10,
func.func @main(%x: tensor<3x10xf32>, %i0: tensor<5xi64>, %i1: tensor<5xi64>, %u: tensor<5xf32>, %orig: tensor<4x6xf32>) -> (tensor<3x10xf32>, tensor<3x10xi64>, tensor<4x6xf32>) {
  %r:3 = dyno.launch @kernels::@kernel_0(%x, %i0, %i1, %u, %orig) : (tensor<3x10xf32>, tensor<5xi64>, tensor<5xi64>, tensor<5xf32>, tensor<4x6xf32>) -> (tensor<3x10xf32>, tensor<3x10xi64>, tensor<4x6xf32>)
  return %r#0, %r#1, %r#2 : tensor<3x10xf32>, tensor<3x10xi64>, tensor<4x6xf32>
}
module @kernels {
  func.func @kernel_0(%x: tensor<3x10xf32>, %i0: tensor<5xi64>, %i1: tensor<5xi64>, %u: tensor<5xf32>, %orig: tensor<4x6xf32>) -> (tensor<3x10xf32>, tensor<3x10xi64>, tensor<4x6xf32>) {
    %zero = arith.constant 0.0 : f32
    %zi = arith.constant 0 : i64
    %e = tensor.empty() : tensor<3x10xf32>
    %a = tensor.empty() : tensor<3xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%a : tensor<3xf32>) -> tensor<3xf32>
    %s:2 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<3x10xf32>)
        outs(%e, %acc : tensor<3x10xf32>, tensor<3xf32>) {
    ^bb0(%p: f32, %in: f32):
      %t = arith.addf %p, %in : f32
      dyno.yield %t : f32
    } -> tensor<3x10xf32>, tensor<3xf32>
    %ie = tensor.empty() : tensor<3x10xi64>
    %iota = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%ie : tensor<3x10xi64>) {
    ^bb0(%o: i64):
      %k = linalg.index 1 : index
      %k64 = arith.index_cast %k : index to i64
      linalg.yield %k64 : i64
    } -> tensor<3x10xi64>
    %sorted:2 = dyno.sort dimension(1) outs(%s#0, %iota : tensor<3x10xf32>, tensor<3x10xi64>) {
    ^bb0(%l: f32, %r: f32, %li: i64, %ri: i64):
      %le = arith.cmpf ole, %l, %r : f32
      dyno.yield %le : i1
    } -> tensor<3x10xf32>, tensor<3x10xi64>
    %se = tensor.empty() : tensor<5x2xi64>
    %sf = linalg.fill ins(%zi : i64) outs(%se : tensor<5x2xi64>) -> tensor<5x2xi64>
    %st0 = tensor.insert_slice %i0 into %sf[0, 0] [5, 1] [1, 1] : tensor<5xi64> into tensor<5x2xi64>
    %st1 = tensor.insert_slice %i1 into %st0[0, 1] [5, 1] [1, 1] : tensor<5xi64> into tensor<5x2xi64>
    %sc = dyno.scatter dimension_map([0, 1]) unique_indices(false) ins(%u, %st1 : tensor<5xf32>, tensor<5x2xi64>) outs(%orig : tensor<4x6xf32>) {
    ^bb0(%v: f32, %o: f32):
      %t = arith.addf %o, %v : f32
      dyno.yield %t : f32
    } -> tensor<4x6xf32>
    return %sorted#0, %sorted#1, %sc : tensor<3x10xf32>, tensor<3x10xi64>, tensor<4x6xf32>
  }
}
