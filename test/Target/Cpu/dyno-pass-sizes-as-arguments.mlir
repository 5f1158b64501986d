// RUN: dyno-opt %s --dyno-pass-sizes-as-arguments --split-input-file --verify-diagnostics | FileCheck %s

// One dynamic dimension: the buffer becomes its base pointer, the size a trailing index,
// and the strides stay static.
// CHECK-LABEL: func.func @one_dynamic_dim
// CHECK-SAME: (%[[XP:.*]]: memref<f32>, %[[OUTP:.*]]: memref<f32>, %[[N:.*]]: index, %[[M:.*]]: index)
// CHECK-DAG: %[[X:.*]] = memref.reinterpret_cast %[[XP]] to offset: [0], sizes: [%[[N]], 16], strides: [16, 1] : memref<f32> to memref<?x16xf32>
// CHECK-DAG: %[[OUT:.*]] = memref.reinterpret_cast %[[OUTP]] to offset: [0], sizes: [%[[M]], 16], strides: [16, 1] : memref<f32> to memref<?x16xf32>
// CHECK: memref.copy %[[X]], %[[OUT]]
func.func @one_dynamic_dim(%x: memref<?x16xf32>, %out: memref<?x16xf32>) {
  memref.copy %x, %out : memref<?x16xf32> to memref<?x16xf32>
  return
}

// -----

// Inner dynamic dimensions make the outer strides products of sizes; static buffers and
// scalars keep their places.
// CHECK-LABEL: func.func @inner_dynamic_dims
// CHECK-SAME: (%[[W:.*]]: memref<4xf32>, %[[XP:.*]]: memref<i8>, %[[S:.*]]: i64, %[[D0:.*]]: index, %[[D1:.*]]: index)
// CHECK: %[[S1:.*]] = arith.muli %[[D1]], %{{.*}} : index
// CHECK: memref.reinterpret_cast %[[XP]] to offset: [0], sizes: [%[[D0]], 3, %[[D1]]], strides: [%[[S1]], %[[D1]], 1] : memref<i8> to memref<?x3x?xi8>
func.func @inner_dynamic_dims(%w: memref<4xf32>, %x: memref<?x3x?xi8>, %s: i64) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0, %c0, %c0] : memref<?x3x?xi8>
  return
}

// -----

// CHECK-LABEL: func.func @static_untouched
// CHECK-SAME: (%{{.*}}: memref<4x16xf32>)
func.func @static_untouched(%x: memref<4x16xf32>) {
  return
}

// -----

// expected-error @+1 {{dyno-pass-sizes-as-arguments: argument #0 has a non-contiguous layout 'memref<?x16xf32, strided<[32, 1]>>'}}
func.func @strided(%x: memref<?x16xf32, strided<[32, 1]>>) {
  return
}
