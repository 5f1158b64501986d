// RUN: dyno-opt %s --dyno-triton-pipeline -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: dyno-translate --mlir-to-triton %t.mlir | FileCheck %s --check-prefix=PY

// An embedding of user indices scaled by 2 (torch-mlir's per-element index checks in
// the gather's body): on the Triton target the checks stay in the one kernel that
// gathers, as device assertions on its lanes; no reduction, no host assertion.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     cf.assert
// CHECK:         dyno.launch @kernels::@kernel_0(%arg0, %arg1)
// CHECK-NOT:     dyno.launch
// CHECK:       module @kernels
// CHECK:         func.func @kernel_0
// CHECK:           tl.assert %{{.*}} mask %{{.*}}, "index must be smaller than dim size"
// CHECK:           tl.assert %{{.*}} mask %{{.*}}, "index must be larger or equal to 0"
// CHECK:           tl.load
// PY:      @triton.jit(debug=True)
// PY-NEXT: def kernel_0(
// PY:        tl.device_assert(({{.*}}) | ~({{.*}}), "dyno check failed: index must be smaller than dim size")
// PY:        tl.device_assert(({{.*}}) | ~({{.*}}), "dyno check failed: index must be larger or equal to 0")
func.func @main(%idx: tensor<3xi64>, %w: tensor<10x4xf32>) -> tensor<3x4xf32> {
  %c10 = arith.constant 10 : index
  %c0 = arith.constant 0 : i64
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%idx : tensor<3xi64>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %col = linalg.index 1 : index
    %row = arith.index_cast %i : i64 to index
    %lt = arith.cmpi slt, %row, %c10 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %i, %c0 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %v = tensor.extract %w[%row, %col] : tensor<10x4xf32>
    linalg.yield %v : f32
  } -> tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
