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

// CHECK-LABEL: func.func @dyno.contraction$matmul
func.func @dyno.contraction$matmul(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %c: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: dyno.contraction "matmul"(%{{.*}}, %{{.*}}) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %0 = dyno.contraction "matmul"(%a, %b) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  // CHECK: dyno.contraction "matmul"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = dyno.contraction "matmul"(%a, %b, %c) : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @dyno.contraction$batch_matmul
func.func @dyno.contraction$batch_matmul(%a: tensor<2x4x16xf32>, %b: tensor<2x16x8xf32>) -> tensor<2x4x8xf32> {
  // CHECK: dyno.contraction "batch_matmul"
  %0 = dyno.contraction "batch_matmul"(%a, %b) : (tensor<2x4x16xf32>, tensor<2x16x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @dyno.contraction$conv2d
func.func @dyno.contraction$conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  // CHECK: dyno.contraction "conv2d"(%{{.*}}, %{{.*}}, %{{.*}}) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}
  %0 = dyno.contraction "conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// CHECK-LABEL: func.func @dyno.library_call$lapack
func.func @dyno.library_call$lapack(%a: tensor<3x3xf32>, %b: tensor<3x2xf32>) -> (tensor<3x3xf32>, tensor<3x2xf32>) {
  // CHECK: %[[L:.*]]:2 = dyno.library_call "aten.linalg_cholesky_ex.default"(%{{.*}}) {arguments = [unit, false, false]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  %0:2 = dyno.library_call "aten.linalg_cholesky_ex.default"(%a) {arguments = [unit, false, false]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  // CHECK: dyno.library_call "aten._linalg_check_errors.default"(%[[L]]#1) {arguments = [unit, "linalg.cholesky", true]} : (tensor<i32>) -> ()
  dyno.library_call "aten._linalg_check_errors.default"(%0#1) {arguments = [unit, "linalg.cholesky", true]} : (tensor<i32>) -> ()
  // CHECK: dyno.library_call "aten._fft_r2c.default"(%{{.*}}) {arguments = [unit, array<i64: 1>, 0, true]}
  %1 = dyno.library_call "aten._fft_r2c.default"(%b) {arguments = [unit, array<i64: 1>, 0 : i64, true]} : (tensor<3x2xf32>) -> tensor<3x2xcomplex<f32>>
  // CHECK: dyno.library_call "aten.linalg_solve_triangular.default"({{.*}}) {arguments = [unit, unit, false, true, false]}
  %2 = dyno.library_call "aten.linalg_solve_triangular.default"(%0#0, %b) {arguments = [unit, unit, false, true, false]} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  // CHECK: dyno.library_call "aten.linalg_pinv.atol_rtol_tensor"({{.*}}) {arguments = [unit, none, none, false]}
  %3 = dyno.library_call "aten.linalg_pinv.atol_rtol_tensor"(%a) {arguments = [unit, none, none, false]} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %3, %2 : tensor<3x3xf32>, tensor<3x2xf32>
}

// torch.distributed's functional collectives are library calls too: the call starts the
// collective, wait_tensor completes it.
// CHECK-LABEL: func.func @dyno.library_call$collective
func.func @dyno.library_call$collective(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: %[[S:.*]] = dyno.library_call "_c10d_functional.all_reduce.default"(%{{.*}}) {arguments = [unit, "sum", "0"]}
  %0 = dyno.library_call "_c10d_functional.all_reduce.default"(%x) {arguments = [unit, "sum", "0"]} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  // CHECK: dyno.library_call "_c10d_functional.wait_tensor.default"(%[[S]]) {arguments = [unit]}
  %1 = dyno.library_call "_c10d_functional.wait_tensor.default"(%0) {arguments = [unit]} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
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

// CHECK-LABEL: func.func @dyno.scan$inclusive
func.func @dyno.scan$inclusive(%x: tensor<3x5xf32>, %o: tensor<3x5xf32>, %acc: tensor<3xf32>) -> tensor<3x5xf32> {
  // CHECK: %{{.*}}:2 = dyno.scan dimension(1) inclusive(true) ins(%{{.*}} : tensor<3x5xf32>) outs(%{{.*}}, %{{.*}} : tensor<3x5xf32>, tensor<3xf32>) {
  // CHECK: ^bb0(%[[P:.*]]: f32, %[[I:.*]]: f32):
  // CHECK:   %[[S:.*]] = arith.addf %[[P]], %[[I]] : f32
  // CHECK:   dyno.yield %[[S]] : f32
  // CHECK: } -> tensor<3x5xf32>, tensor<3xf32>
  %0:2 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<3x5xf32>) outs(%o, %acc : tensor<3x5xf32>, tensor<3xf32>) {
  ^bb0(%p: f32, %i: f32):
    %s = arith.addf %p, %i : f32
    dyno.yield %s : f32
  } -> tensor<3x5xf32>, tensor<3xf32>
  return %0#0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @dyno.scatter$rows
func.func @dyno.scatter$rows(%u: tensor<4x1x3xf32>, %i: tensor<4x1xi64>, %o: tensor<6x3xf32>) -> tensor<6x3xf32> {
  // CHECK: dyno.scatter dimension_map([0]) unique_indices(false) ins(%{{.*}}, %{{.*}} : tensor<4x1x3xf32>, tensor<4x1xi64>) outs(%{{.*}} : tensor<6x3xf32>) {
  // CHECK: } -> tensor<6x3xf32>
  %0 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<4x1x3xf32>, tensor<4x1xi64>) outs(%o : tensor<6x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    dyno.yield %s : f32
  } -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// CHECK-LABEL: func.func @dyno.sort$with_indices
func.func @dyno.sort$with_indices(%v: tensor<3x7xf32>, %i: tensor<3x7xi64>) -> (tensor<3x7xf32>, tensor<3x7xi64>) {
  // CHECK: %{{.*}}:2 = dyno.sort dimension(1) outs(%{{.*}}, %{{.*}} : tensor<3x7xf32>, tensor<3x7xi64>) {
  // CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: i64, %{{.*}}: i64):
  // CHECK:   arith.cmpf ole, %[[A]], %[[B]] : f32
  // CHECK: } -> tensor<3x7xf32>, tensor<3x7xi64>
  %0:2 = dyno.sort dimension(1) outs(%v, %i : tensor<3x7xf32>, tensor<3x7xi64>) {
  ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
    %le = arith.cmpf ole, %a, %b : f32
    dyno.yield %le : i1
  } -> tensor<3x7xf32>, tensor<3x7xi64>
  return %0#0, %0#1 : tensor<3x7xf32>, tensor<3x7xi64>
}

// CHECK-LABEL: func.func @dyno.sort$prefix
func.func @dyno.sort$prefix(%v: tensor<3x70xf32>) -> tensor<3x70xf32> {
  // CHECK: dyno.sort dimension(1) prefix(5) outs(%{{.*}} : tensor<3x70xf32>) {
  %0 = dyno.sort dimension(1) prefix(5) outs(%v : tensor<3x70xf32>) {
  ^bb0(%a: f32, %b: f32):
    %ge = arith.cmpf oge, %a, %b : f32
    dyno.yield %ge : i1
  } -> tensor<3x70xf32>
  return %0 : tensor<3x70xf32>
}
