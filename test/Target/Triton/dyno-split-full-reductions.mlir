// RUN: dyno-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyno-split-full-reductions))' | FileCheck %s

#all = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>

// A bounds check over 131072x2 indices (the body reads its column): 1024 partials of 128
// rows each, then one `and` of the partials into the original initial value.
// CHECK-LABEL: func.func @all_in_range(
// CHECK-SAME:      %[[X:.*]]: tensor<131072x2xi64>)
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK:         %[[INIT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<i1>)
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [1024, 128, 2] : tensor<131072x2xi64> into tensor<1024x128x2xi64>
// CHECK:         %[[PINIT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1024xi1>)
// CHECK-NEXT:    ^bb0(%{{.*}}: i1):
// CHECK-NEXT:      linalg.yield %[[TRUE]] : i1
// CHECK:         %[[P:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[E]] : tensor<1024x128x2xi64>) outs(%[[PINIT]] : tensor<1024xi1>)
// CHECK:           linalg.index 2 : index
// CHECK:         %[[R:.*]] = linalg.generic {{{.*}}iterator_types = ["reduction"]} ins(%[[P]] : tensor<1024xi1>) outs(%[[INIT]] : tensor<i1>)
// CHECK:           arith.andi
// CHECK:         return %[[R]]
func.func @all_in_range(%x: tensor<131072x2xi64>) -> tensor<i1> {
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c0_i64 = arith.constant 0 : i64
  %c9 = arith.constant 9 : i64
  %c5 = arith.constant 5 : i64
  %e = tensor.empty() : tensor<i1>
  %init = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%e : tensor<i1>) {
  ^bb0(%o: i1):
    linalg.yield %true : i1
  } -> tensor<i1>
  %r = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<131072x2xi64>) outs(%init : tensor<i1>) {
  ^bb0(%in: i64, %out: i1):
    %col = linalg.index 1 : index
    %first = arith.cmpi eq, %col, %c0 : index
    %bound = arith.select %first, %c9, %c5 : i64
    %ok = arith.cmpi sle, %in, %bound : i64
    %and = arith.andi %out, %ok : i1
    linalg.yield %and : i1
  } -> tensor<i1>
  return %r : tensor<i1>
}

// -----

// Stays whole: a sum starting from 1.0 would add it once per partial; a small reduction
// is one program anyway.
// CHECK-LABEL: func.func @not_split(
// CHECK-NOT:     tensor.expand_shape
// CHECK-COUNT-2: iterator_types = ["reduction"]
// CHECK-NOT:     linalg.generic
func.func @not_split(%x: tensor<262144xf32>, %y: tensor<4096xf32>) -> (tensor<f32>, tensor<f32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i1 = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%e : tensor<f32>) {
  ^bb0(%o: f32):
    linalg.yield %one : f32
  } -> tensor<f32>
  %i0 = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%e : tensor<f32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  } -> tensor<f32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<262144xf32>) outs(%i1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%y : tensor<4096xf32>) outs(%i0 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}
