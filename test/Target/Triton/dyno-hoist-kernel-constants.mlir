// RUN: dyno-opt %s -split-input-file --dyno-hoist-kernel-constants | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// Gather indices that torch-mlir wrote as a constant (a dense_resource blob) and a
// constant of distinct floats: both become kernel arguments, materialized on the host
// as inline dense<> constants before each launch. The splat stays in the kernel.
// CHECK-LABEL: func.func @main
// CHECK:         %[[IDX:.*]] = arith.constant dense<[4, 0, 2]> : tensor<3xi64>
// CHECK:         %[[SCALE:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK:         dyno.launch @kernels::@kernel_0(%arg0, %[[IDX]], %[[SCALE]]) : (tensor<5xf32>, tensor<3xi64>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:       func.func @kernel_0(%{{.*}}: tensor<5xf32>, %[[KIDX:.*]]: tensor<3xi64> {bufferization.writable = false}, %[[KSCALE:.*]]: tensor<3xf32> {bufferization.writable = false}) -> tensor<3xf32>
// CHECK-NOT:     dense_resource
// CHECK:         arith.constant dense<5.000000e-01> : tensor<3xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[KIDX]], %[[KSCALE]], %{{.*}} : tensor<3xi64>, tensor<3xf32>, tensor<3xf32>)
func.func @main(%x: tensor<5xf32>) -> tensor<3xf32> {
  %0 = dyno.launch @kernels::@kernel_0(%x) : (tensor<5xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
module @kernels {
  func.func @kernel_0(%x: tensor<5xf32>) -> tensor<3xf32> {
    %idx = arith.constant dense_resource<indices> : tensor<3xi64>
    %scale = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    %half = arith.constant dense<0.5> : tensor<3xf32>
    %e = tensor.empty() : tensor<3xf32>
    %r = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]} ins(%idx, %scale, %half : tensor<3xi64>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
    ^bb0(%i: i64, %s: f32, %h: f32, %o: f32):
      %j = arith.index_cast %i : i64 to index
      %v = tensor.extract %x[%j] : tensor<5xf32>
      %m = arith.mulf %v, %s : f32
      %n = arith.mulf %m, %h : f32
      linalg.yield %n : f32
    } -> tensor<3xf32>
    return %r : tensor<3xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      indices: "0x08000000040000000000000000000000000000000200000000000000"
    }
  }
#-}

// -----

#id = affine_map<(d0) -> (d0)>

// A bool mask blob (one byte per element) becomes dense<> bits; a kernel launched twice
// gets the constant from each launch.
// CHECK-LABEL: func.func @main
// CHECK:         %[[M0:.*]] = arith.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK:         %[[A:.*]] = dyno.launch @kernels::@kernel_0(%arg0, %[[M0]])
// CHECK:         %[[M1:.*]] = arith.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK:         dyno.launch @kernels::@kernel_0(%[[A]], %[[M1]])
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = dyno.launch @kernels::@kernel_0(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = dyno.launch @kernels::@kernel_0(%0) : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
module @kernels {
  func.func @kernel_0(%x: tensor<3xf32>) -> tensor<3xf32> {
    %mask = arith.constant dense_resource<mask> : tensor<3xi1>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3xf32>
    %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %mask : tensor<3xf32>, tensor<3xi1>) outs(%e : tensor<3xf32>) {
    ^bb0(%v: f32, %m: i1, %o: f32):
      %s = arith.select %m, %v, %zero : f32
      linalg.yield %s : f32
    } -> tensor<3xf32>
    return %r : tensor<3xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      mask: "0x01000000010001"
    }
  }
#-}
