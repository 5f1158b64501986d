// RUN: dyno-opt %s --split-input-file --dyno-sort-prefixes | FileCheck %s

// topk(8): both results are read in their first 8 elements along the sorted dimension.
// CHECK-LABEL: func.func @topk
// CHECK:         dyno.sort dimension(1) prefix(8) outs(
func.func @topk(%v: tensor<3x100xf32>, %i: tensor<3x100xi64>) -> (tensor<3x8xf32>, tensor<3x8xi64>) {
  %0:2 = dyno.sort dimension(1) outs(%v, %i : tensor<3x100xf32>, tensor<3x100xi64>) {
  ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
    %ge = arith.cmpf oge, %a, %b : f32
    dyno.yield %ge : i1
  } -> tensor<3x100xf32>, tensor<3x100xi64>
  %1 = tensor.extract_slice %0#0[0, 0] [3, 8] [1, 1] : tensor<3x100xf32> to tensor<3x8xf32>
  %2 = tensor.extract_slice %0#1[0, 0] [3, 8] [1, 1] : tensor<3x100xi64> to tensor<3x8xi64>
  return %1, %2 : tensor<3x8xf32>, tensor<3x8xi64>
}

// -----

// Slices reading up to element 2 + 4 * 3 = 14: the prefix is 15.
// CHECK-LABEL: func.func @strided_slice
// CHECK:         dyno.sort dimension(0) prefix(15) outs(
func.func @strided_slice(%v: tensor<100xf32>) -> tensor<4xf32> {
  %0 = dyno.sort dimension(0) outs(%v : tensor<100xf32>) {
  ^bb0(%a: f32, %b: f32):
    %le = arith.cmpf ole, %a, %b : f32
    dyno.yield %le : i1
  } -> tensor<100xf32>
  %1 = tensor.extract_slice %0[2] [4] [4] : tensor<100xf32> to tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A result used whole (or by anything but a slice): the whole line is sorted.
// CHECK-LABEL: func.func @whole
// CHECK:         dyno.sort dimension(0) outs(
func.func @whole(%v: tensor<100xf32>) -> (tensor<100xf32>, tensor<8xf32>) {
  %0 = dyno.sort dimension(0) outs(%v : tensor<100xf32>) {
  ^bb0(%a: f32, %b: f32):
    %le = arith.cmpf ole, %a, %b : f32
    dyno.yield %le : i1
  } -> tensor<100xf32>
  %1 = tensor.extract_slice %0[0] [8] [1] : tensor<100xf32> to tensor<8xf32>
  return %0, %1 : tensor<100xf32>, tensor<8xf32>
}
