// RUN: dyno-opt %s --split-input-file --dyno-deduplicate-kernels | FileCheck %s

// Kernels equal up to their names become one: the launches of the copies call the
// first, and the copies go. A kernel that differs in a constant, a type or an argument
// attribute stays its own; declarations stay.

// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = dyno.launch @kernels::@scale(%arg0)
// CHECK: %[[B:.*]] = dyno.launch @kernels::@scale(%[[A]])
// CHECK: %[[C:.*]] = dyno.launch @kernels::@scale_by_3(%[[B]])
// CHECK: %[[D:.*]] = dyno.launch @kernels::@scale_writable(%[[C]])
// CHECK: dyno.launch @kernels::@scale_f64(%arg1)
// CHECK: dyno.launch @kernels::@scale(%[[D]])
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf64>) {
  %0 = dyno.launch @kernels::@scale(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = dyno.launch @kernels::@scale_again(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = dyno.launch @kernels::@scale_by_3(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = dyno.launch @kernels::@scale_writable(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = dyno.launch @kernels::@scale_f64(%y) : (tensor<4xf64>) -> tensor<4xf64>
  %5 = dyno.launch @kernels::@scale_once_more(%3) : (tensor<4xf32>) -> tensor<4xf32>
  return %5, %4 : tensor<4xf32>, tensor<4xf64>
}
// CHECK: module @kernels
// CHECK: func.func private @expf
// CHECK: func.func @scale(
// CHECK-NOT: func.func @scale_again
// CHECK: func.func @scale_by_3(
// CHECK: func.func @scale_writable(
// CHECK: func.func @scale_f64(
// CHECK-NOT: func.func @scale_once_more
module @kernels {
  func.func private @expf(f32) -> f32
  func.func @scale(%a: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> {
    %c = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %c : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @scale_again(%a: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> {
    %c = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %c : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @scale_by_3(%a: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> {
    %c = arith.constant 3.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %c : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @scale_writable(%a: tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %c : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @scale_f64(%a: tensor<4xf64> {bufferization.writable = false}) -> tensor<4xf64> {
    %c = arith.constant 2.0 : f64
    %e = tensor.empty() : tensor<4xf64>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]} ins(%a : tensor<4xf64>) outs(%e : tensor<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %m = arith.mulf %in, %c : f64
      linalg.yield %m : f64
    } -> tensor<4xf64>
    return %r : tensor<4xf64>
  }
  func.func @scale_once_more(%a: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> {
    %c = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %c : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

// LLVM-dialect kernels (the CPU target, before their alias scopes), multi-block
// bodies included; the host keeps its launches' other operands.

// CHECK-LABEL: func.func @main
// CHECK: dyno.launch @kernels::@kernel_0(%arg0)
// CHECK: dyno.launch @kernels::@kernel_0(%{{.*}})
// CHECK: module @kernels
// CHECK: llvm.func @kernel_0(
// CHECK-NOT: llvm.func @kernel_1(
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = dyno.launch @kernels::@kernel_0(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = dyno.launch @kernels::@kernel_1(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
module @kernels {
  llvm.func @kernel_0(%in: !llvm.ptr, %out: !llvm.ptr) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c8 = llvm.mlir.constant(8 : i64) : i64
    llvm.br ^loop(%c0 : i64)
  ^loop(%i: i64):
    %more = llvm.icmp "slt" %i, %c8 : i64
    llvm.cond_br %more, ^body, ^done
  ^body:
    %p = llvm.getelementptr %in[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %v = llvm.load %p : !llvm.ptr -> f32
    %q = llvm.getelementptr %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %v, %q : f32, !llvm.ptr
    %next = llvm.add %i, %c1 : i64
    llvm.br ^loop(%next : i64)
  ^done:
    llvm.return
  }
  llvm.func @kernel_1(%in: !llvm.ptr, %out: !llvm.ptr) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c8 = llvm.mlir.constant(8 : i64) : i64
    llvm.br ^loop(%c0 : i64)
  ^loop(%i: i64):
    %more = llvm.icmp "slt" %i, %c8 : i64
    llvm.cond_br %more, ^body, ^done
  ^body:
    %p = llvm.getelementptr %in[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %v = llvm.load %p : !llvm.ptr -> f32
    %q = llvm.getelementptr %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %v, %q : f32, !llvm.ptr
    %next = llvm.add %i, %c1 : i64
    llvm.br ^loop(%next : i64)
  ^done:
    llvm.return
  }
}
