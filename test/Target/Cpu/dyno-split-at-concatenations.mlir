// RUN: dyno-opt %s --dyno-split-at-concatenations --split-input-file | FileCheck %s
// RUN: dyno-opt %s --dyno-split-at-concatenations --dyno-fuse-elementwise --canonicalize --split-input-file | FileCheck %s --check-prefix=FUSED

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d1)>

// rotate_half as a rotary embedding computes it: a transposed copy, the negated second
// half and the first half concatenated, read by the loop that combines them. The reader
// is split where the halves meet, the slices of the copy are computed on their own (they
// do not overlap), and after fusion two loops read %x where it is.
// CHECK-LABEL: func.func @rotate_half
// CHECK-NOT:     tensor.concat
// CHECK:         %[[R0:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [4, 32] [1, 1]
// CHECK:         tensor.insert_slice %{{.*}} into %[[R0]][0, 32] [4, 32] [1, 1]
// CHECK-NOT:     tensor.concat
// FUSED-LABEL: func.func @rotate_half
// FUSED-COUNT-2: linalg.generic
// FUSED-NOT:     linalg.generic
// FUSED-NOT:     tensor.concat
func.func @rotate_half(%x: tensor<64x4xf32>, %cos: tensor<64xf32>, %sin: tensor<64xf32>) -> tensor<4x64xf32> {
  %e = tensor.empty() : tensor<4x64xf32>
  %t = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x64xf32>
  %a = tensor.extract_slice %t[0, 0] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  %b = tensor.extract_slice %t[0, 32] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  %eh = tensor.empty() : tensor<4x32xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x32xf32>) outs(%eh : tensor<4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.negf %in : f32
    linalg.yield %neg : f32
  } -> tensor<4x32xf32>
  %c = tensor.concat dim(1) %n, %a : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x64xf32>
  %r = linalg.generic {indexing_maps = [#t, #row, #id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %cos, %c, %sin : tensor<64x4xf32>, tensor<64xf32>, tensor<4x64xf32>, tensor<64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %co: f32, %rot: f32, %si: f32, %out: f32):
    %p = arith.mulf %v, %co : f32
    %q = arith.mulf %rot, %si : f32
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Left alone: overlapping slices of a producer (each is still read from it), and a
// concatenation read by a reduction.
// CHECK-LABEL: func.func @overlapping_and_reduced
// FUSED-LABEL: func.func @overlapping_and_reduced
// CHECK:         tensor.concat
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
func.func @overlapping_and_reduced(%x: tensor<4x64xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x64xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.negf %in : f32
    linalg.yield %neg : f32
  } -> tensor<4x64xf32>
  %a = tensor.extract_slice %t[0, 0] [4, 40] [1, 1] : tensor<4x64xf32> to tensor<4x40xf32>
  %b = tensor.extract_slice %t[0, 24] [4, 40] [1, 1] : tensor<4x64xf32> to tensor<4x40xf32>
  %c = tensor.concat dim(1) %a, %b : (tensor<4x40xf32>, tensor<4x40xf32>) -> tensor<4x80xf32>
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<4xf32>
  %s = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%c : tensor<4x80xf32>) outs(%s : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %in, %acc : f32
    linalg.yield %sum : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
