// RUN: dyno-opt %s --split-input-file --dyno-check-gather-bounds | FileCheck %s

// index_select / advanced indexing: the row read depends on an input value.
// CHECK-LABEL: func.func @gather_rows
// CHECK:         ^bb0(%[[I:.*]]: i64, %{{.*}}: f32):
// CHECK:           %[[ROW:.*]] = arith.index_cast %[[I]]
// CHECK:           %[[SIZE:.*]] = tensor.dim %arg1, %c0
// CHECK:           %[[GE:.*]] = arith.cmpi sge, %[[ROW]], %c0
// CHECK:           %[[LT:.*]] = arith.cmpi slt, %[[ROW]], %[[SIZE]]
// CHECK:           %[[OK:.*]] = arith.andi %[[GE]], %[[LT]]
// CHECK:           cf.assert %[[OK]], "index out of range
// CHECK-NOT:       cf.assert
// CHECK:           tensor.extract %arg1[%[[ROW]], %{{.*}}]
func.func @gather_rows(%idx: tensor<3xi64>, %w: tensor<10x4xf32>) -> tensor<3x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%idx : tensor<3xi64>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %col = linalg.index 1 : index
    %row = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%row, %col] : tensor<10x4xf32>
    linalg.yield %v : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// Indices computed from loop indices only are in bounds by construction: no check.
// CHECK-LABEL: func.func @shifted_read
// CHECK-NOT:     cf.assert
func.func @shifted_read(%x: tensor<4xf32>, %w: tensor<5xf32>) -> tensor<4xf32> {
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = arith.addi %i, %c1 : index
    %v = tensor.extract %w[%j] : tensor<5xf32>
    %s = arith.addf %a, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
