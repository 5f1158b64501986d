// RUN: dyno-opt %s --dyno-fuse-matmul-epilogues --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// A bf16 linear layer (bias in the call) followed by F.gelu as the kernel computes it
// after kernel formation: the input widened through an exact round trip, the erf form,
// rounded once. The GELU becomes the call's epilogue; the launch and its kernel go.
// CHECK-LABEL: func.func @linear_gelu
// CHECK:         %[[Y:.*]] = dyno.contraction "matmul"(%arg0, %arg1, %arg2) {epilogue = "gelu"} : (tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
// CHECK-NOT:     dyno.launch
// CHECK:         return %[[Y]]
// CHECK:       module @kernels
// CHECK-NOT:     func.func @gelu
module {
  func.func @linear_gelu(%x: tensor<4x8xbf16>, %w: tensor<8x16xbf16>, %b: tensor<16xbf16>) -> tensor<4x16xbf16> {
    %0 = dyno.contraction "matmul"(%x, %w, %b) : (tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
    %1 = dyno.launch @kernels::@gelu(%0) : (tensor<4x16xbf16>) -> tensor<4x16xbf16>
    return %1 : tensor<4x16xbf16>
  }
  module @kernels {
    func.func @gelu(%arg0: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
      %e = tensor.empty() : tensor<4x16xbf16>
      %c = arith.constant 0.70710678118654757 : f64
      %half = arith.constant 5.000000e-01 : f32
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x16xbf16>) outs(%e : tensor<4x16xbf16>) {
      ^bb0(%in: bf16, %out: bf16):
        %2 = arith.extf %in : bf16 to f32
        %3 = arith.truncf %2 : f32 to bf16
        %4 = arith.extf %3 : bf16 to f32
        %5 = arith.truncf %c : f64 to f32
        %6 = arith.mulf %4, %5 : f32
        %7 = math.erf %6 : f32
        %8 = arith.mulf %4, %half : f32
        %9 = arith.mulf %8, %7 : f32
        %10 = arith.addf %8, %9 : f32
        %11 = arith.truncf %10 : f32 to bf16
        linalg.yield %11 : bf16
      } -> tensor<4x16xbf16>
      return %r : tensor<4x16xbf16>
    }
  }
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The other spelling, h * (1 + erf(x * M_SQRT1_2)), without a bias. The kernel is
// launched twice: the first launch fuses, the second (its matmul has another user)
// stays, and so does the kernel.
// CHECK-LABEL: func.func @matmul_gelu_product_form
// CHECK:         %[[A:.*]] = dyno.contraction "matmul"(%arg0, %arg1) {epilogue = "gelu"}
// CHECK:         %[[B:.*]] = dyno.contraction "matmul"(%arg0, %arg1) :
// CHECK:         %[[C:.*]] = dyno.launch @kernels::@gelu(%[[B]])
// CHECK:         return %[[A]], %[[C]], %[[B]]
// CHECK:       module @kernels
// CHECK:         func.func @gelu
module {
  func.func @matmul_gelu_product_form(%x: tensor<4x8xbf16>, %w: tensor<8x16xbf16>) -> (tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>) {
    %0 = dyno.contraction "matmul"(%x, %w) : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
    %1 = dyno.launch @kernels::@gelu(%0) : (tensor<4x16xbf16>) -> tensor<4x16xbf16>
    %2 = dyno.contraction "matmul"(%x, %w) : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
    %3 = dyno.launch @kernels::@gelu(%2) : (tensor<4x16xbf16>) -> tensor<4x16xbf16>
    return %1, %3, %2 : tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>
  }
  module @kernels {
    func.func @gelu(%arg0: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
      %e = tensor.empty() : tensor<4x16xbf16>
      %c = arith.constant 0.707106769 : f32
      %half = arith.constant 5.000000e-01 : f32
      %one = arith.constant 1.000000e+00 : f32
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x16xbf16>) outs(%e : tensor<4x16xbf16>) {
      ^bb0(%in: bf16, %out: bf16):
        %x = arith.extf %in : bf16 to f32
        %h = arith.mulf %half, %x : f32
        %s = arith.mulf %x, %c : f32
        %t = math.erf %s : f32
        %u = arith.addf %one, %t : f32
        %v = arith.mulf %h, %u : f32
        %w = arith.truncf %v : f32 to bf16
        linalg.yield %w : bf16
      } -> tensor<4x16xbf16>
      return %r : tensor<4x16xbf16>
    }
  }
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Left alone: an f32 matmul (MKL's GEMM measured faster than oneDNN's linear), a bf16
// kernel computing tanh-GELU's neighbour (erf of x * 0.5: not GELU), a ReLU (oneDNN's
// ReLU post-op maps NaN to 0, eager keeps NaN) and an f16 GELU (an f16 product beyond
// its range is -inf in eager, whose GELU is NaN; the accumulator's GELU is finite).
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT:     epilogue
// CHECK-COUNT-4: dyno.launch
module {
  func.func @not_fused(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %xb: tensor<4x8xbf16>, %wb: tensor<8x16xbf16>, %xh: tensor<4x8xf16>, %wh: tensor<8x16xf16>) -> (tensor<4x16xf32>, tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xf16>) {
    %0 = dyno.contraction "matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = dyno.launch @kernels::@gelu_f32(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %2 = dyno.contraction "matmul"(%xb, %wb) : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
    %3 = dyno.launch @kernels::@not_gelu(%2) : (tensor<4x16xbf16>) -> tensor<4x16xbf16>
    %4 = dyno.contraction "matmul"(%xb, %wb) : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
    %5 = dyno.launch @kernels::@relu(%4) : (tensor<4x16xbf16>) -> tensor<4x16xbf16>
    %6 = dyno.contraction "matmul"(%xh, %wh) : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
    %7 = dyno.launch @kernels::@gelu_f16(%6) : (tensor<4x16xf16>) -> tensor<4x16xf16>
    return %1, %3, %5, %7 : tensor<4x16xf32>, tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<4x16xf16>
  }
  module @kernels {
    func.func @gelu_f32(%arg0: tensor<4x16xf32>) -> tensor<4x16xf32> {
      %e = tensor.empty() : tensor<4x16xf32>
      %c = arith.constant 0.707106769 : f32
      %half = arith.constant 5.000000e-01 : f32
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
      ^bb0(%x: f32, %out: f32):
        %s = arith.mulf %x, %c : f32
        %t = math.erf %s : f32
        %h = arith.mulf %x, %half : f32
        %p = arith.mulf %h, %t : f32
        %v = arith.addf %h, %p : f32
        linalg.yield %v : f32
      } -> tensor<4x16xf32>
      return %r : tensor<4x16xf32>
    }
    func.func @not_gelu(%arg0: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
      %e = tensor.empty() : tensor<4x16xbf16>
      %half = arith.constant 5.000000e-01 : f32
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x16xbf16>) outs(%e : tensor<4x16xbf16>) {
      ^bb0(%in: bf16, %out: bf16):
        %x = arith.extf %in : bf16 to f32
        %s = arith.mulf %x, %half : f32
        %t = math.erf %s : f32
        %p = arith.mulf %s, %t : f32
        %v = arith.addf %s, %p : f32
        %w = arith.truncf %v : f32 to bf16
        linalg.yield %w : bf16
      } -> tensor<4x16xbf16>
      return %r : tensor<4x16xbf16>
    }
    func.func @gelu_f16(%arg0: tensor<4x16xf16>) -> tensor<4x16xf16> {
      %e = tensor.empty() : tensor<4x16xf16>
      %c = arith.constant 0.707106769 : f32
      %half = arith.constant 5.000000e-01 : f32
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x16xf16>) outs(%e : tensor<4x16xf16>) {
      ^bb0(%in: f16, %out: f16):
        %x = arith.extf %in : f16 to f32
        %s = arith.mulf %x, %c : f32
        %t = math.erf %s : f32
        %h = arith.mulf %x, %half : f32
        %p = arith.mulf %h, %t : f32
        %v = arith.addf %h, %p : f32
        %w = arith.truncf %v : f32 to f16
        linalg.yield %w : f16
      } -> tensor<4x16xf16>
      return %r : tensor<4x16xf16>
    }
    func.func @relu(%arg0: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
      %e = tensor.empty() : tensor<4x16xbf16>
      %zero = arith.constant 0.000000e+00 : f32
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x16xbf16>) outs(%e : tensor<4x16xbf16>) {
      ^bb0(%in: bf16, %out: bf16):
        %x = arith.extf %in : bf16 to f32
        %gt = arith.cmpf ugt, %x, %zero : f32
        %v = arith.select %gt, %x, %zero : f32
        %w = arith.truncf %v : f32 to bf16
        linalg.yield %w : bf16
      } -> tensor<4x16xbf16>
      return %r : tensor<4x16xbf16>
    }
  }
}
