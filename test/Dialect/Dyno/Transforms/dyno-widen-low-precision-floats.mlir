// RUN: dyno-opt %s --split-input-file --dyno-widen-low-precision-floats | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// An elementwise bf16 body computes in f32 and rounds its result once; a constant of
// the function used in the body is widened exactly.
// CHECK-LABEL: func.func @gelu_like$bf16
// CHECK:         linalg.generic
// CHECK:         ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK:           %[[X:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK:           %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:           %[[M:.*]] = arith.mulf %[[X]], %[[HALF]] : f32
// CHECK:           %[[E:.*]] = math.erf %[[M]] : f32
// CHECK:           %[[R:.*]] = arith.truncf %[[E]] {dyno.op_rounding} : f32 to bf16
// CHECK:           linalg.yield %[[R]] : bf16
func.func @gelu_like$bf16(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %half = arith.constant 5.000000e-01 : bf16
  %e = tensor.empty() : tensor<4x8xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xbf16>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %m = arith.mulf %a, %half : bf16
    %v = math.erf %m : bf16
    linalg.yield %v : bf16
  } -> tensor<4x8xbf16>
  return %r : tensor<4x8xbf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A bf16 sum accumulates into an f32 fill and is rounded once after the reduction.
// CHECK-LABEL: func.func @sum$bf16
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xbf16>) outs(%[[FILL]] : tensor<4xf32>)
// CHECK:         ^bb0(%[[IN:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK:           %[[X:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK:           %[[S:.*]] = arith.addf %[[X]], %[[ACC]] : f32
// CHECK:           linalg.yield %[[S]] : f32
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<4xf32>) outs(%{{.*}} : tensor<4xbf16>)
// CHECK:           arith.truncf %{{.*}} {dyno.op_rounding} : f32 to bf16
// CHECK:         return %[[R]]
func.func @sum$bf16(%x: tensor<4x8xbf16>) -> tensor<4xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4xbf16>
  %f = linalg.fill ins(%zero : bf16) outs(%e : tensor<4xbf16>) -> tensor<4xbf16>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xbf16>) outs(%f : tensor<4xbf16>) {
  ^bb0(%a: bf16, %acc: bf16):
    %s = arith.addf %a, %acc : bf16
    linalg.yield %s : bf16
  } -> tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// An explicit rounding to f16 keeps its rounding; a rounded constant is folded exactly
// (0.1 in f16 is 0.0999755859375).
// CHECK-LABEL: func.func @explicit_rounding$f16
// CHECK:         ^bb0(%[[IN:.*]]: f32, %{{.*}}: f16):
// CHECK:           %[[T:.*]] = arith.truncf %[[IN]] : f32 to f16
// CHECK:           %[[W:.*]] = arith.extf %[[T]] : f16 to f32
// CHECK:           %[[C:.*]] = arith.constant 0.0999755859 : f32
// CHECK:           %[[A:.*]] = arith.addf %[[W]], %[[C]] : f32
// CHECK:           %[[R:.*]] = arith.truncf %[[A]] {dyno.op_rounding} : f32 to f16
// CHECK:           linalg.yield %[[R]] : f16
func.func @explicit_rounding$f16(%x: tensor<4x8xf32>) -> tensor<4x8xf16> {
  %tenth = arith.constant 0.1 : f64
  %e = tensor.empty() : tensor<4x8xf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    %c = arith.truncf %tenth : f64 to f16
    %s = arith.addf %t, %c : f16
    linalg.yield %s : f16
  } -> tensor<4x8xf16>
  return %r : tensor<4x8xf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Casts alone are left as they are.
// CHECK-LABEL: func.func @widen_only$bf16
// CHECK:         ^bb0(%[[IN:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:      linalg.yield %[[W]] : f32
func.func @widen_only$bf16(%x: tensor<4x8xbf16>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xbf16>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %w = arith.extf %a : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A matmul of bf16 operands widened to f32, whose product is rounded to bf16 (torch-mlir's
// bf16 mm), reads the bf16 operands directly.
// CHECK-LABEL: func.func @mm$bf16
// CHECK-SAME:    (%[[A:.*]]: tensor<4x8xbf16>, %[[B:.*]]: tensor<8x2xbf16>)
// CHECK:         linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%{{.*}} : tensor<4x2xf32>)
func.func @mm$bf16(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>) -> tensor<4x2xbf16> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<4x8xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xbf16>) outs(%ea : tensor<4x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<4x8xf32>
  %eb = tensor.empty() : tensor<8x2xf32>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<8x2xbf16>) outs(%eb : tensor<8x2xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<8x2xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.matmul ins(%wa, %wb : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  %en = tensor.empty() : tensor<4x2xbf16>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<4x2xf32>) outs(%en : tensor<4x2xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x2xbf16>
  return %n : tensor<4x2xbf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The same product read in f32 (`a.float() @ b.float()`) keeps its f32 operands: a
// low-precision library call would round it.
// CHECK-LABEL: func.func @mm$read_in_f32
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x2xf32>) outs(%{{.*}} : tensor<4x2xf32>)
func.func @mm$read_in_f32(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<4x8xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xbf16>) outs(%ea : tensor<4x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<4x8xf32>
  %eb = tensor.empty() : tensor<8x2xf32>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<8x2xbf16>) outs(%eb : tensor<8x2xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<8x2xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.matmul ins(%wa, %wb : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// addmm of bf16 operands as torch-mlir writes it (a matmul into zeros, then the widened
// bias added on every row) accumulates into the broadcast bias: one rounding, as eager.
// CHECK-LABEL: func.func @addmm$bf16
// CHECK-SAME:    (%[[A:.*]]: tensor<4x8xbf16>, %[[B:.*]]: tensor<8x2xbf16>, %[[BIAS:.*]]: tensor<2xbf16>)
// CHECK:         %[[WIDE:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<2xbf16>) outs(%{{.*}} : tensor<2xf32>)
// CHECK:         %[[ROWS:.*]] = linalg.generic {{.*}} ins(%[[WIDE]] : tensor<2xf32>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK:         %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%[[ROWS]] : tensor<4x2xf32>)
// CHECK-NOT:     arith.addf
// CHECK:         linalg.generic {{.*}} ins(%[[R]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<4x2xbf16>)
func.func @addmm$bf16(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>, %bias: tensor<2xbf16>) -> tensor<4x2xbf16> {
  %zero = arith.constant 0.0 : f32
  %eb = tensor.empty() : tensor<2xf32>
  %wbias = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%bias : tensor<2xbf16>) outs(%eb : tensor<2xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %wbias : tensor<4x2xf32>, tensor<2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  %en = tensor.empty() : tensor<4x2xbf16>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<4x2xf32>) outs(%en : tensor<4x2xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x2xbf16>
  return %n : tensor<4x2xbf16>
}

// -----

// A bf16 max pool with ceil_mode (its input padded past the last window) reads the part
// of the input its windows cover, then becomes a generic computing in f32.
// CHECK-LABEL: func.func @max_pool$ceil_mode
// CHECK:         %[[USED:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 2, 3, 7] [1, 1, 1, 1] : tensor<1x2x5x8xbf16> to tensor<1x2x3x7xbf16>
// CHECK:         linalg.generic {{.*}} ins(%[[USED]], %{{.*}} : tensor<1x2x3x7xbf16>, tensor<3x3xbf16>) outs(%{{.*}} : tensor<1x2x1x3xf32>)
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : f32
func.func @max_pool$ceil_mode(%x: tensor<1x2x5x8xbf16>) -> tensor<1x2x1x3xbf16> {
  %ninf = arith.constant 0xFF80 : bf16
  %e = tensor.empty() : tensor<1x2x1x3xbf16>
  %f = linalg.fill ins(%ninf : bf16) outs(%e : tensor<1x2x1x3xbf16>) -> tensor<1x2x1x3xbf16>
  %w = tensor.empty() : tensor<3x3xbf16>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
         ins(%x, %w : tensor<1x2x5x8xbf16>, tensor<3x3xbf16>) outs(%f : tensor<1x2x1x3xbf16>) -> tensor<1x2x1x3xbf16>
  return %r : tensor<1x2x1x3xbf16>
}
