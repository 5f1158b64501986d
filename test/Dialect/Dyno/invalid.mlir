// RUN: dyno-opt %s -split-input-file -verify-diagnostics

func.func @dyno.launch$dynamic_result_without_size(%x: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{results have 1 dynamic dimension(s) but the launch gives 0 size(s) in dims(...)}}
  %0 = dyno.launch @kernels::@k(%x) : (tensor<4xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
module @kernels {
  func.func @k(%x: tensor<4xf32>) -> tensor<?xf32> {
    %c = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
    return %c : tensor<?xf32>
  }
}

// -----

func.func @dyno.launch$missing_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'@kernels::@nowhere' does not reference a kernel}}
  %0 = dyno.launch @kernels::@nowhere(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
}

// -----

func.func @dyno.launch$type_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kernel type '(tensor<8xf32>) -> tensor<4xf32>' does not match the launch's operand and result types}}
  %0 = dyno.launch @kernels::@k(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
  func.func @k(%x: tensor<8xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    return %e : tensor<4xf32>
  }
}

// -----

func.func @dyno.launch$bufferized_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{bufferized kernel type '(memref<4xf32>) -> ()' does not take one buffer per launch operand and result}}
  %0 = dyno.launch @kernels::@k(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
  func.func @k(%x: memref<4xf32>) {
    return
  }
}

// -----

func.func @dyno.launch$lowered_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{lowered kernel takes 3 arguments but the launch passes 2 (operands, result buffers and dynamic sizes)}}
  %0 = dyno.launch @kernels::@k(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
  llvm.func @k(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr) {
    llvm.return
  }
}

// -----

func.func @dyno.launch$not_a_function(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'@kernels::@g' is neither a func.func nor an llvm.func}}
  %0 = dyno.launch @kernels::@g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
  memref.global "private" @g : memref<4xf32>
}

// -----

func.func @dyno.extern$unknown(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{unknown library operation 'gemm'}}
  %0 = dyno.extern "gemm"(%a, %a) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @dyno.extern$operand_count(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'matmul' takes 2 to 3 operands, got 1}}
  %0 = dyno.extern "matmul"(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @dyno.extern$rank(%a: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{operand #1 of 'matmul' must have rank 2}}
  %0 = dyno.extern "matmul"(%a, %b) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @dyno.extern$conv_without_attributes(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'conv2d' needs strides, padding, dilations and groups}}
  %0 = dyno.extern "conv2d"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @dyno.extern$attributes_on_matmul(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{only 'conv2d' takes strides, padding, dilations or groups}}
  %0 = dyno.extern "matmul"(%a, %a) {groups = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @dyno.extern$conv_attribute_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'conv2d' strides, padding and dilations have two values each}}
  %0 = dyno.extern "conv2d"(%x, %w) {strides = array<i64: 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @dyno.launch$lowered_without_sizes(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  // expected-error @+1 {{lowered kernel takes 2 arguments but the launch passes 4 (operands, result buffers and dynamic sizes)}}
  %0 = dyno.launch @kernels::@k(%x) dims(%n) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
module @kernels {
  llvm.func @k(%a: !llvm.ptr, %b: !llvm.ptr) {
    llvm.return
  }
}
