// RUN: dyno-opt %s --dyno-multiply-by-reciprocals | FileCheck %s
// RUN: dyno-opt %s --dyno-multiply-by-reciprocals="min-reuse=2048" | FileCheck %s --check-prefix=REUSE

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Softmax's normalization: one reciprocal per row, a multiplication per element. (With
// min-reuse=2048, 1024 divisions per reciprocal are too few.)
// CHECK-LABEL: func.func @softmax$normalization
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<256xf32>
// CHECK:         %[[RECIPROCALS:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<256xf32>) outs(%[[EMPTY]] : tensor<256xf32>)
// CHECK:           %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:           arith.divf %[[ONE]], %{{.*}} : f32
// CHECK:         linalg.generic {{.*}} ins(%arg0, %[[RECIPROCALS]] : tensor<256x1024xf32>, tensor<256xf32>)
// CHECK-NOT:       arith.divf
// CHECK:           arith.mulf
// REUSE-LABEL: func.func @softmax$normalization
// REUSE-NOT:     arith.mulf
// REUSE:         return
func.func @softmax$normalization(%e: tensor<256x1024xf32>, %sum: tensor<256xf32>) -> tensor<256x1024xf32> {
  %init = tensor.empty() : tensor<256x1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<256x1024xf32>, tensor<256xf32>) outs(%init : tensor<256x1024xf32>) {
  ^bb0(%x: f32, %s: f32, %out: f32):
    %q = arith.divf %x, %s : f32
    linalg.yield %q : f32
  } -> tensor<256x1024xf32>
  return %r : tensor<256x1024xf32>
}

// Dynamic sizes: the reciprocals' tensor takes the divisor's sizes.
// CHECK-LABEL: func.func @dynamic$rows
// CHECK:         %[[DIM:.*]] = tensor.dim %arg1, %{{.*}} : tensor<?xf32>
// CHECK:         tensor.empty(%[[DIM]]) : tensor<?xf32>
// CHECK:         arith.mulf
func.func @dynamic$rows(%e: tensor<?x?xf32>, %sum: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %e, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %e, %c1 : tensor<?x?xf32>
  %init = tensor.empty(%d0, %d1) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<?x?xf32>, tensor<?xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%x: f32, %s: f32, %out: f32):
    %q = arith.divf %x, %s : f32
    linalg.yield %q : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// Left alone: a divisor read once per element (no reuse), a divisor also used
// otherwise, and a quotient that is floored (x * (1 / y) may be one ulp below an exact
// integer quotient).
// CHECK-LABEL: func.func @left$alone
// CHECK-NOT:     arith.mulf
// CHECK-COUNT-3: arith.divf
// CHECK-NOT:     arith.mulf
func.func @left$alone(%e: tensor<256x1024xf32>, %d: tensor<256x1024xf32>, %sum: tensor<256xf32>)
    -> (tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>) {
  %init = tensor.empty() : tensor<256x1024xf32>
  %elementwise = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %d : tensor<256x1024xf32>, tensor<256x1024xf32>) outs(%init : tensor<256x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %q = arith.divf %x, %y : f32
    linalg.yield %q : f32
  } -> tensor<256x1024xf32>
  %shared = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<256x1024xf32>, tensor<256xf32>) outs(%init : tensor<256x1024xf32>) {
  ^bb0(%x: f32, %s: f32, %out: f32):
    %q = arith.divf %x, %s : f32
    %a = arith.addf %q, %s : f32
    linalg.yield %a : f32
  } -> tensor<256x1024xf32>
  %floored = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<256x1024xf32>, tensor<256xf32>) outs(%init : tensor<256x1024xf32>) {
  ^bb0(%x: f32, %s: f32, %out: f32):
    %q = arith.divf %x, %s : f32
    %f = math.floor %q : f32
    linalg.yield %f : f32
  } -> tensor<256x1024xf32>
  return %elementwise, %shared, %floored : tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>
}

// f16: the reciprocal's own rounding would cost up to one f16 ulp. Left alone.
// CHECK-LABEL: func.func @half$left_alone
// CHECK-NOT:     arith.mulf
// CHECK:         arith.divf
func.func @half$left_alone(%e: tensor<256x1024xf16>, %sum: tensor<256xf16>) -> tensor<256x1024xf16> {
  %init = tensor.empty() : tensor<256x1024xf16>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<256x1024xf16>, tensor<256xf16>) outs(%init : tensor<256x1024xf16>) {
  ^bb0(%x: f16, %s: f16, %out: f16):
    %q = arith.divf %x, %s : f16
    linalg.yield %q : f16
  } -> tensor<256x1024xf16>
  return %r : tensor<256x1024xf16>
}
