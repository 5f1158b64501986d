// RUN: dyno-opt %s --split-input-file --dyno-row-bias-into-matmuls | FileCheck %s
// RUN: dyno-opt %s --split-input-file --dyno-row-bias-into-matmuls --dyno-form-kernels | FileCheck %s --check-prefix=CALL

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A float32 addmm as torch-mlir writes it (a matmul into zeros, then the bias added on
// every row) accumulates into the broadcast bias; kernel formation then calls addmm
// with the bias vector, and no kernel adds it.
// CHECK-LABEL: func.func @addmm$f32
// CHECK-SAME:    (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x2xf32>, %[[BIAS:.*]]: tensor<2xf32>)
// CHECK:         %[[ROWS:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<2xf32>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK:         %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x2xf32>) outs(%[[ROWS]] : tensor<4x2xf32>)
// CHECK-NOT:     arith.addf
// CHECK:         return %[[R]]
// CALL-LABEL: func.func @addmm$f32
// CALL-SAME:    (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x2xf32>, %[[BIAS:.*]]: tensor<2xf32>)
// CALL:         %[[R:.*]] = dyno.contraction "matmul"(%[[A]], %[[B]], %[[BIAS]]) : (tensor<4x8xf32>, tensor<8x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CALL-NOT:     dyno.launch
// CALL:         return %[[R]]
func.func @addmm$f32(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %bias: tensor<2xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %bias : tensor<4x2xf32>, tensor<2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A bias added per row index (a column of the product) is not addmm's: unchanged.
// CHECK-LABEL: func.func @column_bias
// CHECK:         linalg.matmul
// CHECK:         arith.addf
func.func @column_bias(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %bias: tensor<4xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %bias : tensor<4x2xf32>, tensor<4xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A product the program also reads without the bias stays a plain matmul.
// CHECK-LABEL: func.func @product_read_twice
// CHECK:         %[[P:.*]] = linalg.matmul
// CHECK:         arith.addf
// CHECK:         return %[[P]],
func.func @product_read_twice(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %bias: tensor<2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %bias : tensor<4x2xf32>, tensor<2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %p, %r : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A scaled bias (addmm with beta != 1) is not a plain add: unchanged.
// CHECK-LABEL: func.func @scaled_bias
// CHECK:         linalg.matmul
// CHECK:         arith.mulf
// CHECK:         arith.addf
func.func @scaled_bias(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %bias: tensor<2xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %bias : tensor<4x2xf32>, tensor<2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %y, %two : f32
    %s = arith.addf %x, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// GPT-2's fused QKV: the biased product is sliced, reshaped into heads and transposed
// for attention, a library call; no kernel would compute with it, so the bias goes to
// the product (otherwise a kernel per slice adds it).
// CHECK-LABEL: func.func @fused_qkv$read_by_attention
// CHECK:         %[[ROWS:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<96xf32>) outs(%{{.*}} : tensor<16x96xf32>)
// CHECK:         %[[R:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x32xf32>, tensor<32x96xf32>) outs(%[[ROWS]] : tensor<16x96xf32>)
// CHECK-NOT:     arith.addf
// CHECK:         tensor.expand_shape %[[R]]
// CHECK:         dyno.library_call "aten.scaled_dot_product_attention.default"
// CALL-LABEL: func.func @fused_qkv$read_by_attention
// CALL:         dyno.contraction "matmul"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<16x32xf32>, tensor<32x96xf32>, tensor<96xf32>) -> tensor<16x96xf32>
func.func @fused_qkv$read_by_attention(%x: tensor<16x32xf32>, %w: tensor<32x96xf32>, %bias: tensor<96xf32>) -> tensor<2x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x96xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x96xf32>) -> tensor<16x96xf32>
  %p = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x96xf32>) outs(%f : tensor<16x96xf32>) -> tensor<16x96xf32>
  %s = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %bias : tensor<16x96xf32>, tensor<96xf32>) outs(%e : tensor<16x96xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %sum = arith.addf %a, %b : f32
    linalg.yield %sum : f32
  } -> tensor<16x96xf32>
  %rows = tensor.expand_shape %s [[0, 1], [2]] output_shape [2, 8, 96] : tensor<16x96xf32> into tensor<2x8x96xf32>
  %q = tensor.extract_slice %rows[0, 0, 0] [2, 8, 32] [1, 1, 1] : tensor<2x8x96xf32> to tensor<2x8x32xf32>
  %k = tensor.extract_slice %rows[0, 0, 32] [2, 8, 32] [1, 1, 1] : tensor<2x8x96xf32> to tensor<2x8x32xf32>
  %v = tensor.extract_slice %rows[0, 0, 64] [2, 8, 32] [1, 1, 1] : tensor<2x8x96xf32> to tensor<2x8x32xf32>
  %heads = tensor.empty() : tensor<2x4x8x8xf32>
  %q4 = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
  %qt = linalg.transpose ins(%q4 : tensor<2x8x4x8xf32>) outs(%heads : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %k4 = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
  %kt = linalg.transpose ins(%k4 : tensor<2x8x4x8xf32>) outs(%heads : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %v4 = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
  %vt = linalg.transpose ins(%v4 : tensor<2x8x4x8xf32>) outs(%heads : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %o = dyno.library_call "aten.scaled_dot_product_attention.default"(%qt, %kt, %vt) {arguments = [unit, unit, unit, none, 0.0 : f64, true, none, false]} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  return %o : tensor<2x4x8x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A biased product that an elementwise kernel reads (through a reshape): that kernel
// adds the bias at no cost, and cuBLAS's plain float32 product (faster than its bias
// epilogue) stays.
// CHECK-LABEL: func.func @read_by_an_elementwise_kernel
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x2xf32>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK:         arith.addf
// CHECK:         math.tanh
func.func @read_by_an_elementwise_kernel(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %bias: tensor<2xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %bias : tensor<4x2xf32>, tensor<2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  %flat = tensor.collapse_shape %r [[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%flat : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %h = math.tanh %x : f32
    linalg.yield %h : f32
  } -> tensor<8xf32>
  return %t : tensor<8xf32>
}
