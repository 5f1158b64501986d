// RUN: dyno-opt %s --dyno-check-static-sizes | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// The init claims 1 row per batch where the input has a dynamic count: checked as soon
// as the input exists (at entry for an argument).
// CHECK-LABEL: func.func @assumed_unit_size
// CHECK:         %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x?xf32>
// CHECK:         %[[OK:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : index
// CHECK:         cf.assert %[[OK]], "dyno: the lowered graph assumes size 1 for dimension 1 of a tensor<?x?xf32>
// CHECK:         linalg.generic
func.func @assumed_unit_size(%x: tensor<?x?xf32>, %n: index) -> tensor<?x1xf32> {
  %e = tensor.empty(%n) : tensor<?x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<?x1xf32>
  return %r : tensor<?x1xf32>
}

// A cast that makes a dynamic size static is checked too.
// CHECK-LABEL: func.func @cast_to_static
// CHECK:         tensor.dim %arg0
// CHECK:         cf.assert %{{.*}}, "dyno: the lowered graph assumes size 8 for dimension 0
// CHECK:         tensor.cast
func.func @cast_to_static(%x: tensor<?xf32>) -> tensor<8xf32> {
  %c = tensor.cast %x : tensor<?xf32> to tensor<8xf32>
  return %c : tensor<8xf32>
}

// Agreeing static sizes need no check.
// CHECK-LABEL: func.func @static_untouched
// CHECK-NOT:     cf.assert
func.func @static_untouched(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
