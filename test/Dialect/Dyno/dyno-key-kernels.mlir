// RUN: dyno-opt %s --dyno-key-kernels | FileCheck %s

// Kernels equal up to their names get one key (hex digits of a SHA-256); one that
// differs in a constant gets its own (test/python/kernel_keys.py compares them); one that
// calls a declaration is keyed with it;
// a kernel another function calls, one that calls a function defined beside it, and
// one holding a dense_resource constant get none. Only launched kernels are keyed.

// CHECK-LABEL: module @kernels
// CHECK: func.func @helper(
// CHECK-NOT: dyno.kernel_key
// CHECK: func.func @scale({{.*}}) -> tensor<4xf32> attributes {dyno.kernel_key = "[[KEY:[0-9a-f]+]]"}
// CHECK: func.func @scale_again({{.*}}) -> tensor<4xf32> attributes {dyno.kernel_key = "[[KEY]]"}
// CHECK: func.func @scale_by_3({{.*}}) -> tensor<4xf32> attributes {dyno.kernel_key = "{{[0-9a-f]+}}"}
// CHECK: func.func @exp_kernel({{.*}}) -> tensor<4xf32> attributes {dyno.kernel_key = "{{[0-9a-f]+}}"}
// CHECK: func.func @calls_helper({{.*}}) -> tensor<4xf32> {
// CHECK: func.func @called_by_another({{.*}}) -> tensor<4xf32> {
// CHECK: func.func @resource_constant({{.*}}) -> tensor<4xf32> {
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dyno.launch @kernels::@scale(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = dyno.launch @kernels::@scale_again(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = dyno.launch @kernels::@scale_by_3(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = dyno.launch @kernels::@exp_kernel(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = dyno.launch @kernels::@calls_helper(%3) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = dyno.launch @kernels::@called_by_another(%4) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = dyno.launch @kernels::@resource_constant(%5) : (tensor<4xf32>) -> tensor<4xf32>
  return %6 : tensor<4xf32>
}
module @kernels {
  func.func private @expf(f32) -> f32
  func.func @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
    %r = func.call @called_by_another(%a) : (tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @scale(%a: tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant dense<2.0> : tensor<4xf32>
    %r = arith.mulf %a, %c : tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @scale_again(%a: tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant dense<2.0> : tensor<4xf32>
    %r = arith.mulf %a, %c : tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @scale_by_3(%a: tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant dense<3.0> : tensor<4xf32>
    %r = arith.mulf %a, %c : tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @exp_kernel(%a: tensor<4xf32>) -> tensor<4xf32> {
    %c0 = arith.constant 0 : index
    %v = tensor.extract %a[%c0] : tensor<4xf32>
    %e = func.call @expf(%v) : (f32) -> f32
    %r = tensor.insert %e into %a[%c0] : tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @calls_helper(%a: tensor<4xf32>) -> tensor<4xf32> {
    %r = func.call @helper(%a) : (tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @called_by_another(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
  func.func @resource_constant(%a: tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant dense_resource<four> : tensor<4xf32>
    %r = arith.addf %a, %c : tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      four: "0x0400000000008040000080400000804000008040"
    }
  }
#-}
