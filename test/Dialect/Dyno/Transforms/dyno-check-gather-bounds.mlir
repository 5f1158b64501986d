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

// -----

// A scatter's indices are checked on the host before it runs: 0 <= index <= size -
// extent of the update slice along the indexed dimension (here 6 - 1).
// CHECK-LABEL: func.func @scatter_rows
// CHECK:         %[[SIZE:.*]] = tensor.dim %arg2, %c0
// CHECK:         %[[EXTENT:.*]] = tensor.dim %arg0, %c1
// CHECK:         %[[LAST:.*]] = arith.subi %[[SIZE]], %[[EXTENT]]
// CHECK:         %[[BOUND:.*]] = arith.index_cast %[[LAST]] : index to i64
// CHECK:         %[[ALL:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} ins(%arg1 : tensor<4x1xi64>)
// CHECK:           %[[GE:.*]] = arith.cmpi sge, %[[IN:.*]], %{{.*}} : i64
// CHECK:           %[[LE:.*]] = arith.cmpi sle, %[[IN]], %[[BOUND]] : i64
// CHECK:         %[[HOLDS:.*]] = tensor.extract %[[ALL]][] : tensor<i1>
// CHECK:         cf.assert %[[HOLDS]], "index out of range: dyno checks scatter indices like eager"
// CHECK:         dyno.scatter
func.func @scatter_rows(%u: tensor<4x1x3xf32>, %i: tensor<4x1xi64>, %o: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %0 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<4x1x3xf32>, tensor<4x1xi64>) outs(%o : tensor<6x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    dyno.yield %s : f32
  } -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

// Two index columns (scatter_add's (row, column) pairs): each column has its own bound.
// CHECK-LABEL: func.func @scatter_elements
// CHECK:         %[[B0:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:         %[[B1:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:         linalg.generic
// CHECK:           %[[COL:.*]] = linalg.index 1 : index
// CHECK:           %[[IS0:.*]] = arith.cmpi eq, %[[COL]], %c0
// CHECK:           %[[BOUND:.*]] = arith.select %[[IS0]], %[[B0]], %[[B1]] : i64
// CHECK:           arith.cmpi sle, %{{.*}}, %[[BOUND]] : i64
// CHECK:         cf.assert
func.func @scatter_elements(%u: tensor<10xf32>, %i: tensor<10x2xi64>, %o: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %0 = dyno.scatter dimension_map([0, 1]) unique_indices(false) ins(%u, %i : tensor<10xf32>, tensor<10x2xi64>) outs(%o : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    dyno.yield %s : f32
  } -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
