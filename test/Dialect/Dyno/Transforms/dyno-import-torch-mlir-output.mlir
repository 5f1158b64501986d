// RUN: dyno-opt %s --allow-unregistered-dialect --split-input-file --verify-diagnostics \
// RUN:   --dyno-import-torch-mlir-output | FileCheck %s

// torch-mlir's TMTensor scan, sort and scatter (as torch-mlir-opt prints them, generic)
// become Dyno's ops with the same operands, properties and regions; their yields too.

// CHECK-LABEL: func.func @scan_sort_scatter
// CHECK: %[[SCAN:.*]]:2 = dyno.scan dimension(1) inclusive(true) ins(%arg0 : tensor<4x8xf32>) outs(%arg1, %arg2 : tensor<4x8xf32>, tensor<4xf32>)
// CHECK:   arith.addf
// CHECK:   dyno.yield %{{.*}} : f32
// CHECK: %[[SORT:.*]]:2 = dyno.sort dimension(1) outs(%arg0, %arg3 : tensor<4x8xf32>, tensor<4x8xi64>)
// CHECK:   arith.cmpf olt
// CHECK:   dyno.yield %{{.*}} : i1
// CHECK: %[[SCATTER:.*]] = dyno.scatter dimension_map([0, 1]) unique_indices(false) ins(%arg4, %arg5 : tensor<32xf32>, tensor<32x2xi64>) outs(%[[SORT]]#0 : tensor<4x8xf32>)
// CHECK:   dyno.yield %{{.*}} : f32
// CHECK: return %[[SCAN]]#0, %[[SCATTER]]
// CHECK-NOT: tm_tensor
func.func @scan_sort_scatter(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<4xf32>,
                             %arg3: tensor<4x8xi64>, %arg4: tensor<32xf32>, %arg5: tensor<32x2xi64>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:2 = "tm_tensor.scan"(%arg0, %arg1, %arg2) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%a: f32, %b: f32):
    %s = "arith.addf"(%a, %b) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "tm_tensor.yield"(%s) : (f32) -> ()
  }) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  %1:2 = "tm_tensor.sort"(%arg0, %arg3) <{dimension = 1 : i64, operandSegmentSizes = array<i32: 0, 2>}> ({
  ^bb0(%a: f32, %b: f32, %i: i64, %j: i64):
    %c = "arith.cmpf"(%a, %b) <{fastmath = #arith.fastmath<none>, predicate = 4 : i64}> : (f32, f32) -> i1
    "tm_tensor.yield"(%c) : (i1) -> ()
  }) : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<4x8xf32>, tensor<4x8xi64>)
  %2 = "tm_tensor.scatter"(%arg4, %arg5, %1#0) <{dimension_map = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = false}> ({
  ^bb0(%a: f32, %b: f32):
    %s = "arith.addf"(%b, %a) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "tm_tensor.yield"(%s) : (f32) -> ()
  }) : (tensor<32xf32>, tensor<32x2xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0#0, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A torch op torch-mlir did not lower is named (a graph with one falls back eagerly).
func.func @torch_op_left(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{torch-mlir did not lower 'torch.aten.igamma' to linalg}}
  %0 = "torch.aten.igamma"(%arg0, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A TMTensor op Dyno has no counterpart for.
func.func @topk(%arg0: tensor<4x8xf32>, %arg1: tensor<4x2xf32>, %arg2: tensor<4x2xi64>)
    -> tensor<4x2xf32> {
  // expected-error @+1 {{torch-mlir lowered an op to 'tm_tensor.topk', which Dyno does not compile}}
  %0:2 = "tm_tensor.topk"(%arg0, %arg1, %arg2) <{dimension = 1 : i64}> : (tensor<4x8xf32>, tensor<4x2xf32>, tensor<4x2xi64>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  return %0#0 : tensor<4x2xf32>
}

// -----

// Anything else of a dialect Dyno does not register.
func.func @unknown(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'foo.bar' is not an operation Dyno knows}}
  %0 = "foo.bar"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A TMTensor scan whose properties do not fit Dyno's op is rejected by the op's
// verifier after the pass, with a diagnostic.
func.func @bad_scan(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<4xf32>)
    -> tensor<4x8xf32> {
  // expected-error @+1 {{'dyno.scan' op dimension 5 is out of range for rank 2}}
  %0:2 = "tm_tensor.scan"(%arg0, %arg1, %arg2) <{dimension = 5 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%a: f32, %b: f32):
    %s = "arith.addf"(%a, %b) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "tm_tensor.yield"(%s) : (f32) -> ()
  }) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return %0#0 : tensor<4x8xf32>
}
