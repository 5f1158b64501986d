// RUN: dyno-opt %s --dyno-fold-fused-roundings --canonicalize | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// A rounding made by dyno-widen-low-precision-floats and widened again in the same
// body is dropped; the program's own rounding (untagged) stays.
// CHECK-LABEL: func.func @fused$bf16
// CHECK:         ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[IN]], %[[IN]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK-NEXT:      %[[A:.*]] = arith.addf %[[W]], %[[M]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[A]] {dyno.op_rounding} : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[R]] : bf16
func.func @fused$bf16(%x: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  %e = tensor.empty() : tensor<4x8xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %m = arith.mulf %a, %a : f32
    %op = arith.truncf %m {dyno.op_rounding} : f32 to bf16
    %explicit = arith.truncf %m : f32 to bf16
    %w1 = arith.extf %op : bf16 to f32
    %w2 = arith.extf %explicit : bf16 to f32
    %s = arith.addf %w2, %w1 : f32
    %t = arith.truncf %s {dyno.op_rounding} : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  return %r : tensor<4x8xbf16>
}
