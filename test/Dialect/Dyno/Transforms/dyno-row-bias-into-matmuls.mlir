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
