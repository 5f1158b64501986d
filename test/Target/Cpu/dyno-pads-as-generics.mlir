// RUN: dyno-opt %s --split-input-file --dyno-pads-as-generics | FileCheck %s

// A max pool's pad: a generic over the padded shape that reads the source where the
// index minus the low padding falls inside it (in an scf.if, so that the read is
// contiguous along the innermost dimension: a masked vector load), and yields -inf
// elsewhere. The batch dimension is not padded: its index is read as it is.
// CHECK-LABEL: func.func @pool_pad
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>)
// CHECK-NOT: tensor.pad
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[COLUMNS:.*]] = arith.constant 16 : index
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<2x9x17xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: outs(%[[EMPTY]] : tensor<2x9x17xf32>)
// CHECK: %[[I0:.*]] = linalg.index 0 : index
// CHECK: %[[I1:.*]] = linalg.index 1 : index
// CHECK: %[[I2:.*]] = linalg.index 2 : index
// CHECK: %[[S1:.*]] = arith.subi %[[I1]], %{{.*}} : index
// CHECK: %[[IN1:.*]] = arith.cmpi ult, %[[S1]], %[[ROWS]] : index
// CHECK: %[[S2:.*]] = arith.subi %[[I2]], %{{.*}} : index
// CHECK: %[[IN2:.*]] = arith.cmpi ult, %[[S2]], %[[COLUMNS]] : index
// CHECK: %[[IN:.*]] = arith.andi %[[IN1]], %[[IN2]] : i1
// CHECK: %[[R:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK:   %[[V:.*]] = tensor.extract %[[X]][%[[I0]], %[[S1]], %[[S2]]] : tensor<2x8x16xf32>
// CHECK:   scf.yield %[[V]] : f32
// CHECK: } else {
// CHECK:   scf.yield %[[NINF]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @pool_pad(%x: tensor<2x8x16xf32>) -> tensor<2x9x17xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 1, 1] high[0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %ninf : f32
  } : tensor<2x8x16xf32> to tensor<2x9x17xf32>
  return %p : tensor<2x9x17xf32>
}

// -----

// A padding value defined above the pad is used as it is.
// CHECK-LABEL: func.func @value_from_above
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[V:.*]]: f32)
// CHECK: linalg.generic
// CHECK: scf.if
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[V]] : f32
func.func @value_from_above(%x: tensor<4xf32>, %v: f32) -> tensor<7xf32> {
  %p = tensor.pad %x low[2] high[1] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<4xf32> to tensor<7xf32>
  return %p : tensor<7xf32>
}

// -----

// Dynamic shapes and empty sources stay pads.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: tensor.pad
// CHECK-NOT: linalg.generic
func.func @left_alone(%x: tensor<?xf32>, %e: tensor<0xf32>) -> (tensor<?xf32>, tensor<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<?xf32> to tensor<?xf32>
  %q = tensor.pad %e low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<0xf32> to tensor<2xf32>
  return %p, %q : tensor<?xf32>, tensor<2xf32>
}
