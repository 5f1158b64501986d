// RUN: dyno-opt %s | dyno-opt | FileCheck %s
// RUN: dyno-opt %s --mlir-print-op-generic | dyno-opt | FileCheck %s

// CHECK-LABEL: func.func @dyno.launch$basic
func.func @dyno.launch$basic(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>) {
  // CHECK: %[[R:.*]]:2 = dyno.launch @kernels::@kernel_0(%{{.*}}) : (tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>)
  %0:2 = dyno.launch @kernels::@kernel_0(%x) : (tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4x16xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @dyno.launch$no_arguments
func.func @dyno.launch$no_arguments() -> tensor<8xi64> {
  // CHECK: dyno.launch @kernels::@kernel_1() : () -> tensor<8xi64>
  %0 = dyno.launch @kernels::@kernel_1() : () -> tensor<8xi64>
  return %0 : tensor<8xi64>
}

// CHECK-LABEL: func.func @dyno.launch$dynamic
func.func @dyno.launch$dynamic(%x: tensor<?x16xf32>, %n: i64, %d: index) -> tensor<?x16xf32> {
  // CHECK: dyno.launch @kernels::@kernel_2(%{{.*}}, %{{.*}}) dims(%{{.*}}) : (tensor<?x16xf32>, i64) -> tensor<?x16xf32>
  %0 = dyno.launch @kernels::@kernel_2(%x, %n) dims(%d) : (tensor<?x16xf32>, i64) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @dyno.extern$matmul
func.func @dyno.extern$matmul(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %c: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: dyno.extern "matmul"(%{{.*}}, %{{.*}}) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %0 = dyno.extern "matmul"(%a, %b) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  // CHECK: dyno.extern "matmul"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = dyno.extern "matmul"(%a, %b, %c) : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @dyno.extern$batch_matmul
func.func @dyno.extern$batch_matmul(%a: tensor<2x4x16xf32>, %b: tensor<2x16x8xf32>) -> tensor<2x4x8xf32> {
  // CHECK: dyno.extern "batch_matmul"
  %0 = dyno.extern "batch_matmul"(%a, %b) : (tensor<2x4x16xf32>, tensor<2x16x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @dyno.extern$conv2d
func.func @dyno.extern$conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  // CHECK: dyno.extern "conv2d"(%{{.*}}, %{{.*}}, %{{.*}}) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}
  %0 = dyno.extern "conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

module @kernels {
  func.func @kernel_0(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    return %x, %e : tensor<4x16xf32>, tensor<4xf32>
  }
  func.func @kernel_1() -> tensor<8xi64> {
    %e = tensor.empty() : tensor<8xi64>
    return %e : tensor<8xi64>
  }
  func.func @kernel_2(%x: tensor<?x16xf32>, %n: i64) -> tensor<?x16xf32> {
    return %x : tensor<?x16xf32>
  }
}
