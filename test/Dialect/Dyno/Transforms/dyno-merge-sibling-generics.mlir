// RUN: dyno-opt %s --dyno-merge-sibling-generics --split-input-file | FileCheck %s
// RUN: dyno-opt %s --dyno-fuse-elementwise --dyno-merge-sibling-generics --dyno-fuse-elementwise --split-input-file | FileCheck %s --check-prefix=FUSED

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Max pooling's shape: a shared running maximum %m (too costly to recompute) feeds the
// returned values and the returned indices. Merged into one generic, %m then has a
// single user and fuses in: one generic computes both outputs.
// CHECK-LABEL: func.func @returned_siblings$merged
// CHECK:         %[[M:.*]] = linalg.generic
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}} ins(%arg1, %[[M]], %arg1, %[[M]], %arg2 : {{.*}}) outs(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x16xi64>)
// CHECK:           arith.cmpf ogt
// CHECK:           arith.select
// CHECK:           arith.cmpf ogt
// CHECK:           arith.select
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, i64
// CHECK:         return %[[R]]#0, %[[R]]#1
// FUSED-LABEL: func.func @returned_siblings$merged
// FUSED:         linalg.generic {{.*}} ins(%arg1, %arg0, %arg2 : {{.*}}) outs(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x16xi64>)
// FUSED-NOT:     linalg.generic
func.func @returned_siblings$merged(%a: tensor<4x16xf32>, %b: tensor<4x16xf32>, %p: tensor<4x16xi64>) -> (tensor<4x16xf32>, tensor<4x16xi64>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %ei = tensor.empty() : tensor<4x16xi64>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = math.absf %x : f32
    %t = arith.mulf %s, %x : f32
    %u = arith.addf %t, %s : f32
    %w = arith.subf %u, %x : f32
    %q = arith.mulf %w, %w : f32
    %r = arith.addf %q, %t : f32
    %z = arith.subf %r, %u : f32
    %y = arith.mulf %z, %r : f32
    %k = arith.addf %y, %z : f32
    linalg.yield %k : f32
  } -> tensor<4x16xf32>
  %v = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%b, %m : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %gt = arith.cmpf ogt, %x, %mx : f32
    %s = arith.select %gt, %x, %mx : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %i = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%b, %m, %p : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xi64>) outs(%ei : tensor<4x16xi64>) {
  ^bb0(%x: f32, %mx: f32, %pos: i64, %o: i64):
    %gt = arith.cmpf ogt, %x, %mx : f32
    %zero = arith.constant 0 : i64
    %s = arith.select %gt, %pos, %zero : i64
    linalg.yield %s : i64
  } -> tensor<4x16xi64>
  return %v, %i : tensor<4x16xf32>, tensor<4x16xi64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A result returned through a reshape that precedes the other sibling: the reshape
// moves after the merged generic.
// CHECK-LABEL: func.func @returned_through_a_reshape$merged
// FUSED-LABEL: func.func @returned_through_a_reshape$merged
// CHECK:         %[[M:.*]] = linalg.generic
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}} ins(%arg1, %[[M]], %arg1, %[[M]], %arg2 : {{.*}}) outs(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x16xi64>)
// CHECK:           arith.cmpf ogt
// CHECK:           arith.select
// CHECK:           arith.cmpf ogt
// CHECK:           arith.select
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, i64
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[R]]#0
// CHECK:         return %[[V]], %[[R]]#1
func.func @returned_through_a_reshape$merged(%a: tensor<4x16xf32>, %b: tensor<4x16xf32>, %p: tensor<4x16xi64>) -> (tensor<2x2x16xf32>, tensor<4x16xi64>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %ei = tensor.empty() : tensor<4x16xi64>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = math.absf %x : f32
    %t = arith.mulf %s, %x : f32
    %u = arith.addf %t, %s : f32
    %w = arith.subf %u, %x : f32
    %q = arith.mulf %w, %w : f32
    %r = arith.addf %q, %t : f32
    %z = arith.subf %r, %u : f32
    %y = arith.mulf %z, %r : f32
    %k = arith.addf %y, %z : f32
    linalg.yield %k : f32
  } -> tensor<4x16xf32>
  %v = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%b, %m : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %gt = arith.cmpf ogt, %x, %mx : f32
    %s = arith.select %gt, %x, %mx : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %view = tensor.expand_shape %v [[0, 1], [2]] output_shape [2, 2, 16] : tensor<4x16xf32> into tensor<2x2x16xf32>
  %i = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%b, %m, %p : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xi64>) outs(%ei : tensor<4x16xi64>) {
  ^bb0(%x: f32, %mx: f32, %pos: i64, %o: i64):
    %gt = arith.cmpf ogt, %x, %mx : f32
    %zero = arith.constant 0 : i64
    %s = arith.select %gt, %pos, %zero : i64
    linalg.yield %s : i64
  } -> tensor<4x16xi64>
  return %view, %i : tensor<2x2x16xf32>, tensor<4x16xi64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A sibling that also feeds a reduction is not merged: merged, it would be written to
// memory instead of fusing into the reduction's kernel.
// CHECK-LABEL: func.func @sibling_feeding_a_reduction$kept
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @sibling_feeding_a_reduction$kept(%a: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %x2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.mulf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %x3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x3 : tensor<4x16xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.addf %x, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %x2, %x3, %sum : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// Returned generics of different iteration spaces (a transposed read of the same input)
// stay apart; so do returned generics that read no common tensor.
// CHECK-LABEL: func.func @other_spaces_or_inputs$kept
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @other_spaces_or_inputs$kept(%a: tensor<4x16xf32>, %b: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %et = tensor.empty() : tensor<16x4xf32>
  %x2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.mulf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%et : tensor<16x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.negf %x : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %x2, %t, %y : tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A rotary embedding's cos and sin of the same angles, each read by two kernels (q's and
// k's): fusion computes a transcendental producer of several users once, not in each
// consumer, so one generic computes both.
// CHECK-LABEL: func.func @transcendental_siblings_read_twice$merged
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}} ins(%arg0, %arg0 : {{.*}})
// CHECK:           math.cos
// CHECK:           math.sin
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK:         linalg.generic {{.*}} ins(%arg1, %[[R]]#0, %[[R]]#1 : {{.*}})
// CHECK:         linalg.generic {{.*}} ins(%arg2, %[[R]]#0, %[[R]]#1 : {{.*}})
func.func @transcendental_siblings_read_twice$merged(%a: tensor<4x16xf32>, %q: tensor<4x16xf32>, %k: tensor<4x16xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %er = tensor.empty() : tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.cos %x : f32
    linalg.yield %y : f32
  } -> tensor<4x16xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.sin %x : f32
    linalg.yield %y : f32
  } -> tensor<4x16xf32>
  %u = linalg.generic {indexing_maps = [#id, #id, #id, #row], iterator_types = ["parallel", "reduction"]} ins(%q, %c, %s : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) outs(%er : tensor<4xf32>) {
  ^bb0(%x: f32, %cx: f32, %sx: f32, %acc: f32):
    %m = arith.mulf %x, %cx : f32
    %n = arith.mulf %x, %sx : f32
    %t = arith.addf %m, %n : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %v = linalg.generic {indexing_maps = [#id, #id, #id, #row], iterator_types = ["parallel", "reduction"]} ins(%k, %c, %s : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) outs(%er : tensor<4xf32>) {
  ^bb0(%x: f32, %cx: f32, %sx: f32, %acc: f32):
    %m = arith.mulf %x, %cx : f32
    %n = arith.mulf %x, %sx : f32
    %t = arith.subf %m, %n : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %u, %v : tensor<4xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A transcendental generic of one user fuses into it: not merged with its sibling.
// CHECK-LABEL: func.func @transcendental_sibling_read_once$kept
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @transcendental_sibling_read_once$kept(%a: tensor<4x16xf32>, %q: tensor<4x16xf32>, %k: tensor<4x16xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %er = tensor.empty() : tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.cos %x : f32
    linalg.yield %y : f32
  } -> tensor<4x16xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.sin %x : f32
    linalg.yield %y : f32
  } -> tensor<4x16xf32>
  %u = linalg.generic {indexing_maps = [#id, #id, #id, #row], iterator_types = ["parallel", "reduction"]} ins(%q, %c, %s : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) outs(%er : tensor<4xf32>) {
  ^bb0(%x: f32, %cx: f32, %sx: f32, %acc: f32):
    %m = arith.mulf %x, %cx : f32
    %n = arith.mulf %x, %sx : f32
    %t = arith.addf %m, %n : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %v = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]} ins(%k, %s : tensor<4x16xf32>, tensor<4x16xf32>) outs(%er : tensor<4xf32>) {
  ^bb0(%x: f32, %sx: f32, %acc: f32):
    %n = arith.mulf %x, %sx : f32
    %r = arith.addf %acc, %n : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %u, %v : tensor<4xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A sibling that reads what another computes (through %u) cannot be computed with it:
// not merged (merged, %u had to come both before and after the merged generic).
// CHECK-LABEL: func.func @transcendental_sibling_reading_the_other$kept
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @transcendental_sibling_reading_the_other$kept(%a: tensor<4x16xf32>, %q: tensor<4x16xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %er = tensor.empty() : tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.cos %x : f32
    linalg.yield %y : f32
  } -> tensor<4x16xf32>
  %u = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%q, %c : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %cx: f32, %o: f32):
    %m = arith.mulf %x, %cx : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %u : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %ux: f32, %o: f32):
    %y = math.sin %x : f32
    %z = arith.addf %y, %ux : f32
    linalg.yield %z : f32
  } -> tensor<4x16xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]} ins(%c, %s : tensor<4x16xf32>, tensor<4x16xf32>) outs(%er : tensor<4xf32>) {
  ^bb0(%cx: f32, %sx: f32, %acc: f32):
    %t = arith.mulf %cx, %sx : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x16xf32>) outs(%er : tensor<4xf32>) {
  ^bb0(%sx: f32, %acc: f32):
    %r = arith.addf %acc, %sx : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %r1, %r2 : tensor<4xf32>, tensor<4xf32>
}
