// RUN: dyno-opt %s --dyno-fuse-elementwise="rotations-as-reads=true" --split-input-file | FileCheck %s
// RUN: dyno-opt %s --dyno-fuse-elementwise --split-input-file | FileCheck %s --check-prefix=OFF

// torch.roll(x, shifts=(-2, -2), dims=(1, 2)) as torch-mlir decomposes it: per
// dimension, the concat of x[2:] and x[:2] (through tensor.casts). Both rotations read x
// at (i + 2) mod 8 in the generic that consumes them.
// CHECK-DAG:   #[[ROT:.*]] = affine_map<(d0, d1, d2) -> (d0, (d1 + 2) mod 8, (d2 + 2) mod 8)>
// CHECK-LABEL: func.func @roll_two_dims
// CHECK-NOT:     tensor.concat
// CHECK:         linalg.generic {indexing_maps = [#[[ROT]], {{.*}}]{{.*}} ins(%arg0
// CHECK:           arith.mulf
// CHECK-NOT:     linalg.generic
// OFF-LABEL:   func.func @roll_two_dims
// OFF-COUNT-2:   tensor.concat
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @roll_two_dims(%x: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %a = tensor.extract_slice %x[0, 2, 0] [2, 6, 8] [1, 1, 1] : tensor<2x8x8xf32> to tensor<2x6x8xf32>
  %ac = tensor.cast %a : tensor<2x6x8xf32> to tensor<2x?x8xf32>
  %b = tensor.extract_slice %x[0, 0, 0] [2, 2, 8] [1, 1, 1] : tensor<2x8x8xf32> to tensor<2x2x8xf32>
  %bc = tensor.cast %b : tensor<2x2x8xf32> to tensor<2x?x8xf32>
  %r1 = tensor.concat dim(1) %ac, %bc : (tensor<2x?x8xf32>, tensor<2x?x8xf32>) -> tensor<2x8x8xf32>
  %c = tensor.extract_slice %r1[0, 0, 2] [2, 8, 6] [1, 1, 1] : tensor<2x8x8xf32> to tensor<2x8x6xf32>
  %cc = tensor.cast %c : tensor<2x8x6xf32> to tensor<2x8x?xf32>
  %d = tensor.extract_slice %r1[0, 0, 0] [2, 8, 2] [1, 1, 1] : tensor<2x8x8xf32> to tensor<2x8x2xf32>
  %dc = tensor.cast %d : tensor<2x8x2xf32> to tensor<2x8x?xf32>
  %r2 = tensor.concat dim(2) %cc, %dc : (tensor<2x8x?xf32>, tensor<2x8x?xf32>) -> tensor<2x8x8xf32>
  %e = tensor.empty() : tensor<2x8x8xf32>
  %sq = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r2 : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %v : f32
    linalg.yield %m : f32
  } -> tensor<2x8x8xf32>
  return %sq : tensor<2x8x8xf32>
}

// -----

// A rotation read through a window partition (expand_shape, then a transpose): the
// transpose reads x at the rotated row of the window's element, one read instead of
// two copies.
// CHECK-DAG:   #[[WIN:.*]] = affine_map<(d0, d1, d2, d3) -> ((d2 + d0 * 4 + 3) mod 8, d3 + d1 * 4)>
// CHECK-LABEL: func.func @roll_then_window_partition
// CHECK-NOT:     tensor.concat
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic {indexing_maps = [#[[WIN]], {{.*}}]{{.*}} ins(%arg0 : tensor<8x8xf32>)
// CHECK-NOT:     linalg.generic
#tr4 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @roll_then_window_partition(%x: tensor<8x8xf32>) -> tensor<2x2x4x4xf32> {
  %a = tensor.extract_slice %x[3, 0] [5, 8] [1, 1] : tensor<8x8xf32> to tensor<5x8xf32>
  %b = tensor.extract_slice %x[0, 0] [3, 8] [1, 1] : tensor<8x8xf32> to tensor<3x8xf32>
  %r = tensor.concat dim(0) %a, %b : (tensor<5x8xf32>, tensor<3x8xf32>) -> tensor<8x8xf32>
  %w = tensor.expand_shape %r [[0, 1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<8x8xf32> into tensor<2x4x2x4xf32>
  %e = tensor.empty() : tensor<2x2x4x4xf32>
  %t = linalg.generic {indexing_maps = [#tr4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w : tensor<2x4x2x4xf32>) outs(%e : tensor<2x2x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<2x2x4x4xf32>
  return %t : tensor<2x2x4x4xf32>
}

// -----

// Not rotations: slices of different tensors, a slice that does not start at the end of
// the other, a dimension not taken whole.
// CHECK-LABEL: func.func @not_rotations
// CHECK-COUNT-3: tensor.concat
func.func @not_rotations(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<7x4xf32>, tensor<8x2xf32>) {
  %a = tensor.extract_slice %x[3, 0] [5, 4] [1, 1] : tensor<8x4xf32> to tensor<5x4xf32>
  %b = tensor.extract_slice %y[0, 0] [3, 4] [1, 1] : tensor<8x4xf32> to tensor<3x4xf32>
  %r1 = tensor.concat dim(0) %a, %b : (tensor<5x4xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %c = tensor.extract_slice %x[0, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
  %r2 = tensor.concat dim(0) %a, %c : (tensor<5x4xf32>, tensor<2x4xf32>) -> tensor<7x4xf32>
  %d = tensor.extract_slice %x[3, 0] [5, 2] [1, 1] : tensor<8x4xf32> to tensor<5x2xf32>
  %f = tensor.extract_slice %x[0, 0] [3, 2] [1, 1] : tensor<8x4xf32> to tensor<3x2xf32>
  %r3 = tensor.concat dim(0) %d, %f : (tensor<5x2xf32>, tensor<3x2xf32>) -> tensor<8x2xf32>
  return %r1, %r2, %r3 : tensor<8x4xf32>, tensor<7x4xf32>, tensor<8x2xf32>
}

// -----

// A reduction reads a rotation's copy, not x through the mod map (dyno-block-long-sums
// and the Triton target's split of full reductions need projected-permutation reads),
// also when the rotation is read through an expand_shape whose split-off dimension the
// reduction sums (the mod map would leave that loop without a size).
// CHECK-LABEL: func.func @reductions_read_the_rotation
// CHECK:         %[[ROT:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<8x4xf32>)
// CHECK:         %[[W:.*]] = tensor.expand_shape %[[ROT]]
// CHECK:         linalg.generic {{.*}}ins(%[[W]] : tensor<2x4x4xf32>)
// CHECK:         linalg.generic {{.*}}ins(%[[ROT]] : tensor<8x4xf32>)
#w3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#w3out = affine_map<(d0, d1, d2) -> (d0, d2)>
#s2 = affine_map<(d0, d1) -> (d0, d1)>
#s2out = affine_map<(d0, d1) -> ()>
func.func @reductions_read_the_rotation(%x: tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<f32>) {
  %a = tensor.extract_slice %x[3, 0] [5, 4] [1, 1] : tensor<8x4xf32> to tensor<5x4xf32>
  %b = tensor.extract_slice %x[0, 0] [3, 4] [1, 1] : tensor<8x4xf32> to tensor<3x4xf32>
  %r = tensor.concat dim(0) %a, %b : (tensor<5x4xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %w = tensor.expand_shape %r [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#w3, #w3out], iterator_types = ["parallel", "reduction", "parallel"]} ins(%w : tensor<2x4x4xf32>) outs(%f : tensor<2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.addf %v, %o : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %t = linalg.generic {indexing_maps = [#s2, #s2out], iterator_types = ["reduction", "reduction"]} ins(%r : tensor<8x4xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %u = arith.addf %v, %o : f32
    linalg.yield %u : f32
  } -> tensor<f32>
  return %s, %t : tensor<2x4xf32>, tensor<f32>
}

// -----

// A roll by one: linalg-fold-unit-extent-dims has made the one-row slice rank-reducing,
// with an expand_shape giving its unit dimension back.
// CHECK-DAG:   #[[BY1:.*]] = affine_map<(d0, d1) -> ((d0 + 7) mod 8, d1)>
// CHECK-LABEL: func.func @roll_by_one
// CHECK-NOT:     tensor.concat
// CHECK:         linalg.generic {indexing_maps = [#[[BY1]], {{.*}}]{{.*}} ins(%arg0 : tensor<8x4xf32>)
func.func @roll_by_one(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %a = tensor.extract_slice %x[7, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
  %ae = tensor.expand_shape %a [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
  %ac = tensor.cast %ae : tensor<1x4xf32> to tensor<?x4xf32>
  %b = tensor.extract_slice %x[0, 0] [7, 4] [1, 1] : tensor<8x4xf32> to tensor<7x4xf32>
  %bc = tensor.cast %b : tensor<7x4xf32> to tensor<?x4xf32>
  %r = tensor.concat dim(0) %ac, %bc : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
