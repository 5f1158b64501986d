// RUN: dyno-opt %s --split-input-file --dyno-fold-empty-tensors | FileCheck %s

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// An elementwise op over a tensor with no elements computes nothing.
// CHECK-LABEL: func.func @empty_elementwise
// CHECK-NOT:     linalg.generic
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x0x3xf32>
// CHECK:         return %[[E]]
func.func @empty_elementwise(%x: tensor<1x0x3xf32>) -> tensor<1x0x3xf32> {
  %e = tensor.empty() : tensor<1x0x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x0x3xf32>) outs(%e : tensor<1x0x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.acos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x0x3xf32>
  return %r : tensor<1x0x3xf32>
}

// -----

// A sum over an empty dimension runs no iterations: its result is the fill.
// CHECK-LABEL: func.func @sum_over_empty_dimension
// CHECK:         %[[F:.*]] = linalg.fill
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[F]]
func.func @sum_over_empty_dimension(%x: tensor<4x0xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x0xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Empty pieces of a concatenation are dropped, also behind casts (torch-mlir's roll by
// 0); one piece left is the result.
// CHECK-LABEL: func.func @concat_with_an_empty_piece
// CHECK-NOT:     tensor.concat
// CHECK:         return %arg0
func.func @concat_with_an_empty_piece(%x: tensor<5x5xf32>) -> tensor<5x5xf32> {
  %cast = tensor.cast %x : tensor<5x5xf32> to tensor<?x5xf32>
  %e = tensor.empty() : tensor<0x5xf32>
  %cast_0 = tensor.cast %e : tensor<0x5xf32> to tensor<?x5xf32>
  %r = tensor.concat dim(0) %cast, %cast_0 : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<5x5xf32>
  return %r : tensor<5x5xf32>
}

// -----

// CHECK-LABEL: func.func @concat_keeps_the_other_pieces
// CHECK:         %[[C:.*]] = tensor.concat dim(0) %arg0, %arg1 : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<5x5xf32>
// CHECK:         return %[[C]]
func.func @concat_keeps_the_other_pieces(%x: tensor<2x5xf32>, %y: tensor<3x5xf32>, %z: tensor<0x5xf32>) -> tensor<5x5xf32> {
  %r = tensor.concat dim(0) %x, %z, %y : (tensor<2x5xf32>, tensor<0x5xf32>, tensor<3x5xf32>) -> tensor<5x5xf32>
  return %r : tensor<5x5xf32>
}

// -----

// Inserting nothing leaves the destination.
// CHECK-LABEL: func.func @insert_empty_slice
// CHECK-NOT:     tensor.insert_slice
// CHECK:         return %arg1
func.func @insert_empty_slice(%x: tensor<0x4xf32>, %d: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %r = tensor.insert_slice %x into %d[2, 0] [0, 4] [1, 1] : tensor<0x4xf32> into tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// Non-empty tensors are left alone.
// CHECK-LABEL: func.func @not_empty
// CHECK:         linalg.generic
func.func @not_empty(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.acos %a : f32
    linalg.yield %c : f32
  } -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}
